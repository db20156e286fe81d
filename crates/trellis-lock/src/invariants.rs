//! The lock invariants (lock-schema §5.2, §8.1–§8.5), checked on the model so
//! the writer and the reader enforce exactly the same rules. A violation names
//! the field it is about by path; the reader turns that path into a position.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use trellis_diag::Diagnostic;

use crate::codes::Code;
use crate::model::*;

/// One step of a path into a lock document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A schema key.
    Key(&'static str),
    /// A key of a map (clause labels, decision labels, qualified names).
    Entry(String),
    /// An array element.
    Index(usize),
}

/// A broken invariant, located by path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub code: Code,
    pub message: String,
    pub path: Vec<Seg>,
}

impl Violation {
    /// The diagnostic for a lock that has no text yet (the write side): the
    /// path goes in a note because there is no position to point at.
    pub fn to_diagnostic(&self) -> Diagnostic {
        self.code
            .diagnostic(self.message.clone())
            .with_note(format!("at `{}`", render_path(&self.path)))
    }
}

/// `tests[2].name`, `checks.clauses["ensures:bounded"]`.
pub fn render_path(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Seg::Entry(key) => {
                let _ = write!(out, "[{key:?}]");
            }
            Seg::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }
    out
}

/// Every invariant a lock breaks, as diagnostics (empty when it may be written).
pub fn check_invariants(lock: &Lock) -> Vec<Diagnostic> {
    violations(lock)
        .iter()
        .map(Violation::to_diagnostic)
        .collect()
}

/// Block-author pins across a rewrite (lock-schema §8.3): a block the previous
/// lock records as human-authored may not come back agent-authored.
pub fn check_transition(previous: &Lock, next: &Lock) -> Vec<Diagnostic> {
    let human: BTreeSet<&str> = previous
        .spec()
        .blocks
        .iter()
        .filter(|b| b.author == Author::Human)
        .map(|b| b.block.as_str())
        .collect();
    next.spec()
        .blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| b.author == Author::Agent && human.contains(b.block.as_str()))
        .map(|(i, b)| {
            Violation {
                code: Code::AuthorFlip,
                message: format!(
                    "block `{}` is human-authored and pinned; the agent cannot take it over",
                    b.block
                ),
                path: vec![
                    Seg::Key("spec"),
                    Seg::Key("blocks"),
                    Seg::Index(i),
                    Seg::Key("author"),
                ],
            }
            .to_diagnostic()
        })
        .collect()
}

/// The located violations of one lock.
pub fn violations(lock: &Lock) -> Vec<Violation> {
    let mut v = Violations(Vec::new());
    match lock {
        Lock::Function(l) => {
            v.spec(&l.spec, "soil-sig");
            v.function(l);
        }
        Lock::Type(l) => {
            v.spec(&l.spec, "soil-type");
            v.tests(&l.tests);
            if let Some(checks) = &l.checks {
                v.assurances(
                    &checks.invariants,
                    &l.tests,
                    &l.spec,
                    &[Seg::Key("checks"), Seg::Key("invariants")],
                );
            }
        }
        Lock::Module(l) => {
            v.spec(&l.spec, "exports");
            v.unique(l.exports.iter().map(String::as_str), "export", |i| {
                vec![Seg::Key("exports"), Seg::Index(i)]
            });
        }
        Lock::Project(l) => v.spec(&l.spec, ""),
    }
    v.0
}

struct Violations(Vec<Violation>);

impl Violations {
    fn push(&mut self, code: Code, message: String, path: Vec<Seg>) {
        self.0.push(Violation {
            code,
            message,
            path,
        });
    }

    /// Reports the second and later occurrence of each key.
    fn unique<'a>(
        &mut self,
        keys: impl Iterator<Item = &'a str>,
        what: &str,
        path: impl Fn(usize) -> Vec<Seg>,
    ) {
        let mut seen = BTreeSet::new();
        for (i, key) in keys.enumerate() {
            if !seen.insert(key) {
                self.push(
                    Code::DuplicateRow,
                    format!("{what} `{key}` appears twice"),
                    path(i),
                );
            }
        }
    }

    fn spec(&mut self, spec: &SpecRecord, signature_block: &str) {
        self.unique(spec.blocks.iter().map(|b| b.block.as_str()), "block", |i| {
            vec![
                Seg::Key("spec"),
                Seg::Key("blocks"),
                Seg::Index(i),
                Seg::Key("block"),
            ]
        });
        if !spec.pinned {
            return;
        }
        for (i, block) in spec.blocks.iter().enumerate() {
            if block.block == signature_block && block.author == Author::Agent {
                self.push(
                    Code::AuthorPin,
                    format!(
                        "`pinned` approves the `{signature_block}` block, but that block is still \
                         agent-authored; removing its `@agent` marker is the adoption"
                    ),
                    vec![
                        Seg::Key("spec"),
                        Seg::Key("blocks"),
                        Seg::Index(i),
                        Seg::Key("author"),
                    ],
                );
            }
        }
    }

    fn function(&mut self, l: &DefinitionLock) {
        let Some(lowering) = &l.lowering else {
            self.not_lowered(l);
            return;
        };
        self.lowering(lowering);
        let Some(checks) = &l.checks else {
            self.push(
                Code::NotLowered,
                "a lowered definition records its checks".to_owned(),
                vec![Seg::Key("checks")],
            );
            return;
        };
        self.unique(checks.holes.iter().map(String::as_str), "hole", |i| {
            vec![Seg::Key("checks"), Seg::Key("holes"), Seg::Index(i)]
        });
        if !checks.holes.is_empty() {
            if !l.tests.is_empty() {
                self.push(
                    Code::HolesTested,
                    format!(
                        "a partial lowering (holes: {}) is never tested, but {} test rows are recorded",
                        checks.holes.join(", "),
                        l.tests.len()
                    ),
                    vec![Seg::Key("tests"), Seg::Index(0)],
                );
            }
            if l.accepted {
                self.push(
                    Code::HolesTested,
                    "a partial lowering cannot be accepted".to_owned(),
                    vec![Seg::Key("accepted")],
                );
            }
        }
        if checks.termination == Termination::Assumed
            && !l
                .spec
                .allow
                .iter()
                .any(|g| g.starts_with(TERMINATION_HATCH))
        {
            self.push(
                Code::Assurance,
                "termination is `assumed`, which only a `nonstructural-recursion` grant permits"
                    .to_owned(),
                vec![Seg::Key("checks"), Seg::Key("termination")],
            );
        }
        self.tests(&l.tests);
        self.oracles(l);
        self.assurances(
            &checks.clauses,
            &l.tests,
            &l.spec,
            &[Seg::Key("checks"), Seg::Key("clauses")],
        );
        if l.accepted
            && checks.holes.is_empty()
            && let Some(reason) = not_green(checks, &l.tests)
        {
            self.push(
                Code::AcceptedNotGreen,
                format!("only a green entry can be accepted: {reason}"),
                vec![Seg::Key("accepted")],
            );
        }
    }

    fn not_lowered(&mut self, l: &DefinitionLock) {
        let message =
            |what: &str| format!("{what} recorded for a definition with `lowering: null`");
        if l.checks.is_some() {
            self.push(
                Code::NotLowered,
                message("checks"),
                vec![Seg::Key("checks")],
            );
        }
        if l.results_key.is_some() {
            self.push(
                Code::NotLowered,
                message("a results key"),
                vec![Seg::Key("results_key")],
            );
        }
        if !l.tests.is_empty() {
            self.push(
                Code::NotLowered,
                message("test results"),
                vec![Seg::Key("tests"), Seg::Index(0)],
            );
        }
        if !l.oracles.is_empty() {
            self.push(
                Code::NotLowered,
                message("oracles"),
                vec![Seg::Key("oracles"), Seg::Index(0)],
            );
        }
        if l.accepted {
            self.push(
                Code::AcceptedNotGreen,
                "a definition that was never lowered cannot be accepted".to_owned(),
                vec![Seg::Key("accepted")],
            );
        }
    }

    fn lowering(&mut self, lowering: &Lowering) {
        let at = |key: &'static str| vec![Seg::Key("lowering"), Seg::Key(key)];
        match lowering.provenance {
            Provenance::HumanVerified => {
                for (key, value) in [("provider", &lowering.provider), ("model", &lowering.model)] {
                    if value.is_some() {
                        self.push(
                            Code::Provenance,
                            format!("a human-verified lowering names no {key}: no agent ran"),
                            at(key),
                        );
                    }
                }
            }
            Provenance::Agent => {
                for (key, value) in [("provider", &lowering.provider), ("model", &lowering.model)] {
                    if value.is_none() {
                        self.push(
                            Code::Provenance,
                            format!("an agent lowering records the {key} that produced it"),
                            at(key),
                        );
                    }
                }
            }
        }
        let edge_path = |list: &'static str| {
            move |i| {
                vec![
                    Seg::Key("lowering"),
                    Seg::Key(list),
                    Seg::Index(i),
                    Seg::Key("name"),
                ]
            }
        };
        self.unique(
            lowering.calls.iter().map(|e| e.name.as_str()),
            "call",
            edge_path("calls"),
        );
        self.unique(
            lowering.private_helpers.iter().map(|e| e.name.as_str()),
            "private helper",
            edge_path("private_helpers"),
        );
        for (i, edge) in lowering.private_helpers.iter().enumerate() {
            if !edge.name.starts_with('_') {
                self.push(
                    Code::HelperName,
                    format!("private helper `{}` must start with `_`", edge.name),
                    edge_path("private_helpers")(i),
                );
            }
        }
        for (i, edge) in lowering.calls.iter().enumerate() {
            if edge.name.starts_with('_') {
                self.push(
                    Code::HelperName,
                    format!(
                        "`{}` is a private helper: record it in `private_helpers`, not `calls`",
                        edge.name
                    ),
                    edge_path("calls")(i),
                );
            }
        }
        let mut seen = BTreeSet::new();
        for (i, edge) in lowering.decisions.applied.iter().enumerate() {
            if !seen.insert((edge.scope, edge.label.as_str())) {
                self.push(
                    Code::DuplicateRow,
                    format!("decision `{}` is cited twice", edge.label),
                    vec![
                        Seg::Key("lowering"),
                        Seg::Key("decisions"),
                        Seg::Key("applied"),
                        Seg::Index(i),
                        Seg::Key("label"),
                    ],
                );
            }
        }
    }

    fn tests(&mut self, tests: &[TestRow]) {
        self.unique(tests.iter().map(|t| t.name.as_str()), "test", |i| {
            vec![Seg::Key("tests"), Seg::Index(i), Seg::Key("name")]
        });
        for (i, test) in tests.iter().enumerate() {
            let at = |key| vec![Seg::Key("tests"), Seg::Index(i), Seg::Key(key)];
            if let Some(problem) = test_name_problem(&test.name, test.tier) {
                self.push(Code::TestName, problem, at("name"));
            }
            let expected = if test.tier == Tier::Cram {
                Mode::Real
            } else {
                Mode::Sandboxed
            };
            if test.mode != expected {
                self.push(
                    Code::TestMode,
                    format!(
                        "`{}` tests run `{}`",
                        crate::vocab::Word::word(test.tier),
                        crate::vocab::Word::word(expected)
                    ),
                    at("mode"),
                );
            }
        }
    }

    fn oracles(&mut self, l: &DefinitionLock) {
        let mut seen = BTreeSet::new();
        for (i, oracle) in l.oracles.iter().enumerate() {
            if !seen.insert((oracle.kind, oracle.source.as_str())) {
                self.push(
                    Code::DuplicateRow,
                    format!("oracle `{}` appears twice", oracle.source),
                    vec![Seg::Key("oracles"), Seg::Index(i), Seg::Key("source")],
                );
            }
        }
        let is_attachment = |o: &&OracleRow| o.kind != OracleKind::Definition;
        for (i, test) in l.tests.iter().enumerate() {
            let Some(line) = test.name.strip_prefix(DIFFERENTIAL) else {
                continue;
            };
            if !l
                .oracles
                .iter()
                .filter(is_attachment)
                .any(|o| o.source == line)
            {
                self.push(
                    Code::OracleMissing,
                    format!(
                        "differential test `{}` has no oracle row for `{line}`",
                        test.name
                    ),
                    vec![Seg::Key("tests"), Seg::Index(i), Seg::Key("name")],
                );
            }
        }
        for (i, oracle) in l.oracles.iter().enumerate() {
            if oracle.kind == OracleKind::Definition {
                continue;
            }
            let cited = l
                .tests
                .iter()
                .any(|t| t.name.strip_prefix(DIFFERENTIAL) == Some(oracle.source.as_str()));
            if !cited {
                self.push(
                    Code::OracleUnused,
                    format!("no differential test uses oracle `{}`", oracle.source),
                    vec![Seg::Key("oracles"), Seg::Index(i), Seg::Key("source")],
                );
            }
        }
    }

    fn assurances(
        &mut self,
        clauses: &std::collections::BTreeMap<String, Assurance>,
        tests: &[TestRow],
        spec: &SpecRecord,
        at: &[Seg],
    ) {
        for (clause, assurance) in clauses {
            let mut path = at.to_vec();
            path.push(Seg::Entry(clause.clone()));
            match assurance {
                Assurance::Tested => {
                    let derived = format!("derived:{clause}");
                    let passed = tests
                        .iter()
                        .any(|t| t.name == derived && t.result == TestResult::Pass);
                    if !passed {
                        self.push(
                            Code::Assurance,
                            format!("`{clause}` is `tested` but no passing `{derived}` row exists"),
                            path,
                        );
                    }
                }
                Assurance::Assumed if spec.allow.is_empty() => self.push(
                    Code::Assurance,
                    format!("`{clause}` is `assumed`, which only an `allow` grant permits"),
                    path,
                ),
                _ => {}
            }
        }
    }
}

const DIFFERENTIAL: &str = "derived:differential:";

/// The `allow` hatch that waives the termination check (tr-grammar §3.7).
pub const TERMINATION_HATCH: &str = "nonstructural-recursion:";

/// Why a lowered, hole-free entry is not green, if it is not (lock-schema §8.1).
pub fn not_green(checks: &Checks, tests: &[TestRow]) -> Option<String> {
    if checks.signature != Verdict::Ok || checks.row != Verdict::Ok {
        return Some("the checks failed".to_owned());
    }
    if tests.is_empty() {
        return Some("no test results are recorded".to_owned());
    }
    let red: Vec<&str> = tests
        .iter()
        .filter(|t| !t.result.is_green())
        .map(|t| t.name.as_str())
        .collect();
    (!red.is_empty()).then(|| format!("failing: {}", red.join(", ")))
}

/// What is wrong with a test name for its tier (lock-schema §5.2), if anything.
pub fn test_name_problem(name: &str, tier: Tier) -> Option<String> {
    if name.starts_with("derived:contract:") {
        return Some(format!(
            "`{name}`: `derived:contract:<n>` is reserved for contract tests, which lock_format 1 does not record"
        ));
    }
    let ok = match tier {
        Tier::Expect | Tier::Cram => name.rsplit_once('#').is_some_and(|(block, k)| {
            !block.is_empty()
                && !block.starts_with("derived:")
                && !k.starts_with('0')
                && !k.is_empty()
                && k.bytes().all(|b| b.is_ascii_digit())
        }),
        Tier::Property => match name.strip_prefix("derived:") {
            Some(rest) => ["requires:", "ensures:", "invariant:"].iter().any(|kind| {
                rest.strip_prefix(kind)
                    .is_some_and(|label| !label.is_empty())
            }),
            None => !name.is_empty() && !name.contains('#'),
        },
        Tier::Differential => name
            .strip_prefix(DIFFERENTIAL)
            .is_some_and(|line| !line.is_empty()),
    };
    let shape = match tier {
        Tier::Expect | Tier::Cram => "`<block>#<k>` with k counted from 1",
        Tier::Property => "a bare property name or `derived:requires|ensures|invariant:<label>`",
        Tier::Differential => "`derived:differential:<reference line>`",
    };
    (!ok).then(|| {
        format!(
            "`{name}` is not a valid `{}` test name: expected {shape}",
            crate::vocab::Word::word(tier)
        )
    })
}
