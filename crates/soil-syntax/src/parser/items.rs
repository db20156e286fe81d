//! Items (spec §7) and type declarations (spec §4).

use crate::ast::{
    Equation, FieldDecl, Ident, Item, Param, Signature, TypeDecl, TypeDeclBody, Variant,
    VariantPayload,
};
use crate::codes::SyntaxCode;
use crate::lexer::TokenKind;

use super::{NameSet, PResult, Parser};

impl Parser<'_> {
    pub(super) fn item(&mut self) -> PResult<Item> {
        match self.peek() {
            TokenKind::Type => self.type_decl().map(Item::TypeDecl),
            TokenKind::Lower if self.peek_at(1) == TokenKind::Colon => {
                self.signature().map(Item::Signature)
            }
            TokenKind::Lower => self.equation().map(|eq| Item::Equation(eq.into())),
            _ => {
                let token = self.current();
                let found = match token.kind {
                    TokenKind::Eof => "the end of the input".to_owned(),
                    _ => format!("`{}`", self.text_of(token)),
                };
                Err(self.error(
                    SyntaxCode::ExpectedItem,
                    token.range(),
                    format!(
                        "expected an item (`type ...`, `name : Type` or `name params = expr`), found {found}"
                    ),
                ))
            }
        }
    }

    pub(super) fn signature(&mut self) -> PResult<Signature> {
        let start = self.start();
        let name = self.expect(TokenKind::Lower, "naming the signature")?;
        let name = self.ident(name);
        self.expect(TokenKind::Colon, "after the signature's name")?;
        let ty = self.ty()?;
        Ok(Signature {
            name,
            ty,
            span: self.span_from(start),
        })
    }

    fn equation(&mut self) -> PResult<Equation> {
        let start = self.start();
        let name = self.expect(TokenKind::Lower, "naming the definition")?;
        let name = self.ident(name);
        let params = self.params()?;
        self.expect(TokenKind::Equals, "after the definition's parameters")?;
        let body = self.expr()?;
        Ok(Equation {
            name,
            params,
            body,
            span: self.span_from(start),
        })
    }

    /// Parameters of an equation, lambda or local function: names and `_`.
    /// `\a b -> e` is `\a -> \b -> e`: each parameter counts one level of
    /// nesting while the list is read (see `app`).
    pub(super) fn params(&mut self) -> PResult<Vec<crate::ast::Param>> {
        let entered = self.nesting;
        let mut params = Vec::new();
        loop {
            if matches!(self.peek(), TokenKind::Lower | TokenKind::Underscore) {
                self.enter_counting("parameters")?;
            }
            match self.peek() {
                TokenKind::Lower => {
                    let token = self.bump();
                    params.push(Param::Named(self.ident(token)));
                }
                TokenKind::Underscore => params.push(Param::Wildcard(self.bump().range())),
                _ => {
                    self.nesting = entered;
                    return Ok(params);
                }
            }
        }
    }

    pub(super) fn type_decl(&mut self) -> PResult<TypeDecl> {
        let start = self.start();
        self.expect(TokenKind::Type, "starting a type declaration")?;
        let name = self.expect(TokenKind::Upper, "naming the type")?;
        let name = self.ident(name);
        let mut params = Vec::new();
        while self.at(TokenKind::Lower) && !self.at_item_start(0) {
            let token = self.bump();
            params.push(self.ident(token));
        }
        let body = if self.eat(TokenKind::Equals).is_some() {
            if self.at(TokenKind::LBrace) {
                TypeDeclBody::Record(self.field_decls()?)
            } else {
                TypeDeclBody::Sum(self.variants()?)
            }
        } else if self.at(TokenKind::Eof) || self.at(TokenKind::Type) || self.at_item_start(0) {
            TypeDeclBody::Opaque
        } else {
            return Err(self.unexpected("`=` or a type parameter"));
        };
        Ok(TypeDecl {
            name,
            params,
            body,
            span: self.span_from(start),
        })
    }

    fn variants(&mut self) -> PResult<Vec<Variant>> {
        self.eat(TokenKind::Pipe);
        let mut variants = Vec::new();
        let mut names = NameSet::default();
        loop {
            let start = self.start();
            let name = self.expect(TokenKind::Upper, "naming a variant")?;
            let repeated = !names.insert(self.text_of(name));
            let name = self.ident(name);
            if repeated {
                return Err(self.error(
                    SyntaxCode::DuplicateVariant,
                    name.span,
                    format!("variant `{}` is declared twice", name.text),
                ));
            }
            let payload = if self.at(TokenKind::LBrace) {
                VariantPayload::Record(self.field_decls()?)
            } else if self.at_type_atom() {
                VariantPayload::Positional(self.app_type()?)
            } else {
                VariantPayload::None
            };
            variants.push(Variant {
                name,
                payload,
                span: self.span_from(start),
            });
            if self.eat(TokenKind::Pipe).is_none() {
                return Ok(variants);
            }
        }
    }

    /// `{ name : Type, ... }`
    fn field_decls(&mut self) -> PResult<Vec<FieldDecl>> {
        let open = self.open_bracket();
        let mut fields = Vec::new();
        let mut names = NameSet::default();
        if !self.at(TokenKind::RBrace) {
            loop {
                let start = self.start();
                let name = self.expect(TokenKind::Lower, "naming a field")?;
                let repeated = !names.insert(self.text_of(name));
                let name = self.ident(name);
                self.check_new_field(repeated, &name)?;
                self.expect(TokenKind::Colon, "after the field name")?;
                let ty = self.ty()?;
                fields.push(FieldDecl {
                    name,
                    ty,
                    span: self.span_from(start),
                });
                if self.eat(TokenKind::Comma).is_none() {
                    break;
                }
            }
        }
        self.close_bracket(open, TokenKind::RBrace)?;
        Ok(fields)
    }

    /// Reports `duplicate-field` at `name` when it `repeated` an earlier field.
    pub(super) fn check_new_field(&mut self, repeated: bool, name: &Ident) -> PResult<()> {
        if !repeated {
            return Ok(());
        }
        Err(self.error(
            SyntaxCode::DuplicateField,
            name.span,
            format!("field `{}` appears twice", name.text),
        ))
    }
}
