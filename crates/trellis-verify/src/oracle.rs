//! Differential oracles (impl plan §9.9): a Python reference run through an
//! embedded driver, one process for all cases, or a CLI command run once per case;
//! results compared through soil-rt's canonical re-encode, never as oracle text.

use std::path::PathBuf;
use std::time::Duration;

use soil_rt::{JsonCode, RtType, TypeEnv};
use trellis_diag::Diagnostic;
use trellis_hash::Digest;

use crate::codes::Code;
pub use trellis_spec::Reference;
use crate::process::{Exit, ProcessOutcome, ProcessRunner, ProcessSpec};

/// The lock's oracle hash of a Python reference: its file's bytes.
pub fn python_oracle_hash(reference_file: &[u8]) -> Digest {
    Digest::of(reference_file)
}

/// The lock's oracle hash of a CLI oracle: its command text.
pub fn cli_oracle_hash(command: &str) -> Digest {
    Digest::of(command.as_bytes())
}

/// Where and how oracles run.
#[derive(Clone, Debug)]
pub struct OracleConfig {
    /// The Soil root: the cwd, and what Python paths are relative to.
    pub root: PathBuf,
    /// The complete environment (must carry `PATH` for `python3`).
    pub env: Vec<(String, String)>,
    /// For one Python process (all cases) or one CLI case.
    pub timeout: Duration,
    pub python: String,
}

impl OracleConfig {
    pub fn new(root: impl Into<PathBuf>, env: Vec<(String, String)>, timeout: Duration) -> Self {
        OracleConfig {
            root: root.into(),
            env,
            timeout,
            python: "python3".into(),
        }
    }
}

/// One differential case: an expect case's arguments and what Soil returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DifferentialCase {
    /// The expect case's row name, e.g. `basics#2`.
    pub label: String,
    /// The arguments as a canonical JSON array.
    pub args_json: String,
    /// The Soil result's canonical JSON text.
    pub actual: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseResult {
    pub label: String,
    pub outcome: CaseOutcome,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaseOutcome {
    Agree,
    /// Both canonical: `expected` is the oracle's re-encoded result.
    Disagree { expected: String, actual: String },
    OracleError(OracleFailure),
}

/// Why the oracle gave no comparable result for a case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OracleFailure {
    /// The reference raised (or failed to load: `during_load`).
    Raised { exception: String, message: String, during_load: bool },
    /// The oracle's output is not one JSON document (or has no JSON form).
    NonJson { output: String },
    /// JSON that is not a value of the result type; the diagnostic names the path.
    DecodeFailure(Diagnostic),
    Timeout { after: Duration },
    /// The process failed (or ended before answering) with this exit.
    ExitStatus { exit: Exit, stderr: String },
}

impl OracleFailure {
    /// The `oracle-error` diagnostic for a case.
    pub fn diagnostic(&self, label: &str) -> Diagnostic {
        let reason = match self {
            OracleFailure::Raised { exception, message, during_load: true } => {
                format!("the reference failed to load: {exception}: {message}")
            }
            OracleFailure::Raised { exception, message, .. } => {
                format!("the reference raised {exception}: {message}")
            }
            OracleFailure::NonJson { output } => {
                format!("the oracle's output is not JSON: {}", clip(output))
            }
            OracleFailure::DecodeFailure(d) => {
                format!("the oracle's result does not decode: {}", d.message)
            }
            OracleFailure::Timeout { after } => {
                format!("the oracle timed out after {} ms", after.as_millis())
            }
            OracleFailure::ExitStatus { exit, stderr } => {
                format!("the oracle exited with {} ({})", describe_exit(exit), clip(stderr))
            }
        };
        Code::OracleError.diagnostic(format!("{label}: {reason}"))
    }
}

/// Runs `oracle` on every case and compares with Soil's results. Always returns
/// one result per case, in order.
pub fn run_differential(
    runner: &dyn ProcessRunner,
    config: &OracleConfig,
    oracle: &Reference,
    result_type: &RtType,
    env: &TypeEnv,
    cases: &[DifferentialCase],
) -> Vec<CaseResult> {
    let answers = match oracle {
        Reference::Python { path, symbol } => run_python(runner, config, path, symbol, cases),
        Reference::Cli { command } => cases
            .iter()
            .map(|case| run_cli_case(runner, config, command, case))
            .collect(),
    };
    cases
        .iter()
        .zip(answers)
        .map(|(case, answer)| CaseResult {
            label: case.label.clone(),
            outcome: match answer {
                Ok(json) => compare(&json, &case.actual, result_type, env),
                Err(failure) => CaseOutcome::OracleError(failure),
            },
        })
        .collect()
}

/// Decode the oracle's JSON as the result type, re-encode canonically, compare bytes.
fn compare(oracle_json: &str, actual: &str, result_type: &RtType, env: &TypeEnv) -> CaseOutcome {
    match soil_rt::decode(oracle_json, result_type, env) {
        Ok(value) => {
            let expected = soil_rt::encode(&value, env);
            if expected == actual {
                CaseOutcome::Agree
            } else {
                CaseOutcome::Disagree {
                    expected,
                    actual: actual.to_owned(),
                }
            }
        }
        Err(d) if d.code == JsonCode::Syntax.code() => {
            CaseOutcome::OracleError(OracleFailure::NonJson {
                output: oracle_json.to_owned(),
            })
        }
        Err(d) => CaseOutcome::OracleError(OracleFailure::DecodeFailure(d)),
    }
}

/// The Python side of the driver protocol. It reads `[[args...], ...]` from stdin
/// and writes one line per case to the original stdout, which it keeps for itself
/// (fd 1 is pointed at stderr so the reference's own prints cannot corrupt it):
/// `{"case":N,"ok":<json>}`, or `{"case":N,"raised":{"type":..,"message":..}}`,
/// or `{"case":N,"unencodable":{..}}`; a load failure is one `{"setup":{..}}` line.
/// Non-finite floats become the §7 strings; everything else is `json.dumps`.
const PYTHON_DRIVER: &str = r#"
import importlib.util, json, math, os, sys
proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr
def emit(text):
    proto.write(text + "\n")
    proto.flush()
def failure(exc):
    return json.dumps({"type": type(exc).__name__, "message": str(exc)})
def canon(x):
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    if isinstance(x, (list, tuple)):
        return [canon(v) for v in x]
    if isinstance(x, dict):
        return {k: canon(v) for k, v in x.items()}
    return x
def main():
    root, rel, symbol = sys.argv[1], sys.argv[2], sys.argv[3]
    try:
        path = os.path.join(root, *rel.split("/"))
        sys.path.insert(0, os.path.dirname(path))
        spec = importlib.util.spec_from_file_location("trellis_reference", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fn = module
        for part in symbol.split("."):
            fn = getattr(fn, part)
        cases = json.loads(sys.stdin.read())
    except BaseException as exc:
        emit('{"setup":' + failure(exc) + '}')
        return 3
    for n, args in enumerate(cases):
        try:
            result = fn(*args)
        except BaseException as exc:
            emit('{"case":%d,"raised":%s}' % (n, failure(exc)))
            continue
        try:
            text = json.dumps(canon(result), allow_nan=False, separators=(",", ":"))
        except BaseException as exc:
            emit('{"case":%d,"unencodable":%s}' % (n, failure(exc)))
            continue
        emit('{"case":%d,"ok":%s}' % (n, text))
    return 0
sys.exit(main())
"#;

fn run_python(
    runner: &dyn ProcessRunner,
    config: &OracleConfig,
    path: &str,
    symbol: &str,
    cases: &[DifferentialCase],
) -> Vec<Result<String, OracleFailure>> {
    let mut stdin = String::from("[");
    for (i, case) in cases.iter().enumerate() {
        if i > 0 {
            stdin.push(',');
        }
        stdin.push_str(&case.args_json);
    }
    stdin.push(']');
    let mut spec = ProcessSpec::new(config.python.clone(), config.root.clone(), config.timeout)
        // -I: no user site, no PYTHON* variables, no cwd on sys.path; -B: no
        // __pycache__ written into the root.
        .arg("-I")
        .arg("-B")
        .arg("-c")
        .arg(PYTHON_DRIVER)
        .arg(config.root.to_string_lossy())
        .arg(path)
        .arg(symbol)
        .stdin(stdin);
    spec.env = config.env.clone();
    let outcome = runner.run(&spec);
    let mut answers: Vec<Option<Result<String, OracleFailure>>> = vec![None; cases.len()];
    let stdout = outcome.stdout.text();
    for line in stdout.lines() {
        match parse_driver_line(line) {
            DriverLine::Setup(failure) => {
                return cases.iter().map(|_| Err(failure.clone())).collect();
            }
            DriverLine::Case(n, answer) => {
                if let Some(slot) = answers.get_mut(n) {
                    *slot = Some(answer);
                }
            }
            DriverLine::Stray => {}
        }
    }
    let missing = missing_answer(&outcome);
    answers
        .into_iter()
        .map(|answer| answer.unwrap_or_else(|| Err(missing.clone())))
        .collect()
}

enum DriverLine {
    Setup(OracleFailure),
    Case(usize, Result<String, OracleFailure>),
    Stray,
}

fn parse_driver_line(line: &str) -> DriverLine {
    // A result is cut out of the line as text, so the oracle's JSON reaches the
    // one codec unaltered (no intermediate parse that could round numbers).
    if let Some(rest) = line.strip_prefix("{\"case\":") {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let Ok(n) = rest[..digits].parse::<usize>() else {
            return DriverLine::Stray;
        };
        let rest = &rest[digits..];
        if let Some(json) = rest.strip_prefix(",\"ok\":").and_then(|r| r.strip_suffix('}')) {
            return DriverLine::Case(n, Ok(json.to_owned()));
        }
        if let Some(failure) = rest.strip_prefix(",\"raised\":").and_then(|r| r.strip_suffix('}')) {
            let (exception, message) = exception_fields(failure);
            return DriverLine::Case(
                n,
                Err(OracleFailure::Raised {
                    exception,
                    message,
                    during_load: false,
                }),
            );
        }
        if let Some(failure) = rest
            .strip_prefix(",\"unencodable\":")
            .and_then(|r| r.strip_suffix('}'))
        {
            let (exception, message) = exception_fields(failure);
            return DriverLine::Case(
                n,
                Err(OracleFailure::NonJson {
                    output: format!("{exception}: {message}"),
                }),
            );
        }
        return DriverLine::Stray;
    }
    if let Some(failure) = line.strip_prefix("{\"setup\":").and_then(|r| r.strip_suffix('}')) {
        let (exception, message) = exception_fields(failure);
        return DriverLine::Setup(OracleFailure::Raised {
            exception,
            message,
            during_load: true,
        });
    }
    DriverLine::Stray
}

fn exception_fields(json: &str) -> (String, String) {
    let parsed: Option<serde_json::Value> = serde_json::from_str(json).ok();
    let field = |name: &str| {
        parsed
            .as_ref()
            .and_then(|v| v.get(name))
            .and_then(|v| v.as_str())
            .unwrap_or("?")
            .to_owned()
    };
    (field("type"), field("message"))
}

/// Why a case has no answer line: the process timed out or ended early.
fn missing_answer(outcome: &ProcessOutcome) -> OracleFailure {
    if outcome.timed_out {
        OracleFailure::Timeout {
            after: outcome.duration,
        }
    } else {
        OracleFailure::ExitStatus {
            exit: outcome.exit.clone(),
            stderr: outcome.stderr.text(),
        }
    }
}

fn run_cli_case(
    runner: &dyn ProcessRunner,
    config: &OracleConfig,
    command: &str,
    case: &DifferentialCase,
) -> Result<String, OracleFailure> {
    let mut spec = ProcessSpec::new("/bin/sh", config.root.clone(), config.timeout)
        .arg("-c")
        .arg(command)
        .stdin(case.args_json.clone());
    spec.env = config.env.clone();
    let outcome = runner.run(&spec);
    if outcome.timed_out || outcome.exit != Exit::Code(0) {
        return Err(missing_answer(&outcome));
    }
    Ok(outcome.stdout.text().trim_end().to_owned())
}

fn describe_exit(exit: &Exit) -> String {
    match exit {
        Exit::Code(code) => format!("status {code}"),
        Exit::Signal(signal) => format!("signal {signal}"),
        Exit::NotStarted(reason) => format!("no process: {reason}"),
    }
}

fn clip(text: &str) -> String {
    const LIMIT: usize = 200;
    let text = text.trim();
    match text.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::{FakeRunner, RealRunner};
    use std::time::Instant;

    fn fixture_root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../test-data/verify")
    }

    fn config(timeout_ms: u64) -> OracleConfig {
        let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
        OracleConfig::new(
            fixture_root(),
            vec![("PATH".into(), path)],
            Duration::from_millis(timeout_ms),
        )
    }

    fn case(label: &str, args: &str, actual: &str) -> DifferentialCase {
        DifferentialCase {
            label: label.into(),
            args_json: args.into(),
            actual: actual.into(),
        }
    }

    fn python(symbol: &str) -> Reference {
        Reference::Python {
            path: "oracle/arith.py".into(),
            symbol: symbol.into(),
        }
    }

    fn add_cases() -> Vec<DifferentialCase> {
        vec![case("t#1", "[1,2]", "3"), case("t#2", "[-4,4]", "0")]
    }

    fn run(oracle: &Reference, cases: &[DifferentialCase], ty: &RtType, ms: u64) -> String {
        let env = TypeEnv::new();
        let results = run_differential(&RealRunner, &config(ms), oracle, ty, &env, cases);
        render(&results)
    }

    fn render(results: &[CaseResult]) -> String {
        let mut out = String::new();
        for result in results {
            let line = match &result.outcome {
                CaseOutcome::Agree => "agree".to_owned(),
                CaseOutcome::Disagree { expected, actual } => {
                    format!("disagree expected={expected} actual={actual}")
                }
                CaseOutcome::OracleError(failure) => {
                    let d = failure.diagnostic(&result.label);
                    format!("{} [{}] {}", d.code, kind(failure), d.message)
                }
            };
            out.push_str(&format!("{}: {line}\n", result.label));
        }
        out
    }

    fn kind(failure: &OracleFailure) -> &'static str {
        match failure {
            OracleFailure::Raised { .. } => "raised",
            OracleFailure::NonJson { .. } => "non-json",
            OracleFailure::DecodeFailure(_) => "decode",
            OracleFailure::Timeout { .. } => "timeout",
            OracleFailure::ExitStatus { .. } => "exit",
        }
    }

    #[test]
    fn an_agreeing_reference() {
        let got = run(&python("add"), &add_cases(), &RtType::I64, 20_000);
        expect_test::expect![[r#"
            t#1: agree
            t#2: agree
        "#]]
        .assert_eq(&got);
        let nested = run(&python("Nested.twice"), &[case("t#1", "[1,2]", "6")], &RtType::I64, 20_000);
        assert_eq!(nested, "t#1: agree\n");
    }

    #[test]
    fn a_disagreeing_reference() {
        let got = run(&python("add_wrong"), &add_cases(), &RtType::I64, 20_000);
        expect_test::expect![[r#"
            t#1: disagree expected=4 actual=3
            t#2: agree
        "#]]
        .assert_eq(&got);
    }

    #[test]
    fn float_results_compare_canonically_not_as_python_text() {
        // Python prints 2.0 / nan its own way; only the canonical re-encode counts.
        let cases = [
            case("m#1", "[[1.0,3.0]]", "2.0"),
            case("m#2", "[[]]", "\"NaN\""),
            case("m#3", "[[1e300,1e300]]", "1e300"),
        ];
        let got = run(&python("mean"), &cases, &RtType::F64, 20_000);
        expect_test::expect![[r#"
            m#1: agree
            m#2: agree
            m#3: agree
        "#]]
        .assert_eq(&got);
    }

    #[test]
    fn a_raising_reference_is_per_case() {
        let cases = [case("d#1", "[7,2]", "3"), case("d#2", "[1,0]", "0")];
        let got = run(&python("divide"), &cases, &RtType::I64, 20_000);
        expect_test::expect![[r#"
            d#1: agree
            d#2: oracle-error [raised] d#2: the reference raised ZeroDivisionError: integer division or modulo by zero
        "#]]
        .assert_eq(&got);
    }

    #[test]
    fn non_json_results_and_decode_failures() {
        let got = run(&python("as_set"), &add_cases()[..1], &RtType::I64, 20_000);
        expect_test::expect![[r#"
            t#1: oracle-error [non-json] t#1: the oracle's output is not JSON: TypeError: Object of type set is not JSON serializable
        "#]]
        .assert_eq(&got);
        let got = run(&python("as_text"), &add_cases()[..1], &RtType::I64, 20_000);
        expect_test::expect![[r#"
            t#1: oracle-error [decode] t#1: the oracle's result does not decode: $: expected I64, found a string
        "#]]
        .assert_eq(&got);
    }

    #[test]
    fn reference_prints_do_not_corrupt_the_protocol() {
        let got = run(&python("chatty"), &add_cases(), &RtType::I64, 20_000);
        assert_eq!(got, "t#1: agree\nt#2: agree\n");
    }

    #[test]
    fn a_hanging_reference_is_killed_at_the_timeout() {
        let started = Instant::now();
        let got = run(&python("hang"), &add_cases()[..1], &RtType::I64, 1_000);
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        assert!(got.starts_with("t#1: oracle-error [timeout]"), "{got}");
    }

    #[test]
    fn load_failures_and_missing_symbols_fail_every_case() {
        let broken = Reference::Python {
            path: "oracle/broken.py".into(),
            symbol: "f".into(),
        };
        let got = run(&broken, &add_cases(), &RtType::I64, 20_000);
        expect_test::expect![[r#"
            t#1: oracle-error [raised] t#1: the reference failed to load: RuntimeError: cannot load
            t#2: oracle-error [raised] t#2: the reference failed to load: RuntimeError: cannot load
        "#]]
        .assert_eq(&got);
        let got = run(&python("nope"), &add_cases()[..1], &RtType::I64, 20_000);
        assert!(got.contains("[raised]") && got.contains("AttributeError"), "{got}");
    }

    #[test]
    fn one_python_process_serves_every_case() {
        let fake = FakeRunner::new();
        fake.push_stdout("{\"case\":1,\"ok\":0}\n{\"case\":0,\"ok\":3}\n");
        let env = TypeEnv::new();
        let results =
            run_differential(&fake, &config(1000), &python("add"), &RtType::I64, &env, &add_cases());
        assert_eq!(render(&results), "t#1: agree\nt#2: agree\n");
        let specs = fake.specs.borrow();
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].program, "python3");
        assert_eq!(specs[0].stdin, b"[[1,2],[-4,4]]");
        assert_eq!(&specs[0].args[specs[0].args.len() - 2..], ["oracle/arith.py", "add"]);
    }

    #[test]
    fn cli_oracles_run_per_case() {
        let sum = Reference::Cli {
            command: "python3 -c 'import json,sys; a=json.load(sys.stdin); print(sum(a))'".into(),
        };
        let got = run(&sum, &add_cases(), &RtType::I64, 20_000);
        assert_eq!(got, "t#1: agree\nt#2: agree\n");
        let cases = &add_cases()[..1];
        let got = run(&Reference::Cli { command: "echo hello".into() }, cases, &RtType::I64, 20_000);
        assert!(got.starts_with("t#1: oracle-error [non-json]"), "{got}");
        let got = run(&Reference::Cli { command: "echo 3; exit 4".into() }, cases, &RtType::I64, 20_000);
        assert!(got.starts_with("t#1: oracle-error [exit]"), "{got}");
        assert!(got.contains("status 4"), "{got}");
        let started = Instant::now();
        let got = run(&Reference::Cli { command: "sleep 30".into() }, cases, &RtType::I64, 300);
        assert!(got.starts_with("t#1: oracle-error [timeout]"), "{got}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn oracle_hashes_are_content_hashes() {
        assert_eq!(
            cli_oracle_hash("abc").to_string(),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(python_oracle_hash(b"abc"), cli_oracle_hash("abc"));
    }
}
