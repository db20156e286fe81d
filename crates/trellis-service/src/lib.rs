//! `trellis-service` is one root's service: the salsa database of one root kept in
//! step with the disk (the loader, the one walker, the change feed), and what
//! every request is answered with — check and status, adopt and review, tests and
//! their locks, questions and answers, the triage sweep's service half, context
//! bundles, the toolchain pin, and a lowering job's tools over its draft overlay.
//! The wire types of those answers (`protocol`) and the host's diagnostic codes
//! (`codes`) live here because the service is what produces them; `flog` and
//! `order` live here because the service writes `f.log` events and picks
//! lowering candidates itself, and the lowering loop above reads them from here;
//! `identity` (this build's version and identity) because the toolchain pin and
//! the locks record it (the binary's handshake and the lowering loop read it
//! from here too), and `line_diff` because a stale answer is refused with one.
//! It owns the root's files and the writer lock; it starts processes only
//! through `trellis-verify`'s process ports, and it has no command line,
//! rendering, socket server or agent: it must not depend on `trellis-agent` or
//! the `trellis` binary.
//!
//! Workspace dependencies: `trellis-diag`, `trellis-hash`, `soil-syntax` (a
//! draft's parse and print), `soil-types` (check facts), `trellis-spec`,
//! `trellis-lock`, `trellis-db`, `trellis-rpc` (the error type requests answer
//! with), `trellis-verify` (suites and the process ports), `trellis-cache` (the
//! shared result cache `test` reads and writes), `trellis-context`
//! (bundles), `trellis-mcp` (the job tools' names and schemas) and
//! `trellis-skill` (the skill hash the toolchain pin records).

#![allow(
    clippy::disallowed_methods,
    reason = "the host's service: it owns the root's files, the writer lock and the clock (design §2)"
)]

pub mod answer_cache;
pub mod codes;
pub mod flog;
pub mod identity;
mod in_flight;
pub mod line_diff;
pub mod loader;
pub mod order;
pub mod protocol;
pub mod service;
pub mod walk;
pub mod watch;

pub use service::Service;
