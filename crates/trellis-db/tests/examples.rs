//! Golden hashes of every definition of the shipped example root: spec hashes of
//! every `.tr`, decision-entry and scope hashes, and the `soil_hash` of every
//! function and private helper. A change to any example, or to any hashing rule,
//! shows up here as a reviewable diff.

mod support;

use expect_test::expect_file;
use trellis_db::{
    Change, DecisionKey, RootDatabase, Workspace, all_code_items, decision_entries,
    decision_entry_hash, formal_hash, prose_hash, root_index, scope_hash, soil_hash, test_hash,
};

fn load_examples() -> RootDatabase {
    let mut change = Change::default();
    for (path, text) in support::example_files() {
        change.set_root_file(path, text);
    }
    let mut db = RootDatabase::default();
    change.apply(&mut db);
    db
}

#[test]
fn example_hashes() {
    let db = load_examples();
    let mut out = String::new();
    let index = root_index(&db, Workspace::get(&db));
    let mut specs: Vec<_> = index.project.into_iter().collect();
    for files in index.modules.values() {
        specs.extend(files.spec);
        specs.extend(files.specs.values().copied());
    }
    for file in specs {
        let path = file.path(&db);
        out.push_str(&format!(
            "{path}\n  formal {}\n  test   {}\n  prose  {}\n",
            formal_hash(&db, file),
            test_hash(&db, file),
            prose_hash(&db, file)
        ));
        let entries: Vec<String> = decision_entries(&db, file)
            .iter()
            .map(|e| e.label.clone())
            .collect();
        if !entries.is_empty() {
            out.push_str(&format!("  scope  {}\n", scope_hash(&db, file)));
            for label in entries {
                let hash = decision_entry_hash(&db, DecisionKey::new(&db, file, label.clone()));
                out.push_str(&format!(
                    "  decision {label} {}\n",
                    hash.map(|h| h.to_string()).unwrap_or_default()
                ));
            }
        }
    }
    for &item in all_code_items(&db) {
        let hash =
            soil_hash(&db, item).map_or_else(|| "(not lowered)".to_owned(), |h| h.to_string());
        out.push_str(&format!("{} soil_hash {hash}\n", item.qualified(&db)));
    }
    expect_file!["../../../test-data/db/example-hashes.txt"].assert_eq(&out);
}

#[test]
fn two_loads_hash_identically() {
    let first = load_examples();
    let second = load_examples();
    for (&a, &b) in all_code_items(&first).iter().zip(all_code_items(&second)) {
        assert_eq!(soil_hash(&first, a), soil_hash(&second, b));
    }
}
