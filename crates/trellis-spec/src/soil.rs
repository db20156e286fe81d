//! The one place this crate calls the Soil parser, so there is exactly one grammar
//! for types and predicates (impl plan step 3). Every function parses a fragment;
//! returned spans and errors are relative to that fragment, and stay so in the
//! tree (block-relative positions keep block values equal across prose edits).

use soil_syntax::SyntaxError;
use soil_syntax::ast::{Expr, Signature, Type, TypeDecl};

pub(crate) fn signature(text: &str) -> (Option<Signature>, Vec<SyntaxError>) {
    soil_syntax::parse_signature_errors(text)
}

pub(crate) fn type_decl(text: &str) -> (Option<TypeDecl>, Vec<SyntaxError>) {
    soil_syntax::parse_type_decl_errors(text)
}

pub(crate) fn predicate(text: &str) -> (Option<Expr>, Vec<SyntaxError>) {
    soil_syntax::parse_predicate_errors(text)
}

pub(crate) fn ty(text: &str) -> (Option<Type>, Vec<SyntaxError>) {
    soil_syntax::parse_type_errors(text)
}
