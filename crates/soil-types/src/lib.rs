//! `soil-types` owns Soil's static semantics: the builtin prelude's types (as Soil
//! text, [`PRELUDE`]), name resolution, Hindley–Milner inference anchored on
//! declared signatures, nominal records and sums, operator constraints, effect rows
//! with subsumption, match exhaustiveness and redundancy, termination (structural
//! recursion or an `allow` escape hatch), typed holes, and the check facts of
//! soil0-cli §8.4; plus the decoding of env.json and program.json into its input.
//! It depends on `soil-syntax` (trees, printing) and `trellis-diag` only: never on
//! the runtime, the interpreter, files or the database, and it does no I/O.
//!
//! Entry points: [`check_program`] (an [`Env`] and a callee-first [`Program`] in,
//! a [`CheckReport`] of [`CheckFacts`] or diagnostics per definition out);
//! [`name_types`] (the same check, reporting each name's type for an editor's hover);
//! [`decode_env`] / [`decode_program`] (the soil0-cli §6/§7 documents);
//! [`check_json`] (`soil0 check` in one call: documents in, output document out);
//! [`facts_json`] / [`check_document`] (the §8.4 output); [`PRELUDE`] and
//! [`prelude_names`]; [`prelude_reference`] (docs/prelude.md, rendered from the
//! table and the prose in [`PRELUDE_DOCS`]); [`Code`] (every diagnostic code, `Code::ALL`).

#![cfg_attr(test, allow(clippy::disallowed_methods, reason = "tests use files"))]

mod check;
mod codes;
mod env;
mod error;
mod exhaustive;
mod hints;
mod infer;
mod json;
mod prelude;
mod prelude_doc;
mod program;
mod termination;
mod ty;
mod unify;

pub use check::{
    DeclaredEnv, NameType, check_declared, check_program, name_types, name_types_declared,
};
pub use codes::Code;
pub use env::EFFECT_LABELS;
pub use json::{check_document, check_json, decode_env, decode_program, facts_json};
pub use prelude::{PRELUDE, prelude_names};
pub use prelude_doc::{
    BuiltinDoc, DocSection, Example, PRELUDE_DOCS, prelude_reference, reference_problems,
};
pub use program::{
    Allow, CheckFacts, CheckReport, Clause, ClauseFact, ClauseKind, Declaration, Definition,
    DefinitionReport, Env, HoleFact, Located, NONSTRUCTURAL_RECURSION, Program, ScopeEntry,
    SourceText,
};
