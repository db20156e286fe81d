//! The type environment: builtin, prelude and declared types, their constructors
//! and fields, and the lowering of type syntax into checker types.

use rustc_hash::FxHashMap;
use soil_syntax::ast;

use crate::codes::Code;
use crate::error::TypeError;
use crate::hints::{Hints, did_you_mean};
use crate::ty::{Row, RowVar, Ty};

/// Effect labels a row may name (prelude.md): the capabilities and `Panic`.
pub const EFFECT_LABELS: &[&str] = &["Clock", "Fs", "Panic", "Stdout"];

/// Types the checker knows without any declaration, with their arity.
const BUILTIN_TYPES: &[(&str, usize)] = &[
    ("Bool", 0),
    ("F64", 0),
    ("I64", 0),
    ("List", 1),
    ("Map", 2),
    ("U64", 0),
    ("Unit", 0),
    ("Utf8", 0),
];

#[derive(Clone, Debug)]
pub(crate) struct TypeInfo {
    pub params: Vec<String>,
    pub body: TypeBody,
}

/// Field and payload types mention the declaration's parameters as `Gen(i)`.
#[derive(Clone, Debug)]
pub(crate) enum TypeBody {
    Builtin,
    Opaque,
    Record(Fields),
    Sum(Vec<VariantInfo>),
}

/// A record's (or an inline-record variant's) fields in declaration order, and
/// their positions by name: a field is found in the same time among two fields
/// or two thousand (a search of the list made every access to a wide record
/// cost its width).
#[derive(Clone, Debug, Default)]
pub(crate) struct Fields {
    list: Vec<(String, Ty)>,
    positions: FxHashMap<String, usize>,
}

impl Fields {
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    pub(crate) fn iter(&self) -> std::slice::Iter<'_, (String, Ty)> {
        self.list.iter()
    }

    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.positions.get(name).copied()
    }

    /// Adds a field; `false` (and nothing added) when the name is taken.
    fn insert(&mut self, name: &str, ty: Ty) -> bool {
        if self.positions.contains_key(name) {
            return false;
        }
        self.positions.insert(name.to_owned(), self.list.len());
        self.list.push((name.to_owned(), ty));
        true
    }
}

#[derive(Clone, Debug)]
pub(crate) struct VariantInfo {
    pub name: String,
    pub payload: Payload,
}

#[derive(Clone, Debug)]
pub(crate) enum Payload {
    None,
    Positional(Ty),
    Record(Fields),
}

/// What a row variable written in type syntax stands for.
pub(crate) enum RowMember {
    /// A declared (rigid) row variable: it behaves as a label named in lower case.
    Rigid(String),
    Flex(RowVar),
}

#[derive(Clone, Debug, Default)]
pub(crate) struct TypeEnv {
    types: FxHashMap<String, TypeInfo>,
    /// Constructor name to (type name, variant index).
    ctors: FxHashMap<String, (String, usize)>,
    /// Field name to the record types declaring it, sorted.
    field_owners: FxHashMap<String, Vec<String>>,
}

impl TypeEnv {
    /// Every constructor name, for hints.
    pub(crate) fn constructor_names(&self) -> impl Iterator<Item = &str> {
        self.ctors.keys().map(String::as_str)
    }

    pub(crate) fn with_builtins() -> TypeEnv {
        let mut env = TypeEnv::default();
        for (name, arity) in BUILTIN_TYPES {
            env.types.insert(
                (*name).to_owned(),
                TypeInfo {
                    params: (0..*arity).map(|i| format!("t{i}")).collect(),
                    body: TypeBody::Builtin,
                },
            );
        }
        env
    }

    pub(crate) fn get(&self, name: &str) -> Option<&TypeInfo> {
        self.types.get(name)
    }

    /// The type declaring constructor `name`, its index and the variant.
    pub(crate) fn ctor(&self, name: &str) -> Option<(&str, usize, &TypeInfo, &VariantInfo)> {
        let (type_name, index) = self.ctors.get(name)?;
        let info = self.types.get(type_name)?;
        match &info.body {
            TypeBody::Sum(variants) => {
                Some((type_name.as_str(), *index, info, variants.get(*index)?))
            }
            _ => None,
        }
    }

    pub(crate) fn variants(&self, type_name: &str) -> Option<&[VariantInfo]> {
        match &self.types.get(type_name)?.body {
            TypeBody::Sum(variants) => Some(variants),
            _ => None,
        }
    }

    /// Record types declaring a field `field` (for field access on an unknown type).
    pub(crate) fn records_with_field(&self, field: &str) -> &[String] {
        self.field_owners.get(field).map_or(&[], Vec::as_slice)
    }

    /// Registers declarations (two passes, so types may refer to each other and to
    /// themselves). Returns one list of findings per declaration.
    pub(crate) fn declare(&mut self, decls: &[&ast::TypeDecl]) -> Vec<Vec<TypeError>> {
        let hints = Hints::default();
        let mut errors: Vec<Vec<TypeError>> = vec![Vec::new(); decls.len()];
        let mut accepted = vec![false; decls.len()];
        for (index, decl) in decls.iter().enumerate() {
            let name = &decl.name.text;
            if self.types.contains_key(name) {
                errors[index].push(TypeError::new(
                    Code::DuplicateType,
                    format!("type `{name}` is already defined"),
                    decl.name.span,
                ));
                continue;
            }
            let mut params: Vec<String> = Vec::new();
            for param in &decl.params {
                if params.contains(&param.text) {
                    errors[index].push(TypeError::new(
                        Code::DuplicateBinding,
                        format!("type parameter `{}` is declared twice", param.text),
                        param.span,
                    ));
                }
                params.push(param.text.clone());
            }
            self.types.insert(
                name.clone(),
                TypeInfo {
                    params,
                    body: TypeBody::Opaque,
                },
            );
            accepted[index] = true;
        }
        for (index, decl) in decls.iter().enumerate() {
            if !accepted[index] {
                continue;
            }
            let params: Vec<String> = decl.params.iter().map(|p| p.text.clone()).collect();
            let body = self.lower_decl_body(decl, &params, &mut errors[index], &hints);
            if let TypeBody::Record(fields) = &body {
                for (field, _) in fields.iter() {
                    let owners = self.field_owners.entry(field.clone()).or_default();
                    if let Err(at) = owners.binary_search(&decl.name.text) {
                        owners.insert(at, decl.name.text.clone());
                    }
                }
            }
            if let Some(info) = self.types.get_mut(&decl.name.text) {
                info.body = body;
            }
        }
        errors
    }

    fn lower_decl_body(
        &mut self,
        decl: &ast::TypeDecl,
        params: &[String],
        errors: &mut Vec<TypeError>,
        hints: &Hints,
    ) -> TypeBody {
        let mut vars = |name: &str| {
            params
                .iter()
                .position(|p| p == name)
                .map(|i| Ty::Gen(i as u32))
        };
        let mut rows = |_: &str| None;
        match &decl.body {
            ast::TypeDeclBody::Opaque => TypeBody::Opaque,
            ast::TypeDeclBody::Record(fields) => {
                TypeBody::Record(self.lower_fields(fields, &mut vars, &mut rows, errors, hints))
            }
            ast::TypeDeclBody::Sum(variants) => {
                let mut infos = Vec::new();
                for variant in variants {
                    let name = &variant.name.text;
                    if self.ctors.contains_key(name) {
                        errors.push(TypeError::new(
                            Code::DuplicateConstructor,
                            format!("constructor `{name}` is already defined"),
                            variant.name.span,
                        ));
                        continue;
                    }
                    let payload = match &variant.payload {
                        ast::VariantPayload::None => Payload::None,
                        ast::VariantPayload::Positional(ty) => {
                            Payload::Positional(self.lower(ty, &mut vars, &mut rows, errors, hints))
                        }
                        ast::VariantPayload::Record(fields) => Payload::Record(
                            self.lower_fields(fields, &mut vars, &mut rows, errors, hints),
                        ),
                    };
                    self.ctors
                        .insert(name.clone(), (decl.name.text.clone(), infos.len()));
                    infos.push(VariantInfo {
                        name: name.clone(),
                        payload,
                    });
                }
                TypeBody::Sum(infos)
            }
        }
    }

    fn lower_fields(
        &self,
        fields: &[ast::FieldDecl],
        vars: &mut dyn FnMut(&str) -> Option<Ty>,
        rows: &mut dyn FnMut(&str) -> Option<RowMember>,
        errors: &mut Vec<TypeError>,
        hints: &Hints,
    ) -> Fields {
        let mut out = Fields::default();
        for field in fields {
            if out.position(&field.name.text).is_some() {
                errors.push(TypeError::new(
                    Code::DuplicateField,
                    format!("field `{}` is declared twice", field.name.text),
                    field.name.span,
                ));
                continue;
            }
            let ty = self.lower(&field.ty, vars, rows, errors, hints);
            out.insert(&field.name.text, ty);
        }
        out
    }

    /// Lowers type syntax. `vars` maps a type variable name to its meaning and
    /// `rows` a row variable name; `None` from either is an `unknown-type` error.
    pub(crate) fn lower(
        &self,
        ty: &ast::Type,
        vars: &mut dyn FnMut(&str) -> Option<Ty>,
        rows: &mut dyn FnMut(&str) -> Option<RowMember>,
        errors: &mut Vec<TypeError>,
        hints: &Hints,
    ) -> Ty {
        match &ty.kind {
            ast::TypeKind::Unit => Ty::con("Unit"),
            ast::TypeKind::Var(name) => vars(&name.text).unwrap_or_else(|| {
                errors.push(TypeError::new(
                    Code::UnknownType,
                    format!("type variable `{}` is not in scope here", name.text),
                    name.span,
                ));
                Ty::con("Unit")
            }),
            ast::TypeKind::Named(head) => {
                self.lower_app((head, &[]), ty, vars, rows, errors, hints)
            }
            ast::TypeKind::App { head, args } => {
                self.lower_app((head, args), ty, vars, rows, errors, hints)
            }
            ast::TypeKind::Tuple(elements) => Ty::Tuple(
                elements
                    .iter()
                    .map(|e| self.lower(e, vars, rows, errors, hints))
                    .collect(),
            ),
            ast::TypeKind::Function(function) => {
                let param = self.lower(&function.param, vars, rows, errors, hints);
                let row = self.lower_row(&function.effects, rows, errors);
                let result = self.lower(&function.result, vars, rows, errors, hints);
                Ty::fun(param, row, result)
            }
        }
    }

    /// A named type `head` applied to `args` (none for a bare name), written
    /// as `whole`.
    fn lower_app(
        &self,
        (head, args): (&ast::Ident, &[ast::Type]),
        whole: &ast::Type,
        vars: &mut dyn FnMut(&str) -> Option<Ty>,
        rows: &mut dyn FnMut(&str) -> Option<RowMember>,
        errors: &mut Vec<TypeError>,
        hints: &Hints,
    ) -> Ty {
        let lowered: Vec<Ty> = args
            .iter()
            .map(|a| self.lower(a, vars, rows, errors, hints))
            .collect();
        match self.types.get(&head.text) {
            None => {
                let hint =
                    did_you_mean(hints.closest(&head.text, self.types.keys().map(String::as_str)));
                errors.push(TypeError::new(
                    Code::UnknownType,
                    format!("unknown type `{}`{hint}", head.text),
                    head.span,
                ));
                Ty::con("Unit")
            }
            Some(info) if info.params.len() != lowered.len() => {
                errors.push(
                    TypeError::new(
                        Code::ArityMismatch,
                        format!(
                            "type `{}` takes {} argument(s) but is given {}",
                            head.text,
                            info.params.len(),
                            lowered.len()
                        ),
                        whole.span,
                    )
                    .note(format!("expected: {} argument(s)", info.params.len())),
                );
                Ty::con("Unit")
            }
            Some(_) => Ty::Con(head.text.clone(), lowered),
        }
    }

    fn lower_row(
        &self,
        row: &ast::EffectRow,
        rows: &mut dyn FnMut(&str) -> Option<RowMember>,
        errors: &mut Vec<TypeError>,
    ) -> Row {
        let mut out = Row::empty();
        for label in &row.labels {
            if EFFECT_LABELS.contains(&label.text.as_str()) {
                out.labels.insert(label.text.clone());
            } else {
                errors.push(
                    TypeError::new(
                        Code::UnknownEffect,
                        format!("unknown effect label `{}`", label.text),
                        label.span,
                    )
                    .note(format!("known labels: {}", EFFECT_LABELS.join(", "))),
                );
            }
        }
        for var in &row.vars {
            match rows(&var.text) {
                Some(RowMember::Rigid(name)) => {
                    out.labels.insert(name);
                }
                Some(RowMember::Flex(var)) => {
                    out.vars.insert(var);
                }
                None => errors.push(TypeError::new(
                    Code::UnknownType,
                    format!("row variable `{}` is not allowed here", var.text),
                    var.span,
                )),
            }
        }
        out
    }
}

/// Instantiates a declaration's `Gen(i)` parameters with `args`.
pub(crate) fn substitute_params(ty: &Ty, args: &[Ty]) -> Ty {
    match ty {
        Ty::Gen(index) => args
            .get(*index as usize)
            .cloned()
            .unwrap_or_else(|| ty.clone()),
        Ty::Var(_) | Ty::Rigid(_) => ty.clone(),
        Ty::Con(name, inner) => Ty::Con(
            name.clone(),
            inner.iter().map(|t| substitute_params(t, args)).collect(),
        ),
        Ty::Tuple(elements) => Ty::Tuple(
            elements
                .iter()
                .map(|t| substitute_params(t, args))
                .collect(),
        ),
        Ty::Fun(param, row, result) => Ty::fun(
            substitute_params(param, args),
            row.clone(),
            substitute_params(result, args),
        ),
    }
}
