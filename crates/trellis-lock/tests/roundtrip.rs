//! Property: any valid lock, written, reads back to the same model, and
//! writing that again gives the same bytes (write → read → write is a
//! fixpoint). Generated strings include quotes, backslashes and control
//! characters, so the escaping is exercised too.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use trellis_hash::Digest;
use trellis_lock::*;

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), 0..8).prop_map(String::from_iter)
}

fn nonempty() -> impl Strategy<Value = String> {
    text().prop_map(|s| format!("n{s}"))
}

fn digest() -> impl Strategy<Value = Digest> {
    any::<u64>().prop_map(|n| Digest::of(&n.to_be_bytes()))
}

fn pick<T: Copy + std::fmt::Debug + 'static>(items: &'static [T]) -> impl Strategy<Value = T> {
    prop::sample::select(items)
}

fn toolchain() -> impl Strategy<Value = Toolchain> {
    (text(), text()).prop_map(|(trellis, soil0_cli)| Toolchain { trellis, soil0_cli })
}

fn spec() -> impl Strategy<Value = SpecRecord> {
    (
        (digest(), digest(), digest()),
        prop::collection::vec(
            (
                prop::sample::select(vec![
                    "soil-sig",
                    "soil-type",
                    "exports",
                    "requires",
                    "test a",
                ]),
                pick(&[Author::Human, Author::Agent]),
            ),
            0..5,
        ),
        any::<bool>(),
        prop::collection::vec(
            prop_oneof![text(), Just("nonstructural-recursion: halves".to_owned())],
            0..3,
        ),
    )
        .prop_map(|((formal, test, prose), blocks, pinned, allow)| {
            let mut seen = BTreeSet::new();
            let blocks = blocks
                .into_iter()
                .filter(|(b, _)| seen.insert(*b))
                .map(|(block, author)| BlockAuthor {
                    block: block.to_owned(),
                    author,
                })
                .collect();
            SpecRecord {
                hashes: SpecHashes {
                    formal,
                    test,
                    prose,
                },
                blocks,
                pinned,
                allow,
            }
        })
}

/// A test row whose name has the shape its tier requires.
fn test_row(with_differential: bool) -> impl Strategy<Value = TestRow> {
    let tiers: &'static [Tier] = if with_differential {
        &[Tier::Expect, Tier::Property, Tier::Cram, Tier::Differential]
    } else {
        &[Tier::Expect, Tier::Property, Tier::Cram]
    };
    (
        pick(tiers),
        text(),
        1u32..40,
        any::<bool>(),
        pick(&[
            TestResult::Pass,
            TestResult::Pass,
            TestResult::Fail,
            TestResult::Xfail,
            TestResult::Xpass,
            TestResult::Error,
        ]),
    )
        .prop_map(|(tier, base, k, derived, result)| {
            let name = match tier {
                Tier::Expect | Tier::Cram => format!("t{base}#{k}"),
                Tier::Property if derived => format!("derived:ensures:l{base}"),
                Tier::Property => format!("p{}", base.replace('#', "")),
                Tier::Differential => format!("derived:differential:r{base}"),
            };
            TestRow {
                name,
                tier,
                mode: if tier == Tier::Cram {
                    Mode::Real
                } else {
                    Mode::Sandboxed
                },
                result,
            }
        })
}

fn tests(with_differential: bool) -> impl Strategy<Value = Vec<TestRow>> {
    prop::collection::vec(test_row(with_differential), 0..6).prop_map(|rows| {
        let mut seen = BTreeSet::new();
        rows.into_iter()
            .filter(|r| seen.insert(r.name.clone()))
            .collect()
    })
}

fn edges(prefix: &'static str) -> impl Strategy<Value = Vec<Edge>> {
    prop::collection::btree_map(text(), digest(), 0..4).prop_map(move |map| {
        map.into_iter()
            .map(|(name, hash)| Edge {
                name: format!("{prefix}{name}"),
                hash,
            })
            .collect()
    })
}

fn lowering() -> impl Strategy<Value = Lowering> {
    (
        pick(&[Provenance::Agent, Provenance::HumanVerified]),
        (text(), text()),
        digest(),
        edges("c"),
        edges("_"),
        (digest(), digest()),
        prop::collection::btree_map(
            (pick(&[Scope::Project, Scope::Module]), text()),
            digest(),
            0..3,
        ),
    )
        .prop_map(
            |(
                provenance,
                (provider, model),
                soil_hash,
                calls,
                private_helpers,
                scopes,
                applied,
            )| {
                let agent = provenance == Provenance::Agent;
                Lowering {
                    provenance,
                    provider: agent.then_some(provider),
                    model: agent.then_some(model),
                    soil_hash,
                    calls,
                    private_helpers,
                    decisions: AppliedDecisions {
                        project_scope_hash: scopes.0,
                        module_scope_hash: scopes.1,
                        applied: applied
                            .into_iter()
                            .map(|((scope, label), hash)| DecisionEdge { scope, label, hash })
                            .collect(),
                    },
                }
            },
        )
}

fn clauses(kinds: &'static [&'static str]) -> impl Strategy<Value = BTreeMap<String, Assurance>> {
    prop::collection::btree_map(
        (pick(kinds), text()).prop_map(|(kind, label)| format!("{kind}:l{label}")),
        pick(&[
            Assurance::Proven,
            Assurance::Tested,
            Assurance::Runtime,
            Assurance::Assumed,
        ]),
        0..4,
    )
}

/// Demotes assurances the rows and grants do not back (lock-schema §4).
fn honest(clauses: &mut BTreeMap<String, Assurance>, tests: &[TestRow], spec: &SpecRecord) {
    for (clause, assurance) in clauses.iter_mut() {
        let tested = tests
            .iter()
            .any(|t| t.name == format!("derived:{clause}") && t.result == TestResult::Pass);
        if (*assurance == Assurance::Tested && !tested)
            || (*assurance == Assurance::Assumed && spec.allow.is_empty())
        {
            *assurance = Assurance::Runtime;
        }
    }
}

fn unpin_agent_signature(spec: &mut SpecRecord, signature: &str) {
    if spec
        .blocks
        .iter()
        .any(|b| b.block == signature && b.author == Author::Agent)
    {
        spec.pinned = false;
    }
}

fn function_lock() -> impl Strategy<Value = Lock> {
    (
        (nonempty(), toolchain(), spec()),
        prop::option::of(lowering()),
        (
            pick(&[Verdict::Ok, Verdict::Ok, Verdict::Error]),
            clauses(&["requires", "ensures"]),
            pick(&[
                Termination::NotRecursive,
                Termination::Verified,
                Termination::Unverified,
            ]),
            prop::collection::btree_set(text(), 0..2),
        ),
        tests(true),
        pick(&[OracleKind::Reference, OracleKind::Cli]),
        digest(),
        any::<bool>(),
    )
        .prop_map(
            |((name, toolchain, mut spec), lowering, checks, mut tests, kind, hash, accepted)| {
                unpin_agent_signature(&mut spec, "soil-sig");
                let (verdict, mut clauses, termination, holes) = checks;
                let holes: Vec<String> = holes.into_iter().collect();
                let lowered = lowering.is_some();
                if !lowered || !holes.is_empty() {
                    tests.clear();
                }
                honest(&mut clauses, &tests, &spec);
                let termination = if termination == Termination::Assumed
                    && !spec.allow.iter().any(|g| g.starts_with(TERMINATION_HATCH))
                {
                    Termination::Unverified
                } else {
                    termination
                };
                let mut oracles: Vec<OracleRow> = tests
                    .iter()
                    .filter_map(|t| t.name.strip_prefix("derived:differential:"))
                    .map(|source| OracleRow {
                        kind,
                        source: source.to_owned(),
                        hash,
                    })
                    .collect();
                oracles.sort();
                let checks = lowered.then_some(Checks {
                    signature: verdict,
                    row: Verdict::Ok,
                    clauses,
                    termination,
                    holes,
                });
                let green = checks
                    .as_ref()
                    .is_some_and(|c| c.holes.is_empty() && not_green(c, &tests).is_none());
                let results_key = lowered.then_some(hash);
                Lock::Function(DefinitionLock {
                    name,
                    toolchain,
                    spec,
                    lowering,
                    checks,
                    results_key,
                    tests,
                    oracles,
                    accepted: accepted && green,
                })
            },
        )
}

fn type_lock() -> impl Strategy<Value = Lock> {
    (
        (nonempty(), toolchain(), spec()),
        prop::option::of((
            pick(&[Verdict::Ok, Verdict::Error]),
            clauses(&["invariant"]),
        )),
        prop::option::of(digest()),
        tests(false),
        any::<bool>(),
    )
        .prop_map(
            |((name, toolchain, mut spec), checks, cycle_hash, tests, accepted)| {
                unpin_agent_signature(&mut spec, "soil-type");
                let checks = checks.map(|(declaration, mut invariants)| {
                    honest(&mut invariants, &tests, &spec);
                    TypeChecks {
                        declaration,
                        invariants,
                    }
                });
                Lock::Type(TypeLock {
                    name,
                    toolchain,
                    spec,
                    checks,
                    cycle_hash,
                    tests,
                    accepted,
                })
            },
        )
}

fn decisions() -> impl Strategy<Value = DecisionsRecord> {
    (
        digest(),
        prop::collection::btree_map(nonempty(), digest(), 0..4),
    )
        .prop_map(|(scope_hash, entries)| DecisionsRecord {
            scope_hash,
            entries,
        })
}

fn module_lock() -> impl Strategy<Value = Lock> {
    (
        (nonempty(), toolchain(), spec()),
        prop::collection::btree_set(text(), 0..4),
        decisions(),
        any::<bool>(),
    )
        .prop_map(
            |((name, toolchain, mut spec), exports, decisions, accepted)| {
                unpin_agent_signature(&mut spec, "exports");
                Lock::Module(ModuleLock {
                    name,
                    toolchain,
                    spec,
                    exports: exports.into_iter().collect(),
                    decisions,
                    accepted,
                })
            },
        )
}

fn project_lock() -> impl Strategy<Value = Lock> {
    (
        (nonempty(), toolchain(), spec()),
        decisions(),
        any::<bool>(),
    )
        .prop_map(|((name, toolchain, spec), decisions, accepted)| {
            Lock::Project(ProjectLock {
                name,
                toolchain,
                spec,
                decisions,
                accepted,
            })
        })
}

fn any_lock() -> impl Strategy<Value = Lock> {
    prop_oneof![function_lock(), type_lock(), module_lock(), project_lock()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn write_read_write_is_a_fixpoint(lock in any_lock()) {
        prop_assert_eq!(check_invariants(&lock), Vec::new());
        let written = write_lock(&lock);
        let read = read_lock(&written);
        prop_assert!(read.is_ok(), "{:?}\n{}", read, written);
        let read = read.unwrap_or_else(|_| unreachable!());
        prop_assert_eq!(&read, &lock);
        prop_assert_eq!(write_lock(&read), written);
    }

    #[test]
    fn soil_lock_merges_round_trip(
        locks in prop::collection::btree_map(
            prop::sample::select(vec!["a/f", "a/g", "b/h", "top", "a/_module"]),
            any_lock(),
            0..5,
        ),
        trusted in prop::collection::btree_map(nonempty(), digest(), 0..3),
    ) {
        let soil_lock = merge(locks.into_iter().map(|(k, v)| (k.to_owned(), v)), trusted);
        let written = write_soil_lock(&soil_lock);
        let read = read_soil_lock(&written);
        prop_assert!(read.is_ok(), "{:?}\n{}", read, written);
        let read = read.unwrap_or_else(|_| unreachable!());
        prop_assert_eq!(&read, &soil_lock);
        prop_assert_eq!(write_soil_lock(&read), written);
    }

    #[test]
    fn mangled_locks_never_panic_the_reader(
        lock in any_lock(),
        cut in 0usize..4096,
        insert in "[\\[\\]{}\",:0-9a-z\\\\ ]{0,3}",
    ) {
        let mut text = write_lock(&lock);
        let mut at = cut.min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.insert_str(at, &insert);
        if let Err(diagnostics) = read_lock(&text) {
            prop_assert!(!diagnostics.is_empty());
            for d in diagnostics {
                prop_assert!(d.code.starts_with("lock-"));
                prop_assert!(d.span.is_some(), "{} has no position", d.code);
            }
        }
    }
}

mod common;

/// Backspace and form feed are written as `\u0008` and `\u000c`, the one escaper
/// soil0-cli §7 and lock-schema §1.4 name, and read back unchanged.
#[test]
fn backspace_and_form_feed_escape_as_the_soil_codec_does() {
    let text = std::fs::read_to_string(common::data_dir().join("ok/median.lock")).expect("fixture");
    let Ok(Lock::Function(mut lock)) = read_lock(&text) else {
        panic!("median.lock is a function lock");
    };
    lock.toolchain.trellis = "a\u{8}b\u{c}c\u{1}".to_owned();
    let written = write_lock(&Lock::Function(lock.clone()));
    assert!(written.contains(r#""a\u0008b\u000cc\u0001""#), "{written}");
    assert_eq!(read_lock(&written).ok(), Some(Lock::Function(lock)));
}
