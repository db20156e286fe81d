//! Hostile input for the parser (issue 41): a bracket left open costs one problem
//! and no items, a parse reports at most `MAX_PROBLEMS` problems and then one
//! counting the rest, long flat lists that nest in meaning are bounded, and no
//! shape of `common/hostile.rs` yields more than the cap allows.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

#[path = "common/hostile.rs"]
mod hostile;

use hostile::Shape;
use soil_syntax::ast::Item;
use soil_syntax::{MAX_PROBLEMS, parse_file};
use trellis_diag::Diagnostic;

fn codes(diagnostics: &[Diagnostic]) -> Vec<&str> {
    diagnostics.iter().map(|d| d.code.as_str()).collect()
}

fn at(diagnostic: &Diagnostic) -> (u32, u32) {
    let span = diagnostic.span.expect("parse problems are located");
    (span.start.line, span.start.column)
}

fn item_names(text: &str) -> Vec<String> {
    parse_file(text)
        .0
        .items
        .iter()
        .map(|item| item.name().text.clone())
        .collect()
}

#[test]
fn an_unclosed_parenthesis_at_the_end_of_65_kb_is_one_problem() {
    let text = Shape::UnclosedParen.text(65_000);
    let (file, diagnostics) = parse_file(&text);
    // The first stray token that cannot continue the parenthesis (a `]`) is
    // the one problem; nothing after it in the item is reported.
    assert_eq!(codes(&diagnostics), ["unexpected-token"]);
    assert!(
        diagnostics[0].message.ends_with("found `]`"),
        "{}",
        diagnostics[0].message
    );
    let opener = text.find("broken x = (").expect("the broken item");
    let line = text[..opener].lines().count() as u32 + 1;
    assert_eq!(at(&diagnostics[0]), (line, 36));
    // Every valid definition before it is kept: a signature and an equation each.
    let definitions = text.matches(" : (x : I64) -> I64\n").count();
    assert_eq!(file.items.len(), 2 * definitions);
}

#[test]
fn a_bracket_left_open_keeps_every_item_after_it() {
    let text = Shape::UnclosedThenDefinitions.text(65_000);
    let (file, diagnostics) = parse_file(&text);
    assert_eq!(codes(&diagnostics), ["unclosed-delimiter"]);
    assert_eq!(at(&diagnostics[0]), (3, 12));
    assert!(
        diagnostics[0].message.contains("the next item begins"),
        "{}",
        diagnostics[0].message
    );
    // The broken equation is dropped; its signature and everything after stay.
    let definitions = text.matches(" : (x : I64) -> I64\n").count();
    assert_eq!(file.items.len(), 2 * definitions - 1);
}

/// Opening a parenthesis in any one definition of a file costs that definition
/// and nothing else, whichever it is.
#[test]
fn one_missing_closer_anywhere_costs_one_problem_and_one_item() {
    let mut valid = String::new();
    hostile::definitions(&mut valid, 2_000);
    let names = item_names(&valid);
    let equations: Vec<usize> = valid.match_indices(" x =\n").map(|(i, _)| i).collect();
    assert!(equations.len() > 10);
    for (k, &at_equals) in equations.iter().enumerate() {
        let body = at_equals + " x =\n".len();
        let broken = format!("{}  ({}", &valid[..body], &valid[body..]);
        let (_, diagnostics) = parse_file(&broken);
        assert_eq!(
            codes(&diagnostics),
            ["unclosed-delimiter"],
            "definition {k}"
        );
        let mut kept = item_names(&broken);
        let mut expected = names.clone();
        // The k-th equation (after its signature) is the one lost.
        expected.remove(2 * k + 1);
        kept.sort();
        expected.sort();
        assert_eq!(kept, expected, "definition {k}");
    }
}

#[test]
fn a_bracket_that_closes_after_a_column_1_line_is_no_boundary() {
    // A record update whose field starts a line at column 1 looks like an item
    // (`a = 1`), but the brace closes: one valid item, no problem.
    let text = "bump r = { r with\na = 1 }\n\nnext x = x\n";
    let (file, diagnostics) = parse_file(text);
    assert_eq!(codes(&diagnostics), Vec::<&str>::new());
    let names: Vec<&str> = file.items.iter().map(|i| i.name().text.as_str()).collect();
    assert_eq!(names, ["bump", "next"]);
    // Broken later in the same item, the brace still closed: ordinary recovery.
    let text = "bump r = { r with\na = 1 } +\n\nnext x = x\n";
    let (_, diagnostics) = parse_file(text);
    assert_eq!(codes(&diagnostics), ["unexpected-token"]);
}

#[test]
fn past_the_cap_one_problem_counts_the_rest_where_the_first_left_out_is() {
    let text = Shape::ManyUnclosed.text(65_000);
    let broken = text.matches("(x + (").count();
    let (_, diagnostics) = parse_file(&text);
    assert_eq!(diagnostics.len(), MAX_PROBLEMS + 1);
    assert!(
        codes(&diagnostics[..MAX_PROBLEMS])
            .iter()
            .all(|c| *c == "unclosed-delimiter")
    );
    let last = diagnostics.last().expect("the count");
    assert_eq!(last.code, "too-many-syntax-problems");
    assert_eq!(last.repair_class, "fix-syntax");
    let left_out = broken - MAX_PROBLEMS;
    assert!(
        last.message
            .starts_with(&format!("{left_out} more syntax problems not reported")),
        "{}",
        last.message
    );
    // Each definition takes two lines: the 101st, `f100 x = (x + (`, is on
    // line 201, and its inner parenthesis is the one never closed.
    assert_eq!(at(last), (2 * MAX_PROBLEMS as u32 + 1, 15));
}

#[test]
fn a_hundred_problems_are_not_capped() {
    let text = "x = )\n".repeat(MAX_PROBLEMS);
    let (_, diagnostics) = parse_file(&text);
    assert_eq!(diagnostics.len(), MAX_PROBLEMS);
    assert!(codes(&diagnostics).iter().all(|c| *c == "unexpected-token"));
}

#[test]
fn arguments_and_parameters_count_as_nesting() {
    let args = |n: usize| format!("f x = g{}\n", " x".repeat(n));
    assert_eq!(codes(&parse_file(&args(120)).1), Vec::<&str>::new());
    let (_, diagnostics) = parse_file(&args(200));
    assert_eq!(codes(&diagnostics), ["nesting-too-deep"]);
    assert!(
        diagnostics[0].message.starts_with("too many arguments"),
        "{}",
        diagnostics[0].message
    );

    let params = |n: usize| {
        let names: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
        format!("f = \\{} -> p0\n", names.join(" "))
    };
    assert_eq!(codes(&parse_file(&params(120)).1), Vec::<&str>::new());
    let (_, diagnostics) = parse_file(&params(200));
    assert_eq!(codes(&diagnostics), ["nesting-too-deep"]);
    assert!(
        diagnostics[0].message.starts_with("too many parameters"),
        "{}",
        diagnostics[0].message
    );
    let equation: Vec<String> = (0..200).map(|i| format!("p{i}")).collect();
    let (_, diagnostics) = parse_file(&format!("f {} = p0\n", equation.join(" ")));
    assert_eq!(codes(&diagnostics), ["nesting-too-deep"]);
}

#[test]
fn no_shape_reports_more_than_the_cap_allows() {
    for &shape in Shape::ALL {
        let (_, diagnostics) = parse_file(&shape.text(65_000));
        assert!(
            diagnostics.len() <= MAX_PROBLEMS + 1,
            "{}: {} problems",
            shape.name(),
            diagnostics.len()
        );
        let counts = diagnostics
            .iter()
            .filter(|d| d.code == "too-many-syntax-problems")
            .count();
        assert_eq!(
            counts,
            usize::from(diagnostics.len() > MAX_PROBLEMS),
            "{}",
            shape.name()
        );
    }
}

#[test]
fn every_item_kind_survives_next_to_a_broken_one() {
    // `type`, a signature and an equation each begin a line the open bracket
    // swallowed: each is where parsing resumes.
    for next in ["type T = A | B", "g : (x : I64) -> I64", "g x = x"] {
        let text = format!("f x = [x, (x\n{next}\n");
        let (file, diagnostics) = parse_file(&text);
        assert_eq!(codes(&diagnostics), ["unclosed-delimiter"], "{next}");
        assert_eq!(at(&diagnostics[0]), (1, 11), "{next}");
        assert_eq!(file.items.len(), 1, "{next}");
        assert!(
            !matches!(file.items[0], Item::Equation(ref e) if e.name.text == "f"),
            "{next}"
        );
    }
}
