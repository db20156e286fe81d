//! What more than one of trellis-db's tests reads: the shipped example root.

#![allow(
    clippy::disallowed_methods,
    reason = "the example root is read from disk"
)]

use std::path::Path;

/// The shipped example root's files (root-relative path, text), in path
/// order, as a host loads them: hidden directories are not walked.
pub fn example_files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files = Vec::new();
    let mut stack = vec![(root, String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for entry in std::fs::read_dir(&dir)
            .expect("examples/ is readable")
            .flatten()
        {
            let name = entry.file_name().into_string().expect("UTF-8 names");
            let path = entry.path();
            if path.is_dir() {
                if !name.starts_with('.') {
                    stack.push((path, format!("{prefix}{name}/")));
                }
            } else {
                let text = std::fs::read_to_string(&path).expect("UTF-8 files");
                files.push((format!("{prefix}{name}"), text));
            }
        }
    }
    files.sort();
    files
}
