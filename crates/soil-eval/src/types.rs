//! Runtime type descriptors from syntax: a program's type declarations become
//! a [`TypeEnv`], signature types become [`RtType`]s for argument decoding.

use soil_rt::{FieldDecl, PayloadDecl, RtType, TypeEnv};
use soil_syntax::ast;
use trellis_diag::Diagnostic;

use crate::codes::EvalCode;

/// The prelude's types plus `decls`. Declarations of the prelude's own names
/// are skipped (the prelude's definitions are binding).
pub fn type_env_from_decls<'a>(
    decls: impl IntoIterator<Item = &'a ast::TypeDecl>,
) -> Result<TypeEnv, Vec<Diagnostic>> {
    let mut env = TypeEnv::new();
    let prelude_count = env.decls().count();
    let decls: Vec<&ast::TypeDecl> = decls
        .into_iter()
        .filter(|d| {
            env.lookup(&d.name.text)
                .is_none_or(|id| id as usize >= prelude_count)
        })
        .collect();
    for decl in &decls {
        let params: Vec<&str> = decl.params.iter().map(|p| p.text.as_str()).collect();
        env.declare(&decl.name.text, &params);
    }
    let mut errors = Vec::new();
    for decl in &decls {
        let Some(id) = env.lookup(&decl.name.text) else {
            continue;
        };
        let params: Vec<String> = decl.params.iter().map(|p| p.text.clone()).collect();
        let field_list = |fields: &[ast::FieldDecl],
                          env: &TypeEnv,
                          errors: &mut Vec<Diagnostic>|
         -> Vec<FieldDecl> {
            fields
                .iter()
                .map(|f| FieldDecl {
                    name: f.name.text.clone(),
                    ty: rt_type(env, &f.ty, &params, &mut Vec::new()).unwrap_or_else(|message| {
                        errors.push(type_error(&decl.name.text, &message));
                        RtType::Unit
                    }),
                })
                .collect()
        };
        match &decl.body {
            ast::TypeDeclBody::Record(fields) => {
                let fields = field_list(fields, &env, &mut errors);
                env.define_record(id, fields);
            }
            ast::TypeDeclBody::Sum(variants) => {
                let mut compiled = Vec::with_capacity(variants.len());
                for variant in variants {
                    let payload = match &variant.payload {
                        ast::VariantPayload::None => PayloadDecl::None,
                        ast::VariantPayload::Positional(ty) => {
                            match rt_type(&env, ty, &params, &mut Vec::new()) {
                                Ok(ty) => PayloadDecl::Positional(ty),
                                Err(message) => {
                                    errors.push(type_error(&decl.name.text, &message));
                                    PayloadDecl::None
                                }
                            }
                        }
                        ast::VariantPayload::Record(fields) => {
                            PayloadDecl::Record(field_list(fields, &env, &mut errors))
                        }
                    };
                    compiled.push((variant.name.text.clone(), payload));
                }
                env.define_sum(id, compiled);
            }
            ast::TypeDeclBody::Opaque => {}
        }
    }
    if errors.is_empty() {
        Ok(env)
    } else {
        Err(errors)
    }
}

fn type_error(decl: &str, message: &str) -> Diagnostic {
    Diagnostic::new(
        EvalCode::UnresolvedName.code(),
        format!("in type {decl}: {message}"),
    )
}

/// The runtime type of `ty`. `decl_params` are the enclosing declaration's
/// parameters (`Param(i)`); other type variables (a polymorphic signature's)
/// are numbered in `vars` after them and can never be decoded.
pub fn rt_type(
    env: &TypeEnv,
    ty: &ast::Type,
    decl_params: &[String],
    vars: &mut Vec<String>,
) -> Result<RtType, String> {
    Ok(match &ty.kind {
        ast::TypeKind::Named(name) => match name.text.as_str() {
            "I64" => RtType::I64,
            "U64" => RtType::U64,
            "F64" => RtType::F64,
            "Bool" => RtType::Bool,
            "Utf8" => RtType::Utf8,
            "Unit" => RtType::Unit,
            other => match env.lookup(other) {
                Some(id) => RtType::Named(id, Vec::new()),
                None => return Err(format!("unknown type `{other}`")),
            },
        },
        ast::TypeKind::Var(name) => {
            if let Some(i) = decl_params.iter().position(|p| *p == name.text) {
                RtType::Param(i as u32)
            } else {
                let i = match vars.iter().position(|v| *v == name.text) {
                    Some(i) => i,
                    None => {
                        vars.push(name.text.clone());
                        vars.len() - 1
                    }
                };
                RtType::Param((decl_params.len() + i) as u32)
            }
        }
        ast::TypeKind::App { head, args } => {
            let mut converted = Vec::with_capacity(args.len());
            for arg in args {
                converted.push(rt_type(env, arg, decl_params, vars)?);
            }
            match (head.text.as_str(), converted.len()) {
                ("List", 1) => RtType::List(Box::new(converted.remove(0))),
                ("Map", 2) => {
                    let value = converted.remove(1);
                    RtType::Map(Box::new(converted.remove(0)), Box::new(value))
                }
                (name, n) => match env.lookup(name) {
                    Some(id) if env.decl(id).is_some_and(|d| d.params.len() == n) => {
                        RtType::Named(id, converted)
                    }
                    Some(_) => return Err(format!("`{name}` applied to {n} arguments")),
                    None => return Err(format!("unknown type `{name}`")),
                },
            }
        }
        ast::TypeKind::Tuple(items) => {
            let mut converted = Vec::with_capacity(items.len());
            for item in items {
                converted.push(rt_type(env, item, decl_params, vars)?);
            }
            RtType::Tuple(converted)
        }
        ast::TypeKind::Unit => RtType::Unit,
        ast::TypeKind::Function(_) => RtType::Func,
    })
}
