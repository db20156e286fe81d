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
use support::edits::{self, apply, catalog, prepared_root, seed_and_steps};
use trellis_verify::splitmix::SplitMix64;

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
            edits::follow_prescriptions(&root, &mut log);
        }
        // Asked at once: the write just finished.
        let immediate = edits::status_data(&root, true);
        let alone = edits::status_data(&root, false);
        if immediate != alone {
            fail(
                "the daemon, asked at once, differs",
                &immediate,
                &alone,
                &log,
            );
        }
        std::thread::sleep(Duration::from_millis(100));
        let later = edits::status_data(&root, true);
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
