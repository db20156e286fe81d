//! Patterns (spec §6).

use crate::ast::{FieldPattern, ListRest, Literal, Pattern, PatternKind};
use crate::codes::SyntaxCode;
use crate::lexer::TokenKind;

use super::{NameSet, PResult, Parser};

impl Parser<'_> {
    /// `Upper atom` (a constructor with a positional payload) or an atom.
    pub(super) fn pattern(&mut self) -> PResult<Pattern> {
        self.enter()?;
        let result = self.pattern_inner();
        self.leave();
        result
    }

    fn pattern_inner(&mut self) -> PResult<Pattern> {
        if self.at(TokenKind::Upper) && self.peek_at(1) != TokenKind::LBrace {
            let start = self.start();
            let name = self.bump();
            let name = self.ident(name);
            let payload = if self.at_pattern_atom() {
                Some(Box::new(self.pattern_atom()?))
            } else {
                None
            };
            return Ok(Pattern {
                kind: PatternKind::Constructor { name, payload },
                span: self.span_from(start),
            });
        }
        self.pattern_atom()
    }

    fn at_pattern_atom(&self) -> bool {
        use TokenKind::*;
        match self.peek() {
            Underscore | Upper | Lower | Int | UInt | Float | Str | True | False | LParen
            | LBracket => true,
            Minus => matches!(self.peek_at(1), Int | Float),
            _ => false,
        }
    }

    fn pattern_atom(&mut self) -> PResult<Pattern> {
        self.enter()?;
        let result = self.pattern_atom_inner();
        self.leave();
        result
    }

    fn pattern_atom_inner(&mut self) -> PResult<Pattern> {
        let start = self.start();
        let kind = match self.peek() {
            TokenKind::Underscore => {
                self.bump();
                PatternKind::Wildcard
            }
            TokenKind::Lower => {
                let token = self.bump();
                PatternKind::Var(self.ident(token))
            }
            TokenKind::Upper if self.peek_at(1) == TokenKind::LBrace => self.record_pattern()?,
            TokenKind::Upper => {
                let token = self.bump();
                PatternKind::Constructor {
                    name: self.ident(token),
                    payload: None,
                }
            }
            TokenKind::Int
            | TokenKind::UInt
            | TokenKind::Str
            | TokenKind::True
            | TokenKind::False => PatternKind::Literal(self.literal_token(false, start)?),
            TokenKind::Minus if self.peek_at(1) == TokenKind::Int => {
                self.bump();
                PatternKind::Literal(self.literal_token(true, start)?)
            }
            TokenKind::Float => return Err(self.float_pattern()),
            TokenKind::Minus if self.peek_at(1) == TokenKind::Float => {
                self.bump();
                return Err(self.float_pattern());
            }
            TokenKind::LParen => {
                let open = self.open_bracket();
                if self.at(TokenKind::RParen) {
                    self.close_bracket(open, TokenKind::RParen)?;
                    PatternKind::Literal(Literal::Unit)
                } else {
                    let first = self.pattern()?;
                    if self.at(TokenKind::Comma) {
                        let mut elements = vec![first];
                        while self.eat(TokenKind::Comma).is_some() {
                            elements.push(self.pattern()?);
                        }
                        self.close_bracket(open, TokenKind::RParen)?;
                        PatternKind::Tuple(elements)
                    } else {
                        self.close_bracket(open, TokenKind::RParen)?;
                        first.kind
                    }
                }
            }
            TokenKind::LBracket => self.list_pattern()?,
            _ => return Err(self.unexpected("a pattern")),
        };
        Ok(Pattern {
            kind,
            span: self.span_from(start),
        })
    }

    fn float_pattern(&mut self) -> super::Abort {
        let range = self.current().range();
        self.error(
            SyntaxCode::FloatPattern,
            range,
            "floating-point literals cannot be patterns; compare with `==` in a guard",
        )
    }

    /// `Name { field, field = pattern, .. }`
    fn record_pattern(&mut self) -> PResult<PatternKind> {
        let name = self.bump();
        let name = self.ident(name);
        let open = self.open_bracket();
        let mut fields = Vec::new();
        let mut names = NameSet::default();
        let mut rest = false;
        if !self.at(TokenKind::RBrace) {
            loop {
                if self.eat(TokenKind::DotDot).is_some() {
                    rest = true;
                    break;
                }
                let start = self.start();
                let field = self.expect(TokenKind::Lower, "naming a field")?;
                let repeated = !names.insert(self.text_of(field));
                let field = self.ident(field);
                self.check_new_field(repeated, &field)?;
                let pattern = if self.eat(TokenKind::Equals).is_some() {
                    Some(self.pattern()?)
                } else {
                    None
                };
                fields.push(FieldPattern {
                    name: field,
                    pattern,
                    span: self.span_from(start),
                });
                if self.eat(TokenKind::Comma).is_none() {
                    break;
                }
            }
        }
        self.close_bracket(open, TokenKind::RBrace)?;
        Ok(PatternKind::Record { name, fields, rest })
    }

    /// `[]`, `[p, q]`, `[p, ..rest]`, `[p, ..]`, `[..rest]`.
    fn list_pattern(&mut self) -> PResult<PatternKind> {
        let open = self.open_bracket();
        let mut elements = Vec::new();
        let mut rest = None;
        if !self.at(TokenKind::RBracket) {
            loop {
                if let Some(dots) = self.eat(TokenKind::DotDot) {
                    let binder = self.eat(TokenKind::Lower).map(|token| self.ident(token));
                    rest = Some(ListRest {
                        binder,
                        span: self.span_from(dots.start),
                    });
                    break;
                }
                elements.push(self.pattern()?);
                if self.eat(TokenKind::Comma).is_none() {
                    break;
                }
            }
        }
        self.close_bracket(open, TokenKind::RBracket)?;
        Ok(PatternKind::List { elements, rest })
    }
}
