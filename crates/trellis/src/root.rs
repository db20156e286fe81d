//! Finding the root (soil-toml §1): `TRELLIS_ROOT` first, else the nearest
//! directory upwards that holds `soil.toml`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use trellis_diag::Diagnostic;
use trellis_service::codes::HostCode;

pub use trellis_db::CONFIG_FILE;

/// The root directory, canonicalized (so the daemon socket for a root is the same
/// whichever symlink or relative path reached it).
pub fn discover_root(trellis_root: Option<OsString>, cwd: &Path) -> Result<PathBuf, Diagnostic> {
    if let Some(root) = trellis_root.filter(|value| !value.is_empty()) {
        let root = cwd.join(root);
        if !root.join(CONFIG_FILE).is_file() {
            return Err(HostCode::ConfigNoRoot.diagnostic(format!(
                "TRELLIS_ROOT is {} but it holds no soil.toml",
                root.display()
            )));
        }
        return canonical(&root);
    }
    let mut dir = Some(cwd);
    while let Some(candidate) = dir {
        if candidate.join(CONFIG_FILE).is_file() {
            return canonical(candidate);
        }
        dir = candidate.parent();
    }
    Err(HostCode::ConfigNoRoot.diagnostic(format!(
        "no soil.toml in {} or any directory above it, and TRELLIS_ROOT is not set",
        cwd.display()
    )))
}

fn canonical(path: &Path) -> Result<PathBuf, Diagnostic> {
    path.canonicalize().map_err(|error| {
        HostCode::ConfigNoRoot.diagnostic(format!("cannot resolve {}: {error}", path.display()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_up_to_soil_toml_and_prefers_trellis_root() {
        let base = std::env::temp_dir().join(format!("trellis-root-test-{}", std::process::id()));
        let nested = base.join("a/b");
        std::fs::create_dir_all(&nested).expect("temp dirs");
        std::fs::write(base.join(CONFIG_FILE), "").expect("write soil.toml");
        let found = discover_root(None, &nested).expect("found by walking up");
        assert_eq!(found, base.canonicalize().expect("canonical"));

        let elsewhere = std::env::temp_dir();
        let via_env = discover_root(Some(base.clone().into_os_string()), &elsewhere).expect("env");
        assert_eq!(via_env, found);

        let missing = discover_root(
            Some(OsString::from("/nonexistent-trellis-root")),
            &elsewhere,
        );
        assert_eq!(missing.expect_err("no root").code, "config-no-root");
        std::fs::remove_dir_all(&base).expect("clean up");
    }
}
