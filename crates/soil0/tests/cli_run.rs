//! `soil0 run` (soil0-cli §8.6): the library and the binary agree byte for byte
//! on every example definition, the results and structured failures are pinned,
//! and program output through `Stdout` goes to stderr.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use expect_test::expect;
use soil0::Source;
use support::{ENV, PROGRAM, binary, workspace_root};

fn read(path: &str) -> String {
    std::fs::read_to_string(workspace_root().join(path)).expect("fixture")
}

const STOCK: &str = r#"[["A1",{"sku":"A1","name":"Apples","unit_price":50,"on_hand":10}],["B2",{"sku":"B2","name":"Bread","unit_price":250,"on_hand":3}]]"#;

/// Runs `soil0 run` both ways, asserts they agree; returns `exit N document`
/// and the binary's stderr.
fn run_both(env: &str, program: &str, def: &str, args: &str) -> (String, String) {
    let (env_text, program_text) = (read(env), read(program));
    let library = soil0::run(
        Source::new(env, &env_text),
        Source::new(program, &program_text),
        def,
        args,
    );
    let (code, stdout, stderr) = binary(&["run", "--env", env, "--program", program, def, args]);
    assert_eq!(stdout, format!("{}\n", library.document), "{def} {args}");
    assert_eq!(code, library.exit, "{def} {args}");
    (format!("exit {code} {}", library.document), stderr)
}

#[test]
fn library_and_binary_agree_on_every_example_definition() {
    let dir = std::env::temp_dir().join(format!("soil0-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let data = dir.join("data.csv");
    std::fs::write(&data, "1.5,2\n\n3,4e1\n").expect("write");
    let data_arg = serde_json::to_string(&data.display().to_string()).expect("JSON");
    let movements = r#"[{"tag":"Sold","sku":"A1","quantity":4},{"tag":"Received","sku":"B2","quantity":6},{"tag":"Listed","value":{"sku":"C3","name":"Cheese","unit_price":899,"on_hand":0}}]"#;
    let calls: Vec<(&str, String)> = vec![
        ("csvstats::_parse_cell", r#"[1, " 2.5 "]"#.into()),
        ("csvstats::_parse_cell", r#"[0, "x"]"#.into()),
        (
            "csvstats::_halfway",
            "[1.7976931348623157e308, 1.7976931348623157e308]".into(),
        ),
        ("csvstats::_merge_sort", "[[]]".into()),
        ("csvstats::_merge_pairs", "[[[]]]".into()),
        ("csvstats::_merge", "[[], []]".into()),
        (
            "csvstats::_collect_row",
            r#"[{"tag":"Ok","value":[]}, [2, "1,2"]]"#.into(),
        ),
        ("csvstats::all_finite", r#"[[1.0, "NaN"]]"#.into()),
        ("csvstats::contains", "[[], 1]".into()),
        ("csvstats::count_of", "[[], 1]".into()),
        ("csvstats::finite", r#"["-Infinity"]"#.into()),
        ("csvstats::is_permutation", "[[], []]".into()),
        ("csvstats::median", "[[3.0, 1.0, 2.0, 10.0]]".into()),
        ("csvstats::median", "[[]]".into()),
        ("csvstats::median", r#"[[1.0, "NaN"]]"#.into()),
        ("csvstats::median", "[[1.0], 2]".into()),
        ("csvstats::median", r#"[["1.0"]]"#.into()),
        ("csvstats::non_empty", "[[]]".into()),
        ("csvstats::parse_row", r#"[4, "1.5, -2,3e2"]"#.into()),
        ("csvstats::parse_row", r#"[0, "1"]"#.into()),
        ("csvstats::read_file", format!("[{data_arg}]")),
        (
            "csvstats::read_file",
            r#"["test-data/soil0/no-such-file.csv"]"#.into(),
        ),
        (
            "csvstats::sort",
            r#"[[3.0, "NaN", 0.0, -0.0, "-Infinity", 1.0]]"#.into(),
        ),
        ("csvstats::sort_by", "[null, []]".into()),
        ("csvstats::sorted", "[[]]".into()),
        ("inventory::apply_all", format!("[{STOCK}, {movements}]")),
        (
            "inventory::apply_all",
            format!(r#"[{STOCK}, [{{"tag":"Sold","sku":"B2","quantity":5}}]]"#),
        ),
        (
            "inventory::apply_movement",
            format!(r#"[{STOCK}, {{"tag":"Counted","sku":"B2","on_hand":7}}]"#),
        ),
        ("inventory::find_by_name", format!(r#"[{STOCK}, "Bread"]"#)),
        ("inventory::low_stock", format!("[5, {STOCK}]")),
        ("inventory::reorder_plan", format!("[10, 6, {STOCK}]")),
        ("inventory::sales_by_sku", movements.into()),
        ("inventory::sales_by_sku", format!("[{movements}]")),
        ("inventory::stock_value", format!("[{STOCK}]")),
        ("inventory::no_such_definition", "[]".into()),
    ];
    let mut out = String::new();
    for (def, args) in &calls {
        let (document, stderr) = run_both(ENV, PROGRAM, def, args);
        assert!(stderr.is_empty(), "{stderr}");
        let shown = args.replace(&data_arg, "\"<tmp>/data.csv\"");
        out.push_str(&format!("{def} {shown}\n  {document}\n"));
    }
    let _ = std::fs::remove_dir_all(&dir);
    expect![[r##"
        csvstats::_parse_cell [1, " 2.5 "]
          exit 0 {"tag":"Ok","value":2.5}
        csvstats::_parse_cell [0, "x"]
          exit 0 {"tag":"Err","value":{"tag":"BadCell","index":0,"raw":"x"}}
        csvstats::_halfway [1.7976931348623157e308, 1.7976931348623157e308]
          exit 0 1.7976931348623157e308
        csvstats::_merge_sort [[]]
          exit 0 []
        csvstats::_merge_pairs [[[]]]
          exit 0 [[]]
        csvstats::_merge [[], []]
          exit 0 []
        csvstats::_collect_row [{"tag":"Ok","value":[]}, [2, "1,2"]]
          exit 0 {"tag":"Ok","value":[{"line":3,"cells":[1.0,2.0]}]}
        csvstats::all_finite [[1.0, "NaN"]]
          exit 0 false
        csvstats::contains [[], 1]
          exit 1 {"errors":[{"code":"json-type-mismatch","message":"$[1]: a value of an unknown type variable cannot be decoded","file":{"tag":"Some","value":"JSON-ARGS"},"span":{"tag":"Some","value":{"start":{"line":1,"column":6,"offset":5},"end":{"line":1,"column":6,"offset":5}}},"notes":[{"message":"at JSON path $[1]","span":{"tag":"None"}}],"repair_class":"fix-input","spec_ref":"soil0-cli#7"}]}
        csvstats::count_of [[], 1]
          exit 1 {"errors":[{"code":"json-type-mismatch","message":"$[1]: a value of an unknown type variable cannot be decoded","file":{"tag":"Some","value":"JSON-ARGS"},"span":{"tag":"Some","value":{"start":{"line":1,"column":6,"offset":5},"end":{"line":1,"column":6,"offset":5}}},"notes":[{"message":"at JSON path $[1]","span":{"tag":"None"}}],"repair_class":"fix-input","spec_ref":"soil0-cli#7"}]}
        csvstats::finite ["-Infinity"]
          exit 0 false
        csvstats::is_permutation [[], []]
          exit 0 true
        csvstats::median [[3.0, 1.0, 2.0, 10.0]]
          exit 0 2.5
        csvstats::median [[]]
          exit 1 {"errors":[{"code":"requires-violated","message":"median requires non_empty does not hold","file":{"tag":"Some","value":"csvstats/median.soil"},"span":{"tag":"Some","value":{"start":{"line":1,"column":1,"offset":0},"end":{"line":1,"column":13,"offset":12}}},"notes":[{"message":"#0 in csvstats::median","span":{"tag":"None"}},{"message":"in test-data/soil0/examples/program.json at $.definitions[11].clauses[0].predicate","span":{"tag":"None"}}],"repair_class":"fix-runtime","spec_ref":"soil0-cli#8.6"}]}
        csvstats::median [[1.0, "NaN"]]
          exit 1 {"errors":[{"code":"requires-violated","message":"median requires finite does not hold","file":{"tag":"Some","value":"csvstats/median.soil"},"span":{"tag":"Some","value":{"start":{"line":1,"column":1,"offset":0},"end":{"line":1,"column":14,"offset":13}}},"notes":[{"message":"#0 in csvstats::median","span":{"tag":"None"}},{"message":"in test-data/soil0/examples/program.json at $.definitions[11].clauses[1].predicate","span":{"tag":"None"}}],"repair_class":"fix-runtime","spec_ref":"soil0-cli#8.6"}]}
        csvstats::median [[1.0], 2]
          exit 1 {"errors":[{"code":"bad-arguments","message":"$: `csvstats::median` takes 1 non-capability arguments (xs : List F64), 2 given","file":{"tag":"Some","value":"JSON-ARGS"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#8.6"}]}
        csvstats::median [["1.0"]]
          exit 1 {"errors":[{"code":"json-type-mismatch","message":"$[0][0]: expected F64, found the string \"1.0\" (only \"NaN\", \"Infinity\", \"-Infinity\" stand for numbers)","file":{"tag":"Some","value":"JSON-ARGS"},"span":{"tag":"Some","value":{"start":{"line":1,"column":3,"offset":2},"end":{"line":1,"column":3,"offset":2}}},"notes":[{"message":"at JSON path $[0][0]","span":{"tag":"None"}}],"repair_class":"fix-input","spec_ref":"soil0-cli#7"}]}
        csvstats::non_empty [[]]
          exit 0 false
        csvstats::parse_row [4, "1.5, -2,3e2"]
          exit 0 {"tag":"Ok","value":{"line":4,"cells":[1.5,-2.0,300.0]}}
        csvstats::parse_row [0, "1"]
          exit 1 {"errors":[{"code":"requires-violated","message":"parse_row requires positive_line does not hold","file":{"tag":"Some","value":"csvstats/parse_row.soil"},"span":{"tag":"Some","value":{"start":{"line":1,"column":1,"offset":0},"end":{"line":1,"column":10,"offset":9}}},"notes":[{"message":"#0 in csvstats::parse_row","span":{"tag":"None"}},{"message":"in test-data/soil0/examples/program.json at $.definitions[13].clauses[0].predicate","span":{"tag":"None"}}],"repair_class":"fix-runtime","spec_ref":"soil0-cli#8.6"}]}
        csvstats::read_file ["<tmp>/data.csv"]
          exit 0 {"tag":"Ok","value":[{"line":1,"cells":[1.5,2.0]},{"line":3,"cells":[3.0,40.0]}]}
        csvstats::read_file ["test-data/soil0/no-such-file.csv"]
          exit 0 {"tag":"Err","value":{"tag":"Unreadable","value":{"tag":"NotFound","path":"test-data/soil0/no-such-file.csv"}}}
        csvstats::sort [[3.0, "NaN", 0.0, -0.0, "-Infinity", 1.0]]
          exit 0 ["-Infinity",-0.0,0.0,1.0,3.0,"NaN"]
        csvstats::sort_by [null, []]
          exit 1 {"errors":[{"code":"json-type-mismatch","message":"$[0]: values of type function have no JSON form","file":{"tag":"Some","value":"JSON-ARGS"},"span":{"tag":"Some","value":{"start":{"line":1,"column":2,"offset":1},"end":{"line":1,"column":2,"offset":1}}},"notes":[{"message":"at JSON path $[0]","span":{"tag":"None"}}],"repair_class":"fix-input","spec_ref":"soil0-cli#7"}]}
        csvstats::sorted [[]]
          exit 0 true
        inventory::apply_all [[["A1",{"sku":"A1","name":"Apples","unit_price":50,"on_hand":10}],["B2",{"sku":"B2","name":"Bread","unit_price":250,"on_hand":3}]], [{"tag":"Sold","sku":"A1","quantity":4},{"tag":"Received","sku":"B2","quantity":6},{"tag":"Listed","value":{"sku":"C3","name":"Cheese","unit_price":899,"on_hand":0}}]]
          exit 0 {"tag":"Ok","value":[["A1",{"sku":"A1","name":"Apples","unit_price":50,"on_hand":6}],["B2",{"sku":"B2","name":"Bread","unit_price":250,"on_hand":9}],["C3",{"sku":"C3","name":"Cheese","unit_price":899,"on_hand":0}]]}
        inventory::apply_all [[["A1",{"sku":"A1","name":"Apples","unit_price":50,"on_hand":10}],["B2",{"sku":"B2","name":"Bread","unit_price":250,"on_hand":3}]], [{"tag":"Sold","sku":"B2","quantity":5}]]
          exit 0 {"tag":"Err","value":[0,{"tag":"Short","sku":"B2","wanted":5,"on_hand":3}]}
        inventory::apply_movement [[["A1",{"sku":"A1","name":"Apples","unit_price":50,"on_hand":10}],["B2",{"sku":"B2","name":"Bread","unit_price":250,"on_hand":3}]], {"tag":"Counted","sku":"B2","on_hand":7}]
          exit 0 {"tag":"Ok","value":[["A1",{"sku":"A1","name":"Apples","unit_price":50,"on_hand":10}],["B2",{"sku":"B2","name":"Bread","unit_price":250,"on_hand":7}]]}
        inventory::find_by_name [[["A1",{"sku":"A1","name":"Apples","unit_price":50,"on_hand":10}],["B2",{"sku":"B2","name":"Bread","unit_price":250,"on_hand":3}]], "Bread"]
          exit 0 {"tag":"Some","value":{"sku":"B2","name":"Bread","unit_price":250,"on_hand":3}}
        inventory::low_stock [5, [["A1",{"sku":"A1","name":"Apples","unit_price":50,"on_hand":10}],["B2",{"sku":"B2","name":"Bread","unit_price":250,"on_hand":3}]]]
          exit 0 [["B2",3]]
        inventory::reorder_plan [10, 6, [["A1",{"sku":"A1","name":"Apples","unit_price":50,"on_hand":10}],["B2",{"sku":"B2","name":"Bread","unit_price":250,"on_hand":3}]]]
          exit 1 {"errors":[{"code":"unfilled-hole","message":"reached the unfilled hole ?cases_to_order in inventory::reorder_plan, whose goal is `I64`","file":{"tag":"Some","value":"inventory/reorder_plan.soil"},"span":{"tag":"Some","value":{"start":{"line":3,"column":28,"offset":141},"end":{"line":3,"column":43,"offset":156}}},"notes":[{"message":"#0 in inventory::reorder_plan","span":{"tag":"None"}},{"message":"#1 in inventory::reorder_plan (lambda)","span":{"tag":"None"}},{"message":"in test-data/soil0/examples/program.json at $.definitions[23].equation","span":{"tag":"None"}},{"message":"in scope: target : I64, case_size : I64, stock : Map Utf8 Item, short : List Item, item : Item","span":{"tag":"None"}}],"repair_class":"fill-hole","spec_ref":"soil0-cli#8.6"}]}
        inventory::sales_by_sku [{"tag":"Sold","sku":"A1","quantity":4},{"tag":"Received","sku":"B2","quantity":6},{"tag":"Listed","value":{"sku":"C3","name":"Cheese","unit_price":899,"on_hand":0}}]
          exit 1 {"errors":[{"code":"bad-arguments","message":"$: `inventory::sales_by_sku` takes 1 non-capability arguments (movements : List Movement), 3 given","file":{"tag":"Some","value":"JSON-ARGS"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#8.6"}]}
        inventory::sales_by_sku [[{"tag":"Sold","sku":"A1","quantity":4},{"tag":"Received","sku":"B2","quantity":6},{"tag":"Listed","value":{"sku":"C3","name":"Cheese","unit_price":899,"on_hand":0}}]]
          exit 0 [["A1",4]]
        inventory::stock_value [[["A1",{"sku":"A1","name":"Apples","unit_price":50,"on_hand":10}],["B2",{"sku":"B2","name":"Bread","unit_price":250,"on_hand":3}]]]
          exit 0 1250
        inventory::no_such_definition []
          exit 1 {"errors":[{"code":"unknown-definition","message":"no definition is named `inventory::no_such_definition`","file":{"tag":"None"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#8.6"}]}
    "##]].assert_eq(&out);
}

#[test]
fn program_output_goes_to_stderr_and_stdout_holds_one_document() {
    let (env, program) = (
        "test-data/soil0/capabilities/env.json",
        "test-data/soil0/capabilities/program.json",
    );
    let (document, stderr) = run_both(env, program, "io::greet", r#"["Ada"]"#);
    expect![[r#"
        exit 0 true
        stderr: hello Ada
        bye
    "#]]
    .assert_eq(&format!("{document}\nstderr: {stderr}"));
    let (document, _) = run_both(env, program, "io::countdown", "[100000]");
    expect![[r##"exit 1 {"errors":[{"code":"depth-limit","message":"recursion depth limit of 10000 nested calls exceeded","file":{"tag":"Some","value":"io/countdown.soil"},"span":{"tag":"Some","value":{"start":{"line":3,"column":9,"offset":38},"end":{"line":3,"column":26,"offset":55}}},"notes":[{"message":"#0 in io::countdown (×10000)","span":{"tag":"None"}},{"message":"in test-data/soil0/capabilities/program.json at $.definitions[2].equation","span":{"tag":"None"}}],"repair_class":"fix-runtime","spec_ref":"soil0-cli#8.6"}]}"##]].assert_eq(&document);
}

/// The word count of wordcount_bench (test-data/soil0/wordcount): the text as
/// the JSON string argument and read through `Fs` give the same ten, and so
/// does the count that takes each lookup apart with `match`.
#[test]
fn the_word_count_of_the_bench_runs_on_an_argument_and_on_a_file() {
    let (env, program) = (
        "test-data/soil0/wordcount/env.json",
        "test-data/soil0/wordcount/program.json",
    );
    let text = "the cat saw the other cat\nand the  dog saw a considerably longer word\n";
    let args = format!("[3, {}]", serde_json::to_string(text).expect("JSON"));
    let (from_argument, _) = run_both(env, program, "wordcount::top_words", &args);
    expect![[r#"exit 0 [["the",3],["cat",2],["saw",2]]"#]].assert_eq(&from_argument);
    let dir = std::env::temp_dir().join(format!("soil0-wordcount-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("words.txt");
    std::fs::write(&file, text).expect("write");
    let path = serde_json::to_string(&file.display().to_string()).expect("JSON");
    let (from_file, _) = run_both(
        env,
        program,
        "wordcount::top_words_in_file",
        &format!("[3, {path}]"),
    );
    expect![[r#"exit 0 {"tag":"Ok","value":[["the",3],["cat",2],["saw",2]]}"#]]
        .assert_eq(&from_file);
    let (by_match, _) = run_both(
        env,
        program,
        "wordcount::top_words_by_match_in_file",
        &format!("[3, {path}]"),
    );
    assert_eq!(by_match, from_file);
    let _ = std::fs::remove_dir_all(&dir);
}
