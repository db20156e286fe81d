//! Soil-level property throughput: the examples' `sort` properties run N times
//! through the suite runner's property path, against the same properties under
//! Hypothesis (`benches-py/sort_properties.py`, needs `pip install hypothesis`).
//! Usage: `cargo run --release -p trellis-verify --example property_bench [N]`.

#![allow(clippy::disallowed_methods, reason = "benches use real files")]

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use soil_rt::Value;
use trellis_verify::property::{CaseVerdict, PURE_CASES, PropertyConfig, run_property};

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/csvstats");
    let read = |file: &str| std::fs::read_to_string(root.join(file)).unwrap_or_default();
    // `sort` and the private merge-sort helpers it reaches (the other helpers
    // need the module's types).
    let mut source = format!(
        "sort : (xs : List F64) -> List F64\n{}\n",
        read("sort.soil")
    );
    let (private, _) = soil_syntax::parse_file(&read("_private.soil"));
    for item in &private.items {
        let name = match item {
            soil_syntax::ast::Item::Signature(s) => &s.name.text,
            soil_syntax::ast::Item::Equation(e) => &e.name.text,
            _ => continue,
        };
        if name.starts_with("_merge") {
            source.push_str(&soil_syntax::print_item(item));
            source.push('\n');
        }
    }
    // The wrappers §8.12 synthesizes for `idempotent` and `order_free`.
    source.push_str(
        "_property_idempotent : (xs : List F64) -> Bool\n_property_idempotent xs = sort (sort xs) == sort xs\n\
         _property_order_free : (xs : List F64) -> Bool\n_property_order_free xs = sort (reverse xs) == sort xs\n",
    );
    let program = match soil_eval::program_from_source(&source, Some("bench.soil")) {
        Ok(program) => program,
        Err(errors) => {
            eprintln!("the bench program does not compile: {errors:?}");
            std::process::exit(1);
        }
    };
    let types = program.types();
    let binders = [soil_rt::RtType::List(Box::new(soil_rt::RtType::F64))];
    let started = Instant::now();
    let mut cases = 0usize;
    soil_eval::with_eval_stack(|| {
        for round in 0..rounds {
            for wrapper in ["_property_idempotent", "_property_order_free"] {
                let config = PropertyConfig::new(PURE_CASES, round as u64);
                let result = run_property(&config, types, &binders, |inputs| {
                    let mut world = soil_eval::World::sandbox();
                    match program.call(wrapper, inputs.to_vec(), &mut world) {
                        Ok(Value::Bool(true)) => CaseVerdict::Pass,
                        other => CaseVerdict::Fail(format!("{other:?}")),
                    }
                });
                assert!(
                    matches!(
                        result,
                        trellis_verify::property::PropertyResult::Passed { .. }
                    ),
                    "{result:?}"
                );
                cases += PURE_CASES;
            }
        }
    });
    let trellis_rate = cases as f64 / started.elapsed().as_secs_f64();
    println!("trellis: {cases} cases, {trellis_rate:.0} cases/s");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches-py/sort_properties.py");
    let hypothesis_rounds = (rounds / 4).max(1).to_string();
    match Command::new("python3")
        .arg(&script)
        .arg(&hypothesis_rounds)
        .output()
    {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            let mut parts = text.split_whitespace();
            let py_cases: f64 = parts.next().and_then(|n| n.parse().ok()).unwrap_or(0.0);
            let py_secs: f64 = parts.next().and_then(|n| n.parse().ok()).unwrap_or(1.0);
            let py_rate = py_cases / py_secs;
            println!("hypothesis: {py_cases} cases, {py_rate:.0} cases/s");
            println!("ratio: {:.1}x", trellis_rate / py_rate);
        }
        Ok(out) => println!(
            "hypothesis: not run ({})",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("failed")
        ),
        Err(error) => println!("hypothesis: not run ({error})"),
    }
}
