//! The checker's input (an [`Env`] of type declarations and a callee-first
//! [`Program`]) and output ([`CheckFacts`] per definition, or diagnostics).

use std::sync::Arc;

use soil_syntax::ast;
use trellis_diag::Diagnostic;

pub use crate::error::SourceText;

/// An AST together with the text its spans point into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located<T> {
    pub node: T,
    pub source: Arc<SourceText>,
}

/// The type environment: declarations from the `.tr` `soil-type` blocks (or
/// env.json), in any order. The prelude's types are always present.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Env {
    pub types: Vec<Located<ast::TypeDecl>>,
}

/// The definitions to check, callee-first (soil0-cli §7).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    pub definitions: Vec<Definition>,
    /// Definitions known by their signature alone: callers see the declared
    /// type, their bodies are not checked and report nothing. A host checking one
    /// definition passes its signed callees this way, so the check does not depend
    /// on their bodies; it must still pass in full any definition the checked one
    /// reaches through mutual recursion, since the recursion check reads bodies.
    pub declarations: Vec<Declaration>,
}

/// A definition by its declared signature only (see [`Program::declarations`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declaration {
    /// `module::name`.
    pub name: String,
    pub signature: Located<ast::Signature>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Definition {
    /// `module::name`.
    pub name: String,
    /// The declared signature; `None` means the type is inferred (callers must
    /// then come after it).
    pub signature: Option<Located<ast::Signature>>,
    pub equation: Located<std::sync::Arc<ast::Equation>>,
    pub clauses: Vec<Clause>,
    pub allow: Vec<Allow>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClauseKind {
    Requires,
    Ensures,
}

impl ClauseKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ClauseKind::Requires => "requires",
            ClauseKind::Ensures => "ensures",
        }
    }
}

/// A labelled requires/ensures predicate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clause {
    pub kind: ClauseKind,
    pub label: String,
    pub predicate: Located<ast::Expr>,
}

/// An escape hatch granted by the spec's `allow`, e.g.
/// `nonstructural-recursion` with the human's reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allow {
    pub hatch: String,
    pub reason: String,
}

/// The escape hatch that admits recursion the checker cannot see terminate.
pub const NONSTRUCTURAL_RECURSION: &str = "nonstructural-recursion";

/// What checking established about one definition (soil0-cli §8.4). Contains no
/// positions, so it is stable under reformatting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckFacts {
    pub definition: String,
    /// The declared signature's type in canonical text (inferred when unsigned).
    pub signature: String,
    /// The labels of the signature's effect rows (and declared row variables),
    /// sorted.
    pub row: Vec<String>,
    pub clauses: Vec<ClauseFact>,
    /// `non-recursive`, `structural` or `allowed: <reason>`.
    pub termination: String,
    pub holes: Vec<HoleFact>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClauseFact {
    pub kind: ClauseKind,
    pub label: String,
    /// Always `runtime` until a refinement prover exists (lock-schema §4).
    pub assurance: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HoleFact {
    pub name: String,
    pub goal: String,
    /// Parameters and locals in scope at the hole, outermost first.
    pub scope: Vec<ScopeEntry>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeEntry {
    pub name: String,
    pub ty: String,
}

/// The result of checking a program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Problems in the environment's type declarations.
    pub env_errors: Vec<Diagnostic>,
    pub definitions: Vec<DefinitionReport>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefinitionReport {
    pub name: String,
    pub outcome: Result<CheckFacts, Vec<Diagnostic>>,
}

impl CheckReport {
    /// Every definition's facts, or every diagnostic (env first, then definitions
    /// in program order).
    pub fn into_result(self) -> Result<Vec<CheckFacts>, Vec<Diagnostic>> {
        let mut errors = self.env_errors;
        let mut facts = Vec::new();
        for report in self.definitions {
            match report.outcome {
                Ok(f) => facts.push(f),
                Err(d) => errors.extend(d),
            }
        }
        if errors.is_empty() {
            Ok(facts)
        } else {
            Err(errors)
        }
    }

    /// The facts of one definition, or the diagnostics that prevent them: the
    /// environment's and that definition's own. (Errors in other definitions do
    /// not block it: callers are checked against declared signatures.)
    pub fn for_definition(&self, name: &str) -> Option<Result<CheckFacts, Vec<Diagnostic>>> {
        let report = self.definitions.iter().find(|r| r.name == name)?;
        let mut errors = self.env_errors.clone();
        match &report.outcome {
            Ok(facts) if errors.is_empty() => Some(Ok(facts.clone())),
            Ok(_) => Some(Err(errors)),
            Err(own) => {
                errors.extend(own.iter().cloned());
                Some(Err(errors))
            }
        }
    }
}
