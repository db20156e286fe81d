//! Checker findings before they are rendered: a code, a message, notes and a byte
//! range in one of the definition's source texts.

use std::sync::Arc;

use rustc_hash::FxHashMap;
use soil_syntax::MAX_PROBLEMS;
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

    /// A source whose text is already shared (a database's input): held,
    /// not copied. A helper's source is its whole `_private.soil`, and every
    /// checked helper and declaration of the module holds it.
    pub fn shared(file: Option<String>, text: Arc<str>) -> Arc<SourceText> {
        Arc::new(SourceText {
            file,
            text: Some(text),
        })
    }

    pub fn unlocated(file: Option<String>) -> Arc<SourceText> {
        Arc::new(SourceText { file, text: None })
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

/// One definition's findings: the first [`MAX_PROBLEMS`] kept, the rest only
/// counted (and the first of them located), so a body with thousands of
/// mistakes costs no more to report than one with a hundred (design §3.13).
#[derive(Debug, Default)]
pub(crate) struct Findings {
    pub kept: Vec<TypeError>,
    pub left_out: usize,
    /// Where the first finding left out was, and in which text.
    pub first_left_out: Option<(Option<TextRange>, Origin)>,
}

impl Findings {
    pub(crate) fn is_empty(&self) -> bool {
        self.kept.is_empty() && self.left_out == 0
    }

    /// Whether a further finding would only be counted.
    pub(crate) fn full(&self) -> bool {
        self.kept.len() >= MAX_PROBLEMS
    }

    /// Keeps `error` unless it repeats one kept, or counts it once full.
    pub(crate) fn add(&mut self, error: TypeError) {
        if self.full() {
            self.leave_out(error.range, error.origin);
        } else if !self.kept.contains(&error) {
            self.kept.push(error);
        }
    }

    /// Counts a finding that is not kept.
    pub(crate) fn leave_out(&mut self, range: Option<TextRange>, origin: Origin) {
        self.left_out += 1;
        self.first_left_out.get_or_insert((range, origin));
    }

    /// The finding that stands for those left out, if any were.
    pub(crate) fn left_out_finding(&self) -> Option<TypeError> {
        let (range, origin) = self.first_left_out?;
        let count = self.left_out;
        Some(TypeError {
            code: Code::TooManyTypeProblems,
            message: format!(
                "{count} more problem{} in this definition not reported: the first {MAX_PROBLEMS} are; fix those and check again",
                if count == 1 { "" } else { "s" }
            ),
            range,
            notes: Vec::new(),
            origin,
        })
    }
}

/// Line indexes of the texts findings point into, built once per text however
/// many findings it holds (building one per finding made rendering a file's
/// findings quadratic in its size).
#[derive(Default)]
pub(crate) struct Renderer {
    /// By the text's address; each entry holds its text so no other can take
    /// that address while the renderer lives.
    indexes: FxHashMap<usize, (Arc<SourceText>, LineIndex)>,
}

impl Renderer {
    pub(crate) fn diagnostic(&mut self, source: &Arc<SourceText>, error: &TypeError) -> Diagnostic {
        let mut diagnostic = Diagnostic::new(error.code.as_str(), error.message.clone());
        if let Some(file) = &source.file {
            diagnostic = diagnostic.with_file(file.clone());
        }
        if let (Some(text), Some(range)) = (&source.text, error.range) {
            let (_, index) = self
                .indexes
                .entry(Arc::as_ptr(source) as usize)
                .or_insert_with(|| (source.clone(), LineIndex::new(text)));
            diagnostic = diagnostic.with_span(index.span(text, range));
        }
        for note in &error.notes {
            diagnostic = diagnostic.with_note(note.clone());
        }
        diagnostic
    }
}
