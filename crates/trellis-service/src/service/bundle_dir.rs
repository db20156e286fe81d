//! The on-disk side of `trellis context`'s default directory,
//! `.trellis/context/<module>/<name>/`: after every request it holds exactly the
//! bundle, as a wipe and a full write would leave it (impl plan §9.13), without
//! paying for one each time (design §9.10).
//!
//! The service keeps a stamp per directory it wrote: the bundle it left there,
//! and what vouches for it. A *listed* stamp (after a sweep, or a check by
//! stats) has a listing of every entry's stats, checked to have exactly the
//! bundle's shape; a *watched* stamp (after a write into a directory the watch
//! already covered) has only the watch and the few files that write touched.
//! On the next request the stamp is vouched for as the daemon vouches for its
//! inputs (§9.6): by the watch having reported nothing since, where there is a
//! change feed; otherwise by the directory listing the same stats. A vouched
//! stamp means the directory holds that bundle, so an unchanged bundle costs
//! nothing more and a changed one only the files that differ. Anything else —
//! no stamp, an event, a moved stat, an entry added or gone — falls back to the
//! sweep, which compares every file's bytes. What a stat cannot see is a file
//! changed within the filesystem's timestamp granularity of the stamp: every
//! file whose times are within [`RACY_WINDOW`] of it has its bytes compared.
//! What the watch cannot see is an event it was told to ignore: the ones a
//! write raises itself, so the files it wrote have their bytes compared, and
//! those it removed their absence checked, once, on the next request.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use trellis_context::{BundleFile, ContextBundle};
use trellis_rpc::RpcError;

use super::failed;
use crate::codes::HostCode;
use crate::watch::sys;

/// How close to its stamp a file's times must be for its bytes, not its stats,
/// to vouch for it. A write's timestamp is rounded to the filesystem's
/// granularity (a clock tick on ext4, xfs, btrfs and tmpfs; a second on ext3;
/// two on FAT), so a second write within that granularity of the first can
/// leave size and times as they were. A file last changed more than the window
/// before the stamp cannot look unchanged after a write: that write's time is
/// later.
pub const RACY_WINDOW: Duration = Duration::from_secs(3);

/// How many directories keep a stamp; the least recently written goes first. A
/// stamp holds its bundle, and a person looks at a few bundles at a time.
const MAX_STAMPS: usize = 32;

/// What a request did to the directory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Files written (created or overwritten).
    pub files: usize,
    /// Entries removed: stale files, emptied directories, strays.
    pub removed: usize,
    /// How the directory was found to hold what the service left there.
    pub vouched: Vouched,
}

/// How a request learned what its directory held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Vouched {
    /// No stamp could vouch: every file's bytes were compared.
    #[default]
    Swept,
    /// The stamp's listing matched the directory's stats.
    ByStats,
    /// The watch reported nothing since the stamp: no listing was taken.
    ByWatch,
}

impl Vouched {
    pub fn name(self) -> &'static str {
        match self {
            Vouched::Swept => "swept",
            Vouched::ByStats => "stats",
            Vouched::ByWatch => "watch",
        }
    }
}

/// The stamps of the bundle directories this service wrote.
pub struct Stamps {
    /// Whether stamps are kept at all: a one-shot service answers one request.
    keep: bool,
    /// Least recently written first.
    stamps: Vec<(PathBuf, Stamp)>,
    /// The watch on the stamped directories; `None` vouches by stats alone.
    watch: Option<DirWatch>,
}

/// What a directory held when this service last left it.
struct Stamp {
    bundle: Arc<ContextBundle>,
    /// The directory itself, so another directory at its path is noticed.
    itself: Entry,
    /// Whether the watch covers every directory of the bundle, and has since
    /// before the stamp's own listing or write.
    watched: bool,
    /// Whether the watch reported an event for one of its directories since.
    disturbed: bool,
    basis: Basis,
}

/// What vouches for a stamp besides the watch.
enum Basis {
    /// Every entry's stats, with exactly the bundle's shape.
    Listed {
        listing: Listing,
        /// When the disk work that produced `listing` began.
        taken: SystemTime,
        /// Whether some file changed within [`RACY_WINDOW`] of `taken`.
        racy: bool,
    },
    /// The watch alone, after a write whose own events it ignored: the files
    /// that write wrote must still hold their bytes and the paths it removed
    /// must still be absent, checked once on the next request.
    Watched {
        unverified: Vec<String>,
        gone: Vec<String>,
    },
}

/// Every entry under a directory, sorted by path.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Listing(Vec<Entry>);

/// One entry's stats: whatever a write, a rename, a `touch`, a `chmod` or a
/// replacement changes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    /// Relative to the bundle directory, `/`-separated.
    path: String,
    /// `S_IFMT | permissions`: a file, a directory, a link, …
    mode: u32,
    size: u64,
    device: u64,
    inode: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Entry {
    fn of(path: String, metadata: &std::fs::Metadata) -> Entry {
        Entry {
            path,
            mode: metadata.mode(),
            size: metadata.size(),
            device: metadata.dev(),
            inode: metadata.ino(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
            changed: (metadata.ctime(), metadata.ctime_nsec()),
        }
    }

    /// The directory at `dir` itself, or `None` when it is not one.
    fn of_dir(dir: &Path) -> Option<Entry> {
        let metadata = std::fs::symlink_metadata(dir).ok()?;
        metadata
            .is_dir()
            .then(|| Entry::of(String::new(), &metadata))
    }

    fn is_file(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFREG
    }

    fn is_dir(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFDIR
    }

    /// Whether a write after `taken` could have left this entry's stats as
    /// they are.
    fn is_racy(&self, taken: SystemTime) -> bool {
        let latest = self.modified.max(self.changed);
        let Ok(taken) = taken.duration_since(UNIX_EPOCH) else {
            return true;
        };
        let bound = taken.saturating_sub(RACY_WINDOW);
        latest >= (bound.as_secs() as i64, i64::from(bound.subsec_nanos()))
    }
}

/// What one write changed, bundle-relative.
#[derive(Default)]
struct Change {
    written: Vec<String>,
    removed: Vec<String>,
    created_dirs: Vec<String>,
    removed_dirs: Vec<String>,
}

impl Stamps {
    /// No stamps: every request sweeps (a one-shot `--no-daemon` service).
    pub fn none() -> Stamps {
        Stamps {
            keep: false,
            stamps: Vec::new(),
            watch: None,
        }
    }

    /// Stamps vouched for by stats alone.
    pub fn by_stats() -> Stamps {
        Stamps {
            keep: true,
            ..Stamps::none()
        }
    }

    /// Stamps vouched for by a watch where the platform gives one, else by stats.
    pub fn watched() -> Stamps {
        Stamps {
            keep: true,
            stamps: Vec::new(),
            watch: DirWatch::new(),
        }
    }

    /// Makes `dir` hold exactly `bundle`, and stamps it.
    pub fn write(&mut self, dir: &Path, bundle: &Arc<ContextBundle>) -> Result<Written, RpcError> {
        if !self.keep {
            return sweep_and_write(dir, bundle);
        }
        let taken = SystemTime::now();
        self.drain();
        let previous = self
            .stamps
            .iter()
            .position(|(stamped, _)| stamped == dir)
            .map(|at| self.stamps.remove(at).1);
        let held = previous.and_then(|stamp| self.vouch(dir, stamp, taken));
        let Some((vouched, held)) = held else {
            let written = sweep_and_write(dir, bundle)?;
            if let Some(stamp) = self.listed(dir, bundle, taken) {
                self.remember(dir, stamp);
            }
            return Ok(written);
        };
        if held.bundle.hash == bundle.hash {
            self.remember(dir, held);
            return Ok(Written {
                vouched,
                ..Written::default()
            });
        }
        let (mut written, change) = apply_difference(dir, &held.bundle, bundle)?;
        written.vouched = vouched;
        let next = if held.watched && self.watch.is_some() {
            self.watched_after(dir, bundle, change)
        } else {
            self.listed(dir, bundle, taken)
        };
        if let Some(stamp) = next {
            self.remember(dir, stamp);
        }
        Ok(written)
    }

    /// How `stamp` vouches for `dir` now, and the stamp to keep if nothing is
    /// written: quiet under the watch, or checked by stats (then renewed with
    /// this request's listing, so its racy files age out of the window).
    fn vouch(&self, dir: &Path, stamp: Stamp, taken: SystemTime) -> Option<(Vouched, Stamp)> {
        let Stamp {
            bundle,
            itself,
            watched,
            disturbed,
            basis,
        } = stamp;
        let quiet = watched && !disturbed && Entry::of_dir(dir).is_some_and(|now| now == itself);
        match basis {
            Basis::Listed {
                listing,
                taken: stamped,
                racy,
            } => {
                if quiet && !racy {
                    let basis = Basis::Listed {
                        listing,
                        taken: stamped,
                        racy,
                    };
                    let stamp = Stamp {
                        bundle,
                        itself,
                        watched,
                        disturbed,
                        basis,
                    };
                    return Some((Vouched::ByWatch, stamp));
                }
                let now = list(dir).ok()?;
                if now != listing {
                    return None;
                }
                if racy {
                    let texts = texts(&bundle);
                    let intact = now
                        .0
                        .iter()
                        .filter(|entry| entry.is_file() && entry.is_racy(stamped))
                        .all(|entry| {
                            texts
                                .get(entry.path.as_str())
                                .is_some_and(|text| holds(&dir.join(&entry.path), text))
                        });
                    if !intact {
                        return None;
                    }
                }
                let stamp = Stamp {
                    bundle,
                    itself: Entry::of_dir(dir)?,
                    watched: self.covers(dir, &now),
                    disturbed: false,
                    basis: Basis::Listed {
                        racy: now.any_racy(taken),
                        listing: now,
                        taken,
                    },
                };
                Some((Vouched::ByStats, stamp))
            }
            Basis::Watched { unverified, gone } => {
                if !quiet {
                    return None;
                }
                let written = unverified.is_empty() || {
                    let texts = texts(&bundle);
                    unverified.iter().all(|path| {
                        texts
                            .get(path.as_str())
                            .is_some_and(|text| holds(&dir.join(path), text))
                    })
                };
                let absent = gone.iter().all(|path| {
                    std::fs::symlink_metadata(dir.join(path))
                        .is_err_and(|error| error.kind() == std::io::ErrorKind::NotFound)
                });
                if !(written && absent) {
                    return None;
                }
                // Checked after the write's own events were drained: from here
                // on the watch reports whatever happens to them.
                let basis = Basis::Watched {
                    unverified: Vec::new(),
                    gone: Vec::new(),
                };
                let stamp = Stamp {
                    bundle,
                    itself,
                    watched,
                    disturbed,
                    basis,
                };
                Some((Vouched::ByWatch, stamp))
            }
        }
    }

    /// Whether the watch covers `dir` and every directory of `listing`.
    fn covers(&self, dir: &Path, listing: &Listing) -> bool {
        self.watch.as_ref().is_some_and(|watch| {
            watch.covers(dir)
                && listing
                    .directories()
                    .all(|sub| watch.covers(&dir.join(sub)))
        })
    }

    /// A listed stamp of a directory this request just swept or wrote without
    /// the watch's word for it: its directories watched (events so far are
    /// this request's own, or land in the racy window), then listed; none when
    /// the listing does not have the bundle's shape (someone else is writing
    /// there too: the next request sweeps).
    fn listed(
        &mut self,
        dir: &Path,
        bundle: &Arc<ContextBundle>,
        taken: SystemTime,
    ) -> Option<Stamp> {
        let mut watched = false;
        if let Some(watch) = &mut self.watch {
            let mut dirs = vec![dir.to_owned()];
            dirs.extend(directories(&bundle.files).iter().map(|sub| dir.join(sub)));
            watched = dirs.iter().all(|sub| watch.add(sub, dir));
        }
        self.drain();
        let listing = list(dir).ok()?;
        if !listing.has_shape_of(bundle) {
            return None;
        }
        Some(Stamp {
            bundle: bundle.clone(),
            itself: Entry::of_dir(dir)?,
            watched,
            disturbed: false,
            basis: Basis::Listed {
                racy: listing.any_racy(taken),
                listing,
                taken,
            },
        })
    }

    /// A watched stamp of a directory the watch covered before this request
    /// wrote `change` into it: the write's own events are drained and ignored
    /// (any other event disturbs the stamp), the directories it created are
    /// watched and then checked to hold only what it wrote there.
    fn watched_after(
        &mut self,
        dir: &Path,
        bundle: &Arc<ContextBundle>,
        change: Change,
    ) -> Option<Stamp> {
        let watch = self.watch.as_mut()?;
        let mut created = change.created_dirs.clone();
        created.sort_by_key(|sub| sub.matches('/').count());
        let mut watched = true;
        for sub in &created {
            watched &= watch.add(&dir.join(sub), dir);
        }
        let ours: HashSet<PathBuf> = [
            &change.written,
            &change.removed,
            &change.created_dirs,
            &change.removed_dirs,
        ]
        .into_iter()
        .flatten()
        .map(|path| dir.join(path))
        .collect();
        let (touched, disturbed) = watch.drain(Some((dir, &ours)));
        self.disturb(&touched);
        let only_ours = created
            .iter()
            .all(|sub| names_in(&dir.join(sub)) == Some(children(bundle, sub)));
        if !only_ours {
            return None;
        }
        let mut gone = change.removed;
        gone.extend(change.removed_dirs);
        Some(Stamp {
            bundle: bundle.clone(),
            itself: Entry::of_dir(dir)?,
            watched,
            disturbed,
            basis: Basis::Watched {
                unverified: change.written,
                gone,
            },
        })
    }

    fn remember(&mut self, dir: &Path, stamp: Stamp) {
        if self.stamps.len() >= MAX_STAMPS {
            let (evicted, _) = self.stamps.remove(0);
            if let Some(watch) = &mut self.watch {
                watch.forget(&evicted);
            }
        }
        self.stamps.push((dir.to_owned(), stamp));
    }

    /// Marks every stamp an event touched as disturbed. A directory being
    /// written has no stamp meanwhile: its events, this request's own or
    /// anyone's, fall in the racy window of the listed stamp it gets next.
    fn drain(&mut self) {
        if let Some(watch) = &mut self.watch {
            let (touched, _) = watch.drain(None);
            self.disturb(&touched);
        }
    }

    fn disturb(&mut self, touched: &Touched) {
        for (dir, stamp) in &mut self.stamps {
            if touched.everything || touched.dirs.contains(dir) {
                stamp.disturbed = true;
            }
        }
    }
}

/// Each file's bytes by bundle path.
fn texts(bundle: &ContextBundle) -> HashMap<&str, &[u8]> {
    bundle
        .files
        .iter()
        .map(|file| (file.path.as_str(), file.text.as_bytes()))
        .collect()
}

/// The names of the entries directly under `sub` in the bundle.
fn children(bundle: &ContextBundle, sub: &str) -> BTreeSet<String> {
    let prefix = format!("{sub}/");
    bundle
        .files
        .iter()
        .filter_map(|file| file.path.strip_prefix(&prefix))
        .map(|rest| rest.split('/').next().unwrap_or(rest).to_owned())
        .collect()
}

/// The names of the entries of a directory, if it can be read.
fn names_in(dir: &Path) -> Option<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    for entry in std::fs::read_dir(dir).ok()? {
        names.insert(entry.ok()?.file_name().to_string_lossy().into_owned());
    }
    Some(names)
}

impl Listing {
    fn directories(&self) -> impl Iterator<Item = &str> {
        self.0
            .iter()
            .filter(|e| e.is_dir())
            .map(|e| e.path.as_str())
    }

    fn any_racy(&self, taken: SystemTime) -> bool {
        self.0.iter().any(|e| e.is_file() && e.is_racy(taken))
    }

    /// Whether the listing is exactly the bundle's files, with their sizes,
    /// and the directories they live in.
    fn has_shape_of(&self, bundle: &ContextBundle) -> bool {
        let files: HashMap<&str, u64> = bundle
            .files
            .iter()
            .map(|file| (file.path.as_str(), file.text.len() as u64))
            .collect();
        let dirs = directories(&bundle.files);
        self.0.len() == files.len() + dirs.len()
            && self.0.iter().all(|entry| {
                (entry.is_file() && files.get(entry.path.as_str()) == Some(&entry.size))
                    || (entry.is_dir() && dirs.contains(entry.path.as_str()))
            })
    }
}

/// Whether the file at `path` holds exactly `text`, read without reading past
/// its length.
fn holds(path: &Path, text: &[u8]) -> bool {
    let Ok(mut file) = File::open(path) else {
        return false;
    };
    let mut bytes = Vec::with_capacity(text.len() + 1);
    file.by_ref()
        .take(text.len() as u64 + 1)
        .read_to_end(&mut bytes)
        .is_ok_and(|_| bytes == text)
}

/// Lists every entry under `dir` without following links; a `dir` that is not
/// a directory (absent, a file, a link) is an error.
fn list(dir: &Path) -> std::io::Result<Listing> {
    fn walk(dir: &Path, prefix: &str, entries: &mut Vec<Entry>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let metadata = entry.metadata()?;
            let path = format!("{prefix}{}", entry.file_name().to_string_lossy());
            if metadata.is_dir() {
                walk(&entry.path(), &format!("{path}/"), entries)?;
            }
            entries.push(Entry::of(path, &metadata));
        }
        Ok(())
    }
    if !std::fs::symlink_metadata(dir)?.is_dir() {
        return Err(std::io::Error::other("not a directory"));
    }
    let mut entries = Vec::new();
    walk(dir, "", &mut entries)?;
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Listing(entries))
}

/// The inotify watch on the stamped directories: every event names the
/// directory (a stamp's, or one of its subdirectories) it happened in.
struct DirWatch {
    inotify: File,
    /// Watch descriptor → the watched directory, and the stamped directory it
    /// belongs to.
    watched: HashMap<i32, (PathBuf, PathBuf)>,
    /// Watched directory → its descriptor.
    descriptors: HashMap<PathBuf, i32>,
    buffer: Vec<u8>,
}

/// What one drain saw.
#[derive(Default)]
struct Touched {
    /// Stamped directories with an event in them or in a subdirectory.
    dirs: BTreeSet<PathBuf>,
    /// Events were lost: nothing can be vouched for by the watch.
    everything: bool,
}

impl DirWatch {
    fn new() -> Option<DirWatch> {
        Some(DirWatch {
            inotify: sys::init().ok()?,
            watched: HashMap::new(),
            descriptors: HashMap::new(),
            buffer: vec![0; 64 * 1024],
        })
    }

    fn covers(&self, dir: &Path) -> bool {
        self.descriptors.contains_key(dir)
    }

    /// Watches `dir`, a directory of the stamped directory `owner`.
    fn add(&mut self, dir: &Path, owner: &Path) -> bool {
        match sys::add_watch(&self.inotify, dir) {
            Ok(descriptor) => {
                self.watched
                    .insert(descriptor, (dir.to_owned(), owner.to_owned()));
                self.descriptors.insert(dir.to_owned(), descriptor);
                true
            }
            Err(_) => false,
        }
    }

    /// Ends the watches of a stamped directory that lost its stamp.
    fn forget(&mut self, owner: &Path) {
        let mine: Vec<i32> = self
            .watched
            .iter()
            .filter(|(_, (_, o))| o.as_path() == owner)
            .map(|(&descriptor, _)| descriptor)
            .collect();
        for descriptor in mine {
            sys::remove_watch(&self.inotify, descriptor);
            if let Some((dir, _)) = self.watched.remove(&descriptor) {
                self.descriptors.remove(&dir);
            }
        }
    }

    /// Reads every queued event. An event in `own`'s directories on one of
    /// the paths in its set (a write's own) is ignored, any other there is
    /// reported as the second value; events elsewhere name their stamped
    /// directory.
    fn drain(&mut self, own: Option<(&Path, &HashSet<PathBuf>)>) -> (Touched, bool) {
        let mut touched = Touched::default();
        let mut own_disturbed = false;
        let mut buffer = std::mem::take(&mut self.buffer);
        loop {
            let read = match self.inotify.read(&mut buffer) {
                Ok(0) => break,
                Ok(read) => read,
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    touched.everything = true;
                    break;
                }
            };
            for event in sys::events(&buffer[..read]) {
                if sys::overflowed(event.mask) {
                    touched.everything = true;
                }
                if let Some((dir, owner)) = self.watched.get(&event.descriptor) {
                    match own {
                        Some((own, ours)) if owner == own => {
                            use std::os::unix::ffi::OsStrExt;
                            let name = std::ffi::OsStr::from_bytes(event.name);
                            let path = if event.name.is_empty() {
                                dir.clone()
                            } else {
                                dir.join(name)
                            };
                            own_disturbed |= !ours.contains(&path);
                        }
                        _ => {
                            touched.dirs.insert(owner.clone());
                        }
                    }
                }
                if sys::watch_removed(event.mask)
                    && let Some((dir, _)) = self.watched.remove(&event.descriptor)
                {
                    self.descriptors.remove(&dir);
                }
            }
        }
        self.buffer = buffer;
        let own_disturbed = own_disturbed || touched.everything;
        (touched, own_disturbed)
    }
}

fn write_failed(path: &Path, error: &std::io::Error) -> RpcError {
    failed(&[HostCode::BundleWriteFailed
        .diagnostic(format!("could not write {}: {error}", path.display()))])
}

/// Moves `dir` from holding exactly `held` to holding exactly `bundle`: writes
/// the files that are new or differ, removes those that went and the
/// directories they leave empty.
fn apply_difference(
    dir: &Path,
    held: &ContextBundle,
    bundle: &ContextBundle,
) -> Result<(Written, Change), RpcError> {
    let before: HashMap<&str, &Arc<str>> = held
        .files
        .iter()
        .map(|file| (file.path.as_str(), &file.text))
        .collect();
    let had = directories(&held.files);
    let needed = directories(&bundle.files);
    let mut change = Change {
        created_dirs: needed.difference(&had).map(|d| (*d).to_owned()).collect(),
        ..Change::default()
    };
    for file in &bundle.files {
        let same = before
            .get(file.path.as_str())
            .is_some_and(|text| Arc::ptr_eq(text, &file.text) || text[..] == file.text[..]);
        if !same {
            write_file(dir, &file.path, &file.text)?;
            change.written.push(file.path.clone());
        }
    }
    let kept: HashSet<&str> = bundle.files.iter().map(|f| f.path.as_str()).collect();
    for file in &held.files {
        if !kept.contains(file.path.as_str()) {
            let path = dir.join(&file.path);
            std::fs::remove_file(&path).map_err(|e| write_failed(&path, &e))?;
            change.removed.push(file.path.clone());
        }
    }
    // Directories no file of the new bundle lives in, deepest first.
    let mut gone: Vec<String> = had.difference(&needed).map(|d| (*d).to_owned()).collect();
    gone.sort_by_key(|d| std::cmp::Reverse(d.len()));
    for relative in &gone {
        let path = dir.join(relative);
        std::fs::remove_dir(&path).map_err(|e| write_failed(&path, &e))?;
    }
    change.removed_dirs = gone;
    let written = Written {
        files: change.written.len(),
        removed: change.removed.len() + change.removed_dirs.len(),
        vouched: Vouched::default(),
    };
    Ok((written, change))
}

/// Every directory the files' paths pass through (`callees`, `examples/m`).
fn directories(files: &[BundleFile]) -> BTreeSet<&str> {
    let mut dirs = BTreeSet::new();
    for file in files {
        let mut path = file.path.as_str();
        // Once a parent is known, so are its own parents.
        while let Some((parent, _)) = path.rsplit_once('/')
            && dirs.insert(parent)
        {
            path = parent;
        }
    }
    dirs
}

fn write_file(dir: &Path, relative: &str, text: &str) -> Result<(), RpcError> {
    // Paths are built by the bundle queries from module and definition names;
    // the check is the same one read_context applies.
    trellis_context::check_bundle_path(relative).map_err(|d| failed(&[d]))?;
    let target = dir.join(relative);
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(|e| write_failed(parent, &e))?;
    }
    std::fs::write(&target, text.as_bytes()).map_err(|e| write_failed(&target, &e))
}

/// Writes every file of `bundle` into `dir`, an empty or absent directory
/// (`--out`).
pub fn write_all(dir: &Path, bundle: &ContextBundle) -> Result<Written, RpcError> {
    for file in &bundle.files {
        write_file(dir, &file.path, &file.text)?;
    }
    Ok(Written {
        files: bundle.files.len(),
        ..Written::default()
    })
}

/// The wipe without a stamp, and without rewriting what is already right: every
/// entry of `dir` that is not a file of `bundle` with exactly its bytes is
/// removed, then the missing files are written, so the directory holds exactly
/// the bundle while an unchanged one costs reads, not hundreds of unlinks and
/// creates. A `dir` that is itself a link (or a file) is removed, never entered:
/// Trellis follows no link inside a root (design §9.7).
pub fn sweep_and_write(dir: &Path, bundle: &ContextBundle) -> Result<Written, RpcError> {
    let mut written = Written::default();
    if let Ok(metadata) = std::fs::symlink_metadata(dir)
        && !metadata.is_dir()
    {
        std::fs::remove_file(dir).map_err(|e| write_failed(dir, &e))?;
        written.removed += 1;
    }
    let wanted: HashMap<PathBuf, &[u8]> = bundle
        .files
        .iter()
        .map(|file| (dir.join(&file.path), file.text.as_bytes()))
        .collect();
    let mut kept = BTreeSet::new();
    sweep(dir, &wanted, &mut kept, &mut written).map_err(|e| write_failed(dir, &e))?;
    for file in &bundle.files {
        if !kept.contains(&dir.join(&file.path)) {
            write_file(dir, &file.path, &file.text)?;
            written.files += 1;
        }
    }
    Ok(written)
}

/// Removes every entry under `path` that is not wanted with exactly its bytes;
/// records the files it keeps. Returns whether it kept anything.
fn sweep(
    path: &Path,
    wanted: &HashMap<PathBuf, &[u8]>,
    kept: &mut BTreeSet<PathBuf>,
    written: &mut Written,
) -> std::io::Result<bool> {
    let Ok(entries) = std::fs::read_dir(path) else {
        return Ok(false);
    };
    let mut any = false;
    for entry in entries {
        let entry = entry?;
        let (path, kind) = (entry.path(), entry.file_type()?);
        if kind.is_dir() {
            if sweep(&path, wanted, kept, written)? {
                any = true;
            } else {
                std::fs::remove_dir(&path)?;
                written.removed += 1;
            }
        } else if kind.is_file() && wanted.get(&path).is_some_and(|bytes| holds(&path, bytes)) {
            kept.insert(path);
            any = true;
        } else {
            std::fs::remove_file(&path)?;
            written.removed += 1;
        }
    }
    Ok(any)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Tree = std::collections::BTreeMap<String, (u64, i64, i64, Vec<u8>)>;

    fn temp_dir(name: &str) -> PathBuf {
        let base =
            std::env::temp_dir().join(format!("trellis-bundle-dir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).expect("create the test directory");
        base
    }

    fn bundle(files: &[(&str, &str)]) -> Arc<ContextBundle> {
        let mut hasher = trellis_hash::Hasher::tagged("test-bundle");
        for (path, text) in files {
            hasher.part(path.as_bytes()).part(text.as_bytes());
        }
        Arc::new(ContextBundle {
            definition: "m/f".to_owned(),
            budget: 0,
            estimate: 0,
            files: files
                .iter()
                .map(|(path, text)| BundleFile {
                    path: (*path).to_owned(),
                    text: Arc::from(*text),
                })
                .collect(),
            dropped: Vec::new(),
            hash: hasher.finish(),
        })
    }

    /// Every entry under `dir`: path → (inode, change time, bytes of a file).
    fn tree(dir: &Path) -> Tree {
        list(dir)
            .expect("a directory")
            .0
            .into_iter()
            .map(|entry| {
                let bytes = if entry.is_file() {
                    std::fs::read(dir.join(&entry.path)).expect("read")
                } else {
                    Vec::new()
                };
                let (seconds, nanos) = entry.changed;
                (entry.path, (entry.inode, seconds, nanos, bytes))
            })
            .collect()
    }

    /// Lets the stamps' files look older than the racy window, as they are
    /// once a few seconds have passed, by moving the stamps' time forward.
    fn age(stamps: &mut Stamps) {
        for (_, stamp) in &mut stamps.stamps {
            if let Basis::Listed {
                listing,
                taken,
                racy,
            } = &mut stamp.basis
            {
                *taken = SystemTime::now() + 2 * RACY_WINDOW;
                *racy = listing.any_racy(*taken);
            }
        }
    }

    /// As if a change had kept every stat: the stamp's listing is made the
    /// directory's present one.
    fn forge_listing(stamps: &mut Stamps, dir: &Path) {
        if let Basis::Listed { listing, .. } = &mut stamps.stamps[0].1.basis {
            *listing = list(dir).expect("lists");
        }
    }

    const FILES: &[(&str, &str)] = &[
        ("bundle.json", "{}"),
        ("spec.md", "the spec"),
        ("callees/a.md", "# a"),
        ("examples/m/g.tr", "g"),
    ];

    #[test]
    fn an_unchanged_bundle_is_vouched_for_without_a_write() {
        for (name, mut stamps) in [("stats", Stamps::by_stats()), ("watch", Stamps::watched())] {
            let dir = temp_dir(&format!("unchanged-{name}")).join("f");
            let files = bundle(FILES);
            let first = stamps.write(&dir, &files).expect("writes");
            assert_eq!((first.files, first.vouched), (4, Vouched::Swept));
            let before = tree(&dir);
            // Within the window the racy files' bytes are compared: no write.
            let again = stamps.write(&dir, &files).expect("writes");
            assert_eq!((again.files, again.removed), (0, 0), "{name}");
            assert_eq!(again.vouched, Vouched::ByStats, "{name}");
            age(&mut stamps);
            let later = stamps.write(&dir, &files).expect("writes");
            let expected = if cfg!(target_os = "linux") && name == "watch" {
                Vouched::ByWatch
            } else {
                Vouched::ByStats
            };
            assert_eq!(
                (later.files, later.removed, later.vouched),
                (0, 0, expected)
            );
            assert_eq!(
                tree(&dir),
                before,
                "{name}: not a byte, inode or time moved"
            );
        }
    }

    /// The rule of design §9.10: within the window a stat cannot tell a
    /// same-size rewrite, so the bytes are compared; outside it the stats are
    /// trusted (a later write cannot keep the file's times).
    #[test]
    fn a_racy_file_is_compared_by_its_bytes() {
        let dir = temp_dir("racy").join("f");
        let files = bundle(FILES);
        let mut stamps = Stamps::by_stats();
        stamps.write(&dir, &files).expect("writes");
        std::fs::write(dir.join("spec.md"), "the SPEC").expect("tamper");
        forge_listing(&mut stamps, &dir);
        let repaired = stamps.write(&dir, &files).expect("writes");
        assert_eq!((repaired.files, repaired.vouched), (1, Vouched::Swept));
        assert_eq!(
            std::fs::read_to_string(dir.join("spec.md")).unwrap(),
            "the spec"
        );

        std::fs::write(dir.join("spec.md"), "the SPEC").expect("tamper");
        forge_listing(&mut stamps, &dir);
        age(&mut stamps);
        let trusted = stamps.write(&dir, &files).expect("writes");
        assert_eq!(trusted.vouched, Vouched::ByStats, "what the rule trusts");
    }

    #[test]
    fn a_tampered_extra_or_missing_entry_is_repaired() {
        for (name, mut stamps) in [("stats", Stamps::by_stats()), ("watch", Stamps::watched())] {
            let dir = temp_dir(&format!("tampered-{name}")).join("f");
            let files = bundle(FILES);
            stamps.write(&dir, &files).expect("writes");
            let written = tree(&dir);
            age(&mut stamps);
            std::fs::write(dir.join("spec.md"), "the SPEC").expect("same size");
            std::fs::write(dir.join("stray.txt"), "left over").expect("stray");
            std::fs::create_dir_all(dir.join("callees/extra")).expect("stray dir");
            std::fs::remove_file(dir.join("examples/m/g.tr")).expect("remove");
            let repaired = stamps.write(&dir, &files).expect("writes");
            assert_eq!(repaired.vouched, Vouched::Swept, "{name}");
            // Rewritten: spec.md and g.tr. Removed: the tampered spec.md, the
            // strays, and examples/m and examples, emptied by the missing g.tr.
            assert_eq!((repaired.files, repaired.removed), (2, 5), "{name}");
            let now = tree(&dir);
            let contents = |tree: &Tree| {
                tree.iter()
                    .map(|(path, (.., bytes))| (path.clone(), bytes.clone()))
                    .collect::<Vec<(String, Vec<u8>)>>()
            };
            assert_eq!(
                contents(&now),
                contents(&written),
                "{name}: exactly the bundle"
            );
            assert_eq!(
                now["callees/a.md"], written["callees/a.md"],
                "{name}: untouched"
            );
        }
    }

    #[test]
    fn a_changed_bundle_writes_only_the_difference() {
        for (name, mut stamps) in [("stats", Stamps::by_stats()), ("watch", Stamps::watched())] {
            let dir = temp_dir(&format!("changed-{name}")).join("f");
            stamps.write(&dir, &bundle(FILES)).expect("writes");
            let before = tree(&dir);
            age(&mut stamps);
            let next = bundle(&[
                ("bundle.json", "{\"changed\":true}"),
                ("spec.md", "the spec"),
                ("callees/a.md", "# a"),
                ("callees/b.md", "# b"),
            ]);
            let written = stamps.write(&dir, &next).expect("writes");
            assert_ne!(written.vouched, Vouched::Swept, "{name}");
            // bundle.json and callees/b.md; examples/m/g.tr, examples/m, examples.
            assert_eq!((written.files, written.removed), (2, 3), "{name}");
            let after = tree(&dir);
            assert_eq!(
                after.keys().map(String::as_str).collect::<Vec<_>>(),
                [
                    "bundle.json",
                    "callees",
                    "callees/a.md",
                    "callees/b.md",
                    "spec.md"
                ]
            );
            assert_eq!(after["spec.md"], before["spec.md"], "{name}: untouched");
            assert_eq!(after["callees/a.md"], before["callees/a.md"]);
        }
    }

    /// Trellis follows no link inside a root (design §9.7): a link where the
    /// directory belongs is removed, and what it pointed at is left alone.
    #[test]
    fn a_link_in_place_of_the_directory_is_removed_not_followed() {
        let base = temp_dir("link");
        let elsewhere = base.join("elsewhere");
        std::fs::create_dir_all(&elsewhere).expect("mkdir");
        std::fs::write(elsewhere.join("precious.txt"), "keep").expect("write");
        let dir = base.join("f");
        std::os::unix::fs::symlink(&elsewhere, &dir).expect("link");
        Stamps::watched()
            .write(&dir, &bundle(FILES))
            .expect("writes");
        assert!(
            !std::fs::symlink_metadata(&dir)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("spec.md")).unwrap(),
            "the spec"
        );
        assert_eq!(
            std::fs::read_dir(&elsewhere).unwrap().count(),
            1,
            "nothing written or removed through the link"
        );
    }

    #[test]
    fn a_listing_has_the_shape_of_exactly_its_bundle() {
        let dir = temp_dir("shape").join("f");
        let files = bundle(FILES);
        sweep_and_write(&dir, &files).expect("writes");
        assert!(list(&dir).unwrap().has_shape_of(&files));
        std::fs::write(dir.join("stray"), "").unwrap();
        assert!(!list(&dir).unwrap().has_shape_of(&files), "an extra file");
        std::fs::remove_file(dir.join("stray")).unwrap();
        std::fs::write(dir.join("spec.md"), "longer than it was").unwrap();
        assert!(!list(&dir).unwrap().has_shape_of(&files), "another size");
        std::fs::remove_file(dir.join("spec.md")).unwrap();
        std::fs::create_dir(dir.join("spec.md")).unwrap();
        assert!(
            !list(&dir).unwrap().has_shape_of(&files),
            "a directory for a file"
        );
    }

    const CHANGED: &[(&str, &str)] = &[
        ("bundle.json", "{\"changed\":true}"),
        ("spec.md", "the spec"),
        ("callees/a.md", "# a"),
        ("callees/b.md", "# b"),
    ];

    /// Swallows the queued events on `paths` of `dir`, as a write ignores its
    /// own: a change made meanwhile is what the watch was told not to see.
    #[cfg(target_os = "linux")]
    fn ignore_events(stamps: &mut Stamps, dir: &Path, paths: &[&str]) {
        let ours: HashSet<PathBuf> = paths.iter().map(|path| dir.join(path)).collect();
        let watch = stamps.watch.as_mut().expect("a watch");
        assert!(!watch.drain(Some((dir, &ours))).1, "only those paths moved");
    }

    /// After a write into a watched directory the watch vouches alone, once
    /// the written files' bytes and the removed paths' absence are checked.
    #[cfg(target_os = "linux")]
    #[test]
    fn after_a_watched_write_the_watch_and_the_written_files_vouch() {
        let dir = temp_dir("watched-write").join("f");
        let mut stamps = Stamps::watched();
        stamps.write(&dir, &bundle(FILES)).expect("writes");
        age(&mut stamps);
        let next = bundle(CHANGED);
        let written = stamps.write(&dir, &next).expect("writes");
        assert_eq!((written.files, written.vouched), (2, Vouched::ByWatch));
        let Basis::Watched { unverified, gone } = &stamps.stamps[0].1.basis else {
            panic!("a watched stamp");
        };
        assert_eq!(unverified, &["bundle.json", "callees/b.md"]);
        assert_eq!(gone, &["examples/m/g.tr", "examples/m", "examples"]);
        let quiet = stamps.write(&dir, &next).expect("writes");
        assert_eq!((quiet.files, quiet.vouched), (0, Vouched::ByWatch));
        assert!(matches!(
            &stamps.stamps[0].1.basis,
            Basis::Watched { unverified, gone } if unverified.is_empty() && gone.is_empty()
        ));
        std::fs::write(dir.join("callees/a.md"), "# A").expect("tamper");
        let repaired = stamps.write(&dir, &next).expect("writes");
        assert_eq!((repaired.files, repaired.vouched), (1, Vouched::Swept));
        assert_eq!(
            std::fs::read_to_string(dir.join("callees/a.md")).unwrap(),
            "# a"
        );
    }

    /// A change the write's own events hid — to a file it wrote, or where it
    /// removed one — is caught by the one check of those paths.
    #[cfg(target_os = "linux")]
    #[test]
    fn what_a_write_told_the_watch_to_ignore_is_checked_once() {
        let dir = temp_dir("ignored").join("f");
        let mut stamps = Stamps::watched();
        stamps.write(&dir, &bundle(FILES)).expect("writes");
        age(&mut stamps);
        let next = bundle(CHANGED);
        stamps.write(&dir, &next).expect("writes");
        std::fs::write(dir.join("callees/b.md"), "# B").expect("tamper");
        ignore_events(&mut stamps, &dir, &["callees/b.md"]);
        let repaired = stamps.write(&dir, &next).expect("writes");
        assert_eq!(repaired.vouched, Vouched::Swept, "a written file's bytes");
        assert_eq!(
            std::fs::read_to_string(dir.join("callees/b.md")).unwrap(),
            "# b"
        );

        age(&mut stamps);
        stamps.write(&dir, &bundle(FILES)).expect("writes");
        stamps.write(&dir, &next).expect("writes");
        std::fs::create_dir(dir.join("examples")).expect("a stray where one went");
        ignore_events(&mut stamps, &dir, &["examples"]);
        let repaired = stamps.write(&dir, &next).expect("writes");
        assert_eq!(repaired.vouched, Vouched::Swept, "a removed path's absence");
        assert!(!dir.join("examples").exists());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_drain_ignores_only_the_paths_it_is_given() {
        let dir = temp_dir("drain");
        let mut watch = DirWatch::new().expect("inotify");
        assert!(watch.add(&dir, &dir));
        let ours = HashSet::from([dir.join("a")]);
        std::fs::write(dir.join("a"), "a").unwrap();
        assert!(!watch.drain(Some((&dir, &ours))).1, "its own write");
        std::fs::write(dir.join("a"), "again").unwrap();
        std::fs::write(dir.join("b"), "b").unwrap();
        assert!(watch.drain(Some((&dir, &ours))).1, "someone else's");
        std::fs::write(dir.join("a"), "a").unwrap();
        let (touched, disturbed) = watch.drain(None);
        assert!(!disturbed);
        assert!(
            touched.dirs.contains(&dir),
            "named by its stamped directory"
        );
    }

    #[test]
    fn a_created_directory_holds_only_what_was_written_there() {
        let files = bundle(&[
            ("examples/m/g.tr", "g"),
            ("examples/m/g.soil", "g"),
            ("examples/n/h.tr", "h"),
            ("spec.md", ""),
        ]);
        assert_eq!(
            children(&files, "examples"),
            BTreeSet::from(["m".to_owned(), "n".to_owned()])
        );
        assert_eq!(
            children(&files, "examples/m"),
            BTreeSet::from(["g.soil".to_owned(), "g.tr".to_owned()])
        );
        let dir = temp_dir("children");
        std::fs::write(dir.join("g.tr"), "").unwrap();
        std::fs::write(dir.join("stray"), "").unwrap();
        assert_eq!(
            names_in(&dir),
            Some(BTreeSet::from(["g.tr".to_owned(), "stray".to_owned()]))
        );
        assert_eq!(names_in(&dir.join("absent")), None);
    }

    #[test]
    fn racy_means_changed_within_the_window_of_the_stamp() {
        let at = |seconds: i64| Entry {
            path: "f".to_owned(),
            mode: libc::S_IFREG,
            size: 1,
            device: 1,
            inode: 1,
            modified: (seconds, 0),
            changed: (seconds, 500),
        };
        let taken = UNIX_EPOCH + Duration::from_secs(100);
        assert!(!at(96).is_racy(taken));
        assert!(at(97).is_racy(taken), "the window's edge is racy");
        assert!(at(99).is_racy(taken));
        assert!(at(101).is_racy(taken), "a time after the stamp");
    }
}
