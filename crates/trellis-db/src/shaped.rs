//! Synthetic roots of a chosen shape, for scale tests and benchmarks that must
//! not be tuned to one generator ([`crate::synthetic`]'s layered root is one
//! shape): how many definitions a module holds, how many record types each
//! module declares, how many callees a definition calls and how many of them
//! are in other modules, and how much prose each spec carries. The prose speaks
//! as people write it: a definition's spec names its callees, the module's
//! record type and a few definitions anywhere in the root; a type's spec names
//! the functions that take it; a module's spec lists its definitions. Names in
//! prose are not references — no check, hash or status follows them — so an
//! edit's work must not follow them either. Every definition's expect test
//! holds the body's true result, so an adopted and tested root is green, and
//! the root checks clean. Same shape, same bytes.

use std::collections::HashMap;
use std::fmt::Write as _;

/// The shape of a [`shaped_root`].
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Function definitions in all.
    pub definitions: usize,
    /// Definitions per module.
    pub per_module: usize,
    /// Record types per module, each taken by one of its functions.
    pub types_per_module: usize,
    /// The most callees a definition calls (it calls 0 to this many).
    pub fan_out: usize,
    /// Of every ten callees, how many are in one of the three modules before
    /// (a function there that calls nothing).
    pub cross_module_tenths: u64,
    /// Lines of plain prose per spec, beside the sentences naming things.
    pub prose_lines: usize,
    /// Definitions anywhere in the root each spec's prose names.
    pub prose_mentions: usize,
}

impl Shape {
    /// A shape unlike the layered root's: modules of twenty, two record types
    /// each, up to four callees (a third across modules), and prose naming
    /// callees, types and three definitions anywhere.
    pub fn mixed(definitions: usize) -> Shape {
        Shape {
            definitions,
            per_module: 20,
            types_per_module: 2,
            fan_out: 4,
            cross_module_tenths: 3,
            prose_lines: 6,
            prose_mentions: 3,
        }
    }
}

/// One generated function: `x * scale + offset` plus each callee applied to
/// `x - k` for the callee's position `k` (from 1). A function that takes a
/// record reads `x` from its field `a` for the base and from `b` for its
/// callees' arguments; its test passes both as 0.
struct Function {
    module: usize,
    name: String,
    scale: i64,
    offset: i64,
    calls: Vec<usize>,
    /// The record type it takes (by its index in the module), if any.
    takes: Option<usize>,
}

/// What function `index` answers for `x`; arithmetic wraps, as the root's
/// decision says. Remembered by (function, argument): call chains run deep,
/// and a chain's answers are shared by every function above it.
fn value(
    functions: &[Function],
    known: &mut HashMap<(usize, i64), i64>,
    index: usize,
    x: i64,
) -> i64 {
    if let Some(&answer) = known.get(&(index, x)) {
        return answer;
    }
    let function = &functions[index];
    let mut sum = x.wrapping_mul(function.scale).wrapping_add(function.offset);
    for (k, &callee) in function.calls.iter().enumerate() {
        let argument = x.wrapping_sub(k as i64 + 1);
        sum = sum.wrapping_add(value(functions, known, callee, argument));
    }
    known.insert((index, x), sum);
    sum
}

fn module_name(module: usize) -> String {
    format!("s{module:04}")
}

fn function_name(index: usize) -> String {
    format!("g{index:06}")
}

fn type_name(module: usize, k: usize) -> String {
    format!("Rec{module:04}x{k}")
}

/// The path of function `index`'s spec in a root of `shape`.
pub fn shaped_spec_path(shape: &Shape, index: usize) -> String {
    format!(
        "{}/{}.tr",
        module_name(index / shape.per_module),
        function_name(index)
    )
}

/// The path of function `index`'s Soil body in a root of `shape`.
pub fn shaped_soil_path(shape: &Shape, index: usize) -> String {
    format!(
        "{}/{}.soil",
        module_name(index / shape.per_module),
        function_name(index)
    )
}

/// The path of module `module`'s own spec in a root of `shape`.
pub fn shaped_module_spec_path(module: usize) -> String {
    format!("{}/_module.tr", module_name(module))
}

/// The files of a root of `shape` as (root-relative path, text), `soil.toml` first.
pub fn shaped_root(shape: &Shape) -> Vec<(String, String)> {
    let functions = functions(shape);
    let modules = shape.definitions.div_ceil(shape.per_module);
    let mut rng = SplitMix(0x5A4E_D000);
    let mut known = HashMap::new();
    let mut files = vec![
        (
            "soil.toml".to_owned(),
            "[toolchain]\ntrellis = \"0.1.0\"\nsoil0_cli = \"0.1.0\"\n\n[tags]\nshaped = \"generated for scale tests\"\n"
                .to_owned(),
        ),
        (
            "_project.tr".to_owned(),
            "---\nname: shaped\n---\n\n# A shaped root\n\nGenerated for scale tests.\n\n```decisions\n- **wrapping** — integer arithmetic wraps\n```\n"
                .to_owned(),
        ),
    ];
    for module in 0..modules {
        let members: Vec<usize> = (module * shape.per_module
            ..((module + 1) * shape.per_module).min(shape.definitions))
            .collect();
        files.push(module_spec(shape, module, &members, &functions));
        for k in 0..shape.types_per_module {
            files.push(type_spec(shape, module, k, &functions, &members, &mut rng));
        }
        for &index in &members {
            files.push(soil_file(shape, &functions, index));
            let answer = value(&functions, &mut known, index, 0);
            files.push(function_spec(shape, &functions, index, answer, &mut rng));
        }
    }
    files
}

/// The longest chain of calls below a function.
const MAX_DEPTH: usize = 24;

fn functions(shape: &Shape) -> Vec<Function> {
    let mut rng = SplitMix(0x5EED_5A4E);
    let mut functions: Vec<Function> = Vec::with_capacity(shape.definitions);
    let mut depths: Vec<usize> = Vec::with_capacity(shape.definitions);
    for index in 0..shape.definitions {
        let module = index / shape.per_module;
        let position = index % shape.per_module;
        // The first of each module's functions take its records, one each, and
        // nothing calls them (their callers would have to build a record).
        let takes = (position < shape.types_per_module).then_some(position);
        let mut calls = Vec::new();
        let wanted = rng.below(shape.fan_out as u64 + 1) as usize;
        for _ in 0..wanted * 2 {
            if calls.len() == wanted {
                break;
            }
            let across = rng.below(10) < shape.cross_module_tenths && module > 0;
            let callee = if across {
                let back = 1 + rng.below(3.min(module as u64)) as usize;
                let start = (module - back) * shape.per_module;
                start + rng.below(shape.per_module as u64) as usize
            } else if position > shape.types_per_module {
                // An earlier function of its own module, so the graph has no cycle.
                let start = module * shape.per_module + shape.types_per_module;
                start + rng.below((position - shape.types_per_module) as u64) as usize
            } else {
                continue;
            };
            // Call chains stay as deep as real code's, whatever the root's size,
            // and a call across modules reaches a function that calls nothing:
            // what depends on a definition stays within its module and the
            // three after it, so an edit's true reach does not grow with the root.
            let callable = functions.get(callee).is_some_and(|f| f.takes.is_none())
                && depths[callee] < MAX_DEPTH
                && (!across || depths[callee] == 0);
            if callable && !calls.contains(&callee) {
                calls.push(callee);
            }
        }
        depths.push(
            calls
                .iter()
                .map(|&callee| depths[callee] + 1)
                .max()
                .unwrap_or(0),
        );
        functions.push(Function {
            module,
            name: function_name(index),
            scale: rng.below(7) as i64 + 1,
            offset: rng.below(100) as i64,
            calls,
            takes,
        });
    }
    functions
}

/// A module's spec: prose listing its definitions and types, a decision, and
/// the exports every other module may call (all of its functions).
fn module_spec(
    shape: &Shape,
    module: usize,
    members: &[usize],
    functions: &[Function],
) -> (String, String) {
    let name = module_name(module);
    let listed: Vec<String> = (members.iter())
        .map(|&index| format!("`{}`", functions[index].name))
        .collect();
    let types: Vec<String> = (0..shape.types_per_module)
        .map(|k| format!("`{}`", type_name(module, k)))
        .collect();
    let exports: Vec<&str> = (members.iter())
        .map(|&index| functions[index].name.as_str())
        .collect();
    let text = format!(
        "---\nname: {name}\n---\n\n# Module {name}\n\nIts definitions are {}. Its records are {}.\n\n```decisions\n- **inputs** — every definition takes one I64 or one record\n```\n\n```exports\n{}\n```\n",
        listed.join(", "),
        if types.is_empty() {
            "none".to_owned()
        } else {
            types.join(", ")
        },
        exports.join(", ")
    );
    (format!("{name}/_module.tr"), text)
}

/// A record type's spec: two fields, an invariant, and prose naming the
/// function that takes it and a few of its module's others.
fn type_spec(
    shape: &Shape,
    module: usize,
    k: usize,
    functions: &[Function],
    members: &[usize],
    rng: &mut SplitMix,
) -> (String, String) {
    let name = type_name(module, k);
    let mut prose = String::new();
    if let Some(&taker) = (members.iter()).find(|&&index| functions[index].takes == Some(k)) {
        let _ = write!(prose, "`{}` takes it. ", functions[taker].name);
    }
    for _ in 0..shape.prose_mentions {
        let other = members[rng.below(members.len() as u64) as usize];
        let _ = write!(prose, "See also `{}`. ", functions[other].name);
    }
    let text = format!(
        "---\nname: {name}\ntags: [shaped]\n---\n\n# {name}\n\nA pair of numbers. {prose}\n{}\n```soil-type\ntype {name} = {{\n  a : I64,\n  b : I64\n}}\n```\n\n```invariant\nsmall: self.a <= 1000000\n```\n",
        plain_prose(shape, rng)
    );
    (format!("{}/{name}.tr", module_name(module)), text)
}

fn soil_file(shape: &Shape, functions: &[Function], index: usize) -> (String, String) {
    let function = &functions[index];
    let (parameter, base_input, argument) = match function.takes {
        Some(_) => ("r", "r.a", "r.b"),
        None => ("x", "x", "x"),
    };
    let mut body = format!(
        "{} {parameter} =\n  let base = {base_input} * {} + {} in\n",
        function.name, function.scale, function.offset
    );
    let mut sum = String::from("base");
    for (k, &callee) in function.calls.iter().enumerate() {
        let callee = &functions[callee];
        let reference = if callee.module == function.module {
            callee.name.clone()
        } else {
            format!("{}::{}", module_name(callee.module), callee.name)
        };
        let _ = writeln!(body, "  let r{k} = {reference} ({argument} - {}) in", k + 1);
        let _ = write!(sum, " + r{k}");
    }
    let _ = writeln!(body, "  {sum}");
    (shaped_soil_path(shape, index), body)
}

fn function_spec(
    shape: &Shape,
    functions: &[Function],
    index: usize,
    answer: i64,
    rng: &mut SplitMix,
) -> (String, String) {
    let function = &functions[index];
    let name = &function.name;
    let mut prose = String::new();
    if !function.calls.is_empty() {
        let callees: Vec<String> = (function.calls.iter())
            .map(|&callee| format!("`{}`", functions[callee].name))
            .collect();
        let _ = write!(prose, "It adds what {} answer. ", callees.join(", "));
    }
    if shape.types_per_module > 0 {
        let k = rng.below(shape.types_per_module as u64) as usize;
        let _ = write!(
            prose,
            "It belongs with `{}`. ",
            type_name(function.module, k)
        );
    }
    for _ in 0..shape.prose_mentions {
        let other = rng.below(functions.len() as u64) as usize;
        let _ = write!(prose, "Compare `{}`. ", functions[other].name);
    }
    let (signature, input) = match function.takes {
        Some(k) => (
            format!("{name} : (r : {}) -> I64", type_name(function.module, k)),
            "{\"a\": 0, \"b\": 0}".to_owned(),
        ),
        None => (format!("{name} : (x : I64) -> I64"), "0".to_owned()),
    };
    let text = format!(
        "---\nname: {name}\ntags: [shaped]\n---\n\n# {name}\n\nA generated definition. {prose}\n{}\n```soil-sig\n{signature}\n```\n\n```test basics\n{name}({input}) -> {}\n```\n",
        plain_prose(shape, rng),
        answer
    );
    (shaped_spec_path(shape, index), text)
}

/// `shape.prose_lines` lines of words no definition is named by.
fn plain_prose(shape: &Shape, rng: &mut SplitMix) -> String {
    const WORDS: [&str; 12] = [
        "the", "value", "grows", "with", "its", "input", "and", "stays", "within", "bounds",
        "when", "called",
    ];
    let mut prose = String::new();
    for _ in 0..shape.prose_lines {
        for k in 0..10 {
            if k > 0 {
                prose.push(' ');
            }
            prose.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
        }
        prose.push_str(".\n");
    }
    prose
}

/// SplitMix64: small, deterministic, good enough to shape a root.
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

    fn problems(files: Vec<(String, String)>) -> Vec<String> {
        let mut db = crate::RootDatabase::default();
        let mut change = crate::Change::default();
        for (path, text) in files {
            change.set_root_file(path, text);
        }
        change.apply(&mut db);
        let report = crate::check_root(&db, None);
        (report.diagnostics.iter())
            .map(|d| format!("{} {:?} {}", d.code, d.file, d.message))
            .collect()
    }

    #[test]
    fn shaped_roots_check_clean_whatever_their_shape() {
        let wide = Shape {
            per_module: 7,
            types_per_module: 1,
            fan_out: 6,
            cross_module_tenths: 8,
            prose_lines: 1,
            prose_mentions: 8,
            definitions: 100,
        };
        for shape in [Shape::mixed(120), wide] {
            assert_eq!(problems(shaped_root(&shape)), Vec::<String>::new());
        }
    }

    #[test]
    fn same_shape_same_bytes() {
        let shape = Shape::mixed(90);
        let files = shaped_root(&shape);
        assert_eq!(files, shaped_root(&shape));
        // soil.toml, _project.tr, then per module its spec, two types, and a
        // .soil and a .tr per definition.
        assert_eq!(files.len(), 2 + 5 * 3 + 2 * 90);
        assert!(
            files
                .iter()
                .any(|(path, _)| *path == shaped_spec_path(&shape, 42))
        );
        assert!(
            files
                .iter()
                .any(|(path, _)| *path == shaped_soil_path(&shape, 42))
        );
    }
}
