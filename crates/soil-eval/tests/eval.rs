//! Goldens over small programs: values, operators, patterns, closures, the
//! prelude, panics, clauses, holes, depth, capabilities.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use std::sync::Arc;

use expect_test::{Expect, expect};
use soil_eval::world::{CapturedStdout, FakeClock, FakeFs};
use soil_eval::{
    Clause, Definition, Program, RunError, World, program_from_source, type_env_from_decls,
};

/// Compiles `text` and runs `def` on `args` (a JSON array) in a sandbox,
/// rendering the outcome on one line.
fn run_in(text: &str, def: &str, args: &str, world: &mut World) -> String {
    let program = match program_from_source(text, Some("test.soil")) {
        Ok(program) => program,
        Err(errors) => return format!("compile error: {}", codes(&errors)),
    };
    render(&program, program.run_json(def, args, world))
}

fn run(text: &str, def: &str, args: &str) -> String {
    run_in(text, def, args, &mut World::sandbox())
}

fn codes(diagnostics: &[trellis_diag::Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| {
            let at = d
                .span
                .map(|s| format!(" @{}:{}", s.start.line, s.start.column))
                .unwrap_or_default();
            format!("{}{at} {}", d.code, d.message)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn render(program: &Program, outcome: Result<String, RunError>) -> String {
    match outcome {
        Ok(json) => json,
        Err(RunError::Refused(errors)) => format!("refused: {}", codes(&errors)),
        Err(RunError::Panic(panic)) => {
            let diagnostic = program.panic_diagnostic(&panic);
            let notes: Vec<String> = diagnostic.notes.iter().map(|n| n.message.clone()).collect();
            format!("panic: {} [{}]", codes(&[diagnostic]), notes.join(", "))
        }
    }
}

fn check(text: &str, def: &str, args: &str, expect: Expect) {
    expect.assert_eq(&run(text, def, args));
}

const NUMBERS: &str = r#"
add : (a : I64) -> (b : I64) -> I64
add a b = a + b
mul_u : (a : U64) -> (b : U64) -> U64
mul_u a b = a * b
div : (a : I64) -> (b : I64) -> I64
div a b = a / b
rem : (a : I64) -> (b : I64) -> I64
rem a b = a % b
fdiv : (a : F64) -> (b : F64) -> F64
fdiv a b = a / b
fmod : (a : F64) -> (b : F64) -> F64
fmod a b = a % b
neg : (x : F64) -> F64
neg x = -x
order : (a : F64) -> (b : F64) -> (Bool, Bool, Bool, Ordering)
order a b = (a == b, a < b, a <= b, compare a b)
"#;

#[test]
fn integer_arithmetic_wraps_and_division_truncates() {
    check(
        NUMBERS,
        "add",
        "[9223372036854775807, 1]",
        expect![["-9223372036854775808"]],
    );
    check(
        NUMBERS,
        "mul_u",
        "[18446744073709551615, 2]",
        expect![["18446744073709551614"]],
    );
    check(NUMBERS, "div", "[-7, 2]", expect![["-3"]]);
    check(NUMBERS, "rem", "[-7, 2]", expect![["-1"]]);
    check(
        NUMBERS,
        "div",
        "[-9223372036854775808, -1]",
        expect![["-9223372036854775808"]],
    );
    check(NUMBERS, "rem", "[-9223372036854775808, -1]", expect![["0"]]);
    check(
        NUMBERS,
        "div",
        "[1, 0]",
        expect![["panic: runtime-panic @7:11 division by zero [#0 in div]"]],
    );
}

#[test]
fn floats_are_ieee_and_compare_by_the_total_order() {
    check(NUMBERS, "fdiv", "[1.0, 0.0]", expect![[r#""Infinity""#]]);
    check(NUMBERS, "fdiv", "[0.0, 0.0]", expect![[r#""NaN""#]]);
    check(NUMBERS, "fmod", "[7.5, 2.0]", expect![["1.5"]]);
    check(NUMBERS, "neg", "[0.0]", expect![["-0.0"]]);
    check(
        NUMBERS,
        "order",
        r#"["NaN", "NaN"]"#,
        expect![[r#"[true,false,true,{"tag":"Equal"}]"#]],
    );
    check(
        NUMBERS,
        "order",
        "[-0.0, 0.0]",
        expect![[r#"[false,true,true,{"tag":"Less"}]"#]],
    );
    check(
        NUMBERS,
        "order",
        r#"["Infinity", "NaN"]"#,
        expect![[r#"[false,true,true,{"tag":"Less"}]"#]],
    );
}

const DATA: &str = r#"
type Row = { line : I64, cells : List F64 }
type ParseError = BadCell { index : I64, raw : Utf8 } | EmptyLine | BadArity I64
type Tree a = Leaf | Node { left : Tree a, value : a, right : Tree a }

describe : (e : ParseError) -> Utf8
describe e =
  match e with
  | BadCell { index, raw = r } -> "cell " ++ show index ++ ": " ++ r
  | EmptyLine -> "empty"
  | BadArity n if n > 3 -> "too many"
  | BadArity _ -> "too few"
  end

widen : (r : Row) -> Row
widen r = { r with cells = push r.cells 0.5 }

make : (n : I64) -> (Row, ParseError, Option Row)
make n = (Row { line = n, cells = [] }, BadCell { index = n, raw = "x" }, None)

insert : (x : I64) -> (t : Tree I64) -> Tree I64
insert x t =
  match t with
  | Leaf -> Node { left = Leaf, value = x, right = Leaf }
  | Node { left, value, right } ->
    if x < value then Node { left = insert x left, value, right }
    else Node { left, value, right = insert x right }
  end

to_list : (t : Tree I64) -> List I64
to_list t =
  match t with
  | Leaf -> []
  | Node { left, value, right } -> to_list left ++ [value] ++ to_list right
  end

tree_sort : (xs : List I64) -> List I64
tree_sort xs = to_list (fold (\t x -> insert x t) Leaf xs)

heads : (xs : List (List I64)) -> List I64
heads xs =
  match xs with
  | [] -> []
  | [[], ..rest] -> heads rest
  | [[h, ..], ..rest] -> [h] ++ heads rest
  end
"#;

#[test]
fn records_sums_and_patterns() {
    check(
        DATA,
        "describe",
        r#"[{"tag":"BadCell","index":2,"raw":"zz"}]"#,
        expect![[r#""cell 2: zz""#]],
    );
    check(
        DATA,
        "describe",
        r#"[{"tag":"BadArity","value":5}]"#,
        expect![[r#""too many""#]],
    );
    check(
        DATA,
        "describe",
        r#"[{"tag":"BadArity","value":1}]"#,
        expect![[r#""too few""#]],
    );
    check(
        DATA,
        "describe",
        r#"[{"tag":"EmptyLine"}]"#,
        expect![[r#""empty""#]],
    );
    check(
        DATA,
        "widen",
        r#"[{"line":1,"cells":[1.0]}]"#,
        expect![[r#"{"line":1,"cells":[1.0,0.5]}"#]],
    );
    check(
        DATA,
        "make",
        "[7]",
        expect![[
            r#"[{"line":7,"cells":[]},{"tag":"BadCell","index":7,"raw":"x"},{"tag":"None"}]"#
        ]],
    );
    check(
        DATA,
        "tree_sort",
        "[[5, 3, 8, 1, 3]]",
        expect![["[1,3,3,5,8]"]],
    );
    check(DATA, "heads", "[[[1, 2], [], [3]]]", expect![["[1,3]"]]);
}

const FUNCTIONS: &str = r#"
add : (a : I64) -> (b : I64) -> I64
add a b = a + b
curried : (xs : List I64) -> List I64
curried xs = map (add 10) xs
compose : (x : I64) -> I64
compose x =
  let twice f y = f (f y) in
  let inc = \n -> n + 1 in
  twice (twice inc) x
counter : (n : I64) -> I64
counter n = let go acc i = if i == 0 then acc else go (acc + 2) (i - 1) in go 0 n
count_up : (n : I64) -> List I64
count_up n = let go acc i = if i == n then acc else go (push acc i) (i + 1) in go [] 0
ctor : (xs : List I64) -> List (Option I64)
ctor xs = map Some xs
over : (x : I64) -> I64
over x = (\a -> \b -> a * b) x 3
shadow : (x : I64) -> I64
shadow x = let x = x + 1 in let f = \y -> x + y in let x = 100 in f x
"#;

#[test]
fn closures_currying_and_local_recursion() {
    check(FUNCTIONS, "curried", "[[1, 2]]", expect![["[11,12]"]]);
    check(FUNCTIONS, "compose", "[1]", expect![["5"]]);
    check(
        FUNCTIONS,
        "ctor",
        "[[1]]",
        expect![[r#"[{"tag":"Some","value":1}]"#]],
    );
    check(FUNCTIONS, "over", "[4]", expect![["12"]]);
    check(FUNCTIONS, "shadow", "[1]", expect![["102"]]);
}

#[test]
fn tail_calls_run_in_constant_depth() {
    // A million iterations: far past the depth limit, so these must be loops.
    check(FUNCTIONS, "counter", "[1000000]", expect![["2000000"]]);
    let out = run(FUNCTIONS, "count_up", "[100000]");
    assert!(
        out.starts_with("[0,1,2,") && out.ends_with(",99999]"),
        "{}",
        &out[..40.min(out.len())]
    );
}

const PRELUDE_USE: &str = r#"
strings : (s : Utf8) -> (List Utf8, Utf8, I64, Utf8, List Utf8, Bool)
strings s = (split s ",", join "-" (lines "a\nb\n"), str_len s, str_slice s 1 3, chars "hé", starts_with s "a")
numbers : (x : F64) -> (Option I64, Option I64, Option F64, F64, Utf8, Option U64)
numbers x = (truncate x, parse_i64 "42", parse_f64 "-inf", sqrt 16.0, show [x], to_u64 (-1))
lists : (xs : List I64) -> (List I64, List I64, Option I64, List (I64, I64), I64, Bool, List I64)
lists xs = (take 2 xs, slice xs 1 100, find (\x -> x > 1) xs, enumerate xs, fold (\a x -> a + x) 0 xs, all (\x -> x > 0) xs, reverse (range 0 3))
maps : (pairs : List (Utf8, I64)) -> (Map Utf8 I64, Option I64, I64, List Utf8)
maps pairs =
  let m = map_insert "z" 26 (map_from_list pairs) in
  (m, map_get "b" m, map_size (map_remove "a" m), map_keys m)
bounds : (xs : List I64) -> (I64, I64, I64, Option I64)
bounds xs = (minimum xs, maximum xs, at xs 0, get xs 9)
"#;

#[test]
fn prelude_values_behave_as_documented() {
    check(
        PRELUDE_USE,
        "strings",
        r#"["a,b,c"]"#,
        expect![[r#"[["a","b","c"],"a-b",5,",b",["h","é"],true]"#]],
    );
    check(
        PRELUDE_USE,
        "numbers",
        "[-2.7]",
        expect![[
            r#"[{"tag":"Some","value":-2},{"tag":"Some","value":42},{"tag":"Some","value":"-Infinity"},4.0,"[-2.7]",{"tag":"None"}]"#
        ]],
    );
    check(
        PRELUDE_USE,
        "numbers",
        r#"["NaN"]"#,
        expect![[
            r#"[{"tag":"None"},{"tag":"Some","value":42},{"tag":"Some","value":"-Infinity"},4.0,"[\"NaN\"]",{"tag":"None"}]"#
        ]],
    );
    check(
        PRELUDE_USE,
        "lists",
        "[[3, 1, 2]]",
        expect![[r#"[[3,1],[1,2],{"tag":"Some","value":3},[[0,3],[1,1],[2,2]],6,true,[2,1,0]]"#]],
    );
    check(
        PRELUDE_USE,
        "maps",
        r#"[[["b", 2], ["a", 1], ["b", 3]]]"#,
        expect![[r#"[[["a",1],["b",3],["z",26]],{"tag":"Some","value":3},2,["a","b","z"]]"#]],
    );
    check(
        PRELUDE_USE,
        "bounds",
        "[[4, -1, 9]]",
        expect![[r#"[-1,9,4,{"tag":"None"}]"#]],
    );
    check(
        PRELUDE_USE,
        "bounds",
        "[[]]",
        expect!["panic: runtime-panic @13:14 minimum of an empty list [#0 in bounds]"],
    );
}

const PANICS: &str = r#"
checked : (x : I64) ->{Panic} I64
checked x = if x > 10 then panic "too big" else x
outer : (xs : List I64) ->{Panic} I64
outer xs = fold (\acc x -> acc + inner x) 0 xs
inner : (x : I64) ->{Panic} I64
inner x = checked (x * 2)
index : (xs : List I64) -> (i : I64) ->{Panic} I64
index xs i = at xs i
deep : (n : I64) -> I64
deep n = if n == 0 then 0 else 1 + deep (n - 1)
"#;

#[test]
fn panics_are_structured_documents() {
    check(
        PANICS,
        "outer",
        "[[1, 2, 7]]",
        expect![
            "panic: runtime-panic @3:28 too big [#0 in outer, #1 in outer (lambda), #2 in checked]"
        ],
    );
    check(
        PANICS,
        "index",
        "[[1], 3]",
        expect![[
            "panic: runtime-panic @9:14 index 3 out of range for a list of length 1 [#0 in index]"
        ]],
    );
    let program = program_from_source(PANICS, Some("panics.soil")).ok();
    let outcome = program
        .as_ref()
        .map(|p| p.run_json("checked", "[11]", &mut World::sandbox()));
    let Some(Err(RunError::Panic(panic))) = outcome else {
        panic!("expected a panic, got {outcome:?}");
    };
    let document = trellis_diag::errors_document(&[program
        .map(|p| p.panic_diagnostic(&panic))
        .unwrap_or_else(|| panic.to_diagnostic(None))]);
    expect![[r##"{"errors":[{"code":"runtime-panic","message":"too big","file":{"tag":"Some","value":"panics.soil"},"span":{"tag":"Some","value":{"start":{"line":3,"column":28,"offset":62},"end":{"line":3,"column":43,"offset":77}}},"notes":[{"message":"#0 in checked","span":{"tag":"None"}}],"repair_class":"fix-runtime","spec_ref":"soil0-cli#8.6"}]}"##]]
        .assert_eq(&document);
}

#[test]
fn deep_recursion_ends_in_a_depth_limit_panic() {
    check(PANICS, "deep", "[5000]", expect![["5000"]]);
    check(
        PANICS,
        "deep",
        "[100000]",
        expect![[
            "panic: depth-limit @11:36 recursion depth limit of 10000 nested calls exceeded [#0 in deep (×10000)]"
        ]],
    );
    // On a thread the interpreter did not start (2 MiB here), the smaller
    // stack budget stops it first: still a structured panic, never a crash.
    let program = program_from_source(PANICS, None).ok();
    let outcome = program.map(|p| {
        p.call(
            "deep",
            vec![soil_rt::Value::I64(100_000)],
            &mut World::sandbox(),
        )
    });
    let code = match outcome {
        Some(Err(RunError::Panic(panic))) => panic.code.code(),
        other => panic!("expected a panic, got {other:?}"),
    };
    assert_eq!(code, "depth-limit");
    // The limit is configurable.
    let program = program_from_source(PANICS, None)
        .map(|p| p.with_max_depth(100))
        .ok();
    let outcome = program
        .as_ref()
        .map(|p| render(p, p.run_json("deep", "[200]", &mut World::sandbox())));
    assert_eq!(
        outcome.as_deref(),
        Some(
            "panic: depth-limit recursion depth limit of 100 nested calls exceeded [#0 in deep (×100)]"
        )
    );
}

/// A hole refuses the run where evaluation reaches it, with the call chain;
/// inputs whose path does not reach it run (soil-syntax-spec §10). The
/// up-front list of holes a definition reaches is still there for callers that
/// must not run partial code at all.
#[test]
fn holes_refuse_the_run_where_they_are_reached() {
    let text = "helper : (x : I64) -> I64\nhelper x = if x > 0 then ?todo + x else x\nmain : (x : I64) -> I64\nmain x = helper x\nother : (x : I64) -> I64\nother x = x\n";
    check(
        text,
        "main",
        "[1]",
        expect!["panic: unfilled-hole @2:26 reached the unfilled hole ?todo [#0 in helper]"],
    );
    check(text, "main", "[-1]", expect![["-1"]]);
    check(text, "other", "[1]", expect![["1"]]);
    let program = program_from_source(text, Some("test.soil")).expect("compiles");
    expect![["unfilled-hole @2:26 `main` cannot run: `helper` contains the unfilled hole ?todo"]]
        .assert_eq(&codes(&program.holes_reached_by("main")));
}

#[test]
fn bad_calls_are_refused_with_codes() {
    check(
        NUMBERS,
        "nope",
        "[]",
        expect![["refused: unknown-definition no definition is named `nope`"]],
    );
    check(
        NUMBERS,
        "add",
        "[1]",
        expect!["refused: json-type-mismatch @1:1 $: expected 2 arguments, found 1"],
    );
    check(
        NUMBERS,
        "add",
        "[1, 2.5]",
        expect![[
            "refused: json-type-mismatch @1:5 $[1]: expected I64, found the non-integer number 2.5"
        ]],
    );
    check(
        NUMBERS,
        "add",
        "[1, ",
        expect![["refused: json-syntax @1:5 invalid JSON: unexpected end of input"]],
    );
    check(
        "f x = x\n",
        "f",
        "[1]",
        expect![[
            "refused: bad-arguments `f` has no signature, so its arguments cannot be decoded"
        ]],
    );
    check(
        "f : (x : I64) -> I64\nf x = y + undefined_thing\n",
        "f",
        "[1]",
        expect![[
            "compile error: eval-unresolved-name @2:7 `y` is not defined; eval-unresolved-name @2:11 `undefined_thing` is not defined"
        ]],
    );
}

const IO: &str = r#"
copy : (fs : Fs) -> (out : Stdout) -> (from : Utf8) -> (to : Utf8) ->{Fs, Stdout} Result I64 IoError
copy fs out from to =
  match read_text fs from with
  | Err e -> Err e
  | Ok text ->
    let _ = print_line out ("copying " ++ from) in
    match write_text fs to (to_upper text) with
    | Ok _ -> Ok (str_len text)
    | Err e -> Err e
    end
  end
stamp : (clock : Clock) -> (label : Utf8) ->{Clock} Utf8
stamp clock label = label ++ "@" ++ show (now_seconds clock)
"#;

#[test]
fn capabilities_are_injected_from_the_world() {
    let stdout = CapturedStdout::default();
    let fs = FakeFs::from_json(r#"{"files":{"data.csv":"1,2\n"}}"#).expect("valid fake");
    let clock = FakeClock::from_json(r#"{"now":1700000000}"#).expect("valid fake");
    let mut world = World {
        fs: Box::new(fs),
        clock: Box::new(clock),
        stdout: Box::new(stdout.clone()),
    };
    let out = run_in(IO, "copy", r#"["data.csv", "out.csv"]"#, &mut world);
    expect![["{\"tag\":\"Ok\",\"value\":4}"]].assert_eq(&out);
    assert_eq!(stdout.lines(), vec!["copying data.csv".to_owned()]);
    let again = run_in(IO, "copy", r#"["out.csv", "x"]"#, &mut world);
    assert_eq!(again, r#"{"tag":"Ok","value":4}"#, "the fake keeps writes");
    let missing = run_in(IO, "copy", r#"["nope.csv", "x"]"#, &mut world);
    expect![[r#"{"tag":"Err","value":{"tag":"NotFound","path":"nope.csv"}}"#]].assert_eq(&missing);
    expect![[r#""run@1700000000""#]].assert_eq(&run_in(IO, "stamp", r#"["run"]"#, &mut world));
}

#[test]
fn requires_and_ensures_are_runtime_guards() {
    let text = "half : (n : I64) -> I64\nhalf n = n / 2\n";
    let (file, errors) = soil_syntax::parse_file(text);
    assert!(errors.is_empty());
    let equation = file.items.iter().find_map(|i| match i {
        soil_syntax::ast::Item::Equation(eq) => Some(eq.clone()),
        _ => None,
    });
    let signature = file.items.iter().find_map(|i| match i {
        soil_syntax::ast::Item::Signature(sig) => Some(sig.ty.clone()),
        _ => None,
    });
    let clause = |label: &str, text: &str| {
        let (predicate, errors) = soil_syntax::parse_predicate(text);
        assert!(errors.is_empty(), "{errors:?}");
        Clause {
            label: label.into(),
            predicate: predicate.expect("a predicate"),
            file: Some("half.tr".into()),
            text: Some(Arc::from(text)),
        }
    };
    let definition = Definition {
        name: "half".into(),
        module: None,
        file: Some("half.soil".into()),
        text: Some(Arc::from(text)),
        signature,
        equation: equation.expect("an equation"),
        requires: vec![clause("even", "n % 2 == 0")],
        ensures: vec![clause("smaller", "result < n implies n > 0")],
    };
    let types = type_env_from_decls(std::iter::empty()).unwrap_or_default();
    let program = match Program::compile(types, vec![definition]) {
        Ok(program) => program,
        Err(errors) => panic!("{}", codes(&errors)),
    };
    let mut world = World::sandbox();
    assert_eq!(
        render(&program, program.run_json("half", "[8]", &mut world)),
        "4"
    );
    expect![["panic: requires-violated @1:1 half requires even does not hold [#0 in half]"]]
        .assert_eq(&render(
            &program,
            program.run_json("half", "[7]", &mut world),
        ));
    expect!["-2"].assert_eq(&render(
        &program,
        program.run_json("half", "[-4]", &mut world),
    ));
}

const SHARING: &str = r#"
persistent : (xs : List I64) -> (List I64, List I64, List I64)
persistent xs = let ys = push xs 1 in let zs = push xs 2 in (xs, ys, zs)
guarded : (xs : List I64) -> I64
guarded xs =
  match len xs with
  | n if len (push xs 0) > 100 -> n
  | _ -> len xs
  end
captured : (xs : List I64) -> (List I64, List I64)
captured xs =
  let f = \x -> push xs x in
  (f 1, f 2)
concat_keeps : (xs : List I64) -> (List I64, List I64)
concat_keeps xs = let ys = xs ++ [9] in (ys, xs)
views : (xs : List I64) -> (List I64, List I64)
views xs =
  match xs with
  | [_, ..rest] -> (push rest 7, xs)
  | [] -> ([], xs)
  end
elementwise : (xss : List (List I64)) -> (List (List I64), List (List I64), List (List I64), List I64)
elementwise xss =
  let pushed = map (\xs -> push xs 0) xss in
  let kept = filter (\xs -> len xs > 1) xss in
  let all = fold (\acc xs -> acc ++ xs) [] xss in
  (pushed, kept, xss, all)
grown : (s : Utf8) -> (Utf8, Utf8, Utf8)
grown s =
  let longer = s ++ " and more" in
  let piece = str_slice s 0 11 in
  (longer ++ "!", piece ++ "?", s)
"#;

#[test]
fn in_place_updates_never_change_shared_values() {
    check(
        SHARING,
        "persistent",
        "[[0]]",
        expect![["[[0],[0,1],[0,2]]"]],
    );
    check(SHARING, "guarded", "[[5, 6]]", expect![["2"]]);
    check(SHARING, "captured", "[[0]]", expect![["[[0,1],[0,2]]"]]);
    check(
        SHARING,
        "concat_keeps",
        "[[1, 2]]",
        expect![["[[1,2,9],[1,2]]"]],
    );
    check(
        SHARING,
        "views",
        "[[1, 2, 3]]",
        expect![["[[2,3,7],[1,2,3]]"]],
    );
    // `map`, `filter` and `fold` hand elements over by value; a list still
    // held elsewhere keeps its elements as they were.
    check(
        SHARING,
        "elementwise",
        "[[[1], [2, 3]]]",
        expect![["[[[1,0],[2,3,0]],[[2,3]],[[1],[2,3]],[1,2,3]]"]],
    );
    // A string grows in place only where nothing else holds its text.
    check(
        SHARING,
        "grown",
        r#"["a long enough text"]"#,
        expect![[r#"["a long enough text and more!","a long enou?","a long enough text"]"#]],
    );
}

const FUSED: &str = r#"
top : (n : I64) -> (xs : List (I64, Utf8)) -> (List (I64, Utf8), List (I64, Utf8))
top n xs =
  let by_count p = let (c, _) = p in 0 - c in
  let sorted = sort_list_by by_count xs in
  (take n (sort_list_by by_count xs), take n sorted)
top_plain : (n : I64) -> (xs : List I64) -> (List I64, List I64)
top_plain n xs = let sorted = sort_list xs in (take n (sort_list xs), take n sorted)
lookup : (m : Map Utf8 I64) -> (k : Utf8) -> (I64, I64)
lookup m k = let found = map_get k m in (unwrap_or (map_get k m) (0 - 1), unwrap_or found (0 - 1))
"#;

/// The nests the compiler fuses (`take n (sort_list_by key xs)`,
/// `take n (sort_list xs)`, `unwrap_or (map_get k m) d`) give what the nest
/// gives when its parts are bound first (and so not fused): ties keep their
/// order, `n` is clamped.
#[test]
fn fused_nests_agree_with_their_parts() {
    let pairs =
        r#"[[3,"c"],[1,"a"],[3,"b"],[2,"z"],[3,"a"],[1,"y"],[5,"q"],[2,"b"],[0,"o"],[3,"d"]]"#;
    for n in [-1, 0, 1, 3, 4, 9, 10, 11, 100] {
        let out = run(FUSED, "top", &format!("[{n}, {pairs}]"));
        let halves: serde_json::Value = serde_json::from_str(&out).expect(&out);
        assert_eq!(halves[0], halves[1], "top {n}: {out}");
        let out = run(
            FUSED,
            "top_plain",
            &format!("[{n}, [5, 3, 9, 3, 1, 0, 7, 3]]"),
        );
        let halves: serde_json::Value = serde_json::from_str(&out).expect(&out);
        assert_eq!(halves[0], halves[1], "top_plain {n}: {out}");
    }
    check(
        FUSED,
        "top",
        &format!("[4, {pairs}]"),
        expect![[r#"[[[5,"q"],[3,"c"],[3,"b"],[3,"a"]],[[5,"q"],[3,"c"],[3,"b"],[3,"a"]]]"#]],
    );
    check(FUSED, "lookup", r#"[[["a", 1]], "a"]"#, expect!["[1,1]"]);
    check(FUSED, "lookup", r#"[[["a", 1]], "b"]"#, expect!["[-1,-1]"]);
}

const OPTIONS: &str = r#"
counts : (words : List Utf8) -> List (Utf8, I64)
counts words = map_to_list (fold (\m w -> match map_get w m with
  | Some c -> map_insert w (c + 1) m
  | None -> map_insert w 1 m
  end) map_empty words)
counts_none_first : (words : List Utf8) -> List (Utf8, I64)
counts_none_first words = map_to_list (fold (\m w -> match map_get w m with
  | None -> map_insert w 1 m
  | Some c -> map_insert w (c + 1) m
  end) map_empty words)
counts_guarded : (words : List Utf8) -> List (Utf8, I64)
counts_guarded words = map_to_list (fold (\m w -> match map_get w m with
  | Some c if c > 0 -> map_insert w (c + 1) m
  | _ -> map_insert w 1 m
  end) map_empty words)
counts_has : (words : List Utf8) -> List (Utf8, I64)
counts_has words = map_to_list (fold (\m w -> if map_has w m then map_insert w (unwrap_or (map_get w m) 0 + 1) m else map_insert w 1 m) map_empty words)
seen : (words : List Utf8) -> List (Utf8, I64)
seen words = map_to_list (fold (\m w -> match map_get w m with
  | Some _ -> m
  | _ -> map_insert w 0 m
  end) map_empty words)
after_insert : (m : Map Utf8 I64) -> (k : Utf8) -> (I64, I64, Map Utf8 I64)
after_insert m k =
  let here = match map_get k m with | Some v -> v | None -> 0 - 1 end in
  let there = match map_get k (map_insert k 7 m) with | Some v -> v | None -> 0 - 1 end in
  (here, there, m)
first_big : (xs : List I64) -> I64
first_big xs = match find (\x -> x > 2) xs with | Some x -> x | None -> 0 - 1 end
first_list : (xs : List (List I64)) -> List I64
first_list xs = match find (\l -> len l > 1) xs with | Some l -> push l 0 | None -> [] end
counts_let : (words : List Utf8) -> List (Utf8, I64)
counts_let words = map_to_list (fold (\m w -> let found = map_get w m in match found with
  | Some c -> map_insert w (c + 1) m
  | None -> map_insert w 1 m
  end) map_empty words)
found_kept : (m : Map Utf8 I64) -> (k : Utf8) -> (I64, Option I64)
found_kept m k = let found = map_get k m in match found with | Some c -> (c, found) | None -> (0, found) end
found_shadowed : (m : Map Utf8 I64) -> (k : Utf8) -> I64
found_shadowed m k = let found = map_get k m in match found with | Some found -> found + 1 | None -> 0 end
counts_mapped : (words : List Utf8) -> List (Utf8, I64)
counts_mapped words = map_to_list (fold (\m w -> map_insert w (unwrap_or (option_map (\c -> c + 1) (map_get w m)) 1) m) map_empty words)
"#;

/// A `match` of an `Option` with the arms `Some x` and `None` is decided by
/// its tag, and over `map_get` without building the `Option`: it gives what
/// the general match gives (a guard keeps a match general), in either arm
/// order, with a wildcard payload or a wildcard `None` arm, on a map in a
/// local (left as it was) or made in place, and on an `Option` from any
/// other call, its payload moved out or copied as it is held. `map_has`
/// looks its key up the same way, and so does an `Option` bound by a `let`
/// only to be matched at once (an arm that reads it, or binds a name of its
/// own, reads what it would read).
#[test]
fn option_matches_decided_by_their_tag_agree_with_the_general_match() {
    let words = r#"[["b", "a", "b", "c", "b", "a"]]"#;
    for def in [
        "counts",
        "counts_none_first",
        "counts_guarded",
        "counts_has",
        "counts_mapped",
        "counts_let",
    ] {
        check(
            OPTIONS,
            def,
            words,
            expect![[r#"[["a",2],["b",3],["c",1]]"#]],
        );
    }
    check(
        OPTIONS,
        "seen",
        words,
        expect![[r#"[["a",0],["b",0],["c",0]]"#]],
    );
    check(
        OPTIONS,
        "after_insert",
        r#"[[["a", 1]], "a"]"#,
        expect![[r#"[1,7,[["a",1]]]"#]],
    );
    check(
        OPTIONS,
        "after_insert",
        r#"[[["a", 1]], "z"]"#,
        expect![[r#"[-1,7,[["a",1]]]"#]],
    );
    check(
        OPTIONS,
        "found_kept",
        r#"[[["a", 1]], "a"]"#,
        expect![[r#"[1,{"tag":"Some","value":1}]"#]],
    );
    check(
        OPTIONS,
        "found_kept",
        r#"[[["a", 1]], "z"]"#,
        expect![[r#"[0,{"tag":"None"}]"#]],
    );
    check(
        OPTIONS,
        "found_shadowed",
        r#"[[["a", 1]], "a"]"#,
        expect!["2"],
    );
    check(OPTIONS, "first_big", "[[1, 5, 9]]", expect!["5"]);
    check(OPTIONS, "first_big", "[[1, 2]]", expect!["-1"]);
    check(
        OPTIONS,
        "first_list",
        "[[[1], [2, 3], [4, 5]]]",
        expect!["[2,3,0]"],
    );
}

const MAPPED: &str = r#"
doubled : (o : Option I64) -> Option I64
doubled o = option_map (\x -> x * 2) o
or_own : (o : Option I64) -> (d : I64) -> I64
or_own o d = unwrap_or (option_map (\d -> d * 2) o) d
constant : (o : Option I64) -> I64
constant o = unwrap_or (option_map (\_ -> 1) o) (-1)
eager : (o : Option I64) -> (d : I64) -> I64
eager o d = unwrap_or (option_map (\x -> x + 1) o) (10 / d)
failing : (o : Option I64) -> (d : I64) -> Option I64
failing o d = option_map (\x -> x / d) o
failing_or : (o : Option I64) -> (d : I64) -> I64
failing_or o d = unwrap_or (option_map (\x -> x / d) o) 0
inc : (x : I64) -> I64
inc x = x + 1
named : (o : Option I64) -> I64
named o = unwrap_or (option_map inc o) 0
ten_over : (x : I64) -> I64
ten_over x = 10 / x
own_map : (o : Option I64) -> I64
own_map o =
  let option_map f p = Some 7 in
  unwrap_or (option_map (\x -> x) o) 1
tail_or : (o : Option I64) -> I64
tail_or o = unwrap_or (option_map (\x -> ten_over x) o) 0
"#;

/// `option_map` given a lambda literal is the match it means, the lambda's
/// body run in the caller's frame (a failure in it names no `(lambda)`),
/// and under `unwrap_or` with a literal or local default builds no
/// `Option`: the lambda's parameter may shadow the default's name, a
/// default that can fail is still evaluated as the call evaluates it, a
/// call ending the body is a tail call of the caller's, as in the match
/// written out, and a named function, or a local `option_map`, keeps the
/// call.
#[test]
fn option_map_given_a_lambda_is_the_match_it_means() {
    let some = |x: i64| format!(r#"[{{"tag":"Some","value":{x}}}, 2]"#);
    let none = r#"[{"tag":"None"}, 2]"#;
    check(
        MAPPED,
        "doubled",
        r#"[{"tag":"Some","value":3}]"#,
        expect![[r#"{"tag":"Some","value":6}"#]],
    );
    check(
        MAPPED,
        "doubled",
        r#"[{"tag":"None"}]"#,
        expect![[r#"{"tag":"None"}"#]],
    );
    check(MAPPED, "or_own", &some(3), expect!["6"]);
    check(MAPPED, "or_own", none, expect!["2"]);
    check(
        MAPPED,
        "constant",
        r#"[{"tag":"Some","value":3}]"#,
        expect!["1"],
    );
    check(MAPPED, "constant", r#"[{"tag":"None"}]"#, expect!["-1"]);
    check(MAPPED, "eager", &some(3), expect!["4"]);
    check(
        MAPPED,
        "eager",
        r#"[{"tag":"Some","value":3}, 0]"#,
        expect!["panic: runtime-panic @9:52 division by zero [#0 in eager]"],
    );
    check(
        MAPPED,
        "failing",
        r#"[{"tag":"Some","value":3}, 0]"#,
        expect!["panic: runtime-panic @11:33 division by zero [#0 in failing]"],
    );
    check(
        MAPPED,
        "failing",
        r#"[{"tag":"None"}, 0]"#,
        expect![[r#"{"tag":"None"}"#]],
    );
    check(
        MAPPED,
        "failing_or",
        r#"[{"tag":"Some","value":3}, 0]"#,
        expect!["panic: runtime-panic @13:47 division by zero [#0 in failing_or]"],
    );
    check(
        MAPPED,
        "own_map",
        r#"[{"tag":"Some","value":3}]"#,
        expect!["7"],
    );
    check(
        MAPPED,
        "tail_or",
        r#"[{"tag":"Some","value":0}]"#,
        expect!["panic: runtime-panic @19:14 division by zero [#0 in ten_over]"],
    );
    check(
        MAPPED,
        "named",
        r#"[{"tag":"Some","value":3}]"#,
        expect!["4"],
    );
}

const TEXT: &str = r#"
pieces : (s : Utf8) -> (List Utf8, List Utf8, List Utf8, Utf8, Utf8, List Utf8)
pieces s = (split s " ", split s "é ", split s "", str_slice s 3 15, trim ("  " ++ s ++ "\n"), lines s)
joined : (words : List Utf8) -> Utf8
joined words = fold (\acc w -> acc ++ w ++ ",") "" words
counts : (words : List Utf8) -> List (Utf8, I64)
counts words = map_to_list (fold (\m w -> map_insert w (unwrap_or (map_get w m) 0 + 1) m) map_empty words)
"#;

/// Strings cut from a text (inline when short, views of it when longer),
/// grown in place, and used as map keys read as the bytes they hold.
#[test]
fn string_pieces_and_growth_keep_their_meaning() {
    check(
        TEXT,
        "pieces",
        r#"["déjà vu, a rather longish café éclair\nsecond line"]"#,
        expect![[
            r#"[["déjà","vu,","a","rather","longish","café","éclair\nsecond","line"],["déjà vu, a rather longish caf","éclair\nsecond line"],["déjà vu, a rather longish café éclair\nsecond line"],"à vu, a rath","déjà vu, a rather longish café éclair\nsecond line",["déjà vu, a rather longish café éclair","second line"]]"#
        ]],
    );
    check(
        TEXT,
        "joined",
        r#"[["one", "two", "a considerably longer word", ""]]"#,
        expect![[r#""one,two,a considerably longer word,,""#]],
    );
    // Equal keys meet whatever holds their bytes (a short literal, a long
    // piece, a copy); the entries list in key order.
    check(
        TEXT,
        "counts",
        r#"[["word", "a considerably longer word", "word", "a considerably longer word", "zz", "a"]]"#,
        expect![[r#"[["a",1],["a considerably longer word",2],["word",2],["zz",1]]"#]],
    );
}

#[test]
fn programs_are_shareable_and_worlds_movable() {
    fn shareable<T: Send + Sync>() {}
    fn movable<T: Send>() {}
    shareable::<Program>();
    movable::<World>();
    movable::<RunError>();
}

const LOCAL_LITERAL: &str = r#"
ops : (n : I64) -> (I64, I64, I64, I64, I64, Bool, Bool, Bool, Bool, Bool, Bool)
ops n = (n + 1, n - 1, n * 3, n / 2, n % 2, n == 0, n != 0, n < 2, n <= 2, n > 2, n >= 2)
sign : (n : I64) -> I64
sign n = if n < 0 then 0 - 1 else if n == 0 then 0 else 1
halve : (n : I64) -> I64
halve n = n / 0
bump : (u : U64) -> U64
bump u = u + 1
below : (x : F64) -> (Bool, Bool)
below x = (x < 2, if x < 2 then true else false)
fib : (n : I64) -> I64
fib n = if n < 2 then n else fib (n - 1) + fib (n - 2)
"#;

/// `local <op> literal` is evaluated by a fused instruction with an `I64`
/// fast path: its results, wrapping, panics and their locations must be the
/// general operators' exactly.
#[test]
fn fused_local_literal_operators_agree_with_the_general_path() {
    check(
        LOCAL_LITERAL,
        "ops",
        "[7]",
        expect![["[8,6,21,3,1,false,true,false,false,true,true]"]],
    );
    check(
        LOCAL_LITERAL,
        "ops",
        "[9223372036854775807]",
        expect![[
            "[-9223372036854775808,9223372036854775806,9223372036854775805,4611686018427387903,1,false,true,false,false,true,true]"
        ]],
    );
    check(
        LOCAL_LITERAL,
        "ops",
        "[-9223372036854775808]",
        expect![[
            "[-9223372036854775807,9223372036854775807,-9223372036854775808,-4611686018427387904,0,false,true,true,true,false,false]"
        ]],
    );
    check(LOCAL_LITERAL, "sign", "[-5]", expect![["-1"]]);
    check(LOCAL_LITERAL, "sign", "[0]", expect![["0"]]);
    check(LOCAL_LITERAL, "sign", "[5]", expect![["1"]]);
    check(LOCAL_LITERAL, "fib", "[20]", expect![["6765"]]);
    check(
        LOCAL_LITERAL,
        "halve",
        "[4]",
        expect![["panic: runtime-panic @7:11 division by zero [#0 in halve]"]],
    );
    // Not an `I64` local: the general operator decides (here, a type error
    // located at the operator).
    check(
        LOCAL_LITERAL,
        "bump",
        "[1]",
        expect![[
            "panic: runtime-type-error @9:10 operator Add does not apply to U64 and I64 [#0 in bump]"
        ]],
    );
    check(LOCAL_LITERAL, "below", "[1.5]", expect![["[false,false]"]]);
}

/// Predicates that compare their argument, or its length, with a constant
/// are decided without a call (machine.rs, `Comparison`); each must answer
/// as the same test
/// written so that it is called (a captured constant), on every kind of
/// element and on both sides of the constant.
const COMPARED_WITH_A_CONSTANT: &str = r#"
words : (text : Utf8) -> List Utf8
words text = filter (\w -> w != "") (split text " ")

words_called : (text : Utf8) -> List Utf8
words_called text = let empty = "" in filter (\w -> w != empty) (split text " ")

blanks : (text : Utf8) -> I64
blanks text = len (filter (\w -> "" == w) (split text " "))

blanks_called : (text : Utf8) -> I64
blanks_called text = let empty = "" in len (filter (\w -> empty == w) (split text " "))

numbers : (xs : List I64) -> (List I64, Bool, Bool, Option I64, List I64)
numbers xs = (filter (\n -> n > 2) xs, any (\n -> n == 3) xs, all (\n -> n <= 4) xs, find (\n -> n >= 3) xs, filter (\n -> n != 1) xs)

numbers_called : (xs : List I64) -> (List I64, Bool, Bool, Option I64, List I64)
numbers_called xs = let (two, three, four, one) = (2, 3, 4, 1) in (filter (\n -> n > two) xs, any (\n -> n == three) xs, all (\n -> n <= four) xs, find (\n -> n >= three) xs, filter (\n -> n != one) xs)

pairs : (xs : List (List I64)) -> List (List I64)
pairs xs = filter (\p -> p == [1, 2]) xs

long_words : (text : Utf8) -> List Utf8
long_words text = filter (\w -> str_len w > 1) (split text " ")

long_words_called : (text : Utf8) -> List Utf8
long_words_called text = let one = 1 in filter (\w -> str_len w > one) (split text " ")

lengths : (xs : List (List I64)) -> (List (List I64), Bool, Bool)
lengths xs = (filter (\l -> len l >= 2) xs, any (\l -> len l == 0) xs, all (\l -> len l < 3) xs)

lengths_called : (xs : List (List I64)) -> (List (List I64), Bool, Bool)
lengths_called xs = let (two, zero, three) = (2, 0, 3) in (filter (\l -> len l >= two) xs, any (\l -> len l == zero) xs, all (\l -> len l < three) xs)
"#;

/// Runs two definitions of `text` on each of `inputs` and asserts they answer alike.
#[track_caller]
fn assert_run_alike(text: &str, (one, other): (&str, &str), inputs: &[&str]) {
    for input in inputs {
        assert_eq!(
            run(text, one, input),
            run(text, other, input),
            "{one} against {other} on {input}"
        );
    }
}

#[test]
fn predicates_comparing_with_a_constant_answer_as_when_called() {
    let texts = ["[\"  a b  cc  \"]", "[\" \"]", "[\"\"]", "[\"one two\"]"];
    assert_run_alike(COMPARED_WITH_A_CONSTANT, ("words", "words_called"), &texts);
    assert_run_alike(
        COMPARED_WITH_A_CONSTANT,
        ("blanks", "blanks_called"),
        &texts,
    );
    let lists = ["[[]]", "[[1, 5, 3, 2, 4]]", "[[9, 8]]", "[[1, 1]]"];
    assert_run_alike(
        COMPARED_WITH_A_CONSTANT,
        ("numbers", "numbers_called"),
        &lists,
    );
    let texts = ["[\"é ab c déjà\"]", "[\" \"]", "[\"éé\"]"];
    assert_run_alike(
        COMPARED_WITH_A_CONSTANT,
        ("long_words", "long_words_called"),
        &texts,
    );
    let nested = ["[[]]", "[[[], [1], [1, 2], [1, 2, 3]]]", "[[[1, 2]]]"];
    assert_run_alike(
        COMPARED_WITH_A_CONSTANT,
        ("lengths", "lengths_called"),
        &nested,
    );
    // Characters, not bytes: `é` is one.
    check(
        COMPARED_WITH_A_CONSTANT,
        "long_words",
        r#"["é ab c déjà"]"#,
        expect![[r#"["ab","déjà"]"#]],
    );
    check(
        COMPARED_WITH_A_CONSTANT,
        "lengths",
        "[[[], [1], [1, 2], [1, 2, 3]]]",
        expect!["[[[1,2],[1,2,3]],true,false]"],
    );
    check(
        COMPARED_WITH_A_CONSTANT,
        "words",
        r#"["  a b  cc  "]"#,
        expect![[r#"["a","b","cc"]"#]],
    );
    check(
        COMPARED_WITH_A_CONSTANT,
        "numbers",
        "[[1, 5, 3, 2, 4]]",
        expect![[r#"[[5,3,4],true,false,{"tag":"Some","value":5},[5,3,2,4]]"#]],
    );
    check(
        COMPARED_WITH_A_CONSTANT,
        "pairs",
        "[[[1, 2], [2, 1], [1, 2]]]",
        expect![["[[1,2],[1,2]]"]],
    );
}

/// `concat (map f xs)` runs fused (builtins.rs, `FUSED_CONCAT_MAP`): the
/// same lists in the same order as concatenating the mapped list, whether
/// `f` makes a fresh list, hands back one it shares, or an empty one.
const CONCAT_MAP: &str = r#"
fresh : (xs : List I64) -> List I64
fresh xs = concat (map (\x -> [x, x * 10]) xs)

fresh_apart : (xs : List I64) -> List I64
fresh_apart xs = let mapped = map (\x -> [x, x * 10]) xs in concat mapped

shared : (xs : List I64) -> (List I64, List I64)
shared xs = let ys = [7, 8] in (concat (map (\x -> if x > 1 then ys else []) xs), ys)

words : (text : Utf8) -> List Utf8
words text = concat (map (\line -> split line " ") (lines text))
"#;

#[test]
fn a_concatenated_map_is_the_concatenation_of_the_mapped_list() {
    assert_run_alike(
        CONCAT_MAP,
        ("fresh", "fresh_apart"),
        &["[[]]", "[[1]]", "[[3, 1, 2]]"],
    );
    check(
        CONCAT_MAP,
        "fresh",
        "[[3, 1, 2]]",
        expect![["[3,30,1,10,2,20]"]],
    );
    check(
        CONCAT_MAP,
        "shared",
        "[[1, 2, 3]]",
        expect![["[[7,8,7,8],[7,8]]"]],
    );
    check(
        CONCAT_MAP,
        "words",
        r#"["a b\n\ncc d"]"#,
        expect![[r#"["a","b","","cc","d"]"#]],
    );
}
