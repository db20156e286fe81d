//! Loading the shipped example root into a database, as a host would.

use std::path::{Path, PathBuf};

use trellis_db::{Change, RootDatabase};

#[allow(dead_code, reason = "not every test reads a file of its own")]
pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// Every file of `examples/` as (root-relative path, text), in path order:
/// trellis-db's tests read it through the same function.
#[path = "../../../trellis-db/tests/support/mod.rs"]
mod shared;
pub use shared::example_files;

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
