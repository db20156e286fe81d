//! Source positions. Parsers record cheap byte ranges (`TextRange`); only when a
//! diagnostic is rendered do they become line/column `Span`s, so values that feed
//! hashes and checks never carry absolute line numbers.

use serde::{Deserialize, Serialize};

/// A half-open byte range `[start, end)` into one source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TextRange {
    pub start: u32,
    pub end: u32,
}

impl TextRange {
    pub const fn new(start: u32, end: u32) -> Self {
        Self { start, end }
    }

    pub const fn empty(at: u32) -> Self {
        Self { start: at, end: at }
    }

    pub const fn len(self) -> u32 {
        self.end - self.start
    }

    pub const fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// The smallest range covering both.
    pub fn cover(self, other: TextRange) -> TextRange {
        TextRange::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// This range moved right by `delta` bytes (block-relative to file-relative).
    pub const fn shifted(self, delta: u32) -> TextRange {
        TextRange::new(self.start + delta, self.end + delta)
    }

    pub fn as_usize_range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// One point in a source text (soil0-cli §3): 1-based line, 1-based column counted
/// in Unicode scalar values, and the 0-based byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Position {
    pub line: u32,
    pub column: u32,
    pub offset: u32,
}

/// A rendered source span (soil0-cli §3): where it starts and where it ends
/// (exclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    pub start: Position,
    pub end: Position,
}

/// Maps byte offsets of one text to line/column positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    /// Byte offset at which each line starts; always begins with 0.
    line_starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        Self { line_starts }
    }

    /// The position of `offset` in `text`. Offsets past the end, or inside a
    /// multi-byte character, are clamped rather than trusted.
    pub fn position(&self, text: &str, offset: u32) -> Position {
        let offset = clamp_to_char_boundary(text, offset);
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let line_start = self.line_starts[line] as usize;
        let column = text[line_start..offset as usize].chars().count() as u32 + 1;
        Position {
            line: line as u32 + 1,
            column,
            offset,
        }
    }

    pub fn span(&self, text: &str, range: TextRange) -> Span {
        Span {
            start: self.position(text, range.start),
            end: self.position(text, range.end),
        }
    }
}

fn clamp_to_char_boundary(text: &str, offset: u32) -> u32 {
    let mut offset = (offset as usize).min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_characters() {
        let text = "ab\nçd\n\nx";
        let index = LineIndex::new(text);
        let at = |o| {
            let p = index.position(text, o);
            (p.line, p.column, p.offset)
        };
        assert_eq!(at(0), (1, 1, 0));
        assert_eq!(at(2), (1, 3, 2));
        assert_eq!(at(3), (2, 1, 3));
        // 'ç' is two bytes: offset 5 is the column after it.
        assert_eq!(at(5), (2, 2, 5));
        assert_eq!(at(7), (3, 1, 7));
        assert_eq!(at(8), (4, 1, 8));
        // Past the end clamps; inside a character clamps to its start.
        assert_eq!(at(99), (4, 2, 9));
        assert_eq!(at(4), (2, 1, 3));
    }
}
