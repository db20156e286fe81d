//! `xtask` is the workspace's task runner (`cargo xtask …`, an alias in
//! `.cargo/config.toml`): it owns the list of third-party clients the test suite
//! drives, pinned in `test-data/clients.toml`, knows whether each is installed
//! in the gitignored `.ci/cache/` at its pinned version, installs the missing
//! ones under a file lock, and runs the suite (design §11). It depends on no
//! workspace crate and nothing in the product depends on it; the end-to-end tests
//! use it, as a dev-dependency, to find what it installed.

#![allow(
    clippy::disallowed_methods,
    reason = "a host-side tool: it reads the pin file, runs installers and the test suite"
)]

pub mod clients;
pub mod provision;
