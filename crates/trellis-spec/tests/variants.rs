//! Second and third ways to break each block grammar (the rejection corpus holds
//! the first): each case is a block added to a valid function spec, and the one
//! diagnostic it must produce, positioned within the block (line 1 = the opening
//! fence).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use trellis_spec::parse_tr;

const HEAD: &str = "---\nname: f\n---\n\n```soil-sig\nf : (fs : Fs) -> (x : I64) ->{Fs, Panic} I64\n```\n\n```test base\nf(1) -> 1\n```\n\n";
/// The line of `HEAD` on which an appended block opens.
const FIRST_LINE: u32 = 13;

#[track_caller]
fn check(block: &str, expected: &str) {
    let text = format!("{HEAD}{block}\n");
    let (_, diagnostics) = parse_tr(&text, "f");
    let found: Vec<String> = diagnostics
        .iter()
        .map(|d| {
            let span = d.span.expect("located");
            format!(
                "{} {}:{}",
                d.code,
                span.start.line + 1 - FIRST_LINE,
                span.start.column
            )
        })
        .collect();
    assert_eq!(found, [expected], "for block:\n{block}");
}

#[test]
fn info_strings() {
    check(
        "```test t xfail xfail\nf(1) -> 1\n```",
        "tr-bad-info-string 1:1",
    );
    check(
        "```test t @agent xfail\nf(1) -> 1\n```",
        "tr-bad-info-string 1:1",
    );
    check("```ensures xfail\nok: true\n```", "tr-bad-info-string 1:1");
    check("```test 9lives\nf(1) -> 1\n```", "tr-bad-info-string 1:1");
    check("```cram\n$ true\n```", "tr-missing-block-name 1:1");
    check("~~~test base\nf(2) -> 2\n~~~", "tr-duplicate-test-name 1:1");
}

#[test]
fn clauses() {
    check("```ensures\nnone:\n```", "tr-bad-clause 2:1");
    check("```ensures\nBad: true\n```", "tr-bad-clause 2:1");
    check("```ensures\n  orphan: true\n```", "tr-bad-clause 2:1");
    check("```ensures\nf::g: true\n```", "tr-bad-clause 2:1");
}

#[test]
fn test_cases() {
    check("```test t\nf(1) => 1\n```", "tr-bad-test-case 2:1");
    check("```test t\nf(1, 2) -> 1\n```", "tr-bad-test-case 2:1");
    check("```test t\nf(1 -> 1\n```", "tr-bad-test-case 2:1");
    check(
        "```test t\nwith clock = {}\nf(1) -> 1\n```",
        "tr-bad-test-case 2:1",
    );
    check("```test t\nwith Fs = {}\n```", "tr-bad-test-case 2:6");
    check("```test t\nf(1) ->\n```", "tr-bad-test-case 2:1");
    check("```test t\nf(1) -> {\"a\": }\n```", "tr-bad-json 2:9");
    check(
        "```test t\nwith fs = {files}\nf(1) -> 1\n```",
        "tr-bad-json 2:11",
    );
    check("```test t\nf(1,) -> 1\n```", "tr-bad-json 2:1");
}

#[test]
fn properties() {
    check(
        "```property p\nexists (x : I64). x == x\n```",
        "tr-bad-property 2:1",
    );
    check("```property p\nforall . true\n```", "tr-bad-property 2:1");
    check(
        "```property p\nforall (x I64). true\n```",
        "tr-bad-property 2:9",
    );
    check(
        "```property p\nforall (x : I64) (x : I64). true\n```",
        "tr-bad-property 2:19",
    );
    check(
        "```property p\nforall (x : I64).\n```",
        "tr-bad-property 2:1",
    );
    check(
        "```property p\nforall (x : I64). true\nforall (y : I64). true\n```",
        "tr-bad-property 3:1",
    );
    check(
        "```property p\nforall (x : I64) where x > 0 and x < 9. x > 0\n```",
        "unsupported-where-filter 2:18",
    );
}

#[test]
fn cram_transcripts() {
    check("```cram c\nstray output\n$ true\n```", "tr-bad-cram 2:1");
    check("```cram c\n$ false\n[256]\n```", "tr-bad-cram 3:1");
    check(
        "```cram c\n$ true\n[0]\nmore output\n```",
        "tr-bad-cram 4:1",
    );
    check("```cram c\n<<< a.txt\nno end\n```", "tr-bad-cram 2:1");
    check("```cram c\n<<< /etc/passwd\n>>>\n```", "tr-bad-cram 2:1");
    check("```cram c\n$\n```", "tr-bad-cram 2:1");
}

#[test]
fn references_and_grants() {
    check(
        "```reference\npython: stats.rb::f\n```",
        "tr-bad-reference 2:1",
    );
    check(
        "```reference\npython: ../stats.py::f\n```",
        "tr-bad-reference 2:1",
    );
    check(
        "```reference\npython: stats.py::2f\n```",
        "tr-bad-reference 2:1",
    );
    check("```reference\ncli:\n```", "tr-bad-reference 2:1");
    check("```reference\ncli: a\ncli: b\n```", "tr-bad-reference 3:1");
    check(
        "```allow\nnonstructural-recursion: a\nnonstructural-recursion: b\n```",
        "tr-bad-allow 3:1",
    );
    check("```allow\njust words\n```", "tr-bad-allow 2:1");
}

#[test]
fn placement_in_a_function_spec() {
    check("```decisions\n- **a** — b\n```", "tr-block-not-allowed 1:1");
    check("```invariant\nok: true\n```", "tr-block-not-allowed 1:1");
    check("```soil-sig\nf : I64\n```", "tr-duplicate-block 1:1");
    check("```reference\n```", "tr-empty-block 1:1");
    check("```test t\n\n-- nothing\n```", "tr-empty-block 1:1");
}
