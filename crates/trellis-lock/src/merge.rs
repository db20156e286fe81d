//! `soil.lock` as a pure merge of the sidecar locks (lock-schema §7): nothing
//! in it is maintained by hand or carried over from a previous merge, so a
//! helper nobody owns any more simply stops appearing (its collection).

use std::collections::{BTreeMap, BTreeSet};

use trellis_diag::Diagnostic;
use trellis_hash::Digest;

use crate::codes::Code;
use crate::invariants::{Seg, Violation};
use crate::model::*;

/// Merges every sidecar, keyed by qualified name (`csvstats/median`), with
/// soil.toml's trusted packages.
pub fn merge(
    locks: impl IntoIterator<Item = (String, Lock)>,
    trusted_packages: BTreeMap<String, Digest>,
) -> SoilLock {
    let definitions: BTreeMap<String, Lock> = locks.into_iter().collect();
    let mut owners: BTreeMap<(String, Digest), BTreeSet<String>> = BTreeMap::new();
    let mut escape_hatches = Vec::new();
    for (qualified, lock) in &definitions {
        for grant in &lock.spec().allow {
            escape_hatches.push(EscapeHatch {
                definition: qualified.clone(),
                kind: HatchKind::Allow,
                text: grant.clone(),
            });
        }
        let assumed = match lock {
            Lock::Function(l) => l.checks.as_ref().map(|c| &c.clauses),
            Lock::Type(l) => l.checks.as_ref().map(|c| &c.invariants),
            Lock::Module(_) | Lock::Project(_) => None,
        };
        for (clause, assurance) in assumed.into_iter().flatten() {
            if *assurance == Assurance::Assumed {
                escape_hatches.push(EscapeHatch {
                    definition: qualified.clone(),
                    kind: HatchKind::Assumed,
                    text: clause.clone(),
                });
            }
        }
        if let Lock::Function(DefinitionLock {
            checks: Some(checks),
            ..
        }) = lock
            && checks.termination == Termination::Assumed
        {
            escape_hatches.push(EscapeHatch {
                definition: qualified.clone(),
                kind: HatchKind::Assumed,
                text: "termination".to_owned(),
            });
        }
        if let Lock::Function(DefinitionLock {
            lowering: Some(lowering),
            ..
        }) = lock
        {
            for helper in &lowering.private_helpers {
                owners
                    .entry((qualify(qualified, &helper.name), helper.hash))
                    .or_default()
                    .insert(qualified.clone());
            }
        }
    }
    escape_hatches.sort();
    SoilLock {
        definitions,
        soil_private: owners
            .into_iter()
            .map(|((name, hash), owners)| PrivateNode {
                name,
                hash,
                owners: owners.into_iter().collect(),
            })
            .collect(),
        escape_hatches,
        trusted_packages,
    }
}

/// A private helper lives in its owner's module: `csvstats/parse_row` owns
/// `_parse_cell` as `csvstats/_parse_cell`.
pub fn qualify(owner: &str, helper: &str) -> String {
    match owner.rsplit_once('/') {
        Some((module, _)) => format!("{module}/{helper}"),
        None => helper.to_owned(),
    }
}

/// The helpers defined on disk (qualified names) that no lowering owns any
/// more: the host deletes them from `_private.soil`.
pub fn ownerless_helpers<'a>(
    soil_lock: &SoilLock,
    on_disk: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    let owned: BTreeSet<&str> = soil_lock
        .soil_private
        .iter()
        .map(|n| n.name.as_str())
        .collect();
    let mut collected: Vec<String> = on_disk
        .into_iter()
        .filter(|name| !owned.contains(name))
        .map(str::to_owned)
        .collect();
    collected.sort();
    collected.dedup();
    collected
}

/// The invariants only the whole root can check (lock-schema §7.2, §8.4):
/// owners agree on each helper's hash, and definition oracles are accepted
/// definitions pinned at their current formal hash.
pub fn check_soil_lock(soil_lock: &SoilLock) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    let mut by_name: BTreeMap<&str, Vec<&PrivateNode>> = BTreeMap::new();
    for node in &soil_lock.soil_private {
        by_name.entry(&node.name).or_default().push(node);
    }
    for (name, nodes) in by_name {
        if nodes.len() > 1 {
            let index = soil_lock
                .soil_private
                .iter()
                .position(|n| std::ptr::eq(n, nodes[1]))
                .unwrap_or(0);
            let owners: Vec<String> = nodes
                .iter()
                .map(|n| format!("{} by {}", n.hash, n.owners.join(", ")))
                .collect();
            found.push(Violation {
                code: Code::HelperConflict,
                message: format!(
                    "owners of `{name}` recorded different hashes ({}); re-check the stale owner",
                    owners.join("; ")
                ),
                path: vec![Seg::Key("soil_private"), Seg::Index(index)],
            });
        }
    }
    for (qualified, lock) in &soil_lock.definitions {
        let Lock::Function(l) = lock else { continue };
        for (i, oracle) in l.oracles.iter().enumerate() {
            if oracle.kind != OracleKind::Definition {
                continue;
            }
            let problem = match soil_lock.definitions.get(&oracle.source) {
                None => Some("is not a definition in this root".to_owned()),
                Some(target) if !target.accepted() => Some("is not accepted".to_owned()),
                Some(target) if target.spec().hashes.formal != oracle.hash => {
                    Some("changed its formal hash since it was recorded".to_owned())
                }
                Some(_) => None,
            };
            if let Some(problem) = problem {
                found.push(Violation {
                    code: Code::OracleNotAccepted,
                    message: format!(
                        "oracle definition `{}` {problem}; only accepted definitions are oracles",
                        oracle.source
                    ),
                    path: vec![
                        Seg::Key("definitions"),
                        Seg::Entry(qualified.clone()),
                        Seg::Key("oracles"),
                        Seg::Index(i),
                    ],
                });
            }
        }
    }
    found.iter().map(Violation::to_diagnostic).collect()
}
