//! `soil.lock` by pure merge: the golden manifest over the samples, helper
//! ownership and collection, the audit view, and the root-wide invariants.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod common;

use std::collections::BTreeMap;
use std::fs;

use common::{edge, h};
use trellis_lock::*;

/// `midrange` shares `_halfway` with `median`, so the helper has two owners;
/// its termination is waived by an `allow` grant.
fn midrange() -> Lock {
    let Lock::Function(mut lock) = common::median() else {
        panic!("median is a function lock")
    };
    lock.name = "midrange".to_owned();
    lock.accepted = false;
    lock.spec.allow = vec!["nonstructural-recursion: halves the range each step".to_owned()];
    if let Some(checks) = &mut lock.checks {
        checks.termination = Termination::Assumed;
    }
    if let Some(lowering) = &mut lock.lowering {
        lowering.calls = vec![edge("maximum"), edge("minimum")];
    }
    Lock::Function(lock)
}

fn root() -> Vec<(String, Lock)> {
    vec![
        ("_project".to_owned(), common::project()),
        ("csvstats/_module".to_owned(), common::csvstats_module()),
        ("csvstats/mean".to_owned(), common::mean()),
        ("csvstats/median".to_owned(), common::median()),
        ("csvstats/midrange".to_owned(), midrange()),
        ("csvstats/parse_row".to_owned(), common::parse_row_partial()),
        ("csvstats/Row".to_owned(), common::row_type()),
    ]
}

fn function_of<'a>(locks: &'a mut [(String, Lock)], name: &str) -> &'a mut DefinitionLock {
    match locks.iter_mut().find(|(n, _)| n == name) {
        Some((_, Lock::Function(lock))) => lock,
        _ => panic!("{name} is not a function lock in the root"),
    }
}

fn lowering_of<'a>(locks: &'a mut [(String, Lock)], name: &str) -> &'a mut Lowering {
    function_of(locks, name)
        .lowering
        .as_mut()
        .unwrap_or_else(|| panic!("{name} is lowered"))
}

fn trusted() -> BTreeMap<String, trellis_hash::Digest> {
    BTreeMap::from([("prelude".to_owned(), h("prelude package"))])
}

#[test]
fn merge_is_golden_and_round_trips() {
    let soil_lock = merge(root(), trusted());
    let written = write_soil_lock(&soil_lock);
    let path = common::data_dir().join("merge/soil.lock");
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        fs::write(&path, &written).expect("bless soil.lock");
    }
    let golden = fs::read_to_string(&path).expect("test-data/lock/merge/soil.lock");
    assert_eq!(
        written, golden,
        "soil.lock drifted (UPDATE_EXPECT=1 to bless)"
    );
    let read = read_soil_lock(&golden).unwrap_or_else(|d| panic!("{d:#?}"));
    assert_eq!(read, soil_lock);
    assert_eq!(write_soil_lock(&read), golden);
    assert_eq!(check_soil_lock(&soil_lock), Vec::new());
}

#[test]
fn helpers_carry_every_owner_and_ownerless_ones_are_collected() {
    let soil_lock = merge(root(), trusted());
    let nodes: Vec<(String, Vec<String>)> = soil_lock
        .soil_private
        .iter()
        .map(|n| (n.name.clone(), n.owners.clone()))
        .collect();
    assert_eq!(
        nodes,
        [
            (
                "csvstats/_halfway".to_owned(),
                vec!["csvstats/median".to_owned(), "csvstats/midrange".to_owned()]
            ),
            (
                "csvstats/_parse_cell".to_owned(),
                vec!["csvstats/parse_row".to_owned()]
            ),
        ]
    );

    // parse_row is re-lowered without its helper: the next merge drops the
    // node, and the helper left on disk is reported for collection.
    let mut relowered = root();
    lowering_of(&mut relowered, "csvstats/parse_row")
        .private_helpers
        .clear();
    let next = merge(relowered, trusted());
    assert!(
        next.soil_private
            .iter()
            .all(|n| n.name != "csvstats/_parse_cell")
    );
    let on_disk = [
        "csvstats/_halfway",
        "csvstats/_parse_cell",
        "csvstats/_old_trim",
    ];
    assert_eq!(
        ownerless_helpers(&next, on_disk),
        ["csvstats/_old_trim", "csvstats/_parse_cell"]
    );
}

#[test]
fn the_audit_view_lists_grants_and_what_they_waive() {
    let soil_lock = merge(root(), trusted());
    let view: Vec<String> = soil_lock
        .escape_hatches
        .iter()
        .map(|e| format!("{} {} {}", e.definition, e.kind.word(), e.text))
        .collect();
    assert_eq!(
        view,
        [
            "csvstats/midrange allow nonstructural-recursion: halves the range each step",
            "csvstats/midrange assumed termination",
        ]
    );
}

#[test]
fn owners_disagreeing_on_a_helper_hash_are_flagged() {
    let mut locks = root();
    lowering_of(&mut locks, "csvstats/midrange").private_helpers[0].hash = h("an older _halfway");
    let codes: Vec<String> = check_soil_lock(&merge(locks, trusted()))
        .into_iter()
        .map(|d| format!("{} {}", d.code, d.notes[0].message))
        .collect();
    assert_eq!(
        codes,
        ["lock-invariant-helper-conflict at `soil_private[1]`"]
    );
}

#[test]
fn definition_oracles_must_be_accepted_at_their_formal_hash() {
    let oracle = |source: &str, hash| OracleRow {
        kind: OracleKind::Definition,
        source: source.to_owned(),
        hash,
    };
    let median_formal = common::median().spec().hashes.formal;
    let mut locks = root();
    let midrange = function_of(&mut locks, "csvstats/midrange");
    midrange
        .oracles
        .push(oracle("csvstats/median", median_formal)); // accepted: fine
    midrange.oracles.push(oracle("csvstats/mean", h("x"))); // not accepted
    midrange.oracles.push(oracle("csvstats/gone", h("x"))); // not in the root
    let found: Vec<String> = check_soil_lock(&merge(locks, trusted()))
        .into_iter()
        .map(|d| format!("{} {}", d.code, d.notes[0].message))
        .collect();
    assert_eq!(
        found,
        [
            "lock-invariant-oracle-not-accepted at `definitions[\"csvstats/midrange\"].oracles[2]`",
            "lock-invariant-oracle-not-accepted at `definitions[\"csvstats/midrange\"].oracles[3]`",
        ]
    );
}
