//! The differential oracle: each `reference` line run against the definition
//! over the expect cases, with the oracle hashes the lock records.

use super::*;

pub(in crate::suite) fn differential_rows(
    input: &SuiteInput,
    prepared: &Prepared,
    parts: &SigParts,
    cases: &[ExpectCase],
    runner: &dyn ProcessRunner,
    warm: Option<&dyn WarmRunner>,
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
        let mut config = OracleConfig::new(
            input.root,
            vec![("PATH".to_owned(), input.base_path.to_owned())],
            input.timeouts.oracle,
        );
        config.python = input.python.to_owned();
        let results = run_differential(
            runner,
            warm,
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
