//! Human-readable output. The daemon answers in JSON; the client decodes it
//! into the protocol's types (`trellis_service::protocol`) and renders them here, so
//! `--json` output and the human view come from the same document.

use std::io::Write;

use serde::de::DeserializeOwned;
use serde_json::Value;
use trellis_diag::Diagnostic;

use crate::args::Command;
use trellis_service::protocol::{
    AdoptAnswer, CheckAnswer, ContextAnswer, EditorialAnswer, OpenHole, Question, RefreshAnswer,
    ReviewAnswer, StatusAnswer, StatusRow, TestAnswer, TestEvent, TestProgress, Timings,
    ToolchainAnswer, UP_TO_DATE, VerifyAnswer, decode_answer, is_settled,
};

/// Renders diagnostics like a compiler: code, message, location, notes, and the
/// repair class with the section stating the rule.
pub fn diagnostics(out: &mut impl Write, errors: &[Diagnostic]) {
    for error in errors {
        let _ = writeln!(out, "error[{}]: {}", error.code, error.message);
        match (&error.file, &error.span) {
            (Some(file), Some(span)) => {
                let _ = writeln!(
                    out,
                    "  --> {file}:{}:{}",
                    span.start.line, span.start.column
                );
            }
            (Some(file), None) => {
                let _ = writeln!(out, "  --> {file}");
            }
            _ => {}
        }
        for note in &error.notes {
            let _ = writeln!(out, "  = note: {}", note.message);
        }
        if !error.spec_ref.is_empty() {
            let _ = writeln!(
                out,
                "  = fix: {} (see {})",
                error.repair_class, error.spec_ref
            );
        }
    }
}

/// A command's errors: the `{"errors":[…]}` document on `out` under `--json`,
/// else [`diagnostics`] on stderr.
pub fn errors(out: &mut impl Write, json: bool, errors: &[Diagnostic]) {
    if json {
        let _ = writeln!(out, "{}", trellis_diag::errors_document(errors));
    } else {
        diagnostics(&mut std::io::stderr(), errors);
    }
}

/// `--json`: the daemon's document as it came, less what it says about the
/// daemon's own work (`timings`: it depends on what it did before, not on the
/// request).
fn json_document(out: &mut impl Write, result: &Value) {
    let mut result = result.clone();
    if let Value::Object(fields) = &mut result {
        fields.remove("timings");
    }
    let _ = writeln!(out, "{result}");
}

/// Decodes an answer for its renderer; an answer that does not decode is
/// reported (the daemon and this client disagree on the protocol) and exits 1.
fn decoded<T: DeserializeOwned>(result: &Value, render: impl FnOnce(T) -> u8) -> u8 {
    match decode_answer(result) {
        Ok(answer) => render(answer),
        Err(message) => {
            eprintln!("trellis: {message}");
            1
        }
    }
}

/// Renders a successful answer; returns the exit code.
pub fn answer(out: &mut impl Write, command: &Command, result: &Value) -> u8 {
    match command {
        Command::Status { json: true, .. } => {
            json_document(out, result);
            let has = |key: &str| {
                result[key]
                    .as_array()
                    .is_some_and(|items| !items.is_empty())
            };
            u8::from(has("problems") || has("disagreements") || has("flips"))
        }
        Command::Status {
            json: false,
            verify: true,
            ..
        } => decoded(result, |answer: VerifyAnswer| verify_report(out, &answer)),
        Command::Status { json: false, .. } => {
            decoded(result, |answer: StatusAnswer| status_table(out, &answer))
        }
        Command::Jobs { json: true } => {
            json_document(out, result);
            0
        }
        Command::Jobs { json: false } => jobs_report(out, result),
        Command::Check { json: true, .. } => {
            json_document(out, result);
            u8::from(result["errors"].as_array().is_some_and(|e| !e.is_empty()))
        }
        Command::Check { json: false, .. } => {
            decoded(result, |answer: CheckAnswer| check_report(out, &answer))
        }
        // The document as it came, with the exit code the human view gives.
        command if command.json() => {
            let code = human(&mut std::io::sink(), command, result);
            json_document(out, result);
            code
        }
        command => human(out, command, result),
    }
}

/// The human view of the answers whose `--json` is the document as it came.
fn human(out: &mut impl Write, command: &Command, result: &Value) -> u8 {
    match command {
        Command::Adopt { .. } => decoded(result, |answer: AdoptAnswer| {
            let code = written_report(out, &answer.written, &answer.errors);
            for name in &answer.unaccepted {
                let _ = writeln!(
                    out,
                    "{name}: `accepted` reset to false: what the acceptance stood on (the spec, the Soil or a callee) changed since it was given"
                );
            }
            code
        }),
        Command::DecisionsEditorial { .. } => decoded(result, |answer: EditorialAnswer| {
            written_report(out, &answer.written, &answer.errors)
        }),
        Command::Test { .. } => decoded(result, |answer: TestAnswer| test_report(out, &answer)),
        Command::Refresh { .. } => decoded(result, |answer: RefreshAnswer| {
            let changed = decode_answer::<Timings>(&result["timings"])
                .map_or(0, |timings| timings.files_changed);
            diagnostics(out, &answer.problems);
            let _ = writeln!(out, "refreshed the root: {changed} files changed");
            u8::from(!answer.problems.is_empty())
        }),
        Command::Review { .. } => decoded(result, |answer: ReviewAnswer| {
            let _ = writeln!(
                out,
                "reviewed {}: its prose edit is accepted",
                answer.reviewed
            );
            0
        }),
        Command::ToolchainUpdate { .. } => decoded(result, |answer: ToolchainAnswer| {
            let _ = writeln!(
                out,
                "soil.toml pins trellis {} / soil0 {} / skill {}{}",
                answer.trellis,
                answer.soil0_cli,
                answer.skill,
                if answer.changed { "" } else { " (already)" }
            );
            0
        }),
        _ => {
            let _ = writeln!(out, "{result}");
            0
        }
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
    // The manifest lists what was packed, so it is counted after the packing,
    // outside the budget (trellis-daemon §5): say so, or the estimate reads as
    // a budget overrun.
    let manifest = answer
        .packed()
        .find(|(path, _)| *path == "bundle.json")
        .map_or(0, |(_, bytes)| trellis_context::tokens(bytes as usize));
    let _ = writeln!(
        out,
        "context bundle for {} in {}: about {} tokens — files of {} tokens packed within \
         the {}-token budget, plus {} for bundle.json, the manifest, which lists the \
         packing and so is not counted against it",
        answer.definition.0,
        answer.dir.0,
        answer.estimate,
        answer.estimate.saturating_sub(manifest),
        answer.budget,
        manifest
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
    let dropped = answer.dropped().count();
    if dropped > 0 {
        let _ = writeln!(
            out,
            "{} did not fit the budget, lowest priority last (a larger --budget packs more)",
            counted(dropped, "file")
        );
    }
    0
}

fn written_report(out: &mut impl Write, written: &[String], errors: &[Diagnostic]) -> u8 {
    diagnostics(out, errors);
    for path in written {
        let _ = writeln!(out, "wrote {path}");
    }
    if written.is_empty() && errors.is_empty() {
        let _ = writeln!(out, "every lock was already up to date");
    }
    u8::from(!errors.is_empty())
}

fn check_report(out: &mut impl Write, answer: &CheckAnswer) -> u8 {
    diagnostics(out, &answer.errors);
    open_holes(out, &answer.holes);
    let problems = if answer.errors.is_empty() {
        "no problems".to_owned()
    } else {
        counted(answer.errors.len(), "problem")
    };
    let holes = if answer.holes.is_empty() {
        String::new()
    } else {
        format!("; {}", counted(answer.holes.len(), "open hole"))
    };
    let checked = counted(answer.checked, "definition");
    let _ = writeln!(out, "checked {checked}: {problems}{holes}");
    u8::from(!answer.errors.is_empty())
}

/// Each open hole as a person reads it: its goal, where it is, what is in scope.
fn open_holes(out: &mut impl Write, holes: &[OpenHole]) {
    for hole in holes {
        let _ = writeln!(out, "hole[?{}] in {}: {}", hole.hole, hole.def, hole.goal);
        if let Some(file) = &hole.file {
            match (hole.line, hole.column) {
                (Some(line), Some(column)) => {
                    let _ = writeln!(out, "  --> {file}:{line}:{column}");
                }
                _ => {
                    let _ = writeln!(out, "  --> {file}");
                }
            }
        }
        if hole.scope.is_empty() {
            let _ = writeln!(out, "  = in scope: nothing");
        } else {
            let _ = writeln!(out, "  = in scope:");
            for entry in &hole.scope {
                let _ = writeln!(out, "      {} : {}", entry.name, entry.ty);
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

/// The status table: every row the answer carries — by default a few rows of
/// each status that needs work, the daemon counting the rest (`omitted`: at
/// thousands of definitions the full table would bury what matters), or every
/// row (`--all`) — then a line per status some of whose rows were left out, and
/// a summary that counts every row either way.
fn status_table(out: &mut impl Write, answer: &StatusAnswer) -> u8 {
    // Files that could not be loaded come first: the rows below show what the
    // database last read of them, which the disk no longer says.
    diagnostics(out, &answer.problems);
    let rows = &answer.definitions;
    let column_width = |column: fn(&StatusRow) -> &str, least: usize| {
        rows.iter()
            .map(|row| column(row).len())
            .max()
            .unwrap_or(least)
    };
    let width = column_width(|row| &row.name, 10);
    let status_width = column_width(|row| &row.status, 6);
    let mut line = String::with_capacity(128);
    for row in rows {
        line.clear();
        let (name, status) = (&row.name, &row.status);
        let _ = std::fmt::Write::write_fmt(
            &mut line,
            format_args!("{name:<width$}  {status:<status_width$}"),
        );
        if let Some(reason) = &row.reason {
            line.push_str("  ");
            line.push_str(reason);
        }
        if let Some(fix) = &row.fix {
            line.push_str(" → ");
            line.push_str(fix);
        }
        let _ = writeln!(out, "{}", line.trim_end());
        if let Some(triage) = &row.triage {
            let _ = writeln!(
                out,
                "{:width$}  triage of `{}`: {}",
                "", triage.label, triage.answer
            );
        }
    }
    // Every row counted, shown or omitted: (status, kind, how many).
    let counted_rows = rows
        .iter()
        .map(|row| (row.status.as_str(), row.kind.as_str(), 1))
        .chain(
            answer
                .omitted
                .iter()
                .map(|o| (o.status.as_str(), o.kind.as_str(), o.count)),
        );
    let count = |wanted: &dyn Fn(&str, &str) -> bool| -> usize {
        counted_rows
            .clone()
            .filter(|(status, kind, _)| wanted(status, kind))
            .map(|(_, _, n)| n)
            .sum()
    };
    let green = count(&|status, kind| kind == "function" && is_settled(status));
    let functions = count(&|_, kind| kind == "function");
    let flagged_scopes = count(&|status, kind| kind == "scope" && !is_settled(status));
    let unsettled_types = count(&|status, kind| kind == "type" && !is_settled(status));
    let mut left_out: Vec<(&str, usize)> = Vec::new();
    for omitted in answer.omitted.iter().filter(|o| !is_settled(&o.status)) {
        match left_out
            .iter_mut()
            .find(|(status, _)| *status == omitted.status)
        {
            Some((_, n)) => *n += omitted.count,
            None => left_out.push((&omitted.status, omitted.count)),
        }
    }
    for (status, n) in left_out {
        let _ = writeln!(
            out,
            "… {n} more `{status}` {} (trellis status --all lists every row)",
            if n == 1 { "row" } else { "rows" }
        );
    }
    let mut summary = format!("{green} of {functions} definitions green");
    let attention = |summary: &mut String, count: usize, noun: &str| {
        if count > 0 {
            let verb = if count == 1 { "needs" } else { "need" };
            summary.push_str(&format!("; {} {verb} attention", counted(count, noun)));
        }
    };
    attention(&mut summary, flagged_scopes, "decision scope");
    attention(&mut summary, unsettled_types, "type");
    if !answer.problems.is_empty() {
        summary.push_str(&format!(
            "; {} could not be loaded",
            counted(answer.problems.len(), "file")
        ));
    }
    for question in &answer.questions {
        status_question(out, question);
    }
    if !answer.questions.is_empty() {
        summary.push_str(&format!(
            "; {}",
            counted(answer.questions.len(), "open question")
        ));
    }
    let hidden: usize = (answer.omitted.iter())
        .filter(|omitted| is_settled(&omitted.status))
        .map(|omitted| omitted.count)
        .sum();
    if hidden > 0 {
        summary.push_str(&format!(
            " ({} not shown: trellis status --all)",
            counted(hidden, "green row")
        ));
    }
    let _ = writeln!(out, "{summary}");
    u8::from(!answer.problems.is_empty())
}

/// An open question as `status` lists it: what it is, when it was asked, the
/// command that answers it, then the question and its options.
fn status_question(out: &mut impl Write, question: &Question) {
    let def = &question.def;
    let fix = if question.stale {
        format!(
            "stale: its spec changed since it was asked → lower {def} again, or delete {}",
            question.file
        )
    } else {
        format!("→ trellis answer {def}")
    };
    let _ = writeln!(
        out,
        "question[{}] {def}, {} {fix}",
        question.kind.tag,
        asked_when(question)
    );
    question_text(out, question);
}

/// An open question as `trellis answer` asks it.
pub fn open_question(out: &mut impl Write, question: &Question) {
    let _ = writeln!(
        out,
        "{} asks ({}, {}):",
        question.def,
        question.kind.tag,
        asked_when(question)
    );
    question_text(out, question);
}

/// `asked 2026-12-01T09:30:00Z`, and the hole the question blocks on, if any.
fn asked_when(question: &Question) -> String {
    let mut when = format!("asked {}", question.created);
    if let Some(hole) = &question.hole {
        when.push_str(&format!(", blocking ?{hole}"));
    }
    when
}

/// The question's lines and its numbered options, indented.
fn question_text(out: &mut impl Write, question: &Question) {
    for line in question.question.lines() {
        let _ = writeln!(out, "  {line}");
    }
    for (n, option) in question.options.iter().enumerate() {
        let _ = writeln!(out, "  {}. {option}", n + 1);
    }
}

/// `status --verify`: the rows where the memoized status and a from-scratch
/// recomputation disagree, or a line saying they all agree.
fn verify_report(out: &mut impl Write, answer: &VerifyAnswer) -> u8 {
    let rows = answer.definitions.len();
    for row in &answer.disagreements {
        let _ = writeln!(
            out,
            "{}: status says {}, a fresh recomputation says {}: {}",
            row.name,
            row.recorded,
            row.verified,
            row.reason.as_deref().unwrap_or("")
        );
    }
    for flip in &answer.flips {
        let _ = writeln!(
            out,
            "{}: `{}` is recorded {}, a fresh sample (seed {}) makes it {}: {}",
            flip.def,
            flip.row,
            flip.recorded,
            flip.seed,
            flip.fresh,
            flip.message.as_deref().unwrap_or("")
        );
    }
    if let Some(seeds) = answer.reseeded {
        let _ = writeln!(
            out,
            "reseeded: {} tried per confirmed suite; {} would flip",
            counted(seeds as usize, "fresh seed"),
            counted(answer.flips.len(), "recorded row")
        );
    }
    if answer.disagreements.is_empty() {
        let _ = writeln!(
            out,
            "verified: all {} agree with a fresh recomputation ({} re-run)",
            counted(rows, "status row"),
            counted(answer.suites_run, "suite")
        );
        u8::from(!answer.flips.is_empty())
    } else {
        let _ = writeln!(
            out,
            "{} of {} disagree with a fresh recomputation",
            answer.disagreements.len(),
            counted(rows, "status row")
        );
        1
    }
}

/// One line per progress event of a long command (on stderr).
pub fn progress(out: &mut impl Write, event: &Value) {
    if event["event"] == "job" {
        return job_event(out, event);
    }
    let Ok(event) = decode_answer::<TestProgress>(event) else {
        return;
    };
    match event.event {
        TestEvent::Started => {
            let _ = writeln!(out, "testing {}", event.def);
        }
        TestEvent::Row => {
            let _ = writeln!(
                out,
                "  {:<6} {}",
                event.result.as_deref().unwrap_or("?"),
                event.row.as_deref().unwrap_or("?")
            );
        }
    }
}

/// The `trellis test` report: per definition a verdict, per failure the case, the
/// expected and actual values and the shrunk counterexample.
fn test_report(out: &mut impl Write, answer: &TestAnswer) -> u8 {
    let mut failing = 0;
    for entry in &answer.results {
        let def = &entry.def;
        if !entry.preflight.is_empty() {
            failing += 1;
            let _ = writeln!(out, "{def}: stopped by pre-flight");
            diagnostics(out, &entry.preflight);
            continue;
        }
        if entry.green {
            let reused = answer
                .cache
                .as_ref()
                .is_some_and(|cache| cache.reused.contains(def));
            let origin = if reused { " (from the cache)" } else { "" };
            let _ = writeln!(out, "{def}: {} rows, all green{origin}", entry.rows.len());
            for note in &entry.not_derived {
                let _ = writeln!(out, "  note: {note}");
            }
            continue;
        }
        failing += 1;
        let _ = writeln!(out, "{def}: FAILING");
        for failure in &entry.failures {
            let _ = writeln!(out, "  {}: {}", failure.row, failure.message);
            for (label, text) in [
                ("case", &failure.case),
                ("expected", &failure.expected),
                ("actual", &failure.actual),
            ] {
                if let Some(text) = text {
                    let _ = writeln!(out, "    {label:<9} {text}");
                }
            }
            if let Some(shrunk) = &failure.shrunk {
                let _ = writeln!(out, "    shrunk    {}", shrunk.join(", "));
            }
        }
    }
    for skip in &answer.skipped {
        if skip.reason != UP_TO_DATE {
            let _ = writeln!(out, "{}: skipped ({})", skip.def, skip.reason);
        }
    }
    diagnostics(out, &answer.errors);
    let up_to_date = answer
        .skipped
        .iter()
        .filter(|skip| skip.reason == UP_TO_DATE)
        .count();
    let mut from_cache = String::new();
    if let Some(cache) = &answer.cache {
        for rejected in &cache.rejected {
            let _ = writeln!(
                out,
                "cache: refused the entry for {} ({}); ran it here",
                rejected.def, rejected.reason
            );
        }
        for note in &cache.notes {
            let _ = writeln!(out, "cache: {note}");
        }
        if let Some(down) = &cache.down {
            let _ = writeln!(
                out,
                "cache: {} stopped answering ({down}); the rest ran here",
                cache.url
            );
        }
        from_cache = format!(
            "; {} from the cache; {} stored",
            cache.reused.len(),
            cache.stored
        );
    }
    let _ = writeln!(
        out,
        "ran {} ({failing} failing); {up_to_date} already up to date{from_cache}",
        counted(answer.ran.len(), "suite")
    );
    u8::from(failing > 0 || !answer.errors.is_empty())
}

/// One lowering job state change, one line (`trellis lower`).
pub fn job_event(out: &mut impl Write, event: &Value) {
    let def = event["def"].as_str().unwrap_or("?");
    let state = event["state"].as_str().unwrap_or("?");
    let detail = &event["detail"];
    let note = match state {
        "queued" | "started" => {
            let attempt = match detail["attempt"].as_u64() {
                Some(attempt) if attempt > 1 => format!(" (attempt {attempt})"),
                _ => String::new(),
            };
            let waits = list(&detail["waits_on"]);
            if waits.is_empty() {
                attempt
            } else {
                format!("{attempt} after {waits}")
            }
        }
        "agent" => format!(
            " {} ({})",
            event["job"].as_str().unwrap_or("?"),
            detail["provider"].as_str().unwrap_or("?")
        ),
        "green" => format!(
            " → {}{}",
            detail["soil"].as_str().unwrap_or("?"),
            capped(detail)
        ),
        "partial" => format!(" with holes {}{}", list(&detail["holes"]), capped(detail)),
        "cancelled" | "held" => format!(" — {}", detail["reason"].as_str().unwrap_or("?")),
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
    if state == "failed" || state == "cancelled" {
        let errors: Vec<Diagnostic> = decode_answer(&detail["errors"]).unwrap_or_default();
        for error in errors {
            let _ = writeln!(out, "  error[{}]: {}", error.code, error.message);
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

/// What a cap that stopped the agent adds to a green or partial outcome: the
/// draft passed its gate, but the agent did not finish on its own.
fn capped(detail: &Value) -> String {
    match detail["cap"].as_str() {
        Some(cap) => format!(
            " (the agent was stopped by its {cap} cap; its last draft passed the gate and was kept)"
        ),
        None => String::new(),
    }
}

/// A lowering whose daemon went away before it had an outcome.
pub fn lost_daemon(message: &str) {
    eprintln!(
        "trellis: {message}\ntrellis: the daemon went away before the lowering had an outcome; \
         each module's f.log has what the job recorded, and the next daemon removes what the \
         job left"
    );
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
        let mut parts: Vec<String> = counts
            .iter()
            .map(|(state, n)| format!("{n} {state}"))
            .collect();
        let stopped = outcomes
            .iter()
            .filter(|o| o["detail"]["cap"].is_string())
            .count();
        if stopped > 0 {
            parts.push(format!("{stopped} stopped by a cap"));
        }
        let _ = writeln!(out, "lowered {}: {}", outcomes.len(), parts.join(", "));
    }
    u8::from(not_green > 0)
}

/// `trellis jobs`: the running set, the queue with what each entry waits on,
/// the finished ones.
fn jobs_report(out: &mut impl Write, result: &Value) -> u8 {
    // `running_set` is every running job; a daemon before it had `running` alone.
    let running = match result["running_set"].as_array() {
        Some(set) => set.clone(),
        None => [&result["running"]]
            .into_iter()
            .filter(|running| !running.is_null())
            .cloned()
            .collect(),
    };
    if running.is_empty() {
        let _ = writeln!(out, "running: nothing");
    }
    for job in &running {
        let landing = if job["phase"] == "landing" {
            ", its agent done, waiting to land after an earlier job of its module"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "running: {} {} (attempt {}, {:.1} s{landing})",
            job["def"].as_str().unwrap_or("?"),
            job["job"].as_str().unwrap_or("-"),
            job["attempt"],
            job["seconds"].as_f64().unwrap_or(0.0)
        );
    }
    let pending = result["pending"].as_array().cloned().unwrap_or_default();
    if pending.is_empty() {
        let _ = writeln!(out, "queued: nothing");
    }
    for entry in &pending {
        let waits = list(&entry["waits_on"]);
        let _ = writeln!(
            out,
            "queued: {}{}",
            entry["def"].as_str().unwrap_or("?"),
            if waits.is_empty() {
                " (ready: waits for a free slot)".to_owned()
            } else {
                format!(" (waits on {waits})")
            }
        );
    }
    let finished = result["finished"].as_array().cloned().unwrap_or_default();
    if !finished.is_empty() {
        let _ = writeln!(out, "finished:");
    }
    for job in &finished {
        let cap = match job["cap"].as_str() {
            Some(cap) => format!("  stopped by its {cap} cap"),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "  {:<28} {:<12} {:<11} {:.1} s{cap}",
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
            "write": { "us": 5, "files": 0, "removed": 0, "vouched": "stats" },
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
            "context bundle for m/f in /r/.trellis/context/m/f: about 120 tokens — files of 19 \
             tokens packed within the 100-token budget, plus 101 for bundle.json, the manifest, \
             which lists the packing and so is not counted against it\n"
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
        expected.push_str(
            "3 files did not fit the budget, lowest priority last (a larger --budget packs more)\n",
        );
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
