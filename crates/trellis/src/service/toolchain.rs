//! The toolchain pin (soil-toml §2; design §8): commands that verify refuse when
//! `soil.toml [toolchain]` names another toolchain, and `toolchain update` re-pins
//! deliberately, rewriting only the two pinned values.

use serde_json::{Value, json};
use trellis_db::{Workspace, root_config};
use trellis_diag::Diagnostic;
use trellis_rpc::RpcError;

use super::{Service, failed};
use crate::identity::{SOIL0_VERSION, VERSION};

/// `toolchain-mismatch` when the root is pinned to another toolchain.
pub fn check_pin(service: &Service) -> Result<(), Diagnostic> {
    let db = service.database();
    let config = root_config(db, Workspace::get(db))
        .as_ref()
        .map_err(Clone::clone)?;
    let pin = &config.toolchain;
    if pin.trellis != VERSION || pin.soil0_cli != SOIL0_VERSION {
        return Err(Diagnostic::new(
            "toolchain-mismatch",
            format!(
                "soil.toml pins trellis {} / soil0 {}, but this is trellis {VERSION} / soil0 {SOIL0_VERSION}",
                pin.trellis, pin.soil0_cli
            ),
        )
        .with_file("soil.toml")
        .with_note("run `trellis toolchain update` to re-pin the root to this toolchain"));
    }
    Ok(())
}

/// Rewrites `trellis = "…"` and `soil0_cli = "…"` inside `[toolchain]`, keeping
/// every other byte of the file.
pub fn repin(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_toolchain = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_toolchain = trimmed == "[toolchain]";
        }
        let key = trimmed.split('=').next().unwrap_or_default().trim();
        let ending = if line.ends_with('\n') { "\n" } else { "" };
        match (in_toolchain, key) {
            (true, "trellis") => out.push_str(&format!("trellis = \"{VERSION}\"{ending}")),
            (true, "soil0_cli") => {
                out.push_str(&format!("soil0_cli = \"{SOIL0_VERSION}\"{ending}"))
            }
            _ => out.push_str(line),
        }
    }
    out
}

pub fn update(service: &mut Service) -> Result<Value, RpcError> {
    let path = service.root().join("soil.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        failed(&[
            Diagnostic::new("root-unreadable", format!("cannot read soil.toml: {e}"))
                .with_file("soil.toml"),
        ])
    })?;
    let updated = repin(&text);
    if updated != text {
        // Through the one atomic writer: a crash leaves the old pin or the new.
        trellis_lock::write_atomic(&trellis_lock::StdFs, &path, updated.as_bytes()).map_err(
            |e| {
                failed(&[Diagnostic::new(
                    "root-unreadable",
                    format!("cannot write soil.toml: {e}"),
                )
                .with_file("soil.toml")])
            },
        )?;
    }
    Ok(json!({ "trellis": VERSION, "soil0_cli": SOIL0_VERSION, "changed": updated != text }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repins_only_the_toolchain_values() {
        let text = "entrypoint = \"m::f\"\n\n[toolchain]\ntrellis = \"0.0.1\"\nsoil0_cli = \"0.0.1\"\n\n[tags]\ntrellis = \"a tag that happens to share the name\"\n";
        let updated = repin(text);
        assert!(updated.contains(&format!(
            "[toolchain]\ntrellis = \"{VERSION}\"\nsoil0_cli = \"{SOIL0_VERSION}\"\n"
        )));
        assert!(updated.ends_with("[tags]\ntrellis = \"a tag that happens to share the name\"\n"));
    }
}
