//! `edit_bench`'s second table: whole commands on a root of another shape than
//! the bench's own (`shaped::Shape::mixed`: modules of twenty, two record
//! types each, prose naming callees, types and definitions anywhere), not
//! adopted, so a shape the main table's generator does not have is measured at
//! every size too (design §7.14). Each edit is made on a file no sample edited
//! before; the headline is the `check` started at once after the write, beside
//! the one started after a pause.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use trellis_db::shaped::{Shape, shaped_soil_path, shaped_spec_path};

use crate::scratch;

/// One size's figures: per edit kind (at once, paused), cold, and RSS.
pub struct ShapedSize {
    pub definitions: usize,
    pub rows: Vec<(&'static str, Vec<Duration>, Vec<Duration>)>,
    pub cold: Duration,
    pub rss_kib: Option<u64>,
}

struct Root {
    trellis: PathBuf,
    root: PathBuf,
    runtime: PathBuf,
}

impl Root {
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

    fn time(&self, args: &[&str]) -> Result<Duration, String> {
        let started = Instant::now();
        self.command(args)
            .status()
            .map_err(|e| format!("run trellis: {e}"))?;
        Ok(started.elapsed())
    }

    fn replace(&self, relative: &str, from: &str, to: &str) -> Result<(), String> {
        let path = self.root.join(relative);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("read {relative}: {e}"))?;
        if !text.contains(from) {
            return Err(format!("{relative} does not contain `{from}`"));
        }
        std::fs::write(&path, text.replacen(from, to, 1))
            .map_err(|e| format!("write {relative}: {e}"))
    }
}

/// An edit of definition `index`'s file: its path, and what to replace.
type Edit = (fn(&Shape, usize) -> String, &'static str, &'static str);

/// The rows: a name and the edit before each command (none: a no-op).
const KINDS: [(&str, Option<Edit>); 3] = [
    ("no-op", None),
    (
        "prose of a definition",
        Some((
            shaped_spec_path,
            "A generated definition.",
            "A generated, edited definition.",
        )),
    ),
    (
        "body of a definition",
        Some((shaped_soil_path, "let base = ", "let base = 1 + ")),
    ),
];

/// Measures a shaped root of `definitions`, `samples` of each kind, once at
/// once after the write and once after `pause`.
pub fn measure(
    trellis: &Path,
    definitions: usize,
    samples: usize,
    pause: Duration,
) -> Result<ShapedSize, String> {
    let shape = Shape::mixed(definitions);
    let scratch = scratch::write_scratch(
        &format!("tr-shaped-{definitions}"),
        trellis_db::shaped::shaped_root(&shape),
    )?;
    let root = Root {
        trellis: trellis.to_path_buf(),
        root: scratch.root.clone(),
        runtime: scratch.runtime.clone(),
    };
    let outcome = measure_root(&root, &shape, samples, pause);
    let _ = root.command(&["daemon", "stop"]).status();
    let _ = std::fs::remove_dir_all(&scratch.base);
    outcome
}

fn measure_root(
    root: &Root,
    shape: &Shape,
    samples: usize,
    pause: Duration,
) -> Result<ShapedSize, String> {
    let cold = root.time(&["check"])?;
    // Definitions from the middle of the root on, past each module's records.
    let mut next = shape.definitions / 2;
    let mut fresh = || {
        next += 1;
        if next % shape.per_module < shape.types_per_module {
            next += shape.types_per_module;
        }
        next % shape.definitions
    };
    let mut rows = Vec::new();
    for (name, edit) in KINDS {
        let (mut at_once, mut paused) = (Vec::new(), Vec::new());
        for _ in 0..samples {
            for wait in [None, Some(pause)] {
                if let Some((file, from, to)) = edit {
                    root.replace(&file(shape, fresh()), from, to)?;
                }
                if let Some(wait) = wait {
                    std::thread::sleep(wait);
                }
                let took = root.time(&["check"])?;
                match wait {
                    None => at_once.push(took),
                    Some(_) => paused.push(took),
                }
            }
        }
        rows.push((name, at_once, paused));
    }
    let rss_kib = daemon_rss(root);
    Ok(ShapedSize {
        definitions: shape.definitions,
        rows,
        cold,
        rss_kib,
    })
}

/// The daemon's resident set, read from `/proc`.
fn daemon_rss(root: &Root) -> Option<u64> {
    let socket =
        trellis_rpc::socket_path_with(&root.root, Some(&root.runtime), trellis_rpc::current_uid())
            .ok()?;
    let mut client = trellis_rpc::Client::connect(&socket).ok()?;
    let answer = client.call("daemon.status", serde_json::json!({})).ok()?;
    let pid = answer["pid"].as_u64()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.split_whitespace().next()?.parse().ok())
}

fn median(samples: &[Duration]) -> f64 {
    let mut samples = samples.to_vec();
    samples.sort();
    samples
        .get(samples.len() / 2)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// Prints the table: per size, the median at once and after the pause.
pub fn report(sizes: &[ShapedSize], pause: Duration) {
    println!(
        "a root of another shape (shaped::Shape::mixed, not adopted): check at once after the \
         write / {} ms after it, medians in ms\n",
        pause.as_millis()
    );
    print!("{:<34}", "edit");
    for size in sizes {
        print!(" | {:>17}", format!("N = {}", size.definitions));
    }
    println!();
    let kinds = sizes.first().map_or(0, |size| size.rows.len());
    for at in 0..kinds {
        print!("{:<34}", sizes[0].rows[at].0);
        for size in sizes {
            let (_, at_once, paused) = &size.rows[at];
            print!(" | {:>8.2} {:>8.2}", median(at_once), median(paused));
        }
        println!();
    }
    print!("{:<34}", "first check (spawn + load)");
    for size in sizes {
        print!(" | {:>17.1}", size.cold.as_secs_f64() * 1000.0);
    }
    println!();
    print!("{:<34}", "daemon RSS after the rows (MiB)");
    for size in sizes {
        let rss =
            (size.rss_kib).map_or("-".to_owned(), |kib| format!("{:.0}", kib as f64 / 1024.0));
        print!(" | {rss:>17}");
    }
    println!("\n");
}
