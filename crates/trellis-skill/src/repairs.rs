//! The skill's repair section (trellis-daemon §6): every repair class of the
//! embedded registry with its summary, what the lowering agent does about it,
//! and every code that carries it with the `spec_ref` stating its rule. The
//! registry is the single source of classes and codes; the agent's action per
//! class is written here, and a test fails when a registered class has none.

use trellis_diag::registry::registry;

/// What the agent does, mechanically, when a diagnostic of `class` comes back.
pub fn agent_action(class: &str) -> Option<&'static str> {
    Some(match class {
        "fix-syntax" => {
            "rewrite the text at the span (the first place the grammar broke) and write_soil again."
        }
        "fix-types" => {
            "change the body or a helper, never the spec's signature, until check_types passes; \
             the message and notes name the expected and found types."
        }
        "fill-hole" => {
            "replace the named hole with an expression of the goal type check_types reports, \
             using the names in scope it lists."
        }
        "fix-effects" => {
            "remove the effect from the body (a capability not received as a parameter, a \
             partial builtin, a division by a non-literal); you cannot widen the declared row — \
             if the spec's row cannot hold the obligation, ask_human (Contradiction)."
        }
        "fix-runtime" => {
            "a case panicked or broke a clause: read the failing row's input and outcome in the \
             run_tests result, fix the body, rerun."
        }
        "fix-spec" => {
            "the spec itself is invalid and you cannot edit it: ask_human (Contradiction or \
             Ambiguity), quoting the code and the block."
        }
        "fix-config" => "not yours to fix (the root's configuration): ask_human quoting the code.",
        "fix-input" => {
            "your tool arguments are wrong at the path or name the message gives: correct them \
             and call again."
        }
        "fix-lock" => {
            "not yours to fix (a lock file): carry on with the tools; if it blocks you, ask_human \
             quoting the code."
        }
        "relower" => "the spec moved under the job: stop; the daemon re-runs the job fresh.",
        "rerun-tests" => "call run_tests again.",
        "update-toolchain" => {
            "not yours to fix (the root's toolchain pin): stop; a human runs `trellis toolchain update`."
        }
        "ask-human" => {
            "only a human can resolve it: for unknown-decision cite only labels decisions.md \
             lists, otherwise ask_human."
        }
        "retry" => "a transient condition: make the same call again.",
        "report-bug" => {
            "an internal error: do not work around it; ask_human quoting the code and the input."
        }
        _ => return None,
    })
}

pub fn section() -> String {
    let registry = registry();
    let mut out = String::from(
        "\n## 6. Repairs by class\n\n\
Every diagnostic names its repair class: the action that fixes it. Act on the class, \
read the message for the particulars, and `read_spec` the `spec_ref` when the rule is \
unclear. Each class lists every code that carries it, with its `spec_ref` in parentheses.\n",
    );
    for class in &registry.repair_classes {
        // Codes sharing a spec_ref are listed together, in registry order.
        let mut by_ref: Vec<(&str, Vec<String>)> = Vec::new();
        for code in registry
            .codes
            .iter()
            .filter(|c| c.repair_class == class.name)
        {
            let name = format!("`{}`", code.code);
            match by_ref.iter_mut().find(|(r, _)| *r == code.spec_ref) {
                Some((_, names)) => names.push(name),
                None => by_ref.push((&code.spec_ref, vec![name])),
            }
        }
        let codes: Vec<String> = by_ref
            .iter()
            .map(|(spec_ref, names)| format!("{} ({spec_ref})", names.join(", ")))
            .collect();
        out.push_str(&format!("\n**{}** — {}", class.name, class.summary));
        if let Some(action) = agent_action(&class.name) {
            out.push_str(&format!(" You: {action}"));
        }
        out.push('\n');
        if !codes.is_empty() {
            out.push_str(&format!("Codes: {}.\n", codes.join("; ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_repair_class_says_what_the_agent_does() {
        let missing: Vec<&str> = registry()
            .repair_classes
            .iter()
            .map(|class| class.name.as_str())
            .filter(|name| agent_action(name).is_none())
            .collect();
        assert!(
            missing.is_empty(),
            "repair classes without an agent action in trellis-skill's repairs.rs: {missing:?}"
        );
    }
}
