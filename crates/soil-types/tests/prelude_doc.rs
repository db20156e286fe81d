//! docs/prelude.md is exactly what the prelude's table renders to: a value
//! added, removed or re-typed in the table without the document following
//! fails here (`UPDATE_EXPECT=1` rewrites the document from the table).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use expect_test::expect_file;

#[test]
fn every_prelude_value_is_documented_once() {
    assert_eq!(soil_types::reference_problems(), Vec::<String>::new());
}

#[test]
fn docs_prelude_md_is_the_rendered_reference() {
    expect_file!["../../../docs/prelude.md"].assert_eq(&soil_types::prelude_reference());
}
