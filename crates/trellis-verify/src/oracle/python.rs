//! The Python reference runner: an embedded driver that speaks a line protocol
//! on a private copy of stdout, started once per run (cold) or kept warm by the
//! host's [`WarmRunner`] and sent one request per run. Both read the same
//! request lines and answer with the same lines, parsed here by one parser, so
//! a warm answer is byte-identical to a cold one.

use soil_rt::{Payload, TypeEnv, Value};

use super::{DifferentialCase, OracleConfig, OracleFailure, args_json, missing_answer};
use crate::process::{ProcessOutcome, ProcessRunner, ProcessSpec};
use crate::warm::WarmRunner;

/// What both drivers share. A run's input is two lines: `[[args...], ...]`, then
/// a line of non-finite float patches, `[[path, "NaN"], ...]`. Answers go one
/// line per case to the original stdout, which the driver keeps for itself (fd 1
/// is pointed at stderr so the reference's own prints cannot corrupt it):
/// `{"case":N,"ok":<json>}`, or `{"case":N,"raised":{"type":..,"message":..}}`,
/// or `{"case":N,"unencodable":{..}}`; a load failure is one `{"setup":{..}}`
/// line. Non-finite floats become the §7 strings; everything else is
/// `json.dumps`.
macro_rules! driver_common {
    () => {
        r#"
import importlib, importlib.util, json, math, os, sys
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
def reference_path(root, rel):
    return os.path.join(root, *rel.split("/"))
def load(root, rel, symbol):
    path = reference_path(root, rel)
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location("trellis_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = module
    for part in symbol.split("."):
        fn = getattr(fn, part)
    return fn
def decode(cases_line, patches_line):
    cases = json.loads(cases_line)
    patches = json.loads(patches_line) if patches_line.strip() else []
    for at, text in patches:
        target = cases
        for step in at[:-1]:
            target = target[step]
        target[at[-1]] = float(text)
    return cases
def answer(fn, cases):
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
"#
    };
}

/// The cold driver: `root path symbol` as arguments, the two input lines on
/// stdin; one run, then exit.
const PYTHON_DRIVER: &str = concat!(
    driver_common!(),
    r#"
def main():
    root, rel, symbol = sys.argv[1], sys.argv[2], sys.argv[3]
    try:
        fn = load(root, rel, symbol)
        lines = sys.stdin.read().split("\n")
        cases = decode(lines[0], lines[1] if len(lines) > 1 else "")
    except BaseException as exc:
        emit('{"setup":' + failure(exc) + '}')
        return 3
    answer(fn, cases)
    return 0
sys.exit(main())
"#
);

/// The warm driver: `root` as its argument, then requests until stdin closes,
/// each a line `[path, symbol]` and the two input lines, each answered as the
/// cold driver answers and ended by [`SERVED`] on stdout and on stderr. Before
/// each request it puts back what a fresh process would have: `sys.path`,
/// `sys.argv`, the cwd, `sys.stdout`/`sys.stderr`, stdin at its end (the
/// requests come on a private copy of fd 0) and no module loaded from under the
/// reference's directory (so an edited reference or helper is read afresh).
const PYTHON_SERVER: &str = concat!(
    driver_common!(),
    r#"
SERVED = sys.argv[2]
def forget(directory):
    prefix = os.path.join(os.path.abspath(directory), "")
    def under(path):
        return isinstance(path, str) and os.path.abspath(path).startswith(prefix)
    for name, module in list(sys.modules.items()):
        places = [getattr(module, "__file__", None)]
        places.extend(getattr(module, "__path__", None) or [])
        if any(under(place) for place in places):
            del sys.modules[name]
def serve_one(root, base_path, header, cases_line, patches_line):
    try:
        rel, symbol = json.loads(header)
        forget(os.path.dirname(reference_path(root, rel)))
        sys.path[:] = base_path
        sys.argv[:] = ["-c", root, rel, symbol]
        os.chdir(root)
        sys.stdout = sys.stderr = sys.__stderr__
        importlib.invalidate_caches()
        fn = load(root, rel, symbol)
        cases = decode(cases_line, patches_line)
    except BaseException as exc:
        emit('{"setup":' + failure(exc) + '}')
        return
    answer(fn, cases)
def serve():
    root = sys.argv[1]
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    empty = os.open(os.devnull, os.O_RDONLY)
    os.dup2(empty, 0)
    os.close(empty)
    sys.stdin = open(os.devnull, encoding="utf-8")
    base_path = list(sys.path)
    while True:
        header = requests.readline()
        if not header:
            return 0
        cases_line = requests.readline()
        patches_line = requests.readline()
        serve_one(root, base_path, header, cases_line.rstrip("\n"), patches_line.rstrip("\n"))
        for stream in (sys.stdout, sys.stderr, sys.__stderr__):
            try:
                stream.flush()
            except BaseException:
                pass
        os.write(2, SERVED.encode("utf-8"))
        emit(SERVED)
sys.exit(serve())
"#
);

/// Ends each warm answer, on stdout as a line and on stderr as bytes. No
/// driver line looks like it; a reference would have to print it on purpose.
const SERVED: &str = "\u{1e}trellis-oracle: served\u{1e}";

pub(super) fn run_python(
    runner: &dyn ProcessRunner,
    warm: Option<&dyn WarmRunner>,
    config: &OracleConfig,
    path: &str,
    symbol: &str,
    cases: &[DifferentialCase],
    env: &TypeEnv,
) -> Vec<Result<String, OracleFailure>> {
    let input = run_input(cases, env);
    let outcome = match warm {
        None => runner.run(&cold_spec(config, path, symbol, input)),
        Some(warm) => {
            let header = serde_json::json!([path, symbol]).to_string();
            warm.exchange(&warm_spec(config, format!("{header}\n{input}")), SERVED)
        }
    };
    answers(&outcome, config, cases.len())
}

/// Line 1: the argument lists as canonical JSON. Line 2: where the non-finite
/// floats are, so the driver can hand Python real floats there instead of the
/// §7 strings (canonical JSON never contains a raw newline).
fn run_input(cases: &[DifferentialCase], env: &TypeEnv) -> String {
    let mut input = String::from("[");
    let mut patches = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        if i > 0 {
            input.push(',');
        }
        input.push_str(&args_json(&case.args, env));
        for (j, arg) in case.args.iter().enumerate() {
            let mut at = vec![serde_json::Value::from(i), serde_json::Value::from(j)];
            non_finite_floats(arg, env, &mut at, &mut patches);
        }
    }
    input.push_str("]\n");
    input.push_str(&serde_json::Value::Array(patches).to_string());
    input.push('\n');
    input
}

/// -I: no user site, no PYTHON* variables, no cwd on sys.path; -B: no
/// __pycache__ written into the root.
fn python_spec(config: &OracleConfig, driver: &str) -> ProcessSpec {
    let mut spec = ProcessSpec::new(config.python.clone(), config.root.clone(), config.timeout)
        .arg("-I")
        .arg("-B")
        .arg("-c")
        .arg(driver)
        .arg(config.root.to_string_lossy());
    spec.env = config.env.clone();
    spec
}

fn cold_spec(config: &OracleConfig, path: &str, symbol: &str, input: String) -> ProcessSpec {
    python_spec(config, PYTHON_DRIVER)
        .arg(path)
        .arg(symbol)
        .stdin(input)
}

/// Names the warm process by interpreter, root and environment (the request
/// carries the rest): references of one root share it, nothing else does.
fn warm_spec(config: &OracleConfig, request: String) -> ProcessSpec {
    python_spec(config, PYTHON_SERVER)
        .arg(SERVED)
        .stdin(request)
}

/// One answer per case from the driver's lines: a setup failure fails them
/// all; a case without a line failed with the run (timeout, exit).
fn answers(
    outcome: &ProcessOutcome,
    config: &OracleConfig,
    count: usize,
) -> Vec<Result<String, OracleFailure>> {
    let mut answers: Vec<Option<Result<String, OracleFailure>>> = vec![None; count];
    let stdout = outcome.stdout.text();
    for line in stdout.lines() {
        match parse_driver_line(line) {
            DriverLine::Setup(failure) => {
                return (0..count).map(|_| Err(failure.clone())).collect();
            }
            DriverLine::Case(n, answer) => {
                if let Some(slot) = answers.get_mut(n) {
                    *slot = Some(answer);
                }
            }
            DriverLine::Stray => {}
        }
    }
    let missing = missing_answer(outcome, config.timeout);
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
        if let Some(json) = rest
            .strip_prefix(",\"ok\":")
            .and_then(|r| r.strip_suffix('}'))
        {
            return DriverLine::Case(n, Ok(json.to_owned()));
        }
        if let Some(failure) = rest
            .strip_prefix(",\"raised\":")
            .and_then(|r| r.strip_suffix('}'))
        {
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
    if let Some(failure) = line
        .strip_prefix("{\"setup\":")
        .and_then(|r| r.strip_suffix('}'))
    {
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

/// Appends `[path, "NaN" | "Infinity" | "-Infinity"]` for every non-finite F64
/// in `value`, the path following the canonical encoding's JSON layout.
fn non_finite_floats(
    value: &Value,
    env: &TypeEnv,
    at: &mut Vec<serde_json::Value>,
    out: &mut Vec<serde_json::Value>,
) {
    let mut nested = |key: serde_json::Value, child: &Value, at: &mut Vec<serde_json::Value>| {
        at.push(key);
        non_finite_floats(child, env, at, out);
        at.pop();
    };
    match value {
        Value::F64(x) if !x.is_finite() => {
            let text = soil_rt::format_f64(*x);
            out.push(serde_json::json!([at.clone(), text]));
        }
        Value::List(items) => {
            for (i, item) in items.iter().enumerate() {
                nested(i.into(), item, at);
            }
        }
        Value::Tuple(items) => {
            for (i, item) in items.iter().enumerate() {
                nested(i.into(), item, at);
            }
        }
        Value::Record(shape, fields) => {
            for (i, field) in fields.iter().enumerate() {
                nested(field_name(env, *shape, i).into(), field, at);
            }
        }
        Value::Variant { ty, tag, payload } => {
            let inline = matches!(
                env.variant_decl(*ty, *tag).map(|v| &v.payload),
                Some(Payload::Record(_))
            );
            match payload.as_deref() {
                // An inline-record payload's fields sit beside "tag".
                Some(Value::Record(shape, fields)) if inline => {
                    for (i, field) in fields.iter().enumerate() {
                        nested(field_name(env, *shape, i).into(), field, at);
                    }
                }
                Some(payload) => nested("value".into(), payload, at),
                None => {}
            }
        }
        Value::Map(entries) => {
            for (i, (key, item)) in entries.iter().enumerate() {
                at.push(i.into());
                nested(0.into(), &key.0, at);
                nested(1.into(), item, at);
                at.pop();
            }
        }
        _ => {}
    }
}

fn field_name(env: &TypeEnv, shape: u32, index: usize) -> String {
    env.shape(shape)
        .and_then(|s| s.fields.get(index))
        .map_or_else(|| format!("_{index}"), |f| f.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn driver_lines_never_panic(line in "\\PC*") {
            let _ = parse_driver_line(&line);
            let prefixed = format!("{{\"case\":{line}");
            let _ = parse_driver_line(&prefixed);
        }
    }
}
