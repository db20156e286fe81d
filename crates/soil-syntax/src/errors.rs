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

/// How many problems one parse reports, and one definition's check (design
/// §3.13): past it the rest are counted by one closing diagnostic. A hundred is
/// more than anyone reads before fixing the first; thousands (one mistake in a
/// large file once yielded 20,002) bury the one that matters and cost the
/// editor seconds to receive.
pub const MAX_PROBLEMS: usize = 100;

/// Keeps the first [`MAX_PROBLEMS`] of `errors` (sorted by position) and
/// replaces the rest with one `too-many-syntax-problems` at the first of them,
/// counting them (spec §7.3).
pub(crate) fn cap(errors: &mut Vec<SyntaxError>) {
    if errors.len() <= MAX_PROBLEMS {
        return;
    }
    let left_out = errors.len() - MAX_PROBLEMS;
    let first = errors[MAX_PROBLEMS].range;
    errors.truncate(MAX_PROBLEMS);
    errors.push(SyntaxError::new(
        SyntaxCode::TooManySyntaxProblems,
        first,
        format!(
            "{left_out} more syntax problem{} not reported: the first {MAX_PROBLEMS} are; fix those and parse again",
            if left_out == 1 { "" } else { "s" }
        ),
    ));
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
