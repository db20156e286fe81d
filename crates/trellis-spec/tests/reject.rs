//! The rejection corpus: `test-data/tr/reject/<code>.tr`, one file per validity
//! rule. Each file ends with `<!-- expect CODE LINE:COL as STEM -->` and must
//! produce exactly that one diagnostic when parsed as `STEM.tr`.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use std::path::Path;

use trellis_spec::{RootContext, TrCode, check_in_root, invariant_property_refusals, parse_tr};

#[test]
fn every_rule_has_exactly_its_rejection() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test-data/tr/reject");
    let mut covered = Vec::new();
    let mut failures = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("reject dir")
        .filter_map(|e| e.ok())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let text = std::fs::read_to_string(&path).expect("readable");
        let file_name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        let expectation = text
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("<!-- expect ")?.strip_suffix(" -->"))
            .unwrap_or_else(|| panic!("{file_name}: no `<!-- expect ... -->` line"));
        let words: Vec<&str> = expectation.split_whitespace().collect();
        let [code, at, "as", stem] = words[..] else {
            panic!("{file_name}: malformed expectation {expectation:?}")
        };
        assert_eq!(code, file_name, "the file is named after its code");
        let (file, mut diagnostics) = parse_tr(&text, stem);
        let tags = ["stats", "io", "parsing"].map(String::from);
        let definitions = ["median".to_owned()];
        let context = RootContext {
            tags: &tags,
            module_dir: Some("csvstats"),
            module_definitions: Some(&definitions),
        };
        diagnostics.extend(check_in_root(&file, &text, &context));
        diagnostics.extend(invariant_property_refusals(&file, &text));
        let found: Vec<String> = diagnostics
            .iter()
            .map(|d| {
                let at = d
                    .span
                    .map(|s| format!("{}:{}", s.start.line, s.start.column))
                    .unwrap_or_default();
                format!("{} {at}", d.code)
            })
            .collect();
        if found != [format!("{code} {at}")] {
            failures.push(format!(
                "{file_name}: expected [{code} {at}], found {found:?}"
            ));
        }
        covered.push(code.to_owned());
    }
    let missing: Vec<&str> = TrCode::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|c| !covered.iter().any(|k| k == c))
        .collect();
    assert!(
        missing.is_empty(),
        "rules without a rejection file: {missing:?}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
