//! `trellis _script --playbook FILE --job ID --socket PATH`: the scripted
//! provider's agent (impl plan §8.9). It does what an agent CLI does — spawns
//! the MCP server its configuration names (`trellis _mcp` for the job), performs
//! the `initialize` handshake, lists the tools, then calls them — except that the
//! calls come from a JSONL playbook instead of a model, and each result is
//! checked against the step's expectation. It prints what it did as stream-json
//! in the agent CLI's shape (`system`/`init`, `assistant`, `user`, `result`), so
//! the loop reads one format from every provider.
//!
//! A playbook line is one step (blank lines and lines starting with `#` are
//! skipped):
//!
//! - `{"tool": NAME, "args": {...}, "expect": {"is_error": B, "codes": [...],
//!   "result": SUBSET}}` — a tool call; every `expect` key is optional (`SUBSET`
//!   matches when each of its keys matches the result recursively); a
//!   `"soil_file": PATH` beside `args` (relative to the playbook) becomes the
//!   call's `soil` argument, so playbooks keep Soil in `.soil` files;
//! - `{"sleep_ms": N}` — think for a while;
//! - `{"spawn": [PROGRAM, ARG...]}` — start a child process and leave it running
//!   (a wall-clock cap must kill it too);
//! - `{"hang": true}` — never finish;
//! - `{"cost_usd": X}` — the session's cost grows by X (reported on every line);
//! - `{"say": TEXT}` — the final text.
//!
//! Exit status: 0 when every expectation held, 1 when one did not (the `result`
//! line says which step and why), 2 for a usage error or an unreadable playbook.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// Runs `_script`; `args` follow the command name.
pub fn run(args: &[String]) -> ExitCode {
    let mut playbook = None;
    let mut job = None;
    let mut socket = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let slot = match arg.as_str() {
            "--playbook" => &mut playbook,
            "--job" => &mut job,
            "--socket" => &mut socket,
            other => return usage(&format!("unexpected argument {other:?}")),
        };
        match rest.next() {
            Some(value) => *slot = Some(value.clone()),
            None => return usage(&format!("{arg} needs a value")),
        }
    }
    let (Some(playbook), Some(job), Some(socket)) = (playbook, job, socket) else {
        return usage("_script needs --playbook FILE --job ID --socket PATH");
    };
    let steps = match read_playbook(Path::new(&playbook)) {
        Ok(steps) => steps,
        Err(message) => {
            eprintln!("trellis _script: {message}");
            return ExitCode::from(2);
        }
    };
    let mut session = match Session::start(&job, &socket) {
        Ok(session) => session,
        Err(message) => {
            emit(
                &json!({ "type": "result", "subtype": "error_mcp", "is_error": true,
                "num_turns": 0, "total_cost_usd": 0.0, "result": message }),
            );
            return ExitCode::FAILURE;
        }
    };
    let verdict = session.play(&steps);
    let failed = verdict.is_err();
    emit(&json!({
        "type": "result",
        "subtype": if failed { "error_expectation" } else { "success" },
        "is_error": failed,
        "num_turns": session.turns,
        "total_cost_usd": session.cost_usd,
        "usage": { "input_tokens": session.tokens_in, "output_tokens": session.tokens_out },
        "session_id": session.id,
        "result": verdict.unwrap_or_else(|why| why),
    }));
    session.close();
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("trellis _script: {message}");
    ExitCode::from(2)
}

/// One stream-json line on stdout, flushed (the loop reads it as it comes).
fn emit(line: &Value) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}

fn read_playbook(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read the playbook {}: {error}", path.display()))?;
    let mut steps = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let step: Value = serde_json::from_str(line).map_err(|error| {
            format!("{}:{}: not a JSON step: {error}", path.display(), index + 1)
        })?;
        if !step.is_object() {
            return Err(format!(
                "{}:{}: a step is a JSON object",
                path.display(),
                index + 1
            ));
        }
        let mut step = step;
        if let Some(file) = step["soil_file"].as_str() {
            let file = path.parent().unwrap_or(Path::new(".")).join(file);
            let soil = std::fs::read_to_string(&file).map_err(|error| {
                format!(
                    "{}:{}: cannot read {}: {error}",
                    path.display(),
                    index + 1,
                    file.display()
                )
            })?;
            if !step["args"].is_object() {
                step["args"] = json!({});
            }
            step["args"]["soil"] = Value::String(soil);
        }
        steps.push(step);
    }
    Ok(steps)
}

struct Session {
    server: Child,
    to_server: ChildStdin,
    from_server: BufReader<ChildStdout>,
    next_id: u64,
    id: String,
    turns: u64,
    cost_usd: f64,
    tokens_in: u64,
    tokens_out: u64,
    /// Children a `spawn` step started: left running on purpose.
    children: Vec<Child>,
}

impl Session {
    fn start(job: &str, socket: &str) -> Result<Session, String> {
        let exe = std::env::current_exe().map_err(|e| format!("no trellis binary: {e}"))?;
        let mut server = Command::new(exe)
            .args(["_mcp", "--job", job, "--socket", socket])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|error| format!("cannot start the MCP server: {error}"))?;
        let to_server = server.stdin.take().expect("piped stdin");
        let from_server = BufReader::new(server.stdout.take().expect("piped stdout"));
        let mut session = Session {
            server,
            to_server,
            from_server,
            next_id: 0,
            id: format!("script-{job}"),
            turns: 0,
            cost_usd: 0.0,
            tokens_in: 0,
            tokens_out: 0,
            children: Vec::new(),
        };
        let init = session.request(
            "initialize",
            json!({ "protocolVersion": trellis_mcp::LEGACY_PROTOCOL, "capabilities": {},
                    "clientInfo": { "name": "trellis-script", "version": trellis_service::identity::VERSION } }),
        )?;
        session.notify("notifications/initialized")?;
        let tools = session.request("tools/list", json!({}))?;
        let names: Vec<String> = tools["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|tool| tool["name"].as_str())
            .map(|name| format!("mcp__trellis__{name}"))
            .collect();
        emit(&json!({
            "type": "system", "subtype": "init", "session_id": session.id,
            "mcp_servers": [{ "name": "trellis", "status": "connected",
                              "server": init["serverInfo"] }],
            "tools": names,
        }));
        Ok(session)
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        writeln!(self.to_server, "{message}")
            .and_then(|()| self.to_server.flush())
            .map_err(|error| format!("the MCP server went away: {error}"))
    }

    fn notify(&mut self, method: &str) -> Result<(), String> {
        self.send(&json!({ "jsonrpc": "2.0", "method": method }))
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        loop {
            let mut line = String::new();
            match self.from_server.read_line(&mut line) {
                Ok(0) => return Err(format!("the MCP server closed its output during {method}")),
                Ok(_) => {}
                Err(error) => return Err(format!("cannot read the MCP server: {error}")),
            }
            let message: Value = serde_json::from_str(&line)
                .map_err(|error| format!("the MCP server sent non-JSON: {error}"))?;
            if message["id"] != json!(id) {
                continue; // a notification
            }
            if let Some(error) = message.get("error") {
                return Err(format!("{method} failed: {error}"));
            }
            return Ok(message["result"].clone());
        }
    }

    /// Plays every step; `Ok(final text)` or `Err(why an expectation failed)`.
    fn play(&mut self, steps: &[Value]) -> Result<String, String> {
        let mut said = String::from("done");
        for (index, step) in steps.iter().enumerate() {
            let at = format!("step {}", index + 1);
            if let Some(cost) = step["cost_usd"].as_f64() {
                // Spent thinking: the session's cost is reported as it grows.
                self.cost_usd += cost;
                emit(&json!({ "type": "assistant", "message": { "content": [] },
                    "total_cost_usd": self.cost_usd }));
            }
            if let Some(ms) = step["sleep_ms"].as_u64() {
                std::thread::sleep(Duration::from_millis(ms));
            }
            if let Some(argv) = step["spawn"].as_array() {
                let argv: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
                if let Some((program, args)) = argv.split_first() {
                    let child = Command::new(program)
                        .args(args)
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .spawn()
                        .map_err(|error| format!("{at}: cannot spawn {program}: {error}"))?;
                    emit(&json!({ "type": "system", "subtype": "spawned", "pid": child.id() }));
                    self.children.push(child);
                }
            }
            if step["hang"] == json!(true) {
                loop {
                    std::thread::sleep(Duration::from_secs(3600));
                }
            }
            if let Some(text) = step["say"].as_str() {
                said = text.to_owned();
                emit(&json!({ "type": "assistant", "message": { "content": [
                    { "type": "text", "text": text }] }, "total_cost_usd": self.cost_usd }));
            }
            if let Some(tool) = step["tool"].as_str() {
                self.call(&at, tool, step)?;
            }
        }
        Ok(said)
    }

    fn call(&mut self, at: &str, tool: &str, step: &Value) -> Result<(), String> {
        let args = match &step["args"] {
            Value::Null => json!({}),
            args => args.clone(),
        };
        self.turns += 1;
        self.tokens_out += (args.to_string().len() as u64).div_ceil(4);
        emit(&json!({ "type": "assistant", "message": { "content": [
            { "type": "tool_use", "name": format!("mcp__trellis__{tool}"), "input": args }] },
            "total_cost_usd": self.cost_usd }));
        let result = self
            .request("tools/call", json!({ "name": tool, "arguments": args }))
            .map_err(|error| format!("{at} ({tool}): {error}"))?;
        let is_error = result["isError"] == json!(true);
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        self.tokens_in += (text.len() as u64).div_ceil(4);
        emit(&json!({ "type": "user", "message": { "content": [
            { "type": "tool_result", "is_error": is_error, "content": text }] } }));
        let document: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        check_expectation(&step["expect"], is_error, &document)
            .map_err(|why| format!("{at} ({tool}): {why}; the result was {text}"))
    }

    fn close(mut self) {
        drop(self.to_server);
        // The server ends when its input closes; do not outlive it for long.
        for _ in 0..50 {
            if matches!(self.server.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.server.kill();
        let _ = self.server.wait();
        self.children.clear();
    }
}

fn check_expectation(expect: &Value, is_error: bool, document: &Value) -> Result<(), String> {
    if expect.is_null() {
        return Ok(());
    }
    if let Some(wanted) = expect["is_error"].as_bool()
        && wanted != is_error
    {
        return Err(format!("expected is_error {wanted}, got {is_error}"));
    }
    if let Some(codes) = expect["codes"].as_array() {
        let got: Vec<&str> = document["errors"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|error| error["code"].as_str())
            .collect();
        for code in codes.iter().filter_map(Value::as_str) {
            if !got.contains(&code) {
                return Err(format!("expected the code {code}, got {got:?}"));
            }
        }
    }
    if !expect["result"].is_null() && !subset(&expect["result"], document) {
        return Err(format!("expected a result containing {}", expect["result"]));
    }
    Ok(())
}

/// Whether every key of `wanted` is in `got` with a matching value (arrays match
/// element by element, scalars by equality).
fn subset(wanted: &Value, got: &Value) -> bool {
    match (wanted, got) {
        (Value::Object(wanted), Value::Object(got)) => wanted
            .iter()
            .all(|(key, value)| got.get(key).is_some_and(|g| subset(value, g))),
        (Value::Array(wanted), Value::Array(got)) => {
            wanted.len() == got.len() && wanted.iter().zip(got).all(|(w, g)| subset(w, g))
        }
        (wanted, got) => wanted == got,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectations_match_subsets_codes_and_error_flags() {
        let document = json!({ "cases": [{ "name": "basics#1", "outcome": { "tag": "Pass" } }] });
        let pass = json!({ "result": { "cases": [{ "outcome": { "tag": "Pass" } }] } });
        assert_eq!(check_expectation(&pass, false, &document), Ok(()));
        let fail = json!({ "result": { "cases": [{ "outcome": { "tag": "Fail" } }] } });
        assert!(check_expectation(&fail, false, &document).is_err());
        let errors = json!({ "errors": [{ "code": "no-draft" }] });
        let wants = json!({ "is_error": true, "codes": ["no-draft"] });
        assert_eq!(check_expectation(&wants, true, &errors), Ok(()));
        assert!(check_expectation(&wants, false, &errors).is_err());
        let other = json!({ "is_error": true, "codes": ["bundle-path"] });
        assert!(check_expectation(&other, true, &errors).is_err());
    }
}
