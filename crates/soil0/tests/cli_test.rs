//! `soil0 test` (soil0-cli §10): the library and the binary agree byte for byte
//! on the examples' bundle and on bundles with passing, failing, panicking and
//! erroring cases; bad bundles give a code and a JSON path, never a panic.

mod support;

use expect_test::expect;
use soil0::Source;
use support::{RootedHost, TESTS, binary, workspace_root};

/// Runs `soil0 test` both ways, asserts they agree; returns the exit status and
/// the document.
fn test_both(options: &[&str], bundle: &str) -> (u8, serde_json::Value) {
    let text = std::fs::read_to_string(workspace_root().join(bundle)).expect("bundle");
    let option = |name: &str| options.windows(2).find(|w| w[0] == name).map(|w| w[1]);
    let library = soil0::test(Source::new(bundle, &text), option("--env"), option("--program"), &RootedHost);
    let mut args = vec!["test"];
    args.extend(options);
    args.push(bundle);
    let (code, stdout, stderr) = binary(&args);
    assert_eq!(stdout, format!("{}\n", library.document), "{args:?}");
    assert_eq!(code, library.exit, "{args:?}");
    assert!(stderr.is_empty(), "{stderr}");
    (code, serde_json::from_str(&library.document).expect("one JSON document"))
}

/// One line per case: its name and outcome.
fn cases(document: &serde_json::Value) -> String {
    document["cases"]
        .as_array()
        .expect("a cases document")
        .iter()
        .map(|case| format!("{}: {}\n", case["name"].as_str().unwrap_or(""), case["outcome"]))
        .collect()
}

#[test]
fn library_and_binary_agree_on_the_example_bundles() {
    // Every `test` block case of the lowered examples.
    let (code, document) = test_both(&[], TESTS);
    assert_eq!(code, 0);
    let lines = cases(&document);
    let passing = lines.lines().filter(|l| l.ends_with(r#"{"tag":"Pass"}"#)).count();
    let others: String = lines.lines().filter(|l| !l.ends_with(r#"{"tag":"Pass"}"#)).map(|l| format!("{l}\n")).collect();
    expect![[r#""#]].assert_eq(&format!("{passing} pass\n{others}"));

    let (code, document) = test_both(&[], "test-data/soil0/bundles/mixed.json");
    assert_eq!(code, 0);
    expect![[r#""#]].assert_eq(&cases(&document));

    let (code, document) = test_both(&[], "test-data/soil0/bundles/capabilities.json");
    assert_eq!(code, 0);
    expect![[r#""#]].assert_eq(&cases(&document));

    // Options name the documents of a bundle that does not (daemon tests.json form).
    let (code, document) = test_both(
        &["--env", "test-data/soil0/bad/good.env.json", "--program", "test-data/soil0/bad/good.program.json"],
        "test-data/soil0/bad/bundle-names-no-env.json",
    );
    assert_eq!((code, document.to_string()), (0, r#"{"cases":[]}"#.to_owned()));
}

#[test]
fn bad_bundles_name_the_json_path() {
    let corpus = "test-data/soil0/bad";
    let mut names: Vec<String> = std::fs::read_dir(workspace_root().join(corpus))
        .expect("corpus")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("bundle-"))
        .collect();
    names.sort();
    let mut out = String::new();
    for name in names {
        let (code, document) = test_both(&[], &format!("{corpus}/{name}"));
        match document["errors"].as_array() {
            Some(errors) => {
                for error in errors {
                    out.push_str(&format!(
                        "{name}: exit {code} {} [{}] {}\n",
                        error["code"].as_str().unwrap_or(""),
                        error["file"]["value"].as_str().unwrap_or("-"),
                        error["message"].as_str().unwrap_or("")
                    ));
                }
            }
            None => out.push_str(&format!("{name}: exit {code} {document}\n")),
        }
    }
    expect![[r#""#]].assert_eq(&out);
}
