//! Every diagnostic code this crate emits, in one place (registered in
//! `registry/diagnostics.json` with source `trellis`, spec_ref `design#4.5`).

/// A verification diagnostic code. The string form is contractual; message
/// wording is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    /// A differential oracle failed to produce a comparable result.
    OracleError,
    /// Two expect cases give the same input different expected outputs.
    PreflightContradiction,
    /// A requires clause that no expect-case input satisfies.
    PreflightVacuousRequires,
    /// An ensures clause that holds syntactically, whatever the result.
    PreflightTrivialEnsures,
    /// A result variant no expect case ever expects.
    PreflightUnexercisedVariant,
    /// A property, clause or reference wrapper that does not check or compile.
    TestPredicateUnrunnable,
    /// A requires clause rejected so many generated inputs that an
    /// ensures-derived property would pass vacuously.
    TestRequiresTooSelective,
    /// A property binder whose type has no generator (functions, capabilities,
    /// unresolved type parameters, opaque declarations).
    TestUngenerableType,
}

impl Code {
    pub const ALL: &'static [Code] = &[
        Code::OracleError,
        Code::PreflightContradiction,
        Code::PreflightVacuousRequires,
        Code::PreflightTrivialEnsures,
        Code::PreflightUnexercisedVariant,
        Code::TestPredicateUnrunnable,
        Code::TestRequiresTooSelective,
        Code::TestUngenerableType,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Code::OracleError => "oracle-error",
            Code::PreflightContradiction => "preflight-contradiction",
            Code::PreflightVacuousRequires => "preflight-vacuous-requires",
            Code::PreflightTrivialEnsures => "preflight-trivial-ensures",
            Code::PreflightUnexercisedVariant => "preflight-unexercised-variant",
            Code::TestPredicateUnrunnable => "test-predicate-unrunnable",
            Code::TestRequiresTooSelective => "test-requires-too-selective",
            Code::TestUngenerableType => "test-ungenerable-type",
        }
    }

    /// The registry's repair class for this code.
    pub const fn repair_class(self) -> &'static str {
        match self {
            Code::OracleError => "fix-runtime",
            _ => "fix-spec",
        }
    }

    pub fn diagnostic(self, message: impl Into<String>) -> trellis_diag::Diagnostic {
        trellis_diag::Diagnostic::new(self.as_str(), message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_registered_with_its_class() {
        let declared = Code::ALL
            .iter()
            .map(|code| (code.as_str(), "trellis", code.repair_class(), "design#4.5"));
        assert_eq!(
            trellis_diag::registry::mismatches(declared),
            Vec::<String>::new()
        );
    }
}
