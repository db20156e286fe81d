//! The rejection corpus: `test-data/soil-syntax/reject/<code>.soil`, one file per
//! syntax code. Each file's first line `-- expect: <code> <line>:<column>` names
//! the diagnostic the parser must report first (`too-many-syntax-problems`: last).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod common;

use soil_syntax::SyntaxCode;

#[test]
fn every_code_has_a_rejection_file_reporting_it_at_the_expected_place() {
    let dir = common::workspace_root().join("test-data/soil-syntax/reject");
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("reject dir").flatten() {
        let path = entry.path();
        let text = std::fs::read_to_string(&path).expect("readable");
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        let header = text.lines().next().unwrap_or_default();
        let expectation = header
            .strip_prefix("-- expect: ")
            .unwrap_or_else(|| panic!("{stem}: no expect line"));
        let (code, position) = expectation.split_once(' ').expect("code and position");
        let (line, column) = position.split_once(':').expect("line:column");
        assert_eq!(code, stem, "file name and expected code differ");

        let (_, diagnostics) = soil_syntax::parse_file(&text);
        // The count of problems past the cap closes the list; every other
        // code is the first problem of its file.
        let first = if code == SyntaxCode::TooManySyntaxProblems.as_str() {
            diagnostics.last()
        } else {
            diagnostics.first()
        }
        .unwrap_or_else(|| panic!("{stem}: no diagnostic"));
        let span = first.span.expect("parse errors carry spans");
        assert_eq!(
            (
                first.code.as_str(),
                span.start.line.to_string(),
                span.start.column.to_string()
            ),
            (code, line.to_owned(), column.to_owned()),
            "{stem}: {}",
            first.message
        );
        assert_eq!(first.repair_class, "fix-syntax", "{stem}");
        seen.push(stem);
    }
    seen.sort();
    let mut all: Vec<String> = SyntaxCode::ALL
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    all.sort();
    assert_eq!(seen, all, "one rejection file per syntax code");
}

#[test]
fn every_syntax_code_is_registered_with_its_spec_section() {
    let missing = trellis_diag::registry::missing_codes(soil_syntax::codes::all_code_strings());
    assert!(missing.is_empty(), "unregistered codes: {missing:?}");
    for code in SyntaxCode::ALL {
        let entry = trellis_diag::registry::lookup(code.as_str()).expect("registered");
        assert_eq!(entry.source, "soil0");
        assert_eq!(entry.repair_class, "fix-syntax");
        assert_eq!(entry.spec_ref, code.spec_ref(), "{code}");
    }
}

#[test]
fn every_spec_ref_names_a_section_of_the_syntax_spec_that_lists_the_code() {
    let spec = std::fs::read_to_string(common::workspace_root().join("docs/soil-syntax-spec.md"))
        .expect("docs/soil-syntax-spec.md");
    for code in SyntaxCode::ALL {
        let section = code.spec_ref().trim_start_matches("soil-syntax-spec#");
        let heading = spec
            .lines()
            .position(|line| {
                line.starts_with('#')
                    && line
                        .trim_start_matches('#')
                        .trim_start()
                        .starts_with(&format!("{section} "))
                    || line
                        .trim_start_matches('#')
                        .trim_start()
                        .starts_with(&format!("{section}. "))
            })
            .unwrap_or_else(|| panic!("{code}: no heading for section {section}"));
        let body: String = spec
            .lines()
            .skip(heading + 1)
            .take_while(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            body.contains(&format!("`{code}`")),
            "section {section} does not list `{code}`"
        );
    }
}
