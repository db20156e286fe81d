//! A word-frequency count on real-sized text, Soil against CPython, in one run:
//! split a text into words, count them in a `Map Utf8 I64`, list the ten most
//! common (test-data/soil0/wordcount/program.json) against
//! `Counter(text.split()).most_common(10)` (benches-py/wordcount.py), on a
//! seeded Zipf-distributed text of 1 MB and of 11 MB.
//!
//! Every measurement is a whole process, so time and peak memory compare like
//! with like: CPython runs as `python3` (the interpreter itself, not a version
//! manager's wrapper script), and Soil as this example re-executed
//! with `--soil-arg`, `--soil-file` or `--soil-file-match`, which does exactly what `soil0 run` and
//! `trellis call` do (load and check env.json and program.json, decode the
//! JSON arguments, run, encode the result) with the binaries' allocator. The
//! text reaches Soil two ways a user can give it: as the JSON string argument
//! of `wordcount::top_words` (read from a file here, since an argument vector
//! caps one argument at 128 KiB), and as a path read through the `Fs`
//! capability by `wordcount::top_words_in_file`. A third Soil side counts as
//! many write it, taking the lookup apart with `match map_get w acc with |
//! Some count -> ... | None -> ...` (`wordcount::top_words_by_match_in_file`)
//! instead of `unwrap_or (map_get w acc) 0`. Each process reports its own
//! peak resident set (VmHWM of /proc/self/status) and CPU time. Rounds
//! alternate between the sides; each side's times are the best of five rounds
//! (the machine is shared; the best round is the least disturbed one), its
//! memory the largest of the five. The results of every side are compared,
//! and the run stops if they differ.
//!
//! Run: `cargo run --release -p soil0 --example wordcount_bench [MB ...]`
//! (default 1 11).

#![allow(clippy::disallowed_methods, reason = "benches use real files")]

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// The binaries that run Soil (`soil0`, `trellis`) use mimalloc; measure with it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const REPS: usize = 5;
const TOP: usize = 10;
/// Distinct words in the text's vocabulary.
const VOCABULARY: usize = 50_000;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn program_dir() -> PathBuf {
    workspace().join("test-data/soil0/wordcount")
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag, path] if flag == "--soil-arg" => soil_child("wordcount::top_words", &{
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
        }),
        [flag, path] if flag == "--soil-file" => soil_child(
            "wordcount::top_words_in_file",
            &format!("[{TOP},{}]", json_string(path)),
        ),
        [flag, path] if flag == "--soil-file-match" => soil_child(
            "wordcount::top_words_by_match_in_file",
            &format!("[{TOP},{}]", json_string(path)),
        ),
        sizes => {
            let sizes: Vec<usize> = if sizes.is_empty() {
                vec![1, 11]
            } else {
                sizes.iter().filter_map(|s| s.parse().ok()).collect()
            };
            compare_all(&sizes);
            ExitCode::SUCCESS
        }
    }
}

/// One Soil run as `soil0 run` does it; prints the result document on stdout
/// and the peak resident set on stderr.
fn soil_child(definition: &str, json_args: &str) -> ExitCode {
    let dir = program_dir();
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let (env, program) = (read("env.json"), read("program.json"));
    let output = soil0::run(
        soil0::Source::new("env.json", &env),
        soil0::Source::new("program.json", &program),
        definition,
        json_args,
    );
    println!("{}", output.document);
    eprintln!("peak_kb {}", peak_kb());
    eprintln!("cpu_seconds {}", cpu_seconds());
    ExitCode::from(output.exit)
}

/// This process's user and system time so far, from /proc/self/stat (in
/// clock ticks of 1/100 s, the value of `getconf CLK_TCK` on Linux).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name, which is in parentheses.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|t| t.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line: 11 and 12 from 0 here.
    (ticks(11) + ticks(12)) / 100.0
}

fn peak_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// One side's figures over the rounds: its result, best wall time and best
/// CPU time (user + system) in seconds, largest peak resident set in kB.
struct Measured {
    output: String,
    seconds: f64,
    cpu_seconds: f64,
    peak_kb: u64,
}

impl Measured {
    fn new() -> Measured {
        Measured {
            output: String::new(),
            seconds: f64::INFINITY,
            cpu_seconds: f64::INFINITY,
            peak_kb: 0,
        }
    }

    /// Runs `command` once and folds its figures in.
    fn round(&mut self, mut command: Command) {
        let start = Instant::now();
        let done = command
            .output()
            .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
        let seconds = start.elapsed().as_secs_f64();
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(done.status.success(), "{command:?} failed: {stderr}");
        let figure = |name: &str| -> f64 {
            stderr
                .lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or_else(|| panic!("no {name} line from {command:?}: {stderr}"))
        };
        self.seconds = self.seconds.min(seconds);
        self.cpu_seconds = self.cpu_seconds.min(figure("cpu_seconds"));
        self.peak_kb = self.peak_kb.max(figure("peak_kb") as u64);
        self.output = String::from_utf8_lossy(&done.stdout).trim().to_owned();
    }
}

fn compare_all(sizes: &[usize]) {
    let dir = workspace().join("target/wordcount_bench");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let me = std::env::current_exe().expect("the bench's own path");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches-py/wordcount.py");
    let python_exe = python_executable();
    println!(
        "word count, top {TOP}              words  soil (s)  cpython (s)  ratio  cpu ratio  soil (MB)  cpython (MB)  ratio"
    );
    for &mb in sizes {
        let text = zipf_text(mb * 1_000_000);
        let words = text.split_whitespace().count();
        let text_path = dir.join(format!("words_{mb}mb.txt"));
        let args_path = dir.join(format!("args_{mb}mb.json"));
        std::fs::write(&text_path, &text).expect("write the text");
        std::fs::write(&args_path, format!("[{TOP},{}]", json_string(&text)))
            .expect("write the arguments");
        drop(text);
        let sides = [
            ("argument", Some(("--soil-arg", &args_path))),
            ("file", Some(("--soil-file", &text_path))),
            ("file, by match", Some(("--soil-file-match", &text_path))),
            ("cpython", None),
        ];
        let mut measured: Vec<Measured> = sides.iter().map(|_| Measured::new()).collect();
        // Rounds alternate between the sides, so a disturbance of the shared
        // machine falls on all of them alike.
        for _ in 0..REPS {
            for ((_, soil), figures) in sides.iter().zip(&mut measured) {
                let mut command;
                match soil {
                    Some((flag, input)) => {
                        command = Command::new(&me);
                        command.arg(flag).arg(input);
                    }
                    None => {
                        command = Command::new(&python_exe);
                        command.arg(&script).arg(&text_path).arg(TOP.to_string());
                    }
                }
                figures.round(command);
            }
        }
        let python = &measured[sides.len() - 1];
        for ((how, _), soil) in sides.iter().zip(&measured).take(sides.len() - 1) {
            // The file variant's result is wrapped in `Ok`.
            let result = soil
                .output
                .strip_prefix(r#"{"tag":"Ok","value":"#)
                .and_then(|rest| rest.strip_suffix('}'))
                .unwrap_or(&soil.output);
            assert_eq!(
                result, python.output,
                "{mb} MB ({how}): Soil and CPython disagree"
            );
            println!(
                "{:<30} {words:>8} {:>9.3} {:>12.3} {:>5.2}x {:>9.2}x {:>10.1} {:>13.1} {:>5.2}x",
                format!("{mb} MB, text as {how}"),
                soil.seconds,
                python.seconds,
                soil.seconds / python.seconds,
                soil.cpu_seconds / python.cpu_seconds,
                soil.peak_kb as f64 / 1024.0,
                python.peak_kb as f64 / 1024.0,
                soil.peak_kb as f64 / python.peak_kb as f64,
            );
        }
    }
}

/// The interpreter `python3` runs, called directly: a version manager's
/// `python3` is often a shell script that costs more than the 1 MB count.
fn python_executable() -> String {
    let found = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 on the PATH");
    String::from_utf8_lossy(&found.stdout).trim().to_owned()
}

/// A deterministic text of about `bytes` bytes: lines of 6 to 17 words drawn
/// from a seeded vocabulary of lower-case words with Zipf (s = 1) frequencies,
/// so the commonest words are short and distinct counts settle the top ten.
fn zipf_text(bytes: usize) -> String {
    let mut random = Lcg(2024);
    let mut seen = HashSet::new();
    let mut vocabulary = Vec::with_capacity(VOCABULARY);
    while vocabulary.len() < VOCABULARY {
        let rank = vocabulary.len();
        let length = 1 + ((rank + 1) as f64).log(4.0) as usize + random.below(2);
        let word: String = (0..length)
            .map(|_| char::from(b'a' + random.below(26) as u8))
            .collect();
        if seen.insert(word.clone()) {
            vocabulary.push(word);
        }
    }
    let mut cumulative = Vec::with_capacity(VOCABULARY);
    let mut total = 0.0;
    for rank in 0..VOCABULARY {
        total += 1.0 / (rank + 1) as f64;
        cumulative.push(total);
    }
    let mut text = String::with_capacity(bytes + 64);
    while text.len() < bytes {
        let count = 6 + random.below(12);
        for i in 0..count {
            if i > 0 {
                text.push(' ');
            }
            let target = random.unit() * total;
            let rank = cumulative.partition_point(|&c| c < target);
            text.push_str(&vocabulary[rank.min(VOCABULARY - 1)]);
        }
        text.push('\n');
    }
    text
}

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }

    fn unit(&mut self) -> f64 {
        self.next() as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// `text` as a JSON string literal (the text is ASCII letters, spaces and
/// line breaks, but escape what JSON requires anyway).
fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
