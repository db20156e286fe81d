//! `soil0 run` (soil0-cli §8.6): the one implementation of injection semantics,
//! shared by `soil0 run`, `soil0 test` and `trellis call`. Checking, hole
//! refusal, capability filling and argument decoding are soil-eval's
//! [`soil_eval::Program::run_json`]; this module adds loading and the outcome's
//! document, and the World the command line runs in.

use std::io::Write as _;

use soil_eval::world::{RealClock, RealFs, Stdout};
use soil_eval::{EvalCode, RunError, World};
use trellis_diag::Diagnostic;

use crate::load::{Loaded, load};
use crate::{Output, Source};

/// How one run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunOutcome {
    /// The canonical JSON of the result (§7.1).
    Value(String),
    /// Refused before running: undecodable or ill-typed input, an unknown
    /// definition, `unfilled-hole`, or arguments that do not fit (`bad-arguments`,
    /// `json-*` naming the JSON path).
    Refused(Vec<Diagnostic>),
    /// The program ran and failed (`runtime-panic`, `requires-violated`,
    /// `ensures-violated`, `depth-limit`): the span is the failing expression and
    /// the notes the call chain, outermost first.
    Panicked(Diagnostic),
}

impl RunOutcome {
    /// What `soil0 run` prints: the result with exit 0, else `{"errors":[…]}`
    /// with exit 1.
    pub fn output(&self) -> Output {
        match self {
            RunOutcome::Value(json) => Output::success(json.clone()),
            RunOutcome::Refused(diagnostics) => Output::problems(diagnostics),
            RunOutcome::Panicked(diagnostic) => Output::problems(std::slice::from_ref(diagnostic)),
        }
    }
}

/// §8.6 in one call: loads and checks the program, then runs `definition` with
/// its capability parameters filled from `world` in declaration order and the
/// other parameters decoded positionally from the JSON array `json_args`.
pub fn run_with_world(
    env: Source<'_>,
    program: Source<'_>,
    definition: &str,
    json_args: &str,
    world: &mut World,
) -> RunOutcome {
    match load(env, program) {
        Ok(loaded) => run_loaded(&loaded, definition, json_args, world),
        Err(diagnostics) => RunOutcome::Refused(diagnostics),
    }
}

/// §8.6 on a program read from `.soil` files (§13.8): the files are loaded by
/// [`crate::sources::load_sources`], then run as any loaded program is.
pub fn run_sources_with_world(
    files: &[Source<'_>],
    definition: &str,
    json_args: &str,
    world: &mut World,
) -> RunOutcome {
    match crate::sources::load_sources(files) {
        Ok(loaded) => run_loaded(&loaded, definition, json_args, world),
        Err(diagnostics) => RunOutcome::Refused(diagnostics),
    }
}

/// The `file` of a diagnostic whose span points into the JSON-ARGS text.
pub const ARGUMENTS_FILE: &str = "JSON-ARGS";

/// §8.6 items 1–4 on a program already loaded (one load, many runs).
pub fn run_loaded(
    loaded: &Loaded,
    definition: &str,
    json_args: &str,
    world: &mut World,
) -> RunOutcome {
    if let Some(refusal) = argument_count_refusal(loaded, definition, json_args) {
        return RunOutcome::Refused(vec![refusal]);
    }
    match loaded.program.run_json(definition, json_args, world) {
        Ok(json) => RunOutcome::Value(json),
        Err(RunError::Refused(diagnostics)) => RunOutcome::Refused(
            diagnostics
                .into_iter()
                .map(|d| match d.file {
                    // Argument decoding errors point into the argument text.
                    None if d.code.starts_with("json-") => d.with_file(ARGUMENTS_FILE),
                    _ => loaded.present(d),
                })
                .collect(),
        ),
        Err(RunError::Panic(panic)) => {
            RunOutcome::Panicked(loaded.present(loaded.program.panic_diagnostic(&panic)))
        }
    }
}

/// `bad-arguments` when `json_args` is an array of the wrong length, listing
/// the parameters it must hold (other malformed arguments are the decoder's).
fn argument_count_refusal(
    loaded: &Loaded,
    definition: &str,
    json_args: &str,
) -> Option<Diagnostic> {
    // Only the count matters: the items are skipped, not built (an argument
    // can be a whole text).
    let Ok(items) = serde_json::from_str::<Vec<serde::de::IgnoredAny>>(json_args) else {
        return None;
    };
    let data: Vec<String> = loaded
        .params(definition)?
        .into_iter()
        .filter(|p| !CAPABILITIES.contains(&p.ty.as_str()))
        .map(|p| format!("({} : {})", p.name, p.ty))
        .collect();
    (items.len() != data.len()).then(|| {
        Diagnostic::new(
            EvalCode::BadArguments.code(),
            format!(
                "$: `{definition}` takes {} non-capability arguments{}{}, {} given",
                data.len(),
                if data.is_empty() { "" } else { " " },
                data.join(" "),
                items.len()
            ),
        )
        .with_file(ARGUMENTS_FILE)
    })
}

/// The capability types, filled from the World rather than from JSON.
pub(crate) const CAPABILITIES: &[&str] = &["Fs", "Clock", "Stdout"];

/// `soil0 run`: [`run_with_world`] in the [`command_line_world`].
pub fn run(env: Source<'_>, program: Source<'_>, definition: &str, json_args: &str) -> Output {
    run_with_world(
        env,
        program,
        definition,
        json_args,
        &mut command_line_world(),
    )
    .output()
}

/// The real World as the command line provides it: files relative to the
/// working directory, the system clock, and a `Stdout` capability that writes
/// to the process's stderr, so stdout holds only the result document (§8.6 item 3).
pub fn command_line_world() -> World {
    World {
        fs: Box::new(RealFs),
        clock: Box::new(RealClock),
        stdout: Box::new(StderrLines),
    }
}

/// Program output on the process's stderr.
pub struct StderrLines;

impl Stdout for StderrLines {
    fn print_line(&mut self, line: &str) {
        // A closed stderr is not the program's failure; the line is dropped.
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    }
}
