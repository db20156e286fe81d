//! What the lowering tests share: the scripted provider's configuration and
//! the reading of `trellis lower --json`.

use std::path::Path;

use serde_json::Value;

use super::{Run, TempDir};

/// Writes `config`'s `trellis/providers.toml`: the scripted provider `fixture`
/// (model `playbook-1`) replaying the playbooks under `playbooks`, then `extra`.
pub fn write_scripted_provider(config: &TempDir, playbooks: &Path, extra: &str) {
    let file = config.path().join("trellis/providers.toml");
    std::fs::create_dir_all(file.parent().expect("parent")).expect("config dir");
    std::fs::write(
        &file,
        format!(
            "[providers.fixture]\nkind = \"scripted\"\nmodel = \"playbook-1\"\nplaybooks = \"{}\"\n{extra}",
            playbooks.display()
        ),
    )
    .expect("providers.toml");
}

/// The events `trellis lower --json` printed (every line but the summary), and
/// the summary.
pub fn lower_output(run: &Run) -> (Vec<Value>, Value) {
    let mut events = Vec::new();
    let mut summary = Value::Null;
    for line in run.stdout.lines() {
        let value: Value = serde_json::from_str(line).expect("lower --json prints JSON lines");
        if value.get("summary").is_some() {
            summary = value["summary"].clone();
        } else {
            events.push(value);
        }
    }
    (events, summary)
}
