//! The database type hosts own, and the query log tests read.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashSet;

use crate::files::SourceFile;

/// The query surface every Trellis query is written against.
#[salsa::db]
pub trait Db: salsa::Database {}

/// A record of which queries salsa executed (not merely revalidated), as
/// `query_name(key)` strings in execution order, and how many memos of each
/// query it confirmed without executing them. Incremental tests assert on both.
#[derive(Clone, Default)]
pub struct QueryLog {
    /// One handle, so a database with a log is no larger than one without.
    shared: Arc<LogState>,
}

#[derive(Default)]
struct LogState {
    /// `None` until recording starts.
    executed: Mutex<Option<Vec<String>>>,
    /// The queries whose memos were confirmed, by name.
    confirmed: Mutex<BTreeMap<String, usize>>,
    /// Set while a debug build compares an answer with salsa's own root-wide
    /// memo: that walk is no part of the answer's work.
    paused: AtomicBool,
}

impl QueryLog {
    fn record(&self, event: &salsa::Event) {
        let state = &*self.shared;
        if state.paused.load(Ordering::Relaxed) {
            return;
        }
        let Ok(mut executed) = state.executed.lock() else {
            return;
        };
        let Some(log) = executed.as_mut() else {
            return;
        };
        match event.kind {
            salsa::EventKind::WillExecute { database_key } => {
                log.push(format!("{database_key:?}"));
            }
            salsa::EventKind::DidValidateMemoizedValue { database_key } => {
                let key = format!("{database_key:?}");
                let name = key.split('(').next().unwrap_or_default();
                if let Ok(mut confirmed) = state.confirmed.lock() {
                    *confirmed.entry(name.to_owned()).or_default() += 1;
                }
            }
            _ => {}
        }
    }

    /// Starts recording (clearing anything recorded before).
    pub fn start(&self) {
        if let Ok(mut guard) = self.shared.executed.lock() {
            *guard = Some(Vec::new());
        }
        self.take_confirmed();
    }

    /// How many memos of each query salsa confirmed (found valid, deeply or
    /// by their durability) since the last `start` or `take_confirmed`.
    pub fn take_confirmed(&self) -> BTreeMap<String, usize> {
        match self.shared.confirmed.lock() {
            Ok(mut confirmed) => std::mem::take(&mut *confirmed),
            Err(_) => BTreeMap::new(),
        }
    }

    /// Runs `f` without recording what it asks salsa.
    pub(crate) fn unrecorded<R>(&self, f: impl FnOnce() -> R) -> R {
        let was = self.shared.paused.swap(true, Ordering::Relaxed);
        let answer = f();
        self.shared.paused.store(was, Ordering::Relaxed);
        answer
    }

    /// What was executed since the last `start` or `take`.
    pub fn take(&self) -> Vec<String> {
        match self.shared.executed.lock() {
            Ok(mut guard) => guard.as_mut().map(std::mem::take).unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }
}

/// The one database implementation. Cloning is cheap and shares storage; a write
/// waits for every clone to be dropped, so hosts never keep clones across edits.
#[salsa::db]
#[derive(Clone)]
pub struct RootDatabase {
    storage: salsa::Storage<Self>,
    log: QueryLog,
    /// How many [`crate::Change`]s were applied: hosts' caches beside the
    /// database ([`crate::RootJoins`]) notice a change they were not told of.
    changes_applied: u64,
    /// The files a host marked volatile, whose edits stay LOW (design §7.1).
    volatile: Arc<FxHashSet<SourceFile>>,
}

impl Default for RootDatabase {
    /// A database without an event callback: salsa then builds no event at all,
    /// which is measurably cheaper on every query call.
    fn default() -> Self {
        Self {
            storage: salsa::Storage::new(None),
            log: QueryLog::default(),
            changes_applied: 0,
            volatile: Arc::default(),
        }
    }
}

impl RootDatabase {
    /// A database that records which queries execute (tests and benchmarks).
    pub fn with_query_log() -> Self {
        let log = QueryLog::default();
        let storage = salsa::Storage::new(Some(Box::new({
            let log = log.clone();
            move |event| log.record(&event)
        })));
        Self {
            storage,
            log,
            changes_applied: 0,
            volatile: Arc::default(),
        }
    }

    pub fn query_log(&self) -> &QueryLog {
        &self.log
    }

    /// Frees the parse trees no memo of this revision still needs (salsa's
    /// LRU keeps the last few hundred, design §7.15). Salsa does it when the
    /// next change starts a revision; a host whose first answer read every
    /// file calls it once that answer is out, so an idle daemon does not hold
    /// a parse of every file. Waits for every other handle, like a write.
    pub fn drop_spare_parses(&mut self) {
        salsa::Database::trigger_lru_eviction(self);
    }

    /// How many changes have been applied to this database.
    pub fn changes_applied(&self) -> u64 {
        self.changes_applied
    }

    pub(crate) fn count_change(&mut self) {
        self.changes_applied += 1;
    }

    /// Whether a host marked `file` volatile.
    pub(crate) fn is_volatile(&self, file: SourceFile) -> bool {
        self.volatile.contains(&file)
    }

    /// Marks `file` volatile; `false` when it already was.
    pub(crate) fn mark_volatile(&mut self, file: SourceFile) -> bool {
        Arc::make_mut(&mut self.volatile).insert(file)
    }
}

#[salsa::db]
impl salsa::Database for RootDatabase {}

#[salsa::db]
impl Db for RootDatabase {}
