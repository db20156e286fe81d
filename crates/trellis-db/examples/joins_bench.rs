//! Benchmark: what the per-module joins (design §7.5) save. Two databases hold
//! the same synthetic root; after each edit one answers the root's `check`
//! and `status` through [`RootJoins`] (as the daemon does), the other through
//! salsa's own root-wide memos (`check_root`, `root_status`), which are right
//! but revalidate every memo of the root after any text edit. Edits alternate
//! between a leaf's body and a spec's prose, and each round times both sides
//! in turn, so the machine's noise falls on both. Prints medians and ratios at
//! N = 2,000 and 20,000 (one thread each side).
//!
//! Run: `cargo run --release -p trellis-db --example joins_bench [N ...]`

#![allow(clippy::disallowed_methods, reason = "benches use real files")]

use std::time::{Duration, Instant};

use trellis_db::{Change, RootDatabase, RootJoins, check_root, root_status};

const ROUNDS: usize = 15;

fn load_root(files: &[(String, String)]) -> RootDatabase {
    let mut db = RootDatabase::default();
    let mut change = Change::default();
    for (path, text) in files {
        change.set_root_file(path.clone(), text.clone());
    }
    change.apply(&mut db);
    db
}

fn text_of(files: &[(String, String)], path: &str) -> String {
    files
        .iter()
        .find(|(p, _)| p == path)
        .map(|(_, t)| t.clone())
        .expect("the synthetic root has the file")
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// Round `round`'s edit: a leaf's body on even rounds, a spec's prose on odd.
fn edit(files: &[(String, String)], round: usize) -> Change {
    let mut change = Change::default();
    if round.is_multiple_of(2) {
        let path = trellis_db::synthetic::soil_path(0);
        let text = text_of(files, &path).replacen(" + ", &format!(" + {round} + "), 1);
        change.set_file(path, text);
    } else {
        let path = trellis_db::synthetic::spec_path(20);
        let text = text_of(files, &path).replacen(
            "A generated definition",
            &format!("A generated definition, revision {round}."),
            1,
        );
        change.set_file(path, text);
    }
    change
}

fn measure(definitions: usize) {
    let files = trellis_db::synthetic::synthetic_root(definitions);
    let mut joined_db = load_root(&files);
    let mut joins = RootJoins::default();
    let mut salsa_db = load_root(&files);
    let agree = |joins: &mut RootJoins, joined_db: &RootDatabase, salsa_db: &RootDatabase| {
        let rows = joins.status(joined_db).len();
        joins.check(joined_db);
        assert_eq!(
            rows,
            root_status(salsa_db).len(),
            "both sides answer the same rows"
        );
        check_root(salsa_db, None);
    };
    agree(&mut joins, &joined_db, &salsa_db);
    let (mut joined, mut whole) = (Vec::new(), Vec::new());
    for round in 0..2 * ROUNDS {
        let started = Instant::now();
        let change = edit(&files, round);
        joins.invalidate(&joined_db, &change);
        change.apply(&mut joined_db);
        joins.check(&joined_db);
        joins.status(&joined_db);
        joined.push(started.elapsed());

        let started = Instant::now();
        edit(&files, round).apply(&mut salsa_db);
        check_root(&salsa_db, None);
        root_status(&salsa_db);
        whole.push(started.elapsed());
    }
    agree(&mut joins, &joined_db, &salsa_db);
    let (joined, whole) = (median(joined), median(whole));
    println!(
        "{definitions:>7}  {:>10.2}  {:>12.2}  {:>6.1}x",
        ms(joined),
        ms(whole),
        whole.as_secs_f64() / joined.as_secs_f64()
    );
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|arg| arg.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![2_000, 20_000]
    } else {
        sizes
    };
    println!(
        "trellis-db: check + status after an edit, joined per module vs salsa's root-wide memos"
    );
    println!(
        "(median of {} edits, leaf bodies and prose alternating)",
        2 * ROUNDS
    );
    println!("      N  joins (ms)  root-wide (ms)   saved");
    for definitions in sizes {
        measure(definitions);
    }
}
