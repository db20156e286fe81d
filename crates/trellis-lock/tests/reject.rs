//! The rejection corpus: one lock per reader code under
//! `test-data/lock/reject/<code>.lock`, each refused with that code at the
//! line:column of the offending field.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod common;

use std::fs;

use expect_test::expect;
use trellis_diag::Diagnostic;
use trellis_lock::*;

fn at(d: &Diagnostic) -> String {
    match d.span {
        Some(span) => format!("{}:{}", span.start.line, span.start.column),
        None => "?".to_owned(),
    }
}

#[test]
fn each_rejection_names_its_code_and_position() {
    let dir = common::data_dir().join("reject");
    let mut files: Vec<_> = fs::read_dir(&dir)
        .expect("test-data/lock/reject")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    let mut report = String::new();
    for path in files {
        let code = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let text = fs::read_to_string(&path).expect("fixture");
        let diagnostics = read_lock(&text).expect_err(&code);
        assert!(
            diagnostics.iter().any(|d| d.code == code),
            "{code}: got {:?}",
            diagnostics.iter().map(|d| &d.code).collect::<Vec<_>>()
        );
        for d in &diagnostics {
            assert_eq!(d.repair_class, "fix-lock", "{}", d.code);
            assert!(d.spec_ref.starts_with("lock-schema#"), "{}", d.code);
            report.push_str(&format!(
                "{code}.lock: {} @{} {}\n",
                d.code,
                at(d),
                d.message
            ));
        }
    }
    expect![[r#"
        lock-bad-hash.lock: lock-bad-hash @11:17 "sha256:4923ecbe" is not `sha256:` followed by 64 lowercase hex digits
        lock-bad-type.lock: lock-bad-type @27:15 expected true or false, found a string
        lock-bad-value.lock: lock-bad-value @60:68 `passed` is not one of pass | fail | xfail | xpass | error
        lock-duplicate-key.lock: lock-duplicate-key @25:3 `checks` appears twice in `lock`
        lock-format-newer.lock: lock-format-newer @2:18 this lock was written with lock_format 3; this toolchain reads lock_format 2 — upgrade trellis rather than let it misread the lock
        lock-invariant-accepted-not-green.lock: lock-invariant-accepted-not-green @71:15 only a green entry can be accepted: failing: basics#3
        lock-invariant-assurance.lock: lock-invariant-assurance @52:26 `requires:finite` is `assumed`, which only an `allow` grant permits
        lock-invariant-author-pin.lock: lock-invariant-author-pin @16:36 `pinned` approves the `soil-sig` block, but that block is still agent-authored; removing its `@agent` marker is the adoption
        lock-invariant-duplicate-row.lock: lock-invariant-duplicate-row @33:15 call `at` appears twice
        lock-invariant-helper-name.lock: lock-invariant-helper-name @37:15 private helper `halfway` must start with `_`
        lock-invariant-holes-tested.lock: lock-invariant-holes-tested @55:5 a partial lowering (holes: quoted, escape) is never tested, but 1 test rows are recorded
        lock-invariant-not-lowered.lock: lock-invariant-not-lowered @26:5 test results recorded for a definition with `lowering: null`
        lock-invariant-oracle-missing.lock: lock-invariant-oracle-missing @66:13 differential test `derived:differential:python: reference/stats.py::median` has no oracle row for `python: reference/stats.py::median`
        lock-invariant-oracle-unused.lock: lock-invariant-oracle-unused @68:34 no differential test uses oracle `python: reference/stats.py::median`
        lock-invariant-provenance.lock: lock-invariant-provenance @28:17 a human-verified lowering names no provider: no agent ran
        lock-invariant-test-mode.lock: lock-invariant-test-mode @59:47 `expect` tests run `sandboxed`
        lock-invariant-test-name.lock: lock-invariant-test-name @60:13 `basics` is not a valid `expect` test name: expected `<block>#<k>` with k counted from 1
        lock-missing-field.lock: lock-missing-field @1:1 `lock` is missing its `oracles` field
        lock-syntax.lock: lock-syntax @28:1 expected a string key
        lock-unknown-field.lock: lock-unknown-field @26:3 `lock` has no field `notes`; its fields are lock_format, name, kind, toolchain, spec, lowering, checks, tests, oracles, accepted
    "#]].assert_eq(&report);
}

#[test]
fn invalid_utf8_is_a_syntax_error_at_the_first_bad_byte() {
    let mut bytes = b"{\n  \"name\": \"m".to_vec();
    bytes.push(0xff);
    let diagnostics = read_lock_bytes(&bytes).expect_err("not UTF-8");
    let rendered: Vec<String> = diagnostics
        .iter()
        .map(|d| format!("{} @{}", d.code, at(d)))
        .collect();
    assert_eq!(rendered, ["lock-syntax @2:13"]);
}

#[test]
fn a_newer_format_inside_soil_lock_is_refused_too() {
    let mean = fs::read_to_string(common::data_dir().join("ok/mean.lock")).expect("mean");
    let newer = mean.replace("\"lock_format\": 2", "\"lock_format\": 7");
    let soil_lock = format!(
        "{{\"lock_format\": 1, \"definitions\": {{\"mean\": {newer}}}, \"soil_private\": [], \
         \"escape_hatches\": [], \"trusted_packages\": {{}}}}"
    );
    let diagnostics = read_soil_lock(&soil_lock).expect_err("newer embedded");
    let codes: Vec<&str> = diagnostics.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["lock-format-newer"]);
    assert_eq!(at(&diagnostics[0]), "2:18");
}

#[test]
fn invariants_on_write_carry_the_field_path() {
    let Lock::Function(mut median) = common::median() else {
        panic!("median is a function lock")
    };
    median.tests[2].result = TestResult::Fail;
    let diagnostics = check_invariants(&Lock::Function(median));
    let rendered: Vec<String> = diagnostics
        .iter()
        .map(|d| format!("{} {}", d.code, d.notes[0].message))
        .collect();
    assert_eq!(
        rendered,
        ["lock-invariant-accepted-not-green at `accepted`"]
    );
}

#[test]
fn an_agent_cannot_take_over_a_human_block() {
    let before = common::median();
    let Lock::Function(mut after) = common::median() else {
        panic!("median is a function lock")
    };
    after.spec.blocks[3].author = Author::Agent;
    let diagnostics = check_transition(&before, &Lock::Function(after));
    let rendered: Vec<String> = diagnostics
        .iter()
        .map(|d| format!("{} {}", d.code, d.notes[0].message))
        .collect();
    assert_eq!(
        rendered,
        ["lock-invariant-author-flip at `spec.blocks[3].author`"]
    );
    // The reverse — a human adopting an agent block — is the normal flow.
    let Lock::Function(mut adopted) = common::median() else {
        panic!("median is a function lock")
    };
    adopted.spec.blocks[4].author = Author::Human;
    assert_eq!(
        check_transition(&before, &Lock::Function(adopted)),
        Vec::new()
    );
}
