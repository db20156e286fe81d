//! `trellis-diag` owns the one `Diagnostic` type every Soil and Trellis crate emits,
//! the source positions it carries (byte ranges while parsing, line/column spans
//! once rendered), and the read-only view of `registry/diagnostics.json` that gives
//! each code its repair class and `spec_ref`, and the drift gate that keeps the
//! registry, the contract's tables, `docs/` and the sources' codes in step. It sits at the very bottom of the
//! dependency graph: it must not depend on any other workspace crate, and it does
//! no I/O (the registry is embedded at compile time).

#![cfg_attr(test, allow(clippy::disallowed_methods, reason = "tests use files"))]

mod diagnostic;
pub mod drift;
mod position;
pub mod registry;
pub mod soil_option;

pub use diagnostic::{Diagnostic, Note, errors_document};
pub use position::{LineIndex, Position, Span, TextRange};
