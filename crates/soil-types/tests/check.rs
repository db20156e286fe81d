//! Goldens of the §8.4 document (and diagnostics) for small inline programs.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use expect_test::expect;
use soil_types::{Declaration, check_program};
use support::check;

#[test]
fn median_with_panic_row_and_clauses() {
    let out = check(
        r#"
median : (xs : List F64) ->{Panic} F64
-- requires non_empty: len xs > 0
-- ensures bounded: result >= minimum xs and result <= maximum xs
median xs =
  let sorted = xs in
  let n = len sorted in
  if n % 2 == 1 then at sorted (n / 2)
  else (at sorted (n / 2 - 1) + at sorted (n / 2)) / 2.0
"#,
    );
    expect![[r#"
        {"definition":"m::median","signature":"(xs : List F64) ->{Panic} F64","row":["Panic"],"checks":{"clauses":[{"kind":"requires","label":"non_empty","assurance":"runtime"},{"kind":"ensures","label":"bounded","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
    "#]].assert_eq(&out);
}

#[test]
fn records_sums_and_structural_recursion() {
    let out = check(
        r#"
type Row = { line : I64, cells : List F64 }
type ParseError = BadCell { index : I64, raw : Utf8 } | EmptyLine | BadArity I64
type Tree a = Leaf | Node { left : Tree a, value : a, right : Tree a }

total : (xs : List F64) -> F64
total xs = match xs with
  | [] -> 0.0
  | [x, ..rest] -> x + total rest
  end

size : (t : Tree a) -> I64
size t = match t with
  | Leaf -> 0
  | Node { left, right, .. } -> size left + 1 + size right
  end

describe : (e : ParseError) -> Utf8
describe e = match e with
  | BadCell { index, raw } -> "cell " ++ show index ++ ": " ++ raw
  | EmptyLine -> "empty"
  | BadArity n -> "arity " ++ show n
  end

bump : (r : Row) -> Row
bump r = { r with line = r.line + 1, cells = push r.cells 0.0 }

make : (line : I64) -> Row
make line = let cells = [] in Row { line, cells }

countdown : (n : I64) -> List I64
countdown n = if n <= 0 then [] else push (countdown (n - 1)) n

sum_with : (xs : List I64) -> I64
sum_with xs =
  let go acc ys = match ys with
    | [] -> acc
    | [y, ..more] -> go (acc + y) more
    end
  in go 0 xs
"#,
    );
    expect![[r#"
        {"definition":"m::total","signature":"(xs : List F64) -> F64","row":[],"checks":{"clauses":[],"termination":"structural","holes":[]}}
        {"definition":"m::size","signature":"(t : Tree a) -> I64","row":[],"checks":{"clauses":[],"termination":"structural","holes":[]}}
        {"definition":"m::describe","signature":"(e : ParseError) -> Utf8","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"m::bump","signature":"(r : Row) -> Row","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"m::make","signature":"(line : I64) -> Row","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"m::countdown","signature":"(n : I64) -> List I64","row":[],"checks":{"clauses":[],"termination":"structural","holes":[]}}
        {"definition":"m::sum_with","signature":"(xs : List I64) -> I64","row":[],"checks":{"clauses":[],"termination":"structural","holes":[]}}
    "#]].assert_eq(&out);
}

#[test]
fn higher_order_effects_and_subsumption() {
    let out = check(
        r#"
halves : (xs : List I64) -> List I64
halves xs = map (\x -> x / 2) xs

ratios : (xs : List I64) -> (d : I64) ->{Panic} List I64
ratios xs d = map (\x -> x / d) xs

lengths : (xss : List (List a)) -> List I64
lengths xss = map len xss

apply : (f : a ->{e} b) -> (x : a) ->{e} b
apply f x = f x

read_all : (fs : Fs) -> (paths : List Utf8) ->{Fs} List (Result Utf8 IoError)
read_all fs paths = map (\p -> read_text fs p) paths

pick : (xs : List F64) ->{Panic} F64
pick xs = apply (\ys -> at ys 0) xs

pure_first : (xs : List I64) ->{Panic} Option I64
pure_first xs = apply first xs

polymorphic_let : (n : I64) -> (I64, Utf8)
polymorphic_let n = let id = \x -> x in (id n, id "s")
"#,
    );
    expect![[r#"
        {"definition":"m::halves","signature":"(xs : List I64) -> List I64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"m::ratios","signature":"(xs : List I64) -> (d : I64) ->{Panic} List I64","row":["Panic"],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"m::lengths","signature":"(xss : List (List a)) -> List I64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"m::apply","signature":"(f : a ->{e} b) -> (x : a) ->{e} b","row":["e"],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"m::read_all","signature":"(fs : Fs) -> (paths : List Utf8) ->{Fs} List (Result Utf8 IoError)","row":["Fs"],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"m::pick","signature":"(xs : List F64) ->{Panic} F64","row":["Panic"],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"m::pure_first","signature":"(xs : List I64) ->{Panic} Option I64","row":["Panic"],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"m::polymorphic_let","signature":"(n : I64) -> (I64, Utf8)","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
    "#]].assert_eq(&out);
}

#[test]
fn holes_report_goal_types_and_scope() {
    let out = check(
        r#"
mean : (xs : List F64) ->{Panic} F64
mean xs =
  let n = len xs in
  if n == 0 then ?empty_case else sum_f64 xs / ?denominator

pairs : (xs : List a) -> List (a, I64)
pairs xs = map (\x -> (x, ?count)) xs
"#,
    );
    expect![[r#"
        {"definition":"m::mean","signature":"(xs : List F64) ->{Panic} F64","row":["Panic"],"checks":{"clauses":[],"termination":"non-recursive","holes":[{"name":"empty_case","goal":"F64","scope":[{"name":"xs","type":"List F64"},{"name":"n","type":"I64"}]},{"name":"denominator","goal":"F64","scope":[{"name":"xs","type":"List F64"},{"name":"n","type":"I64"}]}]}}
        {"definition":"m::pairs","signature":"(xs : List a) -> List (a, I64)","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[{"name":"count","goal":"I64","scope":[{"name":"xs","type":"List a"},{"name":"x","type":"a"}]}]}}
    "#]].assert_eq(&out);
}

#[test]
fn type_errors_point_at_the_offending_expression() {
    let out = check(
        r#"
type Row = { line : I64, cells : List F64 }

bad_add : (x : I64) -> I64
bad_add x = x + 1.5

bad_effect : (xs : List F64) -> F64
bad_effect xs = at xs 0

bad_div : (a : I64) -> (b : I64) -> I64
bad_div a b = a / b

missing : (o : Option I64) -> I64
missing o = match o with
  | Some n -> n
  end

redundant : (b : Bool) -> I64
redundant b = match b with
  | _ -> 1
  | true -> 2
  end

bad_row : (line : I64) -> Row
bad_row line = Row { line, colour = 1 }

unknown : (x : I64) -> I64
unknown x = y + x

fun_eq : (f : I64 -> I64) -> Bool
fun_eq f = f == f

merge_sort : (xs : List I64) -> List I64
merge_sort xs = if len xs <= 1 then xs else append (merge_sort (take (len xs / 2) xs)) (merge_sort (drop (len xs / 2) xs))

-- allow: nonstructural-recursion
merge_sort_allowed : (xs : List I64) -> List I64
merge_sort_allowed xs = if len xs <= 1 then xs else merge_sort_allowed (drop 1 xs)

-- ensures not_bool: result + 1
-- requires capable: len (lines "x") > 0
pred : (x : I64) -> I64
pred x = x
"#,
    );
    expect![[r#"
        type-mismatch 5:17 expected `I64`, found `F64` [expected: I64] [found: F64]
        effect-not-declared 8:17 effect `Panic` is not declared (performed by `at`) [declared row: {}] [fix: add ->{Panic} to the signature]
        effect-not-declared 11:15 effect `Panic` is not declared (performed by integer `/`) [declared row: {}] [fix: add ->{Panic} to the signature]
        non-exhaustive-match 14:13 this match does not cover `None` [not matched: None]
        redundant-pattern 21:5 this arm can never match: earlier arms cover it
        missing-field 25:16 `Row` is missing field(s) `cells`
        unknown-field 25:28 `Row` has no field `colour`
        unknown-name 28:13 unknown name `y`
        not-comparable 31:12 `==` cannot compare functions (type `I64 -> I64`)
        nonstructural-recursion 34:52 this recursive call is not on a structurally smaller argument [grant `allow: nonstructural-recursion` in the spec if it terminates]
        nonstructural-recursion 34:88 this recursive call is not on a structurally smaller argument [grant `allow: nonstructural-recursion` in the spec if it terminates]
        {"definition":"m::merge_sort_allowed","signature":"(xs : List I64) -> List I64","row":[],"checks":{"clauses":[],"termination":"allowed: nonstructural-recursion","holes":[]}}
        predicate-not-bool 1:1 a predicate must be Bool, found `I64` [expected: Bool] [found: I64]
    "#]].assert_eq(&out);
}

#[test]
fn effects_cannot_hide_behind_callbacks_or_lets() {
    let out = check(
        r#"
apply_pure : (f : I64 -> I64) -> (x : I64) -> I64
apply_pure f x = f x

lambda_in_map : (xs : List I64) -> List I64
lambda_in_map xs = map (\i -> at xs i) xs

lambda_to_pure_param : (xs : List I64) -> I64
lambda_to_pure_param xs = apply_pure (\i -> at xs i) 0

let_bound : (n : I64) -> I64
let_bound n = let boom = \x -> panic "no" in boom n

late_division : (x : I64) -> I64
late_division x = let d = \a b -> a / b in d x x

float_division_is_pure : (x : F64) -> F64
float_division_is_pure x = let d = \a b -> a / b in d x x

declared_var : (f : I64 ->{e} I64) -> (x : I64) -> I64
declared_var f x = f x

returns_effectful : (xs : List I64) -> I64 ->{Panic} I64
returns_effectful xs = \i -> at xs i

returns_undeclared : (xs : List I64) -> I64 -> I64
returns_undeclared xs = \i -> at xs i
"#,
    );
    expect![[r#"
        {"definition":"m::apply_pure","signature":"(f : I64 -> I64) -> (x : I64) -> I64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        effect-not-declared 6:20 effect `Panic` is not declared (performed by `map`) [declared row: {}] [fix: add ->{Panic} to the signature]
        effect-not-declared 9:45 effect `Panic` is not declared (performed by `at`) [declared row: {}]
        effect-not-declared 12:46 effect `Panic` is not declared (performed by `boom`) [declared row: {}] [fix: add ->{Panic} to the signature]
        effect-not-declared 15:44 effect `Panic` is not declared (performed by `d`) [declared row: {}] [fix: add ->{Panic} to the signature]
        {"definition":"m::float_division_is_pure","signature":"(x : F64) -> F64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        effect-not-declared 21:20 effect `e` is not declared (performed by `f`) [declared row: {}] [fix: add ->{e} to the signature]
        {"definition":"m::returns_effectful","signature":"(xs : List I64) -> I64 ->{Panic} I64","row":["Panic"],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        effect-not-declared 27:31 effect `Panic` is not declared (performed by `at`) [declared row: {}]
    "#]].assert_eq(&out);
}

#[test]
fn unsigned_definitions_are_inferred_and_callers_follow() {
    let out = check(
        r#"
twice f x = f (f x)

double : (n : I64) -> I64
double n = twice (\m -> m * 2) n

early : (n : I64) -> I64
early n = later (n + 0)

later n = n + 1
"#,
    );
    expect![[r#"
        {"definition":"m::twice","signature":"(a ->{e} a) -> a ->{e} a","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"m::double","signature":"(n : I64) -> I64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        callee-order 8:11 `m::later` has no signature and is not checked yet
        {"definition":"m::later","signature":"I64 -> I64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
    "#]].assert_eq(&out);
}

#[test]
fn predicates_see_params_result_is_and_implies() {
    let out = check(
        r#"
-- requires non_empty: len xs > 0 and all (\x -> is_finite x) xs
-- ensures in_range: unwrap_or result 0.0 <= maximum xs
-- ensures found: result is Some _ implies len xs > 0
pick : (xs : List F64) ->{Panic} Option F64
pick xs = first xs

-- ensures positive: result > 0
adder : (x : I64) -> (y : I64) -> I64
adder x = \y -> x + y
"#,
    );
    expect![[r#"
        {"definition":"m::pick","signature":"(xs : List F64) ->{Panic} Option F64","row":["Panic"],"checks":{"clauses":[{"kind":"requires","label":"non_empty","assurance":"runtime"},{"kind":"ensures","label":"in_range","assurance":"runtime"},{"kind":"ensures","label":"found","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
        {"definition":"m::adder","signature":"(x : I64) -> (y : I64) -> I64","row":[],"checks":{"clauses":[{"kind":"ensures","label":"positive","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
    "#]].assert_eq(&out);
}

#[test]
fn termination_recognises_descent_and_rejects_the_rest() {
    let out = check(
        r#"
type Rose = Rose { label : I64, children : List Rose }

fact : (n : I64) -> I64
fact n = if n > 0 then n * fact (n - 1) else 1

fact_guard : (n : I64) -> I64
fact_guard n = match n with
  | _ if 0 < n and n < 100 -> fact_guard (n - 2)
  | _ -> 1
  end

unguarded : (n : I64) -> I64
unguarded n = if n == 0 then 0 else unguarded (n - 1)

zip_sum : (xs : List I64) -> (ys : List I64) -> I64
zip_sum xs ys = match (xs, ys) with
  | ([x, ..xt], [y, ..yt]) -> x + y + zip_sum xt yt
  | _ -> 0
  end

rose_size : (r : Rose) -> I64
rose_size r = match r with
  | Rose { children, .. } -> 1 + sum_i64 (map rose_size children)
  end

even : (n : I64) -> Bool
even n = if n <= 0 then true else odd (n - 1)

odd : (n : I64) -> Bool
odd n = if n <= 0 then false else even (n - 1)
"#,
    );
    expect![[r#"
        {"definition":"m::fact","signature":"(n : I64) -> I64","row":[],"checks":{"clauses":[],"termination":"structural","holes":[]}}
        {"definition":"m::fact_guard","signature":"(n : I64) -> I64","row":[],"checks":{"clauses":[],"termination":"structural","holes":[]}}
        nonstructural-recursion 14:37 this recursive call is not on a structurally smaller argument [grant `allow: nonstructural-recursion` in the spec if it terminates]
        {"definition":"m::zip_sum","signature":"(xs : List I64) -> (ys : List I64) -> I64","row":[],"checks":{"clauses":[],"termination":"structural","holes":[]}}
        nonstructural-recursion 24:47 this recursive call is not on a structurally smaller argument [grant `allow: nonstructural-recursion` in the spec if it terminates]
        nonstructural-recursion 28:35 `m::even` is mutually recursive with another definition [grant `allow: nonstructural-recursion` in the spec if it terminates]
        nonstructural-recursion 31:35 `m::odd` is mutually recursive with another definition [grant `allow: nonstructural-recursion` in the spec if it terminates]
    "#]].assert_eq(&out);
}

#[test]
fn annotations_use_signature_variables_and_fix_ambiguity() {
    let out = check(
        r#"
keep : (xs : List a) -> List a
keep xs = let ys = (xs : List a) in ys

sum_pairs : (n : I64) -> F64
sum_pairs n = let add = \a b -> (a : F64) + b in add 1.0 2.0

wrong : (xs : List a) -> List b
wrong xs = (xs : List b)
"#,
    );
    expect![[r#"
        {"definition":"m::keep","signature":"(xs : List a) -> List a","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"m::sum_pairs","signature":"(n : I64) -> F64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        type-mismatch 9:13 expected `List b`, found `List a` [expected: List b] [found: List a]
    "#]].assert_eq(&out);
}

#[test]
fn missing_patterns_are_named_in_soil_syntax() {
    let out = check(
        r#"
type E = BadCell { index : I64, raw : Utf8 } | EmptyLine | BadArity I64

lists : (xs : List I64) -> I64
lists xs = match xs with
  | [] -> 0
  | [_] -> 1
  end

records : (e : E) -> I64
records e = match e with
  | EmptyLine -> 0
  | BadArity _ -> 1
  end

pairs : (p : (Bool, Option I64)) -> I64
pairs p = match p with
  | (true, _) -> 0
  | (false, None) -> 1
  end

guarded : (n : I64) -> I64
guarded n = match n with
  | 0 -> 0
  | m if m > 0 -> 1
  end

nested : (o : Option (Option Bool)) -> I64
nested o = match o with
  | None -> 0
  | Some None -> 1
  | Some (Some true) -> 2
  end

strings : (s : Utf8) -> I64
strings s = match s with
  | "a" -> 1
  | "a" -> 2
  | _ -> 3
  end
"#,
    );
    expect![[r#"
        non-exhaustive-match 5:12 this match does not cover `[_, _, ..]` [not matched: [_, _, ..]]
        non-exhaustive-match 11:13 this match does not cover `BadCell { .. }` [not matched: BadCell { .. }]
        non-exhaustive-match 17:11 this match does not cover `(false, Some _)` [not matched: (false, Some _)]
        non-exhaustive-match 23:13 this match does not cover `_` [not matched: _]
        non-exhaustive-match 29:12 this match does not cover `Some (Some false)` [not matched: Some (Some false)]
        redundant-pattern 38:5 this arm can never match: earlier arms cover it
    "#]].assert_eq(&out);
}

#[test]
fn local_recursion_carries_its_effects() {
    let out = check(
        r#"
pure_loop : (xs : List I64) -> I64
pure_loop xs =
  let go ys = match ys with
    | [] -> 0
    | [y, ..rest] -> at xs y + go rest
    end
  in go xs

panicky_loop : (xs : List I64) ->{Panic} I64
panicky_loop xs =
  let go ys = match ys with
    | [] -> 0
    | [y, ..rest] -> at xs y + go rest
    end
  in go xs
"#,
    );
    expect![[r#"
        effect-not-declared 8:6 effect `Panic` is not declared (performed by `go`) [declared row: {}] [fix: add ->{Panic} to the signature]
        {"definition":"m::panicky_loop","signature":"(xs : List I64) ->{Panic} I64","row":["Panic"],"checks":{"clauses":[],"termination":"structural","holes":[]}}
    "#]].assert_eq(&out);
}

#[test]
fn tuple_components_of_list_elements_are_subterms() {
    let out = check(
        r#"
type Tree = Tip | Fork (Tree, Tree)

keys : (entries : List (Tree, I64)) -> I64
keys entries = match entries with
  | [] -> 0
  | [(tree, n), ..rest] -> n + depth tree + keys rest
  end

depth : (t : Tree) -> I64
depth t = match t with
  | Tip -> 0
  | Fork (left, right) -> 1 + max (depth left) (depth right)
  end
"#,
    );
    expect![[r#"
        {"definition":"m::keys","signature":"(entries : List (Tree, I64)) -> I64","row":[],"checks":{"clauses":[],"termination":"structural","holes":[]}}
        {"definition":"m::depth","signature":"(t : Tree) -> I64","row":[],"checks":{"clauses":[],"termination":"structural","holes":[]}}
    "#]].assert_eq(&out);
}

#[test]
fn declarations_stand_in_for_bodies_and_report_nothing() {
    let (env, mut program) = support::program(
        "m",
        r#"
callee : (n : I64) -> I64
callee n = "a body that does not check"

broken : (n : Nope) -> I64
broken n = n

caller : (n : I64) -> I64
caller n = callee n + broken n
"#,
    );
    // The first two enter by signature alone: `callee`'s body is not checked, and
    // `broken`'s unknown type is poison, so `caller` reports no follow-on error.
    program.declarations = program
        .definitions
        .drain(..2)
        .map(|definition| Declaration {
            name: definition.name,
            signature: definition.signature.expect("signed"),
        })
        .collect();
    let report = check_program(&env, &program);
    expect![[r#"
        {"definition":"m::caller","signature":"(n : I64) -> I64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
    "#]].assert_eq(&support::render(&report));
}

/// The messages a newcomer meets first say how to repair the mistake: a near
/// name for a misspelled one, a call short of arguments said as such, and an
/// undeclared effect at the operation performing it with the signature to write.
#[test]
fn newcomer_mistakes_carry_their_repair() {
    let out = check(
        r#"
shout : (s : Utf8) -> Utf8
shout s = to_uper s

add : (a : I64) -> (b : I64) -> I64
add a b = a + b

twice : (a : I64) -> I64
twice a = add a

sum3 : (a : I64) -> I64
sum3 a = add3 a

add3 : (a : I64) -> (b : I64) -> (c : I64) -> I64
add3 a b c = a + b + c

half : (xs : List I64) -> I64
half xs = len xs / 2 + at xs 0

mean : (fs : Fs) -> (xs : List I64) ->{Fs} I64
mean fs xs = at xs 0

wrap : (x : I64) -> Option I64
wrap x = Smoe x

same : (x : Utf8) -> Utf88
same x = x
"#,
    );
    expect![[r#"
        unknown-name 3:11 unknown name `to_uper`; did you mean `to_upper`?
        {"definition":"m::add","signature":"(a : I64) -> (b : I64) -> I64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        type-mismatch 9:11 missing an argument: this is a function still waiting for `I64`, where `I64` is expected [expected: I64] [found: I64 -> I64]
        type-mismatch 12:10 missing 2 arguments: this is a function still waiting for `I64`, then `I64`, where `I64` is expected [expected: I64] [found: I64 -> I64 -> I64]
        {"definition":"m::add3","signature":"(a : I64) -> (b : I64) -> (c : I64) -> I64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        effect-not-declared 18:24 effect `Panic` is not declared (performed by `at`) [declared row: {}] [fix: add ->{Panic} to the signature]
        effect-not-declared 21:14 effect `Panic` is not declared (performed by `at`) [declared row: {Fs}] [fix: write ->{Fs, Panic} in the signature]
        unknown-constructor 24:10 unknown constructor `Smoe`; did you mean `Some`?
        unknown-type 26:22 unknown type `Utf88`; did you mean `Utf8`?
    "#]]
    .assert_eq(&out);
}

/// `name_types` reports each name of the observed equation with its type there:
/// binders, locals at their uses, globals instantiated at the use; a definition
/// whose check fails still reports what inference found.
#[test]
fn name_types_are_the_types_at_each_name() {
    let text = "pick : (xs : List F64) -> F64\npick xs =\n  let s = sort_list xs in\n  at s 0\n";
    let (env, program) = support::program("m", text);
    let types: Vec<String> = soil_types::name_types(&env, &program, "m::pick")
        .iter()
        .map(|named| format!("{} : {}", &text[named.span.as_usize_range()], named.ty))
        .collect();
    expect![[r#"
        [
            "xs : List F64",
            "sort_list : List F64 -> List F64",
            "xs : List F64",
            "s : List F64",
            "at : List F64 -> I64 ->{Panic} F64",
            "s : List F64",
        ]
    "#]]
    .assert_debug_eq(&types);
    let broken = "bad : (x : I64) -> I64\nbad x = let y = x in y ++ \"s\"\n";
    let (env, program) = support::program("m", broken);
    assert!(
        !soil_types::name_types(&env, &program, "m::bad").is_empty(),
        "a failing check still reports what it inferred"
    );
    assert!(soil_types::name_types(&env, &program, "m::other").is_empty());
}
