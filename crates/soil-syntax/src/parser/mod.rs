//! The recursive-descent parser: shared cursor, error and recovery machinery, and
//! the entry points for whole files and for the fragments `.tr` blocks hold.
//! Expressions use precedence climbing over the table in spec §8.
//!
//! Errors abort the current item (an `Abort` propagates with `?`); the file parser
//! then skips to the next token that starts an item at the beginning of a line, so
//! one mistake does not hide the rest of the file. When the item failed inside a
//! bracket that was still open at the start of a later item's line, the mistake
//! is that bracket: it is reported once and parsing resumes at that line.

mod exprs;
pub(crate) use exprs::level;
mod items;
mod patterns;
mod types;

use trellis_diag::TextRange;

use crate::ast::{Expr, Ident, Item, Signature, SourceFile, Type, TypeDecl};
use crate::codes::SyntaxCode;
use crate::errors::SyntaxError;
use crate::lexer::{Token, TokenKind, lex};

/// How deep expressions, types and patterns may nest (spec §7.3). Bounded so that
/// the parser, the printer and dropping a tree never exhaust the stack.
pub const MAX_NESTING: u32 = 128;

/// The error has been recorded; unwind to the enclosing item.
#[derive(Debug)]
pub(crate) struct Abort;

pub(crate) type PResult<T> = Result<T, Abort>;

pub(crate) struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    /// `item_start[i]`: token `i` begins an item if it is at bracket depth 0
    /// (spec §7.2). Precomputed in one backward pass so the check is O(1).
    item_start: Vec<bool>,
    pos: usize,
    last_end: u32,
    errors: Vec<SyntaxError>,
    /// The brackets open around the cursor, innermost last.
    open_brackets: Vec<Token>,
    /// The first token of the current item passed while brackets were open that
    /// would begin an item at the start of a line were they closed: where the
    /// file parser resumes if the item fails with that bracket still open.
    swallowed: Option<Swallowed>,
    nesting: u32,
    predicate_mode: bool,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut errors = Vec::new();
        let tokens = lex(text, &mut errors);
        let item_start = compute_item_starts(&tokens);
        Self {
            text,
            tokens,
            item_start,
            pos: 0,
            last_end: 0,
            errors,
            open_brackets: Vec::new(),
            swallowed: None,
            nesting: 0,
            predicate_mode: false,
        }
    }

    // ---- cursor -------------------------------------------------------------

    fn peek(&self) -> TokenKind {
        self.tokens[self.pos].kind
    }

    fn peek_at(&self, offset: usize) -> TokenKind {
        self.tokens
            .get(self.pos + offset)
            .map_or(TokenKind::Eof, |t| t.kind)
    }

    fn current(&self) -> Token {
        self.tokens[self.pos]
    }

    fn at(&self, kind: TokenKind) -> bool {
        self.peek() == kind
    }

    fn bump(&mut self) -> Token {
        let token = self.tokens[self.pos];
        if self.swallowed.is_none() && !self.open_brackets.is_empty() {
            self.note_swallowed();
        }
        if token.kind != TokenKind::Eof {
            self.pos += 1;
            self.last_end = token.end;
        }
        token
    }

    fn eat(&mut self, kind: TokenKind) -> Option<Token> {
        if self.at(kind) {
            Some(self.bump())
        } else {
            None
        }
    }

    fn expect(&mut self, kind: TokenKind, context: &str) -> PResult<Token> {
        if self.at(kind) {
            Ok(self.bump())
        } else {
            Err(self.unexpected(&format!("{} {context}", kind.describe())))
        }
    }

    /// Consumes the closer matching `open`; a missing closer at the end of the input
    /// is reported at the opener.
    fn expect_close(&mut self, open: Token, close: TokenKind) -> PResult<Token> {
        if self.at(close) {
            return Ok(self.bump());
        }
        if self.at(TokenKind::Eof) {
            return Err(self.error(
                SyntaxCode::UnclosedDelimiter,
                open.range(),
                format!("{} is never closed", open.kind.describe()),
            ));
        }
        Err(self.unexpected(&format!("{} or `,`", close.describe())))
    }

    fn text_of(&self, token: Token) -> &'a str {
        &self.text[token.start as usize..token.end as usize]
    }

    fn ident(&self, token: Token) -> Ident {
        Ident {
            text: self.text_of(token).to_owned(),
            span: token.range(),
        }
    }

    /// The span from `start` to the end of the last consumed token.
    fn span_from(&self, start: u32) -> TextRange {
        TextRange::new(start, self.last_end.max(start))
    }

    fn start(&self) -> u32 {
        self.current().start
    }

    /// Token `pos + offset` begins the next item (spec §7.2): we are at bracket
    /// depth 0 and it is `type`, a name followed by `:`, or, at the start of a
    /// line, a name followed by names or `_` and `=`. The line-start condition
    /// settles `f a b = ...` after an expression ending in names: without it the
    /// equation could begin at any of them.
    fn at_item_start(&self, offset: usize) -> bool {
        let index = self.pos + offset;
        if !self.open_brackets.is_empty() || !self.item_start.get(index).copied().unwrap_or(false) {
            return false;
        }
        let token = self.tokens[index];
        token.kind == TokenKind::Type
            || self
                .tokens
                .get(index + 1)
                .is_some_and(|next| next.kind == TokenKind::Colon)
            || self.at_line_start(token.start)
    }

    // ---- errors -------------------------------------------------------------

    fn error(&mut self, code: SyntaxCode, range: TextRange, message: impl Into<String>) -> Abort {
        self.errors.push(SyntaxError::new(code, range, message));
        Abort
    }

    fn unexpected(&mut self, expected: &str) -> Abort {
        let token = self.current();
        let found = match token.kind {
            TokenKind::Eof => TokenKind::Eof.describe().to_owned(),
            _ => format!("`{}`", self.text_of(token)),
        };
        self.error(
            SyntaxCode::UnexpectedToken,
            token.range(),
            format!("expected {expected}, found {found}"),
        )
    }

    /// Enters one level of nesting; paired with [`Parser::leave`].
    fn enter(&mut self) -> PResult<()> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            let range = self.current().range();
            return Err(self.error(
                SyntaxCode::NestingTooDeep,
                range,
                format!(
                    "expression nests more than {MAX_NESTING} levels deep; name a part with `let`"
                ),
            ));
        }
        Ok(())
    }

    /// [`Parser::enter`] for one more of a flat list that nests in meaning
    /// (arguments, parameters): its error names the list.
    fn enter_counting(&mut self, what: &str) -> PResult<()> {
        if self.nesting < MAX_NESTING {
            self.nesting += 1;
            return Ok(());
        }
        let range = self.current().range();
        Err(self.error(
            SyntaxCode::NestingTooDeep,
            range,
            format!(
                "too many {what}: with what encloses them they nest more than {MAX_NESTING} levels deep"
            ),
        ))
    }

    fn leave(&mut self) {
        self.nesting = self.nesting.saturating_sub(1);
    }

    fn open_bracket(&mut self) -> Token {
        let token = self.bump();
        self.open_brackets.push(token);
        token
    }

    fn close_bracket(&mut self, open: Token, close: TokenKind) -> PResult<Token> {
        let token = self.expect_close(open, close)?;
        self.open_brackets.pop();
        // A bracket that closes after all held a line that looked like an item
        // (a field `name = e` at column 1, say): that was no boundary.
        if self
            .swallowed
            .is_some_and(|s| s.depth > self.open_brackets.len())
        {
            self.swallowed = None;
        }
        Ok(token)
    }

    /// Records the token under the cursor as [`Parser::swallowed`] if it would
    /// begin an item at the start of a line.
    fn note_swallowed(&mut self) {
        let token = self.tokens[self.pos];
        if self.item_start[self.pos] && self.at_line_start(token.start) {
            self.swallowed = Some(Swallowed {
                index: self.pos,
                opener: *self.open_brackets.last().expect("a bracket is open"),
                depth: self.open_brackets.len(),
            });
        }
    }

    /// After the item that began at token `item_began_at` failed with
    /// `errors_before` errors recorded before it: when a bracket it opened was
    /// still open at a line that begins an item, the one mistake is that bracket.
    /// Its error replaces what the item reported after swallowing that line, and
    /// parsing resumes at the line, so the items after it are kept (spec §7.3).
    fn recover_unclosed(&mut self, errors_before: usize) -> bool {
        if self.swallowed.is_none() && !self.open_brackets.is_empty() {
            // The failing token itself may be the boundary.
            self.note_swallowed();
        }
        let Some(swallowed) = self.swallowed.take() else {
            return false;
        };
        let still_open = self.open_brackets.get(swallowed.depth - 1) == Some(&swallowed.opener);
        if !still_open {
            return false;
        }
        self.errors.truncate(errors_before);
        let describe = swallowed.opener.kind.describe();
        self.errors.push(SyntaxError::new(
            SyntaxCode::UnclosedDelimiter,
            swallowed.opener.range(),
            format!("{describe} is never closed: the next item begins before its closer"),
        ));
        self.pos = swallowed.index;
        self.open_brackets.clear();
        self.nesting = 0;
        true
    }

    /// Skips to the next item start at the beginning of a line (or the end). The
    /// token the failed item began with is always skipped, so recovery advances.
    fn recover_to_item(&mut self, item_began_at: usize) {
        self.open_brackets.clear();
        self.swallowed = None;
        self.nesting = 0;
        if self.pos == item_began_at {
            self.bump();
        }
        while !self.at(TokenKind::Eof) {
            let token = self.current();
            if self.item_start[self.pos] && self.at_line_start(token.start) {
                break;
            }
            self.bump();
        }
    }

    fn at_line_start(&self, offset: u32) -> bool {
        let offset = offset as usize;
        offset == 0 || self.text.as_bytes().get(offset - 1) == Some(&b'\n')
    }

    /// Requires the whole input to have been consumed.
    fn expect_eof(&mut self) -> PResult<()> {
        if self.at(TokenKind::Eof) {
            Ok(())
        } else {
            Err(self.unexpected("the end of the input"))
        }
    }

    fn finish(self) -> Vec<SyntaxError> {
        let mut errors = self.errors;
        errors.sort_by_key(|error| (error.range.start, error.range.end));
        crate::errors::cap(&mut errors);
        errors
    }

    // ---- entry points ---------------------------------------------------------

    pub(crate) fn source_file(mut self) -> (SourceFile, Vec<SyntaxError>) {
        // Items begin at item starts at the beginning of a line (in canonical and
        // conventional layout, always): their count sizes the list once instead
        // of doubling it through the file. It is only an estimate; the list still
        // grows if items share lines.
        let capacity = (0..self.tokens.len())
            .filter(|&i| self.item_start[i] && self.at_line_start(self.tokens[i].start))
            .count();
        let mut items = Vec::with_capacity(capacity);
        while !self.at(TokenKind::Eof) {
            let item_began_at = self.pos;
            let errors_before = self.errors.len();
            self.swallowed = None;
            match self.item() {
                Ok(item) => items.push(item),
                Err(Abort) => {
                    if !self.recover_unclosed(errors_before) {
                        self.recover_to_item(item_began_at);
                    }
                }
            }
        }
        let file = SourceFile {
            items,
            span: TextRange::new(0, self.text.len() as u32),
        };
        (file, self.finish())
    }

    fn fragment<T>(
        mut self,
        parse: impl FnOnce(&mut Self) -> PResult<T>,
    ) -> (Option<T>, Vec<SyntaxError>) {
        let result = parse(&mut self).and_then(|node| self.expect_eof().map(|()| node));
        (result.ok(), self.finish())
    }

    pub(crate) fn signature_fragment(self) -> (Option<Signature>, Vec<SyntaxError>) {
        self.fragment(|p| {
            if p.at(TokenKind::Lower) && p.peek_at(1) == TokenKind::Colon {
                p.signature()
            } else {
                Err(p.unexpected("a signature `name : Type`"))
            }
        })
    }

    pub(crate) fn type_decl_fragment(self) -> (Option<TypeDecl>, Vec<SyntaxError>) {
        self.fragment(|p| p.type_decl())
    }

    pub(crate) fn type_fragment(self) -> (Option<Type>, Vec<SyntaxError>) {
        self.fragment(|p| p.ty())
    }

    pub(crate) fn expr_fragment(mut self, predicate: bool) -> (Option<Expr>, Vec<SyntaxError>) {
        self.predicate_mode = predicate;
        self.fragment(|p| p.expr())
    }

    pub(crate) fn item_fragment(self) -> (Option<Item>, Vec<SyntaxError>) {
        self.fragment(|p| p.item())
    }
}

/// The names a record, pattern or sum has given so far, to find one given
/// twice in constant time however many there are.
pub(crate) type NameSet<'a> = std::collections::HashSet<&'a str>;

/// See [`Parser::swallowed`].
#[derive(Clone, Copy, Debug)]
struct Swallowed {
    /// The token that would begin an item.
    index: usize,
    /// The innermost bracket open when it was passed, and how many were.
    opener: Token,
    depth: usize,
}

/// `item_start[i]` holds when token `i` is `type`, or a lower-case name followed by
/// `:`, or a lower-case name followed by lower-case names or `_` and then `=`.
fn compute_item_starts(tokens: &[Token]) -> Vec<bool> {
    use TokenKind::*;
    let mut item_start = vec![false; tokens.len()];
    // `run_to_equals`: token i is a name or `_` and the name run from i ends in `=`.
    let mut next_runs_to_equals = false;
    for i in (0..tokens.len()).rev() {
        let kind = tokens[i].kind;
        let next = tokens.get(i + 1).map_or(Eof, |t| t.kind);
        let runs_to_equals =
            matches!(kind, Lower | Underscore) && (next == Equals || next_runs_to_equals);
        item_start[i] = kind == Type || (kind == Lower && (next == Colon || runs_to_equals));
        next_runs_to_equals = runs_to_equals;
    }
    item_start
}
