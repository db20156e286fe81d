//! Room on the stack for the queries that recurse over the call graph.
//!
//! A query over a definition's callees (is its program free of cycles, its
//! Merkle digest, the names its program asks the environment for, its status
//! through its callees') asks the same query of each callee, so a call chain
//! `n` definitions long nests `n` queries on one thread's stack, each about a
//! kilobyte of salsa's frames in a release build and several in a debug one.
//! A generated root whose definitions each call the next ran out of stack at
//! about 2,000 on the answering threads (2 MiB each) and 8,000 on the main
//! one, and the process aborted with no answer at all. Each such recursion
//! goes through [`descend`]: while enough stack is left it is a comparison,
//! and when it is not the recursion continues on a new segment, as rustc's
//! own queries do (`ensure_sufficient_stack`). Salsa's query stack is its
//! own, not the thread's, so a query cannot tell which segment it runs on;
//! a panic (salsa's cancellation) unwinds back across the segments.

/// Stack that must be left for one step of a recursion: one query's frames
/// and whatever it does before it asks the next one (a debug build's frames
/// are several times a release build's).
const RED_ZONE: usize = 256 * 1024;

/// The size of each new segment: a release build descends about a thousand
/// definitions of a chain on each.
const SEGMENT: usize = 2 * 1024 * 1024;

/// The stack of every thread that asks the database. Salsa itself recurses
/// when it confirms a memo after an edit, following its dependencies down
/// the whole chain (several kilobytes a link), where [`descend`] cannot reach:
/// a thread asking after an edit needs a stack as deep as the root's longest
/// chain. Only the pages a thread touches are memory; the rest is address
/// space.
pub const QUERY_STACK_BYTES: usize = 256 * 1024 * 1024;

/// A thread builder for a thread that asks the database, with
/// [`QUERY_STACK_BYTES`] of stack (for a scoped thread; others start with
/// [`spawn_query_thread`]).
pub fn query_thread(name: &str) -> std::thread::Builder {
    std::thread::Builder::new()
        .name(name.to_owned())
        .stack_size(QUERY_STACK_BYTES)
}

/// Starts `work`, which asks the database, on a [`query_thread`]; where the
/// system refuses a stack that large (a host that commits every mapping up
/// front), on a thread with the default stack, which answers every root but
/// one with a call chain thousands long. `Err` only when no thread starts.
pub fn spawn_query_thread<T: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<T>> {
    spawn_on_stack(name, QUERY_STACK_BYTES, work)
}

/// [`spawn_query_thread`] with a stack of `bytes`.
fn spawn_on_stack<T: Send + 'static>(
    name: &str,
    bytes: usize,
    work: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<T>> {
    use std::sync::{Arc, Mutex, PoisonError};
    // Shared, not moved: a refused spawn drops its closure, and the second
    // try needs the work back.
    let work = Arc::new(Mutex::new(Some(work)));
    let start = |builder: std::thread::Builder| {
        let work = Arc::clone(&work);
        builder.spawn(move || {
            let work = (work.lock().unwrap_or_else(PoisonError::into_inner).take())
                .expect("a thread that starts takes the work");
            work()
        })
    };
    let named = || std::thread::Builder::new().name(name.to_owned());
    start(named().stack_size(bytes)).or_else(|_| start(named()))
}

/// Runs `step`, one level of a recursion over the call graph, on a stack with
/// at least [`RED_ZONE`] bytes left.
pub(crate) fn descend<R>(step: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, step)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_stack_the_system_refuses_leaves_the_work_to_the_default_one() {
        // 64 TiB: more address space than a process has.
        let thread = super::spawn_on_stack("refused", 1 << 46, || 42).expect("a thread starts");
        assert_eq!(thread.join().expect("it answers"), 42);
        let thread = super::spawn_query_thread("query", || 7).expect("a thread starts");
        assert_eq!(thread.join().expect("it answers"), 7);
    }
}
