//! The checker's prelude (types) and the interpreter's (implementations)
//! name exactly the same values.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

#[test]
fn every_prelude_value_is_implemented_exactly_once() {
    let mut typed: Vec<String> = soil_types::prelude_names();
    // The type table also names the prelude's types and constructors; only
    // lower-case names are values.
    typed.retain(|n| n.starts_with(|c: char| c.is_ascii_lowercase() || c == '_'));
    typed.sort();
    let mut implemented: Vec<String> = soil_eval::prelude_value_names()
        .map(str::to_owned)
        .collect();
    implemented.sort();
    assert_eq!(typed, implemented);
}

/// Every example of docs/prelude.md holds: an expression example evaluates to
/// its stated value, a definition example compiles.
#[test]
fn every_example_in_the_prelude_reference_holds() {
    let mut failures = Vec::new();
    for section in soil_types::PRELUDE_DOCS {
        for builtin in section.builtins {
            match &builtin.example {
                soil_types::Example::Value { expr, result } => {
                    let text = format!("example : Bool\nexample = ({expr}) == ({result})\n");
                    let outcome = soil_eval::program_from_source(&text, Some("example.soil"))
                        .map_err(|e| format!("{:?}", e.first().map(|d| &d.message)))
                        .and_then(|program| {
                            program
                                .run_json("example", "[]", &mut soil_eval::World::sandbox())
                                .map_err(|e| match e {
                                    soil_eval::RunError::Panic(p) => p.message,
                                    soil_eval::RunError::Refused(d) => {
                                        format!("{:?}", d.first().map(|d| &d.message))
                                    }
                                })
                        });
                    if outcome.as_deref() != Ok("true") {
                        failures.push(format!(
                            "{}: `{expr}` is not `{result}`: {outcome:?}",
                            builtin.name
                        ));
                    }
                }
                soil_types::Example::Definition(source) => {
                    if let Err(e) = soil_eval::program_from_source(source, Some("example.soil")) {
                        failures.push(format!("{}: {e:?}", builtin.name));
                    }
                }
            }
        }
    }
    assert_eq!(failures, Vec::<String>::new());
}
