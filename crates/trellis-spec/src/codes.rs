//! The `.tr` validity codes, defined once (tr-grammar §6): the parser emits only
//! these, and a test checks every one is in `registry/diagnostics.json`.

/// One validity rule of tr-grammar §6. The kebab-case name is the contractual code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TrCode {
    MissingName,
    BadFrontmatter,
    UnknownFrontmatterKey,
    NameMismatch,
    BadName,
    UndeclaredTag,
    BadInfoString,
    MissingBlockName,
    UnclosedFence,
    DuplicateBlock,
    BlockNotAllowed,
    KindConflict,
    UnknownKind,
    EmptyBlock,
    DefinitionNameMismatch,
    BadClause,
    DuplicateClauseLabel,
    MissingTestBlock,
    DuplicateTestName,
    BadTestCase,
    BadJson,
    PanicWithoutRow,
    BadProperty,
    UnsupportedWhereFilter,
    BadCram,
    BadReference,
    BadAllow,
    UnknownEscapeHatch,
    UnsupportedInvariantProperty,
    BadExports,
    UnknownExport,
    BadDecision,
    DuplicateDecisionLabel,
}

impl TrCode {
    /// Every code, in tr-grammar §6 order (`ALL[i]` is rule §6.(i+1)).
    pub const ALL: &'static [TrCode] = &[
        TrCode::MissingName,
        TrCode::BadFrontmatter,
        TrCode::UnknownFrontmatterKey,
        TrCode::NameMismatch,
        TrCode::BadName,
        TrCode::UndeclaredTag,
        TrCode::BadInfoString,
        TrCode::MissingBlockName,
        TrCode::UnclosedFence,
        TrCode::DuplicateBlock,
        TrCode::BlockNotAllowed,
        TrCode::KindConflict,
        TrCode::UnknownKind,
        TrCode::EmptyBlock,
        TrCode::DefinitionNameMismatch,
        TrCode::BadClause,
        TrCode::DuplicateClauseLabel,
        TrCode::MissingTestBlock,
        TrCode::DuplicateTestName,
        TrCode::BadTestCase,
        TrCode::BadJson,
        TrCode::PanicWithoutRow,
        TrCode::BadProperty,
        TrCode::UnsupportedWhereFilter,
        TrCode::BadCram,
        TrCode::BadReference,
        TrCode::BadAllow,
        TrCode::UnknownEscapeHatch,
        TrCode::UnsupportedInvariantProperty,
        TrCode::BadExports,
        TrCode::UnknownExport,
        TrCode::BadDecision,
        TrCode::DuplicateDecisionLabel,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TrCode::MissingName => "tr-missing-name",
            TrCode::BadFrontmatter => "tr-bad-frontmatter",
            TrCode::UnknownFrontmatterKey => "tr-unknown-frontmatter-key",
            TrCode::NameMismatch => "tr-name-mismatch",
            TrCode::BadName => "tr-bad-name",
            TrCode::UndeclaredTag => "tr-undeclared-tag",
            TrCode::BadInfoString => "tr-bad-info-string",
            TrCode::MissingBlockName => "tr-missing-block-name",
            TrCode::UnclosedFence => "tr-unclosed-fence",
            TrCode::DuplicateBlock => "tr-duplicate-block",
            TrCode::BlockNotAllowed => "tr-block-not-allowed",
            TrCode::KindConflict => "tr-kind-conflict",
            TrCode::UnknownKind => "tr-unknown-kind",
            TrCode::EmptyBlock => "tr-empty-block",
            TrCode::DefinitionNameMismatch => "tr-definition-name-mismatch",
            TrCode::BadClause => "tr-bad-clause",
            TrCode::DuplicateClauseLabel => "tr-duplicate-clause-label",
            TrCode::MissingTestBlock => "tr-missing-test-block",
            TrCode::DuplicateTestName => "tr-duplicate-test-name",
            TrCode::BadTestCase => "tr-bad-test-case",
            TrCode::BadJson => "tr-bad-json",
            TrCode::PanicWithoutRow => "tr-panic-without-row",
            TrCode::BadProperty => "tr-bad-property",
            TrCode::UnsupportedWhereFilter => "unsupported-where-filter",
            TrCode::BadCram => "tr-bad-cram",
            TrCode::BadReference => "tr-bad-reference",
            TrCode::BadAllow => "tr-bad-allow",
            TrCode::UnknownEscapeHatch => "tr-unknown-escape-hatch",
            TrCode::UnsupportedInvariantProperty => "unsupported-invariant-property",
            TrCode::BadExports => "tr-bad-exports",
            TrCode::UnknownExport => "tr-unknown-export",
            TrCode::BadDecision => "tr-bad-decision",
            TrCode::DuplicateDecisionLabel => "tr-duplicate-decision-label",
        }
    }

    /// The registry `spec_ref`: each rule has its own tr-grammar §6 subsection.
    pub fn spec_ref(self) -> String {
        let index = TrCode::ALL
            .iter()
            .position(|&code| code == self)
            .unwrap_or(0);
        format!("tr-grammar#6.{}", index + 1)
    }
}

/// Every code's string, for the registry coverage test and the lead's drift gate.
pub fn all_code_strs() -> Vec<&'static str> {
    TrCode::ALL.iter().map(|code| code.as_str()).collect()
}
