//! The one place this crate calls the Soil parser, so there is exactly one grammar
//! for types and predicates (impl plan step 3). Each function parses the fragment
//! `content[range]` and returns the tree and errors with spans in content
//! coordinates: block-relative, so block values stay equal across edits elsewhere.

use soil_syntax::SyntaxError;
use soil_syntax::ast::{Expr, Signature, Spanned, Type, TypeDecl};
use trellis_diag::TextRange;

pub(crate) fn signature(content: &str) -> (Option<Signature>, Vec<SyntaxError>) {
    soil_syntax::parse_signature_errors(content)
}

pub(crate) fn type_decl(content: &str) -> (Option<TypeDecl>, Vec<SyntaxError>) {
    soil_syntax::parse_type_decl_errors(content)
}

pub(crate) fn predicate(content: &str, range: TextRange) -> (Option<Expr>, Vec<SyntaxError>) {
    fragment(content, range, soil_syntax::parse_predicate_errors)
}

pub(crate) fn ty(content: &str, range: TextRange) -> (Option<Type>, Vec<SyntaxError>) {
    fragment(content, range, soil_syntax::parse_type_errors)
}

fn fragment<T: Spanned>(
    content: &str,
    range: TextRange,
    parse: fn(&str) -> (Option<T>, Vec<SyntaxError>),
) -> (Option<T>, Vec<SyntaxError>) {
    let text = content.get(range.as_usize_range()).unwrap_or_default();
    let (mut node, errors) = parse(text);
    if let Some(node) = &mut node {
        node.shift_spans(range.start);
    }
    let errors = errors.into_iter().map(|e| e.shifted(range.start)).collect();
    (node, errors)
}
