//! The one walker of a root's files, used by the loader, the change feed's
//! watches and the `soil.lock` rewrite, so they cannot disagree about what a
//! root holds (design §9.7).
//!
//! The rule: the walk never follows a symbolic link. A symlinked directory is
//! not entered (so a link to `.` or to `/` can neither loop nor leave the root);
//! it is no input and is skipped. An input file — a name ending in `.tr`,
//! `.soil`, `.lock`, `.py` or `.question.json`, or `soil.toml` — must be a
//! regular file: a
//! directory, FIFO, socket, device or symlink by such a name is reported
//! (`root-unreadable`, with the path) and never opened, so a FIFO cannot block a
//! command and a directory cannot pass for a missing lock. Hidden directories
//! (`.git`, `.trellis`) and build output (`target`, `__pycache__`) are skipped.
//!
//! **Reference directories.** A directory holding a `.py` file is a reference
//! directory: a Python oracle run from there may read anything beside it or
//! below it (a data file, a table), so every regular file under it is an input
//! too — *reference data*, keyed by the suites whose references live there
//! (lock-schema §5.4). Reference data enters the database as its digest, never
//! as its bytes: a data file may be binary or huge, and it is hashed in 64 KiB
//! chunks, once per change of its size or mtime. Under a reference directory a
//! symbolic link, FIFO or device is reported like one by an input's name: the
//! oracle could read through it, and nothing keyed would say so. Hidden files
//! (an editor's swap file) are no part of the root there either.

use std::fs::FileType;
use std::path::{Path, PathBuf};

use crate::codes::HostCode;
use trellis_db::CONFIG_FILE;
use trellis_diag::Diagnostic;

/// Directories never walked: hidden ones (`.git`, `.trellis`) and build output.
pub(crate) fn skipped_dir(name: &str) -> bool {
    name.starts_with('.') || name == "target" || name == "__pycache__"
}

/// Names of the files a load reads: specs, Soil, locks, the configuration and
/// references, and the open questions `status` shows (which the loader keeps
/// beside the database, never in it: see [`question_file`]). (The atomic
/// writer's temp files end in `.trellis-tmp`, so they never are.)
pub(crate) fn loaded_file(name: &str) -> bool {
    name == CONFIG_FILE
        || [".tr", ".soil", ".lock", ".py", QUESTION_SUFFIX]
            .iter()
            .any(|ext| name.ends_with(ext))
}

/// The root's manifest: the merge of the locks the database holds, written by
/// the commands that write locks (design §9.7). It is walked by the rule like any
/// input name (a FIFO by this name is reported, never opened) but its bytes are
/// an output, never loaded: at 20,000 definitions it is 37 MB that nothing reads.
pub(crate) const MANIFEST_FILE: &str = "soil.lock";

/// How an open question's file ends: `<module>/<name>.question.json` (trellis-daemon §8).
pub(crate) const QUESTION_SUFFIX: &str = ".question.json";

/// Whether a root-relative path names an open question: read by the walk like an
/// input, but no input of the database or of any hash (design §9.8).
pub(crate) fn question_file(path: &str) -> bool {
    path.ends_with(QUESTION_SUFFIX)
}

/// Whether a directory holding a file by this name is a reference directory.
pub(crate) fn python_file(name: &str) -> bool {
    name.ends_with(".py")
}

/// What the walk makes of one directory entry, from its own (not followed) type.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// An input file to load.
    File,
    /// Any other regular file under a reference directory: loaded as its digest.
    Data,
    /// A directory to walk.
    Dir,
    /// An input's name on something that is not a regular file: reported.
    NotAFile(&'static str),
    /// Anything else: not an input, skipped.
    Skipped,
}

/// Classifies `name` by its `lstat` type; `in_reference` says whether its
/// directory is (or lies under) a reference directory.
pub(crate) fn classify(name: &str, file_type: FileType, in_reference: bool) -> Entry {
    use std::os::unix::fs::FileTypeExt;
    // Hidden files (an editor's swap file) and the atomic writer's temp files
    // are no part of the root, here as anywhere.
    let data_name = in_reference && !name.starts_with('.') && !name.ends_with(".trellis-tmp");
    if data_name && !loaded_file(name) && file_type.is_file() {
        return Entry::Data;
    }
    if loaded_file(name) || (data_name && !file_type.is_dir()) {
        return match () {
            () if file_type.is_file() => Entry::File,
            () if file_type.is_dir() => Entry::NotAFile("a directory"),
            () if file_type.is_symlink() => Entry::NotAFile("a symbolic link"),
            () if file_type.is_fifo() => Entry::NotAFile("a FIFO"),
            () if file_type.is_socket() => Entry::NotAFile("a socket"),
            () => Entry::NotAFile("a device or other special file"),
        };
    }
    if file_type.is_dir() && !skipped_dir(name) {
        Entry::Dir
    } else {
        Entry::Skipped
    }
}

/// The problem reported for an input name that is not a regular file.
pub(crate) fn not_a_file(path: &str, what: &str) -> Diagnostic {
    unreadable(
        path,
        &format!(
            "it is {what}, not a regular file (trellis reads only regular files and follows no symbolic links)"
        ),
    )
}

/// A path that could not be loaded or walked.
pub(crate) fn unreadable(path: &str, reason: &str) -> Diagnostic {
    let shown = if path.is_empty() { "the root" } else { path };
    HostCode::RootUnreadable
        .diagnostic(format!("cannot load {shown}: {reason}"))
        .with_file(path)
}

/// One walk of a root.
#[derive(Debug, Default)]
pub struct RootFiles {
    /// Input files' root-relative paths, in walk order.
    pub files: Vec<String>,
    /// Reference data (the other regular files under reference directories),
    /// likewise.
    pub data: Vec<String>,
    /// With [`walk_stamped`], each input file's and then each data file's
    /// stamp, stat-ed beside its directory entry; empty otherwise.
    pub stamps: Stamps,
    /// Every walked directory as (root-relative prefix `""`, `"m/"`, absolute path).
    pub dirs: Vec<(String, PathBuf)>,
    /// The prefixes of the walked directories that are, or lie under, a
    /// reference directory.
    pub reference_dirs: Vec<String>,
    /// Directories that could not be read and input names that are not files.
    pub problems: Vec<Diagnostic>,
    /// Whether every directory could be read.
    pub complete: bool,
}

/// A file's (modification time, size), `None` when it could not be stat-ed.
pub type Stamp = Option<(Option<std::time::SystemTime>, u64)>;

/// The stamps of a stamped walk's files and data, in their order.
#[derive(Debug, Default)]
pub struct Stamps {
    pub files: Vec<Stamp>,
    pub data: Vec<Stamp>,
}

/// Walks `root` by the rule above.
pub fn walk(root: &Path) -> RootFiles {
    walk_tree(root, "")
}

/// [`walk`], stat-ing each file through its directory as it goes (the kernel
/// looks up one name instead of the whole path), the root's directories
/// shared by threads ([`crate::in_flight`]): a walk of 20,000 definitions is
/// 44,000 stats (design §7.16). A file that cannot be stat-ed has no stamp. The files
/// come in path order when no directory below the root holds both files and
/// directories.
pub fn walk_stamped(root: &Path) -> RootFiles {
    walk_stamped_watching(root, &|_, _| {})
}

/// [`walk_stamped`] without the stats: what a first load walks, which reads
/// every file and stats each one it opens anyway (design §7.15). No file has
/// a stamp; the order is [`walk_stamped`]'s.
pub fn walk_unstamped(root: &Path) -> RootFiles {
    walk_on_threads(root, false, &|_, _| {})
}

/// What [`walk_stamped_watching`] calls with each directory's root-relative
/// prefix and absolute path, just before it lists it.
pub type BeforeListing<'a> = &'a (dyn Fn(&str, &Path) + Sync);

/// [`walk_stamped`], calling `before_listing` on each directory before it is
/// listed: the change feed adds its watch there, so one walk both watches the
/// root and stamps its files, and whatever changes after a directory's
/// listing is in the feed (design §7.16).
pub fn walk_stamped_watching(root: &Path, before_listing: BeforeListing<'_>) -> RootFiles {
    walk_on_threads(root, true, before_listing)
}

/// The root's own directory listed here, the directories below it shared
/// by threads in runs ([`crate::in_flight`]), and put back in path order.
fn walk_on_threads(root: &Path, stamped: bool, before_listing: BeforeListing<'_>) -> RootFiles {
    let top = Walk {
        stamped,
        descend: false,
        above_is_reference: Some(false),
        before_listing,
    };
    let (top, below) = walk_tree_with(root, "", top);
    // A directory is a listing and, stamped, a stat per file: a few are
    // worth a thread's start.
    let walked = crate::in_flight::in_order(
        &below,
        4,
        crate::in_flight::WALK_THREADS,
        |(prefix, in_reference)| {
            let walk = Walk {
                stamped,
                descend: true,
                above_is_reference: Some(*in_reference),
                before_listing,
            };
            walk_tree_with(root, prefix, walk).0
        },
    );
    let mut out = RootFiles {
        dirs: top.dirs,
        reference_dirs: top.reference_dirs,
        problems: top.problems,
        complete: top.complete,
        ..RootFiles::default()
    };
    // Reserved once: grown part by part, the lists would be copied and their
    // pages touched anew at each doubling, on one thread while the other
    // cores idle (43,000 paths and stamps at 20,000 definitions).
    let total = |count: fn(&RootFiles) -> usize| walked.iter().map(count).sum::<usize>();
    out.files
        .reserve_exact(top.files.len() + total(|part| part.files.len()));
    out.data
        .reserve_exact(top.data.len() + total(|part| part.data.len()));
    out.stamps
        .files
        .reserve_exact(top.stamps.files.len() + total(|part| part.stamps.files.len()));
    out.stamps
        .data
        .reserve_exact(top.stamps.data.len() + total(|part| part.stamps.data.len()));
    // The root's own files go between the directories' parts where their
    // paths sort (`soil.toml` after `hub0/…`), so a root whose directories
    // hold files alone walks in path order and the fingerprint's sort finds
    // one run: ahead of the 66,000 stamps of 20,000 definitions, three were
    // 1.7–3 ms of sorting in every restart (design §7.16).
    let mut own_files = OwnEntries::of(top.files, top.stamps.files);
    let mut own_data = OwnEntries::of(top.data, top.stamps.data);
    for ((prefix, _), part) in below.iter().zip(walked) {
        own_files.move_before(Some(prefix), &mut out.files, &mut out.stamps.files);
        own_data.move_before(Some(prefix), &mut out.data, &mut out.stamps.data);
        out.files.extend(part.files);
        out.data.extend(part.data);
        out.stamps.files.extend(part.stamps.files);
        out.stamps.data.extend(part.stamps.data);
        out.dirs.extend(part.dirs);
        out.reference_dirs.extend(part.reference_dirs);
        out.problems.extend(part.problems);
        out.complete &= part.complete;
    }
    own_files.move_before(None, &mut out.files, &mut out.stamps.files);
    own_data.move_before(None, &mut out.data, &mut out.stamps.data);
    out
}

/// The files (or data) the root's own directory holds, in name order, with
/// their stamps when the walk stats.
struct OwnEntries {
    paths: std::iter::Peekable<std::vec::IntoIter<String>>,
    stamps: std::vec::IntoIter<Stamp>,
}

impl OwnEntries {
    fn of(paths: Vec<String>, stamps: Vec<Stamp>) -> Self {
        OwnEntries {
            paths: paths.into_iter().peekable(),
            stamps: stamps.into_iter(),
        }
    }

    /// Moves the entries that sort before the directory `until` (`m/`;
    /// every one left when `None`) onto `paths` and `stamps`. A root-level
    /// name and a directory's prefix compare as the paths under it do: the
    /// name holds no `/`, and is not the directory's own.
    fn move_before(
        &mut self,
        until: Option<&str>,
        paths: &mut Vec<String>,
        stamps: &mut Vec<Stamp>,
    ) {
        let before = |path: &String| until.is_none_or(|until| path.as_str() < until);
        while let Some(path) = self.paths.next_if(before) {
            paths.push(path);
            stamps.extend(self.stamps.next());
        }
    }
}

/// Walks the subtree of `root` at `prefix` (`""`, or a directory's
/// root-relative prefix ending in `/`, such as `m/`) by the rule above. A
/// subtree that is gone, or is no directory of its own (a link, a file), walks
/// as empty and complete: nothing of the root is there.
pub fn walk_tree(root: &Path, prefix: &str) -> RootFiles {
    let walk = Walk {
        stamped: false,
        descend: true,
        above_is_reference: None,
        before_listing: &|_, _| {},
    };
    walk_tree_with(root, prefix, walk).0
}

/// How [`walk_tree_with`] walks.
#[derive(Clone, Copy)]
struct Walk<'a> {
    /// Stat each file as it is listed.
    stamped: bool,
    /// Walk the directories found; when not, only the directory at the
    /// prefix is listed, and those found in it are handed back unwalked,
    /// each with whether it lies under a reference directory.
    descend: bool,
    /// Whether the prefix's parent is or lies under a reference directory,
    /// when the caller knows; found by reading up the path when not.
    above_is_reference: Option<bool>,
    /// Called on each directory before it is listed.
    before_listing: BeforeListing<'a>,
}

/// [`walk_tree`] as `walk` says.
fn walk_tree_with(root: &Path, prefix: &str, walk: Walk<'_>) -> (RootFiles, Vec<(String, bool)>) {
    let mut out = RootFiles {
        complete: true,
        ..RootFiles::default()
    };
    let mut below = Vec::new();
    let start = root.join(prefix);
    if !prefix.is_empty()
        && !std::fs::symlink_metadata(&start).is_ok_and(|metadata| metadata.is_dir())
    {
        return (out, below);
    }
    let start_in_reference = walk.above_is_reference.unwrap_or_else(|| {
        let above = prefix
            .strip_suffix('/')
            .and_then(|dir| dir.rsplit_once('/').map(|(parent, _)| format!("{parent}/")))
            .unwrap_or_default();
        !prefix.is_empty() && in_reference_dir(root, &above)
    });
    let stamp = |entry: &std::fs::DirEntry| -> Stamp {
        let metadata = entry.metadata().ok()?;
        Some((metadata.modified().ok(), metadata.len()))
    };
    let mut stack = vec![(prefix.to_owned(), start, start_in_reference)];
    while let Some((prefix, dir, above_is_reference)) = stack.pop() {
        (walk.before_listing)(&prefix, &dir);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(error) => {
                out.problems.push(unreadable(&prefix, &error.to_string()));
                out.complete = false;
                continue;
            }
        };
        out.dirs.push((prefix.clone(), dir));
        let mut named = Vec::new();
        for entry in entries.flatten() {
            match entry.file_name().into_string() {
                Ok(name) => named.push((name, entry)),
                Err(raw) => {
                    let lossy = raw.to_string_lossy().into_owned();
                    if loaded_file(&lossy) || above_is_reference {
                        out.problems.push(unreadable(
                            &format!("{prefix}{lossy}"),
                            "its name is not valid UTF-8",
                        ));
                    }
                }
            }
        }
        // In name order: the input paths of a root whose directories hold
        // files alone then come in path order, which the fingerprint's sort
        // confirms in one pass instead of sorting 66,000 stamps after the
        // walk, on one core (`answer_cache::fingerprint`).
        named.sort_unstable_by(|(one, _), (other, _)| one.cmp(other));
        let in_reference = above_is_reference || holds_python(&named);
        if in_reference {
            out.reference_dirs.push(prefix.clone());
        }
        let mut subdirs = Vec::new();
        for (name, entry) in named {
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let path = format!("{prefix}{name}");
            match classify(&name, file_type, in_reference) {
                Entry::File => {
                    if walk.stamped {
                        out.stamps.files.push(stamp(&entry));
                    }
                    out.files.push(path);
                }
                Entry::Data => {
                    if walk.stamped {
                        out.stamps.data.push(stamp(&entry));
                    }
                    out.data.push(path);
                }
                Entry::Dir if walk.descend => {
                    subdirs.push((format!("{path}/"), entry.path(), in_reference));
                }
                Entry::Dir => below.push((format!("{path}/"), in_reference)),
                Entry::NotAFile(what) => out.problems.push(not_a_file(&path, what)),
                Entry::Skipped => {}
            }
        }
        // Popped in path order (a name's `/` sorts after `-` and `.`).
        subdirs.sort_unstable_by(|(one, ..), (other, ..)| other.cmp(one));
        stack.extend(subdirs);
    }
    below.sort_unstable();
    (out, below)
}

/// Whether a directory's entries make it a reference directory: a regular
/// `.py` file among them.
fn holds_python(entries: &[(String, std::fs::DirEntry)]) -> bool {
    entries.iter().any(|(name, entry)| {
        python_file(name) && entry.file_type().is_ok_and(|file_type| file_type.is_file())
    })
}

/// Whether the directory at `prefix` (`""`, or ending in `/`) is or lies under
/// a reference directory: it or one of its ancestors holds a `.py` file. Reads
/// one directory per level, for a path the change feed names alone.
pub(crate) fn in_reference_dir(root: &Path, prefix: &str) -> bool {
    let mut prefix = prefix.to_owned();
    loop {
        let holds = std::fs::read_dir(root.join(&prefix)).is_ok_and(|entries| {
            entries.flatten().any(|entry| {
                entry.file_name().to_str().is_some_and(python_file)
                    && entry.file_type().is_ok_and(|file_type| file_type.is_file())
            })
        });
        if holds {
            return true;
        }
        let Some(dir) = prefix.strip_suffix('/') else {
            return false;
        };
        prefix = dir
            .rsplit_once('/')
            .map_or_else(String::new, |(parent, _)| format!("{parent}/"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_not_followed_and_non_files_with_input_names_are_reported() {
        let root = std::env::temp_dir().join(format!("trellis-walk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("m/x.lock")).expect("mkdir");
        std::fs::write(root.join("m/a.tr"), "a").expect("write");
        std::fs::write(root.join("m/.a.lock.1-0.trellis-tmp"), "temp").expect("write");
        std::os::unix::fs::symlink(".", root.join("m/loop")).expect("link");
        std::os::unix::fs::symlink("/", root.join("m/slash")).expect("link");
        std::os::unix::fs::symlink("a.tr", root.join("m/b.tr")).expect("link");
        let walked = walk(&root);
        let files: Vec<&str> = walked.files.iter().map(String::as_str).collect();
        assert_eq!(files, ["m/a.tr"]);
        let dirs: Vec<&str> = walked.dirs.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(dirs, ["", "m/"]);
        let mut problems: Vec<String> = walked
            .problems
            .iter()
            .map(|d| format!("{} {}", d.file.as_deref().unwrap_or(""), d.message))
            .collect();
        problems.sort();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("m/b.tr ") && problems[0].contains("symbolic link"));
        assert!(problems[1].starts_with("m/x.lock ") && problems[1].contains("a directory"));
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    /// Every regular file under a directory holding a `.py` is reference data;
    /// elsewhere only input names are walked. Hidden files are never data; a
    /// link there is reported, since the oracle could read through it.
    #[test]
    fn a_directory_holding_python_makes_every_file_under_it_an_input() {
        let root = std::env::temp_dir().join(format!("trellis-walk-ref-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("ref/tables/deep")).expect("mkdir");
        std::fs::create_dir_all(root.join("m")).expect("mkdir");
        std::fs::write(root.join("ref/oracle.py"), "x = 1").expect("write");
        std::fs::write(root.join("ref/data.csv"), "a,b").expect("write");
        std::fs::write(root.join("ref/.data.csv.swp"), "swap").expect("write");
        std::fs::write(root.join("ref/tables/deep/t.bin"), [0xff, 0]).expect("write");
        std::os::unix::fs::symlink("/etc/hostname", root.join("ref/outside")).expect("link");
        std::fs::write(root.join("m/a.tr"), "a").expect("write");
        std::fs::write(root.join("m/notes.txt"), "no reference here").expect("write");
        let walked = walk(&root);
        let mut files: Vec<&str> = walked.files.iter().map(String::as_str).collect();
        files.sort_unstable();
        assert_eq!(files, ["m/a.tr", "ref/oracle.py"]);
        let mut data: Vec<&str> = walked.data.iter().map(String::as_str).collect();
        data.sort_unstable();
        assert_eq!(data, ["ref/data.csv", "ref/tables/deep/t.bin"]);
        let mut reference = walked.reference_dirs.clone();
        reference.sort_unstable();
        assert_eq!(reference, ["ref/", "ref/tables/", "ref/tables/deep/"]);
        let problems: Vec<String> = (walked.problems.iter())
            .map(|d| format!("{} {}", d.file.as_deref().unwrap_or(""), d.message))
            .collect();
        assert!(
            problems.len() == 1
                && problems[0].starts_with("ref/outside ")
                && problems[0].contains("symbolic link"),
            "{problems:?}"
        );
        // A subtree walked alone knows it lies under the reference directory.
        let subtree = walk_tree(&root, "ref/tables/");
        let data: Vec<&str> = subtree.data.iter().map(String::as_str).collect();
        assert_eq!(data, ["ref/tables/deep/t.bin"]);
        assert!(in_reference_dir(&root, "ref/tables/deep/"));
        assert!(!in_reference_dir(&root, "m/"));
        assert!(!in_reference_dir(&root, ""));
        assert_stamped_walk_agrees(&root);
        // A root that holds Python is a reference directory all through.
        std::fs::write(root.join("top.py"), "y = 2").expect("write");
        let stamped = assert_stamped_walk_agrees(&root);
        assert!(stamped.data.iter().any(|path| path == "m/notes.txt"));
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    /// A root whose directories hold files alone walks in path order, on
    /// threads or not, so the fingerprint's sort has nothing to move; a
    /// directory's name sorts as its path does (`m-x/` before `m/`), and on
    /// threads the root's own files sort among the directories.
    #[test]
    fn a_root_of_modules_walks_in_path_order() {
        let root = std::env::temp_dir().join(format!("trellis-walk-order-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("mkdir");
        std::fs::write(root.join("_project.tr"), "p").expect("write");
        let mut modules: Vec<String> = (0..24).map(|at| format!("s{:02}", 23 - at)).collect();
        modules.extend(["m", "m-x", "m.x", "m0"].map(str::to_owned));
        for module in &modules {
            std::fs::create_dir_all(root.join(module)).expect("mkdir");
            for stem in ["zeta", "alpha", "Beta", "alpha2"] {
                std::fs::write(root.join(format!("{module}/{stem}.tr")), stem).expect("write");
                std::fs::write(root.join(format!("{module}/{stem}.soil")), stem).expect("write");
            }
        }
        let in_path_order = |walked: RootFiles, files: usize| {
            let mut sorted = walked.files.clone();
            sorted.sort_unstable();
            assert_eq!(walked.files, sorted);
            assert_eq!(walked.files.len(), files);
        };
        for walked in [walk_stamped(&root), walk_unstamped(&root), walk(&root)] {
            in_path_order(walked, 1 + modules.len() * 8);
        }
        // The root's own files go where their paths sort among the
        // directories' (`soil.toml` after `m/…`), with their stamps.
        std::fs::write(root.join(CONFIG_FILE), "[project]").expect("write");
        std::fs::write(root.join("n.tr"), "n").expect("write");
        let stamped = walk_stamped(&root);
        let stamp_of = |path: &str| {
            let at = stamped.files.iter().position(|walked| walked == path);
            let modified = std::fs::symlink_metadata(root.join(path)).and_then(|m| m.modified());
            (at.and_then(|at| stamped.stamps.files[at]), modified.ok())
        };
        for path in [CONFIG_FILE, "n.tr", "_project.tr", "m0/zeta.soil"] {
            let (stamp, modified) = stamp_of(path);
            assert_eq!(stamp.and_then(|(modified, _)| modified), modified, "{path}");
        }
        assert_eq!(stamped.stamps.files.len(), stamped.files.len());
        in_path_order(stamped, 3 + modules.len() * 8);
        in_path_order(walk_unstamped(&root), 3 + modules.len() * 8);
        std::fs::remove_dir_all(&root).expect("clean up");
    }

    /// The stamped walk lists what the plain walk lists (its order aside),
    /// with a stamp for every file; returns it.
    fn assert_stamped_walk_agrees(root: &Path) -> RootFiles {
        let sorted = |paths: &[String]| {
            let mut paths = paths.to_vec();
            paths.sort_unstable();
            paths
        };
        let (plain, stamped) = (walk(root), walk_stamped(root));
        assert_eq!(sorted(&stamped.files), sorted(&plain.files));
        assert_eq!(sorted(&stamped.data), sorted(&plain.data));
        let dirs = |walked: &RootFiles| {
            let prefixes: Vec<String> = walked.dirs.iter().map(|(dir, _)| dir.clone()).collect();
            sorted(&prefixes)
        };
        assert_eq!(dirs(&stamped), dirs(&plain));
        let mut reference = [plain.reference_dirs.clone(), stamped.reference_dirs.clone()];
        reference.iter_mut().for_each(|dirs| dirs.sort_unstable());
        assert_eq!(reference[0], reference[1]);
        assert_eq!(stamped.problems.len(), plain.problems.len());
        assert_eq!(stamped.stamps.files.len(), stamped.files.len());
        assert_eq!(stamped.stamps.data.len(), stamped.data.len());
        let all = stamped.stamps.files.iter().chain(&stamped.stamps.data);
        assert!(all.clone().all(Option::is_some));
        // A first load's walk lists the same, in the same order, and stats
        // nothing.
        let unstamped = walk_unstamped(root);
        assert_eq!(
            (&unstamped.files, &unstamped.data, &unstamped.reference_dirs),
            (&stamped.files, &stamped.data, &stamped.reference_dirs)
        );
        assert!(unstamped.stamps.files.is_empty() && unstamped.stamps.data.is_empty());
        stamped
    }
}
