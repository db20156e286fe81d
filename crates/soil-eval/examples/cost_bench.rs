//! The cost model's linearity (docs/prelude.md §14): n pushes onto a list
//! held in a tuple accumulator (taken apart by a `let` pattern and by a
//! guarded `match`, each with a branch that keeps the state whole) and n
//! prepends `[x] ++ acc`, each timed for n and 2n. A linear loop prints a
//! ratio near 2.0; a loop that copies its accumulator prints near 4.0.
//! Run: `cargo run --release -p soil-eval --example cost_bench [n]`.

#![allow(clippy::disallowed_methods, reason = "benches use real files")]

use std::time::Instant;

use soil_eval::{Program, World, program_from_source, with_eval_stack};
use soil_rt::Value;

/// The binaries that run Soil (`soil0`, `trellis`) use mimalloc; measure with it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const N: i64 = 100_000;
const REPS: usize = 3;

const PROGRAM: &str = r#"
push_let : (n : I64) -> I64
push_let n =
  let step state x =
    let (acc, count) = state in
    if count < 0 then state else (push acc x, count + 1)
  in
  let (acc, count) = fold step ([], 0) (range 0 n) in
  len acc + count

push_match : (n : I64) -> I64
push_match n =
  let step state x =
    match state with
    | (acc, count) if count < 0 -> state
    | (acc, count) -> (push acc x, count + 1)
    end
  in
  let (acc, count) = fold step ([], 0) (range 0 n) in
  len acc + count

prepend : (n : I64) -> I64
prepend n = len (fold (\acc x -> [x] ++ acc) [] (range 0 n))
"#;

/// The best of `REPS` runs of `name` on `n`, in seconds.
fn best(program: &Program, name: &str, n: i64) -> f64 {
    with_eval_stack(|| {
        let mut best = f64::INFINITY;
        for _ in 0..REPS {
            let start = Instant::now();
            let result = program.call(name, vec![Value::I64(n)], &mut World::sandbox());
            best = best.min(start.elapsed().as_secs_f64());
            assert!(
                matches!(result, Ok(Value::I64(_))),
                "{name} {n}: {result:?}"
            );
        }
        best
    })
}

fn main() {
    let n: i64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(N);
    let program = match program_from_source(PROGRAM, Some("cost_bench.soil")) {
        Ok(program) => program,
        Err(errors) => panic!("the benchmark program does not compile: {errors:?}"),
    };
    println!(
        "cost model ({n} and {} steps)             n (s)     2n (s)   2n/n (linear = 2.0)",
        2 * n
    );
    for (label, name) in [
        ("push, tuple state, let pattern", "push_let"),
        ("push, tuple state, guarded match", "push_match"),
        ("prepend [x] ++ acc", "prepend"),
    ] {
        let once = best(&program, name, n);
        let twice = best(&program, name, 2 * n);
        println!(
            "{label:<40} {once:8.4}   {twice:8.4}   {:8.2}",
            twice / once
        );
    }
}
