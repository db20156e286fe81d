//! Records and inline-record variants: construction by name, field access and
//! functional update, all nominal.

use soil_syntax::ast::{self, Expr};
use trellis_diag::TextRange;

use super::{Checker, quoted};
use crate::codes::Code;
use crate::env::{Payload, TypeBody, substitute_params};
use crate::error::TypeError;
use crate::ty::Ty;

impl Checker<'_> {
    pub(super) fn record_fields(&mut self, name: &ast::Ident) -> Option<(Ty, Vec<(String, Ty)>)> {
        let env = self.env;
        if let Some(info) = env.get(&name.text)
            && let TypeBody::Record(fields) = &info.body
        {
            let args: Vec<Ty> = info.params.iter().map(|_| self.subst.fresh()).collect();
            let fields = fields
                .iter()
                .map(|(n, t)| (n.clone(), substitute_params(t, &args)))
                .collect();
            return Some((Ty::Con(name.text.clone(), args), fields));
        }
        match env.ctor(&name.text) {
            Some((type_name, _, info, variant)) => match &variant.payload {
                Payload::Record(fields) => {
                    let args: Vec<Ty> = info.params.iter().map(|_| self.subst.fresh()).collect();
                    let fields = fields
                        .iter()
                        .map(|(n, t)| (n.clone(), substitute_params(t, &args)))
                        .collect();
                    Some((Ty::Con(type_name.to_owned(), args), fields))
                }
                _ => {
                    self.error(
                        Code::WrongConstructorForm,
                        format!("`{}` has no record payload", name.text),
                        name.span,
                    );
                    None
                }
            },
            None => {
                self.error(
                    Code::UnknownConstructor,
                    format!("unknown record type or constructor `{}`", name.text),
                    name.span,
                );
                None
            }
        }
    }

    pub(super) fn record(
        &mut self,
        name: &ast::Ident,
        inits: &[ast::FieldInit],
        span: TextRange,
    ) -> Ty {
        let Some((ty, fields)) = self.record_fields(name) else {
            for init in inits {
                if let Some(value) = &init.value {
                    self.infer(value);
                }
            }
            return self.subst.fresh();
        };
        self.field_inits(&name.text, &fields, inits);
        let missing: Vec<&str> = fields
            .iter()
            .filter(|(field, _)| !inits.iter().any(|init| init.name.text == *field))
            .map(|(field, _)| field.as_str())
            .collect();
        if !missing.is_empty() {
            self.error(
                Code::MissingField,
                format!("`{}` is missing field(s) {}", name.text, quoted(&missing)),
                span,
            );
        }
        ty
    }

    pub(super) fn field_inits(
        &mut self,
        owner: &str,
        fields: &[(String, Ty)],
        inits: &[ast::FieldInit],
    ) {
        let mut seen: Vec<&str> = Vec::new();
        for init in inits {
            let field = init.name.text.as_str();
            let value_ty = match fields.iter().find(|(n, _)| n == field) {
                Some((_, ty)) => Some(ty.clone()),
                None => {
                    self.error(
                        Code::UnknownField,
                        format!("`{owner}` has no field `{field}`"),
                        init.name.span,
                    );
                    None
                }
            };
            if seen.contains(&field) {
                self.error(
                    Code::DuplicateField,
                    format!("field `{field}` is given twice"),
                    init.name.span,
                );
            }
            seen.push(field);
            match (&init.value, value_ty) {
                (Some(value), Some(ty)) => self.check(value, &ty),
                (Some(value), None) => {
                    self.infer(value);
                }
                (None, Some(ty)) => {
                    let found = self.lookup_var(&init.name, init.name.span);
                    self.expect(&ty, &found, init.name.span);
                }
                (None, None) => {}
            }
        }
    }

    /// The record type of `ty`, instantiated; resolving an unknown type by the
    /// unique record declaring `field`.
    pub(super) fn record_of(
        &mut self,
        ty: &Ty,
        field: &ast::Ident,
    ) -> Option<(String, Vec<(String, Ty)>)> {
        let env = self.env;
        match self.subst.shallow(ty) {
            Ty::Con(name, args) => match env.get(&name).map(|info| &info.body) {
                Some(TypeBody::Record(fields)) => Some((
                    name.clone(),
                    fields
                        .iter()
                        .map(|(n, t)| (n.clone(), substitute_params(t, &args)))
                        .collect(),
                )),
                _ => {
                    self.error(
                        Code::UnknownField,
                        format!(
                            "type `{}` is not a record, so it has no field `{}`",
                            self.show(ty),
                            field.text
                        ),
                        field.span,
                    );
                    None
                }
            },
            Ty::Var(_) => {
                let candidates = env.records_with_field(&field.text);
                match candidates.as_slice() {
                    [only] => {
                        let ident = ast::Ident {
                            text: only.clone(),
                            span: field.span,
                        };
                        let (record_ty, fields) = self.record_fields(&ident)?;
                        self.expect(&record_ty, ty, field.span);
                        Some((only.clone(), fields))
                    }
                    [] => {
                        self.error(
                            Code::UnknownField,
                            format!("no record type has a field `{}`", field.text),
                            field.span,
                        );
                        None
                    }
                    many => {
                        self.push(
                            TypeError::new(
                                Code::AmbiguousField,
                                format!("field `{}` belongs to several record types; annotate the record's type", field.text),
                                field.span,
                            )
                            .note(format!("candidates: {}", many.join(", "))),
                        );
                        None
                    }
                }
            }
            other => {
                let shown = self.show(&other);
                self.error(
                    Code::UnknownField,
                    format!(
                        "type `{shown}` is not a record, so it has no field `{}`",
                        field.text
                    ),
                    field.span,
                );
                None
            }
        }
    }

    pub(super) fn field(&mut self, record: &Expr, field: &ast::Ident) -> Ty {
        let ty = self.infer(record);
        let Some((owner, fields)) = self.record_of(&ty, field) else {
            return self.subst.fresh();
        };
        match fields.into_iter().find(|(n, _)| *n == field.text) {
            Some((_, field_ty)) => field_ty,
            None => {
                self.error(
                    Code::UnknownField,
                    format!("`{owner}` has no field `{}`", field.text),
                    field.span,
                );
                self.subst.fresh()
            }
        }
    }

    pub(super) fn update(&mut self, record: &Expr, inits: &[ast::FieldInit]) -> Ty {
        let ty = self.infer(record);
        let Some(first) = inits.first() else {
            return ty;
        };
        match self.record_of(&ty, &first.name) {
            Some((owner, fields)) => self.field_inits(&owner, &fields, inits),
            None => {
                for init in inits {
                    if let Some(value) = &init.value {
                        self.infer(value);
                    }
                }
            }
        }
        ty
    }
}
