//! Times the interpreter against CPython on the same algorithms: the merge
//! sort of `examples/csvstats` over 200,000 pseudo-random F64, and naive fib 30.
//! CPython runs each twice: written in Soil's shape (a fold with tuple state)
//! and written as a Python programmer would (a recursive merge sort with slices
//! and appends); both ratios are printed, and the goal (soil/cpython ≤ 1.0) is
//! against the idiomatic one. Rounds alternate between the two and each side
//! reports its best of three (the machine is shared; the best round is the
//! least disturbed one).
//! Run: `cargo run --release -p soil-eval --example eval_bench [sort_n] [fib_n]`.

#![allow(clippy::disallowed_methods, reason = "benches use real files")]

use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use soil_eval::{Definition, Program, World, type_env_from_decls, with_eval_stack};
use soil_rt::Value;
use soil_syntax::ast;

/// The binaries that run Soil (`soil0`, `trellis`) use mimalloc; measure with it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SORT_N: usize = 200_000;
const FIB_N: i64 = 30;
const REPS: usize = 3;
/// Fib runs in about 0.1 s, short enough for scheduler noise to matter: each
/// round times it this many times on both sides and keeps the best.
const FIB_REPS: usize = 5;

/// The same generator as benches-py/eval_bench.py.
fn lcg_floats(n: usize) -> Vec<f64> {
    let mut state: u64 = 12345;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64 * 1000.0 - 500.0
        })
        .collect()
}

fn workspace_file(relative: &str) -> String {
    let path = format!("{}/../../{relative}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// The equations of `text` whose names `wanted` accepts, with their signatures.
fn definitions(
    text: &str,
    file: &str,
    wanted: impl Fn(&str) -> bool,
    extra_signatures: &str,
) -> Vec<Definition> {
    let (source, errors) = soil_syntax::parse_file(text);
    assert!(errors.is_empty(), "{file}: {errors:?}");
    let (sigs, errors) = soil_syntax::parse_file(extra_signatures);
    assert!(errors.is_empty(), "signatures: {errors:?}");
    let signature = |name: &str| {
        source
            .items
            .iter()
            .chain(&sigs.items)
            .find_map(|item| match item {
                ast::Item::Signature(sig) if sig.name.text == name => Some(sig.ty.clone()),
                _ => None,
            })
    };
    let shared: Arc<str> = Arc::from(text);
    source
        .items
        .iter()
        .filter_map(|item| match item {
            ast::Item::Equation(eq) if wanted(&eq.name.text) => Some(Definition {
                name: eq.name.text.clone(),
                module: Some("csvstats".into()),
                file: Some(file.into()),
                text: Some(Arc::clone(&shared)),
                signature: signature(&eq.name.text),
                equation: eq.clone(),
                requires: Vec::new(),
                ensures: Vec::new(),
            }),
            _ => None,
        })
        .collect()
}

fn soil_program() -> Program {
    let private = workspace_file("examples/csvstats/_private.soil");
    let sort = workspace_file("examples/csvstats/sort.soil");
    // The merge sort's helpers only (the module's other helpers need its types).
    let mut defs = definitions(
        &private,
        "examples/csvstats/_private.soil",
        |n| n.starts_with("_merge"),
        "",
    );
    defs.extend(definitions(
        &sort,
        "examples/csvstats/sort.soil",
        |n| n == "sort",
        "sort : (xs : List F64) -> List F64",
    ));
    let fib = "fib : (n : I64) -> I64\nfib n = if n < 2 then n else fib (n - 1) + fib (n - 2)\n";
    defs.extend(definitions(fib, "fib.soil", |n| n == "fib", ""));
    let types = type_env_from_decls(std::iter::empty()).unwrap_or_default();
    match Program::compile(types, defs) {
        Ok(program) => program,
        Err(errors) => panic!("the benchmark program does not compile: {errors:?}"),
    }
}

/// One round in the interpreter: the sort once, fib the best of `FIB_REPS`.
fn soil_round(program: &Program, input: &[f64], fib_n: i64) -> (f64, f64) {
    with_eval_stack(|| {
        let mut world = World::sandbox();
        let list = Value::list(input.iter().map(|x| Value::F64(*x)).collect());
        let start = Instant::now();
        let sorted = program.call("sort", vec![list], &mut world);
        let sort_secs = start.elapsed().as_secs_f64();
        match &sorted {
            Ok(Value::List(xs)) => {
                let ok = xs.len() == input.len() && xs.as_slice().windows(2).all(|w| w[0] <= w[1]);
                assert!(ok, "the Soil sort did not sort");
            }
            other => panic!("sort failed: {other:?}"),
        }
        let mut fib_secs = f64::INFINITY;
        for _ in 0..FIB_REPS {
            let start = Instant::now();
            let fib = program.call("fib", vec![Value::I64(fib_n)], &mut world);
            fib_secs = fib_secs.min(start.elapsed().as_secs_f64());
            assert!(matches!(fib, Ok(Value::I64(_))), "fib {fib_n} = {fib:?}");
        }
        (sort_secs, fib_secs)
    })
}

/// Best seconds of one CPython round: Soil-shaped and idiomatic.
#[derive(Clone, Copy)]
struct PythonTimes {
    sort: f64,
    fib: f64,
    sort_idiomatic: f64,
    fib_idiomatic: f64,
}

impl PythonTimes {
    fn min(self, other: PythonTimes) -> PythonTimes {
        PythonTimes {
            sort: self.sort.min(other.sort),
            fib: self.fib.min(other.fib),
            sort_idiomatic: self.sort_idiomatic.min(other.sort_idiomatic),
            fib_idiomatic: self.fib_idiomatic.min(other.fib_idiomatic),
        }
    }
}

/// The same round in CPython.
fn python_round(sort_n: usize, fib_n: i64) -> PythonTimes {
    let script = format!("{}/benches-py/eval_bench.py", env!("CARGO_MANIFEST_DIR"));
    let output = Command::new("python3")
        .arg(&script)
        .arg(sort_n.to_string())
        .arg(fib_n.to_string())
        .arg("1")
        .arg(FIB_REPS.to_string())
        .output();
    let python = match output {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        Ok(out) => panic!("python3 failed: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => panic!("cannot run python3: {e}"),
    };
    let seconds = |name: &str| {
        python
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|s| s.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    PythonTimes {
        sort: seconds("sort"),
        fib: seconds("fib"),
        sort_idiomatic: seconds("sort_idiomatic"),
        fib_idiomatic: seconds("fib_idiomatic"),
    }
}

/// Optional arguments: the sort size and the fib argument. Rounds alternate
/// between the interpreter and CPython so both see the same machine load;
/// each side reports its best round.
fn main() {
    let mut args = std::env::args().skip(1);
    let sort_n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(SORT_N);
    let fib_n: i64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(FIB_N);
    let program = soil_program();
    let input = lcg_floats(sort_n);
    let (mut sort_secs, mut fib_secs) = (f64::INFINITY, f64::INFINITY);
    let mut py = PythonTimes {
        sort: f64::INFINITY,
        fib: f64::INFINITY,
        sort_idiomatic: f64::INFINITY,
        fib_idiomatic: f64::INFINITY,
    };
    for _ in 0..REPS {
        let (s, f) = soil_round(&program, &input, fib_n);
        sort_secs = sort_secs.min(s);
        fib_secs = fib_secs.min(f);
        py = py.min(python_round(sort_n, fib_n));
    }
    println!(
        "benchmark                 soil (s)   cpython soil-shaped (s)   soil/shaped   cpython idiomatic (s)   soil/idiomatic"
    );
    let row = |name: &str, soil: f64, shaped: f64, idiomatic: f64| {
        println!(
            "{name:<24} {soil:9.3}   {shaped:23.3}   {:11.2}   {idiomatic:21.3}   {:14.2}",
            soil / shaped,
            soil / idiomatic
        );
    };
    row(
        &format!("merge sort {sort_n} F64"),
        sort_secs,
        py.sort,
        py.sort_idiomatic,
    );
    row(&format!("fib {fib_n}"), fib_secs, py.fib, py.fib_idiomatic);
}
