//! Each lock file read and validated once per edit, and the lock beside a
//! definition's spec. What a lock says is compared with the current hashes by
//! the status ladder (`status`); here a lock is only read.

use trellis_diag::Diagnostic;
use trellis_lock::Lock;

use crate::db::Db;
use crate::files::SourceFile;
use crate::index::{Item, definition_files};

/// A lock file, read and validated.
#[salsa::tracked(returns(ref))]
pub fn read_lock_file(db: &dyn Db, file: SourceFile) -> Result<Lock, Vec<Diagnostic>> {
    let path = file.path(db).as_str();
    trellis_lock::read_lock(file.text(db))
        .map_err(|errors| errors.into_iter().map(|d| d.in_file(path)).collect())
}

/// The lock beside a spec: `<module>/<stem>.lock`.
pub fn lock_file(db: &dyn Db, module: &str, stem: &str) -> Option<SourceFile> {
    definition_files(db, Item::new(db, module, stem)).lock
}

/// What a definition's lock says, or why it cannot be read.
pub enum LockState<'a> {
    Absent,
    Unreadable(&'a [Diagnostic]),
    Present(&'a Lock),
}

/// What the lock beside `<module>/<stem>.tr` says.
pub fn lock_state<'db>(db: &'db dyn Db, module: &str, stem: &str) -> LockState<'db> {
    match lock_file(db, module, stem) {
        None => LockState::Absent,
        Some(file) => match read_lock_file(db, file) {
            Ok(lock) => LockState::Present(lock),
            Err(errors) => LockState::Unreadable(errors),
        },
    }
}
