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
//! kind = "scripted"              # scripted (playbooks) or claude-code
//! model = "playbook"             # recorded in the lock as the lowering's model
//! playbooks = "playbooks"        # scripted only; relative to this file
//! budget = 16000                 # context budget in tokens
//! bytes_per_token = 4            # the packer's estimate constant for this model
//! turns = 30                     # caps, enforced by the daemon
//! wall_clock_s = 600
//! cost_usd = 5.0
//! total_turns = 300              # caps over one `lower` request's jobs together
//! total_wall_clock_s = 3600      #   (each optional: no total cap without it)
//! total_cost_usd = 20.0
//!
//! [providers.claude]
//! kind = "claude-code"           # Claude Code in headless mode, in the jail (§4.9.1)
//! command = "claude"             # a path, or a name looked up on the client's PATH
//! model = "claude-sonnet-4-5"    # passed as --model (default: "default", the CLI's own)
//! pass_env = ["ANTHROPIC_API_KEY"]   # from the client's environment into the jail
//! env = { ANTHROPIC_BASE_URL = "https://api.anthropic.com" }  # fixed values
//! read_only = []                 # more paths bound read-only (e.g. a node install)
//! allow_hosts = []               # HOST:PORTs reachable beside the endpoint's
//! ```
//!
//! `trellis lower --provider claude-code` works without a file, or with one that
//! has no provider of that name: the built-in claude-code provider is the table
//! above with every key at its default. Without a file and without
//! `--provider`, `trellis lower` takes the built-in provider when a `claude` is
//! on the client's PATH, and otherwise says what it needs ([`without_file`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use trellis_diag::Diagnostic;
use trellis_service::codes::HostCode;

use crate::forwarder::Target;

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
    /// Replays `<playbooks>/<module>/<name>.jsonl` (or `<name>.<n>.jsonl`).
    Scripted(Scripted),
    /// Claude Code in headless mode, spawned in the jail (design §4.9.1).
    ClaudeCode(ClaudeCode),
}

/// A scripted provider: where its playbooks are.
#[derive(Clone, Debug, PartialEq)]
pub struct Scripted {
    pub playbooks: PathBuf,
}

/// The built-in provider's name, usable without a providers.toml.
pub const CLAUDE_CODE: &str = "claude-code";
/// The program a claude-code provider runs unless its `command` says otherwise.
pub const CLAUDE_CODE_COMMAND: &str = "claude";

/// A claude-code provider: which CLI, and what of the user's environment enters
/// its jail.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaudeCode {
    /// A path, or a bare name looked up on the client's PATH when the job starts.
    pub command: String,
    /// Variables whose values the client passes from its own environment
    /// (resolved into `env` by [`Provider::with_client_env`]).
    pub pass_env: Vec<String>,
    /// The variables the jail gets beside its own: the file's `env` table, and
    /// then the `pass_env` values the client found.
    pub env: JailEnv,
    /// More paths bound read-only into the jail.
    pub read_only: Vec<PathBuf>,
    /// What the jail's forwarder connects to beside the model endpoint.
    pub allow_hosts: Vec<Target>,
}

/// Environment values for the jail. They may be keys: `Debug` shows the names only.
#[derive(Clone, Default, PartialEq)]
pub struct JailEnv(pub BTreeMap<String, String>);

impl std::fmt::Debug for JailEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}

/// What a claude-code provider passes from the client's environment by default.
pub const DEFAULT_PASS_ENV: &[&str] = &["ANTHROPIC_API_KEY"];
/// Variables the jail sets itself (its proxy among them: the relay is the
/// jail's only way out); a provider may not name them, nor their lower-case
/// spellings.
pub const JAIL_OWNED_ENV: &[&str] = &[
    "HOME",
    "PATH",
    "TMPDIR",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
];
/// Where Claude Code sends its model requests without `ANTHROPIC_BASE_URL`.
pub const DEFAULT_ENDPOINT: &str = "https://api.anthropic.com";

/// The limits the daemon enforces on one job, never trusting the agent to,
/// and on all the jobs of one `lower` request together (`total`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Caps {
    /// Tool calls the job may make.
    pub turns: u32,
    pub wall_clock_s: u64,
    pub cost_usd: f64,
    pub total: Totals,
}

/// The caps over a request's jobs together (design §4.9, several jobs at once):
/// `None` is no total cap, the default.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    pub turns: Option<u64>,
    pub wall_clock_s: Option<u64>,
    pub cost_usd: Option<f64>,
}

pub const DEFAULT_CAPS: Caps = Caps {
    turns: 30,
    wall_clock_s: 600,
    cost_usd: 5.0,
    total: Totals {
        turns: None,
        wall_clock_s: None,
        cost_usd: None,
    },
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
    HostCode::ConfigProviders
        .diagnostic(message)
        .with_file(file.display().to_string())
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
    let empty = toml::Table::new();
    let providers = match table.get("providers") {
        Some(toml::Value::Table(providers)) => providers,
        Some(_) => return Err(problem(file, "`providers` must be a table of tables")),
        None if wanted == Some(CLAUDE_CODE) => &empty,
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
        if name == CLAUDE_CODE && !providers.contains_key(&name) {
            return Ok(builtin_claude_code());
        }
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
        "budget",
        "bytes_per_token",
        "turns",
        "wall_clock_s",
        "cost_usd",
        "total_turns",
        "total_wall_clock_s",
        "total_cost_usd",
    ];
    const SCRIPTED_KEYS: &[&str] = &["playbooks"];
    const CLAUDE_CODE_KEYS: &[&str] = &["command", "pass_env", "env", "read_only", "allow_hosts"];
    let kind_keys = match entry.get("kind") {
        Some(toml::Value::String(kind)) if kind == "scripted" => SCRIPTED_KEYS,
        Some(toml::Value::String(kind)) if kind == CLAUDE_CODE => CLAUDE_CODE_KEYS,
        _ => &[],
    };
    if let Some(key) = entry
        .keys()
        .find(|key| !KEYS.contains(&key.as_str()) && !kind_keys.contains(&key.as_str()))
    {
        let hint = if SCRIPTED_KEYS.contains(&key.as_str()) {
            " (it belongs to scripted providers)"
        } else if CLAUDE_CODE_KEYS.contains(&key.as_str()) {
            " (it belongs to claude-code providers)"
        } else {
            ""
        };
        return Err(problem(
            file,
            format!("[providers.{name}] has an unknown key `{key}`{hint}"),
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
    let dollars = |key: &str| -> Result<Option<f64>, Diagnostic> {
        match entry.get(key) {
            None => Ok(None),
            Some(toml::Value::Float(value)) if *value >= 0.0 => Ok(Some(*value)),
            Some(toml::Value::Integer(value)) if *value >= 0 => Ok(Some(*value as f64)),
            Some(_) => Err(problem(
                file,
                format!("[providers.{name}] `{key}` must be a non-negative number"),
            )),
        }
    };
    let cost = dollars("cost_usd")?.unwrap_or(DEFAULT_CAPS.cost_usd);
    let optional_whole = |key: &str| -> Result<Option<u64>, Diagnostic> {
        match entry.get(key) {
            None => Ok(None),
            Some(_) => whole(key, 0).map(Some),
        }
    };
    let total = Totals {
        turns: optional_whole("total_turns")?,
        wall_clock_s: optional_whole("total_wall_clock_s")?,
        cost_usd: dollars("total_cost_usd")?,
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
            ProviderKind::Scripted(Scripted {
                playbooks: base.join(playbooks),
            })
        }
        Some(CLAUDE_CODE) => ProviderKind::ClaudeCode(claude_code(file, name, entry)?),
        Some(other) => {
            return Err(problem(
                file,
                format!(
                    "[providers.{name}] unknown kind `{other}` (expected scripted or claude-code)"
                ),
            ));
        }
        None => return Err(problem(file, format!("[providers.{name}] needs a `kind`"))),
    };
    let default_model = match kind {
        ProviderKind::Scripted(_) => name,
        ProviderKind::ClaudeCode(_) => "default",
    };
    Ok(Provider {
        name: name.to_owned(),
        kind,
        model: text("model")?.unwrap_or(default_model).to_owned(),
        budget: whole("budget", DEFAULT_BUDGET)?,
        bytes_per_token: whole("bytes_per_token", DEFAULT_BYTES_PER_TOKEN)?,
        caps: Caps {
            turns: u32::try_from(whole("turns", u64::from(DEFAULT_CAPS.turns))?)
                .unwrap_or(u32::MAX),
            wall_clock_s: whole("wall_clock_s", DEFAULT_CAPS.wall_clock_s)?,
            cost_usd: cost,
            total,
        },
    })
}

/// A claude-code provider's own keys.
fn claude_code(file: &Path, name: &str, entry: &toml::Table) -> Result<ClaudeCode, Diagnostic> {
    let at = |message: String| problem(file, format!("[providers.{name}] {message}"));
    let command = match entry.get("command") {
        None => CLAUDE_CODE_COMMAND.to_owned(),
        Some(toml::Value::String(command)) if !command.trim().is_empty() => {
            relative_to_file(command, file)
        }
        Some(_) => return Err(at("`command` must be a path or a program name".to_owned())),
    };
    let strings = |key: &str| -> Result<Option<Vec<String>>, Diagnostic> {
        match entry.get(key) {
            None => Ok(None),
            Some(toml::Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .map(Some)
                .ok_or_else(|| at(format!("`{key}` must be an array of strings"))),
            Some(_) => Err(at(format!("`{key}` must be an array of strings"))),
        }
    };
    let pass_env = strings("pass_env")?
        .unwrap_or_else(|| DEFAULT_PASS_ENV.iter().map(|n| (*n).to_owned()).collect());
    let mut env = BTreeMap::new();
    match entry.get("env") {
        None => {}
        Some(toml::Value::Table(table)) => {
            for (key, value) in table {
                let toml::Value::String(value) = value else {
                    return Err(at(format!("`env.{key}` must be a string")));
                };
                env.insert(key.clone(), value.clone());
            }
        }
        Some(_) => return Err(at("`env` must be a table of strings".to_owned())),
    }
    for variable in pass_env.iter().chain(env.keys()) {
        if !is_variable_name(variable) {
            return Err(at(format!(
                "`{variable}` is not an environment variable name"
            )));
        }
        if JAIL_OWNED_ENV.contains(&variable.to_ascii_uppercase().as_str()) {
            return Err(at(format!(
                "`{variable}` is the jail's own (it sets {}); a provider cannot pass it",
                JAIL_OWNED_ENV.join(", ")
            )));
        }
    }
    if let Some(both) = pass_env.iter().find(|n| env.contains_key(*n)) {
        return Err(at(format!("`{both}` is in both `env` and `pass_env`")));
    }
    let read_only = strings("read_only")?
        .unwrap_or_default()
        .iter()
        .map(|path| PathBuf::from(relative_to_file(path, file)))
        .collect::<Vec<_>>();
    if let Some(relative) = read_only.iter().find(|path| path.is_relative()) {
        return Err(at(format!(
            "`read_only` paths must be absolute: {}",
            relative.display()
        )));
    }
    let allow_hosts = strings("allow_hosts")?
        .unwrap_or_default()
        .iter()
        .map(|entry| {
            Target::parse(entry).ok_or_else(|| {
                at(format!(
                    "`allow_hosts` entries are HOST:PORT (`[V6]:PORT` for an IPv6 address): {entry:?}"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(url) = env.get("ANTHROPIC_BASE_URL")
        && Target::of_url(url).is_none()
    {
        return Err(at(format!(
            "`env.ANTHROPIC_BASE_URL` must be an http:// or https:// URL: {url:?}"
        )));
    }
    Ok(ClaudeCode {
        command,
        pass_env,
        env: JailEnv(env),
        read_only,
        allow_hosts,
    })
}

impl ClaudeCode {
    /// The model endpoint the CLI will use: `ANTHROPIC_BASE_URL` as the jail
    /// gets it, else the CLI's default.
    pub fn endpoint(&self) -> &str {
        self.env
            .0
            .get("ANTHROPIC_BASE_URL")
            .map_or(DEFAULT_ENDPOINT, String::as_str)
    }

    /// What the jail's forwarder connects to: the endpoint's `HOST:PORT`, then
    /// `allow_hosts`. `Err` names an endpoint that is not an http(s) URL.
    pub fn allowed_targets(&self) -> Result<Vec<Target>, String> {
        let endpoint = self.endpoint();
        let own = Target::of_url(endpoint).ok_or_else(|| {
            format!("ANTHROPIC_BASE_URL must be an http:// or https:// URL, not {endpoint:?}")
        })?;
        let mut targets = vec![own];
        for extra in &self.allow_hosts {
            if !targets.contains(extra) {
                targets.push(extra.clone());
            }
        }
        Ok(targets)
    }
}

/// A relative path with a slash is relative to the file (as `playbooks` is); an
/// absolute path or a bare program name is kept as it is.
fn relative_to_file(path: &str, file: &Path) -> String {
    let base = file.parent().unwrap_or(Path::new("."));
    if path.contains('/') && Path::new(path).is_relative() {
        return base.join(path).display().to_string();
    }
    path.to_owned()
}

fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The provider when the user has no providers.toml at `file`: the built-in
/// claude-code provider when it was asked for by name, or when none was named
/// and `claude_on_path` (the client found a `claude` on its PATH); otherwise a
/// `config-providers` error saying what would do.
pub fn without_file(
    file: &Path,
    wanted: Option<&str>,
    claude_on_path: bool,
) -> Result<Provider, Diagnostic> {
    match wanted {
        Some(CLAUDE_CODE) => Ok(builtin_claude_code()),
        None if claude_on_path => Ok(builtin_claude_code()),
        None => Err(problem(
            file,
            format!(
                "no agent provider: {} does not exist and no `claude` is on PATH; install \
                 Claude Code (npm install -g @anthropic-ai/claude-code) so `claude` is on PATH \
                 and `trellis lower` uses it, or write providers.toml (docs/design.md §4.9)",
                file.display()
            ),
        )),
        Some(name) => Err(problem(
            file,
            format!(
                "no provider `{name}`: {} does not exist (without it only the built-in \
                 `{CLAUDE_CODE}` is known; see docs/design.md §4.9)",
                file.display()
            ),
        )),
    }
}

/// The built-in claude-code provider: `claude` on the client's PATH, the CLI's
/// default model, `ANTHROPIC_API_KEY` passed, the default caps.
pub fn builtin_claude_code() -> Provider {
    Provider {
        name: CLAUDE_CODE.to_owned(),
        kind: ProviderKind::ClaudeCode(ClaudeCode {
            command: CLAUDE_CODE_COMMAND.to_owned(),
            pass_env: DEFAULT_PASS_ENV.iter().map(|n| (*n).to_owned()).collect(),
            env: JailEnv::default(),
            read_only: Vec::new(),
            allow_hosts: Vec::new(),
        }),
        model: "default".to_owned(),
        budget: DEFAULT_BUDGET,
        bytes_per_token: DEFAULT_BYTES_PER_TOKEN,
        caps: DEFAULT_CAPS,
    }
}

impl Provider {
    /// Fills a claude-code provider's `pass_env` values from the client's
    /// environment (`lookup`); a variable the client does not have is left out.
    pub fn with_client_env(mut self, lookup: impl Fn(&str) -> Option<String>) -> Provider {
        if let ProviderKind::ClaudeCode(claude) = &mut self.kind {
            for name in &claude.pass_env {
                if let Some(value) = lookup(name) {
                    claude.env.0.insert(name.clone(), value);
                }
            }
        }
        self
    }

    /// Whether the provider's agent runs in the jail.
    pub fn needs_jail(&self) -> bool {
        matches!(self.kind, ProviderKind::ClaudeCode(_))
    }

    /// The wire form a `lower` request carries.
    pub fn to_json(&self) -> Value {
        let kind = match &self.kind {
            ProviderKind::Scripted(Scripted { playbooks }) => {
                json!({ "tag": "Scripted", "playbooks": playbooks.display().to_string() })
            }
            ProviderKind::ClaudeCode(claude) => json!({
                "tag": "ClaudeCode",
                "command": claude.command,
                "pass_env": claude.pass_env,
                "env": claude.env.0,
                "read_only": claude.read_only.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
                "allow_hosts": claude.allow_hosts.iter().map(Target::to_string).collect::<Vec<_>>(),
            }),
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
                "total": {
                    "turns": self.caps.total.turns,
                    "wall_clock_s": self.caps.total.wall_clock_s,
                    "cost_usd": self.caps.total.cost_usd,
                },
            },
        })
    }

    /// The daemon's reading of [`Provider::to_json`]; `None` for anything else.
    pub fn from_json(value: &Value) -> Option<Provider> {
        let kind = match value["kind"]["tag"].as_str()? {
            "Scripted" => ProviderKind::Scripted(Scripted {
                playbooks: PathBuf::from(value["kind"]["playbooks"].as_str()?),
            }),
            "ClaudeCode" => {
                let kind = &value["kind"];
                let strings = |key: &str| -> Option<Vec<String>> {
                    kind[key]
                        .as_array()?
                        .iter()
                        .map(|item| item.as_str().map(str::to_owned))
                        .collect()
                };
                let env = kind["env"]
                    .as_object()?
                    .iter()
                    .map(|(name, value)| Some((name.clone(), value.as_str()?.to_owned())))
                    .collect::<Option<BTreeMap<_, _>>>()?;
                ProviderKind::ClaudeCode(ClaudeCode {
                    command: kind["command"].as_str()?.to_owned(),
                    pass_env: strings("pass_env")?,
                    env: JailEnv(env),
                    read_only: strings("read_only")?
                        .into_iter()
                        .map(PathBuf::from)
                        .collect(),
                    allow_hosts: strings("allow_hosts")?
                        .iter()
                        .map(|entry| Target::parse(entry))
                        .collect::<Option<_>>()?,
                })
            }
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
                // Absent from an older client's request: no total caps.
                total: Totals {
                    turns: caps["total"]["turns"].as_u64(),
                    wall_clock_s: caps["total"]["wall_clock_s"].as_u64(),
                    cost_usd: caps["total"]["cost_usd"].as_f64(),
                },
            },
        })
    }

    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            ProviderKind::Scripted(_) => "scripted",
            ProviderKind::ClaudeCode(_) => CLAUDE_CODE,
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
            ProviderKind::Scripted(Scripted {
                playbooks: PathBuf::from("/home/u/.config/trellis/books")
            })
        );
        assert_eq!(Provider::from_json(&provider.to_json()), Some(provider));
    }

    #[test]
    fn total_caps_are_optional_and_survive_the_wire() {
        let provider = pick(
            concat!(
                "[providers.a]\nkind = \"scripted\"\nplaybooks = \"p\"\n",
                "total_turns = 40\ntotal_wall_clock_s = 90\ntotal_cost_usd = 2\n"
            ),
            None,
        )
        .expect("parses");
        assert_eq!(
            provider.caps.total,
            Totals {
                turns: Some(40),
                wall_clock_s: Some(90),
                cost_usd: Some(2.0)
            }
        );
        assert_eq!(Provider::from_json(&provider.to_json()), Some(provider));
        // An older client's request has no totals: none apply.
        let mut wire = builtin_claude_code().to_json();
        wire["caps"].as_object_mut().expect("caps").remove("total");
        assert_eq!(
            Provider::from_json(&wire).map(|p| p.caps.total),
            Some(Totals::default())
        );
        let bad = pick(
            "[providers.a]\nkind = \"scripted\"\nplaybooks = \"p\"\ntotal_turns = 0\n",
            None,
        );
        assert!(bad.is_err_and(|message| {
            message.contains("`total_turns` must be a positive whole number")
        }),);
    }

    #[test]
    fn a_claude_code_provider_takes_its_command_env_and_the_clients_keys() {
        let provider = pick(
            concat!(
                "[providers.claude]\nkind = \"claude-code\"\ncommand = \"bin/claude\"\n",
                "model = \"claude-sonnet-4-5\"\npass_env = [\"ANTHROPIC_API_KEY\", \"UNSET_HERE\"]\n",
                "env = { ANTHROPIC_BASE_URL = \"http://127.0.0.1:9\" }\nread_only = [\"/opt/node\"]\n",
                "turns = 12\nallow_hosts = [\"Proxy.example:8080\", \"127.0.0.1:9\"]\n"
            ),
            None,
        )
        .expect("parses")
        .with_client_env(|name| (name == "ANTHROPIC_API_KEY").then(|| "sk-client".to_owned()));
        let ProviderKind::ClaudeCode(claude) = &provider.kind else {
            panic!("{provider:?}");
        };
        assert_eq!(claude.command, "/home/u/.config/trellis/bin/claude");
        assert_eq!(provider.model, "claude-sonnet-4-5");
        assert_eq!(provider.caps.turns, 12);
        assert_eq!(claude.read_only, [PathBuf::from("/opt/node")]);
        let env: Vec<(&str, &str)> = claude
            .env
            .0
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            env,
            [
                ("ANTHROPIC_API_KEY", "sk-client"),
                ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
            ],
            "the client's key joins the fixed values; a variable it lacks stays out"
        );
        assert!(
            !format!("{provider:?}").contains("sk-client"),
            "Debug never shows a value"
        );
        let allowed: Vec<String> = claude
            .allowed_targets()
            .expect("an http endpoint")
            .iter()
            .map(Target::to_string)
            .collect();
        assert_eq!(
            allowed,
            ["127.0.0.1:9", "proxy.example:8080"],
            "the endpoint's HOST:PORT first, then allow_hosts, once each"
        );
        assert_eq!(Provider::from_json(&provider.to_json()), Some(provider));
    }

    #[test]
    fn claude_code_is_built_in_and_defaults_to_the_clis_own_model() {
        let builtin = pick("", Some("claude-code")).expect("no file needed");
        assert_eq!(builtin, builtin_claude_code());
        assert_eq!(builtin.model, "default");
        let ProviderKind::ClaudeCode(claude) = &builtin.kind else {
            panic!("{builtin:?}");
        };
        assert_eq!(claude.command, "claude");
        assert_eq!(claude.pass_env, ["ANTHROPIC_API_KEY"]);
        assert_eq!(
            claude.allowed_targets(),
            Ok(vec![
                Target::parse("api.anthropic.com:443").expect("a target")
            ]),
            "the default endpoint's host and port only"
        );
        let named = pick(
            "[providers.claude-code]\nkind = \"claude-code\"\nmodel = \"opus\"\n",
            Some("claude-code"),
        )
        .expect("parses");
        assert_eq!(named.model, "opus", "a file's own claude-code wins");
        let plain = pick("[providers.c]\nkind = \"claude-code\"\n", None).expect("parses");
        assert_eq!(plain.model, "default");
        assert!(
            plain.needs_jail()
                && !pick(
                    "[providers.a]\nkind = \"scripted\"\nplaybooks = \"p\"\n",
                    None
                )
                .expect("parses")
                .needs_jail()
        );
    }

    #[test]
    fn without_a_file_claude_on_path_is_the_default_and_its_absence_says_what_to_do() {
        let file = Path::new("/home/u/.config/trellis/providers.toml");
        let message = |result: Result<Provider, Diagnostic>| {
            let error = result.expect_err("no provider");
            assert_eq!(error.code, "config-providers");
            error.message
        };
        assert_eq!(
            without_file(file, None, true).expect("the built-in one"),
            builtin_claude_code()
        );
        assert_eq!(
            without_file(file, Some(CLAUDE_CODE), false).expect("named, found when it runs"),
            builtin_claude_code()
        );
        let missing = message(without_file(file, None, false));
        assert!(
            missing.contains("/home/u/.config/trellis/providers.toml does not exist")
                && missing.contains("no `claude` is on PATH")
                && missing.contains("npm install -g @anthropic-ai/claude-code"),
            "{missing}"
        );
        let other = message(without_file(file, Some("fixture"), true));
        assert!(other.contains("no provider `fixture`"), "{other}");
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
            (
                "[providers.a]\nkind = \"scripted\"\nplaybooks = \"p\"\ncommand = \"claude\"\n",
                "unknown key `command` (it belongs to claude-code providers)",
            ),
            (
                "[providers.a]\nkind = \"claude-code\"\nplaybooks = \"p\"\n",
                "unknown key `playbooks` (it belongs to scripted providers)",
            ),
            (
                "[providers.a]\nkind = \"claude-code\"\npass_env = [\"HOME\"]\n",
                "`HOME` is the jail's own",
            ),
            (
                "[providers.a]\nkind = \"claude-code\"\nenv = { \"A-B\" = \"x\" }\n",
                "`A-B` is not an environment variable name",
            ),
            (
                "[providers.a]\nkind = \"claude-code\"\nenv = { K = 1 }\n",
                "`env.K` must be a string",
            ),
            (
                "[providers.a]\nkind = \"claude-code\"\npass_env = [\"K\"]\nenv = { K = \"v\" }\n",
                "`K` is in both `env` and `pass_env`",
            ),
            (
                "[providers.a]\nkind = \"claude-code\"\nread_only = [\"node\"]\n",
                "`read_only` paths must be absolute",
            ),
            (
                "[providers.a]\nkind = \"claude-code\"\ncommand = \"\"\n",
                "`command` must be a path or a program name",
            ),
            (
                "[providers.a]\nkind = \"claude-code\"\nenv = { https_proxy = \"http://p:1\" }\n",
                "`https_proxy` is the jail's own",
            ),
            (
                "[providers.a]\nkind = \"claude-code\"\nallow_hosts = [\"example.com\"]\n",
                "`allow_hosts` entries are HOST:PORT",
            ),
            (
                "[providers.a]\nkind = \"claude-code\"\nenv = { ANTHROPIC_BASE_URL = \"api.anthropic.com\" }\n",
                "must be an http:// or https:// URL",
            ),
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
