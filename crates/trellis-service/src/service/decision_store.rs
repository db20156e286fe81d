//! The decision store: the bytes of every decision entry a root has had,
//! remembered by hash under `.trellis/decisions/` (content-addressed, never an
//! input), so a triage can show what an entry said when a lowering relied on
//! it (design §4.3). Every writer fills it after writing its locks
//! (`locks::rewrite_manifest`); the triage sweep reads it.

use std::path::Path;

use trellis_db::{Workspace, decision_entries, root_index};
use trellis_hash::Digest;
use trellis_lock::StdFs;

use super::Service;

/// Where the remembered entry texts live, root-relative.
const DECISION_STORE: &str = ".trellis/decisions";

fn store_path(root: &Path, hash: &Digest) -> std::path::PathBuf {
    let text = hash.to_string();
    let hex = text.strip_prefix("sha256:").unwrap_or(&text);
    root.join(DECISION_STORE).join(format!("{hex}.md"))
}

/// The text remembered for the entry hashed `hash`, if any.
pub fn remembered(root: &Path, hash: &Digest) -> Option<String> {
    std::fs::read_to_string(store_path(root, hash)).ok()
}

/// Writes every decision entry of the root into the store (those not there yet).
/// Called by every writer after it wrote its locks; best effort.
pub fn remember_decision_texts(service: &Service) {
    let root = service.root();
    let db = service.database();
    let index = root_index(db, Workspace::get(db));
    let scopes = index
        .project
        .into_iter()
        .chain(index.modules.values().filter_map(|files| files.spec));
    for file in scopes {
        for entry in decision_entries(db, file) {
            let hash = trellis_spec::DecisionEntryPart {
                label: entry.label.clone(),
                bytes: entry.bytes.clone(),
            }
            .hash();
            let path = store_path(root, &hash);
            if path.exists() {
                continue;
            }
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = trellis_lock::write_atomic(&StdFs, &path, entry.bytes.as_bytes());
        }
    }
}
