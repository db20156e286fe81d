//! The closed vocabularies of the schema and their spellings, shared by the
//! writer and the reader so the two can never disagree.

use crate::model::*;

/// A closed set of words written as JSON strings.
pub trait Word: Copy + PartialEq + 'static {
    const WORDS: &'static [(&'static str, Self)];

    fn word(self) -> &'static str {
        Self::WORDS
            .iter()
            .find(|(_, value)| *value == self)
            .map_or("", |(word, _)| word)
    }

    fn from_word(text: &str) -> Option<Self> {
        Self::WORDS
            .iter()
            .find(|(word, _)| *word == text)
            .map(|(_, value)| *value)
    }

    /// `a | b | c`, for messages.
    fn expected() -> String {
        Self::WORDS
            .iter()
            .map(|(w, _)| *w)
            .collect::<Vec<_>>()
            .join(" | ")
    }
}

impl Word for Kind {
    const WORDS: &'static [(&'static str, Self)] = &[
        ("function", Kind::Function),
        ("type", Kind::Type),
        ("module", Kind::Module),
        ("project", Kind::Project),
    ];
}

impl Word for Author {
    const WORDS: &'static [(&'static str, Self)] =
        &[("human", Author::Human), ("agent", Author::Agent)];
}

impl Word for Provenance {
    const WORDS: &'static [(&'static str, Self)] = &[
        ("agent", Provenance::Agent),
        ("human-verified", Provenance::HumanVerified),
    ];
}

impl Word for Scope {
    const WORDS: &'static [(&'static str, Self)] =
        &[("project", Scope::Project), ("module", Scope::Module)];
}

impl Word for Verdict {
    const WORDS: &'static [(&'static str, Self)] =
        &[("ok", Verdict::Ok), ("error", Verdict::Error)];
}

impl Word for Assurance {
    const WORDS: &'static [(&'static str, Self)] = &[
        ("proven", Assurance::Proven),
        ("tested", Assurance::Tested),
        ("runtime", Assurance::Runtime),
        ("assumed", Assurance::Assumed),
    ];
}

impl Word for Termination {
    const WORDS: &'static [(&'static str, Self)] = &[
        ("not-recursive", Termination::NotRecursive),
        ("verified", Termination::Verified),
        ("unverified", Termination::Unverified),
        ("assumed", Termination::Assumed),
    ];
}

impl Word for Tier {
    const WORDS: &'static [(&'static str, Self)] = &[
        ("expect", Tier::Expect),
        ("property", Tier::Property),
        ("cram", Tier::Cram),
        ("differential", Tier::Differential),
    ];
}

impl Word for Mode {
    const WORDS: &'static [(&'static str, Self)] =
        &[("sandboxed", Mode::Sandboxed), ("real", Mode::Real)];
}

impl Word for TestResult {
    const WORDS: &'static [(&'static str, Self)] = &[
        ("pass", TestResult::Pass),
        ("fail", TestResult::Fail),
        ("xfail", TestResult::Xfail),
        ("xpass", TestResult::Xpass),
        ("error", TestResult::Error),
    ];
}

impl Word for OracleKind {
    const WORDS: &'static [(&'static str, Self)] = &[
        ("reference", OracleKind::Reference),
        ("cli", OracleKind::Cli),
        ("definition", OracleKind::Definition),
    ];
}

impl Word for HatchKind {
    const WORDS: &'static [(&'static str, Self)] =
        &[("allow", HatchKind::Allow), ("assumed", HatchKind::Assumed)];
}

/// Top-level keys in schema order, per lock kind (lock-schema §1.3).
pub const FUNCTION_KEYS: &[&str] = &[
    "lock_format",
    "name",
    "kind",
    "toolchain",
    "spec",
    "lowering",
    "checks",
    "results_key",
    "tests",
    "oracles",
    "accepted",
];
/// A format-1 function lock: the same without `results_key` (lock-schema §1.5).
pub const FUNCTION_KEYS_V1: &[&str] = &[
    "lock_format",
    "name",
    "kind",
    "toolchain",
    "spec",
    "lowering",
    "checks",
    "tests",
    "oracles",
    "accepted",
];
pub const TYPE_KEYS: &[&str] = &[
    "lock_format",
    "name",
    "kind",
    "toolchain",
    "spec",
    "checks",
    "cycle_hash",
    "tests",
    "accepted",
];
pub const MODULE_KEYS: &[&str] = &[
    "lock_format",
    "name",
    "kind",
    "toolchain",
    "spec",
    "exports",
    "decisions",
    "accepted",
];
pub const PROJECT_KEYS: &[&str] = &[
    "lock_format",
    "name",
    "kind",
    "toolchain",
    "spec",
    "decisions",
    "accepted",
];
pub const SOIL_LOCK_KEYS: &[&str] = &[
    "lock_format",
    "definitions",
    "soil_private",
    "escape_hatches",
    "trusted_packages",
];

pub const TOOLCHAIN_KEYS: &[&str] = &["trellis", "soil0_cli"];
pub const SPEC_KEYS: &[&str] = &["hashes", "blocks", "pinned", "allow"];
pub const HASHES_KEYS: &[&str] = &["formal", "test", "prose"];
pub const BLOCK_KEYS: &[&str] = &["block", "author"];
pub const LOWERING_KEYS: &[&str] = &[
    "provenance",
    "provider",
    "model",
    "soil_hash",
    "calls",
    "private_helpers",
    "decisions",
];
pub const EDGE_KEYS: &[&str] = &["name", "hash"];
pub const APPLIED_KEYS: &[&str] = &["project_scope_hash", "module_scope_hash", "applied"];
pub const DECISION_EDGE_KEYS: &[&str] = &["scope", "label", "hash"];
pub const CHECKS_KEYS: &[&str] = &["signature", "row", "clauses", "termination", "holes"];
pub const TEST_KEYS: &[&str] = &["name", "tier", "mode", "result"];
pub const ORACLE_KEYS: &[&str] = &["kind", "source", "hash"];
pub const TYPE_CHECKS_KEYS: &[&str] = &["declaration", "invariants"];
pub const DECISIONS_KEYS: &[&str] = &["scope_hash", "entries"];
pub const PRIVATE_NODE_KEYS: &[&str] = &["name", "hash", "owners"];
pub const HATCH_KEYS: &[&str] = &["definition", "kind", "text"];
