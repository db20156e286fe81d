//! Asking salsa about many entries at once on several threads, each with its
//! own handle on the database, before the joins read them one by one: a hub
//! edit reaches hundreds of dependents, and a first answer reaches every
//! definition. The answers come back in entry order, so the join that follows
//! uses them instead of asking again; salsa memoizes what any thread computed,
//! so they are the answers the join would get, whatever ran where. How many
//! threads is the host's choice ([`crate::RootJoins::with_threads`]); the
//! default is one, which asks nothing ahead.

use crate::db::RootDatabase;

/// Fewer entries than this per thread are not worth a thread: spawning one
/// costs about as much as revalidating a few dozen memos.
const LEAST_PER_THREAD: usize = 48;

/// Answers `ask` for every entry on up to `threads` threads, dealt round robin:
/// an edit's reached entries come in module order, which is mostly the order
/// of a call chain, and a thread given a contiguous run from its far end would
/// only wait for the callees the other threads are still hashing. Dealt, every
/// thread works along the chain at once. Returns the answers in entry order,
/// or `None` when the entries are too few to share (the caller asks them
/// itself). Every handle is dropped before this returns, so the next write
/// never waits.
pub(crate) fn answer_ahead<E: Sync, R: Send>(
    db: &RootDatabase,
    entries: &[E],
    threads: usize,
    ask: impl Fn(&RootDatabase, &E) -> R + Sync,
) -> Option<Vec<R>> {
    let threads = threads.min(entries.len() / LEAST_PER_THREAD);
    if threads < 2 {
        return None;
    }
    let ask = &ask;
    let mut answers: Vec<Option<R>> = entries.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        let others: Vec<_> = (1..threads)
            .map(|first| {
                let db = db.clone();
                scope.spawn(move || {
                    (entries.iter().enumerate().skip(first).step_by(threads))
                        .map(|(at, entry)| (at, ask(&db, entry)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for (at, entry) in entries.iter().enumerate().step_by(threads) {
            answers[at] = Some(ask(db, entry));
        }
        for other in others {
            let dealt = other
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            for (at, answer) in dealt {
                answers[at] = Some(answer);
            }
        }
    });
    // Dealt round robin, every entry has its answer.
    Some(
        answers
            .into_iter()
            .map(|answer| answer.expect("every entry is dealt"))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn every_entry_is_answered_once_in_order_and_too_few_are_left_to_the_join() {
        let db = RootDatabase::default();
        let asked = AtomicUsize::new(0);
        let entries: Vec<usize> = (0..500).collect();
        let answers = answer_ahead(&db, &entries, 3, |_, entry| {
            asked.fetch_add(1, Ordering::Relaxed);
            entry * 2
        });
        assert_eq!(asked.load(Ordering::Relaxed), 500, "each entry once");
        assert_eq!(
            answers,
            Some(entries.iter().map(|entry| entry * 2).collect()),
            "in entry order"
        );

        asked.store(0, Ordering::Relaxed);
        let answers = answer_ahead(&db, &entries[..60], 4, |_, _| {
            asked.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(answers, None, "60 entries are one thread's");
        let answers = answer_ahead(&db, &entries, 1, |_, _| {
            asked.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(answers, None, "one thread asks nothing ahead");
        assert_eq!(asked.load(Ordering::Relaxed), 0);
    }
}
