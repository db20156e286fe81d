//! Which names the Soil prelude defines, so references to builtins hash as
//! `soil0-builtin/<major>` rather than as unresolved names. The names come from the
//! one prelude table in `soil-types`.

use std::collections::BTreeSet;
use std::sync::OnceLock;

fn value_names() -> &'static BTreeSet<String> {
    static NAMES: OnceLock<BTreeSet<String>> = OnceLock::new();
    NAMES.get_or_init(|| soil_types::prelude_names().into_iter().collect())
}

pub fn is_value(name: &str) -> bool {
    value_names().contains(name)
}

pub fn is_type(name: &str) -> bool {
    matches!(
        name,
        "I64"
            | "U64"
            | "F64"
            | "Bool"
            | "Utf8"
            | "Unit"
            | "List"
            | "Map"
            | "Option"
            | "Result"
            | "Ordering"
            | "IoError"
            | "Fs"
            | "Clock"
            | "Stdout"
    )
}

pub fn is_constructor(name: &str) -> bool {
    matches!(
        name,
        "None"
            | "Some"
            | "Ok"
            | "Err"
            | "Less"
            | "Equal"
            | "Greater"
            | "NotFound"
            | "PermissionDenied"
            | "IoFailure"
    )
}
