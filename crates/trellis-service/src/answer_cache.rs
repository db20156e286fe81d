//! Answers kept on disk, so a restarted daemon (or `--no-daemon` after a first
//! run) answers a `check` or `status` of a root nothing has touched without
//! reading a file (design §7.16). Each answer is stored with the root's
//! fingerprint: every input's path, modification time and size, as the loader
//! knew them when the answer was made. A later start walks and stats the root
//! (no file read), and takes a stored answer only when the fingerprint is the
//! same, the build is the same, and the store reads back whole (its checksum
//! holds); a file modified in the two seconds before the loader read it (or
//! with no modification time) is racy: its digest is stored, and it is read
//! again and compared by content, since a second write in the same clock
//! tick could keep both its time and its size (once read back as answered,
//! well after its modification, it is racy no more). Anything else — no store, an
//! old format, another build, a torn or edited file, a root with open
//! questions — and the answer is computed as on any cold start. The stamps are
//! trusted as the loader trusts them between refreshes: a file whose size and
//! modification time are both as they were is taken as unchanged.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use trellis_db::{CheckReport, OpenHole, StatusCount, StatusRow, count_statuses};
use trellis_diag::{Diagnostic, Span};
use trellis_hash::{Digest, Hasher};

/// Where the answers are kept, root-relative (hidden: never walked).
pub const STORE: &str = ".trellis/cache/answers.json";
/// The store's format; a store of another format is ignored.
const FORMAT: &str = "trellis-answers/1";
/// How close before its read a file's modification time makes it racy:
/// compared by content, not by stamp.
const RACY: Duration = Duration::from_secs(2);

/// One input file as the fingerprint sees it: root-relative path,
/// modification time in nanoseconds since the epoch, size. Borrowed: a
/// start compares 43,000 of them straight from its walk at 20,000
/// definitions.
pub type FileStamp<'a> = (&'a str, u128, u64);

/// The root's input files as the loader read them for the answers being
/// stored: every file's stamp, and the digest of the bytes read of each racy
/// one.
#[derive(Clone, Debug)]
pub struct KnownFiles<'a> {
    pub stamps: Vec<FileStamp<'a>>,
    pub racy: Vec<(&'a str, Digest)>,
}

/// Whether a file modified at `modified` (0 when unknown) and read at
/// `read_since` or later is racy.
pub(crate) fn racy(modified: u128, read_since: u128) -> bool {
    modified == 0 || modified + RACY.as_nanos() >= read_since
}

/// The root's fingerprint: a digest of every input's stamp, in path order.
pub fn fingerprint(stamps: &mut [FileStamp<'_>]) -> Digest {
    // A stable sort, for it finds runs: a walk hands the stamps in path
    // order, or in a few sorted runs where a directory holds both files and
    // directories (or reference data), which the unstable sort does not see:
    // it sorted 66,000 stamps anew (3.3–7.8 ms of a restart at 20,000
    // definitions, against 1.4–1.9 ms).
    stamps.sort();
    // Each stamp is written out whole (its path's length first) and the
    // hasher fed runs of them: fed its three fields one at a time, the
    // hasher's per-call work was a third of a restart's fingerprint.
    const RUN: usize = 64 * 1024;
    let mut hasher = Hasher::tagged("root-stamps/2");
    let mut run = Vec::with_capacity(RUN + 512);
    for (path, modified, len) in stamps.iter() {
        run.extend_from_slice(&(path.len() as u64).to_le_bytes());
        run.extend_from_slice(path.as_bytes());
        run.extend_from_slice(&modified.to_le_bytes());
        run.extend_from_slice(&len.to_le_bytes());
        if run.len() >= RUN {
            hasher.part(&run);
            run.clear();
        }
    }
    hasher.part(&run);
    hasher.finish()
}

/// Nanoseconds since the epoch of a modification time (0 when unknown).
pub fn nanos(time: Option<SystemTime>) -> u128 {
    time.and_then(|time| time.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |since| since.as_nanos())
}

/// One group of status rows, with its counts by status and kind.
pub type RowsAndCounts = (Vec<Arc<StatusRow>>, Vec<StatusCount>);

/// The answers of one root at one fingerprint, each present when it was
/// answered.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Answers {
    pub check: Option<CheckReport>,
    /// The status rows in groups (the project's, then each module's), each
    /// with its counts by status and kind.
    pub status: Option<Vec<RowsAndCounts>>,
    pub lock_problems: Option<Vec<Diagnostic>>,
    pub load_problems: Vec<Diagnostic>,
}

/// What is written: the header line, then the body line.
#[derive(Serialize, Deserialize)]
struct Header {
    format: String,
    build: String,
    /// The root's fingerprint, as written (`sha256:…`).
    root: String,
    /// The body's digest: a torn or edited store is never read.
    body: String,
}

#[derive(Serialize, Deserialize)]
struct Body {
    /// Files racy when stored, with the digest of what was answered.
    racy: Vec<(String, String)>,
    check: Option<StoredCheck>,
    /// The texts the rows share (kinds, statuses, reasons, fixes), each once:
    /// a root's rows say the same few things, and 20,000 rows read back
    /// faster as indices.
    texts: Vec<String>,
    status: Option<Vec<Vec<StoredRow>>>,
    lock_problems: Option<Vec<Diagnostic>>,
    load_problems: Vec<Diagnostic>,
}

#[derive(Serialize, Deserialize)]
struct StoredCheck {
    checked: usize,
    diagnostics: Vec<Diagnostic>,
    holes: Vec<StoredHole>,
}

#[derive(Serialize, Deserialize)]
struct StoredHole {
    definition: String,
    name: String,
    goal: String,
    scope: Vec<(String, String)>,
    file: Option<String>,
    span: Option<Span>,
}

/// A row as (name, kind, status, reason, fix), each text but the name an
/// index into [`Body::texts`]; a reason's or fix's mention of the row's own
/// name is stored as [`NAME`], so `trellis adopt m::f` is one text for all.
type StoredRow = (String, u32, u32, Option<u32>, Option<u32>);

/// Stands for the row's own name in a stored reason or fix.
const NAME: &str = "\u{0}";

/// The shared texts of stored rows, each given an index once.
#[derive(Default)]
struct Texts {
    texts: Vec<String>,
    index: std::collections::HashMap<String, u32>,
}

impl Texts {
    fn of(&mut self, text: &str) -> u32 {
        if let Some(&at) = self.index.get(text) {
            return at;
        }
        let at = self.texts.len() as u32;
        self.texts.push(text.to_owned());
        self.index.insert(text.to_owned(), at);
        at
    }

    fn row(&mut self, row: &StatusRow) -> StoredRow {
        let mut named = |text: &Option<String>| {
            (text.as_deref()).map(|text| match row.name.is_empty() {
                true => self.of(text),
                false => self.of(&text.replace(row.name.as_str(), NAME)),
            })
        };
        let (reason, fix) = (named(&row.reason), named(&row.fix));
        (
            row.name.clone(),
            self.of(row.kind),
            self.of(&row.status),
            reason,
            fix,
        )
    }
}

/// The shared texts of a store read back, each with whether it names its
/// row (holds [`NAME`]): most do not, and are copied without a search.
struct StoredTexts {
    texts: Vec<(String, bool)>,
}

impl StoredTexts {
    fn of(texts: Vec<String>) -> StoredTexts {
        let texts = (texts.into_iter())
            .map(|text| {
                let names = text.contains(NAME);
                (text, names)
            })
            .collect();
        StoredTexts { texts }
    }

    /// The row `stored` stands for, or `None` when it points at no text or
    /// names a kind this build does not make.
    fn row(&self, stored: StoredRow) -> Option<Arc<StatusRow>> {
        let (name, kind, status, reason, fix) = stored;
        let text = |at: u32| self.texts.get(at as usize);
        let named = |at: Option<u32>| -> Option<Option<String>> {
            let Some(at) = at else {
                return Some(None);
            };
            Some(Some(match text(at)? {
                (text, true) => text.replace(NAME, &name),
                (text, false) => text.clone(),
            }))
        };
        let kind = match text(kind)?.0.as_str() {
            "function" => "function",
            "type" => "type",
            "scope" => "scope",
            _ => return None,
        };
        Some(Arc::new(StatusRow {
            kind,
            status: text(status)?.0.clone(),
            reason: named(reason)?,
            fix: named(fix)?,
            name,
        }))
    }
}

/// A stored answer as the root is now, if one may be trusted: `stamps` gives
/// the root's input files as a stat walk found them just now (`None` when it
/// met a problem), `read` reads a root-relative file (for the racy ones).
/// Racy files it reads back as they were answered, long enough after their
/// modification, are settled: the store is written again without them
/// ([`settle`]).
pub fn load<'a, Stamps: AsMut<[FileStamp<'a>]> + Send>(
    root: &Path,
    stamps: impl FnOnce() -> Option<Stamps> + Send,
    build: &str,
    read: impl Fn(&str) -> Option<Vec<u8>>,
) -> Option<Answers> {
    // The stamps are gathered, sorted and hashed on a thread of their own
    // while this one reads the store back: at 20,000 definitions each side
    // is several milliseconds of a restart's answer, after a walk that has
    // both cores (design §7.16).
    let (walked, stored) = crate::in_flight::both(
        || {
            let mut stamps = stamps()?;
            let root_now = fingerprint(stamps.as_mut());
            Some((stamps, root_now))
        },
        || read_store(root, build),
    );
    let (mut stamps, root_now) = walked?;
    let Stored {
        header,
        racy_files,
        answers,
    } = stored?;
    if header.root != root_now.to_string() {
        return None;
    }
    let stamps = stamps.as_mut();
    let verified_since = nanos(Some(SystemTime::now()));
    for (path, digest) in &racy_files {
        if read(path)
            .map(|bytes| Digest::of(&bytes).to_string())
            .as_ref()
            != Some(digest)
        {
            return None;
        }
    }
    settle(root, &header, racy_files, &answers, stamps, verified_since);
    Some(answers)
}

/// A store read back whole.
struct Stored {
    header: Header,
    /// The files racy when it was written, with the digest answered.
    racy_files: Vec<(String, String)>,
    answers: Answers,
}

/// The store, if it is of this format and this build, and its body is the
/// one its header vouches for.
fn read_store(root: &Path, build: &str) -> Option<Stored> {
    let bytes = std::fs::read(root.join(STORE)).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let (header, body) = text.split_once('\n')?;
    let header: Header = serde_json::from_str(header).ok()?;
    if header.format != FORMAT || header.build != build {
        return None;
    }
    let (racy_files, answers) = read_body(&header, body)?;
    Some(Stored {
        header,
        racy_files,
        answers,
    })
}

/// The racy files and the answers of a store's body, if it is the body its
/// header vouches for and every row reads back.
fn read_body(header: &Header, body: &str) -> Option<(Vec<(String, String)>, Answers)> {
    if header.body != Digest::of(body.as_bytes()).to_string() {
        return None;
    }
    let body: Body = serde_json::from_str(body).ok()?;
    let texts = StoredTexts::of(body.texts);
    let status = match body.status {
        Some(groups) => Some(
            (groups.into_iter())
                .map(|rows| {
                    let rows = (rows.into_iter())
                        .map(|row| texts.row(row))
                        .collect::<Option<Vec<_>>>()?;
                    let counts = count_statuses(&rows);
                    Some((rows, counts))
                })
                .collect::<Option<Vec<_>>>()?,
        ),
        None => None,
    };
    let answers = Answers {
        check: body.check.map(StoredCheck::into_report),
        status,
        lock_problems: body.lock_problems,
        load_problems: body.load_problems,
    };
    Some((body.racy, answers))
}

/// Writes `answers` for a root whose inputs are `files` as the loader read
/// them (the racy ones' digests kept) through the one atomic writer. Nothing
/// is written for a root with no answer.
pub fn store(
    root: &Path,
    mut files: KnownFiles<'_>,
    build: &str,
    answers: &Answers,
) -> std::io::Result<()> {
    if answers.check.is_none() && answers.status.is_none() {
        return Ok(());
    }
    let racy = (files.racy.iter())
        .map(|(path, digest)| ((*path).to_owned(), digest.to_string()))
        .collect();
    // The stamps are sorted and hashed on a thread of their own while the
    // answers are encoded: at 20,000 definitions each is several
    // milliseconds of a one-shot command's end.
    let (root_fingerprint, body) = crate::in_flight::both(
        || fingerprint(&mut files.stamps).to_string(),
        || encode(racy, answers),
    );
    write(root, build, root_fingerprint, &body?)
}

/// Racy files read back as they were answered, by a read well after they
/// were last modified, are racy no more: from then on their stamps vouch for
/// their bytes as any other file's do, so the store is written again without
/// them. A root written just before its first load has every file racy, and
/// until settled each start read all of them again: 43,000 reads at 20,000
/// definitions, for a `status` the stamps alone could answer. `stamps` are
/// the root's now, in path order; a store that cannot be written stays as
/// it is, still right, only slower to take.
fn settle(
    root: &Path,
    header: &Header,
    mut racy_files: Vec<(String, String)>,
    answers: &Answers,
    stamps: &[FileStamp<'_>],
    since: u128,
) {
    let still_racy = |path: &str| {
        (stamps.binary_search_by(|(stamped, _, _)| (*stamped).cmp(path)))
            .map_or(true, |at| racy(stamps[at].1, since))
    };
    let before = racy_files.len();
    racy_files.retain(|(path, _)| still_racy(path));
    if racy_files.len() != before
        && let Ok(body) = encode(racy_files, answers)
    {
        let _ = write(root, &header.build, header.root.clone(), &body);
    }
}

/// The store's body for `answers`, whose root's racy files are `racy`
/// (path, digest).
fn encode(racy: Vec<(String, String)>, answers: &Answers) -> std::io::Result<String> {
    let mut texts = Texts::default();
    // A text holding the name's stand-in could not be read back as it was.
    let storable =
        |row: &Arc<StatusRow>| !(row.reason.iter().chain(&row.fix)).any(|text| text.contains(NAME));
    let status = (answers.status.as_ref())
        .filter(|groups| groups.iter().all(|(rows, _)| rows.iter().all(storable)))
        .map(|groups| {
            (groups.iter())
                .map(|(rows, _)| rows.iter().map(|row| texts.row(row)).collect())
                .collect()
        });
    let body = Body {
        racy,
        check: answers.check.as_ref().map(StoredCheck::of),
        texts: texts.texts,
        status,
        lock_problems: answers.lock_problems.clone(),
        load_problems: answers.load_problems.clone(),
    };
    serde_json::to_string(&body).map_err(std::io::Error::other)
}

/// Writes `body` as the store of a root of fingerprint `root_fingerprint`,
/// through the one atomic writer.
fn write(root: &Path, build: &str, root_fingerprint: String, body: &str) -> std::io::Result<()> {
    let header = Header {
        format: FORMAT.to_owned(),
        build: build.to_owned(),
        root: root_fingerprint,
        body: Digest::of(body.as_bytes()).to_string(),
    };
    let header = serde_json::to_string(&header).map_err(std::io::Error::other)?;
    let target: PathBuf = root.join(STORE);
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = format!("{header}\n{body}");
    // A cache its reader verifies: atomic, not durable (no fsync).
    trellis_lock::write_atomic(&trellis_lock::CacheFs, &target, text.as_bytes())
}

impl StoredCheck {
    fn of(report: &CheckReport) -> StoredCheck {
        StoredCheck {
            checked: report.checked,
            diagnostics: report.diagnostics.clone(),
            holes: (report.holes.iter())
                .map(|hole| StoredHole {
                    definition: hole.definition.clone(),
                    name: hole.name.clone(),
                    goal: hole.goal.clone(),
                    scope: hole.scope.clone(),
                    file: hole.file.clone(),
                    span: hole.span,
                })
                .collect(),
        }
    }

    fn into_report(self) -> CheckReport {
        CheckReport {
            checked: self.checked,
            diagnostics: self.diagnostics,
            holes: (self.holes.into_iter())
                .map(|hole| OpenHole {
                    definition: hole.definition,
                    name: hole.name,
                    goal: hole.goal,
                    scope: hole.scope,
                    file: hole.file,
                    span: hole.span,
                })
                .collect(),
        }
    }
}
