//! Types (spec §3): arrows with named parameters and effect rows, application,
//! tuples, unit and variables.

use crate::ast::{EffectRow, FunctionType, Type, TypeKind};
use crate::codes::SyntaxCode;
use crate::lexer::TokenKind;

use super::{PResult, Parser};

impl Parser<'_> {
    /// `type := param ('->' row? type)?` where `param` is `(name : type)` or an
    /// application type.
    pub(super) fn ty(&mut self) -> PResult<Type> {
        self.enter()?;
        let result = self.ty_inner();
        self.leave();
        result
    }

    fn ty_inner(&mut self) -> PResult<Type> {
        let start = self.start();
        let named = self.at(TokenKind::LParen)
            && self.peek_at(1) == TokenKind::Lower
            && self.peek_at(2) == TokenKind::Colon;
        let (param_name, param) = if named {
            let open = self.open_bracket();
            let name = self.bump();
            let name = self.ident(name);
            self.bump();
            let param = self.ty()?;
            self.close_bracket(open, TokenKind::RParen)?;
            if !self.at(TokenKind::Arrow) {
                let range = self.span_from(start);
                return Err(self.error(
                    SyntaxCode::InvalidNamedParameter,
                    range,
                    "a named parameter `(name : Type)` must be followed by `->`",
                ));
            }
            (Some(name), param)
        } else {
            (None, self.app_type()?)
        };
        let Some(arrow) = self.eat(TokenKind::Arrow) else {
            return Ok(param);
        };
        let effects = self.effect_row(arrow.end)?;
        let result = self.ty()?;
        Ok(Type {
            kind: TypeKind::Function(Box::new(FunctionType {
                param_name,
                param,
                effects,
                result,
            })),
            span: self.span_from(start),
        })
    }

    /// `{Label, var, ...}` after an arrow, or nothing (the empty row at `at`).
    fn effect_row(&mut self, at: u32) -> PResult<EffectRow> {
        let mut row = EffectRow {
            labels: Vec::new(),
            vars: Vec::new(),
            span: trellis_diag::TextRange::empty(at),
        };
        if !self.at(TokenKind::LBrace) {
            return Ok(row);
        }
        let start = self.start();
        let open = self.open_bracket();
        if !self.at(TokenKind::RBrace) {
            loop {
                match self.peek() {
                    TokenKind::Upper => {
                        let token = self.bump();
                        row.labels.push(self.ident(token));
                    }
                    TokenKind::Lower => {
                        let token = self.bump();
                        row.vars.push(self.ident(token));
                    }
                    _ => return Err(self.unexpected("an effect label or row variable")),
                }
                if self.eat(TokenKind::Comma).is_none() {
                    break;
                }
            }
        }
        self.close_bracket(open, TokenKind::RBrace)?;
        row.span = self.span_from(start);
        Ok(row)
    }

    /// Whether the next token can start a type atom (and is not the start of the
    /// next item).
    pub(super) fn at_type_atom(&self) -> bool {
        match self.peek() {
            TokenKind::Upper | TokenKind::LParen => true,
            TokenKind::Lower => !self.at_item_start(0),
            _ => false,
        }
    }

    /// `Upper atom*` or a single atom.
    pub(super) fn app_type(&mut self) -> PResult<Type> {
        if !self.at(TokenKind::Upper) {
            return self.type_atom();
        }
        let start = self.start();
        let head = self.bump();
        let head = self.ident(head);
        let mut args = Vec::new();
        while self.at_type_atom() {
            args.push(self.type_atom()?);
        }
        let kind = if args.is_empty() {
            TypeKind::Named(head)
        } else {
            TypeKind::App { head, args }
        };
        Ok(Type {
            kind,
            span: self.span_from(start),
        })
    }

    fn type_atom(&mut self) -> PResult<Type> {
        let start = self.start();
        match self.peek() {
            TokenKind::Upper => {
                let token = self.bump();
                Ok(Type {
                    kind: TypeKind::Named(self.ident(token)),
                    span: token.range(),
                })
            }
            TokenKind::Lower => {
                let token = self.bump();
                Ok(Type {
                    kind: TypeKind::Var(self.ident(token)),
                    span: token.range(),
                })
            }
            TokenKind::LParen => {
                let open = self.open_bracket();
                if self.at(TokenKind::RParen) {
                    self.close_bracket(open, TokenKind::RParen)?;
                    return Ok(Type {
                        kind: TypeKind::Unit,
                        span: self.span_from(start),
                    });
                }
                let first = self.ty()?;
                if !self.at(TokenKind::Comma) {
                    self.close_bracket(open, TokenKind::RParen)?;
                    return Ok(Type {
                        kind: first.kind,
                        span: self.span_from(start),
                    });
                }
                let mut elements = vec![first];
                while self.eat(TokenKind::Comma).is_some() {
                    elements.push(self.ty()?);
                }
                self.close_bracket(open, TokenKind::RParen)?;
                Ok(Type {
                    kind: TypeKind::Tuple(elements),
                    span: self.span_from(start),
                })
            }
            _ => Err(self.unexpected("a type")),
        }
    }
}
