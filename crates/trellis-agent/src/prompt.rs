//! What a real agent is told (design §4.9.1): a system prompt made of the
//! lowering skill and the rules of the job, and a task naming the definition and
//! how the job ends. The skill text is an input: the generated skill
//! (`trellis_skill::skill`, what `trellis skill` prints and `soil.toml` pins).

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
            trellis_skill::skill(),
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
