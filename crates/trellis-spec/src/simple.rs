//! The small formal and test blocks: `reference` (tr-grammar §3.6), `allow`
//! (§3.7) and `exports` (§5.1).

use trellis_diag::TextRange;

use crate::clauses::first_line;
use crate::codes::TrCode;
use crate::lines::{is_lower_ident, is_upper_ident, is_word, logical_lines, trimmed};
use crate::model::{Export, Grant, Reference, ReferenceLine};
use crate::report::Findings;

/// The v1 escape-hatch vocabulary (tr-grammar §3.7).
pub const ESCAPE_HATCHES: &[&str] = &["nonstructural-recursion"];

pub(crate) fn reference(content: &str, findings: &mut Findings) -> Option<ReferenceLine> {
    let lines = logical_lines(content);
    let line = lines.first()?.text.trim().to_owned();
    let reference = oracle(content, findings)?;
    Some(ReferenceLine { line, reference })
}

fn oracle(content: &str, findings: &mut Findings) -> Option<Reference> {
    let lines = logical_lines(content);
    if let Some(extra) = lines.get(1) {
        findings.push(
            TrCode::BadReference,
            first_line(extra.text, extra.range.start),
            "a `reference` block holds exactly one line",
        );
        return None;
    }
    let line = lines.first()?;
    let at = first_line(line.text, line.range.start);
    if let Some(rest) = line.text.strip_prefix("python:") {
        let target = rest.trim();
        let Some((path, symbol)) = target.rsplit_once("::") else {
            findings.push(
                TrCode::BadReference,
                at,
                "a Python reference is `python: path.py::symbol`",
            );
            return None;
        };
        let path_ok = path.ends_with(".py")
            && !path.starts_with('/')
            && !path.contains('\\')
            && path
                .split('/')
                .all(|s| !s.is_empty() && s != ".." && s != ".");
        if !path_ok {
            findings.push(
                TrCode::BadReference,
                at,
                format!(
                    "{path:?} is not a relative `/`-separated path to a `.py` file without `..`"
                ),
            );
            return None;
        }
        let symbol_ok = symbol.split('.').all(|part| {
            is_word(
                part,
                |c| c.is_ascii_alphabetic() || c == '_',
                |c| c.is_ascii_alphanumeric() || c == '_',
            )
        });
        if !symbol_ok {
            findings.push(
                TrCode::BadReference,
                at,
                format!("{symbol:?} is not a Python identifier"),
            );
            return None;
        }
        return Some(Reference::Python {
            path: path.to_owned(),
            symbol: symbol.to_owned(),
        });
    }
    if let Some(rest) = line.text.strip_prefix("cli:") {
        let command = rest.trim();
        if command.is_empty() {
            findings.push(TrCode::BadReference, at, "`cli:` needs a command");
            return None;
        }
        return Some(Reference::Cli {
            command: command.to_owned(),
        });
    }
    findings.push(
        TrCode::BadReference,
        at,
        "a reference is `python: path.py::symbol` or `cli: command`",
    );
    None
}

pub(crate) fn allow(content: &str, findings: &mut Findings) -> Vec<Grant> {
    let mut grants: Vec<Grant> = Vec::new();
    for line in logical_lines(content) {
        let at = first_line(line.text, line.range.start);
        let Some((hatch, reason)) = line.text.split_once(':') else {
            findings.push(TrCode::BadAllow, at, "a grant is `hatch: reason`");
            continue;
        };
        let hatch_range = TextRange::new(line.range.start, line.range.start + hatch.len() as u32);
        let hatch_ok = is_word(
            hatch,
            |c| c.is_ascii_lowercase(),
            |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-',
        );
        if !hatch_ok {
            findings.push(
                TrCode::BadAllow,
                at,
                "a grant is `hatch: reason`, the hatch in kebab-case",
            );
            continue;
        }
        let (reason, _) = trimmed(reason, 0);
        if reason.is_empty() {
            findings.push(
                TrCode::BadAllow,
                at,
                format!("the grant `{hatch}` needs a reason: it is audited"),
            );
            continue;
        }
        if !ESCAPE_HATCHES.contains(&hatch) {
            findings.push(
                TrCode::UnknownEscapeHatch,
                hatch_range,
                format!(
                    "unknown escape hatch `{hatch}`; v1 has: {}",
                    ESCAPE_HATCHES.join(", ")
                ),
            );
            continue;
        }
        if grants.iter().any(|g| g.hatch == hatch) {
            findings.push(
                TrCode::BadAllow,
                hatch_range,
                format!("`{hatch}` is granted twice"),
            );
            continue;
        }
        let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
        grants.push(Grant {
            hatch: hatch.to_owned(),
            reason,
            line: line.text.to_owned(),
            range: line.range,
        });
    }
    grants
}

pub(crate) fn exports(content: &str, findings: &mut Findings) -> Vec<Export> {
    let mut exports: Vec<Export> = Vec::new();
    for line in logical_lines(content) {
        let mut offset = 0usize;
        for piece in line.text.split([',', ' ', '\t', '\n', '\r']) {
            let start = line.range.start + offset as u32;
            offset += piece.len() + 1;
            if piece.is_empty() {
                continue;
            }
            let range = TextRange::new(start, start + piece.len() as u32);
            let is_name =
                (is_lower_ident(piece) && !piece.starts_with('_')) || is_upper_ident(piece);
            if !is_name {
                findings.push(
                    TrCode::BadExports,
                    range,
                    format!("{piece:?} is not a definition name"),
                );
            } else if exports.iter().any(|e| e.name == piece) {
                findings.push(
                    TrCode::BadExports,
                    range,
                    format!("`{piece}` is exported twice"),
                );
            } else {
                exports.push(Export {
                    name: piece.to_owned(),
                    range,
                });
            }
        }
    }
    exports
}
