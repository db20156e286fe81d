//! The client side of `trellis answer DEF` (trellis-daemon §8.2). With `--text`
//! it sends the answer as given. Without, it asks: it fetches the open question
//! (`question`), prints it with its options, reads the answer from stdin — a
//! bare option number picks that option — and, for a `Rule`, which scope it goes
//! to when both exist and which label it gets (the one derived from the
//! question unless another is typed); then it sends `answer`. Asking needs a
//! terminal, so a script that forgot `--text` is refused instead of waiting on
//! a pipe; `--interactive` asks on a stdin that is not a terminal (scripts that
//! mean it, tests).
//!
//! Through the daemon, the answered definition is lowered again as the job that
//! asked ran (its provider, with the environment its `lower` brought, never this
//! shell's), and the client follows that lowering as `trellis lower` does:
//! the exit code is 0 only when it ends green.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use serde_json::{Value, json};
use trellis_diag::Diagnostic;

use crate::args::{Command, Invocation};
use crate::client::{self, ClientError};
use crate::render;
use trellis_service::codes::HostCode;
use trellis_service::protocol::{
    AnswerAnswer, AnswerParams, QuestionAnswer, QuestionParams, Request, decode_answer,
};

/// Runs `trellis answer`; returns the exit code (0 answered, 1 refused, 2 usage).
pub fn run(root: &Path, invocation: &Invocation) -> u8 {
    let Command::Answer {
        def,
        text,
        scope,
        label,
        interactive,
    } = &invocation.command
    else {
        return 2;
    };
    let no_daemon = invocation.no_daemon;
    let mut out = std::io::stdout().lock();
    let params = match text {
        Some(text) => AnswerParams {
            def: def.clone(),
            text: text.clone(),
            scope: scope.clone(),
            label: label.clone(),
        },
        None => {
            let stdin = std::io::stdin();
            if !interactive && !stdin.is_terminal() {
                let refusal = HostCode::UsageError.diagnostic(format!(
                    "`trellis answer {def}` asks for the answer on a terminal, and stdin is not \
                         one: give the answer with --text ANSWER (and --scope for a Rule), or pass \
                         --interactive to answer the prompts from stdin"
                ));
                render::diagnostics(&mut std::io::stderr(), &[refusal]);
                return 2;
            }
            let request = Request::Question(QuestionParams { def: def.clone() });
            let question = match call(root, no_daemon, &request).and_then(|answer| {
                decode_answer::<QuestionAnswer>(&answer).map_err(ClientError::Transport)
            }) {
                Ok(question) => question,
                Err(error) => return failure(error),
            };
            let terminal = stdin.is_terminal();
            let mut prompter = Prompter {
                out: &mut out,
                lines: stdin.lock().lines().map_while(Result::ok),
                terminal,
            };
            match ask(&mut prompter, &question, scope.as_deref(), label.as_deref()) {
                Ok(params) => params,
                Err(refusal) => {
                    let _ = out.flush();
                    render::diagnostics(&mut std::io::stderr(), &[refusal]);
                    return 1;
                }
            }
        }
    };
    // The daemon lowers the answered definition again as the job that asked
    // ran; this shell's provider and environment play no part.
    let mut params = Request::Answer(params).params();
    if !no_daemon {
        params["lower"] = json!({});
    }
    let answered = client::request(root, no_daemon, "answer", params, &mut |_| {})
        .and_then(|answer| decode_answer::<AnswerAnswer>(&answer).map_err(ClientError::Transport));
    let answer = match answered {
        Ok(answer) => answer,
        Err(error) => {
            let _ = out.flush();
            return failure(error);
        }
    };
    report(&mut out, &answer);
    let _ = out.flush();
    match answer.follow {
        Some(cursor) => follow(root, &answer.requeue, cursor),
        None => 0,
    }
}

/// Follows the re-run lowering from the daemon's event `cursor`, printing each
/// job state change; 0 when it ends green.
fn follow(root: &Path, def: &str, cursor: u64) -> u8 {
    let stdout = &mut std::io::stdout();
    let mut progress = |event: Value| {
        render::job_event(stdout, &event);
        let _ = stdout.flush();
    };
    let params = json!({ "defs": [def], "cursor": cursor });
    match client::request(root, false, "jobs.follow", params, &mut progress) {
        Ok(result) => render::lower_summary(stdout, &result, false),
        Err(ClientError::Transport(message)) => {
            render::lost_daemon(&message);
            1
        }
        Err(error) => failure(error),
    }
}

/// Where prompts go and answers come from.
pub struct Prompter<W, L> {
    pub out: W,
    pub lines: L,
    /// Whether the answers are typed on a terminal, which echoes their newline.
    pub terminal: bool,
}

impl<W: Write, L: Iterator<Item = String>> Prompter<W, L> {
    /// Writes `prompt` and reads one line; `None` at end of input.
    fn line(&mut self, prompt: &str) -> Option<String> {
        let _ = write!(self.out, "{prompt}");
        let _ = self.out.flush();
        let line = self.lines.next();
        // A piped answer is not echoed: end the prompt's line ourselves.
        if !self.terminal {
            let _ = writeln!(self.out);
        }
        line
    }
}

/// Prints the question, reads the answers, and returns the `answer` params.
pub fn ask<W: Write, L: Iterator<Item = String>>(
    prompter: &mut Prompter<W, L>,
    asked: &QuestionAnswer,
    scope: Option<&str>,
    label: Option<&str>,
) -> Result<AnswerParams, Diagnostic> {
    let question = &asked.question;
    let def = question.def.as_str();
    render::open_question(&mut prompter.out, question);
    let options: Vec<&str> = question.options.iter().map(String::as_str).collect();
    let prompt = if options.is_empty() {
        "answer> ".to_owned()
    } else {
        format!("answer (1-{} picks that option)> ", options.len())
    };
    let text = loop {
        let Some(line) = prompter.line(&prompt) else {
            return Err(HostCode::JobEmptyAnswer.diagnostic(format!(
                "no answer to {def}'s question was given (end of input)"
            )));
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        match line.parse::<usize>() {
            Ok(n) if (1..=options.len()).contains(&n) => break options[n - 1].to_owned(),
            _ => break line.to_owned(),
        }
    };
    let mut params = AnswerParams {
        def: def.to_owned(),
        text,
        scope: scope.map(str::to_owned),
        label: label.map(str::to_owned),
    };
    if question.kind.tag != "Rule" {
        return Ok(params);
    }
    let scopes = &asked.scopes;
    let names: Vec<&str> = scopes.iter().map(|s| s.scope.as_str()).collect();
    let chosen = match scope {
        Some(scope) => Some(scope.to_owned()),
        None if names.len() == 1 => Some(names[0].to_owned()),
        None if names.is_empty() => None,
        None => {
            let choices: Vec<String> = scopes
                .iter()
                .map(|s| format!("{} ({})", s.scope, s.file))
                .collect();
            let prompt = format!("a rule of which scope: {}> ", choices.join(" or "));
            loop {
                let Some(line) = prompter.line(&prompt) else {
                    return Err(HostCode::JobBadScope.diagnostic(format!(
                        "no scope for {def}'s Rule was given (end of input)"
                    )));
                };
                let line = line.trim();
                if names.contains(&line) {
                    break Some(line.to_owned());
                }
                let _ = writeln!(prompter.out, "type one of: {}", names.join(", "));
            }
        }
    };
    let derived = scopes
        .iter()
        .find(|s| Some(s.scope.as_str()) == chosen.as_deref())
        .map(|s| s.label.as_str());
    params.scope = chosen.clone();
    if let (None, Some(derived)) = (label, derived) {
        let typed = prompter
            .line(&format!("label [{derived}]> "))
            .unwrap_or_default();
        let typed = typed.trim();
        params.label = Some(if typed.is_empty() { derived } else { typed }.to_owned());
    }
    Ok(params)
}

/// What the answer wrote, as a person reads it.
fn report(out: &mut impl Write, answer: &AnswerAnswer) {
    let (def, written, kind) = (&answer.def, &answer.written, &answer.kind.tag);
    match &answer.decision {
        Some(decision) => {
            let _ = writeln!(
                out,
                "answered {def}'s {kind} question: the {} decision `{}` in {written}",
                decision.scope, decision.label
            );
        }
        None => {
            let _ = writeln!(
                out,
                "answered {def}'s {kind} question: a Clarifications Q/A pair in {written}"
            );
        }
    }
    let _ = write!(out, "{}", answer.diff);
    let again = &answer.requeue;
    let next = match (&answer.requeued_with, answer.follow) {
        (Some(provider), _) => format!(
            "{again} is lowered again with the answer in its spec, by provider `{provider}` \
             (the one whose job asked):"
        ),
        (None, Some(_)) => format!("{again} is already queued or running; following it:"),
        (None, None) if answer.requeued.is_some() => format!(
            "lower {again} again with the answer in its spec: trellis lower {again} (this \
             daemon did not run the job that asked, so it does not guess its provider)"
        ),
        (None, None) => {
            format!("lower {again} again with the answer in its spec: trellis lower {again}")
        }
    };
    let _ = writeln!(out, "removed {}; {next}", answer.removed);
}

fn failure(error: ClientError) -> u8 {
    match error {
        ClientError::Failed(errors) => render::diagnostics(&mut std::io::stderr(), &errors),
        ClientError::Transport(message) => eprintln!("trellis: {message}"),
    }
    1
}

fn call(root: &Path, no_daemon: bool, request: &Request) -> Result<Value, ClientError> {
    client::request(
        root,
        no_daemon,
        request.method(),
        request.params(),
        &mut |_| {},
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(
        question: Value,
        input: &str,
        scope: Option<&str>,
    ) -> (Result<Value, Diagnostic>, String) {
        let mut prompter = Prompter {
            out: Vec::new(),
            lines: input.lines().map(str::to_owned),
            terminal: false,
        };
        let question = decode_answer(&question).expect("a question answer");
        let params = ask(&mut prompter, &question, scope, None)
            .map(|params| Request::Answer(params).params());
        (params, String::from_utf8(prompter.out).expect("UTF-8"))
    }

    fn rule() -> Value {
        json!({
            "def": "m::f", "kind": {"tag": "Rule"}, "question": "UTC?", "hole": {"tag": "None"},
            "options": ["UTC seconds", "local time"], "created": "now", "file": "m/f.question.json",
            "stale": false,
            "scopes": [
                {"scope": "module", "file": "m/_module.tr", "label": "utc"},
                {"scope": "project", "file": "_project.tr", "label": "utc"},
            ],
        })
    }

    #[test]
    fn a_number_picks_an_option_and_a_rule_asks_its_scope_and_label() {
        let (params, shown) = asked(rule(), "\n1\nsomewhere\nproject\n\n", None);
        assert_eq!(
            params.expect("answered"),
            json!({"def": "m::f", "text": "UTC seconds", "scope": "project", "label": "utc"})
        );
        assert!(shown.contains("1. UTC seconds\n"), "{shown}");
        assert!(shown.contains("type one of: module, project"), "{shown}");
        assert!(shown.contains("label [utc]> "), "{shown}");
    }

    #[test]
    fn text_that_is_no_option_number_is_the_answer_and_a_given_scope_is_not_asked() {
        let (params, _) = asked(rule(), "7\nmy-label\n", Some("module"));
        assert_eq!(
            params.expect("answered"),
            json!({"def": "m::f", "text": "7", "scope": "module", "label": "my-label"})
        );
    }

    #[test]
    fn end_of_input_is_a_refusal_with_a_code() {
        let (params, _) = asked(rule(), "", None);
        assert_eq!(params.expect_err("no answer").code, "job-empty-answer");
        let (params, _) = asked(rule(), "2\n", None);
        assert_eq!(params.expect_err("no scope").code, "job-bad-scope");
    }
}
