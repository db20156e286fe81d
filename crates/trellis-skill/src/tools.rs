//! The skill's tool section: each of the seven tools (trellis-daemon §3) with
//! the description and input schema `tools/list` advertises — taken from
//! `trellis_mcp::TOOLS`, never restated — and when to reach for it. The advice
//! is an exhaustive match on the tool, so a new tool cannot ship without it.

use trellis_mcp::{TOOLS, Tool};

/// When to use a tool, and what not to expect of it.
fn when(tool: Tool) -> &'static str {
    match tool {
        Tool::ReadContext => {
            "First: list the bundle root (`\"\"`), then read `spec.md`, `decisions.md`, \
             `tests.json` and `bundle.json` (its `dropped` list says what did not fit). Read \
             `callees/` for the signatures of what this definition uses, `callable/` for the \
             rest you may call, and `examples/` for how this root writes Soil; \
             `previous.soil` when re-lowering."
        }
        Tool::CheckTypes => {
            "After every write_soil. Read the facts, not just success: the row, each clause's \
             assurance, and each hole's goal type and names in scope. Errors are fixed by their \
             repair class (§6)."
        }
        Tool::CheckRefinements => {
            "Optional: today it always answers None, so every requires/ensures is a runtime \
             guard and a test obligation. Do not wait on it."
        }
        Tool::RunTests => {
            "Once check_types passes with no holes. It runs exactly the final gate's sandboxed \
             rows (expect cases, properties, derived clause tests); green here is green there. \
             Fix one failing row at a time and rerun."
        }
        Tool::WriteSoil => {
            "To store each draft: the definition's equation (the signature is the spec's — do \
             not write it) followed by any `_helper` signatures and equations. Always restate \
             the full decisions_applied list. Continue from the echoed canonical text."
        }
        Tool::ReadSpec => {
            "Whenever a diagnostic's spec_ref or this skill's reference points past what you \
             know: it serves the toolchain's own copy of the section."
        }
        Tool::AskHuman => {
            "Only when the spec does not decide (Ambiguity), contradicts itself (Contradiction), \
             or needs a project/module rule (Rule). It ends the job: ask one precise question, \
             with options when you can name them."
        }
    }
}

pub fn section() -> String {
    let mut out = String::from(
        "\n## 3. The seven tools\n\n\
These are your only tools: no shell, no files, no real capabilities (the allow-list is \
the sandbox). Each result is one JSON document; a failure is `isError` with \
`{\"errors\":[…]}`, each diagnostic carrying `code`, `repair_class` and `spec_ref`. Inputs \
are validated against these schemas: every field is required, sums are internally \
tagged (`{\"tag\":\"Module\"}`), an absent option is `{\"tag\":\"None\"}`.\n",
    );
    for (number, spec) in TOOLS.iter().enumerate() {
        out.push_str(&format!(
            "\n### 3.{} {}\n\n{}\n\nInput schema: `{}`\n\nUse: {}\n",
            number + 1,
            spec.name,
            spec.description,
            spec.input.json_schema(),
            when(spec.tool),
        ));
    }
    out
}
