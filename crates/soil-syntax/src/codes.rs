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
    TooManySyntaxProblems,
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
        SyntaxCode::TooManySyntaxProblems,
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
            SyntaxCode::TooManySyntaxProblems => "too-many-syntax-problems",
            SyntaxCode::UnclosedDelimiter => "unclosed-delimiter",
            SyntaxCode::UnexpectedCharacter => "unexpected-character",
            SyntaxCode::UnexpectedToken => "unexpected-token",
            SyntaxCode::UnterminatedString => "unterminated-string",
        }
    }

    /// What the code means, in one line (for rendered code tables).
    pub fn summary(self) -> &'static str {
        match self {
            SyntaxCode::DuplicateField => {
                "a field is written twice in one record type, construction, update or pattern"
            }
            SyntaxCode::DuplicateVariant => "two variants of one sum declaration share a name",
            SyntaxCode::ExpectedItem => "a token that cannot begin an item where one should begin",
            SyntaxCode::FloatPattern => "a floating-point literal used as a pattern",
            SyntaxCode::InvalidEscape => "an unknown or malformed escape in a string literal",
            SyntaxCode::InvalidHole => "`?` not directly followed by a lower-case hole name",
            SyntaxCode::InvalidNamedParameter => "a named parameter `(x : T)` not followed by `->`",
            SyntaxCode::InvalidNumber => "a malformed or out-of-range numeric literal",
            SyntaxCode::MissingEnd => "a `match` not closed by `end`",
            SyntaxCode::NestingTooDeep => "expressions, types or patterns nested too deeply",
            SyntaxCode::NonAssociativeOperator => "chained comparisons such as `a < b < c`",
            SyntaxCode::PredicateOnlyOperator => "`implies` or `is` outside a predicate",
            SyntaxCode::TooManySyntaxProblems => {
                "more problems in one text than are reported; it counts the rest"
            }
            SyntaxCode::UnclosedDelimiter => "a bracket still open at the end of the input",
            SyntaxCode::UnexpectedCharacter => "a character that belongs to no token",
            SyntaxCode::UnexpectedToken => {
                "a token that cannot continue the construct being parsed"
            }
            SyntaxCode::UnterminatedString => "a string literal not closed on its line",
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
            SyntaxCode::TooManySyntaxProblems => "soil-syntax-spec#7.3",
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
