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

/// A clause of the definition under test whose own runtime guard failed in a
/// row of the suite that is not derived from it: an expect case's call, or a
/// property's.
pub(in crate::suite) struct GuardFailure {
    pub label: String,
    pub row: String,
    pub message: String,
}

/// The ensures guards of `input`'s definition that failing `rows` met, read
/// from each failure's panic (`ensures-violated`, `<name> ensures <label> does
/// not hold`). A callee's guard names the callee, and is not the definition's.
pub(in crate::suite) fn guard_failures(
    input: &SuiteInput,
    prepared: &Prepared,
    rows: &[Row],
) -> Vec<GuardFailure> {
    let short = input
        .definition
        .rsplit("::")
        .next()
        .unwrap_or(input.definition);
    let mut found = Vec::new();
    for row in rows.iter().filter(|row| !row.name.starts_with("derived:")) {
        let Some(detail) = &row.detail else { continue };
        for panic in detail
            .diagnostics
            .iter()
            .filter(|d| d.code == "ensures-violated")
        {
            for (label, _) in &prepared.ensures {
                let guard = format!("{short} ensures {label} does not hold");
                if panic.message.starts_with(&guard)
                    && !found.iter().any(|f: &GuardFailure| &f.label == label)
                {
                    found.push(GuardFailure {
                        label: label.clone(),
                        row: row.name.clone(),
                        message: panic.message.clone(),
                    });
                }
            }
        }
    }
    found
}

/// The derived ensures rows, and the clauses not derived at all: when a parameter
/// type cannot be generated (a function, say), the clause is reported as not
/// derived in v1 rather than recorded as a failing row — the spec is not wrong,
/// the generator cannot reach it; a `property` with concrete values covers it.
pub(in crate::suite) fn ensures_rows(
    input: &SuiteInput,
    prepared: &Prepared,
    parts: &SigParts,
    examples: &[ExpectCase],
    refuted: &[GuardFailure],
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
            ensures_rows_generated(input, prepared, parts, &data_types, examples)
                .into_iter()
                .map(|row| not_contradicting(row, refuted))
                .collect(),
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

/// A passing `derived:ensures:<label>` row fails when another row of the suite
/// met that clause's guard failing: the rows never contradict each other.
fn not_contradicting(row: Row, refuted: &[GuardFailure]) -> Row {
    let label = row.name.strip_prefix("derived:ensures:");
    let Some(failure) = refuted.iter().find(|f| Some(f.label.as_str()) == label) else {
        return row;
    };
    if row.result != RowResult::Pass {
        return row;
    }
    let detail = Failure {
        row: row.name.clone(),
        case: Some(failure.row.clone()),
        message: format!(
            "row `{}` failed on this clause's runtime guard ({}): the clause does not hold on every input this suite tried",
            failure.row, failure.message
        ),
        ..Failure::default()
    };
    Row {
        result: RowResult::Fail,
        detail: Some(detail),
        ..row
    }
}

/// The ensures rows over generated inputs, after the spec's own examples: every
/// expect case's arguments are judged first, so a clause one of them violates
/// fails its derived row whatever the seed draws (an expect case that fails on
/// the clause's runtime guard and a derived row that passes it would contradict
/// each other). Examples outside the requires clauses are skipped, as generated
/// inputs are, but never count toward the vacuity bound; so are cases with
/// fakes, whose world the sandbox here does not build.
fn ensures_rows_generated(
    input: &SuiteInput,
    prepared: &Prepared,
    parts: &SigParts,
    data_types: &[RtType],
    examples: &[ExpectCase],
) -> Vec<Row> {
    let program = &prepared.bare;
    let types = program.types();
    let cases = case_count(parts.takes_capabilities());
    let config = PropertyConfig::new(cases, input.seed);
    // A case with fakes ran in a world the sandbox here does not build; its
    // clause is judged by its own expect row. Values are not `Send`: the
    // examples cross to the evaluation stack as canonical JSON.
    let examples: Vec<(String, Vec<String>)> = examples
        .iter()
        .filter(|case| case.fakes.is_empty())
        .map(|case| {
            let args = case.args.iter().map(|v| soil_rt::encode(v, types));
            (case.row.clone(), args.collect())
        })
        .collect();
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
                let examples: Vec<(String, Vec<Value>)> = (examples.iter())
                    .filter_map(|(name, args)| {
                        let decoded = args.iter().zip(data_types).map(|(text, ty)| {
                            soil_rt::decode(text, ty, types).ok()
                        });
                        Some((name.clone(), decoded.collect::<Option<Vec<Value>>>()?))
                    })
                    .collect();
                run_property_from(&config, types, data_types, &examples, |inputs| {
                    // Examples come first, each once; shrinking comes last.
                    let n = evaluated.fetch_add(1, Ordering::Relaxed);
                    let main_phase = (examples.len()..examples.len() + cases).contains(&n);
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
