//! Runtime panics as structured values: what failed, where, and which
//! definitions were being evaluated.

use std::fmt;

use trellis_diag::{Diagnostic, LineIndex, TextRange};

use crate::codes::EvalCode;

/// A run that failed. Never a Rust panic or a crash: division by zero, an
/// explicit `panic`, a broken clause, or the depth limit all end here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimePanic {
    pub code: EvalCode,
    pub message: String,
    /// The file holding the failing expression, when the definition named one.
    pub file: Option<String>,
    /// The failing expression's byte range in that file's text.
    pub span: Option<TextRange>,
    /// The definitions being evaluated, outermost first, innermost last; runs
    /// of the same definition (deep recursion) collapse to `name (×N)`.
    pub chain: Vec<String>,
}

impl RuntimePanic {
    pub(crate) fn new(code: EvalCode, message: impl Into<String>) -> Box<RuntimePanic> {
        Box::new(RuntimePanic {
            code,
            message: message.into(),
            file: None,
            span: None,
            chain: Vec::new(),
        })
    }

    /// The panic as a diagnostic. `source` is the text of [`Self::file`] when the
    /// caller has it (spans become line/column positions); the chain becomes notes.
    pub fn to_diagnostic(&self, source: Option<&str>) -> Diagnostic {
        let mut diagnostic = Diagnostic::new(self.code.code(), self.message.clone());
        if let Some(file) = &self.file {
            diagnostic = diagnostic.with_file(file.clone());
        }
        if let (Some(span), Some(text)) = (self.span, source) {
            diagnostic = diagnostic.with_span(LineIndex::new(text).span(text, span));
        }
        for (depth, name) in self.chain.iter().enumerate() {
            diagnostic = diagnostic.with_note(format!("#{depth} in {name}"));
        }
        diagnostic
    }
}

impl fmt::Display for RuntimePanic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.code(), self.message)?;
        if let Some(span) = self.span {
            write!(
                f,
                " at {}{}..{}",
                self.file
                    .as_deref()
                    .map(|f| format!("{f}:"))
                    .unwrap_or_default(),
                span.start,
                span.end
            )?;
        }
        if !self.chain.is_empty() {
            write!(f, " in {}", self.chain.join(" > "))?;
        }
        Ok(())
    }
}

/// Collapses consecutive repeats: `[f, g, g, g]` → `[f, g (×3)]`.
pub(crate) fn collapse_chain<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for name in names {
        match out.last_mut() {
            Some((last, count)) if last == name => *count += 1,
            _ => out.push((name.to_owned(), 1)),
        }
    }
    out.into_iter()
        .map(|(name, count)| {
            if count == 1 {
                name
            } else {
                format!("{name} (×{count})")
            }
        })
        .collect()
}
