//! The edit-scaling table (issue 19): whole `trellis` commands through the daemon
//! after every kind of edit, at N = 200, 2,000 and 20,000 synthetic definitions.
//! The root is `hub_root(N)`: the layered modules plus a hub chain (hubs with
//! hundreds of transitive dependents at every N), adopted and tested before the
//! daemon that is measured starts, so every definition is green and an edit
//! moves real status rows. Each sample of a first-edit row edits a file that no
//! command of that daemon has seen edited before (the hard case of design §7.1);
//! the repeated rows flip one file back and forth. Definitions are added and
//! deleted as whole `.tr` + `.soil` pairs, modules as whole directories. Every
//! row's headline is the median of whole client commands started at once after
//! the write, as a script, an agent's edit tool or a save hook starts them (with
//! its min); beside it the median of the same command started after a pause of
//! half a second (what a person who pauses meets: the daemon has answered the
//! change ahead by then, design §7.10) and, from matched samples sent over the
//! socket (each on a fresh file of its own), the daemon's own time per request (`timings.refresh_us + queries_us + ahead_us`: what the
//! request did, and what the daemon did for its change ahead of it, design
//! §7.10). The daemon's
//! resident set is read from `/proc` after the last row. Cold start is a `check`
//! that spawns the daemon, taken last, once every size's rows are done: in
//! rounds that take one sample of each size in turn, so a slow stretch of a
//! noisy machine lands on every size alike; the table gives each size's median,
//! and the ratio is the median of the rounds' own ratios. Each round also
//! stops that daemon (it stores its answers, design §7.16) and times the first
//! `status` of a restarted one; the cold `check` removes the store first.
//!
//! A second table takes a root of another shape (`shaped::Shape::mixed`:
//! modules of twenty, record types, prose naming callees, types and
//! definitions anywhere; not adopted) at the same sizes: a check at once
//! after a prose and a body edit, and after a pause (design §7.14).
//!
//! Run with `cargo build --release -p trellis && cargo run --release -p trellis
//! --example edit_bench -- [N...]` (default 200 2000 20000; `TRELLIS_BENCH_QUICK=1`
//! leaves out 20,000).

#![allow(clippy::disallowed_methods, reason = "benches use real files")]

#[path = "support/scratch.rs"]
mod scratch;
#[path = "support/shaped_table.rs"]
mod shaped_table;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use trellis_db::synthetic::{HUBS, hub_definitions, hub_root, hub_soil_path, soil_path, spec_path};

/// Whole commands per row, and as many paused and socket samples beside them.
const SAMPLES: usize = 7;
/// How long the paused samples wait between the write and the command.
const PAUSE: Duration = Duration::from_millis(500);
/// Rounds of cold starts, one per size each.
const COLD_ROUNDS: usize = 7;
const PER_MODULE: usize = 50;
/// The leaf the repeated row flips.
const REPEATED: usize = 1;
/// The hub the repeated hub row flips; the first-edit hub row takes the others.
const REPEATED_HUB: usize = HUBS - 1;
/// Goals end to end (issue 19).
const EDIT_GOAL_2K_MS: f64 = 5.0;
const EDIT_GOAL_20K_MS: f64 = 10.0;
const STATUS_GOAL_2K_MS: f64 = 5.0;

struct Bench {
    trellis: PathBuf,
    /// The scratch directory holding the root, removed at the end.
    base: PathBuf,
    root: PathBuf,
    runtime: PathBuf,
    definitions: usize,
    /// How many of them are the layered modules' (the rest are the hub chain).
    layered: usize,
    /// Every file some sample edited, so no sample edits one twice.
    touched: BTreeSet<String>,
    added: usize,
    /// Modules the bench added, not yet deleted.
    added_modules: Vec<String>,
    modules_added: usize,
}

/// One row's samples.
#[derive(Default)]
struct Row {
    name: &'static str,
    /// Started at once after the write: the headline.
    whole: Vec<Duration>,
    /// Started [`PAUSE`] after the write.
    paused: Vec<Duration>,
    daemon: Vec<Duration>,
}

impl Bench {
    /// Writes `hub_root(definitions)` under a directory of its own.
    fn create(trellis: &Path, definitions: usize) -> Result<Bench, String> {
        let scratch =
            scratch::write_scratch(&format!("tr-edit-{definitions}"), hub_root(definitions))?;
        Ok(Bench {
            trellis: trellis.to_path_buf(),
            base: scratch.base,
            root: scratch.root,
            runtime: scratch.runtime,
            definitions,
            layered: definitions - hub_definitions(definitions),
            // The repeated row's file is no first-edit row's.
            touched: BTreeSet::from([soil_path(REPEATED)]),
            added: 0,
            added_modules: Vec::new(),
            modules_added: 0,
        })
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.trellis);
        command
            .args(args)
            .current_dir(&self.root)
            .env("TRELLIS_ROOT", &self.root)
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    }

    /// One whole client command's wall time. Its exit code is not judged: a
    /// signature edit may well leave a caller failing its check.
    fn time(&self, args: &[&str]) -> Result<Duration, String> {
        let started = Instant::now();
        self.command(args)
            .status()
            .map_err(|e| format!("run trellis: {e}"))?;
        Ok(started.elapsed())
    }

    fn socket(&self) -> Result<PathBuf, String> {
        trellis_rpc::socket_path_with(&self.root, Some(&self.runtime), trellis_rpc::current_uid())
            .map_err(|e| format!("socket path: {e}"))
    }

    fn call(&self, method: &str, params: Value) -> Result<Value, String> {
        let mut client =
            trellis_rpc::Client::connect(&self.socket()?).map_err(|e| format!("connect: {e}"))?;
        client
            .call(method, params)
            .map_err(|e| format!("{method}: {e}"))
    }

    /// The daemon's own time for one request, as the command line asks it,
    /// with its work ahead on the request's change.
    fn daemon_time(&self, method: &str) -> Result<Duration, String> {
        let params = if method == "check" {
            json!({ "def": null })
        } else {
            json!({ "summary": true })
        };
        let answer = self.call(method, params)?;
        let micros = |field: &str| answer["timings"][field].as_u64().unwrap_or(0);
        Ok(Duration::from_micros(
            micros("refresh_us") + micros("queries_us") + micros("ahead_us"),
        ))
    }

    /// Stops the daemon and waits until its process is gone, so a cold start
    /// that follows never shares the cores with a large daemon's exit.
    fn stop_daemon(&self) -> Result<(), String> {
        let pid = self
            .call("daemon.status", json!({}))
            .ok()
            .and_then(|answer| answer["pid"].as_u64());
        let _ = self.command(&["daemon", "stop"]).status();
        let socket = self.socket()?;
        let deadline = Instant::now() + Duration::from_secs(20);
        let running = || {
            socket.exists() || pid.is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists())
        };
        while running() {
            if Instant::now() > deadline {
                return Err("the daemon did not stop".to_owned());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }

    /// The layered modules.
    fn modules(&self) -> usize {
        self.layered.div_ceil(PER_MODULE)
    }

    fn module_dir(module: usize) -> String {
        format!("m{module:03}")
    }

    /// The next definition at `position` of some layered module whose `file` no
    /// sample has edited yet, walking the modules round robin from the middle of
    /// the root; `None` when a small root has none left (its row has fewer samples).
    fn fresh(
        &mut self,
        positions: std::ops::Range<usize>,
        file: fn(usize) -> String,
    ) -> Option<String> {
        self.fresh_in(positions, file, 0)
    }

    /// [`Bench::fresh`] in a module followed by at least `after` modules: a
    /// leaf's callers live in its module and the two after it, so a leaf with
    /// both has the same neighbourhood at every N.
    fn fresh_in(
        &mut self,
        positions: std::ops::Range<usize>,
        file: fn(usize) -> String,
        after: usize,
    ) -> Option<String> {
        let modules = self.modules();
        for position in positions {
            for step in 0..modules {
                let module = (modules / 2 + step * 7) % modules;
                if module + after >= modules {
                    continue;
                }
                let index = module * PER_MODULE + position;
                if index >= self.layered {
                    continue;
                }
                let path = file(index);
                if self.touched.insert(path.clone()) {
                    return Some(path);
                }
            }
        }
        None
    }

    /// A hub whose body no sample has edited yet.
    fn fresh_hub(&mut self) -> Option<String> {
        (0..REPEATED_HUB)
            .map(hub_soil_path)
            .find(|path| self.touched.insert(path.clone()))
    }

    fn replace(&self, relative: &str, from: &str, to: &str) -> Result<bool, String> {
        let path = self.root.join(relative);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("read {relative}: {e}"))?;
        if !text.contains(from) {
            return Err(format!("{relative} does not contain `{from}`"));
        }
        std::fs::write(&path, text.replacen(from, to, 1))
            .map_err(|e| format!("write {relative}: {e}"))?;
        Ok(true)
    }

    /// One edit of `kind` on a file never edited before (or the repeated file).
    /// Returns false when the root has no unedited file of that kind left.
    fn edit(&mut self, kind: Edit, flip: &mut bool) -> Result<bool, String> {
        let edit_body = |bench: &Self, path: Option<String>| match path {
            Some(path) => bench.replace(&path, "let base = x *", "let base = 1 + x *"),
            None => Ok(false),
        };
        match kind {
            Edit::NoOp => Ok(true),
            Edit::Prose => match self.fresh(10..PER_MODULE, spec_path) {
                Some(path) => self.replace(
                    &path,
                    "A generated definition",
                    "A generated, edited definition",
                ),
                None => Ok(false),
            },
            Edit::Leaf => {
                let path = self.fresh_in(0..10, soil_path, 2);
                edit_body(self, path)
            }
            Edit::Middle => {
                let path = self.fresh(10..40, soil_path);
                edit_body(self, path)
            }
            Edit::Hub => {
                let path = self.fresh_hub();
                edit_body(self, path)
            }
            Edit::Signature => match self.fresh(40..PER_MODULE, spec_path) {
                Some(path) => self.replace(&path, "(x : I64) -> I64", "(x : I64) -> Bool"),
                None => Ok(false),
            },
            Edit::Decision => {
                let modules = self.modules();
                let path = (0..modules)
                    .map(|step| format!("{}/_module.tr", Self::module_dir((step * 7) % modules)))
                    .find(|path| !self.touched.contains(path));
                // A small root runs out of modules: its row has fewer samples.
                let Some(path) = path else {
                    return Ok(false);
                };
                self.touched.insert(path.clone());
                self.replace(
                    &path,
                    "every definition takes one I64",
                    "every definition takes one I64 and returns one",
                )
            }
            Edit::Add => {
                let module = (self.added * 7 + 1) % self.modules();
                let name = format!("g{:05}", self.added);
                self.added += 1;
                self.write_definition(&Self::module_dir(module), &name)?;
                Ok(true)
            }
            Edit::Delete => {
                // A top definition: nothing calls it.
                let Some(soil) = self.fresh(40..PER_MODULE, soil_path) else {
                    return Ok(false);
                };
                let spec = soil.replace(".soil", ".tr");
                for relative in [&soil, &spec] {
                    std::fs::remove_file(self.root.join(relative))
                        .map_err(|e| format!("remove {relative}: {e}"))?;
                }
                Ok(true)
            }
            Edit::AddModule => {
                let module = format!("added{:03}", self.modules_added);
                self.modules_added += 1;
                std::fs::create_dir(self.root.join(&module))
                    .map_err(|e| format!("mkdir {module}: {e}"))?;
                std::fs::write(
                    self.root.join(&module).join("_module.tr"),
                    format!(
                        "---\nname: {module}\n---\n\n# Module {module}\n\nAdded by the bench.\n"
                    ),
                )
                .map_err(|e| format!("write {module}/_module.tr: {e}"))?;
                self.write_definition(&module, &format!("a{module}"))?;
                self.added_modules.push(module);
                Ok(true)
            }
            Edit::DeleteModule => {
                let Some(module) = self.added_modules.pop() else {
                    return Ok(false);
                };
                std::fs::remove_dir_all(self.root.join(&module))
                    .map_err(|e| format!("remove {module}: {e}"))?;
                Ok(true)
            }
            Edit::ConfigDescription => {
                *flip = !*flip;
                let (from, to) = if *flip {
                    ("generated for benchmarks", "generated for the edit bench")
                } else {
                    ("generated for the edit bench", "generated for benchmarks")
                };
                self.replace("soil.toml", from, to)
            }
            Edit::ConfigTag => {
                *flip = !*flip;
                let (from, to) = if *flip {
                    (
                        "[tags]\n",
                        "[tags]\nspare = \"declared by the edit bench\"\n",
                    )
                } else {
                    (
                        "[tags]\nspare = \"declared by the edit bench\"\n",
                        "[tags]\n",
                    )
                };
                self.replace("soil.toml", from, to)
            }
            Edit::Repeated | Edit::RepeatedHub => {
                *flip = !*flip;
                let path = match kind {
                    Edit::Repeated => soil_path(REPEATED),
                    _ => hub_soil_path(REPEATED_HUB),
                };
                let (from, to) = if *flip {
                    ("let base = x *", "let base = 2 + x *")
                } else {
                    ("let base = 2 + x *", "let base = x *")
                };
                self.replace(&path, from, to)
            }
        }
    }

    /// Writes a definition `name` (spec and Soil, green once tested) into `dir`.
    fn write_definition(&self, dir: &str, name: &str) -> Result<(), String> {
        let dir = self.root.join(dir);
        let write = |file: String, text: String| {
            std::fs::write(dir.join(&file), text).map_err(|e| format!("write {file}: {e}"))
        };
        write(format!("{name}.soil"), format!("{name} x =\n  x + 1\n"))?;
        write(
            format!("{name}.tr"),
            format!(
                "---\nname: {name}\ntags: [synthetic]\n---\n\n# {name}\n\nAn added definition.\n\n```soil-sig\n{name} : (x : I64) -> I64\n```\n\n```test basics\n{name}(0) -> 1\n```\n"
            ),
        )
    }

    /// Each definition's status, from `status --json` through the daemon.
    fn statuses(&self) -> Result<Vec<(String, String)>, String> {
        let answer = self.call("status", json!({}))?;
        let rows = answer["definitions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        Ok(rows
            .iter()
            .map(|row| {
                let field = |name: &str| row[name].as_str().unwrap_or_default().to_owned();
                (field("name"), field("status"))
            })
            .collect())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Edit {
    NoOp,
    Prose,
    Leaf,
    Middle,
    Signature,
    Decision,
    Hub,
    Add,
    Delete,
    AddModule,
    DeleteModule,
    ConfigDescription,
    ConfigTag,
    Repeated,
    RepeatedHub,
}

const ROWS: [(&str, Edit, &str); 17] = [
    ("no-op check", Edit::NoOp, "check"),
    ("no-op status", Edit::NoOp, "status"),
    ("prose, first edit", Edit::Prose, "check"),
    ("leaf body, first edit", Edit::Leaf, "check"),
    ("middle body, first edit", Edit::Middle, "check"),
    ("signature, first edit", Edit::Signature, "check"),
    ("decision entry, first edit", Edit::Decision, "check"),
    // What a hub edit moves is its dependents' status rows, which `status` asks
    // for (first, while the root is green); `check` re-checks the hub alone, as
    // its callers read its signature, but asks again about every dependent.
    ("hub body, first edit (status)", Edit::Hub, "status"),
    ("hub body, first edit", Edit::Hub, "check"),
    ("add a definition", Edit::Add, "check"),
    ("delete a definition", Edit::Delete, "check"),
    ("add a module", Edit::AddModule, "check"),
    ("delete a module", Edit::DeleteModule, "check"),
    (
        "soil.toml: a tag's description",
        Edit::ConfigDescription,
        "check",
    ),
    ("soil.toml: a new tag", Edit::ConfigTag, "check"),
    ("same leaf edited again", Edit::Repeated, "check"),
    (
        "same hub edited again (status)",
        Edit::RepeatedHub,
        "status",
    ),
];

/// The rows whose goal is the single-edit one (every row but the no-ops).
const EDIT_ROWS: std::ops::RangeFrom<usize> = 2..;
/// Where the leaf and hub first-edit rows are, for the ratios.
const LEAF_ROW: usize = 3;
const HUB_ROW: usize = 7;

fn median(samples: &[Duration]) -> Duration {
    let mut samples = samples.to_vec();
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn min(samples: &[Duration]) -> Duration {
    samples.iter().min().copied().unwrap_or_default()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

struct Size {
    definitions: usize,
    /// Cold starts, one per round.
    colds: Vec<Duration>,
    /// A restarted daemon's first `status`, one per round.
    restarts: Vec<Duration>,
    /// Green rows after the adopt and test, out of all.
    green: (usize, usize),
    /// Status rows one hub edit moved.
    hub_moved: usize,
    rows: Vec<Row>,
    rss_kib: Option<u64>,
}

fn main() {
    if let Err(message) = run() {
        eprintln!("edit_bench: {message}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|n| n.parse().map_err(|_| format!("not a count: {n}")))
        .collect::<Result<_, _>>()?;
    if sizes.is_empty() {
        sizes = vec![200, 2000, 20000];
        if std::env::var_os("TRELLIS_BENCH_QUICK").is_some() {
            sizes.pop();
        }
    }
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let trellis = exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("trellis"))
        .filter(|path| path.is_file())
        .ok_or_else(|| {
            format!(
                "no trellis binary next to {}; build it first with `cargo build --release -p trellis`",
                exe.display()
            )
        })?;
    println!("trellis edit bench: whole commands through the daemon, {SAMPLES} samples a row");
    let mut benches = Vec::new();
    let mut results = Vec::new();
    let mut shaped = Vec::new();
    let outcome = (|| {
        for &definitions in &sizes {
            shaped.push(shaped_table::measure(
                &trellis,
                definitions,
                SAMPLES,
                PAUSE,
            )?);
        }
        for definitions in sizes {
            let bench = Bench::create(&trellis, definitions)?;
            benches.push(bench);
            let bench = benches.last_mut().expect("just pushed");
            let measured = measure(bench);
            bench.stop_daemon()?;
            results.push(measured?);
        }
        measure_cold(&benches, &mut results)
    })();
    for bench in &benches {
        let _ = bench.stop_daemon();
        let _ = std::fs::remove_dir_all(&bench.base);
    }
    outcome?;
    report(&results);
    shaped_table::report(&shaped, PAUSE);
    Ok(())
}

/// Cold starts in rounds, one of each size per round (see the module doc).
/// Each round, per size: a cold `check` (the stored answers removed first,
/// design §7.16), then, the daemon stopped (it stores its answers), the first
/// `status` of a restarted daemon.
fn measure_cold(benches: &[Bench], results: &mut [Size]) -> Result<(), String> {
    for _ in 0..COLD_ROUNDS {
        for (bench, size) in benches.iter().zip(results.iter_mut()) {
            let _ = std::fs::remove_file(bench.root.join(trellis_service::answer_cache::STORE));
            size.colds.push(bench.time(&["check"])?);
            bench.stop_daemon()?;
            size.restarts.push(bench.time(&["status"])?);
            bench.stop_daemon()?;
        }
    }
    Ok(())
}

fn measure(bench: &mut Bench) -> Result<Size, String> {
    // Stamp and test everything, so the measured daemon starts on a green root.
    bench.stop_daemon()?;
    bench.time(&["adopt"])?;
    bench.time(&["test"])?;
    // Warm the memos every row reads, so no row pays the first status.
    let before = bench.statuses()?;
    let green = (
        before
            .iter()
            .filter(|(_, status)| status == "green")
            .count(),
        before.len(),
    );
    let mut rows = Vec::new();
    let mut hub_moved = 0;
    for (name, kind, command) in ROWS {
        let mut row = Row {
            name,
            ..Row::default()
        };
        let mut flip = false;
        for sample in 0..SAMPLES {
            let before = (kind == Edit::Hub && sample == 0 && rows.len() == HUB_ROW)
                .then(|| bench.statuses())
                .transpose()?;
            if bench.edit(kind, &mut flip)? {
                row.whole.push(bench.time(&[command])?);
            }
            if let Some(before) = before {
                let after = bench.statuses()?;
                hub_moved = before.iter().zip(&after).filter(|(a, b)| a != b).count();
            }
            if bench.edit(kind, &mut flip)? {
                row.daemon.push(bench.daemon_time(command)?);
            }
            if bench.edit(kind, &mut flip)? {
                std::thread::sleep(PAUSE);
                row.paused.push(bench.time(&[command])?);
            }
        }
        rows.push(row);
    }
    let rss_kib = bench
        .call("daemon.status", json!({}))
        .ok()
        .and_then(|answer| answer["pid"].as_u64())
        .and_then(|pid| std::fs::read_to_string(format!("/proc/{pid}/status")).ok())
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|value| value.split_whitespace().next()?.parse().ok())
        });
    Ok(Size {
        definitions: bench.definitions,
        colds: Vec::new(),
        restarts: Vec::new(),
        green,
        hub_moved,
        rows,
        rss_kib,
    })
}

fn report(sizes: &[Size]) {
    println!(
        "\ntimes in ms: whole command started at once after the write, median and min; the same \
         started {} ms after it; the daemon's own median per request\n",
        PAUSE.as_millis()
    );
    print!("{:<34}", "edit");
    for size in sizes {
        print!(" | {:>28}", format!("N = {}", size.definitions));
    }
    println!();
    print!("{:<34}", "");
    for _ in sizes {
        print!(
            " | {:>6} {:>6} {:>6} {:>7}",
            "at once", "min", "paused", "daemon"
        );
    }
    println!();
    for (at, (name, _, _)) in ROWS.iter().enumerate() {
        print!("{name:<34}");
        for size in sizes {
            let row = &size.rows[at];
            print!(
                " | {:>7.2} {:>6.2} {:>6.2} {:>7.2}",
                ms(median(&row.whole)),
                ms(min(&row.whole)),
                ms(median(&row.paused)),
                ms(median(&row.daemon))
            );
        }
        println!();
    }
    print!("{:<34}", "cold check (spawn + load)");
    for size in sizes {
        print!(" | {:>28.1}", ms(median(&size.colds)));
    }
    println!();
    print!("{:<34}", "restarted daemon's first status");
    for size in sizes {
        print!(
            " | {:>28}",
            format!(
                "{:.1} ({:.0}% of cold)",
                ms(median(&size.restarts)),
                100.0 * ms(median(&size.restarts)) / ms(median(&size.colds))
            )
        );
    }
    println!();
    print!("{:<34}", "green after adopt + test");
    for size in sizes {
        print!(" | {:>28}", format!("{} of {}", size.green.0, size.green.1));
    }
    println!();
    print!("{:<34}", "status rows one hub edit moved");
    for size in sizes {
        print!(" | {:>28}", size.hub_moved);
    }
    println!();
    print!("{:<34}", "daemon RSS after the rows (MiB)");
    for size in sizes {
        print!(
            " | {:>28}",
            size.rss_kib
                .map_or("-".to_owned(), |kib| format!("{:.0}", kib as f64 / 1024.0))
        );
    }
    println!("\n");
    let at = |n: usize| sizes.iter().find(|size| size.definitions == n);
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    for (n, goal) in [(2000, EDIT_GOAL_2K_MS), (20000, EDIT_GOAL_20K_MS)] {
        let Some(size) = at(n) else { continue };
        let worst = size.rows[EDIT_ROWS]
            .iter()
            .map(|row| (ms(median(&row.whole)), row.name))
            .fold((0.0, ""), |a, b| if b.0 > a.0 { b } else { a });
        println!(
            "N = {n}: slowest edit, command at once after the write, median {:.2} ms ({}), \
             goal ≤ {goal} ms: {}",
            worst.0,
            worst.1,
            verdict(worst.0 <= goal)
        );
    }
    if let Some(size) = at(2000) {
        let status = ms(median(&size.rows[1].whole));
        println!(
            "N = 2000: no-op status {status:.2} ms, goal ≤ {STATUS_GOAL_2K_MS} ms: {}",
            verdict(status <= STATUS_GOAL_2K_MS)
        );
    }
    if let (Some(small), Some(large)) = (at(200), at(20000)) {
        let ratio =
            ms(median(&large.rows[LEAF_ROW].daemon)) / ms(median(&small.rows[LEAF_ROW].daemon));
        println!(
            "leaf first edit, daemon work N = 20000 ÷ N = 200: {ratio:.1}x (goal ≤ 2x: {})",
            verdict(ratio <= 2.0)
        );
    }
    if let (Some(medium), Some(large)) = (at(2000), at(20000)) {
        // The same hub chain at both sizes: the same dependents, so the same work.
        let ratio =
            ms(median(&large.rows[HUB_ROW].daemon)) / ms(median(&medium.rows[HUB_ROW].daemon));
        println!(
            "hub first edit, daemon work N = 20000 ÷ N = 2000 ({} and {} rows moved): {ratio:.1}x \
             (the work follows the dependents, not N, when ≈ 1x)",
            large.hub_moved, medium.hub_moved
        );
    }
    if let (Some(medium), Some(large)) = (at(2000), at(20000)) {
        let mut ratios: Vec<f64> = (large.colds.iter().zip(&medium.colds))
            .map(|(large, medium)| ms(*large) / ms(*medium))
            .collect();
        ratios.sort_by(f64::total_cmp);
        let ratio = ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN);
        let each: Vec<String> = ratios.iter().map(|r| format!("{r:.1}")).collect();
        println!(
            "cold check N = 20000 ÷ N = 2000, median of {} rounds: {ratio:.1}x (goal ≤ 10x: {}; \
             each round: {})",
            ratios.len(),
            verdict(ratio <= 10.0),
            each.join(" ")
        );
    }
}
