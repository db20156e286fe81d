//! `soil-syntax` owns Soil's surface syntax: the lexer, the never-failing parser
//! (tree plus diagnostics), the syntax tree with byte spans, the canonical printer
//! and the hash form built on it (docs/soil-syntax-spec.md). It depends only on
//! `trellis-diag`; it knows nothing of types, evaluation, files or the database,
//! and it does no I/O.

pub mod ast;
