//! `trellis` is the host: the command-line client, the daemon that holds one root's
//! service across commands, and the lowering loop the daemon runs. It owns the
//! process-level I/O the service does not — sockets, spawning the daemon, the
//! agents' processes — and composes the lower crates; nothing depends on it. The
//! service that answers requests is `trellis-service`.
//!
//! Workspace dependencies: `trellis-diag`, `trellis-hash`, `trellis-db`,
//! `trellis-lock`, `trellis-rpc`, `soil0`, `soil-types`, `trellis-spec`,
//! `trellis-verify`, `trellis-context`, `trellis-mcp` (the `_mcp` shim),
//! `trellis-skill` (`trellis skill` and the skill pin), `trellis-lsp` (`trellis lsp`),
//! `soil-syntax` and `trellis-service` (the service every request is answered by).

#![allow(
    clippy::disallowed_methods,
    reason = "the host: it owns the file system, the environment and processes (design §2)"
)]

pub mod answer_cli;
pub mod args;
pub mod call;
pub mod cli;
pub mod client;
pub mod daemon;
pub mod lowering;
pub mod lsp;
pub mod mcp;
pub mod render;
pub mod repl;
pub mod root;
