//! The invalidation table, proven by counting executions: each test computes every
//! hash of a small root, applies one edit, computes everything again, and asserts
//! both which hashes moved and exactly which queries salsa re-executed.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use std::collections::BTreeMap;

use expect_test::{Expect, expect};
use trellis_db::{
    Change, DecisionKey, Module, RootDatabase, Workspace, all_code_items, check_root,
    decision_entries, decision_entry_hash, formal_hash, prose_hash, root_index, root_status,
    root_types, scope_hash, soil_hash, suite_key, test_hash,
};

const ROOT: &str = r#"
//- soil.toml
[toolchain]
trellis = "0.1.0"
soil0_cli = "0.1.0"

[tags]
stats = "numbers"
//- _project.tr
---
name: demo
---

# Demo

```decisions
- **timestamps** — all timestamps are UTC seconds (I64)
  rejected: local time (DST bugs)
- **wrapping** — integer arithmetic wraps
```
//- m/_module.tr
---
name: m
---

# Module m

```exports
double, quad
```

```decisions
- **inputs** — every definition takes one I64
```
//- m/double.tr
---
name: double
tags: [stats]
---

# double

Twice its input.

```soil-sig
double : (x : I64) -> I64
```

```ensures
even: result % 2 == 0
```

```test basics
double(2) -> 4
```
//- m/double.soil
double x = _twice x
//- m/_private.soil
_twice : (n : I64) -> I64
_twice n = n + n
//- m/quad.tr
---
name: quad
---

# quad

Four times its input.

```soil-sig
quad : (x : I64) -> I64
```

```test basics
quad(1) -> 4
```
//- m/quad.soil
quad x =
  let d = double x in
  double d
"#;

/// Splits a `//- path` fixture into files.
fn files(fixture: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in fixture.lines() {
        if let Some(path) = line.strip_prefix("//- ") {
            if let Some((path, text)) = current.take() {
                out.insert(path, text);
            }
            current = Some((path.trim().to_owned(), String::new()));
        } else if let Some((_, text)) = current.as_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    if let Some((path, text)) = current {
        out.insert(path, text);
    }
    out
}

fn load(fixture: &str) -> RootDatabase {
    let mut db = RootDatabase::with_query_log();
    let mut change = Change::default();
    for (path, text) in files(fixture) {
        change.set_root_file(path, text);
    }
    change.apply(&mut db);
    db
}

/// Every hash of the root, by a readable key.
fn all_hashes(db: &RootDatabase) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let index = root_index(db, Workspace::get(db)).clone();
    let mut specs: Vec<_> = index.project.into_iter().collect();
    for files in index.modules.values() {
        specs.extend(files.spec);
        specs.extend(files.specs.values().copied());
    }
    for file in specs {
        let path = file.path(db).to_string();
        out.insert(format!("{path} formal"), formal_hash(db, file).to_string());
        out.insert(format!("{path} test"), test_hash(db, file).to_string());
        out.insert(format!("{path} prose"), prose_hash(db, file).to_string());
        if path.ends_with("_module.tr") || path.ends_with("_project.tr") {
            out.insert(format!("{path} scope"), scope_hash(db, file).to_string());
            let labels: Vec<String> = decision_entries(db, file)
                .iter()
                .map(|entry| entry.label.clone())
                .collect();
            for label in labels {
                let key = DecisionKey::new(db, file, label.clone());
                let hash = decision_entry_hash(db, key)
                    .map(|d| d.to_string())
                    .unwrap_or_default();
                out.insert(format!("{path} decision {label}"), hash);
            }
        }
    }
    for &item in all_code_items(db) {
        let hash = soil_hash(db, item)
            .map(|d| d.to_string())
            .unwrap_or_else(|| "none".into());
        out.insert(format!("{} soil_hash", item.qualified(db)), hash);
    }
    out
}

/// Replaces salsa ids in query-log lines with the path or name they stand for.
fn readable(db: &RootDatabase, log: Vec<String>) -> Vec<String> {
    name_keys(&readable_names(db), log)
}

/// The path or name each salsa id of the root stands for.
fn readable_names(db: &RootDatabase) -> BTreeMap<String, String> {
    use salsa::plumbing::AsId;
    let mut names = BTreeMap::new();
    for file in trellis_db::all_files(db) {
        names.insert(format!("{:?}", file.as_id()), file.path(db).to_string());
    }
    for &item in all_code_items(db) {
        names.insert(format!("{:?}", item.as_id()), item.qualified(db));
    }
    for module in root_index(db, Workspace::get(db)).modules.keys() {
        let module_key = Module::new(db, module.clone());
        names.insert(format!("{:?}", module_key.as_id()), module.clone());
    }
    for tag in trellis_db::declared_tags(db) {
        let key = trellis_db::TagName::new(db, tag.clone());
        names.insert(format!("{:?}", key.as_id()), tag.clone());
    }
    let root_files = Module::new(db, String::new());
    names.insert(format!("{:?}", root_files.as_id()), "(root)".to_owned());
    for file in trellis_db::all_files(db) {
        if file.path(db).as_str().ends_with("_module.tr")
            || file.path(db).as_str().ends_with("_project.tr")
        {
            for entry in decision_entries(db, file) {
                let key = DecisionKey::new(db, file, entry.label.clone());
                names.insert(
                    format!("{:?}", key.as_id()),
                    format!("{}#{}", file.path(db), entry.label),
                );
            }
        }
    }
    names
}

fn name_keys(names: &BTreeMap<String, String>, log: Vec<String>) -> Vec<String> {
    log.into_iter()
        .map(|line| {
            let Some(open) = line.find('(') else {
                return line;
            };
            let key = line[open + 1..line.len() - 1].to_owned();
            match names.get(&key) {
                Some(name) => format!("{}({name})", &line[..open]),
                // A query of the whole root: its key is salsa's own, and moves
                // whenever a new kind of query is declared.
                None if key.starts_with("Id(") => format!("{}()", &line[..open]),
                None => line,
            }
        })
        .collect()
}

/// Applies an edit to one file's text and reports which hashes moved and which
/// queries were re-executed while recomputing everything. The file is marked
/// volatile first, as an editor host does when it opens a file, so these rows
/// are the editor's path; a durable file's edits re-execute the same queries
/// (`a_first_edit_backdates_like_every_later_one`).
#[track_caller]
fn check_edit(path: &str, edit: impl FnOnce(&str) -> String, moved: Expect, executed: Expect) {
    let original = files(ROOT);
    let mut db = load(ROOT);
    all_hashes(&db);
    let mut demote = Change::default();
    demote.mark_volatile(path);
    demote.apply(&mut db);
    let before = all_hashes(&db);
    let text = original.get(path).expect("fixture has the file");
    let edited = edit(text);
    assert_ne!(&edited, text, "the edit changes the file");
    let mut change = Change::default();
    change.set_file(path, edited);
    change.apply(&mut db);
    db.query_log().start();
    let after = all_hashes(&db);
    let log = readable(&db, db.query_log().take());
    let moved_keys: Vec<&String> = after
        .iter()
        .filter(|(key, hash)| before.get(*key) != Some(hash))
        .map(|(key, _)| key)
        .collect();
    moved.assert_debug_eq(&moved_keys);
    executed.assert_debug_eq(&log);
}

#[test]
fn hashes_are_stable_goldens() {
    let db = load(ROOT);
    let hashes = all_hashes(&db);
    let rendered: String = hashes.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
    expect![[r#"
        _project.tr decision timestamps = sha256:8b8bfc14413ee7cfface2cae6a591f5ad8ce4732d760037815e31e3d35b1cbbd
        _project.tr decision wrapping = sha256:db438859c739d89ef991ea908a4c1deeb7e3c7a1787be1dd3f531bfe6c17fd88
        _project.tr formal = sha256:e01e207df2331c02bbabd454b3068cc7d01013de2aa4a26f58a545a6fca6e4ea
        _project.tr prose = sha256:f46c12fb93e95fed2b904d3c1345dfc8a39ba2f74bf61fdc950d36742ea324cf
        _project.tr scope = sha256:94b19c248d4f6fc5ab9f56134b31d42b35f6eab763e7cbecfa0faae43ba5c9bd
        _project.tr test = sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
        m/_module.tr decision inputs = sha256:744918925b0943d762185041feda40bb9be62e5674dd181f52d7165d81dd918c
        m/_module.tr formal = sha256:a212037fda7976988f5ca3d25e40a30dcd3785b175cba5165b689dac6b7a4480
        m/_module.tr prose = sha256:56b42f5f6a4bda161439b8f91716979e27d9d121c1eaab6ab2cfbca05408f84e
        m/_module.tr scope = sha256:cb05eded26b3d7141b08535b3183de826c953203d2e2e747bf1f9e70ae8ac929
        m/_module.tr test = sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
        m/double.tr formal = sha256:308ee6c07e94629a416ab85a3ec350d9c50c431ceb707a7e423312afccd203ff
        m/double.tr prose = sha256:3d6657bfa671fae87da26a3afdba8ec6071419673c462c1757775fe5914c8b2e
        m/double.tr test = sha256:c09fe5928fa3f25875d24952ea8562ad649879184bae5f4cc8cf897e0166cd49
        m/quad.tr formal = sha256:6d69d64211d44d11a624df3a9cedee960f53116128b9741de518602f4ed2d35f
        m/quad.tr prose = sha256:070cb2b87038e7a6444cc24a98ef60f07b0322f3fce0caee5095712a122ba1f5
        m/quad.tr test = sha256:2345eb7b29913a29151ec75449667afd5d58b2a29382abf843f18312f5a603d9
        m::_twice soil_hash = sha256:5a79dfb4244b281f18c1e8274f0e2213538aabbb3d4a4af65caee8803bc3271d
        m::double soil_hash = sha256:13a7d8fbdb6774cd07553257fa147077d9788f3ea533141ed41d770c525bdf30
        m::quad soil_hash = sha256:545901e977b08ce4c11bdbacc90b2452fd94a0a8b33578535dbd8dd5a20ab54f
    "#]].assert_eq(&rendered);
}

#[test]
fn prose_edit_moves_only_prose_hash() {
    check_edit(
        "m/double.tr",
        |text| text.replace("Twice its input.", "Twice its input, exactly."),
        expect![[r#"
            [
                "m/double.tr prose",
            ]
        "#]],
        expect![[r#"
            [
                "parse_spec(m/double.tr)",
                "spec_hashes(m/double.tr)",
            ]
        "#]],
    );
}

#[test]
fn test_edit_moves_only_test_hash() {
    check_edit(
        "m/double.tr",
        |text| text.replace("double(2) -> 4", "double(2) -> 4\ndouble(0) -> 0"),
        expect![[r#"
            [
                "m/double.tr test",
            ]
        "#]],
        expect![[r#"
            [
                "parse_spec(m/double.tr)",
                "spec_hashes(m/double.tr)",
            ]
        "#]],
    );
}

#[test]
fn xfail_toggle_moves_test_hash() {
    check_edit(
        "m/double.tr",
        |text| text.replace("```test basics", "```test basics xfail"),
        expect![[r#"
        [
            "m/double.tr test",
        ]
    "#]],
        expect![[r#"
            [
                "parse_spec(m/double.tr)",
                "spec_hashes(m/double.tr)",
            ]
        "#]],
    );
}

#[test]
fn signature_edit_moves_formal_hash() {
    check_edit(
        "m/double.tr",
        |text| text.replace("double : (x : I64) -> I64", "double : (n : I64) -> I64"),
        expect![[r#"
            [
                "m/double.tr formal",
            ]
        "#]],
        expect![[r#"
            [
                "parse_spec(m/double.tr)",
                "spec_hashes(m/double.tr)",
            ]
        "#]],
    );
}

#[test]
fn agent_marker_removal_moves_formal_hash() {
    let root = ROOT.replace("```ensures\neven", "```ensures @agent\neven");
    let mut db = load(&root);
    let before = all_hashes(&db);
    let mut change = Change::default();
    change.set_file("m/double.tr", files(ROOT)["m/double.tr"].clone());
    change.apply(&mut db);
    let after = all_hashes(&db);
    let moved: Vec<&String> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(v))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(moved, ["m/double.tr formal"]);
}

#[test]
fn local_rename_moves_nothing() {
    check_edit(
        "m/quad.soil",
        |text| {
            text.replace(
                "let d = double x in\n  double d",
                "let doubled = double x in\n  double doubled",
            )
        },
        expect![[r#"
            []
        "#]],
        expect![[r#"
            [
                "parse_soil(m/quad.soil)",
                "soil_facts(m::quad)",
            ]
        "#]],
    );
}

/// An edit keeps a file durable (design §7.1), so salsa backdates across its
/// very first edit as across every later one: a binder rename re-executes the
/// same four queries each time, and nothing that depends on them.
#[test]
fn a_first_edit_backdates_like_every_later_one() {
    let mut db = load(ROOT);
    let before = all_hashes(&db);
    let original = files(ROOT)["m/quad.soil"].clone();
    let mut executed = Vec::new();
    for binder in ["doubled", "twice"] {
        let mut change = Change::default();
        change.set_file(
            "m/quad.soil",
            original.replace(
                "d = double x in\n  double d",
                &format!("{binder} = double x in\n  double {binder}"),
            ),
        );
        change.apply(&mut db);
        db.query_log().start();
        assert_eq!(all_hashes(&db), before, "a binder rename moves no hash");
        executed.push(readable(&db, db.query_log().take()));
    }
    expect![[r#"
        [
            [
                "parse_soil(m/quad.soil)",
                "soil_facts(m::quad)",
            ],
            [
                "parse_soil(m/quad.soil)",
                "soil_facts(m::quad)",
            ],
        ]
    "#]]
    .assert_debug_eq(&executed);
}

#[test]
fn reformat_moves_nothing() {
    check_edit(
        "m/quad.soil",
        |text| {
            text.replace(
                "quad x =\n  let d = double x in\n  double d",
                "quad   x =   -- four times\n let d =\n double x\n in double   d",
            )
        },
        expect![[r#"
            []
        "#]],
        expect![[r#"
            [
                "parse_soil(m/quad.soil)",
                "soil_facts(m::quad)",
            ]
        "#]],
    );
}

#[test]
fn callee_body_edit_moves_callers_soil_hash() {
    check_edit(
        "m/_private.soil",
        |text| text.replace("_twice n = n + n", "_twice n = n * 2"),
        expect![[r#"
        [
            "m::_twice soil_hash",
            "m::double soil_hash",
            "m::quad soil_hash",
        ]
    "#]],
        expect![[r#"
            [
                "parse_soil(m/_private.soil)",
                "module_helpers(m/_private.soil)",
                "soil_facts(m::_twice)",
                "acyclic_soil_hash(m::_twice)",
                "acyclic_soil_hash(m::double)",
                "acyclic_soil_hash(m::quad)",
            ]
        "#]],
    );
}

#[test]
fn decision_entry_edit_moves_only_that_entry() {
    check_edit(
        "_project.tr",
        |text| {
            text.replace(
                "integer arithmetic wraps",
                "integer arithmetic wraps on overflow",
            )
        },
        expect![[r#"
            [
                "_project.tr decision wrapping",
            ]
        "#]],
        expect![[r#"
            [
                "parse_spec(_project.tr)",
                "spec_hashes(_project.tr)",
                "decision_entries(_project.tr)",
                "scope_hash(_project.tr)",
                "decision_entry_hash(_project.tr#timestamps)",
                "decision_entry_hash(_project.tr#wrapping)",
            ]
        "#]],
    );
}

#[test]
fn decision_entry_addition_moves_only_the_scope_hash() {
    check_edit(
        "m/_module.tr",
        |text| {
            text.replace("- **inputs** — every definition takes one I64\n", "- **inputs** — every definition takes one I64\n- **names** — definitions are verbs\n")
        },
        expect![[r#"
            [
                "m/_module.tr decision names",
                "m/_module.tr scope",
            ]
        "#]],
        expect![[r#"
            [
                "parse_spec(m/_module.tr)",
                "spec_hashes(m/_module.tr)",
                "decision_entries(m/_module.tr)",
                "scope_hash(m/_module.tr)",
                "decision_entry_hash(m/_module.tr#inputs)",
                "decision_entry_hash(m/_module.tr#names)",
            ]
        "#]],
    );
}

#[test]
fn same_root_elsewhere_same_hashes() {
    // Paths are root-relative; a second database loaded from the same bytes (as a
    // copy of the root at another absolute path would be) hashes identically.
    assert_eq!(all_hashes(&load(ROOT)), all_hashes(&load(ROOT)));
}

/// Sets one file to `start` of its fixture text and checks the whole root, then
/// edits it to `edit` of that and lists what salsa re-executed for the second
/// check. The file is volatile before the edit, as in `check_edit`.
fn check_log_after_edit(
    path: &str,
    start: impl FnOnce(&str) -> String,
    edit: impl FnOnce(&str) -> String,
) -> Vec<String> {
    let mut db = load(ROOT);
    let text = start(&files(ROOT)[path]);
    let mut change = Change::default();
    change.set_file(path, text.clone()).mark_volatile(path);
    change.apply(&mut db);
    let report = check_root(&db, None);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let mut change = Change::default();
    change.set_file(path, edit(&text));
    change.apply(&mut db);
    db.query_log().start();
    let report = check_root(&db, None);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    readable(&db, db.query_log().take())
}

#[test]
fn a_signed_callee_body_edit_re_checks_the_callee_alone() {
    // `quad` calls `double`, whose signature is declared: `quad`'s check sees that
    // signature only, so it is confirmed, not re-run.
    let executed = check_log_after_edit("m/double.soil", str::to_owned, |text| {
        text.replace("double x = _twice x", "double x = _twice (x + 0)")
    });
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
    "#]]
    .assert_debug_eq(&executed);
}

#[test]
fn an_unsigned_helper_body_edit_re_checks_its_callers() {
    // Without a signature `_twice`'s type is inferred from its body, so the checks
    // of its callers must read the body.
    let executed = check_log_after_edit(
        "m/_private.soil",
        |text| {
            text.replace("_twice : (n : I64) -> I64\n", "")
                .replace("_twice n = n + n", "_twice n = n * 2")
        },
        |text| text.replace("_twice n = n * 2", "_twice n = n + n * 1"),
    );
    expect![[r#"
        [
            "parse_soil(m/_private.soil)",
            "module_check(m)",
            "module_helpers(m/_private.soil)",
            "soil_facts(m::_twice)",
            "program_refs(m::_twice)",
            "helper_signature(m::_twice)",
            "item_equation(m::_twice)",
            "checker_declaration(m::_twice)",
            "check_definition(m::double)",
            "check_definition(m::_twice)",
            "free_refs(m::_twice)",
        ]
    "#]]
    .assert_debug_eq(&executed);
}

/// A second module beside `m`: `n::triple` refers to nothing, `n::user` to
/// `m::double` (exported by `m`).
const MODULE_N: &str = r#"
//- n/_module.tr
---
name: n
---

# Module n

```exports
triple, user
```
//- n/triple.tr
---
name: triple
---

# triple

Three times its input.

```soil-sig
triple : (x : I64) -> I64
```

```test basics
triple(1) -> 3
```
//- n/triple.soil
triple x = x + x + x
//- n/user.tr
---
name: user
---

# user

Doubles through m.

```soil-sig
user : (x : I64) -> I64
```

```test basics
user(1) -> 2
```
//- n/user.soil
user x = m::double x
"#;

/// Every whole-root pass a daemon answers from: the check, the status, every hash.
fn every_pass(db: &RootDatabase) {
    check_root(db, None);
    root_status(db);
    all_hashes(db);
}

/// Loads `m` and `n`, runs every pass, applies `change` and lists the queries
/// salsa re-executed running every pass again, with the module keys of both
/// states named.
fn log_after_files_change(change: impl FnOnce(&mut Change)) -> Vec<String> {
    let mut db = load(&format!("{ROOT}{MODULE_N}"));
    every_pass(&db);
    let mut names = readable_names(&db);
    let mut edit = Change::default();
    change(&mut edit);
    edit.apply(&mut db);
    db.query_log().start();
    every_pass(&db);
    let log = db.query_log().take();
    names.extend(readable_names(&db));
    name_keys(&names, log)
}

#[test]
fn adding_a_definition_re_executes_its_module_alone() {
    let executed = log_after_files_change(|change| {
        change
            .set_file(
                "n/extra.tr",
                "---\nname: extra\n---\n\n# extra\n\nOne more.\n\n```soil-sig\nextra : (x : I64) -> I64\n```\n",
            )
            .set_file("n/extra.soil", "extra x = x + 1\n");
    });
    expect![[r#"
        [
            "module_files(n)",
            "root_index()",
            "whole_root_check()",
            "checker_env()",
            "module_type_specs(n)",
            "module_check(n)",
            "spec_diagnostics(n/_module.tr)",
            "spec_diagnostics(n/extra.tr)",
            "parse_spec(n/extra.tr)",
            "parse_soil(n/extra.soil)",
            "check_definition(n::extra)",
            "item_equation(n::extra)",
            "definition_files(n::extra)",
            "program_cycle_free(n::extra)",
            "program_refs(n::extra)",
            "soil_facts(n::extra)",
            "program_def(n::extra)",
            "formal_blocks(n/extra.tr)",
            "test_diagnostics(n::extra)",
            "test_blocks(n/extra.tr)",
            "free_refs(n::extra)",
            "definition_files(n::triple)",
            "definition_files(n::user)",
            "root_status()",
            "module_status(n)",
            "definition_status(n::extra)",
            "spec_hashes(n/extra.tr)",
            "all_code_items()",
            "module_code_items(n)",
            "acyclic_soil_hash(n::extra)",
        ]
    "#]]
    .assert_debug_eq(&executed);
}

#[test]
fn deleting_a_definition_no_one_calls_re_executes_its_module_alone() {
    let executed = log_after_files_change(|change| {
        change
            .remove_file("n/triple.tr")
            .remove_file("n/triple.soil");
    });
    expect![[r#"
        [
            "module_files(n)",
            "root_index()",
            "whole_root_check()",
            "checker_env()",
            "module_type_specs(n)",
            "module_check(n)",
            "spec_diagnostics(n/_module.tr)",
            "definition_files(n::user)",
            "root_status()",
            "module_status(n)",
            "all_code_items()",
            "module_code_items(n)",
        ]
    "#]]
    .assert_debug_eq(&executed);
}

#[test]
fn deleting_a_called_definition_re_executes_its_module_and_its_callers_module() {
    // `m::double` is called by `m::quad` and by `n::user`.
    let executed = log_after_files_change(|change| {
        change
            .remove_file("m/double.tr")
            .remove_file("m/double.soil");
    });
    expect![[r#"
        [
            "module_files(m)",
            "root_index()",
            "whole_root_check()",
            "module_check(m)",
            "spec_diagnostics(m/_module.tr)",
            "definition_files(m::quad)",
            "definition_files(m::double)",
            "soil_facts(m::quad)",
            "program_refs(m::quad)",
            "program_cycle_free(m::quad)",
            "check_definition(m::quad)",
            "checker_env()",
            "module_type_specs(m)",
            "definition_files(m::_twice)",
            "helper_grants(m::_twice)",
            "soil_facts(n::user)",
            "program_refs(n::user)",
            "program_cycle_free(n::user)",
            "check_definition(n::user)",
            "module_check(n)",
            "module_exists(m)",
            "module_spec(m)",
            "root_status()",
            "module_status(m)",
            "definition_status(m::quad)",
            "definition_status(n::user)",
            "module_status(n)",
            "all_code_items()",
            "module_code_items(m)",
            "acyclic_soil_hash(m::quad)",
            "acyclic_soil_hash(n::user)",
        ]
    "#]]
    .assert_debug_eq(&executed);
}

#[test]
fn adding_and_deleting_a_module_re_executes_that_module_alone() {
    let added = log_after_files_change(|change| {
        change
            .set_file("k/_module.tr", "---\nname: k\n---\n\n# Module k\n\nNew.\n")
            .set_file(
                "k/one.tr",
                "---\nname: one\n---\n\n# one\n\nOne.\n\n```soil-sig\none : (x : I64) -> I64\n```\n",
            )
            .set_file("k/one.soil", "one x = 1\n");
    });
    expect![[r#"
        [
            "directories_by_name()",
            "module_directory((root))",
            "root_index()",
            "module_files(k)",
            "module_directory(k)",
            "module_directory(m)",
            "module_directory(n)",
            "whole_root_check()",
            "module_check(k)",
            "spec_diagnostics(k/_module.tr)",
            "parse_spec(k/_module.tr)",
            "spec_diagnostics(k/one.tr)",
            "parse_spec(k/one.tr)",
            "parse_soil(k/one.soil)",
            "check_definition(k::one)",
            "item_equation(k::one)",
            "definition_files(k::one)",
            "program_cycle_free(k::one)",
            "program_refs(k::one)",
            "soil_facts(k::one)",
            "program_def(k::one)",
            "formal_blocks(k/one.tr)",
            "checker_env()",
            "module_type_specs(k)",
            "test_diagnostics(k::one)",
            "test_blocks(k/one.tr)",
            "free_refs(k::one)",
            "root_status()",
            "module_status(k)",
            "definition_status(k::one)",
            "spec_hashes(k/_module.tr)",
            "scope_hash(k/_module.tr)",
            "decision_entries(k/_module.tr)",
            "spec_hashes(k/one.tr)",
            "all_code_items()",
            "module_code_items(k)",
            "acyclic_soil_hash(k::one)",
        ]
    "#]]
    .assert_debug_eq(&added);
    let deleted = log_after_files_change(|change| {
        for path in [
            "n/_module.tr",
            "n/triple.tr",
            "n/triple.soil",
            "n/user.tr",
            "n/user.soil",
        ] {
            change.remove_file(path);
        }
    });
    expect![[r#"
        [
            "directories_by_name()",
            "module_directory((root))",
            "root_index()",
            "module_directory(m)",
            "whole_root_check()",
            "checker_env()",
            "root_status()",
            "all_code_items()",
        ]
    "#]]
    .assert_debug_eq(&deleted);
}

/// The tags one spec names are asked about one by one: declaring a tag nobody
/// names re-checks no spec, and withdrawing one re-checks the specs naming it.
#[test]
fn a_tag_declared_or_withdrawn_re_checks_only_the_specs_naming_it() {
    let config = |tags: &str| {
        format!("[toolchain]\ntrellis = \"0.1.0\"\nsoil0_cli = \"0.1.0\"\n\n[tags]\n{tags}")
    };
    let declared = log_after_files_change(|change| {
        change.set_config(config("stats = \"numbers\"\nunused = \"by anyone\"\n"));
    });
    expect![[r#"
        [
            "root_config()",
            "whole_root_check()",
            "declared_tags()",
            "tag_declared(stats)",
        ]
    "#]]
    .assert_debug_eq(&declared);
    let withdrawn = log_after_files_change(|change| {
        change.set_config(config(""));
    });
    expect![[r#"
        [
            "root_config()",
            "whole_root_check()",
            "declared_tags()",
            "tag_declared(stats)",
            "spec_diagnostics(m/double.tr)",
            "module_check(m)",
            "definition_status(m::double)",
            "module_status(m)",
            "root_status()",
        ]
    "#]]
    .assert_debug_eq(&withdrawn);
}

/// The root's types are prepared once for every definition (`root_types`), for
/// the checker, for the test cases' values and for the suites `trellis test`
/// runs alike: prepared per definition, a cold check of N definitions and T
/// types cost N × T (2,000 definitions and 1,000 types took 2.2-2.9 s against
/// 0.24-0.29 s declared once), and so did a test run.
#[test]
fn the_root_s_types_are_declared_once_for_every_check() {
    let typed = format!(
        "{ROOT}//- m/Pair.tr\n---\nname: Pair\n---\n\n# Pair\n\nTwo numbers.\n\n```soil-type\ntype Pair = {{ left : I64, right : I64 }}\n```\n"
    );
    let db = load(&typed);
    db.query_log().start();
    let report = check_root(&db, None);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let log = db.query_log().take();
    let executions = |query: &str| {
        (log.iter())
            .filter(|key| key.starts_with(&format!("{query}(")))
            .count()
    };
    let checks = executions("check_definition");
    assert!(checks >= 2, "{checks} definitions checked: {log:#?}");
    assert_eq!(executions("root_types"), 1, "{log:#?}");
    // What a suite is handed is that same memo, not a preparation of its own.
    db.query_log().start();
    assert!(root_types(&db).runtime().is_ok());
    assert_eq!(db.query_log().take(), Vec::<String>::new());
}

/// A module of its own types and a function over them: what a newcomer adds
/// beside a root that is already green.
const MODULE_T: &str = r#"
//- t/_module.tr
---
name: t
---

# Module t

```exports
Point, norm1
```
//- t/Point.tr
---
name: Point
---

# Point

```soil-type
type Point = { px : I64, py : I64 }
```
//- t/norm1.tr
---
name: norm1
---

# norm1

The taxicab length.

```soil-sig
norm1 : (p : Point) -> I64
```

```test basics
norm1({"px": 1, "py": 2}) -> 3
```
//- t/norm1.soil
norm1 p = p.px + p.py
"#;

/// Every definition's suite key, by qualified name.
fn suite_keys(db: &RootDatabase) -> BTreeMap<String, String> {
    all_code_items(db)
        .iter()
        .map(|&item| (item.qualified(db), suite_key(db, item).to_string()))
        .collect()
}

/// Applies `change` to a root of `fixture` whose every pass and suite key was
/// asked, asks them again, and returns the keys before, after, and the suite
/// keys salsa re-executed.
fn suite_keys_across(
    fixture: &str,
    change: impl FnOnce(&mut Change),
) -> (
    BTreeMap<String, String>,
    BTreeMap<String, String>,
    Vec<String>,
) {
    let mut db = load(fixture);
    every_pass(&db);
    let before = suite_keys(&db);
    let mut names = readable_names(&db);
    let mut edit = Change::default();
    change(&mut edit);
    edit.apply(&mut db);
    db.query_log().start();
    every_pass(&db);
    let after = suite_keys(&db);
    let log = db.query_log().take();
    names.extend(readable_names(&db));
    let executed = name_keys(&names, log)
        .into_iter()
        .filter(|line| line.starts_with("suite_key("))
        .collect();
    (before, after, executed)
}

/// The suite key used to hash the whole type environment, so adding a module
/// with a type re-ran every suite of the root. A key now covers only the types
/// its suite can observe: a module of new types and functions over them moves
/// no existing key and re-executes none.
#[test]
fn adding_a_module_of_new_types_moves_no_other_suite_key() {
    let (before, after, executed) = suite_keys_across(&format!("{ROOT}{MODULE_N}"), |change| {
        for (path, text) in files(MODULE_T) {
            change.set_file(&path, text.as_str());
        }
    });
    for (name, key) in &before {
        assert_eq!(after.get(name), Some(key), "{name}'s suite key moved");
    }
    expect![[r#"
        [
            "suite_key(t::norm1)",
        ]
    "#]]
    .assert_debug_eq(&executed);
}

/// What a suite can observe still moves its key: its own type's declaration,
/// and a new type elsewhere that answers a field its program reads (the checker
/// looks an unknown record's field up among every record type declaring it).
#[test]
fn a_type_a_suite_can_observe_moves_its_key_and_no_other() {
    let fixture = format!("{ROOT}{MODULE_N}{MODULE_T}");
    let (before, after, executed) = suite_keys_across(&fixture, |change| {
        change.set_file(
            "t/Point.tr",
            files(MODULE_T)["t/Point.tr"].replace("py : I64", "py : I64, pz : I64"),
        );
    });
    let moved: Vec<&String> = before
        .iter()
        .filter(|(name, key)| after.get(*name) != Some(key))
        .map(|(name, _)| name)
        .collect();
    assert_eq!(moved, ["t::norm1"], "{executed:?}");

    let (before, after, _) = suite_keys_across(&fixture, |change| {
        change
            .set_file("k/_module.tr", "---\nname: k\n---\n\n# Module k\n\nNew.\n")
            .set_file(
                "k/Pair.tr",
                "---\nname: Pair\n---\n\n# Pair\n\n```soil-type\ntype Pair = { px : I64, second : I64 }\n```\n",
            );
    });
    let moved: Vec<&String> = before
        .iter()
        .filter(|(name, key)| after.get(*name) != Some(key))
        .map(|(name, _)| name)
        .collect();
    assert_eq!(moved, ["t::norm1"]);
}

/// What a root's suite keys add to its check, by query (a green row's status
/// compares its key): each definition's key, the Merkle digest of its program,
/// the names that program asks the type environment for and the types its
/// suite can observe are one memo each; its own names and its suite's are
/// gathered inside them. Each was a memo of its own too: two more executions
/// a definition, 40,000 memos of a cold status at 20,000 definitions (15 MiB)
/// and a tenth of its time.
#[test]
fn suite_keys_execute_one_memo_a_definition_of_each_kind() {
    let db = load(&format!("{ROOT}{MODULE_N}"));
    check_root(&db, None);
    db.query_log().start();
    let keys = suite_keys(&db);
    let mut executed: BTreeMap<String, usize> = BTreeMap::new();
    for key in db.query_log().take() {
        let query = key.split('(').next().unwrap_or_default().to_owned();
        *executed.entry(query).or_default() += 1;
    }
    assert_eq!(keys.len(), 5, "{keys:?}");
    expect![[r#"
        {
            "acyclic_soil_hash": 5,
            "all_code_items": 1,
            "env_lookup": 1,
            "module_code_items": 2,
            "program_digest": 5,
            "program_env_names": 5,
            "spec_hashes": 4,
            "suite_key": 5,
            "suite_types_digest": 5,
            "type_index": 1,
        }
    "#]]
    .assert_debug_eq(&executed);
}

/// How many times `parse_soil` runs when the `index`th Soil file of a shaped
/// root is parsed now: 0 when its parse is kept.
fn soil_parses_to_read(
    db: &RootDatabase,
    shape: &trellis_db::shaped::Shape,
    index: usize,
) -> usize {
    let path = trellis_db::shaped::shaped_soil_path(shape, index);
    let file = (root_index(db, Workspace::get(db)).modules.values())
        .flat_map(|module| module.soils.values())
        .copied()
        .find(|file| file.path(db).as_str() == path)
        .expect("the file");
    db.query_log().start();
    assert!(trellis_db::parse_soil(db, file).diagnostics.is_empty());
    (db.query_log().take().iter())
        .filter(|query| query.starts_with("parse_soil("))
        .count()
}

/// [`soil_parses_to_read`] for a shaped root's first and last Soil files.
fn parses_to_read_first_and_last(
    db: &RootDatabase,
    shape: &trellis_db::shaped::Shape,
) -> (usize, usize) {
    let last = shape.definitions - 1;
    (
        soil_parses_to_read(db, shape, 0),
        soil_parses_to_read(db, shape, last),
    )
}

/// The files of a root, loaded and checked in `db`.
fn load_and_check(db: &mut RootDatabase, files: &[(String, String)]) {
    let mut change = Change::default();
    for (path, text) in files {
        change.set_root_file(path.clone(), text.clone());
    }
    change.apply(db);
    check_root(db, None);
}

/// Once a host drops its spare parses (design §7.15), parse trees are kept
/// for the last few hundred files only: an early file's parse, asked again,
/// is read again; and an edit elsewhere re-reads none of the evicted trees,
/// since what was derived from them is confirmed by their files, not by the
/// trees.
#[test]
fn evicted_parses_are_read_again_only_when_asked() {
    use trellis_db::shaped::{Shape, shaped_root, shaped_spec_path};

    let shape = Shape::mixed(1_100);
    let files = shaped_root(&shape);
    let mut db = RootDatabase::with_query_log();
    load_and_check(&mut db, &files);
    db.drop_spare_parses();
    // An early parse was evicted; a recent one is kept.
    assert_eq!(parses_to_read_first_and_last(&db, &shape), (1, 0));

    let path = shaped_spec_path(&shape, 550);
    let text = (files.iter())
        .find(|(candidate, _)| *candidate == path)
        .map(|(_, text)| format!("{text}\nOne more line of prose.\n"))
        .expect("the spec");
    let mut edit = Change::default();
    edit.set_root_file(path, text);
    edit.apply(&mut db);
    db.query_log().start();
    check_root(&db, None);
    let log = db.query_log().take();
    let reread: Vec<&String> = (log.iter())
        .filter(|query| query.starts_with("parse_soil("))
        .collect();
    assert!(reread.is_empty(), "{reread:?}");
    assert!(
        log.iter().any(|query| query.starts_with("parse_spec(")),
        "the edited spec is read: {log:?}"
    );
}

/// A one-shot command's database keeps every parse
/// ([`trellis_db::keep_every_parse`]): a revision's end evicts none.
#[test]
fn a_database_that_keeps_every_parse_evicts_none() {
    use trellis_db::shaped::{Shape, shaped_root};

    let shape = Shape::mixed(1_100);
    let mut db = RootDatabase::with_query_log();
    trellis_db::keep_every_parse(&mut db);
    load_and_check(&mut db, &shaped_root(&shape));
    db.drop_spare_parses();
    assert_eq!(parses_to_read_first_and_last(&db, &shape), (0, 0));
}

/// A host that hashes every spec before it drops its spare parses (design
/// §7.15) answers the root's status after a check without parsing a spec
/// again: every row reads the spec's hashes, and a locked type's row its
/// invariant labels, from memos of their own.
#[test]
fn a_status_after_the_parses_are_dropped_parses_no_spec() {
    use trellis_db::shaped::{Shape, shaped_root};
    use trellis_db::{hash_every_spec, spec_lock};

    let files = shaped_root(&Shape::mixed(1_100));
    let load = |db: &mut RootDatabase, files: &[(String, String)]| {
        let mut change = Change::default();
        for (path, text) in files {
            change.set_root_file(path.clone(), text.clone());
        }
        change.apply(db);
    };
    // Each type locked as it stands, as `adopt` locks it (in a database of
    // its own: locking reads the labels), so its row climbs to them.
    let mut scratch = RootDatabase::default();
    load(&mut scratch, &files);
    let toolchain = trellis_lock::Toolchain {
        trellis: "0.1.0".to_owned(),
        soil0_cli: "0.1.0".to_owned(),
    };
    let mut locked = files.clone();
    for module in root_index(&scratch, Workspace::get(&scratch))
        .modules
        .values()
    {
        for (stem, &spec) in (module.specs.iter()).filter(|(stem, _)| stem.contains('x')) {
            let lock = spec_lock(&scratch, spec, &toolchain, None).expect("a type's lock");
            let path = spec.path(&scratch).as_str().replace(".tr", ".lock");
            assert!(path.ends_with(&format!("{stem}.lock")));
            locked.push((path, trellis_lock::write_lock(&lock)));
        }
    }
    let mut db = RootDatabase::with_query_log();
    load(&mut db, &locked);
    check_root(&db, None);
    hash_every_spec(&db);
    db.drop_spare_parses();
    db.query_log().start();
    let rows = root_status(&db);
    let parsed: Vec<String> = (db.query_log().take().into_iter())
        .filter(|query| query.starts_with("parse_spec("))
        .collect();
    let green_types = (rows.iter())
        .filter(|row| row.kind == "type" && row.status == "green")
        .count();
    assert!(
        green_types > 100,
        "the types are locked and green: {green_types}"
    );
    assert!(
        parsed.is_empty(),
        "{} specs parsed again: {parsed:?}",
        parsed.len()
    );
}
