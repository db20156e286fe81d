//! The syntax diagnostic codes, defined once: the parser emits only these, the
//! registry test checks every one is in `registry/diagnostics.json`, and the
//! rejection corpus holds one file per code.

/// Every error the lexer and parser can report. The kebab-case name is the
/// contractual `code`; the spec section is where docs/soil-syntax-spec.md states the
/// rule the code enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SyntaxCode {
    DuplicateField,
    DuplicateVariant,
    ExpectedItem,
    FloatPattern,
    InvalidEscape,
    InvalidHole,
    InvalidNamedParameter,
    InvalidNumber,
    MissingEnd,
    NestingTooDeep,
    NonAssociativeOperator,
    PredicateOnlyOperator,
    UnclosedDelimiter,
    UnexpectedCharacter,
    UnexpectedToken,
    UnterminatedString,
}

impl SyntaxCode {
    pub const ALL: &'static [SyntaxCode] = &[
        SyntaxCode::DuplicateField,
        SyntaxCode::DuplicateVariant,
        SyntaxCode::ExpectedItem,
        SyntaxCode::FloatPattern,
        SyntaxCode::InvalidEscape,
        SyntaxCode::InvalidHole,
        SyntaxCode::InvalidNamedParameter,
        SyntaxCode::InvalidNumber,
        SyntaxCode::MissingEnd,
        SyntaxCode::NestingTooDeep,
        SyntaxCode::NonAssociativeOperator,
        SyntaxCode::PredicateOnlyOperator,
        SyntaxCode::UnclosedDelimiter,
        SyntaxCode::UnexpectedCharacter,
        SyntaxCode::UnexpectedToken,
        SyntaxCode::UnterminatedString,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SyntaxCode::DuplicateField => "duplicate-field",
            SyntaxCode::DuplicateVariant => "duplicate-variant",
            SyntaxCode::ExpectedItem => "expected-item",
            SyntaxCode::FloatPattern => "float-pattern",
            SyntaxCode::InvalidEscape => "invalid-escape",
            SyntaxCode::InvalidHole => "invalid-hole",
            SyntaxCode::InvalidNamedParameter => "invalid-named-parameter",
            SyntaxCode::InvalidNumber => "invalid-number",
            SyntaxCode::MissingEnd => "missing-end",
            SyntaxCode::NestingTooDeep => "nesting-too-deep",
            SyntaxCode::NonAssociativeOperator => "non-associative-operator",
            SyntaxCode::PredicateOnlyOperator => "predicate-only-operator",
            SyntaxCode::UnclosedDelimiter => "unclosed-delimiter",
            SyntaxCode::UnexpectedCharacter => "unexpected-character",
            SyntaxCode::UnexpectedToken => "unexpected-token",
            SyntaxCode::UnterminatedString => "unterminated-string",
        }
    }

    /// The docs/soil-syntax-spec.md section that states the rule (the registry's
    /// `spec_ref`).
    pub fn spec_ref(self) -> &'static str {
        match self {
            SyntaxCode::DuplicateField => "soil-syntax-spec#4.3",
            SyntaxCode::DuplicateVariant => "soil-syntax-spec#4.2",
            SyntaxCode::ExpectedItem => "soil-syntax-spec#7.1",
            SyntaxCode::FloatPattern => "soil-syntax-spec#6.2",
            SyntaxCode::InvalidEscape => "soil-syntax-spec#2.6",
            SyntaxCode::InvalidHole => "soil-syntax-spec#10",
            SyntaxCode::InvalidNamedParameter => "soil-syntax-spec#3.3",
            SyntaxCode::InvalidNumber => "soil-syntax-spec#2.5",
            SyntaxCode::MissingEnd => "soil-syntax-spec#5.9",
            SyntaxCode::NestingTooDeep => "soil-syntax-spec#7.3",
            SyntaxCode::NonAssociativeOperator => "soil-syntax-spec#8",
            SyntaxCode::PredicateOnlyOperator => "soil-syntax-spec#11",
            SyntaxCode::UnclosedDelimiter => "soil-syntax-spec#2.7",
            SyntaxCode::UnexpectedCharacter => "soil-syntax-spec#2.1",
            SyntaxCode::UnexpectedToken => "soil-syntax-spec#7.3",
            SyntaxCode::UnterminatedString => "soil-syntax-spec#2.6",
        }
    }
}

impl std::fmt::Display for SyntaxCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The code strings, for `trellis_diag::registry::missing_codes`.
pub fn all_code_strings() -> impl Iterator<Item = &'static str> {
    SyntaxCode::ALL.iter().map(|code| code.as_str())
}
