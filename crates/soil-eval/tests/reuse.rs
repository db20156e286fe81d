//! In-place updates, observed without a clock: soil-rt counts the elements
//! list and map updates (`push`, `++`, `map_insert`) copy. An accumulator
//! threaded through tuple, record and variant patterns, branches that drop it,
//! and prepends must copy nothing of the accumulator: O(n) elements for n steps
//! (before reuse through patterns and amortized prepends, O(n²)); a value that
//! really is shared still is copied, and keeps its old contents.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use expect_test::{Expect, expect};
use soil_eval::{World, program_from_source, with_eval_stack};
use soil_rt::{Value, copied_elements};

const PROGRAMS: &str = r#"
type S = { items : List I64, count : I64 }

tuple_let n = let (acc, k) = fold (\state x -> let (acc, k) = state in (push acc x, k + 1)) ([], 0) (range 0 n) in len acc + k

tuple_match n = let (acc, k) = fold (\state x -> match state with | (acc, k) -> (push acc x, k + 1) end) ([], 0) (range 0 n) in len acc + k

tuple_branch n = let (acc, k) = fold (\state x -> let (acc, k) = state in if k < 0 then state else (push acc x, k + 1)) ([], 0) (range 0 n) in len acc + k

tuple_guard n = let (acc, k) = fold (\state x -> match state with | (acc, k) if k < 0 -> state | (acc, k) -> (push acc x, k + 1) end) ([], 0) (range 0 n) in len acc + k

record_pattern n = (fold (\st x -> let S { items, count } = st in if count < 0 then st else S { items = push items x, count = count + 1 }) (S { items = [], count = 0 }) (range 0 n)).count

record_field n = len (fold (\st x -> let c = st.count in S { items = push st.items x, count = c + 1 }) (S { items = [], count = 0 }) (range 0 n)).items

variant n = match fold (\r x -> match r with | Ok acc -> Ok (push acc x) | Err e -> Err e end) (Ok []) (range 0 n) with | Ok acc -> len acc | Err e -> e end

map_in_tuple n = let (m, k) = fold (\state x -> let (m, k) = state in if k < 0 then state else (map_insert x k m, k + 1)) (map_empty, 0) (range 0 n) in map_size m

prepend n = sum_i64 (take 3 (fold (\acc x -> [x] ++ acc) [] (range 0 n)))

append_builtin n = len (fold (\acc x -> append acc [x]) [] (range 0 n))

head_of_runs n = len (unwrap_or (first (fold (\runs x -> match runs with | [r, ..rest] -> [push r x] ++ rest | [] -> [[x]] end) [[]] (range 0 n))) [])

record_update n = len (fold (\st x -> { st with items = push st.items x }) (S { items = [], count = 0 }) (range 0 n)).items

shared n = let (acc, old) = fold (\pair x -> let (acc, old) = pair in (push acc x, acc)) ([], []) (range 0 n) in len acc - len old
"#;

/// Each definition's value on `n` and the copies its run made.
fn runs(n: i64) -> String {
    with_eval_stack(|| {
        let program = match program_from_source(PROGRAMS, Some("reuse.soil")) {
            Ok(program) => program,
            Err(errors) => return format!("compile error: {errors:?}"),
        };
        let names = [
            "tuple_let",
            "tuple_match",
            "tuple_branch",
            "tuple_guard",
            "record_pattern",
            "record_field",
            "variant",
            "map_in_tuple",
            "prepend",
            "append_builtin",
            "head_of_runs",
            "record_update",
            "shared",
        ];
        let mut out = String::new();
        for name in names {
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

fn check(n: i64, expect: Expect) {
    expect.assert_eq(&runs(n));
}

#[test]
fn accumulators_taken_apart_by_patterns_are_updated_in_place() {
    check(
        2000,
        expect![[r#"
            tuple_let: 4000, 0 elements copied
            tuple_match: 4000, 0 elements copied
            tuple_branch: 4000, 0 elements copied
            tuple_guard: 4000, 0 elements copied
            record_pattern: 2000, 0 elements copied
            record_field: 2000, 0 elements copied
            variant: 2000, 0 elements copied
            map_in_tuple: 2000, 0 elements copied
            prepend: 5994, 1999 elements copied
            append_builtin: 2000, 1999 elements copied
            head_of_runs: 2000, 0 elements copied
            record_update: 2000, 0 elements copied
            shared: 1, 1999000 elements copied
        "#]],
    );
}

const SHARING: &str = r#"
type S = { items : List I64, count : I64 }

tuple_kept = let t = ([1], 2) in let (a, b) = t in (push a 9, t)

field_kept = let r = S { items = [1], count = 0 } in (push r.items 2, r.items)

update_kept = let r = S { items = [1], count = 0 } in ({ r with count = 1 }, push r.items 3, r)

head_kept = let xs = [[1], [2]] in match xs with | [a, ..rest] -> (push a 5, rest, xs) | [] -> ([], [], xs) end

update_self_kept = let r = S { items = [1], count = 0 } in ({ r with items = push r.items 2 }, r)

update_read_whole = let r = S { items = [1], count = 0 } in { r with items = push r.items (str_len (show r)) }

update_captured = let r = S { items = [1], count = 2 } in { r with items = map (\x -> x + r.count) (push r.items 5) }

update_read_twice = let r = S { items = [1], count = 0 } in { r with items = push r.items r.count, count = len r.items }

captured = let acc = [1] in let f = \x -> push acc x in (f 2, f 3, acc)

guard_falls_through = match ([1], 0) with | (a, k) if k > 0 -> push a k | (a, k) -> push a 7 end

variant_kept = let o = Some [1] in match o with | Some xs -> (push xs 2, o) | None -> ([], o) end

prepend_shared = let base = [2, 3] in let a = [1] ++ base in let b = [0] ++ base in (a, b, base)

prepend_views = let xs = [0] ++ ([1] ++ range 2 5) in (xs, drop 2 xs, push (take 2 xs) 9, [7] ++ drop 3 xs, xs)

queue = fold (\q x -> push (drop 1 q) x) [0, 0, 0] (range 1 100)
"#;

#[test]
fn moving_parts_out_never_changes_a_value_still_held() {
    let out = with_eval_stack(|| {
        let program = match program_from_source(SHARING, Some("sharing.soil")) {
            Ok(program) => program,
            Err(errors) => return format!("compile error: {errors:?}"),
        };
        let names = [
            "tuple_kept",
            "field_kept",
            "update_kept",
            "update_self_kept",
            "update_read_whole",
            "update_captured",
            "update_read_twice",
            "head_kept",
            "captured",
            "guard_falls_through",
            "variant_kept",
            "prepend_shared",
            "prepend_views",
            "queue",
        ];
        let mut out = String::new();
        for name in names {
            let value = program.call(name, vec![], &mut World::sandbox());
            let value = match value {
                Ok(v) => format!("{v:?}"),
                Err(e) => format!("{e:?}"),
            };
            out.push_str(&format!("{name}: {value}\n"));
        }
        out
    });
    expect![[r#"
        tuple_kept: ([1, 9], ([1], 2))
        field_kept: ([1, 2], [1])
        update_kept: (#3[[1], 1], [1, 3], #3[[1], 0])
        update_self_kept: (#3[[1, 2], 0], #3[[1], 0])
        update_read_whole: #3[[1, 23], 0]
        update_captured: #3[[3, 7], 2]
        update_read_twice: #3[[1, 0], 1]
        head_kept: ([1, 5], [[2]], [[1], [2]])
        captured: ([1, 2], [1, 3], [1])
        guard_falls_through: [1, 7]
        variant_kept: ([1, 2], %0.1([1]))
        prepend_shared: ([1, 2, 3], [0, 2, 3], [2, 3])
        prepend_views: ([0, 1, 2, 3, 4], [2, 3, 4], [0, 1, 9], [7, 3, 4], [0, 1, 2, 3, 4])
        queue: [97, 98, 99]
    "#]]
    .assert_eq(&out);
}
