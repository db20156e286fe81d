//! `soil.toml` (soil-toml §2): the toolchain pin, the tag vocabulary, the
//! entrypoint and the shared result cache (soil-toml §6). Parsing is a pure function of the text; the database memoizes it.

use std::collections::BTreeMap;

use serde::Deserialize;
use trellis_diag::{Diagnostic, LineIndex, TextRange};

use crate::db::Db;
use crate::files::Workspace;

/// The parsed `soil.toml`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    pub toolchain: Toolchain,
    /// Tag name → description, in name order.
    pub tags: BTreeMap<String, String>,
    pub entrypoint: Option<String>,
    /// The shared result cache (soil-toml §6), when the root names one.
    pub cache: Option<CacheConfig>,
}

/// The `[cache]` table (soil-toml §6): where the shared result cache is and who
/// may write to it. The values are checked for form here; the host connects.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CacheConfig {
    pub url: String,
    pub write: CacheWrite,
    /// `ed25519:` + 64 hex digits each.
    pub trusted_keys: Vec<String>,
    /// One request's deadline, in milliseconds.
    pub timeout_ms: u64,
}

/// Which runs may write to the shared result cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CacheWrite {
    /// Runs with `CI` set to true (the default).
    Ci,
    Always,
    Never,
}

impl CacheWrite {
    pub fn parse(word: &str) -> Option<CacheWrite> {
        match word {
            "ci" => Some(CacheWrite::Ci),
            "always" => Some(CacheWrite::Always),
            "never" => Some(CacheWrite::Never),
            _ => None,
        }
    }
}

/// The default request deadline of the shared result cache.
pub const CACHE_TIMEOUT_MS: u64 = 2000;

/// The `[toolchain]` pin (soil-toml §2): the versions a root was verified with.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Toolchain {
    pub trellis: String,
    pub soil0_cli: String,
    /// The skill hash (soil-toml §2.1); optional until the skill generator lands.
    pub skill: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    entrypoint: Option<String>,
    toolchain: RawToolchain,
    #[serde(default)]
    tags: BTreeMap<String, String>,
    cache: Option<RawCache>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCache {
    url: String,
    write: Option<String>,
    #[serde(default)]
    trusted_keys: Vec<String>,
    timeout_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToolchain {
    trellis: String,
    soil0_cli: String,
    skill: Option<String>,
}

/// The file name every root has at its top.
pub const CONFIG_FILE: &str = "soil.toml";

/// Parses `soil.toml`. Errors carry the code `config-invalid` and the span the
/// TOML reader points at.
pub fn parse_config(text: &str) -> Result<Config, Diagnostic> {
    let raw: RawConfig = toml::from_str(text).map_err(|error| {
        let mut diagnostic = Diagnostic::new("config-invalid", error.message().trim().to_owned())
            .with_file(CONFIG_FILE);
        if let Some(range) = error.span() {
            let range = TextRange::new(range.start as u32, range.end as u32);
            diagnostic = diagnostic.with_span(LineIndex::new(text).span(text, range));
        }
        if lacks_pin(text) {
            diagnostic = diagnostic.with_note(
                "the [toolchain] pin is missing or incomplete: `trellis toolchain update` \
                 writes it for the running toolchain",
            );
        }
        diagnostic
    })?;
    for tag in raw.tags.keys() {
        if !is_tag_name(tag) {
            return Err(Diagnostic::new(
                "config-invalid",
                format!("tag `{tag}` is not a lower-case kebab-case name"),
            )
            .with_file(CONFIG_FILE));
        }
    }
    let cache = raw.cache.map(cache_config).transpose()?;
    Ok(Config {
        cache,
        toolchain: Toolchain {
            trellis: raw.toolchain.trellis,
            soil0_cli: raw.toolchain.soil0_cli,
            skill: raw.toolchain.skill,
        },
        tags: raw.tags,
        entrypoint: raw.entrypoint,
    })
}

/// Whether a `soil.toml` that is valid TOML lacks the `[toolchain]` table or
/// one of its required keys: the case `trellis toolchain update` repairs.
fn lacks_pin(text: &str) -> bool {
    let Ok(table) = toml::from_str::<toml::Table>(text) else {
        return false;
    };
    match table.get("toolchain").and_then(toml::Value::as_table) {
        Some(pin) => !(pin.contains_key("trellis") && pin.contains_key("soil0_cli")),
        None => true,
    }
}

fn cache_config(raw: RawCache) -> Result<CacheConfig, Diagnostic> {
    let invalid = |message: String| {
        Diagnostic::new("config-invalid", format!("[cache] {message}")).with_file(CONFIG_FILE)
    };
    if !raw.url.starts_with("http://") && !raw.url.starts_with("https://") {
        return Err(invalid(format!(
            "`url` must be an http:// URL, not `{}`",
            raw.url
        )));
    }
    let write = match raw.write.as_deref() {
        None => CacheWrite::Ci,
        Some(word) => CacheWrite::parse(word).ok_or_else(|| {
            invalid(format!(
                "`write` is `ci`, `always` or `never`, not `{word}`"
            ))
        })?,
    };
    for key in &raw.trusted_keys {
        let hex = key.strip_prefix("ed25519:").unwrap_or_default();
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(invalid(format!(
                "trusted key `{key}` is not `ed25519:` + 64 hex digits (trellis cache keygen)"
            )));
        }
    }
    let timeout_ms = raw.timeout_ms.unwrap_or(CACHE_TIMEOUT_MS);
    if !(1..=60_000).contains(&timeout_ms) {
        return Err(invalid(format!(
            "`timeout_ms` is between 1 and 60000, not {timeout_ms}"
        )));
    }
    Ok(CacheConfig {
        url: raw.url,
        write,
        trusted_keys: raw.trusted_keys,
        timeout_ms,
    })
}

fn is_tag_name(tag: &str) -> bool {
    !tag.is_empty()
        && tag
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// The root's configuration, memoized; it changes rarely (HIGH durability).
#[salsa::tracked(returns(ref))]
pub fn root_config(db: &dyn Db, workspace: Workspace) -> Result<Config, Diagnostic> {
    parse_config(workspace.config_text(db))
}

/// The tag names `soil.toml` declares (none when it does not parse), read
/// through [`tag_declared`], so editing a tag's description is cut off here
/// instead of re-checking every spec (design §7.3).
#[salsa::tracked(returns(ref))]
pub fn declared_tags(db: &dyn Db) -> Vec<String> {
    match root_config(db, Workspace::get(db)) {
        Ok(config) => config.tags.keys().cloned().collect(),
        Err(_) => Vec::new(),
    }
}

/// A tag's name, interned so that each tag can be asked about alone.
#[salsa::interned(debug)]
pub struct TagName<'db> {
    #[returns(ref)]
    pub text: String,
}

/// Whether `soil.toml` declares `tag`: what one spec's tag check reads, so a
/// tag declared or withdrawn re-checks the specs naming it and no other.
#[salsa::tracked(returns(copy))]
pub fn tag_declared<'db>(db: &'db dyn Db, tag: TagName<'db>) -> bool {
    declared_tags(db)
        .iter()
        .any(|declared| declared == tag.text(db))
}

/// The pinned soil0 major version (`0` when `soil.toml` does not parse): the
/// one part of the configuration hashes read.
#[salsa::tracked(returns(ref))]
pub fn soil0_major(db: &dyn Db) -> String {
    soil0_major_of(root_config(db, Workspace::get(db)).as_ref().ok())
}

/// [`soil0_major`] of a parsed configuration, or of none.
pub(crate) fn soil0_major_of(config: Option<&Config>) -> String {
    let version = config.map_or("0", |config| config.toolchain.soil0_cli.as_str());
    version.split('.').next().unwrap_or("0").to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_v1_subset() {
        let config = parse_config(
            "entrypoint = \"csvstats::median\"\n[toolchain]\ntrellis = \"0.1.0\"\nsoil0_cli = \"0.1.0\"\n[tags]\nstats = \"numbers\"\n",
        )
        .expect("valid");
        assert_eq!(config.toolchain.trellis, "0.1.0");
        assert_eq!(config.tags.keys().collect::<Vec<_>>(), ["stats"]);
        assert_eq!(config.entrypoint.as_deref(), Some("csvstats::median"));
    }

    #[test]
    fn the_cache_table_has_defaults_and_refuses_bad_values() {
        const PIN: &str = "[toolchain]\ntrellis = \"0.1.0\"\nsoil0_cli = \"0.1.0\"\n";
        assert_eq!(parse_config(PIN).expect("valid").cache, None);
        let config =
            parse_config(&format!("{PIN}[cache]\nurl = \"http://c:9092/t\"\n")).expect("valid");
        assert_eq!(
            config.cache,
            Some(CacheConfig {
                url: "http://c:9092/t".to_owned(),
                write: CacheWrite::Ci,
                trusted_keys: Vec::new(),
                timeout_ms: CACHE_TIMEOUT_MS,
            })
        );
        for (table, expected) in [
            ("url = \"ftp://c\"", "`url` must be an http:// URL"),
            (
                "url = \"http://c\"\nwrite = \"sometimes\"",
                "`write` is `ci`, `always` or `never`",
            ),
            (
                "url = \"http://c\"\ntrusted_keys = [\"rsa:1\"]",
                "is not `ed25519:` + 64 hex",
            ),
            (
                "url = \"http://c\"\ntimeout_ms = 0",
                "`timeout_ms` is between",
            ),
            ("url = \"http://c\"\nport = 1", "unknown field"),
            ("write = \"ci\"", "missing field `url`"),
        ] {
            let error = parse_config(&format!("{PIN}[cache]\n{table}\n")).expect_err(table);
            assert_eq!(error.code, "config-invalid");
            assert!(
                error.message.contains(expected),
                "{table}: {}",
                error.message
            );
        }
    }

    #[test]
    fn unknown_keys_are_refused_with_a_location() {
        let error = parse_config(
            "[toolchain]\ntrellis = \"0.1.0\"\nsoil0_cli = \"0.1.0\"\nnightly = true\n",
        )
        .expect_err("unknown key");
        assert_eq!(error.code, "config-invalid");
        let span = error.span.expect("span");
        assert_eq!((span.start.line, span.start.column), (4, 1));
        assert!(error.notes.is_empty(), "{error:?}");
    }

    #[test]
    fn a_missing_pin_names_the_command_that_writes_it() {
        for text in ["[tags]\n", "[toolchain]\ntrellis = \"0.1.0\"\n"] {
            let error = parse_config(text).expect_err("no pin");
            assert_eq!(error.code, "config-invalid");
            assert!(
                error.notes[0].message.contains("trellis toolchain update"),
                "{error:?}"
            );
        }
    }
}
