//! The property tier: one row per `property` block, run over generated inputs
//! in the sandbox.

use super::*;

pub(in crate::suite) fn property_rows(
    input: &SuiteInput,
    prepared: &Prepared,
    parts: &SigParts,
) -> Vec<Row> {
    let config = PropertyConfig::new(case_count(parts.takes_capabilities()), input.seed);
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
        // The guard panics the failing cases met: a clause of the definition
        // under test they name must not pass its own derived row.
        let guards = std::sync::Mutex::new(Vec::<Diagnostic>::new());
        let result = with_eval_stack(|| {
            run_property(&config, types, &binders, |inputs| {
                match holds_or_panicked(program, &wrapper_name, inputs.to_vec()) {
                    Ok(()) => CaseVerdict::Pass,
                    Err((message, panic)) => {
                        if let Some(panic) = panic
                            && let Ok(mut seen) = guards.lock()
                            && !seen.contains(&panic)
                        {
                            seen.push(panic);
                        }
                        CaseVerdict::Fail(message)
                    }
                }
            })
        });
        let mut row = property_result_row(name, result, block.header.xfail);
        if let Some(detail) = row.detail.as_mut() {
            detail.diagnostics = guards.into_inner().unwrap_or_default();
        }
        rows.push(row);
    }
    rows
}
