//! Hostile input for the checker (issue 41): a definition reports at most
//! `MAX_PROBLEMS` problems and then one counting the rest, at the first left
//! out, and every shape of `soil-syntax/tests/common/hostile.rs` stays within
//! that. How checking time grows is `linear_time.rs`.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

#[path = "../../soil-syntax/tests/common/hostile.rs"]
mod hostile;
mod support;

use hostile::Shape;
use soil_syntax::MAX_PROBLEMS;
use support::file_check::check_file;
use trellis_diag::Diagnostic;

fn at(diagnostic: &Diagnostic) -> (u32, u32) {
    let span = diagnostic.span.expect("located");
    (span.start.line, span.start.column)
}

/// The diagnostics of the one definition named `name`.
fn problems_of<'r>(report: &'r soil_types::CheckReport, name: &str) -> &'r [Diagnostic] {
    let definition = report
        .definitions
        .iter()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("no definition {name}"));
    definition.outcome.as_ref().err().map_or(&[], Vec::as_slice)
}

#[test]
fn a_definition_reports_a_hundred_problems_and_counts_the_rest() {
    // 250 unknown names, one a line after the first.
    let names: Vec<String> = (0..250).map(|i| format!("lost{i}")).collect();
    let text = format!(
        "f : (x : I64) -> List I64\n\nf x = [\n  {}]\n",
        names.join(",\n  ")
    );
    let checked = check_file(&text);
    let problems = problems_of(&checked.report, "m::f");
    assert_eq!(problems.len(), MAX_PROBLEMS + 1);
    assert!(
        problems[..MAX_PROBLEMS]
            .iter()
            .all(|d| d.code == "unknown-name")
    );
    // Kept in order: the first hundred names, lines 4 to 103.
    assert_eq!(at(&problems[0]), (4, 3));
    assert_eq!(at(&problems[MAX_PROBLEMS - 1]), (103, 3));
    let count = &problems[MAX_PROBLEMS];
    assert_eq!(count.code, "too-many-type-problems");
    assert_eq!(count.repair_class, "fix-types");
    assert_eq!(count.spec_ref, "design#3.13");
    assert!(
        count
            .message
            .starts_with("150 more problems in this definition not reported"),
        "{}",
        count.message
    );
    // At the first name left out, the 101st.
    assert_eq!(at(count), (104, 3));
    assert_eq!(count.file.as_deref(), Some("m.soil"));
}

#[test]
fn a_hundred_problems_are_not_capped() {
    let names: Vec<String> = (0..MAX_PROBLEMS).map(|i| format!("lost{i}")).collect();
    let text = format!(
        "f : (x : I64) -> List I64\n\nf x = [{}]\n",
        names.join(", ")
    );
    let checked = check_file(&text);
    let problems = problems_of(&checked.report, "m::f");
    assert_eq!(problems.len(), MAX_PROBLEMS);
    assert!(problems.iter().all(|d| d.code == "unknown-name"));
}

#[test]
fn the_environment_is_capped_like_a_definition() {
    let types: String = (0..150)
        .map(|i| format!("type T{i} = {{ a : Missing{i} }}\n"))
        .collect();
    let checked = check_file(&types);
    let errors = &checked.report.env_errors;
    assert_eq!(errors.len(), MAX_PROBLEMS + 1);
    assert!(
        errors[..MAX_PROBLEMS]
            .iter()
            .all(|d| d.code == "unknown-type")
    );
    let count = &errors[MAX_PROBLEMS];
    assert_eq!(count.code, "too-many-type-problems");
    assert!(
        count.message.starts_with("50 more problems"),
        "{}",
        count.message
    );
    assert_eq!(at(count), (101, 19));
}

#[test]
fn no_shape_reports_more_than_the_cap_allows_per_definition() {
    for &shape in Shape::ALL {
        if shape == Shape::ChainedApplications {
            continue; // the known slow shape (linear_time.rs)
        }
        let checked = check_file(&shape.text(16_000));
        assert!(checked.syntax.len() <= MAX_PROBLEMS + 1, "{}", shape.name());
        for definition in &checked.report.definitions {
            let problems = definition.outcome.as_ref().err().map_or(0, Vec::len);
            assert!(
                problems <= MAX_PROBLEMS + 1,
                "{}: {} has {problems}",
                shape.name(),
                definition.name
            );
        }
    }
}

/// The issue's own shape: the parser stops the stray tokens (one problem), so
/// the checker sees only the valid definitions before them.
#[test]
fn the_issue_s_65_kb_inputs_report_one_problem() {
    for shape in [
        Shape::UnclosedParen,
        Shape::StrayApplication,
        Shape::KnownApplication,
    ] {
        let checked = check_file(&shape.text(65_000));
        let problems = checked.problems();
        assert_eq!(problems.len(), 1, "{}: {problems:?}", shape.name());
    }
}
