//! Golden parse trees for every `.tr` under `examples/` and `test-data/tr/accept/`
//! (bless with `UPDATE_EXPECT=1`).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use expect_test::expect_file;
use trellis_spec::{RootContext, check_in_root, parse_tr, prose_hash, render::render, test_hash};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tr_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            tr_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "tr") {
            out.push(path);
        }
    }
}

/// The `[tags]` keys of `soil.toml` in `root`, or a fixed vocabulary.
fn tags(root: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(root.join("soil.toml")) else {
        return ["stats", "io", "parsing"].map(String::from).to_vec();
    };
    let value: toml::Table = toml::from_str(&text).expect("soil.toml parses");
    value
        .get("tags")
        .and_then(|t| t.as_table())
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default()
}

/// The parse tree, the diagnostics and the hashes of one file.
fn golden_text(root: &Path, path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("readable");
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let (file, mut diagnostics) = parse_tr(&text, stem);
    let dir = path
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str());
    let mut definitions = Vec::new();
    if let Some(parent) = path.parent() {
        let mut siblings = Vec::new();
        tr_files(parent, &mut siblings);
        definitions = siblings
            .iter()
            .filter_map(|p| p.file_stem()?.to_str().map(String::from))
            .filter(|s| !s.starts_with('_'))
            .collect();
    }
    let vocabulary = tags(root);
    let context = RootContext {
        tags: &vocabulary,
        module_dir: dir,
        module_definitions: Some(&definitions),
    };
    diagnostics.extend(check_in_root(&file, &text, &context));
    let mut out = render(&file, &text);
    for d in &diagnostics {
        let at = d
            .span
            .map(|s| format!("{}:{}", s.start.line, s.start.column))
            .unwrap_or_default();
        let _ = writeln!(out, "error {} at {at}: {}", d.code, d.message);
    }
    let _ = writeln!(out, "formal {}", file.formal_parts().hash());
    let _ = writeln!(out, "test   {}", test_hash(&file.test_parts()));
    let _ = writeln!(out, "prose  {}", prose_hash(&file.prose_bytes(&text)));
    for entry in file.decision_entries() {
        let _ = writeln!(out, "entry  {} {}", entry.label, entry.hash());
    }
    out
}

#[test]
fn goldens_match() {
    let workspace = workspace();
    let golden_dir = workspace.join("test-data/tr/golden");
    let mut expected_goldens = Vec::new();
    for (root, prefix) in [
        (workspace.join("examples"), "examples"),
        (workspace.join("test-data/tr/accept"), "accept"),
    ] {
        let mut files = Vec::new();
        tr_files(&root, &mut files);
        for path in files {
            let relative = path.strip_prefix(&root).expect("under root");
            let name = format!(
                "{prefix}__{}.txt",
                relative.to_string_lossy().replace('/', "__")
            );
            let golden = golden_dir.join(&name);
            let text = golden_text(&root, &path);
            if prefix == "examples" {
                // The examples are the v1 corpus: every one is a valid spec.
                assert!(
                    !text.contains("\nerror "),
                    "{} is invalid:\n{text}",
                    path.display()
                );
            }
            expect_file![golden].assert_eq(&text);
            expected_goldens.push(name);
        }
    }
    // A golden whose source is gone is stale: delete it.
    let stale: Vec<String> = std::fs::read_dir(&golden_dir)
        .expect("golden dir")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".txt") && !expected_goldens.contains(n))
        .collect();
    assert!(stale.is_empty(), "stale goldens: {stale:?}");
}
