//! The crate's layers, checked from its own source (lib.rs, "Layers"): every
//! module sits in one layer of [`LAYERS`], imports only from its own layer or
//! those below, names the module it imports from (not the crate root's
//! re-export, which would hide the edge), and no modules import each other in
//! a circle. Imports are read from the text: `use crate::…` and `crate::m::`
//! paths (a `super::` outside a test module is the crate root too), with
//! comments, strings and `#[cfg(test)]` modules left out. The checker itself
//! is tested on small made-up crates below, so a check that finds nothing has
//! been seen to find something.

#![allow(clippy::disallowed_methods, reason = "tests read the crate's source")]

use std::collections::BTreeMap;
use std::path::Path;

use expect_test::expect;

/// The layers, bottom first, each with its modules: the same list as lib.rs's
/// opening docs (checked by [`lib_rs_lists_the_same_layers`]) and design §2.2.
const LAYERS: &[(&str, &[&str])] = &[
    ("Pure", &["deep", "graph", "prelude", "refs"]),
    ("Inputs", &["files", "db"]),
    (
        "Files",
        &["config", "index", "soil", "spec", "decisions", "locks"],
    ),
    ("Names", &["resolve", "exports"]),
    ("Hashing", &["hashing"]),
    (
        "Check",
        &[
            "assembly",
            "check",
            "spec_check",
            "test_check",
            "ide",
            "check_report",
        ],
    ),
    ("Suites", &["documents", "tables", "results"]),
    (
        "Status",
        &["status", "entry_status", "status_rows", "lockgen"],
    ),
    (
        "Host-facing",
        &[
            "change",
            "mentions",
            "sealed",
            "spread",
            "ahead",
            "joins",
            "tally",
            "synthetic",
            "shaped",
        ],
    ),
];

/// The one layer whose modules may hold the concrete database; every query
/// below it takes `&dyn Db` (and `db` defines it).
const HOLDS_THE_DATABASE: &str = "Host-facing";

#[test]
fn the_crate_keeps_its_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources = Vec::new();
    for entry in std::fs::read_dir(&src).expect("src") {
        let path = entry.expect("entry").path();
        assert!(
            path.extension().is_some_and(|e| e == "rs"),
            "{} is not a module file: the check reads a flat src/",
            path.display()
        );
        let name = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        if name != "lib" {
            sources.push((name, std::fs::read_to_string(&path).expect("readable")));
        }
    }
    assert!(sources.len() > 30, "the crate's modules: {}", sources.len());
    let findings = findings(&sources, LAYERS);
    assert!(findings.is_empty(), "{}", findings.join("\n"));
}

#[test]
fn lib_rs_lists_the_same_layers() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("lib.rs");
    let documented = documented_layers(&lib);
    let expected: Vec<(String, Vec<String>)> = (LAYERS.iter())
        .map(|(layer, modules)| {
            let mut modules: Vec<String> = modules.iter().map(|m| m.to_string()).collect();
            modules.sort();
            (layer.to_string(), modules)
        })
        .collect();
    assert_eq!(
        documented, expected,
        "lib.rs's layer list and LAYERS differ"
    );
}

#[test]
fn an_upward_import_is_found() {
    let sources = crate_of(&[
        ("low", "//! Low.\npub fn f() {}\n"),
        ("high", "//! High.\nuse crate::low::f;\n"),
        (
            "middle",
            "//! Middle.\nuse crate::{low::f, high::g};\nfn h() { crate::high::g() }\n",
        ),
    ]);
    let layers: &[(&str, &[&str])] = &[("L0", &["low"]), ("L1", &["middle"]), ("L2", &["high"])];
    expect![[r#"
        middle (L1) imports high (L2), a layer above it (line 2)"#]]
    .assert_eq(&findings(&sources, layers).join("\n"));
}

#[test]
fn a_circle_is_found_within_one_layer() {
    let sources = crate_of(&[
        ("a", "//! A.\nuse crate::b::X;\n"),
        ("b", "//! B.\npub fn y() { crate::c::z() }\n"),
        ("c", "//! C.\nuse super::a;\n"),
        ("d", "//! D.\nuse crate::a::W;\n"),
    ]);
    let layers: &[(&str, &[&str])] = &[("L0", &["a", "b", "c", "d"])];
    expect![[r#"
        a circle of imports: a → b → c → a"#]]
    .assert_eq(&findings(&sources, layers).join("\n"));
}

#[test]
fn comments_strings_and_test_modules_are_not_imports() {
    let sources = crate_of(&[
        ("low", "//! See [`crate::high`].\npub fn f() {}\n"),
        (
            "quiet",
            concat!(
                "//! Quiet.\n",
                "/* crate::high::g */\n",
                "const S: &str = \"crate::high::g\";\n",
                "const R: &str = r#\"use crate::high\"#;\n",
                "fn lifetimes<'a>(x: &'a str) -> char { '\"' }\n",
                "#[cfg(test)]\n",
                "mod tests {\n    use super::*;\n    use crate::high::g;\n    fn t() { if true {} }\n}\n",
            ),
        ),
        ("high", "//! High.\npub fn g() {}\n"),
    ]);
    let layers: &[(&str, &[&str])] = &[("L0", &["low", "quiet"]), ("L1", &["high"])];
    assert_eq!(findings(&sources, layers), Vec::<String>::new());
}

#[test]
fn the_root_re_exports_unplaced_modules_and_the_database_are_found() {
    let sources = crate_of(&[
        ("db", "//! Db.\npub struct RootDatabase;\n"),
        (
            "query",
            "//! Query.\nfn q() { crate::check_root(); }\nfn r(db: &crate::db::RootDatabase) {}\n",
        ),
        ("host", "//! Host.\nuse crate::db::RootDatabase;\n"),
        ("stray", "//! Stray.\n"),
    ]);
    let layers: &[(&str, &[&str])] =
        &[("L0", &["db", "query", "gone"]), ("Host-facing", &["host"])];
    expect![[r#"
        stray is in no layer: add it to LAYERS and lib.rs's list
        gone is in LAYERS but not in src/
        query names `crate::check_root`, a re-export of the crate root: name its module (line 2)
        query holds `RootDatabase` below the host-facing layer: take `&dyn Db` (line 3)"#]]
    .assert_eq(&findings(&sources, layers).join("\n"));
}

fn crate_of(modules: &[(&str, &str)]) -> Vec<(String, String)> {
    (modules.iter())
        .map(|(name, text)| (name.to_string(), text.to_string()))
        .collect()
}

/// Everything wrong with `sources` (module name, text) against `layers`.
fn findings(sources: &[(String, String)], layers: &[(&str, &[&str])]) -> Vec<String> {
    let layer_of: BTreeMap<&str, usize> = (layers.iter().enumerate())
        .flat_map(|(at, (_, modules))| modules.iter().map(move |m| (*m, at)))
        .collect();
    let mut out = Vec::new();
    for (name, _) in sources {
        if !layer_of.contains_key(name.as_str()) {
            out.push(format!(
                "{name} is in no layer: add it to LAYERS and lib.rs's list"
            ));
        }
    }
    for module in layer_of.keys() {
        if !sources.iter().any(|(name, _)| name == module) {
            out.push(format!("{module} is in LAYERS but not in src/"));
        }
    }
    let mut edges: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, text) in sources {
        let code = code_of(text);
        let from = layer_of.get(name.as_str()).copied();
        for (line, target) in crate_paths(&code) {
            let Some((to, _)) = sources.iter().find(|(module, _)| *module == target) else {
                out.push(format!(
                    "{name} names `crate::{target}`, a re-export of the crate root: name its module (line {line})"
                ));
                continue;
            };
            if to == name {
                continue;
            }
            let targets = edges.entry(name.as_str()).or_default();
            if targets.contains(&to.as_str()) {
                continue; // Reported (or not) at its first line.
            }
            targets.push(to.as_str());
            if let (Some(from), Some(&to_layer)) = (from, layer_of.get(to.as_str()))
                && to_layer > from
            {
                out.push(format!(
                    "{name} ({}) imports {to} ({}), a layer above it (line {line})",
                    layers[from].0, layers[to_layer].0
                ));
            }
        }
        if let Some(from) = from
            && layers[from].0 != HOLDS_THE_DATABASE
            && name != "db"
        {
            for (at, text) in code.lines().enumerate() {
                if has_word(text, "RootDatabase") {
                    out.push(format!(
                        "{name} holds `RootDatabase` below the host-facing layer: take `&dyn Db` (line {})",
                        at + 1
                    ));
                }
            }
        }
    }
    for circle in circles(&edges) {
        out.push(format!("a circle of imports: {circle}"));
    }
    out
}

/// The layers lib.rs's opening docs list: `N. **Layer** — `a`, `b`: …`,
/// each layer's modules sorted.
fn documented_layers(lib: &str) -> Vec<(String, Vec<String>)> {
    let docs: Vec<&str> = (lib.lines())
        .take_while(|line| line.starts_with("//!"))
        .map(|line| line.trim_start_matches("//!").trim())
        .collect();
    let mut layers = Vec::new();
    for (at, line) in docs.iter().enumerate() {
        let Some((number, rest)) = line.split_once(". **") else {
            continue;
        };
        if number.parse::<usize>().is_err() {
            continue;
        }
        let Some((layer, rest)) = rest.split_once("**") else {
            continue;
        };
        // The modules run up to the first colon, perhaps over several lines.
        let mut listing = rest.to_owned();
        let mut next = at + 1;
        while !listing.contains(':') && next < docs.len() {
            listing.push(' ');
            listing.push_str(docs[next]);
            next += 1;
        }
        let listing = listing.split(':').next().unwrap_or_default();
        let mut modules: Vec<String> = (listing.split('`').skip(1).step_by(2))
            .map(str::to_owned)
            .collect();
        modules.sort();
        layers.push((layer.to_owned(), modules));
    }
    layers
}

/// `text` with comments and the contents of string and char literals blanked
/// (newlines kept, so line numbers hold) and every `#[cfg(test)]` item removed.
fn code_of(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while at < chars.len() {
        let c = chars[at];
        let next = chars.get(at + 1).copied();
        if c == '/' && next == Some('/') {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while at < chars.len() {
                if chars[at] == '/' && chars.get(at + 1) == Some(&'*') {
                    depth += 1;
                    at += 2;
                } else if chars[at] == '*' && chars.get(at + 1) == Some(&'/') {
                    depth -= 1;
                    at += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[at]));
                    at += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('#' | '"')) && !ident_before(&chars, at) {
            let hashes = chars[at + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(at + 1 + hashes) != Some(&'"') {
                out.push(c);
                at += 1;
                continue;
            }
            at += 2 + hashes;
            out.push_str("\"\"");
            while at < chars.len() {
                let closes = chars[at] == '"'
                    && chars[at + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&h| h == '#')
                        .count()
                        == hashes;
                if closes {
                    at += 1 + hashes;
                    break;
                }
                out.push(blank(chars[at]));
                at += 1;
            }
        } else if c == '"' {
            out.push_str("\"\"");
            at += 1;
            while at < chars.len() && chars[at] != '"' {
                if chars[at] == '\\' {
                    out.push(' ');
                    at += 1;
                }
                if at < chars.len() {
                    out.push(blank(chars[at]));
                    at += 1;
                }
            }
            at += 1;
        } else if c == '\'' && (next == Some('\\') || chars.get(at + 2) == Some(&'\'')) {
            // A char literal ('x', '\n', '\''); a lifetime ('db) has no closing quote.
            at += 1;
            if chars.get(at) == Some(&'\\') {
                at += 1;
            }
            at += 1;
            while at < chars.len() && chars[at] != '\'' {
                at += 1;
            }
            at += 1;
            out.push_str("' '");
        } else {
            out.push(c);
            at += 1;
        }
    }
    without_test_items(&out)
}

fn ident_before(chars: &[char], at: usize) -> bool {
    at > 0 && (chars[at - 1].is_alphanumeric() || chars[at - 1] == '_')
}

/// `code` with each item under `#[cfg(test)]` blanked: from the attribute to
/// the end of its item (its closing brace, or its `;`).
fn without_test_items(code: &str) -> String {
    let mut out = code.to_owned();
    while let Some(start) = out.find("#[cfg(test)]") {
        let body = start + "#[cfg(test)]".len();
        let mut depth = 0usize;
        let mut end = out.len();
        for (offset, c) in out[body..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = body + offset + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = body + offset + 1;
                    break;
                }
                _ => {}
            }
        }
        let blanked: String = out[start..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(start..end, &blanked);
    }
    out
}

/// Each first segment named after `crate::` or `super::` in `code`, with its
/// line: `use crate::a::X`, `crate::b::f()`, and each branch of
/// `use crate::{c::Y, d::{Z}}`.
fn crate_paths(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for root in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(found) = code[from..].find(root) {
            let at = from + found;
            from = at + root.len();
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let line = code[..at].matches('\n').count() + 1;
            let rest = &code[from..];
            if let Some(group) = rest.strip_prefix('{') {
                let mut depth = 0usize;
                let mut start = true;
                let mut segment = String::new();
                for c in group.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => start = true,
                        c if start && (c.is_alphanumeric() || c == '_') => segment.push(c),
                        _ => {
                            if start && !segment.is_empty() {
                                out.push((line, std::mem::take(&mut segment)));
                                start = false;
                            }
                        }
                    }
                }
                if !segment.is_empty() {
                    out.push((line, segment));
                }
            } else {
                let segment: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !segment.is_empty() && segment != "self" {
                    out.push((line, segment));
                }
            }
        }
    }
    out.sort();
    out
}

fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        !text[..at].chars().next_back().is_some_and(ident)
            && !text[at + word.len()..].chars().next().is_some_and(ident)
    })
}

/// Every circle of `edges`, each once: each strongly connected component
/// (a module that reaches itself, and every module it reaches that reaches it
/// back), written as the shortest way from its first module by name round to
/// itself, and every member when the component holds more than that way.
fn circles(edges: &BTreeMap<&str, Vec<&str>>) -> Vec<String> {
    let nodes: Vec<&str> = (edges.keys().copied())
        .chain(edges.values().flatten().copied())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let reaches = |from: &str, to: &str| -> bool {
        let mut seen = vec![from];
        let mut todo = vec![from];
        while let Some(node) = todo.pop() {
            for &next in edges.get(node).map(Vec::as_slice).unwrap_or_default() {
                if next == to {
                    return true;
                }
                if !seen.contains(&next) {
                    seen.push(next);
                    todo.push(next);
                }
            }
        }
        false
    };
    let mut placed: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for &start in &nodes {
        if placed.contains(&start) || !reaches(start, start) {
            continue;
        }
        let component: Vec<&str> = (nodes.iter().copied())
            .filter(|&n| n == start || (reaches(start, n) && reaches(n, start)))
            .collect();
        placed.extend(&component);
        let way = shortest_way_round(edges, start, &component);
        let mut circle = way.join(" → ");
        // The way names each member it passes once, and `start` twice.
        if component.len() > way.len() - 1 {
            circle.push_str(&format!(
                " (one of the circles among {})",
                component.join(", ")
            ));
        }
        out.push(circle);
    }
    out
}

/// The shortest path from `start` round to `start` within `component`
/// (breadth first), written with `start` at both ends.
fn shortest_way_round(
    edges: &BTreeMap<&str, Vec<&str>>,
    start: &str,
    component: &[&str],
) -> Vec<String> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &next in edges.get(node).map(Vec::as_slice).unwrap_or_default() {
            if next == start {
                let mut path = vec![node.to_owned()];
                let mut at = node;
                while at != start {
                    at = came_from[at];
                    path.push(at.to_owned());
                }
                path.reverse();
                path.push(start.to_owned());
                return path;
            }
            if component.contains(&next) && !came_from.contains_key(next) {
                came_from.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    vec![start.to_owned()]
}
