//! Checking time on hostile input (issue 41): each shape of
//! `soil-syntax/tests/common/hostile.rs` parsed and checked as a host checks a
//! `.soil` file, at 16, 32 and 65 KB (or the sizes given), with the problems
//! reported and the time ratio from one size to the next. Near-linear checking
//! shows ratios near the size ratio (2x); a quadratic walk shows 4x, a cubic 8x.
//!
//! `cargo run --release -p soil-types --example check_bench [SHAPE|all] [KB...]`,
//! or `… check_bench FILE.soil` to time one file (a fuzzer's failing input, say).

#![allow(clippy::disallowed_methods, reason = "benches read the clock")]

#[path = "../tests/support/file_check.rs"]
mod file_check;
#[path = "../../soil-syntax/tests/common/hostile.rs"]
mod hostile;

use std::time::{Duration, Instant};

use hostile::Shape;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filter = args.first().cloned().unwrap_or_else(|| "all".into());
    if filter.ends_with(".soil") {
        let text = std::fs::read_to_string(&filter).expect("read the file");
        let (parse, check, problems) = measure(&text);
        println!(
            "{filter}: {} bytes, parse {:.2} ms, check {:.2} ms, {problems} problems",
            text.len(),
            parse.as_secs_f64() * 1e3,
            check.as_secs_f64() * 1e3
        );
        return;
    }
    let mut sizes: Vec<usize> = args
        .iter()
        .skip(1)
        .filter_map(|a| a.parse::<usize>().ok())
        .map(|kb| kb * 1000)
        .collect();
    if sizes.is_empty() {
        sizes = vec![16_000, 32_000, 65_000];
    }
    println!(
        "{:<26} {:>7} {:>11} {:>11} {:>9} {:>7}",
        "shape", "bytes", "parse", "check", "problems", "ratio"
    );
    for &shape in Shape::ALL {
        if filter != "all" && filter != shape.name() {
            continue;
        }
        let mut previous: Option<Duration> = None;
        for &size in &sizes {
            let text = shape.text(size);
            let (parse, check, problems) = measure(&text);
            let ratio = previous
                .map(|p| format!("{:.1}x", check.as_secs_f64() / p.as_secs_f64().max(1e-6)))
                .unwrap_or_default();
            println!(
                "{:<26} {:>7} {:>8.2} ms {:>8.2} ms {:>9} {:>7}",
                shape.name(),
                text.len(),
                parse.as_secs_f64() * 1e3,
                check.as_secs_f64() * 1e3,
                problems,
                ratio
            );
            previous = Some(check);
        }
    }
}

/// The median of three runs: the parse alone, and parse plus check.
fn measure(text: &str) -> (Duration, Duration, usize) {
    let mut parses = Vec::new();
    let mut checks = Vec::new();
    let mut problems = 0;
    for _ in 0..3 {
        let start = Instant::now();
        let parsed = soil_syntax::parse_file(text);
        parses.push(start.elapsed());
        drop(parsed);
        let start = Instant::now();
        let checked = file_check::check_file(text);
        checks.push(start.elapsed());
        problems = checked.problems().len();
    }
    parses.sort();
    checks.sort();
    (parses[1], checks[1], problems)
}
