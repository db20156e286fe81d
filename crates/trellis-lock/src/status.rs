//! The status ladder (lock-schema §8.6): the pure comparison of current
//! hashes with what a lock recorded. Gathering the current hashes is the
//! database's job; this module only decides.

use std::collections::BTreeMap;

use trellis_hash::Digest;

use crate::invariants::not_green;
use crate::model::*;
use crate::results::seal_results;

/// What the status ladder asks about a definition as it is now. Each answer
/// is asked for only when the ladder reaches its rung, so a database can
/// compute lazily: a definition whose callee moved stops at `callee-changed`
/// without ever hashing its test suite.
pub trait Current {
    /// Whether the definition has a `.soil` file, whether or not it parses.
    fn soil_present(&self) -> bool;
    /// Whether the `.soil` file holds an equation for the definition: exactly
    /// when [`Current::soil_hash`] is `Some`, asked first because it is cheap.
    /// A body's hash chains its callees' (soil_hash is a Merkle tree), so a
    /// row whose callee moved stops at `callee-changed` without hashing it.
    fn has_equation(&self) -> bool;
    /// The `.soil` file's soil_hash, or `None` when there is no `.soil` or it
    /// holds no equation for the definition (it does not parse, or names
    /// another function).
    fn soil_hash(&self) -> Option<Digest>;
    fn spec(&self) -> SpecHashes;
    /// What is wrong with the spec now (validity in its root), one line each.
    fn spec_problems(&self) -> Vec<String>;
    /// What the checker reports against the current Soil, one line each.
    fn check_problems(&self) -> Vec<String>;
    /// The current hash of a callee or private helper by the name the lock's
    /// edges use; `None` once it is gone.
    fn edge(&self, name: &str) -> Option<Digest>;
    /// The current hash of an oracle, by its `source`.
    fn oracle(&self, source: &str) -> Option<Digest>;
    /// The current hash of a decision entry in scope.
    fn decision(&self, scope: Scope, label: &str) -> Option<Digest>;
    /// The key over everything the definition's suite executes (lock-schema §5.4).
    fn suite_key(&self) -> Digest;
    /// The typed holes the current Soil leaves open (none when it does not check).
    fn open_holes(&self) -> Vec<String>;
    /// When the `.soil`'s hash moved only because names in an otherwise
    /// unchanged body now resolve elsewhere (a builtin's name now a root
    /// definition's, or a callee gone so the name is the builtin again), one
    /// phrase per such name; empty when the body itself changed.
    fn rebound_names(&self, lowering: &Lowering) -> Vec<String>;
    /// The moved `edges` (names of the `lowering`'s recorded edges), each with
    /// what changed below it, as the callee rung's reason shows them.
    fn explain_moved(&self, lowering: &Lowering, edges: Vec<String>) -> Vec<String> {
        let _ = lowering;
        edges_named(edges)
    }
}

/// The moved `edges` as the callee rung names them without saying what
/// changed below them: `` `name` `` each.
pub fn edges_named(edges: Vec<String>) -> Vec<String> {
    edges.into_iter().map(|edge| format!("`{edge}`")).collect()
}

/// The hashes of the definition and its surroundings as they are now, all
/// gathered (what a lowering records); [`Current`] answers from them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CurrentHashes {
    pub spec: SpecHashes,
    /// Whether the definition has a `.soil` file, whether or not it parses.
    pub soil_present: bool,
    /// The `.soil` file's soil_hash, or `None` when there is no `.soil` or it
    /// holds no equation for the definition.
    pub soil_hash: Option<Digest>,
    /// Current hash of every callee and private helper, by the name the lock's
    /// edges use; a name missing here was deleted.
    pub edges: BTreeMap<String, Digest>,
    /// Current hash of every decision entry in scope.
    pub decisions: BTreeMap<(Scope, String), Digest>,
    pub project_scope_hash: Digest,
    pub module_scope_hash: Digest,
    /// Current hash of every oracle, by its `source`.
    pub oracles: BTreeMap<String, Digest>,
    /// What is wrong with the spec now (validity in its root), one line each.
    pub spec_problems: Vec<String>,
    /// What the checker reports against the current Soil, one line each.
    pub check_problems: Vec<String>,
    /// The key over everything the definition's suite executes (lock-schema §5.4).
    pub suite_key: Digest,
    /// The typed holes the current Soil leaves open.
    pub open_holes: Vec<String>,
    /// [`Current::rebound_names`], answered for the lock's lowering when the
    /// hashes were gathered.
    pub rebound_names: Vec<String>,
    /// [`Current::explain_moved`]'s words for each edge of the lock's lowering
    /// that had moved when the hashes were gathered, by edge name.
    pub edge_notes: BTreeMap<String, String>,
}

impl Current for CurrentHashes {
    fn soil_present(&self) -> bool {
        self.soil_present
    }
    fn has_equation(&self) -> bool {
        self.soil_hash.is_some()
    }
    fn soil_hash(&self) -> Option<Digest> {
        self.soil_hash
    }
    fn spec(&self) -> SpecHashes {
        self.spec
    }
    fn spec_problems(&self) -> Vec<String> {
        self.spec_problems.clone()
    }
    fn check_problems(&self) -> Vec<String> {
        self.check_problems.clone()
    }
    fn edge(&self, name: &str) -> Option<Digest> {
        self.edges.get(name).copied()
    }
    fn oracle(&self, source: &str) -> Option<Digest> {
        self.oracles.get(source).copied()
    }
    fn decision(&self, scope: Scope, label: &str) -> Option<Digest> {
        self.decisions.get(&(scope, label.to_owned())).copied()
    }
    fn suite_key(&self) -> Digest {
        self.suite_key
    }
    fn open_holes(&self) -> Vec<String> {
        self.open_holes.clone()
    }
    fn rebound_names(&self, _lowering: &Lowering) -> Vec<String> {
        self.rebound_names.clone()
    }
    fn explain_moved(&self, _lowering: &Lowering, edges: Vec<String>) -> Vec<String> {
        (edges.into_iter())
            .map(|edge| match self.edge_notes.get(&edge) {
                Some(note) => note.clone(),
                None => format!("`{edge}`"),
            })
            .collect()
    }
}

/// Where a definition stands. Exactly one status holds; when several causes
/// apply, the first rung in [`Status::PRECEDENCE`] wins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    NotLowered {
        soil_present: bool,
    },
    SpecInvalid {
        problems: Vec<String>,
    },
    SpecChanged,
    CheckFailing {
        problems: Vec<String>,
    },
    Partial {
        holes: Vec<String>,
    },
    CalleeChanged {
        edges: Vec<String>,
    },
    TestsStale {
        causes: Vec<StaleCause>,
    },
    Failing {
        failures: Vec<String>,
    },
    DecisionFlagged {
        labels: Vec<String>,
        scopes: Vec<Scope>,
        /// For a definition's row: the labels it cites from its module's
        /// decisions (the others are the project's), so the fix names the scope.
        module_labels: Vec<String>,
    },
    ReviewSuggested,
    Accepted,
    Green,
}

/// Why recorded results no longer describe the current inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StaleCause {
    TestBlocksChanged,
    SoilChanged,
    OracleChanged(String),
    NeverRun,
    /// Results recorded before locks sealed them (lock format 1).
    Unsealed,
    /// A partial lowering's holes are filled in the `.soil` on disk: the Soil
    /// changed since it was recorded (the holes it left).
    HolesFilled(Vec<String>),
    /// The body is unchanged but names in it resolve elsewhere now
    /// ([`Current::rebound_names`]).
    NamesRebound(Vec<String>),
    /// Something else the suite executes moved — a definition its clauses or
    /// properties call, a type, the toolchain — or the rows were edited.
    InputsChanged,
}

impl StaleCause {
    /// Whether the Soil on disk is not the one the lock recorded, so `trellis
    /// adopt` must record it before `trellis test` runs.
    pub fn needs_adopt(&self) -> bool {
        matches!(
            self,
            StaleCause::SoilChanged | StaleCause::HolesFilled(_) | StaleCause::NamesRebound(_)
        )
    }
}

/// The rung names, highest precedence first (lock-schema §8.6).
const PRECEDENCE: [&str; 12] = [
    "spec-invalid",
    "not-lowered",
    "spec-changed",
    "check-failing",
    "partial",
    "callee-changed",
    "tests-stale",
    "failing",
    "decision-flagged",
    "review-suggested",
    "accepted",
    "green",
];

impl Status {
    /// The rung names, highest precedence first (lock-schema §8.6).
    pub const PRECEDENCE: [&'static str; 12] = PRECEDENCE;

    /// The rung's name as `trellis status` prints it.
    pub fn name(&self) -> &'static str {
        match self {
            Status::NotLowered { .. } => "not-lowered",
            Status::SpecInvalid { .. } => "spec-invalid",
            Status::SpecChanged => "spec-changed",
            Status::CheckFailing { .. } => "check-failing",
            Status::Partial { .. } => "partial",
            Status::CalleeChanged { .. } => "callee-changed",
            Status::TestsStale { .. } => "tests-stale",
            Status::Failing { .. } => "failing",
            Status::DecisionFlagged { .. } => "decision-flagged",
            Status::ReviewSuggested => "review-suggested",
            Status::Accepted => "accepted",
            Status::Green => "green",
        }
    }

    /// Whether the ladder that gave this status climbed past the rungs that
    /// read the spec's and the check's problems (everything from
    /// `callee-changed` down): a status above them is decided by the
    /// definition's own files, its lock and its check alone.
    pub fn passed_checks(&self) -> bool {
        !matches!(
            self,
            Status::NotLowered { .. }
                | Status::SpecInvalid { .. }
                | Status::SpecChanged
                | Status::CheckFailing { .. }
                | Status::Partial { .. }
        )
    }

    /// Green and accepted need nothing; every other rung needs a command.
    pub fn is_settled(&self) -> bool {
        matches!(self, Status::Accepted | Status::Green)
    }

    /// One sentence saying why the definition is in this state.
    pub fn reason(&self) -> String {
        match self {
            Status::NotLowered {
                soil_present: false,
            } => "no Soil has been lowered for this spec yet".to_owned(),
            Status::NotLowered { soil_present: true } => {
                "a .soil file exists but no lowering is recorded for it".to_owned()
            }
            Status::SpecInvalid { problems } => {
                format!("the spec does not check: {}", problems.join("; "))
            }
            Status::SpecChanged => {
                "the signature, clauses or another formal block changed since the lowering"
                    .to_owned()
            }
            Status::CheckFailing { problems } => {
                format!("the Soil does not check: {}", problems.join("; "))
            }
            Status::Partial { holes } => {
                format!("the lowering left typed holes open: {}", holes.join(", "))
            }
            Status::CalleeChanged { edges } => format!(
                "a callee or private helper changed since the lowering was checked: {}",
                edges.join("; ")
            ),
            Status::TestsStale { causes } => {
                let causes: Vec<String> = causes
                    .iter()
                    .map(|c| match c {
                        StaleCause::TestBlocksChanged => "the test blocks changed".to_owned(),
                        StaleCause::SoilChanged => "the Soil body changed".to_owned(),
                        StaleCause::HolesFilled(holes) => format!(
                            "the Soil changed since the partial lowering was recorded: the \
                             holes it left open ({}) are filled on disk",
                            holes.join(", ")
                        ),
                        StaleCause::NamesRebound(names) => {
                            format!("the Soil body is unchanged, but {}", names.join("; "))
                        }
                        StaleCause::OracleChanged(source) => format!("oracle `{source}` changed"),
                        StaleCause::NeverRun => "the tests have not been run".to_owned(),
                        StaleCause::Unsealed => {
                            "the results predate results keys (lock format 1)".to_owned()
                        }
                        StaleCause::InputsChanged => "something the tests execute changed \
                            (a definition the clauses or properties use, a type, a file \
                            under a Python reference's directory, the toolchain), or the \
                            recorded rows were edited"
                            .to_owned(),
                    })
                    .collect();
                format!("recorded results are stale: {}", causes.join("; "))
            }
            Status::Failing { failures } => format!("not green: {}", failures.join(", ")),
            Status::DecisionFlagged { labels, scopes, .. } => {
                let mut parts: Vec<String> = labels
                    .iter()
                    .map(|l| format!("decision `{l}` changed or was removed"))
                    .collect();
                parts.extend(scopes.iter().map(|s| {
                    format!(
                        "an entry was added to or removed from the {} decisions",
                        crate::vocab::Word::word(*s)
                    )
                }));
                format!(
                    "the lowering relied on decisions that moved: {}",
                    parts.join("; ")
                )
            }
            Status::ReviewSuggested => {
                "only prose changed; review that the Soil still matches it".to_owned()
            }
            Status::Accepted => "green and accepted".to_owned(),
            Status::Green => "all checks and tests pass".to_owned(),
        }
    }

    /// The command that moves the definition off this rung, if one is needed:
    /// `trellis lower` where an agent's lowering does (lock-schema §8.6's command
    /// column), `trellis adopt` where a hand-written `.soil` is to be recorded.
    pub fn fixing_command(&self, def: &str) -> Option<String> {
        match self {
            Status::NotLowered {
                soil_present: false,
            } => Some(format!("trellis lower {def}")),
            Status::NotLowered { soil_present: true } => Some(format!("trellis adopt {def}")),
            Status::SpecInvalid { .. } => {
                Some(format!("fix the spec (trellis check {def} shows where)"))
            }
            Status::SpecChanged => Some(format!(
                "trellis lower {def} (by hand: bring the Soil in line, then trellis adopt {def})"
            )),
            Status::CheckFailing { .. } => Some(format!(
                "fix the Soil (trellis check {def} shows where), then trellis adopt {def}"
            )),
            Status::Partial { .. } => Some(format!(
                "trellis lower {def} (by hand: fill the holes, then trellis adopt {def})"
            )),
            Status::CalleeChanged { .. } => {
                Some(format!("trellis adopt {def} && trellis test {def}"))
            }
            Status::TestsStale { causes } if causes.iter().any(StaleCause::needs_adopt) => {
                Some(format!("trellis adopt {def} && trellis test {def}"))
            }
            Status::TestsStale { .. } => Some(format!("trellis test {def}")),
            Status::Failing { failures }
                if failures.iter().any(|f| f.starts_with("no test ran")) =>
            {
                Some(format!(
                    "fix the spec (trellis test {def} shows the pre-flight finding)"
                ))
            }
            Status::Failing { .. } => Some(format!(
                "trellis lower {def} (or fix the spec; by hand: fix the Soil, then trellis adopt {def} && trellis test {def})"
            )),
            Status::DecisionFlagged {
                labels,
                module_labels,
                ..
            } => Some(match labels.first() {
                // A module's label is named with its module: `editorial` refuses
                // a label several scopes hold unless told which.
                Some(label) if module_labels.contains(label) => {
                    let module = def.split_once("::").map_or(def, |(module, _)| module);
                    format!("trellis decisions editorial {label} --module {module}")
                }
                Some(label) => format!("trellis decisions editorial {label}"),
                None => format!("trellis adopt {def}"),
            }),
            Status::ReviewSuggested => Some(format!("trellis review {def}")),
            Status::Accepted | Status::Green => None,
        }
    }
}

/// The edges a lowering recorded, in the order the callee rung reports them:
/// calls, then private helpers.
pub fn recorded_edges(lowering: &Lowering) -> impl Iterator<Item = &Edge> {
    lowering.calls.iter().chain(&lowering.private_helpers)
}

/// The callee rung of the ladder: the names of the `recorded` edges whose
/// callee's hash is now another (`current` gives it, by the edge's name).
/// Only edges the current body still has count: a callee the body stopped
/// using is the body's own change (`tests-stale`), not a callee's.
pub fn moved_edges<'e>(
    recorded: impl IntoIterator<Item = &'e Edge>,
    current: impl Fn(&str) -> Option<Digest>,
) -> Vec<String> {
    (recorded.into_iter())
        .filter(|edge| current(&edge.name).is_some_and(|hash| hash != edge.hash))
        .map(|edge| edge.name.clone())
        .collect()
}

/// Derives a function definition's status from the current hashes and its
/// lock (absent when none was ever written).
pub fn status(current: &impl Current, lock: Option<&DefinitionLock>) -> Status {
    // An invalid spec outranks even a missing lowering: `lower`, `adopt` and
    // `test` all refuse it, so no row may prescribe them while it holds.
    let problems = current.spec_problems();
    if !problems.is_empty() {
        return Status::SpecInvalid { problems };
    }
    let soil_present = current.soil_present();
    let recorded_lowering =
        lock.and_then(|lock| Some((lock, lock.lowering.as_ref()?, lock.checks.as_ref()?)));
    let Some((lock, lowering, checks)) = recorded_lowering.filter(|_| soil_present) else {
        if soil_present {
            // `trellis adopt` records a hand-written `.soil` only once it checks.
            let problems = current.check_problems();
            if !problems.is_empty() {
                return Status::CheckFailing { problems };
            }
            if !current.has_equation() {
                return Status::CheckFailing {
                    problems: vec![
                        "the .soil file holds no equation for this definition".to_owned(),
                    ],
                };
            }
        }
        return Status::NotLowered { soil_present };
    };
    let recorded = lock.spec.hashes;
    let spec = current.spec();
    if recorded.formal != spec.formal {
        return Status::SpecChanged;
    }
    let problems = current.check_problems();
    if !problems.is_empty() {
        return Status::CheckFailing { problems };
    }
    // A `.soil` that does not parse, or no longer defines the function, has no
    // hash: its check fails (above, with the checker's words, or here).
    if !current.has_equation() {
        return Status::CheckFailing {
            problems: vec!["the .soil file holds no equation for this definition".to_owned()],
        };
    }
    if !checks.holes.is_empty() {
        // Hashed here only for a partial lowering: what is on disk now may
        // have its holes filled, and then the Soil changed, not the holes.
        if current.soil_hash() == Some(lowering.soil_hash) {
            return Status::Partial {
                holes: checks.holes.clone(),
            };
        }
        let open = current.open_holes();
        if !open.is_empty() {
            return Status::Partial { holes: open };
        }
        return Status::TestsStale {
            causes: vec![StaleCause::HolesFilled(checks.holes.clone())],
        };
    }
    let moved = moved_edges(recorded_edges(lowering), |name| current.edge(name));
    if !moved.is_empty() {
        return Status::CalleeChanged {
            edges: current.explain_moved(lowering, moved),
        };
    }
    let mut causes = Vec::new();
    if recorded.test != spec.test {
        causes.push(StaleCause::TestBlocksChanged);
    }
    // Hashed only now: a moved callee (above) moves this hash too.
    if current.soil_hash() != Some(lowering.soil_hash) {
        let rebound = current.rebound_names(lowering);
        causes.push(match rebound.is_empty() {
            true => StaleCause::SoilChanged,
            false => StaleCause::NamesRebound(rebound),
        });
    }
    for oracle in &lock.oracles {
        if current.oracle(&oracle.source) != Some(oracle.hash) {
            causes.push(StaleCause::OracleChanged(oracle.source.clone()));
        }
    }
    match lock.results_key {
        None if lock.tests.is_empty() => causes.push(StaleCause::NeverRun),
        None => causes.push(StaleCause::Unsealed),
        Some(key) => {
            if causes.is_empty() && key != seal_results(current.suite_key(), &lock.tests) {
                causes.push(StaleCause::InputsChanged);
            }
        }
    }
    if !causes.is_empty() {
        return Status::TestsStale { causes };
    }
    if not_green(checks, &lock.tests).is_some() {
        let mut failures: Vec<String> = lock
            .tests
            .iter()
            .filter(|t| !t.result.is_green())
            .map(|t| t.name.clone())
            .collect();
        if lock.tests.is_empty() {
            failures.push(
                "no test ran: the pre-flight stopped the suite (trellis test shows why)".to_owned(),
            );
        }
        if checks.signature != Verdict::Ok || checks.row != Verdict::Ok {
            failures.insert(0, "checks".to_owned());
        }
        return Status::Failing { failures };
    }
    let flagged: Vec<&DecisionEdge> = lowering
        .decisions
        .applied
        .iter()
        .filter(|edge| current.decision(edge.scope, &edge.label) != Some(edge.hash))
        .collect();
    // A scope-hash change (an entry added or removed) flags the scope once, in
    // its own row (`scope_status`), not every lowering in it (lock-schema §8.6).
    if !flagged.is_empty() {
        return Status::DecisionFlagged {
            labels: flagged.iter().map(|edge| edge.label.clone()).collect(),
            scopes: Vec::new(),
            module_labels: (flagged.iter())
                .filter(|edge| edge.scope == Scope::Module)
                .map(|edge| edge.label.clone())
                .collect(),
        };
    }
    if recorded.prose != spec.prose {
        return Status::ReviewSuggested;
    }
    if lock.accepted {
        Status::Accepted
    } else {
        Status::Green
    }
}

/// Where a decision scope (a module's or the project's `decisions`) stands against
/// its lock: an entry added or removed since the scope was last stamped flags the
/// scope once, whatever number of definitions lives in it. The flag names the
/// labels whose membership moved, each cleared by its own `decisions editorial`.
pub fn scope_status(
    scope: Scope,
    current_scope_hash: Digest,
    current_labels: &[String],
    record: Option<&DecisionsRecord>,
) -> Status {
    match record {
        Some(record) if record.scope_hash != current_scope_hash => {
            let added = current_labels
                .iter()
                .filter(|label| !record.entries.contains_key(label.as_str()));
            let removed = record
                .entries
                .keys()
                .filter(|label| !current_labels.contains(label));
            Status::DecisionFlagged {
                labels: added.chain(removed).cloned().collect(),
                scopes: vec![scope],
                module_labels: Vec::new(),
            }
        }
        Some(_) => Status::Green,
        None => Status::NotLowered {
            soil_present: false,
        },
    }
}
