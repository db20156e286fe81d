//! Atomic writes: a crash between the temp write and the rename leaves the old
//! lock intact, a failed write removes its temp file, and concurrent writers of
//! one lock never share a temp file.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod common;

use std::cell::Cell;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use trellis_lock::*;

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "trellis-lock-store-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).expect("create temp dir");
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The real filesystem, except that the process "dies" at one step: every
/// operation from that step on fails, as if the process were gone.
struct CrashingFs {
    crash_at: &'static str,
    crashed: Cell<bool>,
}

impl CrashingFs {
    fn step(&self, name: &str) -> io::Result<()> {
        if self.crashed.get() || name == self.crash_at {
            self.crashed.set(true);
            return Err(io::Error::other(format!("crashed before {name}")));
        }
        Ok(())
    }
}

impl LockFs for CrashingFs {
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        StdFs.read(path)
    }

    fn write_synced(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.step("write")?;
        StdFs.write_synced(path, bytes)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.step("rename")?;
        StdFs.rename(from, to)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.step("sync_dir")?;
        StdFs.sync_dir(dir)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        self.step("remove")?;
        StdFs.remove(path)
    }
}

/// The writer's temp files in `dir`.
fn temps_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .expect("read dir")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(is_temp_name)
        })
        .collect()
}

#[test]
fn save_then_load_round_trips() {
    let dir = TempDir::new();
    let target = dir.0.join("median.lock");
    assert!(load_lock(&StdFs, &target).expect("no lock yet").is_none());
    save_lock(&StdFs, &target, &common::median()).expect("saved");
    let loaded = load_lock(&StdFs, &target).expect("loads").expect("present");
    assert_eq!(loaded, common::median());
    assert!(
        temps_in(&dir.0).is_empty(),
        "the temp file was renamed away"
    );
}

#[test]
fn a_crash_before_the_rename_leaves_the_old_lock_intact() {
    let dir = TempDir::new();
    let target = dir.0.join("median.lock");
    save_lock(&StdFs, &target, &common::mean()).expect("first write");
    let old = std::fs::read(&target).expect("old bytes");

    let crashing = CrashingFs {
        crash_at: "rename",
        crashed: Cell::new(false),
    };
    match save_lock(&crashing, &target, &common::median()) {
        Err(SaveError::Io(_)) => {}
        other => panic!("expected the injected crash, got {other:?}"),
    }
    // The target still holds every old byte; the new text sits in the temp
    // file, which no reader looks at.
    assert_eq!(std::fs::read(&target).expect("target"), old);
    let temps = temps_in(&dir.0);
    assert_eq!(temps.len(), 1, "{temps:?}");
    let temp = temps[0].clone();
    assert_eq!(
        std::fs::read_to_string(&temp).expect("temp left behind"),
        write_lock(&common::median())
    );
    assert_eq!(
        load_lock(&StdFs, &target).expect("loads").expect("present"),
        common::mean()
    );

    // The next write goes through a temp of its own; the crash's leftover is
    // inert (hidden, never read) and the recovery is unaffected by it.
    save_lock(&StdFs, &target, &common::median()).expect("recovery write");
    assert_eq!(temps_in(&dir.0), vec![temp]);
    assert_eq!(
        load_lock(&StdFs, &target).expect("loads").expect("present"),
        common::median()
    );
}

#[test]
fn a_crash_during_the_temp_write_touches_nothing() {
    let dir = TempDir::new();
    let target = dir.0.join("mean.lock");
    save_lock(&StdFs, &target, &common::mean()).expect("first write");
    let old = std::fs::read(&target).expect("old bytes");
    let crashing = CrashingFs {
        crash_at: "write",
        crashed: Cell::new(false),
    };
    assert!(matches!(
        save_lock(&crashing, &target, &common::median()),
        Err(SaveError::Io(_))
    ));
    assert_eq!(std::fs::read(&target).expect("target"), old);
}

#[test]
fn a_lock_breaking_an_invariant_is_never_written() {
    let dir = TempDir::new();
    let target = dir.0.join("mean.lock");
    let Lock::Function(mut mean) = common::mean() else {
        panic!("mean is a function lock")
    };
    mean.accepted = true;
    match save_lock(&StdFs, &target, &Lock::Function(mean)) {
        Err(SaveError::Invariants(diagnostics)) => {
            let codes: Vec<&str> = diagnostics.iter().map(|d| d.code.as_str()).collect();
            assert_eq!(codes, ["lock-invariant-accepted-not-green"]);
            assert_eq!(
                diagnostics[0].file.as_deref(),
                Some(target.to_string_lossy().as_ref())
            );
        }
        other => panic!("expected an invariant refusal, got {other:?}"),
    }
    assert!(!target.exists());
    assert!(temps_in(&dir.0).is_empty());
}

#[test]
fn an_unreadable_lock_on_disk_reports_the_file() {
    let dir = TempDir::new();
    let target = dir.0.join("bad.lock");
    std::fs::write(&target, "{\"lock_format\": 9}").expect("write");
    match load_lock(&StdFs, &target) {
        Err(LoadError::Invalid(diagnostics)) => {
            assert_eq!(diagnostics[0].code, "lock-format-newer");
            assert_eq!(
                diagnostics[0].file.as_deref(),
                Some(target.to_string_lossy().as_ref())
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn saving_over_a_human_block_as_agent_is_refused() {
    let dir = TempDir::new();
    let target = dir.0.join("median.lock");
    save_lock(&StdFs, &target, &common::median()).expect("first write");
    let before = std::fs::read(&target).expect("bytes");
    let Lock::Function(mut taken) = common::median() else {
        panic!("median is a function lock")
    };
    taken.spec.blocks[3].author = Author::Agent;
    match save_lock(&StdFs, &target, &Lock::Function(taken)) {
        Err(SaveError::Invariants(diagnostics)) => {
            let codes: Vec<&str> = diagnostics.iter().map(|d| d.code.as_str()).collect();
            assert_eq!(codes, ["lock-invariant-author-flip"]);
        }
        other => panic!("expected an author-flip refusal, got {other:?}"),
    }
    assert_eq!(std::fs::read(&target).expect("bytes"), before);
}

/// A rename that fails (the target is a directory) removes the write's temp.
#[test]
fn a_failed_rename_removes_its_temp_file() {
    let dir = TempDir::new();
    let target = dir.0.join("median.lock");
    std::fs::create_dir(&target).expect("a directory where the lock goes");
    let text = write_lock(&common::median());
    assert!(write_atomic(&StdFs, &target, text.as_bytes()).is_err());
    assert!(temps_in(&dir.0).is_empty(), "{:?}", temps_in(&dir.0));
}

/// Writers of one lock at the same moment — threads here, processes in the
/// `trellis` end-to-end tests — each succeed, and the lock holds one of their
/// texts whole. One shared temp name made them truncate and rename each
/// other's temp file (`No such file or directory`).
#[test]
fn concurrent_writers_of_one_lock_all_succeed() {
    let dir = TempDir::new();
    let target = dir.0.join("median.lock");
    let texts = [write_lock(&common::median()), write_lock(&common::mean())];
    std::thread::scope(|scope| {
        for writer in 0..8 {
            let target = &target;
            let lock = if writer % 2 == 0 {
                common::median()
            } else {
                common::mean()
            };
            scope.spawn(move || {
                for _ in 0..40 {
                    write_atomic(&StdFs, target, write_lock(&lock).as_bytes())
                        .expect("every concurrent write succeeds");
                }
            });
        }
    });
    let text = std::fs::read_to_string(&target).expect("the lock");
    assert!(texts.contains(&text), "a torn lock: {text}");
    assert!(temps_in(&dir.0).is_empty(), "{:?}", temps_in(&dir.0));
}
