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

/// What the walk makes of one directory entry, from its own (not followed) type.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// An input file to load.
    File,
    /// A directory to walk.
    Dir,
    /// An input's name on something that is not a regular file: reported.
    NotAFile(&'static str),
    /// Anything else: not an input, skipped.
    Skipped,
}

/// Classifies `name` by its `lstat` type.
pub(crate) fn classify(name: &str, file_type: FileType) -> Entry {
    use std::os::unix::fs::FileTypeExt;
    if loaded_file(name) {
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
    /// Input files as (root-relative path, absolute path), in walk order.
    pub files: Vec<(String, PathBuf)>,
    /// With [`walk_stamped`], each file's (modification time, size), stat-ed
    /// beside its directory entry; empty otherwise.
    pub stamps: Vec<Option<(Option<std::time::SystemTime>, u64)>>,
    /// Every walked directory as (root-relative prefix `""`, `"m/"`, absolute path).
    pub dirs: Vec<(String, PathBuf)>,
    /// Directories that could not be read and input names that are not files.
    pub problems: Vec<Diagnostic>,
    /// Whether every directory could be read.
    pub complete: bool,
}

/// Walks `root` by the rule above.
pub fn walk(root: &Path) -> RootFiles {
    walk_tree_with(root, "", false, true).0
}

/// [`walk`], stat-ing each file through its directory as it goes (the kernel
/// looks up one name instead of the whole path), the root's directories
/// shared by two threads: a walk of 20,000 definitions is 44,000 stats
/// (design §7.16). A file that cannot be stat-ed has no stamp. The files
/// come in the root's own first, then each directory's in listing order.
pub fn walk_stamped(root: &Path) -> RootFiles {
    let (mut out, below) = walk_tree_with(root, "", true, false);
    let walk_share = |first: usize| {
        (below.iter().enumerate().skip(first).step_by(2))
            .map(|(at, (prefix, _))| (at, walk_tree_with(root, prefix, true, true).0))
            .collect::<Vec<_>>()
    };
    let mut walked = std::thread::scope(|scope| {
        let other = scope.spawn(|| walk_share(1));
        let mut walked = walk_share(0);
        walked.extend(
            other
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        );
        walked
    });
    walked.sort_unstable_by_key(|(at, _)| *at);
    for (_, part) in walked {
        out.files.extend(part.files);
        out.stamps.extend(part.stamps);
        out.dirs.extend(part.dirs);
        out.problems.extend(part.problems);
        out.complete &= part.complete;
    }
    out
}

/// Walks the subtree of `root` at `prefix` (`""`, or a directory's
/// root-relative prefix ending in `/`, such as `m/`) by the rule above. A
/// subtree that is gone, or is no directory of its own (a link, a file), walks
/// as empty and complete: nothing of the root is there.
pub fn walk_tree(root: &Path, prefix: &str) -> RootFiles {
    walk_tree_with(root, prefix, false, true).0
}

/// [`walk_tree`], stat-ing each file when `stamped`; when not `descend`ing,
/// only the directory at `prefix` is listed, and the directories found in it
/// are handed back unwalked.
fn walk_tree_with(
    root: &Path,
    prefix: &str,
    stamped: bool,
    descend: bool,
) -> (RootFiles, Vec<(String, PathBuf)>) {
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
    let mut stack = vec![(prefix.to_owned(), start)];
    while let Some((prefix, dir)) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(error) => {
                out.problems.push(unreadable(&prefix, &error.to_string()));
                out.complete = false;
                continue;
            }
        };
        out.dirs.push((prefix.clone(), dir));
        for entry in entries.flatten() {
            let name = match entry.file_name().into_string() {
                Ok(name) => name,
                Err(raw) => {
                    let lossy = raw.to_string_lossy().into_owned();
                    if loaded_file(&lossy) {
                        out.problems.push(unreadable(
                            &format!("{prefix}{lossy}"),
                            "its name is not valid UTF-8",
                        ));
                    }
                    continue;
                }
            };
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let path = format!("{prefix}{name}");
            match classify(&name, file_type) {
                Entry::File => {
                    if stamped {
                        let metadata = entry.metadata().ok();
                        (out.stamps).push(metadata.map(|m| (m.modified().ok(), m.len())));
                    }
                    out.files.push((path, entry.path()));
                }
                Entry::Dir if descend => stack.push((format!("{path}/"), entry.path())),
                Entry::Dir => below.push((format!("{path}/"), entry.path())),
                Entry::NotAFile(what) => out.problems.push(not_a_file(&path, what)),
                Entry::Skipped => {}
            }
        }
    }
    (out, below)
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
        let files: Vec<&str> = walked.files.iter().map(|(p, _)| p.as_str()).collect();
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
}
