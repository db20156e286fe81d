//! Bundles re-execute only when something they pack changed, proven by counting
//! salsa executions (the style of trellis-db's incremental tests): a prose edit
//! in another module that no csvstats bundle packs re-executes none of them;
//! editing a callee's signature re-renders that callee's file alone and
//! re-executes exactly the bundles that list it; editing a callee's body
//! re-renders no callee file (signatures only, never bodies).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use salsa::plumbing::AsId;
use trellis_context::context_bundle;
use trellis_db::{Change, Item, RootDatabase, Workspace, all_code_items, root_index};

const BUDGET: u64 = 1_000_000;

/// The examples, with the files the tests edit already volatile: a file's first
/// edit demotes its durability, and salsa does not backdate across that
/// (design §7.1), so an editor-open file is the steady state worth measuring.
fn database(editing: &[&str]) -> RootDatabase {
    let mut db = RootDatabase::with_query_log();
    support::load(&mut db, &support::example_files());
    let mut change = Change::default();
    for path in editing {
        change.mark_volatile(*path);
    }
    change.apply(&mut db);
    db
}

/// Every csvstats function with a spec: the bundles under test.
fn csvstats_definitions(db: &RootDatabase) -> Vec<String> {
    let index = root_index(db, Workspace::get(db));
    index.modules["csvstats"]
        .specs
        .keys()
        .filter(|name| name.starts_with(|c: char| c.is_ascii_lowercase()))
        .map(|name| format!("csvstats::{name}"))
        .collect()
}

fn build_all(db: &RootDatabase, defs: &[String]) {
    for def in defs {
        let item =
            trellis_db::resolve_definition(db, def, trellis_db::Named::Function).expect("known");
        assert!(context_bundle(db, item, BUDGET).is_ok(), "{def} packs");
    }
}

fn edit(db: &mut RootDatabase, path: &str, from: &str, to: &str) {
    let text = std::fs::read_to_string(support::examples_dir().join(path)).expect("readable");
    assert!(text.contains(from), "{path} contains {from:?}");
    let mut change = Change::default();
    change.set_file(path, text.replacen(from, to, 1));
    change.apply(db);
}

/// The executed queries named `query`, with item ids replaced by names.
fn executed(db: &RootDatabase, log: &[String], query: &str) -> Vec<String> {
    let names: Vec<(String, String)> = all_code_items(db)
        .iter()
        .map(|item: &Item| (format!("{:?}", item.as_id()), item.qualified(db)))
        .collect();
    log.iter()
        .filter(|line| line.starts_with(&format!("{query}(")))
        .map(|line| {
            names
                .iter()
                .find(|(id, _)| line.contains(&format!("({id})")))
                .map_or_else(|| query.to_owned(), |(_, name)| format!("{query}({name})"))
        })
        .collect()
}

#[test]
fn a_prose_edit_another_module_packs_nowhere_reexecutes_no_csvstats_bundle() {
    let mut db = database(&["inventory/_module.tr", "inventory/Item.tr"]);
    let defs = csvstats_definitions(&db);
    build_all(&db, &defs);
    db.query_log().start();
    edit(
        &mut db,
        "inventory/_module.tr",
        "# inventory\n",
        "# inventory\n\nA new paragraph of prose.\n",
    );
    edit(
        &mut db,
        "inventory/Item.tr",
        "\n# Item\n",
        "\n# Item\n\nMore prose about items.\n",
    );
    build_all(&db, &defs);
    let log = db.query_log().take();
    for query in [
        "context_bundle",
        "bundle_units",
        "callee_md",
        "decisions_md",
        "module_examples",
    ] {
        assert_eq!(
            executed(&db, &log, query),
            Vec::<String>::new(),
            "{query} re-executed"
        );
    }
}

#[test]
fn a_callee_signature_edit_reexecutes_the_bundles_listing_it() {
    let mut db = database(&["csvstats/sort.tr"]);
    let defs = csvstats_definitions(&db);
    build_all(&db, &defs);
    db.query_log().start();
    edit(
        &mut db,
        "csvstats/sort.tr",
        "sort : (xs : List F64) -> List F64",
        "sort : (values : List F64) -> List F64",
    );
    build_all(&db, &defs);
    let log = db.query_log().take();
    assert_eq!(
        executed(&db, &log, "callee_md"),
        ["callee_md(csvstats::sort)"]
    );
    // Every csvstats bundle lists `sort` on its callable surface (sort's own
    // bundle packs the edited spec), so every one re-executes, once.
    assert_eq!(executed(&db, &log, "context_bundle").len(), defs.len());
}

#[test]
fn a_callee_body_edit_rerenders_no_callee_file() {
    let mut db = database(&["csvstats/sort.soil"]);
    let defs = csvstats_definitions(&db);
    build_all(&db, &defs);
    db.query_log().start();
    let body = std::fs::read_to_string(support::examples_dir().join("csvstats/sort.soil")).unwrap();
    edit(&mut db, "csvstats/sort.soil", &body, &format!("{body}\n"));
    build_all(&db, &defs);
    let log = db.query_log().take();
    assert_eq!(executed(&db, &log, "callee_md"), Vec::<String>::new());
}

/// The packer reads no unit after the first that overflows, so an edit to a
/// dropped example wakes only the bundles that pack it.
#[test]
fn an_edit_to_a_dropped_example_wakes_only_the_bundles_that_pack_it() {
    let mut db = database(&["inventory/apply_all.tr"]);
    let item = trellis_db::resolve_definition(&db, "csvstats::median", trellis_db::Named::Function)
        .expect("known");
    // At 3,000 tokens median's bundle drops every example (test-data/context/median.txt).
    let starved = context_bundle(&db, item, 3_000).clone().expect("packs");
    assert!(
        starved
            .dropped
            .iter()
            .any(|d| d.item == "examples/inventory/apply_all.tr")
    );
    assert!(context_bundle(&db, item, BUDGET).is_ok());
    db.query_log().start();
    edit(
        &mut db,
        "inventory/apply_all.tr",
        "\n# apply_all\n",
        "\n# apply_all\n\nEdited prose.\n",
    );
    let item = trellis_db::resolve_definition(&db, "csvstats::median", trellis_db::Named::Function)
        .expect("known");
    let again = context_bundle(&db, item, 3_000).clone().expect("packs");
    let log = db.query_log().take();
    assert_eq!(executed(&db, &log, "context_bundle"), Vec::<String>::new());
    assert_eq!(again, starved);
    db.query_log().start();
    assert!(context_bundle(&db, item, BUDGET).is_ok());
    let log = db.query_log().take();
    assert_eq!(
        executed(&db, &log, "context_bundle").len(),
        1,
        "the generous bundle packs it"
    );
}
