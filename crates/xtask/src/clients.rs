//! The pinned clients (`test-data/clients.toml`): what each is, where it is
//! installed, and whether the installed copy is the pinned one. Reading never
//! installs anything; [`crate::provision`] does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

/// The command that installs every missing client, as error messages name it.
pub const PROVISION: &str = "cargo xtask provision";

/// The workspace root (two levels above this crate).
pub fn workspace() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    path.canonicalize().unwrap_or(path)
}

/// Where the clients are installed: `.ci/cache/` (gitignored).
pub fn cache() -> PathBuf {
    workspace().join(".ci/cache")
}

/// One pinned client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    /// Its name in the pin file (`mcp-python`, `claude-code`, …).
    pub name: String,
    pub kind: Kind,
}

/// How a client is installed, with its pins.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Kind {
    /// Python packages, `name==version`, installed with `pip --target`.
    Pip { dir: String, packages: Vec<String> },
    /// npm packages, `name@version`, installed with `npm --prefix`.
    Npm {
        dir: String,
        packages: Vec<String>,
        /// A program under the directory and its arguments, whose output
        /// must start with `expect` (a package whose install fetches a binary).
        #[serde(default)]
        probe: Vec<String>,
        #[serde(default)]
        expect: String,
    },
    /// A program on `PATH`, from the distribution's package.
    System { program: String, package: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PinFile {
    clients: BTreeMap<String, Kind>,
}

/// Every pinned client, read from `test-data/clients.toml`.
pub fn load() -> Result<Vec<Client>, String> {
    let path = workspace().join("test-data/clients.toml");
    let text = std::fs::read_to_string(&path)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    parse(&text).map_err(|error| format!("{}: {error}", path.display()))
}

/// Parses the pin file's text.
pub fn parse(text: &str) -> Result<Vec<Client>, String> {
    let file: PinFile = toml::from_str(text).map_err(|error| error.to_string())?;
    let clients: Vec<Client> = file
        .clients
        .into_iter()
        .map(|(name, kind)| Client { name, kind })
        .collect();
    for client in &clients {
        for package in client.packages() {
            match &client.kind {
                Kind::Pip { .. } => pip_pin(package)?,
                Kind::Npm { .. } => npm_pin(package)?,
                Kind::System { .. } => unreachable!("a system client has no package list"),
            };
        }
    }
    Ok(clients)
}

impl Client {
    /// The packages it pins (none for a system program).
    pub fn packages(&self) -> &[String] {
        match &self.kind {
            Kind::Pip { packages, .. } | Kind::Npm { packages, .. } => packages,
            Kind::System { .. } => &[],
        }
    }

    /// Its install directory under the cache (none for a system program).
    pub fn dir(&self) -> Option<PathBuf> {
        match &self.kind {
            Kind::Pip { dir, .. } | Kind::Npm { dir, .. } => Some(cache().join(dir)),
            Kind::System { .. } => None,
        }
    }

    /// What it pins, in one line: `mcp==2.3.0`, `bwrap (bubblewrap)`.
    pub fn pins(&self) -> String {
        match &self.kind {
            Kind::System { program, package } => format!("{program} ({package})"),
            _ => self.packages().join(" "),
        }
    }

    /// Where it is: the install directory, or the program found on `PATH`;
    /// `Err` says what is missing or which version is there instead.
    pub fn locate(&self) -> Result<PathBuf, String> {
        match &self.kind {
            Kind::Pip { packages, .. } => {
                let dir = self.dir().expect("a pip client has a directory");
                for package in packages {
                    let (name, version) = pip_pin(package)?;
                    let wanted = format!("{}-{version}.dist-info", pip_dist_name(name));
                    let present =
                        std::fs::read_dir(&dir)
                            .into_iter()
                            .flatten()
                            .flatten()
                            .any(|entry| {
                                entry.file_name().to_string_lossy().to_lowercase() == wanted
                                    && entry.path().join("METADATA").is_file()
                            });
                    if !present {
                        return Err(format!("{} has no {package}", dir.display()));
                    }
                }
                Ok(dir)
            }
            Kind::Npm {
                packages,
                probe,
                expect,
                ..
            } => {
                let dir = self.dir().expect("an npm client has a directory");
                for package in packages {
                    let (name, version) = npm_pin(package)?;
                    let manifest = dir.join("node_modules").join(name).join("package.json");
                    let found = std::fs::read_to_string(&manifest)
                        .ok()
                        .and_then(|text| manifest_version(&text));
                    if found.as_deref() != Some(version) {
                        return Err(match found {
                            Some(other) => format!("{} has {name} {other}", dir.display()),
                            None => format!("{} has no {package}", dir.display()),
                        });
                    }
                }
                if let Some((program, args)) = probe.split_first() {
                    let program = dir.join(program);
                    let output = Command::new(&program).args(args).output();
                    let stdout = output
                        .as_ref()
                        .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
                        .unwrap_or_default();
                    if !stdout.starts_with(expect.as_str()) {
                        return Err(format!(
                            "{} {} does not answer {expect:?} (it printed {:?})",
                            program.display(),
                            args.join(" "),
                            stdout.trim()
                        ));
                    }
                }
                Ok(dir)
            }
            Kind::System { program, package } => on_path(program)
                .ok_or_else(|| format!("{program} is not on PATH (package {package})")),
        }
    }
}

/// The pinned client `name`'s location, for a test: panics, naming the command
/// that installs it, when it is missing or not the pinned version.
pub fn require(name: &str) -> PathBuf {
    let clients = load().unwrap_or_else(|error| panic!("{error}"));
    let client = clients
        .iter()
        .find(|client| client.name == name)
        .unwrap_or_else(|| panic!("test-data/clients.toml pins no client named {name:?}"));
    client.locate().unwrap_or_else(|problem| {
        panic!(
            "the pinned client {name} ({}) is not installed: {problem}. Run `{PROVISION}` \
             from the workspace root (or `cargo xtask test`, the README's test command, \
             which installs it and runs the suite) and try again.",
            client.pins()
        )
    })
}

/// `name==version` of a pip pin.
fn pip_pin(pin: &str) -> Result<(&str, &str), String> {
    pin.split_once("==")
        .filter(|(name, version)| !name.is_empty() && !version.is_empty())
        .ok_or_else(|| format!("pip pin {pin:?} is not NAME==VERSION"))
}

/// `name@version` of an npm pin; a scoped name starts with `@`.
fn npm_pin(pin: &str) -> Result<(&str, &str), String> {
    pin.rfind('@')
        .filter(|&at| at > 0)
        .map(|at| (&pin[..at], &pin[at + 1..]))
        .filter(|(_, version)| !version.is_empty())
        .ok_or_else(|| format!("npm pin {pin:?} is not NAME@VERSION"))
}

/// The name pip gives a project's `.dist-info` directory: runs of `-`, `_` and
/// `.` become one `_`, compared lowercase.
fn pip_dist_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('_') {
                out.push('_');
            }
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// The top-level `"version"` of a `package.json`.
fn manifest_version(text: &str) -> Option<String> {
    let manifest: serde_json::Value = serde_json::from_str(text).ok()?;
    manifest["version"].as_str().map(str::to_owned)
}

/// The program's path on `PATH`, if any.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pin_file_parses_and_names_every_client_the_tests_drive() {
        let clients = load().unwrap();
        let names: Vec<&str> = clients.iter().map(|client| client.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "bubblewrap",
                "claude-code",
                "mcp-python",
                "mcp-typescript",
                "nginx",
                "pytest-lsp"
            ]
        );
    }

    #[test]
    fn pins_split_into_name_and_version() {
        assert_eq!(pip_pin("pytest-lsp==1.0.1"), Ok(("pytest-lsp", "1.0.1")));
        assert_eq!(
            npm_pin("@anthropic-ai/claude-code@2.1.328"),
            Ok(("@anthropic-ai/claude-code", "2.1.328"))
        );
        assert!(pip_pin("mcp>=2").is_err());
        assert!(npm_pin("@scope/name").is_err());
        assert_eq!(pip_dist_name("pytest-lsp"), "pytest_lsp");
        assert_eq!(pip_dist_name("Zope.Interface"), "zope_interface");
    }

    #[test]
    fn a_bad_pin_file_is_refused_naming_the_problem() {
        let error =
            parse("[clients.x]\nkind = \"pip\"\ndir = \"d\"\npackages = [\"mcp\"]\n").unwrap_err();
        assert!(error.contains("not NAME==VERSION"), "{error}");
        let error = parse("[clients.x]\nkind = \"cargo\"\n").unwrap_err();
        assert!(error.contains("unknown variant"), "{error}");
        let error =
            parse("[clients.x]\nkind = \"system\"\nprogram = \"p\"\npackage = \"q\"\nextra = 1\n")
                .unwrap_err();
        assert!(error.contains("unknown field"), "{error}");
    }

    #[test]
    fn an_npm_manifest_gives_its_version() {
        let manifest = "{\n  \"name\": \"x\",\n  \"version\": \"1.32.2\",\n  \"deps\": {}\n}";
        assert_eq!(manifest_version(manifest).as_deref(), Some("1.32.2"));
    }
}
