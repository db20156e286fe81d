//! Records and inline-record variants: construction by name, field access and
//! functional update, all nominal.

use rustc_hash::FxHashSet;
use soil_syntax::ast::{self, Expr};
use trellis_diag::TextRange;

use super::{Checker, quoted};
use crate::codes::Code;
use crate::env::{Fields, Payload, TypeBody, substitute_params};
use crate::error::TypeError;
use crate::ty::Ty;

/// A record type (or inline-record variant) as a construction, pattern or
/// access meets it: its instantiated type and its declared fields, each
/// instantiated only when used (instantiating all of them at every access made
/// a body of n accesses to an n-field record quadratic).
pub(crate) struct RecordShape<'e> {
    pub ty: Ty,
    args: Vec<Ty>,
    pub fields: &'e Fields,
}

impl RecordShape<'_> {
    /// The type of the field at `position`, instantiated.
    pub(crate) fn field_at(&self, position: usize) -> Option<Ty> {
        let (_, ty) = self.fields.iter().nth(position)?;
        Some(substitute_params(ty, &self.args))
    }

    pub(crate) fn field(&self, name: &str) -> Option<Ty> {
        self.field_at(self.fields.position(name)?)
    }

    /// The declared fields not in `given`, in declaration order.
    pub(crate) fn missing<'n>(&'n self, given: &FxHashSet<&str>) -> Vec<&'n str> {
        self.fields
            .iter()
            .map(|(name, _)| name.as_str())
            .filter(|name| !given.contains(name))
            .collect()
    }
}

impl<'a> Checker<'a> {
    pub(super) fn record_fields(&mut self, name: &ast::Ident) -> Option<RecordShape<'a>> {
        let env = self.env;
        if let Some(info) = env.get(&name.text)
            && let TypeBody::Record(fields) = &info.body
        {
            let args: Vec<Ty> = info.params.iter().map(|_| self.subst.fresh()).collect();
            return Some(RecordShape {
                ty: Ty::Con(name.text.clone(), args.clone()),
                args,
                fields,
            });
        }
        match env.ctor(&name.text) {
            Some((type_name, _, info, variant)) => match &variant.payload {
                Payload::Record(fields) => {
                    let args: Vec<Ty> = info.params.iter().map(|_| self.subst.fresh()).collect();
                    Some(RecordShape {
                        ty: Ty::Con(type_name.to_owned(), args.clone()),
                        args,
                        fields,
                    })
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
        let Some(shape) = self.record_fields(name) else {
            for init in inits {
                if let Some(value) = &init.value {
                    self.infer(value);
                }
            }
            return self.subst.fresh();
        };
        self.field_inits(&name.text, &shape, inits);
        let given: FxHashSet<&str> = inits.iter().map(|init| init.name.text.as_str()).collect();
        let missing = shape.missing(&given);
        if !missing.is_empty() {
            self.error(
                Code::MissingField,
                format!("`{}` is missing field(s) {}", name.text, quoted(&missing)),
                span,
            );
        }
        shape.ty
    }

    pub(super) fn field_inits(
        &mut self,
        owner: &str,
        shape: &RecordShape<'_>,
        inits: &[ast::FieldInit],
    ) {
        let mut seen: FxHashSet<&str> = FxHashSet::default();
        for init in inits {
            let field = init.name.text.as_str();
            let value_ty = match shape.field(field) {
                Some(ty) => Some(ty),
                None => {
                    self.error(
                        Code::UnknownField,
                        format!("`{owner}` has no field `{field}`"),
                        init.name.span,
                    );
                    None
                }
            };
            if !seen.insert(field) {
                self.error(
                    Code::DuplicateField,
                    format!("field `{field}` is given twice"),
                    init.name.span,
                );
            }
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
    ) -> Option<(String, RecordShape<'a>)> {
        let env = self.env;
        match self.subst.shallow(ty) {
            Ty::Con(name, args) => match env.get(&name).map(|info| &info.body) {
                Some(TypeBody::Record(fields)) => Some((
                    name.clone(),
                    RecordShape {
                        ty: Ty::Con(name, args.clone()),
                        args,
                        fields,
                    },
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
                match candidates {
                    [only] => {
                        let ident = ast::Ident {
                            text: only.clone(),
                            span: field.span,
                        };
                        let shape = self.record_fields(&ident)?;
                        self.expect(&shape.ty, ty, field.span);
                        Some((only.clone(), shape))
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
        let Some((owner, shape)) = self.record_of(&ty, field) else {
            return self.subst.fresh();
        };
        match shape.field(&field.text) {
            Some(field_ty) => field_ty,
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
            Some((owner, shape)) => self.field_inits(&owner, &shape, inits),
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
