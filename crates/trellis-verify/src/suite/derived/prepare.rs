//! Preparation: the program checked with its synthesized wrappers (one per
//! property body and per requires/ensures clause), and the pre-flight probes
//! over the expect cases.

use super::*;

pub(in crate::suite) fn prepare(
    input: &SuiteInput,
    parts: &SigParts,
) -> Result<Prepared, Vec<Diagnostic>> {
    prepare_with(input, parts, false)
}

/// [`prepare`] for the pre-flight alone, which never runs the definition: a
/// placeholder body with holes is allowed.
pub(in crate::suite) fn prepare_allowing_holes(
    input: &SuiteInput,
    parts: &SigParts,
) -> Result<Prepared, Vec<Diagnostic>> {
    prepare_with(input, parts, true)
}

fn prepare_with(
    input: &SuiteInput,
    parts: &SigParts,
    allow_holes: bool,
) -> Result<Prepared, Vec<Diagnostic>> {
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
    let report = soil_types::check_declared(input.types.declared(), &program);
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
    let guarded = compile(input.types, &definitions, None)?;
    // Holes are never tested (lock-schema §8): a partial lowering has no suite.
    let holes = guarded.holes_reached_by(input.definition);
    if !holes.is_empty() && !allow_holes {
        return Err(holes);
    }
    let bare = compile(input.types, &definitions, Some(input.definition))?;
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

pub(in crate::suite) fn preflight(
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
