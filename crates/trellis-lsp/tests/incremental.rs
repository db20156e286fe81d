//! Typing in an open buffer re-executes only that file's queries and its
//! dependents': each test opens a buffer through the server's [`Overlay`],
//! computes the diagnostics the server publishes (a warm start, as after
//! `didOpen`), applies one keystroke-sized edit through the overlay, computes
//! them again, and asserts exactly which queries salsa re-executed. The
//! fixture has a second module nothing in the first calls: it must never appear.

use std::collections::BTreeMap;
use std::path::Path;

use expect_test::{Expect, expect};
use trellis_db::{Change, Module, RootDatabase, Workspace, all_code_items, root_index};
use trellis_lsp::overlay::Overlay;
use trellis_lsp::{Encoding, root_diagnostics};

const ROOT: &[(&str, &str)] = &[
    (
        "soil.toml",
        "[toolchain]\ntrellis = \"0.1.0\"\nsoil0_cli = \"0.1.0\"\n",
    ),
    (
        "m/double.tr",
        "---\nname: double\n---\n\n# double\n\nTwice.\n\n```soil-sig\ndouble : (x : I64) -> I64\n```\n\n```test basics\ndouble(2) -> 4\n```\n",
    ),
    ("m/double.soil", "double x = x + x\n"),
    (
        "m/quad.tr",
        "---\nname: quad\n---\n\n# quad\n\nFour times.\n\n```soil-sig\nquad : (x : I64) -> I64\n```\n\n```test basics\nquad(1) -> 4\n```\n",
    ),
    ("m/quad.soil", "quad x = double (double x)\n"),
    (
        "n/triple.tr",
        "---\nname: triple\n---\n\n# triple\n\nThrice.\n\n```soil-sig\ntriple : (x : I64) -> I64\n```\n\n```test basics\ntriple(1) -> 3\n```\n",
    ),
    ("n/triple.soil", "triple x = x + x + x\n"),
];

fn load() -> RootDatabase {
    let mut db = RootDatabase::with_query_log();
    let mut change = Change::default();
    for (path, text) in ROOT {
        change.set_root_file(*path, *text);
    }
    change.apply(&mut db);
    db
}

/// The path or name each salsa id of the root stands for.
fn readable(db: &RootDatabase, log: Vec<String>) -> Vec<String> {
    use salsa::plumbing::AsId;
    let mut names = BTreeMap::new();
    for file in trellis_db::all_files(db) {
        names.insert(format!("{:?}", file.as_id()), file.path(db).to_string());
    }
    for &item in all_code_items(db) {
        names.insert(format!("{:?}", item.as_id()), item.qualified(db));
    }
    for module in root_index(db, Workspace::get(db)).modules.keys() {
        let key = Module::new(db, module.clone());
        names.insert(format!("{:?}", key.as_id()), module.clone());
    }
    log.into_iter()
        .map(|line| {
            let Some(open) = line.find('(') else {
                return line;
            };
            let key = &line[open + 1..line.len() - 1];
            match names.get(key) {
                Some(name) => format!("{}({name})", &line[..open]),
                // A query of the whole root: its key is salsa's own, and moves
                // whenever a new kind of query is declared.
                None if key.starts_with("Id(") => format!("{}()", &line[..open]),
                None => line,
            }
        })
        .collect()
}

fn diagnostics(db: &RootDatabase) -> BTreeMap<String, usize> {
    root_diagnostics(db, Path::new("/root"), &[], Encoding::Utf16)
        .into_iter()
        .map(|(uri, found)| (uri, found.len()))
        .collect()
}

/// Opens `path` as a buffer, then replaces `from` by `to` in it as one edit.
#[track_caller]
fn check_typing(path: &str, from: &str, to: &str, published: Expect, executed: Expect) {
    let mut db = load();
    let mut overlay = Overlay::default();
    let text = ROOT
        .iter()
        .find(|(p, _)| *p == path)
        .expect("a fixture file")
        .1;
    overlay.open(&db, path, text).apply(&mut db);
    assert!(diagnostics(&db).is_empty(), "the fixture checks cleanly");
    let edited = text.replacen(from, to, 1);
    assert_ne!(edited, text);
    db.query_log().start();
    overlay.edit(path, &edited).apply(&mut db);
    let after = diagnostics(&db);
    let log = readable(&db, db.query_log().take());
    published.assert_debug_eq(&after);
    executed.assert_debug_eq(&log);
}

#[test]
fn a_body_edit_re_checks_that_definition_alone() {
    check_typing(
        "m/double.soil",
        "x + x",
        "x * 2",
        expect![[r#"
            {}
        "#]],
        expect![[r#"
            [
                "parse_soil(m/double.soil)",
                "module_check(m)",
                "item_equation(m::double)",
                "check_definition(m::double)",
                "soil_facts(m::double)",
                "program_refs(m::double)",
                "free_refs(m::double)",
                "checker_declaration(m::double)",
            ]
        "#]],
    );
}

#[test]
fn a_signature_edit_re_checks_the_callers_in_its_module_only() {
    check_typing(
        "m/double.tr",
        "(x : I64) -> I64",
        "(x : I64) -> Bool",
        expect![[r#"
            {
                "file:///root/m/double.soil": 1,
                "file:///root/m/double.tr": 1,
                "file:///root/m/quad.soil": 2,
            }
        "#]],
        expect![[r#"
            [
                "parse_spec(m/double.tr)",
                "spec_diagnostics(m/double.tr)",
                "formal_blocks(m/double.tr)",
                "program_def(m::double)",
                "program_refs(m::double)",
                "check_definition(m::double)",
                "module_check(m)",
                "test_diagnostics(m::double)",
                "test_blocks(m/double.tr)",
                "checker_declaration(m::double)",
                "check_definition(m::quad)",
                "whole_root_check()",
            ]
        "#]],
    );
}

#[test]
fn a_keystroke_that_breaks_the_parse_wakes_only_that_file() {
    check_typing(
        "n/triple.soil",
        "x + x + x",
        "x + x +",
        expect![[r#"
            {
                "file:///root/n/triple.soil": 1,
            }
        "#]],
        expect![[r#"
            [
                "parse_soil(n/triple.soil)",
                "module_check(n)",
                "item_equation(n::triple)",
                "check_definition(n::triple)",
                "free_refs(n::triple)",
                "whole_root_check()",
            ]
        "#]],
    );
}
