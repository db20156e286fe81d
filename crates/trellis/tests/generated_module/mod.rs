//! A generated root for lowering several jobs at once (design §4.9): one
//! module, `gen`, of definitions `f00`, `f01`, … over `I64`, each calling the
//! ones it is given, with a scripted-provider playbook per definition that
//! "thinks" (sleeps) before each tool call as a model would. Shared by the
//! integration test (`tests/several_jobs.rs`) and the benchmark
//! (`examples/jobs_bench.rs`, which includes this file by path).

#![allow(dead_code, reason = "each includer uses its part")]
#![allow(clippy::disallowed_methods, reason = "it writes a root and playbooks")]

use std::path::Path;

/// One generated definition.
#[derive(Clone, Debug, Default)]
pub struct Generated {
    /// Indices of the definitions it calls (each lower than its own).
    pub callees: Vec<usize>,
    /// Its draft adds a private helper to `gen/_private.soil`.
    pub helper: bool,
    /// How long its agent thinks before each tool call.
    pub think_ms: u64,
    /// Its draft is wrong: the gate fails it.
    pub wrong: bool,
}

pub const MODULE: &str = "gen";

pub fn name(index: usize) -> String {
    format!("f{index:02}")
}

pub fn qualified(index: usize) -> String {
    format!("{MODULE}::{}", name(index))
}

/// `f_i x`: `x + i` for a leaf, else the sum of its callees at `x`, plus `i`.
fn value(defs: &[Generated], index: usize, x: i64) -> i64 {
    let own = index as i64;
    if defs[index].callees.is_empty() {
        x + own
    } else {
        defs[index]
            .callees
            .iter()
            .map(|&callee| value(defs, callee, x))
            .sum::<i64>()
            + own
    }
}

/// Writes the root's files into `root` and the playbooks into `playbooks`
/// (`<playbooks>/gen/f07.jsonl` and the Soil each names).
pub fn write(root: &Path, playbooks: &Path, defs: &[Generated]) {
    let write = |path: &Path, text: &str| {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write a generated file");
    };
    write(
        &root.join("soil.toml"),
        "[toolchain]\ntrellis = \"0.1.0\"\nsoil0_cli = \"0.1.0\"\n\n[tags]\ngen = \"generated\"\n",
    );
    write(
        &root.join("_project.tr"),
        "---\nname: generated\n---\n\n# Generated\n\nDefinitions that call each other, for lowering several at once.\n",
    );
    write(
        &root.join(MODULE).join("_module.tr"),
        "---\nname: gen\ntags: [gen]\n---\n\n# gen\n\nGenerated definitions over whole numbers.\n",
    );
    for (index, def) in defs.iter().enumerate() {
        let name = name(index);
        let calls: Vec<String> = def.callees.iter().map(|&c| self::name(c)).collect();
        let prose = if calls.is_empty() {
            format!("x plus {index}.")
        } else {
            let named: Vec<String> = calls.iter().map(|c| format!("`{c}` of x")).collect();
            format!("The sum of {}, plus {index}.", named.join(" and "))
        };
        let expected = value(defs, index, 1);
        write(
            &root.join(MODULE).join(format!("{name}.tr")),
            &format!(
                "---\nname: {name}\ntags: [gen]\n---\n\n# {name}\n\n{prose}\n\n```soil-sig\n{name} : (x : I64) -> I64\n```\n\n```test basics\n{name}(1) -> {expected}\n```\n"
            ),
        );
        let sum = if calls.is_empty() {
            "x".to_owned()
        } else {
            calls
                .iter()
                .map(|c| format!("{c} x"))
                .collect::<Vec<_>>()
                .join(" + ")
        };
        let own = if def.wrong { index + 1000 } else { index };
        let soil = if def.helper {
            format!(
                "{name} x = _{name}_step x\n\n_{name}_step : (x : I64) -> I64\n\n_{name}_step x = {sum} + {own}\n"
            )
        } else {
            format!("{name} x = {sum} + {own}\n")
        };
        write(&playbooks.join(MODULE).join(format!("{name}.soil")), &soil);
        let think = format!("{{\"sleep_ms\": {}}}\n", def.think_ms);
        let playbook = [
            think.clone(),
            "{\"tool\": \"read_context\", \"args\": {\"path\": \"spec.md\"}, \"expect\": {\"is_error\": false}}\n".to_owned(),
            think.clone(),
            format!("{{\"tool\": \"write_soil\", \"soil_file\": \"{name}.soil\", \"args\": {{\"decisions_applied\": []}}, \"expect\": {{\"is_error\": false}}}}\n"),
            think,
            "{\"tool\": \"check_types\", \"expect\": {\"is_error\": false}}\n".to_owned(),
            format!("{{\"say\": \"{name} is written\"}}\n"),
        ]
        .concat();
        write(
            &playbooks.join(MODULE).join(format!("{name}.jsonl")),
            &playbook,
        );
    }
}

/// The files a lowering writes into the root, with their bytes: every
/// definition's `.soil` and `.lock`, `gen/_private.soil` and `soil.lock`.
pub fn landed(root: &Path, count: usize) -> Vec<(String, Option<String>)> {
    let mut files: Vec<String> = (0..count)
        .flat_map(|index| {
            let name = name(index);
            [
                format!("{MODULE}/{name}.soil"),
                format!("{MODULE}/{name}.lock"),
            ]
        })
        .collect();
    files.push(format!("{MODULE}/_private.soil"));
    files.push("soil.lock".to_owned());
    files
        .into_iter()
        .map(|relative| {
            let text = std::fs::read_to_string(root.join(&relative)).ok();
            (relative, text)
        })
        .collect()
}
