//! Benchmark: every hash, the environment and every program of a synthetic root,
//! cold and then after one prose edit and one leaf-body edit, at N = 200 and
//! N = 2,000 definitions, read as root-wide consumers read them: one hash table and
//! one program table per module (design §7.3). Prints warm/cold ratios and how many
//! queries salsa re-executed (from its event log): work should follow the edit, not
//! the root.
//!
//! Run: `cargo run --release -p trellis-db --example db_bench`

#![allow(clippy::disallowed_methods, reason = "benches use real files")]

use std::time::{Duration, Instant};

use trellis_db::{
    Change, Item, ItemKind, Module, RootDatabase, Workspace, env_json, module_hashes,
    module_programs, root_index, root_status, suite_key,
};

/// Every hash and program of the root, read as whole-root consumers read them:
/// one table of each per module (design §7.3), then the environment.
fn compute_everything(db: &RootDatabase) -> usize {
    let mut work = 0;
    let index = root_index(db, Workspace::get(db));
    for name in index.modules.keys() {
        let module = Module::new(db, name.clone());
        work += module_hashes(db, module).len();
        work += module_programs(db, module)
            .iter()
            .map(|(_, program)| program.len())
            .sum::<usize>();
    }
    work + env_json(db).len()
}

struct Measure {
    cold: Duration,
    prose: (Duration, usize),
    leaf: (Duration, usize),
    /// The first prose and leaf edits, which demote their files (design §7.1).
    first: (Duration, Duration),
}

/// Edit rounds per file; the first demotes the file and is reported apart.
const ROUNDS: usize = 10;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// A database holding `files` (the synthetic root), with or without a query log.
fn load_root(files: &[(String, String)], logged: bool) -> RootDatabase {
    let mut db = if logged {
        RootDatabase::with_query_log()
    } else {
        RootDatabase::default()
    };
    let mut change = Change::default();
    for (path, text) in files {
        change.set_root_file(path.clone(), text.clone());
    }
    change.apply(&mut db);
    db
}

/// The text of `path` in the synthetic root.
fn text_of(files: &[(String, String)], path: &str) -> String {
    files
        .iter()
        .find(|(p, _)| p == path)
        .map(|(_, t)| t.clone())
        .expect("the synthetic root has the file")
}

/// Round `round`'s prose edit of a spec.
fn prose_edit(spec: &str, round: usize) -> String {
    spec.replacen(
        "A generated definition",
        &format!("A generated definition, revision {round}."),
        1,
    )
}

/// Round `round`'s edit of a leaf's body.
fn leaf_edit(soil: &str, round: usize) -> String {
    soil.replacen(" + ", &format!(" + {round} + "), 1)
}

/// Profiling aid: one root of `WARM_N` definitions (2,000 unless set), `rounds`
/// prose edits (leaf-body edits with `WARM_LEAF` set), each followed by a pass.
fn profile_warm_passes(rounds: usize) {
    let n: usize = std::env::var("WARM_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let files = trellis_db::synthetic::synthetic_root(n);
    let mut db = load_root(&files, false);
    compute_everything(&db);
    let leaf = std::env::var_os("WARM_LEAF").is_some();
    let (path, edit): (String, fn(&str, usize) -> String) = if leaf {
        (trellis_db::synthetic::soil_path(0), leaf_edit)
    } else {
        (trellis_db::synthetic::spec_path(20), prose_edit)
    };
    let text = text_of(&files, &path);
    let started = Instant::now();
    for round in 0..rounds {
        let mut change = Change::default();
        change.set_file(path.clone(), edit(&text, round));
        change.apply(&mut db);
        compute_everything(&db);
    }
    println!("{:?} per warm pass", started.elapsed() / rounds as u32);
}

fn measure(definitions: usize, logged: bool) -> Measure {
    let files = trellis_db::synthetic::synthetic_root(definitions);
    let load = || load_root(&files, logged);
    let mut colds = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let db = load();
        compute_everything(&db);
        colds.push(started.elapsed());
    }
    let mut db = load();
    compute_everything(&db);
    // A middle definition's spec (prose edit) and a leaf's body (leaf-body edit).
    let spec_path = trellis_db::synthetic::spec_path(20);
    let soil_path = trellis_db::synthetic::soil_path(0);
    let spec_text = text_of(&files, &spec_path);
    let soil_text = text_of(&files, &soil_path);
    let edit = |db: &mut RootDatabase, path: &str, text: String| {
        let mut change = Change::default();
        change.set_file(path, text);
        change.apply(db);
        db.query_log().start();
        let started = Instant::now();
        compute_everything(db);
        let elapsed = started.elapsed();
        (elapsed, db.query_log().take().len())
    };
    let mut prose = Vec::new();
    let mut leaf = Vec::new();
    let mut prose_count = 0;
    let mut leaf_count = 0;
    for round in 0..ROUNDS {
        let (t, n) = edit(&mut db, &spec_path, prose_edit(&spec_text, round));
        prose.push(t);
        prose_count = n;
        let (t, n) = edit(&mut db, &soil_path, leaf_edit(&soil_text, round));
        leaf.push(t);
        leaf_count = n;
    }
    let first = (prose.remove(0), leaf.remove(0));
    Measure {
        cold: median(colds),
        prose: (median(prose), prose_count),
        leaf: (median(leaf), leaf_count),
        first,
    }
}

/// Every function's suite key (lock-schema §5.4), as `status` and `test` read them.
fn every_suite_key(db: &RootDatabase) -> usize {
    let index = root_index(db, Workspace::get(db));
    let mut keys = 0;
    for (module, files) in &index.modules {
        for name in files.specs.keys() {
            if ItemKind::of(name) == ItemKind::Function {
                suite_key(db, Item::new(db, module.clone(), name.clone()));
                keys += 1;
            }
        }
    }
    keys
}

/// The cost of the suite keys: all of them cold (after every hash is computed),
/// after a leaf-body edit, and the whole status (which reads them) both ways.
fn measure_keys(definitions: usize) {
    let files = trellis_db::synthetic::synthetic_root(definitions);
    let soil_path = trellis_db::synthetic::soil_path(0);
    let soil_text = text_of(&files, &soil_path);
    let mut cold_keys = Vec::new();
    let mut first_keys = Vec::new();
    let mut first_status = Vec::new();
    let mut warm_keys = Vec::new();
    let mut cold_status = Vec::new();
    let mut warm_status = Vec::new();
    let mut keys = 0;
    for round in 0..3 {
        let mut db = load_root(&files, false);
        compute_everything(&db);
        let started = Instant::now();
        keys = every_suite_key(&db);
        cold_keys.push(started.elapsed());
        let started = Instant::now();
        root_status(&db);
        cold_status.push(started.elapsed());
        // Two edits of the leaf: the first demotes the file (design §7.1).
        for edit in 0..2 {
            let mut change = Change::default();
            change.set_file(&soil_path, leaf_edit(&soil_text, round * 2 + edit));
            change.apply(&mut db);
            let started = Instant::now();
            every_suite_key(&db);
            let keyed = started.elapsed();
            root_status(&db);
            if edit == 0 {
                first_keys.push(keyed);
                first_status.push(started.elapsed() - keyed);
            } else {
                warm_keys.push(keyed);
                warm_status.push(started.elapsed() - keyed);
            }
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{definitions:>6}  {keys:>5} keys  cold {:>8.2}ms  after a leaf's first edit {:>7.3}ms, its next {:>7.3}ms  |  status cold {:>8.2}ms  after the first edit {:>7.3}ms, the next {:>7.3}ms",
        ms(median(cold_keys)),
        ms(median(first_keys)),
        ms(median(warm_keys)),
        ms(median(cold_status)),
        ms(median(first_status)),
        ms(median(warm_status)),
    );
}

fn main() {
    if std::env::var_os("KEYS_ONLY").is_some() {
        for n in [200, 2_000] {
            measure_keys(n);
        }
        return;
    }
    if let Ok(rounds) = std::env::var("WARM_ONLY") {
        profile_warm_passes(rounds.parse().unwrap_or(100));
        return;
    }
    println!("trellis-db: every hash, env and program of a synthetic root (median of runs)");
    println!(
        "{:>6}  {:>10}  {:>22}  {:>22}  {:>18}",
        "N", "cold", "after prose edit", "after leaf-body edit", "first edits"
    );
    let mut executed = Vec::new();
    for n in [200, 2_000] {
        // Time without salsa's event callback (as the daemon runs); count with it.
        let mut m = measure(n, false);
        let counted = measure(n, true);
        m.prose.1 = counted.prose.1;
        m.leaf.1 = counted.leaf.1;
        let ratio = |d: Duration| 100.0 * d.as_secs_f64() / m.cold.as_secs_f64();
        println!(
            "{n:>6}  {:>8.2}ms  {:>7.3}ms {:>5.2}% {:>3}q  {:>7.3}ms {:>5.2}% {:>3}q  {:>7.2}ms {:>7.2}ms",
            m.cold.as_secs_f64() * 1e3,
            m.prose.0.as_secs_f64() * 1e3,
            ratio(m.prose.0),
            m.prose.1,
            m.leaf.0.as_secs_f64() * 1e3,
            ratio(m.leaf.0),
            m.leaf.1,
            m.first.0.as_secs_f64() * 1e3,
            m.first.1.as_secs_f64() * 1e3,
        );
        executed.push((m.prose.1, m.leaf.1));
    }
    println!("q = queries re-executed (salsa WillExecute events); % = warm time / cold time");
    println!(
        "first edits = the first prose and leaf edit of a file, which demote it (design §7.1)"
    );
    let same = executed.windows(2).all(|pair| pair[0] == pair[1]);
    println!(
        "same edit, same re-executed queries at N=200 and N=2000: {}",
        if same { "yes" } else { "NO" }
    );
    println!();
    println!("suite keys (lock-schema §5.4): every function's key, after every hash is computed");
    for n in [200, 2_000] {
        measure_keys(n);
    }
}
