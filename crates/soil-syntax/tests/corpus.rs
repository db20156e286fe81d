//! Goldens, the print fixpoint and hash-form invariance over every example and
//! fixture file.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod common;

use expect_test::expect_file;
use soil_syntax::ast::{ExprKind, Item, Literal, Spanned};
use soil_syntax::{hash_form_item, parse_file, print_file};

fn golden_path(name: &str, kind: &str) -> std::path::PathBuf {
    let flat = name.replace('/', "__");
    common::workspace_root()
        .join("test-data/soil-syntax/golden")
        .join(format!("{flat}.{kind}"))
}

#[test]
fn canonical_and_hash_form_goldens() {
    let corpus = common::corpus();
    assert!(
        corpus.len() >= 2,
        "corpus discovery found too little: {}",
        corpus.len()
    );
    let mut expected_goldens = std::collections::BTreeSet::new();
    for (name, text) in &corpus {
        let file = common::parse_clean(name, text);
        let hash_form: Vec<String> = file.items.iter().map(hash_form_item).collect();
        let canonical_path = golden_path(name, "canonical");
        let hash_path = golden_path(name, "hash");
        expect_file![canonical_path.clone()].assert_eq(&print_file(&file));
        expect_file![hash_path.clone()].assert_eq(&hash_form.join("\n"));
        expected_goldens.insert(canonical_path);
        expected_goldens.insert(hash_path);
    }
    // A golden whose source is gone is stale.
    let dir = common::workspace_root().join("test-data/soil-syntax/golden");
    for entry in std::fs::read_dir(dir).expect("golden dir").flatten() {
        assert!(
            expected_goldens.contains(&entry.path()),
            "stale golden {}",
            entry.path().display()
        );
    }
}

#[test]
fn print_is_a_fixpoint_over_the_corpus() {
    for (name, text) in common::corpus() {
        let file = common::parse_clean(&name, &text);
        let printed = print_file(&file);
        let reparsed = common::parse_clean(&name, &printed);
        assert_eq!(
            file.without_spans(),
            reparsed.without_spans(),
            "{name}: tree changed by printing"
        );
        assert_eq!(
            print_file(&reparsed),
            printed,
            "{name}: printing is not a fixpoint"
        );
    }
}

#[test]
fn reformatting_preserves_tree_and_hash_form() {
    for (name, text) in common::corpus() {
        let canonical = print_file(&common::parse_clean(&name, &text));
        let file = common::parse_clean(&name, &canonical);
        for seed in 0..4 {
            let relaid = common::relayout(&canonical, seed);
            let (other, diagnostics) = parse_file(&relaid);
            assert!(
                diagnostics.is_empty(),
                "{name} seed {seed}: {diagnostics:#?}\n{relaid}"
            );
            assert_eq!(
                file.without_spans(),
                other.without_spans(),
                "{name} seed {seed}"
            );
            assert_eq!(print_file(&other), canonical, "{name} seed {seed}");
            for (a, b) in file.items.iter().zip(&other.items) {
                assert_eq!(hash_form_item(a), hash_form_item(b), "{name} seed {seed}");
            }
        }
    }
}

#[test]
fn renaming_local_binders_preserves_hash_form() {
    let mut renamed_some = false;
    for (name, text) in common::corpus() {
        for item in common::parse_clean(&name, &text).items {
            let renamed = common::rename_locals(&item);
            // The renamed item must also survive printing and parsing.
            let printed = soil_syntax::print_item(&renamed);
            let (reparsed, diagnostics) = parse_file(&printed);
            assert!(diagnostics.is_empty(), "{name}: {diagnostics:#?}");
            assert_eq!(
                hash_form_item(&item),
                hash_form_item(&reparsed.items[0]),
                "{name}:\n{printed}"
            );
            if soil_syntax::print_item(&item) != printed {
                renamed_some = true;
            }
        }
    }
    assert!(renamed_some, "the renamer renamed nothing");
}

/// Edits that change meaning must change the hash form.
#[test]
fn changing_a_literal_callee_or_constructor_changes_hash_form() {
    let mut checked = [0usize; 3];
    for (name, text) in common::corpus() {
        for item in common::parse_clean(&name, &text).items {
            if !matches!(item, Item::Equation(_)) {
                continue;
            }
            let original = hash_form_item(&item);
            let literal = common::edit_first(&item, &mut |e| match &mut e.kind {
                ExprKind::Literal(Literal::Int(n)) => {
                    *n = n.wrapping_add(1);
                    true
                }
                ExprKind::Literal(Literal::Str(s)) => {
                    s.push('!');
                    true
                }
                _ => false,
            });
            let callee = common::edit_first(&item, &mut |e| match &mut e.kind {
                ExprKind::App { func, .. } => match &mut func.kind {
                    ExprKind::Var(ident) if !hash_form_names_local(&original, ident) => {
                        ident.text.push_str("_other");
                        true
                    }
                    ExprKind::Qualified { name, .. } => {
                        name.text.push_str("_other");
                        true
                    }
                    _ => false,
                },
                _ => false,
            });
            let constructor = common::edit_first(&item, &mut |e| match &mut e.kind {
                ExprKind::Constructor(ident) | ExprKind::Record { name: ident, .. } => {
                    ident.text.push_str("Other");
                    true
                }
                _ => false,
            });
            for (slot, edited) in [literal, callee, constructor].into_iter().enumerate() {
                if let Some(edited) = edited {
                    assert_ne!(
                        hash_form_item(&edited),
                        original,
                        "{name}: edit {slot} did not move the hash form"
                    );
                    checked[slot] += 1;
                }
            }
        }
    }
    assert!(
        checked.iter().all(|&n| n > 0),
        "some edit kind never applied: {checked:?}"
    );
}

/// Whether `ident` printed as a local number in the hash form (so renaming it is
/// not a callee change). Globals keep their names in the hash form.
fn hash_form_names_local(hash_form: &str, ident: &soil_syntax::ast::Ident) -> bool {
    !hash_form
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| word == ident.text)
}
