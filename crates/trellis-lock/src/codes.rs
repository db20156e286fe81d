//! Every diagnostic code this crate emits, in one place (registered in
//! `registry/diagnostics.json` with source `trellis`, repair class `fix-lock`).

/// A lock diagnostic code. The string form is contractual; the wording of
/// messages is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    Syntax,
    FormatNewer,
    MissingField,
    UnknownField,
    DuplicateKey,
    BadType,
    BadValue,
    BadHash,
    AcceptedNotGreen,
    HolesTested,
    AuthorPin,
    AuthorFlip,
    OracleMissing,
    OracleUnused,
    OracleNotAccepted,
    Provenance,
    NotLowered,
    TestName,
    TestMode,
    DuplicateRow,
    HelperName,
    Assurance,
    HelperConflict,
}

impl Code {
    pub const ALL: &'static [Code] = &[
        Code::Syntax,
        Code::FormatNewer,
        Code::MissingField,
        Code::UnknownField,
        Code::DuplicateKey,
        Code::BadType,
        Code::BadValue,
        Code::BadHash,
        Code::AcceptedNotGreen,
        Code::HolesTested,
        Code::AuthorPin,
        Code::AuthorFlip,
        Code::OracleMissing,
        Code::OracleUnused,
        Code::OracleNotAccepted,
        Code::Provenance,
        Code::NotLowered,
        Code::TestName,
        Code::TestMode,
        Code::DuplicateRow,
        Code::HelperName,
        Code::Assurance,
        Code::HelperConflict,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Code::Syntax => "lock-syntax",
            Code::FormatNewer => "lock-format-newer",
            Code::MissingField => "lock-missing-field",
            Code::UnknownField => "lock-unknown-field",
            Code::DuplicateKey => "lock-duplicate-key",
            Code::BadType => "lock-bad-type",
            Code::BadValue => "lock-bad-value",
            Code::BadHash => "lock-bad-hash",
            Code::AcceptedNotGreen => "lock-invariant-accepted-not-green",
            Code::HolesTested => "lock-invariant-holes-tested",
            Code::AuthorPin => "lock-invariant-author-pin",
            Code::AuthorFlip => "lock-invariant-author-flip",
            Code::OracleMissing => "lock-invariant-oracle-missing",
            Code::OracleUnused => "lock-invariant-oracle-unused",
            Code::OracleNotAccepted => "lock-invariant-oracle-not-accepted",
            Code::Provenance => "lock-invariant-provenance",
            Code::NotLowered => "lock-invariant-not-lowered",
            Code::TestName => "lock-invariant-test-name",
            Code::TestMode => "lock-invariant-test-mode",
            Code::DuplicateRow => "lock-invariant-duplicate-row",
            Code::HelperName => "lock-invariant-helper-name",
            Code::Assurance => "lock-invariant-assurance",
            Code::HelperConflict => "lock-invariant-helper-conflict",
        }
    }

    /// The lock-schema section that states the rule (the registry's `spec_ref`).
    pub const fn spec_ref(self) -> &'static str {
        match self {
            Code::Syntax
            | Code::FormatNewer
            | Code::MissingField
            | Code::UnknownField
            | Code::DuplicateKey
            | Code::BadType
            | Code::BadValue
            | Code::BadHash => "lock-schema#1.5",
            Code::AcceptedNotGreen => "lock-schema#8.1",
            Code::HolesTested => "lock-schema#8.2",
            Code::AuthorPin | Code::AuthorFlip => "lock-schema#8.3",
            Code::OracleMissing | Code::OracleUnused | Code::OracleNotAccepted => "lock-schema#8.4",
            Code::Provenance
            | Code::NotLowered
            | Code::TestMode
            | Code::DuplicateRow
            | Code::HelperName
            | Code::Assurance => "lock-schema#8.5",
            Code::TestName => "lock-schema#5.2",
            Code::HelperConflict => "lock-schema#7.2",
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
    fn every_code_is_registered_with_its_section() {
        let declared = Code::ALL
            .iter()
            .map(|code| (code.as_str(), "trellis", "fix-lock", code.spec_ref()));
        assert_eq!(
            trellis_diag::registry::mismatches(declared),
            Vec::<String>::new()
        );
    }
}
