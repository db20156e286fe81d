//! Patterns: checking them against the scrutinee's type, binding their
//! variables, and `match` exhaustiveness and redundancy through the matrix.

use std::borrow::Cow;

use rustc_hash::{FxHashMap, FxHashSet};
use soil_syntax::ast::{self, Expr, Pattern, PatternKind};
use trellis_diag::TextRange;

use super::{Checker, literal_type, quoted};
use crate::codes::Code;
use crate::env::{Payload, substitute_params};
use crate::error::TypeError;
use crate::exhaustive::{Ctor, Matrix, Pat, merged};
use crate::ty::{Scheme, Ty};

impl Checker<'_> {
    pub(super) fn match_arms(
        &mut self,
        scrutinee: &Expr,
        arms: &[ast::MatchArm],
        expected: Option<&Ty>,
        span: TextRange,
    ) -> Ty {
        let scrutinee_ty = self.infer(scrutinee);
        let result = match expected {
            Some(ty) => ty.clone(),
            None => self.subst.fresh(),
        };
        let mut rows: Vec<Vec<Pat>> = Vec::new();
        // The earlier arms by head constructor: an arm headed by `C` can only
        // be covered by arms headed by `C` or `_`, so only those are asked
        // (asking all of them made a match of n arms take n^2).
        let mut headed: FxHashMap<Ctor, Vec<usize>> = FxHashMap::default();
        let mut wild: Vec<usize> = Vec::new();
        let mut patterns_ok = true;
        for arm in arms {
            let mark = self.scope_mark();
            let mut binds = Vec::new();
            let pat = self.pattern(&arm.pattern, &scrutinee_ty, &mut binds);
            if let Some(guard) = &arm.guard {
                self.check(guard, &Ty::con("Bool"));
            }
            self.check(&arm.body, &result);
            self.scope_reset(mark);
            match pat {
                Some(pat) => {
                    let matrix = Matrix { env: self.env };
                    let covering: Cow<[Vec<Pat>]> = match &pat {
                        Pat::Ctor(ctor, _) => {
                            let same = headed.get(ctor).map_or(&[][..], Vec::as_slice);
                            Cow::Owned(merged(same, &wild).map(|i| rows[i].clone()).collect())
                        }
                        Pat::Wild => Cow::Borrowed(&rows),
                    };
                    if patterns_ok
                        && matrix
                            .useful(&covering, std::slice::from_ref(&pat))
                            .is_none()
                    {
                        self.error(
                            Code::RedundantPattern,
                            "this arm can never match: earlier arms cover it",
                            arm.pattern.span,
                        );
                    }
                    if arm.guard.is_none() {
                        match &pat {
                            Pat::Ctor(ctor, _) => {
                                headed.entry(ctor.clone()).or_default().push(rows.len())
                            }
                            Pat::Wild => wild.push(rows.len()),
                        }
                        rows.push(vec![pat]);
                    }
                }
                None => patterns_ok = false,
            }
        }
        if patterns_ok {
            let matrix = Matrix { env: self.env };
            if let Some(witness) = matrix.useful(&rows, &[Pat::Wild]) {
                let missing = witness.first().map(|w| matrix.print(w)).unwrap_or_default();
                self.push(
                    TypeError::new(
                        Code::NonExhaustiveMatch,
                        format!("this match does not cover `{missing}`"),
                        span,
                    )
                    .note(format!("not matched: {missing}")),
                );
            }
        }
        result
    }

    /// Checks a pattern against `expected`, binding its variables in scope.
    /// Returns its matrix form, or `None` after an error.
    pub(crate) fn pattern(
        &mut self,
        pattern: &Pattern,
        expected: &Ty,
        binds: &mut Vec<String>,
    ) -> Option<Pat> {
        let span = pattern.span;
        match &pattern.kind {
            PatternKind::Wildcard => Some(Pat::Wild),
            PatternKind::Var(ident) => {
                self.bind_pattern_var(ident, expected.clone(), binds);
                Some(Pat::Wild)
            }
            PatternKind::Literal(literal) => {
                let ty = literal_type(literal);
                if !self.expect(expected, &ty, span) {
                    return None;
                }
                Some(match literal {
                    ast::Literal::Bool(value) => Pat::Ctor(Ctor::Bool(*value), Vec::new()),
                    ast::Literal::Unit => Pat::Ctor(Ctor::Unit, Vec::new()),
                    ast::Literal::Int(n) => Pat::Ctor(Ctor::Lit(n.to_string()), Vec::new()),
                    ast::Literal::UInt(n) => Pat::Ctor(Ctor::Lit(format!("{n}u")), Vec::new()),
                    ast::Literal::Float(bits) => Pat::Ctor(
                        Ctor::Lit(format!("{:?}", f64::from_bits(*bits))),
                        Vec::new(),
                    ),
                    ast::Literal::Str(text) => {
                        Pat::Ctor(Ctor::Lit(format!("{text:?}")), Vec::new())
                    }
                })
            }
            PatternKind::Constructor { name, payload } => {
                let env = self.env;
                let Some((type_name, index, info, variant)) = env.ctor(&name.text) else {
                    let hint = crate::hints::did_you_mean(
                        self.hints.closest(&name.text, env.constructor_names()),
                    );
                    self.error(
                        Code::UnknownConstructor,
                        format!("unknown constructor `{}`{hint}", name.text),
                        name.span,
                    );
                    return None;
                };
                let args: Vec<Ty> = info.params.iter().map(|_| self.subst.fresh()).collect();
                let ty = Ty::Con(type_name.to_owned(), args.clone());
                if !self.expect(expected, &ty, span) {
                    return None;
                }
                let ctor = Ctor::Variant {
                    ty: type_name.to_owned(),
                    index,
                };
                match (&variant.payload, payload) {
                    (Payload::None, None) => Some(Pat::Ctor(ctor, Vec::new())),
                    (Payload::Positional(payload_ty), Some(inner)) => {
                        let payload_ty = substitute_params(payload_ty, &args);
                        let inner = self.pattern(inner, &payload_ty, binds)?;
                        Some(Pat::Ctor(ctor, vec![inner]))
                    }
                    (Payload::None, Some(_)) => {
                        self.error(
                            Code::WrongConstructorForm,
                            format!("`{}` has no payload", name.text),
                            span,
                        );
                        None
                    }
                    (Payload::Positional(_), None) => {
                        self.error(
                            Code::WrongConstructorForm,
                            format!("`{}` carries a payload: write `{} _`", name.text, name.text),
                            span,
                        );
                        None
                    }
                    (Payload::Record(_), _) => {
                        self.error(
                            Code::WrongConstructorForm,
                            format!(
                                "`{}` has a record payload: write `{} {{ .. }}`",
                                name.text, name.text
                            ),
                            span,
                        );
                        None
                    }
                }
            }
            PatternKind::Record { name, fields, rest } => {
                let declared = self.record_fields(name)?;
                if !self.expect(expected, &declared.ty, span) {
                    return None;
                }
                let ctor = match self.env.ctor(&name.text) {
                    Some((type_name, index, ..)) => Ctor::Variant {
                        ty: type_name.to_owned(),
                        index,
                    },
                    None => Ctor::Record {
                        ty: name.text.clone(),
                    },
                };
                let mut subs = vec![Pat::Wild; declared.fields.len()];
                let mut ok = true;
                let mut seen: FxHashSet<&str> = FxHashSet::default();
                for field in fields {
                    let Some(position) = declared.fields.position(&field.name.text) else {
                        self.error(
                            Code::UnknownField,
                            format!("`{}` has no field `{}`", name.text, field.name.text),
                            field.name.span,
                        );
                        ok = false;
                        continue;
                    };
                    if !seen.insert(&field.name.text) {
                        self.error(
                            Code::DuplicateField,
                            format!("field `{}` appears twice", field.name.text),
                            field.name.span,
                        );
                        ok = false;
                    }
                    let Some(field_ty) = declared.field_at(position) else {
                        continue;
                    };
                    match &field.pattern {
                        Some(inner) => match self.pattern(inner, &field_ty, binds) {
                            Some(sub) => subs[position] = sub,
                            None => ok = false,
                        },
                        None => self.bind_pattern_var(&field.name, field_ty, binds),
                    }
                }
                if !rest {
                    let missing = declared.missing(&seen);
                    if !missing.is_empty() {
                        self.error(
                            Code::MissingField,
                            format!(
                                "pattern omits field(s) {}; add them or `..`",
                                quoted(&missing)
                            ),
                            span,
                        );
                        ok = false;
                    }
                }
                ok.then_some(Pat::Ctor(ctor, subs))
            }
            PatternKind::Tuple(elements) => {
                let tys: Vec<Ty> = elements.iter().map(|_| self.subst.fresh()).collect();
                if !self.expect(expected, &Ty::Tuple(tys.clone()), span) {
                    return None;
                }
                let mut subs = Vec::new();
                let mut ok = true;
                for (element, ty) in elements.iter().zip(&tys) {
                    match self.pattern(element, ty, binds) {
                        Some(sub) => subs.push(sub),
                        None => ok = false,
                    }
                }
                ok.then_some(Pat::Ctor(Ctor::Tuple(elements.len()), subs))
            }
            PatternKind::List { elements, rest } => {
                let element_ty = self.subst.fresh();
                let list_ty = Ty::Con("List".into(), vec![element_ty.clone()]);
                if !self.expect(expected, &list_ty, span) {
                    return None;
                }
                let mut subs = Vec::new();
                let mut ok = true;
                for element in elements {
                    match self.pattern(element, &element_ty, binds) {
                        Some(sub) => subs.push(sub),
                        None => ok = false,
                    }
                }
                let tail = match rest {
                    None => Pat::Ctor(Ctor::Nil, Vec::new()),
                    Some(rest) => {
                        if let Some(binder) = &rest.binder {
                            self.bind_pattern_var(binder, list_ty.clone(), binds);
                        }
                        Pat::Wild
                    }
                };
                let pat = subs
                    .into_iter()
                    .rev()
                    .fold(tail, |tail, head| Pat::Ctor(Ctor::Cons, vec![head, tail]));
                ok.then_some(pat)
            }
        }
    }

    pub(super) fn bind_pattern_var(&mut self, ident: &ast::Ident, ty: Ty, binds: &mut Vec<String>) {
        if binds.contains(&ident.text) {
            self.error(
                Code::DuplicateBinding,
                format!("`{}` is bound twice in this pattern", ident.text),
                ident.span,
            );
        }
        binds.push(ident.text.clone());
        self.observe(ident.span, &ty);
        self.bind(&ident.text, Scheme::mono(ty));
    }
}
