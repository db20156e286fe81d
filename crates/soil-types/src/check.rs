//! The driver: builds the environment, checks each definition in callee-first
//! order, detects mutual recursion, and renders findings as diagnostics.

use rustc_hash::{FxHashMap, FxHashSet};
use soil_syntax::MAX_PROBLEMS;
use soil_syntax::ast;
use trellis_diag::{Diagnostic, TextRange};

use crate::codes::Code;
use crate::env::{RowMember, TypeEnv};
use crate::error::{Findings, Origin, Renderer, TypeError};
use crate::hints::Hints;
use crate::infer::{Checker, GlobalDef};
use crate::prelude::{prelude, scheme_of};
use crate::program::{
    CheckFacts, CheckReport, ClauseFact, ClauseKind, Definition, DefinitionReport, Env, HoleFact,
    NONSTRUCTURAL_RECURSION, Program, ScopeEntry,
};
use crate::termination;
use crate::ty::{Row, RowVar, Scheme, Ty, VarNames, print_ty};
use crate::unify::generalize;

/// Checks every definition of `program` against `env` and the prelude.
pub fn check_program(env: &Env, program: &Program) -> CheckReport {
    check_declared(&DeclaredEnv::of(env), program)
}

/// [`check_program`] against an environment declared once beforehand.
pub fn check_declared(env: &DeclaredEnv, program: &Program) -> CheckReport {
    check_observing(env, program, None).0
}

/// The prelude's types with an environment's declared over them, and the
/// environment's own problems: what every check against that environment
/// shares. Declaring takes time in proportion to the environment, so a host
/// that checks a root one definition at a time declares it once for all of
/// them ([`check_declared`]), not once per definition.
#[derive(Clone, Debug)]
pub struct DeclaredEnv {
    types: TypeEnv,
    errors: Vec<trellis_diag::Diagnostic>,
}

impl DeclaredEnv {
    pub fn of(env: &Env) -> DeclaredEnv {
        let mut types = prelude().env.clone();
        let decls: Vec<&ast::TypeDecl> = env.types.iter().map(|t| &t.node).collect();
        let mut findings = Vec::new();
        for (found, located) in types.declare(&decls).into_iter().zip(&env.types) {
            findings.extend(found.into_iter().map(|e| (e, &located.source)));
        }
        // The environment is one unit of report, capped as a definition is.
        let left_out = findings.len().saturating_sub(MAX_PROBLEMS);
        let first_left_out = findings.get(MAX_PROBLEMS).map(|(e, s)| (e.range, *s));
        findings.truncate(MAX_PROBLEMS);
        let mut renderer = Renderer::default();
        let mut errors: Vec<Diagnostic> = findings
            .iter()
            .map(|(error, source)| renderer.diagnostic(source, error))
            .collect();
        if let Some((range, source)) = first_left_out {
            let count = Findings {
                left_out,
                first_left_out: Some((range, Origin::Equation)),
                ..Findings::default()
            };
            if let Some(finding) = count.left_out_finding() {
                errors.push(renderer.diagnostic(source, &finding));
            }
        }
        DeclaredEnv { types, errors }
    }
}

/// A name of a definition's equation — a binder or a use — and its type there, in
/// canonical text (`span` is the name's, in the equation's source).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameType {
    pub span: TextRange,
    pub ty: String,
}

/// The type of every name `definition`'s equation binds or mentions, as checking
/// `program` finds them (at a use, the instantiated type): what an editor shows
/// on hover. Checks the program exactly as [`check_program`] does; a definition
/// that fails its check still yields what inference had found by then.
pub fn name_types(env: &Env, program: &Program, definition: &str) -> Vec<NameType> {
    name_types_declared(&DeclaredEnv::of(env), program, definition)
}

/// [`name_types`] against an environment declared once beforehand, as
/// [`check_declared`] checks.
pub fn name_types_declared(
    env: &DeclaredEnv,
    program: &Program,
    definition: &str,
) -> Vec<NameType> {
    check_observing(env, program, Some(definition)).1
}

fn check_observing(
    env: &DeclaredEnv,
    program: &Program,
    observe: Option<&str>,
) -> (CheckReport, Vec<NameType>) {
    let base = prelude();
    let type_env = &env.types;
    let env_errors = env.errors.clone();

    let mut states: Vec<DefState> = program
        .definitions
        .iter()
        .map(|_| DefState::default())
        .collect();
    let mut globals: FxHashMap<String, GlobalDef> = FxHashMap::default();
    for declaration in &program.declarations {
        let scheme = signed_scheme(type_env, &declaration.signature.node);
        globals.insert(declaration.name.clone(), scheme);
    }
    for (index, definition) in program.definitions.iter().enumerate() {
        if globals.contains_key(&definition.name) {
            let span = definition.equation.node.name.span;
            states[index].errors.add(TypeError::new(
                Code::DuplicateDefinition,
                format!("`{}` is defined more than once", definition.name),
                span,
            ));
            continue;
        }
        let entry = match &definition.signature {
            Some(signature) => signed_scheme(type_env, &signature.node),
            None => GlobalDef::Pending,
        };
        globals.insert(definition.name.clone(), entry);
    }

    let hints = Hints::default();
    let mut observed = Vec::new();
    for (index, definition) in program.definitions.iter().enumerate() {
        if !states[index].errors.is_empty() {
            continue;
        }
        let observing = observe == Some(definition.name.as_str());
        let mut outcome = check_definition(
            type_env,
            &globals,
            &base.values,
            &hints,
            definition,
            observing,
        );
        if observing {
            observed = std::mem::take(&mut outcome.name_types);
        }
        if definition.signature.is_none() {
            let scheme = outcome.inferred.clone().unwrap_or_else(poison);
            globals.insert(definition.name.clone(), GlobalDef::Ready(scheme));
        }
        states[index] = outcome.state;
    }

    mark_mutual_recursion(program, &mut states);

    let mut renderer = Renderer::default();
    let definitions = program
        .definitions
        .iter()
        .zip(states)
        .map(|(definition, state)| DefinitionReport {
            name: definition.name.clone(),
            outcome: if state.errors.is_empty() {
                state.facts.ok_or_else(Vec::new)
            } else {
                Err(render(&mut renderer, definition, state.errors))
            },
        })
        .collect();
    (
        CheckReport {
            env_errors,
            definitions,
        },
        observed,
    )
}

/// What callers see of a signed definition: its declared type, or poison when the
/// signature itself is broken (its own check reports why).
fn signed_scheme(env: &TypeEnv, signature: &ast::Signature) -> GlobalDef {
    let mut errors = Vec::new();
    // Only whether it has errors matters here: no hints are looked for.
    let scheme = scheme_of(env, &signature.ty, &mut errors, &Hints::none());
    GlobalDef::Ready(if errors.is_empty() { scheme } else { poison() })
}

/// A scheme that unifies with anything, standing in for a broken callee so its
/// callers do not report follow-on errors.
fn poison() -> Scheme {
    Scheme { ty: Ty::Gen(0) }
}

#[derive(Default)]
struct DefState {
    facts: Option<CheckFacts>,
    errors: Findings,
    references: Vec<(String, TextRange, Origin)>,
}

struct Outcome {
    state: DefState,
    inferred: Option<Scheme>,
    /// Filled only when observing (see [`name_types`]).
    name_types: Vec<NameType>,
}

/// The observed names' types, resolved against the final substitution.
fn resolved_name_types(checker: &Checker) -> Vec<NameType> {
    checker
        .name_types
        .iter()
        .map(|(span, ty)| NameType {
            span: *span,
            ty: print_ty(&checker.subst.resolve(ty), &mut VarNames::letters()),
        })
        .collect()
}

fn split_name(qualified: &str) -> (&str, &str) {
    qualified.rsplit_once("::").unwrap_or(("", qualified))
}

fn check_definition(
    env: &TypeEnv,
    globals: &FxHashMap<String, GlobalDef>,
    prelude_values: &FxHashMap<String, Scheme>,
    hints: &Hints,
    definition: &Definition,
    observing: bool,
) -> Outcome {
    let (module, short) = split_name(&definition.name);
    let equation = &definition.equation.node;
    let mut checker = Checker::new(env, globals, prelude_values, hints, module);
    checker.observing = observing;
    let fail = |checker: Checker| Outcome {
        name_types: resolved_name_types(&checker),
        state: DefState {
            facts: None,
            errors: checker.errors,
            references: checker.references,
        },
        inferred: None,
    };

    if equation.name.text != short {
        checker.error(
            Code::SignatureMismatch,
            format!(
                "the equation defines `{}` but the definition is `{}`",
                equation.name.text, definition.name
            ),
            equation.name.span,
        );
    }

    // The declared type, with its variables rigid for the body's check.
    let declared: Option<Ty> = match &definition.signature {
        Some(signature) => {
            checker.origin = Origin::Signature;
            if signature.node.name.text != short {
                checker.error(
                    Code::SignatureMismatch,
                    format!(
                        "the signature names `{}` but the definition is `{}`",
                        signature.node.name.text, short
                    ),
                    signature.node.name.span,
                );
            }
            let mut rigid_types: FxHashSet<String> = FxHashSet::default();
            let mut rigid_rows: FxHashSet<String> = FxHashSet::default();
            let mut errors = Vec::new();
            let ty = {
                let mut vars = |name: &str| {
                    if !rigid_types.contains(name) {
                        rigid_types.insert(name.to_owned());
                    }
                    Some(Ty::Rigid(name.to_owned()))
                };
                let mut rows = |name: &str| {
                    if !rigid_rows.contains(name) {
                        rigid_rows.insert(name.to_owned());
                    }
                    Some(RowMember::Rigid(name.to_owned()))
                };
                env.lower(&signature.node.ty, &mut vars, &mut rows, &mut errors, hints)
            };
            for error in errors {
                checker.push(error);
            }
            checker.rigid_types = rigid_types;
            checker.rigid_rows = rigid_rows;
            checker.origin = Origin::Equation;
            Some(ty)
        }
        None => None,
    };
    if !checker.errors.is_empty() {
        return fail(checker);
    }
    let whole = match &declared {
        Some(ty) => ty.clone(),
        None => {
            let ty = checker.subst.fresh();
            checker.self_mono = Some((definition.name.clone(), ty.clone()));
            ty
        }
    };

    // Peel one arrow per equation parameter.
    let mut param_tys = Vec::new();
    let mut rows: Vec<Row> = Vec::new();
    let mut current = whole.clone();
    for param in &equation.params {
        match checker.subst.shallow(&current) {
            Ty::Fun(param_ty, row, result) => {
                param_tys.push(*param_ty);
                rows.push(row);
                current = *result;
            }
            Ty::Var(_) => {
                let param_ty = checker.subst.fresh();
                let row = checker.subst.fresh_row();
                let result = checker.subst.fresh();
                let arrow = Ty::fun(param_ty.clone(), row.clone(), result.clone());
                checker.expect(&current, &arrow, param.span());
                param_tys.push(param_ty);
                rows.push(row);
                current = result;
            }
            _ => {
                checker.error(
                    Code::SignatureMismatch,
                    format!(
                        "`{short}` has {} parameter(s) but its signature declares {}",
                        equation.params.len(),
                        param_tys.len()
                    ),
                    param.span(),
                );
                return fail(checker);
            }
        }
    }
    let declared_row = rows.last().cloned().unwrap_or_else(Row::empty);
    let result_ty = current.clone();

    checker.bind_params(&equation.params, &param_tys);
    checker.push_effects();
    checker.check(&equation.body, &result_ty);
    let body_effects = checker.pop_effects();

    // Clauses see the parameters (also under their signature names) and, in an
    // ensures clause, `result`.
    let signature_names = definition
        .signature
        .as_ref()
        .map(|s| signature_param_names(&s.node.ty))
        .unwrap_or_default();
    // Named signature parameters beyond the equation's (`f x = \y -> …`) are in
    // scope too, and `result` is then the type after them.
    let mut clause_params = param_tys.clone();
    let mut clause_result = result_ty.clone();
    while clause_params.len() < signature_names.len()
        && signature_names[clause_params.len()].is_some()
    {
        let Ty::Fun(param, _, result) = checker.subst.shallow(&clause_result) else {
            break;
        };
        clause_params.push(*param);
        clause_result = *result;
    }
    let mut clause_effects = Vec::new();
    for (index, clause) in definition.clauses.iter().enumerate() {
        checker.origin = Origin::Clause(index);
        let mut bindings: Vec<(String, Ty)> = Vec::new();
        for (position, param_ty) in clause_params.iter().enumerate() {
            if let Some(Some(name)) = signature_names.get(position) {
                bindings.push((name.clone(), param_ty.clone()));
            }
            if let Some(ast::Param::Named(ident)) = equation.params.get(position) {
                bindings.push((ident.text.clone(), param_ty.clone()));
            }
        }
        if clause.kind == ClauseKind::Ensures {
            bindings.push(("result".to_owned(), clause_result.clone()));
        }
        let effects = checker.check_predicate(&clause.predicate.node, bindings);
        clause_effects.push(effects);
    }
    checker.origin = Origin::Equation;

    let has_holes = !checker.holes.is_empty();
    checker.resolve_deferred(has_holes);
    checker.signature_row = declared.is_some();
    checker.constrain_subset(&body_effects, &declared_row, Code::EffectNotDeclared);
    checker.signature_row = false;
    for effects in &clause_effects {
        checker.constrain_subset(effects, &Row::label("Panic"), Code::PredicateEffect);
    }

    // Termination.
    let recursion = termination::analyse(module, equation);
    let allow_reason = definition
        .allow
        .iter()
        .find(|a| a.hatch == NONSTRUCTURAL_RECURSION)
        .map(|a| {
            if a.reason.is_empty() {
                a.hatch.clone()
            } else {
                a.reason.clone()
            }
        });
    let termination = if !recursion.recursive {
        "non-recursive".to_owned()
    } else if recursion.nonstructural.is_empty() {
        "structural".to_owned()
    } else if let Some(reason) = &allow_reason {
        format!("allowed: {reason}")
    } else {
        for span in &recursion.nonstructural {
            checker.push(
                TypeError::new(
                    Code::NonstructuralRecursion,
                    "this recursive call is not on a structurally smaller argument",
                    *span,
                )
                .note(format!(
                    "grant `allow: {NONSTRUCTURAL_RECURSION}` in the spec if it terminates"
                )),
            );
        }
        String::new()
    };

    if !checker.errors.is_empty() {
        return fail(checker);
    }

    let resolved_whole = checker.subst.resolve(&whole);
    let inferred = if declared.is_none() {
        let mut tys = Vec::new();
        let mut row_vars = Vec::new();
        checker
            .subst
            .free_vars(&resolved_whole, &mut tys, &mut row_vars);
        Some(generalize(&resolved_whole, &tys, &row_vars))
    } else {
        None
    };
    let signature = match (&definition.signature, &inferred) {
        (Some(signature), _) => soil_syntax::print_type(&signature.node.ty),
        (None, Some(scheme)) => print_ty(&drop_lone_row_vars(&scheme.ty), &mut VarNames::letters()),
        (None, None) => String::new(),
    };
    let mut row = Vec::new();
    spine_labels(&resolved_whole, &mut row);
    row.sort();
    row.dedup();

    let holes = checker
        .holes
        .iter()
        .map(|hole| {
            let mut names = VarNames::default();
            let goal = print_ty(&checker.subst.resolve(&hole.ty), &mut names);
            let scope = hole
                .scope
                .iter()
                .map(|(name, scheme)| ScopeEntry {
                    name: name.clone(),
                    ty: print_ty(&checker.subst.resolve(&scheme.ty), &mut names),
                })
                .collect();
            HoleFact {
                name: hole.name.clone(),
                goal,
                scope,
            }
        })
        .collect();
    let clauses = definition
        .clauses
        .iter()
        .map(|clause| ClauseFact {
            kind: clause.kind,
            label: clause.label.clone(),
            assurance: "runtime".to_owned(),
        })
        .collect();
    let facts = CheckFacts {
        definition: definition.name.clone(),
        signature,
        row,
        clauses,
        termination,
        holes,
    };
    Outcome {
        name_types: resolved_name_types(&checker),
        state: DefState {
            facts: Some(facts),
            errors: Findings::default(),
            references: checker.references,
        },
        inferred,
    }
}

/// A quantified row variable occurring once constrains nothing ("and possibly
/// more effects"); inferred signatures omit it so they read like declared ones.
fn drop_lone_row_vars(ty: &Ty) -> Ty {
    fn count(ty: &Ty, counts: &mut FxHashMap<u32, usize>) {
        match ty {
            Ty::Con(_, args) | Ty::Tuple(args) => args.iter().for_each(|a| count(a, counts)),
            Ty::Fun(param, row, result) => {
                for var in &row.vars {
                    if let RowVar::Gen(id) = var {
                        *counts.entry(*id).or_default() += 1;
                    }
                }
                count(param, counts);
                count(result, counts);
            }
            Ty::Var(_) | Ty::Gen(_) | Ty::Rigid(_) => {}
        }
    }
    fn strip(ty: &Ty, counts: &FxHashMap<u32, usize>) -> Ty {
        match ty {
            Ty::Con(name, args) => Ty::Con(
                name.clone(),
                args.iter().map(|a| strip(a, counts)).collect(),
            ),
            Ty::Tuple(args) => Ty::Tuple(args.iter().map(|a| strip(a, counts)).collect()),
            Ty::Fun(param, row, result) => {
                let mut row = row.clone();
                row.vars.retain(|var| match var {
                    RowVar::Gen(id) => counts.get(id).copied().unwrap_or(0) > 1,
                    RowVar::Flex(_) => true,
                });
                Ty::fun(strip(param, counts), row, strip(result, counts))
            }
            other => other.clone(),
        }
    }
    let mut counts = FxHashMap::default();
    count(ty, &mut counts);
    strip(ty, &counts)
}

fn signature_param_names(ty: &ast::Type) -> Vec<Option<String>> {
    let mut names = Vec::new();
    let mut current = ty;
    while let ast::TypeKind::Function(function) = &current.kind {
        names.push(function.param_name.as_ref().map(|n| n.text.clone()));
        current = &function.result;
    }
    names
}

fn spine_labels(ty: &Ty, out: &mut Vec<String>) {
    if let Ty::Fun(_, row, result) = ty {
        out.extend(row.labels.iter().cloned());
        spine_labels(result, out);
    }
}

/// Definitions that reach themselves through other module definitions need the
/// escape hatch; the error points at the reference that closes the cycle.
fn mark_mutual_recursion(program: &Program, states: &mut [DefState]) {
    let index_of: FxHashMap<&str, usize> = program
        .definitions
        .iter()
        .enumerate()
        .map(|(i, d)| (d.name.as_str(), i))
        .collect();
    let edges: Vec<Vec<(usize, TextRange, Origin)>> = states
        .iter()
        .enumerate()
        .map(|(from, state)| {
            state
                .references
                .iter()
                .filter_map(|(name, span, origin)| {
                    let to = *index_of.get(name.as_str())?;
                    (to != from).then_some((to, *span, *origin))
                })
                .collect()
        })
        .collect();
    for (index, definition) in program.definitions.iter().enumerate() {
        let closing = edges[index]
            .iter()
            .find(|(to, _, _)| reaches(&edges, *to, index));
        let Some((_, span, origin)) = closing else {
            continue;
        };
        let allowed = definition
            .allow
            .iter()
            .find(|a| a.hatch == NONSTRUCTURAL_RECURSION)
            .map(|a| {
                if a.reason.is_empty() {
                    a.hatch.clone()
                } else {
                    a.reason.clone()
                }
            });
        match allowed {
            Some(reason) => {
                if let Some(facts) = &mut states[index].facts {
                    facts.termination = format!("allowed: {reason}");
                }
            }
            None => {
                let mut error = TypeError::new(
                    Code::NonstructuralRecursion,
                    format!(
                        "`{}` is mutually recursive with another definition",
                        definition.name
                    ),
                    *span,
                )
                .note(format!(
                    "grant `allow: {NONSTRUCTURAL_RECURSION}` in the spec if it terminates"
                ));
                error.origin = *origin;
                states[index].errors.add(error);
            }
        }
    }
}

fn reaches(edges: &[Vec<(usize, TextRange, Origin)>], from: usize, target: usize) -> bool {
    let mut seen = vec![false; edges.len()];
    let mut stack = vec![from];
    while let Some(node) = stack.pop() {
        if node == target {
            return true;
        }
        if std::mem::replace(&mut seen[node], true) {
            continue;
        }
        stack.extend(edges[node].iter().map(|(to, _, _)| *to));
    }
    false
}

fn render(renderer: &mut Renderer, definition: &Definition, findings: Findings) -> Vec<Diagnostic> {
    let rank = |origin: Origin| match origin {
        Origin::Signature => 0,
        Origin::Equation => 1,
        Origin::Clause(i) => 2 + i,
    };
    let left_out = findings.left_out_finding();
    let mut errors = findings.kept;
    errors.sort_by_key(|e| (rank(e.origin), e.range.map(|r| r.start)));
    // The count of those left out closes the list.
    errors.extend(left_out);
    errors
        .iter()
        .map(|error| {
            let source = match error.origin {
                Origin::Signature => definition.signature.as_ref().map(|s| &s.source),
                Origin::Equation => Some(&definition.equation.source),
                Origin::Clause(i) => definition.clauses.get(i).map(|c| &c.predicate.source),
            };
            renderer.diagnostic(source.unwrap_or(&definition.equation.source), error)
        })
        .collect()
}

impl Checker<'_> {
    /// Checks a predicate: it must be Bool; its effects are returned for the
    /// pure-or-Panic check after inference.
    fn check_predicate(
        &mut self,
        predicate: &ast::Expr,
        bindings: Vec<(String, Ty)>,
    ) -> Vec<crate::infer::EffectUse> {
        let mark = self.scope_len();
        for (name, ty) in bindings {
            self.bind(&name, Scheme::mono(ty));
        }
        self.push_effects();
        let ty = self.infer(predicate);
        if self.subst.unify(&Ty::con("Bool"), &ty).is_err() && self.room_for(predicate.span) {
            let shown = self.show(&ty);
            self.push(
                TypeError::new(
                    Code::PredicateNotBool,
                    format!("a predicate must be Bool, found `{shown}`"),
                    predicate.span,
                )
                .note("expected: Bool")
                .note(format!("found: {shown}")),
            );
        }
        let effects = self.pop_effects();
        self.unbind(mark);
        effects
    }
}
