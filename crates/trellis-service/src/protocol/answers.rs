//! The answers of the service's methods, field for field as the wire (and
//! `--json`) has them. The service builds them, `render.rs` and the clients
//! read them; every answer also carries the service's `timings`, which these
//! types leave to [`Timings`].

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use trellis_diag::Diagnostic;

/// Where a request's time went, added to every answer as `timings`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    pub refresh_us: u64,
    pub queries_us: u64,
    pub files_changed: usize,
    /// Entries of the root-wide check and status answered ahead since the
    /// previous request, when the change feed reported an edit, and taken
    /// into the answers: by this request, or joined in the background
    /// (design §7.10).
    #[serde(default)]
    pub answered_ahead: usize,
    /// How long the daemon worked ahead on the changes this request reports,
    /// apart from the time the request itself waited for that work (design
    /// §7.10): with `refresh_us` and `queries_us`, its whole work for them.
    #[serde(default)]
    pub ahead_us: u64,
    /// Whether the answer was read from the answers a previous daemon or run
    /// stored, the root not loaded (design §7.16); left out when not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_store: bool,
}

/// `refresh`: the files that could not be loaded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RefreshAnswer {
    pub problems: Vec<Diagnostic>,
}

/// `check`: the static pipeline's findings and the holes left open.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckAnswer {
    pub checked: usize,
    pub errors: Vec<Diagnostic>,
    pub holes: Vec<OpenHole>,
}

/// An open hole: where it is, its goal, the names in scope.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpenHole {
    pub def: String,
    pub hole: String,
    pub goal: String,
    pub scope: Vec<InScope>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InScope {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
}

/// `status`: a row per definition, module and project, then the open questions
/// and the problems, each only when there are any (a clean root's document
/// stays as it was).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StatusAnswer {
    pub definitions: Vec<StatusRow>,
    /// With `summary`: the rows left out, counted by status and kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<OmittedRows>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<Question>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<Diagnostic>,
}

/// How many rows of one status and kind a summarized `status` left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OmittedRows {
    pub status: String,
    pub kind: String,
    pub count: usize,
}

/// A summarized `status` shows at most this many rows of each status that
/// needs work (and none of the settled ones).
pub const SUMMARY_ROWS_PER_STATUS: usize = 10;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StatusRow {
    /// `module::name`, `module` (a module's decisions) or `project`.
    pub name: String,
    /// `function`, `type` or `scope`.
    pub kind: String,
    pub status: String,
    pub reason: Option<String>,
    pub fix: Option<String>,
    /// A `decision-flagged` row's recorded triage verdict, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triage: Option<TriageVerdict>,
}

impl StatusRow {
    /// Whether the row needs nothing done.
    pub fn is_settled(&self) -> bool {
        is_settled(&self.status)
    }
}

/// Whether a status needs nothing done.
pub fn is_settled(status: &str) -> bool {
    matches!(status, "green" | "accepted")
}

impl From<&trellis_db::StatusRow> for StatusRow {
    fn from(row: &trellis_db::StatusRow) -> Self {
        StatusRow {
            name: row.name.clone(),
            kind: row.kind.to_owned(),
            status: row.status.clone(),
            reason: row.reason.clone(),
            fix: row.fix.clone(),
            triage: None,
        }
    }
}

/// A triage's finding that a lowering no longer follows its decision, as
/// `.trellis/triage/<module>/<name>.json` records it (display only).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TriageVerdict {
    pub label: String,
    pub scope: String,
    pub verdict: String,
    pub answer: String,
    pub at: String,
}

/// An open question as `status` and `question` answer it (trellis-daemon §8):
/// the fields a person reads, in the §8 encoding, plus where it is and whether
/// its spec moved since it was asked.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub def: String,
    pub file: String,
    pub kind: Tag,
    pub question: String,
    #[serde(default, with = "trellis_diag::soil_option")]
    pub hole: Option<String>,
    pub options: Vec<String>,
    pub created: String,
    pub stale: bool,
}

/// A Soil enum value without fields, `{"tag":"Rule"}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tag {
    pub tag: String,
}

/// `question`: the open question, and for a Rule the decision scopes its
/// answer may go into.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QuestionAnswer {
    #[serde(flatten)]
    pub question: Question,
    pub scopes: Vec<DecisionScope>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DecisionScope {
    /// `project` or the module's name.
    pub scope: String,
    pub file: String,
    /// The label an answer there gets unless one is given.
    pub label: String,
}

/// `answer`: what was written where, as a diff.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AnswerAnswer {
    pub def: String,
    pub kind: Tag,
    pub answer: String,
    pub written: String,
    /// The decision entry a Rule's answer became; `null` for a clarification.
    pub decision: Option<DecisionPlace>,
    pub diff: String,
    /// The question file the answer removed.
    pub removed: String,
    /// The definition to lower again.
    pub requeue: String,
    /// Whether the daemon queued that lowering (only when asked to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeued: Option<bool>,
    /// The provider it was queued with: the one whose job asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeued_with: Option<String>,
    /// The daemon's event cursor to follow the lowering from (`jobs.follow`),
    /// when one is queued or running; `None` when the daemon ran no job of the
    /// definition that asked (it was restarted since).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DecisionPlace {
    pub scope: String,
    pub label: String,
}

/// `status` with `verify`: the rows a from-scratch recomputation gives, and
/// where they disagree with the memoized ones.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifyAnswer {
    pub definitions: Vec<StatusRow>,
    pub disagreements: Vec<Disagreement>,
    pub suites_run: usize,
    /// With `reseed`: the fresh seeds tried per suite, and every recorded row
    /// one of them flips (a `pass` a fresh sample falsifies, or the reverse).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reseeded: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flips: Vec<Flip>,
}

/// A recorded row that a fresh sample decides otherwise (`status --verify
/// --reseed N`): green as recorded means the recorded sample passed, not that
/// every sample would.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Flip {
    /// `module::name`.
    pub def: String,
    pub row: String,
    pub recorded: String,
    pub fresh: String,
    /// The fresh seed, as `0x` and 16 hex digits.
    pub seed: String,
    /// Why the fresh sample decided otherwise: the shrunk counterexample.
    pub message: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Disagreement {
    pub name: String,
    pub recorded: String,
    pub verified: String,
    pub reason: Option<String>,
}

/// `test`: the suites run, those skipped and why, and each run's rows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TestAnswer {
    pub ran: Vec<String>,
    pub skipped: Vec<Skipped>,
    pub results: Vec<SuiteResult>,
    pub errors: Vec<Diagnostic>,
    /// The shared result cache's part, when the root or the caller names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheReport>,
}

/// What the shared result cache did for one `test` (design §12): the suites
/// whose verified results it supplied (not in `ran`: nothing was executed),
/// the entries it refused and why (those suites ran), how many results this run
/// stored, and why it stopped answering, if it did. Never an error: a cache
/// that is down costs time, not correctness.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheReport {
    pub url: String,
    pub reused: Vec<String>,
    pub rejected: Vec<Skipped>,
    pub stored: usize,
    pub down: Option<String>,
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    pub def: String,
    pub reason: String,
}

/// Why `test` skips an up-to-date suite (the human view counts them apart).
pub const UP_TO_DATE: &str = "up to date";

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SuiteResult {
    pub def: String,
    pub green: bool,
    /// Why some tier derived no rows.
    pub not_derived: Vec<String>,
    pub rows: Vec<SuiteRow>,
    pub failures: Vec<SuiteFailure>,
    /// What stopped the suite before any row ran.
    pub preflight: Vec<Diagnostic>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SuiteRow {
    pub name: String,
    pub tier: String,
    pub mode: String,
    pub result: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SuiteFailure {
    pub row: String,
    pub case: Option<String>,
    pub expected: Option<String>,
    pub actual: Option<String>,
    /// The shrunk counterexample, canonical JSON per binder.
    pub shrunk: Option<Vec<String>>,
    pub message: String,
}

impl From<&trellis_verify::suite::Failure> for SuiteFailure {
    fn from(failure: &trellis_verify::suite::Failure) -> Self {
        SuiteFailure {
            row: failure.row.clone(),
            case: failure.case.clone(),
            expected: failure.expected.clone(),
            actual: failure.actual.clone(),
            shrunk: failure.shrunk.clone(),
            message: failure.message.clone(),
        }
    }
}

/// A `test` progress event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestProgress {
    pub def: String,
    pub event: TestEvent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestEvent {
    /// A definition's suite starts.
    Started,
    /// One row finished (`row`, `result`).
    Row,
}

/// `adopt`: the locks written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AdoptAnswer {
    pub written: Vec<String>,
    pub errors: Vec<Diagnostic>,
    /// Entries whose `accepted` this adopt reset to false (what the acceptance
    /// stood on — the spec, the Soil, a callee — changed), by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unaccepted: Vec<String>,
}

/// `decisions.editorial`: the entry, and the locks re-stamped.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EditorialAnswer {
    pub label: String,
    pub written: Vec<String>,
    pub errors: Vec<Diagnostic>,
}

/// `review`: the definition whose prose edit is accepted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReviewAnswer {
    pub reviewed: String,
}

/// `toolchain.update`: the pins soil.toml now holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolchainAnswer {
    pub trellis: String,
    pub soil0_cli: String,
    pub skill: String,
    pub changed: bool,
}

/// `context`: what was packed and dropped, its file lists in columns — a
/// bundle in a root of thousands of definitions lists thousands of files, and
/// an object per file was most of a request's time on both ends of the socket
/// (design §9.10). Its strings borrow from the frame when read ([`Text`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContextAnswer<'a> {
    #[serde(borrow)]
    pub definition: Text<'a>,
    #[serde(borrow)]
    pub dir: Text<'a>,
    pub budget: u64,
    pub estimate: u64,
    #[serde(borrow)]
    pub hash: Text<'a>,
    #[serde(borrow)]
    pub packed: PackedColumns<'a>,
    #[serde(borrow)]
    pub dropped: DroppedColumns<'a>,
    /// How the directory was brought to the bundle: it depends on what the
    /// service did before, not on the request, so `--json` leaves it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<BundleWrite>,
    /// What building this answer took (left out of `--json` too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_us: Option<u64>,
}

/// A string of the frame, copied only when it had escapes (serde borrows a
/// `Cow` only where the field says so, so a nested one needs this newtype).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Text<'a>(#[serde(borrow)] pub Cow<'a, str>);

impl<'a> From<&'a str> for Text<'a> {
    fn from(text: &'a str) -> Self {
        Text(Cow::Borrowed(text))
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PackedColumns<'a> {
    #[serde(borrow)]
    pub paths: Vec<Text<'a>>,
    pub bytes: Vec<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DroppedColumns<'a> {
    #[serde(borrow)]
    pub items: Vec<Text<'a>>,
    /// Runs of one reason: `(reason, how many items in a row)`.
    #[serde(borrow)]
    pub reasons: Vec<(Text<'a>, u64)>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BundleWrite {
    pub us: u64,
    pub files: usize,
    pub removed: usize,
    /// What vouched for the files left in place: `stats` (the stamp's listing)
    /// or `swept` (every file's bytes compared).
    pub vouched: String,
}

impl ContextAnswer<'_> {
    /// Every packed file, `(path, bytes)`.
    pub fn packed(&self) -> impl Iterator<Item = (&str, u64)> {
        let PackedColumns { paths, bytes } = &self.packed;
        paths.iter().map(|path| &*path.0).zip(bytes.iter().copied())
    }

    /// Every dropped file, `(item, reason)`.
    pub fn dropped(&self) -> impl Iterator<Item = (&str, &str)> {
        let DroppedColumns { items, reasons } = &self.dropped;
        let reasons = reasons
            .iter()
            .flat_map(|(reason, run)| std::iter::repeat_n(&*reason.0, *run as usize));
        items.iter().map(|item| &*item.0).zip(reasons)
    }
}

/// `daemon.status`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DaemonStatus {
    pub pid: u32,
    pub version: String,
    pub uptime_ms: u64,
}

/// `daemon.stop`: the client waits for `pid` to be gone before it says so.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DaemonStopped {
    pub stopped: bool,
    pub pid: u32,
}
