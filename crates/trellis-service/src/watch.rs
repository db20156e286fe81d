//! The daemon's change feed: an inotify watch on every directory of the root, so a
//! request re-stats and re-hashes only the files the kernel reported instead of
//! every file (design §9.6). The kernel queues an event inside the write itself,
//! so any edit that finished before a client connected is in the queue when the
//! daemon drains it. A directory created, deleted or moved names its subtree: the
//! watch re-walks that subtree alone (adding watches to what is there now) and
//! the loader re-reads what it holds and forgets what it held, so adding or
//! removing a module costs that module's files, not the root's. Whatever the
//! watch cannot vouch for — a queue overflow, the root itself deleted or moved, a
//! subtree that cannot be read, a platform without inotify — falls back to the
//! full stat walk.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use std::sync::{Mutex, PoisonError};

use rustc_hash::FxHashMap;

use crate::walk::{
    RootFiles, loaded_file, python_file, skipped_dir, walk_stamped_watching, walk_tree,
};

/// What changed since the last drain.
#[derive(Debug, PartialEq, Eq)]
pub enum Dirty {
    /// Root-relative paths that may have changed (possibly none): input files,
    /// and directories (`m/`, ending in `/`) whose whole subtree may have come,
    /// gone or moved.
    Paths(BTreeSet<String>),
    /// The watch cannot say; stat every file.
    Everything,
}

pub struct RootWatch {
    root: PathBuf,
    inotify: File,
    /// Watch descriptor → the directory's root-relative prefix (`""`, `"csvstats/"`).
    dirs: FxHashMap<i32, String>,
    /// The watched directories that are or lie under a reference directory
    /// (crate::walk): every file written there is an input.
    reference: rustc_hash::FxHashSet<String>,
    /// Set when renewing the watches failed: until a renewal succeeds, every drain
    /// says `Everything` rather than trusting a partial watch.
    incomplete: bool,
    /// Where events are read into; kept, since every request drains the queue.
    buffer: Vec<u8>,
    /// What the queue named since the last take.
    pending: Pending,
    /// Input files written to and not closed since: saves under way.
    writing: BTreeSet<String>,
}

/// Whether the writes the feed reported are finished ([`RootWatch::settled`]).
#[derive(Debug, PartialEq, Eq)]
pub enum Settled {
    /// Nothing changed since the last take.
    Quiet,
    /// Every file written since was closed again.
    Written,
    /// A file is still open for writing, as far as the feed can tell.
    Writing,
}

#[derive(Default)]
struct Pending {
    paths: BTreeSet<String>,
    trees: BTreeSet<String>,
    everything: bool,
    /// A file came, went or was renamed into place (not a save in place).
    arrivals: bool,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.paths.is_empty() && self.trees.is_empty() && !self.everything
    }
}

impl RootWatch {
    /// The watch alone, its walk dropped (the tests).
    #[cfg(test)]
    fn new(root: &Path) -> io::Result<RootWatch> {
        Self::new_stamped(root).map(|(watch, _)| watch)
    }

    /// Watches every directory the loader reads, by a stamped walk handed
    /// back for the loader's first walk ([`crate::loader::RootLoader::prime`]):
    /// each directory is watched just before it is listed, so one walk both
    /// watches the root and stamps its files, and a change after a listing is
    /// in the feed (design §7.16). Fails where inotify is missing or the
    /// user's watch limit is reached; the caller then stats every file.
    pub fn new_stamped(root: &Path) -> io::Result<(RootWatch, RootFiles)> {
        let inotify = sys::init()?;
        let added = Mutex::new((Vec::new(), None));
        let walked = walk_stamped_watching(root, &|prefix, dir| {
            let watched = sys::add_watch(&inotify, dir);
            let mut added = added.lock().unwrap_or_else(PoisonError::into_inner);
            match watched {
                Ok(descriptor) => added.0.push((descriptor, prefix.to_owned())),
                Err(error) => added.1 = Some(error),
            }
        });
        let (dirs, failed) = added.into_inner().unwrap_or_else(PoisonError::into_inner);
        if let Some(error) = failed {
            return Err(error);
        }
        if !walked.complete {
            return Err(io::Error::other("a directory of the root cannot be read"));
        }
        let watch = RootWatch {
            root: root.to_owned(),
            inotify,
            dirs: dirs.into_iter().collect(),
            reference: walked.reference_dirs.iter().cloned().collect(),
            incomplete: false,
            buffer: vec![0; 64 * 1024],
            pending: Pending::default(),
            writing: BTreeSet::new(),
        };
        Ok((watch, walked))
    }

    /// Adds a watch to every directory the walker walks under `prefix` (`""`:
    /// the whole root; an existing watch is kept: the kernel returns the same
    /// descriptor). A directory the walk could not read makes the watch
    /// incomplete, like a failed watch.
    fn watch_tree(&mut self, prefix: &str) -> io::Result<()> {
        let walked = walk_tree(&self.root, prefix);
        self.reference.retain(|dir| !dir.starts_with(prefix));
        self.reference.extend(walked.reference_dirs);
        for (prefix, dir) in walked.dirs {
            let descriptor = sys::add_watch(&self.inotify, &dir)?;
            self.dirs.insert(descriptor, prefix);
        }
        if !walked.complete {
            return Err(io::Error::other("a directory of the root cannot be read"));
        }
        Ok(())
    }

    /// A handle on the feed's queue that polls readable while events wait,
    /// for a thread that acts when the root changes (design §7.10); reading
    /// stays with [`RootWatch::settled`] and [`RootWatch::take`].
    pub fn queue(&self) -> io::Result<File> {
        self.inotify.try_clone()
    }

    /// Drains the queue into what waits for the next [`RootWatch::take`], and
    /// says whether the writes it names are finished: an input file opened
    /// and written is only finished once it is closed (a save in place
    /// truncates, writes, then closes; one by rename arrives whole).
    pub fn settled(&mut self) -> Settled {
        self.drain();
        if self.pending.is_empty() {
            Settled::Quiet
        } else if self.writing.is_empty() {
            Settled::Written
        } else {
            Settled::Writing
        }
    }

    /// Whether what the feed reported since the last take may be the first
    /// half of a save that writes several files (design §7.10): a file that
    /// came, went or was renamed into place, a directory, a definition's spec
    /// (saved with its `.soil`) or a lock (written by the batch). A save in
    /// place of any other file that was already there — a body, a module's
    /// or the project's decisions, `soil.toml` — is a change of its own.
    pub fn may_continue(&mut self) -> bool {
        self.drain();
        let pending = &self.pending;
        pending.everything
            || pending.arrivals
            || !pending.trees.is_empty()
            || (pending.paths.iter()).any(|path| written_with_others(path))
    }

    /// What changed since the last take, draining the queue without blocking.
    pub fn take(&mut self) -> Dirty {
        self.drain();
        let Pending {
            mut paths,
            trees,
            everything,
            arrivals: _,
        } = std::mem::take(&mut self.pending);
        if !everything && !self.incomplete {
            match self.rewatch(&trees) {
                Ok(()) => {
                    // A subtree named stands for every path under it.
                    let covered = |path: &String| {
                        trees
                            .iter()
                            .any(|tree| path != tree && path.starts_with(tree.as_str()))
                    };
                    paths.extend(trees.iter().cloned());
                    paths.retain(|path| !covered(path));
                    return Dirty::Paths(paths);
                }
                Err(_) => self.incomplete = true,
            }
        }
        // New directories need watches.
        self.incomplete = self.watch_tree("").is_err();
        Dirty::Everything
    }

    /// Reads every event queued into `pending`, without blocking.
    fn drain(&mut self) {
        let mut buffer = std::mem::take(&mut self.buffer);
        loop {
            let read = match self.inotify.read(&mut buffer) {
                Ok(0) => break,
                Ok(read) => read,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => break,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.pending.everything = true;
                    break;
                }
            };
            for event in sys::events(&buffer[..read]) {
                match self.classify(&event) {
                    Some(Named::Everything) => self.pending.everything = true,
                    Some(Named::File(path)) => {
                        self.pending.arrivals |= sys::comes_or_goes(event.mask);
                        if sys::opens_a_write(event.mask) {
                            self.writing.insert(path.clone());
                        } else if sys::ends_a_write(event.mask) {
                            self.writing.remove(&path);
                        }
                        self.pending.paths.insert(path);
                    }
                    Some(Named::Tree(prefix)) => {
                        self.pending.trees.insert(prefix);
                    }
                    None => {}
                }
            }
        }
        self.buffer = buffer;
    }

    /// What one event names. The root's own watch going names everything; a
    /// watch the feed dropped itself (see [`RootWatch::rewatch`]) names nothing.
    fn classify(&mut self, event: &sys::Event<'_>) -> Option<Named> {
        if sys::overflowed(event.mask) {
            return Some(Named::Everything);
        }
        let prefix = self.dirs.get(&event.descriptor)?.clone();
        if sys::watch_removed(event.mask) {
            self.dirs.remove(&event.descriptor);
        }
        if sys::watched_directory_went(event.mask) {
            return Some(match prefix.is_empty() {
                true => Named::Everything,
                false => Named::Tree(prefix),
            });
        }
        // A name that is not UTF-8 is no input, but the walk reports one that
        // ends like an input's or lies under a reference directory: its
        // directory is walked again, so the report comes and goes with it.
        let Ok(name) = std::str::from_utf8(event.name) else {
            let reported = loaded_file(&String::from_utf8_lossy(event.name))
                || self.reference.contains(&prefix);
            return reported.then(|| Named::directory(prefix));
        };
        // A directory by an input's name is a file to report, as the walk does.
        if sys::names_a_directory(event.mask) && !loaded_file(name) {
            return (!skipped_dir(name)).then(|| Named::Tree(format!("{prefix}{name}/")));
        }
        // A `.py` coming or going may make its directory a reference directory
        // or stop it being one: what the walk loads there changes with it.
        if python_file(name) && sys::comes_or_goes(event.mask) {
            return Some(Named::directory(prefix));
        }
        (loaded_file(name) || self.reference.contains(&prefix))
            .then(|| Named::File(format!("{prefix}{name}")))
    }

    /// Renews the watches of each subtree in `trees`: every watch at or under it
    /// is dropped (a moved directory's watch would keep its old prefix) and what
    /// is there now is watched afresh. The kernel's notice that a dropped watch
    /// ended arrives later, for a descriptor no longer known, and names nothing.
    fn rewatch(&mut self, trees: &BTreeSet<String>) -> io::Result<()> {
        if trees.is_empty() {
            return Ok(());
        }
        let inotify = &self.inotify;
        self.dirs.retain(|&descriptor, prefix| {
            let under = trees.iter().any(|tree| prefix.starts_with(tree.as_str()));
            if under {
                sys::remove_watch(inotify, descriptor);
            }
            !under
        });
        for tree in trees {
            // A tree inside another is walked with it.
            if !trees
                .iter()
                .any(|outer| outer != tree && tree.starts_with(outer.as_str()))
            {
                self.watch_tree(tree)?;
            }
        }
        Ok(())
    }
}

/// Whether a save of `path` is usually one of several files written
/// together: a definition's spec beside its `.soil`, a lock beside others.
fn written_with_others(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".lock") || (name.ends_with(".tr") && !name.starts_with('_'))
}

/// What one event names.
enum Named {
    /// An input file that may have changed.
    File(String),
    /// A directory (`m/`) whose subtree may have come, gone or moved.
    Tree(String),
    /// Something only a full walk can account for.
    Everything,
}

impl Named {
    /// The directory at `prefix` walked again: the whole root's walk when
    /// it is the root.
    fn directory(prefix: String) -> Named {
        match prefix.is_empty() {
            true => Named::Everything,
            false => Named::Tree(prefix),
        }
    }
}

/// The module's only `unsafe` code: four libc calls whose results are checked.
/// Public for the daemon's loop, which waits on the feed's queue.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub mod sys {
    use std::ffi::CString;
    use std::fs::File;
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    const EVENTS: u32 = libc::IN_MODIFY
        | libc::IN_CLOSE_WRITE
        | libc::IN_ATTRIB
        | libc::IN_CREATE
        | libc::IN_DELETE
        | libc::IN_MOVED_FROM
        | libc::IN_MOVED_TO
        | libc::IN_DELETE_SELF
        | libc::IN_MOVE_SELF
        | libc::IN_ONLYDIR;

    /// A watched directory itself was deleted or moved away (its watch reports
    /// it, and the kernel then drops a deleted one's watch).
    pub fn watched_directory_went(mask: u32) -> bool {
        mask & (libc::IN_DELETE_SELF | libc::IN_MOVE_SELF | libc::IN_IGNORED) != 0
    }

    /// The event is about a directory inside the watched one: created, deleted,
    /// moved in or out, or its attributes changed.
    pub fn names_a_directory(mask: u32) -> bool {
        mask & libc::IN_ISDIR != 0
    }

    /// The kernel dropped the watch (its directory is gone).
    pub fn watch_removed(mask: u32) -> bool {
        mask & libc::IN_IGNORED != 0
    }

    /// A file was created or written: a save may be under way.
    pub fn opens_a_write(mask: u32) -> bool {
        mask & (libc::IN_CREATE | libc::IN_MODIFY) != 0
    }

    /// A file was closed after writing, or arrived or left whole.
    pub fn ends_a_write(mask: u32) -> bool {
        mask & (libc::IN_CLOSE_WRITE | libc::IN_MOVED_TO | libc::IN_MOVED_FROM | libc::IN_DELETE)
            != 0
    }

    /// A file was created, deleted, or renamed in or out: not a save in place.
    pub fn comes_or_goes(mask: u32) -> bool {
        mask & (libc::IN_CREATE | libc::IN_DELETE | libc::IN_MOVED_TO | libc::IN_MOVED_FROM) != 0
    }

    /// The kernel's queue overflowed: events were lost, for any watch.
    pub fn overflowed(mask: u32) -> bool {
        mask & libc::IN_Q_OVERFLOW != 0
    }

    /// Waits until `queue` has events or `timeout` passes (`None`: for as
    /// long as it takes); `true` when it has events.
    pub fn wait_for_events(queue: &File, timeout: Option<std::time::Duration>) -> bool {
        let mut poll = libc::pollfd {
            fd: queue.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let timeout = timeout.map_or(-1, |timeout| {
            i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX)
        });
        // SAFETY: `poll` is one valid pollfd that outlives the call.
        let ready = unsafe { libc::poll(&raw mut poll, 1, timeout) };
        ready > 0 && poll.revents & libc::POLLIN != 0
    }

    pub fn init() -> io::Result<File> {
        // SAFETY: no pointers; the result is checked before use.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor this process owns and nothing else holds.
        Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn add_watch(inotify: &File, dir: &Path) -> io::Result<i32> {
        let path = CString::new(dir.as_os_str().as_bytes())?;
        // SAFETY: `path` is a valid NUL-terminated string that outlives the call.
        let descriptor =
            unsafe { libc::inotify_add_watch(inotify.as_raw_fd(), path.as_ptr(), EVENTS) };
        if descriptor < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(descriptor)
    }

    /// Ends a watch; a descriptor the kernel already dropped is no error worth
    /// reporting (the caller forgets it either way).
    pub fn remove_watch(inotify: &File, descriptor: i32) {
        // SAFETY: no pointers; a stale descriptor only makes the call fail.
        unsafe { libc::inotify_rm_watch(inotify.as_raw_fd(), descriptor) };
    }

    /// One `struct inotify_event`, read field by field from the byte buffer.
    pub struct Event<'a> {
        pub descriptor: i32,
        pub mask: u32,
        /// The file name within the watched directory, NUL padding removed.
        pub name: &'a [u8],
    }

    /// The events of one `read`: a 16-byte header (wd, mask, cookie, len) and
    /// `len` bytes of NUL-padded name each.
    pub fn events(mut bytes: &[u8]) -> impl Iterator<Item = Event<'_>> {
        std::iter::from_fn(move || {
            let word = |at: usize| -> Option<[u8; 4]> { bytes.get(at..at + 4)?.try_into().ok() };
            let descriptor = i32::from_ne_bytes(word(0)?);
            let mask = u32::from_ne_bytes(word(4)?);
            let len = u32::from_ne_bytes(word(12)?) as usize;
            let name = bytes.get(16..16 + len)?;
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            let event = Event {
                descriptor,
                mask,
                name: &name[..end],
            };
            bytes = &bytes[16 + len..];
            Some(event)
        })
    }
}

/// Without inotify there is no feed: the service stats every file.
#[cfg(not(target_os = "linux"))]
pub mod sys {
    use std::fs::File;
    use std::io;
    use std::path::Path;

    pub struct Event<'a> {
        pub descriptor: i32,
        pub mask: u32,
        pub name: &'a [u8],
    }

    pub fn watched_directory_went(_mask: u32) -> bool {
        false
    }

    pub fn names_a_directory(_mask: u32) -> bool {
        false
    }

    pub fn watch_removed(_mask: u32) -> bool {
        false
    }

    pub fn overflowed(_mask: u32) -> bool {
        true
    }

    pub fn opens_a_write(_mask: u32) -> bool {
        false
    }

    pub fn comes_or_goes(_mask: u32) -> bool {
        false
    }

    pub fn ends_a_write(_mask: u32) -> bool {
        false
    }

    pub fn wait_for_events(_queue: &File, timeout: Option<std::time::Duration>) -> bool {
        std::thread::sleep(timeout.unwrap_or(std::time::Duration::from_secs(3600)));
        false
    }

    pub fn init() -> io::Result<File> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    pub fn add_watch(_inotify: &File, _dir: &Path) -> io::Result<i32> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    pub fn remove_watch(_inotify: &File, _descriptor: i32) {}

    pub fn events(_bytes: &[u8]) -> impl Iterator<Item = Event<'_>> {
        std::iter::empty()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn temp_root(name: &str) -> PathBuf {
        let root =
            std::env::temp_dir().join(format!("trellis-watch-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("m/.hidden")).expect("create root");
        std::fs::write(root.join("m/a.tr"), "a").expect("write");
        root
    }

    fn paths(names: &[&str]) -> Dirty {
        Dirty::Paths(names.iter().map(|name| (*name).to_owned()).collect())
    }

    #[test]
    fn names_the_input_files_written_since_the_last_drain() {
        let root = temp_root("writes");
        let mut watch = RootWatch::new(&root).expect("inotify");
        assert_eq!(watch.take(), paths(&[]));
        std::fs::write(root.join("m/a.tr"), "edited").expect("write");
        std::fs::write(root.join("m/notes.txt"), "not an input").expect("write");
        std::fs::write(root.join("m/.hidden/b.tr"), "not watched").expect("write");
        std::fs::write(root.join("soil.toml"), "").expect("write");
        assert_eq!(watch.take(), paths(&["m/a.tr", "soil.toml"]));
        assert_eq!(watch.take(), paths(&[]), "a drain empties the queue");
        // An editor's atomic save: write a temporary file, rename it over the spec.
        std::fs::write(root.join("m/a.tr.tmp"), "saved").expect("write");
        std::fs::rename(root.join("m/a.tr.tmp"), root.join("m/a.tr")).expect("rename");
        std::fs::remove_file(root.join("soil.toml")).expect("remove");
        assert_eq!(watch.take(), paths(&["m/a.tr", "soil.toml"]));
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    /// The stamped start lists and stamps what a stamped walk does, and
    /// whatever is written after it is in the feed: a loader primed with its
    /// walk misses nothing (design §7.16).
    #[test]
    fn the_stamped_start_walks_once_and_misses_nothing_after_it() {
        let root = temp_root("stamped");
        std::fs::create_dir_all(root.join("n/deep")).expect("mkdir");
        std::fs::write(root.join("n/deep/b.soil"), "b").expect("write");
        let (mut watch, walked) = RootWatch::new_stamped(&root).expect("inotify");
        let mut files: Vec<&str> = walked.files.iter().map(String::as_str).collect();
        files.sort_unstable();
        assert_eq!(files, ["m/a.tr", "n/deep/b.soil"]);
        assert!(walked.stamps.files.iter().all(Option::is_some));
        let mut watched: Vec<&str> = watch.dirs.values().map(String::as_str).collect();
        watched.sort_unstable();
        assert_eq!(watched, ["", "m/", "n/", "n/deep/"]);
        std::fs::write(root.join("n/deep/b.soil"), "edited").expect("write");
        std::fs::write(root.join("m/c.tr"), "new").expect("write");
        assert_eq!(watch.take(), paths(&["m/c.tr", "n/deep/b.soil"]));
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    /// Under a reference directory (one holding a `.py`) every file is an
    /// input, and a `.py` coming or going names its directory's subtree.
    #[test]
    fn names_every_file_written_under_a_reference_directory() {
        let root = temp_root("reference");
        std::fs::create_dir_all(root.join("ref/tables")).expect("mkdir");
        std::fs::write(root.join("ref/oracle.py"), "").expect("write");
        let mut watch = RootWatch::new(&root).expect("inotify");
        assert_eq!(watch.take(), paths(&[]));
        std::fs::write(root.join("ref/data.csv"), "a").expect("write");
        std::fs::write(root.join("ref/tables/t.bin"), [0xff]).expect("write");
        std::fs::write(root.join("m/notes.txt"), "not a reference directory").expect("write");
        assert_eq!(watch.take(), paths(&["ref/data.csv", "ref/tables/t.bin"]));
        std::fs::write(root.join("m/helper.py"), "").expect("write");
        assert_eq!(
            watch.take(),
            paths(&["m/"]),
            "m/ becomes a reference directory"
        );
        std::fs::write(root.join("m/notes.txt"), "now an input").expect("write");
        assert_eq!(watch.take(), paths(&["m/notes.txt"]));
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    /// A name that is not UTF-8 is no input, but the walk reports one by an
    /// input's name: it coming or going names its directory, so the report
    /// comes and goes with it; any other such name names nothing.
    #[test]
    fn a_name_that_is_not_utf8_names_its_directory_when_the_walk_reports_it() {
        use std::os::unix::ffi::OsStrExt;
        let root = temp_root("not-utf8");
        let named = |dir: &str, name: &[u8]| root.join(dir).join(std::ffi::OsStr::from_bytes(name));
        let mut watch = RootWatch::new(&root).expect("inotify");
        std::fs::write(named("m", b"caf\xe9.tr"), "x").expect("write");
        assert_eq!(watch.take(), paths(&["m/"]));
        std::fs::write(named("m", b"caf\xe9.txt"), "x").expect("write");
        assert_eq!(
            watch.take(),
            paths(&[]),
            "no input's name: nothing to report"
        );
        std::fs::remove_file(named("m", b"caf\xe9.tr")).expect("remove");
        assert_eq!(watch.take(), paths(&["m/"]));
        std::fs::write(named("", b"caf\xe9.soil"), "x").expect("write");
        assert_eq!(
            watch.take(),
            Dirty::Everything,
            "the root's own: a whole walk"
        );
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    /// A save in place is finished once the file is closed; a new file
    /// once it is closed too; one renamed into place arrives whole. What
    /// `settled` drained waits for the next take.
    #[test]
    fn says_whether_the_writes_it_names_are_finished() {
        use std::io::Write;
        let root = temp_root("settled");
        let mut watch = RootWatch::new(&root).expect("inotify");
        assert_eq!(watch.settled(), Settled::Quiet);
        let mut saving = std::fs::File::create(root.join("m/a.tr")).expect("open");
        saving.write_all(b"half").expect("write");
        assert_eq!(watch.settled(), Settled::Writing);
        saving.write_all(b" and the rest").expect("write");
        drop(saving);
        assert_eq!(watch.settled(), Settled::Written);
        let mut created = std::fs::File::create(root.join("m/b.tr")).expect("create");
        assert_eq!(watch.settled(), Settled::Writing, "created, not yet closed");
        created.write_all(b"b").expect("write");
        drop(created);
        std::fs::write(root.join("m/c.tr.tmp"), "c").expect("write");
        std::fs::rename(root.join("m/c.tr.tmp"), root.join("m/c.tr")).expect("rename");
        assert_eq!(watch.settled(), Settled::Written);
        assert_eq!(watch.take(), paths(&["m/a.tr", "m/b.tr", "m/c.tr"]));
        assert_eq!(watch.settled(), Settled::Quiet);
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    /// Saves in place of bodies, decisions and `soil.toml` that were already
    /// there are applied without a pause: a definition's spec, a lock, a file
    /// that comes, goes or is renamed into place may be half of a save that
    /// writes more, and a take starts the next change afresh.
    #[test]
    fn says_whether_a_change_may_be_half_of_a_larger_save() {
        let root = temp_root("pairs");
        std::fs::write(root.join("m/a.soil"), "a x = x").expect("write");
        std::fs::write(root.join("m/b.soil"), "b x = x").expect("write");
        let mut watch = RootWatch::new(&root).expect("inotify");
        assert!(!watch.may_continue(), "nothing happened");
        std::fs::write(root.join("m/a.soil"), "a x = x + 1").expect("write");
        std::fs::write(root.join("m/b.soil"), "b x = x + 1").expect("write");
        assert!(!watch.may_continue(), "bodies saved in place");
        watch.take();
        std::fs::write(root.join("m/_module.tr"), "# m\n").expect("write");
        std::fs::write(root.join("soil.toml"), "").expect("write");
        watch.take();
        std::fs::write(root.join("m/_module.tr"), "# m, decided\n").expect("write");
        std::fs::write(root.join("soil.toml"), "# tags\n").expect("write");
        assert!(
            !watch.may_continue(),
            "decisions and soil.toml saved in place"
        );
        watch.take();
        type Change = fn(&Path);
        let continuing: [(&str, Change); 5] = [
            ("a spec", |root| {
                std::fs::write(root.join("m/a.tr"), "b").expect("write")
            }),
            ("a lock", |root| {
                std::fs::write(root.join("m/a.lock"), "{}").expect("write")
            }),
            ("a new body", |root| {
                std::fs::write(root.join("m/c.soil"), "c x = x").expect("write")
            }),
            ("a body removed", |root| {
                std::fs::remove_file(root.join("m/c.soil")).expect("remove")
            }),
            ("a body renamed into place", |root| {
                std::fs::write(root.join("m/a.soil.tmp"), "a x = 2").expect("write");
                std::fs::rename(root.join("m/a.soil.tmp"), root.join("m/a.soil")).expect("rename");
            }),
        ];
        for (what, change) in continuing {
            change(&root);
            assert!(watch.may_continue(), "{what}");
            watch.take();
            assert!(!watch.may_continue(), "{what}: taken");
        }
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    #[test]
    fn a_directory_that_comes_goes_or_moves_names_its_subtree_alone() {
        let root = temp_root("dirs");
        let mut watch = RootWatch::new(&root).expect("inotify");
        std::fs::create_dir_all(root.join("n/deep")).expect("mkdir");
        std::fs::write(root.join("n/deep/b.soil"), "b").expect("write");
        assert_eq!(watch.take(), paths(&["n/"]));
        // The new subtree is watched, its inner directory too.
        std::fs::write(root.join("n/deep/c.soil"), "c").expect("write");
        assert_eq!(watch.take(), paths(&["n/deep/c.soil"]));
        // Moved within the root: both ends are named, and the watches follow.
        std::fs::rename(root.join("n"), root.join("k")).expect("rename");
        assert_eq!(watch.take(), paths(&["k/", "n/"]));
        std::fs::write(root.join("k/deep/d.soil"), "d").expect("write");
        assert_eq!(watch.take(), paths(&["k/deep/d.soil"]));
        std::fs::remove_dir_all(root.join("k")).expect("rmdir");
        assert_eq!(watch.take(), paths(&["k/"]));
        assert_eq!(watch.take(), paths(&[]), "the dropped watches name nothing");
        // Hidden and build directories stay unwatched; a directory by an
        // input's name is reported as that file.
        std::fs::create_dir(root.join(".git")).expect("mkdir");
        std::fs::create_dir(root.join("m/x.lock")).expect("mkdir");
        assert_eq!(watch.take(), paths(&["m/x.lock"]));
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    #[test]
    fn a_watch_that_cannot_be_renewed_keeps_asking_for_walks() {
        let root = temp_root("gone");
        let mut watch = RootWatch::new(&root).expect("inotify");
        std::fs::remove_dir_all(&root).expect("remove the root");
        assert_eq!(watch.take(), Dirty::Everything);
        assert_eq!(
            watch.take(),
            Dirty::Everything,
            "no events, but no watch either"
        );
        std::fs::create_dir_all(root.join("m")).expect("recreate");
        assert_eq!(watch.take(), Dirty::Everything, "the renewal itself");
        assert_eq!(watch.take(), paths(&[]));
        std::fs::write(root.join("m/a.tr"), "back").expect("write");
        assert_eq!(watch.take(), paths(&["m/a.tr"]));
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    #[test]
    fn events_parse_from_the_kernel_layout() {
        let mut bytes = Vec::new();
        for (descriptor, mask, name) in [(1i32, 2u32, &b"a.tr"[..]), (7, 8, b"")] {
            let padded = if name.is_empty() { 0 } else { 16 };
            bytes.extend(descriptor.to_ne_bytes());
            bytes.extend(mask.to_ne_bytes());
            bytes.extend(0u32.to_ne_bytes());
            bytes.extend((padded as u32).to_ne_bytes());
            bytes.extend(name);
            bytes.extend(std::iter::repeat_n(0, padded - name.len()));
        }
        bytes.extend([1, 2, 3]); // a truncated header ends the batch, no panic
        let parsed: Vec<(i32, u32, Vec<u8>)> = sys::events(&bytes)
            .map(|event| (event.descriptor, event.mask, event.name.to_vec()))
            .collect();
        assert_eq!(parsed, vec![(1, 2, b"a.tr".to_vec()), (7, 8, Vec::new())]);
    }
}
