//! Asking salsa about many entries at once on several threads, each with its
//! own handle on the database, before the joins read them one by one: a hub
//! edit reaches hundreds of dependents, and a first answer reaches every
//! definition. Salsa memoizes what any thread computed, so the sequential join
//! that follows finds each entry ready, and its answer is the same whatever
//! ran where. How many threads is the host's choice ([`crate::RootJoins::with_threads`]);
//! the default is one, which asks nothing ahead.

use crate::db::RootDatabase;

/// Fewer entries than this per thread are not worth a thread: spawning one
/// costs about as much as revalidating a few dozen memos.
const LEAST_PER_THREAD: usize = 48;

/// Asks `ask` about every entry on up to `threads` threads, dealt round robin:
/// an edit's reached entries come in module order, which is mostly the order
/// of a call chain, and a thread given a contiguous run from its far end would
/// only wait for the callees the other threads are still hashing. Dealt, every
/// thread works along the chain at once. Does nothing when the entries are too
/// few to share. Every handle is dropped before this returns, so the next
/// write never waits.
pub(crate) fn ask_ahead<E: Sync>(
    db: &RootDatabase,
    entries: &[E],
    threads: usize,
    ask: impl Fn(&RootDatabase, &E) + Sync,
) {
    let threads = threads.min(entries.len() / LEAST_PER_THREAD);
    if threads < 2 {
        return;
    }
    let ask = &ask;
    std::thread::scope(|scope| {
        for first in 1..threads {
            let db = db.clone();
            scope.spawn(move || {
                (entries.iter().skip(first).step_by(threads)).for_each(|entry| ask(&db, entry))
            });
        }
        (entries.iter().step_by(threads)).for_each(|entry| ask(db, entry));
    });
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn every_entry_is_asked_once_and_too_few_are_left_to_the_join() {
        let db = RootDatabase::default();
        let asked = AtomicUsize::new(0);
        let entries: Vec<usize> = (0..500).collect();
        ask_ahead(&db, &entries, 3, |_, entry| {
            asked.fetch_add(entry + 1, Ordering::Relaxed);
        });
        assert_eq!(asked.load(Ordering::Relaxed), 500 * 501 / 2);

        asked.store(0, Ordering::Relaxed);
        ask_ahead(&db, &entries[..60], 4, |_, _| {
            asked.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(
            asked.load(Ordering::Relaxed),
            0,
            "60 entries are one thread's"
        );
        ask_ahead(&db, &entries, 1, |_, _| {
            asked.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(
            asked.load(Ordering::Relaxed),
            0,
            "one thread asks nothing ahead"
        );
    }
}
