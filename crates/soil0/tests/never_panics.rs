//! Arbitrary bundles and arguments give a document, never a panic.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use proptest::prelude::*;
use soil_eval::World;
use soil0::Source;

fn json_like() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|x| format!("{x:?}")),
        "[a-z\"\\\\ {}\\[\\]:,]{0,6}".prop_map(|s| format!("{s:?}")),
        Just(r#"{"tag":"None"}"#.to_owned()),
        Just(r#"{"tag":"Value","value":1}"#.to_owned()),
        Just(r#"{"tag":"Panic","code":{"tag":"None"}}"#.to_owned()),
        Just("\"csvstats::median\"".to_owned()),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("cases"),
                        Just("name"),
                        Just("def"),
                        Just("args"),
                        Just("expect"),
                        Just("fakes"),
                        Just("env"),
                        Just("program"),
                        Just("tag"),
                        Just("fs"),
                        Just("files"),
                    ],
                    inner
                ),
                0..5
            )
            .prop_map(|v| format!(
                "{{{}}}",
                v.iter()
                    .map(|(k, v)| format!("{k:?}:{v}"))
                    .collect::<Vec<_>>()
                    .join(",")
            )),
        ]
    })
}

fn is_one_document(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text).is_ok()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn bundles_never_panic(text in json_like(), noise in "[\\[\\]{}\",:a-z0-9]{0,12}") {
        for bundle in [text.clone(), format!("{text}{noise}")] {
            let output = soil0::test(
                Source::new("bundle.json", &bundle),
                Some(support::ENV),
                Some(support::PROGRAM),
                &support::RootedHost,
            );
            prop_assert!(is_one_document(&output.document), "{}", output.document);
            prop_assert!(output.exit <= 1);
        }
    }

    #[test]
    fn run_arguments_never_panic(args in json_like(), def in prop_oneof![
        Just("csvstats::median"), Just("csvstats::read_file"), Just("csvstats::parse_row"),
        Just("inventory::apply_all"), Just("csvstats::sort_by"), Just("nope"),
    ]) {
        let read = |p: &str| std::fs::read_to_string(support::workspace_root().join(p)).expect("fixture");
        let (env, program) = (read(support::ENV), read(support::PROGRAM));
        let mut world = World::sandbox();
        let outcome = soil0::run_with_world(
            Source::new(support::ENV, &env),
            Source::new(support::PROGRAM, &program),
            def,
            &args,
            &mut world,
        );
        let output = outcome.output();
        prop_assert!(is_one_document(&output.document), "{}", output.document);
    }
}
