//! `trellis-db` is the incremental heart of Trellis: a salsa database whose inputs
//! are the bytes of a root's files (`.tr`, `.soil`, `.lock`, `soil.toml`) and its
//! file list, and whose derived, memoized queries compute everything else — parsed
//! specs, the three-part spec hashes, decision-entry and scope hashes, hash forms and
//! `soil_hash`, the type environment and callee-first programs, check facts and
//! statuses. The invalidation table is not coded anywhere: it falls out of which
//! query reads which input. This crate does no I/O: hosts (the CLI, the daemon, a
//! future language server) read files through their own ports and push edits in
//! through [`Change`]. It must not depend on any host crate.

mod change;
mod config;
mod db;
mod files;

pub use config::root_config;

pub use change::Change;
pub use config::{Config, Toolchain, parse_config};
pub use db::{Db, QueryLog, RootDatabase};
pub use files::{FileKind, SourceFile, Workspace};
