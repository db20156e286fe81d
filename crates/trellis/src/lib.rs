//! `trellis` is the binary: argument parsing, the command line and its
//! rendering, the client that reaches (or starts) the root's daemon, the
//! daemon's accept loop, and the host glue of `call`, `repl`, `lsp` and the
//! internal `_mcp`, `_job` and `_script` commands. It owns the process-level I/O
//! of a command — the environment it reads, sockets, spawning the daemon — and
//! composes the crates below; nothing depends on it. What a request is answered
//! with is `trellis-service`'s; how a lowering runs is `trellis-agent`'s.
//!
//! Workspace dependencies: `trellis-diag`, `trellis-db`, `trellis-rpc` (the
//! socket client and server), `soil0` (`call`'s run), `trellis-spec` (the
//! repl's `:keep`), `trellis-context` (`trellis spec`, a bundle's token counts), `trellis-mcp` (the
//! `_mcp` shim), `trellis-skill` (`trellis skill`), `trellis-lsp`
//! (`trellis lsp`), `trellis-service` (the service every request is answered
//! by), `trellis-cache` (`trellis cache keygen`) and `trellis-agent` (the
//! lowering loop the daemon runs).

#![allow(
    clippy::disallowed_methods,
    reason = "the host: it owns the file system, the environment and processes (design §2)"
)]

pub mod args;
pub mod call;
pub mod cli;
pub mod client;
pub mod client_env;
pub mod daemon;
pub mod heap;
pub mod lsp;
pub mod mcp;
pub mod render;
pub mod root;
