//! The diagnostic codes this crate emits (all registered, source "soil0").

/// Why a JSON document was refused (soil0-cli §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonCode {
    /// Not JSON at all (or nested too deeply).
    Syntax,
    /// A value of the wrong JSON kind for the expected type.
    TypeMismatch,
    /// A record field (or `tag` / `value`) is absent.
    MissingField,
    /// An object carries a key the type does not declare.
    ExtraField,
    /// An object names the same key twice.
    DuplicateField,
    /// A `tag` names no variant of the expected sum.
    UnknownTag,
    /// An integer outside the I64 / U64 range.
    IntRange,
    /// A number too large for F64 (non-finite F64s are written as strings).
    FloatRange,
}

impl JsonCode {
    pub const ALL: [JsonCode; 8] = [
        JsonCode::Syntax,
        JsonCode::TypeMismatch,
        JsonCode::MissingField,
        JsonCode::ExtraField,
        JsonCode::DuplicateField,
        JsonCode::UnknownTag,
        JsonCode::IntRange,
        JsonCode::FloatRange,
    ];

    pub const fn code(self) -> &'static str {
        match self {
            JsonCode::Syntax => "json-syntax",
            JsonCode::TypeMismatch => "json-type-mismatch",
            JsonCode::MissingField => "json-missing-field",
            JsonCode::ExtraField => "json-extra-field",
            JsonCode::DuplicateField => "json-duplicate-field",
            JsonCode::UnknownTag => "json-unknown-tag",
            JsonCode::IntRange => "json-int-range",
            JsonCode::FloatRange => "json-float-range",
        }
    }
}

/// Every code this crate can emit.
pub const ALL_CODES: [&str; 8] = [
    JsonCode::Syntax.code(),
    JsonCode::TypeMismatch.code(),
    JsonCode::MissingField.code(),
    JsonCode::ExtraField.code(),
    JsonCode::DuplicateField.code(),
    JsonCode::UnknownTag.code(),
    JsonCode::IntRange.code(),
    JsonCode::FloatRange.code(),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_registered() {
        assert_eq!(
            trellis_diag::registry::missing_codes(ALL_CODES),
            Vec::<&str>::new()
        );
        assert_eq!(JsonCode::ALL.len(), ALL_CODES.len());
    }
}
