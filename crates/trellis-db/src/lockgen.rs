//! The locks Trellis would write now: pure functions from queries to lock values.
//! The host decides when to write them (`trellis adopt`, `trellis test`,
//! `trellis review`, `trellis decisions editorial`) and writes them atomically.

use std::collections::BTreeMap;

use soil_types::CheckFacts;
use trellis_diag::Diagnostic;
use trellis_lock::{
    AppliedDecisions, Assurance, Author, BlockAuthor, Checks, DecisionEdge, DecisionsRecord,
    DefinitionLock, Lock, Lowering, ModuleLock, OracleKind, OracleRow, ProjectLock, Provenance,
    Scope, SpecHashes, SpecRecord, Termination, Toolchain, TypeChecks, TypeLock, Verdict,
};
use trellis_spec::{BlockKind, BlockSyntax, FileKind};

use crate::check::{CheckOutcome, check_definition, report_diagnostics};
use crate::db::Db;
use crate::decisions::{DecisionKey, decision_entries, decision_entry_hash, scope_hash};
use crate::files::SourceFile;
use crate::hashing::soil_hash;
use crate::soil::Item;
use crate::spec::{parse_spec, spec_hashes};
use crate::status::{
    current_hashes, empty_scope_hash, lowering_edges, oracle_hashes, scope_decisions, spec_file,
};

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
        hashes: SpecHashes {
            formal: hashes.formal,
            test: hashes.test,
            prose: hashes.prose,
        },
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
/// hash, edges, the cited decisions at their current hashes, check facts. Test rows
/// are carried over from `previous` only when the Soil and tests are unchanged.
pub fn adopted_lock(
    db: &dyn Db,
    item: Item<'_>,
    toolchain: &Toolchain,
    citations: &[Citation],
    previous: Option<&DefinitionLock>,
) -> Result<DefinitionLock, Vec<Diagnostic>> {
    let name = item.qualified(db);
    let spec = spec_file(db, item).ok_or_else(|| {
        vec![Diagnostic::new(
            "unknown-definition",
            format!("{name} has no spec"),
        )]
    })?;
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
    let mut applied = Vec::new();
    for citation in citations {
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
    let record = spec_record(db, spec);
    let unchanged_tests = previous.is_some_and(|lock| {
        lock.spec.hashes.test == record.hashes.test
            && lock
                .lowering
                .as_ref()
                .is_some_and(|l| l.soil_hash == soil_hash)
    });
    let checks = checks_from(facts);
    let (tests, oracles) = match previous {
        Some(lock) if unchanged_tests && checks.holes.is_empty() => {
            (lock.tests.clone(), lock.oracles.clone())
        }
        _ => (Vec::new(), Vec::new()),
    };
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
            decisions: AppliedDecisions {
                project_scope_hash: scope.project_scope_hash.unwrap_or_else(empty_scope_hash),
                module_scope_hash: scope.module_scope_hash.unwrap_or_else(empty_scope_hash),
                applied,
            },
        }),
        checks: Some(checks),
        tests,
        oracles,
        accepted: false,
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
    let current = current_hashes(db, item).as_ref()?;
    let mut lock = lock.clone();
    lock.spec.hashes.prose = current.spec.prose;
    Some(lock)
}

/// Re-stamps every edge citing `label` (in `scope`) at the entry's current hash.
pub fn editorial_lock(
    db: &dyn Db,
    item: Item<'_>,
    lock: &DefinitionLock,
    scope: Scope,
    label: &str,
) -> Option<DefinitionLock> {
    let current = current_hashes(db, item).as_ref()?;
    let hash = *current.decisions.get(&(scope, label.to_owned()))?;
    let mut lock = lock.clone();
    let lowering = lock.lowering.as_mut()?;
    let mut changed = false;
    for edge in &mut lowering.decisions.applied {
        if edge.scope == scope && edge.label == label && edge.hash != hash {
            edge.hash = hash;
            changed = true;
        }
    }
    changed.then_some(lock)
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
pub fn spec_lock(db: &dyn Db, spec: SourceFile, toolchain: &Toolchain) -> Option<Lock> {
    let parse = parse_spec(db, spec);
    let name = parse.file.frontmatter.name.clone().unwrap_or_default();
    let record = spec_record(db, spec);
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
            decisions: decisions_record(db, spec),
            accepted: false,
        }),
        FileKind::Project => Lock::Project(ProjectLock {
            name,
            toolchain: toolchain.clone(),
            spec: record,
            decisions: decisions_record(db, spec),
            accepted: false,
        }),
        FileKind::Type => Lock::Type(TypeLock {
            name,
            toolchain: toolchain.clone(),
            spec: record,
            checks: Some(TypeChecks {
                declaration: Verdict::Ok,
                invariants: BTreeMap::new(),
            }),
            cycle_hash: None,
            tests: Vec::new(),
            accepted: false,
        }),
        FileKind::Function | FileKind::Unknown => return None,
    })
}
