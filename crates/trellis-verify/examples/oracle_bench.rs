//! One differential run of `csvstats::median` against its Python reference
//! (`examples/reference/stats.py`, median's seven expect cases), N times cold
//! (a `python3` driver started per run, as `--no-daemon` runs it) and N times
//! warm (one driver kept by a `WarmPool`, as the daemon runs it), interleaved.
//! Prints p50 and p99 of each and the ratio of the p50s: what a lowering
//! agent's `run_tests` saves per call on this machine's Python.
//! Usage: `cargo run --release -p trellis-verify --example oracle_bench [N]`.

#![allow(clippy::disallowed_methods, reason = "benches read the environment")]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use soil_rt::{RtType, TypeEnv};
use trellis_verify::oracle::{
    CaseOutcome, DifferentialCase, OracleConfig, Reference, SoilOutcome, resolve_python,
    run_differential,
};
use trellis_verify::{RealRunner, WarmPool, WarmRunner};

/// Median's expect cases: arguments and result, canonical JSON.
const CASES: [(&str, &str); 7] = [
    ("[[3.0,1.0,2.0]]", "2.0"),
    ("[[4.0,1.0,3.0,2.0]]", "2.5"),
    ("[[5.0]]", "5.0"),
    ("[[0.0,-0.0,1.0]]", "0.0"),
    (
        "[[1.7976931348623157e308,1.7976931348623157e308]]",
        "1.7976931348623157e308",
    ),
    ("[[-1.7976931348623157e308,1.7976931348623157e308]]", "0.0"),
    ("[[5e-324,5e-324]]", "5e-324"),
];

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    let mut config = OracleConfig::new(
        &root,
        vec![("PATH".into(), path.clone())],
        Duration::from_secs(30),
    );
    config.python =
        resolve_python(&RealRunner, &root, &path).unwrap_or_else(|| "python3".to_owned());
    let env = TypeEnv::new();
    let floats = [RtType::List(Box::new(RtType::F64))];
    let cases: Vec<DifferentialCase> = CASES
        .iter()
        .enumerate()
        .map(|(i, (args, result))| DifferentialCase {
            label: format!("median#{}", i + 1),
            args: soil_rt::decode_args(args, &floats, &env).expect("median's arguments"),
            actual: SoilOutcome::Value((*result).to_owned()),
        })
        .collect();
    let oracle = Reference::Python {
        path: "reference/stats.py".into(),
        symbol: "median".into(),
    };
    let pool = WarmPool::new(1);
    let run = |warm: Option<&dyn WarmRunner>| {
        let started = Instant::now();
        let results = run_differential(
            &RealRunner,
            warm,
            &config,
            &oracle,
            &RtType::F64,
            &env,
            &cases,
        );
        let elapsed = started.elapsed();
        assert!(
            results.iter().all(|r| r.outcome == CaseOutcome::Agree),
            "the reference disagrees: {results:?}"
        );
        elapsed
    };
    // The warm driver's start is paid once, outside the timed rounds.
    run(Some(&pool));
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        cold.push(run(None));
        warm.push(run(Some(&pool)));
    }
    cold.sort();
    warm.sort();
    println!(
        "median's differential run, {rounds} runs each, python {}",
        config.python
    );
    println!("{:<6} {:>9} {:>9}", "oracle", "p50 ms", "p99 ms");
    for (name, times) in [("cold", &cold), ("warm", &warm)] {
        println!(
            "{name:<6} {:>9.3} {:>9.3}",
            percentile(times, 0.5),
            percentile(times, 0.99)
        );
    }
    println!(
        "cold/warm p50: {:.1}x ({} warm driver started)",
        percentile(&cold, 0.5) / percentile(&warm, 0.5),
        pool.started()
    );
}
