//! The skill's budgeted core reference of Soil, cut from the documents
//! `trellis-context` embeds for `read_spec` (never the working tree): the
//! syntax chapters in a fixed priority order, kept while they fit
//! [`SYNTAX_BUDGET_TOKENS`] (the longest prefix that fits, the packer's rule,
//! trellis-daemon §5) and named by anchor past it; then every prelude value as
//! one line — its signature and meaning — from the generated prelude
//! reference. `read_spec` is the path to everything left out.

use trellis_context::{embedded_document, spec_section, tokens};

use crate::SYNTAX_BUDGET_TOKENS;

/// soil-syntax-spec chapters, most useful to a lowering first.
const SYNTAX_PRIORITY: &[&str] = &["5", "6", "3", "4", "10", "11", "8", "2", "7", "1"];

/// Chapters never inlined, with why.
const SYNTAX_LEFT_OUT: &[(&str, &str)] = &[
    ("9", "the printer decides layout; you never format"),
    ("12", "codes by section; §6 above lists every code"),
];

/// A section's text with every header outside fences moved `by` levels down,
/// so a document's chapters nest under the skill's own headers.
fn nested(text: &str, by: usize) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut in_fence = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        if !in_fence && line.starts_with('#') {
            out.push_str(&"#".repeat(by));
        }
        out.push_str(line);
    }
    out
}

fn syntax() -> String {
    let mut out = String::from(
        "\n### 7.1 Syntax (soil-syntax-spec)\n\n\
The chapters below are soil-syntax-spec's own text with its section numbers, so \
`read_spec` anchors and the spec's `§` references mean what they say.\n",
    );
    let mut used = 0;
    let mut skipped: Vec<(String, String)> = Vec::new();
    let mut full = false;
    for number in SYNTAX_PRIORITY {
        let anchor = format!("soil-syntax-spec#{number}");
        let Ok(section) = spec_section(&anchor) else {
            continue;
        };
        let text = nested(section.text, 2);
        let cost = tokens(text.len());
        if !full && used + cost <= SYNTAX_BUDGET_TOKENS {
            used += cost;
            out.push('\n');
            out.push_str(&text);
            out.push('\n');
        } else {
            full = true;
            skipped.push((
                anchor,
                format!("{} (over this skill's budget)", section.title),
            ));
        }
    }
    for (number, why) in SYNTAX_LEFT_OUT {
        let anchor = format!("soil-syntax-spec#{number}");
        if let Ok(section) = spec_section(&anchor) {
            skipped.push((anchor, format!("{} ({why})", section.title)));
        }
    }
    out.push_str("\nNot inlined; `read_spec` serves them: ");
    let listed: Vec<String> = skipped
        .iter()
        .map(|(anchor, what)| format!("`{anchor}` {what}"))
        .collect();
    out.push_str(&listed.join("; "));
    out.push_str(".\n");
    out
}

/// One prelude entry of the embedded reference: its signature and meaning.
struct Entry {
    signature: String,
    meaning: String,
}

/// The prelude reference read as (section number, title, entries), plus the
/// type declarations block of its types section.
fn prelude_sections(document: &str) -> (String, Vec<(String, String, Vec<Entry>)>) {
    let mut types = String::new();
    let mut sections: Vec<(String, String, Vec<Entry>)> = Vec::new();
    let mut lines = document.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("## ") {
            let (number, title) = rest.split_once(". ").unwrap_or((rest, ""));
            sections.push((number.to_owned(), title.to_owned(), Vec::new()));
            if title == "Types" {
                // The declarations block is the section's first fence.
                let mut in_block = false;
                for line in lines.by_ref() {
                    if line.starts_with("```") {
                        if in_block {
                            break;
                        }
                        in_block = true;
                    } else if in_block && !line.is_empty() {
                        types.push_str(line);
                        types.push('\n');
                    }
                }
            }
        } else if line.starts_with("### ") {
            // ```soil, the signature, ```, blank, Effect/Cost, blank, meaning…
            let mut signature = String::new();
            let mut meaning = String::new();
            let mut state = 0;
            while let Some(next) = lines.peek() {
                if next.starts_with('#') {
                    break;
                }
                let next = lines.next().unwrap_or_default();
                match state {
                    0 if next.starts_with("```") => state = 1,
                    1 if next.starts_with("```") => state = 2,
                    1 => signature.push_str(next),
                    2 if next.starts_with("Effect:") => state = 3,
                    3 if next.starts_with("```") => state = 4,
                    3 if !next.is_empty() => {
                        if !meaning.is_empty() {
                            meaning.push(' ');
                        }
                        meaning.push_str(next.trim());
                    }
                    _ => {}
                }
            }
            if let Some((_, _, entries)) = sections.last_mut() {
                entries.push(Entry { signature, meaning });
            }
        }
    }
    (types, sections)
}

fn prelude() -> String {
    let document = embedded_document("prelude").unwrap_or_default();
    let (types, sections) = prelude_sections(document);
    let mut out = format!(
        "\n### 7.2 The prelude (prelude)\n\n\
Every value a program can use without defining it, as `signature` — meaning. Types \
besides the builtin `I64`, `U64`, `F64`, `Bool`, `Utf8`, `Unit`, `List a`, `Map k v`:\n\n\
```soil\n{types}```\n\n\
One total structural order is behind `compare`, `==`, `<`, map keys and sorting (for \
F64: `-inf < … < -0.0 < 0.0 < … < inf < nan`, and `nan == nan`). Costs, examples and \
each section's notes: `read_spec prelude#<n>`.\n"
    );
    for (number, title, entries) in &sections {
        if entries.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{title} (prelude#{number}):\n"));
        for entry in entries {
            out.push_str(&format!("- `{}` — {}\n", entry.signature, entry.meaning));
        }
    }
    out
}

pub fn section() -> String {
    format!("\n## 7. Soil core reference\n{}{}", syntax(), prelude())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_nest_outside_fences_only() {
        let text = "## 5. E\n\n```\n# not a header\n```\n### 5.1 L\n";
        assert_eq!(
            nested(text, 2),
            "#### 5. E\n\n```\n# not a header\n```\n##### 5.1 L\n"
        );
    }

    #[test]
    fn every_prelude_value_has_a_signature_and_a_meaning() {
        let (types, sections) = prelude_sections(embedded_document("prelude").unwrap());
        assert!(types.contains("type Option a = None | Some a"), "{types}");
        let entries: Vec<&Entry> = sections.iter().flat_map(|(_, _, e)| e).collect();
        assert_eq!(entries.len(), soil_types::prelude_names().len());
        for entry in entries {
            assert!(entry.signature.contains(" : "), "{}", entry.signature);
            assert!(!entry.meaning.is_empty(), "{}", entry.signature);
        }
    }
}
