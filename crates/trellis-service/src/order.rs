//! Callee-first order (design §4.9): a definition is lowered after the
//! definitions it may call, so its callable surface holds them when its job
//! starts. "May call" is what the root says before any body exists: the callees
//! of its current Soil (a re-lowering), and the definitions its spec names — in
//! the signature, clause, property and test blocks, and in inline code spans of
//! the prose. Among definitions with no order between them, and to break a
//! cycle, the queue keeps the order in which they were named.

use std::collections::{BTreeMap, BTreeSet};

use trellis_db::{Item, ItemKind, RootDatabase, Workspace, root_index};

/// Every function definition of the root, `module::name`.
pub fn functions(db: &RootDatabase) -> Vec<String> {
    let index = root_index(db, Workspace::get(db));
    let mut out = Vec::new();
    for (module, files) in &index.modules {
        for name in files.specs.keys() {
            if ItemKind::of(name) == ItemKind::Function {
                out.push(format!("{module}::{name}"));
            }
        }
    }
    out
}

/// The definitions of the root `def` may call (excluding itself).
pub fn may_call(db: &RootDatabase, def: &str, functions: &BTreeSet<String>) -> BTreeSet<String> {
    let Some((module, name)) = trellis_db::split_definition_name(def) else {
        return BTreeSet::new();
    };
    let item = Item::new(db, module.to_owned(), name.to_owned());
    let mut out = BTreeSet::new();
    let mut mention = |word: &str| {
        let qualified = if word.contains("::") {
            word.to_owned()
        } else {
            format!("{module}::{word}")
        };
        if qualified != def && functions.contains(&qualified) {
            out.insert(qualified);
        }
    };
    let (calls, _) = trellis_db::lowering_edges(db, item);
    for edge in calls {
        mention(&edge.name);
    }
    if let Some(spec) = trellis_db::spec_file(db, item) {
        for word in mentioned_names(spec.text(db)) {
            mention(word);
        }
    }
    out
}

/// The identifiers in a `.tr`'s formal blocks and in its prose's inline code.
fn mentioned_names(text: &str) -> Vec<&str> {
    const FORMAL: &[&str] = &["soil-sig", "requires", "ensures", "property", "test"];
    let mut out = Vec::new();
    let mut in_fence: Option<bool> = None; // Some(formal?)
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            in_fence = match in_fence {
                Some(_) => None,
                None => {
                    let language = info.split_whitespace().next().unwrap_or_default();
                    Some(FORMAL.contains(&language))
                }
            };
            continue;
        }
        match in_fence {
            Some(true) => out.extend(identifiers(line)),
            Some(false) => {}
            None => {
                for (index, span) in line.split('`').enumerate() {
                    if index % 2 == 1 {
                        out.extend(identifiers(span));
                    }
                }
            }
        }
    }
    out
}

/// `name` and `module::name` tokens.
fn identifiers(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if word(bytes[i]) && !bytes[i].is_ascii_digit() {
            let start = i;
            loop {
                while i < bytes.len() && word(bytes[i]) {
                    i += 1;
                }
                let qualified = bytes
                    .get(i..i + 3)
                    .is_some_and(|next| next[0] == b':' && next[1] == b':' && word(next[2]));
                if !qualified {
                    break;
                }
                i += 2;
            }
            out.push(&text[start..i]);
        } else {
            i += 1;
        }
    }
    out
}

/// `defs` ordered so that each comes after every other one it may call; ties
/// and cycles keep the given order.
pub fn callee_first(
    defs: &[String],
    mut may_call: impl FnMut(&str) -> BTreeSet<String>,
) -> Vec<String> {
    let wanted: BTreeSet<&String> = defs.iter().collect();
    let mut waits_on: BTreeMap<&String, BTreeSet<String>> = BTreeMap::new();
    for def in defs {
        let deps = may_call(def)
            .into_iter()
            .filter(|dep| wanted.contains(dep) && dep != def)
            .collect();
        waits_on.insert(def, deps);
    }
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    while out.len() < defs.len() {
        let ready = defs
            .iter()
            .find(|def| !done.contains(*def) && waits_on[def].iter().all(|dep| done.contains(dep)));
        // A cycle: take the first one left, in the given order.
        let next = ready.or_else(|| defs.iter().find(|def| !done.contains(*def)));
        let Some(next) = next else { break };
        done.insert(next.clone());
        out.push(next.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(defs: &[&str], edges: &[(&str, &str)]) -> Vec<String> {
        let defs: Vec<String> = defs.iter().map(|d| d.to_string()).collect();
        callee_first(&defs, |def| {
            edges
                .iter()
                .filter(|(from, _)| *from == def)
                .map(|(_, to)| to.to_string())
                .collect()
        })
    }

    #[test]
    fn callees_come_first_and_ties_keep_the_given_order() {
        assert_eq!(
            order(
                &["m::report", "m::mean", "m::sum", "m::count"],
                &[
                    ("m::report", "m::mean"),
                    ("m::mean", "m::sum"),
                    ("m::mean", "m::count"),
                ]
            ),
            ["m::sum", "m::count", "m::mean", "m::report"]
        );
        // A ready definition goes before a cycle, which is broken in the given
        // order; an edge outside the batch is ignored.
        assert_eq!(
            order(
                &["m::a", "m::b", "m::c"],
                &[("m::a", "m::b"), ("m::b", "m::a"), ("m::c", "m::x")]
            ),
            ["m::c", "m::a", "m::b"]
        );
    }

    #[test]
    fn formal_blocks_and_inline_code_are_read_and_other_prose_is_not() {
        let text = "---\nname: mean\n---\n\n# mean\n\nUses `total` over the count of things.\n\n```soil-sig\nmean : (xs : List F64) -> F64\n```\n\n```requires\nok: csvstats::non_empty xs\n```\n\n```python\nimport helper\n```\n";
        let names = mentioned_names(text);
        assert!(names.contains(&"total"));
        assert!(names.contains(&"csvstats::non_empty"));
        assert!(names.contains(&"mean"));
        assert!(!names.contains(&"count"), "{names:?}");
        assert!(!names.contains(&"helper"), "{names:?}");
    }
}
