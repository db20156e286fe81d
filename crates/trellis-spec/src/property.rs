//! `property` blocks: one `forall` statement (tr-grammar §3.4).

use trellis_diag::TextRange;

use crate::codes::TrCode;
use crate::lines::{is_lower_ident, lines, skip_space, trimmed};
use crate::model::{Binder, Property};
use crate::report::Findings;
use crate::soil;

pub(crate) fn parse(content: &str, findings: &mut Findings) -> Option<Property> {
    // Leading comment lines are skipped; later ones are Soil comments inside the
    // predicate, which the Soil parser reads.
    let start = lines(content)
        .iter()
        .find(|l| !l.is_blank() && !l.is_comment())
        .map_or(content.len(), |l| l.start as usize);
    let (text, range) = trimmed(&content[start..], start as u32);
    let base = range.start as usize;
    let whole = range;
    let Some(after_forall) = text
        .strip_prefix("forall")
        .filter(|r| r.starts_with(char::is_whitespace) || r.starts_with('('))
    else {
        findings.push(
            TrCode::BadProperty,
            first_line_of(text, base),
            "a property is `forall (x : T) ... . predicate`",
        );
        return None;
    };
    if let Some(second) = lines(content)
        .iter()
        .skip_while(|l| l.start < range.start)
        .skip(1)
        .find(|l| l.text.starts_with("forall"))
    {
        findings.push(
            TrCode::BadProperty,
            second.range(),
            "a property block holds exactly one `forall` statement",
        );
        return None;
    }
    let mut at = skip_space(text, text.len() - after_forall.len());
    let mut binders: Vec<Binder> = Vec::new();
    while text[at..].starts_with('(') {
        let Some(close) = matching_paren(text, at) else {
            findings.push(
                TrCode::BadProperty,
                span(base, at, text.len()),
                "this binder has no closing `)`",
            );
            return None;
        };
        binders.push(binder(
            content,
            &text[at + 1..close],
            base + at + 1,
            &binders,
            findings,
        )?);
        at = skip_space(text, close + 1);
    }
    if binders.is_empty() {
        findings.push(
            TrCode::BadProperty,
            span(base, 0, at.max(6)),
            "`forall` needs at least one binder `(x : T)`",
        );
        return None;
    }
    let mut where_range = None;
    if text[at..].starts_with("where") && text[at + 5..].starts_with(char::is_whitespace) {
        let end = statement_dot(text, at + 5).unwrap_or(text.len());
        let filter = span(base, at, end);
        findings.push(
            TrCode::UnsupportedWhereFilter,
            filter,
            "`where` filters need constrained generation, which v1 does not have; write the condition as an `implies` premise",
        );
        where_range = Some(filter);
        at = end;
    }
    if !text[at..].starts_with('.') {
        findings.push(
            TrCode::BadProperty,
            span(base, at, (at + 1).min(text.len())),
            "expected `.` after the binders",
        );
        return None;
    }
    let (body_source, body_range) = trimmed(&text[at + 1..], (base + at + 1) as u32);
    if body_source.is_empty() {
        findings.push(
            TrCode::BadProperty,
            whole,
            "the property has no predicate after `.`",
        );
        return None;
    }
    let (body, errors) = soil::predicate(content, body_range);
    findings.soil(errors);
    Some(Property {
        binders,
        where_range,
        body_source: body_source.to_owned(),
        body_range,
        body,
    })
}

/// `name : Type` inside a binder's parentheses, at content offset `base`.
/// `content` is the whole block, for the Soil parser's coordinates.
fn binder(
    content: &str,
    inner: &str,
    base: usize,
    earlier: &[Binder],
    findings: &mut Findings,
) -> Option<Binder> {
    let colon = inner
        .find(':')
        .filter(|&i| !inner[i + 1..].starts_with(':'));
    let Some(colon) = colon else {
        findings.push(
            TrCode::BadProperty,
            span(base, 0, inner.len()),
            "a binder is `(name : Type)`",
        );
        return None;
    };
    let (name, name_range) = trimmed(&inner[..colon], base as u32);
    if !is_lower_ident(name) {
        findings.push(
            TrCode::BadProperty,
            span(base, 0, colon),
            "a binder names one variable: a lower identifier",
        );
        return None;
    }
    if earlier.iter().any(|b| b.name == name) {
        findings.push(
            TrCode::BadProperty,
            name_range,
            format!("`{name}` is bound twice"),
        );
        return None;
    }
    let (type_source, type_range) = trimmed(&inner[colon + 1..], (base + colon + 1) as u32);
    if type_source.is_empty() {
        findings.push(
            TrCode::BadProperty,
            span(base, 0, inner.len()),
            format!("the binder `{name}` has no type"),
        );
        return None;
    }
    let (ty, errors) = soil::ty(content, type_range);
    findings.soil(errors);
    Some(Binder {
        name: name.to_owned(),
        name_range,
        type_source: type_source.to_owned(),
        type_range,
        ty,
    })
}

/// The index of the `)` matching the `(` at `open`.
fn matching_paren(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The `.` ending a `where` filter: the first one outside brackets and strings
/// that is followed by whitespace or the end.
fn statement_dot(text: &str, from: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let bytes = text.as_bytes();
    for i in from..bytes.len() {
        match bytes[i] {
            b'"' => in_string = !in_string,
            _ if in_string => {}
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'.' if depth == 0 && bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace()) => {
                return Some(i);
            }
            _ => {}
        }
    }
    None
}

fn span(base: usize, from: usize, to: usize) -> TextRange {
    TextRange::new((base + from) as u32, (base + to) as u32)
}

fn first_line_of(text: &str, base: usize) -> TextRange {
    span(base, 0, text.find('\n').unwrap_or(text.len()))
}
