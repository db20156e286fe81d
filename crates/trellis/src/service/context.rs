//! `trellis context DEF --budget N [--out DIR]` (trellis-daemon §4, §5; impl plan
//! §9.13): packs the definition's context bundle from the database and writes it
//! to `.trellis/context/<module>/<name>/` (wiped per request: afterwards it
//! holds exactly this bundle, so a smaller bundle leaves no stale files;
//! `bundle_dir` does that without rewriting what is already there) or to
//! `--out`, which the client has already resolved against its own working
//! directory and which must be empty or absent. The files are written plainly,
//! not through the lock store's fsyncing atomic writer: a bundle is scratch
//! output, replaced by the next request, so durability buys nothing and two
//! fsyncs per file cost seconds on a bundle of hundreds of callees. The answer
//! lists what was packed and what was dropped, with sizes, for the human view
//! and `--json`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use trellis_context::{ContextBundle, context_bundle, definition_item};
use trellis_diag::Diagnostic;
use trellis_rpc::RpcError;

use super::{Service, bundle_dir, failed, invalid_params};

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
    let (dir, written) = match params["out"].as_str() {
        Some(out) => {
            let out = PathBuf::from(out);
            refuse_non_empty(&out)?;
            let written = bundle_dir::write_all(&out, &bundle)?;
            (out, written)
        }
        None => {
            let dir = service
                .root()
                .join(".trellis/context")
                .join(item.module(db))
                .join(item.name(db));
            let written = service.bundle_stamps.write(&dir, &bundle)?;
            (dir, written)
        }
    };
    let disk = started.elapsed();
    let mut answer = answer(&dir, &bundle);
    // How the directory was brought to the bundle, and what that and building
    // this answer took: they depend on what this service did before, not on
    // the request, so `--json` leaves them out, like the timings.
    answer["write"] = json!({
        "us": disk.as_micros() as u64,
        "files": written.files,
        "removed": written.removed,
        "vouched": written.vouched.name(),
    });
    answer["answer_us"] = json!((started.elapsed() - disk).as_micros() as u64);
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

/// The answer, its file lists in columns: a bundle in a root of thousands of
/// definitions lists thousands of files, and one JSON object per file (a map of
/// three keys) was most of a request's time on both ends of the socket (design
/// §9.10). The client renders both views from it (`render::context_json` is the
/// `--json` document, an object per file).
fn answer(dir: &Path, bundle: &ContextBundle) -> Value {
    let paths: Vec<&str> = bundle.files.iter().map(|f| f.path.as_str()).collect();
    let bytes: Vec<usize> = bundle.files.iter().map(|f| f.text.len()).collect();
    let items: Vec<&str> = bundle.dropped.iter().map(|d| d.item.as_str()).collect();
    // Runs of one reason: `[["over budget", 1], ["after over budget", 2104]]`.
    let mut reasons: Vec<(&str, usize)> = Vec::new();
    for dropped in &bundle.dropped {
        match reasons.last_mut() {
            Some((reason, count)) if *reason == dropped.reason => *count += 1,
            _ => reasons.push((&dropped.reason, 1)),
        }
    }
    json!({
        "definition": bundle.definition,
        "dir": dir.display().to_string(),
        "budget": bundle.budget,
        "estimate": bundle.estimate,
        "hash": bundle.hash.to_string(),
        "packed": { "paths": paths, "bytes": bytes },
        "dropped": { "items": items, "reasons": reasons },
    })
}
