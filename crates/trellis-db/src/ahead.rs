//! Answers asked when a change arrives, ahead of the request that reads them
//! (design §7.10). A daemon hears of an edit from its change feed a
//! millisecond or two before the client that made it asks: a client process
//! takes that long to start. So the host applies the change as soon as the
//! feed says the files are written, takes an [`AskAhead`] from the joins —
//! the entries the next check and status will ask salsa about, each with what
//! the join holds for it, and a handle on the database — and answers it on a
//! thread of its own, without its lock. The answers wait on the joins'
//! [`Shelf`], marked with the revision and the entries they answer. The next
//! check or status takes them instead of asking, and waits for those still
//! being answered. A later change cancels the work (salsa unwinds every query
//! of a handle when a write is pending), and answers for another revision or
//! other entries are never taken.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use crate::check_report::{CheckReport, check_spec_entry};
use crate::db::RootDatabase;
use crate::index::ModuleFiles;
use crate::spread;
use crate::status::Explain;
use crate::status_rows::{HeldRow, spec_status_entry};

/// One entry to ask: its module, the module's files, its stem.
type Entry = (String, Arc<ModuleFiles>, String);

/// The next check's and status's entries at one revision, to be answered off
/// the host's lock ([`AskAhead::answer`]). It holds a handle on the database,
/// so a write waits until it is answered, cancelled or dropped: a host
/// answers it on another thread than the one that writes.
#[must_use = "the entries are only answered by `answer`"]
pub struct AskAhead {
    db: RootDatabase,
    /// Which opening of the shelf this fills.
    ticket: u64,
    threads: usize,
    check: Vec<Entry>,
    /// With the row the join holds for a stem whose hashes alone moved.
    status: Vec<(Entry, Option<HeldRow>)>,
    shelf: Arc<Shelf>,
}

impl AskAhead {
    pub(crate) fn new(
        db: &RootDatabase,
        threads: usize,
        check: Vec<Entry>,
        status: Vec<(Entry, Option<HeldRow>)>,
        shelf: &Arc<Shelf>,
    ) -> AskAhead {
        let revision = db.changes_applied();
        let keys = |entries: &mut dyn Iterator<Item = &Entry>| -> Vec<(String, String)> {
            entries
                .map(|(module, _, stem)| (module.clone(), stem.clone()))
                .collect()
        };
        let ticket = shelf.open(
            revision,
            keys(&mut check.iter()),
            keys(&mut status.iter().map(|(entry, _)| entry)),
        );
        AskAhead {
            db: db.clone(),
            ticket,
            threads,
            check,
            status,
            shelf: Arc::clone(shelf),
        }
    }

    /// How many entries this asks about (check and status together).
    pub fn len(&self) -> usize {
        self.check.len() + self.status.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Answers the checks, shelves them, then the status rows. Returns
    /// `false` when a write cancelled the work. Whatever was not shelved by
    /// the time this is dropped is withdrawn, so no request waits for it.
    pub fn answer(self) -> bool {
        let AskAhead {
            db,
            ticket,
            threads,
            check,
            status,
            shelf,
        } = &self;
        salsa::Cancelled::catch(AssertUnwindSafe(|| {
            let checks = answer_all(db, check, *threads, |db, (module, files, stem)| {
                check_spec_entry(db, module, files, stem)
            });
            shelf.put(*ticket, Shelved::Checks(checks));
            let rows = answer_all(db, status, *threads, |db, ((module, files, stem), held)| {
                spec_status_entry(db, module, files, stem, held.as_ref(), Explain::EdgesOnly)
            });
            shelf.put(*ticket, Shelved::Rows(rows));
        }))
        .is_ok()
    }
}

impl Drop for AskAhead {
    /// Withdraws what is still coming, however the answering ended (or if it
    /// never began).
    fn drop(&mut self) {
        let mut shelved = self.shelf.lock();
        if shelved.ticket == self.ticket {
            shelved.check.withdraw_coming();
            shelved.status.withdraw_coming();
        }
        drop(shelved);
        self.shelf.changed.notify_all();
    }
}

/// Every entry's answer, on up to `threads` threads when there are enough.
fn answer_all<E: Sync, R: Send>(
    db: &RootDatabase,
    entries: &[E],
    threads: usize,
    ask: impl Fn(&RootDatabase, &E) -> R + Sync,
) -> Vec<R> {
    spread::answer_ahead(db, entries, threads, &ask)
        .unwrap_or_else(|| entries.iter().map(|entry| ask(db, entry)).collect())
}

enum Shelved {
    Checks(Vec<CheckReport>),
    Rows(Vec<Option<HeldRow>>),
}

/// What taking from the shelf does with answers still being answered.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coming {
    /// Wait for them: the request would otherwise do the same work.
    Wait,
    /// Leave them: the caller must not block (joining in the background).
    Skip,
}

/// Where answers asked ahead wait for the request that takes them; the joins
/// and every [`AskAhead`] they made share it.
#[derive(Default)]
pub(crate) struct Shelf {
    shelved: Mutex<OnShelf>,
    changed: Condvar,
}

#[derive(Default)]
struct OnShelf {
    /// Counts the openings, so answers go only where they were asked for.
    ticket: u64,
    revision: u64,
    check: Slot<CheckReport>,
    status: Slot<Option<HeldRow>>,
}

/// The entries one kind of answer is for, as (module, stem), and the answers.
struct Slot<R> {
    keys: Vec<(String, String)>,
    answers: Answers<R>,
}

impl<R> Default for Slot<R> {
    fn default() -> Self {
        Slot {
            keys: Vec::new(),
            answers: Answers::Withdrawn,
        }
    }
}

impl<R> Slot<R> {
    fn withdraw_coming(&mut self) {
        if matches!(self.answers, Answers::Coming) {
            self.answers = Answers::Withdrawn;
        }
    }
}

enum Answers<R> {
    Coming,
    Here(Vec<R>),
    Withdrawn,
}

impl Shelf {
    fn lock(&self) -> MutexGuard<'_, OnShelf> {
        // Only whole assignments happen under this lock: a panic cannot leave
        // it half-written.
        self.shelved.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn open(
        &self,
        revision: u64,
        check: Vec<(String, String)>,
        status: Vec<(String, String)>,
    ) -> u64 {
        let mut shelved = self.lock();
        let ticket = shelved.ticket + 1;
        *shelved = OnShelf {
            ticket,
            revision,
            check: Slot {
                keys: check,
                answers: Answers::Coming,
            },
            status: Slot {
                keys: status,
                answers: Answers::Coming,
            },
        };
        drop(shelved);
        self.changed.notify_all();
        ticket
    }

    fn put(&self, ticket: u64, answers: Shelved) {
        let mut shelved = self.lock();
        if shelved.ticket == ticket {
            match answers {
                Shelved::Checks(checks) => shelved.check.answers = Answers::Here(checks),
                Shelved::Rows(rows) => shelved.status.answers = Answers::Here(rows),
            }
        }
        drop(shelved);
        self.changed.notify_all();
    }

    /// Empties the shelf: a change is about to be applied (a request waiting
    /// for answers holds the host's lock, so none waits now).
    pub(crate) fn clear(&self) {
        let mut shelved = self.lock();
        // A new ticket: answers still being computed for the old one are
        // not put.
        *shelved = OnShelf {
            ticket: shelved.ticket + 1,
            ..OnShelf::default()
        };
        drop(shelved);
        self.changed.notify_all();
    }

    /// The checks of `keys` at `revision`; `None` when the shelf holds no
    /// such answers. While they are still being answered, `coming` says
    /// whether to wait for them.
    pub(crate) fn take_checks<'k>(
        &self,
        revision: u64,
        keys: impl ExactSizeIterator<Item = (&'k str, &'k str)> + Clone,
        coming: Coming,
    ) -> Option<Vec<CheckReport>> {
        self.take(revision, keys, |shelved| &mut shelved.check, coming)
    }

    /// The status entries of `keys` at `revision`, as [`Shelf::take_checks`].
    pub(crate) fn take_rows<'k>(
        &self,
        revision: u64,
        keys: impl ExactSizeIterator<Item = (&'k str, &'k str)> + Clone,
        coming: Coming,
    ) -> Option<Vec<Option<HeldRow>>> {
        self.take(revision, keys, |shelved| &mut shelved.status, coming)
    }

    /// The answers of `keys` at `revision` in `slot`, as [`Shelf::take_checks`].
    fn take<'k, R>(
        &self,
        revision: u64,
        keys: impl ExactSizeIterator<Item = (&'k str, &'k str)> + Clone,
        slot: impl Fn(&mut OnShelf) -> &mut Slot<R>,
        coming: Coming,
    ) -> Option<Vec<R>> {
        let mut shelved = self.lock();
        loop {
            if shelved.revision != revision {
                return None;
            }
            let slot = slot(&mut shelved);
            let same_keys = slot.keys.len() == keys.len()
                && (slot.keys.iter()).zip(keys.clone()).all(
                    |((module, stem), (asked_module, asked_stem))| {
                        module == asked_module && stem == asked_stem
                    },
                );
            if !same_keys {
                return None;
            }
            match std::mem::replace(&mut slot.answers, Answers::Withdrawn) {
                Answers::Here(answers) => return Some(answers),
                Answers::Withdrawn => return None,
                Answers::Coming => {
                    slot.answers = Answers::Coming;
                    if coming == Coming::Skip {
                        return None;
                    }
                    shelved = self
                        .changed
                        .wait(shelved)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }
}
