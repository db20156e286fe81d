//! The randomized soundness test of `status`: random sequences of edits drawn from
//! the catalog of `support::edits`, which covers every kind of input a status depends on — bodies, private
//! helpers, clauses, properties, signatures, types, exports, decision entries, tags,
//! cram transcripts, Python references, hand-edited locks, added and removed files
//! — each followed (most of the time) by the commands `status` prescribes. After
//! every step the daemon's memoized status must equal the from-scratch answer of
//! `status --verify` (a fresh database, every trusted suite re-run).
//!
//! Seeds are fixed so CI is reproducible; a failure prints the seed and the steps
//! taken. `TRELLIS_SOUNDNESS_SEED` and `TRELLIS_SOUNDNESS_STEPS` explore further.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use support::{Root, edits};
use trellis_verify::splitmix::SplitMix64;

/// The catalog's root (`support::edits`), with a daemon whose memoized status
/// the walk checks.
fn prepared_root() -> Root {
    edits::prepared_root().start_daemon()
}

fn walk(seed: u64, steps: usize) {
    let (seed, steps) = edits::seed_and_steps("TRELLIS_SOUNDNESS", seed, steps);
    let root = prepared_root();
    let catalog = edits::catalog(false);
    let mut random = SplitMix64::new(seed);
    let mut log = Vec::new();
    for step in 0..steps {
        let edit = random.pick(&catalog).expect("a non-empty catalog");
        log.push(format!("step {step}: {}", edits::apply(&root, edit)));
        if random.chance(2, 3) {
            edits::follow_prescriptions(&root, &mut log);
        }
        let verify = root.run(&["status", "--verify"]);
        assert!(
            verify.code == Some(0),
            "status disagrees with a fresh recomputation after step {step} (seed {seed}):\n{}\n{}\nsteps:\n{}",
            verify.stdout,
            verify.stderr,
            log.join("\n")
        );
    }
}

#[test]
fn memoized_status_equals_a_fresh_recomputation_seed_1() {
    walk(1, 40);
}

#[test]
fn memoized_status_equals_a_fresh_recomputation_seed_2() {
    walk(2, 40);
}

#[test]
fn memoized_status_equals_a_fresh_recomputation_seed_3() {
    walk(3, 40);
}

#[test]
fn memoized_status_equals_a_fresh_recomputation_seed_4() {
    walk(4, 40);
}

#[test]
fn memoized_status_equals_a_fresh_recomputation_seed_5() {
    walk(5, 40);
}
