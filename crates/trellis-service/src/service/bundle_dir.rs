//! The on-disk side of `trellis context`'s default directory,
//! `.trellis/context/<module>/<name>/`: after every request it holds exactly the
//! bundle, as a wipe and a full write would leave it (impl plan §9.13), without
//! paying for one each time (design §9.10).
//!
//! The service keeps a stamp per directory it wrote: the bundle it left there
//! and a listing of every entry's stats, checked to have exactly the bundle's
//! shape. On the next request the directory is listed again; when every stat is
//! the stamp's, the directory holds that bundle, so an unchanged bundle costs a
//! listing and a changed one the listing and the files that differ. Anything
//! else — no stamp, a moved stat, an entry added or gone — falls back to the
//! sweep, which compares every file's bytes. What a stat cannot see is a file
//! changed within the filesystem's timestamp granularity of the stamp: every
//! file whose times are within [`RACY_WINDOW`] of it has its bytes compared.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
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
}

impl Vouched {
    pub fn name(self) -> &'static str {
        match self {
            Vouched::Swept => "swept",
            Vouched::ByStats => "stats",
        }
    }
}

/// The stamps of the bundle directories this service wrote.
pub struct Stamps {
    /// Whether stamps are kept at all: a one-shot service answers one request.
    keep: bool,
    /// Least recently written first.
    stamps: Vec<(PathBuf, Stamp)>,
}

/// What a directory held when this service last left it.
struct Stamp {
    bundle: Arc<ContextBundle>,
    /// Every entry's stats, with exactly the bundle's shape.
    listing: Listing,
    /// When the disk work that produced `listing` began.
    taken: SystemTime,
}

/// Every entry under a directory by its path, relative to the directory and
/// `/`-separated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Listing(BTreeMap<String, Entry>);

/// One entry's stats: whatever a write, a rename, a `touch`, a `chmod` or a
/// replacement changes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    /// `S_IFMT | permissions`: a file, a directory, a link, …
    mode: u32,
    size: u64,
    device: u64,
    inode: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Entry {
    fn of(metadata: &std::fs::Metadata) -> Entry {
        Entry {
            mode: metadata.mode(),
            size: metadata.size(),
            device: metadata.dev(),
            inode: metadata.ino(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
            changed: (metadata.ctime(), metadata.ctime_nsec()),
        }
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

impl Stamps {
    /// No stamps: every request sweeps (a one-shot `--no-daemon` service).
    pub fn none() -> Stamps {
        Stamps {
            keep: false,
            stamps: Vec::new(),
        }
    }

    /// Stamps kept across requests (the daemon's).
    pub fn kept() -> Stamps {
        Stamps {
            keep: true,
            stamps: Vec::new(),
        }
    }

    /// Makes `dir` hold exactly `bundle`, and stamps it.
    pub fn write(&mut self, dir: &Path, bundle: &Arc<ContextBundle>) -> Result<Written, RpcError> {
        if !self.keep {
            return sweep_and_write(dir, bundle);
        }
        let taken = SystemTime::now();
        let previous = self
            .stamps
            .iter()
            .position(|(stamped, _)| stamped == dir)
            .map(|at| self.stamps.remove(at).1);
        let Some((held, listing)) = previous.and_then(|stamp| stamp.vouch(dir)) else {
            let written = sweep_and_write(dir, bundle)?;
            self.stamp(dir, bundle, taken);
            return Ok(written);
        };
        if held.hash == bundle.hash {
            // Renewed with this listing, so racy files age out of the window.
            self.remember(
                dir,
                Stamp {
                    bundle: held,
                    listing,
                    taken,
                },
            );
            return Ok(Written {
                vouched: Vouched::ByStats,
                ..Written::default()
            });
        }
        let (written, touched) = apply_difference(dir, &held, bundle)?;
        // The listing just taken, with what this write touched stated again:
        // the difference's own paths and the directories they live in.
        let mut listing = listing;
        if listing.restat(dir, &touched).is_ok() {
            self.keep_if_shaped(dir, bundle, listing, taken);
        }
        Ok(written)
    }

    /// Lists `dir`, just swept, and stamps it.
    fn stamp(&mut self, dir: &Path, bundle: &Arc<ContextBundle>, taken: SystemTime) {
        if let Ok(listing) = list(dir) {
            self.keep_if_shaped(dir, bundle, listing, taken);
        }
    }

    /// Stamps `dir` when `listing` has exactly the bundle's shape (otherwise
    /// someone else is writing there too, and the next request sweeps).
    fn keep_if_shaped(
        &mut self,
        dir: &Path,
        bundle: &Arc<ContextBundle>,
        listing: Listing,
        taken: SystemTime,
    ) {
        if listing.has_shape_of(bundle) {
            let bundle = bundle.clone();
            self.remember(
                dir,
                Stamp {
                    bundle,
                    listing,
                    taken,
                },
            );
        }
    }

    fn remember(&mut self, dir: &Path, stamp: Stamp) {
        if self.stamps.len() >= MAX_STAMPS {
            self.stamps.remove(0);
        }
        self.stamps.push((dir.to_owned(), stamp));
    }
}

impl Stamp {
    /// The bundle `dir` still holds, with its present listing, when every
    /// entry's stats are the stamp's and every racy file holds its bytes.
    fn vouch(self, dir: &Path) -> Option<(Arc<ContextBundle>, Listing)> {
        let now = list(dir).ok()?;
        if now != self.listing {
            return None;
        }
        let texts = texts(&self.bundle);
        let intact = now
            .0
            .iter()
            .filter(|(_, entry)| entry.is_file() && entry.is_racy(self.taken))
            .all(|(path, _)| {
                texts
                    .get(path.as_str())
                    .is_some_and(|text| holds(&dir.join(path), text))
            });
        intact.then_some((self.bundle, now))
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

impl Listing {
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
            && self.0.iter().all(|(path, entry)| {
                (entry.is_file() && files.get(path.as_str()) == Some(&entry.size))
                    || (entry.is_dir() && dirs.contains(path.as_str()))
            })
    }

    /// States `paths` and every directory above them again: an entry that
    /// is gone leaves the listing.
    fn restat(&mut self, dir: &Path, paths: &[String]) -> std::io::Result<()> {
        let mut again = BTreeSet::new();
        for path in paths {
            let mut path = path.as_str();
            again.insert(path);
            while let Some((parent, _)) = path.rsplit_once('/') {
                again.insert(parent);
                path = parent;
            }
        }
        for path in again {
            match std::fs::symlink_metadata(dir.join(path)) {
                Ok(metadata) => {
                    self.0.insert(path.to_owned(), Entry::of(&metadata));
                }
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                    self.0.remove(path);
                }
                Err(error) => return Err(error),
            }
        }
        Ok(())
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
    fn walk(dir: &Path, prefix: &str, listing: &mut Listing) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let metadata = entry.metadata()?;
            let path = format!("{prefix}{}", entry.file_name().to_string_lossy());
            if metadata.is_dir() {
                walk(&entry.path(), &format!("{path}/"), listing)?;
            }
            listing.0.insert(path, Entry::of(&metadata));
        }
        Ok(())
    }
    if !std::fs::symlink_metadata(dir)?.is_dir() {
        return Err(std::io::Error::other("not a directory"));
    }
    let mut listing = Listing::default();
    walk(dir, "", &mut listing)?;
    Ok(listing)
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
) -> Result<(Written, Vec<String>), RpcError> {
    let mut touched = Vec::new();
    let before: HashMap<&str, &Arc<str>> = held
        .files
        .iter()
        .map(|file| (file.path.as_str(), &file.text))
        .collect();
    let mut written = Written {
        vouched: Vouched::ByStats,
        ..Written::default()
    };
    for file in &bundle.files {
        let same = before
            .get(file.path.as_str())
            .is_some_and(|text| Arc::ptr_eq(text, &file.text) || text[..] == file.text[..]);
        if !same {
            write_file(dir, &file.path, &file.text)?;
            written.files += 1;
            touched.push(file.path.clone());
        }
    }
    let kept: HashSet<&str> = bundle.files.iter().map(|f| f.path.as_str()).collect();
    for file in &held.files {
        if !kept.contains(file.path.as_str()) {
            let path = dir.join(&file.path);
            std::fs::remove_file(&path).map_err(|e| write_failed(&path, &e))?;
            written.removed += 1;
            touched.push(file.path.clone());
        }
    }
    // Directories no file of the new bundle lives in, deepest first.
    let needed = directories(&bundle.files);
    let mut gone: Vec<&str> = directories(&held.files)
        .difference(&needed)
        .copied()
        .collect();
    gone.sort_by_key(|d| std::cmp::Reverse(d.len()));
    for relative in gone {
        let path = dir.join(relative);
        std::fs::remove_dir(&path).map_err(|e| write_failed(&path, &e))?;
        written.removed += 1;
        touched.push(relative.to_owned());
    }
    Ok((written, touched))
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
            .map(|(path, entry)| {
                let bytes = if entry.is_file() {
                    std::fs::read(dir.join(&path)).expect("read")
                } else {
                    Vec::new()
                };
                let (seconds, nanos) = entry.changed;
                (path, (entry.inode, seconds, nanos, bytes))
            })
            .collect()
    }

    /// Lets the stamps' files look older than the racy window, as they are
    /// once a few seconds have passed, by moving the stamps' time forward.
    fn age(stamps: &mut Stamps) {
        for (_, stamp) in &mut stamps.stamps {
            stamp.taken = SystemTime::now() + 2 * RACY_WINDOW;
        }
    }

    /// As if a change had kept every stat: the stamp's listing is made the
    /// directory's present one.
    fn forge_listing(stamps: &mut Stamps, dir: &Path) {
        stamps.stamps[0].1.listing = list(dir).expect("lists");
    }

    const FILES: &[(&str, &str)] = &[
        ("bundle.json", "{}"),
        ("spec.md", "the spec"),
        ("callees/a.md", "# a"),
        ("examples/m/g.tr", "g"),
    ];

    #[test]
    fn an_unchanged_bundle_is_vouched_for_without_a_write() {
        let dir = temp_dir("unchanged").join("f");
        let mut stamps = Stamps::kept();
        let files = bundle(FILES);
        let first = stamps.write(&dir, &files).expect("writes");
        assert_eq!((first.files, first.vouched), (4, Vouched::Swept));
        let before = tree(&dir);
        // Within the window the racy files' bytes are compared: no write.
        let again = stamps.write(&dir, &files).expect("writes");
        assert_eq!((again.files, again.removed), (0, 0));
        assert_eq!(again.vouched, Vouched::ByStats);
        age(&mut stamps);
        let later = stamps.write(&dir, &files).expect("writes");
        assert_eq!(
            (later.files, later.removed, later.vouched),
            (0, 0, Vouched::ByStats)
        );
        assert_eq!(tree(&dir), before, "not a byte, inode or time moved");
    }

    /// The rule of design §9.10: within the window a stat cannot tell a
    /// same-size rewrite, so the bytes are compared; outside it the stats are
    /// trusted (a later write cannot keep the file's times).
    #[test]
    fn a_racy_file_is_compared_by_its_bytes() {
        let dir = temp_dir("racy").join("f");
        let files = bundle(FILES);
        let mut stamps = Stamps::kept();
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
        for (name, mut stamps) in [("kept", Stamps::kept()), ("none", Stamps::none())] {
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
        for (name, mut stamps) in [("kept", Stamps::kept()), ("none", Stamps::none())] {
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
            // Written: bundle.json and callees/b.md. Removed: examples/m/g.tr,
            // examples/m and examples — and, for the sweep, which cannot know
            // the old bundle.json is about to be rewritten, that file first.
            let (vouched, removed) = if name == "kept" {
                (Vouched::ByStats, 3)
            } else {
                (Vouched::Swept, 4)
            };
            assert_eq!(written.vouched, vouched, "{name}");
            assert_eq!((written.files, written.removed), (2, removed), "{name}");
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
            if name == "kept" {
                // The stamp's listing, restated only where the write went, is
                // what a full listing finds, so the next request trusts it.
                assert_eq!(stamps.stamps[0].1.listing, list(&dir).unwrap());
                let again = stamps.write(&dir, &next).expect("writes");
                assert_eq!((again.files, again.vouched), (0, Vouched::ByStats));
            }
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
        Stamps::kept().write(&dir, &bundle(FILES)).expect("writes");
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

    #[test]
    fn racy_means_changed_within_the_window_of_the_stamp() {
        let at = |seconds: i64| Entry {
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
