//! `requires`, `ensures` and `invariant`: labelled predicates (tr-grammar §3.2).

use trellis_diag::TextRange;

use crate::codes::TrCode;
use crate::lines::{is_word, logical_lines, trimmed};
use crate::model::Clause;
use crate::report::Findings;
use crate::soil;

pub(crate) fn parse(content: &str, findings: &mut Findings) -> Vec<Clause> {
    let mut clauses: Vec<Clause> = Vec::new();
    for line in logical_lines(content) {
        let Some((label, source, source_range)) = split_label(line.text, line.range.start) else {
            findings.push(
                TrCode::BadClause,
                first_line(line.text, line.range.start),
                "expected a clause `label: predicate` starting in column 1",
            );
            continue;
        };
        let label_range = TextRange::new(line.range.start, line.range.start + label.len() as u32);
        if let Some(first) = clauses.iter().find(|clause| clause.label == label) {
            findings.duplicate(
                TrCode::DuplicateClauseLabel,
                label_range,
                format!("the label `{label}` is already used in this block"),
                first.label_range,
            );
            continue;
        }
        let predicate = if source.is_empty() {
            findings.push(
                TrCode::BadClause,
                label_range,
                format!("the clause `{label}` has no predicate"),
            );
            None
        } else {
            let (expr, errors) = soil::predicate(content, source_range);
            findings.soil(errors);
            expr
        };
        clauses.push(Clause {
            label: label.to_owned(),
            label_range,
            source: source.to_owned(),
            source_range,
            predicate,
        });
    }
    clauses
}

/// `label: rest` → the label, the trimmed rest and its range.
fn split_label(text: &str, base: u32) -> Option<(&str, &str, TextRange)> {
    let colon = text.find(':')?;
    let label = &text[..colon];
    let after = &text[colon + 1..];
    let label_ok = is_word(
        label,
        |c| c.is_ascii_lowercase() || c == '_',
        |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-',
    );
    let separated = after.is_empty() || after.starts_with([' ', '\t', '\n', '\r']);
    if !label_ok || !separated {
        return None;
    }
    let (source, range) = trimmed(after, base + colon as u32 + 1);
    Some((label, source, range))
}

/// The first physical line of a logical line: where a diagnostic points.
pub(crate) fn first_line(text: &str, base: u32) -> TextRange {
    let end = text.find('\n').unwrap_or(text.len());
    TextRange::new(base, base + text[..end].trim_end().len() as u32)
}
