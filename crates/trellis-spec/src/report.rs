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

/// Renders findings against the whole file's text.
pub(crate) struct Renderer<'a> {
    text: &'a str,
    index: LineIndex,
}

impl<'a> Renderer<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Self {
            text,
            index: LineIndex::new(text),
        }
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
            let span = self.index.span(self.text, to_file(finding.range));
            let mut diagnostic = Diagnostic::new(finding.code, finding.message).with_span(span);
            if let Some((message, range)) = finding.note {
                diagnostic =
                    diagnostic.with_note_at(message, self.index.span(self.text, to_file(range)));
            }
            out.push(diagnostic);
        }
    }
}
