//! The diagnostic every crate emits and every surface renders (contract §6 shape).
//!
//! Optional fields are written in the Soil `Option` encoding (tr-grammar §7):
//! `{"tag":"None"}` or `{"tag":"Some","value":…}`, so a diagnostic is itself a
//! Soil-shaped value an agent decodes with the same rules as everything else.
//! It decodes from that shape too, so a client holds the daemon's diagnostics
//! as `Diagnostic`s, not as JSON it walks by hand.

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::position::Span;
use crate::{registry, soil_option};

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

impl Serialize for Note {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Note", 2)?;
        s.serialize_field("message", &self.message)?;
        s.serialize_field("span", &soil_option::Ref(&self.span))?;
        s.end()
    }
}

impl Serialize for Diagnostic {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Diagnostic", 7)?;
        s.serialize_field("code", &self.code)?;
        s.serialize_field("message", &self.message)?;
        s.serialize_field("file", &soil_option::Ref(&self.file))?;
        s.serialize_field("span", &soil_option::Ref(&self.span))?;
        s.serialize_field("notes", &self.notes)?;
        s.serialize_field("repair_class", &self.repair_class)?;
        s.serialize_field("spec_ref", &self.spec_ref)?;
        s.end()
    }
}

impl<'de> Deserialize<'de> for Note {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct Wire {
            message: String,
            #[serde(default, with = "soil_option")]
            span: Option<Span>,
        }
        let Wire { message, span } = Wire::deserialize(deserializer)?;
        Ok(Note { message, span })
    }
}

/// The contract's shape; a diagnostic without `repair_class` or `spec_ref`
/// (another producer's) takes them from the registry, as [`Diagnostic::new`] does.
impl<'de> Deserialize<'de> for Diagnostic {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct Wire {
            code: String,
            #[serde(default)]
            message: String,
            #[serde(default, with = "soil_option")]
            file: Option<String>,
            #[serde(default, with = "soil_option")]
            span: Option<Span>,
            #[serde(default)]
            notes: Vec<Note>,
            repair_class: Option<String>,
            spec_ref: Option<String>,
        }
        let wire = Wire::deserialize(deserializer)?;
        let mut diagnostic = Diagnostic::new(&wire.code, wire.message);
        diagnostic.file = wire.file;
        diagnostic.span = wire.span;
        diagnostic.notes = wire.notes;
        if let Some(class) = wire.repair_class {
            diagnostic.repair_class = class;
        }
        if let Some(spec_ref) = wire.spec_ref {
            diagnostic.spec_ref = spec_ref;
        }
        Ok(diagnostic)
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

    #[test]
    fn decodes_what_it_encodes() {
        let text = "f x =\n  ?gap";
        let index = LineIndex::new(text);
        let diagnostic = Diagnostic::new("unknown-definition", "a message")
            .with_file("m/f.soil")
            .with_span(index.span(text, TextRange::new(8, 12)))
            .with_note("a note")
            .with_note_at("another", index.span(text, TextRange::new(0, 1)));
        let bare = Diagnostic::new("no-such-code-for-test", "bare");
        for original in [diagnostic, bare] {
            let decoded: Diagnostic = serde_json::from_value(original.to_json()).unwrap();
            assert_eq!(decoded, original);
        }
    }

    /// A peer's diagnostic with only a code and a message takes the registry's
    /// repair class; `null` options read as `None`; a missing code is an error.
    #[test]
    fn decodes_a_sparse_peer_diagnostic() {
        let decoded: Diagnostic =
            serde_json::from_str(r#"{"code":"no-such-code-for-test","message":"m","file":null}"#)
                .unwrap();
        assert_eq!(decoded, Diagnostic::new("no-such-code-for-test", "m"));
        assert!(serde_json::from_str::<Diagnostic>(r#"{"message":"m"}"#).is_err());
        assert!(
            serde_json::from_str::<Diagnostic>(r#"{"code":"c","file":{"tag":"Maybe"}}"#).is_err()
        );
    }
}
