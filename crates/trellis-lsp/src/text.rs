//! Positions between the database's byte offsets and the protocol's line and
//! character pairs. The protocol counts characters in UTF-16 code units unless
//! client and server agree on UTF-8 at `initialize` (the server offers UTF-8 first:
//! it is what the database counts in, so no conversion runs); both are handled
//! here, and nowhere else, along with applying an editor's incremental changes.

use lsp_types::{Position, Range, TextDocumentContentChangeEvent};
use trellis_diag::TextRange;

/// How the protocol counts a line's characters, as negotiated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

/// Where each line of one text starts, for converting in both directions.
pub struct Lines<'a> {
    text: &'a str,
    starts: Vec<u32>,
    encoding: Encoding,
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str, encoding: Encoding) -> Lines<'a> {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(at, _)| at as u32 + 1),
        );
        Lines {
            text,
            starts,
            encoding,
        }
    }

    /// The protocol position of a byte offset (clamped to the text and to a
    /// character boundary).
    pub fn position(&self, offset: u32) -> Position {
        let mut offset = (offset as usize).min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self
            .starts
            .partition_point(|&start| start as usize <= offset)
            - 1;
        let start = self.starts[line] as usize;
        let prefix = &self.text[start..offset];
        let character = match self.encoding {
            Encoding::Utf8 => prefix.len(),
            Encoding::Utf16 => prefix.encode_utf16().count(),
        };
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, range: TextRange) -> Range {
        Range::new(self.position(range.start), self.position(range.end))
    }

    /// The byte offset of a protocol position. A line past the end is the end of
    /// the text; a character past the end of its line is the line's end (the
    /// protocol's own rule), so a stale position never panics.
    pub fn offset(&self, position: Position) -> u32 {
        let Some(&start) = self.starts.get(position.line as usize) else {
            return self.text.len() as u32;
        };
        let end = self
            .starts
            .get(position.line as usize + 1)
            .map_or(self.text.len(), |&next| next as usize - 1);
        let line = &self.text[start as usize..end.max(start as usize)];
        let mut counted = 0u32;
        for (at, c) in line.char_indices() {
            if counted >= position.character {
                return start + at as u32;
            }
            counted += match self.encoding {
                Encoding::Utf8 => c.len_utf8() as u32,
                Encoding::Utf16 => c.len_utf16() as u32,
            };
        }
        start + line.len() as u32
    }
}

/// Applies one of an editor's changes: a range replaced, or (no range) the whole text.
pub fn apply_change(
    text: &mut String,
    change: &TextDocumentContentChangeEvent,
    encoding: Encoding,
) {
    match change.range {
        None => text.clone_from(&change.text),
        Some(range) => {
            let lines = Lines::new(text, encoding);
            let start = lines.offset(range.start) as usize;
            let end = (lines.offset(range.end) as usize).max(start);
            text.replace_range(start..end, &change.text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_count_surrogate_pairs_and_round_trip() {
        let text = "ab\nç𝄞d\n\nx";
        let lines = Lines::new(text, Encoding::Utf16);
        // 'ç' is one unit, '𝄞' two: 'd' sits at character 3 of line 1.
        let d = text.find('d').unwrap() as u32;
        assert_eq!(lines.position(d), Position::new(1, 3));
        assert_eq!(lines.offset(Position::new(1, 3)), d);
        let utf8 = Lines::new(text, Encoding::Utf8);
        assert_eq!(utf8.position(d), Position::new(1, 6));
        // Past the end of a line, past the last line: clamped.
        assert_eq!(lines.offset(Position::new(0, 99)), 2);
        assert_eq!(lines.offset(Position::new(9, 0)), text.len() as u32);
    }

    #[test]
    fn incremental_changes_replace_their_range() {
        let mut text = String::from("f x =\n  x + 1\n");
        let change = TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(1, 6), Position::new(1, 7))),
            range_length: None,
            text: "2 * x".to_owned(),
        };
        apply_change(&mut text, &change, Encoding::Utf16);
        assert_eq!(text, "f x =\n  x + 2 * x\n");
    }
}
