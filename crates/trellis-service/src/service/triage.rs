//! The triage sweep (design §4.9, design §4.3, impl plan §9.4): a decision entry
//! changed, and a lowering that relied on it is flagged. A triage job shows an
//! agent the entry as it was and as it is, the definition's spec and its Soil;
//! the agent's final answer is a verdict. `conforms` re-stamps that one edge (as
//! `decisions editorial` would, for this definition only); anything else leaves
//! it flagged, and the verdict is kept under `.trellis/triage/` so `status` can
//! say why.
//!
//! To show what an entry said when a lowering relied on it, every writer
//! remembers the bytes of each decision entry by hash (`decision_store`).

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use trellis_db::{
    Item, LockState, Workspace, decision_entries, editorial_lock, lock_state, root_index,
    scope_decisions,
};
use trellis_diag::Diagnostic;
use trellis_hash::Digest;
use trellis_lock::{Lock, Scope, StdFs};

use super::Service;
use crate::codes::HostCode;

/// One flagged reliance: `def` relied on `label` (in `scope`) at `relied_on`.
#[derive(Clone, Debug, PartialEq)]
pub struct Flagged {
    pub def: String,
    pub scope: Scope,
    pub label: String,
    pub relied_on: Digest,
}

/// Where non-conforming verdicts are kept, root-relative.
const VERDICTS: &str = ".trellis/triage";

impl Service {
    /// Every flagged reliance of the root, or those on `label`.
    pub fn flagged_reliances(&self, label: Option<&str>) -> Vec<Flagged> {
        let db = self.database();
        let mut out = Vec::new();
        for def in crate::order::functions(db) {
            let Some((module, name)) = trellis_db::split_definition_name(&def) else {
                continue;
            };
            let LockState::Present(Lock::Function(lock)) = lock_state(db, module, name) else {
                continue;
            };
            let Some(lowering) = &lock.lowering else {
                continue;
            };
            let current = scope_decisions(db, module);
            for edge in &lowering.decisions.applied {
                let now = current.entries.get(&(edge.scope, edge.label.clone()));
                if now != Some(&edge.hash) && label.is_none_or(|l| l == edge.label) {
                    out.push(Flagged {
                        def: def.clone(),
                        scope: edge.scope,
                        label: edge.label.clone(),
                        relied_on: edge.hash,
                    });
                }
            }
        }
        out
    }

    /// A triage job for one flagged reliance; its id.
    pub fn start_triage(
        &mut self,
        flagged: &Flagged,
        path: &str,
        max_tool_calls: u32,
    ) -> Result<String, Vec<Diagnostic>> {
        let root = self.root().to_owned();
        let db = self.database();
        let Some((module, name)) = trellis_db::split_definition_name(&flagged.def) else {
            return Err(vec![
                HostCode::UnknownDefinition.diagnostic(flagged.def.clone()),
            ]);
        };
        let item = Item::new(db, module.to_owned(), name.to_owned());
        let spec = trellis_db::spec_file(db, item)
            .ok_or_else(|| vec![HostCode::UnknownDefinition.diagnostic(flagged.def.clone())])?;
        let spec_text = spec.text(db).to_string();
        let soil =
            std::fs::read_to_string(root.join(format!("{module}/{name}.soil"))).unwrap_or_default();
        let now = current_entry(self, module, flagged.scope, &flagged.label);
        let then = super::decision_store::remembered(&root, &flagged.relied_on);
        let scope = scope_name(flagged.scope);
        let manifest = json!({
            "kind": "triage",
            "definition": format!("{module}/{name}"),
            "decision": { "scope": scope, "label": flagged.label },
            "relied_on": flagged.relied_on.to_string(),
            "now": now.as_ref().map(|(hash, _)| hash.to_string()),
            "answer": "end with a final message whose first word is `conforms` (the Soil still follows the entry as it is now) or `nonconforming`, then one line saying why",
        });
        let decision = decision_md(
            &flagged.label,
            scope,
            then.as_deref(),
            now.as_ref().map(|(_, text)| text.as_str()),
        );
        let bundle = trellis_context::ContextBundle::assembled(
            format!("{module}/{name}"),
            vec![
                ("bundle.json".to_owned(), format!("{manifest}\n")),
                ("decision.md".to_owned(), decision),
                ("spec.md".to_owned(), spec_text),
                ("lowering.soil".to_owned(), soil),
            ],
        );
        let hashes = trellis_db::spec_hashes(db, spec);
        let hashes = json!({
            "formal": hashes.formal.to_string(),
            "test": hashes.test.to_string(),
            "prose": hashes.prose.to_string(),
        });
        let record = super::jobs::insert(
            self,
            module,
            name,
            Arc::new(bundle),
            hashes,
            path.to_owned(),
            true,
        );
        let id = record["job"].as_str().unwrap_or_default().to_owned();
        if let Some(job) = self.jobs.get_mut(&id) {
            job.max_tool_calls = Some(max_tool_calls);
        }
        Ok(id)
    }

    /// Applies the agent's verdict (its final text): `Ok(true)` when it conforms
    /// and the edge was re-stamped, `Ok(false)` when it stays flagged.
    pub fn apply_triage(&mut self, flagged: &Flagged, answer: &str) -> Result<bool, Diagnostic> {
        let root = self.root().to_owned();
        let (module, name) = trellis_db::split_definition_name(&flagged.def)
            .map(|(m, n)| (m.to_owned(), n.to_owned()))
            .unwrap_or_default();
        let verdict_file = root.join(format!("{VERDICTS}/{module}/{name}.json"));
        let conforms = answer.split_whitespace().next().is_some_and(|word| {
            word.trim_matches(|c: char| !c.is_alphanumeric())
                .eq_ignore_ascii_case("conforms")
        });
        if !conforms {
            let record = json!({
                "label": flagged.label,
                "scope": scope_name(flagged.scope),
                "verdict": "nonconforming",
                "answer": answer,
                "at": crate::flog::rfc3339_now(),
            });
            if let Some(dir) = verdict_file.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            trellis_lock::write_atomic(&StdFs, &verdict_file, format!("{record}\n").as_bytes())
                .map_err(|error| {
                    HostCode::RootUnreadable
                        .diagnostic(format!("cannot write {}: {error}", verdict_file.display()))
                })?;
            return Ok(false);
        }
        let _writer = super::writer_lock(&root)?;
        let db = self.database();
        let item = Item::new(db, module.clone(), name.clone());
        let LockState::Present(Lock::Function(lock)) = lock_state(db, &module, &name) else {
            return Err(HostCode::UnknownDefinition
                .diagnostic(format!("{} has no lock to re-stamp", flagged.def)));
        };
        let Some(stamped) = editorial_lock(db, item, lock, flagged.scope, &flagged.label) else {
            return Ok(false);
        };
        super::locks::save(
            &root,
            &format!("{module}/{name}.lock"),
            &Lock::Function(stamped),
        )?;
        super::locks::rewrite_manifest(self)?;
        match std::fs::remove_file(&verdict_file) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                eprintln!(
                    "trellis daemon: cannot remove {}: {error}",
                    verdict_file.display()
                );
            }
            _ => {}
        }
        Ok(true)
    }
}

/// The nonconforming verdict recorded for `module::name`, if any (display only).
pub(crate) fn recorded_verdict(
    root: &Path,
    module: &str,
    name: &str,
) -> Option<crate::protocol::TriageVerdict> {
    let text =
        std::fs::read_to_string(root.join(format!("{VERDICTS}/{module}/{name}.json"))).ok()?;
    serde_json::from_str(&text).ok()
}

fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::Project => "project",
        Scope::Module => "module",
    }
}

/// The entry's current hash and bytes, if it still exists.
fn current_entry(
    service: &Service,
    module: &str,
    scope: Scope,
    label: &str,
) -> Option<(Digest, String)> {
    let db = service.database();
    let index = root_index(db, Workspace::get(db));
    let file = match scope {
        Scope::Project => index.project?,
        Scope::Module => index.module(module)?.spec?,
    };
    let entry = decision_entries(db, file)
        .iter()
        .find(|entry| entry.label == label)?
        .clone();
    let hash = trellis_spec::DecisionEntryPart {
        label: entry.label.clone(),
        bytes: entry.bytes.clone(),
    }
    .hash();
    Some((hash, entry.bytes))
}

/// `decision.md`: the entry then and now, and their line diff.
fn decision_md(label: &str, scope: &str, then: Option<&str>, now: Option<&str>) -> String {
    let mut out = format!(
        "# Decision `{label}` ({scope})\n\nThe lowering relied on this entry; it has changed since. Does the Soil in\n`lowering.soil` still follow the entry as it is now?\n\n## Then\n\n"
    );
    out.push_str(then.unwrap_or("(not remembered in this root: only its hash is recorded)\n"));
    out.push_str("\n## Now\n\n");
    out.push_str(now.unwrap_or("(removed)\n"));
    if let (Some(then), Some(now)) = (then, now) {
        out.push_str("\n## Diff\n\n```diff\n");
        for line in then.lines().filter(|line| !now.lines().any(|l| l == *line)) {
            out.push_str(&format!("-{line}\n"));
        }
        for line in now.lines().filter(|line| !then.lines().any(|l| l == *line)) {
            out.push_str(&format!("+{line}\n"));
        }
        out.push_str("```\n");
    }
    out
}
