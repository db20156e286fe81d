//! The seven tools of trellis-daemon §3: names, descriptions and input types.
//! The allow-list is the sandbox (design §4.6): `tools/list` offers exactly these
//! and `tools/call` runs nothing else.

use serde_json::{Value, json};

use crate::schema::Ty;

/// One of the seven tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tool {
    ReadContext,
    CheckTypes,
    CheckRefinements,
    RunTests,
    WriteSoil,
    ReadSpec,
    AskHuman,
}

/// What `tools/list` says of a tool.
pub struct ToolSpec {
    pub tool: Tool,
    pub name: &'static str,
    pub description: &'static str,
    pub input: Ty,
}

const SCOPE: Ty = Ty::Sum(&[("Project", &[]), ("Module", &[])]);
const DECISION_REF: Ty = Ty::Record(&[("scope", SCOPE), ("label", Ty::Utf8)]);
pub const QUESTION_KIND: Ty = Ty::Sum(&[("Ambiguity", &[]), ("Contradiction", &[]), ("Rule", &[])]);

/// The seven, in the contract's order.
pub const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        tool: Tool::ReadContext,
        name: "read_context",
        description: "Read a file or list a directory of this job's context bundle (trellis-daemon §4). \
            Paths are bundle-relative and /-separated; \"\" or \".\" is the bundle's root. \
            Returns {\"tag\":\"File\",\"content\":…} or {\"tag\":\"Dir\",\"entries\":[…]} (sorted, directories end in /).",
        input: Ty::Record(&[("path", Ty::Utf8)]),
    },
    ToolSpec {
        tool: Tool::CheckTypes,
        name: "check_types",
        description: "Type-check the current draft against the root: the definition's declared signature, \
            row and checks facts, including each typed hole with its goal type. Fails with diagnostics \
            (each with repair_class and spec_ref), or no-draft before the first write_soil.",
        input: Ty::Record(&[]),
    },
    ToolSpec {
        tool: Tool::CheckRefinements,
        name: "check_refinements",
        description: "Check the draft's refinement clauses. No refinement checker is available yet: \
            returns {\"tag\":\"None\"}, meaning the clauses are recorded as runtime checks.",
        input: Ty::Record(&[]),
    },
    ToolSpec {
        tool: Tool::RunTests,
        name: "run_tests",
        description: "Run every sandboxed test of the definition against the current draft: the spec's \
            expect tests, derived cases, and spec and derived properties under the pinned seeds — \
            exactly what the final gate runs. Returns {\"cases\":[…]}. A draft with unfilled holes \
            is refused (unfilled-hole); no-draft before the first write_soil.",
        input: Ty::Record(&[]),
    },
    ToolSpec {
        tool: Tool::WriteSoil,
        name: "write_soil",
        description: "Store Soil text as the job's draft: the definition, plus any private helpers it \
            needs in the same text. It is parsed and canonicalized through the printer and the \
            canonical text is echoed back; a parse failure stores nothing. decisions_applied \
            cites every decision entry (by scope and label, from decisions.md) this draft applies, \
            [] when none; an unknown label is refused (unknown-decision).",
        input: Ty::Record(&[
            ("soil", Ty::Utf8),
            ("decisions_applied", Ty::List(&DECISION_REF)),
        ]),
    },
    ToolSpec {
        tool: Tool::ReadSpec,
        name: "read_spec",
        description: "Read one pinned spec section by its anchor, e.g. \"soil-syntax-spec#5.9\" — the \
            spec_ref every diagnostic carries. Returns {\"title\":…,\"text\":…}; an unknown anchor is \
            unknown-spec-ref.",
        input: Ty::Record(&[("ref", Ty::Utf8)]),
    },
    ToolSpec {
        tool: Tool::AskHuman,
        name: "ask_human",
        description: "Ask the human a question the spec does not answer, and end this job: the \
            question is recorded, the answer goes into the spec, and the job re-runs fresh. kind \
            Rule marks an answer expected to become a project or module decision. hole names the \
            typed hole this blocks on, if any; options are proposed answers (may be empty).",
        input: Ty::Record(&[
            ("kind", QUESTION_KIND),
            ("question", Ty::Utf8),
            ("hole", Ty::Option(&Ty::Utf8)),
            ("options", Ty::List(&Ty::Utf8)),
        ]),
    },
];

impl Tool {
    pub fn spec(self) -> &'static ToolSpec {
        TOOLS
            .iter()
            .find(|spec| spec.tool == self)
            .expect("every tool has a spec")
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    pub fn from_name(name: &str) -> Option<Tool> {
        TOOLS
            .iter()
            .find(|spec| spec.name == name)
            .map(|spec| spec.tool)
    }
}

/// The `tools` array of a `tools/list` result.
pub fn tool_list() -> Value {
    Value::Array(
        TOOLS
            .iter()
            .map(|spec| {
                json!({
                    "name": spec.name,
                    "description": spec.description,
                    "inputSchema": spec.input.json_schema(),
                })
            })
            .collect(),
    )
}
