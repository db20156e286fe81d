//! `trellis-lock` owns the lock files: the model of a per-definition lock
//! (function, type, module and project kinds) and of the merged `soil.lock`,
//! the canonical writer, the validating reader with located diagnostics, the
//! schema invariants, the pure status ladder, and atomic writes through a small
//! filesystem port. The normative text is `docs/lock-schema.md`. It depends only
//! on `trellis-diag`, `trellis-hash` and `soil-rt` (whose JSON tree parser the
//! reader shares, so lock JSON and Soil JSON are read by one parser): it knows
//! nothing of `.tr` parsing, Soil's syntax or types, or the database, which
//! hand it plain hashes and results.

#![cfg_attr(test, allow(clippy::disallowed_methods, reason = "tests use files"))]

mod codes;
mod invariants;
mod json;
mod merge;
mod model;
mod read;
mod results;
mod status;
mod store;
mod vocab;
mod write;

pub use codes::Code;
pub use invariants::{
    Seg, TERMINATION_HATCH, Violation, check_invariants, check_transition, not_green, render_path,
    test_name_problem, violations,
};
pub use merge::{check_soil_lock, merge, ownerless_helpers, qualify};
pub use model::*;
pub use read::{read_lock, read_lock_bytes, read_soil_lock};
pub use results::seal_results;
pub use status::{
    Current, CurrentHashes, StaleCause, Status, edges_named, moved_edges, recorded_edges,
    scope_status, status,
};
pub use store::{
    CacheFs, LoadError, LockFs, SaveError, StdFs, TEMP_SUFFIX, is_temp_name, load_lock, save_lock,
    save_soil_lock, temp_path, write_atomic,
};
pub use vocab::Word;
pub use write::{write_lock, write_soil_lock};
