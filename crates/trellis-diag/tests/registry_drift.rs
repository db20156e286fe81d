//! The registry drift gate: every `spec_ref` resolves to a numbered header of the
//! named `docs/` document, and the tables in the daemon contract are exactly what the
//! registry renders to (`UPDATE_EXPECT=1` rewrites them).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use std::path::{Path, PathBuf};

use trellis_diag::registry::registry;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn doc_path(slug: &str) -> Option<&'static str> {
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

/// The section numbers a Markdown document's headers print (`## 3.2 Title`,
/// `## 3. Title`, `## §3.2 Title`), ignoring fenced code.
fn section_numbers(text: &str) -> Vec<String> {
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

#[test]
fn every_spec_ref_resolves_to_a_numbered_header() {
    let root = repo_root();
    let mut unresolved = Vec::new();
    for entry in &registry().codes {
        let Some((slug, section)) = entry.spec_ref.split_once('#') else {
            unresolved.push(format!("{}: malformed {:?}", entry.code, entry.spec_ref));
            continue;
        };
        let Some(path) = doc_path(slug) else {
            unresolved.push(format!("{}: unknown document {slug:?}", entry.code));
            continue;
        };
        let text = std::fs::read_to_string(root.join(path)).unwrap_or_default();
        if !section_numbers(&text).iter().any(|n| n == section) {
            unresolved.push(format!("{}: {} has no section {section}", entry.code, path));
        }
    }
    assert!(
        unresolved.is_empty(),
        "unresolved spec_refs:\n{}",
        unresolved.join("\n")
    );
}

fn render_repair_classes() -> String {
    let mut out = String::from("| repair class | meaning |\n|---|---|\n");
    for class in &registry().repair_classes {
        out.push_str(&format!("| `{}` | {} |\n", class.name, class.summary));
    }
    out
}

fn render_codes() -> String {
    let mut out = String::from("| code | source | repair class | spec_ref |\n|---|---|---|---|\n");
    for entry in &registry().codes {
        out.push_str(&format!(
            "| `{}` | {} | `{}` | `{}` |\n",
            entry.code, entry.source, entry.repair_class, entry.spec_ref
        ));
    }
    out
}

/// Replaces the text between `<!-- registry:NAME:begin -->` and its end marker.
fn splice(doc: &str, name: &str, body: &str) -> Option<String> {
    let begin = format!("<!-- registry:{name}:begin -->\n");
    let end = format!("<!-- registry:{name}:end -->");
    let start = doc.find(&begin)? + begin.len();
    let stop = doc[start..].find(&end)? + start;
    Some(format!("{}{}{}", &doc[..start], body, &doc[stop..]))
}

#[test]
fn the_daemon_contract_tables_match_the_registry() {
    let path = repo_root().join("docs/contracts/trellis-daemon.md");
    let doc = std::fs::read_to_string(&path).expect("the daemon contract exists");
    let rendered = splice(&doc, "repair-classes", &render_repair_classes())
        .and_then(|doc| splice(&doc, "codes", &render_codes()))
        .expect("the contract has both registry markers");
    if rendered != doc {
        if std::env::var_os("UPDATE_EXPECT").is_some() {
            std::fs::write(&path, rendered).expect("rewrite the contract");
        } else {
            panic!(
                "docs/contracts/trellis-daemon.md is out of date with registry/diagnostics.json; \
                 run `UPDATE_EXPECT=1 cargo test -p trellis-diag` to re-render it"
            );
        }
    }
}

#[test]
fn section_numbers_read_headers_outside_fences() {
    let doc = "# Title\n## 1. One\n### 1.2 Sub\n```\n## 9. Not a header\n```\n## §3 Three\n";
    assert_eq!(section_numbers(doc), ["1", "1.2", "3"]);
}

/// Codes written as literals (`Diagnostic::new("code", …)`) anywhere in the
/// workspace's library and binary sources are registered; codes built from a
/// crate's code enum are checked by that crate's own test.
#[test]
fn every_literal_code_in_the_sources_is_registered() {
    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    for crate_dir in std::fs::read_dir(repo_root().join("crates"))
        .expect("crates/")
        .flatten()
    {
        sources(&crate_dir.path().join("src"), &mut files);
    }
    let mut unregistered = Vec::new();
    for file in files {
        // The diagnostic type's own unit test uses a deliberately unknown code.
        if file.ends_with("trellis-diag/src/diagnostic.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for (at, _) in text.match_indices("Diagnostic::new(") {
            let rest = text[at + "Diagnostic::new(".len()..].trim_start();
            let Some(literal) = rest.strip_prefix('"') else {
                continue;
            };
            let code: String = literal.chars().take_while(|&c| c != '"').collect();
            if trellis_diag::registry::lookup(&code).is_none() {
                unregistered.push(format!("{}: {code}", file.display()));
            }
        }
    }
    assert!(
        unregistered.is_empty(),
        "unregistered codes:\n{}",
        unregistered.join("\n")
    );
}

/// The codes the daemon contract's prose documents: every parenthesised list of
/// codes in §6.1's namespaces (`isError (bundle-path, bundle-not-found)`) and the
/// named codes of §6.1's list (`plus toolchain-mismatch, …`). The rendered
/// registry table is skipped: it is generated from the registry itself.
fn documented_codes(doc: &str) -> Vec<String> {
    let is_code = |word: &str| {
        word.contains('-')
            && word.split('-').all(|part| {
                !part.is_empty()
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            })
    };
    let prose = match (
        doc.find("<!-- registry:codes:begin -->"),
        doc.find("<!-- registry:codes:end -->"),
    ) {
        (Some(begin), Some(end)) => format!("{}{}", &doc[..begin], &doc[end..]),
        _ => doc.to_owned(),
    };
    let mut codes = Vec::new();
    for group in prose.split('(').skip(1) {
        let Some((inside, _)) = group.split_once(')') else {
            continue;
        };
        let words: Vec<&str> = inside.split(',').map(str::trim).collect();
        let namespaced = |word: &str| {
            ["tr-", "config-", "lock-", "bundle-", "job-", "preflight-"]
                .iter()
                .any(|prefix| word.starts_with(prefix))
        };
        if words.iter().all(|word| is_code(word) && namespaced(word)) {
            codes.extend(words.iter().map(|word| (*word).to_owned()));
        }
    }
    if let Some(list) = prose
        .lines()
        .find(|line| line.contains("Daemon codes are namespaced by prefix"))
        .and_then(|line| line.split_once(", plus "))
    {
        for word in list.1.trim_end_matches('.').split(',') {
            let word = word.trim().trim_start_matches("and ").trim();
            if is_code(word) {
                codes.push(word.to_owned());
            }
        }
    }
    codes.sort();
    codes.dedup();
    codes
}

#[test]
fn every_code_the_daemon_contract_documents_is_registered() {
    let doc = std::fs::read_to_string(repo_root().join("docs/contracts/trellis-daemon.md"))
        .expect("the daemon contract exists");
    let documented = documented_codes(&doc);
    // The extraction itself must keep working: these are named in §3 and §6.1.
    for anchor in [
        "bundle-path",
        "no-draft",
        "budget-too-small",
        "job-stale-question",
    ] {
        assert!(
            documented.iter().any(|c| c == anchor),
            "{anchor} not found in the contract"
        );
    }
    let unregistered: Vec<&String> = documented
        .iter()
        .filter(|code| trellis_diag::registry::lookup(code).is_none())
        .collect();
    assert!(
        unregistered.is_empty(),
        "codes the daemon contract documents but the registry lacks: {unregistered:?}"
    );
}
