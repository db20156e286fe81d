//! Fence extraction corner cases, block-relative positions, and which hash each
//! kind of edit moves (tr-grammar §1).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use expect_test::expect;
use trellis_spec::{
    BlockKind, BlockSyntax, SpanClass, TestLine, TrFile, parse_tr, prose_hash, test_hash,
};

const SPEC: &str = "---
name: f
tags: [stats]
---

# f

Prose about f.

```soil-sig
f : (x : I64) ->{Panic} I64
```

```ensures
positive: result > 0
```

```test basics
f(1) -> 2
f(0) -> panic
```
";

fn parse(text: &str) -> TrFile {
    let (file, diagnostics) = parse_tr(text, "f");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    file
}

struct Hashes {
    formal: String,
    test: String,
    prose: String,
}

fn hashes(text: &str) -> Hashes {
    let (file, _) = parse_tr(text, "f");
    Hashes {
        formal: file.formal_parts().hash().to_string(),
        test: test_hash(&file.test_parts()).to_string(),
        prose: prose_hash(&file.prose_bytes(text)).to_string(),
    }
}

/// Which of formal/test/prose moved between `SPEC` and `edited`.
fn moved(edited: &str) -> String {
    let (a, b) = (hashes(SPEC), hashes(edited));
    let mut out = Vec::new();
    if a.formal != b.formal {
        out.push("formal");
    }
    if a.test != b.test {
        out.push("test");
    }
    if a.prose != b.prose {
        out.push("prose");
    }
    out.join(" ")
}

#[test]
fn each_edit_moves_only_its_class() {
    assert_eq!(
        moved(&SPEC.replace("Prose about f.", "Prose about f, edited.")),
        "prose"
    );
    assert_eq!(moved(&SPEC.replace("tags: [stats]", "tags: [io]")), "prose");
    assert_eq!(moved(&SPEC.replace("f(1) -> 2", "f(1) -> 3")), "test");
    assert_eq!(
        moved(&SPEC.replace("```test basics", "```test basics xfail")),
        "test"
    );
    assert_eq!(
        moved(&SPEC.replace("```test basics", "```test  basics ")),
        ""
    );
    assert_eq!(moved(&SPEC.replace("result > 0", "result > 1")), "formal");
    assert_eq!(
        moved(&SPEC.replace("```ensures", "```ensures @agent")),
        "formal"
    );
    assert_eq!(moved(&SPEC.replace("name: f", "name: g")), "formal");
    assert_eq!(
        moved(
            &SPEC
                .replace("```soil-sig\n", "~~~soil-sig\n")
                .replace("I64\n```", "I64\n~~~")
        ),
        ""
    );
}

#[test]
fn a_prose_edit_leaves_block_values_equal() {
    let before = parse(SPEC);
    let after = parse(&SPEC.replace(
        "Prose about f.",
        "Much longer prose about f,\nover two lines.",
    ));
    let values = |file: &TrFile| {
        file.blocks
            .iter()
            .map(|b| b.value.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(values(&before), values(&after));
    assert_eq!(
        before.block_values(SpanClass::Formal),
        after.block_values(SpanClass::Formal)
    );
    assert_eq!(
        before.block_values(SpanClass::Test),
        after.block_values(SpanClass::Test)
    );
    assert_eq!(before.formal_parts(), after.formal_parts());
    assert_eq!(before.test_parts(), after.test_parts());
    assert_ne!(before.blocks[0].location, after.blocks[0].location);
}

#[test]
fn fences_in_containers_yield_content_without_markers() {
    let text = "---\nname: f\n---\n\n- item\n\n  ```test listed\n  f(1) -> 2\n  ```\n\n> ```test quoted\n> f(2)\n>   -> 3\n> ```\n\n~~~~ soil-sig\nf : (x : I64) -> I64\n~~~~\n\n    ```test indented\n    not a fence\n    ```\n";
    let file = parse(text);
    let shown: Vec<String> = file
        .blocks
        .iter()
        .map(|b| {
            format!(
                "{} {:?} fence={:?}",
                b.value.header.info_string(),
                b.value.content,
                &text[b.location.fence.as_usize_range()]
            )
        })
        .collect();
    expect![[r#"
        [
            "test listed \"f(1) -> 2\\n\" fence=\"```test listed\\n  f(1) -> 2\\n  ```\"",
            "test quoted \"f(2)\\n  -> 3\\n\" fence=\"```test quoted\\n> f(2)\\n>   -> 3\\n> ```\"",
            "soil-sig \"f : (x : I64) -> I64\\n\" fence=\"~~~~ soil-sig\\nf : (x : I64) -> I64\\n~~~~\"",
        ]
    "#]]
    .assert_debug_eq(&shown);
}

#[test]
fn diagnostics_inside_a_quoted_block_point_at_the_file() {
    let text = "---\nname: f\n---\n\n```soil-sig\nf : (x : I64) -> I64\n```\n\n> ```test quoted\n> f(1) -> 2\n> f(nope) -> 3\n> ```\n";
    let (_, diagnostics) = parse_tr(text, "f");
    let found: Vec<String> = diagnostics
        .iter()
        .map(|d| {
            format!(
                "{} {}:{}",
                d.code,
                d.span.map_or(0, |s| s.start.line),
                d.span.map_or(0, |s| s.start.column)
            )
        })
        .collect();
    assert_eq!(found, ["tr-bad-json 11:5"]);
}

#[test]
fn soil_errors_keep_their_codes_and_land_in_the_file() {
    let text = "---\nname: f\n---\n\n```soil-sig\nf : (x : I64) -> I64\n```\n\n```ensures\nok: result > 0\nbad: result >\n```\n\n```test t\nf(1) -> 1\n```\n";
    let (_, diagnostics) = parse_tr(text, "f");
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    let span = diagnostics[0].span.expect("located");
    assert!(
        !diagnostics[0].code.starts_with("tr-"),
        "a Soil code: {}",
        diagnostics[0].code
    );
    assert_eq!(span.start.line, 11);
}

#[test]
fn with_bindings_scope_over_following_cases_until_rebound() {
    let text = "---\nname: g\n---\n\n```soil-sig\ng : (fs : Fs) -> (clock : Clock) -> (p : Utf8) ->{Fs, Clock} Utf8\n```\n\n```test t\ng(\"a\") -> \"x\"\nwith fs = {\"files\": {}}\ng(\"b\") -> \"y\"\nwith clock = {\"now\": 5}\nwith fs = {\"files\": {\"a\": \"1\"}}\ng(\"c\") -> \"z\"\n```\n\n```test u\ng(\"d\") -> \"w\"\n```\n";
    let (file, diagnostics) = parse_tr(text, "g");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let fakes: Vec<String> = file
        .blocks_of(BlockKind::Test)
        .flat_map(|b| match &b.value.syntax {
            BlockSyntax::Test(lines) => lines.clone(),
            _ => Vec::new(),
        })
        .filter_map(|line| match line {
            TestLine::Case(case) => Some(
                case.fakes
                    .iter()
                    .map(|(n, v)| format!("{n}={}", v.text))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            TestLine::With(_) => None,
        })
        .collect();
    assert_eq!(
        fakes,
        [
            "",
            r#"fs={"files": {}}"#,
            r#"clock={"now": 5} fs={"files": {"a": "1"}}"#,
            ""
        ]
    );
}

#[test]
fn decision_entries_are_exact_bytes() {
    let text = "---\nname: m\n---\n\n```decisions\n- **a** — first\n  continued\n  rejected: x; y\n\n- **b** -- second\n```\n";
    let (file, diagnostics) = parse_tr(text, "_module");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let entries = file.decision_entries();
    assert_eq!(
        entries[0].bytes,
        "- **a** — first\n  continued\n  rejected: x; y"
    );
    assert_eq!(entries[1].bytes, "- **b** -- second");
    let edited = text.replace("second", "second!");
    let (edited_file, _) = parse_tr(&edited, "_module");
    let after = edited_file.decision_entries();
    assert_eq!(entries[0].hash(), after[0].hash());
    assert_ne!(entries[1].hash(), after[1].hash());
    assert_eq!(
        trellis_spec::scope_hash(entries.iter().map(|e| e.label.as_str())),
        trellis_spec::scope_hash(after.iter().map(|e| e.label.as_str()))
    );
}

#[test]
fn an_indented_fence_span_starts_at_its_marker() {
    let text = "---\nname: f\n---\n\n   ```soil-sig\n   f : (x : I64) -> I64\n   ```\n\n```test t\nf(1) -> 1\n```\n";
    let file = parse(text);
    let fence = file.blocks[0].location.fence;
    // The indentation before the opening marker is prose (tr-grammar §1).
    assert_eq!(
        &text[fence.as_usize_range()],
        "```soil-sig\n   f : (x : I64) -> I64\n   ```"
    );
    assert_eq!(file.blocks[0].value.content, "f : (x : I64) -> I64\n");
}

#[test]
fn a_property_may_open_with_comment_lines() {
    let text = "---\nname: f\n---\n\n```soil-sig\nf : (x : I64) -> I64\n```\n\n```property p\n-- identity on all inputs\nforall (x : I64). f x == x\n```\n";
    let (file, diagnostics) = parse_tr(text, "f");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let BlockSyntax::Property(Some(property)) = &file.blocks[1].value.syntax else {
        panic!("a property: {:?}", file.blocks[1].value.syntax)
    };
    assert_eq!(property.binders[0].name, "x");
    assert_eq!(
        &file.blocks[1].value.content[property.body_range.as_usize_range()],
        "f x == x"
    );
}

#[test]
fn the_grammar_docs_opening_example_is_a_valid_spec() {
    let doc = include_str!("../../../docs/tr-grammar.md");
    let start = doc.find("````markdown\n").expect("the example opens") + "````markdown\n".len();
    let end = start + doc[start..].find("\n````").expect("the example closes") + 1;
    let (file, diagnostics) = parse_tr(&doc[start..end], "median");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let kinds: Vec<&str> = file
        .blocks
        .iter()
        .map(|b| b.value.header.kind.word())
        .collect();
    assert_eq!(
        kinds,
        [
            "soil-sig",
            "requires",
            "ensures",
            "test",
            "property",
            "reference"
        ]
    );
}

#[test]
fn soil_trees_carry_content_relative_spans() {
    let file = parse(SPEC);
    let ensures = file.blocks_of(BlockKind::Ensures).next().expect("ensures");
    let BlockSyntax::Clauses(clauses) = &ensures.value.syntax else {
        panic!("clauses")
    };
    let predicate = clauses[0].predicate.as_ref().expect("parsed");
    assert_eq!(
        &ensures.value.content[predicate.span.as_usize_range()],
        "result > 0"
    );
    let file_range = ensures.location.file_range(predicate.span);
    assert_eq!(&SPEC[file_range.as_usize_range()], "result > 0");
}

#[test]
fn a_duplicate_points_at_the_first_occurrence() {
    let text = "---\nname: f\n---\n\n```soil-sig\nf : (x : I64) -> I64\n```\n\n```test t\nf(1) -> 1\n```\n\n```test t\nf(2) -> 2\n```\n";
    let (_, diagnostics) = parse_tr(text, "f");
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    let note = diagnostics[0].notes[0].span.expect("located note");
    assert_eq!(
        (diagnostics[0].code.as_str(), note.start.line),
        ("tr-duplicate-test-name", 9)
    );
}

#[test]
fn the_frontmatter_ends_at_its_first_closing_line_and_an_unclosed_one_is_refused() {
    // CRLF lines, and a later `---` (a thematic break) that is the body's.
    let crlf = SPEC.replace('\n', "\r\n").replace("# f", "---\r\n\r\n# f");
    let file = parse(&crlf);
    assert_eq!(file.frontmatter.name.as_deref(), Some("f"));
    assert_eq!(file.frontmatter.tags, ["stats"]);
    let opening = "---\r\nname: f\r\ntags: [stats]\r\n---\r\n";
    assert_eq!(
        file.frontmatter_location.range.as_usize_range(),
        0..opening.len()
    );
    assert_eq!(file.blocks.len(), 3, "the body's blocks are all found");

    let unclosed = SPEC.replacen("---\n\n# f", "\n# f", 1);
    let (_, diagnostics) = parse_tr(&unclosed, "f");
    let found: Vec<_> = (diagnostics.iter())
        .map(|d| {
            let start = d.span.expect("located").start;
            (d.code.as_str(), start.line, start.column)
        })
        .collect();
    assert_eq!(found, [("tr-bad-frontmatter", 1, 1)], "{diagnostics:?}");
}
