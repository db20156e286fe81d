//! Rows derived from the clauses: each requires clause checked against the
//! expect cases, each ensures clause run over generated inputs in its domain,
//! refusing vacuity.

use super::*;

pub(in crate::suite) fn requires_rows(
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
pub(in crate::suite) fn ensures_rows(
    input: &SuiteInput,
    prepared: &Prepared,
    parts: &SigParts,
) -> (Vec<Row>, Vec<Diagnostic>) {
    let types = prepared.bare.types();
    let generable = crate::suite::expect::data_types(types, parts).and_then(|data| {
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
