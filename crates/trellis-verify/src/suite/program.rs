//! The bridge from the checker's input to the interpreter's: signatures taken
//! apart, `soil-types` definitions compiled by `soil-eval`, and the synthesized
//! Bool-returning wrapper definitions properties and clauses run as (§8.12).

use std::sync::Arc;

use soil_syntax::ast::{self, BinOp, Expr, ExprKind, Literal, MatchArm, Pattern, PatternKind};
use soil_types::{Located, SourceText};
use trellis_diag::Diagnostic;

/// One parameter of a signature.
#[derive(Clone, Debug)]
pub struct SigParam {
    pub name: String,
    pub ty: ast::Type,
    /// Declared as `Fs`, `Clock` or `Stdout`: filled from a World, never generated.
    pub capability: bool,
}

/// A signature taken apart: its parameters, result type and the labels of the
/// innermost arrow's effect row.
#[derive(Clone, Debug)]
pub struct SigParts {
    pub params: Vec<SigParam>,
    pub result: ast::Type,
    pub effects: Vec<String>,
}

impl SigParts {
    pub fn of(signature: &ast::Signature) -> SigParts {
        let mut params = Vec::new();
        let mut effects = Vec::new();
        let mut ty = &signature.ty;
        while let ast::TypeKind::Function(arrow) = &ty.kind {
            let name = arrow
                .param_name
                .as_ref()
                .map_or_else(|| format!("arg{}", params.len() + 1), |n| n.text.clone());
            let capability = matches!(&arrow.param.kind, ast::TypeKind::Named(n)
                if trellis_spec::CAPABILITY_TYPES.contains(&n.text.as_str()));
            params.push(SigParam {
                name,
                ty: arrow.param.clone(),
                capability,
            });
            effects = arrow
                .effects
                .labels
                .iter()
                .map(|l| l.text.clone())
                .collect();
            ty = &arrow.result;
        }
        SigParts {
            params,
            result: ty.clone(),
            effects,
        }
    }

    pub fn takes_capabilities(&self) -> bool {
        self.params.iter().any(|p| p.capability)
    }

    pub fn may_panic(&self) -> bool {
        self.effects.iter().any(|e| e == "Panic")
    }

    /// The effect row text for a wrapper over this signature: the same labels.
    pub fn row_text(&self) -> String {
        if self.effects.is_empty() {
            String::new()
        } else {
            format!("{{{}}}", self.effects.join(", "))
        }
    }
}

/// `module::name` split at its last `::`.
pub fn split_name(full: &str) -> (Option<&str>, &str) {
    match full.rsplit_once("::") {
        Some((module, name)) => (Some(module), name),
        None => (None, full),
    }
}

/// Compiles checker definitions for the interpreter. `bare` names a definition
/// compiled without its clause guards (derived tests judge its clauses one by
/// one instead of letting the first broken one panic). The root's types are
/// shared, not built again.
pub fn compile(
    types: &super::SuiteTypes,
    definitions: &[soil_types::Definition],
    bare: Option<&str>,
) -> Result<soil_eval::Program, Vec<Diagnostic>> {
    let types = Arc::clone(types.runtime().map_err(<[Diagnostic]>::to_vec)?);
    let definitions = definitions
        .iter()
        .map(|def| {
            let (module, name) = split_name(&def.name);
            let clause = |c: &soil_types::Clause| soil_eval::Clause {
                label: c.label.clone(),
                predicate: c.predicate.node.clone(),
                file: c.predicate.source.file.clone(),
                text: c.predicate.source.text.clone(),
            };
            let guarded = bare != Some(def.name.as_str());
            let of_kind = |kind: soil_types::ClauseKind| -> Vec<soil_eval::Clause> {
                def.clauses
                    .iter()
                    .filter(|c| guarded && c.kind == kind)
                    .map(clause)
                    .collect()
            };
            soil_eval::Definition {
                name: name.to_owned(),
                module: module.map(str::to_owned),
                file: def.equation.source.file.clone(),
                text: def.equation.source.text.clone(),
                signature: def.signature.as_ref().map(|s| s.node.ty.clone()),
                equation: def.equation.node.clone(),
                requires: of_kind(soil_types::ClauseKind::Requires),
                ensures: of_kind(soil_types::ClauseKind::Ensures),
            }
        })
        .collect();
    soil_eval::Program::compile(types, definitions)
}

/// The predicate lowered to a plain Soil expression: `a implies b` becomes
/// `not a or b`, `e is P` becomes `match e with | P -> true | _ -> false end`.
pub fn lower_predicate(predicate: &Expr) -> Expr {
    let mut expr = predicate.clone();
    lower(&mut expr);
    expr
}

fn lower(expr: &mut Expr) {
    let span = expr.span;
    let bool_lit = |b: bool| Expr {
        kind: ExprKind::Literal(Literal::Bool(b)),
        span,
    };
    match &mut expr.kind {
        ExprKind::Implies { lhs, rhs } => {
            lower(lhs);
            lower(rhs);
            let not_lhs = Expr {
                kind: ExprKind::Unary {
                    op: ast::UnaryOp::Not,
                    operand: lhs.clone(),
                },
                span,
            };
            expr.kind = ExprKind::Binary {
                op: BinOp::Or,
                lhs: Box::new(not_lhs),
                rhs: rhs.clone(),
            };
        }
        ExprKind::Is {
            expr: scrutinee,
            pattern,
        } => {
            lower(scrutinee);
            let arms = vec![
                MatchArm {
                    pattern: (**pattern).clone(),
                    guard: None,
                    body: bool_lit(true),
                    span,
                },
                MatchArm {
                    pattern: Pattern {
                        kind: PatternKind::Wildcard,
                        span,
                    },
                    guard: None,
                    body: bool_lit(false),
                    span,
                },
            ];
            expr.kind = ExprKind::Match {
                scrutinee: scrutinee.clone(),
                arms,
            };
        }
        ExprKind::App { func, args } => {
            lower(func);
            args.iter_mut().for_each(lower);
        }
        ExprKind::Lambda { body, .. } => lower(body),
        ExprKind::Let(let_expr) => {
            lower(&mut let_expr.value);
            lower(&mut let_expr.body);
        }
        ExprKind::If {
            cond,
            then_branch,
            else_branch,
        } => {
            lower(cond);
            lower(then_branch);
            lower(else_branch);
        }
        ExprKind::Match { scrutinee, arms } => {
            lower(scrutinee);
            for arm in arms {
                if let Some(guard) = &mut arm.guard {
                    lower(guard);
                }
                lower(&mut arm.body);
            }
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            lower(lhs);
            lower(rhs);
        }
        ExprKind::Unary { operand, .. } => lower(operand),
        ExprKind::Record { fields, .. } => fields
            .iter_mut()
            .filter_map(|f| f.value.as_mut())
            .for_each(lower),
        ExprKind::Update { record, fields } => {
            lower(record);
            fields
                .iter_mut()
                .filter_map(|f| f.value.as_mut())
                .for_each(lower);
        }
        ExprKind::Field { record, .. } => lower(record),
        ExprKind::List(items) | ExprKind::Tuple(items) => items.iter_mut().for_each(lower),
        ExprKind::Annot { expr, .. } => lower(expr),
        ExprKind::Literal(_)
        | ExprKind::Var(_)
        | ExprKind::Qualified { .. }
        | ExprKind::Constructor(_)
        | ExprKind::Hole(_) => {}
    }
}

/// A synthesized wrapper: `name : (p : T) -> ... ->{row} Bool` whose body is the
/// lowered predicate. Built as Soil text and parsed, so the checker and the
/// interpreter see an ordinary definition with spans into that text.
pub fn wrapper(
    module: Option<&str>,
    name: &str,
    params: &[(String, String)],
    row: &str,
    predicate: &Expr,
) -> Result<soil_types::Definition, Vec<Diagnostic>> {
    let body = soil_syntax::print_expr(&lower_predicate(predicate));
    let mut signature = format!("{name} :");
    for (param, ty) in params {
        signature.push_str(&format!(" ({param} : {ty}) ->"));
    }
    if params.is_empty() {
        signature.push_str(" Bool");
    } else {
        signature.push_str(&format!("{row} Bool"));
    }
    let names: Vec<&str> = params.iter().map(|(p, _)| p.as_str()).collect();
    let text = format!("{signature}\n{name} {} =\n  {body}\n", names.join(" "));
    let (file, errors) = soil_syntax::parse_file(&text);
    if !errors.is_empty() {
        return Err(errors);
    }
    let source = SourceText::new(Some(format!("<{name}>")), &text);
    let mut sig = None;
    let mut equation = None;
    for item in file.items {
        match item {
            ast::Item::Signature(s) => sig = Some(s),
            ast::Item::Equation(e) => equation = Some(e),
            _ => {}
        }
    }
    let (Some(sig), Some(equation)) = (sig, equation) else {
        return Err(vec![Diagnostic::new(
            crate::Code::TestPredicateUnrunnable.as_str(),
            format!("the wrapper `{name}` did not parse as a signature and an equation"),
        )]);
    };
    Ok(soil_types::Definition {
        name: match module {
            Some(m) => format!("{m}::{name}"),
            None => name.to_owned(),
        },
        signature: Some(Located {
            node: sig,
            source: Arc::clone(&source),
        }),
        equation: Located {
            node: equation,
            source,
        },
        clauses: Vec::new(),
        allow: Vec::new(),
    })
}

/// The wrapper name a `property` block runs as: `_property_<name>`.
pub fn property_wrapper_name(block_name: &str) -> String {
    format!("_property_{}", ident_fragment(block_name))
}

/// A `property` block as a wrapper definition (§8.12): one parameter per
/// `forall` binder, typed as written, and the lowered predicate as its body,
/// returning `Bool` under the row `{Panic}`. Unlike [`wrapper`] it is built from
/// the block's own trees, so every span (a binder's type, a misspelled name in
/// the predicate) points into `source`, the block's content: the test runner and
/// the static check (`trellis check`) report the same finding at the same place.
/// `Err` when the block did not parse (its parse diagnostics say why).
pub fn property_wrapper(
    module: Option<&str>,
    block_name: &str,
    property: &trellis_spec::Property,
    source: Arc<SourceText>,
) -> Result<soil_types::Definition, Vec<Diagnostic>> {
    let unrunnable = || {
        vec![
            crate::Code::TestPredicateUnrunnable
                .diagnostic(format!("property `{block_name}` did not parse")),
        ]
    };
    let body = property.body.as_ref().ok_or_else(unrunnable)?;
    let span = property.body_range;
    let ident = |text: &str, span| ast::Ident {
        text: text.to_owned(),
        span,
    };
    let name = property_wrapper_name(block_name);
    let mut ty = ast::Type {
        kind: ast::TypeKind::Named(ident("Bool", span)),
        span,
    };
    for (index, binder) in property.binders.iter().enumerate().rev() {
        let param = binder.ty.clone().ok_or_else(unrunnable)?;
        let last = index + 1 == property.binders.len();
        let labels = if last {
            vec![ident("Panic", span)]
        } else {
            Vec::new()
        };
        ty = ast::Type {
            span: binder.type_range.cover(span),
            kind: ast::TypeKind::Function(Box::new(ast::FunctionType {
                param_name: Some(ident(&binder.name, binder.name_range)),
                param,
                effects: ast::EffectRow {
                    labels,
                    vars: Vec::new(),
                    span,
                },
                result: ty,
            })),
        };
    }
    let signature = ast::Signature {
        name: ident(&name, span),
        ty,
        span,
    };
    let equation = ast::Equation {
        name: ident(&name, span),
        params: property
            .binders
            .iter()
            .map(|b| ast::Param::Named(ident(&b.name, b.name_range)))
            .collect(),
        body: lower_predicate(body),
        span,
    };
    Ok(soil_types::Definition {
        name: match module {
            Some(m) => format!("{m}::{name}"),
            None => name,
        },
        signature: Some(Located {
            node: signature,
            source: Arc::clone(&source),
        }),
        equation: Located {
            node: Arc::new(equation),
            source,
        },
        clauses: Vec::new(),
        allow: Vec::new(),
    })
}

/// A block or clause name as a Soil identifier fragment.
pub fn ident_fragment(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(text: &str) -> String {
        let (expr, errors) = soil_syntax::parse_predicate(text);
        assert!(errors.is_empty(), "{errors:?}");
        soil_syntax::print_expr(&lower_predicate(&expr.expect("parsed")))
    }

    #[test]
    fn implies_and_is_lower_to_plain_soil() {
        expect_test::expect!["not non_empty xs or median [x] == x"]
            .assert_eq(&lowered("non_empty xs implies median [x] == x"));
        expect_test::expect![[r#"
            (
              match parse x with
              | Ok _ -> true
              | _ -> false
              end
            ) and a"#]]
        .assert_eq(&lowered("parse x is Ok _ and a"));
    }

    #[test]
    fn signatures_split_into_params_result_and_row() {
        let (sig, errors) = soil_syntax::parse_signature(
            "read_file : (fs : Fs) -> (path : Utf8) ->{Fs, Panic} Result (List Row) ReadError",
        );
        assert!(errors.is_empty(), "{errors:?}");
        let parts = SigParts::of(&sig.expect("parsed"));
        let params: Vec<String> = parts
            .params
            .iter()
            .map(|p| {
                format!(
                    "{}:{}:{}",
                    p.name,
                    soil_syntax::print_type(&p.ty),
                    p.capability
                )
            })
            .collect();
        assert_eq!(params, ["fs:Fs:true", "path:Utf8:false"]);
        assert_eq!(
            soil_syntax::print_type(&parts.result),
            "Result (List Row) ReadError"
        );
        assert!(parts.takes_capabilities() && parts.may_panic());
        assert_eq!(parts.row_text(), "{Fs, Panic}");
    }

    #[test]
    fn wrappers_are_ordinary_signed_definitions() {
        let (body, _) = soil_syntax::parse_predicate("xs is [] implies len xs == 0");
        let def = wrapper(
            Some("csvstats"),
            "_property_p",
            &[("xs".into(), "List F64".into())],
            "{Panic}",
            &body.expect("parsed"),
        )
        .expect("a wrapper");
        assert_eq!(def.name, "csvstats::_property_p");
        expect_test::expect![[r#"
            _property_p : (xs : List F64) ->{Panic} Bool
            _property_p xs =
              not (
              match xs with
              | [] -> true
              | _ -> false
              end
            ) or len xs == 0
        "#]]
        .assert_eq(def.equation.source.text.as_deref().unwrap_or(""));
    }
}
