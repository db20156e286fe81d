//! Every checked-in lock reads and writes back byte for byte (lock-schema §1.4).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::path::Path;

fn locks_under(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        // `.trellis/` is Trellis's own state beside a root (its writer lock is
        // a lock file, not a lock); running the README's first command makes it.
        if path.file_name().is_some_and(|n| n == ".trellis") {
            continue;
        }
        if path.is_dir() {
            locks_under(&path, out);
        } else if path.extension().is_some_and(|e| e == "lock") {
            out.push(path);
        }
    }
}

#[test]
fn every_example_lock_round_trips_byte_for_byte() {
    let mut locks = Vec::new();
    locks_under(&support::workspace().join("examples"), &mut locks);
    locks.sort();
    assert!(
        locks.len() >= 20,
        "expected the example locks, found {}",
        locks.len()
    );
    let mut kinds = std::collections::BTreeSet::new();
    for path in &locks {
        let text = std::fs::read_to_string(path).expect("read lock");
        if path.file_name().is_some_and(|n| n == "soil.lock") {
            let lock = trellis_lock::read_soil_lock(&text)
                .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
            assert_eq!(
                trellis_lock::write_soil_lock(&lock),
                text,
                "{}",
                path.display()
            );
            continue;
        }
        let lock =
            trellis_lock::read_lock(&text).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
        kinds.insert(format!("{:?}", std::mem::discriminant(&lock)));
        assert_eq!(
            trellis_lock::write_lock(&lock),
            text,
            "{} does not round-trip",
            path.display()
        );
    }
    assert_eq!(
        kinds.len(),
        4,
        "function, type, module and project locks are all covered"
    );
}

/// `trellis adopt` over a fresh copy of the examples finds every lock current:
/// the checked-in locks are exactly what the binary would write.
#[test]
fn adopting_the_examples_again_rewrites_no_lock() {
    let root = support::Root::examples_with_daemon();
    let run = root.run(&["adopt"]).ok();
    assert_eq!(run.stdout, "every lock was already up to date\n", "{run:?}");
    let mut locks = Vec::new();
    locks_under(&support::workspace().join("examples"), &mut locks);
    for path in locks {
        let relative = path
            .strip_prefix(support::workspace().join("examples"))
            .expect("under examples");
        let relative = relative.to_str().expect("UTF-8 path");
        assert_eq!(
            root.read(relative),
            support::workspace_file(&format!("examples/{relative}")),
            "{relative}"
        );
    }
}
