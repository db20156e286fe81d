//! What a real agent is told (design §4.9.1): a system prompt made of the
//! lowering skill and the rules of the job, and a task naming the definition and
//! how the job ends. The skill text is an input: [`BUILTIN_SKILL`] is a short
//! first version, to be replaced by the generated skill (`trellis skill`) once
//! that lands; the prompt builder does not care which it is given.

/// A short lowering skill, until the generated one replaces it.
pub const BUILTIN_SKILL: &str = "\
# Lowering a Trellis definition into Soil

Trellis specs (`.tr` files) say what a definition must do: its signature, its
clauses (properties every result satisfies), its test cases and the decisions in
scope. You write the definition's body in Soil, a small typed functional
language, and Trellis checks and tests every draft you write.

- Read before you write: `read_context` with `{\"path\": \"\"}` lists the bundle;
  `spec.md` is the spec, `tests.json` the cases your draft must pass,
  `callees/` the signatures you may call, `decisions.md` the decisions in scope,
  `examples/` lowered neighbours in canonical Soil. `read_spec` fetches a
  section of the language's documents (`soil-syntax-spec#9.1`).
- `write_soil` takes the whole definition (and any private helpers after it) and
  the decisions it applies (`decisions_applied`, each `{\"scope\": {\"tag\":
  \"Project\"}, \"label\": ...}` or `{\"tag\": \"Module\"}`). It answers with the
  canonical text: formatting is not yours to choose.
- `check_types` type-checks the draft and lists every typed hole (`?name`) with
  its goal type and the names in scope; `check_refinements` checks the clauses.
- `run_tests` runs every sandboxed case against the draft and shows each
  failure with the expected and actual values. Fix the draft and run again.
- A diagnostic's code and `repair_class` say what to change; its `spec_ref`
  names the section (`read_spec`) that states the rule.
- When the spec is ambiguous or contradicts itself, do not guess: call
  `ask_human` with one precise question. The job ends there.
";

/// What the agent CLI is given.
#[derive(Clone, Debug, PartialEq)]
pub struct Prompt {
    /// Appended to the CLI's system prompt.
    pub system: String,
    /// The task, as the session's first user message.
    pub task: String,
}

/// The job a prompt is for.
pub struct Task<'a> {
    /// `module::name`.
    pub definition: &'a str,
    /// The job's tool-call cap.
    pub tool_calls: u32,
}

/// Builds the prompt from the skill text and the job.
pub fn prompt(skill: &str, task: &Task<'_>) -> Prompt {
    let system = format!(
        "{skill}\n\
         # This session\n\n\
         You are lowering one definition for Trellis. Your only tools are the seven \
         Trellis tools (mcp__trellis__read_context, read_spec, write_soil, check_types, \
         check_refinements, run_tests, ask_human): there is no shell and no file system. \
         You may make at most {calls} tool calls.\n",
        skill = skill.trim_end(),
        calls = task.tool_calls,
    );
    let task = format!(
        "Lower the Trellis definition `{definition}` into Soil.\n\n\
         1. Read its context bundle: read_context with {{\"path\": \"\"}}, then spec.md, \
         tests.json and whatever else you need.\n\
         2. Write the whole definition with write_soil, citing the decisions it applies.\n\
         3. check_types, then run_tests; fix the draft until every case passes.\n\
         4. When run_tests passes, reply with one sentence saying what you wrote, and stop: \
         Trellis commits your last draft and tests it once more.\n\n\
         If the spec is ambiguous or contradictory, call ask_human with your question \
         instead of guessing; the job ends there.\n",
        definition = task.definition,
    );
    Prompt { system, task }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skill_is_an_input_and_the_task_names_the_definition() {
        let built = prompt(
            "SKILL TEXT\n",
            &Task {
                definition: "csvstats::mean",
                tool_calls: 12,
            },
        );
        assert!(built.system.starts_with("SKILL TEXT\n"), "{}", built.system);
        assert!(built.system.contains("at most 12 tool calls"));
        assert!(built.task.contains("`csvstats::mean`"));
        assert!(built.task.contains("ask_human"));
        let builtin = prompt(
            BUILTIN_SKILL,
            &Task {
                definition: "a::b",
                tool_calls: 1,
            },
        );
        for tool in [
            "read_context",
            "read_spec",
            "write_soil",
            "check_types",
            "check_refinements",
            "run_tests",
            "ask_human",
        ] {
            assert!(builtin.system.contains(tool), "the skill names {tool}");
        }
    }
}
