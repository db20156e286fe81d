//! Builders for the sample locks under `test-data/lock/`: real digests of
//! descriptive labels, so fixtures carry honest `sha256:` + 64 hex values.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use trellis_hash::Digest;
use trellis_lock::*;

pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../test-data/lock")
}

pub fn h(label: &str) -> Digest {
    Digest::of(label.as_bytes())
}

pub fn toolchain() -> Toolchain {
    Toolchain {
        trellis: "0.1.0".to_owned(),
        soil0_cli: "1.2.0".to_owned(),
    }
}

pub fn block(block: &str, author: Author) -> BlockAuthor {
    BlockAuthor {
        block: block.to_owned(),
        author,
    }
}

pub fn spec(name: &str, blocks: Vec<BlockAuthor>, pinned: bool) -> SpecRecord {
    SpecRecord {
        hashes: SpecHashes {
            formal: h(&format!("{name} formal")),
            test: h(&format!("{name} test")),
            prose: h(&format!("{name} prose")),
        },
        blocks,
        pinned,
        allow: Vec::new(),
    }
}

pub fn edge(name: &str) -> Edge {
    Edge {
        name: name.to_owned(),
        hash: h(&format!("{name} soil")),
    }
}

pub fn row(name: &str, tier: Tier, result: TestResult) -> TestRow {
    TestRow {
        name: name.to_owned(),
        tier,
        mode: if tier == Tier::Cram {
            Mode::Real
        } else {
            Mode::Sandboxed
        },
        result,
    }
}

pub fn no_decisions() -> AppliedDecisions {
    AppliedDecisions {
        project_scope_hash: h("project scope"),
        module_scope_hash: h("csvstats scope"),
        applied: Vec::new(),
    }
}

/// `mean`: specified, never lowered.
pub fn mean() -> Lock {
    Lock::Function(DefinitionLock {
        name: "mean".to_owned(),
        toolchain: toolchain(),
        spec: spec(
            "mean",
            vec![
                block("soil-sig", Author::Human),
                block("requires", Author::Human),
                block("test basics", Author::Human),
            ],
            false,
        ),
        lowering: None,
        checks: None,
        results_key: None,
        tests: Vec::new(),
        oracles: Vec::new(),
        accepted: false,
    })
}

pub const MEDIAN_REFERENCE: &str = "python: reference/stats.py::median";

/// `median`: green, human-verified, accepted, with calls, a private helper,
/// derived and differential tests and a reference oracle.
/// The suite key the `median` fixture's rows were sealed under.
#[allow(non_snake_case)]
pub fn median_suite_key() -> Digest {
    h("median suite")
}

pub fn median() -> Lock {
    let mut clauses = BTreeMap::new();
    clauses.insert("requires:non_empty".to_owned(), Assurance::Runtime);
    clauses.insert("requires:finite".to_owned(), Assurance::Runtime);
    clauses.insert("ensures:bounded".to_owned(), Assurance::Tested);
    let tests = vec![
        row("basics#1", Tier::Expect, TestResult::Pass),
        row("basics#2", Tier::Expect, TestResult::Pass),
        row("basics#3", Tier::Expect, TestResult::Pass),
        row("order_free", Tier::Property, TestResult::Pass),
        row(
            "derived:requires:non_empty",
            Tier::Property,
            TestResult::Pass,
        ),
        row("derived:requires:finite", Tier::Property, TestResult::Pass),
        row("derived:ensures:bounded", Tier::Property, TestResult::Pass),
        row(
            &format!("derived:differential:{MEDIAN_REFERENCE}"),
            Tier::Differential,
            TestResult::Pass,
        ),
    ];
    Lock::Function(DefinitionLock {
        name: "median".to_owned(),
        toolchain: toolchain(),
        spec: spec(
            "median",
            vec![
                block("soil-sig", Author::Human),
                block("requires", Author::Human),
                block("ensures", Author::Human),
                block("test basics", Author::Human),
                block("property order_free", Author::Agent),
                block("reference", Author::Human),
            ],
            true,
        ),
        lowering: Some(Lowering {
            provenance: Provenance::HumanVerified,
            provider: None,
            model: None,
            soil_hash: h("median soil"),
            calls: vec![edge("at"), edge("len"), edge("sort")],
            private_helpers: vec![edge("_halfway")],
            decisions: AppliedDecisions {
                applied: vec![DecisionEdge {
                    scope: Scope::Project,
                    label: "floats".to_owned(),
                    hash: h("floats entry"),
                }],
                ..no_decisions()
            },
        }),
        checks: Some(Checks {
            signature: Verdict::Ok,
            row: Verdict::Ok,
            clauses,
            termination: Termination::NotRecursive,
            holes: Vec::new(),
        }),
        results_key: Some(seal_results(median_suite_key(), &tests)),
        tests,
        oracles: vec![OracleRow {
            kind: OracleKind::Reference,
            source: MEDIAN_REFERENCE.to_owned(),
            hash: h("reference/stats.py"),
        }],
        accepted: true,
    })
}

/// `parse_row`: an agent lowering that ran out of budget with holes open.
pub fn parse_row_partial() -> Lock {
    let mut clauses = BTreeMap::new();
    clauses.insert("ensures:width".to_owned(), Assurance::Runtime);
    Lock::Function(DefinitionLock {
        name: "parse_row".to_owned(),
        toolchain: toolchain(),
        spec: spec(
            "parse_row",
            vec![
                block("soil-sig", Author::Human),
                block("ensures", Author::Human),
                block("test cells", Author::Human),
            ],
            false,
        ),
        lowering: Some(Lowering {
            provenance: Provenance::Agent,
            provider: Some("claude-code".to_owned()),
            model: Some("example-model-1".to_owned()),
            soil_hash: h("parse_row soil"),
            calls: vec![edge("split")],
            private_helpers: vec![edge("_parse_cell")],
            decisions: AppliedDecisions {
                applied: vec![DecisionEdge {
                    scope: Scope::Module,
                    label: "cell-errors".to_owned(),
                    hash: h("cell-errors entry"),
                }],
                ..no_decisions()
            },
        }),
        checks: Some(Checks {
            signature: Verdict::Ok,
            row: Verdict::Ok,
            clauses,
            termination: Termination::NotRecursive,
            holes: vec!["quoted".to_owned(), "escape".to_owned()],
        }),
        results_key: None,
        tests: Vec::new(),
        oracles: Vec::new(),
        accepted: false,
    })
}

/// `csvstats/_module.tr`: exports and two decision entries.
pub fn csvstats_module() -> Lock {
    let mut entries = BTreeMap::new();
    entries.insert("cell-errors".to_owned(), h("cell-errors entry"));
    entries.insert("header-row".to_owned(), h("header-row entry"));
    Lock::Module(ModuleLock {
        name: "csvstats".to_owned(),
        toolchain: toolchain(),
        spec: spec(
            "csvstats",
            vec![
                block("exports", Author::Human),
                block("decisions", Author::Human),
            ],
            true,
        ),
        exports: vec![
            "median".to_owned(),
            "mean".to_owned(),
            "parse_row".to_owned(),
        ],
        decisions: DecisionsRecord {
            scope_hash: h("csvstats scope"),
            entries,
        },
        accepted: true,
    })
}

/// `_project.tr`: one project decision.
pub fn project() -> Lock {
    let mut entries = BTreeMap::new();
    entries.insert("floats".to_owned(), h("floats entry"));
    Lock::Project(ProjectLock {
        name: "examples".to_owned(),
        toolchain: toolchain(),
        spec: spec("examples", vec![block("decisions", Author::Human)], false),
        decisions: DecisionsRecord {
            scope_hash: h("project scope"),
            entries,
        },
        accepted: false,
    })
}

/// `Row`: a type spec with an invariant (refused as a property in v1, so no
/// test rows); accepted ungated, as type entries are in v1.
pub fn row_type() -> Lock {
    let mut invariants = BTreeMap::new();
    invariants.insert("invariant:same_width".to_owned(), Assurance::Runtime);
    let spec = spec(
        "Row",
        vec![
            block("soil-type", Author::Human),
            block("invariant", Author::Human),
        ],
        true,
    );
    Lock::Type(TypeLock {
        name: "Row".to_owned(),
        toolchain: toolchain(),
        spec,
        checks: Some(TypeChecks {
            declaration: Verdict::Ok,
            invariants,
        }),
        cycle_hash: None,
        tests: Vec::new(),
        accepted: true,
    })
}

/// Every sample, by fixture file name.
pub fn samples() -> Vec<(&'static str, Lock)> {
    vec![
        ("mean.lock", mean()),
        ("median.lock", median()),
        ("parse_row.partial.lock", parse_row_partial()),
        ("csvstats._module.lock", csvstats_module()),
        ("_project.lock", project()),
        ("Row.lock", row_type()),
    ]
}
