//! The example root's locks are what trellis writes: every spec has a lock (impl
//! plan §9.10) — `csvstats/mean.tr`, the not-yet-lowered exemplar, a
//! `lowering: null` one — and the tracked `soil.lock` is exactly the merge of
//! them (lock-schema §1.1 says why the example root tracks it).
//! `UPDATE_EXPECT=1` rewrites both files, like the expect-test goldens.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::path::Path;

use support::workspace;
use trellis_db::{ItemKind, RootDatabase, Workspace, root_index, spec_record};
use trellis_lock::{DefinitionLock, Lock, Toolchain};
use trellis_service::loader::RootLoader;

fn update() -> bool {
    std::env::var_os("UPDATE_EXPECT").is_some()
}

#[track_caller]
fn assert_file(path: &Path, expected: &str) {
    if update() {
        std::fs::write(path, expected).expect("bless");
        return;
    }
    let actual = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        actual == expected,
        "{} is not what trellis writes (UPDATE_EXPECT=1 to bless):\n--- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}

#[test]
fn every_example_spec_has_a_lock_and_mean_is_not_lowered() {
    let examples = workspace().join("examples");
    let refresh = RootLoader::new(examples.clone()).refresh();
    assert!(refresh.problems.is_empty(), "{:?}", refresh.problems);
    let mut db = RootDatabase::default();
    refresh.change.apply(&mut db);
    let index = root_index(&db, Workspace::get(&db));
    let csvstats = index.module("csvstats").expect("csvstats");
    let mean = Lock::Function(DefinitionLock {
        name: "mean".to_owned(),
        toolchain: Toolchain {
            trellis: trellis_service::identity::VERSION.to_owned(),
            soil0_cli: trellis_service::identity::SOIL0_VERSION.to_owned(),
        },
        spec: spec_record(&db, csvstats.specs["mean"]),
        lowering: None,
        checks: None,
        results_key: None,
        tests: Vec::new(),
        oracles: Vec::new(),
        accepted: false,
    });
    assert!(
        !csvstats.soils.contains_key("mean"),
        "mean is the not-yet-lowered exemplar"
    );
    assert_file(
        &examples.join("csvstats/mean.lock"),
        &trellis_lock::write_lock(&mean),
    );
    if update() {
        return;
    }
    for (module, files) in &index.modules {
        for name in files.specs.keys() {
            assert!(
                files.locks.contains_key(name),
                "{module}/{name}.tr has no lock (kind {:?})",
                ItemKind::of(name)
            );
        }
    }
}

#[test]
fn the_tracked_soil_lock_is_the_merge_of_the_example_locks() {
    let examples = workspace().join("examples");
    let mut locks = Vec::new();
    let mut stack = vec![(examples.clone(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let name = entry.file_name().into_string().expect("UTF-8 name");
            if entry.file_type().expect("type").is_dir() {
                if !name.starts_with('.') {
                    stack.push((entry.path(), format!("{prefix}{name}/")));
                }
            } else if let Some(stem) = name.strip_suffix(".lock")
                && !(prefix.is_empty() && stem == "soil")
            {
                let text = std::fs::read_to_string(entry.path()).expect("read lock");
                let lock = trellis_lock::read_lock(&text).expect("a readable example lock");
                locks.push((format!("{prefix}{stem}"), lock));
            }
        }
    }
    let manifest = trellis_lock::merge(locks, Default::default());
    assert_file(
        &examples.join("soil.lock"),
        &trellis_lock::write_soil_lock(&manifest),
    );
}
