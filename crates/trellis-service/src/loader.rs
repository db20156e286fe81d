//! Loading a root's files into the database. This is the host's side of "no I/O in
//! queries": the loader walks the root, and for every file whose size or mtime moved
//! it reads the bytes and compares their digest, so a refresh that finds nothing new
//! produces an empty [`Change`] and the database stays in its revision. A daemon
//! with a change feed ([`crate::watch`]) refreshes just the files it names.
//! Open questions (`*.question.json`) are walked and refreshed the same way but
//! kept here, beside the database rather than in it (design §9.8).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use rustc_hash::FxHashMap;
use trellis_db::{CONFIG_FILE, Change};
use trellis_diag::Diagnostic;
use trellis_hash::Digest;

use crate::walk::{
    Entry, MANIFEST_FILE, RootFiles, classify, question_file, skipped_dir, walk_stamped, walk_tree,
    walk_unstamped,
};

/// What the loader remembers of a file between refreshes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    digest: Digest,
    /// Whether the bytes could be read and were UTF-8. A file that could not is
    /// read again on every refresh, so its problem is reported every time and
    /// not only by the refresh that first met it.
    loaded: bool,
    /// A time no later than the read of these bytes: a file modified close
    /// before it may have been written again in the same clock tick after
    /// it (design §7.16).
    read_since: SystemTime,
    /// The last full refresh that walked the file ([`RootLoader::generation`]):
    /// a file the latest one did not walk is gone.
    seen: u64,
}

/// How a file enters the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Load {
    /// Its text (an input by its name).
    Text,
    /// Its digest, written (`sha256:…`), for reference data (crate::walk).
    Digest,
}

pub struct RootLoader {
    root: PathBuf,
    /// Keyed by the root-relative path's text: hashing a string is much cheaper
    /// than ordering `Path`s component by component, and a refresh visits every file.
    known: FxHashMap<String, Stamp>,
    /// Bumped on every full refresh; a known file not seen in this generation
    /// was removed.
    generation: u64,
    /// Files (and directories) that could not be loaded, by root-relative path,
    /// kept until a refresh of that path succeeds.
    problems: BTreeMap<String, Diagnostic>,
    /// The text of every open question file, by root-relative path.
    questions: BTreeMap<String, String>,
    /// When the refresh under way started reading.
    reading_since: SystemTime,
    /// A walk made for this loader that its next walk takes instead of
    /// walking again ([`RootLoader::prime`]).
    primed: Option<RootFiles>,
    /// How many stamped walks this loader made itself ([`RootLoader::walks`]).
    walks: usize,
}

/// The outcome of one refresh: the edits to apply, and files that could not be
/// loaded (unreadable, not UTF-8).
pub struct Refresh {
    pub change: Change,
    pub problems: Vec<Diagnostic>,
}

impl RootLoader {
    pub fn new(root: PathBuf) -> Self {
        Self {
            root,
            known: FxHashMap::default(),
            generation: 0,
            problems: BTreeMap::new(),
            questions: BTreeMap::new(),
            reading_since: SystemTime::UNIX_EPOCH,
            primed: None,
            walks: 0,
        }
    }

    /// Hands the loader a stamped walk of its root to take as its next walk:
    /// the change feed's, which watched each directory before listing it,
    /// so nothing that changed since is missed — the feed names it (design
    /// §7.16). A daemon's start walks its root once, not twice.
    pub fn prime(&mut self, walked: RootFiles) {
        self.primed = Some(walked);
    }

    /// The root's files, stamped: the primed walk if there is one, else a
    /// new walk.
    fn walk_stamped(&mut self) -> RootFiles {
        self.primed.take().unwrap_or_else(|| {
            self.walks += 1;
            walk_stamped(&self.root)
        })
    }

    /// The root's files for a refresh: the primed walk if there is one, else
    /// a new walk, stamped only when a file is known. A loader that has read
    /// nothing reads every file whatever its stamp, and takes each stamp from
    /// the file it opened: stat-ing it in the walk too would be 44,000 stats
    /// more in a cold load of 20,000 definitions (design §7.15).
    fn walk_for_refresh(&mut self) -> RootFiles {
        if self.primed.is_some() || !self.known.is_empty() {
            return self.walk_stamped();
        }
        self.walks += 1;
        walk_unstamped(&self.root)
    }

    /// How many walks of the root this loader made (a primed one
    /// is not its own): tests count that a request walks the root once.
    pub fn walks(&self) -> usize {
        self.walks
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The open question files as the last refresh read them: (root-relative
    /// path, text), in path order.
    pub fn questions(&self) -> &BTreeMap<String, String> {
        &self.questions
    }

    /// Stats every file and reads and hashes those whose stamp moved and
    /// those it never read. The stats (one syscall per file, the bulk of a
    /// no-op refresh) are made by the walk, through each directory; the reads
    /// (every file on a daemon's first load, a fifth of a cold `check`) are
    /// spread over threads that keep many in flight ([`crate::in_flight`]).
    pub fn refresh(&mut self) -> Refresh {
        self.generation += 1;
        self.reading_since = SystemTime::now();
        self.problems.clear();
        let mut change = Change::default();
        // Each file is stat-ed through its directory as the walk lists it; one
        // the loader never read is read whatever its stamp, which then comes
        // from the opened file (design §7.15, §7.16).
        let walked = self.walk_for_refresh();
        for problem in walked.problems {
            let path = problem.file.clone().unwrap_or_default();
            self.problems.insert(path, problem);
        }
        let walked_files = walked.files.len() + walked.data.len();
        // An unstamped walk has no stamps: each of its files is read.
        let stamps =
            |stamps: Vec<crate::walk::Stamp>| stamps.into_iter().chain(std::iter::repeat(None));
        let files = (walked.files.into_iter().zip(stamps(walked.stamps.files)))
            .map(|(path, stamp)| (path, stamp, Load::Text));
        let data = (walked.data.into_iter().zip(stamps(walked.stamps.data)))
            .map(|(path, stamp)| (path, stamp, Load::Digest));
        // A first load reads every file: its map and list are reserved once,
        // not grown by doubling on this one thread while the others wait
        // (each copy's pages touched anew: a tenth of a cold `check`'s page
        // faults at 20,000 definitions).
        let first_load = self.known.is_empty();
        self.known
            .reserve(walked_files.saturating_sub(self.known.len()));
        let mut moved = Vec::with_capacity(if first_load { walked_files } else { 0 });
        let generation = self.generation;
        for (path, stamp, load) in files.chain(data) {
            let unchanged = self.known.get_mut(&path).is_some_and(|known| {
                known.seen = generation;
                stamp.is_some_and(|(modified, len)| {
                    known.modified == modified
                        && known.len == len
                        && modified.is_some()
                        && known.loaded
                })
            });
            // An output of the writing commands, never an input (design §9.7).
            if !unchanged && path != MANIFEST_FILE {
                moved.push((path, load));
            }
        }
        // Each thread's start pays for itself past a few hundred reads.
        let root = &self.root;
        let fetched =
            crate::in_flight::in_order(&moved, 256, crate::in_flight::THREADS, |(path, load)| {
                Fetched::read(&root.join(path), *load)
            });
        let mut texts = Vec::with_capacity(moved.len());
        for ((path, _), (stamp, fetched)) in moved.into_iter().zip(fetched) {
            texts.extend(self.accept(path, stamp, fetched));
        }
        change.set_root_files(texts);
        let removed: Vec<String> = (self.known.iter())
            .filter(|(_, stamp)| stamp.seen != generation)
            .map(|(path, _)| path.clone())
            .collect();
        for path in removed {
            self.forget(path, &mut change);
        }
        self.outcome(change)
    }

    /// Every input file's stamp as a walk and a stat find it now, without
    /// reading one (design §7.16); `None` when the walk met a problem or the
    /// root holds an open question (answers stored without the loader's
    /// reads cannot speak for either). The walk stays primed for a refresh
    /// that follows at once, in the same request, when the stamps do not fit
    /// what they are compared with; [`RootLoader::unprime`] drops it when
    /// they do.
    pub fn stamps_now(&mut self) -> Option<Vec<crate::answer_cache::FileStamp<'_>>> {
        let walked = self.walk_stamped();
        let walked = &*self.primed.insert(walked);
        if !walked.complete || !walked.problems.is_empty() {
            return None;
        }
        let files = walked.files.iter().zip(&walked.stamps.files);
        let data = walked.data.iter().zip(&walked.stamps.data);
        let mut stamps = Vec::with_capacity(walked.files.len() + walked.data.len());
        for (path, stamp) in files.chain(data) {
            if path == MANIFEST_FILE {
                continue;
            }
            let (modified, len) = (*stamp)?;
            if question_file(path) {
                return None;
            }
            stamps.push((path.as_str(), crate::answer_cache::nanos(modified), len));
        }
        Some(stamps)
    }

    /// Drops a primed walk: once a request is answered without loading,
    /// a later load must walk anew (without a change feed nothing vouches
    /// for the root since).
    pub fn unprime(&mut self) {
        self.primed = None;
    }

    /// Reads again each file this loader read so soon after its modification
    /// that its stamp cannot vouch for the bytes read (racy, design §7.16),
    /// once it is old enough to: a file whose stamp and bytes are still the
    /// ones read is taken as read now, and stored as any other file is; one
    /// that moved is left as it was, for the change feed or the next refresh.
    /// A store's racy files are read again by every start that takes it, and
    /// a root written just before its first load has every file racy. Returns
    /// how many were settled.
    pub fn settle_racy(&mut self) -> usize {
        use crate::answer_cache::{nanos, racy};
        let since = SystemTime::now();
        let settles = |stamp: &Stamp| {
            let modified = nanos(stamp.modified);
            stamp.loaded
                && racy(modified, nanos(Some(stamp.read_since)))
                && !racy(modified, nanos(Some(since)))
        };
        let racy_files: Vec<(String, PathBuf, Stamp)> = (self.known.iter())
            .filter(|(_, stamp)| settles(stamp))
            .map(|(path, stamp)| (path.clone(), self.root.join(path), *stamp))
            .collect();
        let unmoved = crate::in_flight::in_order(
            &racy_files,
            256,
            crate::in_flight::THREADS,
            |(_, absolute, stamp)| {
                // Hashed as it streams: only the digest is compared.
                let ((modified, len), fetched) = Fetched::read(absolute, Load::Digest);
                matches!(fetched, Fetched::Read { digest, .. } if digest == stamp.digest)
                    && modified == stamp.modified
                    && len == stamp.len
            },
        );
        let mut settled = 0;
        for ((path, _, _), unmoved) in racy_files.iter().zip(unmoved) {
            if let Some(stamp) = self.known.get_mut(path).filter(|_| unmoved) {
                stamp.read_since = since;
                settled += 1;
            }
        }
        settled
    }

    /// Every input file as this loader last read it, the fingerprint of what
    /// the database holds; `None` when a file could not be read or the root
    /// holds an open question. Collected into lists of their final size: at
    /// 20,000 definitions they are megabytes, which grown by doubling were a
    /// fifth of the store written after a first answer (its pages touched
    /// anew at each copy).
    pub fn known_files(&self) -> Option<crate::answer_cache::KnownFiles<'_>> {
        use crate::answer_cache::{KnownFiles, nanos, racy};
        let mut known = KnownFiles {
            stamps: Vec::with_capacity(self.known.len()),
            racy: Vec::new(),
        };
        #[expect(
            clippy::iter_over_hash_type,
            reason = "the fingerprint sorts the stamps; racy files are found by path"
        )]
        for (path, stamp) in &self.known {
            if !stamp.loaded || question_file(path) {
                return None;
            }
            let modified = nanos(stamp.modified);
            if racy(modified, nanos(Some(stamp.read_since))) {
                known.racy.push((path.as_str(), stamp.digest));
            }
            known.stamps.push((path.as_str(), modified, stamp.len));
        }
        Some(known)
    }

    /// Refreshes only `paths` (root-relative), as a change feed reported them:
    /// each is stat-ed, and read and hashed (whatever its stamp says: the feed saw
    /// a write, which an unchanged mtime can hide). A path that no longer exists is
    /// removed. A directory's path (ending in `/`) stands for its whole subtree:
    /// every file it holds now and every file it held. Requires a full
    /// [`RootLoader::refresh`] first.
    pub fn refresh_paths(&mut self, paths: impl IntoIterator<Item = String>) -> Refresh {
        self.reading_since = SystemTime::now();
        let mut change = Change::default();
        let mut files = BTreeSet::new();
        for path in paths {
            if path.ends_with('/') {
                self.subtree_files(&path, &mut files);
            } else {
                files.insert(path);
            }
        }
        for path in files {
            let hidden = path.split('/').rev().skip(1).any(skipped_dir);
            if hidden {
                continue;
            }
            self.problems.remove(&path);
            let absolute = self.root.join(&path);
            // The walker's rule, for one path: its own type, no link followed.
            let metadata = std::fs::symlink_metadata(&absolute);
            let (dir, name) = match path.rsplit_once('/') {
                Some((dir, name)) => (format!("{dir}/"), name),
                None => (String::new(), path.as_str()),
            };
            // Only a name that is no input by itself asks where it lies.
            let in_reference =
                !crate::walk::loaded_file(name) && crate::walk::in_reference_dir(&self.root, &dir);
            let classified = metadata
                .as_ref()
                .map(|m| classify(name, m.file_type(), in_reference));
            match classified {
                Ok(entry @ (Entry::File | Entry::Data)) => {
                    let load = match entry {
                        Entry::Data => Load::Digest,
                        _ => Load::Text,
                    };
                    self.load(path, &absolute, load, &mut change);
                }
                Ok(Entry::NotAFile(what)) => {
                    self.problems
                        .insert(path.clone(), crate::walk::not_a_file(&path, what));
                    self.forget(path, &mut change);
                }
                _ => self.forget(path, &mut change),
            }
        }
        self.outcome(change)
    }

    /// The files of the subtree at `prefix`: those it holds now, and those the
    /// loader knew there (so a directory deleted or moved away forgets them). A
    /// walk's problems there replace what was reported there before.
    fn subtree_files(&mut self, prefix: &str, files: &mut BTreeSet<String>) {
        let walked = walk_tree(&self.root, prefix);
        let stale: Vec<String> = (self.problems.range(prefix.to_owned()..))
            .take_while(|(path, _)| path.starts_with(prefix))
            .map(|(path, _)| path.clone())
            .collect();
        for path in stale {
            self.problems.remove(&path);
        }
        for problem in walked.problems {
            let path = problem.file.clone().unwrap_or_default();
            self.problems.insert(path, problem);
        }
        files.extend(walked.files.into_iter().chain(walked.data));
        files.extend(
            (self.known.keys())
                .filter(|path| path.starts_with(prefix))
                .cloned(),
        );
    }

    /// Reads and hashes one file; sets it in `change` when its bytes moved.
    fn load(&mut self, path: String, absolute: &Path, load: Load, change: &mut Change) {
        // An output of the writing commands, never an input (design §9.7).
        if path != MANIFEST_FILE {
            let (stamp, fetched) = Fetched::read(absolute, load);
            if let Some((path, text)) = self.accept(path, stamp, fetched) {
                change.set_root_file(path, text);
            }
        }
    }

    /// Takes what was read of one file; answers its path and text when its
    /// bytes moved, for the caller to set in its change.
    fn accept(
        &mut self,
        path: String,
        (modified, len): (Option<SystemTime>, u64),
        fetched: Fetched,
    ) -> Option<(String, Arc<str>)> {
        let known = self.known.get(&path).copied();
        let (digest, text) = match fetched {
            Fetched::Read { digest, text } => (digest, text),
            Fetched::Failed(error) => {
                let problem = io_problem(&path, &error.to_string());
                if let Some(stamp) = self.known.get_mut(&path) {
                    stamp.loaded = false;
                    stamp.seen = self.generation;
                }
                self.questions.remove(&path);
                self.problems.insert(path, problem);
                return None;
            }
        };
        self.known.insert(
            path.clone(),
            Stamp {
                modified,
                len,
                digest,
                loaded: text.is_ok(),
                read_since: self.reading_since,
                seen: self.generation,
            },
        );
        match text {
            // The database (or the question map) already holds exactly these bytes.
            Ok(_) if known.is_some_and(|stamp| stamp.digest == digest && stamp.loaded) => None,
            Ok(text) if question_file(&path) => {
                self.questions.insert(path, text.to_string());
                None
            }
            Ok(text) => Some((path, text)),
            Err(NotUtf8 { bytes, error }) => {
                let problem = not_utf8(&path, &bytes, error);
                self.questions.remove(&path);
                self.problems.insert(path, problem);
                None
            }
        }
    }

    /// A file that is gone: drop what the loader knew and remove it from the root.
    fn forget(&mut self, path: String, change: &mut Change) {
        if question_file(&path) {
            self.known.remove(&path);
            self.questions.remove(&path);
            return;
        }
        if self.known.remove(&path).is_some() && path != CONFIG_FILE {
            change.remove_file(path);
        }
    }

    fn outcome(&self, change: Change) -> Refresh {
        Refresh {
            change,
            problems: self.problems.values().cloned().collect(),
        }
    }
}

/// One file as read off the disk and hashed: the part of a load that any
/// thread may do.
enum Fetched {
    Failed(std::io::Error),
    Read {
        digest: Digest,
        /// Shared as the database will hold it, made on the reading thread
        /// (design §7.15).
        text: Result<Arc<str>, NotUtf8>,
    },
}

/// Bytes read that are not UTF-8, and where they stop being it.
struct NotUtf8 {
    bytes: Arc<[u8]>,
    error: std::str::Utf8Error,
}

impl Fetched {
    /// Reads the file at `path` and hashes it, with its stamp as the opened
    /// file had it before the read (a write after that moves the stamp, and
    /// the next refresh reads the file again). One path lookup, one stat of
    /// the open file and, for a file that does not grow meanwhile, one read:
    /// a cold load reads every file of the root, and each syscall saved is
    /// 40,000 saved at 20,000 definitions (design §7.15). Reference data is
    /// hashed as it streams, in bounded memory, whatever its size.
    fn read(path: &Path, load: Load) -> ((Option<SystemTime>, u64), Fetched) {
        let opened = std::fs::File::open(path).and_then(|file| {
            let metadata = file.metadata()?;
            Ok((file, metadata))
        });
        let (mut file, metadata) = match opened {
            Ok(opened) => opened,
            Err(error) => return ((None, 0), Fetched::Failed(error)),
        };
        let stamp = (metadata.modified().ok(), metadata.len());
        if load == Load::Digest {
            // The database holds the digest as the file's text.
            let fetched = match Digest::of_reader(file) {
                Ok(digest) => Fetched::Read {
                    digest,
                    text: Ok(Arc::from(digest.to_string())),
                },
                Err(error) => Fetched::Failed(error),
            };
            return (stamp, fetched);
        }
        let fetched = match read_shared(&mut file, metadata.len()) {
            Ok(bytes) => Fetched::Read {
                digest: Digest::of(&bytes),
                text: shared_text(bytes),
            },
            Err(error) => Fetched::Failed(error),
        };
        (stamp, fetched)
    }
}

/// The bytes of `file`, `len` long when it was stat-ed, read straight into
/// the shared allocation the database will hold them in: one vectored read
/// fills it and asks for one byte more, which a regular file that did not
/// grow leaves unwritten, so the read also says the file ended there. A file
/// of another length now, or one that answers less at once, is read on to its
/// end. Read into a buffer of its own and copied into the shared one, the
/// root's bytes were copied twice: at 20,000 definitions, 86 MB and 2 % of a
/// cold check (design §7.15).
fn read_shared(file: &mut std::fs::File, len: u64) -> std::io::Result<Arc<[u8]>> {
    use std::io::{IoSliceMut, Read};
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    #[expect(
        unsafe_code,
        reason = "a zeroed allocation is not yet bytes to the type system"
    )]
    // SAFETY: every byte of the allocation is zero, a valid `u8`. Asked for
    // zeroed, the allocator writes nothing on pages fresh from the kernel,
    // which a cold load's are.
    let mut bytes: Arc<[u8]> = unsafe { Arc::new_zeroed_slice(len).assume_init() };
    let buffer = Arc::get_mut(&mut bytes).expect("a fresh allocation is not shared");
    let mut past_end = [0u8];
    let read = loop {
        let mut into = [IoSliceMut::new(buffer), IoSliceMut::new(&mut past_end)];
        match file.read_vectored(&mut into) {
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            answer => break answer?,
        }
    };
    if read == len {
        return Ok(bytes);
    }
    let mut whole = buffer[..read.min(len)].to_vec();
    whole.extend(&past_end[..read.saturating_sub(len)]);
    file.read_to_end(&mut whole)?;
    Ok(Arc::from(whole))
}

/// `bytes` as text, in the same allocation, when they are UTF-8.
fn shared_text(bytes: Arc<[u8]>) -> Result<Arc<str>, NotUtf8> {
    if let Err(error) = std::str::from_utf8(&bytes) {
        return Err(NotUtf8 { bytes, error });
    }
    #[expect(
        unsafe_code,
        reason = "the standard library has no uncopied Arc<[u8]> to Arc<str>"
    )]
    // SAFETY: the bytes were just validated as UTF-8, and `str` has the
    // layout of `[u8]`, so the pointer from `into_raw` is a valid `*const
    // str` of the same allocation, handed back to `from_raw` once.
    let text = unsafe { Arc::from_raw(Arc::into_raw(bytes) as *const str) };
    Ok(text)
}

/// A file that is not UTF-8, located at its first invalid byte.
fn not_utf8(path: &str, bytes: &[u8], error: std::str::Utf8Error) -> Diagnostic {
    let valid = error.valid_up_to();
    // The prefix before the first invalid byte is valid by definition.
    let prefix = std::str::from_utf8(&bytes[..valid]).unwrap_or_default();
    let start = trellis_diag::LineIndex::new(prefix).position(prefix, valid as u32);
    let bad = error.error_len().unwrap_or(bytes.len() - valid);
    let end = trellis_diag::Position {
        column: start.column + 1,
        offset: start.offset + bad as u32,
        ..start
    };
    io_problem(
        path,
        &format!(
            "the file is not valid UTF-8: byte 0x{:02x} at line {}, column {}",
            bytes[valid], start.line, start.column
        ),
    )
    .with_span(trellis_diag::Span { start, end })
}

fn io_problem(path: &str, reason: &str) -> Diagnostic {
    crate::walk::unreadable(path, reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use trellis_db::{RootDatabase, all_code_items, soil_hash};

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("create copy");
        for entry in std::fs::read_dir(from).expect("read examples").flatten() {
            let target = to.join(entry.file_name());
            if entry.path().is_dir() {
                copy_dir(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).expect("copy file");
            }
        }
    }

    fn hashes_of(root: PathBuf) -> Vec<(String, Option<trellis_hash::Digest>)> {
        let mut loader = RootLoader::new(root);
        let refresh = loader.refresh();
        assert!(refresh.problems.is_empty(), "{:?}", refresh.problems);
        let mut db = RootDatabase::default();
        refresh.change.apply(&mut db);
        all_code_items(&db)
            .iter()
            .map(|&item| (item.qualified(&db), soil_hash(&db, item)))
            .collect()
    }

    /// Paths never enter a hash: the same root at two absolute paths hashes the same.
    #[test]
    fn a_copy_elsewhere_hashes_the_same() {
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let base = std::env::temp_dir().join(format!("trellis-loader-{}", std::process::id()));
        let (a, b) = (base.join("one"), base.join("deeper/two"));
        copy_dir(&examples, &a);
        copy_dir(&examples, &b);
        let first = hashes_of(a);
        assert!(!first.is_empty());
        assert_eq!(first, hashes_of(b));
        std::fs::remove_dir_all(&base).expect("clean up");
    }

    /// A file that is not UTF-8 is reported by every refresh — full or by the
    /// change feed — not only by the one that first read it (a daemon whose
    /// initial load met the file lost the problem on its next refresh).
    #[test]
    fn a_file_that_is_not_utf8_stays_reported() {
        let root = std::env::temp_dir().join(format!("trellis-utf8-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("m")).expect("create root");
        std::fs::write(root.join("soil.toml"), b"# caf\xe9\n").expect("write");
        let mut loader = RootLoader::new(root.clone());
        let codes = |refresh: Refresh| -> Vec<(Option<String>, String)> {
            refresh
                .problems
                .into_iter()
                .map(|d| (d.file, d.code))
                .collect()
        };
        let expected = vec![(Some("soil.toml".to_owned()), "root-unreadable".to_owned())];
        assert_eq!(codes(loader.refresh()), expected);
        assert_eq!(codes(loader.refresh()), expected, "a second full refresh");
        assert_eq!(
            codes(loader.refresh_paths(["soil.toml".to_owned()])),
            expected,
            "a refresh the change feed asked for"
        );
        std::fs::write(root.join("soil.toml"), "fixed").expect("write");
        let fixed = loader.refresh_paths(["soil.toml".to_owned()]);
        assert!(fixed.problems.is_empty());
        assert_eq!(fixed.change.config_text.as_deref(), Some("fixed"));
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    /// Question files are walked, refreshed by the feed and removed like inputs,
    /// but they never enter the database's change: the loader keeps them.
    #[test]
    fn question_files_are_kept_beside_the_database() {
        let root = std::env::temp_dir().join(format!("trellis-questions-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("m")).expect("create root");
        std::fs::write(root.join("m/a.tr"), "a").expect("write");
        std::fs::write(root.join("m/a.question.json"), "{}").expect("write");
        let mut loader = RootLoader::new(root.clone());
        let refresh = loader.refresh();
        let files: Vec<&String> = refresh.change.files.keys().collect();
        assert_eq!(files, ["m/a.tr"]);
        let questions: Vec<(&str, &str)> = loader
            .questions()
            .iter()
            .map(|(path, text)| (path.as_str(), text.as_str()))
            .collect();
        assert_eq!(questions, [("m/a.question.json", "{}")]);

        std::fs::write(root.join("m/a.question.json"), "{\"edited\":1}").expect("write");
        let refresh = loader.refresh_paths(["m/a.question.json".to_owned()]);
        assert!(refresh.change.is_empty(), "{:?}", refresh.change);
        assert_eq!(loader.questions()["m/a.question.json"], "{\"edited\":1}");

        std::fs::remove_file(root.join("m/a.question.json")).expect("remove");
        let refresh = loader.refresh();
        assert!(refresh.change.is_empty(), "{:?}", refresh.change);
        assert!(loader.questions().is_empty());
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    /// `soil.lock` is what writing commands make of the locks: never read, so
    /// neither a cold load nor the change feed after a `test` pays for its
    /// bytes. A directory by that name is still reported, as any input name is.
    #[test]
    fn the_manifest_is_never_loaded() {
        let root = std::env::temp_dir().join(format!("trellis-manifest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("m")).expect("create root");
        std::fs::write(root.join("m/a.lock"), "{}").expect("write");
        std::fs::write(root.join(MANIFEST_FILE), b"not \xff read").expect("write");
        let mut loader = RootLoader::new(root.clone());
        let refresh = loader.refresh();
        let files: Vec<&String> = refresh.change.files.keys().collect();
        assert_eq!(files, ["m/a.lock"]);
        assert!(refresh.problems.is_empty(), "{:?}", refresh.problems);
        std::fs::write(root.join(MANIFEST_FILE), "{\"rewritten\":1}").expect("write");
        let refresh = loader.refresh_paths([MANIFEST_FILE.to_owned()]);
        assert!(refresh.change.is_empty(), "{:?}", refresh.change);
        std::fs::remove_file(root.join(MANIFEST_FILE)).expect("remove");
        assert!(loader.refresh().change.is_empty());
        std::fs::create_dir(root.join(MANIFEST_FILE)).expect("mkdir");
        let problems: Vec<Option<String>> = loader
            .refresh()
            .problems
            .into_iter()
            .map(|d| d.file)
            .collect();
        assert_eq!(problems, [Some(MANIFEST_FILE.to_owned())]);
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    /// Reference data enters the database as its digest, binary or not, from
    /// a full refresh and from the change feed alike; a directory that stops
    /// holding a `.py` stops its data being inputs.
    #[test]
    fn reference_data_is_loaded_as_its_digest() {
        let root = std::env::temp_dir().join(format!("trellis-data-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("ref")).expect("create root");
        std::fs::write(root.join("ref/oracle.py"), "x = 1").expect("write");
        let table = [0xff_u8, 0x00, 0xfe];
        std::fs::write(root.join("ref/t.bin"), table).expect("write");
        let mut loader = RootLoader::new(root.clone());
        let refresh = loader.refresh();
        assert!(refresh.problems.is_empty(), "{:?}", refresh.problems);
        let digest = Digest::of(&table).to_string();
        assert_eq!(
            refresh
                .change
                .files
                .get("ref/t.bin")
                .cloned()
                .flatten()
                .as_deref(),
            Some(digest.as_str())
        );
        std::fs::write(root.join("ref/t.bin"), b"other bytes").expect("write");
        let refresh = loader.refresh_paths(["ref/t.bin".to_owned()]);
        assert_eq!(
            refresh.change.files.get("ref/t.bin").cloned().flatten(),
            Some(Digest::of(b"other bytes").to_string().into())
        );
        assert!(
            loader.refresh().change.is_empty(),
            "the walk agrees with the feed"
        );
        std::fs::remove_file(root.join("ref/oracle.py")).expect("remove");
        let refresh = loader.refresh_paths(["ref/".to_owned()]);
        let gone: Vec<(&str, bool)> = (refresh.change.files.iter())
            .map(|(path, text)| (path.as_str(), text.is_some()))
            .collect();
        assert_eq!(gone, [("ref/oracle.py", false), ("ref/t.bin", false)]);
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    /// A refresh that finds nothing new yields an empty change.
    #[test]
    fn an_unchanged_root_refreshes_to_nothing() {
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let mut loader = RootLoader::new(examples);
        assert!(!loader.refresh().change.is_empty());
        assert!(loader.refresh().change.is_empty());
    }

    /// A scratch root `trellis-<name>-<pid>`, emptied first, holding `files`
    /// (root-relative path, text).
    fn scratch_root(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let root = std::env::temp_dir().join(format!("trellis-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (path, text) in files {
            let path = root.join(path);
            let dir = path.parent().expect("a file lies in a directory");
            std::fs::create_dir_all(dir).expect("create root");
            std::fs::write(path, text).expect("write");
        }
        root
    }

    /// A full refresh forgets the files it no longer walks, once, and keeps
    /// those a refresh of named paths added meanwhile.
    #[test]
    fn a_full_refresh_removes_what_is_gone_and_keeps_what_came() {
        let root = scratch_root(
            "full",
            &[("m/a.tr", "a"), ("m/b.soil", "b"), ("m/c.lock", "c")],
        );
        let mut loader = RootLoader::new(root.clone());
        assert_eq!(loader.refresh().change.files.len(), 3);
        std::fs::write(root.join("m/d.tr"), "d").expect("write");
        assert_eq!(
            loader
                .refresh_paths(["m/d.tr".to_owned()])
                .change
                .files
                .len(),
            1
        );

        std::fs::remove_file(root.join("m/b.soil")).expect("remove");
        std::fs::write(root.join("m/e.soil"), "e").expect("write");
        let change = loader.refresh().change;
        let files: Vec<(&str, Option<&str>)> = (change.files.iter())
            .map(|(path, text)| (path.as_str(), text.as_deref()))
            .collect();
        assert_eq!(files, [("m/b.soil", None), ("m/e.soil", Some("e"))]);
        assert!(
            loader.refresh().change.is_empty(),
            "each file forgotten once"
        );
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    /// What a change feed names is refreshed, and nothing else: an edit, a new
    /// file, a removal, a file that stopped being UTF-8 (kept as a problem until
    /// it is fixed), and a path inside a hidden directory (ignored).
    #[test]
    fn refreshing_named_paths_sets_adds_and_removes_exactly_those() {
        let root = scratch_root(
            "paths",
            &[("m/a.tr", "a"), ("m/b.soil", "b"), ("m/c.lock", "c")],
        );
        std::fs::create_dir_all(root.join("m/.cache")).expect("create root");
        let mut loader = RootLoader::new(root.clone());
        assert_eq!(loader.refresh().change.files.len(), 3);

        std::fs::write(root.join("m/a.tr"), "edited").expect("write");
        std::fs::write(root.join("m/new.soil"), "new").expect("write");
        std::fs::remove_file(root.join("m/c.lock")).expect("remove");
        std::fs::write(root.join("m/b.soil"), [0xff, 0xfe]).expect("write");
        std::fs::write(root.join("m/.cache/x.tr"), "hidden").expect("write");
        let named = [
            "m/a.tr",
            "m/new.soil",
            "m/c.lock",
            "m/b.soil",
            "m/.cache/x.tr",
        ];
        let refresh = loader.refresh_paths(named.map(String::from));
        let files: Vec<(&str, Option<&str>)> = refresh
            .change
            .files
            .iter()
            .map(|(path, text)| (path.as_str(), text.as_deref()))
            .collect();
        assert_eq!(
            files,
            [
                ("m/a.tr", Some("edited")),
                ("m/c.lock", None),
                ("m/new.soil", Some("new")),
            ]
        );
        let problems: Vec<&str> = refresh.problems.iter().map(|d| d.code.as_str()).collect();
        assert_eq!(problems, ["root-unreadable"], "b.soil is not UTF-8");

        std::fs::write(root.join("m/b.soil"), "fixed").expect("write");
        let refresh = loader.refresh_paths(["m/b.soil".to_owned()]);
        assert!(
            refresh.problems.is_empty(),
            "a fixed file clears its problem"
        );
        assert_eq!(refresh.change.files.len(), 1);
        assert!(
            loader.refresh().change.is_empty(),
            "the walk agrees with the feed"
        );
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    /// A directory's path stands for its subtree: a module that came is read
    /// whole, one that went (or moved) is forgotten whole, and a full walk
    /// afterwards finds nothing the feed missed.
    #[test]
    fn refreshing_a_subtree_reads_what_came_and_forgets_what_went() {
        let root = std::env::temp_dir().join(format!("trellis-trees-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("m")).expect("create root");
        std::fs::write(root.join("m/a.tr"), "a").expect("write");
        let mut loader = RootLoader::new(root.clone());
        assert_eq!(loader.refresh().change.files.len(), 1);
        let changed = |refresh: Refresh| -> Vec<(String, bool)> {
            (refresh.change.files.into_iter())
                .map(|(path, text)| (path, text.is_some()))
                .collect()
        };

        std::fs::create_dir_all(root.join("n/deep")).expect("mkdir");
        std::fs::write(root.join("n/b.tr"), "b").expect("write");
        std::fs::write(root.join("n/deep/c.soil"), "c").expect("write");
        let refresh = loader.refresh_paths(["n/".to_owned()]);
        assert_eq!(
            changed(refresh),
            [
                ("n/b.tr".to_owned(), true),
                ("n/deep/c.soil".to_owned(), true)
            ]
        );

        std::fs::rename(root.join("n"), root.join("k")).expect("rename");
        let refresh = loader.refresh_paths(["k/".to_owned(), "n/".to_owned()]);
        assert_eq!(
            changed(refresh),
            [
                ("k/b.tr".to_owned(), true),
                ("k/deep/c.soil".to_owned(), true),
                ("n/b.tr".to_owned(), false),
                ("n/deep/c.soil".to_owned(), false),
            ]
        );
        std::fs::remove_dir_all(root.join("k")).expect("rmdir");
        let refresh = loader.refresh_paths(["k/".to_owned()]);
        assert_eq!(
            changed(refresh),
            [
                ("k/b.tr".to_owned(), false),
                ("k/deep/c.soil".to_owned(), false)
            ]
        );
        assert!(
            loader.refresh().change.is_empty(),
            "the walk agrees with the feed"
        );
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    /// A file is read whole whatever its length did since its stat — the
    /// same, grown, shrunk — and its text shares the read's allocation; bytes
    /// that are not UTF-8 are kept with where they stop being it.
    #[test]
    fn a_file_is_read_whole_into_the_shared_allocation_whatever_its_stat_said() {
        let text = "é".repeat(5_000);
        let root = scratch_root("read-shared", &[("f.tr", &text)]);
        let path = root.join("f.tr");
        for stat_len in [text.len(), text.len() - 7, text.len() + 7, 0] {
            let mut file = std::fs::File::open(&path).expect("open");
            let bytes = read_shared(&mut file, stat_len as u64).expect("read");
            assert_eq!(&*bytes, text.as_bytes(), "stat said {stat_len}");
            let address = bytes.as_ptr();
            let shared = shared_text(bytes).ok().expect("UTF-8");
            assert_eq!(&*shared, text);
            assert_eq!(shared.as_ptr(), address, "no copy");
        }
        let bad = [b'o', b'k', 0xc3, b'('];
        std::fs::write(root.join("bad.tr"), bad).expect("write");
        let mut file = std::fs::File::open(root.join("bad.tr")).expect("open");
        let bytes = read_shared(&mut file, 4).expect("read");
        let Err(NotUtf8 { bytes, error }) = shared_text(bytes) else {
            panic!("not UTF-8")
        };
        assert_eq!((&*bytes, error.valid_up_to()), (&bad[..], 2));
        std::fs::remove_dir_all(&root).expect("clean up");
    }
}
