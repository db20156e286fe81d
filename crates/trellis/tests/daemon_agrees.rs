//! The daemon equals no daemon (issue 40): one root, a seeded random walk of
//! edits of every kind (`support::edits`: formal blocks, bodies, helpers,
//! types, decisions, `soil.toml`, files added, renamed and deleted, a module
//! renamed, reference data, hand-edited locks), and after each edit
//! `status --json` through the daemon — asked immediately after the write and
//! again after a pause — must equal `status --json --no-daemon`; every few
//! steps `status --verify` (a fresh database, every trusted suite re-run)
//! must agree too. The daemon answers ahead of requests and holds what it
//! joined between them; this is the test that makes that safe. Now and then
//! the commands status prescribes run through the daemon, so its own writes
//! are part of the walk. A failure prints the seed and the steps.
//!
//! `TRELLIS_DAEMON_AGREES_SEED` and `TRELLIS_DAEMON_AGREES_STEPS` walk
//! further (a few hundred steps take some minutes).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::time::Duration;

use serde_json::Value;
use support::Root;
use support::edits::{apply, catalog, prepared_root, seed_and_steps};
use trellis_verify::splitmix::SplitMix64;

/// `status --json` as data, whatever its exit code (problems exit 1).
fn status(root: &Root, daemon: bool) -> Value {
    let args: &[&str] = match daemon {
        true => &["status", "--json"],
        false => &["--no-daemon", "status", "--json"],
    };
    root.run(args).json()
}

/// Runs the `trellis …` commands the rows prescribe, through the daemon
/// (an agent's `trellis lower` is left out: it needs a provider).
fn follow_prescriptions(root: &Root, log: &mut Vec<String>) {
    let status = status(root, true);
    let mut commands: Vec<String> = (status["definitions"].as_array().into_iter().flatten())
        .filter_map(|row| row["fix"].as_str())
        .flat_map(|fix| fix.split(" && ").map(str::to_owned).collect::<Vec<_>>())
        .filter(|command| command.starts_with("trellis ") && !command.starts_with("trellis lower "))
        .collect();
    commands.dedup();
    for command in commands {
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        let run = root.run(&args);
        log.push(format!("  $ {command} → exit {:?}", run.code));
    }
}

fn walk(seed: u64, steps: usize, verify_every: usize) {
    let (seed, steps) = seed_and_steps("TRELLIS_DAEMON_AGREES", seed, steps);
    let root = prepared_root().start_daemon();
    let edits = catalog(true);
    let mut random = SplitMix64::new(seed);
    let mut log = Vec::new();
    let fail = |what: &str, daemon: &Value, alone: &Value, log: &[String]| -> ! {
        panic!(
            "seed {seed}: {what}\n--- daemon\n{daemon:#}\n--- no daemon\n{alone:#}\nsteps:\n{}",
            log.join("\n")
        )
    };
    for step in 0..steps {
        let edit = random.pick(&edits).expect("a non-empty catalog");
        log.push(format!("step {step}: {}", apply(&root, edit)));
        if random.chance(1, 4) {
            follow_prescriptions(&root, &mut log);
        }
        // Asked at once: the write just finished.
        let immediate = status(&root, true);
        let alone = status(&root, false);
        if immediate != alone {
            fail(
                "the daemon, asked at once, differs",
                &immediate,
                &alone,
                &log,
            );
        }
        std::thread::sleep(Duration::from_millis(100));
        let later = status(&root, true);
        if later != alone {
            fail(
                "the daemon, asked after a pause, differs",
                &later,
                &alone,
                &log,
            );
        }
        if (step + 1) % verify_every == 0 || step + 1 == steps {
            let verify = root.run(&["status", "--verify", "--json"]).json();
            let disagreements = verify["disagreements"].as_array().map_or(0, Vec::len);
            let verified = support::rows_by_name(&verify);
            if disagreements > 0 || verified != support::rows_by_name(&alone) {
                fail("status --verify disagrees", &verify, &alone, &log);
            }
            log.push(format!("  verified after step {step}"));
        }
    }
}

#[test]
fn the_daemon_equals_no_daemon_seed_1() {
    walk(1, 40, 10);
}

#[test]
fn the_daemon_equals_no_daemon_seed_2() {
    walk(2, 40, 10);
}
