//! What a tool call may ask for (design §9.11): arguments too long to be
//! anything but hostile are refused with the tool's own code before any work,
//! a draft whose echo could not be sent is refused before it is stored
//! (trellis-daemon §3.5: an error result stores nothing), and a failure
//! reports a bounded number of problems, each message quoting no more than an
//! excerpt of an argument (`trellis_mcp::excerpt`) — so no input, however
//! large, turns into an answer over the frame limit.

use serde_json::{Value, json};
use trellis_diag::Diagnostic;
use trellis_mcp::{DEFAULT_RESULT_CAP, Tool};

use crate::codes::HostCode;

/// The longest `read_context` path: no packed file's path comes near it.
pub const MAX_BUNDLE_PATH_BYTES: usize = 4096;
/// The longest `read_spec` anchor: every anchor is a document slug and a section.
pub const MAX_SPEC_REF_BYTES: usize = 256;
/// The longest `ask_human` question, and each of its options and hole name.
pub const MAX_QUESTION_BYTES: usize = 64 * 1024;
/// The most options an `ask_human` question may propose.
pub const MAX_QUESTION_OPTIONS: usize = 64;
/// The longest Soil text `write_soil` takes: far past any definition, and its
/// echo still well inside a frame.
pub const MAX_DRAFT_BYTES: usize = 1024 * 1024;
/// The most a draft's echo may be, whatever cap the shim asks for: the answer
/// must fit the transport's frame limit (16 MiB) with room to spare.
pub const MAX_ECHO_BYTES: usize = 4 * MAX_DRAFT_BYTES;
/// The most problems (parse errors, unknown citations) one `write_soil`
/// reports.
pub const MAX_REPORTED: usize = 32;

/// The key of `job.tool`'s params under which the shim passes its result cap
/// (in bytes), so a draft is refused, not stored, when its echo would be.
pub const RESULT_CAP_PARAM: &str = "result_cap_bytes";

/// The most bytes the echo of a draft may take: the caller's cap (the shim's
/// `--result-cap`, in bytes) or the shim's default, never past
/// [`MAX_ECHO_BYTES`].
pub fn echo_limit(params: &Value) -> usize {
    params[RESULT_CAP_PARAM]
        .as_u64()
        .and_then(|cap| usize::try_from(cap).ok())
        .unwrap_or(DEFAULT_RESULT_CAP.saturating_mul(4))
        .min(MAX_ECHO_BYTES)
}

/// Refuses arguments past their tool's bounds, with the tool's own code.
pub fn check_arguments(tool: Tool, arguments: &Value) -> Result<(), Vec<Diagnostic>> {
    let text = |field: &str| arguments[field].as_str().unwrap_or_default();
    match tool {
        Tool::ReadContext => {
            let path = text("path");
            if path.len() > MAX_BUNDLE_PATH_BYTES {
                return Err(vec![HostCode::BundlePath.diagnostic(format!(
                    "$.path is {} bytes, over the limit of {MAX_BUNDLE_PATH_BYTES}: no bundle path is that long",
                    path.len()
                ))]);
            }
        }
        Tool::ReadSpec => {
            let reference = text("ref");
            if reference.len() > MAX_SPEC_REF_BYTES {
                return Err(vec![HostCode::UnknownSpecRef.diagnostic(format!(
                    "$.ref is {} bytes, over the limit of {MAX_SPEC_REF_BYTES}: no anchor is that long (anchors look like \"soil-syntax-spec#5.9\")",
                    reference.len()
                ))]);
            }
        }
        Tool::WriteSoil => {
            let soil = text("soil");
            if soil.len() > MAX_DRAFT_BYTES {
                return Err(vec![HostCode::McpResultTooLarge.diagnostic(format!(
                    "$.soil is {} bytes, over the limit of {MAX_DRAFT_BYTES}: its echo could not be sent, so nothing was stored — write one definition and the helpers it needs",
                    soil.len()
                ))]);
            }
        }
        Tool::AskHuman => check_question(arguments)?,
        Tool::CheckTypes | Tool::CheckRefinements | Tool::RunTests => {}
    }
    Ok(())
}

/// A question is kept in the root (trellis-daemon §8): it must stay a question.
fn check_question(arguments: &Value) -> Result<(), Vec<Diagnostic>> {
    let too_long = |path: &str, text: &str| {
        (text.len() > MAX_QUESTION_BYTES).then(|| {
            HostCode::JsonTypeMismatch.diagnostic(format!(
                "{path} is {} bytes, over the limit of {MAX_QUESTION_BYTES}: ask a shorter question",
                text.len()
            ))
        })
    };
    let options = arguments["options"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let mut errors: Vec<Diagnostic> = [
        too_long(
            "$.question",
            arguments["question"].as_str().unwrap_or_default(),
        ),
        too_long(
            "$.hole.value",
            arguments["hole"]["value"].as_str().unwrap_or_default(),
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    if options.len() > MAX_QUESTION_OPTIONS {
        errors.push(HostCode::JsonTypeMismatch.diagnostic(format!(
            "$.options has {} entries, over the limit of {MAX_QUESTION_OPTIONS}",
            options.len()
        )));
    }
    errors.extend(options.iter().enumerate().find_map(|(index, option)| {
        too_long(
            &format!("$.options[{index}]"),
            option.as_str().unwrap_or_default(),
        )
    }));
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The draft's answer, `{"canonical": …}`, or its refusal when the shim could
/// not send it: then nothing may be stored.
pub fn draft_echo(canonical: &str, limit: usize) -> Result<Value, Vec<Diagnostic>> {
    let document = json!({ "canonical": canonical });
    let size = document.to_string().len();
    if size > limit {
        return Err(vec![HostCode::McpResultTooLarge.diagnostic(format!(
            "the canonical draft's echo is {size} bytes, over this session's result cap of {limit} bytes, so nothing was stored — write one definition and the helpers it needs"
        ))]);
    }
    Ok(document)
}

/// At most [`MAX_REPORTED`] diagnostics, the last noting how many more there
/// were: a draft of garbage must not answer with a million of them.
pub fn at_most_reported(mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    if diagnostics.len() > MAX_REPORTED {
        let more = diagnostics.len() - MAX_REPORTED;
        diagnostics.truncate(MAX_REPORTED);
        if let Some(last) = diagnostics.pop() {
            diagnostics.push(last.with_note(format!(
                "{more} more problems of this draft are not shown: fix these first"
            )));
        }
    }
    diagnostics
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(result: Result<(), Vec<Diagnostic>>) -> Option<String> {
        result.err().map(|errors| errors[0].code.clone())
    }

    #[test]
    fn arguments_past_their_bounds_get_their_tools_codes() {
        let long = |n: usize| "a".repeat(n);
        let cases = [
            (
                Tool::ReadContext,
                json!({"path": long(MAX_BUNDLE_PATH_BYTES + 1)}),
                Some("bundle-path"),
            ),
            (
                Tool::ReadContext,
                json!({"path": long(MAX_BUNDLE_PATH_BYTES)}),
                None,
            ),
            (
                Tool::ReadSpec,
                json!({"ref": long(MAX_SPEC_REF_BYTES + 1)}),
                Some("unknown-spec-ref"),
            ),
            (Tool::ReadSpec, json!({"ref": "soil-syntax-spec#5.9"}), None),
            (
                Tool::WriteSoil,
                json!({"soil": long(MAX_DRAFT_BYTES + 1), "decisions_applied": []}),
                Some("mcp-result-too-large"),
            ),
            (
                Tool::WriteSoil,
                json!({"soil": "f x = x\n", "decisions_applied": []}),
                None,
            ),
            (
                Tool::AskHuman,
                json!({"kind": {"tag": "Rule"}, "question": long(MAX_QUESTION_BYTES + 1),
                       "hole": {"tag": "None"}, "options": []}),
                Some("json-type-mismatch"),
            ),
            (
                Tool::AskHuman,
                json!({"kind": {"tag": "Rule"}, "question": "which?",
                       "hole": {"tag": "None"}, "options": vec!["x"; MAX_QUESTION_OPTIONS + 1]}),
                Some("json-type-mismatch"),
            ),
            (
                Tool::AskHuman,
                json!({"kind": {"tag": "Rule"}, "question": "which?",
                       "hole": {"tag": "Some", "value": "h"}, "options": ["a", "b"]}),
                None,
            ),
        ];
        for (tool, arguments, expected) in cases {
            assert_eq!(
                code(check_arguments(tool, &arguments)).as_deref(),
                expected,
                "{tool:?}"
            );
        }
    }

    #[test]
    fn the_echo_limit_is_the_callers_cap_within_a_frame() {
        assert_eq!(echo_limit(&json!({})), DEFAULT_RESULT_CAP * 4);
        assert_eq!(echo_limit(&json!({ RESULT_CAP_PARAM: 400 })), 400);
        assert_eq!(
            echo_limit(&json!({ RESULT_CAP_PARAM: u64::MAX })),
            MAX_ECHO_BYTES
        );
        assert!(draft_echo("f x = x\n", 100).is_ok());
        let refused = draft_echo(&"x".repeat(100), 100).expect_err("over the cap");
        assert_eq!(refused[0].code, "mcp-result-too-large");
        assert!(refused[0].message.contains("nothing was stored"));
    }

    #[test]
    fn many_problems_are_reported_in_a_bounded_list() {
        let problems = (0..100)
            .map(|n| HostCode::UnknownDecision.diagnostic(format!("unknown {n}")))
            .collect();
        let reported = at_most_reported(problems);
        assert_eq!(reported.len(), MAX_REPORTED);
        let last = &reported[MAX_REPORTED - 1];
        assert_eq!(last.message, format!("unknown {}", MAX_REPORTED - 1));
        assert!(last.notes[0].message.contains("68 more"), "{last:?}");
        let few = vec![HostCode::UnknownDecision.diagnostic("one")];
        assert_eq!(at_most_reported(few.clone()), few);
    }
}
