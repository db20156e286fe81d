//! `trellis-verify` owns the verification tiers' machinery below the database: the
//! process port ([`ProcessRunner`], the one place child processes are started,
//! timed out and reaped) and its warm counterpart ([`WarmRunner`], long-lived
//! processes answering request after request, pooled by [`WarmPool`]), the
//! differential oracles (Python references through an embedded driver, run cold
//! or by a warm driver, CLI oracles by pipe, compared through soil-rt's
//! canonical re-encode), the cram transcript runner, property generation from
//! runtime types with SplitMix64 seeds and shrinking, the pre-flight checks over
//! expect cases, and the per-definition suite runner ([`suite::run_suite`]) that
//! drives them all from pure inputs. It builds on `soil-rt` (values, types, the
//! one JSON codec), `soil-syntax` (predicate trees), `soil-types` (checking
//! synthesized property and clause wrappers), `soil-eval` (running Soil),
//! `trellis-spec` (parsed blocks), `trellis-hash` and `trellis-diag`; it must not
//! depend on the database or the host, and it does no I/O outside `process.rs`,
//! `warm.rs`, `cram.rs`'s temp dirs, the real runner and the suite's read of a
//! Python reference's bytes for its oracle hash.

#![cfg_attr(test, allow(clippy::disallowed_methods, reason = "tests use files"))]

mod codes;
pub mod cram;
pub mod generate;
pub mod oracle;
pub mod preflight;
pub mod process;
pub mod property;
pub mod shrink;
/// The seeded mixer property generation draws from (it lives in `trellis-hash`).
pub use trellis_hash::splitmix;
pub mod suite;
pub mod warm;

pub use codes::Code;
pub use process::{
    Captured, Exit, FakeRunner, ProcessOutcome, ProcessRunner, ProcessSpec, RealRunner,
};
pub use warm::{FakeWarmRunner, WarmPool, WarmRunner};
