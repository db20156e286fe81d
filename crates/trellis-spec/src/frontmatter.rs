//! The two-key frontmatter subset (tr-grammar §2.1): `name` and `tags`, nothing
//! else. Hand-rolled because the subset is the format (impl plan §8.4).

use trellis_diag::TextRange;

use crate::codes::TrCode;
use crate::lines::{Line, physical_lines, trimmed};
use crate::model::{Frontmatter, FrontmatterLocation};
use crate::report::Findings;

/// The frontmatter, where it sits, and the offset where the Markdown body starts.
pub(crate) struct Parsed {
    pub frontmatter: Frontmatter,
    pub location: FrontmatterLocation,
    pub body_start: u32,
}

pub(crate) fn parse(text: &str, findings: &mut Findings) -> Parsed {
    // Only the frontmatter's lines are split: a body is the Markdown
    // parser's, and splitting all of it was a fiftieth of a cold check.
    let mut all = physical_lines(text);
    let mut parsed = Parsed {
        frontmatter: Frontmatter::default(),
        location: FrontmatterLocation::default(),
        body_start: 0,
    };
    let Some(first) = all.next() else {
        findings.push(
            TrCode::MissingName,
            TextRange::empty(0),
            "the file is empty: it needs a frontmatter with `name:`",
        );
        return parsed;
    };
    if first.text != "---" {
        findings.push(
            TrCode::MissingName,
            first.range(),
            "a .tr file starts with a frontmatter: a `---` line, `name: <name>`, and a closing `---` line",
        );
        return parsed;
    }
    let mut entries = Vec::new();
    let close = loop {
        match all.next() {
            Some(line) if line.text == "---" => break line,
            Some(line) => entries.push(line),
            None => {
                findings.push(
                    TrCode::BadFrontmatter,
                    first.range(),
                    "the frontmatter has no closing `---` line",
                );
                return parsed;
            }
        }
    };
    parsed.body_start = close.next;
    parsed.location.range = TextRange::new(0, close.next);
    read_entries(&entries, &mut parsed, findings);
    if parsed.frontmatter.name.is_none() {
        findings.push(
            TrCode::MissingName,
            first.range(),
            "the frontmatter has no `name:` entry",
        );
    }
    parsed
}

fn read_entries(entries: &[Line<'_>], parsed: &mut Parsed, findings: &mut Findings) {
    let mut seen_tags = false;
    let mut i = 0;
    while i < entries.len() {
        let line = entries[i];
        i += 1;
        if line.is_blank() || line.text.starts_with('#') {
            continue;
        }
        let Some((key, rest)) = line.text.split_once(':') else {
            findings.push(
                TrCode::BadFrontmatter,
                line.range(),
                "expected `key: value`",
            );
            continue;
        };
        let key_range = TextRange::new(line.start, line.start + key.len() as u32);
        let rest_base = line.start + key.len() as u32 + 1;
        match key {
            "name" => {
                if parsed.frontmatter.name.is_some() {
                    findings.push(TrCode::BadFrontmatter, key_range, "`name` is given twice");
                    continue;
                }
                let (value, range) = trimmed(rest, rest_base);
                match scalar(value) {
                    Some(name) => {
                        parsed.frontmatter.name = Some(name.to_owned());
                        parsed.location.name_line = Some(TextRange::new(line.start, line.next));
                        parsed.location.name_value = Some(range);
                    }
                    None => findings.push(
                        TrCode::BadFrontmatter,
                        if value.is_empty() {
                            line.range()
                        } else {
                            range
                        },
                        "`name` takes one plain word or a double-quoted string",
                    ),
                }
            }
            "tags" => {
                if seen_tags {
                    findings.push(TrCode::BadFrontmatter, key_range, "`tags` is given twice");
                    continue;
                }
                seen_tags = true;
                let (value, range) = trimmed(rest, rest_base);
                let mut tags = Vec::new();
                if value.is_empty() {
                    while i < entries.len() {
                        let item = entries[i];
                        let body = item.text.trim_start();
                        let Some(tag) = body.strip_prefix('-') else {
                            break;
                        };
                        i += 1;
                        let base = item.start + (item.text.len() - tag.len()) as u32;
                        tags.push(trimmed(tag, base));
                    }
                    if tags.is_empty() {
                        findings.push(
                            TrCode::BadFrontmatter,
                            line.range(),
                            "`tags:` needs `[a, b]` or `- tag` lines below it",
                        );
                    }
                } else if let Some(inner) =
                    value.strip_prefix('[').and_then(|v| v.strip_suffix(']'))
                {
                    if !inner.trim().is_empty() {
                        let mut base = range.start + 1;
                        for piece in inner.split(',') {
                            tags.push(trimmed(piece, base));
                            base += piece.len() as u32 + 1;
                        }
                    }
                } else {
                    findings.push(
                        TrCode::BadFrontmatter,
                        range,
                        "tags are written `[a, b]` or as `- tag` lines",
                    );
                }
                for (tag, range) in tags {
                    if !is_plain(tag) {
                        findings.push(
                            TrCode::BadFrontmatter,
                            range,
                            format!("{tag:?} is not a plain word"),
                        );
                    } else if parsed.frontmatter.tags.iter().any(|t| t == tag) {
                        findings.push(
                            TrCode::BadFrontmatter,
                            range,
                            format!("tag `{tag}` is given twice"),
                        );
                    } else {
                        parsed.frontmatter.tags.push(tag.to_owned());
                        parsed.location.tags.push(range);
                    }
                }
            }
            _ if is_plain(key.trim()) && !key.starts_with([' ', '\t']) => findings.push(
                TrCode::UnknownFrontmatterKey,
                key_range,
                format!("unknown frontmatter key `{key}`: only `name` and `tags` exist"),
            ),
            _ => findings.push(
                TrCode::BadFrontmatter,
                line.range(),
                "expected `name:` or `tags:`",
            ),
        }
    }
}

/// A plain word, or a double-quoted string without escapes.
fn scalar(value: &str) -> Option<&str> {
    if let Some(inner) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        return (!inner.is_empty() && !inner.contains(['"', '\\'])).then_some(inner);
    }
    is_plain(value).then_some(value)
}

fn is_plain(word: &str) -> bool {
    !word.is_empty()
        && !word.chars().any(|c| {
            c.is_whitespace() || matches!(c, '#' | ':' | '[' | ']' | ',' | '"' | '\'' | '{' | '}')
        })
}
