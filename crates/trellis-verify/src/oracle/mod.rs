//! Differential oracles (impl plan §9.9): a Python reference run through an
//! embedded driver, one process for all cases — started for the run, or a warm
//! one the host keeps (design §9.2) — or a CLI command run once per case;
//! results compared through soil-rt's canonical re-encode, never as oracle text.

mod python;

use std::path::{Path, PathBuf};
use std::time::Duration;

use soil_rt::{JsonCode, RtType, TypeEnv, Value};
use trellis_diag::Diagnostic;
use trellis_hash::Digest;

use crate::codes::Code;
use crate::process::{Exit, ProcessOutcome, ProcessRunner, ProcessSpec};
use crate::warm::WarmRunner;
pub use trellis_spec::Reference;

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
    /// For one Python run (all cases, cold or one warm request) or one CLI case.
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

/// The interpreter `python3` names on `path`, as an absolute path, so oracles can
/// start it directly: a version manager's shim (pyenv's is a shell script that
/// runs `pyenv exec`) costs about half a second per start, which a lowering
/// agent's `run_tests` would pay on every call. `None` when `python3` does not
/// run or does not say where it is; callers then run `python3` by name.
pub fn resolve_python(runner: &dyn ProcessRunner, root: &Path, path: &str) -> Option<String> {
    let mut spec = ProcessSpec::new("python3", root, Duration::from_secs(10))
        .arg("-I")
        .arg("-c")
        .arg("import sys; sys.stdout.write(sys.executable)");
    spec.env = vec![("PATH".to_owned(), path.to_owned())];
    let outcome = runner.run(&spec);
    if outcome.exit != Exit::Code(0) {
        return None;
    }
    let executable = outcome.stdout.text();
    let executable = executable.trim();
    Path::new(executable)
        .is_absolute()
        .then(|| executable.to_owned())
}

/// One differential case: an expect case's arguments and what Soil returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DifferentialCase {
    /// The expect case's row name, e.g. `basics#2`.
    pub label: String,
    /// The decoded non-capability arguments, in order.
    pub args: Vec<Value>,
    /// What Soil did with those arguments.
    pub actual: SoilOutcome,
}

/// The Soil side of a differential case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SoilOutcome {
    /// The result's canonical JSON text.
    Value(String),
    /// A runtime panic (its message). A reference that raises on the same
    /// input agrees with it: both refuse the input.
    Panic(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseResult {
    pub label: String,
    pub outcome: CaseOutcome,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaseOutcome {
    Agree,
    /// `expected` is the oracle's re-encoded result; `actual` is Soil's
    /// canonical result, or `panic` when Soil panicked.
    Disagree {
        expected: String,
        actual: String,
    },
    OracleError(OracleFailure),
}

/// Why the oracle gave no comparable result for a case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OracleFailure {
    /// The reference raised (or failed to load: `during_load`).
    Raised {
        exception: String,
        message: String,
        during_load: bool,
    },
    /// The oracle's output is not one JSON document (or has no JSON form).
    NonJson {
        output: String,
    },
    /// JSON that is not a value of the result type; the diagnostic names the path.
    DecodeFailure(Box<Diagnostic>),
    Timeout {
        after: Duration,
    },
    /// The process failed (or ended before answering) with this exit.
    ExitStatus {
        exit: Exit,
        stderr: String,
    },
}

impl OracleFailure {
    /// The `oracle-error` diagnostic for a case.
    pub fn diagnostic(&self, label: &str) -> Diagnostic {
        let reason = match self {
            OracleFailure::Raised {
                exception,
                message,
                during_load: true,
            } => {
                format!("the reference failed to load: {exception}: {message}")
            }
            OracleFailure::Raised {
                exception, message, ..
            } => {
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
                format!(
                    "the oracle exited with {} ({})",
                    describe_exit(exit),
                    clip(stderr)
                )
            }
        };
        Code::OracleError.diagnostic(format!("{label}: {reason}"))
    }
}

/// Runs `oracle` on every case and compares with Soil's results. Always returns
/// one result per case, in order. A Python reference is sent to `warm` when the
/// host keeps warm processes, else run by `runner`; the results are the same.
pub fn run_differential(
    runner: &dyn ProcessRunner,
    warm: Option<&dyn WarmRunner>,
    config: &OracleConfig,
    oracle: &Reference,
    result_type: &RtType,
    env: &TypeEnv,
    cases: &[DifferentialCase],
) -> Vec<CaseResult> {
    let answers = match oracle {
        Reference::Python { path, symbol } => {
            python::run_python(runner, warm, config, path, symbol, cases, env)
        }
        Reference::Cli { command } => cases
            .iter()
            .map(|case| run_cli_case(runner, config, command, &args_json(&case.args, env)))
            .collect(),
    };
    cases
        .iter()
        .zip(answers)
        .map(|(case, answer)| CaseResult {
            label: case.label.clone(),
            outcome: match (answer, &case.actual) {
                (Ok(json), SoilOutcome::Value(actual)) => compare(&json, actual, result_type, env),
                (Ok(json), SoilOutcome::Panic(_)) => compare(&json, "panic", result_type, env),
                (
                    Err(OracleFailure::Raised {
                        during_load: false, ..
                    }),
                    SoilOutcome::Panic(_),
                ) => CaseOutcome::Agree,
                (Err(failure), _) => CaseOutcome::OracleError(failure),
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
        Err(d) => CaseOutcome::OracleError(OracleFailure::DecodeFailure(Box::new(d))),
    }
}

/// Why a case has no answer line: the process timed out (reported as the
/// limit it reached, so the message does not depend on scheduling) or ended
/// early.
pub(crate) fn missing_answer(outcome: &ProcessOutcome, timeout: Duration) -> OracleFailure {
    if outcome.timed_out {
        OracleFailure::Timeout { after: timeout }
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
    args_json: &str,
) -> Result<String, OracleFailure> {
    let mut spec = ProcessSpec::new("/bin/sh", config.root.clone(), config.timeout)
        .arg("-c")
        .arg(command)
        .stdin(args_json);
    spec.env = config.env.clone();
    let outcome = runner.run(&spec);
    if outcome.timed_out || outcome.exit != Exit::Code(0) {
        return Err(missing_answer(&outcome, config.timeout));
    }
    Ok(outcome.stdout.text().trim_end().to_owned())
}

/// The arguments as one canonical JSON array.
pub(crate) fn args_json(args: &[Value], env: &TypeEnv) -> String {
    let encoded: Vec<String> = args.iter().map(|v| soil_rt::encode(v, env)).collect();
    format!("[{}]", encoded.join(","))
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
    use crate::process::{Captured, FakeRunner, RealRunner};
    use crate::warm::{FakeWarmRunner, WarmPool};
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
        case_of(
            &[RtType::I64, RtType::I64],
            &TypeEnv::new(),
            label,
            args,
            actual,
        )
    }

    fn case_of(
        types: &[RtType],
        env: &TypeEnv,
        label: &str,
        args: &str,
        actual: &str,
    ) -> DifferentialCase {
        DifferentialCase {
            label: label.into(),
            args: soil_rt::decode_args(args, types, env).expect("test arguments decode"),
            actual: match actual {
                "panic" => SoilOutcome::Panic("division by zero".into()),
                value => SoilOutcome::Value(value.into()),
            },
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
        run_in(&TypeEnv::new(), oracle, cases, ty, ms)
    }

    /// One pool for the module's tests, so a warm driver serves references and
    /// symbols one after another (and tests running side by side).
    fn shared_pool() -> &'static WarmPool {
        static POOL: std::sync::OnceLock<WarmPool> = std::sync::OnceLock::new();
        POOL.get_or_init(|| WarmPool::new(4))
    }

    /// Runs the oracle cold, then twice warm (the second on a driver that has
    /// served before), and insists the three results are identical.
    fn run_in(
        env: &TypeEnv,
        oracle: &Reference,
        cases: &[DifferentialCase],
        ty: &RtType,
        ms: u64,
    ) -> String {
        let cold = run_differential(&RealRunner, None, &config(ms), oracle, ty, env, cases);
        for round in ["first", "second"] {
            // CLI oracles still run through the runner, warm or not.
            let warm = run_differential(
                &RealRunner,
                Some(shared_pool()),
                &config(ms),
                oracle,
                ty,
                env,
                cases,
            );
            assert_eq!(warm, cold, "the {round} warm run differs from the cold one");
        }
        render(&cold)
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
        let nested = run(
            &python("Nested.twice"),
            &[case("t#1", "[1,2]", "6")],
            &RtType::I64,
            20_000,
        );
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
        let env = TypeEnv::new();
        let floats = [RtType::List(Box::new(RtType::F64))];
        let mean =
            |label: &str, args: &str, actual: &str| case_of(&floats, &env, label, args, actual);
        let cases = [
            mean("m#1", "[[1.0,3.0]]", "2.0"),
            mean("m#2", "[[]]", "\"NaN\""),
            mean("m#3", "[[1e300,1e300]]", "1e300"),
            // Non-finite arguments reach Python as floats, not as the §7 strings.
            mean("m#4", "[[\"Infinity\",1.0]]", "\"Infinity\""),
            mean("m#5", "[[\"NaN\",\"-Infinity\"]]", "\"NaN\""),
        ];
        let got = run(&python("mean"), &cases, &RtType::F64, 20_000);
        expect_test::expect![[r#"
            m#1: agree
            m#2: agree
            m#3: agree
            m#4: agree
            m#5: agree
        "#]]
        .assert_eq(&got);
    }

    #[test]
    fn non_finite_floats_inside_records_and_variants_reach_python_as_floats() {
        use soil_rt::{FieldDecl, PayloadDecl};
        let mut env = TypeEnv::new();
        let point = env.declare("Point", &[]);
        let field = |name: &str| FieldDecl {
            name: name.into(),
            ty: RtType::F64,
        };
        env.define_record(point, vec![field("x"), field("y")]);
        let shape = env.declare("Shape", &[]);
        env.define_sum(
            shape,
            vec![
                (
                    "Dot".into(),
                    PayloadDecl::Positional(RtType::Named(point, vec![])),
                ),
                (
                    "Span".into(),
                    PayloadDecl::Record(vec![field("x"), field("y")]),
                ),
            ],
        );
        let types = [RtType::Named(shape, vec![])];
        let cases = [
            case_of(
                &types,
                &env,
                "s#1",
                r#"[{"tag":"Dot","value":{"x":"Infinity","y":1.0}}]"#,
                "\"Infinity\"",
            ),
            case_of(
                &types,
                &env,
                "s#2",
                r#"[{"tag":"Span","x":2.0,"y":"-Infinity"}]"#,
                "\"-Infinity\"",
            ),
        ];
        let got = run_in(&env, &python("shape_sum"), &cases, &RtType::F64, 20_000);
        assert_eq!(got, "s#1: agree\ns#2: agree\n");
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
    fn a_soil_panic_agrees_with_a_raise_and_disagrees_with_a_value() {
        let cases = [case("d#1", "[1,0]", "panic"), case("d#2", "[7,2]", "panic")];
        let got = run(&python("divide"), &cases, &RtType::I64, 20_000);
        expect_test::expect![[r#"
            d#1: agree
            d#2: disagree expected=3 actual=panic
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
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
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
        assert!(
            got.contains("[raised]") && got.contains("AttributeError"),
            "{got}"
        );
    }

    #[test]
    fn one_python_process_serves_every_case() {
        let fake = FakeRunner::new();
        fake.push_stdout("{\"case\":1,\"ok\":0}\n{\"case\":0,\"ok\":3}\n");
        let env = TypeEnv::new();
        let results = run_differential(
            &fake,
            None,
            &config(1000),
            &python("add"),
            &RtType::I64,
            &env,
            &add_cases(),
        );
        assert_eq!(render(&results), "t#1: agree\nt#2: agree\n");
        let specs = fake.specs.borrow();
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].program, "python3");
        assert_eq!(specs[0].stdin, b"[[1,2],[-4,4]]\n[]\n");
        assert_eq!(
            &specs[0].args[specs[0].args.len() - 2..],
            ["oracle/arith.py", "add"]
        );
    }

    #[test]
    fn a_reference_that_ends_its_process_reports_the_exit_and_stderr() {
        let cases = [case("e#1", "[1,2]", "3"), case("e#2", "[2,2]", "4")];
        let got = run(&python("exits_on_four"), &cases, &RtType::I64, 20_000);
        expect_test::expect![[r#"
            e#1: agree
            e#2: oracle-error [exit] e#2: the oracle exited with status 4 (leaving at 4)
        "#]]
        .assert_eq(&got);
    }

    #[test]
    fn a_warm_run_sends_one_request_and_starts_no_process() {
        let fake = FakeRunner::new();
        let warm = FakeWarmRunner::new();
        warm.push(ProcessOutcome {
            exit: Exit::Code(0),
            stdout: Captured {
                bytes: b"{\"case\":0,\"ok\":3}\n{\"case\":1,\"ok\":1}\n".to_vec(),
                truncated: false,
            },
            stderr: Captured::default(),
            duration: Duration::ZERO,
            timed_out: false,
        });
        let results = run_differential(
            &fake,
            Some(&warm),
            &config(1000),
            &python("add"),
            &RtType::I64,
            &TypeEnv::new(),
            &add_cases(),
        );
        assert_eq!(
            render(&results),
            "t#1: agree\nt#2: disagree expected=1 actual=0\n"
        );
        assert!(fake.specs.borrow().is_empty());
        let requests = warm.requests.borrow();
        assert_eq!(requests.len(), 1);
        let (spec, terminator) = &requests[0];
        assert_eq!(spec.program, "python3");
        assert_eq!(
            String::from_utf8_lossy(&spec.stdin),
            "[\"oracle/arith.py\",\"add\"]\n[[1,2],[-4,4]]\n[]\n"
        );
        // The process is named by interpreter, root and environment alone.
        assert_eq!(spec.args.last(), Some(terminator));
        assert_eq!(
            spec.args[spec.args.len() - 2],
            fixture_root().to_string_lossy()
        );
    }

    /// A root of its own in the temp dir, for a test that edits its references.
    fn scratch_root(tag: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!(
            "trellis-warm-{tag}-{}-{:?}",
            std::process::id(),
            Instant::now()
        ));
        std::fs::create_dir_all(root.join("ref")).expect("scratch root");
        root
    }

    #[test]
    fn a_warm_driver_reads_edited_references_and_helpers_afresh() {
        let root = scratch_root("stale");
        let write = |rel: &str, text: &str| std::fs::write(root.join(rel), text).expect("write");
        write("ref/helper.py", "def bump(x):\n    return x + 1\n");
        write(
            "ref/main.py",
            "from helper import bump\n\ndef f(a, b):\n    return bump(a + b)\n",
        );
        let pool = WarmPool::new(2);
        let oracle = Reference::Python {
            path: "ref/main.py".into(),
            symbol: "f".into(),
        };
        let mut config = config(20_000);
        config.root = root.clone();
        let cases = [case("s#1", "[1,2]", "4")];
        let run = |warm: Option<&dyn WarmRunner>| {
            let results = run_differential(
                &RealRunner,
                warm,
                &config,
                &oracle,
                &RtType::I64,
                &TypeEnv::new(),
                &cases,
            );
            render(&results)
        };
        assert_eq!(run(Some(&pool)), "s#1: agree\n");
        // The helper the reference imports changes: the next run sees it.
        write("ref/helper.py", "def bump(x):\n    return x + 10\n");
        let edited = run(Some(&pool));
        assert_eq!(edited, "s#1: disagree expected=13 actual=4\n");
        assert_eq!(edited, run(None), "cold agrees");
        // The reference itself changes, importing a module that did not exist.
        write("ref/other.py", "def bump(x):\n    return x + 100\n");
        write(
            "ref/main.py",
            "from other import bump\n\ndef f(a, b):\n    return bump(a + b)\n",
        );
        let edited = run(Some(&pool));
        assert_eq!(edited, "s#1: disagree expected=103 actual=4\n");
        assert_eq!(edited, run(None), "cold agrees");
        assert_eq!(pool.started(), 1, "one driver served every run");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_warm_driver_killed_at_the_timeout_is_replaced() {
        let pool = WarmPool::new(2);
        let warm = |symbol: &str, ms: u64| {
            let results = run_differential(
                &RealRunner,
                Some(&pool),
                &config(ms),
                &python(symbol),
                &RtType::I64,
                &TypeEnv::new(),
                &add_cases()[..1],
            );
            render(&results)
        };
        assert_eq!(warm("add", 20_000), "t#1: agree\n");
        let hung = warm("hang", 1_000);
        expect_test::expect![[r#"
            t#1: oracle-error [timeout] t#1: the oracle timed out after 1000 ms
        "#]]
        .assert_eq(&hung);
        assert!(pool.idle_pids().is_empty(), "the hung driver is gone");
        assert_eq!(warm("add", 20_000), "t#1: agree\n");
        assert_eq!(pool.started(), 2);
    }

    #[test]
    fn cli_oracles_run_per_case() {
        let sum = Reference::Cli {
            command: "python3 -c 'import json,sys; a=json.load(sys.stdin); print(sum(a))'".into(),
        };
        let got = run(&sum, &add_cases(), &RtType::I64, 20_000);
        assert_eq!(got, "t#1: agree\nt#2: agree\n");
        let cases = &add_cases()[..1];
        let got = run(
            &Reference::Cli {
                command: "echo hello".into(),
            },
            cases,
            &RtType::I64,
            20_000,
        );
        assert!(got.starts_with("t#1: oracle-error [non-json]"), "{got}");
        let got = run(
            &Reference::Cli {
                command: "echo 3; exit 4".into(),
            },
            cases,
            &RtType::I64,
            20_000,
        );
        assert!(got.starts_with("t#1: oracle-error [exit]"), "{got}");
        assert!(got.contains("status 4"), "{got}");
        let started = Instant::now();
        let got = run(
            &Reference::Cli {
                command: "sleep 30".into(),
            },
            cases,
            &RtType::I64,
            300,
        );
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
