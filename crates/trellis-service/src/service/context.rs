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

use serde_json::Value;
use trellis_context::{ContextBundle, context_bundle};
use trellis_rpc::RpcError;

use super::{Service, bundle_dir, failed};
use crate::codes::HostCode;
use crate::protocol::{
    BundleWrite, ContextAnswer, ContextParams, DroppedColumns, PackedColumns, Text, encode_answer,
};

pub fn context(service: &mut Service, params: &ContextParams) -> Result<Value, RpcError> {
    let (def, budget) = (params.def.as_str(), params.budget);
    let db = service.database();
    let item = trellis_db::resolve_definition(db, def, trellis_db::Named::Function)
        .map_err(|d| failed(&[d]))?;
    let bundle = context_bundle(db, item, budget)
        .clone()
        .map_err(|d| failed(&[d]))?;
    let started = std::time::Instant::now();
    let (dir, written) = match params.out.as_deref() {
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
    let dir = dir.display().to_string();
    let mut answer = answer(&dir, &bundle);
    // How the directory was brought to the bundle, and what that and building
    // this answer took: they depend on what this service did before, not on
    // the request, so `--json` leaves them out, like the timings.
    answer.write = Some(BundleWrite {
        us: disk.as_micros() as u64,
        files: written.files,
        removed: written.removed,
        vouched: written.vouched.name().to_owned(),
    });
    let mut encoded = encode_answer(&answer);
    encoded["answer_us"] = Value::from((started.elapsed() - disk).as_micros() as u64);
    Ok(encoded)
}

fn refuse_non_empty(out: &Path) -> Result<(), RpcError> {
    let non_empty = match std::fs::read_dir(out) {
        Ok(mut entries) => entries.next().is_some(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => false,
        // A file, or a directory we cannot list: not an empty directory.
        Err(_) => true,
    };
    if non_empty {
        return Err(failed(&[HostCode::BundleOutNotEmpty.diagnostic(format!(
            "--out {} is not an empty directory; give a new or empty one",
            out.display()
        ))]));
    }
    Ok(())
}

/// The answer, its file lists in columns (`protocol::ContextAnswer`); the
/// client renders both views from it (`render::context_json` is the `--json`
/// document, an object per file).
fn answer<'a>(dir: &'a str, bundle: &'a ContextBundle) -> ContextAnswer<'a> {
    let paths = bundle
        .files
        .iter()
        .map(|f| Text::from(f.path.as_str()))
        .collect();
    let bytes = bundle.files.iter().map(|f| f.text.len() as u64).collect();
    let items = bundle
        .dropped
        .iter()
        .map(|d| Text::from(d.item.as_str()))
        .collect();
    // Runs of one reason: `[["over budget", 1], ["after over budget", 2104]]`.
    let mut reasons: Vec<(Text<'a>, u64)> = Vec::new();
    for dropped in &bundle.dropped {
        match reasons.last_mut() {
            Some((reason, count)) if reason.0 == dropped.reason => *count += 1,
            _ => reasons.push((Text::from(dropped.reason.as_str()), 1)),
        }
    }
    ContextAnswer {
        definition: Text::from(bundle.definition.as_str()),
        dir: Text::from(dir),
        budget: bundle.budget,
        estimate: bundle.estimate,
        hash: Text(bundle.hash.to_string().into()),
        packed: PackedColumns { paths, bytes },
        dropped: DroppedColumns { items, reasons },
        write: None,
        answer_us: None,
    }
}
