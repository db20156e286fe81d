//! Loading the shipped example root into a database, as a host would.

use std::path::{Path, PathBuf};

use trellis_db::{Change, RootDatabase};

pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// Every file of `examples/` as (root-relative path, text), in path order.
pub fn example_files() -> Vec<(String, String)> {
    let root = examples_dir();
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

pub fn load(db: &mut RootDatabase, files: &[(String, String)]) {
    let mut change = Change::default();
    for (path, text) in files {
        change.set_root_file(path.clone(), text.clone());
    }
    change.apply(db);
}

#[allow(dead_code)]
pub fn examples_db() -> RootDatabase {
    let mut db = RootDatabase::default();
    load(&mut db, &example_files());
    db
}
