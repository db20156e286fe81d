//! The locks Trellis would write now: pure functions from queries to lock values.
//! The host decides when to write them (`trellis adopt`, `trellis test`,
//! `trellis review`, `trellis decisions editorial`) and writes them atomically.

use std::collections::BTreeMap;

use soil_types::CheckFacts;
use trellis_diag::Diagnostic;
use trellis_lock::{
    AppliedDecisions, Assurance, Author, BlockAuthor, Checks, DecisionEdge, DecisionsRecord,
    DefinitionLock, Lock, Lowering, Mode, ModuleLock, OracleKind, OracleRow, ProjectLock,
    Provenance, Scope, SpecRecord, Termination, TestResult, TestRow, Tier, Toolchain, TypeChecks,
    TypeLock, Verdict,
};
use trellis_spec::{BlockKind, BlockSyntax, FileKind};

use crate::check::{CheckOutcome, check_definition, report_diagnostics};
use crate::db::Db;
use crate::decisions::{
    DecisionKey, decision_entries, decision_entry_hash, empty_scope_hash, scope_decisions,
    scope_hash,
};
use crate::files::SourceFile;
use crate::hashing::soil_hash;
use crate::index::{Item, spec_file};
use crate::spec::{invariant_labels, parse_spec, spec_hashes};
use crate::spec_check::{spec_diagnostics, type_problems};
use crate::status::{lowering_edges, oracle_hashes};

/// The spec record of a `.tr`: its hashes and who wrote each reserved block.
pub fn spec_record(db: &dyn Db, spec: SourceFile) -> SpecRecord {
    let hashes = spec_hashes(db, spec);
    let parse = parse_spec(db, spec);
    let blocks = parse
        .file
        .blocks
        .iter()
        .filter(|block| block.value.header.kind != BlockKind::Decisions)
        .map(|block| {
            let header = &block.value.header;
            let mut name = header.kind.word().to_owned();
            if let Some(block_name) = &header.name {
                name.push(' ');
                name.push_str(block_name);
            }
            BlockAuthor {
                block: name,
                author: if header.agent {
                    Author::Agent
                } else {
                    Author::Human
                },
            }
        })
        .collect();
    let allow = parse
        .file
        .blocks
        .iter()
        .filter_map(|block| match &block.value.syntax {
            BlockSyntax::Allow(grants) => {
                // Verbatim (lock-schema §2, §7.3), as the audit view lists them and
                // the assurance invariant reads them: `hatch: reason`.
                Some(grants.iter().map(|g| g.line.clone()).collect::<Vec<_>>())
            }
            _ => None,
        })
        .flatten()
        .collect();
    SpecRecord {
        hashes,
        blocks,
        pinned: true,
        allow,
    }
}

fn checks_from(facts: &CheckFacts) -> Checks {
    let clauses = facts
        .clauses
        .iter()
        .map(|clause| {
            (
                format!("{}:{}", clause.kind.as_str(), clause.label),
                Assurance::Runtime,
            )
        })
        .collect();
    let termination = match facts.termination.as_str() {
        "non-recursive" => Termination::NotRecursive,
        "structural" => Termination::Verified,
        t if t.starts_with("allowed") => Termination::Assumed,
        _ => Termination::Unverified,
    };
    Checks {
        signature: Verdict::Ok,
        row: Verdict::Ok,
        clauses,
        termination,
        holes: facts.holes.iter().map(|hole| hole.name.clone()).collect(),
    }
}

/// A decision a lowering cites: `project:<label>` or `module:<label>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Citation {
    pub scope: Scope,
    pub label: String,
}

/// A human-verified lowering of `item` as it stands: the current spec hashes, Soil
/// hash, edges and check facts. The decision edges are the `citations` at their
/// current hashes when given, otherwise the previous lock's edges exactly as they
/// were recorded — re-adopting never re-stamps a reliance silently. Recorded test
/// rows are carried over with their results key, which decides whether they still
/// describe the inputs (lock-schema §5.4). A spec or a body that does not check is
/// refused.
pub fn adopted_lock(
    db: &dyn Db,
    item: Item<'_>,
    toolchain: &Toolchain,
    citations: Option<&[Citation]>,
    previous: Option<&DefinitionLock>,
) -> Result<DefinitionLock, Vec<Diagnostic>> {
    let name = item.qualified(db);
    let spec = spec_file(db, item).ok_or_else(|| {
        vec![Diagnostic::new(
            "unknown-definition",
            format!("{name} has no spec"),
        )]
    })?;
    let mut spec_problems = spec_diagnostics(db, spec).clone();
    spec_problems.extend(report_diagnostics(
        db,
        crate::test_check::test_diagnostics(db, item),
    ));
    if !spec_problems.is_empty() {
        return Err(spec_problems);
    }
    let facts = match check_definition(db, item) {
        CheckOutcome::Checked(facts) => facts,
        CheckOutcome::NotLowered => {
            return Err(vec![Diagnostic::new(
                "unknown-definition",
                format!("{name} has no Soil body to adopt"),
            )]);
        }
        CheckOutcome::Failed(errors) => return Err(report_diagnostics(db, errors)),
    };
    let soil_hash = soil_hash(db, item).expect("a checked definition has a body");
    let (calls, private_helpers) = lowering_edges(db, item).clone();
    let scope = scope_decisions(db, item.module(db));
    let previous_decisions = previous
        .and_then(|lock| lock.lowering.as_ref())
        .map(|lowering| lowering.decisions.clone());
    let decisions = match (citations, previous_decisions) {
        (None, Some(decisions)) => decisions,
        (citations, _) => {
            let mut applied = Vec::new();
            for citation in citations.unwrap_or_default() {
                match scope.entries.get(&(citation.scope, citation.label.clone())) {
                    Some(&hash) => applied.push(DecisionEdge {
                        scope: citation.scope,
                        label: citation.label.clone(),
                        hash,
                    }),
                    None => {
                        return Err(vec![Diagnostic::new(
                            "unknown-decision",
                            format!("no decision `{}` in scope of {name}", citation.label),
                        )]);
                    }
                }
            }
            applied.sort();
            applied.dedup();
            AppliedDecisions {
                project_scope_hash: scope.project_scope_hash.unwrap_or_else(empty_scope_hash),
                module_scope_hash: scope.module_scope_hash.unwrap_or_else(empty_scope_hash),
                applied,
            }
        }
    };
    let record = spec_record(db, spec);
    let checks = checks_from(facts);
    let (results_key, tests, oracles) = match previous {
        Some(lock) if checks.holes.is_empty() => {
            (lock.results_key, lock.tests.clone(), lock.oracles.clone())
        }
        _ => (None, Vec::new(), Vec::new()),
    };
    // Acceptance survives only a re-adoption that changes nothing it stood on.
    let accepted = previous.is_some_and(|lock| {
        lock.accepted
            && lock.spec == record
            && lock
                .lowering
                .as_ref()
                .is_some_and(|l| l.soil_hash == soil_hash && l.calls == calls)
    });
    Ok(DefinitionLock {
        name: item.name(db).clone(),
        toolchain: toolchain.clone(),
        spec: record,
        lowering: Some(Lowering {
            provenance: Provenance::HumanVerified,
            provider: None,
            model: None,
            soil_hash,
            calls,
            private_helpers,
            decisions,
        }),
        checks: Some(checks),
        results_key,
        tests,
        oracles,
        accepted,
    })
}

/// The oracle rows of a definition's references, at their current hashes.
pub fn oracle_rows(db: &dyn Db, item: Item<'_>) -> Vec<OracleRow> {
    let Some(spec) = spec_file(db, item) else {
        return Vec::new();
    };
    oracle_hashes(db, spec)
        .iter()
        .map(|(source, &hash)| OracleRow {
            kind: if source.starts_with("cli:") {
                OracleKind::Cli
            } else {
                OracleKind::Reference
            },
            source: source.clone(),
            hash,
        })
        .collect()
}

/// Re-stamps the spec hashes of a lock after a human reviewed a prose-only edit.
pub fn reviewed_lock(db: &dyn Db, item: Item<'_>, lock: &DefinitionLock) -> Option<DefinitionLock> {
    let spec = spec_file(db, item)?;
    let mut lock = lock.clone();
    lock.spec.hashes.prose = spec_hashes(db, spec).prose;
    Some(lock)
}

/// Re-stamps every edge citing `label` (in `scope`) at the entry's current hash,
/// or drops those edges when the entry is gone (the human declares the lowering
/// did not depend on it).
pub fn editorial_lock(
    db: &dyn Db,
    item: Item<'_>,
    lock: &DefinitionLock,
    scope: Scope,
    label: &str,
) -> Option<DefinitionLock> {
    spec_file(db, item)?;
    let decisions = &scope_decisions(db, item.module(db)).entries;
    let hash = decisions.get(&(scope, label.to_owned())).copied();
    let mut lock = lock.clone();
    let lowering = lock.lowering.as_mut()?;
    let before = lowering.decisions.applied.clone();
    let cites = |edge: &DecisionEdge| edge.scope == scope && edge.label == label;
    match hash {
        Some(hash) => lowering
            .decisions
            .applied
            .iter_mut()
            .filter(|edge| cites(edge))
            .for_each(|edge| edge.hash = hash),
        None => lowering.decisions.applied.retain(|edge| !cites(edge)),
    }
    (lowering.decisions.applied != before).then_some(lock)
}

/// The decisions record of a scope file, as it stands.
pub fn decisions_record(db: &dyn Db, scope_file: SourceFile) -> DecisionsRecord {
    let entries: BTreeMap<String, trellis_hash::Digest> = decision_entries(db, scope_file)
        .iter()
        .filter_map(|entry| {
            let key = DecisionKey::new(db, scope_file, entry.label.clone());
            decision_entry_hash(db, key).map(|hash| (entry.label.clone(), hash))
        })
        .collect();
    DecisionsRecord {
        scope_hash: scope_hash(db, scope_file),
        entries,
    }
}

/// The lock of a module, project or type spec as it stands (stamped by `adopt`).
/// A scope's decisions record is carried over from `previous` when there is one:
/// stamping a scope's membership is `decisions editorial`'s job, one label at a
/// time, never a side effect of adopting (lock-schema §2.3). A type lock records
/// what the checker says of the declaration now, and one `derived:invariant:`
/// row per clause with result `error`: invariant properties are not generated
/// in v1 (lock-schema §6.3).
pub fn spec_lock(
    db: &dyn Db,
    spec: SourceFile,
    toolchain: &Toolchain,
    previous: Option<&Lock>,
) -> Option<Lock> {
    let parse = parse_spec(db, spec);
    let name = parse.file.frontmatter.name.clone().unwrap_or_default();
    let record = spec_record(db, spec);
    let decisions = match previous {
        Some(Lock::Module(lock)) => lock.decisions.clone(),
        Some(Lock::Project(lock)) => lock.decisions.clone(),
        _ => decisions_record(db, spec),
    };
    let accepted = previous.is_some_and(|lock| lock.accepted() && *lock.spec() == record);
    Some(match parse.file.kind {
        FileKind::Module => Lock::Module(ModuleLock {
            name,
            toolchain: toolchain.clone(),
            spec: record,
            exports: parse
                .file
                .blocks
                .iter()
                .filter_map(|block| match &block.value.syntax {
                    BlockSyntax::Exports(exports) => {
                        Some(exports.iter().map(|e| e.name.clone()).collect::<Vec<_>>())
                    }
                    _ => None,
                })
                .flatten()
                .collect(),
            decisions,
            accepted,
        }),
        FileKind::Project => Lock::Project(ProjectLock {
            name,
            toolchain: toolchain.clone(),
            spec: record,
            decisions,
            accepted,
        }),
        FileKind::Type => {
            let declaration = if type_problems(db, spec).is_empty() {
                Verdict::Ok
            } else {
                Verdict::Error
            };
            let tests = (invariant_labels(db, spec).iter())
                .map(|label| TestRow {
                    name: format!("derived:invariant:{label}"),
                    tier: Tier::Property,
                    mode: Mode::Sandboxed,
                    result: TestResult::Error,
                })
                .collect();
            Lock::Type(TypeLock {
                name,
                toolchain: toolchain.clone(),
                spec: record,
                checks: Some(TypeChecks {
                    declaration,
                    invariants: BTreeMap::new(),
                }),
                cycle_hash: None,
                tests,
                accepted,
            })
        }
        FileKind::Function | FileKind::Unknown => return None,
    })
}

/// A scope lock with one label re-stamped: its entry hash recorded as it is now,
/// or dropped from the record when the entry is gone; the scope hash is then the
/// hash of the recorded labels, so other added or removed entries stay flagged.
pub fn editorial_scope_lock(
    db: &dyn Db,
    spec: SourceFile,
    toolchain: &Toolchain,
    previous: Option<&Lock>,
    label: &str,
) -> Option<Lock> {
    let mut lock = spec_lock(db, spec, toolchain, previous)?;
    let current = decisions_record(db, spec);
    let record = match &mut lock {
        Lock::Module(lock) => &mut lock.decisions,
        Lock::Project(lock) => &mut lock.decisions,
        Lock::Type(_) | Lock::Function(_) => return None,
    };
    match current.entries.get(label) {
        Some(&hash) => {
            record.entries.insert(label.to_owned(), hash);
        }
        None => {
            record.entries.remove(label);
        }
    }
    record.scope_hash = trellis_spec::scope_hash(record.entries.keys().map(String::as_str));
    Some(lock)
}
