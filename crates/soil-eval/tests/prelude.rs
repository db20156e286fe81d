//! The checker's prelude (types) and the interpreter's (implementations)
//! name exactly the same values.

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
