//! `soil-syntax` owns Soil's surface syntax (docs/soil-syntax-spec.md): the lexer,
//! the never-failing parser (a tree plus diagnostics), the syntax tree with byte
//! spans, the canonical printer and the hash form built on it, and the one
//! scope-aware walk (`visit`) every analysis of local names uses. It depends only on
//! `trellis-diag`; it knows nothing of types, evaluation, files or the database,
//! and it does no I/O.
//!
//! Every `parse_*` function returns what it could build plus the errors it found;
//! spans in both are byte ranges relative to the text given. The `*_errors`
//! variants return raw [`SyntaxError`]s (code and byte range) for callers that
//! parse a fragment of a larger file and must shift ranges before rendering them.

#![cfg_attr(test, allow(clippy::disallowed_methods, reason = "tests use files"))]

pub mod ast;
pub mod codes;
mod errors;
mod hash_form;
pub mod lexer;
mod parser;
mod printer;
mod spans;
pub mod visit;

pub use codes::SyntaxCode;
pub use errors::{MAX_PROBLEMS, SyntaxError, to_diagnostics};
pub use parser::MAX_NESTING;

use trellis_diag::Diagnostic;

use ast::{Expr, Item, Pattern, Signature, SourceFile, Type, TypeDecl};
use parser::Parser;
use printer::Printer;

/// Parses a whole `.soil` file (spec §7).
pub fn parse_file(text: &str) -> (SourceFile, Vec<Diagnostic>) {
    let (file, errors) = parse_file_errors(text);
    (file, to_diagnostics(text, &errors))
}

/// Parses a `.tr` `soil-sig` block: one `name : Type`.
pub fn parse_signature(text: &str) -> (Option<Signature>, Vec<Diagnostic>) {
    let (sig, errors) = parse_signature_errors(text);
    (sig, to_diagnostics(text, &errors))
}

/// Parses one type (spec §3).
pub fn parse_type(text: &str) -> (Option<Type>, Vec<Diagnostic>) {
    let (ty, errors) = parse_type_errors(text);
    (ty, to_diagnostics(text, &errors))
}

/// Parses a `.tr` `soil-type` block: one `type ...` declaration (spec §4).
pub fn parse_type_decl(text: &str) -> (Option<TypeDecl>, Vec<Diagnostic>) {
    let (decl, errors) = parse_type_decl_errors(text);
    (decl, to_diagnostics(text, &errors))
}

/// Parses one expression; `implies` and `is` are rejected (spec §11).
pub fn parse_expr(text: &str) -> (Option<Expr>, Vec<Diagnostic>) {
    let (expr, errors) = parse_expr_errors(text);
    (expr, to_diagnostics(text, &errors))
}

/// Parses a predicate: an expression that may also use `implies` and `is` (spec §11).
pub fn parse_predicate(text: &str) -> (Option<Expr>, Vec<Diagnostic>) {
    let (expr, errors) = parse_predicate_errors(text);
    (expr, to_diagnostics(text, &errors))
}

/// Parses exactly one item (spec §7).
pub fn parse_item(text: &str) -> (Option<Item>, Vec<Diagnostic>) {
    let (item, errors) = Parser::new(text).item_fragment();
    (item, to_diagnostics(text, &errors))
}

pub fn parse_file_errors(text: &str) -> (SourceFile, Vec<SyntaxError>) {
    Parser::new(text).source_file()
}

pub fn parse_signature_errors(text: &str) -> (Option<Signature>, Vec<SyntaxError>) {
    Parser::new(text).signature_fragment()
}

pub fn parse_type_errors(text: &str) -> (Option<Type>, Vec<SyntaxError>) {
    Parser::new(text).type_fragment()
}

pub fn parse_type_decl_errors(text: &str) -> (Option<TypeDecl>, Vec<SyntaxError>) {
    Parser::new(text).type_decl_fragment()
}

pub fn parse_expr_errors(text: &str) -> (Option<Expr>, Vec<SyntaxError>) {
    Parser::new(text).expr_fragment(false)
}

pub fn parse_predicate_errors(text: &str) -> (Option<Expr>, Vec<SyntaxError>) {
    Parser::new(text).expr_fragment(true)
}

/// The canonical text of a file (spec §9): items separated by one blank line, a
/// trailing newline, no comments. The empty file prints as the empty string.
pub fn print_file(file: &SourceFile) -> String {
    // The source length is a good estimate of the canonical text's length.
    let mut printer = Printer::with_capacity(file.span.len() as usize + 64);
    printer.file(file);
    printer.finish()
}

/// The canonical text of one item, with a trailing newline.
pub fn print_item(item: &Item) -> String {
    let mut printer = Printer::canonical();
    printer.item(item);
    printer.finish()
}

/// The canonical text of a type (no trailing newline).
pub fn print_type(ty: &Type) -> String {
    let mut printer = Printer::canonical();
    printer.ty(ty);
    printer.finish()
}

/// The canonical text of a type declaration (no trailing newline).
pub fn print_type_decl(decl: &TypeDecl) -> String {
    let mut printer = Printer::canonical();
    printer.type_decl(decl);
    printer.finish()
}

/// The canonical text of an expression or predicate (no trailing newline).
pub fn print_expr(expr: &Expr) -> String {
    let mut printer = Printer::canonical();
    printer.expr(expr, 0);
    printer.finish()
}

/// The canonical text of a pattern.
pub fn print_pattern(pattern: &Pattern) -> String {
    let mut printer = Printer::canonical();
    printer.pattern(pattern, &mut Vec::new());
    printer.finish()
}

/// The hash form of one item (spec §9.1), with a trailing newline.
pub fn hash_form_item(item: &Item) -> String {
    let mut printer = Printer::hash_form();
    printer.item(item);
    printer.finish()
}

/// The hash form of a predicate or other free-standing expression: its local
/// binders numbered from `%0`.
pub fn hash_form_expr(expr: &Expr) -> String {
    let mut printer = Printer::hash_form();
    printer.expr(expr, 0);
    printer.finish()
}
