//! Every command `status` prescribes works (issue 40): over seeded random
//! sequences of edits of every kind (`support::edits`), each row that needs
//! work is either fixed by running exactly the command its `fix` names — which
//! must not be refused, and must move the row up the ladder (or settle it) —
//! or its `fix` names the human decision it needs (fix the spec, fix the Soil,
//! or a lowering by the agent). A failure prints the seed and the steps.
//!
//! `TRELLIS_PRESCRIPTIONS_SEED` and `TRELLIS_PRESCRIPTIONS_STEPS` walk further.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use serde_json::Value;
use support::Root;
use support::edits::{apply, catalog, prepared_root, seed_and_steps};
use trellis_verify::splitmix::SplitMix64;

/// Every status a row can have, from the lowest rung to settled: a fix must
/// move its row to a later one. Functions follow lock-schema §8.6; entries
/// (types, modules, the project) their own rungs, placed alongside.
const LADDER: &[&str] = &[
    "lock-unreadable",
    "spec-invalid",
    "not-lowered",
    "not-stamped",
    "spec-changed",
    "check-failing",
    "partial",
    "callee-changed",
    "tests-stale",
    "failing",
    "decision-flagged",
    "review-suggested",
    "accepted",
    "green",
];

fn rung(status: &str) -> usize {
    LADDER
        .iter()
        .position(|&s| s == status)
        .unwrap_or_else(|| panic!("`{status}` is on no rung"))
}

/// A fix that needs a person (or the lowering agent), not a command to run.
fn human_decision(fix: &str) -> bool {
    fix.starts_with("fix the spec")
        || fix.starts_with("fix the Soil")
        || fix.starts_with("trellis lower ")
}

fn rows(root: &Root) -> Vec<Value> {
    let run = root.run(&["--no-daemon", "status", "--json"]);
    run.json()["definitions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn row_named(root: &Root, name: &str) -> Option<Value> {
    rows(root).into_iter().find(|row| row["name"] == name)
}

/// Follows the prescriptions until every row is settled or waits for a
/// person; each command run must succeed and move its row up.
fn follow(root: &Root, seed: u64, log: &mut Vec<String>) {
    // Bounded: each round moves one row up at least one rung.
    for _ in 0..LADDER.len() * 40 {
        let Some(row) = rows(root)
            .into_iter()
            .find(|row| row["fix"].as_str().is_some_and(|fix| !human_decision(fix)))
        else {
            return;
        };
        let name = row["name"].as_str().expect("name").to_owned();
        let before = row["status"].as_str().expect("status").to_owned();
        let fix = row["fix"].as_str().expect("fix").to_owned();
        let fail = |what: String, log: &[String]| -> ! {
            panic!(
                "seed {seed}: {what}\nrow: {row}\nsteps:\n{}",
                log.join("\n")
            )
        };
        for command in fix.split(" && ") {
            let args: Vec<&str> = command.split_whitespace().collect();
            if args.first() != Some(&"trellis") {
                fail(
                    format!("`{fix}` is neither a command nor a person's decision"),
                    log,
                );
            }
            let mut all = vec!["--no-daemon"];
            all.extend_from_slice(&args[1..]);
            let run = root.run(&all);
            log.push(format!(
                "  {name} {before}: $ {command} → exit {:?}",
                run.code
            ));
            // `test` exits 1 when a suite it ran fails; that is a result,
            // not a refusal. Anything else must succeed.
            let ran_a_suite = args.get(1) == Some(&"test") && run.stdout.contains("ran 1 suite");
            if run.code != Some(0) && !ran_a_suite {
                fail(
                    format!(
                        "`{command}` (the fix of {name}, {before}) was refused:\n{}{}",
                        run.stdout, run.stderr
                    ),
                    log,
                );
            }
        }
        let after = row_named(root, &name);
        let after = after
            .as_ref()
            .and_then(|row| row["status"].as_str())
            .unwrap_or("green");
        if rung(after) <= rung(&before) {
            fail(
                format!("`{fix}` left {name} at {after} (it was {before})"),
                log,
            );
        }
        log.push(format!("  {name}: {before} → {after}"));
    }
    panic!(
        "seed {seed}: the prescriptions never settled\n{}",
        log.join("\n")
    );
}

fn walk(seed: u64, steps: usize) {
    let (seed, steps) = seed_and_steps("TRELLIS_PRESCRIPTIONS", seed, steps);
    let root = prepared_root();
    let edits = catalog(false);
    let mut random = SplitMix64::new(seed);
    let mut log = Vec::new();
    follow(&root, seed, &mut log);
    for step in 0..steps {
        // One edit or two before the prescriptions are followed.
        for _ in 0..=random.below(2) {
            let edit = random.pick(&edits).expect("a non-empty catalog");
            log.push(format!("step {step}: {}", apply(&root, edit)));
        }
        follow(&root, seed, &mut log);
    }
}

#[test]
fn every_prescription_works_seed_1() {
    walk(1, 10);
}

#[test]
fn every_prescription_works_seed_2() {
    walk(2, 10);
}
