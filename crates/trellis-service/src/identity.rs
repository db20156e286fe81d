//! The identity a client and its daemon compare in the handshake. The crate version
//! alone would let a rebuilt binary talk to a daemon started from the old one, so
//! the identity adds the executable's size and modification time: one binary, one
//! identity.

use std::time::UNIX_EPOCH;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The soil0 contract version this binary checks and runs with (the workspace
/// ships soil0 and trellis together).
pub const SOIL0_VERSION: &str = env!("CARGO_PKG_VERSION");

pub fn binary_identity() -> String {
    let stamp = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|metadata| {
            let modified = metadata
                .modified()
                .ok()
                .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |duration| duration.as_nanos());
            format!("{modified}:{}", metadata.len())
        })
        .unwrap_or_else(|_| "unknown".to_owned());
    format!("{VERSION}+{stamp}")
}
