//! The lowering loop's own overhead (design §4.9): `csvstats::mean` lowered on a
//! copy of `examples/` through the scripted provider, again and again (the root
//! put back between runs), each run's time split as the daemon measured it —
//! creating the job (its bundle), the pre-flight, the agent's run and, inside it,
//! the daemon answering its tool calls, the final gate — against the whole
//! `trellis lower` command. The loop's overhead is the whole command less the
//! provider's own time (the agent's run less its tool calls).
//!
//! Run with `cargo build --release -p trellis && cargo run --release -p trellis
//! --example lower_bench` (optional argument: the number of runs, default 15).

#![allow(clippy::disallowed_methods, reason = "benches use real files")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

fn main() {
    if let Err(message) = run() {
        eprintln!("lower_bench: {message}");
        std::process::exit(1);
    }
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("mkdir: {e}"))?;
    for entry in std::fs::read_dir(from).map_err(|e| format!("read_dir: {e}"))? {
        let entry = entry.map_err(|e| format!("read_dir: {e}"))?;
        let target = to.join(entry.file_name());
        if entry.file_type().map_err(|e| e.to_string())?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target).map_err(|e| format!("copy: {e}"))?;
        }
    }
    Ok(())
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn run() -> Result<(), String> {
    let runs: usize = match std::env::args().nth(1) {
        Some(n) => n.parse().map_err(|_| format!("not a count: {n}"))?,
        None => 15,
    };
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let trellis = exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("trellis"))
        .filter(|path| path.is_file())
        .ok_or("no trellis binary; build it first with `cargo build --release -p trellis`")?;
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let base = std::env::temp_dir().join(format!("tr-lower-bench-{}", std::process::id()));
    let root = base.join("root");
    let runtime = base.join("run");
    let config = base.join("config");
    copy_tree(&workspace.join("examples"), &root)?;
    copy_tree(
        &workspace.join("test-data/lowering"),
        &config.join("lowering"),
    )?;
    std::fs::create_dir_all(config.join("trellis")).map_err(|e| e.to_string())?;
    std::fs::write(
        config.join("trellis/providers.toml"),
        format!(
            "[providers.fixture]\nkind = \"scripted\"\nplaybooks = \"{}\"\n",
            config.join("lowering/playbooks").display()
        ),
    )
    .map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&runtime).map_err(|e| format!("mkdir: {e}"))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("chmod: {e}"))?;
    }
    let command = |args: &[&str]| {
        let mut command = Command::new(&trellis);
        command
            .args(args)
            .current_dir(&root)
            .env("TRELLIS_ROOT", &root)
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("XDG_CONFIG_HOME", &config);
        command
    };
    let result = bench(&command, &root, runs);
    let _ = command(&["daemon", "stop"]).output();
    let _ = std::fs::remove_dir_all(&base);
    result
}

fn bench(command: &dyn Fn(&[&str]) -> Command, root: &Path, runs: usize) -> Result<(), String> {
    let lock = std::fs::read(root.join("csvstats/mean.lock")).map_err(|e| e.to_string())?;
    let manifest = std::fs::read(root.join("soil.lock")).map_err(|e| e.to_string())?;
    // Warm: the daemon is up and the root loaded before the first sample.
    command(&["status"]).output().map_err(|e| e.to_string())?;
    let keys = [
        "bundle_ms",
        "preflight_ms",
        "agent_ms",
        "tool_calls_ms",
        "gate_ms",
    ];
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); keys.len() + 2];
    for _ in 0..runs {
        let _ = std::fs::remove_file(root.join("csvstats/mean.soil"));
        std::fs::write(root.join("csvstats/mean.lock"), &lock).map_err(|e| e.to_string())?;
        std::fs::write(root.join("soil.lock"), &manifest).map_err(|e| e.to_string())?;
        let started = Instant::now();
        let output = command(&["lower", "csvstats::mean", "--json"])
            .output()
            .map_err(|e| e.to_string())?;
        let whole = started.elapsed().as_secs_f64() * 1000.0;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let summary: Value = stdout
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .find(|value| value.get("summary").is_some())
            .ok_or_else(|| format!("no summary from trellis lower: {stdout}"))?;
        let outcome = &summary["summary"]["outcomes"][0];
        if outcome["state"] != "green" {
            return Err(format!("mean did not lower green: {outcome}"));
        }
        let timings = &outcome["detail"]["timings"];
        for (slot, key) in keys.iter().enumerate() {
            samples[slot].push(timings[key].as_f64().unwrap_or(0.0));
        }
        let provider = timings["agent_ms"].as_f64().unwrap_or(0.0)
            - timings["tool_calls_ms"].as_f64().unwrap_or(0.0);
        samples[keys.len()].push(whole);
        samples[keys.len() + 1].push(whole - provider);
    }
    println!("lower_bench: csvstats::mean through the scripted provider, {runs} runs (median ms)");
    let labels = [
        "job + bundle",
        "pre-flight",
        "agent run (all)",
        "  of which tool calls",
        "final gate",
        "whole `trellis lower`",
        "loop overhead (whole - provider)",
    ];
    for (label, values) in labels.iter().zip(samples.iter_mut()) {
        println!("  {label:<34} {:>9.2}", median(values));
    }
    Ok(())
}
