//! A deterministic synthetic root for benchmarks and scale tests: `n` function
//! definitions in modules of fifty, each with a full spec (prose, signature, an
//! expect test) and a Soil body. The call graph is layered like real code: in each
//! module the first ten definitions are leaves (they call nothing), the next thirty
//! call leaves of their own module or of the two modules before it, and the last
//! ten call definitions of their own module. So a definition's dependents stay
//! bounded as the root grows, and an edit's true blast radius does not depend on
//! `n`. Each module exports its leaves, so the root checks clean. Same `n`, same
//! bytes.

const PER_MODULE: usize = 50;
const LEAVES: usize = 10;
const TOPS: usize = 10;

/// The files of a synthetic root as (root-relative path, text), `soil.toml` first.
pub fn synthetic_root(definitions: usize) -> Vec<(String, String)> {
    let mut rng = SplitMix(0x5EED_0000);
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
    for index in 0..definitions {
        let module = module_of(index);
        if index % PER_MODULE == 0 {
            files.push((
                format!("{module}/_module.tr"),
                format!(
                    "---\nname: {module}\n---\n\n# Module {module}\n\nFifty generated definitions.\n\n```decisions\n- **inputs** — every definition takes one I64\n```\n\n```exports\n{}\n```\n",
                    leaves_of(index, definitions)
                ),
            ));
        }
        let calls = callees(index, definitions, &mut rng);
        let name = name_of(index);
        let mut body = format!(
            "{name} x =\n  let base = x * {} + {} in\n",
            rng.below(7) + 1,
            rng.below(100)
        );
        let mut sum = String::from("base");
        for (k, &callee) in calls.iter().enumerate() {
            let reference = if module_of(callee) == module {
                name_of(callee)
            } else {
                format!("{}::{}", module_of(callee), name_of(callee))
            };
            body.push_str(&format!("  let r{k} = {reference} (x - {}) in\n", k + 1));
            sum.push_str(&format!(" + r{k}"));
        }
        body.push_str(&format!("  {sum}\n"));
        files.push((format!("{module}/{name}.soil"), body));
        files.push((
            format!("{module}/{name}.tr"),
            format!(
                "---\nname: {name}\ntags: [synthetic]\n---\n\n# {name}\n\nA generated definition calling {} others.\n\n```soil-sig\n{name} : (x : I64) -> I64\n```\n\n```test basics\n{name}(0) -> 0\n```\n",
                calls.len()
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

/// The exports of the module starting at `module_start`: its leaves, the only
/// definitions other modules call.
fn leaves_of(module_start: usize, definitions: usize) -> String {
    (module_start..(module_start + LEAVES).min(definitions))
        .map(name_of)
        .collect::<Vec<_>>()
        .join(", ")
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

    #[test]
    fn the_synthetic_root_checks_clean() {
        let mut db = crate::RootDatabase::default();
        let mut change = crate::Change::default();
        for (path, text) in synthetic_root(120) {
            change.set_root_file(path, text);
        }
        change.apply(&mut db);
        let report = crate::check_root(&db, None);
        let codes: Vec<&str> = report.diagnostics.iter().map(|d| d.code.as_str()).collect();
        assert!(
            codes.is_empty(),
            "the synthetic root has problems: {codes:?}"
        );
    }
}
