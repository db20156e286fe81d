//! `test` blocks: call-arrow cases and `with` lines (tr-grammar §3.3).

use trellis_diag::TextRange;

use crate::clauses::first_line;
use crate::codes::TrCode;
use crate::lines::{is_lower_ident, logical_lines, skip_space, trimmed};
use crate::model::{Expected, JsonText, TestCase, TestLine, WithBinding};
use crate::report::Findings;

/// `spec_name` is the name every case must call (`None` when the file has none).
pub(crate) fn parse(
    content: &str,
    spec_name: Option<&str>,
    findings: &mut Findings,
) -> Vec<TestLine> {
    let mut out = Vec::new();
    let mut fakes: Vec<(String, JsonText)> = Vec::new();
    for line in logical_lines(content) {
        let base = line.range.start;
        let head = first_line(line.text, base);
        if let Some(rest) = line
            .text
            .strip_prefix("with")
            .filter(|r| r.starts_with([' ', '\t']))
        {
            if let Some(binding) = parse_with(rest, base + 4, head, findings) {
                fakes.retain(|(param, _)| *param != binding.param);
                fakes.push((binding.param.clone(), binding.value.clone()));
                out.push(TestLine::With(binding));
            }
            continue;
        }
        if let Some(mut case) = parse_case(line.text, base, head, spec_name, findings) {
            case.fakes = fakes.clone();
            out.push(TestLine::Case(case));
        }
    }
    out
}

fn parse_with(
    rest: &str,
    base: u32,
    head: TextRange,
    findings: &mut Findings,
) -> Option<WithBinding> {
    let Some((param, value)) = rest.split_once('=') else {
        findings.push(
            TrCode::BadTestCase,
            head,
            "a `with` line is `with param = json`",
        );
        return None;
    };
    let (param, param_range) = trimmed(param, base);
    if !is_lower_ident(param) {
        findings.push(
            TrCode::BadTestCase,
            if param.is_empty() { head } else { param_range },
            "a `with` line binds a parameter name: `with param = json`",
        );
        return None;
    }
    let value = json(
        value,
        base + rest.find('=').map_or(0, |i| i as u32 + 1),
        head,
        findings,
    )?;
    Some(WithBinding {
        param: param.to_owned(),
        value,
        range: head,
    })
}

fn parse_case(
    text: &str,
    base: u32,
    head: TextRange,
    spec_name: Option<&str>,
    findings: &mut Findings,
) -> Option<TestCase> {
    let open = text.find('(');
    let callee = open.map(|i| text[..i].trim_end()).unwrap_or("");
    if open.is_none() || !is_lower_ident(callee) {
        findings.push(
            TrCode::BadTestCase,
            head,
            "expected a case `name(json, ...) -> json` or `-> panic`, or a `with` line",
        );
        return None;
    }
    let open = open.unwrap_or(0);
    let callee_range = TextRange::new(base, base + callee.len() as u32);
    if let Some(name) = spec_name
        && callee != name
    {
        findings.push(
            TrCode::BadTestCase,
            callee_range,
            format!("a case calls the spec's own definition `{name}`, not `{callee}`"),
        );
        return None;
    }
    let Some((pieces, close)) = split_args(text, open + 1) else {
        findings.push(
            TrCode::BadTestCase,
            head,
            "the argument list has no closing `)`",
        );
        return None;
    };
    let mut args = Vec::new();
    let no_args = pieces.len() == 1 && text[pieces[0].0..pieces[0].1].trim().is_empty();
    if !no_args {
        for (start, end) in pieces {
            args.push(json(
                &text[start..end],
                base + start as u32,
                head,
                findings,
            )?);
        }
    }
    let after = skip_space(text, close + 1);
    let Some(outcome) = text[after..].strip_prefix("->") else {
        findings.push(
            TrCode::BadTestCase,
            head,
            "expected `->` after the arguments",
        );
        return None;
    };
    let outcome_base = base + after as u32 + 2;
    let (word, word_range) = trimmed(outcome, outcome_base);
    let expected = if word == "panic" {
        Expected::Panic(word_range)
    } else if word.is_empty() {
        findings.push(
            TrCode::BadTestCase,
            head,
            "expected a JSON result or `panic` after `->`",
        );
        return None;
    } else {
        Expected::Value(json(outcome, outcome_base, head, findings)?)
    };
    Some(TestCase {
        callee: callee.to_owned(),
        args,
        expected,
        fakes: Vec::new(),
        range: TextRange::new(base, base + text.len() as u32),
    })
}

/// One JSON value in `text` (offset `base` in the content).
fn json(text: &str, base: u32, head: TextRange, findings: &mut Findings) -> Option<JsonText> {
    let (body, range) = trimmed(text, base);
    if body.is_empty() {
        findings.push(TrCode::BadJson, head, "expected a JSON value here");
        return None;
    }
    match serde_json::from_str::<serde_json::Value>(body) {
        Ok(value) => Some(JsonText {
            text: body.to_owned(),
            value,
            range,
        }),
        Err(error) => {
            findings.push(
                TrCode::BadJson,
                range,
                format!("not one JSON value: {error}"),
            );
            None
        }
    }
}

/// Splits `text[from..]` at top-level commas up to the `)` closing the argument
/// list; brackets and strings nest. Returns the pieces and the `)`'s index.
fn split_args(text: &str, from: usize) -> Option<(Vec<(usize, usize)>, usize)> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut start = from;
    let mut pieces = Vec::new();
    for (i, &b) in bytes.iter().enumerate().skip(from) {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                pieces.push((start, i));
                start = i + 1;
            }
            b')' if depth == 0 => {
                pieces.push((start, i));
                return Some((pieces, i));
            }
            _ => {}
        }
    }
    None
}
