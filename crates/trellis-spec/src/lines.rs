//! Line splitting shared by every line-oriented block grammar (tr-grammar §2.3,
//! "logical lines").

use trellis_diag::TextRange;

/// One physical line: its text without the line terminator, and where it starts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Line<'a> {
    pub text: &'a str,
    pub start: u32,
    /// The offset just past the line terminator (or the end of the text).
    pub next: u32,
}

impl Line<'_> {
    pub fn range(&self) -> TextRange {
        TextRange::new(self.start, self.start + self.text.len() as u32)
    }

    pub fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }

    pub fn is_indented(&self) -> bool {
        self.text.starts_with([' ', '\t'])
    }

    pub fn is_comment(&self) -> bool {
        self.text.starts_with("--")
    }
}

/// The physical lines of `text`; `\r\n` and `\n` both end a line.
pub(crate) fn lines(text: &str) -> Vec<Line<'_>> {
    physical_lines(text).collect()
}

/// [`lines`], one at a time: a reader that needs only the first few (the
/// frontmatter's) does not split the whole file.
pub(crate) fn physical_lines(text: &str) -> impl Iterator<Item = Line<'_>> {
    let mut start = 0usize;
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let (end, next) = match text[start..].find('\n') {
            Some(i) => (start + i, start + i + 1),
            None => (text.len(), text.len()),
        };
        let end = if end > start && text.as_bytes()[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        let line = Line {
            text: &text[start..end],
            start: start as u32,
            next: next as u32,
        };
        start = next;
        Some(line)
    })
}

/// A logical line: a line starting in column 1 plus every following blank or
/// indented line. `range` excludes trailing blank lines and whitespace.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LogicalLine<'a> {
    pub text: &'a str,
    pub range: TextRange,
}

/// The logical lines of a block's content. Comment lines (`--` in column 1) start
/// nothing and end the logical line before them. An indented line with no logical
/// line to continue is returned as one of its own, indentation kept, so the
/// block's grammar refuses it.
pub(crate) fn logical_lines<'a>(text: &'a str) -> Vec<LogicalLine<'a>> {
    let mut out = Vec::new();
    let mut current: Option<(u32, u32)> = None;
    let flush = |current: &mut Option<(u32, u32)>, out: &mut Vec<LogicalLine<'a>>| {
        if let Some((start, end)) = current.take() {
            let raw = &text[start as usize..end as usize];
            let trimmed = raw.trim_end();
            out.push(LogicalLine {
                text: trimmed,
                range: TextRange::new(start, start + trimmed.len() as u32),
            });
        }
    };
    for line in lines(text) {
        if line.is_blank() {
            continue;
        }
        if line.is_comment() {
            flush(&mut current, &mut out);
            continue;
        }
        let line_end = line.range().end;
        match (&mut current, line.is_indented()) {
            (Some((_, end)), true) => *end = line_end,
            _ => {
                flush(&mut current, &mut out);
                current = Some((line.start, line_end));
            }
        }
    }
    flush(&mut current, &mut out);
    out
}

/// `text[at..]` without leading whitespace, and the offset where it starts.
pub(crate) fn skip_space(text: &str, at: usize) -> usize {
    at + (text[at..].len() - text[at..].trim_start().len())
}

/// `text` trimmed on both sides, with its range shifted by `base`.
pub(crate) fn trimmed(text: &str, base: u32) -> (&str, TextRange) {
    let lead = text.len() - text.trim_start().len();
    let t = text.trim();
    let start = base + lead as u32;
    (t, TextRange::new(start, start + t.len() as u32))
}

pub(crate) fn is_lower_ident(word: &str) -> bool {
    let mut chars = word.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(crate) fn is_upper_ident(word: &str) -> bool {
    let mut chars = word.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `[first][rest]*` over ASCII predicates.
pub(crate) fn is_word(word: &str, first: fn(char) -> bool, rest: fn(char) -> bool) -> bool {
    let mut chars = word.chars();
    matches!(chars.next(), Some(c) if first(c)) && chars.all(rest)
}
