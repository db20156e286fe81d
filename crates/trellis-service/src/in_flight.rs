//! Work on the root's files spread over more threads than there are cores
//! (design §7.15). A stat, a listing or a read is a syscall that waits on
//! the disk when the root is not in the page cache — after a reboot, or once
//! the kernel has reclaimed it — and then the cores are idle unless many are
//! in flight: a cold-disk read of 43,000 files takes 1.8–2.2 s on two threads
//! and 1.2 s on sixteen. With the root cached the same work is the kernel's
//! on the cores, and sixteen threads cost a load's reads what two do; a stat
//! walk, far less work a file, feels their switching and keeps eight.

/// How many threads at most share a batch of file reads.
pub(crate) const THREADS: usize = 16;

/// How many threads at most share a stat walk: a stat waits on the disk
/// for a block of inodes, not a file, so fewer in flight hide it as well,
/// and with the root cached the eight cost less than sixteen switching on
/// the same cores (design §7.16).
pub(crate) const WALK_THREADS: usize = 8;

/// `each` of every item, in order, the items cut into contiguous runs of at
/// least `least_per_thread`, one run per thread, up to `most_threads`; a
/// batch too small to share runs on the caller's thread. A panic in any run
/// is resumed on the caller's.
pub(crate) fn in_order<T: Sync, R: Send>(
    items: &[T],
    least_per_thread: usize,
    most_threads: usize,
    each: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = (items.len() / least_per_thread.max(1)).clamp(1, most_threads.max(1));
    if threads == 1 {
        return items.iter().map(&each).collect();
    }
    let run = items.len().div_ceil(threads);
    let each = &each;
    std::thread::scope(|scope| {
        // A thread the system refuses (a process limit in a jail) leaves its
        // run to the caller's thread: slower, never a failure.
        let runs: Vec<Result<_, &[T]>> = items
            .chunks(run)
            .skip(1)
            .map(|run| {
                std::thread::Builder::new()
                    .spawn_scoped(scope, move || run.iter().map(each).collect::<Vec<R>>())
                    .map_err(|_| run)
            })
            .collect();
        let mut done: Vec<R> = items[..run].iter().map(each).collect();
        for run in runs {
            match run {
                Ok(thread) => done.extend(
                    thread
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                ),
                Err(run) => done.extend(run.iter().map(each)),
            }
        }
        done
    })
}

/// `first` and `second` at once, `first` on a thread of its own (on the
/// caller's after `second` when the system refuses a thread); a panic in
/// either is resumed on the caller's.
pub(crate) fn both<A: Send, B>(
    first: impl FnOnce() -> A + Send,
    second: impl FnOnce() -> B,
) -> (A, B) {
    // Where `first` runs is known only once the thread is or is not there.
    let first = std::sync::Mutex::new(Some(first));
    let run_first = || {
        let first = (first
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner))
        .take();
        first.expect("`first` runs once")()
    };
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new().spawn_scoped(scope, run_first);
        let second = second();
        let first = match spawned {
            Ok(thread) => thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => run_first(),
        };
        (first, second)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_is_answered_once_in_order_on_as_many_threads_as_it_fills() {
        let threads = std::sync::Mutex::new(std::collections::HashSet::new());
        let items: Vec<usize> = (0..1000).collect();
        let answers = in_order(&items, 100, THREADS, |item| {
            threads.lock().unwrap().insert(std::thread::current().id());
            item * 2
        });
        assert_eq!(answers, (0..1000).map(|item| item * 2).collect::<Vec<_>>());
        assert_eq!(threads.lock().unwrap().len(), 10);
        // Too few to share: the caller's thread alone.
        threads.lock().unwrap().clear();
        let answers = in_order(&items[..150], 100, THREADS, |item| {
            threads.lock().unwrap().insert(std::thread::current().id());
            *item
        });
        assert_eq!(answers.len(), 150);
        let only: Vec<_> = threads.lock().unwrap().iter().copied().collect();
        assert_eq!(only, [std::thread::current().id()]);
        // Many items: no more than the most threads.
        let many: Vec<usize> = (0..100_000).collect();
        threads.lock().unwrap().clear();
        let answers = in_order(&many, 1, THREADS, |item| {
            threads.lock().unwrap().insert(std::thread::current().id());
            *item
        });
        assert_eq!(answers, many);
        assert_eq!(threads.lock().unwrap().len(), THREADS);
    }

    #[test]
    fn both_runs_each_once_the_first_elsewhere_and_resumes_a_panic() {
        let caller = std::thread::current().id();
        let (first, second) = both(
            || (std::thread::current().id(), 1),
            || (std::thread::current().id(), 2),
        );
        assert_eq!((first.1, second.1), (1, 2));
        assert_eq!(second.0, caller);
        assert_ne!(first.0, caller);
        let panicked = std::panic::catch_unwind(|| both(|| panic!("first"), || ()));
        let message = panicked.expect_err("the first's panic reaches the caller");
        assert_eq!(message.downcast_ref::<&str>(), Some(&"first"));
    }
}
