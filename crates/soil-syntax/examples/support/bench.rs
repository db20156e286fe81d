//! The front-end benchmark shared by `frontend_bench` (system allocator) and
//! `frontend_bench_mimalloc`: the binaries differ only in their global allocator.
//!
//! Each phase is timed by the thread's CPU time (`/proc/thread-self/schedstat`),
//! which other processes on the machine do not inflate the way they inflate wall
//! time; a sample is the mean of a few passes (the clock advances in scheduler
//! ticks) and the median of the samples is reported. Figures from
//! separate runs on a shared machine are not comparable, so `--compare` runs
//! several binaries as child processes in alternation (round robin) and reports
//! them side by side.

use std::fmt::Write as _;
use std::process::Command;
use std::time::Instant;

/// What a binary built on this module measures, in report order.
const PHASES: &[&str] = &[
    "lex",
    "parse",
    "print",
    "parse+print",
    "drop tree",
    "4 KB files",
    "hash form",
];

const USAGE: &str = "usage: frontend_bench[_mimalloc] [MEGABYTES [ITERATIONS]]\n       \
     frontend_bench --compare [ROUNDS] [BINARY ...]  (alternates this binary, its\n       \
     _mimalloc sibling and any BINARY given, each run with `--child 8 3`)";

pub fn main(allocator: &str) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--compare") => compare(&args[1..]),
        Some("--child") => {
            let (megabytes, iterations) = sizes(&args[1..]);
            let samples = measure(megabytes, iterations);
            println!("allocator {allocator}");
            for (phase, seconds) in samples {
                println!("sample {} {seconds:.9}", phase.replace(' ', "_"));
            }
        }
        Some("--help" | "-h") => println!("{USAGE}"),
        _ => {
            let (megabytes, iterations) = sizes(&args);
            println!("allocator: {allocator}; clock: {}", clock_name());
            let samples = measure(megabytes, iterations);
            let bytes = generate(megabytes * 1024 * 1024).len() as f64;
            println!(
                "{:<12} {:>10}  (median of {iterations}, one core)",
                "phase", "MB/s"
            );
            for phase in PHASES {
                let mut times: Vec<f64> = samples
                    .iter()
                    .filter(|(p, _)| p == phase)
                    .map(|(_, t)| *t)
                    .collect();
                println!("{phase:<12} {:>10.1}", throughput(bytes, &mut times));
            }
        }
    }
}

fn sizes(args: &[String]) -> (usize, usize) {
    let megabytes = args.first().and_then(|a| a.parse().ok()).unwrap_or(8);
    let iterations = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(7);
    (megabytes, iterations)
}

/// MB/s of source text at the median of `times` (each phase is one pass over the
/// source, so every figure reads the same way).
fn throughput(bytes: f64, times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    match times.get(times.len() / 2) {
        Some(&median) if median > 0.0 => bytes / 1e6 / median,
        _ => f64::NAN,
    }
}

/// Runs every phase `iterations` times (after one untimed warm-up pass) and returns
/// `(phase, cpu seconds)` samples.
fn measure(megabytes: usize, iterations: usize) -> Vec<(&'static str, f64)> {
    let source = generate(megabytes * 1024 * 1024);
    let (file, diagnostics) = soil_syntax::parse_file(&source);
    assert!(
        diagnostics.is_empty(),
        "generated source must parse: {:?}",
        diagnostics.first()
    );
    let canonical = soil_syntax::print_file(&file);
    assert_eq!(
        soil_syntax::print_file(&soil_syntax::parse_file(&canonical).0),
        canonical,
        "the canonical text must be a fixpoint"
    );
    let chunks = split_into_files(&source, 4096);
    // The reference tree for the phases that read one.
    let tree = file;
    let mut samples = Vec::new();
    for iteration in 0..=iterations {
        let mut record = |phase, seconds| {
            if iteration > 0 {
                samples.push((phase, seconds));
            }
        };
        record(
            "lex",
            per_pass(
                8,
                || (),
                |()| soil_syntax::lexer::lex(&source, &mut Vec::new()),
            ),
        );
        record(
            "parse",
            per_pass(2, || (), |()| soil_syntax::parse_file(&source)),
        );
        record(
            "print",
            per_pass(4, || (), |()| soil_syntax::print_file(&tree)),
        );
        record(
            "drop tree",
            per_pass(2, || soil_syntax::parse_file(&source), drop),
        );
        // Parse and print back to back, as `soil0 fmt` does; the tree's drop is
        // excluded (a short-lived process need not free it).
        record(
            "parse+print",
            per_pass(
                2,
                || (),
                |()| {
                    let (file, _) = soil_syntax::parse_file(&source);
                    let printed = soil_syntax::print_file(&file);
                    assert_eq!(printed.len(), canonical.len());
                    (file, printed)
                },
            ),
        );
        // Real modules hold one definition per file: the same text as separate
        // small files, each parsed, printed and dropped.
        record(
            "4 KB files",
            per_pass(
                1,
                || (),
                |()| {
                    let mut bytes = 0;
                    for chunk in &chunks {
                        let (file, _) = soil_syntax::parse_file(chunk);
                        bytes += soil_syntax::print_file(&file).len();
                    }
                    assert!(bytes > 0);
                },
            ),
        );
        // The hash form of every item, as one pass over the source.
        record(
            "hash form",
            per_pass(
                2,
                || (),
                |()| {
                    tree.items
                        .iter()
                        .map(|item| soil_syntax::hash_form_item(item).len())
                        .sum::<usize>()
                },
            ),
        );
    }
    samples
}

/// The mean CPU seconds of `run` over `passes` passes; `prepare` and dropping what
/// `run` returns are not timed. Several passes per sample keep the clock's
/// granularity (the scheduler tick, a few milliseconds) small against the sample.
fn per_pass<S, R>(passes: u32, mut prepare: impl FnMut() -> S, mut run: impl FnMut(S) -> R) -> f64 {
    let mut total = 0.0;
    for _ in 0..passes {
        let input = prepare();
        let clock = Clock::start();
        let output = run(input);
        total += clock.seconds();
        drop(output);
    }
    total / f64::from(passes)
}

/// Alternates the binaries as child processes, `rounds` times, and prints the
/// median MB/s of each phase for each binary.
fn compare(args: &[String]) {
    let rounds: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(5);
    let this = std::env::current_exe().expect("the bench knows its own path");
    let mut binaries = vec![this.clone()];
    let sibling = this.with_file_name(format!(
        "{}_mimalloc",
        this.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("frontend_bench")
    ));
    if sibling.exists() {
        binaries.push(sibling);
    } else {
        eprintln!(
            "note: {} not built; comparing without it",
            sibling.display()
        );
    }
    binaries.extend(args.iter().skip(1).map(Into::into));

    let bytes = generate(8 * 1024 * 1024).len() as f64;
    let mut labels = vec![String::new(); binaries.len()];
    let mut samples: Vec<Vec<(String, f64)>> = vec![Vec::new(); binaries.len()];
    for round in 0..rounds {
        for (index, binary) in binaries.iter().enumerate() {
            let output = Command::new(binary)
                .args(["--child", "8", "3"])
                .output()
                .expect("the child bench runs");
            assert!(
                output.status.success(),
                "{} failed: {}",
                binary.display(),
                String::from_utf8_lossy(&output.stderr)
            );
            for line in String::from_utf8_lossy(&output.stdout).lines() {
                let fields: Vec<&str> = line.splitn(3, ' ').collect();
                match fields.as_slice() {
                    ["allocator", name] => {
                        labels[index] = format!(
                            "{} ({name})",
                            binary.file_name().and_then(|n| n.to_str()).unwrap_or("?")
                        );
                    }
                    ["sample", phase, seconds] => {
                        if let Ok(seconds) = seconds.parse() {
                            samples[index].push((phase.replace('_', " "), seconds));
                        }
                    }
                    _ => {}
                }
            }
        }
        eprintln!("round {} of {rounds} done", round + 1);
    }

    println!(
        "MB/s of source on one core ({}), median of {} samples per cell;\n\
         binaries run in alternation on an {:.2} MB generated file",
        clock_name(),
        rounds * 3,
        bytes / 1e6
    );
    let mut header = format!("{:<12}", "phase");
    for label in &labels {
        let _ = write!(header, " | {label:>34}");
    }
    println!("{header}");
    for phase in PHASES {
        let mut row = format!("{phase:<12}");
        for binary_samples in &samples {
            let mut times: Vec<f64> = binary_samples
                .iter()
                .filter(|(p, _)| p == phase)
                .map(|(_, t)| *t)
                .collect();
            let _ = write!(row, " | {:>34.1}", throughput(bytes, &mut times));
        }
        println!("{row}");
    }
}

/// This thread's CPU time, or wall time where `/proc` does not provide it.
struct Clock {
    cpu_start: Option<u64>,
    wall_start: Instant,
}

impl Clock {
    fn start() -> Self {
        Self {
            cpu_start: thread_cpu_nanos(),
            wall_start: Instant::now(),
        }
    }

    fn seconds(&self) -> f64 {
        match (self.cpu_start, thread_cpu_nanos()) {
            (Some(start), Some(end)) => end.saturating_sub(start) as f64 / 1e9,
            _ => self.wall_start.elapsed().as_secs_f64(),
        }
    }
}

fn clock_name() -> &'static str {
    if thread_cpu_nanos().is_some() {
        "thread CPU time"
    } else {
        "wall time (no /proc/thread-self/schedstat)"
    }
}

/// Nanoseconds this thread has spent on a CPU: the first field of
/// `/proc/thread-self/schedstat`.
fn thread_cpu_nanos() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// A deterministic file of at least `target` bytes, cycling through item shapes
/// seen in real modules.
pub fn generate(target: usize) -> String {
    let mut out = String::with_capacity(target + 4096);
    let mut n = 0usize;
    while out.len() < target {
        match n % 6 {
            0 => {
                let _ = write!(
                    out,
                    "-- Result of parsing row {n}.\n\
                     type ParseError{n} = BadCell {{ index : I64, raw : Utf8 }} | EmptyLine | BadArity I64\n\n\
                     type Row{n} = {{ line : I64, cells : List F64, label : Utf8 }}\n\n"
                );
            }
            1 => {
                let _ = write!(
                    out,
                    "_parse_cell{n} : (index : I64) -> (raw : Utf8) -> Result F64 ParseError{n}\n\n\
                     _parse_cell{n} index raw =\n  \
                       match parse_f64 (trim raw) with\n  \
                       | Some x if is_finite x -> Ok x\n  \
                       | _ -> Err (BadCell {{ index, raw }})\n  \
                       end\n\n"
                );
            }
            2 => {
                let _ = write!(
                    out,
                    "median{n} : (xs : List F64) ->{{Panic}} F64\n\n\
                     median{n} xs =\n  \
                       let s = sort xs in\n  \
                       let n = len s in\n  \
                       if n % 2 == 1 then at s (n / 2)\n  \
                       else (at s (n / 2 - 1) + at s (n / 2)) / 2.0\n\n"
                );
            }
            3 => {
                let _ = write!(
                    out,
                    "apply_all{n} stock movements =\n  \
                       let go current index remaining =\n    \
                         match remaining with\n    \
                         | [] -> Ok current\n    \
                         | [movement, ..rest] ->\n      \
                           match apply_movement current movement with\n      \
                           | Ok next -> go next (index + 1) rest\n      \
                           | Err error -> Err (index, error)\n      \
                           end\n    \
                         end\n  \
                       in\n  \
                       go stock 0 movements\n\n"
                );
            }
            4 => {
                let _ = write!(
                    out,
                    "report{n} rows =\n  \
                       let total = fold (\\acc r -> acc + r.value * 1.5e-3) 0.0 rows in\n  \
                       let names = map (\\r -> {{ r with label = \"row \\\"{n}\\\"\" ++ show r.line }}) rows in\n  \
                       csvstats::summarize [total, -2.0, 1e10] names (Row{n} {{ line = {n}, cells = [], label = \"\\u{{1F600}}\" }})\n\n"
                );
            }
            _ => {
                let _ = write!(
                    out,
                    "low_stock{n} threshold stock = filter (\\item -> item.on_hand < threshold and not item.retired) (map_values stock) -- trailing comment\n\n"
                );
            }
        }
        n += 1;
    }
    out
}

/// Cuts `source` into pieces of about `size` bytes at item boundaries (a blank
/// line followed by a token at column 1). The generated source is ASCII.
fn split_into_files(source: &str, size: usize) -> Vec<&str> {
    let at_boundary = |end: usize| {
        source[..end].ends_with("\n\n") && !source[end..].starts_with(char::is_whitespace)
    };
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < source.len() {
        let mut end = (start + size).min(source.len());
        while end < source.len() && !at_boundary(end) {
            end += 1;
        }
        pieces.push(&source[start..end]);
        start = end;
    }
    pieces
}
