//! `trellis-db` is the incremental heart of Trellis: a salsa database whose inputs
//! are the bytes of a root's files (`.tr`, `.soil`, `.lock`, `soil.toml`) and its
//! file list, and whose derived, memoized queries compute everything else — parsed
//! specs, the three-part spec hashes, decision-entry and scope hashes, hash forms and
//! `soil_hash`, the type environment and callee-first programs, check facts and
//! statuses, and the static half of each definition's tests (property wrappers
//! type-checked and test values decoded through `trellis-verify`'s and `soil-rt`'s
//! machinery, so `check` and `test` judge them alike). The invalidation table is
//! not coded anywhere: it falls out of which query reads which input. This crate
//! does no I/O: hosts (the CLI, the daemon, a future language server) read files
//! through their own ports and push edits in through [`Change`]. It must not
//! depend on any host crate.
//!
//! Workspace dependencies: `trellis-diag`, `trellis-hash`, `soil-syntax`,
//! `soil-types`, `trellis-spec`, `trellis-lock`, `trellis-verify`, `soil-eval`,
//! `soil-rt`.
//!
//! # Layers
//!
//! The modules stand in nine layers, listed bottom first, so the crate reads in
//! one pass from the files up to what a host holds. A module imports only from
//! its own layer or the layers below, never through the crate root's
//! re-exports, and no modules import each other in a circle;
//! `tests/layers.rs` checks all three against this list. Each layer's
//! architecture invariant says what it may not know.
//!
//! 1. **Pure** — `deep`, `graph`, `prelude`, `refs`: stack for deep
//!    recursions, strongly connected components, the prelude's names, a Soil
//!    item's free references. *Invariant:* no database; functions of syntax
//!    trees and graphs alone.
//! 2. **Inputs** — `files`, `db`: the salsa inputs and the database type.
//!    *Invariant:* no query and no parsing; the only state a host writes.
//! 3. **Files** — `config`, `index`, `soil`, `spec`, `decisions`, `locks`: the
//!    root's layout from its directory lists (modules, definitions and their
//!    files), and each file parsed and hashed on its own. *Invariant:* nothing
//!    here follows a reference from one definition to another.
//! 4. **Names** — `resolve`, `exports`: free references resolved to a
//!    definition, a type or a builtin; the exports rule; the `module::name` a
//!    command gives. *Invariant:* by name alone — no hash, no type, no check.
//! 5. **Hashing** — `hashing`: `soil_hash`, cycle hashes, call cycles, the
//!    root's code items. *Invariant:* hashes what is written; knows no
//!    program, checker, test or lock.
//! 6. **Check** — `assembly`, `check`, `spec_check`, `test_check`, `ide`,
//!    `check_report`: callee-first programs, the checker's verdicts, the static
//!    half of tests, the rows of `trellis check`. *Invariant:* knows no lock,
//!    status or suite key, so `check` answers alike whatever the locks say.
//! 7. **Suites** — `documents`, `tables`, `results`: `env.json`, `program.json`,
//!    the per-module tables, the suite key. *Invariant:* what the test runner is
//!    handed and keyed by; reads no lock and no status.
//! 8. **Status** — `status`, `entry_status`, `status_rows`, `lockgen`: current
//!    hashes against each lock, the status ladder, the rows of `trellis
//!    status`, the locks Trellis would write. *Invariant:* decides and proposes,
//!    never writes: the host writes every lock.
//! 9. **Host-facing** — `change`, `mentions`, `sealed`, `spread`, `ahead`,
//!    `joins`, `tally`, `synthetic`, `shaped`: the one way edits enter, what a
//!    host keeps beside the database (the joins and their tallies, the mention
//!    index, answers asked ahead), and the generated roots benchmarks and scale tests load.
//!    *Invariant:* nothing below knows of it; the only layer that holds a
//!    [`RootDatabase`] — every query below takes `&dyn Db`.

#![cfg_attr(test, allow(clippy::disallowed_methods, reason = "tests use files"))]

// 1. Pure
mod deep;
mod graph;
mod prelude;
mod refs;

// 2. Inputs
mod db;
mod files;

// 3. Files
mod config;
mod decisions;
mod index;
mod locks;
mod soil;
mod spec;

// 4. Names
mod exports;
mod resolve;

// 5. Hashing
mod hashing;

// 6. Check
mod assembly;
mod check;
mod check_report;
mod ide;
mod spec_check;
mod test_check;

// 7. Suites
mod documents;
mod results;
mod tables;

// 8. Status
mod entry_status;
mod lockgen;
mod status;
mod status_rows;

// 9. Host-facing
mod ahead;
mod change;
mod joins;
mod mentions;
mod sealed;
pub mod shaped;
mod spread;
pub mod synthetic;
mod tally;

pub use ahead::AskAhead;
pub use assembly::{
    ProgramDef, helper_grants, program_cycle, program_cycle_free, program_def, program_order,
    program_refs, property_callees, test_program_order,
};
pub use change::{Change, keep_every_parse};
pub use check::{
    CheckOutcome, check_definition, checker_declaration, checker_definition, checker_env,
    env_diagnostics, report_diagnostics, root_types,
};
pub use check_report::{CheckReport, OpenHole, check_root};
pub use config::{
    CACHE_TIMEOUT_MS, CONFIG_FILE, CacheConfig, CacheWrite, Config, TagName, Toolchain,
    declared_tags, parse_config, root_config, tag_declared,
};
pub use db::{Db, QueryLog, RootDatabase};
pub use decisions::{
    DecisionKey, DecisionsInScope, decision_entries, decision_entry_hash, empty_scope_hash,
    scope_decisions, scope_hash,
};
pub use deep::{QUERY_STACK_BYTES, query_thread, spawn_query_thread};
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
pub use joins::{RootJoins, RowGroup, StatusCount, count_statuses};
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
    SpecHashes, SpecParse, formal_blocks, formal_hash, hash_every_spec, invariant_labels,
    parse_spec, prose_hash, spec_hashes, test_blocks, test_hash,
};
pub use spec_check::{spec_diagnostics, type_problems};
pub use status::{
    StatusRow, current_hashes, definition_status, lowering_edges, oracle_hashes, reference_texts,
    scope_row_status, unreadable_function_row,
};
pub use status_rows::root_status;
pub use tables::{DefinitionHashes, module_hashes, module_programs};
pub use test_check::test_diagnostics;
