//! `trellis-lsp` is the language server's protocol and features layer (design
//! §9.9): `trellis lsp` speaks the Language Server Protocol over a connection the
//! host opens, on a database of its own that holds the root's files as the host's
//! loader reads them with the editor's unsaved buffers overlaid — the CLI, `status`
//! and lowering jobs, which read the daemon's database, never see a buffer. It
//! publishes what `trellis check` reports (with each code's repair class, its spec
//! section as the code description, related locations, and open holes as
//! information), and answers hover, go to definition, references, document
//! symbols, `.soil` formatting through the canonical printer, completion and
//! status code lenses, on worker threads over snapshots that salsa cancels when
//! an edit arrives. It reads no file and starts no process: the host's [`Host`]
//! port finds the root, loads its disk and runs a lens's `trellis` command. The
//! byte stream is its own [`transport`]'s, which reads frames within stated
//! bounds and answers malformed ones instead of ending the process.
//!
//! Workspace dependencies: `trellis-db` (the database, its queries and `Change`),
//! `trellis-spec` (spec blocks and their locations), `soil-syntax` (trees and the
//! canonical printer), `soil-types` (the prelude and its documentation),
//! `trellis-diag` (diagnostics and spans) and `trellis-context` (spec sections by
//! anchor, read_spec's answer).

mod builtins;
mod complete;
mod findings;
mod format;
mod handlers;
mod hover;
mod lenses;
mod names;
mod navigate;
mod outline;
pub mod overlay;
pub mod paths;
mod ports;
mod resolve;
mod server;
mod text;
pub mod transport;

pub use handlers::root_diagnostics;
pub use ports::{DiskRefresh, Host, RootDisk};
pub use server::serve;
pub use text::Encoding;
