//! Answers written back into specs (tr-grammar §8): a Q/A pair into the
//! `## Clarifications` section, or a rule into a `decisions` block. Each returns the
//! new text; the caller re-parses it and writes the file.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use trellis_diag::Diagnostic;

use crate::codes::TrCode;
use crate::model::{BlockKind, BlockSyntax, FileKind, TrFile};

const CLARIFICATIONS: &str = "Clarifications";

/// `text` with a `- **Q:** … / **A:** …` pair appended to its `## Clarifications`
/// section, which is created at the end of the file when absent. Every byte of
/// `text` is kept: the pair (and the heading, and the blank lines that separate
/// them from their neighbours) is inserted at one place, adding only the blank
/// lines that are missing.
pub fn append_clarification(text: &str, question: &str, answer: &str) -> String {
    let pair = format!(
        "- **Q:** {}\n  **A:** {}\n",
        indent_continuations(question.trim()),
        indent_continuations(answer.trim())
    );
    let mut out = String::with_capacity(text.len() + pair.len() + 32);
    match clarifications_end(text) {
        Some(end) => {
            let (before, after) = text.split_at(end);
            out.push_str(before);
            out.push_str(blank_line_after(before));
            out.push_str(&pair);
            if !after.is_empty() {
                out.push('\n');
                out.push_str(after);
            }
        }
        None => {
            out.push_str(text);
            out.push_str(blank_line_after(text));
            out.push_str("## ");
            out.push_str(CLARIFICATIONS);
            out.push_str("\n\n");
            out.push_str(&pair);
        }
    }
    out
}

/// What must follow `before` so that text appended to it starts after one blank
/// line (nothing at the start of a file).
fn blank_line_after(before: &str) -> &'static str {
    let Some(body) = before.strip_suffix('\n') else {
        return if before.is_empty() { "" } else { "\n\n" };
    };
    let last_line = body.rsplit('\n').next().unwrap_or(body);
    if last_line.trim().is_empty() {
        ""
    } else {
        "\n"
    }
}

/// Where the document's `## Clarifications` section ends: the start of the line
/// of the next level-1 or level-2 heading, or the end of the text. Only headings
/// of the document itself count, not those inside a quote or a list.
fn clarifications_end(text: &str) -> Option<usize> {
    let mut in_heading: Option<(HeadingLevel, String)> = None;
    let mut found = false;
    let mut depth = 0usize;
    for (event, range) in Parser::new_ext(text, Options::empty()).into_offset_iter() {
        match event {
            Event::Start(Tag::BlockQuote(_) | Tag::List(_) | Tag::Item) => depth += 1,
            Event::End(TagEnd::BlockQuote(_) | TagEnd::List(_) | TagEnd::Item) => {
                depth = depth.saturating_sub(1);
            }
            Event::Start(Tag::Heading { level, .. }) if depth == 0 => {
                if found && level <= HeadingLevel::H2 {
                    return Some(line_start(text, range.start));
                }
                in_heading = Some((level, String::new()));
            }
            Event::Text(piece) => {
                if let Some((_, title)) = &mut in_heading {
                    title.push_str(&piece);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, title)) = in_heading.take() {
                    found |= level == HeadingLevel::H2 && title.trim() == CLARIFICATIONS;
                }
            }
            _ => {}
        }
    }
    found.then_some(text.len())
}

/// `text` with a decisions entry appended to the file's `decisions` block, which is
/// created at the end of the file when absent. `file` is `text` parsed. Refused for
/// a file that is not `_module.tr` or `_project.tr`, a malformed label, and a label
/// already in use.
pub fn append_decision(
    text: &str,
    file: &TrFile,
    label: &str,
    rule: &str,
    rejected: &[&str],
) -> Result<String, Box<Diagnostic>> {
    if !matches!(file.kind, FileKind::Module | FileKind::Project) {
        return Err(Box::new(Diagnostic::new(
            TrCode::BlockNotAllowed.as_str(),
            "decisions live in `_module.tr` or `_project.tr`",
        )));
    }
    let label_ok = label
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && label
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !label_ok || rule.trim().is_empty() {
        return Err(Box::new(Diagnostic::new(
            TrCode::BadDecision.as_str(),
            format!("a decision needs a kebab-case label and a text; got {label:?}"),
        )));
    }
    let block = file.blocks_of(BlockKind::Decisions).next();
    if let Some(BlockSyntax::Decisions(entries)) = block.map(|b| &b.value.syntax)
        && entries.iter().any(|e| e.label == label)
    {
        return Err(Box::new(Diagnostic::new(
            TrCode::DuplicateDecisionLabel.as_str(),
            format!("the label `{label}` is already used in this scope"),
        )));
    }
    let mut entry = format!("- **{label}** — {}\n", indent_continuations(rule.trim()));
    for alternative in rejected {
        entry.push_str(&format!(
            "  rejected: {}\n",
            indent_continuations(alternative.trim())
        ));
    }
    let Some(block) = block else {
        let mut out = text.to_owned();
        out.push_str(blank_line_after(text));
        out.push_str("```decisions\n");
        out.push_str(&entry);
        out.push_str("```\n");
        return Ok(out);
    };
    // Insert before the closing fence line, repeating its container prefix (the
    // `> ` of a quote, a list item's indentation) on every inserted line.
    let closing_start = line_start(text, block.location.fence.end.saturating_sub(1) as usize);
    let closing = &text[closing_start..block.location.fence.end as usize];
    let prefix_len = closing.find(['`', '~']).unwrap_or(0);
    let prefix = &closing[..prefix_len];
    let prefixed: String = entry
        .lines()
        .map(|line| format!("{prefix}{line}\n"))
        .collect();
    let mut out = String::with_capacity(text.len() + prefixed.len());
    out.push_str(&text[..closing_start]);
    out.push_str(&prefixed);
    out.push_str(&text[closing_start..]);
    Ok(out)
}

/// `text` with an expect case (tr-grammar §3.3) appended to the file's `test NAME`
/// block, which is created at the end of the file when absent. `file` is `text`
/// parsed; `case` is one logical line, `callee(args) -> outcome`.
pub fn append_test_case(text: &str, file: &TrFile, name: &str, case: &str) -> String {
    let block = file
        .blocks_of(BlockKind::Test)
        .find(|block| block.value.header.name.as_deref() == Some(name));
    let Some(block) = block else {
        let mut out = text.trim_end_matches('\n').to_owned();
        out.push_str(&format!("\n\n```test {name}\n{case}\n```\n"));
        return out;
    };
    let closing_start = line_start(text, block.location.fence.end.saturating_sub(1) as usize);
    let closing = &text[closing_start..block.location.fence.end as usize];
    let prefix = &closing[..closing.find(['`', '~']).unwrap_or(0)];
    format!(
        "{}{prefix}{case}\n{}",
        &text[..closing_start],
        &text[closing_start..]
    )
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].rfind('\n').map_or(0, |i| i + 1)
}

/// Multi-line text continues on lines indented by two spaces (a blank line
/// stays empty rather than two spaces of trailing whitespace).
fn indent_continuations(text: &str) -> String {
    let mut lines = text.lines();
    let mut out = lines.next().unwrap_or_default().to_owned();
    for line in lines {
        out.push('\n');
        if !line.trim().is_empty() {
            out.push_str("  ");
            out.push_str(line);
        }
    }
    out
}
