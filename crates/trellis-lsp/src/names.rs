//! Every name a piece of Soil writes, with where it is and what kind of name it
//! is, read off the syntax tree by the scope-aware walk (`soil_syntax::visit`), the
//! one `trellis-db`'s free references use (a `let` binds after its value, a local
//! function in its own body, a match arm's pattern in its guard and body, an `is`
//! pattern nowhere). Locals are resolved here to their binder; everything else is
//! resolved against the root by [`crate::analysis`]. Spans are those of the tree
//! walked: file offsets for a `.soil` file, block-content offsets for a spec block.

use soil_syntax::ast::{
    Equation, Expr, ExprKind, Ident, MatchArm, Pattern, PatternKind, Signature, Type, TypeKind,
};
use soil_syntax::visit::{Binder, Function, Scope, Visitor, walk_arm, walk_equation, walk_expr};
use trellis_diag::TextRange;

/// What a written name is, before the root resolves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Name {
    /// Binds a local: a parameter, a `let`, a lambda's or a pattern's variable.
    Binder,
    /// Uses the local bound at `binder`.
    Local { binder: TextRange },
    /// A bare value name no local binds: a definition or helper of the module,
    /// or a builtin.
    Value,
    /// `module::name` (the range is the `name` part's).
    Qualified { module: String },
    /// A constructor, or a record type built or matched by name.
    Constructor,
    /// A type named in a signature or an annotation.
    Type,
    /// A typed hole (`?name`; the text is without the `?`).
    Hole,
    /// The name a signature or an equation defines.
    Defines,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occurrence {
    pub range: TextRange,
    pub text: String,
    pub name: Name,
}

/// What a walk found: every name in order, and the locals in scope at the probe
/// offset (innermost expression containing it), when one was given.
#[derive(Default)]
pub struct Walk {
    pub occurrences: Vec<Occurrence>,
    pub scope_at_probe: Option<Vec<(String, TextRange)>>,
    probe: Option<u32>,
    /// The equation being walked, whose whole span sees its parameters.
    equation_span: Option<TextRange>,
}

/// The names of an equation, its parameters bound in its body.
pub fn equation(equation: &Equation, probe: Option<u32>) -> Walk {
    let mut walk = Walk::probing(probe);
    walk.found(&equation.name.text, equation.name.span, Name::Defines);
    walk.equation_span = Some(equation.span);
    walk_equation(&mut walk, equation, &mut Scope::new());
    walk
}

/// The names of a predicate or property body whose own names (`result`, the
/// parameters, a property's binders) are `bound` at the given binder ranges.
pub fn predicate(expr: &Expr, bound: &[(String, TextRange)], probe: Option<u32>) -> Walk {
    let mut walk = Walk::probing(probe);
    let mut scope = Scope::new();
    for (name, range) in bound {
        scope.bind(name.as_str(), *range);
    }
    walk.visit_expr(expr, &mut scope);
    walk
}

/// The names of a signature: the name it defines, its named parameters (binders)
/// and the types it mentions.
pub fn signature(signature: &Signature) -> Walk {
    let mut walk = Walk::default();
    walk.found(&signature.name.text, signature.name.span, Name::Defines);
    walk.ty(&signature.ty);
    walk
}

/// The type names of one type.
pub fn ty(ty: &Type) -> Walk {
    let mut walk = Walk::default();
    walk.ty(ty);
    walk
}

/// Each local binds at its own range; a use resolves to it.
impl Visitor for Walk {
    type Binding = TextRange;

    fn bind(&mut self, name: &Ident, binder: Binder<'_>, _: &Scope<TextRange>) -> TextRange {
        // A local function's name is written once: bound again for the `in` body,
        // it is no second binder.
        if !matches!(binder, Binder::LocalFunction { .. }) {
            self.found(&name.text, name.span, Name::Binder);
        }
        name.span
    }

    fn reference(&mut self, name: &Ident, _: TextRange, binding: Option<&TextRange>) {
        let kind = match binding {
            Some(binder) => Name::Local { binder: *binder },
            None => Name::Value,
        };
        self.found(&name.text, name.span, kind);
    }

    fn visit_expr(&mut self, expr: &Expr, scope: &mut Scope<TextRange>) {
        self.see_scope(expr.span, scope);
        match &expr.kind {
            ExprKind::Hole(ident) => self.found(&ident.text, expr.span, Name::Hole),
            ExprKind::Qualified { module, name } => self.found(
                &name.text,
                name.span,
                Name::Qualified {
                    module: module.text.clone(),
                },
            ),
            ExprKind::Constructor(ident) | ExprKind::Record { name: ident, .. } => {
                self.found(&ident.text, ident.span, Name::Constructor);
            }
            _ => {}
        }
        // The annotation's types come after the annotated expression's names.
        if let ExprKind::Annot { expr: inner, ty } = &expr.kind {
            self.visit_expr(inner, scope);
            self.ty(ty);
        } else {
            walk_expr(self, expr, scope);
        }
    }

    fn visit_function_body(
        &mut self,
        function: Function,
        body: &Expr,
        scope: &mut Scope<TextRange>,
    ) {
        if let (Function::Equation, Some(span)) = (function, self.equation_span) {
            self.see_scope(span, scope);
        }
        self.visit_expr(body, scope);
    }

    fn visit_arm(&mut self, arm: &MatchArm, scope: &mut Scope<TextRange>) {
        self.see_scope(arm.span, scope);
        walk_arm(self, arm, scope);
    }

    fn visit_pattern(&mut self, pattern: &Pattern) {
        if let PatternKind::Constructor { name, .. } | PatternKind::Record { name, .. } =
            &pattern.kind
        {
            self.found(&name.text, name.span, Name::Constructor);
        }
    }
}

impl Walk {
    fn probing(probe: Option<u32>) -> Walk {
        Walk {
            probe,
            ..Walk::default()
        }
    }

    /// The occurrence whose range holds `offset` (its end included, so a cursor
    /// just after a name still finds it).
    pub fn at(&self, offset: u32) -> Option<&Occurrence> {
        self.occurrences
            .iter()
            .find(|o| o.range.start <= offset && offset <= o.range.end)
    }

    fn found(&mut self, text: &str, range: TextRange, name: Name) {
        self.occurrences.push(Occurrence {
            range,
            text: text.to_owned(),
            name,
        });
    }

    /// Records the scope when `span` holds the probe: called on the way down, so
    /// the innermost expression's scope wins.
    fn see_scope(&mut self, span: TextRange, scope: &Scope<TextRange>) {
        if let Some(probe) = self.probe
            && span.start <= probe
            && probe <= span.end
        {
            let mut visible: Vec<(String, TextRange)> = Vec::new();
            for (name, range) in scope.iter() {
                visible.retain(|(seen, _)| seen != name);
                visible.push((name.to_owned(), *range));
            }
            self.scope_at_probe = Some(visible);
        }
    }

    fn ty(&mut self, ty: &Type) {
        match &ty.kind {
            TypeKind::Named(ident) => self.found(&ident.text, ident.span, Name::Type),
            TypeKind::Var(_) | TypeKind::Unit => {}
            TypeKind::App { head, args } => {
                self.found(&head.text, head.span, Name::Type);
                args.iter().for_each(|arg| self.ty(arg));
            }
            TypeKind::Tuple(elements) => elements.iter().for_each(|element| self.ty(element)),
            TypeKind::Function(function) => {
                if let Some(name) = &function.param_name {
                    self.found(&name.text, name.span, Name::Binder);
                }
                self.ty(&function.param);
                self.ty(&function.result);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> String {
        let (file, diagnostics) = soil_syntax::parse_file(text);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let soil_syntax::ast::Item::Equation(eq) = &file.items[0] else {
            panic!("an equation");
        };
        equation(eq, None)
            .occurrences
            .iter()
            .map(|o| match &o.name {
                Name::Local { binder } => format!("{}→{}", o.text, binder.start),
                other => format!("{}:{other:?}@{}", o.text, o.range.start),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn locals_resolve_to_their_binders_and_the_rest_stays_free() {
        expect_test::expect![[r#"f:Defines@0 x:Binder@2 sort:Value@16 x→2 s:Binder@12 s→12 g:Qualified { module: "helpers" }@42 Some:Constructor@45 y:Binder@52 y→52"#]]
        .assert_eq(&names("f x =\n  let s = sort x in\n  s ++ helpers::g (Some (\\y -> y))"));
    }

    /// Every occurrence, and the scope seen at every offset where it changes, for
    /// one equation using each binding form.
    #[test]
    fn every_binding_form_and_the_scope_at_each_offset() {
        let text = "f x = let go acc ys = match ys with | [Some (Row { line, cells = c }), ..rest] if keep line -> go (acc + line) rest | _ -> (acc : I64) end in let (p, q) = split x in (\\k -> m::h k p ?gap Cell { line = q, raw } { x with p }) (go 0 x)";
        let (file, diagnostics) = soil_syntax::parse_file(text);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let soil_syntax::ast::Item::Equation(eq) = &file.items[0] else {
            panic!("an equation");
        };
        let mut out = String::new();
        for o in &equation(eq, None).occurrences {
            out.push_str(&format!("{}@{} {:?}\n", o.text, o.range.start, o.name));
        }
        let mut last = None;
        for offset in 0..=text.len() as u32 {
            let scope: Option<Vec<String>> = equation(eq, Some(offset))
                .scope_at_probe
                .map(|s| s.iter().map(|(n, r)| format!("{n}@{}", r.start)).collect());
            if scope != last {
                out.push_str(&format!("from {offset}: {scope:?}\n"));
                last = scope;
            }
        }
        expect_test::expect![[r#"
            f@0 Defines
            x@2 Binder
            go@10 Binder
            acc@13 Binder
            ys@17 Binder
            ys@28 Local { binder: TextRange { start: 17, end: 19 } }
            Some@39 Constructor
            Row@45 Constructor
            line@51 Binder
            c@65 Binder
            rest@73 Binder
            keep@82 Value
            line@87 Local { binder: TextRange { start: 51, end: 55 } }
            go@95 Local { binder: TextRange { start: 10, end: 12 } }
            acc@99 Local { binder: TextRange { start: 13, end: 16 } }
            line@105 Local { binder: TextRange { start: 51, end: 55 } }
            rest@111 Local { binder: TextRange { start: 73, end: 77 } }
            acc@124 Local { binder: TextRange { start: 13, end: 16 } }
            I64@130 Type
            split@155 Value
            x@161 Local { binder: TextRange { start: 2, end: 3 } }
            p@147 Binder
            q@150 Binder
            k@168 Binder
            h@176 Qualified { module: "m" }
            k@178 Local { binder: TextRange { start: 168, end: 169 } }
            p@180 Local { binder: TextRange { start: 147, end: 148 } }
            gap@182 Hole
            Cell@187 Constructor
            q@201 Local { binder: TextRange { start: 150, end: 151 } }
            raw@204 Value
            x@212 Local { binder: TextRange { start: 2, end: 3 } }
            p@219 Local { binder: TextRange { start: 147, end: 148 } }
            go@225 Local { binder: TextRange { start: 10, end: 12 } }
            x@230 Local { binder: TextRange { start: 2, end: 3 } }
            from 0: Some(["x@2"])
            from 22: Some(["x@2", "go@10", "acc@13", "ys@17"])
            from 38: Some(["x@2", "go@10", "acc@13", "ys@17", "line@51", "c@65", "rest@73"])
            from 116: Some(["x@2", "go@10", "acc@13", "ys@17"])
            from 139: Some(["x@2"])
            from 142: Some(["x@2", "go@10"])
            from 166: Some(["x@2", "go@10", "p@147", "q@150"])
            from 173: Some(["x@2", "go@10", "p@147", "q@150", "k@168"])
            from 223: Some(["x@2", "go@10", "p@147", "q@150"])
        "#]]
        .assert_eq(&out);
    }
}
