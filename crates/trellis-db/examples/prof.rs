#![allow(clippy::disallowed_methods)]
use std::collections::BTreeMap;
use std::time::Instant;
use trellis_db::{Change, RootDatabase, RootJoins};

fn walk(dir: &std::path::Path, prefix: &str, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let name = e.file_name().into_string().unwrap();
        if name.starts_with('.') {
            continue;
        }
        let p = format!("{prefix}{name}");
        if e.path().is_dir() {
            walk(&e.path(), &format!("{p}/"), out);
        } else if [".tr", ".soil", ".lock", "soil.toml"]
            .iter()
            .any(|x| name.ends_with(x))
        {
            out.push((p, std::fs::read_to_string(e.path()).unwrap()));
        }
    }
}

fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let file = std::env::args().nth(2).unwrap();
    let reps: usize = std::env::args()
        .nth(3)
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    let mut files = Vec::new();
    walk(std::path::Path::new(&dir), "", &mut files);
    let mut db = if std::env::var_os("LOG").is_some() {
        RootDatabase::with_query_log()
    } else {
        RootDatabase::default()
    };
    let mut joins = RootJoins::default();
    let mut change = Change::default();
    for (p, t) in &files {
        change.set_root_file(p.clone(), t.clone());
    }
    let t = Instant::now();
    joins.invalidate(&db, &change);
    change.apply(&mut db);
    let _ = joins.check(&db);
    let _ = joins.status(&db).len();
    eprintln!("cold {:?}", t.elapsed());
    let original = files.iter().find(|(p, _)| *p == file).unwrap().1.clone();
    edits(&mut db, &mut joins, &file, &original, reps);
}

#[inline(never)]
fn edits(db: &mut RootDatabase, joins: &mut RootJoins, file: &str, original: &str, reps: usize) {
    for i in 0..reps {
        let mut change = Change::default();
        let text = if i % 2 == 0 {
            original.replacen("let base = x *", "let base = 1 + x *", 1)
        } else {
            original.to_owned()
        };
        change.set_file(file, text);
        db.query_log().start();
        let t = Instant::now();
        joins.invalidate(db, &change);
        change.apply(db);
        let t0 = t.elapsed();
        let _ = trellis_db::root_index(db, trellis_db::Workspace::get(db));
        let ta = t.elapsed();
        let _ = trellis_db::env_diagnostics(db).len();
        let tb = t.elapsed();
        eprintln!("  root_index {:?} env {:?}", ta - t0, tb - ta);
        let t1 = t.elapsed();
        if std::env::var_os("NOCHECK").is_none() {
            let _ = joins.check(db);
        }
        let t2 = t.elapsed();
        let _ = joins.status(db).len();
        let t3 = t.elapsed();
        let log = db.query_log().take();
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for line in &log {
            *counts
                .entry(line.split('(').next().unwrap().to_owned())
                .or_default() += 1;
        }
        let mut counts: Vec<_> = counts.into_iter().collect();
        counts.sort_by(|a, b| b.1.cmp(&a.1));
        eprintln!(
            "edit {i}: apply {t1:?} check {:?} status {:?}; {} executions: {:?}",
            t2 - t1,
            t3 - t2,
            log.len(),
            &counts[..counts.len().min(14)]
        );
    }
}
