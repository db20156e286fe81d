//! The service's side of the answers kept on disk (design §7.16,
//! `crate::answer_cache`): a service that has loaded nothing answers the
//! root's whole `check` or its `status` from them when the root is as they
//! were, a daemon loads and answers the root behind them on a thread of its
//! own and takes that over once it is done, and answers made from a full
//! load are stored for the next start.

use std::sync::{Arc, Condvar, Mutex, PoisonError};

use trellis_db::{CONFIG_FILE, Change};

use super::Service;
use crate::answer_cache::{self, Answers};
use crate::identity::binary_identity;
use crate::protocol::Request;
use crate::watch::Settled;

/// What a request would read of the stored answers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Check,
    Status,
}

impl Answers {
    fn has(&self, part: Part) -> bool {
        self.lock_problems.is_some()
            && match part {
                Part::Check => self.check.is_some(),
                Part::Status => self.status.is_some(),
            }
    }
}

/// The part of the stored answers `request` reads, if it reads nothing else:
/// the whole root's check, or the status rows (not a verification).
fn part_of(request: Option<&Request>) -> Option<Part> {
    match request? {
        Request::Check(params) if params.def.is_none() => Some(Part::Check),
        Request::Status(params) if params.verify != Some(true) => Some(Part::Status),
        _ => None,
    }
}

impl Service {
    /// Takes the stored answers if the root is as they were, without loading
    /// it; `false` when there are none to take (the caller loads the root).
    pub fn start_from_store(&mut self) -> bool {
        self.started_from_store = self.take_store(None);
        self.started_from_store
    }

    /// Whether `request` is answered from stored answers: they are held (or
    /// read now, for a service that has loaded nothing) and the root has not
    /// moved since. Anything else drops them, and the request loads the root.
    pub(super) fn answer_from_store(&mut self, request: Option<&Request>) -> bool {
        if self.loaded {
            return false;
        }
        let Some(part) = part_of(request) else {
            self.stored = None;
            return false;
        };
        if self.stored.is_some() {
            let unmoved = match &mut self.watch {
                // What the feed holds stays there for the refresh that
                // follows a load.
                Some(watch) => watch.settled() == Settled::Quiet,
                // Without a feed, only a new stat walk can tell.
                None => false,
            };
            if unmoved
                && self
                    .stored
                    .as_ref()
                    .is_some_and(|answers| answers.has(part))
            {
                return true;
            }
            if self.watch.is_some() {
                self.leave_the_store();
                return false;
            }
            self.stored = None;
        }
        self.take_store(Some(part))
    }

    /// Leaves the stored answers for the loaded root, when the root moved
    /// under them or a request needs more: a load already running behind
    /// them is waited for and taken over, so the change is then applied to
    /// its database as to any other (design §7.16) — never a second load
    /// beside it on the same cores. Without one, the caller's refresh loads
    /// the root.
    pub(super) fn leave_the_store(&mut self) {
        self.stored = None;
        if self.warming.is_some() {
            self.take_warmed_up(true);
        }
    }

    /// Reads the stored answers if they hold `part` (any part when `None`)
    /// and the root is as they were; loads `soil.toml` alone beside them (the
    /// pin check and `status` read it).
    fn take_store(&mut self, part: Option<Part>) -> bool {
        // No store, no walk: a first run walks the root once, to load it.
        if !self.root().join(answer_cache::STORE).is_file() {
            return false;
        }
        let root = self.root().to_owned();
        let read = |path: &str| std::fs::read(root.join(path)).ok();
        let loader = &mut self.loader;
        // Moved into the closure, so the stamps borrow from the loader itself.
        let stamps = move || {
            let loader = loader;
            loader.stamps_now()
        };
        let Some(answers) = answer_cache::load(&root, stamps, &binary_identity(), read) else {
            return false;
        };
        let wanted = match part {
            Some(part) => answers.has(part),
            None => answers.has(Part::Check) || answers.has(Part::Status),
        };
        if !wanted {
            return false;
        }
        let mut change = Change::default();
        if let Ok(text) = std::fs::read_to_string(root.join(CONFIG_FILE)) {
            change.set_config(text);
        }
        self.apply(change);
        self.load_problems = answers.load_problems.clone();
        self.stored = Some(answers);
        self.loader.unprime();
        true
    }

    /// Whether the last answers came from the store (tests and benchmarks).
    pub fn answers_from_store(&self) -> bool {
        self.stored.is_some()
    }

    /// Stores what the joins answered for the root as loaded — the check,
    /// the status rows and the unreadable locks; with `complete`, both even
    /// if only one was asked — keeping what a store for the same root holds
    /// that this service was not asked. Nothing is stored by a service that
    /// has not loaded the root, or whose files could not all be read or
    /// walked.
    pub fn store_answers(&mut self, complete: bool) {
        self.stored_kinds = self.joins.answered();
        // What the walk found wrong (a FIFO or a name that is not UTF-8 where
        // an input's would be, a directory it could not read) is no file the
        // fingerprint covers: stored, it was taken back after it was gone.
        if !self.loaded || !self.load_problems.is_empty() {
            return;
        }
        let Some(mut files) = self.loader.known_files() else {
            return;
        };
        let (asked_check, asked_status) = self.joins.answered();
        if !(complete || asked_check || asked_status) {
            return;
        }
        let mut answers = Answers {
            check: (complete || asked_check).then(|| self.joins.check(&self.db)),
            status: None,
            lock_problems: Some(self.joins.lock_problems(&self.db)),
            load_problems: self.load_problems.clone(),
        };
        if complete || asked_status {
            let groups = self.joins.status_groups(&self.db);
            answers.status = Some(
                (groups.into_iter())
                    .map(|group| (group.rows.to_vec(), group.counts.to_vec()))
                    .collect(),
            );
        }
        let root = self.root().to_owned();
        let build = binary_identity();
        if answers.check.is_none() || answers.status.is_none() {
            let read = |path: &str| std::fs::read(root.join(path)).ok();
            let stamps = &mut files.stamps;
            if let Some(before) = answer_cache::load(&root, move || Some(stamps), &build, read) {
                answers.check = answers.check.or(before.check);
                answers.status = answers.status.or(before.status);
            }
        }
        // A store that cannot be written is a cold start next time, no more.
        let _ = answer_cache::store(&root, files, &build, &answers);
    }

    /// Stores what a one-shot command answered ([`Service::store_answers`]):
    /// both the check and the status when it answered either of the whole
    /// root, since the next one-shot command asks the other as often as the
    /// same (`check`, then `status`), and that would be a second cold load,
    /// where the other answer costs a fraction of one now: a tenth to a
    /// quarter of the command at 20,000 definitions (design §7.16).
    pub fn store_answers_of_one_shot(&mut self) {
        let (asked_check, asked_status) = self.joins.answered();
        self.store_answers(asked_check || asked_status);
    }

    /// Settles the racy files the loader read ([`RootLoader::settle_racy`]):
    /// a daemon does it as it stops, before its last store, so the next start
    /// stats them instead of reading them. Returns how many were settled.
    ///
    /// [`RootLoader::settle_racy`]: crate::loader::RootLoader::settle_racy
    pub fn settle_racy(&mut self) -> usize {
        self.loader.settle_racy()
    }

    /// Whether a daemon serving stored answers should load the root behind
    /// them ([`Service::warm_up`]).
    pub fn wants_warm_up(&self) -> bool {
        self.stored.is_some() && self.warming.is_none() && !self.loaded
    }

    /// Loads and answers the root on a service of its own, off the lock, and
    /// hands it to `service` if that has loaded nothing since: the next edit
    /// then finds the database and the joins it would have had without the
    /// store. A request that cannot wait (a change came, or it asks what the
    /// store does not hold) waits for this load and takes it over instead of
    /// loading beside it. What was answered from the store is compared with
    /// what the load answers; a difference is said on stderr (a stamp that
    /// lied), and the loaded answers are the ones served from then on.
    pub fn warm_up(service: &Mutex<Service>) {
        let lock = || service.lock().unwrap_or_else(PoisonError::into_inner);
        let (root, warming) = {
            let mut service = lock();
            if !service.wants_warm_up() {
                return;
            }
            let warming = Arc::new(WarmUp::default());
            service.warming = Some(Arc::clone(&warming));
            (service.root().to_owned(), warming)
        };
        // A load that panics hands over nothing; whoever waits loads the
        // root itself.
        let loaded = std::panic::catch_unwind(move || {
            let mut fresh = Service::new(root);
            fresh.refresh();
            let answers = Answers {
                check: Some(fresh.root_check()),
                lock_problems: Some(fresh.unreadable_locks()),
                status: Some(
                    (fresh.root_status_groups().into_iter())
                        .map(|group| (group.rows.to_vec(), group.counts.to_vec()))
                        .collect(),
                ),
                load_problems: fresh.load_problems.clone(),
            };
            fresh.joins.prepare_for_edits(&fresh.db);
            fresh.db.drop_spare_parses();
            Box::new(Loaded { fresh, answers })
        });
        warming.finish(loaded.ok());
        lock().take_warmed_up(false);
    }

    /// Takes over the load behind the stored answers once it is done
    /// (waiting for it with `wait`); nothing when it is not running or was
    /// taken already, and the load is dropped when this service loaded the
    /// root meanwhile.
    fn take_warmed_up(&mut self, wait: bool) {
        let Some(warming) = self.warming.clone() else {
            return;
        };
        let Some(loaded) = warming.outcome(wait) else {
            return;
        };
        self.warming = None;
        let Some(Loaded { fresh, answers }) = loaded.map(|loaded| *loaded) else {
            return;
        };
        if self.loaded {
            return;
        }
        if let Some(stored) = self.stored.take() {
            let agrees = |part: Part| {
                !stored.has(part)
                    || match part {
                        Part::Check => stored.check == answers.check,
                        Part::Status => stored.status == answers.status,
                    }
            };
            if !agrees(Part::Check) || !agrees(Part::Status) {
                eprintln!(
                    "trellis daemon: the stored answers differ from the root as loaded; serving the loaded ones"
                );
            }
        }
        self.loader = fresh.loader;
        self.db = fresh.db;
        self.joins = fresh.joins;
        self.load_problems = fresh.load_problems;
        self.loaded = true;
        self.started_from_store = false;
    }
}

/// The load behind the stored answers, handed from the thread that runs it
/// to the service (design §7.16).
#[derive(Default)]
pub(super) struct WarmUp {
    /// `None` while it runs; then what it loaded, `None` if it failed.
    outcome: Mutex<Option<Option<Box<Loaded>>>>,
    done: Condvar,
}

/// A root loaded and answered on a service of its own.
struct Loaded {
    fresh: Service,
    answers: Answers,
}

impl WarmUp {
    fn finish(&self, loaded: Option<Box<Loaded>>) {
        let mut outcome = self.outcome.lock().unwrap_or_else(PoisonError::into_inner);
        *outcome = Some(loaded);
        self.done.notify_all();
    }

    /// What the load left, once it is done (waiting for that with `wait`);
    /// `None` while it runs or once it was taken.
    fn outcome(&self, wait: bool) -> Option<Option<Box<Loaded>>> {
        let mut outcome = self.outcome.lock().unwrap_or_else(PoisonError::into_inner);
        while wait && outcome.is_none() {
            outcome = (self.done.wait(outcome)).unwrap_or_else(PoisonError::into_inner);
        }
        outcome.take()
    }
}
