//! Positions between the database's byte offsets and the protocol's line and
//! character pairs — here and nowhere else, with the editor's incremental
//! changes applied through the same conversion. The protocol counts characters
//! in UTF-16 code units unless client and server agree on UTF-8 at `initialize`
//! (the server takes UTF-8 when offered: it is what the database counts in).
//! Lines end at `\n`, `\r\n` or a lone `\r`, as the protocol says; a line's
//! characters never include its terminator.
//!
//! Two readings of a position: a request's is taken leniently (a stale position
//! past a line's end or the text's end is clamped, the protocol's own rule, so a
//! request never fails on it), an edit's strictly ([`Lines::checked_offset`]):
//! an edit that names a line the text does not have, or the middle of a
//! character, cannot be applied faithfully, and the server says so instead of
//! editing somewhere else.

use std::fmt;

use lsp_types::{Position, Range, TextDocumentContentChangeEvent};
use trellis_diag::TextRange;

/// How the protocol counts a line's characters, as negotiated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

impl Encoding {
    fn width(self, c: char) -> u32 {
        match self {
            Encoding::Utf8 => c.len_utf8() as u32,
            Encoding::Utf16 => c.len_utf16() as u32,
        }
    }
}

/// Why an edit's position does not name a place in the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PositionError {
    /// The line is past the text's last line.
    NoSuchLine { line: u32, lines: u32 },
    /// The character falls inside one character of the text (a UTF-8
    /// sequence, or a UTF-16 surrogate pair).
    InsideCharacter { line: u32, character: u32 },
    /// The range ends before it starts.
    Backwards { start: Position, end: Position },
}

impl fmt::Display for PositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PositionError::NoSuchLine { line, lines } => {
                write!(f, "line {line} does not exist (the text has {lines} lines)")
            }
            PositionError::InsideCharacter { line, character } => write!(
                f,
                "line {line}, character {character} falls inside a character"
            ),
            PositionError::Backwards { start, end } => write!(
                f,
                "the range ends ({}:{}) before it starts ({}:{})",
                end.line, end.character, start.line, start.character
            ),
        }
    }
}

/// Where each line of one text starts and ends, for converting both ways.
pub struct Lines<'a> {
    text: &'a str,
    /// Each line's first byte and the byte after its last character (before
    /// its terminator).
    lines: Vec<(u32, u32)>,
    encoding: Encoding,
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str, encoding: Encoding) -> Lines<'a> {
        let bytes = text.as_bytes();
        let mut lines = Vec::new();
        let mut start = 0usize;
        let mut at = 0usize;
        while at < bytes.len() {
            let terminator = match bytes[at] {
                b'\n' => 1,
                b'\r' if bytes.get(at + 1) == Some(&b'\n') => 2,
                b'\r' => 1,
                _ => {
                    at += 1;
                    continue;
                }
            };
            lines.push((start as u32, at as u32));
            at += terminator;
            start = at;
        }
        lines.push((start as u32, bytes.len() as u32));
        Lines {
            text,
            lines,
            encoding,
        }
    }

    /// The protocol position of a byte offset (clamped to the text, to a
    /// character boundary and to its line's characters).
    pub fn position(&self, offset: u32) -> Position {
        let mut offset = (offset as usize).min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self
            .lines
            .partition_point(|&(start, _)| start as usize <= offset)
            - 1;
        let (start, end) = self.lines[line];
        let offset = offset.min(end as usize);
        let character: u32 = self.text[start as usize..offset]
            .chars()
            .map(|c| self.encoding.width(c))
            .sum();
        Position::new(line as u32, character)
    }

    pub fn range(&self, range: TextRange) -> Range {
        Range::new(self.position(range.start), self.position(range.end))
    }

    /// The byte offset of a request's position. A line past the end is the end
    /// of the text; a character past the end of its line is the line's end (the
    /// protocol's own rule); a character inside a character is that
    /// character's start — so a stale position never panics and never splits
    /// a character.
    pub fn offset(&self, position: Position) -> u32 {
        match self.locate(position) {
            Located::At(offset) | Located::Inside { start: offset } => offset,
            Located::PastTheEnd => self.text.len() as u32,
        }
    }

    /// The byte offset of an edit's position, or why it names no place: a line
    /// the text does not have, or the middle of a character. A character past
    /// its line's end is the line's end (the protocol's rule), and the line
    /// just after the last one, at character 0, is the end of the text (what
    /// clients send to append).
    pub fn checked_offset(&self, position: Position) -> Result<u32, PositionError> {
        match self.locate(position) {
            Located::At(offset) => Ok(offset),
            Located::Inside { .. } => Err(PositionError::InsideCharacter {
                line: position.line,
                character: position.character,
            }),
            Located::PastTheEnd
                if position.line as usize == self.lines.len() && position.character == 0 =>
            {
                Ok(self.text.len() as u32)
            }
            Located::PastTheEnd => Err(PositionError::NoSuchLine {
                line: position.line,
                lines: self.lines.len() as u32,
            }),
        }
    }

    fn locate(&self, position: Position) -> Located {
        let Some(&(start, end)) = self.lines.get(position.line as usize) else {
            return Located::PastTheEnd;
        };
        let line = &self.text[start as usize..end as usize];
        let mut counted = 0u32;
        for (at, c) in line.char_indices() {
            if counted == position.character {
                return Located::At(start + at as u32);
            }
            counted += self.encoding.width(c);
            if counted > position.character {
                return Located::Inside {
                    start: start + at as u32,
                };
            }
        }
        Located::At(end)
    }
}

enum Located {
    At(u32),
    Inside { start: u32 },
    PastTheEnd,
}

/// Applies one of an editor's changes: a range replaced, or (no range) the whole
/// text. A range that names no place leaves `text` as it was.
pub fn apply_change(
    text: &mut String,
    change: &TextDocumentContentChangeEvent,
    encoding: Encoding,
) -> Result<(), PositionError> {
    match change.range {
        None => text.clone_from(&change.text),
        Some(range) => {
            let lines = Lines::new(text, encoding);
            let start = lines.checked_offset(range.start)? as usize;
            let end = lines.checked_offset(range.end)? as usize;
            if end < start {
                return Err(PositionError::Backwards {
                    start: range.start,
                    end: range.end,
                });
            }
            text.replace_range(start..end, &change.text);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The characters the position bugs were found with: an em dash, curly
    /// quotes, an arrow, a no-break space (two UTF-8 bytes, one UTF-16 unit),
    /// emoji (four bytes, a surrogate pair), and a combining accent.
    const MULTI_BYTE: &[char] = &['—', '“', '”', '→', '\u{a0}', '😀', '𝄞', 'é', '\u{301}'];

    fn units(text: &str, encoding: Encoding) -> u32 {
        text.chars().map(|c| encoding.width(c)).sum()
    }

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

    /// Every character boundary of a line of multi-byte text converts to a
    /// position and back, in both encodings; a position inside a character is
    /// its start for a request and an error for an edit.
    #[test]
    fn every_boundary_of_multi_byte_text_round_trips_in_both_encodings() {
        let text: String = format!(
            "prose{}word\n“quoted” → 😀\u{a0}x\r\n\"𝄞é\u{301}\"\rend",
            MULTI_BYTE.iter().collect::<String>()
        );
        for encoding in [Encoding::Utf8, Encoding::Utf16] {
            let lines = Lines::new(&text, encoding);
            for (at, c) in text.char_indices().chain([(text.len(), ' ')]) {
                if at < text.len() && (c == '\n' || (c == '\r')) {
                    continue;
                }
                let position = lines.position(at as u32);
                assert_eq!(lines.offset(position), at as u32, "{encoding:?} at {at}");
                assert_eq!(lines.checked_offset(position), Ok(at as u32));
                if at < text.len() && encoding.width(c) > 1 {
                    let inside = Position::new(position.line, position.character + 1);
                    assert_eq!(lines.offset(inside), at as u32, "{encoding:?} inside {c:?}");
                    assert!(matches!(
                        lines.checked_offset(inside),
                        Err(PositionError::InsideCharacter { .. })
                    ));
                }
            }
            // A byte offset inside a character is that character's position.
            let dash = text.find('—').unwrap();
            assert_eq!(lines.position(dash as u32 + 1), lines.position(dash as u32));
        }
    }

    /// `\r\n` and a lone `\r` end lines, as the protocol says, and a line's
    /// end never reaches into its terminator.
    #[test]
    fn lines_end_at_crlf_and_lone_cr_without_their_terminator() {
        let text = "a—\r\nb\rc\n";
        for encoding in [Encoding::Utf8, Encoding::Utf16] {
            let lines = Lines::new(text, encoding);
            let width = units("a—", encoding);
            assert_eq!(lines.offset(Position::new(0, 99)), 4, "before the \\r");
            assert_eq!(lines.offset(Position::new(0, width)), 4);
            assert_eq!(lines.offset(Position::new(1, 0)), 6);
            assert_eq!(lines.offset(Position::new(2, 0)), 8);
            assert_eq!(lines.offset(Position::new(3, 0)), text.len() as u32);
            // Between \r and \n is the end of line 0.
            assert_eq!(lines.position(5), Position::new(0, width));
            assert_eq!(
                lines.checked_offset(Position::new(4, 0)),
                Ok(text.len() as u32)
            );
            assert_eq!(
                lines.checked_offset(Position::new(5, 0)),
                Err(PositionError::NoSuchLine { line: 5, lines: 4 })
            );
        }
    }

    #[test]
    fn incremental_changes_replace_their_range() {
        let mut text = String::from("f x =\n  x + 1\n");
        let change = TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(1, 6), Position::new(1, 7))),
            range_length: None,
            text: "2 * x".to_owned(),
        };
        apply_change(&mut text, &change, Encoding::Utf16).unwrap();
        assert_eq!(text, "f x =\n  x + 2 * x\n");
    }

    /// An edit after a multi-byte character lands after it in both encodings;
    /// one that names no place leaves the text alone and says why.
    #[test]
    fn edits_after_multi_byte_characters_and_edits_that_name_no_place() {
        for encoding in [Encoding::Utf8, Encoding::Utf16] {
            for &c in MULTI_BYTE {
                let mut text = format!("x{c}y\n");
                let at = units(&format!("x{c}"), encoding);
                let change = TextDocumentContentChangeEvent {
                    range: Some(Range::new(Position::new(0, at), Position::new(0, at + 1))),
                    range_length: None,
                    text: "z".to_owned(),
                };
                apply_change(&mut text, &change, encoding).unwrap();
                assert_eq!(text, format!("x{c}z\n"), "{encoding:?} {c:?}");
            }
            let mut text = String::from("😀\n");
            let before = text.clone();
            let inside = TextDocumentContentChangeEvent {
                range: Some(Range::new(Position::new(0, 1), Position::new(0, 1))),
                range_length: None,
                text: "!".to_owned(),
            };
            let error = apply_change(&mut text, &inside, encoding).unwrap_err();
            assert_eq!(
                error.to_string(),
                "line 0, character 1 falls inside a character"
            );
            let past = TextDocumentContentChangeEvent {
                range: Some(Range::new(Position::new(7, 0), Position::new(7, 0))),
                range_length: None,
                text: "!".to_owned(),
            };
            let error = apply_change(&mut text, &past, encoding).unwrap_err();
            assert_eq!(
                error.to_string(),
                "line 7 does not exist (the text has 2 lines)"
            );
            let backwards = TextDocumentContentChangeEvent {
                range: Some(Range::new(Position::new(1, 0), Position::new(0, 0))),
                range_length: None,
                text: "!".to_owned(),
            };
            assert!(matches!(
                apply_change(&mut text, &backwards, encoding),
                Err(PositionError::Backwards { .. })
            ));
            assert_eq!(text, before);
        }
    }

    fn multi_byte_text() -> impl Strategy<Value = String> {
        let pieces = prop_oneof![
            Just("a".to_owned()),
            Just(" ".to_owned()),
            Just("\n".to_owned()),
            Just("\r\n".to_owned()),
            Just("\r".to_owned()),
            proptest::sample::select(MULTI_BYTE).prop_map(String::from),
        ];
        proptest::collection::vec(pieces, 0..40).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        /// Any offset maps to a position that maps back to a character
        /// boundary at or before it, and never further than its line's end;
        /// any position at all maps to an offset without panicking.
        #[test]
        fn conversions_never_panic_and_land_on_boundaries(
            text in multi_byte_text(),
            offset in 0u32..200,
            line in 0u32..50,
            character in 0u32..50,
            utf8 in any::<bool>(),
        ) {
            let encoding = if utf8 { Encoding::Utf8 } else { Encoding::Utf16 };
            let lines = Lines::new(&text, encoding);
            let back = lines.offset(lines.position(offset)) as usize;
            prop_assert!(text.is_char_boundary(back));
            prop_assert!(back <= (offset as usize).min(text.len()));
            let at = lines.offset(Position::new(line, character)) as usize;
            prop_assert!(text.is_char_boundary(at));
            if let Ok(at) = lines.checked_offset(Position::new(line, character)) {
                prop_assert!(text.is_char_boundary(at as usize));
            }
        }
    }
}
