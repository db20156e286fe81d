//! A small JSON parser that keeps the byte range of every value and key, so
//! each reader diagnostic can point at the field it is about (serde_json's
//! `Value` forgets positions).

use trellis_diag::TextRange;

/// Deeper nesting than any lock needs; the bound keeps hostile input from
/// exhausting the stack.
const MAX_DEPTH: usize = 64;

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub range: TextRange,
    pub value: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// The number's text, validated against the JSON grammar.
    Number(String),
    String(String),
    Array(Vec<Node>),
    Object(Vec<Member>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub key: String,
    pub key_range: TextRange,
    pub value: Node,
}

impl Value {
    /// The JSON type's name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub message: String,
    pub at: TextRange,
}

/// Parses one JSON document (surrounding whitespace allowed, nothing else).
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut parser = Parser {
        bytes: text.as_bytes(),
        text,
        pos: 0,
    };
    parser.skip_ws();
    let node = parser.value(0)?;
    parser.skip_ws();
    if parser.pos < parser.bytes.len() {
        return Err(parser.error_here("trailing characters after the JSON document"));
    }
    Ok(node)
}

struct Parser<'t> {
    bytes: &'t [u8],
    text: &'t str,
    pos: usize,
}

impl Parser<'_> {
    fn error_here(&self, message: &str) -> SyntaxError {
        let end = self.char_end(self.pos);
        SyntaxError {
            message: message.to_owned(),
            at: TextRange::new(self.pos as u32, end as u32),
        }
    }

    fn char_end(&self, at: usize) -> usize {
        match self.text.get(at..).and_then(|rest| rest.chars().next()) {
            Some(c) => at + c.len_utf8(),
            None => at,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        if depth > MAX_DEPTH {
            return Err(self.error_here("nesting is deeper than any lock allows"));
        }
        let start = self.pos;
        let value = match self.peek() {
            None => return Err(self.error_here("unexpected end of input; expected a value")),
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => Value::String(self.string()?),
            Some(b't') => self.literal("true", Value::Bool(true))?,
            Some(b'f') => self.literal("false", Value::Bool(false))?,
            Some(b'n') => self.literal("null", Value::Null)?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(_) => return Err(self.error_here("expected a JSON value")),
        };
        Ok(Node {
            range: TextRange::new(start as u32, self.pos as u32),
            value,
        })
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, SyntaxError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error_here("expected a JSON value"))
        }
    }

    fn number(&mut self) -> Result<Value, SyntaxError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error_here("expected a digit")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error_here("expected a digit after `.`"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error_here("expected a digit in the exponent"));
            }
            self.digits();
        }
        Ok(Value::Number(self.text[start..self.pos].to_owned()))
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        // Caller saw the opening quote.
        self.pos += 1;
        let mut out = String::new();
        loop {
            let run_start = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            out.push_str(&self.text[run_start..self.pos]);
            match self.peek() {
                None => return Err(self.error_here("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    let escape_start = self.pos;
                    self.pos += 1;
                    let c = match self.peek() {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.pos += 1;
                            let c = self.unicode_escape(escape_start)?;
                            out.push(c);
                            continue;
                        }
                        _ => return Err(self.error_here("invalid escape in string")),
                    };
                    self.pos += 1;
                    out.push(c);
                }
                Some(_) => return Err(self.error_here("control character in string")),
            }
        }
    }

    /// After `\u`: four hex digits, and a low surrogate escape after a high one.
    fn unicode_escape(&mut self, escape_start: usize) -> Result<char, SyntaxError> {
        let bad = |this: &Self| SyntaxError {
            message: "invalid \\u escape".to_owned(),
            at: TextRange::new(escape_start as u32, this.pos.min(this.bytes.len()) as u32),
        };
        let high = self.hex4().ok_or_else(|| bad(self))?;
        let code = if (0xD800..0xDC00).contains(&high) {
            if !self.bytes[self.pos..].starts_with(b"\\u") {
                return Err(bad(self));
            }
            self.pos += 2;
            let low = self.hex4().ok_or_else(|| bad(self))?;
            if !(0xDC00..0xE000).contains(&low) {
                return Err(bad(self));
            }
            0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
        } else {
            high
        };
        char::from_u32(code).ok_or_else(|| bad(self))
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.bytes.get(self.pos..self.pos + 4)?;
        let mut code = 0;
        for &d in digits {
            code = code * 16 + (d as char).to_digit(16)?;
        }
        self.pos += 4;
        Some(code)
    }

    fn array(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error_here("expected `,` or `]`")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        self.pos += 1;
        let mut members = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.error_here("expected a string key"));
            }
            let key_start = self.pos;
            let key = self.string()?;
            let key_range = TextRange::new(key_start as u32, self.pos as u32);
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.error_here("expected `:` after the key"));
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.value(depth + 1)?;
            members.push(Member {
                key,
                key_range,
                value,
            });
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.error_here("expected `,` or `}`")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keeps_ranges_of_keys_and_values() {
        let text = r#"{"a": [1, "x\u00e9\ud83d\ude00"], "b": null}"#;
        let node = parse(text).expect("parses");
        let Value::Object(members) = &node.value else {
            panic!("object expected")
        };
        assert_eq!(&text[members[0].key_range.as_usize_range()], r#""a""#);
        assert_eq!(
            &text[members[0].value.range.as_usize_range()],
            r#"[1, "x\u00e9\ud83d\ude00"]"#
        );
        let Value::Array(items) = &members[0].value.value else {
            panic!("array expected")
        };
        assert_eq!(items[1].value, Value::String("xé😀".to_owned()));
        assert_eq!(members[1].value.value, Value::Null);
    }

    #[test]
    fn errors_point_at_the_offending_byte() {
        let cases = [
            ("{\"a\" 1}", 5, "expected `:` after the key"),
            ("[1,]", 3, "expected a JSON value"),
            ("\"abc", 4, "unterminated string"),
            ("{} x", 3, "trailing characters after the JSON document"),
            ("01", 1, "trailing characters after the JSON document"),
            ("\"\\ud800\"", 1, "invalid \\u escape"),
        ];
        for (text, offset, message) in cases {
            let error = parse(text).expect_err(text);
            assert_eq!(
                (error.at.start, error.message.as_str()),
                (offset, message),
                "{text}"
            );
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let text = "[".repeat(10_000);
        let error = parse(&text).expect_err("too deep");
        assert_eq!(error.at.start, 65);
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,64}") {
            let _ = parse(&text);
        }

        #[test]
        fn agrees_with_serde_json_on_acceptance(text in "[\\[\\]{}\":,0-9a-z \\\\-]{0,24}") {
            let ours = parse(&text).is_ok();
            let theirs = serde_json::from_str::<serde_json::Value>(&text).is_ok();
            prop_assert_eq!(ours, theirs);
        }
    }
}
