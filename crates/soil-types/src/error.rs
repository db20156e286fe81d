//! Checker findings before they are rendered: a code, a message, notes and a byte
//! range in one of the definition's source texts.

use std::sync::Arc;

use trellis_diag::{Diagnostic, LineIndex, TextRange};

use crate::codes::Code;

/// The text an AST was parsed from, so byte ranges can become line/column spans.
/// `text: None` means the AST was synthesized (or its text is not meaningful to a
/// reader, as for env.json declarations): diagnostics then carry no span.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceText {
    pub file: Option<String>,
    pub text: Option<Arc<str>>,
}

impl SourceText {
    pub fn new(file: Option<String>, text: &str) -> Arc<SourceText> {
        Arc::new(SourceText {
            file,
            text: Some(Arc::from(text)),
        })
    }

    pub fn unlocated(file: Option<String>) -> Arc<SourceText> {
        Arc::new(SourceText { file, text: None })
    }

    /// Renders a finding located in this text.
    pub(crate) fn diagnostic(&self, error: &TypeError) -> Diagnostic {
        let mut diagnostic = Diagnostic::new(error.code.as_str(), error.message.clone());
        if let Some(file) = &self.file {
            diagnostic = diagnostic.with_file(file.clone());
        }
        if let (Some(text), Some(range)) = (&self.text, error.range) {
            diagnostic = diagnostic.with_span(LineIndex::new(text).span(text, range));
        }
        for note in &error.notes {
            diagnostic = diagnostic.with_note(note.clone());
        }
        diagnostic
    }
}

/// Which of a definition's texts a finding points into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    Signature,
    Equation,
    Clause(usize),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TypeError {
    pub code: Code,
    pub message: String,
    pub range: Option<TextRange>,
    pub notes: Vec<String>,
    pub origin: Origin,
}

impl TypeError {
    pub(crate) fn new(code: Code, message: impl Into<String>, range: TextRange) -> TypeError {
        TypeError {
            code,
            message: message.into(),
            range: Some(range),
            notes: Vec::new(),
            origin: Origin::Equation,
        }
    }

    pub(crate) fn note(mut self, note: impl Into<String>) -> TypeError {
        self.notes.push(note.into());
        self
    }
}
