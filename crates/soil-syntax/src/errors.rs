//! Syntax errors as the lexer and parser record them (a code, a byte range, a
//! message), and their conversion to `trellis_diag::Diagnostic` once the caller
//! knows which text (and which offset in it) the range belongs to.

use trellis_diag::{Diagnostic, LineIndex, TextRange};

use crate::codes::SyntaxCode;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub code: SyntaxCode,
    pub range: TextRange,
    pub message: String,
}

impl SyntaxError {
    pub fn new(code: SyntaxCode, range: TextRange, message: impl Into<String>) -> Self {
        Self {
            code,
            range,
            message: message.into(),
        }
    }

    /// This error moved right by `delta` bytes (fragment to file coordinates).
    pub fn shifted(mut self, delta: u32) -> Self {
        self.range = self.range.shifted(delta);
        self
    }

    /// The diagnostic for this error, its range read against `text`.
    pub fn to_diagnostic(&self, text: &str, index: &LineIndex) -> Diagnostic {
        Diagnostic::new(self.code.as_str(), self.message.clone())
            .with_span(index.span(text, self.range))
    }
}

/// Converts errors whose ranges are relative to `text`.
pub fn to_diagnostics(text: &str, errors: &[SyntaxError]) -> Vec<Diagnostic> {
    if errors.is_empty() {
        return Vec::new();
    }
    let index = LineIndex::new(text);
    errors
        .iter()
        .map(|error| error.to_diagnostic(text, &index))
        .collect()
}
