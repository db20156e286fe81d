//! A scratch root for the benches that drive whole `trellis` commands: a
//! generated root's files written under a directory of the bench's own, beside
//! a private runtime directory for the daemon's socket.

use std::path::PathBuf;

pub struct Scratch {
    /// What to remove when the bench is done: the root and the runtime directory.
    pub base: PathBuf,
    /// The root, canonical (the daemon's socket is named after it).
    pub root: PathBuf,
    /// `XDG_RUNTIME_DIR` for the commands, mode 0700 as the client requires.
    pub runtime: PathBuf,
}

/// Writes `files` (root-relative path, text) under `$TMPDIR/<name>-<pid>/root`.
pub fn write_scratch(name: &str, files: Vec<(String, String)>) -> Result<Scratch, String> {
    use std::os::unix::fs::PermissionsExt;
    let base = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let root = base.join("root");
    let runtime = base.join("run");
    for (relative, text) in files {
        let path = root.join(&relative);
        std::fs::create_dir_all(path.parent().unwrap_or(&root))
            .map_err(|e| format!("mkdir: {e}"))?;
        std::fs::write(&path, text).map_err(|e| format!("write {relative}: {e}"))?;
    }
    std::fs::create_dir_all(&runtime).map_err(|e| format!("mkdir: {e}"))?;
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("chmod: {e}"))?;
    let root = root
        .canonicalize()
        .map_err(|e| format!("canonicalize: {e}"))?;
    Ok(Scratch {
        base,
        root,
        runtime,
    })
}
