//! `trellis repl`: a line loop that calls definitions with `trellis call`
//! semantics (real capabilities, canonical JSON out, structured panics), one
//! independent call per line — no state carries between lines. Errors are
//! diagnostics for a person, rendered as `check` renders them, unless `--json`
//! or `:json` asks for the `{"errors":[…]}` document. Every line read is
//! appended to `.trellis/repl_history` under the root. `:keep NAME` promotes the
//! last successful call to an expect case of the definition's `test NAME` block,
//! but only while the root's status says the definition is green: a case recorded
//! against a stale or failing definition would pin a result nobody has vouched for.
//! `trellis call` is here too: the one call a repl line makes, printed.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use serde_json::{Value, json};
use trellis_diag::{Diagnostic, errors_document};

use crate::{client, render};
use trellis_service::codes::HostCode;

pub const HELP: &str = "\
DEF JSON-ARGS   call a definition, e.g. csvstats::median [[3.0, 1.0, 2.0]]
                (JSON-ARGS is a JSON array of the non-capability arguments)
:keep NAME      append the last successful call and its result as an expect
                case to the definition's `test NAME` block (green definitions only)
:json           switch errors between diagnostics for a person (the default)
                and the {\"errors\":[...]} document
:help           print this help
:quit           leave (as does end of input)
";

/// The last call that returned a value: what `:keep` writes.
struct Kept {
    def: String,
    args: Vec<Value>,
    result: String,
}

/// What a line answers: text to print, or errors to render.
type Reply = Result<String, Vec<Diagnostic>>;

/// `trellis call DEF JSON-ARGS`: one call; its result on stdout, or its errors
/// (on stderr for a person, on stdout under `--json`).
pub fn call(root: &Path, def: &str, args: &str, json: bool) -> ExitCode {
    match crate::call::call(root, def, args) {
        Ok(value) => {
            println!("{value}");
            ExitCode::SUCCESS
        }
        Err(errors) => {
            render::errors(&mut std::io::stdout(), json, &errors);
            ExitCode::FAILURE
        }
    }
}

/// Runs the loop over stdin until `:quit` or end of input, errors rendered for
/// a person unless `json` (`:json` switches); returns the exit code.
pub fn run(root: &Path, no_daemon: bool, mut json: bool) -> u8 {
    let stdin = std::io::stdin();
    let prompt = stdin.is_terminal();
    let mut out = std::io::stdout().lock();
    let mut last: Option<Kept> = None;
    let mut lines = stdin.lock().lines();
    loop {
        if prompt {
            let _ = write!(out, "trellis> ");
            let _ = out.flush();
        }
        let Some(Ok(line)) = lines.next() else {
            return 0;
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        remember(root, line);
        let reply = match line.split_once(char::is_whitespace) {
            _ if line == ":quit" || line == ":q" => return 0,
            _ if line == ":help" => Ok(HELP.to_owned()),
            _ if line == ":json" => {
                json = !json;
                Ok(format!(
                    "errors as {}",
                    if json { "JSON" } else { "diagnostics" }
                ))
            }
            _ if line == ":keep" => keep(root, no_daemon, last.as_ref(), ""),
            Some((":keep", name)) => keep(root, no_daemon, last.as_ref(), name.trim()),
            _ if line.starts_with(':') => {
                Err(vec![HostCode::UsageError.diagnostic(format!(
                    "unknown REPL command `{line}`; :help lists them"
                ))])
            }
            split => {
                let (def, args) = split.unwrap_or((line, "[]"));
                let called = crate::call::call(root, def, args.trim());
                last = None;
                if let Ok(result) = &called
                    && let Ok(Value::Array(args)) = serde_json::from_str(args)
                {
                    last = Some(Kept {
                        def: def.to_owned(),
                        args,
                        result: result.clone(),
                    });
                }
                called
            }
        };
        match reply {
            Ok(text) => {
                let _ = writeln!(out, "{}", text.trim_end());
            }
            // On stdout either way: the session is one transcript.
            Err(errors) if json => {
                let _ = writeln!(out, "{}", errors_document(&errors));
            }
            Err(errors) => render::diagnostics(&mut out, &errors),
        }
        let _ = out.flush();
    }
}

/// Appends `line` to the root's history; a history that cannot be written costs
/// nothing but the history.
fn remember(root: &Path, line: &str) {
    let dir = root.join(".trellis");
    let _ = std::fs::create_dir_all(&dir);
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("repl_history"))
    {
        let _ = writeln!(file, "{line}");
    }
}

fn refusal(code: HostCode, message: String) -> Vec<Diagnostic> {
    vec![code.diagnostic(message)]
}

fn keep(root: &Path, no_daemon: bool, last: Option<&Kept>, name: &str) -> Reply {
    if name.is_empty() {
        return Err(refusal(
            HostCode::UsageError,
            "`:keep` needs the name of the test block to keep the last call in: \
             `:keep NAME` (letters, digits, `_`, `-`)"
                .to_owned(),
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(refusal(
            HostCode::UsageError,
            format!("`{name}` is not a test block name: use letters, digits, `_` and `-`"),
        ));
    }
    let Some(kept) = last else {
        return Err(refusal(
            HostCode::UsageError,
            "no successful call to keep: call a definition first".to_owned(),
        ));
    };
    match status_of(root, no_daemon, &kept.def) {
        Ok(status) if status == "green" => {}
        Ok(status) => {
            return Err(refusal(
                HostCode::UsageError,
                format!(
                    "`{}` is {status}, not green: make it green (trellis status says how) \
                     before keeping a result as its test",
                    kept.def
                ),
            ));
        }
        Err(errors) => return Err(errors),
    }
    let Some((module, stem)) = trellis_db::split_definition_name(&kept.def) else {
        return Err(refusal(
            HostCode::UnknownDefinition,
            format!("`{}` is not a definition", kept.def),
        ));
    };
    let path = root
        .join(module.replace("::", "/"))
        .join(format!("{stem}.tr"));
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) => {
            return Err(refusal(
                HostCode::RootUnreadable,
                format!("cannot read {}: {error}", path.display()),
            ));
        }
    };
    let args: Vec<String> = kept.args.iter().map(Value::to_string).collect();
    let case = format!("{stem}({}) -> {}", args.join(", "), kept.result.trim());
    let (file, _) = trellis_spec::parse_tr(&text, stem);
    let created = !file
        .blocks_of(trellis_spec::BlockKind::Test)
        .any(|block| block.value.header.name.as_deref() == Some(name));
    let written = trellis_spec::append_test_case(&text, &file, name, &case);
    if let Err(error) = std::fs::write(&path, written) {
        return Err(refusal(
            HostCode::RootUnreadable,
            format!("cannot write {}: {error}", path.display()),
        ));
    }
    // A new block brings the blank line that separates it from the text before
    // it, and prose is hashed unnormalised (tr-grammar §1): that separator is the
    // only prose this edit adds to a definition that was green a moment ago, so
    // it is accepted here as `trellis review` would. The test blocks themselves
    // are left stale for `trellis test` to run.
    if created {
        ask(root, no_daemon, "review", json!({ "def": kept.def }))?;
    }
    Ok(format!(
        "kept in {}: {case}",
        path.strip_prefix(root).unwrap_or(&path).display()
    ))
}

/// The definition's status row, asked of the daemon (or this process under
/// `--no-daemon`) exactly as `trellis status` asks.
fn status_of(root: &Path, no_daemon: bool, def: &str) -> Result<String, Vec<Diagnostic>> {
    let answer = ask(root, no_daemon, "status", json!({}))?;
    let rows = answer["definitions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    rows.iter()
        .find(|row| row["name"] == def)
        .and_then(|row| row["status"].as_str().map(str::to_owned))
        .ok_or_else(|| {
            refusal(
                HostCode::UnknownDefinition,
                format!("no definition `{def}` in this root"),
            )
        })
}

/// One request over the same path every command takes: the root's daemon, or
/// this process under `--no-daemon`.
fn ask(
    root: &Path,
    no_daemon: bool,
    method: &str,
    params: Value,
) -> Result<Value, Vec<Diagnostic>> {
    client::request(root, no_daemon, method, params, &mut |_| {}).map_err(|error| match error {
        client::ClientError::Failed(errors) => errors,
        client::ClientError::Transport(message) => vec![Diagnostic::new(
            trellis_rpc::diag::DAEMON_UNREACHABLE,
            message,
        )],
    })
}
