//! The whole registry drift gate (contract §6.1), as a pure function over a tree's
//! text so it can run on the real workspace and on deliberately broken copies
//! alike. Four sources must agree: `registry/diagnostics.json`, the tables the
//! daemon contract renders from it, the codes `docs/` names, and the codes the
//! sources under `crates/*/src` can emit. Each disagreement is one line naming the
//! code and where it is missing. The caller reads the files (this crate does no
//! I/O); paths are relative to the root, `/`-separated.

use std::collections::{BTreeMap, BTreeSet};

use crate::registry::Registry;

/// The root-relative files the gate reads: path → text.
pub type Tree = BTreeMap<String, String>;

pub const REGISTRY_PATH: &str = "registry/diagnostics.json";
pub const CONTRACT_PATH: &str = "docs/contracts/trellis-daemon.md";

/// Codes the contract reserves for surfaces not built yet (the job and draft
/// tools of §2–§8): registered and documented, emitted by no source today. The
/// gate fails when one of them starts being emitted, so this list only shrinks.
pub const RESERVED_UNEMITTED: &[&str] = &[];

/// The code namespaces (§6.1's prefixes, and the `rpc-`, `root-` and `test-`
/// prefixes recorded in its 2026-12-01 amendment): a backticked word in `docs/`
/// under one of them is read as a code.
const NAMESPACES: &[&str] = &[
    "tr-",
    "config-",
    "lock-",
    "bundle-",
    "job-",
    "preflight-",
    "rpc-",
    "root-",
    "test-",
];

/// Words under a code namespace that are not codes: document slugs and a status
/// rung.
const NOT_CODES: &[&str] = &["tr-grammar", "lock-schema", "lock-unreadable"];

/// The document each `spec_ref` slug names.
pub fn doc_path(slug: &str) -> Option<&'static str> {
    Some(match slug {
        "design" => "docs/design.md",
        "tr-grammar" => "docs/tr-grammar.md",
        "lock-schema" => "docs/lock-schema.md",
        "soil-syntax-spec" => "docs/soil-syntax-spec.md",
        "soil0-cli" => "docs/contracts/soil0-cli.md",
        "soil-toml" => "docs/soil-toml.md",
        "prelude" => "docs/prelude.md",
        "trellis-daemon" => "docs/contracts/trellis-daemon.md",
        _ => return None,
    })
}

/// Every disagreement between the four sources, one line each; empty when the
/// tree is in step.
pub fn check(tree: &Tree) -> Vec<String> {
    check_reserving(tree, RESERVED_UNEMITTED)
}

/// [`check`] with another list of reserved codes (the gate's own tests show the
/// reserved direction failing even while the real list is empty).
pub fn check_reserving(tree: &Tree, reserved_codes: &[&str]) -> Vec<String> {
    let Some(text) = tree.get(REGISTRY_PATH) else {
        return vec![format!("{REGISTRY_PATH} is missing")];
    };
    let registry: Registry = match serde_json::from_str(text) {
        Ok(registry) => registry,
        Err(error) => return vec![format!("{REGISTRY_PATH} does not parse: {error}")],
    };
    let registered: BTreeSet<&str> = registry.codes.iter().map(|c| c.code.as_str()).collect();
    let classes: BTreeSet<&str> = registry
        .repair_classes
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let mut found = Vec::new();
    spec_refs(tree, &registry, &mut found);
    contract_tables(tree, &registry, &mut found);
    for (code, path) in documented_codes(tree) {
        if !registered.contains(code.as_str()) {
            found.push(format!(
                "code `{code}` is named in {path} but missing from {REGISTRY_PATH}"
            ));
        }
    }
    let sources = source_codes(tree, &classes);
    for (code, path) in &sources.emitted {
        if !registered.contains(code.as_str()) {
            found.push(format!(
                "code `{code}` is emitted by {path} but missing from {REGISTRY_PATH}"
            ));
        }
    }
    for path in &sources.unenumerable {
        found.push(format!(
            "{path} builds a diagnostic code with format!; codes must be literals or \
             code-enum arms so the gate can enumerate them"
        ));
    }
    for code in &registered {
        let reserved = reserved_codes.contains(code);
        let literal = sources.literals.contains(*code);
        if !literal && !reserved {
            found.push(format!(
                "code `{code}` is in {REGISTRY_PATH} but no source under crates/ emits it"
            ));
        }
        if literal && reserved {
            found.push(format!(
                "code `{code}` is now emitted; drop it from RESERVED_UNEMITTED in \
                 crates/trellis-diag/src/drift.rs"
            ));
        }
    }
    found
}

fn spec_refs(tree: &Tree, registry: &Registry, found: &mut Vec<String>) {
    for entry in &registry.codes {
        let Some((slug, section)) = entry.spec_ref.split_once('#') else {
            found.push(format!(
                "code `{}`: malformed spec_ref {:?}",
                entry.code, entry.spec_ref
            ));
            continue;
        };
        let Some(path) = doc_path(slug) else {
            found.push(format!("code `{}`: unknown document {slug:?}", entry.code));
            continue;
        };
        let text = tree.get(path).map(String::as_str).unwrap_or_default();
        if !section_numbers(text).iter().any(|n| n == section) {
            found.push(format!(
                "code `{}`: spec_ref section {section} is missing from {path}",
                entry.code
            ));
        }
    }
}

/// The registry's tables, rendered exactly; the contract must hold these between
/// its markers.
pub fn render_repair_classes(registry: &Registry) -> String {
    let mut out = String::from("| repair class | meaning |\n|---|---|\n");
    for class in &registry.repair_classes {
        out.push_str(&format!("| `{}` | {} |\n", class.name, class.summary));
    }
    out
}

pub fn render_codes(registry: &Registry) -> String {
    let mut out = String::from("| code | source | repair class | spec_ref |\n|---|---|---|---|\n");
    for entry in &registry.codes {
        out.push_str(&format!(
            "| `{}` | {} | `{}` | `{}` |\n",
            entry.code, entry.source, entry.repair_class, entry.spec_ref
        ));
    }
    out
}

/// Replaces the text between `<!-- registry:NAME:begin -->` and its end marker.
pub fn splice(doc: &str, name: &str, body: &str) -> Option<String> {
    let (start, stop) = marked(doc, name)?;
    Some(format!("{}{}{}", &doc[..start], body, &doc[stop..]))
}

fn marked(doc: &str, name: &str) -> Option<(usize, usize)> {
    let begin = format!("<!-- registry:{name}:begin -->\n");
    let end = format!("<!-- registry:{name}:end -->");
    let start = doc.find(&begin)? + begin.len();
    let stop = doc[start..].find(&end)? + start;
    Some((start, stop))
}

/// The contract with its tables re-rendered from `registry` (`None` when a marker
/// is missing).
pub fn rendered_contract(doc: &str, registry: &Registry) -> Option<String> {
    splice(doc, "repair-classes", &render_repair_classes(registry))
        .and_then(|doc| splice(&doc, "codes", &render_codes(registry)))
}

fn contract_tables(tree: &Tree, registry: &Registry, found: &mut Vec<String>) {
    let Some(doc) = tree.get(CONTRACT_PATH) else {
        found.push(format!("{CONTRACT_PATH} is missing"));
        return;
    };
    let Some(rendered) = rendered_contract(doc, registry) else {
        found.push(format!("{CONTRACT_PATH} lacks a registry table marker"));
        return;
    };
    if rendered == *doc {
        return;
    }
    // Name the rows that differ, both ways, before the generic line.
    let rows = |text: &str, name: &str| -> BTreeSet<String> {
        marked(text, name)
            .map(|(start, stop)| text[start..stop].lines().map(str::to_owned).collect())
            .unwrap_or_default()
    };
    for name in ["codes", "repair-classes"] {
        let (have, want) = (rows(doc, name), rows(&rendered, name));
        for row in want.difference(&have) {
            found.push(format!(
                "registry row missing from the {name} table of {CONTRACT_PATH}: {row}"
            ));
        }
        for row in have.difference(&want) {
            found.push(format!(
                "{name} table row in {CONTRACT_PATH} is not in {REGISTRY_PATH}: {row}"
            ));
        }
    }
    found.push(format!(
        "{CONTRACT_PATH} is out of date with {REGISTRY_PATH}; run \
         `UPDATE_EXPECT=1 cargo test -p trellis-diag` to re-render it"
    ));
}

/// The section numbers a Markdown document's headers print (`## 3.2 Title`,
/// `## 3. Title`, `## §3.2 Title`), ignoring fenced code.
pub fn section_numbers(text: &str) -> Vec<String> {
    let mut numbers = Vec::new();
    let mut fence: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(marker) = &fence {
            if trimmed.starts_with(marker.as_str()) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            let marker: String = trimmed
                .chars()
                .take_while(|&c| c == '`' || c == '~')
                .collect();
            fence = Some(marker);
            continue;
        }
        let Some(rest) = line.strip_prefix('#') else {
            continue;
        };
        let rest = rest.trim_start_matches('#').trim_start();
        let rest = rest.trim_start_matches('§').trim_start();
        let number: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let number = number.trim_end_matches('.');
        if !number.is_empty() {
            numbers.push(number.to_owned());
        }
    }
    numbers
}

fn is_code(word: &str) -> bool {
    word.contains('-')
        && word.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// Every code-shaped word written between two `quote` characters, however the
/// surrounding quotes pair up.
fn quoted(text: &str, quote: char) -> impl Iterator<Item = &str> {
    text.match_indices(quote).filter_map(move |(at, _)| {
        let rest = &text[at + 1..];
        let end =
            rest.find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))?;
        (rest[end..].starts_with(quote) && is_code(&rest[..end])).then(|| &rest[..end])
    })
}

fn namespaced(word: &str) -> bool {
    NAMESPACES.iter().any(|prefix| word.starts_with(prefix)) && !NOT_CODES.contains(&word)
}

/// The codes `docs/` names, with the first document naming each: backticked words
/// under a code namespace anywhere in `docs/`, and the contract's parenthesised
/// code lists and §6.1's named list. The rendered registry table is skipped: it is
/// generated from the registry itself.
pub fn documented_codes(tree: &Tree) -> BTreeMap<String, String> {
    let mut codes = BTreeMap::new();
    for (path, text) in tree.range("docs/".to_owned()..) {
        if !path.starts_with("docs/") {
            break;
        }
        if !path.ends_with(".md") {
            continue;
        }
        let prose = match marked(text, "codes") {
            Some((start, stop)) => format!("{}{}", &text[..start], &text[stop..]),
            None => text.clone(),
        };
        let mut add = |word: &str| {
            codes.entry(word.to_owned()).or_insert_with(|| path.clone());
        };
        for word in quoted(&prose, '`') {
            if namespaced(word) {
                add(word);
            }
        }
        for group in prose.split('(').skip(1) {
            let Some((inside, _)) = group.split_once(')') else {
                continue;
            };
            let words: Vec<&str> = inside.split(',').map(str::trim).collect();
            if words.iter().all(|word| is_code(word) && namespaced(word)) {
                words.iter().for_each(|word| add(word));
            }
        }
        if let Some((_, list)) = prose
            .lines()
            .find(|line| line.contains("Daemon codes are namespaced by prefix"))
            .and_then(|line| line.split_once(", plus "))
        {
            for word in list.trim_end_matches('.').split(',') {
                let word = word.trim().trim_start_matches("and ").trim();
                if is_code(word) {
                    add(word);
                }
            }
        }
    }
    codes
}

/// What the sources can emit.
#[derive(Debug, Default)]
pub struct SourceCodes {
    /// Codes in emitting positions, with the first file holding each:
    /// `Diagnostic::new("code", …)` literals and the arms and constants of the code
    /// enums (any file declaring an `enum …Code`).
    pub emitted: BTreeMap<String, String>,
    /// Every kebab-case string literal in the sources: a registered code must be
    /// one of them (a code no source spells can never be emitted).
    pub literals: BTreeSet<String>,
    /// Files that build a code with `format!` inside `Diagnostic::new(…)`.
    pub unenumerable: BTreeSet<String>,
}

pub fn source_codes(tree: &Tree, repair_classes: &BTreeSet<&str>) -> SourceCodes {
    let mut out = SourceCodes::default();
    for (path, text) in tree.range("crates/".to_owned()..) {
        if !path.starts_with("crates/") {
            break;
        }
        // The gate's own source spells codes only to describe them.
        if !path.ends_with(".rs")
            || !path.contains("/src/")
            || path.ends_with("trellis-diag/src/drift.rs")
        {
            continue;
        }
        out.literals.extend(quoted(text, '"').map(str::to_owned));
        // The diagnostic type's own unit test uses a deliberately unknown code.
        if path.ends_with("trellis-diag/src/diagnostic.rs") {
            continue;
        }
        let mut emit = |code: &str| {
            out.emitted
                .entry(code.to_owned())
                .or_insert_with(|| path.clone());
        };
        for (at, _) in text.match_indices("Diagnostic::new(") {
            let rest = text[at + "Diagnostic::new(".len()..].trim_start();
            if let Some(literal) = rest.strip_prefix('"') {
                emit(
                    &literal
                        .chars()
                        .take_while(|&c| c != '"')
                        .collect::<String>(),
                );
            } else if rest.starts_with("format!") || rest.starts_with("&format!") {
                out.unenumerable.insert(path.clone());
            }
        }
        if declares_code_enum(text) {
            for line in text.lines() {
                let Some((_, tail)) = line.split_once("=> \"").or(line.split_once("&str = \""))
                else {
                    continue;
                };
                let literal: String = tail.chars().take_while(|&c| c != '"').collect();
                if is_code(&literal) && !repair_classes.contains(literal.as_str()) {
                    emit(&literal);
                }
            }
        }
    }
    out
}

fn declares_code_enum(text: &str) -> bool {
    text.match_indices("enum ").any(|(at, _)| {
        let name: String = text[at + 5..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        name.ends_with("Code")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_numbers_read_headers_outside_fences() {
        let doc = "# Title\n## 1. One\n### 1.2 Sub\n```\n## 9. Not a header\n```\n## §3 Three\n";
        assert_eq!(section_numbers(doc), ["1", "1.2", "3"]);
    }

    #[test]
    fn code_enums_are_recognised_by_name() {
        assert!(declares_code_enum("pub enum SyntaxCode {"));
        assert!(declares_code_enum("enum CliCode{"));
        assert!(!declares_code_enum("enum Codec {"));
    }
}
