//! Local loops: a closure calling itself in tail position reuses its frame
//! in place. Its results and copies must be those of an ordinary call: the
//! loop that passes itself along (held across its arguments), the loop with
//! captures (the general path), and the merge whose `match` reads a list the
//! other branch still needs (bound from the slot, the list left shared); the
//! loops whose arguments trade parameters (`go (k - 1) b a`: one is stored
//! only after the other is read), keep the accumulator's old value (so a
//! push onto it copies), or start from a list held elsewhere (the first
//! push in place copies it once); and the loops whose `[x, ..rest]` rest is
//! passed on without being bound (rests.rs), or bound because a branch reads
//! it twice.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use expect_test::expect;
use soil_eval::{World, program_from_source, with_eval_stack};
use soil_rt::{Value, copied_elements};

const PROGRAMS: &str = r#"
count n = let go k acc = if k <= 0 then acc else go (k - 1) (push acc k) in len (go n [])

reads_itself n = let go k acc = if k <= 0 then acc else go (k - 1) (push acc (len [go, go])) in sum_i64 (go n [])

captures n = let step = 3 in let go k acc = if k <= 0 then acc else go (k - 1) (acc + step) in go n 0

merge n =
  let go out left right =
    match left with
    | [] -> append out right
    | [x, ..left_rest] ->
      match right with
      | [] -> append out left
      | [y, ..right_rest] ->
        if x <= y then go (push out x) left_rest right else go (push out y) left right_rest
      end
    end
  in
  let evens = map (\i -> 2 * i) (range 0 n) in
  let odds = map (\i -> 2 * i + 1) (range 0 n) in
  let merged = go [] evens odds in
  (len merged, sum_i64 (take 4 merged), len evens + len odds)

swap n = let go k a b = if k <= 0 then (a, b) else go (k - 1) b a in go n 1 2

keeps_old n = let go k acc old = if k <= 0 then (len acc, len old) else go (k - 1) (push acc k) acc in go n [] []

starts_shared n =
  let start = [1, 2, 3] in
  let go k acc = if k <= 0 then acc else go (k - 1) (push acc k) in
  let grown = go n start in
  (len grown, len start)

rest_passed n =
  let go acc xs = match xs with
    | [] -> acc
    | [x, ..rest] -> if x < 0 then go acc xs else go (push acc x) rest
    end
  in
  let items = map (\i -> i) (range 0 n) in
  let kept = go [] items in
  (len kept, sum_i64 (take 3 kept), len items)

rest_twice n =
  let go acc xs ys = match xs with
    | [] -> (len acc, len ys, sum_i64 acc)
    | [x, ..rest] -> if x % 2 == 0 then go (push acc (len rest)) rest ys else go (push acc x) rest xs
    end
  in
  go [] (range 0 n) []
"#;

fn runs(n: i64) -> String {
    with_eval_stack(|| {
        let program = match program_from_source(PROGRAMS, Some("loops.soil")) {
            Ok(program) => program,
            Err(errors) => return format!("compile error: {errors:?}"),
        };
        let mut out = String::new();
        for name in [
            "count",
            "reads_itself",
            "captures",
            "merge",
            "swap",
            "keeps_old",
            "starts_shared",
            "rest_passed",
            "rest_twice",
        ] {
            let before = copied_elements();
            let value = program.call(name, vec![Value::I64(n)], &mut World::sandbox());
            let copies = copied_elements() - before;
            let value = match value {
                Ok(v) => format!("{v:?}"),
                Err(e) => format!("{e:?}"),
            };
            out.push_str(&format!("{name}: {value}, {copies} elements copied\n"));
        }
        out
    })
}

#[test]
fn local_loops_run_as_ordinary_calls() {
    expect![[r#"
        count: 1000, 0 elements copied
        reads_itself: 2000, 0 elements copied
        captures: 3000, 0 elements copied
        merge: (2000, 6, 2000), 1 elements copied
        swap: (1, 2), 0 elements copied
        keeps_old: (1000, 999), 499500 elements copied
        starts_shared: (1003, 3), 3 elements copied
        rest_passed: (1000, 3, 1000), 0 elements copied
        rest_twice: (1000, 1, 500000), 0 elements copied
    "#]]
    .assert_eq(&runs(1000));
}
