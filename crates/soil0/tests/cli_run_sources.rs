//! `soil0 run FILE.soil... DEF JSON-ARGS` (soil0-cli §13.8): a program read
//! from Soil source files runs with §8.6's semantics — values, refusals and
//! panics — and every diagnostic points into the file at the line an editor
//! shows; several files are several modules.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use expect_test::{Expect, expect};
use support::binary;

const CALC: &str = "test-data/soil0/sources/calc.soil";
const REPORT: &str = "test-data/soil0/sources/report.soil";

#[track_caller]
fn check(args: &[&str], expected: Expect) {
    let mut all = vec!["run"];
    all.extend(args);
    let (code, stdout, _) = binary(&all);
    expected.assert_eq(&format!("exit {code} {stdout}"));
}

#[test]
fn values_by_qualified_and_bare_name() {
    check(
        &[
            CALC,
            "calc::eval",
            r#"[{"tag":"Add","left":{"tag":"Num","value":1},"right":{"tag":"Num","value":2}}]"#,
        ],
        expect![[r##"
            exit 0 {"tag":"Ok","value":3}
        "##]],
    );
    check(
        &[
            CALC,
            "eval",
            r#"[{"tag":"Div","num":{"tag":"Num","value":1},"den":{"tag":"Num","value":0}}]"#,
        ],
        expect![[r##"
            exit 0 {"tag":"Err","value":{"tag":"DivByZero"}}
        "##]],
    );
}

#[test]
fn several_files_are_several_modules() {
    check(
        &[
            CALC,
            REPORT,
            "report::describe",
            r#"[{"tag":"Num","value":7}]"#,
        ],
        expect![[r##"
            exit 0 "= 7"
        "##]],
    );
}

#[test]
fn failures_point_into_the_file() {
    // `panic "negative"` is on line 26 of calc.soil.
    check(
        &[CALC, "half", "[-1]"],
        expect![[r##"
            exit 1 {"errors":[{"code":"runtime-panic","message":"negative","file":{"tag":"Some","value":"test-data/soil0/sources/calc.soil"},"span":{"tag":"Some","value":{"start":{"line":26,"column":24,"offset":646},"end":{"line":26,"column":40,"offset":662}}},"notes":[{"message":"#0 in calc::half","span":{"tag":"None"}}],"repair_class":"fix-runtime","spec_ref":"soil0-cli#8.6"}]}
        "##]],
    );
    check(
        &[CALC, "later", "[1]"],
        expect![[r##"
            exit 1 {"errors":[{"code":"unfilled-hole","message":"reached the unfilled hole ?todo in calc::later, whose goal is `I64`","file":{"tag":"Some","value":"test-data/soil0/sources/calc.soil"},"span":{"tag":"Some","value":{"start":{"line":29,"column":11,"offset":710},"end":{"line":29,"column":16,"offset":715}}},"notes":[{"message":"#0 in calc::later","span":{"tag":"None"}},{"message":"in scope: x : I64","span":{"tag":"None"}}],"repair_class":"fill-hole","spec_ref":"soil0-cli#8.6"}]}
        "##]],
    );
}

#[test]
fn bad_files_and_arguments_are_refused_with_codes() {
    check(
        &["test-data/soil0/sources/missing.soil", "f", "[]"],
        expect![[r##"
            exit 1 {"errors":[{"code":"file-unreadable","message":"cannot read test-data/soil0/sources/missing.soil: No such file or directory (os error 2)","file":{"tag":"Some","value":"test-data/soil0/sources/missing.soil"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#8.1"}]}
        "##]],
    );
    check(
        &["test-data/soil0/examples/env.json", "f", "[]"],
        expect![[r##"
            exit 2 {"errors":[{"code":"usage-error","message":"`soil0 run` without --env and --program runs Soil files (FILE.soil... DEF JSON-ARGS), but `test-data/soil0/examples/env.json` is not a .soil file","file":{"tag":"None"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#1.3"}]}
        "##]],
    );
    check(
        &[CALC, "eval"],
        expect![[r##"
            exit 2 {"errors":[{"code":"usage-error","message":"`soil0 run` without --env and --program runs Soil files (FILE.soil... DEF JSON-ARGS), but no file is given","file":{"tag":"None"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#1.3"}]}
        "##]],
    );
    check(
        &[CALC, "half", "[1, 2]"],
        expect![[r##"
            exit 1 {"errors":[{"code":"bad-arguments","message":"$: `half` takes 1 non-capability arguments (x : I64), 2 given","file":{"tag":"Some","value":"JSON-ARGS"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#8.6"}]}
        "##]],
    );
}

/// A syntax error is reported at its place in its file, and a check error too.
#[test]
fn syntax_and_check_errors_are_located_in_their_file() {
    let dir = std::env::temp_dir().join(format!("soil0-sources-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bad = dir.join("bad.soil");
    std::fs::write(&bad, "-- a comment\nf : (x : I64) -> I64\nf x = x +\n").expect("write");
    let bad = bad.display().to_string();
    let (code, stdout, _) = binary(&["run", &bad, "f", "[1]"]);
    let document: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let error = &document["errors"][0];
    assert_eq!(
        (code, &error["code"]),
        (1, &"unexpected-token".into()),
        "{stdout}"
    );
    assert_eq!(error["file"]["value"], bad.as_str());
    assert_eq!(error["span"]["value"]["start"]["line"], 4, "{stdout}");
    let typed = dir.join("typed.soil");
    std::fs::write(&typed, "\n\ng : (x : I64) -> Bool\ng x = x + 1\n").expect("write");
    let typed = typed.display().to_string();
    let (code, stdout, _) = binary(&["run", &typed, "g", "[1]"]);
    let document: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let error = &document["errors"][0];
    assert_eq!(
        (code, &error["code"]),
        (1, &"type-mismatch".into()),
        "{stdout}"
    );
    assert_eq!(error["span"]["value"]["start"]["line"], 4, "{stdout}");
    std::fs::remove_dir_all(&dir).expect("clean up");
}
