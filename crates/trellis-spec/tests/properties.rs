//! Properties of the parser over arbitrary input: it never panics, the class
//! spans partition the file, and the hashes streamed from a parse are the
//! hashes of its parts.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use proptest::prelude::*;
use trellis_spec::{SpanClass, parse_tr, prose_hash, test_hash};

/// Text biased toward `.tr` structure: frontmatter lines, fences of every shape,
/// block words, containers, JSON and cram fragments.
fn tr_like() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "---\n",
        "name: f\n",
        "tags: [a, b]\n",
        "tags:\n  - a\n",
        "```",
        "~~~",
        "````",
        "   ```",
        "> ",
        "- ",
        "  ",
        "\n",
        "soil-sig",
        "soil-type",
        "requires",
        "ensures",
        "invariant",
        "test t",
        "property p",
        "cram c",
        "reference",
        "allow",
        "exports",
        "decisions",
        " xfail",
        " @agent",
        "f : (x : I64) -> I64\n",
        "f(1, [2, {\"a\": \"b)\"}]) -> 3\n",
        "f(0) -> panic\n",
        "with fs = {}\n",
        "lbl: x > 0\n",
        "  and y\n",
        "forall (x : I64). x == x\n",
        "forall (x : I64) where x > 0. x\n",
        "$ echo hi\n",
        "> more\n",
        "[1]\n",
        "<<< a.txt\n",
        ">>>\n",
        "python: r.py::f\n",
        "cli: cat\n",
        "- **a** — text\n",
        "  rejected: b\n",
        "nonstructural-recursion: ok\n",
        "é",
        "\t",
        "\r\n",
        "--",
        "(",
        ")",
        "\"",
        ":",
    ]);
    prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat())
}

fn check_partition(text: &str) {
    let (file, _) = parse_tr(text, "f");
    let spans = file.partition();
    let mut at = 0;
    for (_, range) in &spans {
        assert_eq!(
            range.start, at,
            "spans are contiguous and in order: {spans:?}"
        );
        assert!(range.end > range.start, "no empty spans: {spans:?}");
        at = range.end;
    }
    assert_eq!(at as usize, text.len(), "spans cover the file: {spans:?}");
    for block in &file.blocks {
        let class = block.value.header.kind.class();
        assert!(
            spans
                .iter()
                .any(|(c, r)| *c == class && *r == block.location.fence),
            "every block's fence is one span of its class"
        );
    }
    let prose: usize = spans
        .iter()
        .filter(|(c, _)| *c == SpanClass::Prose)
        .map(|(_, r)| r.len() as usize)
        .sum();
    assert_eq!(file.prose_bytes(text).len(), prose);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_never_panic(text in any::<String>()) {
        let _ = parse_tr(&text, "f");
        let _ = parse_tr(&text, "_module");
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse_tr(&text, "f");
    }

    #[test]
    fn tr_like_text_never_panics_and_partitions(text in tr_like()) {
        check_partition(&text);
        let _ = parse_tr(&text, "_project");
    }

    #[test]
    fn arbitrary_text_partitions(text in any::<String>()) {
        check_partition(&text);
    }

    #[test]
    fn tr_like_text_streams_the_hashes_of_its_parts(text in tr_like()) {
        check_streamed_hashes(&text);
    }

    #[test]
    fn arbitrary_text_streams_the_hashes_of_its_parts(text in any::<String>()) {
        check_streamed_hashes(&text);
    }
}

/// The hashes a status takes from a parse ([`trellis_spec::TrFile::formal_hash`]
/// and its kin, which copy nothing) are those of the parts the goldens show.
fn check_streamed_hashes(text: &str) {
    let (file, _) = parse_tr(text, "f");
    assert_eq!(file.formal_hash(), file.formal_parts().hash());
    assert_eq!(file.test_hash(), test_hash(&file.test_parts()));
    assert_eq!(file.prose_hash(text), prose_hash(&file.prose_bytes(text)));
}

#[test]
fn pathological_nesting_is_survived() {
    let deep_quotes = format!(
        "---\nname: f\n---\n{}```test t\nf(1) -> 1\n```\n",
        "> ".repeat(50_000)
    );
    let deep_lists = format!(
        "---\nname: f\n---\n{}",
        (0..2_000)
            .map(|i| format!("{}- x\n", "  ".repeat(i)))
            .collect::<String>()
    );
    let deep_json = format!(
        "---\nname: f\n---\n```test t\nf({}) -> 1\n```\n",
        "[".repeat(100_000)
    );
    let deep_predicate = format!(
        "---\nname: f\n---\n```ensures\nok: {}x\n```\n",
        "(".repeat(100_000)
    );
    let deep_property = format!(
        "---\nname: f\n---\n```property p\nforall {}\n```\n",
        "(".repeat(100_000)
    );
    for text in [
        deep_quotes,
        deep_lists,
        deep_json,
        deep_predicate,
        deep_property,
    ] {
        let (file, _) = parse_tr(&text, "f");
        assert_eq!(file.len as usize, text.len());
    }
}
