//! The recursive-descent parser: shared cursor, error and recovery machinery, and
//! the entry points for whole files and for the fragments `.tr` blocks hold.
//! Expressions use precedence climbing over the table in spec §8.
//!
//! Errors abort the current item (an `Abort` propagates with `?`); the file parser
//! then skips to the next token that starts an item at the beginning of a line, so
//! one mistake does not hide the rest of the file.

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
    bracket_depth: u32,
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
            bracket_depth: 0,
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
        if self.bracket_depth != 0 || !self.item_start.get(index).copied().unwrap_or(false) {
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

    fn leave(&mut self) {
        self.nesting = self.nesting.saturating_sub(1);
    }

    fn open_bracket(&mut self) -> Token {
        self.bracket_depth += 1;
        self.bump()
    }

    fn close_bracket(&mut self, open: Token, close: TokenKind) -> PResult<Token> {
        let token = self.expect_close(open, close)?;
        self.bracket_depth = self.bracket_depth.saturating_sub(1);
        Ok(token)
    }

    /// Skips to the next item start at the beginning of a line (or the end). The
    /// token the failed item began with is always skipped, so recovery advances.
    fn recover_to_item(&mut self, item_began_at: usize) {
        self.bracket_depth = 0;
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
            match self.item() {
                Ok(item) => items.push(item),
                Err(Abort) => self.recover_to_item(item_began_at),
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
