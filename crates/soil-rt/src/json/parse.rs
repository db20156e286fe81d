//! A small strict JSON reader (RFC 8259) producing a tree that keeps each
//! number's text (so integers decode exactly and floats parse correctly
//! rounded) and each node's byte offset (so errors carry a span).

use std::borrow::Cow;

/// Documents nested deeper than this are refused rather than risking the stack.
pub const MAX_DEPTH: usize = 512;

pub struct Node<'a> {
    pub at: u32,
    /// The offset just past the value.
    pub end: u32,
    pub kind: Kind<'a>,
}

/// An object member: the key, the key's byte range (quotes included), the value.
pub type Member<'a> = (Cow<'a, str>, (u32, u32), Node<'a>);

pub enum Kind<'a> {
    Null,
    Bool(bool),
    Number(&'a str),
    /// Borrowed from the text unless it held an escape.
    String(Cow<'a, str>),
    Array(Vec<Node<'a>>),
    /// Members in document order.
    Object(Vec<Member<'a>>),
}

impl Kind<'_> {
    pub fn describe(&self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool(_) => "a boolean",
            Kind::Number(_) => "a number",
            Kind::String(_) => "a string",
            Kind::Array(_) => "an array",
            Kind::Object(_) => "an object",
        }
    }
}

pub struct SyntaxError {
    pub at: u32,
    pub message: String,
}

pub fn parse(text: &str) -> Result<Node<'_>, SyntaxError> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    reader.skip_ws();
    let node = reader.value()?;
    reader.skip_ws();
    if reader.pos < reader.bytes.len() {
        return Err(reader.error("unexpected text after the JSON value"));
    }
    Ok(node)
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
}

impl<'a> Reader<'a> {
    fn error(&self, message: &str) -> SyntaxError {
        SyntaxError {
            at: self.pos as u32,
            message: message.to_owned(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        self.pos += (rest.iter())
            .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .unwrap_or(rest.len());
    }

    fn expect_word(&mut self, word: &str) -> Result<(), SyntaxError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.error("invalid literal"))
        }
    }

    fn value(&mut self) -> Result<Node<'a>, SyntaxError> {
        let at = self.pos as u32;
        let kind = match self.peek() {
            None => return Err(self.error("unexpected end of input")),
            Some(b'n') => {
                self.expect_word("null")?;
                Kind::Null
            }
            Some(b't') => {
                self.expect_word("true")?;
                Kind::Bool(true)
            }
            Some(b'f') => {
                self.expect_word("false")?;
                Kind::Bool(false)
            }
            Some(b'"') => Kind::String(self.string()?),
            Some(b'[') => self.nested(Reader::array)?,
            Some(b'{') => self.nested(Reader::object)?,
            Some(b'-' | b'0'..=b'9') => Kind::Number(self.number()?),
            Some(_) => return Err(self.error("expected a JSON value")),
        };
        Ok(Node {
            at,
            end: self.pos as u32,
            kind,
        })
    }

    fn nested(
        &mut self,
        body: fn(&mut Reader<'a>) -> Result<Kind<'a>, SyntaxError>,
    ) -> Result<Kind<'a>, SyntaxError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error("JSON nested too deeply"));
        }
        self.depth += 1;
        let kind = body(self);
        self.depth -= 1;
        kind
    }

    fn array(&mut self) -> Result<Kind<'a>, SyntaxError> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Kind::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value()?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Kind::Array(items));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn object(&mut self) -> Result<Kind<'a>, SyntaxError> {
        self.pos += 1;
        let mut members = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Kind::Object(members));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a string key"));
            }
            let key_at = self.pos as u32;
            let key = self.string()?;
            let key_range = (key_at, self.pos as u32);
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.error("expected `:`"));
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.value()?;
            members.push((key, key_range, value));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Kind::Object(members));
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn number(&mut self) -> Result<&'a str, SyntaxError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("invalid number: digits must follow `.`"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("invalid number: digits must follow the exponent"));
            }
            self.digits();
        }
        Ok(&self.text[start..self.pos])
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    /// A string's contents: borrowed from the text when it holds no escape
    /// (a lock's keys and values, a text argument), owned otherwise.
    fn string(&mut self) -> Result<Cow<'a, str>, SyntaxError> {
        self.pos += 1;
        let start = self.pos;
        let mut out: Option<String> = None;
        loop {
            let run_start = self.pos;
            // Eight bytes at a time while none of them can end the run (a
            // text argument is megabytes of plain characters).
            while let Some(chunk) = self.bytes.get(self.pos..self.pos + 8) {
                let mut word = [0u8; 8];
                word.copy_from_slice(chunk);
                if may_end_a_run(u64::from_le_bytes(word)) {
                    break;
                }
                self.pos += 8;
            }
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // The run ends at an ASCII byte, so it is on a character boundary.
            let run = &self.text[run_start..self.pos];
            match self.peek() {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(match out {
                        None => Cow::Borrowed(&self.text[start..self.pos - 1]),
                        Some(mut out) => {
                            out.push_str(run);
                            Cow::Owned(out)
                        }
                    });
                }
                Some(b'\\') => {
                    let out = out.get_or_insert_with(String::new);
                    out.push_str(run);
                    self.pos += 1;
                    self.escape(out)?;
                }
                Some(_) => return Err(self.error("control character in string")),
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), SyntaxError> {
        let Some(b) = self.peek() else {
            return Err(self.error("unterminated escape"));
        };
        self.pos += 1;
        match b {
            b'"' => out.push('"'),
            b'\\' => out.push('\\'),
            b'/' => out.push('/'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let high = self.hex4()?;
                let scalar = if (0xD800..0xDC00).contains(&high) {
                    if !self.bytes[self.pos..].starts_with(b"\\u") {
                        return Err(self.error("unpaired surrogate escape"));
                    }
                    self.pos += 2;
                    let low = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(self.error("unpaired surrogate escape"));
                    }
                    0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    high
                };
                match char::from_u32(scalar) {
                    Some(c) => out.push(c),
                    None => return Err(self.error("unpaired surrogate escape")),
                }
            }
            // At the character after the backslash, the one that is wrong.
            _ => {
                return Err(SyntaxError {
                    at: (self.pos - 1) as u32,
                    message: "invalid escape".to_owned(),
                });
            }
        }
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.error("truncated \\u escape"))?;
        let value =
            u32::from_str_radix(digits, 16).map_err(|_| self.error("invalid \\u escape"))?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(self.error("invalid \\u escape"));
        }
        self.pos += 4;
        Ok(value)
    }
}

/// Whether one of the eight bytes of `word` is `"`, `\\` or a control
/// character (below 0x20), the bytes that end a run of plain string text
/// (the zero-byte test: a byte's top bit survives the borrow only where the
/// byte was below the subtrahend).
pub(crate) fn may_end_a_run(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let quote = zero_byte(word ^ (ONES * u64::from(b'"')));
    let backslash = zero_byte(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    (quote | backslash | control) != 0
}
