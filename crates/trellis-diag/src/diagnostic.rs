//! The diagnostic every crate emits and every surface renders (contract §6 shape).
//!
//! Optional fields are written in the Soil `Option` encoding (tr-grammar §7):
//! `{"tag":"None"}` or `{"tag":"Some","value":…}`, so a diagnostic is itself a
//! Soil-shaped value an agent decodes with the same rules as everything else.

use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};

use crate::position::Span;
use crate::registry;

/// A secondary message, optionally pointing at another place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub message: String,
    pub span: Option<Span>,
}

/// One problem found in some input. `code` is contractual; `message` is not
/// (soil0-cli §12). `repair_class` and `spec_ref` come from the registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: String,
    pub message: String,
    pub file: Option<String>,
    pub span: Option<Span>,
    pub notes: Vec<Note>,
    pub repair_class: String,
    pub spec_ref: String,
}

impl Diagnostic {
    /// A diagnostic for `code`, with its repair class and `spec_ref` looked up in
    /// the registry. A code missing from the registry still produces a diagnostic
    /// (never a panic) with repair class `report-bug`; the registry coverage tests
    /// keep that from shipping.
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        let (repair_class, spec_ref) = match registry::lookup(code) {
            Some(entry) => (entry.repair_class.clone(), entry.spec_ref.clone()),
            None => ("report-bug".to_owned(), String::new()),
        };
        Self {
            code: code.to_owned(),
            message: message.into(),
            file: None,
            span: None,
            notes: Vec::new(),
            repair_class,
            spec_ref,
        }
    }

    pub fn with_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }

    pub fn with_span(mut self, span: Span) -> Self {
        self.span = Some(span);
        self
    }

    pub fn with_note(mut self, message: impl Into<String>) -> Self {
        self.notes.push(Note {
            message: message.into(),
            span: None,
        });
        self
    }

    pub fn with_note_at(mut self, message: impl Into<String>, span: Span) -> Self {
        self.notes.push(Note {
            message: message.into(),
            span: Some(span),
        });
        self
    }

    /// Sets the file on this diagnostic if it has none yet (callers higher up
    /// know the path; parsers below them do not).
    pub fn in_file(mut self, file: &str) -> Self {
        if self.file.is_none() {
            self.file = Some(file.to_owned());
        }
        self
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a diagnostic always serializes")
    }
}

/// The error document `{"errors":[…]}` (soil0-cli §2), compact, as one line.
pub fn errors_document(diagnostics: &[Diagnostic]) -> String {
    let value = serde_json::json!({ "errors": diagnostics });
    serde_json::to_string(&value).expect("diagnostics always serialize")
}

/// Writes an `Option` in the Soil encoding: `{"tag":"None"}` / `{"tag":"Some","value":v}`.
struct SoilOption<'a, T>(&'a Option<T>);

impl<T: Serialize> Serialize for SoilOption<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            None => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("tag", "None")?;
                map.end()
            }
            Some(value) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("tag", "Some")?;
                map.serialize_entry("value", value)?;
                map.end()
            }
        }
    }
}

impl Serialize for Note {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Note", 2)?;
        s.serialize_field("message", &self.message)?;
        s.serialize_field("span", &SoilOption(&self.span))?;
        s.end()
    }
}

impl Serialize for Diagnostic {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Diagnostic", 7)?;
        s.serialize_field("code", &self.code)?;
        s.serialize_field("message", &self.message)?;
        s.serialize_field("file", &SoilOption(&self.file))?;
        s.serialize_field("span", &SoilOption(&self.span))?;
        s.serialize_field("notes", &self.notes)?;
        s.serialize_field("repair_class", &self.repair_class)?;
        s.serialize_field("spec_ref", &self.spec_ref)?;
        s.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::{LineIndex, TextRange};
    use expect_test::expect;

    #[test]
    fn renders_the_contract_shape() {
        let text = "f x =\n  ?gap";
        let span = LineIndex::new(text).span(text, TextRange::new(8, 12));
        let diagnostic = Diagnostic::new("no-such-code-for-test", "a message")
            .with_file("m/f.soil")
            .with_span(span)
            .with_note("a note");
        expect![[r#"{"errors":[{"code":"no-such-code-for-test","message":"a message","file":{"tag":"Some","value":"m/f.soil"},"span":{"tag":"Some","value":{"start":{"line":2,"column":3,"offset":8},"end":{"line":2,"column":7,"offset":12}}},"notes":[{"message":"a note","span":{"tag":"None"}}],"repair_class":"report-bug","spec_ref":""}]}"#]]
            .assert_eq(&errors_document(&[diagnostic]));
    }
}
