//! The diagnostic codes this crate emits (all registered, source "soil0").

/// Why a program was refused or a run failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EvalCode {
    /// An explicit `panic`, division by zero, `at` out of range, `minimum []`...
    RuntimePanic,
    /// The nested-call limit (or the evaluation stack budget) was exceeded.
    DepthLimit,
    /// A `requires` clause evaluated to false on entry.
    RequiresViolated,
    /// An `ensures` clause evaluated to false on exit.
    EnsuresViolated,
    /// A value of the wrong kind reached an operation: only an ill-typed
    /// program gets here.
    RuntimeTypeError,
    /// The definition, or one it reaches, contains a hole.
    UnfilledHole,
    /// Arguments that do not fit the definition (count, capability, no signature).
    BadArguments,
    /// No definition has the requested name.
    UnknownDefinition,
    /// A name the program uses is not defined anywhere.
    UnresolvedName,
    /// Two definitions share a name.
    DuplicateDefinition,
    /// A construct that cannot be compiled (an ill-typed or malformed program).
    InvalidProgram,
}

impl EvalCode {
    pub const ALL: [EvalCode; 11] = [
        EvalCode::RuntimePanic,
        EvalCode::DepthLimit,
        EvalCode::RequiresViolated,
        EvalCode::EnsuresViolated,
        EvalCode::RuntimeTypeError,
        EvalCode::UnfilledHole,
        EvalCode::BadArguments,
        EvalCode::UnknownDefinition,
        EvalCode::UnresolvedName,
        EvalCode::DuplicateDefinition,
        EvalCode::InvalidProgram,
    ];

    pub const fn code(self) -> &'static str {
        match self {
            EvalCode::RuntimePanic => "runtime-panic",
            EvalCode::DepthLimit => "depth-limit",
            EvalCode::RequiresViolated => "requires-violated",
            EvalCode::EnsuresViolated => "ensures-violated",
            EvalCode::RuntimeTypeError => "runtime-type-error",
            EvalCode::UnfilledHole => "unfilled-hole",
            EvalCode::BadArguments => "bad-arguments",
            EvalCode::UnknownDefinition => "unknown-definition",
            EvalCode::UnresolvedName => "eval-unresolved-name",
            EvalCode::DuplicateDefinition => "eval-duplicate-definition",
            EvalCode::InvalidProgram => "eval-invalid-program",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_registered() {
        let codes = EvalCode::ALL.iter().map(|c| c.code());
        assert_eq!(
            trellis_diag::registry::missing_codes(codes),
            Vec::<&str>::new()
        );
    }
}
