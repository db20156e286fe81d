//! The generated tiers, by job: [`prepare`] (the program with its synthesized
//! wrappers, and the pre-flight probes), [`properties`] (property rows),
//! [`clauses`] (rows derived from requires and ensures clauses) and
//! [`differential`] (the reference oracle); semantics in the parent module's
//! docs. This module holds what they share: the prepared program and the calls
//! and rows every tier makes alike.

mod clauses;
mod differential;
mod prepare;
mod properties;

pub(super) use clauses::{ensures_rows, guard_failures, requires_rows};
pub(super) use differential::differential_rows;
pub(super) use prepare::{preflight, prepare, prepare_allowing_holes};
pub(super) use properties::property_rows;

use std::sync::atomic::{AtomicUsize, Ordering};

use soil_eval::{ParamKind, RunError, World, capability_value, with_eval_stack};
use soil_rt::{RtType, Value};
use trellis_diag::Diagnostic;
use trellis_hash::Digest;
use trellis_spec::{BlockSyntax, Reference};

use super::expect::rt;
use super::program::{
    SigParts, compile, ident_fragment, property_wrapper, property_wrapper_name, split_name, wrapper,
};
use super::{Failure, Mode, OracleRecord, Row, RowResult, SuiteInput, Tier};
use crate::Code;
use crate::oracle::{
    CaseOutcome, DifferentialCase, OracleConfig, SoilOutcome, cli_oracle_hash, python_oracle_hash,
    run_differential,
};
use crate::preflight::{self, ExpectCase, LabelledClause};
use crate::process::ProcessRunner;
use crate::property::{
    CaseOrigin, CaseVerdict, PropertyConfig, PropertyResult, case_count, run_property,
    run_property_from,
};
use crate::warm::WarmRunner;

/// Skipping more than this share of generated inputs makes an ensures-derived
/// row `error` rather than a vacuous pass.
const MAX_SKIPPED_PERCENT: usize = 90;

/// A wrapper's full name, or why it cannot run.
type WrapperSlot = Result<String, Vec<Diagnostic>>;

pub(super) struct Prepared {
    /// The program as given (clause guards on) plus every wrapper that checked.
    pub guarded: soil_eval::Program,
    /// The same with the definition's own guards off, for derived ensures rows.
    pub bare: soil_eval::Program,
    /// Per property block, in block order (`None` for blocks without a body).
    pub properties: Vec<(String, WrapperSlot)>,
    pub requires: Vec<(String, WrapperSlot)>,
    pub ensures: Vec<(String, WrapperSlot)>,
}

/// All arguments of the definition: capability tokens where the signature has
/// capabilities, `data` (in order) everywhere else.
fn full_args(program: &soil_eval::Program, definition: &str, data: &[Value]) -> Vec<Value> {
    let mut data = data.iter().cloned();
    program
        .params(definition)
        .unwrap_or_default()
        .iter()
        .map(|p| match p {
            ParamKind::Capability(ty) => capability_value(*ty),
            ParamKind::Data(_) => data.next().unwrap_or(Value::Unit),
        })
        .collect()
}

/// Calls a Bool wrapper: `Ok(true)`, or why the predicate did not hold.
fn holds(program: &soil_eval::Program, wrapper: &str, args: Vec<Value>) -> Result<(), String> {
    holds_or_panicked(program, wrapper, args).map_err(|(why, _)| why)
}

/// [`holds`], with the panic as a diagnostic (its code and message) when the
/// predicate panicked: a clause guard's panic names the clause.
fn holds_or_panicked(
    program: &soil_eval::Program,
    wrapper: &str,
    args: Vec<Value>,
) -> Result<(), (String, Option<Diagnostic>)> {
    let mut world = World::sandbox();
    match program.call(wrapper, args, &mut world) {
        Ok(Value::Bool(true)) => Ok(()),
        Ok(Value::Bool(false)) => Err(("the predicate is false".into(), None)),
        Ok(other) => Err((
            format!("the predicate returned {other:?}, not a Bool"),
            None,
        )),
        Err(RunError::Panic(panic)) => Err((
            format!("the predicate panicked: {panic}"),
            Some(Diagnostic::new(panic.code.code(), panic.message.clone())),
        )),
        Err(RunError::Refused(d)) => Err((
            format!(
                "the predicate could not run: {}",
                d.iter()
                    .map(|d| d.message.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            None,
        )),
    }
}

fn unrunnable_row(name: String, tier: Tier, diagnostics: Vec<Diagnostic>, what: &str) -> Row {
    Row {
        name: name.clone(),
        tier,
        mode: Mode::Sandboxed,
        result: RowResult::Error,
        detail: Some(Failure {
            row: name,
            message: format!(
                "{what}: {}",
                diagnostics
                    .iter()
                    .map(|d| format!("{}: {}", d.code, d.message))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            diagnostics,
            ..Failure::default()
        }),
    }
}

fn property_result_row(name: String, result: PropertyResult, xfail: bool) -> Row {
    let (result, detail) = match result {
        PropertyResult::Passed { .. } => (RowResult::Pass, None),
        PropertyResult::Failed(counterexample) => (
            RowResult::Fail,
            Some(Failure {
                row: name.clone(),
                case: Some(format!(
                    "{}: {}",
                    counterexample.case,
                    counterexample.original.join(" ")
                )),
                expected: None,
                actual: Some(counterexample.shrunk_message.clone()),
                shrunk: Some(counterexample.shrunk.clone()),
                message: format!(
                    "falsified by {} (shrunk in {} step{} from {}{}): {}",
                    counterexample.shrunk.join(" "),
                    counterexample.shrink_steps,
                    if counterexample.shrink_steps == 1 {
                        ""
                    } else {
                        "s"
                    },
                    match &counterexample.case {
                        CaseOrigin::Example(_) => format!("{}, ", counterexample.case),
                        CaseOrigin::Drawn(_) => String::new(),
                    },
                    counterexample.original.join(" "),
                    counterexample.shrunk_message
                ),
                diagnostics: Vec::new(),
            }),
        ),
        PropertyResult::Refused(diagnostic) => (
            RowResult::Error,
            Some(Failure {
                row: name.clone(),
                message: diagnostic.message.clone(),
                diagnostics: vec![diagnostic],
                ..Failure::default()
            }),
        ),
    };
    let result = match (result, xfail) {
        (RowResult::Pass, true) => RowResult::Xpass,
        (RowResult::Fail, true) => RowResult::Xfail,
        (r, _) => r,
    };
    Row {
        name,
        tier: Tier::Property,
        mode: Mode::Sandboxed,
        result,
        detail: if result == RowResult::Xfail {
            None
        } else {
            detail
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::property::Counterexample;

    fn failed_after(steps: usize) -> String {
        let counterexample = Counterexample {
            case: crate::property::CaseOrigin::Drawn(3),
            original: vec!["[5,7]".into()],
            original_message: "the predicate is false".into(),
            shrunk: vec!["[0]".into()],
            shrunk_message: "the predicate is false".into(),
            shrink_steps: steps,
            shrink_evaluations: 9,
        };
        let row = property_result_row(
            "p".into(),
            PropertyResult::Failed(Box::new(counterexample)),
            false,
        );
        row.detail.expect("a failure").message
    }

    #[test]
    fn the_shrink_count_agrees_with_its_noun() {
        assert!(failed_after(1).contains("(shrunk in 1 step from [5,7])"));
        assert!(failed_after(2).contains("(shrunk in 2 steps from [5,7])"));
    }
}
