//! `soil0 check` (soil0-cli §8.2, §8.4): the library and the binary agree byte
//! for byte on every example definition, and the documents are pinned; bad
//! env.json / program.json documents give a code and a JSON path, never a panic.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use expect_test::expect;
use soil0::Source;
use support::{ENV, PROGRAM, binary, workspace_root};

fn read(path: &str) -> String {
    std::fs::read_to_string(workspace_root().join(path)).expect("fixture")
}

fn definition_names() -> Vec<String> {
    let program: serde_json::Value = serde_json::from_str(&read(PROGRAM)).expect("program.json");
    program["definitions"]
        .as_array()
        .expect("definitions")
        .iter()
        .map(|d| d["name"].as_str().expect("name").to_owned())
        .collect()
}

/// Runs `soil0 check` both ways, asserts they agree, returns `exit N document`.
fn check_both(env: &str, program: &str, def: Option<&str>) -> String {
    let (env_text, program_text) = (read(env), read(program));
    let library = soil0::check(
        Source::new(env, &env_text),
        Source::new(program, &program_text),
        def,
    );
    let mut args = vec!["check", "--env", env, "--program", program];
    args.extend(def.iter().flat_map(|d| ["--def", *d]));
    let (code, stdout, stderr) = binary(&args);
    assert_eq!(stdout, format!("{}\n", library.document), "{args:?}");
    assert_eq!(code, library.exit, "{args:?}");
    assert!(stderr.is_empty(), "{stderr}");
    format!("exit {code} {}", library.document)
}

#[test]
fn library_and_binary_agree_on_every_example_definition() {
    let mut out = String::new();
    for name in definition_names() {
        out.push_str(&check_both(ENV, PROGRAM, Some(&name)));
        out.push('\n');
    }
    let whole = check_both(ENV, PROGRAM, None);
    let good = check_both(
        "test-data/soil0/bad/good.env.json",
        "test-data/soil0/bad/good.program.json",
        None,
    );
    assert!(good.starts_with("exit 0 "), "{good}");
    assert!(whole.starts_with("exit 0 {\"definitions\":["), "{whole}");
    expect![[r#"
        exit 0 {"definition":"csvstats::_parse_cell","signature":"(index : I64) -> (raw : Utf8) -> Result F64 ParseError","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"csvstats::_halfway","signature":"(a : F64) -> (b : F64) -> F64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"csvstats::_merge_sort","signature":"(xs : List a) -> List a","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"csvstats::_merge_pairs","signature":"(runs : List (List a)) -> List (List a)","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"csvstats::_merge","signature":"(xs : List a) -> (ys : List a) -> List a","row":[],"checks":{"clauses":[],"termination":"structural","holes":[]}}
        exit 0 {"definition":"csvstats::_collect_row","signature":"(acc : Result (List Row) ReadError) -> (entry : (I64, Utf8)) -> Result (List Row) ReadError","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"csvstats::all_finite","signature":"(xs : List F64) -> Bool","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"csvstats::contains","signature":"(xs : List a) -> (x : a) -> Bool","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"csvstats::count_of","signature":"(xs : List a) -> (x : a) -> I64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"csvstats::finite","signature":"(x : F64) -> Bool","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"csvstats::is_permutation","signature":"(xs : List a) -> (ys : List a) -> Bool","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"csvstats::median","signature":"(xs : List F64) ->{Panic} F64","row":["Panic"],"checks":{"clauses":[{"kind":"requires","label":"non_empty","assurance":"runtime"},{"kind":"requires","label":"finite","assurance":"runtime"},{"kind":"ensures","label":"bounded","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"csvstats::non_empty","signature":"(xs : List a) -> Bool","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"csvstats::parse_row","signature":"(line : I64) -> (text : Utf8) -> Result Row ParseError","row":[],"checks":{"clauses":[{"kind":"requires","label":"positive_line","assurance":"runtime"},{"kind":"ensures","label":"blank","assurance":"runtime"},{"kind":"ensures","label":"numbered","assurance":"runtime"},{"kind":"ensures","label":"finite","assurance":"runtime"}],"termination":"structural","holes":[]}}
        exit 0 {"definition":"csvstats::rank","signature":"(xs : List F64) -> (x : F64) -> I64","row":[],"checks":{"clauses":[{"kind":"requires","label":"sorted","assurance":"runtime"}],"termination":"allowed: the bisection halves the range [lo, hi) on each step, so it is finite","holes":[]}}
        exit 0 {"definition":"csvstats::read_file","signature":"(fs : Fs) -> (path : Utf8) ->{Fs} Result (List Row) ReadError","row":["Fs"],"checks":{"clauses":[{"kind":"ensures","label":"numbered","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"csvstats::sort","signature":"(xs : List F64) -> List F64","row":[],"checks":{"clauses":[{"kind":"ensures","label":"sorted","assurance":"runtime"},{"kind":"ensures","label":"permutation","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"csvstats::sort_by","signature":"(key : a -> k) -> (xs : List a) -> List a","row":[],"checks":{"clauses":[{"kind":"ensures","label":"ordered","assurance":"runtime"},{"kind":"ensures","label":"permutation","assurance":"runtime"},{"kind":"ensures","label":"stable","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"csvstats::sorted","signature":"(xs : List a) -> Bool","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"inventory::apply_all","signature":"(stock : Map Utf8 Item) -> (movements : List Movement) -> Result (Map Utf8 Item) (I64, StockError)","row":[],"checks":{"clauses":[{"kind":"requires","label":"keyed","assurance":"runtime"},{"kind":"ensures","label":"position","assurance":"runtime"}],"termination":"structural","holes":[]}}
        exit 0 {"definition":"inventory::apply_movement","signature":"(stock : Map Utf8 Item) -> (movement : Movement) -> Result (Map Utf8 Item) StockError","row":[],"checks":{"clauses":[{"kind":"requires","label":"keyed","assurance":"runtime"},{"kind":"ensures","label":"keyed","assurance":"runtime"},{"kind":"ensures","label":"sizes","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"inventory::find_by_name","signature":"(stock : Map Utf8 Item) -> (name : Utf8) -> Option Item","row":[],"checks":{"clauses":[{"kind":"ensures","label":"named","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"inventory::low_stock","signature":"(threshold : I64) -> (stock : Map Utf8 Item) -> List (Utf8, I64)","row":[],"checks":{"clauses":[{"kind":"ensures","label":"below_threshold","assurance":"runtime"},{"kind":"ensures","label":"complete","assurance":"runtime"},{"kind":"ensures","label":"most_urgent_first","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"inventory::reorder_plan","signature":"(target : I64) -> (case_size : I64) -> (stock : Map Utf8 Item) -> List (Utf8, I64)","row":[],"checks":{"clauses":[{"kind":"requires","label":"positive_case","assurance":"runtime"},{"kind":"ensures","label":"just_enough","assurance":"runtime"},{"kind":"ensures","label":"complete","assurance":"runtime"}],"termination":"non-recursive","holes":[{"name":"cases_to_order","goal":"I64","scope":[{"name":"target","type":"I64"},{"name":"case_size","type":"I64"},{"name":"stock","type":"Map Utf8 Item"},{"name":"short","type":"List Item"},{"name":"item","type":"Item"}]}]}}
        exit 0 {"definition":"inventory::sales_by_sku","signature":"(movements : List Movement) -> Map Utf8 I64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        exit 0 {"definition":"inventory::stock_value","signature":"(stock : Map Utf8 Item) -> I64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
    "#]].assert_eq(&out);
}

#[test]
fn bad_documents_name_the_json_path() {
    let corpus = "test-data/soil0/bad";
    let mut out = String::new();
    let mut names: Vec<String> = std::fs::read_dir(workspace_root().join(corpus))
        .expect("corpus")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("env-") || n.starts_with("program-"))
        .collect();
    names.sort();
    assert!(names.len() >= 8, "{names:?}");
    for name in names {
        let path = format!("{corpus}/{name}");
        // Each bad document is paired with a small good one, so the errors are its own.
        let (good_env, good_program) = (
            format!("{corpus}/good.env.json"),
            format!("{corpus}/good.program.json"),
        );
        let (env, program) = if name.starts_with("env-") {
            (path.as_str(), good_program.as_str())
        } else {
            (good_env.as_str(), path.as_str())
        };
        let document = check_both(env, program, None);
        assert!(document.starts_with("exit 1 {\"errors\":["), "{document}");
        let value: serde_json::Value =
            serde_json::from_str(&document["exit 1 ".len()..]).expect("JSON");
        for error in value["errors"].as_array().expect("errors") {
            out.push_str(&format!(
                "{name}: {} [{}] {}\n",
                error["code"].as_str().unwrap_or(""),
                error["file"]["value"].as_str().unwrap_or("-"),
                error["message"].as_str().unwrap_or("")
            ));
        }
    }
    expect![[r#"
        env-field-type-not-a-type.json: bad-env [test-data/soil0/bad/env-field-type-not-a-type.json] $.types[0].body.fields[0].ty: `->` is not a type: expected a type, found `->`
        env-missing-types.json: bad-env [test-data/soil0/bad/env-missing-types.json] $: missing field `types`
        env-not-json.json: bad-env [test-data/soil0/bad/env-not-json.json] $: not JSON: EOF while parsing a list at line 1 column 11
        env-payload-and-fields.json: bad-env [test-data/soil0/bad/env-payload-and-fields.json] $.types[0].body.variants[0]: `payload` and `fields` are mutually exclusive
        env-unknown-body-tag.json: bad-env [test-data/soil0/bad/env-unknown-body-tag.json] $.types[0].body.tag: unknown tag `Union`
        env-unknown-field-type.json: unknown-type [test-data/soil0/bad/env-unknown-field-type.json] unknown type `Nope`
        env-unknown-field-type.json: unknown-field [m/f.soil] `T` has no field `n`
        env-unknown-key.json: bad-env [test-data/soil0/bad/env-unknown-key.json] $: unknown field `version`
        program-definitions-not-a-list.json: bad-program [test-data/soil0/bad/program-definitions-not-a-list.json] $.definitions: expected an array
        program-missing-equation.json: bad-program [test-data/soil0/bad/program-missing-equation.json] $.definitions[0]: missing field `equation`
        program-not-json.json: bad-program [test-data/soil0/bad/program-not-json.json] $: not JSON: expected value at line 1 column 18
        program-signature-not-an-option.json: bad-program [test-data/soil0/bad/program-signature-not-an-option.json] $.definitions[0].signature: expected an object
        program-signature-syntax-error.json: unexpected-token [m/f.soil] expected a type, found the end of the input
        program-type-error.json: type-mismatch [m/f.soil] expected `Bool`, found `I64`
        program-unknown-clause-kind.json: bad-program [test-data/soil0/bad/program-unknown-clause-kind.json] $.definitions[0].clauses[0].kind: expected "requires" or "ensures", found "maybe"
    "#]].assert_eq(&out);
}
