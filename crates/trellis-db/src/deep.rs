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
/// [`QUERY_STACK_BYTES`] of stack.
pub fn query_thread(name: &str) -> std::thread::Builder {
    std::thread::Builder::new()
        .name(name.to_owned())
        .stack_size(QUERY_STACK_BYTES)
}

/// Runs `step`, one level of a recursion over the call graph, on a stack with
/// at least [`RED_ZONE`] bytes left.
pub(crate) fn descend<R>(step: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, step)
}
