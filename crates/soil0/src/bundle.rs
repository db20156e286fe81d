//! `soil0 test` (soil0-cli §10): a test bundle decoded strictly, each case run
//! through the §8.6 injection ([`crate::run::run_loaded`]) in a World of fakes
//! built from the case, and the `{"cases":[CaseResult]}` document.
// Errors are the cold path and the workspace shares one `Diagnostic` type.
#![allow(clippy::result_large_err)]

use std::path::Path;

use serde_json::{Map, Value, json};
use soil_eval::World;
use soil_eval::world::{CapturedStdout, FakeClock, FakeFs};
use trellis_diag::Diagnostic;

use crate::cli::{CliCode, Host};
use crate::load::{Loaded, load};
use crate::run::{RunOutcome, run_loaded};
use crate::{Output, Source};

/// A decoded bundle (§10).
#[derive(Clone, Debug, PartialEq)]
pub struct Bundle {
    /// env.json's path relative to the bundle's directory, if the bundle names it.
    pub env: Option<String>,
    /// program.json's path relative to the bundle's directory, if named.
    pub program: Option<String>,
    pub cases: Vec<Case>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub name: String,
    pub def: String,
    /// The non-capability arguments, in order.
    pub args: Vec<Value>,
    pub expect: Expect,
    /// Capability parameter name → its fake's JSON.
    pub fakes: Map<String, Value>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expect {
    Value(Value),
    Panic(Option<String>),
}

/// `soil0 test`: decodes `bundle`, reads env.json and program.json (the
/// `env_path` / `program_path` arguments when given, relative to the working
/// directory; else the bundle's keys, relative to the bundle's directory),
/// loads the program and runs every case.
pub fn test(
    bundle: Source<'_>,
    env_path: Option<&str>,
    program_path: Option<&str>,
    host: &dyn Host,
) -> Output {
    let decoded = match decode_bundle(bundle) {
        Ok(decoded) => decoded,
        Err(diagnostics) => return Output::problems(&diagnostics),
    };
    let base = Path::new(bundle.name).parent().unwrap_or(Path::new(""));
    let locate = |given: Option<&str>, key: &Option<String>, what: &str| match (given, key) {
        (Some(path), _) => Ok(path.to_owned()),
        (None, Some(relative)) => Ok(normalize(&base.join(relative))),
        (None, None) => Err(Diagnostic::new(
            CliCode::BadBundle.as_str(),
            format!("$.{what}: the bundle names no {what}.json and no --{what} was given"),
        )
        .with_file(bundle.name)),
    };
    let mut errors = Vec::new();
    let mut read = |path: Result<String, Diagnostic>| match path {
        Ok(path) => match host.read_file(&path) {
            Ok(text) => Some((path, text)),
            Err(error) => {
                errors.push(crate::cli::unreadable(&path, &error));
                None
            }
        },
        Err(diagnostic) => {
            errors.push(diagnostic);
            None
        }
    };
    let env = read(locate(env_path, &decoded.env, "env"));
    let program = read(locate(program_path, &decoded.program, "program"));
    let (Some((env_name, env_text)), Some((program_name, program_text))) = (env, program) else {
        return Output::problems(&errors);
    };
    match load(
        Source::new(&env_name, &env_text),
        Source::new(&program_name, &program_text),
    ) {
        Ok(loaded) => Output::success(run_cases(&loaded, bundle.name, &decoded.cases)),
        Err(diagnostics) => Output::problems(&diagnostics),
    }
}

/// `a/b/../c` → `a/c`, lexically (no file system access), so diagnostics name
/// the path a reader would write.
fn normalize(path: &Path) -> String {
    use std::path::Component;
    let mut parts: Vec<Component<'_>> = Vec::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir if matches!(parts.last(), Some(Component::Normal(_))) => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts
        .iter()
        .collect::<std::path::PathBuf>()
        .display()
        .to_string()
}

/// Runs `cases` against a loaded program: the `{"cases":[CaseResult]}` document.
/// `bundle_file` names the bundle in diagnostics about a case's arguments and fakes.
pub fn run_cases(loaded: &Loaded, bundle_file: &str, cases: &[Case]) -> String {
    let results: Vec<Value> = cases
        .iter()
        .enumerate()
        .map(|(index, case)| {
            json!({ "name": case.name, "outcome": run_case(loaded, bundle_file, index, case) })
        })
        .collect();
    json!({ "cases": results }).to_string()
}

fn run_case(loaded: &Loaded, bundle_file: &str, index: usize, case: &Case) -> Value {
    let at = format!("$.cases[{index}]");
    let mut world = match fake_world(loaded, case, &at) {
        Ok(world) => world,
        Err(diagnostic) => return error_outcome(vec![diagnostic.with_file(bundle_file)]),
    };
    let args = Value::Array(case.args.clone()).to_string();
    let outcome = run_loaded(loaded, &case.def, &args, &mut world);
    match (outcome, &case.expect) {
        (RunOutcome::Refused(diagnostics), _) => error_outcome(
            diagnostics
                .into_iter()
                .map(|d| relocate_argument_error(d, &format!("{at}.args"), bundle_file))
                .collect(),
        ),
        (RunOutcome::Value(actual), Expect::Value(expected)) => {
            let expected = match canonical_expectation(loaded, &case.def, expected) {
                Ok(expected) => expected,
                Err(diagnostic) => {
                    let at = format!("{at}.expect.value");
                    return error_outcome(vec![relocate_argument_error(
                        diagnostic,
                        &at,
                        bundle_file,
                    )]);
                }
            };
            if expected == actual {
                json!({ "tag": "Pass" })
            } else {
                fail(parse_canonical(&expected), parse_canonical(&actual))
            }
        }
        (RunOutcome::Value(actual), Expect::Panic(code)) => {
            fail(expect_panic_json(code), parse_canonical(&actual))
        }
        (RunOutcome::Panicked(_), Expect::Panic(None)) => json!({ "tag": "Pass" }),
        (RunOutcome::Panicked(diagnostic), Expect::Panic(Some(code)))
            if diagnostic.code == *code =>
        {
            json!({ "tag": "Pass" })
        }
        (RunOutcome::Panicked(diagnostic), _) => {
            json!({ "tag": "Panicked", "diagnostic": diagnostic.to_json() })
        }
    }
}

fn fail(expected: Value, actual: Value) -> Value {
    json!({ "tag": "Fail", "expected": expected, "actual": actual })
}

fn error_outcome(errors: Vec<Diagnostic>) -> Value {
    let errors: Vec<Value> = errors.iter().map(Diagnostic::to_json).collect();
    json!({ "tag": "Error", "errors": errors })
}

fn expect_panic_json(code: &Option<String>) -> Value {
    let code = match code {
        Some(code) => json!({ "tag": "Some", "value": code }),
        None => json!({ "tag": "None" }),
    };
    json!({ "tag": "Panic", "code": code })
}

/// Canonical JSON is valid JSON, and serde_json keeps object key order and the
/// number text (`arbitrary_precision` aside, integers round-trip exactly).
fn parse_canonical(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// The expected value decoded against the result type and re-encoded
/// canonically. A result type with type variables cannot direct a decoder: the
/// expectation is then compared as written, re-serialized compactly.
fn canonical_expectation(
    loaded: &Loaded,
    def: &str,
    expected: &Value,
) -> Result<String, Diagnostic> {
    let Ok(ty) = loaded.result_type(def) else {
        return Ok(expected.to_string());
    };
    let types = loaded.program.types();
    soil_rt::decode(&expected.to_string(), &ty, types).map(|value| soil_rt::encode(&value, types))
}

/// A JSON decoding error about the re-serialized argument array, restated at
/// its path in the bundle (`$[1].cells` → `$.cases[3].args[1].cells`); its span
/// pointed into text the reader never saw, so it is dropped.
fn relocate_argument_error(mut diagnostic: Diagnostic, at: &str, bundle_file: &str) -> Diagnostic {
    if !diagnostic.code.starts_with("json-") {
        return diagnostic;
    }
    if let Some(rest) = diagnostic.message.strip_prefix('$') {
        diagnostic.message = format!("{at}{rest}");
    }
    for note in &mut diagnostic.notes {
        if let Some(rest) = note.message.strip_prefix("at JSON path $") {
            note.message = format!("at JSON path {at}{rest}");
        }
    }
    diagnostic.span = None;
    diagnostic.file = Some(bundle_file.to_owned());
    diagnostic
}

/// The sandbox for one case: each capability parameter's fake from `fakes`
/// (keyed by parameter name), the empty fake otherwise.
fn fake_world(loaded: &Loaded, case: &Case, at: &str) -> Result<World, Diagnostic> {
    let mut world = World {
        fs: Box::new(FakeFs::default()),
        clock: Box::new(FakeClock { now: 0 }),
        stdout: Box::new(CapturedStdout::default()),
    };
    if case.fakes.is_empty() {
        return Ok(world);
    }
    let params = loaded.params(&case.def).unwrap_or_default();
    for (name, fake) in &case.fakes {
        let path = format!("{at}.fakes.{name}");
        let Some(param) = params.iter().find(|p| p.name == *name) else {
            return Err(bad_fake(
                &path,
                &format!("`{}` has no parameter named `{name}`", case.def),
            ));
        };
        let text = fake.to_string();
        let relocate = |d: Diagnostic| bad_fake(&path, &d.message);
        match param.ty.as_str() {
            "Fs" => world.fs = Box::new(FakeFs::from_json(&text).map_err(relocate)?),
            "Clock" => world.clock = Box::new(FakeClock::from_json(&text).map_err(relocate)?),
            "Stdout" => {
                if fake.as_object().is_none_or(|o| !o.is_empty()) {
                    return Err(bad_fake(&path, "a Stdout fake is the empty object {}"));
                }
            }
            other => {
                return Err(bad_fake(
                    &path,
                    &format!("`{name}` has type `{other}`, which is not a capability"),
                ));
            }
        }
    }
    Ok(world)
}

fn bad_fake(path: &str, message: &str) -> Diagnostic {
    Diagnostic::new(
        soil_eval::EvalCode::BadArguments.code(),
        format!("{path}: {message}"),
    )
}

/// Decodes a bundle strictly: unknown or missing keys and wrong JSON types are
/// `bad-bundle` naming the JSON path; every problem is reported.
pub fn decode_bundle(bundle: Source<'_>) -> Result<Bundle, Vec<Diagnostic>> {
    let error = |path: &str, message: String| {
        Diagnostic::new(CliCode::BadBundle.as_str(), format!("{path}: {message}"))
            .with_file(bundle.name)
    };
    let root: Value = serde_json::from_str(bundle.text)
        .map_err(|e| vec![error("$", format!("not JSON: {e}"))])?;
    let mut errors = Vec::new();
    let Some(object) = object(
        &root,
        "$",
        &["env", "program", "cases"],
        &["cases"],
        &error,
        &mut errors,
    ) else {
        return Err(errors);
    };
    let env = optional_text(object.get("env"), "$.env", &error, &mut errors);
    let program = optional_text(object.get("program"), "$.program", &error, &mut errors);
    let items = array(object.get("cases"), "$.cases", &error, &mut errors);
    let cases: Vec<Case> = items
        .iter()
        .enumerate()
        .filter_map(|(index, item)| {
            decode_case(item, &format!("$.cases[{index}]"), &error, &mut errors)
        })
        .collect();
    if errors.is_empty() {
        Ok(Bundle {
            env,
            program,
            cases,
        })
    } else {
        Err(errors)
    }
}

/// The keys of `{"tag":…,"value":…}`, the shape of `Some` and of `Value`.
const TAG_AND_VALUE: &[&str] = &["tag", "value"];

type ErrorAt<'a> = dyn Fn(&str, String) -> Diagnostic + 'a;

fn decode_case(
    value: &Value,
    at: &str,
    error: &ErrorAt<'_>,
    errors: &mut Vec<Diagnostic>,
) -> Option<Case> {
    const KEYS: &[&str] = &["name", "def", "args", "expect", "fakes"];
    let object = object(value, at, KEYS, KEYS, error, errors)?;
    let before = errors.len();
    let name = text(object.get("name"), &format!("{at}.name"), error, errors);
    let def = text(object.get("def"), &format!("{at}.def"), error, errors);
    let args = array(object.get("args"), &format!("{at}.args"), error, errors).to_vec();
    let expect = decode_expect(object.get("expect"), &format!("{at}.expect"), error, errors);
    let fakes = match object.get("fakes") {
        Some(Value::Object(map)) => map.clone(),
        Some(other) => {
            errors.push(error(
                &format!("{at}.fakes"),
                format!("expected an object, found {}", kind(other)),
            ));
            Map::new()
        }
        None => Map::new(),
    };
    if errors.len() > before {
        return None;
    }
    Some(Case {
        name: name?,
        def: def?,
        args,
        expect: expect?,
        fakes,
    })
}

fn decode_expect(
    value: Option<&Value>,
    at: &str,
    error: &ErrorAt<'_>,
    errors: &mut Vec<Diagnostic>,
) -> Option<Expect> {
    let value = value?;
    let tag = match value.get("tag") {
        Some(Value::String(tag)) => tag.as_str(),
        _ => {
            errors.push(error(
                at,
                "expected {\"tag\":\"Value\",\"value\":…} or {\"tag\":\"Panic\",\"code\":…}".into(),
            ));
            return None;
        }
    };
    match tag {
        "Value" => {
            let object = object(value, at, TAG_AND_VALUE, TAG_AND_VALUE, error, errors)?;
            object.get("value").cloned().map(Expect::Value)
        }
        "Panic" => {
            let object = object(value, at, &["tag", "code"], &["tag", "code"], error, errors)?;
            let code = optional_text(object.get("code"), &format!("{at}.code"), error, errors);
            Some(Expect::Panic(code))
        }
        other => {
            errors.push(error(
                &format!("{at}.tag"),
                format!("unknown tag {other:?}; expected \"Value\" or \"Panic\""),
            ));
            None
        }
    }
}

/// `value` as an object with only `allowed` keys and every `required` one.
fn object<'v>(
    value: &'v Value,
    at: &str,
    allowed: &[&str],
    required: &[&str],
    error: &ErrorAt<'_>,
    errors: &mut Vec<Diagnostic>,
) -> Option<&'v Map<String, Value>> {
    let Value::Object(map) = value else {
        errors.push(error(
            at,
            format!("expected an object, found {}", kind(value)),
        ));
        return None;
    };
    let before = errors.len();
    for key in map.keys() {
        if !allowed.contains(&key.as_str()) {
            errors.push(error(
                &format!("{at}.{key}"),
                format!("unknown key; expected one of {}", allowed.join(", ")),
            ));
        }
    }
    for key in required {
        if !map.contains_key(*key) {
            errors.push(error(&format!("{at}.{key}"), "missing key".into()));
        }
    }
    (errors.len() == before).then_some(map)
}

/// `value` as an array: absent is empty; anything else is an error (and empty).
fn array<'v>(
    value: Option<&'v Value>,
    at: &str,
    error: &ErrorAt<'_>,
    errors: &mut Vec<Diagnostic>,
) -> &'v [Value] {
    match value {
        Some(Value::Array(items)) => items,
        Some(other) => {
            errors.push(error(
                at,
                format!("expected an array, found {}", kind(other)),
            ));
            &[]
        }
        None => &[],
    }
}

fn text(
    value: Option<&Value>,
    at: &str,
    error: &ErrorAt<'_>,
    errors: &mut Vec<Diagnostic>,
) -> Option<String> {
    match value? {
        Value::String(s) => Some(s.clone()),
        other => {
            errors.push(error(
                at,
                format!("expected a string, found {}", kind(other)),
            ));
            None
        }
    }
}

/// An `Option Utf8` (`{"tag":"None"}` / `{"tag":"Some","value":"…"}`); an absent key is `None`.
fn optional_text(
    value: Option<&Value>,
    at: &str,
    error: &ErrorAt<'_>,
    errors: &mut Vec<Diagnostic>,
) -> Option<String> {
    let value = value?;
    match value.get("tag").and_then(Value::as_str) {
        Some("None") => {
            object(value, at, &["tag"], &["tag"], error, errors);
            None
        }
        Some("Some") => {
            let object = object(value, at, TAG_AND_VALUE, TAG_AND_VALUE, error, errors)?;
            text(object.get("value"), &format!("{at}.value"), error, errors)
        }
        _ => {
            errors.push(error(
                at,
                "expected {\"tag\":\"None\"} or {\"tag\":\"Some\",\"value\":\"…\"}".into(),
            ));
            None
        }
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
