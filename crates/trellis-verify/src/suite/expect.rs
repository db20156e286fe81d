//! The expect tier: a definition's `test` blocks as one soil0 test bundle
//! (soil0-cli §10, the shape reused verbatim by the context bundle's
//! `tests.json`), and [`execute_bundle`], the one place that bundle is run.

use std::sync::Arc;

use serde_json::{Map, Value as Json, json};
use soil_eval::{RunError, World};
use soil_rt::{RtType, TypeEnv};
use trellis_diag::Diagnostic;
use trellis_spec::{BlockSyntax, BlockValue, TestCase, TestLine};

use super::program::{SigParts, compile};

/// One expect case with its row name and whether its block is `xfail`.
#[derive(Clone, Debug)]
pub struct NamedCase<'a> {
    pub row: String,
    pub block: String,
    pub xfail: bool,
    pub case: &'a TestCase,
}

/// The expect cases of `blocks`, named `block#k` (k from 1 over the block's
/// call-arrow cases; `with` lines are not counted).
pub fn expect_cases(blocks: &[Arc<BlockValue>]) -> Vec<NamedCase<'_>> {
    let mut out = Vec::new();
    for block in blocks {
        let BlockSyntax::Test(lines) = &block.syntax else {
            continue;
        };
        let name = block.header.name.clone().unwrap_or_else(|| "test".into());
        let cases = lines.iter().filter_map(|line| match line {
            TestLine::Case(case) => Some(case),
            TestLine::With(_) => None,
        });
        for (k, case) in cases.enumerate() {
            out.push(NamedCase {
                row: format!("{name}#{}", k + 1),
                block: name.clone(),
                xfail: block.header.xfail,
                case,
            });
        }
    }
    out
}

/// One bundle case with its JSON parts as text: arguments and the expected
/// value in canonical form (soil0-cli §7.1) whenever they decode against the
/// signature, the JSON as written otherwise (pre-flight reports those cases).
struct BundleCase {
    name: String,
    args: Vec<String>,
    /// `None`: the case expects a panic.
    expect: Option<String>,
    fakes: Json,
}

fn bundle_cases(
    parts: &SigParts,
    types: Option<&TypeEnv>,
    blocks: &[Arc<BlockValue>],
) -> Vec<BundleCase> {
    let data_types = types.and_then(|env| data_types(env, parts).ok());
    let result_type = types.and_then(|env| rt(env, &parts.result).ok());
    expect_cases(blocks)
        .iter()
        .map(|named| {
            let case = named.case;
            let written = || case.args.iter().map(|a| a.value.to_string()).collect();
            let args = match (&data_types, types) {
                (Some(tys), Some(env)) => canonical_args(case, tys, env).unwrap_or_else(written),
                _ => written(),
            };
            let expect = match &case.expected {
                trellis_spec::Expected::Value(value) => Some(
                    match (&result_type, types) {
                        (Some(ty), Some(env)) => soil_rt::decode(&value.text, ty, env)
                            .ok()
                            .map(|v| soil_rt::encode(&v, env)),
                        _ => None,
                    }
                    .unwrap_or_else(|| value.value.to_string()),
                ),
                trellis_spec::Expected::Panic(_) => None,
            };
            let mut fakes = Map::new();
            for (param, value) in &case.fakes {
                fakes.insert(param.clone(), value.value.clone());
            }
            BundleCase {
                name: named.row.clone(),
                args,
                expect,
                fakes: Json::Object(fakes),
            }
        })
        .collect()
}

/// The bundle's exact text: compact, keys in the contract's order, every
/// Soil value in its canonical bytes (a `serde_json` round trip would print
/// `1e+308` where the canonical form is `1e308`).
pub fn bundle_text(
    definition: &str,
    parts: &SigParts,
    types: Option<&TypeEnv>,
    blocks: &[Arc<BlockValue>],
) -> String {
    let quote = |text: &str| Json::String(text.to_owned()).to_string();
    let cases: Vec<String> = bundle_cases(parts, types, blocks)
        .iter()
        .map(|case| {
            let expect = match &case.expect {
                Some(value) => format!("{{\"tag\":\"Value\",\"value\":{value}}}"),
                None => r#"{"tag":"Panic","code":{"tag":"None"}}"#.to_owned(),
            };
            format!(
                "{{\"name\":{},\"def\":{},\"args\":[{}],\"expect\":{expect},\"fakes\":{}}}",
                quote(&case.name),
                quote(definition),
                case.args.join(","),
                case.fakes
            )
        })
        .collect();
    format!("{{\"cases\":[{}]}}", cases.join(","))
}

/// The bundle as a JSON value (for [`execute_bundle`] and hosts that embed it).
pub fn bundle_of(
    definition: &str,
    parts: &SigParts,
    types: Option<&TypeEnv>,
    blocks: &[Arc<BlockValue>],
) -> Json {
    let text = bundle_text(definition, parts, types, blocks);
    serde_json::from_str(&text).unwrap_or_else(|_| json!({"cases": []}))
}

fn canonical_args(case: &TestCase, types: &[RtType], env: &TypeEnv) -> Option<Vec<String>> {
    let text = format!(
        "[{}]",
        case.args
            .iter()
            .map(|a| a.text.as_str())
            .collect::<Vec<_>>()
            .join(",")
    );
    let values = soil_rt::decode_args(&text, types, env).ok()?;
    Some(values.iter().map(|v| soil_rt::encode(v, env)).collect())
}

/// The runtime types of a signature's non-capability parameters.
pub fn data_types(env: &TypeEnv, parts: &SigParts) -> Result<Vec<RtType>, String> {
    parts
        .params
        .iter()
        .filter(|p| !p.capability)
        .map(|p| rt(env, &p.ty))
        .collect()
}

pub fn rt(env: &TypeEnv, ty: &soil_syntax::ast::Type) -> Result<RtType, String> {
    soil_eval::rt_type(env, ty, &[], &mut Vec::new())
}

/// Runs a test bundle against a checked program and returns `{ cases :
/// List CaseResult }` (soil0-cli §8.7, §10). The one entry point of the expect
/// tier, shaped like soil0's library `test` so it can stand in for it.
pub fn execute_bundle(
    types: &super::SuiteTypes,
    program: &soil_types::Program,
    bundle: &Json,
) -> Result<Json, Vec<Diagnostic>> {
    let compiled = compile(types, &program.definitions, None)?;
    let cases = bundle
        .get("cases")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default();
    let results: Vec<Json> = cases
        .iter()
        .map(|case| {
            let name = case.get("name").and_then(Json::as_str).unwrap_or_default();
            json!({"name": name, "outcome": run_case(&compiled, program, case)})
        })
        .collect();
    Ok(json!({ "cases": results }))
}

fn error_outcome(diagnostics: Vec<Diagnostic>) -> Json {
    json!({"tag": "Error", "errors": diagnostics.iter().map(Diagnostic::to_json).collect::<Vec<_>>()})
}

fn bad_case(message: String) -> Json {
    error_outcome(vec![Diagnostic::new(
        soil_eval::EvalCode::BadArguments.code(),
        message,
    )])
}

fn run_case(compiled: &soil_eval::Program, program: &soil_types::Program, case: &Json) -> Json {
    let def = case.get("def").and_then(Json::as_str).unwrap_or_default();
    let Some(definition) = program.definitions.iter().find(|d| d.name == def) else {
        return error_outcome(vec![Diagnostic::new(
            soil_eval::EvalCode::UnknownDefinition.code(),
            format!("no definition is named `{def}`"),
        )]);
    };
    let Some(signature) = &definition.signature else {
        return bad_case(format!("`{def}` has no signature"));
    };
    let parts = SigParts::of(&signature.node);
    let mut world = World::sandbox();
    let fakes = case
        .get("fakes")
        .and_then(Json::as_object)
        .cloned()
        .unwrap_or_default();
    for (key, fake) in &fakes {
        let Some(index) = parts
            .params
            .iter()
            .position(|p| p.capability && p.name == *key)
        else {
            return bad_case(format!("`{key}` is not a capability parameter of `{def}`"));
        };
        let type_name = match &parts.params[index].ty.kind {
            soil_syntax::ast::TypeKind::Named(n) => n.text.as_str(),
            _ => "",
        };
        let text = fake.to_string();
        let installed = match type_name {
            "Fs" => soil_eval::world::FakeFs::from_json(&text).map(|fs| world.fs = Box::new(fs)),
            "Clock" => soil_eval::world::FakeClock::from_json(&text)
                .map(|clock| world.clock = Box::new(clock)),
            _ => Ok(()),
        };
        if let Err(diagnostic) = installed {
            return error_outcome(vec![diagnostic]);
        }
    }
    let args = case.get("args").cloned().unwrap_or(Json::Array(Vec::new()));
    let outcome = compiled.run_json(def, &args.to_string(), &mut world);
    let expect = case.get("expect").cloned().unwrap_or(Json::Null);
    let expect_tag = expect.get("tag").and_then(Json::as_str).unwrap_or_default();
    let result_type = rt(compiled.types(), &parts.result).ok();
    match (expect_tag, outcome) {
        ("Value", Ok(actual)) => {
            let value = expect.get("value").cloned().unwrap_or(Json::Null);
            let expected = result_type.as_ref().and_then(|ty| {
                soil_rt::decode(&value.to_string(), ty, compiled.types())
                    .ok()
                    .map(|v| soil_rt::encode(&v, compiled.types()))
            });
            let Some(expected) = expected else {
                return bad_case(format!(
                    "the expected value {value} is not a value of the result type"
                ));
            };
            if expected == actual {
                json!({"tag": "Pass"})
            } else {
                json!({
                    "tag": "Fail",
                    "expected": serde_json::from_str::<Json>(&expected).unwrap_or(Json::Null),
                    "actual": serde_json::from_str::<Json>(&actual).unwrap_or(Json::Null),
                })
            }
        }
        ("Panic", Ok(actual)) => json!({
            "tag": "Fail",
            "expected": "panic",
            "actual": serde_json::from_str::<Json>(&actual).unwrap_or(Json::Null),
        }),
        ("Panic", Err(RunError::Panic(panic))) => {
            let code = expect
                .get("code")
                .and_then(|c| c.get("value"))
                .and_then(Json::as_str);
            match code {
                Some(code) if code != panic.code.code() => json!({
                    "tag": "Fail",
                    "expected": format!("panic {code}"),
                    "actual": format!("panic {}", panic.code.code()),
                }),
                _ => json!({"tag": "Pass"}),
            }
        }
        (_, Err(RunError::Panic(panic))) => {
            json!({"tag": "Panicked", "diagnostic": compiled.panic_diagnostic(&panic).to_json()})
        }
        (_, Err(RunError::Refused(diagnostics))) => error_outcome(diagnostics),
        (other, Ok(_)) => bad_case(format!("unknown expectation tag `{other}`")),
    }
}
