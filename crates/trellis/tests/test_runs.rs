//! `trellis test` over the whole examples root: every suite green, results written
//! into the locks, and a second run executes no suite at all (results are keyed by
//! soil_hash, test_hash, oracle hashes and toolchain) and leaves every lock byte for
//! byte as it was — the same bytes as the checked-in locks.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use support::{Root, workspace};
use trellis_lock::{Lock, Status};

/// Every `.lock` under `dir` (soil.lock included) by relative path.
fn locks(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(dir.to_owned(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let name = entry.file_name().into_string().expect("UTF-8 name");
            if entry.path().is_dir() {
                if !name.starts_with('.') {
                    stack.push((entry.path(), format!("{prefix}{name}/")));
                }
            } else if name.ends_with(".lock") {
                out.insert(
                    format!("{prefix}{name}"),
                    std::fs::read_to_string(entry.path()).expect("read lock"),
                );
            }
        }
    }
    out
}

/// The `ran N suites (F failing); U already up to date` line's numbers.
fn summary(stdout: &str) -> (usize, usize, usize) {
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with("ran "))
        .expect("a summary line");
    let numbers: Vec<usize> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .map(|w| w.parse().expect("number"))
        .collect();
    (numbers[0], numbers[1], numbers[2])
}

#[test]
fn the_examples_test_green_and_a_second_run_does_no_work() {
    let root = Root::examples();
    // Forget every recorded result so the first run does all the work.
    for (relative, text) in locks(&root.root) {
        if relative == "soil.lock" {
            continue;
        }
        if let Ok(Lock::Function(mut lock)) = trellis_lock::read_lock(&text) {
            lock.tests.clear();
            lock.oracles.clear();
            std::fs::write(
                root.path(&relative),
                trellis_lock::write_lock(&Lock::Function(lock)),
            )
            .expect("write");
        }
    }
    let first = root.run(&["--no-daemon", "test"]).ok();
    let (ran, failing, _) = summary(&first.stdout);
    assert_eq!((ran, failing), (19, 0), "{}", first.stdout);
    let after_first = locks(&root.root);

    let second = root.run(&["--no-daemon", "test"]).ok();
    assert_eq!(summary(&second.stdout), (0, 0, 19), "{}", second.stdout);
    assert_eq!(
        locks(&root.root),
        after_first,
        "a second run rewrote a lock"
    );
    assert_eq!(
        after_first,
        locks(&workspace().join("examples")),
        "the checked-in locks are what a run writes"
    );

    let statuses = root.statuses(false);
    for (name, status) in &statuses {
        let expected = match name.as_str() {
            "csvstats::mean" => "not-lowered",
            "inventory::reorder_plan" => "partial",
            _ => "green",
        };
        assert_eq!(status, expected, "{name}");
    }
}

/// The examples' `read_file` transcript runs against this very `trellis` binary
/// (the suite's tool directory is the running executable's): both `cram` rows
/// are executed, not assumed, and pass.
#[test]
fn read_file_cram_is_green_with_the_real_binary() {
    let root = Root::examples();
    let relative = "csvstats/read_file.lock";
    let Ok(Lock::Function(mut lock)) = trellis_lock::read_lock(&root.read(relative)) else {
        panic!("{relative} is a function lock");
    };
    lock.tests.clear();
    lock.oracles.clear();
    root.write(relative, &trellis_lock::write_lock(&Lock::Function(lock)));

    let run = root
        .run(&["--no-daemon", "test", "csvstats::read_file"])
        .ok();
    assert_eq!(summary(&run.stdout), (1, 0, 0), "{}", run.stdout);
    let Ok(Lock::Function(lock)) = trellis_lock::read_lock(&root.read(relative)) else {
        panic!("{relative} is a function lock");
    };
    let cram: Vec<_> = lock
        .tests
        .iter()
        .filter(|row| row.tier == trellis_lock::Tier::Cram)
        .map(|row| (row.name.as_str(), row.result))
        .collect();
    assert_eq!(
        cram,
        [
            ("summarise#1", trellis_lock::TestResult::Pass),
            ("summarise#2", trellis_lock::TestResult::Pass)
        ],
        "{}",
        run.stdout
    );
}

/// The benchmarks' synthetic root is a real project: every expect case states
/// its body's true result, so adopting and testing it leaves every definition
/// green (edit_bench measures edits of a green root, where an edit moves rows).
#[test]
fn the_synthetic_hub_root_adopted_and_tested_is_green() {
    let root = Root::from_files(&trellis_db::synthetic::hub_root(240));
    root.run(&["--no-daemon", "adopt"]).ok();
    let run = root.run(&["--no-daemon", "test"]).ok();
    assert_eq!(summary(&run.stdout), (240, 0, 0), "{run:?}");
    let not_green: Vec<(String, String)> = (root.statuses(false).into_iter())
        .filter(|(_, status)| status != "green")
        .collect();
    assert_eq!(not_green, Vec::<(String, String)>::new());
    assert_eq!(lazy_and_gathered_ladders(&root.root), BTreeMap::new());

    // A host's joins hold the green rows before the edits.
    let refresh = trellis_service::loader::RootLoader::new(root.root.clone()).refresh();
    let mut db = trellis_db::RootDatabase::default();
    let mut joins = trellis_db::RootJoins::default();
    joins.invalidate(&db, &refresh.change);
    refresh.change.apply(&mut db);
    joins.status(&db);

    // The hubs' bodies edited: their dependents stop at callee-changed, where
    // the lazy ladder never asks for a suite key; both ladders still agree.
    let mut edits = trellis_db::Change::default();
    for hub in 0..trellis_db::synthetic::HUBS {
        let path = trellis_db::synthetic::hub_soil_path(hub);
        let hub = root.root.join(&path);
        let text = std::fs::read_to_string(&hub).expect("read hub");
        let text = text.replacen("let base = x *", "let base = 1 + x *", 1);
        std::fs::write(&hub, &text).expect("edit hub");
        edits.set_root_file(path, text);
    }
    let moved = lazy_and_gathered_ladders(&root.root);
    assert!(
        moved.get("callee-changed").is_some_and(|&count| count > 1),
        "{moved:?}"
    );

    // The edits are sealed (design §7.8): the joins climb the dependents'
    // ladders from their hashes alone, and give salsa's rows.
    joins.invalidate(&db, &edits);
    edits.apply(&mut db);
    assert!(joins.rehashed_rows(&db) > 1);
    let joined: Vec<_> = joins.status(&db).into_iter().cloned().collect();
    assert_eq!(joined, *trellis_db::root_status(&db));
    let callee_changed = (joined.iter()).filter(|row| row.status == "callee-changed");
    assert_eq!(callee_changed.count(), moved["callee-changed"]);

    // The hubs' bodies put back one at a time: each time the joins climb the
    // moved rows' ladders again past their check rungs (design §7.13), and a
    // row whose recorded callees all hash as recorded again climbs on to
    // green, as salsa's does.
    let mut still_moved = Vec::new();
    for hub in 0..trellis_db::synthetic::HUBS {
        let path = trellis_db::synthetic::hub_soil_path(hub);
        let text = std::fs::read_to_string(root.root.join(&path)).expect("read hub");
        let mut back = trellis_db::Change::default();
        back.set_root_file(
            path,
            text.replacen("let base = 1 + x *", "let base = x *", 1),
        );
        joins.invalidate(&db, &back);
        back.apply(&mut db);
        let joined: Vec<_> = joins.status(&db).into_iter().cloned().collect();
        assert_eq!(joined, *trellis_db::root_status(&db), "hub {hub} put back");
        still_moved.push((joined.iter()).filter(|row| row.status != "green").count());
    }
    assert_eq!(still_moved.last(), Some(&0), "{still_moved:?}");
    assert!(
        still_moved.windows(2).any(|pair| pair[1] < pair[0]),
        "{still_moved:?}"
    );
}

/// The lazy ladder reads a direct callee's edge from the references and a
/// private helper's from the gathered edges; on the examples (helpers, calls
/// across modules) both ladders agree, as checked in and once a helper's body
/// moved under its callers.
#[test]
fn both_ladders_agree_on_the_examples_and_after_a_helper_s_edit() {
    let root = Root::examples();
    let before = lazy_and_gathered_ladders(&root.root);
    assert_eq!(before.get("callee-changed"), None, "{before:?}");
    root.edit("csvstats/_private.soil", "    sum / 2.0", "    sum * 0.5");
    let after = lazy_and_gathered_ladders(&root.root);
    assert!(
        after.get("callee-changed").is_some_and(|&count| count >= 1),
        "{after:?}"
    );
}

/// How many function rows stand at each rung, after asserting that the status
/// the database derives lazily ([`trellis_db::definition_status`]) is the one
/// the ladder gives over every hash gathered at once (`current_hashes`).
fn lazy_and_gathered_ladders(dir: &Path) -> BTreeMap<String, usize> {
    use trellis_db::{ItemKind, RootDatabase, all_code_items, current_hashes, definition_status};
    let refresh = trellis_service::loader::RootLoader::new(dir.to_owned()).refresh();
    assert!(refresh.problems.is_empty(), "{:?}", refresh.problems);
    let mut db = RootDatabase::default();
    refresh.change.apply(&mut db);
    let mut rungs = BTreeMap::new();
    for &item in all_code_items(&db) {
        if item.kind(&db) != ItemKind::Function {
            continue;
        }
        let lock = trellis_db::lock_state(&db, item.module(&db), item.name(&db));
        let lock = match lock {
            trellis_db::LockState::Present(Lock::Function(lock)) => Some(lock),
            _ => None,
        };
        let gathered =
            current_hashes(&db, item).map(|current| trellis_lock::status(&current, lock));
        let lazy = definition_status(&db, item).as_ref().ok();
        assert_eq!(lazy, gathered.as_ref(), "{}", item.qualified(&db));
        if let Some(status) = lazy.filter(|status| !matches!(status, Status::Green)) {
            *rungs.entry(status.name().to_owned()).or_default() += 1;
        }
    }
    rungs
}

/// Adding modules of one's own — a type and a function over it each — re-runs
/// only their suites: no suite of the root that cannot observe them runs again
/// (the suite key used to hash the whole type environment, so each new module
/// re-ran every suite). Counted by the `ran` line.
#[test]
fn adding_modules_re_runs_only_their_own_suites() {
    let root = Root::examples();
    assert_eq!(
        summary(&root.run(&["--no-daemon", "test"]).ok().stdout),
        (0, 0, 19)
    );
    for (module, ty, field) in [("rle", "Run", "count"), ("calc", "Expr", "value")] {
        let files = [
            (
                format!("{module}/_module.tr"),
                format!("---\nname: {module}\n---\n\n# {module}\n\n```exports\n{ty}, size\n```\n"),
            ),
            (
                format!("{module}/{ty}.tr"),
                format!(
                    "---\nname: {ty}\n---\n\n# {ty}\n\n```soil-type\ntype {ty} = {{ {field} : I64 }}\n```\n"
                ),
            ),
            (
                format!("{module}/size.tr"),
                format!(
                    "---\nname: size\n---\n\n# size\n\n```soil-sig\nsize : (x : {ty}) -> I64\n```\n\n```test basics\nsize({{\"{field}\": 2}}) -> 2\n```\n"
                ),
            ),
            (
                format!("{module}/size.soil"),
                format!("size x = x.{field}\n"),
            ),
        ];
        std::fs::create_dir_all(root.path(module)).expect("module dir");
        for (path, text) in files {
            root.write(&path, &text);
        }
        root.run(&["--no-daemon", "adopt"]).ok();
        let run = root.run(&["--no-daemon", "test"]).ok();
        let (ran, failing, _) = summary(&run.stdout);
        assert_eq!((ran, failing), (1, 0), "{}", run.stdout);
        assert!(
            run.stdout.contains(&format!("{module}::size: ")),
            "{}",
            run.stdout
        );
    }
}
