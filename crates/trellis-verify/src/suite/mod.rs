//! The test-suite runner (impl plan step 7, design §4.1, §4.5): every test
//! tier of one definition from pure inputs, rows named per lock-schema §5.
//!
//! Order and semantics, normative for the host:
//!
//! 1. **Preparation.** The definition's program is type-checked with
//!    `soil-types` together with one synthesized wrapper per property and per
//!    requires/ensures clause (§8.12: params are the forall binders — or the
//!    definition's parameters, plus `result` for an ensures — and the body is
//!    the predicate lowered to Soil). A definition that does not check stops
//!    the suite: its diagnostics are returned as pre-flight errors and no row
//!    runs. So does a definition that reaches an unfilled hole (holes are never
//!    tested; the `unfilled-hole` diagnostics are returned). A wrapper that does not check makes only its own row `error`.
//! 2. **Pre-flight.** Every expect case is decoded against the signature; then
//!    the contradiction check and the vacuity probes run (requires clauses
//!    evaluated through their wrappers). Any pre-flight diagnostic stops the
//!    suite: contradictory or undecodable cases make every tier's verdict
//!    meaningless, and the vacuity probes exist to stop spending effort on a
//!    spec that cannot be tested (design §4.5).
//! 3. **Expect** rows `block#k` (tier `expect`, sandboxed): one soil0 test
//!    bundle, run by [`execute_bundle`]; an `xfail` block turns fail into
//!    `xfail` and pass into `xpass`.
//! 4. **Property** rows, bare block names (tier `property`): 128 cases (32 when
//!    the definition takes capabilities) drawn under the suite's seed
//!    ([`crate::property::seed_for`]: the first 8 bytes of a hash over the
//!    formal and test hashes, so a new clause or property draws a new sample);
//!    failures are shrunk. A `where` filter is `unsupported-where-filter` and
//!    the row is `error`.
//! 5. **Derived** rows (tier `property`, design §4.1):
//!    `derived:requires:<label>` checks that every expect case that expects a
//!    value satisfies the requires clause (cases expecting `panic` document
//!    behaviour outside the domain and are exempt) — a spec whose own examples
//!    violate its precondition has a spec bug. `derived:ensures:<label>`
//!    judges the clause first on every expect case's arguments (the spec's
//!    own examples, so an expect case that fails on the clause's runtime
//!    guard fails the derived row too: the tiers never contradict each other
//!    on one clause), then on inputs generated from the parameter types under
//!    the suite's seed; it skips inputs violating any requires clause
//!    (filtering by the precondition, not a `where` sampler), runs the
//!    definition without its own clause guards and checks the clause with
//!    `result` bound. A panic on an in-domain input fails the row unless the
//!    signature's row has `Panic`, in which case the input is skipped like an
//!    out-of-domain one. When more than 90% of the generated cases are
//!    skipped the row is `error` (`test-requires-too-selective`), never a
//!    vacuous pass. And a row that would pass while an expect or property row
//!    of the same suite failed on the clause's own runtime guard (a case with
//!    fakes, a recursive call's inner guard, a property's input) fails,
//!    naming that row: the rows of one suite never contradict each other on
//!    one clause.
//! 6. **Differential** rows `derived:differential:<reference line>` (tier
//!    `differential`), `<line>` the 1-based line of the reference within its
//!    block: the oracle over every expect case's arguments, compared through
//!    the canonical re-encode; the oracle's hash is recorded (Python: the
//!    referenced file's bytes under the root; CLI: the command text).
//! 7. **Cram** rows `block#k` per `$` command (tier `cram`, mode `real`), with
//!    the tool directory prepended to `PATH` and `TRELLIS_ROOT` exported.

mod derived;
mod expect;
pub mod program;
mod types;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use soil_syntax::ast;
use trellis_diag::Diagnostic;
use trellis_hash::Digest;
use trellis_spec::{BlockSyntax, BlockValue};

use crate::cram::{CramConfig, Verdict, run_cram};
use crate::preflight::ExpectCase;
use crate::process::ProcessRunner;
use crate::warm::WarmRunner;

pub use expect::{NamedCase, execute_bundle, expect_cases};
pub use program::SigParts;
pub use types::SuiteTypes;

/// Per-tier time limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// One Python oracle run (all cases, cold or one warm request), or one CLI
    /// oracle case.
    pub oracle: Duration,
    /// One cram block.
    pub cram: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            oracle: Duration::from_secs(30),
            cram: Duration::from_secs(60),
        }
    }
}

/// Everything one definition's suite needs; nothing is read from the database.
#[derive(Clone, Debug)]
pub struct SuiteInput<'a> {
    /// `module::name`.
    pub definition: &'a str,
    /// The root's types, prepared once for every definition ([`SuiteTypes::of`]).
    pub types: &'a SuiteTypes,
    /// Callee-first (soil0-cli §7.3), the definition itself included (last).
    /// Compiled as-is by `soil-eval`; requires/ensures clauses of every
    /// definition are runtime guards, as under `soil0 run`.
    pub program: &'a soil_types::Program,
    pub signature: &'a ast::Signature,
    pub requires: &'a [trellis_spec::Clause],
    pub ensures: &'a [trellis_spec::Clause],
    /// The test-class blocks: `test`, `property`, `cram`, `reference`.
    pub blocks: &'a [Arc<BlockValue>],
    /// Seeds the generated cases of properties and derived ensures rows
    /// (`property::seed_for` over the formal and test hashes).
    pub seed: u64,
    /// Python references resolve against it; cram exports it as `TRELLIS_ROOT`.
    pub root: &'a Path,
    /// The text of each Python reference file, by the root-relative path its
    /// reference line names. The host already holds it; nothing here reads files.
    pub references: &'a std::collections::BTreeMap<String, String>,
    /// Holds the `trellis` binary; prepended to `PATH` for cram.
    pub tool_dir: &'a Path,
    /// The rest of `PATH` for cram and oracles (must reach `python3`, `sh`).
    pub base_path: &'a str,
    /// The interpreter Python references run under: `python3`, or what
    /// `oracle::resolve_python` found it to be on `base_path`.
    pub python: &'a str,
    pub timeouts: Timeouts,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    Expect,
    Property,
    Differential,
    Cram,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Expect => "expect",
            Tier::Property => "property",
            Tier::Differential => "differential",
            Tier::Cram => "cram",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Sandboxed,
    Real,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Sandboxed => "sandboxed",
            Mode::Real => "real",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowResult {
    Pass,
    Fail,
    Xfail,
    Xpass,
    Error,
}

impl RowResult {
    pub fn as_str(self) -> &'static str {
        match self {
            RowResult::Pass => "pass",
            RowResult::Fail => "fail",
            RowResult::Xfail => "xfail",
            RowResult::Xpass => "xpass",
            RowResult::Error => "error",
        }
    }

    /// Green means every row is `pass` or `xfail` (lock-schema §5.1).
    pub fn is_green(self) -> bool {
        matches!(self, RowResult::Pass | RowResult::Xfail)
    }
}

/// Why a row did not pass: for the command's output and `f.log`, never the lock.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Failure {
    pub row: String,
    /// The failing case: an expect row, an input as canonical JSON, a command.
    pub case: Option<String>,
    pub expected: Option<String>,
    pub actual: Option<String>,
    /// The shrunk counterexample, canonical JSON per binder.
    pub shrunk: Option<Vec<String>>,
    pub message: String,
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub name: String,
    pub tier: Tier,
    pub mode: Mode,
    pub result: RowResult,
    pub detail: Option<Failure>,
}

/// An oracle the lock records (lock-schema §5): its kind, the reference line
/// as written, and its content hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OracleRecord {
    pub kind: &'static str,
    pub source: String,
    pub hash: Digest,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SuiteOutcome {
    /// Non-empty means nothing ran (see the module docs).
    pub preflight: Vec<Diagnostic>,
    pub rows: Vec<Row>,
    pub oracles: Vec<OracleRecord>,
    /// The details of every row that is not green, in row order.
    pub failures: Vec<Failure>,
    /// Derived tests the runner could not generate in v1 (reported, no row).
    pub not_derived: Vec<Diagnostic>,
}

impl SuiteOutcome {
    pub fn is_green(&self) -> bool {
        self.preflight.is_empty() && self.rows.iter().all(|r| r.result.is_green())
    }
}

/// Reported as the suite runs, so a host can stream progress.
#[derive(Clone, Debug)]
pub enum ProgressEvent {
    PreflightDone { diagnostics: usize },
    RowFinished(Row),
}

/// The expect tier's soil0 test bundle (soil0-cli §10), for goldens and the
/// context bundle's `tests.json`.
pub fn expect_bundle(input: &SuiteInput) -> serde_json::Value {
    let parts = SigParts::of(input.signature);
    expect::bundle_of(
        input.definition,
        &parts,
        input.types.runtime_env(),
        input.blocks,
    )
}

/// [`expect_bundle`] as exact text: compact, canonical bytes for every Soil
/// value. What a host writes to disk (`tests.json`, a `soil0 test` bundle).
pub fn expect_bundle_text(input: &SuiteInput) -> String {
    let parts = SigParts::of(input.signature);
    expect::bundle_text(
        input.definition,
        &parts,
        input.types.runtime_env(),
        input.blocks,
    )
}

/// The pre-flight alone (design §4.5): the contradiction check and the vacuity
/// probes over the expect cases, before anything is lowered. The definition's
/// own body is never run by them, so `input.program` may carry a placeholder
/// body with a hole (a job's stub before its first draft).
pub fn run_preflight(input: &SuiteInput) -> Vec<Diagnostic> {
    let parts = SigParts::of(input.signature);
    let prepared = match derived::prepare_allowing_holes(input, &parts) {
        Ok(prepared) => prepared,
        Err(diagnostics) => return diagnostics,
    };
    let cases = expect_cases(input.blocks);
    match decode_cases(input, &prepared, &parts, &cases) {
        Ok(decoded) => derived::preflight(input, &prepared, &parts, &decoded),
        Err(diagnostics) => diagnostics,
    }
}

/// Runs every tier of one definition's suite: processes through `runner`, and
/// Python references through `warm` when the host keeps warm oracles (the
/// outcome is the same either way; design §9.2).
pub fn run_suite(
    input: &SuiteInput,
    runner: &dyn ProcessRunner,
    warm: Option<&dyn WarmRunner>,
    progress: &mut dyn FnMut(ProgressEvent),
) -> SuiteOutcome {
    let mut outcome = SuiteOutcome::default();
    let parts = SigParts::of(input.signature);
    let prepared = match derived::prepare(input, &parts) {
        Ok(prepared) => prepared,
        Err(diagnostics) => {
            outcome.preflight = diagnostics;
            progress(ProgressEvent::PreflightDone {
                diagnostics: outcome.preflight.len(),
            });
            return outcome;
        }
    };
    let cases = expect_cases(input.blocks);
    let decoded = decode_cases(input, &prepared, &parts, &cases);
    let expect_inputs: Vec<ExpectCase> = match decoded {
        Ok(decoded) => decoded,
        Err(diagnostics) => {
            outcome.preflight = diagnostics;
            progress(ProgressEvent::PreflightDone {
                diagnostics: outcome.preflight.len(),
            });
            return outcome;
        }
    };
    outcome.preflight = derived::preflight(input, &prepared, &parts, &expect_inputs);
    progress(ProgressEvent::PreflightDone {
        diagnostics: outcome.preflight.len(),
    });
    if !outcome.preflight.is_empty() {
        return outcome;
    }
    let mut push = |outcome: &mut SuiteOutcome, row: Row| {
        if let Some(detail) = &row.detail {
            outcome.failures.push(detail.clone());
        }
        progress(ProgressEvent::RowFinished(row.clone()));
        outcome.rows.push(row);
    };
    for row in expect_rows(input, &parts, &cases) {
        push(&mut outcome, row);
    }
    for row in derived::property_rows(input, &prepared, &parts) {
        push(&mut outcome, row);
    }
    for row in derived::requires_rows(input, &prepared, &expect_inputs) {
        push(&mut outcome, row);
    }
    let refuted = derived::guard_failures(input, &prepared, &outcome.rows);
    let (ensures, not_derived) =
        derived::ensures_rows(input, &prepared, &parts, &expect_inputs, &refuted);
    outcome.not_derived = not_derived;
    for row in ensures {
        push(&mut outcome, row);
    }
    let (rows, oracles) =
        derived::differential_rows(input, &prepared, &parts, &expect_inputs, runner, warm);
    outcome.oracles = oracles;
    for row in rows {
        push(&mut outcome, row);
    }
    for row in cram_rows(input, runner) {
        push(&mut outcome, row);
    }
    outcome
}

/// The generated tiers alone — property rows and derived ensures rows — under
/// each of `seeds` in turn, the rest of `input` as given: what `status --verify
/// --reseed N` runs to find rows a fresh sample would flip. The program is
/// prepared once; a suite the pre-flight stops (or that does not check) has
/// no generated rows, so the answer is empty.
pub fn run_generated(input: &SuiteInput, seeds: &[u64]) -> Vec<(u64, Vec<Row>)> {
    let parts = SigParts::of(input.signature);
    let Ok(prepared) = derived::prepare(input, &parts) else {
        return Vec::new();
    };
    let cases = expect_cases(input.blocks);
    let Ok(expect_inputs) = decode_cases(input, &prepared, &parts, &cases) else {
        return Vec::new();
    };
    if !derived::preflight(input, &prepared, &parts, &expect_inputs).is_empty() {
        return Vec::new();
    }
    seeds
        .iter()
        .map(|&seed| {
            let reseeded = SuiteInput {
                seed,
                ..input.clone()
            };
            let mut rows = derived::property_rows(&reseeded, &prepared, &parts);
            let refuted = derived::guard_failures(&reseeded, &prepared, &rows);
            let (ensures, _) =
                derived::ensures_rows(&reseeded, &prepared, &parts, &expect_inputs, &refuted);
            rows.extend(ensures);
            (seed, rows)
        })
        .collect()
}

fn decode_cases(
    input: &SuiteInput,
    prepared: &derived::Prepared,
    parts: &SigParts,
    cases: &[NamedCase],
) -> Result<Vec<ExpectCase>, Vec<Diagnostic>> {
    let types = prepared.guarded.types();
    let params = expect::data_types(types, parts)
        .map_err(|m| vec![crate::Code::TestUngenerableType.diagnostic(m)])?;
    let result = expect::rt(types, &parts.result)
        .map_err(|m| vec![crate::Code::TestUngenerableType.diagnostic(m)])?;
    let mut decoded = Vec::new();
    let mut errors = Vec::new();
    for named in cases {
        match ExpectCase::decode(
            input.definition,
            &named.row,
            named.case,
            &params,
            &result,
            types,
            None,
        ) {
            Ok(case) => decoded.push(case),
            Err(diagnostic) => {
                let mut diagnostic = *diagnostic;
                diagnostic.message = format!("{}: {}", named.row, diagnostic.message);
                errors.push(diagnostic);
            }
        }
    }
    if errors.is_empty() {
        Ok(decoded)
    } else {
        Err(errors)
    }
}

fn expect_rows(input: &SuiteInput, parts: &SigParts, cases: &[NamedCase]) -> Vec<Row> {
    if cases.is_empty() {
        return Vec::new();
    }
    let bundle = expect::bundle_of(
        input.definition,
        parts,
        input.types.runtime_env(),
        input.blocks,
    );
    let results = match execute_bundle(input.types, input.program, &bundle) {
        Ok(results) => results,
        Err(diagnostics) => serde_json::json!({"cases": cases.iter().map(|c| serde_json::json!({
            "name": c.row,
            "outcome": {"tag": "Error", "errors": diagnostics.iter().map(Diagnostic::to_json).collect::<Vec<_>>()},
        })).collect::<Vec<_>>()}),
    };
    let outcomes = results
        .get("cases")
        .and_then(serde_json::Value::as_array)
        .cloned()
        .unwrap_or_default();
    cases
        .iter()
        .zip(
            outcomes
                .iter()
                .chain(std::iter::repeat(&serde_json::Value::Null)),
        )
        .map(|(named, result)| expect_row(named, result.get("outcome")))
        .collect()
}

fn expect_row(named: &NamedCase, outcome: Option<&serde_json::Value>) -> Row {
    let tag = outcome
        .and_then(|o| o.get("tag"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or("Error");
    let passed = tag == "Pass";
    let result = match (tag, named.xfail) {
        ("Pass", false) => RowResult::Pass,
        ("Pass", true) => RowResult::Xpass,
        ("Fail" | "Panicked", false) => RowResult::Fail,
        ("Fail" | "Panicked", true) => RowResult::Xfail,
        _ => RowResult::Error,
    };
    let detail = (!passed).then(|| {
        let field = |key: &str| outcome.and_then(|o| o.get(key)).map(|v| v.to_string());
        // A panic is kept as a diagnostic: a clause guard it names is what the
        // derived rows must not contradict (`derived::guard_failures`).
        let diagnostics: Vec<Diagnostic> = (tag == "Panicked")
            .then(|| {
                let text = |key: &str| {
                    outcome
                        .and_then(|o| o.pointer(&format!("/diagnostic/{key}")))
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or_default()
                };
                Diagnostic::new(text("code"), text("message"))
            })
            .into_iter()
            .collect();
        let message = match tag {
            "Fail" => "the result differs from the expected value".to_owned(),
            "Panicked" => format!(
                "the definition panicked: {}",
                outcome
                    .and_then(|o| o.pointer("/diagnostic/message"))
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default()
            ),
            _ => format!(
                "the case could not run: {}",
                field("errors").unwrap_or_default()
            ),
        };
        Failure {
            row: named.row.clone(),
            case: Some(format!(
                "{}({})",
                named.case.callee,
                named
                    .case
                    .args
                    .iter()
                    .map(|a| a.text.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            expected: field("expected"),
            actual: field("actual"),
            shrunk: None,
            message,
            diagnostics,
        }
    });
    // An xfail row that failed is green; its detail is still worth showing.
    Row {
        name: named.row.clone(),
        tier: Tier::Expect,
        mode: Mode::Sandboxed,
        result,
        detail: if result == RowResult::Xfail {
            None
        } else {
            detail
        },
    }
}

fn cram_rows(input: &SuiteInput, runner: &dyn ProcessRunner) -> Vec<Row> {
    let mut rows = Vec::new();
    for block in input.blocks {
        let BlockSyntax::Cram(steps) = &block.syntax else {
            continue;
        };
        let name = block.header.name.clone().unwrap_or_else(|| "cram".into());
        let mut config = CramConfig::new(input.tool_dir, input.base_path, input.root);
        config.timeout = input.timeouts.cram;
        let result = run_cram(runner, &config, steps);
        if let Some(error) = &result.setup_error {
            let commands = steps
                .iter()
                .filter(|s| matches!(s, trellis_spec::CramStep::Command(_)))
                .count();
            for k in 1..=commands.max(1) {
                let row = format!("{name}#{k}");
                rows.push(Row {
                    name: row.clone(),
                    tier: Tier::Cram,
                    mode: Mode::Real,
                    result: RowResult::Error,
                    detail: Some(Failure {
                        row,
                        message: format!("the block could not run: {error}"),
                        ..Failure::default()
                    }),
                });
            }
            continue;
        }
        for (k, command) in result.commands.iter().enumerate() {
            let row = format!("{name}#{}", k + 1);
            let (result, detail) = match &command.verdict {
                Verdict::Pass => (RowResult::Pass, None),
                Verdict::Mismatch { output, exit } => {
                    let mut message = Vec::new();
                    if let Some(exit) = exit {
                        message.push(format!(
                            "exit status {} where {} was expected",
                            exit.actual, exit.expected
                        ));
                    }
                    if let Some(output) = output {
                        message.push(format!("output differs:\n{}", output.diff));
                    }
                    (
                        RowResult::Fail,
                        Some(Failure {
                            row: row.clone(),
                            case: Some(command.command.clone()),
                            expected: output.as_ref().map(|o| o.expected.clone()),
                            actual: output.as_ref().map(|o| o.actual.clone()),
                            message: message.join("; "),
                            ..Failure::default()
                        }),
                    )
                }
                Verdict::Timeout { partial_output } => (
                    RowResult::Error,
                    Some(Failure {
                        row: row.clone(),
                        case: Some(command.command.clone()),
                        actual: Some(partial_output.clone()),
                        message: format!(
                            "the block timed out after {} ms",
                            input.timeouts.cram.as_millis()
                        ),
                        ..Failure::default()
                    }),
                ),
                Verdict::NotRun => (
                    RowResult::Error,
                    Some(Failure {
                        row: row.clone(),
                        case: Some(command.command.clone()),
                        message: "not run: an earlier command ended the session".into(),
                        ..Failure::default()
                    }),
                ),
            };
            let xfail = block.header.xfail;
            let result = match (result, xfail) {
                (RowResult::Pass, true) => RowResult::Xpass,
                (RowResult::Fail, true) => RowResult::Xfail,
                (r, _) => r,
            };
            rows.push(Row {
                name: row,
                tier: Tier::Cram,
                mode: Mode::Real,
                result,
                detail: if result == RowResult::Xfail {
                    None
                } else {
                    detail
                },
            });
        }
    }
    rows
}
