//! The checked-in documents of the examples root (test-data/soil0/examples) are
//! exactly what the examples assemble to; `UPDATE_EXPECT=1` regenerates them.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use expect_test::expect_file;

#[test]
fn env_json_is_assembled_from_the_examples() {
    expect_file!["../../../test-data/soil0/examples/env.json"].assert_eq(&support::env_json());
}

#[test]
fn program_json_is_assembled_from_the_examples() {
    expect_file!["../../../test-data/soil0/examples/program.json"]
        .assert_eq(&support::program_json());
}

#[test]
fn tests_json_holds_every_test_block_case() {
    expect_file!["../../../test-data/soil0/examples/tests.json"].assert_eq(&support::tests_json());
}
