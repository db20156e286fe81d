//! `trellis-db` is the incremental heart of Trellis: a salsa database whose inputs
//! are the bytes of a root's files (`.tr`, `.soil`, `.lock`, `soil.toml`) and its
//! file list, and whose derived, memoized queries compute everything else — parsed
//! specs, the three-part spec hashes, decision-entry and scope hashes, hash forms and
//! `soil_hash`, the type environment and callee-first programs, check facts and
//! statuses, and the static half of each definition's tests (property wrappers
//! type-checked and test values decoded through `trellis-verify`'s and `soil-rt`'s
//! machinery, so `check` and `test` judge them alike). The invalidation table is not coded anywhere: it falls out of which
//! query reads which input. This crate does no I/O: hosts (the CLI, the daemon, a
//! future language server) read files through their own ports and push edits in
//! through [`Change`]. It must not depend on any host crate.
//!
//! Workspace dependencies: `trellis-diag`, `trellis-hash`, `soil-syntax`,
//! `soil-types`, `trellis-spec`, `trellis-lock`, `trellis-verify`, `soil-eval`,
//! `soil-rt`.

#![cfg_attr(test, allow(clippy::disallowed_methods, reason = "tests use files"))]

mod ahead;
mod assembly;
mod change;
mod check;
mod check_report;
mod config;
mod db;
mod decisions;
mod documents;
mod entry_status;
mod exports;
mod files;
mod graph;
mod hashing;
mod ide;
mod index;
mod joins;
mod lockgen;
mod locks;
mod mentions;
mod prelude;
mod refs;
mod resolve;
mod results;
mod sealed;
mod soil;
mod spec;
mod spec_check;
mod spread;
mod status;
mod status_rows;
pub mod synthetic;
mod tables;
mod test_check;

pub use ahead::AskAhead;
pub use assembly::{
    ProgramDef, helper_grants, program_cycle, program_cycle_free, program_def, program_order,
    program_refs, property_callees, test_program_order,
};
pub use change::Change;
pub use check::{
    CheckOutcome, check_definition, checker_declaration, checker_definition, checker_env,
    env_diagnostics, report_diagnostics, root_types,
};
pub use check_report::{CheckReport, OpenHole, check_root};
pub use config::{
    CONFIG_FILE, Config, TagName, Toolchain, declared_tags, parse_config, root_config, tag_declared,
};
pub use db::{Db, QueryLog, RootDatabase};
pub use decisions::{
    DecisionKey, DecisionsInScope, decision_entries, decision_entry_hash, empty_scope_hash,
    scope_decisions, scope_hash,
};
pub use documents::{env_json, program_json};
pub use exports::{export_violations, module_exports};
pub use files::{Directory, FileKind, SourceFile, Workspace, directory_name};
pub use hashing::{
    SoilFacts, all_code_items, call_cycle, call_cycle_free, module_code_items, resolved_refs,
    soil_facts, soil_hash, type_cycles, type_hash,
};
pub use ide::name_types;
pub use index::{
    Item, ItemKind, Module, ModuleFiles, RootIndex, all_files, file_at, files_of, files_under,
    root_index, spec_file,
};
pub use joins::{RootJoins, RowGroup, StatusCount};
pub use lockgen::{
    Citation, adopted_lock, decisions_record, editorial_lock, editorial_scope_lock, oracle_rows,
    reviewed_lock, spec_lock, spec_record,
};
pub use locks::{LockState, lock_file, lock_state, read_lock_file};
pub use refs::FreeRef;
pub use resolve::{
    Named, Target, TypeIndex, resolve_definition, split_definition_name, type_index,
};
pub use results::suite_key;
pub use soil::{
    SoilParse, free_refs, helper_signature, item_equation, item_soil_file, module_helpers,
    parse_soil,
};
pub use spec::{
    SpecHashes, SpecParse, formal_blocks, formal_hash, invariant_labels, parse_spec, prose_hash,
    spec_hashes, test_blocks, test_hash,
};
pub use spec_check::{spec_diagnostics, type_problems};
pub use status::{
    StatusRow, current_hashes, definition_status, lowering_edges, oracle_hashes, reference_texts,
    scope_row_status,
};
pub use status_rows::root_status;
pub use tables::{DefinitionHashes, module_hashes, module_programs};
pub use test_check::test_diagnostics;
