//! `providers.toml` (design §4.9): the user's agent providers, read by the client
//! from `$XDG_CONFIG_HOME/trellis/providers.toml` (else
//! `~/.config/trellis/providers.toml`) — user-level, never in a repository — and
//! sent with each `lower` request, so what a job runs never depends on the
//! environment the daemon was spawned in.
//!
//! ```toml
//! default = "fixture"            # the provider `trellis lower` uses
//!
//! [providers.fixture]
//! kind = "scripted"              # scripted (playbooks); claude-code is not built yet
//! model = "playbook"             # recorded in the lock as the lowering's model
//! playbooks = "playbooks"        # scripted only; relative to this file
//! budget = 16000                 # context budget in tokens
//! bytes_per_token = 4            # the packer's estimate constant for this model
//! turns = 30                     # caps, enforced by the daemon
//! wall_clock_s = 600
//! cost_usd = 5.0
//! ```

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use trellis_diag::Diagnostic;

/// One provider, resolved: what a `lower` request carries.
#[derive(Clone, Debug, PartialEq)]
pub struct Provider {
    pub name: String,
    pub kind: ProviderKind,
    pub model: String,
    pub budget: u64,
    pub bytes_per_token: u64,
    pub caps: Caps,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ProviderKind {
    /// Replays `<playbooks>/<module>/<name>.jsonl` (or `<name>.<attempt>.jsonl`).
    Scripted { playbooks: PathBuf },
}

/// The limits the daemon enforces on one job, never trusting the agent to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Caps {
    /// Tool calls the job may make.
    pub turns: u32,
    pub wall_clock_s: u64,
    pub cost_usd: f64,
}

pub const DEFAULT_CAPS: Caps = Caps {
    turns: 30,
    wall_clock_s: 600,
    cost_usd: 5.0,
};
pub const DEFAULT_BUDGET: u64 = 16_000;
pub const DEFAULT_BYTES_PER_TOKEN: u64 = 4;

/// Where the client looks for the file.
pub fn config_path(xdg_config_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    match (xdg_config_home.filter(|dir| !dir.is_empty()), home) {
        (Some(dir), _) => Some(Path::new(dir).join("trellis/providers.toml")),
        (None, Some(home)) => Some(Path::new(home).join(".config/trellis/providers.toml")),
        (None, None) => None,
    }
}

fn problem(file: &Path, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new("config-providers", message).with_file(file.display().to_string())
}

/// Parses the file's text and picks `wanted` (or the file's `default`).
pub fn select(file: &Path, text: &str, wanted: Option<&str>) -> Result<Provider, Diagnostic> {
    let table: toml::Table = text
        .parse()
        .map_err(|error: toml::de::Error| problem(file, format!("not valid TOML: {error}")))?;
    for key in table.keys() {
        if key != "default" && key != "providers" {
            return Err(problem(
                file,
                format!("unknown key `{key}` (expected `default` and [providers.NAME] tables)"),
            ));
        }
    }
    let providers = match table.get("providers") {
        Some(toml::Value::Table(providers)) => providers,
        Some(_) => return Err(problem(file, "`providers` must be a table of tables")),
        None => return Err(problem(file, "no [providers.NAME] table")),
    };
    let name = match (wanted, table.get("default")) {
        (Some(name), _) => name.to_owned(),
        (None, Some(toml::Value::String(name))) => name.clone(),
        (None, Some(_)) => return Err(problem(file, "`default` must be a provider name")),
        (None, None) if providers.len() == 1 => {
            providers.keys().next().cloned().unwrap_or_default()
        }
        (None, None) => {
            return Err(problem(
                file,
                "several providers and no `default`: name one with --provider",
            ));
        }
    };
    let Some(toml::Value::Table(entry)) = providers.get(&name) else {
        let known: Vec<&str> = providers.keys().map(String::as_str).collect();
        return Err(problem(
            file,
            format!("no provider `{name}` (the file has: {})", known.join(", ")),
        ));
    };
    provider(file, &name, entry)
}

fn provider(file: &Path, name: &str, entry: &toml::Table) -> Result<Provider, Diagnostic> {
    const KEYS: &[&str] = &[
        "kind",
        "model",
        "playbooks",
        "budget",
        "bytes_per_token",
        "turns",
        "wall_clock_s",
        "cost_usd",
    ];
    if let Some(key) = entry.keys().find(|key| !KEYS.contains(&key.as_str())) {
        return Err(problem(
            file,
            format!("[providers.{name}] has an unknown key `{key}`"),
        ));
    }
    let text = |key: &str| -> Result<Option<&str>, Diagnostic> {
        match entry.get(key) {
            None => Ok(None),
            Some(toml::Value::String(value)) => Ok(Some(value)),
            Some(_) => Err(problem(
                file,
                format!("[providers.{name}] `{key}` must be a string"),
            )),
        }
    };
    let whole = |key: &str, default: u64| -> Result<u64, Diagnostic> {
        match entry.get(key) {
            None => Ok(default),
            Some(toml::Value::Integer(value)) if *value > 0 => Ok(*value as u64),
            Some(_) => Err(problem(
                file,
                format!("[providers.{name}] `{key}` must be a positive whole number"),
            )),
        }
    };
    let cost = match entry.get("cost_usd") {
        None => DEFAULT_CAPS.cost_usd,
        Some(toml::Value::Float(value)) if *value >= 0.0 => *value,
        Some(toml::Value::Integer(value)) if *value >= 0 => *value as f64,
        Some(_) => {
            return Err(problem(
                file,
                format!("[providers.{name}] `cost_usd` must be a non-negative number"),
            ));
        }
    };
    let kind = match text("kind")? {
        Some("scripted") => {
            let playbooks = text("playbooks")?.ok_or_else(|| {
                problem(
                    file,
                    format!("[providers.{name}] a scripted provider needs `playbooks`"),
                )
            })?;
            let base = file.parent().unwrap_or(Path::new("."));
            ProviderKind::Scripted {
                playbooks: base.join(playbooks),
            }
        }
        Some("claude-code") => {
            return Err(problem(
                file,
                format!("[providers.{name}] the claude-code provider is not built yet"),
            ));
        }
        Some(other) => {
            return Err(problem(
                file,
                format!("[providers.{name}] unknown kind `{other}` (expected scripted)"),
            ));
        }
        None => return Err(problem(file, format!("[providers.{name}] needs a `kind`"))),
    };
    Ok(Provider {
        name: name.to_owned(),
        kind,
        model: text("model")?.unwrap_or(name).to_owned(),
        budget: whole("budget", DEFAULT_BUDGET)?,
        bytes_per_token: whole("bytes_per_token", DEFAULT_BYTES_PER_TOKEN)?,
        caps: Caps {
            turns: u32::try_from(whole("turns", u64::from(DEFAULT_CAPS.turns))?)
                .unwrap_or(u32::MAX),
            wall_clock_s: whole("wall_clock_s", DEFAULT_CAPS.wall_clock_s)?,
            cost_usd: cost,
        },
    })
}

impl Provider {
    /// The wire form a `lower` request carries.
    pub fn to_json(&self) -> Value {
        let kind = match &self.kind {
            ProviderKind::Scripted { playbooks } => {
                json!({ "tag": "Scripted", "playbooks": playbooks.display().to_string() })
            }
        };
        json!({
            "name": self.name,
            "kind": kind,
            "model": self.model,
            "budget": self.budget,
            "bytes_per_token": self.bytes_per_token,
            "caps": {
                "turns": self.caps.turns,
                "wall_clock_s": self.caps.wall_clock_s,
                "cost_usd": self.caps.cost_usd,
            },
        })
    }

    /// The daemon's reading of [`Provider::to_json`]; `None` for anything else.
    pub fn from_json(value: &Value) -> Option<Provider> {
        let kind = match value["kind"]["tag"].as_str()? {
            "Scripted" => ProviderKind::Scripted {
                playbooks: PathBuf::from(value["kind"]["playbooks"].as_str()?),
            },
            _ => return None,
        };
        let caps = &value["caps"];
        Some(Provider {
            name: value["name"].as_str()?.to_owned(),
            kind,
            model: value["model"].as_str()?.to_owned(),
            budget: value["budget"].as_u64()?,
            bytes_per_token: value["bytes_per_token"].as_u64().filter(|&b| b > 0)?,
            caps: Caps {
                turns: u32::try_from(caps["turns"].as_u64()?).ok()?,
                wall_clock_s: caps["wall_clock_s"].as_u64()?,
                cost_usd: caps["cost_usd"].as_f64()?,
            },
        })
    }

    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            ProviderKind::Scripted { .. } => "scripted",
        }
    }

    /// The packer's budget: the provider's tokens at its own bytes-per-token,
    /// expressed in the packer's bytes/4 tokens (trellis-daemon §5).
    pub fn packer_budget(&self) -> u64 {
        self.budget.saturating_mul(self.bytes_per_token) / 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick(text: &str, wanted: Option<&str>) -> Result<Provider, String> {
        select(
            Path::new("/home/u/.config/trellis/providers.toml"),
            text,
            wanted,
        )
        .map_err(|d| format!("{}: {}", d.code, d.message))
    }

    #[test]
    fn a_scripted_provider_resolves_with_defaults_and_relative_playbooks() {
        let provider = pick(
            "[providers.fixture]\nkind = \"scripted\"\nplaybooks = \"books\"\n",
            None,
        )
        .expect("parses");
        assert_eq!(provider.model, "fixture");
        assert_eq!(provider.caps, DEFAULT_CAPS);
        assert_eq!(
            provider.kind,
            ProviderKind::Scripted {
                playbooks: PathBuf::from("/home/u/.config/trellis/books")
            }
        );
        assert_eq!(Provider::from_json(&provider.to_json()), Some(provider));
    }

    #[test]
    fn broken_files_are_config_providers_errors_saying_what_is_wrong() {
        let cases = [
            ("default = ", "not valid TOML"),
            (
                "[providers.a]\nkind = \"scripted\"\nplaybooks = \"p\"\nturns = 0\n",
                "`turns` must be a positive whole number",
            ),
            ("[providers.a]\nkind = \"robot\"\n", "unknown kind `robot`"),
            ("[providers.a]\nkind = \"scripted\"\n", "needs `playbooks`"),
            (
                "[providers.a]\nkind = \"scripted\"\nplaybooks = \"p\"\ncolour = 1\n",
                "unknown key `colour`",
            ),
            (
                "[providers.a]\nkind=\"scripted\"\nplaybooks=\"p\"\n[providers.b]\nkind=\"scripted\"\nplaybooks=\"p\"\n",
                "no `default`",
            ),
            ("extra = 1\n", "unknown key `extra`"),
        ];
        for (text, expected) in cases {
            let error = pick(text, None).expect_err(text);
            assert!(error.starts_with("config-providers: "), "{error}");
            assert!(error.contains(expected), "{text:?} → {error}");
        }
        let error = pick(
            "[providers.a]\nkind=\"scripted\"\nplaybooks=\"p\"\n",
            Some("b"),
        )
        .expect_err("unknown name");
        assert!(
            error.contains("no provider `b` (the file has: a)"),
            "{error}"
        );
    }
}
