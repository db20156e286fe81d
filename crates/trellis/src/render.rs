//! Human-readable output. The daemon answers in JSON; the client renders it here,
//! so `--json` output and the human view come from the same document.

use std::io::Write;

use serde_json::Value;

use crate::args::Command;

/// Renders diagnostics like a compiler: code, message, location, notes, and the
/// repair class with the section stating the rule.
pub fn diagnostics(out: &mut impl Write, errors: &[Value]) {
    for error in errors {
        let code = error["code"].as_str().unwrap_or("?");
        let message = error["message"].as_str().unwrap_or("");
        let _ = writeln!(out, "error[{code}]: {message}");
        let file = soil_option(&error["file"]).and_then(Value::as_str);
        let span = soil_option(&error["span"]);
        match (file, span) {
            (Some(file), Some(span)) => {
                let _ = writeln!(
                    out,
                    "  --> {file}:{}:{}",
                    span["start"]["line"], span["start"]["column"]
                );
            }
            (Some(file), None) => {
                let _ = writeln!(out, "  --> {file}");
            }
            _ => {}
        }
        for note in error["notes"].as_array().into_iter().flatten() {
            let _ = writeln!(out, "  = note: {}", note["message"].as_str().unwrap_or(""));
        }
        if let (Some(class), Some(spec_ref)) =
            (error["repair_class"].as_str(), error["spec_ref"].as_str())
            && !spec_ref.is_empty()
        {
            let _ = writeln!(out, "  = fix: {class} (see {spec_ref})");
        }
    }
}

/// The value inside a Soil-encoded `Option`, if it is `Some`.
fn soil_option(value: &Value) -> Option<&Value> {
    (value["tag"] == "Some").then(|| &value["value"])
}

/// Renders a successful answer; returns the exit code.
pub fn answer(out: &mut impl Write, command: &Command, result: &Value) -> u8 {
    match command {
        Command::Status { json: true, .. } => {
            let mut result = result.clone();
            if let Value::Object(fields) = &mut result {
                fields.remove("timings");
            }
            let _ = writeln!(out, "{result}");
            let disagreements = result["disagreements"]
                .as_array()
                .is_some_and(|d| !d.is_empty());
            u8::from(result.get("problems").is_some() || disagreements)
        }
        Command::Status {
            json: false,
            verify: true,
            ..
        } => verify_report(out, result),
        Command::Status {
            json: false, all, ..
        } => status_table(out, result, *all),
        Command::Jobs { json: true } => {
            let mut result = result.clone();
            if let Value::Object(fields) = &mut result {
                fields.remove("timings");
            }
            let _ = writeln!(out, "{result}");
            0
        }
        Command::Jobs { json: false } => jobs_report(out, result),
        Command::Check { json: true, .. } => {
            let mut result = result.clone();
            if let Value::Object(fields) = &mut result {
                fields.remove("timings");
            }
            let _ = writeln!(out, "{result}");
            u8::from(result["errors"].as_array().is_some_and(|e| !e.is_empty()))
        }
        Command::Check { json: false, .. } => check_report(out, result),
        Command::Adopt { .. } | Command::DecisionsEditorial { .. } => written_report(out, result),
        Command::Test { .. } => test_report(out, result),
        Command::Refresh => {
            let changed = result["timings"]["files_changed"].as_u64().unwrap_or(0);
            let problems = result["problems"].as_array().cloned().unwrap_or_default();
            diagnostics(out, &problems);
            let _ = writeln!(out, "refreshed the root: {changed} files changed");
            u8::from(!problems.is_empty())
        }
        Command::Review { def } => {
            let _ = writeln!(out, "reviewed {def}: its prose edit is accepted");
            0
        }
        Command::ToolchainUpdate => {
            let _ = writeln!(
                out,
                "soil.toml pins trellis {} / soil0 {} / skill {}{}",
                result["trellis"].as_str().unwrap_or("?"),
                result["soil0_cli"].as_str().unwrap_or("?"),
                result["skill"].as_str().unwrap_or("?"),
                if result["changed"] == true {
                    ""
                } else {
                    " (already)"
                }
            );
            0
        }
        _ => {
            let _ = writeln!(out, "{result}");
            0
        }
    }
}

/// The `context` answer as the service sends it, its file lists in columns,
/// borrowing its strings from the frame (`service::context`).
#[derive(serde::Deserialize)]
pub struct ContextAnswer<'a> {
    #[serde(borrow)]
    definition: Text<'a>,
    #[serde(borrow)]
    dir: Text<'a>,
    budget: u64,
    estimate: u64,
    #[serde(borrow)]
    hash: Text<'a>,
    #[serde(borrow)]
    packed: PackedColumns<'a>,
    #[serde(borrow)]
    dropped: DroppedColumns<'a>,
}

/// A string of the frame, copied only when it had escapes.
#[derive(serde::Deserialize)]
struct Text<'a>(#[serde(borrow)] std::borrow::Cow<'a, str>);

#[derive(serde::Deserialize)]
struct PackedColumns<'a> {
    #[serde(borrow)]
    paths: Vec<Text<'a>>,
    bytes: Vec<u64>,
}

#[derive(serde::Deserialize)]
struct DroppedColumns<'a> {
    #[serde(borrow)]
    items: Vec<Text<'a>>,
    /// Runs of one reason: `(reason, how many items in a row)`.
    #[serde(borrow)]
    reasons: Vec<(Text<'a>, u64)>,
}

impl ContextAnswer<'_> {
    /// Every packed file, `(path, bytes)`.
    fn packed(&self) -> impl Iterator<Item = (&str, u64)> {
        let PackedColumns { paths, bytes } = &self.packed;
        paths.iter().map(|path| &*path.0).zip(bytes.iter().copied())
    }

    /// Every dropped file, `(item, reason)`.
    fn dropped(&self) -> impl Iterator<Item = (&str, &str)> {
        let DroppedColumns { items, reasons } = &self.dropped;
        let reasons = reasons
            .iter()
            .flat_map(|(reason, run)| std::iter::repeat_n(&*reason.0, *run as usize));
        items.iter().map(|item| &*item.0).zip(reasons)
    }
}

/// Renders a `context` answer, the human view or `--json`; returns the exit
/// code.
pub fn context(out: &mut impl Write, json: bool, frame: &trellis_rpc::ResultFrame) -> u8 {
    let answer: ContextAnswer<'_> = match frame.decode() {
        Ok(answer) => answer,
        Err(message) => {
            eprintln!("trellis: the daemon's context answer: {message}");
            return 1;
        }
    };
    if json {
        let _ = writeln!(out, "{}", context_json(&answer));
        0
    } else {
        context_report(out, &answer)
    }
}

/// `trellis context --json`: an object per packed and dropped file, and none
/// of what the answer says about the daemon's work (`timings`, `write`,
/// `answer_us`: they depend on what it did before, not on the request).
fn context_json(answer: &ContextAnswer<'_>) -> Value {
    let packed: Vec<Value> = answer
        .packed()
        .map(|(path, bytes)| {
            serde_json::json!({
                "path": path,
                "bytes": bytes,
                "tokens": trellis_context::tokens(bytes as usize),
            })
        })
        .collect();
    let dropped: Vec<Value> = answer
        .dropped()
        .map(|(item, reason)| serde_json::json!({ "item": item, "reason": reason }))
        .collect();
    serde_json::json!({
        "definition": answer.definition.0,
        "dir": answer.dir.0,
        "budget": answer.budget,
        "estimate": answer.estimate,
        "hash": answer.hash.0,
        "packed": packed,
        "dropped": dropped,
    })
}

/// What `trellis context` packed and dropped, with sizes (trellis-daemon §5).
/// One line per file, thousands of them for a large root: each line is padded
/// by hand into one reused buffer (`{:<40}` pads a character at a time) and
/// handed to the buffered `out`, never gathered into one large string.
fn context_report(out: &mut impl Write, answer: &ContextAnswer<'_>) -> u8 {
    let _ = writeln!(
        out,
        "context bundle for {} in {}: estimate {} tokens of a {} token budget",
        answer.definition.0, answer.dir.0, answer.estimate, answer.budget
    );
    let pad = |line: &mut String, width: usize, used: usize| {
        const SPACES: &str = "                                        ";
        let mut missing = width.saturating_sub(used);
        while missing > 0 {
            let run = missing.min(SPACES.len());
            line.push_str(&SPACES[..run]);
            missing -= run;
        }
    };
    // A number's decimal digits, without an allocation.
    let digits = |mut n: u64, buffer: &mut [u8; 20]| -> usize {
        let mut at = buffer.len();
        loop {
            at -= 1;
            buffer[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                return at;
            }
        }
    };
    let mut line = String::with_capacity(128);
    let mut buffer = [0u8; 20];
    for (path, bytes) in answer.packed() {
        let tokens = trellis_context::tokens(bytes as usize);
        line.clear();
        line.push_str("  packed   ");
        line.push_str(path);
        pad(&mut line, 40, path.chars().count());
        line.push(' ');
        let at = digits(bytes, &mut buffer);
        pad(&mut line, 7, buffer.len() - at);
        line.push_str(std::str::from_utf8(&buffer[at..]).unwrap_or("?"));
        line.push_str(" bytes  ~");
        let at = digits(tokens, &mut buffer);
        line.push_str(std::str::from_utf8(&buffer[at..]).unwrap_or("?"));
        line.push_str(" tokens\n");
        let _ = out.write_all(line.as_bytes());
    }
    for (item, reason) in answer.dropped() {
        line.clear();
        line.push_str("  dropped  ");
        line.push_str(item);
        pad(&mut line, 40, item.chars().count());
        line.push(' ');
        line.push_str(reason);
        line.push('\n');
        let _ = out.write_all(line.as_bytes());
    }
    0
}

fn written_report(out: &mut impl Write, result: &Value) -> u8 {
    let errors = result["errors"].as_array().cloned().unwrap_or_default();
    diagnostics(out, &errors);
    let written = result["written"].as_array().cloned().unwrap_or_default();
    for path in &written {
        let _ = writeln!(out, "wrote {}", path.as_str().unwrap_or("?"));
    }
    if written.is_empty() && errors.is_empty() {
        let _ = writeln!(out, "every lock was already up to date");
    }
    u8::from(!errors.is_empty())
}

fn check_report(out: &mut impl Write, result: &Value) -> u8 {
    let errors = result["errors"].as_array().cloned().unwrap_or_default();
    diagnostics(out, &errors);
    let holes = result["holes"].as_array().cloned().unwrap_or_default();
    open_holes(out, &holes);
    let checked = result["checked"].as_u64().unwrap_or(0);
    let problems = if errors.is_empty() {
        "no problems".to_owned()
    } else {
        counted(errors.len(), "problem")
    };
    let holes = if holes.is_empty() {
        String::new()
    } else {
        format!("; {}", counted(holes.len(), "open hole"))
    };
    let _ = writeln!(out, "checked {checked} definitions: {problems}{holes}");
    u8::from(!errors.is_empty())
}

/// Each open hole as a person reads it: its goal, where it is, what is in scope.
fn open_holes(out: &mut impl Write, holes: &[Value]) {
    for hole in holes {
        let _ = writeln!(
            out,
            "hole[?{}] in {}: {}",
            hole["hole"].as_str().unwrap_or("?"),
            hole["def"].as_str().unwrap_or("?"),
            hole["goal"].as_str().unwrap_or("?"),
        );
        if let Some(file) = hole["file"].as_str() {
            match (hole["line"].as_u64(), hole["column"].as_u64()) {
                (Some(line), Some(column)) => {
                    let _ = writeln!(out, "  --> {file}:{line}:{column}");
                }
                _ => {
                    let _ = writeln!(out, "  --> {file}");
                }
            }
        }
        let scope: Vec<String> = hole["scope"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|entry| {
                format!(
                    "{} : {}",
                    entry["name"].as_str().unwrap_or("?"),
                    entry["type"].as_str().unwrap_or("?")
                )
            })
            .collect();
        if scope.is_empty() {
            let _ = writeln!(out, "  = in scope: nothing");
        } else {
            let _ = writeln!(out, "  = in scope:");
            for entry in scope {
                let _ = writeln!(out, "      {entry}");
            }
        }
    }
}

/// `1 problem`, `2 problems`.
fn counted(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

fn status_table(out: &mut impl Write, result: &Value, all: bool) -> u8 {
    // Files that could not be loaded come first: the rows below show what the
    // database last read of them, which the disk no longer says.
    let problems = result["problems"].as_array().cloned().unwrap_or_default();
    diagnostics(out, &problems);
    let empty = Vec::new();
    let rows = result["definitions"].as_array().unwrap_or(&empty);
    let settled = |row: &Value| matches!(row["status"].as_str(), Some("green" | "accepted"));
    // By default only the rows that need work: at thousands of definitions the
    // green ones would bury them. The summary below still counts every row.
    let shown: Vec<&Value> = rows.iter().filter(|row| all || !settled(row)).collect();
    let column_width = |key: &str, least: usize| {
        shown
            .iter()
            .filter_map(|row| row[key].as_str())
            .map(str::len)
            .max()
            .unwrap_or(least)
    };
    let (width, status_width) = (column_width("name", 10), column_width("status", 6));
    for row in &shown {
        let name = row["name"].as_str().unwrap_or("?");
        let status = row["status"].as_str().unwrap_or("?");
        let mut line = format!("{name:<width$}  {status:<status_width$}");
        if let Some(reason) = row["reason"].as_str() {
            line.push_str(&format!("  {reason}"));
        }
        if let Some(fix) = row["fix"].as_str() {
            line.push_str(&format!(" → {fix}"));
        }
        let _ = writeln!(out, "{}", line.trim_end());
        if let Some(answer) = row["triage"]["answer"].as_str() {
            let _ = writeln!(
                out,
                "{:width$}  triage of `{}`: {answer}",
                "",
                row["triage"]["label"].as_str().unwrap_or("?")
            );
        }
    }
    let definitions: Vec<&Value> = rows
        .iter()
        .filter(|row| row["kind"] == "function")
        .collect();
    let green = definitions.iter().filter(|row| settled(row)).count();
    let unsettled = |kind: &str| {
        rows.iter()
            .filter(|row| row["kind"] == kind)
            .filter(|row| !settled(row))
            .count()
    };
    let (flagged_scopes, unsettled_types) = (unsettled("scope"), unsettled("type"));
    let mut summary = format!("{green} of {} definitions green", definitions.len());
    if flagged_scopes > 0 {
        let verb = if flagged_scopes == 1 { "needs" } else { "need" };
        summary.push_str(&format!(
            "; {} {verb} attention",
            counted(flagged_scopes, "decision scope")
        ));
    }
    if unsettled_types > 0 {
        let verb = if unsettled_types == 1 {
            "needs"
        } else {
            "need"
        };
        summary.push_str(&format!(
            "; {} {verb} attention",
            counted(unsettled_types, "type")
        ));
    }
    if !problems.is_empty() {
        summary.push_str(&format!(
            "; {} could not be loaded",
            counted(problems.len(), "file")
        ));
    }
    let questions = result["questions"].as_array().cloned().unwrap_or_default();
    for question in &questions {
        status_question(out, question);
    }
    if !questions.is_empty() {
        summary.push_str(&format!("; {}", counted(questions.len(), "open question")));
    }
    let hidden = rows.len() - shown.len();
    if hidden > 0 {
        summary.push_str(&format!(
            " ({} not shown: trellis status --all)",
            counted(hidden, "green row")
        ));
    }
    let _ = writeln!(out, "{summary}");
    u8::from(!problems.is_empty())
}

/// An open question as `status` lists it: what it is, when it was asked, the
/// command that answers it, then the question and its options.
fn status_question(out: &mut impl Write, question: &Value) {
    let def = question["def"].as_str().unwrap_or("?");
    let fix = if question["stale"] == true {
        format!(
            "stale: its spec changed since it was asked → lower {def} again, or delete {}",
            question["file"].as_str().unwrap_or("?")
        )
    } else {
        format!("→ trellis answer {def}")
    };
    let _ = writeln!(
        out,
        "question[{}] {def}, {} {fix}",
        question["kind"]["tag"].as_str().unwrap_or("?"),
        asked_when(question)
    );
    question_text(out, question);
}

/// An open question as `trellis answer` asks it.
pub fn open_question(out: &mut impl Write, question: &Value) {
    let _ = writeln!(
        out,
        "{} asks ({}, {}):",
        question["def"].as_str().unwrap_or("?"),
        question["kind"]["tag"].as_str().unwrap_or("?"),
        asked_when(question)
    );
    question_text(out, question);
}

/// `asked 2026-12-01T09:30:00Z`, and the hole the question blocks on, if any.
fn asked_when(question: &Value) -> String {
    let mut when = format!("asked {}", question["created"].as_str().unwrap_or("?"));
    if let Some(hole) = soil_option(&question["hole"]).and_then(Value::as_str) {
        when.push_str(&format!(", blocking ?{hole}"));
    }
    when
}

/// The question's lines and its numbered options, indented.
fn question_text(out: &mut impl Write, question: &Value) {
    for line in question["question"].as_str().unwrap_or("").lines() {
        let _ = writeln!(out, "  {line}");
    }
    for (n, option) in question["options"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let _ = writeln!(out, "  {}. {}", n + 1, option.as_str().unwrap_or("?"));
    }
}

/// `status --verify`: the rows where the memoized status and a from-scratch
/// recomputation disagree, or a line saying they all agree.
fn verify_report(out: &mut impl Write, result: &Value) -> u8 {
    let disagreements = result["disagreements"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let rows = result["definitions"].as_array().map_or(0, Vec::len);
    for row in &disagreements {
        let _ = writeln!(
            out,
            "{}: status says {}, a fresh recomputation says {}: {}",
            row["name"].as_str().unwrap_or("?"),
            row["recorded"].as_str().unwrap_or("?"),
            row["verified"].as_str().unwrap_or("?"),
            row["reason"].as_str().unwrap_or("")
        );
    }
    if disagreements.is_empty() {
        let _ = writeln!(
            out,
            "verified: all {} agree with a fresh recomputation ({} re-run)",
            counted(rows, "status row"),
            counted(result["suites_run"].as_u64().unwrap_or(0) as usize, "suite")
        );
        0
    } else {
        let _ = writeln!(
            out,
            "{} of {} disagree with a fresh recomputation",
            disagreements.len(),
            counted(rows, "status row")
        );
        1
    }
}

/// One line per progress event of a long command (on stderr).
pub fn progress(out: &mut impl Write, event: &Value) {
    match event["event"].as_str() {
        Some("job") => job_event(out, event),
        Some("started") => {
            let _ = writeln!(out, "testing {}", event["def"].as_str().unwrap_or("?"));
        }
        Some("row") => {
            let _ = writeln!(
                out,
                "  {:<6} {}",
                event["result"].as_str().unwrap_or("?"),
                event["row"].as_str().unwrap_or("?")
            );
        }
        _ => {}
    }
}

/// The `trellis test` report: per definition a verdict, per failure the case, the
/// expected and actual values and the shrunk counterexample.
fn test_report(out: &mut impl Write, result: &Value) -> u8 {
    let mut failing = 0;
    for entry in result["results"].as_array().into_iter().flatten() {
        let def = entry["def"].as_str().unwrap_or("?");
        let rows = entry["rows"].as_array().map_or(0, Vec::len);
        let preflight = entry["preflight"].as_array().cloned().unwrap_or_default();
        if !preflight.is_empty() {
            failing += 1;
            let _ = writeln!(out, "{def}: stopped by pre-flight");
            diagnostics(out, &preflight);
            continue;
        }
        let not_derived = entry["not_derived"].as_array().cloned().unwrap_or_default();
        if entry["green"] == true {
            let _ = writeln!(out, "{def}: {rows} rows, all green");
            for note in &not_derived {
                let _ = writeln!(out, "  note: {}", note.as_str().unwrap_or(""));
            }
            continue;
        }
        failing += 1;
        let _ = writeln!(out, "{def}: FAILING");
        for failure in entry["failures"].as_array().into_iter().flatten() {
            let _ = writeln!(
                out,
                "  {}: {}",
                failure["row"].as_str().unwrap_or("?"),
                failure["message"].as_str().unwrap_or("")
            );
            for (label, key) in [
                ("case", "case"),
                ("expected", "expected"),
                ("actual", "actual"),
            ] {
                if let Some(text) = failure[key].as_str() {
                    let _ = writeln!(out, "    {label:<9} {text}");
                }
            }
            if let Some(shrunk) = failure["shrunk"].as_array() {
                let parts: Vec<&str> = shrunk.iter().filter_map(Value::as_str).collect();
                let _ = writeln!(out, "    shrunk    {}", parts.join(", "));
            }
        }
    }
    for skip in result["skipped"].as_array().into_iter().flatten() {
        let reason = skip["reason"].as_str().unwrap_or("");
        if reason != "up to date" {
            let _ = writeln!(
                out,
                "{}: skipped ({reason})",
                skip["def"].as_str().unwrap_or("?")
            );
        }
    }
    let errors = result["errors"].as_array().cloned().unwrap_or_default();
    diagnostics(out, &errors);
    let ran = result["ran"].as_array().map_or(0, Vec::len);
    let up_to_date = result["skipped"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["reason"] == "up to date")
        .count();
    let _ = writeln!(
        out,
        "ran {} ({failing} failing); {up_to_date} already up to date",
        counted(ran, "suite")
    );
    u8::from(failing > 0 || !errors.is_empty())
}

/// One lowering job state change, one line (`trellis lower`).
pub fn job_event(out: &mut impl Write, event: &Value) {
    let def = event["def"].as_str().unwrap_or("?");
    let state = event["state"].as_str().unwrap_or("?");
    let detail = &event["detail"];
    let note = match state {
        "queued" | "started" => match detail["attempt"].as_u64() {
            Some(attempt) if attempt > 1 => format!(" (attempt {attempt})"),
            _ => String::new(),
        },
        "agent" => format!(
            " {} ({})",
            event["job"].as_str().unwrap_or("?"),
            detail["provider"].as_str().unwrap_or("?")
        ),
        "green" => format!(" → {}", detail["soil"].as_str().unwrap_or("?")),
        "partial" => format!(" with holes {}", list(&detail["holes"])),
        "question" => format!(" asked: see {}", detail["question"].as_str().unwrap_or("?")),
        "invalidated" => format!(" ({}), re-queued", detail["reason"].as_str().unwrap_or("?")),
        "conforms" => " — the edge is re-stamped".to_owned(),
        "nonconforming" => format!(
            " — left flagged: {}",
            detail["answer"].as_str().unwrap_or("?")
        ),
        _ => String::new(),
    };
    let _ = writeln!(out, "{def}: {state}{note}");
    if state == "failed" {
        for error in detail["errors"].as_array().into_iter().flatten() {
            let _ = writeln!(
                out,
                "  error[{}]: {}",
                error["code"].as_str().unwrap_or("?"),
                error["message"].as_str().unwrap_or("")
            );
        }
        for failure in detail["failures"].as_array().into_iter().flatten() {
            let _ = writeln!(
                out,
                "  {}: {}",
                failure["row"].as_str().unwrap_or("?"),
                failure["message"].as_str().unwrap_or("")
            );
        }
    }
}

fn list(values: &Value) -> String {
    values
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The end of `trellis lower`: a count per outcome; exit 1 unless all are green.
pub fn lower_summary(out: &mut impl Write, result: &Value, json: bool) -> u8 {
    let outcomes = result["outcomes"].as_array().cloned().unwrap_or_default();
    let not_green = outcomes
        .iter()
        .filter(|o| !matches!(o["state"].as_str(), Some("green" | "conforms")))
        .count();
    if json {
        let mut result = result.clone();
        if let Value::Object(fields) = &mut result {
            fields.remove("timings");
        }
        let _ = writeln!(out, "{}", serde_json::json!({ "summary": result }));
        return u8::from(not_green > 0);
    }
    for skipped in result["skipped"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "{}: skipped, {}",
            skipped["def"].as_str().unwrap_or("?"),
            skipped["reason"].as_str().unwrap_or("")
        );
    }
    for def in result["already_queued"].as_array().into_iter().flatten() {
        let _ = writeln!(out, "{}: already queued", def.as_str().unwrap_or("?"));
    }
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for outcome in &outcomes {
        *counts
            .entry(outcome["state"].as_str().unwrap_or("?"))
            .or_default() += 1;
    }
    if outcomes.is_empty() {
        let _ = writeln!(out, "nothing to lower");
    } else {
        let parts: Vec<String> = counts
            .iter()
            .map(|(state, n)| format!("{n} {state}"))
            .collect();
        let _ = writeln!(out, "lowered {}: {}", outcomes.len(), parts.join(", "));
    }
    u8::from(not_green > 0)
}

/// `trellis jobs`: the queue, the running job, the finished ones.
fn jobs_report(out: &mut impl Write, result: &Value) -> u8 {
    let running = &result["running"];
    if running.is_null() {
        let _ = writeln!(out, "running: nothing");
    } else {
        let _ = writeln!(
            out,
            "running: {} {} (attempt {}, {:.1} s)",
            running["def"].as_str().unwrap_or("?"),
            running["job"].as_str().unwrap_or("-"),
            running["attempt"],
            running["seconds"].as_f64().unwrap_or(0.0)
        );
    }
    let pending = result["pending"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = pending.iter().filter_map(|p| p["def"].as_str()).collect();
    let _ = writeln!(
        out,
        "queued: {}",
        if names.is_empty() {
            "nothing".to_owned()
        } else {
            names.join(", ")
        }
    );
    let finished = result["finished"].as_array().cloned().unwrap_or_default();
    if !finished.is_empty() {
        let _ = writeln!(out, "finished:");
    }
    for job in &finished {
        let _ = writeln!(
            out,
            "  {:<28} {:<12} {:<11} {:.1} s",
            job["def"].as_str().unwrap_or("?"),
            job["outcome"].as_str().unwrap_or("?"),
            job["job"].as_str().unwrap_or("-"),
            job["seconds"].as_f64().unwrap_or(0.0)
        );
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An answer as the service sends it: file lists in columns.
    fn context_answer() -> Value {
        serde_json::json!({
            "definition": "m/f",
            "dir": "/r/.trellis/context/m/f",
            "budget": 100,
            "estimate": 120,
            "hash": "sha256:00",
            "packed": {
                "paths": ["bundle.json", "callees/a_name_longer_than_forty_characters_in_all.md", "callees/ünïcode.md", "callees/q\"uote.md", "empty.md"],
                "bytes": [401, 12345678, 7, 5, 0],
            },
            "dropped": {
                "items": ["examples/m/g.tr", "examples/m/g.soil", "module.md"],
                "reasons": [["over budget", 2], ["after over budget", 1]],
            },
            "write": { "us": 5, "files": 0, "removed": 0, "vouched": "watch" },
            "answer_us": 3,
            "timings": { "refresh_us": 1 },
        })
    }

    /// The hand-padded lines are what `{:<40}` and `{:>7}` would print, for
    /// long, non-ASCII and escaped paths alike.
    #[test]
    fn the_context_report_pads_like_the_formatter() {
        let mut out = Vec::new();
        context(
            &mut out,
            false,
            &trellis_rpc::ResultFrame::of(&context_answer()),
        );
        let mut expected =
            "context bundle for m/f in /r/.trellis/context/m/f: estimate 120 tokens of a 100 token budget\n"
                .to_owned();
        for (path, bytes) in [
            ("bundle.json", 401usize),
            (
                "callees/a_name_longer_than_forty_characters_in_all.md",
                12345678,
            ),
            ("callees/ünïcode.md", 7),
            ("callees/q\"uote.md", 5),
            ("empty.md", 0),
        ] {
            let tokens = trellis_context::tokens(bytes);
            expected.push_str(&format!(
                "  packed   {path:<40} {bytes:>7} bytes  ~{tokens} tokens\n"
            ));
        }
        for (item, reason) in [
            ("examples/m/g.tr", "over budget"),
            ("examples/m/g.soil", "over budget"),
            ("module.md", "after over budget"),
        ] {
            expected.push_str(&format!("  dropped  {item:<40} {reason}\n"));
        }
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }

    /// `--json` has an object per file, the reasons expanded from their runs,
    /// and neither the timings nor the account of the write.
    #[test]
    fn the_context_json_has_an_object_per_file() {
        expect_test::expect![[r#"{"definition":"m/f","dir":"/r/.trellis/context/m/f","budget":100,"estimate":120,"hash":"sha256:00","packed":[{"path":"bundle.json","bytes":401,"tokens":101},{"path":"callees/a_name_longer_than_forty_characters_in_all.md","bytes":12345678,"tokens":3086420},{"path":"callees/ünïcode.md","bytes":7,"tokens":2},{"path":"callees/q\"uote.md","bytes":5,"tokens":2},{"path":"empty.md","bytes":0,"tokens":0}],"dropped":[{"item":"examples/m/g.tr","reason":"over budget"},{"item":"examples/m/g.soil","reason":"over budget"},{"item":"module.md","reason":"after over budget"}]}"#]]
        .assert_eq(&{
            let mut out = Vec::new();
            context(&mut out, true, &trellis_rpc::ResultFrame::of(&context_answer()));
            String::from_utf8(out).unwrap().trim_end().to_owned()
        });
    }
}
