//! The lexer: text to a flat token vector. Tokens carry only a kind and a byte
//! range; the parser slices names and literals out of the source on demand, so
//! lexing allocates nothing per token.

use trellis_diag::TextRange;

use crate::codes::SyntaxCode;
use crate::errors::SyntaxError;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    Lower,
    Upper,
    Underscore,
    Int,
    UInt,
    Float,
    Str,
    /// `?name`; the span includes the `?`.
    Hole,
    // Keywords.
    Let,
    In,
    If,
    Then,
    Else,
    Match,
    With,
    End,
    Type,
    And,
    Or,
    Not,
    True,
    False,
    Implies,
    Is,
    // Punctuation.
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Colon,
    ColonColon,
    Dot,
    DotDot,
    Arrow,
    Backslash,
    Pipe,
    Equals,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    PlusPlus,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Eof,
}

impl TokenKind {
    /// How the token is named in "expected X, found Y" messages.
    pub fn describe(self) -> &'static str {
        use TokenKind::*;
        match self {
            Lower => "a lower-case name",
            Upper => "an upper-case name",
            Underscore => "`_`",
            Int | UInt | Float => "a number",
            Str => "a string",
            Hole => "a hole",
            Let => "`let`",
            In => "`in`",
            If => "`if`",
            Then => "`then`",
            Else => "`else`",
            Match => "`match`",
            With => "`with`",
            End => "`end`",
            Type => "`type`",
            And => "`and`",
            Or => "`or`",
            Not => "`not`",
            True => "`true`",
            False => "`false`",
            Implies => "`implies`",
            Is => "`is`",
            LParen => "`(`",
            RParen => "`)`",
            LBracket => "`[`",
            RBracket => "`]`",
            LBrace => "`{`",
            RBrace => "`}`",
            Comma => "`,`",
            Colon => "`:`",
            ColonColon => "`::`",
            Dot => "`.`",
            DotDot => "`..`",
            Arrow => "`->`",
            Backslash => "`\\`",
            Pipe => "`|`",
            Equals => "`=`",
            EqEq => "`==`",
            NotEq => "`!=`",
            Lt => "`<`",
            Le => "`<=`",
            Gt => "`>`",
            Ge => "`>=`",
            PlusPlus => "`++`",
            Plus => "`+`",
            Minus => "`-`",
            Star => "`*`",
            Slash => "`/`",
            Percent => "`%`",
            Eof => "the end of the input",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub start: u32,
    pub end: u32,
}

impl Token {
    pub fn range(self) -> TextRange {
        TextRange::new(self.start, self.end)
    }
}

fn keyword(word: &[u8]) -> Option<TokenKind> {
    use TokenKind::*;
    Some(match word {
        b"let" => Let,
        b"in" => In,
        b"if" => If,
        b"then" => Then,
        b"else" => Else,
        b"match" => Match,
        b"with" => With,
        b"end" => End,
        b"type" => Type,
        b"and" => And,
        b"or" => Or,
        b"not" => Not,
        b"true" => True,
        b"false" => False,
        b"implies" => Implies,
        b"is" => Is,
        _ => return None,
    })
}

fn is_ident_continue(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Lexes `text` into tokens ending with one `Eof`, reporting lexical errors into
/// `errors`. Lexing always completes: a bad character is reported and skipped, an
/// unterminated string ends at the end of its line.
pub fn lex(text: &str, errors: &mut Vec<SyntaxError>) -> Vec<Token> {
    let mut lexer = Lexer {
        bytes: text.as_bytes(),
        text,
        pos: 0,
        errors,
        tokens: Vec::new(),
    };
    lexer.tokens.reserve(text.len() / 4 + 1);
    lexer.run();
    lexer.tokens
}

struct Lexer<'a, 'e> {
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
    errors: &'e mut Vec<SyntaxError>,
    tokens: Vec<Token>,
}

impl Lexer<'_, '_> {
    fn peek_at(&self, offset: usize) -> u8 {
        self.bytes.get(self.pos + offset).copied().unwrap_or(0)
    }

    fn push(&mut self, kind: TokenKind, start: usize) {
        self.tokens.push(Token {
            kind,
            start: start as u32,
            end: self.pos as u32,
        });
    }

    fn error(&mut self, code: SyntaxCode, start: usize, end: usize, message: String) {
        self.errors.push(SyntaxError::new(
            code,
            TextRange::new(start as u32, end as u32),
            message,
        ));
    }

    fn run(&mut self) {
        use TokenKind::*;
        while self.pos < self.bytes.len() {
            let start = self.pos;
            let byte = self.bytes[self.pos];
            let kind = match byte {
                b' ' | b'\t' | b'\n' | b'\r' => {
                    self.pos += 1;
                    continue;
                }
                b'a'..=b'z' | b'_' => {
                    self.pos += 1;
                    while self.pos < self.bytes.len() && is_ident_continue(self.bytes[self.pos]) {
                        self.pos += 1;
                    }
                    let word = &self.bytes[start..self.pos];
                    if word == b"_" {
                        Underscore
                    } else {
                        keyword(word).unwrap_or(Lower)
                    }
                }
                b'A'..=b'Z' => {
                    self.pos += 1;
                    while self.pos < self.bytes.len() && is_ident_continue(self.bytes[self.pos]) {
                        self.pos += 1;
                    }
                    Upper
                }
                b'0'..=b'9' => self.number(start),
                b'"' => self.string(start),
                b'?' => {
                    self.pos += 1;
                    if matches!(self.peek_at(0), b'a'..=b'z' | b'_') {
                        while self.pos < self.bytes.len() && is_ident_continue(self.bytes[self.pos])
                        {
                            self.pos += 1;
                        }
                        if keyword(&self.bytes[start + 1..self.pos]).is_some()
                            || &self.bytes[start + 1..self.pos] == b"_"
                        {
                            let name = self.text[start + 1..self.pos].to_owned();
                            self.error(
                                SyntaxCode::InvalidHole,
                                start,
                                self.pos,
                                format!("`{name}` is a keyword and cannot name a hole"),
                            );
                            continue;
                        }
                        Hole
                    } else {
                        self.error(
                            SyntaxCode::InvalidHole,
                            start,
                            start + 1,
                            "`?` must be followed directly by a lower-case hole name, as in `?gap`"
                                .to_owned(),
                        );
                        continue;
                    }
                }
                b'-' if self.peek_at(1) == b'-' => {
                    while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                    continue;
                }
                _ => match self.punctuation(byte) {
                    Some((kind, len)) => {
                        self.pos += len;
                        kind
                    }
                    None => {
                        let ch = self.text[start..].chars().next().unwrap_or('\u{fffd}');
                        self.pos += ch.len_utf8().max(1);
                        let hint = match ch {
                            '&' => " (use `and`)",
                            '!' => " (use `not`, or `!=` for inequality)",
                            '\'' => " (strings use double quotes)",
                            _ => "",
                        };
                        self.error(
                            SyntaxCode::UnexpectedCharacter,
                            start,
                            self.pos,
                            format!("unexpected character {ch:?}{hint}"),
                        );
                        continue;
                    }
                },
            };
            self.push(kind, start);
        }
        let end = self.bytes.len();
        self.tokens.push(Token {
            kind: Eof,
            start: end as u32,
            end: end as u32,
        });
    }

    fn punctuation(&self, byte: u8) -> Option<(TokenKind, usize)> {
        use TokenKind::*;
        let next = self.peek_at(1);
        Some(match (byte, next) {
            (b'(', _) => (LParen, 1),
            (b')', _) => (RParen, 1),
            (b'[', _) => (LBracket, 1),
            (b']', _) => (RBracket, 1),
            (b'{', _) => (LBrace, 1),
            (b'}', _) => (RBrace, 1),
            (b',', _) => (Comma, 1),
            (b':', b':') => (ColonColon, 2),
            (b':', _) => (Colon, 1),
            (b'.', b'.') => (DotDot, 2),
            (b'.', _) => (Dot, 1),
            (b'-', b'>') => (Arrow, 2),
            (b'-', _) => (Minus, 1),
            (b'\\', _) => (Backslash, 1),
            (b'|', _) => (Pipe, 1),
            (b'=', b'=') => (EqEq, 2),
            (b'=', _) => (Equals, 1),
            (b'!', b'=') => (NotEq, 2),
            (b'<', b'=') => (Le, 2),
            (b'<', _) => (Lt, 1),
            (b'>', b'=') => (Ge, 2),
            (b'>', _) => (Gt, 1),
            (b'+', b'+') => (PlusPlus, 2),
            (b'+', _) => (Plus, 1),
            (b'*', _) => (Star, 1),
            (b'/', _) => (Slash, 1),
            (b'%', _) => (Percent, 1),
            _ => return None,
        })
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        self.pos - start
    }

    /// `digits ('.' digits)? (('e'|'E') ('+'|'-')? digits)? 'u'?`. Values are
    /// range-checked by the parser; the lexer checks the shape.
    fn number(&mut self, start: usize) -> TokenKind {
        self.digits();
        let mut is_float = false;
        if self.peek_at(0) == b'.' && self.peek_at(1).is_ascii_digit() {
            self.pos += 1;
            self.digits();
            is_float = true;
        }
        if matches!(self.peek_at(0), b'e' | b'E') {
            let sign = usize::from(matches!(self.peek_at(1), b'+' | b'-'));
            if self.peek_at(1 + sign).is_ascii_digit() {
                self.pos += 1 + sign;
                self.digits();
                is_float = true;
            }
        }
        let mut kind = if is_float {
            TokenKind::Float
        } else {
            TokenKind::Int
        };
        if self.peek_at(0) == b'u' && !is_ident_continue(self.peek_at(1)) {
            self.pos += 1;
            if is_float {
                self.error(
                    SyntaxCode::InvalidNumber,
                    start,
                    self.pos,
                    "the `u` suffix applies only to integers".to_owned(),
                );
            }
            kind = TokenKind::UInt;
        }
        if self.pos < self.bytes.len() && is_ident_continue(self.bytes[self.pos]) {
            while self.pos < self.bytes.len() && is_ident_continue(self.bytes[self.pos]) {
                self.pos += 1;
            }
            let text = self.text[start..self.pos].to_owned();
            self.error(
                SyntaxCode::InvalidNumber,
                start,
                self.pos,
                format!("malformed number `{text}`"),
            );
        }
        kind
    }

    /// A string literal ends at its closing quote on the same line; escapes are
    /// validated here and decoded by [`decode_string`].
    fn string(&mut self, start: usize) -> TokenKind {
        self.pos += 1;
        loop {
            match self.bytes.get(self.pos).copied() {
                None | Some(b'\n') => {
                    self.error(
                        SyntaxCode::UnterminatedString,
                        start,
                        self.pos,
                        "string literal is not closed on its line (write a newline as `\\n`)"
                            .to_owned(),
                    );
                    return TokenKind::Str;
                }
                Some(b'"') => {
                    self.pos += 1;
                    return TokenKind::Str;
                }
                Some(b'\\') => {
                    let escape_start = self.pos;
                    self.pos += 1;
                    match self.bytes.get(self.pos).copied() {
                        Some(b'"' | b'\\' | b'n' | b't' | b'r') => self.pos += 1,
                        Some(b'u') => {
                            self.pos += 1;
                            if !self.unicode_escape() {
                                self.error(
                                    SyntaxCode::InvalidEscape,
                                    escape_start,
                                    self.pos,
                                    "a unicode escape is `\\u{` 1 to 6 hex digits naming a scalar value `}`"
                                        .to_owned(),
                                );
                            }
                        }
                        _ => {
                            let len = self.text[self.pos..]
                                .chars()
                                .next()
                                .filter(|&c| c != '\n')
                                .map_or(0, char::len_utf8);
                            self.pos += len;
                            self.error(
                                SyntaxCode::InvalidEscape,
                                escape_start,
                                self.pos,
                                "unknown escape; valid escapes are \\\" \\\\ \\n \\t \\r \\u{...}"
                                    .to_owned(),
                            );
                        }
                    }
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    /// After `\u`: `{hex+}` naming a Unicode scalar value.
    fn unicode_escape(&mut self) -> bool {
        if self.peek_at(0) != b'{' {
            return false;
        }
        self.pos += 1;
        let digits_start = self.pos;
        while self.peek_at(0).is_ascii_hexdigit() {
            self.pos += 1;
        }
        let digits = &self.text[digits_start..self.pos];
        if self.peek_at(0) != b'}' {
            return false;
        }
        self.pos += 1;
        (1..=6).contains(&digits.len())
            && u32::from_str_radix(digits, 16)
                .ok()
                .and_then(char::from_u32)
                .is_some()
    }
}

/// The value of a string token's text (quotes included). Invalid escapes were
/// already reported by the lexer; here they decode to U+FFFD.
pub fn decode_string(token_text: &str) -> String {
    let inner = token_text.strip_prefix('"').unwrap_or(token_text);
    let inner = inner.strip_suffix('"').unwrap_or(inner);
    if !inner.contains('\\') {
        return inner.to_owned();
    }
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('u') => {
                let rest = chars.as_str();
                let decoded = rest
                    .strip_prefix('{')
                    .and_then(|r| r.split_once('}'))
                    .and_then(|(hex, _)| {
                        u32::from_str_radix(hex, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .map(|c| (c, hex.len() + 2))
                    });
                match decoded {
                    Some((c, consumed)) => {
                        out.push(c);
                        chars = rest[consumed..].chars();
                    }
                    None => out.push('\u{fffd}'),
                }
            }
            _ => out.push('\u{fffd}'),
        }
    }
    out
}
