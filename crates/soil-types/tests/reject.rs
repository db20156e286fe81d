//! The rejection corpus: `test-data/soil-types/reject/<code>.soil`, one file per
//! checker code. Line 1 is `-- expect: <code> <line>:<column>`; the file must be
//! rejected with exactly that code, one diagnostic of it at that position, and no
//! other code.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::path::Path;

use soil_types::Code;

/// Codes exercised elsewhere: JSON decoding and `--def` lookup (tests/json.rs),
/// duplicate fields, which the parser already rejects (its `duplicate-field`,
/// shared by name), and the count of problems past the cap, which only comes
/// after a hundred others (tests/hostile.rs).
const NOT_IN_CORPUS: &[Code] = &[
    Code::BadEnv,
    Code::BadProgram,
    Code::DuplicateField,
    Code::TooManyTypeProblems,
    Code::UnknownDefinition,
];

fn corpus() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test-data/soil-types/reject")
}

#[test]
fn every_corpus_file_is_rejected_with_its_code_and_position() {
    let mut failures = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(corpus())
        .expect("corpus dir")
        .filter_map(|e| e.ok())
        .collect();
    entries.sort_by_key(|e| e.path());
    assert!(!entries.is_empty());
    for entry in entries {
        let path = entry.path();
        let text = std::fs::read_to_string(&path).expect("readable");
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let header = text.lines().next().unwrap_or_default();
        let expected = header
            .strip_prefix("-- expect: ")
            .unwrap_or_else(|| panic!("{stem}: bad header"));
        let (code, position) = expected.split_once(' ').expect("code and position");
        assert_eq!(code, stem, "file name names its code");
        let out = support::check(&text);
        let diagnostics: Vec<&str> = out.lines().filter(|l| !l.starts_with('{')).collect();
        let matching = diagnostics
            .iter()
            .filter(|l| l.starts_with(&format!("{code} {position} ")))
            .count();
        let foreign = diagnostics
            .iter()
            .filter(|l| !l.starts_with(&format!("{code} ")))
            .count();
        if matching != 1 || foreign != 0 {
            failures.push(format!("{stem}: expected `{expected}`, got:\n{out}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_corpus_covers_every_checker_code() {
    let missing: Vec<&str> = Code::ALL
        .iter()
        .filter(|code| !NOT_IN_CORPUS.contains(code))
        .map(|code| code.as_str())
        .filter(|code| !corpus().join(format!("{code}.soil")).exists())
        .collect();
    assert_eq!(missing, Vec::<&str>::new());
}
