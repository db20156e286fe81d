//! Preparation (checking the program with its synthesized wrappers), the
//! pre-flight probes, and the generated tiers: properties, clause-derived
//! rows and the differential oracle (semantics in the parent module's docs).

use std::sync::atomic::{AtomicUsize, Ordering};

use soil_eval::{ParamKind, RunError, World, capability_value, with_eval_stack};
use soil_rt::{RtType, Value};
use trellis_diag::Diagnostic;
use trellis_hash::Digest;
use trellis_spec::{BlockSyntax, Reference};

use super::expect::rt;
use super::program::{
    SigParts, compile, ident_fragment, property_wrapper, property_wrapper_name, split_name, wrapper,
};
use super::{Failure, Mode, OracleRecord, Row, RowResult, SuiteInput, Tier};
use crate::Code;
use crate::oracle::{
    CaseOutcome, DifferentialCase, OracleConfig, SoilOutcome, cli_oracle_hash, python_oracle_hash,
    run_differential,
};
use crate::preflight::{self, ExpectCase, LabelledClause};
use crate::process::ProcessRunner;
use crate::property::{CaseVerdict, PropertyConfig, PropertyResult, case_count, run_property};

/// Skipping more than this share of generated inputs makes an ensures-derived
/// row `error` rather than a vacuous pass.
const MAX_SKIPPED_PERCENT: usize = 90;

/// A wrapper's full name, or why it cannot run.
type WrapperSlot = Result<String, Vec<Diagnostic>>;

pub(super) struct Prepared {
    /// The program as given (clause guards on) plus every wrapper that checked.
    pub guarded: soil_eval::Program,
    /// The same with the definition's own guards off, for derived ensures rows.
    pub bare: soil_eval::Program,
    /// Per property block, in block order (`None` for blocks without a body).
    pub properties: Vec<(String, WrapperSlot)>,
    pub requires: Vec<(String, WrapperSlot)>,
    pub ensures: Vec<(String, WrapperSlot)>,
}

pub(super) fn prepare(input: &SuiteInput, parts: &SigParts) -> Result<Prepared, Vec<Diagnostic>> {
    let (module, _) = split_name(input.definition);
    let mut candidates: Vec<(
        usize,
        String,
        Result<soil_types::Definition, Vec<Diagnostic>>,
    )> = Vec::new();
    let all_params: Vec<(String, String)> = parts
        .params
        .iter()
        .map(|p| (p.name.clone(), soil_syntax::print_type(&p.ty)))
        .collect();
    let row = "{Panic}";
    for block in input.blocks {
        let BlockSyntax::Property(Some(property)) = &block.syntax else {
            continue;
        };
        let name = block
            .header
            .name
            .clone()
            .unwrap_or_else(|| "property".into());
        let source = soil_types::SourceText::new(
            Some(format!("<{}>", property_wrapper_name(&name))),
            &block.content,
        );
        let defined = property_wrapper(module, &name, property, source);
        candidates.push((0, name, defined));
    }
    for clause in input.requires {
        candidates.push((
            1,
            clause.label.clone(),
            clause_wrapper(module, "requires", clause, &all_params, row),
        ));
    }
    let mut with_result = all_params.clone();
    with_result.push(("result".into(), soil_syntax::print_type(&parts.result)));
    for clause in input.ensures {
        candidates.push((
            2,
            clause.label.clone(),
            clause_wrapper(module, "ensures", clause, &with_result, row),
        ));
    }
    let wrappers: Vec<soil_types::Definition> = candidates
        .iter()
        .filter_map(|(_, _, d)| d.as_ref().ok().cloned())
        .collect();
    let mut program = input.program.clone();
    program.definitions.extend(wrappers.iter().cloned());
    let report = soil_types::check_program(input.env, &program);
    match report.for_definition(input.definition) {
        Some(Ok(_)) => {}
        Some(Err(diagnostics)) => return Err(diagnostics),
        None => {
            return Err(vec![Code::TestPredicateUnrunnable.diagnostic(format!(
                "the program has no definition `{}`",
                input.definition
            ))]);
        }
    }
    let mut checked = Vec::new();
    let mut slots: [Vec<(String, WrapperSlot)>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for (kind, label, defined) in candidates {
        let slot = defined.and_then(|def| match report.for_definition(&def.name) {
            Some(Ok(_)) => {
                checked.push(def.clone());
                Ok(def.name)
            }
            Some(Err(diagnostics)) => Err(diagnostics),
            None => Err(Vec::new()),
        });
        slots[kind].push((label, slot));
    }
    let mut definitions = input.program.definitions.clone();
    definitions.extend(checked);
    let guarded = compile(input.env, &definitions, None)?;
    // Holes are never tested (lock-schema §8): a partial lowering has no suite.
    let holes = guarded.holes_reached_by(input.definition);
    if !holes.is_empty() {
        return Err(holes);
    }
    let bare = compile(input.env, &definitions, Some(input.definition))?;
    let [properties, requires, ensures] = slots;
    Ok(Prepared {
        guarded,
        bare,
        properties,
        requires,
        ensures,
    })
}

fn clause_wrapper(
    module: Option<&str>,
    kind: &str,
    clause: &trellis_spec::Clause,
    params: &[(String, String)],
    row: &str,
) -> Result<soil_types::Definition, Vec<Diagnostic>> {
    let Some(predicate) = &clause.predicate else {
        return Err(vec![
            Code::TestPredicateUnrunnable
                .diagnostic(format!("{kind} `{}` did not parse", clause.label)),
        ]);
    };
    wrapper(
        module,
        &format!("_{kind}_{}", ident_fragment(&clause.label)),
        params,
        row,
        predicate,
    )
}

/// All arguments of the definition: capability tokens where the signature has
/// capabilities, `data` (in order) everywhere else.
fn full_args(program: &soil_eval::Program, definition: &str, data: &[Value]) -> Vec<Value> {
    let mut data = data.iter().cloned();
    program
        .params(definition)
        .unwrap_or_default()
        .iter()
        .map(|p| match p {
            ParamKind::Capability(ty) => capability_value(*ty),
            ParamKind::Data(_) => data.next().unwrap_or(Value::Unit),
        })
        .collect()
}

/// Calls a Bool wrapper: `Ok(true)`, or why the predicate did not hold.
fn holds(program: &soil_eval::Program, wrapper: &str, args: Vec<Value>) -> Result<(), String> {
    let mut world = World::sandbox();
    match program.call(wrapper, args, &mut world) {
        Ok(Value::Bool(true)) => Ok(()),
        Ok(Value::Bool(false)) => Err("the predicate is false".into()),
        Ok(other) => Err(format!("the predicate returned {other:?}, not a Bool")),
        Err(RunError::Panic(panic)) => Err(format!("the predicate panicked: {panic}")),
        Err(RunError::Refused(d)) => Err(format!(
            "the predicate could not run: {}",
            d.iter()
                .map(|d| d.message.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        )),
    }
}

pub(super) fn preflight(
    input: &SuiteInput,
    prepared: &Prepared,
    parts: &SigParts,
    cases: &[ExpectCase],
) -> Vec<Diagnostic> {
    let types = prepared.guarded.types();
    let mut out = preflight::contradictions(cases, types);
    let clauses = |list: &[trellis_spec::Clause]| -> Vec<(String, soil_syntax::ast::Expr)> {
        list.iter()
            .filter_map(|c| c.predicate.clone().map(|p| (c.label.clone(), p)))
            .collect()
    };
    let requires = clauses(input.requires);
    let requires_labelled: Vec<LabelledClause> = requires
        .iter()
        .map(|(label, predicate)| LabelledClause {
            label: label.clone(),
            span: None,
            predicate,
        })
        .collect();
    let ensures = clauses(input.ensures);
    let ensures_labelled: Vec<LabelledClause> = ensures
        .iter()
        .map(|(label, predicate)| LabelledClause {
            label: label.clone(),
            span: None,
            predicate,
        })
        .collect();
    let program = &prepared.guarded;
    let slots = &prepared.requires;
    // Expect-case values are not `Send`, so these few evaluations run on the
    // caller's thread (under the interpreter's smaller foreign-stack budget).
    out.extend(preflight::vacuous_requires(
        input.definition,
        &requires_labelled,
        cases,
        |label, args| {
            let name = slots
                .iter()
                .find(|(l, _)| l == label)
                .and_then(|(_, slot)| slot.as_ref().ok())?;
            Some(holds(program, name, full_args(program, input.definition, args)).is_ok())
        },
    ));
    out.extend(preflight::trivial_ensures(&ensures_labelled));
    if let Ok(result) = rt(types, &parts.result) {
        out.extend(preflight::unexercised_variants(
            input.definition,
            &result,
            types,
            cases,
        ));
    }
    out
}

fn unrunnable_row(name: String, tier: Tier, diagnostics: Vec<Diagnostic>, what: &str) -> Row {
    Row {
        name: name.clone(),
        tier,
        mode: Mode::Sandboxed,
        result: RowResult::Error,
        detail: Some(Failure {
            row: name,
            message: format!(
                "{what}: {}",
                diagnostics
                    .iter()
                    .map(|d| format!("{}: {}", d.code, d.message))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            diagnostics,
            ..Failure::default()
        }),
    }
}

fn property_result_row(name: String, result: PropertyResult, xfail: bool) -> Row {
    let (result, detail) = match result {
        PropertyResult::Passed { .. } => (RowResult::Pass, None),
        PropertyResult::Failed(counterexample) => (
            RowResult::Fail,
            Some(Failure {
                row: name.clone(),
                case: Some(format!(
                    "case {}: {}",
                    counterexample.case,
                    counterexample.original.join(" ")
                )),
                expected: None,
                actual: Some(counterexample.shrunk_message.clone()),
                shrunk: Some(counterexample.shrunk.clone()),
                message: format!(
                    "falsified by {} (shrunk in {} steps from {}): {}",
                    counterexample.shrunk.join(" "),
                    counterexample.shrink_steps,
                    counterexample.original.join(" "),
                    counterexample.shrunk_message
                ),
                diagnostics: Vec::new(),
            }),
        ),
        PropertyResult::Refused(diagnostic) => (
            RowResult::Error,
            Some(Failure {
                row: name.clone(),
                message: diagnostic.message.clone(),
                diagnostics: vec![diagnostic],
                ..Failure::default()
            }),
        ),
    };
    let result = match (result, xfail) {
        (RowResult::Pass, true) => RowResult::Xpass,
        (RowResult::Fail, true) => RowResult::Xfail,
        (r, _) => r,
    };
    Row {
        name,
        tier: Tier::Property,
        mode: Mode::Sandboxed,
        result,
        detail: if result == RowResult::Xfail {
            None
        } else {
            detail
        },
    }
}

pub(super) fn property_rows(input: &SuiteInput, prepared: &Prepared, parts: &SigParts) -> Vec<Row> {
    let config = PropertyConfig::new(
        case_count(parts.takes_capabilities()),
        crate::property::seed_for(&input.test_hash),
    );
    let program = &prepared.guarded;
    let types = program.types();
    let mut rows = Vec::new();
    let mut slots = prepared.properties.iter();
    for block in input.blocks {
        let BlockSyntax::Property(property) = &block.syntax else {
            continue;
        };
        let name = block
            .header
            .name
            .clone()
            .unwrap_or_else(|| "property".into());
        let Some(property) = property else {
            rows.push(unrunnable_row(
                name,
                Tier::Property,
                vec![Code::TestPredicateUnrunnable.diagnostic("the property did not parse")],
                "the property cannot run",
            ));
            continue;
        };
        let slot = slots.next();
        if property.where_range.is_some() {
            rows.push(unrunnable_row(
                name,
                Tier::Property,
                vec![Diagnostic::new(
                    trellis_spec::TrCode::UnsupportedWhereFilter.as_str(),
                    "`where` filters need constrained generation, which v1 does not have",
                )],
                "the property cannot run",
            ));
            continue;
        }
        let wrapper_name = match slot.map(|(_, s)| s) {
            Some(Ok(name)) => name.clone(),
            Some(Err(diagnostics)) => {
                rows.push(unrunnable_row(
                    name,
                    Tier::Property,
                    diagnostics.clone(),
                    "the property does not check",
                ));
                continue;
            }
            None => continue,
        };
        let binders: Result<Vec<RtType>, String> = property
            .binders
            .iter()
            .map(|b| match &b.ty {
                Some(ty) => rt(types, ty),
                None => Err(format!("the type of `{}` did not parse", b.name)),
            })
            .collect();
        let binders = match binders {
            Ok(binders) => binders,
            Err(message) => {
                rows.push(unrunnable_row(
                    name,
                    Tier::Property,
                    vec![Code::TestUngenerableType.diagnostic(message)],
                    "the property cannot run",
                ));
                continue;
            }
        };
        let result = with_eval_stack(|| {
            run_property(&config, types, &binders, |inputs| {
                match holds(program, &wrapper_name, inputs.to_vec()) {
                    Ok(()) => CaseVerdict::Pass,
                    Err(message) => CaseVerdict::Fail(message),
                }
            })
        });
        rows.push(property_result_row(name, result, block.header.xfail));
    }
    rows
}

pub(super) fn requires_rows(
    input: &SuiteInput,
    prepared: &Prepared,
    cases: &[ExpectCase],
) -> Vec<Row> {
    let program = &prepared.guarded;
    prepared
        .requires
        .iter()
        .map(|(label, slot)| {
            let name = format!("derived:requires:{label}");
            let wrapper_name = match slot {
                Ok(name) => name,
                Err(diagnostics) => {
                    return unrunnable_row(
                        name,
                        Tier::Property,
                        diagnostics.clone(),
                        "the requires clause does not check",
                    );
                }
            };
            let violation = {
                cases
                    .iter()
                    .filter(|c| matches!(c.expected, preflight::Expected::Value(_)))
                    .find_map(|case| {
                        holds(
                            program,
                            wrapper_name,
                            full_args(program, input.definition, &case.args),
                        )
                        .err()
                        .map(|why| (case.row.clone(), why))
                    })
            };
            let detail = violation.map(|(case, why)| Failure {
                row: name.clone(),
                case: Some(case.clone()),
                message: format!(
                    "expect case {case} does not satisfy requires `{label}` ({why}): the spec's own example is outside its precondition"
                ),
                ..Failure::default()
            });
            Row {
                name,
                tier: Tier::Property,
                mode: Mode::Sandboxed,
                result: if detail.is_some() {
                    RowResult::Fail
                } else {
                    RowResult::Pass
                },
                detail,
            }
        })
        .collect()
}

/// The derived ensures rows, and the clauses not derived at all: when a parameter
/// type cannot be generated (a function, say), the clause is reported as not
/// derived in v1 rather than recorded as a failing row — the spec is not wrong,
/// the generator cannot reach it; a `property` with concrete values covers it.
pub(super) fn ensures_rows(
    input: &SuiteInput,
    prepared: &Prepared,
    parts: &SigParts,
) -> (Vec<Row>, Vec<Diagnostic>) {
    let types = prepared.bare.types();
    let generable = super::expect::data_types(types, parts).and_then(|data| {
        let generator = crate::generate::Generator::new(types);
        data.iter()
            .try_for_each(|ty| {
                generator.check(ty).map_err(|error| {
                    format!(
                        "values of `{}` cannot be generated ({})",
                        error.ty, error.why
                    )
                })
            })
            .map(|()| data)
    });
    match generable {
        Ok(data_types) => (
            ensures_rows_generated(input, prepared, parts, &data_types),
            Vec::new(),
        ),
        Err(message) => {
            let not_derived = prepared
                .ensures
                .iter()
                .map(|(label, _)| {
                    Code::TestUngenerableType.diagnostic(format!(
                        "`derived:ensures:{label}` is not generated in v1: {message}; state the claim as a `property` over concrete values"
                    ))
                })
                .collect();
            (Vec::new(), not_derived)
        }
    }
}

fn ensures_rows_generated(
    input: &SuiteInput,
    prepared: &Prepared,
    parts: &SigParts,
    data_types: &[RtType],
) -> Vec<Row> {
    let program = &prepared.bare;
    let types = program.types();
    let cases = case_count(parts.takes_capabilities());
    let config = PropertyConfig::new(cases, crate::property::seed_for(&input.test_hash));
    let requires: Vec<&str> = prepared
        .requires
        .iter()
        .filter_map(|(_, slot)| slot.as_ref().ok().map(String::as_str))
        .collect();
    prepared
        .ensures
        .iter()
        .map(|(label, slot)| {
            let name = format!("derived:ensures:{label}");
            let wrapper_name = match slot {
                Ok(name) => name,
                Err(diagnostics) => {
                    return unrunnable_row(
                        name,
                        Tier::Property,
                        diagnostics.clone(),
                        "the ensures clause does not check",
                    );
                }
            };
            let evaluated = AtomicUsize::new(0);
            let skipped = AtomicUsize::new(0);
            let result = with_eval_stack(|| {
                run_property(&config, types, data_types, |inputs| {
                    let main_phase = evaluated.fetch_add(1, Ordering::Relaxed) < cases;
                    let args = full_args(program, input.definition, inputs);
                    let skip = || {
                        if main_phase {
                            skipped.fetch_add(1, Ordering::Relaxed);
                        }
                        CaseVerdict::Pass
                    };
                    if requires.iter().any(|r| holds(program, r, args.clone()).is_err()) {
                        return skip();
                    }
                    let mut world = World::sandbox();
                    match program.call(input.definition, args.clone(), &mut world) {
                        Ok(result) => {
                            let mut with_result = args;
                            with_result.push(result);
                            match holds(program, wrapper_name, with_result) {
                                Ok(()) => CaseVerdict::Pass,
                                Err(why) => CaseVerdict::Fail(why),
                            }
                        }
                        Err(RunError::Panic(_)) if parts.may_panic() => skip(),
                        Err(RunError::Panic(panic)) => {
                            CaseVerdict::Fail(format!("the definition panicked: {panic}"))
                        }
                        Err(RunError::Refused(d)) => CaseVerdict::Fail(format!(
                            "the definition could not run: {}",
                            d.iter().map(|d| d.message.as_str()).collect::<Vec<_>>().join("; ")
                        )),
                    }
                })
            });
            if matches!(result, PropertyResult::Passed { .. })
                && skipped.load(Ordering::Relaxed) * 100 > cases * MAX_SKIPPED_PERCENT
            {
                return unrunnable_row(
                    name,
                    Tier::Property,
                    vec![Code::TestRequiresTooSelective.diagnostic(format!(
                        "{} of {cases} generated inputs were outside the requires clauses (or panicked), so `{label}` was barely tested",
                        skipped.load(Ordering::Relaxed)
                    ))],
                    "the ensures clause was not exercised",
                );
            }
            property_result_row(name, result, false)
        })
        .collect()
}

pub(super) fn differential_rows(
    input: &SuiteInput,
    prepared: &Prepared,
    parts: &SigParts,
    cases: &[ExpectCase],
    runner: &dyn ProcessRunner,
) -> (Vec<Row>, Vec<OracleRecord>) {
    let mut rows = Vec::new();
    let mut oracles = Vec::new();
    let program = &prepared.guarded;
    let types = program.types();
    for block in input.blocks {
        let BlockSyntax::Reference(Some(line)) = &block.syntax else {
            continue;
        };
        // Named by the reference line itself (lock-schema §5.2, tr-grammar §3.6).
        let name = format!("derived:differential:{}", line.line.trim());
        let (kind, hash) = match &line.reference {
            Reference::Python { path, .. } => (
                "python",
                input
                    .references
                    .get(path.as_str())
                    .map(|text| python_oracle_hash(text.as_bytes()))
                    .ok_or_else(|| {
                        format!("cannot read the reference {path}: the root holds no such file")
                    }),
            ),
            Reference::Cli { command } => ("cli", Ok(cli_oracle_hash(command))),
        };
        let hash: Digest = match hash {
            Ok(hash) => hash,
            Err(message) => {
                rows.push(unrunnable_row(
                    name,
                    Tier::Differential,
                    vec![Code::OracleError.diagnostic(message)],
                    "the oracle cannot run",
                ));
                continue;
            }
        };
        oracles.push(OracleRecord {
            kind,
            source: line.line.clone(),
            hash,
        });
        let Ok(result_type) = rt(types, &parts.result) else {
            continue;
        };
        let diff_cases: Vec<DifferentialCase> = {
            cases
                .iter()
                .map(|case| {
                    let mut world = World::sandbox();
                    let args = full_args(program, input.definition, &case.args);
                    let actual = match program.call(input.definition, args, &mut world) {
                        Ok(value) => SoilOutcome::Value(soil_rt::encode(&value, types)),
                        Err(RunError::Panic(panic)) => SoilOutcome::Panic(panic.to_string()),
                        Err(RunError::Refused(d)) => SoilOutcome::Panic(
                            d.iter()
                                .map(|d| d.message.as_str())
                                .collect::<Vec<_>>()
                                .join("; "),
                        ),
                    };
                    DifferentialCase {
                        label: case.row.clone(),
                        args: case.args.clone(),
                        actual,
                    }
                })
                .collect()
        };
        let config = OracleConfig::new(
            input.root,
            vec![("PATH".to_owned(), input.base_path.to_owned())],
            input.timeouts.oracle,
        );
        let results = run_differential(
            runner,
            &config,
            &line.reference,
            &result_type,
            types,
            &diff_cases,
        );
        let mut detail = None;
        let mut result = RowResult::Pass;
        for case in results {
            match case.outcome {
                CaseOutcome::Agree => {}
                CaseOutcome::Disagree { expected, actual } => {
                    result = RowResult::Fail;
                    detail = Some(Failure {
                        row: name.clone(),
                        case: Some(case.label.clone()),
                        message: format!("Soil and the oracle disagree on {}", case.label),
                        expected: Some(expected),
                        actual: Some(actual),
                        ..Failure::default()
                    });
                    break;
                }
                CaseOutcome::OracleError(failure) => {
                    let diagnostic = failure.diagnostic(&case.label);
                    result = RowResult::Error;
                    detail = Some(Failure {
                        row: name.clone(),
                        case: Some(case.label.clone()),
                        message: diagnostic.message.clone(),
                        diagnostics: vec![diagnostic],
                        ..Failure::default()
                    });
                    break;
                }
            }
        }
        rows.push(Row {
            name,
            tier: Tier::Differential,
            mode: Mode::Sandboxed,
            result,
            detail,
        });
    }
    (rows, oracles)
}
