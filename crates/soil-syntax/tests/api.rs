//! The public entry points on small inputs: canonical layout, fragments,
//! predicates, spans and error recovery.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use expect_test::{Expect, expect};
use soil_syntax::ast::{ExprKind, Item, TypeKind};
use soil_syntax::{
    hash_form_item, parse_expr, parse_file, parse_predicate, parse_signature, parse_type,
    parse_type_decl, print_expr, print_file, print_type,
};

#[track_caller]
fn check_print(input: &str, expect: Expect) {
    let (file, diagnostics) = parse_file(input);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    expect.assert_eq(&print_file(&file));
}

/// Renders diagnostics as `code line:col message`, one per line.
fn render(diagnostics: &[trellis_diag::Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| {
            let span = d.span.expect("span");
            format!(
                "{} {}:{} {}\n",
                d.code, span.start.line, span.start.column, d.message
            )
        })
        .collect()
}

#[track_caller]
fn check_errors(input: &str, expect: Expect) {
    let (_, diagnostics) = parse_file(input);
    expect.assert_eq(&render(&diagnostics));
}

#[test]
fn layout_of_items() {
    check_print(
        "type Tree a = Leaf | Node { left : Tree a, value : a, right : Tree a }\n\
         type P = { x : F64, y : F64 }\ntype Fs\ntype Wrap = Wrap (List I64)\n\
         read_file : (fs : Fs) -> (path : Utf8) ->{Fs} Result Utf8 IoError\n\
         map : (f : a ->{e} b) -> (xs : List a) ->{e} List b\n\
         pick : (a -> b, ()) -> ((a, b) -> c) -> c",
        expect![[r#"
            type Tree a =
              | Leaf
              | Node { left : Tree a, value : a, right : Tree a }

            type P = {
              x : F64,
              y : F64
            }

            type Fs

            type Wrap =
              | Wrap (List I64)

            read_file : (fs : Fs) -> (path : Utf8) ->{Fs} Result Utf8 IoError

            map : (f : a ->{e} b) -> (xs : List a) ->{e} List b

            pick : (a -> b, ()) -> ((a, b) -> c) -> c
        "#]],
    );
}

#[test]
fn layout_of_expressions() {
    check_print(
        "f xs = let n = len xs in if n == 0 then None else Some (match xs with | [x, ..] -> x | _ -> 0 end)\n\
         g r = { r with cells = [], line = r.line + 1 }\n\
         h = \\x _ -> -x * (1 - -2) ++ \"a\\n\\u{7}\"\n\
         k = (not a) == b and not (c or d)\n\
         m = m::helper (Row { line = 1, cells }) (Some (-1.5)) ?todo",
        expect![[r#"
            f xs =
              let n = len xs in
              if n == 0 then
                None
              else
                Some (
                  match xs with
                  | [x, ..] -> x
                  | _ -> 0
                  end
                )

            g r = { r with cells = [], line = r.line + 1 }

            h = \x _ -> -x * (1 - -2) ++ "a\n\u{7}"

            k = (not a) == b and not (c or d)

            m = m::helper (Row { line = 1, cells }) (Some (-1.5)) ?todo
        "#]],
    );
}

#[test]
fn operators_associate_as_the_table_says() {
    let show = |text: &str| {
        let (expr, diagnostics) = parse_expr(text);
        assert!(diagnostics.is_empty(), "{diagnostics:#?}");
        print_expr(&expr.expect("expr"))
    };
    // Redundant parentheses vanish; needed ones stay.
    assert_eq!(show("(a - b) - c"), "a - b - c");
    assert_eq!(show("a - (b - c)"), "a - (b - c)");
    assert_eq!(show("(a ++ b) ++ c"), "(a ++ b) ++ c");
    assert_eq!(show("a ++ (b ++ c)"), "a ++ b ++ c");
    assert_eq!(show("(f x) y"), "(f x) y");
    assert_eq!(show("-(f x)"), "-f x");
    assert_eq!(show("-(5 x)"), "-(5 x)");
    assert_eq!(show("- 5"), "-5");
    assert_eq!(show("(a.b).c"), "a.b.c");
    assert_eq!(show("a or b and c"), "a or b and c");
    assert_eq!(show("(a or b) and c"), "(a or b) and c");
    assert_eq!(show("-9223372036854775808"), "-9223372036854775808");
    assert_eq!(
        show("[1.0, 2.5e-3, 1e21, -0.0]"),
        "[1.0, 0.0025, 1e21, -0.0]"
    );
}

#[test]
fn fragments_for_tr_blocks() {
    let (sig, diagnostics) = parse_signature("median : (xs : List F64) ->{Panic} F64");
    assert!(diagnostics.is_empty());
    let sig = sig.expect("signature");
    assert_eq!(sig.name.text, "median");
    let TypeKind::Function(function) = &sig.ty.kind else {
        panic!("a function type")
    };
    assert_eq!(
        function.param_name.as_ref().map(|n| n.text.as_str()),
        Some("xs")
    );
    assert_eq!(function.effects.labels[0].text, "Panic");
    assert_eq!(print_type(&sig.ty), "(xs : List F64) ->{Panic} F64");

    let (decl, diagnostics) = parse_type_decl("type Pair a b = { first : a, second : b }");
    assert!(diagnostics.is_empty());
    assert_eq!(decl.expect("decl").params.len(), 2);

    let (ty, diagnostics) = parse_type("Map Utf8 (List (I64, F64))");
    assert!(diagnostics.is_empty());
    assert_eq!(print_type(&ty.expect("type")), "Map Utf8 (List (I64, F64))");

    let (none, diagnostics) = parse_signature("median = 1");
    assert!(none.is_none());
    expect![[r#"
        unexpected-token 1:1 expected a signature `name : Type`, found `median`
    "#]]
    .assert_eq(&render(&diagnostics));
}

#[test]
fn predicates_allow_implies_and_is_and_nothing_else_does() {
    let (predicate, diagnostics) =
        parse_predicate("len xs > 0 implies result is Ok (Row { line, .. }) and result != Err e");
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    let predicate = predicate.expect("predicate");
    assert!(matches!(predicate.kind, ExprKind::Implies { .. }));
    expect!["len xs > 0 implies result is Ok Row { line, .. } and result != Err e"]
        .assert_eq(&print_expr(&predicate));

    let (_, diagnostics) = parse_expr("a implies b");
    expect![[r#"
        predicate-only-operator 1:3 `implies` is only allowed in predicates (requires, ensures, invariant and property bodies)
    "#]]
    .assert_eq(&render(&diagnostics));
}

#[test]
fn spans_are_byte_ranges_of_the_parsed_text() {
    let text = "f x =\n  g ?gap (x.y)";
    let (file, _) = parse_file(text);
    let Item::Equation(eq) = &file.items[0] else {
        panic!("an equation")
    };
    let ExprKind::App { args, .. } = &eq.body.kind else {
        panic!("an application")
    };
    let slice = |range: trellis_diag::TextRange| &text[range.as_usize_range()];
    assert_eq!(slice(eq.span), text);
    assert_eq!(slice(eq.body.span), "g ?gap (x.y)");
    assert_eq!(slice(args[0].span), "?gap");
    let ExprKind::Hole(name) = &args[0].kind else {
        panic!("a hole")
    };
    assert_eq!(slice(name.span), "gap");
    assert_eq!(slice(args[1].span), "(x.y)");
}

#[test]
fn one_error_per_broken_item_and_the_rest_still_parse() {
    let text = "a = (1 +\n\nb = 2\n\nc x = x ! 1\n\nd = [1, 2\ne = 3\n";
    let (file, diagnostics) = parse_file(text);
    expect![[r#"
        unclosed-delimiter 1:5 `(` is never closed: the next item begins before its closer
        unexpected-character 5:9 unexpected character '!' (use `not`, or `!=` for inequality)
        unclosed-delimiter 7:5 `[` is never closed: the next item begins before its closer
    "#]]
    .assert_eq(&render(&diagnostics));
    let names: Vec<&str> = file
        .items
        .iter()
        .map(|item| item.name().text.as_str())
        .collect();
    // A bracket left open is blamed where it opens, and the items it swallowed
    // (`b`, `e`) are parsed from the start of their lines.
    assert_eq!(names, ["b", "c", "e"]);
}

#[test]
fn error_messages_name_what_was_expected() {
    check_errors(
        "f = if x then 1\n\ng = match x with | _ -> 1\n\nh = let y = 1\n",
        expect![[r#"
            unexpected-token 3:1 expected `else` (every `if` has an `else`), found `g`
            missing-end 5:1 expected `|` starting another arm or `end` closing the `match`
            unexpected-token 6:1 expected `in` after the `let` value, found the end of the input
        "#]],
    );
    check_errors(
        "type T = { a : I64, a : I64 }\nx = 1.5u\ny = \"\\u{110000}\"\nz = Row { a = 1, a = 2 }\n",
        expect![[r#"
            duplicate-field 1:21 field `a` appears twice
            invalid-number 2:5 the `u` suffix applies only to integers
            invalid-escape 3:6 a unicode escape is `\u{` 1 to 6 hex digits naming a scalar value `}`
            duplicate-field 4:18 field `a` appears twice
        "#]],
    );
}

#[test]
fn hash_form_numbers_local_binders_in_pre_order() {
    let (file, _) = parse_file(
        "f xs limit = let go acc ys = match ys with | [] -> acc | [y, ..rest] -> go (acc + y) rest end in \
         go 0 (filter (\\x -> x < limit) xs) ++ g Row { line }",
    );
    expect![[r#"
        f %0 %1 =
          let %2 %3 %4 =
            match %4 with
            | [] -> %3
            | [%5, ..%6] -> %2 (%3 + %5) %6
            end
          in
          %2 0 (filter (\%7 -> %7 < %1) %0) ++ g (Row { line = line })
    "#]]
    .assert_eq(&hash_form_item(&file.items[0]));
}

#[test]
fn let_binders_are_not_in_scope_in_their_own_value() {
    let (file, _) = parse_file("f x = let x = x + 1 in x");
    assert_eq!(
        hash_form_item(&file.items[0]),
        "f %0 =\n  let %1 = %0 + 1 in\n  %1\n"
    );
}

#[test]
fn fragment_spans_shift_into_file_coordinates() {
    use soil_syntax::ast::Spanned;
    // A `.tr` block starting at byte 100 of its file.
    let (sig, errors) = soil_syntax::parse_signature_errors("f : I64");
    assert!(errors.is_empty());
    let mut sig = sig.expect("signature");
    sig.shift_spans(100);
    assert_eq!((sig.span.start, sig.span.end), (100, 107));
    assert_eq!((sig.name.span.start, sig.ty.span.start), (100, 104));

    let (_, errors) = soil_syntax::parse_signature_errors("f : ->");
    let shifted = errors[0].clone().shifted(100);
    assert_eq!(
        (shifted.code.as_str(), shifted.range.start),
        ("unexpected-token", 104)
    );
}
