//! Diagnostics in the making: block parsers record problems in content
//! coordinates, and only the final rendering maps them to file lines and columns.

use soil_syntax::SyntaxError;
use trellis_diag::{Diagnostic, LineIndex, TextRange};

use crate::codes::TrCode;
use crate::model::BlockLocation;

/// Problems found while parsing one unit (a block's content, or the whole file),
/// in that unit's coordinates.
#[derive(Default)]
pub(crate) struct Findings {
    items: Vec<Finding>,
}

/// A code (ours, or a Soil syntax code passed through), a message and a range.
struct Finding {
    code: &'static str,
    message: String,
    range: TextRange,
    /// A second place worth seeing: the first occurrence of a duplicate.
    note: Option<(String, TextRange)>,
}

impl Findings {
    pub(crate) fn push(&mut self, code: TrCode, range: TextRange, message: impl Into<String>) {
        self.items.push(Finding {
            code: code.as_str(),
            message: message.into(),
            range,
            note: None,
        });
    }

    /// A duplicate, with a note pointing at the first occurrence.
    pub(crate) fn duplicate(
        &mut self,
        code: TrCode,
        range: TextRange,
        message: impl Into<String>,
        first: TextRange,
    ) {
        self.items.push(Finding {
            code: code.as_str(),
            message: message.into(),
            range,
            note: Some(("first used here".to_owned(), first)),
        });
    }

    /// Soil syntax errors, already in the unit's coordinates.
    pub(crate) fn soil(&mut self, errors: Vec<SyntaxError>) {
        for error in errors {
            self.items.push(Finding {
                code: error.code.as_str(),
                message: error.message,
                range: error.range,
                note: None,
            });
        }
    }
}

/// Renders findings against the whole file's text. The line index is built
/// at the first finding: most files have none, and indexing every spec's
/// lines was a fiftieth of a cold check.
pub(crate) struct Renderer<'a> {
    text: &'a str,
    index: std::cell::OnceCell<LineIndex>,
}

impl<'a> Renderer<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Self {
            text,
            index: std::cell::OnceCell::new(),
        }
    }

    fn span(&self, range: TextRange) -> trellis_diag::Span {
        let index = self.index.get_or_init(|| LineIndex::new(self.text));
        index.span(self.text, range)
    }

    /// Findings whose ranges are already file offsets.
    pub(crate) fn file_level(&self, findings: Findings, out: &mut Vec<Diagnostic>) {
        self.render(findings, &|range| range, out);
    }

    /// Findings whose ranges are offsets into a block's content.
    pub(crate) fn in_block(
        &self,
        findings: Findings,
        location: &BlockLocation,
        out: &mut Vec<Diagnostic>,
    ) {
        self.render(findings, &|range| location.file_range(range), out);
    }

    fn render(
        &self,
        findings: Findings,
        to_file: &dyn Fn(TextRange) -> TextRange,
        out: &mut Vec<Diagnostic>,
    ) {
        for finding in findings.items {
            let span = self.span(to_file(finding.range));
            let mut diagnostic = Diagnostic::new(finding.code, finding.message).with_span(span);
            if let Some((message, range)) = finding.note {
                diagnostic = diagnostic.with_note_at(message, self.span(to_file(range)));
            }
            out.push(diagnostic);
        }
    }
}
