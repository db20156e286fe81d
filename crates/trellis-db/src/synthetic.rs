//! A deterministic synthetic root for benchmarks and scale tests: `n` function
//! definitions in modules of fifty, each with a full spec (prose, signature, an
//! expect test whose expected value is the body's true result, so an adopted and
//! tested root is green) and a Soil body. The call graph is layered like real
//! code: in each module the first ten definitions are leaves (they call nothing),
//! the next thirty call leaves of their own module or of the two modules before
//! it, and the last ten call definitions of their own module. So a definition's
//! dependents stay bounded as the root grows, and an edit's true blast radius
//! does not depend on `n`. Each module exports its leaves, so the root checks
//! clean. Same `n`, same bytes.
//!
//! [`hub_root`] gives the same shape a hub chain as well: a few hubs under seven
//! levels of a hundred definitions, each calling two of the level below, so each
//! hub has hundreds of transitive dependents at any `n` — the hard case for an
//! edit whose effect must follow its dependents, not the root's size.

use std::collections::BTreeMap;

const PER_MODULE: usize = 50;
const LEAVES: usize = 10;
const TOPS: usize = 10;

/// The hubs at the bottom of [`hub_root`]'s chain.
pub const HUBS: usize = 32;
/// The levels above the hubs.
const HUB_LEVELS: usize = 7;
/// The widest a level above the hubs gets.
const HUB_WIDTH: usize = 100;

/// One generated definition: `x * scale + offset` plus each callee applied to
/// `x - k` for the callee's position `k` (from 1).
struct Definition {
    module: String,
    name: String,
    scale: i64,
    offset: i64,
    calls: Vec<usize>,
    /// Listed in its module's exports: another module may call it.
    exported: bool,
}

impl Definition {
    /// What the body answers for `x`; arithmetic wraps, as the synthetic
    /// project's decision says.
    fn value(definitions: &[Definition], index: usize, x: i64) -> i64 {
        let definition = &definitions[index];
        let mut sum = x
            .wrapping_mul(definition.scale)
            .wrapping_add(definition.offset);
        for (k, &callee) in definition.calls.iter().enumerate() {
            let argument = x.wrapping_sub(k as i64 + 1);
            sum = sum.wrapping_add(Definition::value(definitions, callee, argument));
        }
        sum
    }
}

/// The files of a synthetic root as (root-relative path, text), `soil.toml` first.
pub fn synthetic_root(definitions: usize) -> Vec<(String, String)> {
    render(&layered(definitions))
}

/// A synthetic root of `definitions` in all, [`hub_definitions`] of them a hub
/// chain in modules `hub0` (the [`HUBS`] hubs, `hub0::h000`…) to `hub7`, the
/// rest [`synthetic_root`]'s layered modules.
pub fn hub_root(definitions: usize) -> Vec<(String, String)> {
    render(&with_hub_chain(definitions))
}

fn with_hub_chain(definitions: usize) -> Vec<Definition> {
    let chain = hub_definitions(definitions);
    let mut all = layered(definitions - chain);
    let mut rng = SplitMix(0x0048_5542);
    let width = level_width(definitions);
    let mut below: Vec<usize> = Vec::new();
    for level in 0..=HUB_LEVELS {
        let count = if level == 0 { HUBS } else { width };
        let mut this_level = Vec::new();
        for k in 0..count {
            let mut calls = Vec::new();
            while !below.is_empty() && calls.len() < 2.min(below.len()) {
                let callee = below[rng.below(below.len() as u64) as usize];
                if !calls.contains(&callee) {
                    calls.push(callee);
                }
            }
            this_level.push(all.len());
            all.push(Definition {
                module: format!("hub{level}"),
                name: hub_name(level, k),
                scale: rng.below(7) as i64 + 1,
                offset: rng.below(100) as i64,
                calls,
                exported: level < HUB_LEVELS,
            });
        }
        below = this_level;
    }
    all
}

/// How many of [`hub_root`]'s definitions form its hub chain: the hubs and
/// seven levels of a hundred from 2,000 definitions on; a smaller root gets
/// levels of a fortieth of it, so its layered part still fills three modules.
pub fn hub_definitions(definitions: usize) -> usize {
    HUBS + HUB_LEVELS * level_width(definitions)
}

fn level_width(definitions: usize) -> usize {
    if definitions >= 2_000 {
        HUB_WIDTH
    } else {
        (definitions / 40).max(1)
    }
}

fn hub_name(level: usize, k: usize) -> String {
    format!("h{level}{k:02}")
}

/// The Soil body of hub `k` (below [`HUBS`]) of a [`hub_root`].
pub fn hub_soil_path(k: usize) -> String {
    format!("hub0/{}.soil", hub_name(0, k))
}

/// The layered modules of [`synthetic_root`].
fn layered(count: usize) -> Vec<Definition> {
    let mut rng = SplitMix(0x5EED_0000);
    let mut definitions = Vec::with_capacity(count);
    for index in 0..count {
        let calls = callees(index, count, &mut rng);
        definitions.push(Definition {
            module: module_of(index),
            name: name_of(index),
            scale: rng.below(7) as i64 + 1,
            offset: rng.below(100) as i64,
            calls,
            exported: index % PER_MODULE < LEAVES,
        });
    }
    definitions
}

/// The files of `definitions`: `soil.toml`, `_project.tr`, then each module's
/// `_module.tr` (exporting what another module may call) before its definitions.
fn render(definitions: &[Definition]) -> Vec<(String, String)> {
    let mut files = vec![
        (
            "soil.toml".to_owned(),
            "[toolchain]\ntrellis = \"0.1.0\"\nsoil0_cli = \"0.1.0\"\n\n[tags]\nsynthetic = \"generated for benchmarks\"\n"
                .to_owned(),
        ),
        (
            "_project.tr".to_owned(),
            "---\nname: synthetic\n---\n\n# A synthetic root\n\nGenerated for benchmarks.\n\n```decisions\n- **wrapping** — integer arithmetic wraps\n```\n"
                .to_owned(),
        ),
    ];
    let mut exports: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for definition in definitions {
        let names = exports.entry(&definition.module).or_default();
        if definition.exported {
            names.push(&definition.name);
        }
    }
    for (index, definition) in definitions.iter().enumerate() {
        let module = &definition.module;
        if index == 0 || definitions[index - 1].module != *module {
            files.push((
                format!("{module}/_module.tr"),
                format!(
                    "---\nname: {module}\n---\n\n# Module {module}\n\nFifty generated definitions.\n\n```decisions\n- **inputs** — every definition takes one I64\n```\n\n```exports\n{}\n```\n",
                    exports[module.as_str()].join(", ")
                ),
            ));
        }
        let name = &definition.name;
        let mut body = format!(
            "{name} x =\n  let base = x * {} + {} in\n",
            definition.scale, definition.offset
        );
        let mut sum = String::from("base");
        for (k, &callee) in definition.calls.iter().enumerate() {
            let callee = &definitions[callee];
            let reference = if callee.module == *module {
                callee.name.clone()
            } else {
                format!("{}::{}", callee.module, callee.name)
            };
            body.push_str(&format!("  let r{k} = {reference} (x - {}) in\n", k + 1));
            sum.push_str(&format!(" + r{k}"));
        }
        body.push_str(&format!("  {sum}\n"));
        files.push((format!("{module}/{name}.soil"), body));
        files.push((
            format!("{module}/{name}.tr"),
            format!(
                "---\nname: {name}\ntags: [synthetic]\n---\n\n# {name}\n\nA generated definition calling {} others.\n\n```soil-sig\n{name} : (x : I64) -> I64\n```\n\n```test basics\n{name}(0) -> {}\n```\n",
                definition.calls.len(),
                Definition::value(definitions, index, 0)
            ),
        ));
    }
    files
}

/// The path of definition `index`'s Soil body, e.g. for editing a leaf.
pub fn soil_path(index: usize) -> String {
    format!("{}/{}.soil", module_of(index), name_of(index))
}

/// The path of definition `index`'s spec.
pub fn spec_path(index: usize) -> String {
    format!("{}/{}.tr", module_of(index), name_of(index))
}

fn module_of(index: usize) -> String {
    format!("m{:03}", index / PER_MODULE)
}

fn name_of(index: usize) -> String {
    format!("f{index:05}")
}

/// Up to three distinct callees for definition `index`, by its layer.
fn callees(index: usize, definitions: usize, rng: &mut SplitMix) -> Vec<usize> {
    let module_start = index - index % PER_MODULE;
    let position = index % PER_MODULE;
    let mut calls = Vec::new();
    if position < LEAVES {
        return calls;
    }
    for _ in 0..=rng.below(3) {
        let callee = if position >= PER_MODULE - TOPS {
            // A top definition calls a middle definition of its module.
            let middles = (PER_MODULE - TOPS - LEAVES) as u64;
            module_start + LEAVES + rng.below(middles) as usize
        } else {
            // A middle definition calls a leaf of this module or the two before it.
            let back = rng.below(3) as usize * PER_MODULE;
            let start = module_start.saturating_sub(back);
            start + rng.below(LEAVES as u64) as usize
        };
        if callee < definitions && callee != index && !calls.contains(&callee) {
            calls.push(callee);
        }
    }
    calls
}

/// SplitMix64: small, deterministic, good enough to shape a call graph.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 { 0 } else { self.next() % bound }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_size_same_bytes() {
        assert_eq!(synthetic_root(120), synthetic_root(120));
        let files = synthetic_root(120);
        // soil.toml, _project.tr, three _module.tr, then a .soil and a .tr per definition.
        assert_eq!(files.len(), 2 + 3 + 2 * 120);
    }

    fn problems(files: Vec<(String, String)>) -> Vec<String> {
        let mut db = crate::RootDatabase::default();
        let mut change = crate::Change::default();
        for (path, text) in files {
            change.set_root_file(path, text);
        }
        change.apply(&mut db);
        let report = crate::check_root(&db, None);
        (report.diagnostics.iter())
            .map(|d| format!("{} {:?}", d.code, d.file))
            .collect()
    }

    #[test]
    fn the_synthetic_roots_check_clean() {
        assert_eq!(problems(synthetic_root(120)), Vec::<String>::new());
        assert_eq!(problems(hub_root(300)), Vec::<String>::new());
    }

    #[test]
    fn a_hub_root_has_its_size_and_each_hub_hundreds_of_dependents() {
        let definitions = with_hub_chain(2000);
        assert_eq!(definitions.len(), 2000);
        assert_eq!(hub_definitions(2000), HUBS + 700);
        assert_eq!(hub_definitions(20000), hub_definitions(2000));
        let dependents = |hub: usize| {
            let mut reached = vec![false; definitions.len()];
            reached[hub] = true;
            // Callees come before their callers, so one pass in order reaches all.
            for (index, definition) in definitions.iter().enumerate() {
                if definition.calls.iter().any(|&callee| reached[callee]) {
                    reached[index] = true;
                }
            }
            reached.iter().filter(|&&r| r).count() - 1
        };
        let first_hub = 2000 - hub_definitions(2000);
        let counts: Vec<usize> = (first_hub..first_hub + HUBS).map(dependents).collect();
        assert!(
            counts.iter().all(|&count| (150..=700).contains(&count)),
            "each hub reaches hundreds of the chain's 700: {counts:?}"
        );
        assert!(
            hub_root(2000)
                .iter()
                .any(|(path, _)| *path == hub_soil_path(0))
        );
    }
}
