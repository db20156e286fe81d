//! The skill's worked examples, from the corpus (`examples/`, design §5)
//! embedded at build time: one definition's whole spec beside the
//! `write_soil` arguments that lowered it — its Soil, and the citations its
//! lock records — then two shorter lowerings showing a capability threaded
//! through and a draft with a typed hole. Only `.tr`, `.soil` and `.lock`
//! files are embedded, never `soil.toml`, whose pin is this text's hash.

use serde_json::{Value, json};

struct Example {
    qualified: &'static str,
    spec: &'static str,
    soil: &'static str,
    lock: Option<&'static str>,
}

const MEDIAN: Example = Example {
    qualified: "csvstats::median",
    spec: include_str!("../../../examples/csvstats/median.tr"),
    soil: include_str!("../../../examples/csvstats/median.soil"),
    lock: Some(include_str!("../../../examples/csvstats/median.lock")),
};

const READ_FILE: Example = Example {
    qualified: "csvstats::read_file",
    spec: include_str!("../../../examples/csvstats/read_file.tr"),
    soil: include_str!("../../../examples/csvstats/read_file.soil"),
    lock: Some(include_str!("../../../examples/csvstats/read_file.lock")),
};

const REORDER_PLAN: Example = Example {
    qualified: "inventory::reorder_plan",
    spec: include_str!("../../../examples/inventory/reorder_plan.tr"),
    soil: include_str!("../../../examples/inventory/reorder_plan.soil"),
    lock: None,
};

const CSVSTATS_HELPERS: &str = include_str!("../../../examples/csvstats/_private.soil");

/// The first `soil-sig` block of a spec.
fn signature(spec: &str) -> &str {
    spec.split_once("```soil-sig\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .map_or("", |(block, _)| block.trim_end())
}

/// A private helper's signature and equation from a `_private.soil` text.
fn helper<'a>(helpers: &'a str, name: &str) -> &'a str {
    let start = format!("{name} :");
    let Some(at) = helpers.find(&start) else {
        return "";
    };
    // The signature paragraph, then the equation paragraph.
    let rest = &helpers[at..];
    let end = rest
        .match_indices("\n\n")
        .nth(1)
        .map_or(rest.len(), |(end, _)| end);
    rest[..end].trim_end()
}

/// `decisions_applied` as `write_soil` takes it, from a lock's recorded citations.
fn citations(lock: Option<&str>) -> Value {
    let applied = lock
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .and_then(|lock| lock["lowering"]["decisions"]["applied"].as_array().cloned())
        .unwrap_or_default();
    Value::Array(
        applied
            .iter()
            .map(|entry| {
                let scope = match entry["scope"].as_str() {
                    Some("project") => "Project",
                    _ => "Module",
                };
                json!({ "scope": { "tag": scope }, "label": entry["label"] })
            })
            .collect(),
    )
}

fn write_soil_call(example: &Example) -> String {
    let arguments = json!({ "soil": example.soil, "decisions_applied": citations(example.lock) });
    serde_json::to_string_pretty(&arguments).unwrap_or_default()
}

pub fn section() -> String {
    let mut out = format!(
        "\n## 8. Worked examples (the corpus)\n\n\
Lowered definitions of the example root, as a bundle shows them.\n\n\
### 8.1 `{median}`\n\n\
`spec.md`:\n\n````markdown\n{median_spec}````\n\n\
The `write_soil` arguments that lowered it (the citation is what its lock records):\n\n\
```json\n{median_call}\n```\n\n\
It calls the callee `sort` and the module helper `_halfway` (in `_private.soil`, so the \
draft does not repeat it; a first lowering would have written it after the equation):\n\n\
```soil\n{halfway}\n```\n",
        median = MEDIAN.qualified,
        median_spec = MEDIAN.spec,
        median_call = write_soil_call(&MEDIAN),
        halfway = helper(CSVSTATS_HELPERS, "_halfway"),
    );
    out.push_str(&format!(
        "\n### 8.2 `{}`: a capability passed on\n\n```soil\n{}\n```\n\n\
```soil\n{}```\n\nCitations: `{}`.\n",
        READ_FILE.qualified,
        signature(READ_FILE.spec),
        READ_FILE.soil,
        citations(READ_FILE.lock),
    ));
    out.push_str(&format!(
        "\n### 8.3 `{}`: a draft with a hole\n\n```soil\n{}\n```\n\n```soil\n{}```\n\n\
`check_types` passes and reports `?cases_to_order` with its goal type `I64` and the names \
in scope; the definition stays `partial(holes)` until the hole is filled.\n",
        REORDER_PLAN.qualified,
        signature(REORDER_PLAN.spec),
        REORDER_PLAN.soil,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_examples_parts_are_found() {
        assert!(signature(MEDIAN.spec).starts_with("median : (xs : List F64)"));
        let halfway = helper(CSVSTATS_HELPERS, "_halfway");
        assert!(halfway.starts_with("_halfway : "), "{halfway}");
        assert!(halfway.contains("_halfway a b ="), "{halfway}");
        assert!(!halfway.contains("_merge_sort"), "{halfway}");
        assert_eq!(
            citations(MEDIAN.lock),
            json!([{ "scope": { "tag": "Project" }, "label": "total-order" }])
        );
        assert!(REORDER_PLAN.soil.contains("?cases_to_order"));
    }
}
