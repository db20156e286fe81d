//! `cram` blocks: shell transcripts with file fixtures (tr-grammar §3.5).

use crate::codes::TrCode;
use crate::lines::lines;
use crate::model::{CramCommand, CramFixture, CramStep};
use crate::report::Findings;

pub(crate) fn parse(content: &str, findings: &mut Findings) -> Vec<CramStep> {
    let all = lines(content);
    let mut steps: Vec<CramStep> = Vec::new();
    // The command whose output we are reading, and whether `>` may continue it.
    let mut current: Option<CramCommand> = None;
    let mut continuing = false;
    let mut i = 0;
    while i < all.len() {
        let line = all[i];
        i += 1;
        if let Some(command) = line
            .text
            .strip_prefix("$ ")
            .or(line.text.strip_prefix('$').filter(|r| r.trim().is_empty()))
        {
            finish(&mut current, &mut steps);
            if command.trim().is_empty() {
                findings.push(
                    TrCode::BadCram,
                    line.range(),
                    "`$` needs a command after it",
                );
                continuing = false;
                continue;
            }
            current = Some(CramCommand {
                command: command.to_owned(),
                output: String::new(),
                exit_code: 0,
                range: line.range(),
            });
            continuing = true;
            continue;
        }
        if continuing
            && let Some(more) = line
                .text
                .strip_prefix("> ")
                .or(line.text.strip_prefix('>').filter(|r| r.is_empty()))
        {
            if let Some(command) = &mut current {
                command.command.push('\n');
                command.command.push_str(more);
                command.range = command.range.cover(line.range());
            }
            continue;
        }
        continuing = false;
        if let Some(path) = line.text.strip_prefix("<<< ") {
            finish(&mut current, &mut steps);
            let Some(end) = all[i..].iter().position(|l| l.text == ">>>") else {
                findings.push(
                    TrCode::BadCram,
                    line.range(),
                    "this fixture has no closing `>>>` line",
                );
                return steps;
            };
            let body = &all[i..i + end];
            let closing = all[i + end];
            i += end + 1;
            let path = path.trim();
            if !is_fixture_path(path) {
                findings.push(
                    TrCode::BadCram,
                    line.range(),
                    format!("{path:?} is not a relative `/`-separated path without `..`"),
                );
                continue;
            }
            let content = body.iter().map(|l| format!("{}\n", l.text)).collect();
            steps.push(CramStep::Fixture(CramFixture {
                path: path.to_owned(),
                content,
                range: line.range().cover(closing.range()),
            }));
            continue;
        }
        if let Some(code) = exit_code(line.text) {
            match (&mut current, code) {
                (Some(command), Some(code)) => {
                    command.exit_code = code;
                    command.range = command.range.cover(line.range());
                    finish(&mut current, &mut steps);
                }
                (Some(_), None) => findings.push(
                    TrCode::BadCram,
                    line.range(),
                    "an exit status is `[n]` with n in 0–255",
                ),
                (None, _) => findings.push(
                    TrCode::BadCram,
                    line.range(),
                    "an exit status must follow a command's output",
                ),
            }
            continue;
        }
        match &mut current {
            Some(command) => {
                command.output.push_str(line.text);
                command.output.push('\n');
                command.range = command.range.cover(line.range());
            }
            None if line.is_blank() => {}
            None => findings.push(
                TrCode::BadCram,
                line.range(),
                "output with no command before it: commands start with `$ `",
            ),
        }
    }
    finish(&mut current, &mut steps);
    steps
}

fn finish(current: &mut Option<CramCommand>, steps: &mut Vec<CramStep>) {
    if let Some(command) = current.take() {
        steps.push(CramStep::Command(command));
    }
}

/// `Some(Some(n))` for `[n]` in range, `Some(None)` for an `[digits]` line out of
/// range, `None` for any other line.
fn exit_code(text: &str) -> Option<Option<u8>> {
    let digits = text.strip_prefix('[')?.strip_suffix(']')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<u8>().ok())
}

fn is_fixture_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && path
            .split('/')
            .all(|segment| !segment.is_empty() && segment != ".." && segment != ".")
}
