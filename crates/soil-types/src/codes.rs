//! The checker's diagnostic codes: the one list, registered in `registry/diagnostics.json`.

/// Every diagnostic code `soil-types` emits (soil0-cli §2). Codes are contractual;
/// messages are not (soil0-cli §12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    AmbiguousConcat,
    AmbiguousField,
    AmbiguousNumeric,
    ArityMismatch,
    BadEnv,
    BadProgram,
    CalleeOrder,
    DuplicateBinding,
    DuplicateConstructor,
    DuplicateDefinition,
    DuplicateField,
    DuplicateType,
    EffectNotDeclared,
    InfiniteType,
    MissingField,
    NonExhaustiveMatch,
    NonstructuralRecursion,
    NotComparable,
    PredicateEffect,
    PredicateNotBool,
    RedundantPattern,
    RefutablePattern,
    SignatureMismatch,
    /// More problems in one definition than are reported (design §3.13).
    TooManyTypeProblems,
    TypeMismatch,
    UnknownConstructor,
    UnknownDefinition,
    UnknownEffect,
    UnknownField,
    UnknownName,
    UnknownType,
    WrongConstructorForm,
}

impl Code {
    pub const ALL: &'static [Code] = &[
        Code::AmbiguousConcat,
        Code::AmbiguousField,
        Code::AmbiguousNumeric,
        Code::ArityMismatch,
        Code::BadEnv,
        Code::BadProgram,
        Code::CalleeOrder,
        Code::DuplicateBinding,
        Code::DuplicateConstructor,
        Code::DuplicateDefinition,
        Code::DuplicateField,
        Code::DuplicateType,
        Code::EffectNotDeclared,
        Code::InfiniteType,
        Code::MissingField,
        Code::NonExhaustiveMatch,
        Code::NonstructuralRecursion,
        Code::NotComparable,
        Code::PredicateEffect,
        Code::PredicateNotBool,
        Code::RedundantPattern,
        Code::RefutablePattern,
        Code::SignatureMismatch,
        Code::TooManyTypeProblems,
        Code::TypeMismatch,
        Code::UnknownConstructor,
        Code::UnknownDefinition,
        Code::UnknownEffect,
        Code::UnknownField,
        Code::UnknownName,
        Code::UnknownType,
        Code::WrongConstructorForm,
    ];

    /// The kebab-case code as it appears in diagnostics and the registry.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::AmbiguousConcat => "ambiguous-concat",
            Code::AmbiguousField => "ambiguous-field",
            Code::AmbiguousNumeric => "ambiguous-numeric",
            Code::ArityMismatch => "arity-mismatch",
            Code::BadEnv => "bad-env",
            Code::BadProgram => "bad-program",
            Code::CalleeOrder => "callee-order",
            Code::DuplicateBinding => "duplicate-binding",
            Code::DuplicateConstructor => "duplicate-constructor",
            Code::DuplicateDefinition => "duplicate-definition",
            Code::DuplicateField => "duplicate-field",
            Code::DuplicateType => "duplicate-type",
            Code::EffectNotDeclared => "effect-not-declared",
            Code::InfiniteType => "infinite-type",
            Code::MissingField => "missing-field",
            Code::NonExhaustiveMatch => "non-exhaustive-match",
            Code::NonstructuralRecursion => "nonstructural-recursion",
            Code::NotComparable => "not-comparable",
            Code::PredicateEffect => "predicate-effect",
            Code::PredicateNotBool => "predicate-not-bool",
            Code::RedundantPattern => "redundant-pattern",
            Code::RefutablePattern => "refutable-pattern",
            Code::SignatureMismatch => "signature-mismatch",
            Code::TooManyTypeProblems => "too-many-type-problems",
            Code::TypeMismatch => "type-mismatch",
            Code::UnknownConstructor => "unknown-constructor",
            Code::UnknownDefinition => "unknown-definition",
            Code::UnknownEffect => "unknown-effect",
            Code::UnknownField => "unknown-field",
            Code::UnknownName => "unknown-name",
            Code::UnknownType => "unknown-type",
            Code::WrongConstructorForm => "wrong-constructor-form",
        }
    }

    /// All codes as strings, for registry cross-checks.
    pub fn all_strs() -> impl Iterator<Item = &'static str> {
        Code::ALL.iter().map(|code| code.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_registered() {
        assert_eq!(
            trellis_diag::registry::missing_codes(Code::all_strs()),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn the_list_is_sorted_and_unique() {
        let names: Vec<&str> = Code::all_strs().collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(names, sorted);
    }
}
