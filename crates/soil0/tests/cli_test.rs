//! `soil0 test` (soil0-cli §10): the library and the binary agree byte for byte
//! on the examples' bundle and on bundles with passing, failing, panicking and
//! erroring cases; bad bundles give a code and a JSON path, never a panic.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use expect_test::expect;
use soil0::Source;
use support::{RootedHost, TESTS, binary, workspace_root};

/// Runs `soil0 test` both ways, asserts they agree; returns the exit status and
/// the document.
fn test_both(options: &[&str], bundle: &str) -> (u8, serde_json::Value) {
    let text = std::fs::read_to_string(workspace_root().join(bundle)).expect("bundle");
    let option = |name: &str| options.windows(2).find(|w| w[0] == name).map(|w| w[1]);
    let library = soil0::test(
        Source::new(bundle, &text),
        option("--env"),
        option("--program"),
        &RootedHost,
    );
    let mut args = vec!["test"];
    args.extend(options);
    args.push(bundle);
    let (code, stdout, stderr) = binary(&args);
    assert_eq!(stdout, format!("{}\n", library.document), "{args:?}");
    assert_eq!(code, library.exit, "{args:?}");
    assert!(stderr.is_empty(), "{stderr}");
    (
        code,
        serde_json::from_str(&library.document).expect("one JSON document"),
    )
}

/// One line per case: its name and outcome.
fn cases(document: &serde_json::Value) -> String {
    document["cases"]
        .as_array()
        .expect("a cases document")
        .iter()
        .map(|case| {
            format!(
                "{}: {}\n",
                case["name"].as_str().unwrap_or(""),
                case["outcome"]
            )
        })
        .collect()
}

#[test]
fn library_and_binary_agree_on_the_example_bundles() {
    // Every `test` block case of the lowered examples.
    let (code, document) = test_both(&[], TESTS);
    assert_eq!(code, 0);
    let lines = cases(&document);
    let passing = lines
        .lines()
        .filter(|l| l.ends_with(r#"{"tag":"Pass"}"#))
        .count();
    let others: String = lines
        .lines()
        .filter(|l| !l.ends_with(r#"{"tag":"Pass"}"#))
        .map(|l| format!("{l}\n"))
        .collect();
    expect![[r##"
        70 pass
        reorder_plan.plans#1: {"tag":"Panicked","diagnostic":{"code":"unfilled-hole","message":"reached the unfilled hole ?cases_to_order in inventory::reorder_plan, whose goal is `I64`","file":{"tag":"Some","value":"inventory/reorder_plan.soil"},"span":{"tag":"Some","value":{"start":{"line":3,"column":28,"offset":141},"end":{"line":3,"column":43,"offset":156}}},"notes":[{"message":"#0 in inventory::reorder_plan","span":{"tag":"None"}},{"message":"#1 in inventory::reorder_plan (lambda)","span":{"tag":"None"}},{"message":"in test-data/soil0/examples/program.json at $.definitions[23].equation","span":{"tag":"None"}},{"message":"in scope: target : I64, case_size : I64, stock : Map Utf8 Item, short : List Item, item : Item","span":{"tag":"None"}}],"repair_class":"fill-hole","spec_ref":"soil0-cli#8.6"}}
        reorder_plan.plans#2: {"tag":"Panicked","diagnostic":{"code":"unfilled-hole","message":"reached the unfilled hole ?cases_to_order in inventory::reorder_plan, whose goal is `I64`","file":{"tag":"Some","value":"inventory/reorder_plan.soil"},"span":{"tag":"Some","value":{"start":{"line":3,"column":28,"offset":141},"end":{"line":3,"column":43,"offset":156}}},"notes":[{"message":"#0 in inventory::reorder_plan","span":{"tag":"None"}},{"message":"#1 in inventory::reorder_plan (lambda)","span":{"tag":"None"}},{"message":"in test-data/soil0/examples/program.json at $.definitions[23].equation","span":{"tag":"None"}},{"message":"in scope: target : I64, case_size : I64, stock : Map Utf8 Item, short : List Item, item : Item","span":{"tag":"None"}}],"repair_class":"fill-hole","spec_ref":"soil0-cli#8.6"}}
    "##]].assert_eq(&format!("{passing} pass\n{others}"));

    let (code, document) = test_both(&[], "test-data/soil0/bundles/mixed.json");
    assert_eq!(code, 0);
    expect![[r##"
        median.pass: {"tag":"Pass"}
        median.fail: {"tag":"Fail","expected":2.0,"actual":2.5}
        median.expected_panic: {"tag":"Pass"}
        median.expected_panic_code: {"tag":"Pass"}
        median.wrong_panic_code: {"tag":"Panicked","diagnostic":{"code":"requires-violated","message":"median requires non_empty does not hold","file":{"tag":"Some","value":"csvstats/median.soil"},"span":{"tag":"Some","value":{"start":{"line":1,"column":1,"offset":0},"end":{"line":1,"column":13,"offset":12}}},"notes":[{"message":"#0 in csvstats::median","span":{"tag":"None"}},{"message":"in test-data/soil0/examples/program.json at $.definitions[11].clauses[0].predicate","span":{"tag":"None"}}],"repair_class":"fix-runtime","spec_ref":"soil0-cli#8.6"}}
        median.unexpected_panic: {"tag":"Panicked","diagnostic":{"code":"requires-violated","message":"median requires finite does not hold","file":{"tag":"Some","value":"csvstats/median.soil"},"span":{"tag":"Some","value":{"start":{"line":1,"column":1,"offset":0},"end":{"line":1,"column":14,"offset":13}}},"notes":[{"message":"#0 in csvstats::median","span":{"tag":"None"}},{"message":"in test-data/soil0/examples/program.json at $.definitions[11].clauses[1].predicate","span":{"tag":"None"}}],"repair_class":"fix-runtime","spec_ref":"soil0-cli#8.6"}}
        median.no_panic: {"tag":"Fail","expected":{"tag":"Panic","code":{"tag":"None"}},"actual":1.0}
        median.bad_argument: {"tag":"Error","errors":[{"code":"json-type-mismatch","message":"$.cases[7].args[0][1]: expected F64, found the string \"one\" (only \"NaN\", \"Infinity\", \"-Infinity\" stand for numbers)","file":{"tag":"Some","value":"test-data/soil0/bundles/mixed.json"},"span":{"tag":"None"},"notes":[{"message":"at JSON path $.cases[7].args[0][1]","span":{"tag":"None"}}],"repair_class":"fix-input","spec_ref":"soil0-cli#7"}]}
        median.bad_expectation: {"tag":"Error","errors":[{"code":"json-type-mismatch","message":"$.cases[8].expect.value: expected F64, found the string \"one\" (only \"NaN\", \"Infinity\", \"-Infinity\" stand for numbers)","file":{"tag":"Some","value":"test-data/soil0/bundles/mixed.json"},"span":{"tag":"None"},"notes":[{"message":"at JSON path $.cases[8].expect.value","span":{"tag":"None"}}],"repair_class":"fix-input","spec_ref":"soil0-cli#7"}]}
        read_file.fake_fs: {"tag":"Pass"}
        read_file.no_fake_no_files: {"tag":"Pass"}
        read_file.bad_fake: {"tag":"Error","errors":[{"code":"bad-arguments","message":"$.cases[11].fakes.fs: invalid Fs fake: the content of \"data.csv\" must be a string","file":{"tag":"Some","value":"test-data/soil0/bundles/mixed.json"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#8.6"}]}
        read_file.unknown_fake: {"tag":"Error","errors":[{"code":"bad-arguments","message":"$.cases[12].fakes.clock: `csvstats::read_file` has no parameter named `clock`","file":{"tag":"Some","value":"test-data/soil0/bundles/mixed.json"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#8.6"}]}
        reorder_plan.hole: {"tag":"Pass"}
        missing.definition: {"tag":"Error","errors":[{"code":"unknown-definition","message":"no definition is named `csvstats::mean`","file":{"tag":"None"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#8.6"}]}
        sort.total_order: {"tag":"Pass"}
    "##]].assert_eq(&cases(&document));

    let (code, document) = test_both(&[], "test-data/soil0/bundles/capabilities.json");
    assert_eq!(code, 0);
    expect![[r##"
        stamp.fake_clock: {"tag":"Pass"}
        stamp.empty_clock: {"tag":"Pass"}
        greet.captured: {"tag":"Pass"}
        greet.stdout_fake_not_empty: {"tag":"Error","errors":[{"code":"bad-arguments","message":"$.cases[3].fakes.out: a Stdout fake is the empty object {}","file":{"tag":"Some","value":"test-data/soil0/bundles/capabilities.json"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#8.6"}]}
        copy.writes_are_visible: {"tag":"Pass"}
        copy.fresh_fakes_per_case: {"tag":"Fail","expected":{"tag":"Ok","value":"hi\n"},"actual":{"tag":"Err","value":{"tag":"NotFound","path":"b.txt"}}}
        countdown.depth: {"tag":"Pass"}
        countdown.division: {"tag":"Panicked","diagnostic":{"code":"runtime-panic","message":"division by zero","file":{"tag":"Some","value":"io/countdown.soil"},"span":{"tag":"Some","value":{"start":{"line":5,"column":5,"offset":67},"end":{"line":5,"column":12,"offset":74}}},"notes":[{"message":"#0 in io::countdown (×4)","span":{"tag":"None"}},{"message":"in test-data/soil0/capabilities/program.json at $.definitions[2].equation","span":{"tag":"None"}}],"repair_class":"fix-runtime","spec_ref":"soil0-cli#8.6"}}
    "##]].assert_eq(&cases(&document));

    // Options name the documents of a bundle that does not (daemon tests.json form).
    let (code, document) = test_both(
        &[
            "--env",
            "test-data/soil0/bad/good.env.json",
            "--program",
            "test-data/soil0/bad/good.program.json",
        ],
        "test-data/soil0/bad/bundle-names-no-env.json",
    );
    assert_eq!(
        (code, document.to_string()),
        (0, r#"{"cases":[]}"#.to_owned())
    );
}

#[test]
fn bad_bundles_name_the_json_path() {
    let corpus = "test-data/soil0/bad";
    let mut names: Vec<String> = std::fs::read_dir(workspace_root().join(corpus))
        .expect("corpus")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("bundle-"))
        .collect();
    names.sort();
    let mut out = String::new();
    for name in names {
        let (code, document) = test_both(&[], &format!("{corpus}/{name}"));
        match document["errors"].as_array() {
            Some(errors) => {
                for error in errors {
                    out.push_str(&format!(
                        "{name}: exit {code} {} [{}] {}\n",
                        error["code"].as_str().unwrap_or(""),
                        error["file"]["value"].as_str().unwrap_or("-"),
                        error["message"].as_str().unwrap_or("")
                    ));
                }
            }
            None => out.push_str(&format!("{name}: exit {code} {document}\n")),
        }
    }
    expect![[r#"
        bundle-bad-expect.json: exit 1 bad-bundle [test-data/soil0/bad/bundle-bad-expect.json] $.cases[0].expect.tag: unknown tag "Maybe"; expected "Value" or "Panic"
        bundle-bad-expect.json: exit 1 bad-bundle [test-data/soil0/bad/bundle-bad-expect.json] $.cases[1].expect.code: expected {"tag":"None"} or {"tag":"Some","value":"…"}
        bundle-case-shapes.json: exit 1 bad-bundle [test-data/soil0/bad/bundle-case-shapes.json] $.cases[0].expect: missing key
        bundle-case-shapes.json: exit 1 bad-bundle [test-data/soil0/bad/bundle-case-shapes.json] $.cases[1].args: expected an array, found an object
        bundle-case-shapes.json: exit 1 bad-bundle [test-data/soil0/bad/bundle-case-shapes.json] $.cases[1].fakes: expected an object, found an array
        bundle-env-not-an-option.json: exit 1 bad-bundle [test-data/soil0/bad/bundle-env-not-an-option.json] $.env: expected {"tag":"None"} or {"tag":"Some","value":"…"}
        bundle-env-unreadable.json: exit 1 file-unreadable [test-data/soil0/bad/no-such-env.json] cannot read test-data/soil0/bad/no-such-env.json: No such file or directory (os error 2)
        bundle-good.json: exit 0 {"cases":[{"name":"a","outcome":{"tag":"Pass"}}]}
        bundle-missing-cases.json: exit 1 bad-bundle [test-data/soil0/bad/bundle-missing-cases.json] $.cases: missing key
        bundle-names-no-env.json: exit 1 bad-bundle [test-data/soil0/bad/bundle-names-no-env.json] $.env: the bundle names no env.json and no --env was given
        bundle-names-no-env.json: exit 1 bad-bundle [test-data/soil0/bad/bundle-names-no-env.json] $.program: the bundle names no program.json and no --program was given
        bundle-not-json.json: exit 1 bad-bundle [test-data/soil0/bad/bundle-not-json.json] $: not JSON: EOF while parsing a list at line 2 column 0
        bundle-program-does-not-check.json: exit 1 type-mismatch [m/f.soil] expected `Bool`, found `I64`
        bundle-unknown-key.json: exit 1 bad-bundle [test-data/soil0/bad/bundle-unknown-key.json] $.seed: unknown key; expected one of env, program, cases
    "#]].assert_eq(&out);
}
