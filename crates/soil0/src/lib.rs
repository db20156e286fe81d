//! `soil0` is the Soil toolchain as a library with a thin binary over it
//! (docs/contracts/soil0-cli.md): [`check()`], [`run()`] and [`test()`] are the
//! commands as functions returning the exact document the binary prints, and
//! [`run::run_with_world`] is the one implementation of §8.6 injection that
//! `soil0 run`, `soil0 test` and `trellis call` share ([`sources`] feeds it a
//! program read from `.soil` files instead of JSON). It sits above the Soil
//! crates (syntax, types, evaluation) and below the Trellis daemon; it reads
//! files only through the [`cli::Host`] port and touches the World only through
//! soil-eval's capability ports.
//!
//! Workspace dependencies: `trellis-diag`, `soil-syntax`, `soil-types`,
//! `soil-rt`, `soil-eval`.

#![cfg_attr(test, allow(clippy::disallowed_methods, reason = "tests use files"))]

pub mod bundle;
pub mod cli;
mod load;
pub mod run;
pub mod sources;

pub use bundle::test;
pub use load::{Loaded, load, load_program};
pub use run::{RunOutcome, run, run_with_world};

use trellis_diag::{Diagnostic, errors_document};

/// A JSON document handed to a command: its text and the name diagnostics use
/// for it (the path it was read from).
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

impl<'a> Source<'a> {
    pub fn new(name: &'a str, text: &'a str) -> Source<'a> {
        Source { name, text }
    }
}

/// What a command writes: one compact JSON document (no trailing newline; the
/// binary adds one) and the exit status of soil0-cli §1.3.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    pub document: String,
    pub exit: u8,
}

impl Output {
    pub fn success(document: String) -> Output {
        Output {
            document,
            exit: cli::EXIT_OK,
        }
    }

    /// `{"errors":[…]}` with exit 1 (the input has problems).
    pub fn problems(diagnostics: &[Diagnostic]) -> Output {
        Output {
            document: errors_document(diagnostics),
            exit: cli::EXIT_PROBLEMS,
        }
    }
}

/// `soil0 check` (§8.2): the §8.4 document of `definition`, or the whole-program
/// document `{"definitions":[…]}`; `{"errors":[…]}` with exit 1 on any error.
pub fn check(env: Source<'_>, program: Source<'_>, definition: Option<&str>) -> Output {
    match soil_types::check_json(env.text, env.name, program.text, program.name, definition) {
        Ok(document) => Output::success(document),
        Err(diagnostics) => Output::problems(&diagnostics),
    }
}
