//! What the whole-root check (`trellis check`) reports, at `.tr`/`.soil`
//! file:line:col: the static half of the tests (property predicates and test
//! values), and private helpers' recursion under their owner's `allow` grant.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use expect_test::{Expect, expect};
use trellis_db::{Change, RootDatabase, check_root};

const TOML: &str = "[toolchain]\ntrellis = \"0.1.0\"\nsoil0_cli = \"0.1.0\"\n";

fn load(files: &[(&str, &str)]) -> RootDatabase {
    let mut db = RootDatabase::default();
    let mut change = Change::default();
    change.set_root_file("soil.toml".to_owned(), TOML.to_owned());
    for (path, text) in files {
        change.set_root_file((*path).to_owned(), (*text).to_owned());
    }
    change.apply(&mut db);
    db
}

/// One line per diagnostic: code, file:line:col, message.
fn rendered(db: &RootDatabase, only: Option<&str>) -> String {
    let report = check_root(db, only);
    let mut out = String::new();
    for d in &report.diagnostics {
        let at = d
            .span
            .map(|s| format!(":{}:{}", s.start.line, s.start.column))
            .unwrap_or_default();
        out.push_str(&format!(
            "{} {}{at} {}\n",
            d.code,
            d.file.as_deref().unwrap_or("?"),
            d.message
        ));
    }
    out
}

fn check(files: &[(&str, &str)], only: Option<&str>, expected: Expect) {
    expected.assert_eq(&rendered(&load(files), only));
}

const FIRST_TR: &str = "---
name: first
---

# first

The first element.

```soil-sig
first : (xs : List F64) ->{Panic} F64
```

```test basics
first([1.0, 2.0]) -> 1.0
first([\"a\"]) -> 1.0
first([1.0]) -> \"one\"
first([{\"x\": 1}, 2.0]) -> 1.0
first([1.0], 2) -> 1.0
first([1.0]) => 1.0
first([5.0,]) -> 5.0
```

```property head
forall (xs : List F64) (x : F64). frist (push [x] x) == x
```

```property typed
forall (x : F64). first [x] + 1.0
```

```property bad_binder
forall (x : Flaot). first [x] == x
```
";

const FIRST_SOIL: &str = "first xs =
  match xs with
  | [x, ..rest] -> x
  | [] -> panic \"empty\"
  end
";

#[test]
fn properties_and_test_values_are_checked_statically() {
    let files = [("m/first.tr", FIRST_TR), ("m/first.soil", FIRST_SOIL)];
    let expected = expect![[r#"
        tr-bad-test-case m/first.tr:18:1 the call passes 2 argument(s); the signature takes 1 non-capability parameter(s)
        tr-bad-test-case m/first.tr:19:1 expected `->` after the arguments
        tr-bad-json m/first.tr:20:7 not one JSON value: trailing comma at line 1 column 6
        unknown-name m/first.tr:24:35 unknown name `frist`; did you mean `first`?
        type-mismatch m/first.tr:28:19 expected `Bool`, found `F64`
        unknown-type m/first.tr:32:13 unknown type `Flaot`
        tr-test-value-type m/first.tr:15:8 basics#2: argument 1 (`xs`) is not a value of its type: $[0]: expected F64, found the string "a" (only "NaN", "Infinity", "-Infinity" stand for numbers)
        tr-test-value-type m/first.tr:16:17 basics#3: the expected result is not a value of its type: $: expected F64, found the string "one" (only "NaN", "Infinity", "-Infinity" stand for numbers)
        tr-test-value-type m/first.tr:17:8 basics#4: argument 1 (`xs`) is not a value of its type: $[0]: expected F64, found an object
    "#]];
    let db = load(&files);
    let whole = rendered(&db, None);
    expected.assert_eq(&whole);
    // The single-definition check reports the same.
    assert_eq!(rendered(&db, Some("m::first")), whole);
}

#[test]
fn an_unlowered_definition_still_has_its_tests_checked() {
    check(
        &[("m/first.tr", FIRST_TR)],
        None,
        expect![[r#"
            tr-bad-test-case m/first.tr:18:1 the call passes 2 argument(s); the signature takes 1 non-capability parameter(s)
            tr-bad-test-case m/first.tr:19:1 expected `->` after the arguments
            tr-bad-json m/first.tr:20:7 not one JSON value: trailing comma at line 1 column 6
            unknown-name m/first.tr:24:35 unknown name `frist`; did you mean `first`?
            type-mismatch m/first.tr:28:19 expected `Bool`, found `F64`
            unknown-type m/first.tr:32:13 unknown type `Flaot`
            tr-test-value-type m/first.tr:15:8 basics#2: argument 1 (`xs`) is not a value of its type: $[0]: expected F64, found the string "a" (only "NaN", "Infinity", "-Infinity" stand for numbers)
            tr-test-value-type m/first.tr:16:17 basics#3: the expected result is not a value of its type: $: expected F64, found the string "one" (only "NaN", "Infinity", "-Infinity" stand for numbers)
            tr-test-value-type m/first.tr:17:8 basics#4: argument 1 (`xs`) is not a value of its type: $[0]: expected F64, found an object
        "#]],
    );
}

/// `steps n` counts the halvings that take `n` to 0: recursion on `n / 2`, which
/// the termination check does not see as structural. In a private helper or in
/// the definition itself, with or without the `allow` grant.
fn halving(grant: bool, helper: bool) -> Vec<(&'static str, String)> {
    let allow = if grant {
        "\n```allow\nnonstructural-recursion: n halves on each step and stops at 0\n```\n"
    } else {
        ""
    };
    let spec = format!(
        "---\nname: steps\n---\n\n# steps\n\nHow many halvings take n to 0.\n\n```soil-sig\nsteps : (n : I64) -> I64\n```\n{allow}\n```test basics\nsteps(8) -> 4\n```\n"
    );
    let body = "if n <= 0 then 0 else 1 + {f} (n / 2)";
    let mut files = vec![("m/steps.tr", spec)];
    if helper {
        files.push(("m/steps.soil", "steps n = _halve n\n".to_owned()));
        files.push((
            "m/_private.soil",
            format!(
                "_other : (n : I64) -> I64\n\n_other n = n\n\n_halve : (n : I64) -> I64\n\n_halve n =\n  {}\n",
                body.replace("{f}", "_halve")
            ),
        ));
    } else {
        files.push((
            "m/steps.soil",
            format!("steps n =\n  {}\n", body.replace("{f}", "steps")),
        ));
    }
    files
}

fn load_owned(files: &[(&'static str, String)]) -> RootDatabase {
    let borrowed: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    load(&borrowed)
}

#[test]
fn a_helpers_recursion_is_accepted_under_its_owners_grant() {
    let db = load_owned(&halving(true, true));
    assert_eq!(rendered(&db, None), "");
    assert_eq!(rendered(&db, Some("m::steps")), "");
    // What `trellis call` hands soil0: the helper carries its owner's grant.
    let program = trellis_db::program_json(
        &db,
        trellis_db::Item::new(&db, "m".to_owned(), "steps".to_owned()),
    );
    assert!(
        program.contains(r#""name":"m::_halve""#)
            && program.contains(r#""allow":[{"hatch":"nonstructural-recursion""#),
        "{program}"
    );
    // Without the grant the helper is refused, at its place in `_private.soil`.
    expect![[r#"
        nonstructural-recursion m/_private.soil:8:29 this recursive call is not on a structurally smaller argument
    "#]]
    .assert_eq(&rendered(&load_owned(&halving(false, true)), None));
}

#[test]
fn a_definition_using_the_grant_can_be_adopted() {
    let db = load_owned(&halving(true, false));
    assert_eq!(rendered(&db, None), "");
    let toolchain = trellis_lock::Toolchain {
        trellis: "0.1.0".into(),
        soil0_cli: "0.1.0".into(),
    };
    let item = trellis_db::Item::new(&db, "m".to_owned(), "steps".to_owned());
    let lock = trellis_db::adopted_lock(&db, item, &toolchain, None, None).expect("adoptable");
    assert_eq!(
        lock.spec.allow,
        ["nonstructural-recursion: n halves on each step and stops at 0"]
    );
    assert_eq!(
        lock.checks.as_ref().map(|c| c.termination),
        Some(trellis_lock::Termination::Assumed)
    );
    let violations = trellis_lock::check_invariants(&trellis_lock::Lock::Function(lock));
    assert!(violations.is_empty(), "{violations:?}");
}

#[test]
fn fakes_are_read_as_the_runner_installs_them() {
    let spec = "---
name: load
---

# load

The text of a file.

```soil-sig
load : (fs : Fs) -> (path : Utf8) ->{Fs} Result Utf8 IoError
```

```test files
with fs = {\"files\": {\"a.txt\": 1}}
load(\"a.txt\") -> {\"tag\": \"Ok\", \"value\": \"1\"}
with fs = {\"files\": {}}
load(\"a.txt\") -> {\"tag\": \"Err\", \"value\": {\"tag\": \"NotFound\"}}
```
";
    check(
        &[("m/load.tr", spec)],
        None,
        expect![[r#"
            bad-arguments m/load.tr:14:11 invalid Fs fake: the content of "a.txt" must be a string
            tr-test-value-type m/load.tr:17:42 files#2: the expected result is not a value of its type: $.value.path: missing field "path"
        "#]],
    );
}
