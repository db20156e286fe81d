//! `trellis` is the host: the command-line client, the daemon that holds one root's
//! salsa database across commands, and the service both of them answer requests
//! with. It owns all process-level I/O — reading the root's files, sockets,
//! spawning the daemon, writing locks and `soil.toml` — and composes the lower
//! crates; nothing depends on it.
//!
//! Workspace dependencies: `trellis-diag`, `trellis-hash`, `trellis-db`,
//! `trellis-lock`, `trellis-rpc`, `soil0`, `soil-types`, `trellis-spec`,
//! `trellis-verify`, `trellis-context`, `trellis-mcp` (the `_mcp` shim),
//! `trellis-skill` (`trellis skill` and the skill pin), `trellis-lsp` (`trellis lsp`)
//! and `soil-syntax` (`write_soil` parses and prints a draft).

#![allow(
    clippy::disallowed_methods,
    reason = "the host: it owns the file system, the environment and processes (design §2)"
)]

pub mod answer_cli;
pub mod args;
pub mod call;
pub mod cli;
pub mod client;
pub mod codes;
pub mod daemon;
pub mod identity;
pub mod line_diff;
pub mod loader;
pub mod lowering;
pub mod lsp;
pub mod mcp;
pub mod protocol;
pub mod render;
pub mod repl;
pub mod root;
pub mod service;
pub mod walk;
pub mod watch;
