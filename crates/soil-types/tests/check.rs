//! Goldens of the §8.4 document (and diagnostics) for small inline programs.

mod support;

use expect_test::expect;
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
        effect-not-declared 8:17 effect `Panic` is not declared [declared row: {}]
        effect-not-declared 11:15 effect `Panic` is not declared [declared row: {}]
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
