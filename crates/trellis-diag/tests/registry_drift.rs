//! The registry drift gate (`trellis_diag::drift`) run on the workspace, and each of
//! its directions shown failing on a deliberately broken temp copy of the tree.
//! `UPDATE_EXPECT=1` re-renders the contract's registry tables.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use std::path::{Path, PathBuf};

use trellis_diag::drift::{self, Tree};
use trellis_diag::registry::registry;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The files the gate reads under `root`: the registry, `docs/`, and every
/// crate's `src/`.
fn load(root: &Path) -> Tree {
    fn walk(root: &Path, dir: &Path, tree: &mut Tree) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, tree);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                let relative = path.strip_prefix(root).expect("under the root");
                let key = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                tree.insert(key, text);
            }
        }
    }
    let mut tree = Tree::new();
    walk(root, &root.join("registry"), &mut tree);
    walk(root, &root.join("docs"), &mut tree);
    for krate in std::fs::read_dir(root.join("crates"))
        .into_iter()
        .flatten()
        .flatten()
    {
        walk(root, &krate.path().join("src"), &mut tree);
    }
    tree
}

#[test]
fn the_workspace_passes_the_whole_drift_gate() {
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        let path = repo_root().join(drift::CONTRACT_PATH);
        let doc = std::fs::read_to_string(&path).expect("the daemon contract exists");
        let rendered = drift::rendered_contract(&doc, registry()).expect("both markers");
        if rendered != doc {
            std::fs::write(&path, rendered).expect("rewrite the contract");
        }
    }
    let found = drift::check(&load(&repo_root()));
    assert!(found.is_empty(), "registry drift:\n{}", found.join("\n"));
}

/// A temp copy of the gate's inputs, removed on drop.
struct Copy(PathBuf);

impl Copy {
    fn new(name: &str) -> Copy {
        let dir = std::env::temp_dir().join(format!("trellis-drift-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in load(&repo_root()) {
            let target = dir.join(&path);
            std::fs::create_dir_all(target.parent().expect("a parent")).expect("mkdir");
            std::fs::write(target, text).expect("copy");
        }
        Copy(dir)
    }

    fn edit(&self, path: &str, change: impl FnOnce(String) -> String) -> &Self {
        let file = self.0.join(path);
        let text = std::fs::read_to_string(&file).expect("the file is in the copy");
        let changed = change(text.clone());
        assert_ne!(changed, text, "the edit to {path} changed nothing");
        std::fs::write(file, changed).expect("write");
        self
    }

    fn gate(&self) -> Vec<String> {
        drift::check(&load(&self.0))
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn assert_reports(found: &[String], expected: &str) {
    assert!(
        found.iter().any(|line| line == expected),
        "expected {expected:?} among:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_registry_code_missing_from_the_contract_table_fails() {
    let copy = Copy::new("table-row");
    copy.edit(drift::CONTRACT_PATH, |doc| {
        doc.replace(
            "| `rpc-parse-error` | trellis | `fix-input` | `design#9.2` |\n",
            "",
        )
    });
    let found = copy.gate();
    assert_reports(
        &found,
        "registry row missing from the codes table of docs/contracts/trellis-daemon.md: \
         | `rpc-parse-error` | trellis | `fix-input` | `design#9.2` |",
    );
}

#[test]
fn a_contract_table_row_missing_from_the_registry_fails() {
    let copy = Copy::new("table-extra");
    copy.edit(drift::CONTRACT_PATH, |doc| {
        doc.replace(
            "| `rpc-parse-error` |",
            "| `tr-ghost` | trellis | `fix-spec` | `design#1` |\n| `rpc-parse-error` |",
        )
    });
    assert_reports(
        &copy.gate(),
        "codes table row in docs/contracts/trellis-daemon.md is not in \
         registry/diagnostics.json: | `tr-ghost` | trellis | `fix-spec` | `design#1` |",
    );
}

#[test]
fn a_code_named_in_docs_but_unregistered_fails() {
    let copy = Copy::new("docs-code");
    copy.edit("docs/design.md", |doc| {
        format!("{doc}\nA stray mention of `lock-ghost-code`.\n")
    });
    assert_reports(
        &copy.gate(),
        "code `lock-ghost-code` is named in docs/design.md but missing from \
         registry/diagnostics.json",
    );
}

#[test]
fn a_spec_ref_whose_section_is_gone_fails() {
    let copy = Copy::new("spec-ref");
    copy.edit(drift::REGISTRY_PATH, |json| {
        json.replace("\"design#9.2\"", "\"design#99.9\"")
    });
    assert_reports(
        &copy.gate(),
        "code `rpc-parse-error`: spec_ref section 99.9 is missing from docs/design.md",
    );
}

#[test]
fn a_literal_code_in_the_sources_but_unregistered_fails() {
    let copy = Copy::new("literal");
    let path = "crates/trellis-db/src/config.rs";
    copy.edit(path, |text| {
        format!("{text}\nfn _ghost() -> trellis_diag::Diagnostic {{ trellis_diag::Diagnostic::new(\n    \"config-ghost\", \"\") }}\n")
    });
    assert_reports(
        &copy.gate(),
        "code `config-ghost` is emitted by crates/trellis-db/src/config.rs but missing \
         from registry/diagnostics.json",
    );
}

#[test]
fn a_code_enum_arm_unregistered_fails() {
    let copy = Copy::new("enum-arm");
    let path = "crates/soil-syntax/src/codes.rs";
    copy.edit(path, |text| {
        text.replace(
            "SyntaxCode::DuplicateField => \"duplicate-field\",",
            "SyntaxCode::DuplicateField => \"duplicate-field-ghost\",",
        )
    });
    assert_reports(
        &copy.gate(),
        "code `duplicate-field-ghost` is emitted by crates/soil-syntax/src/codes.rs but \
         missing from registry/diagnostics.json",
    );
}

#[test]
fn a_code_built_with_format_fails() {
    let copy = Copy::new("format");
    copy.edit("crates/trellis-db/src/config.rs", |text| {
        format!("{text}\nfn _built(n: u8) -> trellis_diag::Diagnostic {{ trellis_diag::Diagnostic::new(&format!(\"config-{{n}}\"), \"\") }}\n")
    });
    assert_reports(
        &copy.gate(),
        "crates/trellis-db/src/config.rs builds a diagnostic code with format!; codes \
         must be literals or code-enum arms so the gate can enumerate them",
    );
}

#[test]
fn a_registered_code_no_source_emits_fails() {
    let copy = Copy::new("unemitted");
    copy.edit("crates/trellis-rpc/src/codes.rs", |text| {
        text.replace("\"rpc-server-busy\"", "\"rpc-server-busier\"")
    });
    let found = copy.gate();
    assert_reports(
        &found,
        "code `rpc-server-busy` is in registry/diagnostics.json but no source under \
         crates/ emits it",
    );
    assert_reports(
        &found,
        "code `rpc-server-busier` is emitted by crates/trellis-rpc/src/codes.rs but \
         missing from registry/diagnostics.json",
    );
}

#[test]
fn a_reserved_code_that_starts_being_emitted_fails() {
    let copy = Copy::new("reserved");
    copy.edit("crates/trellis-db/src/config.rs", |text| {
        format!("{text}\nconst _STALE: &str = \"job-stale-question\";\n")
    });
    // Every reserved code is emitted now (the list is empty): the direction is
    // shown with a list that still reserves one.
    assert_reports(
        &drift::check_reserving(&load(&copy.0), &["job-stale-question"]),
        "code `job-stale-question` is now emitted; drop it from RESERVED_UNEMITTED in \
         crates/trellis-diag/src/drift.rs",
    );
}

#[test]
fn the_contract_extraction_still_finds_its_anchors() {
    let documented = drift::documented_codes(&load(&repo_root()));
    for anchor in [
        "bundle-path",
        "no-draft",
        "budget-too-small",
        "job-stale-question",
        "rpc-daemon-unreachable",
    ] {
        assert!(
            documented.contains_key(anchor),
            "{anchor} not found in docs/"
        );
    }
}
