//! The lock model: plain data, one type per lock-schema declaration (no serde;
//! the writer and reader in this crate own the surface form).

use std::collections::BTreeMap;

use trellis_hash::Digest;

/// The lock-schema format this build reads and writes. A lock carrying a
/// larger number is refused (`lock-format-newer`), never misread.
pub const LOCK_FORMAT: u64 = 2;

/// The oldest format this build still reads. Format 1 predates `results_key`;
/// such a lock reads with `results_key: None`, so its rows count as never run
/// under the current inputs and the next `trellis test` re-runs them.
pub const OLDEST_LOCK_FORMAT: u64 = 1;

/// One sidecar lock file, by the kind of its `.tr` (lock-schema §1.3).
// Locks are built once per write and matched often; boxing the function
// variant would cost every match a dereference to save a few hundred bytes.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lock {
    Function(DefinitionLock),
    Type(TypeLock),
    Module(ModuleLock),
    Project(ProjectLock),
}

impl Lock {
    pub fn name(&self) -> &str {
        match self {
            Lock::Function(lock) => &lock.name,
            Lock::Type(lock) => &lock.name,
            Lock::Module(lock) => &lock.name,
            Lock::Project(lock) => &lock.name,
        }
    }

    pub fn kind(&self) -> Kind {
        match self {
            Lock::Function(_) => Kind::Function,
            Lock::Type(_) => Kind::Type,
            Lock::Module(_) => Kind::Module,
            Lock::Project(_) => Kind::Project,
        }
    }

    pub fn spec(&self) -> &SpecRecord {
        match self {
            Lock::Function(lock) => &lock.spec,
            Lock::Type(lock) => &lock.spec,
            Lock::Module(lock) => &lock.spec,
            Lock::Project(lock) => &lock.spec,
        }
    }

    pub fn accepted(&self) -> bool {
        match self {
            Lock::Function(lock) => lock.accepted,
            Lock::Type(lock) => lock.accepted,
            Lock::Module(lock) => lock.accepted,
            Lock::Project(lock) => lock.accepted,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Function,
    Type,
    Module,
    Project,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Function, Kind::Type, Kind::Module, Kind::Project];

    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::Function => "function",
            Kind::Type => "type",
            Kind::Module => "module",
            Kind::Project => "project",
        }
    }
}

/// The toolchain that wrote the lock (audit only; the pin lives in soil.toml).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolchain {
    pub trellis: String,
    pub soil0_cli: String,
}

/// What the lock knows about its `.tr` (lock-schema §1.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecRecord {
    pub hashes: SpecHashes,
    /// Every reserved block in document order, with who wrote it.
    pub blocks: Vec<BlockAuthor>,
    /// The human approved the public signature (or export list).
    pub pinned: bool,
    /// The `allow` block's grants, one per non-empty line, verbatim.
    pub allow: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SpecHashes {
    pub formal: Digest,
    pub test: Digest,
    pub prose: Digest,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockAuthor {
    /// The block's identity: info-string keyword plus its name, if any
    /// (`soil-sig`, `test basics`); `xfail` and `@agent` are not identity.
    pub block: String,
    pub author: Author,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Author {
    Human,
    Agent,
}

/// A function definition's lock (lock-schema §1.3, §3–§5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefinitionLock {
    pub name: String,
    pub toolchain: Toolchain,
    pub spec: SpecRecord,
    pub lowering: Option<Lowering>,
    pub checks: Option<Checks>,
    /// The suite key the rows were computed under, sealed with the rows
    /// (lock-schema §5.4); `None` when no suite has run under this format.
    pub results_key: Option<Digest>,
    pub tests: Vec<TestRow>,
    pub oracles: Vec<OracleRow>,
    pub accepted: bool,
}

/// The lowering record (lock-schema §3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lowering {
    pub provenance: Provenance,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub soil_hash: Digest,
    pub calls: Vec<Edge>,
    pub private_helpers: Vec<Edge>,
    pub decisions: AppliedDecisions,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Provenance {
    Agent,
    HumanVerified,
}

/// A named dependency pinned at the hash it was checked against.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    pub name: String,
    pub hash: Digest,
}

/// Reliance edges on decision entries plus the scope hashes they were
/// applied under (lock-schema §2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppliedDecisions {
    pub project_scope_hash: Digest,
    pub module_scope_hash: Digest,
    pub applied: Vec<DecisionEdge>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DecisionEdge {
    pub scope: Scope,
    pub label: String,
    pub hash: Digest,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    Project,
    Module,
}

/// Checker facts about the lowered Soil (lock-schema §3.3, §4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checks {
    pub signature: Verdict,
    pub row: Verdict,
    /// `requires:<label>` / `ensures:<label>` → assurance.
    pub clauses: BTreeMap<String, Assurance>,
    pub termination: Termination,
    /// Names of unfilled typed holes; non-empty means `partial(holes)`.
    pub holes: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    Ok,
    Error,
}

/// How much a clause is known to hold (lock-schema §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Assurance {
    Proven,
    Tested,
    Runtime,
    Assumed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Termination {
    NotRecursive,
    Verified,
    Unverified,
    /// Waived by a `nonstructural-recursion` grant in the `allow` block.
    Assumed,
}

/// One test result (lock-schema §5.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestRow {
    pub name: String,
    pub tier: Tier,
    pub mode: Mode,
    pub result: TestResult,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tier {
    Expect,
    Property,
    Cram,
    Differential,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    Sandboxed,
    Real,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TestResult {
    Pass,
    Fail,
    Xfail,
    Xpass,
    Error,
}

impl TestResult {
    /// `pass` and `xfail` are what a green entry may hold.
    pub fn is_green(self) -> bool {
        matches!(self, TestResult::Pass | TestResult::Xfail)
    }
}

/// Something the tests depend on beyond the definition (lock-schema §5.3).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct OracleRow {
    pub kind: OracleKind,
    /// The reference line (`python: reference/stats.py::median`, `cli: soil0
    /// parse`) or, for a definition oracle, its qualified name.
    pub source: String,
    pub hash: Digest,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OracleKind {
    Reference,
    Cli,
    Definition,
}

/// A type spec's lock (lock-schema §6.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeLock {
    pub name: String,
    pub toolchain: Toolchain,
    pub spec: SpecRecord,
    pub checks: Option<TypeChecks>,
    pub cycle_hash: Option<Digest>,
    pub tests: Vec<TestRow>,
    pub accepted: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeChecks {
    pub declaration: Verdict,
    /// `invariant:<label>` → assurance.
    pub invariants: BTreeMap<String, Assurance>,
}

/// A `_module.tr` lock (lock-schema §6.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleLock {
    pub name: String,
    pub toolchain: Toolchain,
    pub spec: SpecRecord,
    pub exports: Vec<String>,
    pub decisions: DecisionsRecord,
    pub accepted: bool,
}

/// A `_project.tr` lock (lock-schema §6.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectLock {
    pub name: String,
    pub toolchain: Toolchain,
    pub spec: SpecRecord,
    pub decisions: DecisionsRecord,
    pub accepted: bool,
}

/// A scope's decision entries, hashed one by one (lock-schema §2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecisionsRecord {
    pub scope_hash: Digest,
    pub entries: BTreeMap<String, Digest>,
}

/// `soil.lock`: the pure merge of every sidecar (lock-schema §7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SoilLock {
    /// Qualified name (`csvstats/median`) → that definition's lock.
    pub definitions: BTreeMap<String, Lock>,
    pub soil_private: Vec<PrivateNode>,
    pub escape_hatches: Vec<EscapeHatch>,
    pub trusted_packages: BTreeMap<String, Digest>,
}

/// A private helper with every definition whose lowering owns it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PrivateNode {
    pub name: String,
    pub hash: Digest,
    pub owners: Vec<String>,
}

/// One line of the escape-hatch audit view.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct EscapeHatch {
    pub definition: String,
    pub kind: HatchKind,
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HatchKind {
    /// A grant in the definition's `allow` block.
    Allow,
    /// A clause whose assurance is `assumed`.
    Assumed,
}
