//! Asking salsa about many entries at once on several threads, each with its
//! own handle on the database, before the joins read them one by one: a hub
//! edit reaches hundreds of dependents, and a first answer reaches every
//! definition. The answers come back in entry order, so the join that follows
//! uses them instead of asking again; salsa memoizes what any thread computed,
//! so they are the answers the join would get, whatever ran where. How many
//! threads is the host's choice ([`crate::RootJoins::with_threads`]); the
//! default is one, which asks nothing ahead.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::db::RootDatabase;

/// Fewer entries than this per thread are not worth a thread: spawning one
/// costs about as much as revalidating a few dozen memos.
const LEAST_PER_THREAD: usize = 48;

/// Answers `ask` for every entry on up to `threads` threads, each taking the
/// next run of a few consecutive entries as it finishes its last. Entries come
/// in module order, and neighbours share callees: dealt one by one, two
/// threads asked about neighbours at once, and one waited for the other to
/// finish the callee both needed (an eighth of a cold check's time on two
/// threads was a core idle). A run keeps neighbours on one thread; runs small
/// enough that each thread takes many keep the threads busy to the end, and
/// along an edit's call chain they still work side by side. Returns the
/// answers in entry order, or `None` when the entries are too few to share
/// (the caller asks them itself). Every handle is dropped before this
/// returns, so the next write never waits.
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
    let run = (entries.len() / (threads * RUNS_PER_THREAD)).clamp(1, LONGEST_RUN);
    let next = AtomicUsize::new(0);
    let work = |db: &RootDatabase| {
        let mut answered = Vec::new();
        loop {
            let start = next.fetch_add(run, Ordering::Relaxed);
            if start >= entries.len() {
                return answered;
            }
            let end = (start + run).min(entries.len());
            answered.extend((start..end).map(|at| (at, ask(db, &entries[at]))));
        }
    };
    let mut answers: Vec<Option<R>> = entries.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        let work = &work;
        // A thread the system refuses leaves its share to the others: the
        // entries are taken from one counter.
        let others: Vec<_> = (1..threads)
            .filter_map(|_| {
                let db = db.clone();
                crate::deep::query_thread("trellis-answer")
                    .spawn_scoped(scope, move || work(&db))
                    .ok()
            })
            .collect();
        let mine = work(db);
        let dealt = others.into_iter().map(|other| {
            other
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        for (at, answer) in dealt.flatten().chain(mine) {
            answers[at] = Some(answer);
        }
    });
    // The runs cover every entry once.
    Some(
        answers
            .into_iter()
            .map(|answer| answer.expect("every entry is taken"))
            .collect(),
    )
}

/// Each thread takes about this many runs when the entries allow, so one
/// that finishes early finds more to take.
const RUNS_PER_THREAD: usize = 16;
/// The longest run: a module's worth of neighbours.
const LONGEST_RUN: usize = 32;

#[cfg(test)]
mod tests {
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
