//! `trellis context DEF --budget N [--out DIR]` (trellis-daemon §4, §5; impl plan
//! §9.13): packs the definition's context bundle from the database and writes it
//! to `.trellis/context/<module>/<name>/` (wiped per request: afterwards it holds
//! exactly this bundle, so a smaller bundle leaves no stale files) or to `--out`, which the client has already resolved
//! against its own working directory and which must be empty or absent. The
//! files are written plainly, not through the lock store's fsyncing atomic
//! writer: a bundle is scratch output, wiped and rewritten on every request, so
//! durability buys nothing and two fsyncs per file cost seconds on a bundle of
//! hundreds of callees. The answer lists what was packed and what was dropped,
//! with sizes, for the human view and `--json`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use trellis_context::{ContextBundle, context_bundle, definition_item, tokens};
use trellis_diag::Diagnostic;
use trellis_rpc::RpcError;

use super::{Service, failed, invalid_params};

pub fn context(service: &mut Service, params: &Value) -> Result<Value, RpcError> {
    let def = params["def"]
        .as_str()
        .ok_or_else(|| invalid_params("`def` must be a definition name"))?;
    let budget = params["budget"]
        .as_u64()
        .ok_or_else(|| invalid_params("`budget` must be a whole number of tokens"))?;
    let db = service.database();
    let item = definition_item(db, def).map_err(|d| failed(&[d]))?;
    let bundle = context_bundle(db, item, budget)
        .clone()
        .map_err(|d| failed(&[d]))?;
    let started = std::time::Instant::now();
    let dir = match params["out"].as_str() {
        Some(out) => {
            let out = PathBuf::from(out);
            refuse_non_empty(&out)?;
            out
        }
        None => {
            let dir = service
                .root()
                .join(".trellis/context")
                .join(item.module(db))
                .join(item.name(db));
            remove_stale(&dir, &bundle)?;
            dir
        }
    };
    write_bundle(&dir, &bundle)?;
    let mut answer = answer(&dir, &bundle);
    answer["write_us"] = json!(started.elapsed().as_micros() as u64);
    Ok(answer)
}

fn refuse_non_empty(out: &Path) -> Result<(), RpcError> {
    let non_empty = match std::fs::read_dir(out) {
        Ok(mut entries) => entries.next().is_some(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => false,
        // A file, or a directory we cannot list: not an empty directory.
        Err(_) => true,
    };
    if non_empty {
        return Err(failed(&[Diagnostic::new(
            "bundle-out-not-empty",
            format!(
                "--out {} is not an empty directory; give a new or empty one",
                out.display()
            ),
        )]));
    }
    Ok(())
}

fn write_failed(path: &Path, error: &std::io::Error) -> RpcError {
    failed(&[Diagnostic::new(
        "bundle-write-failed",
        format!("could not write {}: {error}", path.display()),
    )])
}

/// The wipe, without rewriting what is already right: every entry of `dir` that
/// is not a file of `bundle` with exactly its bytes is removed, so after
/// [`write_bundle`] the directory holds exactly the bundle — the state a wipe and
/// a full write leave — while an unchanged bundle costs reads, not hundreds of
/// unlinks and creates.
fn remove_stale(dir: &Path, bundle: &ContextBundle) -> Result<(), RpcError> {
    let wanted: std::collections::HashMap<PathBuf, &[u8]> = bundle
        .files
        .iter()
        .map(|file| (dir.join(&file.path), file.text.as_bytes()))
        .collect();
    fn sweep(
        path: &Path,
        wanted: &std::collections::HashMap<PathBuf, &[u8]>,
    ) -> std::io::Result<bool> {
        let Ok(entries) = std::fs::read_dir(path) else {
            return Ok(false);
        };
        let mut kept = false;
        for entry in entries {
            let entry = entry?;
            let (path, kind) = (entry.path(), entry.file_type()?);
            if kind.is_dir() {
                if sweep(&path, wanted)? {
                    kept = true;
                } else {
                    std::fs::remove_dir(&path)?;
                }
            } else if kind.is_file()
                && wanted.get(&path).is_some_and(|bytes| {
                    std::fs::read(&path).is_ok_and(|on_disk| on_disk == *bytes)
                })
            {
                kept = true;
            } else {
                std::fs::remove_file(&path)?;
            }
        }
        Ok(kept)
    }
    sweep(dir, &wanted).map_err(|e| write_failed(dir, &e))?;
    Ok(())
}

/// Writes every file of `bundle` under `dir` that is not already there.
fn write_bundle(dir: &Path, bundle: &ContextBundle) -> Result<(), RpcError> {
    for file in &bundle.files {
        // Paths are built by the bundle queries from module and definition
        // names; the check is the same one read_context applies.
        trellis_context::check_bundle_path(&file.path).map_err(|d| failed(&[d]))?;
        let target = dir.join(&file.path);
        if target.is_file() {
            // Left in place by `remove_stale` because its bytes are right.
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| write_failed(parent, &e))?;
        }
        std::fs::write(&target, file.text.as_bytes()).map_err(|e| write_failed(&target, &e))?;
    }
    Ok(())
}

fn answer(dir: &Path, bundle: &ContextBundle) -> Value {
    let packed: Vec<Value> = bundle
        .files
        .iter()
        .map(|file| {
            json!({
                "path": file.path,
                "bytes": file.text.len(),
                "tokens": tokens(file.text.len()),
            })
        })
        .collect();
    let dropped: Vec<Value> = bundle
        .dropped
        .iter()
        .map(|d| json!({ "item": d.item, "reason": d.reason }))
        .collect();
    json!({
        "definition": bundle.definition,
        "dir": dir.display().to_string(),
        "budget": bundle.budget,
        "estimate": bundle.estimate,
        "hash": bundle.hash.to_string(),
        "packed": packed,
        "dropped": dropped,
    })
}
