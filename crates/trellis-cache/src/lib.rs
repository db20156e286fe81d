//! `trellis-cache` owns the shared result cache (design §12): a definition's test
//! results, keyed by its suite key (lock-schema §5.4), exchanged with any server
//! that speaks the Bazel HTTP remote-cache protocol (`GET`/`PUT /ac/<key>` for the
//! action result, `/cas/<sha256>` for blobs), and verified before a reader uses
//! them. It owns the blocking HTTP/1.1 client (`http`), the action result's wire
//! form (`action`), the result blob and what a reader checks of it (`entry`), the
//! writers' signatures (`signing`) and one command's session with a server, its
//! time bounds included (`remote`). It must not depend on the database, the
//! service or any host crate: the key's inputs and the rows come in as values,
//! and what to do with a verified result is the caller's.
//!
//! Workspace dependencies: `trellis-hash` (every digest), `trellis-lock` (the rows
//! and their seal).

pub mod action;
pub mod entry;
pub mod http;
pub mod remote;
pub mod signing;

pub use entry::KeyInputs;
pub use remote::{Fetched, RemoteCache, Settings};
