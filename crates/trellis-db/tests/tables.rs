//! The per-module tables whole-root passes read (design §7.3): they hold exactly
//! what the per-definition queries answer, and after an edit only the tables of
//! modules whose entries moved re-execute.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use std::collections::BTreeMap;

use expect_test::{Expect, expect};
use salsa::plumbing::AsId;
use trellis_db::{
    Change, Module, RootDatabase, Workspace, module_code_items, module_hashes, module_programs,
    program_json, root_index, soil_hash, spec_hashes, synthetic,
};

/// 200 definitions: four modules of fifty, `m000` to `m003`.
const DEFINITIONS: usize = 200;

fn load() -> (RootDatabase, BTreeMap<String, String>) {
    let files: BTreeMap<String, String> =
        synthetic::synthetic_root(DEFINITIONS).into_iter().collect();
    let mut db = RootDatabase::with_query_log();
    let mut change = Change::default();
    for (path, text) in &files {
        change.set_root_file(path.clone(), text.clone());
    }
    change.apply(&mut db);
    (db, files)
}

fn modules(db: &RootDatabase) -> Vec<Module<'_>> {
    let names: Vec<String> = root_index(db, Workspace::get(db))
        .modules
        .keys()
        .cloned()
        .collect();
    names
        .into_iter()
        .map(|name| Module::new(db, name))
        .collect()
}

/// Reads every table, as a whole-root pass does.
fn read_all_tables(db: &RootDatabase) {
    for module in modules(db) {
        module_hashes(db, module);
        module_programs(db, module);
    }
}

#[test]
fn tables_hold_what_the_per_definition_queries_answer() {
    let (db, _) = load();
    let index = root_index(&db, Workspace::get(&db)).clone();
    for module in modules(&db) {
        let files = index.module(module.name(&db)).expect("module");
        let items = module_code_items(&db, module);
        let hashes = module_hashes(&db, module);
        assert_eq!(hashes.len(), files.specs.len().max(items.len()));
        for row in hashes {
            let spec = files.specs.get(&row.name).map(|&f| spec_hashes(&db, f));
            assert_eq!(row.spec, spec, "{}", row.name);
        }
        for (&item, row) in items.iter().zip(hashes) {
            assert_eq!(item.name(&db), &row.name);
            assert_eq!(row.soil_hash, soil_hash(&db, item));
            assert!(
                row.soil_hash.is_some(),
                "every synthetic definition has a body"
            );
        }
        let programs = module_programs(&db, module);
        assert_eq!(programs.len(), items.len());
        for (&item, (name, program)) in items.iter().zip(programs) {
            assert_eq!(item.name(&db), name);
            assert_eq!(program, program_json(&db, item));
        }
    }
}

/// Edits one file (demoted to volatile first, as in `incremental.rs`), reads every
/// table again, and lists the tables salsa re-executed.
#[track_caller]
fn check_tables_after(path: &str, edit: impl FnOnce(&str) -> String, executed: Expect) {
    let (mut db, files) = load();
    read_all_tables(&db);
    let mut demote = Change::default();
    demote.mark_volatile(path);
    demote.apply(&mut db);
    read_all_tables(&db);
    let mut change = Change::default();
    change.set_file(path, edit(&files[path]));
    change.apply(&mut db);
    db.query_log().start();
    read_all_tables(&db);
    let names: BTreeMap<String, String> = modules(&db)
        .into_iter()
        .map(|m| (format!("{:?}", m.as_id()), m.name(&db).clone()))
        .collect();
    let tables: Vec<String> = db
        .query_log()
        .take()
        .into_iter()
        .filter(|line| line.starts_with("module_hashes(") || line.starts_with("module_programs("))
        .map(|line| {
            let open = line.find('(').expect("query(key)");
            let key = &line[open + 1..line.len() - 1];
            format!(
                "{}({})",
                &line[..open],
                names.get(key).map_or(key, String::as_str)
            )
        })
        .collect();
    executed.assert_debug_eq(&tables);
}

#[test]
fn a_prose_edit_re_joins_one_hash_table_and_no_program_table() {
    check_tables_after(
        &synthetic::spec_path(20),
        |text| text.replacen("A generated definition", "An edited definition", 1),
        expect![[r#"
            [
                "module_hashes(m000)",
            ]
        "#]],
    );
}

#[test]
fn a_leaf_body_edit_re_joins_only_the_modules_that_call_it() {
    // Leaf 0 of `m000` is called from `m000` itself and at most two modules on;
    // `m003` cannot reach it, so its tables are confirmed, not re-executed.
    check_tables_after(
        &synthetic::soil_path(0),
        |text| text.replacen(" + ", " + 7 + ", 1),
        expect![[r#"
            [
                "module_hashes(m000)",
                "module_programs(m000)",
                "module_hashes(m001)",
                "module_programs(m001)",
                "module_hashes(m002)",
                "module_programs(m002)",
            ]
        "#]],
    );
}

#[test]
fn a_new_definition_gets_rows_and_a_removed_one_loses_them() {
    let (mut db, _) = load();
    let names = |db: &RootDatabase| -> Vec<String> {
        let module = Module::new(db, "m001".to_owned());
        module_hashes(db, module)
            .iter()
            .map(|row| row.name.clone())
            .collect()
    };
    assert_eq!(names(&db).len(), 50);
    let mut change = Change::default();
    change
        .set_file("m001/added.tr", "---\nname: added\n---\n\n# added\n")
        .set_file("m001/added.soil", "added x = x\n")
        .remove_file("m001/f00050.soil");
    change.apply(&mut db);
    let after = names(&db);
    assert_eq!(after.len(), 51);
    assert!(after.contains(&"added".to_owned()));
    let module = Module::new(&db, "m001".to_owned());
    let f50 = module_hashes(&db, module)
        .iter()
        .find(|row| row.name == "f00050")
        .cloned()
        .expect("its spec remains");
    assert!(f50.spec.is_some() && f50.soil_hash.is_none(), "{f50:?}");
    let programs = module_programs(&db, module);
    assert!(programs.iter().any(|(name, _)| name == "added"));
    assert_eq!(programs.len(), 51, "a spec alone still names a code item");
}
