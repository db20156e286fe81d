//! The free references of a Soil item, read off the syntax tree alone: which names a
//! definition's body mentions that it does not bind itself. `soil_hash` folds in the
//! hash of every referent, and the call graph is built from these sets. Keeping this
//! syntactic (no type information) means a body edit that keeps the same references
//! re-executes nothing that depends on them. Which names a body binds is the
//! scope-aware walk's business (`soil_syntax::visit`); this module only collects.

use std::collections::BTreeSet;

use soil_syntax::ast::{Equation, Expr, ExprKind, Ident, Pattern, PatternKind, Type, TypeKind};
use soil_syntax::visit::{Binder, Scope, Visitor, walk_equation, walk_expr};
use trellis_diag::TextRange;

/// A name an item refers to, before resolution.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FreeRef {
    /// A lower-case value name: a definition of the same module, a private helper,
    /// or a builtin.
    Value(String),
    /// `module::name`.
    Qualified { module: String, name: String },
    /// A constructor or a record type built by name.
    Constructor(String),
    /// A type named in an annotation or a signature.
    Type(String),
}

/// The sorted, de-duplicated free references of an equation.
pub fn equation_refs(equation: &Equation) -> BTreeSet<FreeRef> {
    let mut references = References::default();
    walk_equation(&mut references, equation, &mut Scope::new());
    references.refs
}

/// The free references of a predicate whose own names (`result`, the parameters)
/// are `bound`.
pub fn predicate_refs(predicate: &Expr, bound: &[&str]) -> BTreeSet<FreeRef> {
    let mut references = References::default();
    let mut scope = Scope::new();
    for name in bound {
        scope.bind(*name, ());
    }
    references.visit_expr(predicate, &mut scope);
    references.refs
}

/// The type names a type mentions (signatures contribute these to `soil_hash`).
pub fn type_refs(ty: &Type) -> BTreeSet<FreeRef> {
    let mut refs = BTreeSet::new();
    collect_type_refs(ty, &mut refs);
    refs
}

/// The names checking a piece of Soil looks up in the type environment, which
/// holds every type of the root by name: type names, constructors (and record
/// types built by name), and the fields it reads or updates — a field of a
/// record whose type is not known yet is looked up among every record type
/// that declares it. What the environment answers for these names is all of
/// it the piece can observe (with the types their declarations name in turn).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct EnvNames {
    pub types: BTreeSet<String>,
    pub constructors: BTreeSet<String>,
    pub fields: BTreeSet<String>,
}

impl EnvNames {
    pub fn add_equation(&mut self, equation: &Equation) {
        let mut references = References::default();
        walk_equation(&mut references, equation, &mut Scope::new());
        self.add_references(references);
    }

    /// A predicate (a clause's, a property's): binding does not matter here.
    pub fn add_expr(&mut self, expr: &Expr) {
        let mut references = References::default();
        references.visit_expr(expr, &mut Scope::new());
        self.add_references(references);
    }

    pub fn add_type(&mut self, ty: &Type) {
        let mut refs = BTreeSet::new();
        collect_type_refs(ty, &mut refs);
        self.add_references(References {
            refs,
            fields: BTreeSet::new(),
        });
    }

    pub fn extend(&mut self, other: &EnvNames) {
        self.types.extend(other.types.iter().cloned());
        self.constructors.extend(other.constructors.iter().cloned());
        self.fields.extend(other.fields.iter().cloned());
    }

    fn add_references(&mut self, references: References) {
        for reference in references.refs {
            match reference {
                FreeRef::Type(name) => self.types.insert(name),
                FreeRef::Constructor(name) => self.constructors.insert(name),
                FreeRef::Value(_) | FreeRef::Qualified { .. } => false,
            };
        }
        self.fields.extend(references.fields);
    }
}

/// Collects what the scope-aware walk reports free, and every qualified name,
/// constructor and annotated type on the way; and, for [`EnvNames`], the fields
/// read and updated.
#[derive(Default)]
struct References {
    refs: BTreeSet<FreeRef>,
    fields: BTreeSet<String>,
}

impl Visitor for References {
    type Binding = ();

    fn bind(&mut self, _: &Ident, _: Binder<'_>, _: &Scope<()>) {}

    fn reference(&mut self, name: &Ident, _: TextRange, binding: Option<&()>) {
        if binding.is_none() {
            self.refs.insert(FreeRef::Value(name.text.clone()));
        }
    }

    fn visit_expr(&mut self, expr: &Expr, scope: &mut Scope<()>) {
        match &expr.kind {
            ExprKind::Qualified { module, name } => {
                self.refs.insert(FreeRef::Qualified {
                    module: module.text.clone(),
                    name: name.text.clone(),
                });
            }
            ExprKind::Constructor(name) | ExprKind::Record { name, .. } => {
                self.refs.insert(FreeRef::Constructor(name.text.clone()));
            }
            ExprKind::Annot { ty, .. } => collect_type_refs(ty, &mut self.refs),
            ExprKind::Field { field, .. } => {
                self.fields.insert(field.text.clone());
            }
            ExprKind::Update { fields, .. } => {
                self.fields
                    .extend(fields.iter().map(|field| field.name.text.clone()));
            }
            _ => {}
        }
        walk_expr(self, expr, scope);
    }

    /// The constructors a pattern tests.
    fn visit_pattern(&mut self, pattern: &Pattern) {
        if let PatternKind::Constructor { name, .. } | PatternKind::Record { name, .. } =
            &pattern.kind
        {
            self.refs.insert(FreeRef::Constructor(name.text.clone()));
        }
    }
}

fn collect_type_refs(ty: &Type, refs: &mut BTreeSet<FreeRef>) {
    match &ty.kind {
        TypeKind::Named(ident) => {
            refs.insert(FreeRef::Type(ident.text.clone()));
        }
        TypeKind::Var(_) | TypeKind::Unit => {}
        TypeKind::App { head, args } => {
            refs.insert(FreeRef::Type(head.text.clone()));
            args.iter().for_each(|arg| collect_type_refs(arg, refs));
        }
        TypeKind::Tuple(elements) => elements
            .iter()
            .for_each(|element| collect_type_refs(element, refs)),
        TypeKind::Function(function) => {
            collect_type_refs(&function.param, refs);
            collect_type_refs(&function.result, refs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(refs: BTreeSet<FreeRef>) -> String {
        refs.iter().map(|r| format!("{r:?}\n")).collect()
    }

    #[test]
    fn an_equations_free_references_skip_every_local_binder() {
        let source = "f x = let total = total + x in \
            let go acc ys = match ys with \
              | [] -> acc \
              | [Some (Row { line, cells = c }), ..rest] if keep line c -> go (acc + line) rest \
              | _ -> go acc [] \
            end in \
            let (p, q) = split (x : List Row) in \
            \\k -> m::helper k p q (go 0 x) missing Cell { line, raw = k } { x with total, line }";
        let (item, diagnostics) = soil_syntax::parse_item(source);
        assert!(diagnostics.is_empty(), "{diagnostics:#?}");
        let Some(soil_syntax::ast::Item::Equation(equation)) = item else {
            panic!("an equation");
        };
        expect_test::expect![[r#"
            Value("keep")
            Value("line")
            Value("missing")
            Value("split")
            Value("total")
            Qualified { module: "m", name: "helper" }
            Constructor("Cell")
            Constructor("Row")
            Constructor("Some")
            Type("List")
            Type("Row")
        "#]]
        .assert_eq(&render(equation_refs(&equation)));
    }

    #[test]
    fn the_environment_is_asked_for_types_constructors_and_fields() {
        let source = "f r = match r.cells with \
              | [] -> Row { line = r.line, cells = [] } \
              | _ -> { (r : Row) with cells = [Some 1.0] } \
            end";
        let (item, diagnostics) = soil_syntax::parse_item(source);
        assert!(diagnostics.is_empty(), "{diagnostics:#?}");
        let Some(soil_syntax::ast::Item::Equation(equation)) = item else {
            panic!("an equation");
        };
        let mut names = EnvNames::default();
        names.add_equation(&equation);
        expect_test::expect![[r#"
            EnvNames {
                types: {
                    "Row",
                },
                constructors: {
                    "Row",
                    "Some",
                },
                fields: {
                    "cells",
                    "line",
                },
            }
        "#]]
        .assert_debug_eq(&names);
    }

    #[test]
    fn a_predicates_own_names_and_is_binders_are_handled() {
        let (predicate, diagnostics) =
            soil_syntax::parse_predicate("result is Ok v and (v > 0 implies len xs == n)");
        assert!(diagnostics.is_empty(), "{diagnostics:#?}");
        expect_test::expect![[r#"
            Value("len")
            Value("n")
            Value("v")
            Constructor("Ok")
        "#]]
        .assert_eq(&render(predicate_refs(
            &predicate.expect("parses"),
            &["result", "xs"],
        )));
    }
}
