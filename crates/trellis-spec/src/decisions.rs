//! `decisions` blocks: labelled entries, each hashed on its own (tr-grammar §5.2).

use trellis_diag::TextRange;

use crate::codes::TrCode;
use crate::lines::{is_word, lines};
use crate::model::DecisionEntry;
use crate::report::Findings;

pub(crate) fn parse(content: &str, findings: &mut Findings) -> Vec<DecisionEntry> {
    let all = lines(content);
    let mut entries: Vec<DecisionEntry> = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let line = all[i];
        i += 1;
        if line.is_blank() {
            continue;
        }
        let Some((label, text)) = entry_head(line.text) else {
            findings.push(
                TrCode::BadDecision,
                line.range(),
                "expected an entry `- **label** — text`",
            );
            continue;
        };
        let label_start = line.start + 4;
        let label_range = TextRange::new(label_start, label_start + label.len() as u32);
        let mut entry = DecisionEntry {
            label: label.to_owned(),
            text: text.trim().to_owned(),
            rejected: Vec::new(),
            bytes: String::new(),
            range: line.range(),
        };
        while let Some(more) = all
            .get(i)
            .filter(|l| l.text.starts_with("  ") && !l.is_blank())
        {
            i += 1;
            entry.range = entry.range.cover(more.range());
            let body = more.text.trim();
            if let Some(rejected) = body.strip_prefix("rejected:") {
                entry.rejected.push(rejected.trim().to_owned());
            } else {
                let target = entry.rejected.last_mut().unwrap_or(&mut entry.text);
                if !target.is_empty() {
                    target.push(' ');
                }
                target.push_str(body);
            }
        }
        entry.bytes = content[entry.range.as_usize_range()].to_owned();
        if let Some(first) = entries.iter().find(|e| e.label == entry.label) {
            findings.duplicate(
                TrCode::DuplicateDecisionLabel,
                label_range,
                format!("the label `{label}` is already used in this scope"),
                first.range,
            );
            continue;
        }
        entries.push(entry);
    }
    entries
}

/// `- **label** — text` (or `--` for the dash) → the label and the text.
fn entry_head(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("- **")?;
    let (label, rest) = rest.split_once("** ")?;
    let label_ok = is_word(
        label,
        |c| c.is_ascii_lowercase() || c.is_ascii_digit(),
        |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-',
    );
    let rest = rest
        .strip_prefix("— ")
        .or_else(|| rest.strip_prefix("-- "))?;
    (label_ok && !rest.trim().is_empty()).then_some((label, rest))
}
