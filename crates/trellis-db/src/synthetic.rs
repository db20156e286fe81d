//! A deterministic synthetic root for benchmarks and scale tests: `n` function
//! definitions spread over modules of fifty, each with a full spec (prose, signature,
//! an expect test) and a Soil body calling up to three earlier definitions,
//! a third of those calls crossing into other modules. Same `n`, same bytes.

/// The files of a synthetic root as (root-relative path, text), `soil.toml` first.
pub fn synthetic_root(definitions: usize) -> Vec<(String, String)> {
    const PER_MODULE: usize = 50;
    let mut rng = SplitMix(0x5EED_0000 ^ definitions as u64);
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
    let module_of = |index: usize| format!("m{:03}", index / PER_MODULE);
    let name_of = |index: usize| format!("f{index:05}");
    for index in 0..definitions {
        let module = module_of(index);
        if index % PER_MODULE == 0 {
            files.push((
                format!("{module}/_module.tr"),
                format!(
                    "---\nname: {module}\n---\n\n# Module {module}\n\nFifty generated definitions.\n\n```decisions\n- **inputs** — every definition takes one I64\n```\n"
                ),
            ));
        }
        let name = name_of(index);
        let mut calls = Vec::new();
        if index > 0 {
            for _ in 0..rng.below(4) {
                let callee = if rng.below(3) == 0 {
                    rng.below(index as u64) as usize
                } else {
                    let start = index - index % PER_MODULE;
                    if start == index {
                        continue;
                    }
                    start + rng.below((index - start) as u64) as usize
                };
                if !calls.contains(&callee) {
                    calls.push(callee);
                }
            }
        }
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
}
