//! Answers written back into specs re-parse to what was written (tr-grammar §8).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use expect_test::expect;
use trellis_spec::{append_clarification, append_decision, parse_tr};

const FUNCTION: &str = "---\nname: f\n---\n\n# f\n\nProse.\n\n```soil-sig\nf : (x : I64) -> I64\n```\n\n```test t\nf(1) -> 1\n```\n";

#[test]
fn a_first_clarification_creates_the_section_and_moves_only_prose() {
    let once = append_clarification(FUNCTION, "Is zero allowed?", "Yes.\nIt maps to zero.");
    let twice = append_clarification(&once, "And negatives?", "No.");
    expect![[r#"
        ---
        name: f
        ---

        # f

        Prose.

        ```soil-sig
        f : (x : I64) -> I64
        ```

        ```test t
        f(1) -> 1
        ```

        ## Clarifications

        - **Q:** Is zero allowed?
          **A:** Yes.
          It maps to zero.

        - **Q:** And negatives?
          **A:** No.
    "#]]
    .assert_eq(&twice);
    let (before, _) = parse_tr(FUNCTION, "f");
    let (after, diagnostics) = parse_tr(&twice, "f");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(before.formal_parts(), after.formal_parts());
    assert_eq!(before.test_parts(), after.test_parts());
}

#[test]
fn a_clarification_goes_inside_an_existing_section_before_a_later_heading() {
    let text = "---\nname: f\n---\n\n## Clarifications\n\n- **Q:** a?\n  **A:** b.\n\n## Notes\n\nLater.\n";
    let out = append_clarification(text, "c?", "d.");
    assert!(
        out.contains("  **A:** b.\n\n- **Q:** c?\n  **A:** d.\n\n## Notes\n"),
        "{out}"
    );
}

#[test]
fn rules_append_to_the_decisions_block_or_create_it() {
    let module = "---\nname: m\n---\n\n> ```decisions\n> - **a** — first\n> ```\n";
    let (file, _) = parse_tr(module, "_module");
    let out = append_decision(module, &file, "b", "second", &["third"]).expect("appended");
    assert_eq!(
        out,
        "---\nname: m\n---\n\n> ```decisions\n> - **a** — first\n> - **b** — second\n>   rejected: third\n> ```\n"
    );
    let (reparsed, diagnostics) = parse_tr(&out, "_module");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let labels: Vec<String> = reparsed
        .decision_entries()
        .into_iter()
        .map(|e| e.label)
        .collect();
    assert_eq!(labels, ["a", "b"]);
    assert_eq!(
        file.decision_entries()[0].hash(),
        reparsed.decision_entries()[0].hash()
    );

    let error = append_decision(&out, &reparsed, "a", "again", &[]).expect_err("duplicate");
    assert_eq!(error.code, "tr-duplicate-decision-label");

    let bare = "---\nname: p\n---\n\nProse.\n";
    let (file, _) = parse_tr(bare, "_project");
    let out = append_decision(bare, &file, "utc", "all times are UTC", &[]).expect("created");
    assert_eq!(
        out,
        "---\nname: p\n---\n\nProse.\n\n```decisions\n- **utc** — all times are UTC\n```\n"
    );

    let (function, _) = parse_tr(FUNCTION, "f");
    let error = append_decision(FUNCTION, &function, "x", "y", &[]).expect_err("not a module");
    assert_eq!(error.code, "tr-block-not-allowed");
}

/// The write-back inserts at one place and keeps every byte of the file: a file
/// ending without a newline or in blank lines, and a section followed by more.
#[test]
fn every_byte_of_the_file_is_kept() {
    for text in [
        "---\nname: f\n---\n\nProse.",
        "---\nname: f\n---\n\nProse.\n",
        "---\nname: f\n---\n\nProse.\n\n\n",
        "---\nname: f\n---\n\nProse.\n  \n",
    ] {
        let out = append_clarification(text, "q?", "a.");
        assert!(out.starts_with(text), "{out:?}");
        let added = &out[text.len()..];
        assert!(
            added
                .trim_start_matches('\n')
                .starts_with("## Clarifications\n\n- **Q:** q?\n  **A:** a.\n"),
            "{added:?}"
        );
        let (file, _) = parse_tr(text, "_project");
        let created = append_decision(text, &file, "l", "r", &[]).expect("created");
        assert!(created.starts_with(text), "{created:?}");
    }
    let text = "---\nname: f\n---\n\n## Clarifications\n\n- **Q:** a?\n  **A:** b.\n\n\n## Notes\n";
    let out = append_clarification(text, "c?", "d.");
    assert_eq!(
        out,
        "---\nname: f\n---\n\n## Clarifications\n\n- **Q:** a?\n  **A:** b.\n\n\n- **Q:** c?\n  **A:** d.\n\n## Notes\n"
    );
}

/// A heading inside a quote or a list does not end the section, and a multi-line
/// answer's blank line stays empty.
#[test]
fn only_the_documents_own_headings_end_the_section() {
    let text = "---\nname: f\n---\n\n## Clarifications\n\n> ## Quoted\n\nMore.\n";
    let out = append_clarification(text, "q?", "first\n\nsecond");
    assert_eq!(
        out,
        "---\nname: f\n---\n\n## Clarifications\n\n> ## Quoted\n\nMore.\n\n- **Q:** q?\n  **A:** first\n\n  second\n"
    );
}
