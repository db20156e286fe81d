//! `trellis-context` owns what the lowering agent reads: the context bundle
//! (trellis-daemon §4) as memoized queries over the `trellis-db` database, the
//! budgeted packer that decides which of its files travel (§5), and the spec
//! sections `read_spec` serves from the docs embedded at build time (§3.6, §7).
//! It reads specs, Soil, locks and decisions through `trellis-db`, builds
//! `tests.json` with `trellis-verify`'s expect-bundle writer, and reads clause
//! assurances from `trellis-lock` records. It knows no files, sockets or
//! processes: a host writes a packed bundle to disk.
//!
//! Workspace dependencies: `trellis-diag`, `trellis-hash`, `trellis-db`,
//! `trellis-lock`, `trellis-spec`, `trellis-verify`, `soil-syntax`, `soil-rt`,
//! `soil-types`, `soil-eval`.

#![cfg_attr(test, allow(clippy::disallowed_methods, reason = "tests use files"))]

pub mod bundle;
pub mod manifest;
pub mod packer;
pub mod pieces;
pub mod read;
pub mod spec_sections;

pub use bundle::{ContextBundle, PlannedUnit, UnitKey, bundle_plan, bundle_units, context_bundle};
pub use packer::{Dropped, Tier, Unit, check_bundle_path, pack, tokens};
pub use pieces::{BundleFile, OracleStanza};
pub use read::{Entry, read_context};
pub use spec_sections::{Section, embedded_document, slugs, spec_section};
