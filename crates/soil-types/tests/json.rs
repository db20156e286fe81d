//! env.json and program.json decoding (soil0-cli §6, §7) and the §8.4 document.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use expect_test::expect;

const ENV: &str = r#"{"types":[
  {"name":"Row","params":[],"body":{"tag":"Record","fields":[{"name":"line","ty":"I64"},{"name":"cells","ty":"List F64"}]}},
  {"name":"ParseError","params":[],"body":{"tag":"Sum","variants":[
    {"name":"BadCell","payload":{"tag":"None"},"fields":{"tag":"Some","value":[{"name":"index","ty":"I64"},{"name":"raw","ty":"Utf8"}]}},
    {"name":"EmptyLine","payload":{"tag":"None"},"fields":{"tag":"None"}},
    {"name":"BadArity","payload":{"tag":"Some","value":"I64"}}
  ]}}
]}"#;

const PROGRAM: &str = r#"{"definitions":[
  {"name":"csvstats::describe","file":{"tag":"Some","value":"csvstats/describe.soil"},
   "signature":{"tag":"Some","value":"describe : (e : ParseError) -> Utf8"},
   "equation":"describe e =\n  match e with\n  | BadCell { index, .. } -> \"cell \" ++ show index\n  | EmptyLine -> \"empty\"\n  | BadArity n -> ?arity_text\n  end",
   "clauses":[{"kind":"ensures","label":"nonblank","predicate":"str_len result > 0"}],
   "allow":[]},
  {"name":"csvstats::first_line","file":{"tag":"None"},
   "signature":{"tag":"Some","value":"first_line : (rows : List Row) -> Option I64"},
   "equation":"first_line rows = option_map (\\r -> r.line) (first rows)",
   "clauses":[],"allow":[]}
]}"#;

#[test]
fn decodes_and_checks_a_program() {
    let env = soil_types::decode_env(ENV, "env.json").expect("env decodes");
    let program = soil_types::decode_program(PROGRAM, "program.json").expect("program decodes");
    let facts = soil_types::check_program(&env, &program)
        .into_result()
        .expect("checks");
    expect![[r#"{"definitions":[{"definition":"csvstats::describe","signature":"(e : ParseError) -> Utf8","row":[],"checks":{"clauses":[{"kind":"ensures","label":"nonblank","assurance":"runtime"}],"termination":"non-recursive","holes":[{"name":"arity_text","goal":"Utf8","scope":[{"name":"e","type":"ParseError"},{"name":"n","type":"I64"}]}]}},{"definition":"csvstats::first_line","signature":"(rows : List Row) -> Option I64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}]}"#]].assert_eq(&soil_types::check_document(&facts));
}

fn first_error(result: Result<impl Sized, Vec<trellis_diag::Diagnostic>>) -> String {
    match result {
        Ok(_) => "decoded".to_owned(),
        Err(diagnostics) => {
            let d = &diagnostics[0];
            format!(
                "{} {} {}",
                d.code,
                d.file.clone().unwrap_or_default(),
                d.message
            )
        }
    }
}

#[test]
fn bad_env_names_the_json_path() {
    let cases = [
        r#"{"types":[{"name":"A","params":[],"body":{"tag":"Record","fields":[{"name":"x","ty":"List"}]}}],"extra":1}"#,
        r#"{"types":[{"name":"A","params":[],"body":{"tag":"Record","fields":[{"name":"x","ty":"->"}]}}]}"#,
        r#"{"types":[{"name":"A","params":[],"body":{"tag":"Sum","variants":[{"name":"B","payload":{"tag":"Some","value":"I64"},"fields":{"tag":"Some","value":[]}}]}}]}"#,
        r#"{"types":[{"name":"A","params":[],"body":{"tag":"Set"}}]}"#,
        r#"[1, 2"#,
    ];
    let out: Vec<String> = cases
        .iter()
        .map(|c| first_error(soil_types::decode_env(c, "env.json")))
        .collect();
    expect![[r#"
        bad-env env.json $: unknown field `extra`
        bad-env env.json $.types[0].body.fields[0].ty: `->` is not a type: expected a type, found `->`
        bad-env env.json $.types[0].body.variants[0]: `payload` and `fields` are mutually exclusive
        bad-env env.json $.types[0].body.tag: unknown tag `Set`
        bad-env env.json $: not JSON: EOF while parsing a list at line 1 column 5"#]].assert_eq(&out.join("\n"));
}

#[test]
fn bad_program_names_the_json_path_or_passes_syntax_errors_through() {
    let cases = [
        r#"{"definitions":[{"name":"m::f","file":{"tag":"None"},"signature":{"tag":"None"},"equation":"f x = x","clauses":[{"kind":"assumes","label":"a","predicate":"true"}],"allow":[]}]}"#,
        r#"{"definitions":[{"name":"m::f","file":{"tag":"None"},"signature":{"tag":"None"},"equation":"f x = ","clauses":[],"allow":[]}]}"#,
        r#"{"definitions":[{"name":"m::f","file":{"tag":"None"},"signature":null,"equation":"f x = x","clauses":[],"allow":[]}]}"#,
        r#"{"definitions":[{"name":"m::f","file":{"tag":"None"},"signature":{"tag":"None"},"equation":"f x = x","clauses":[]}]}"#,
    ];
    let out: Vec<String> = cases
        .iter()
        .map(|c| first_error(soil_types::decode_program(c, "program.json")))
        .collect();
    expect![[r#"
        bad-program program.json $.definitions[0].clauses[0].kind: expected "requires" or "ensures", found "assumes"
        unexpected-token program.json expected an expression, found the end of the input
        bad-program program.json $.definitions[0].signature: expected an object
        bad-program program.json $.definitions[0]: missing field `allow`"#]].assert_eq(&out.join("\n"));
}

#[test]
fn check_json_is_soil0_check_in_one_call() {
    let one = soil_types::check_json(
        ENV,
        "env.json",
        PROGRAM,
        "program.json",
        Some("csvstats::first_line"),
    );
    expect![[r#"{"definition":"csvstats::first_line","signature":"(rows : List Row) -> Option I64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}"#]].assert_eq(&one.unwrap_or_else(|e| format!("{e:?}")));
    let missing = soil_types::check_json(
        ENV,
        "env.json",
        PROGRAM,
        "program.json",
        Some("csvstats::nope"),
    );
    expect!["unknown-definition program.json the program has no definition `csvstats::nope`"]
        .assert_eq(&first_error(missing));
    let broken = soil_types::check_json("{}", "env.json", "[]", "program.json", None);
    let codes: Vec<String> = broken
        .err()
        .unwrap_or_default()
        .into_iter()
        .map(|d| d.code)
        .collect();
    assert_eq!(codes, ["bad-env", "bad-program"]);
}
