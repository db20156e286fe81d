//! What a request carries from the client's own environment. The daemon runs
//! with the environment it was spawned with, not the caller's, so the client
//! reads these and sends them: its `PATH` (oracles and cram run under it), the
//! user's agent provider (design §4.9), and paths resolved against its working
//! directory.

use trellis_agent::providers::{self, Provider};
use trellis_service::codes::HostCode;

/// This client's `PATH`, sent with the requests that run suites: oracles and
/// cram run under the caller's `PATH`, not the one the daemon was spawned with.
pub fn client_path() -> Option<String> {
    std::env::var("PATH").ok()
}

/// The shared result cache as this caller's environment sets it (design
/// §12.5): `TRELLIS_CACHE_URL`, `TRELLIS_CACHE_WRITE`,
/// `TRELLIS_CACHE_SIGNING_KEY`, and whether `CI` is true.
pub fn cache_env() -> trellis_service::protocol::CacheEnv {
    let var = |name: &str| std::env::var(name).ok();
    trellis_service::protocol::CacheEnv {
        url: var("TRELLIS_CACHE_URL").map(|url| url.trim().to_owned()),
        write: var("TRELLIS_CACHE_WRITE").map(|word| word.trim().to_ascii_lowercase()),
        signing_key: var("TRELLIS_CACHE_SIGNING_KEY").filter(|key| !key.trim().is_empty()),
        ci: var("CI").is_some_and(|ci| {
            matches!(
                ci.trim().to_ascii_lowercase().as_str(),
                "true" | "1" | "yes"
            )
        }),
    }
}

/// `path` resolved against this process's working directory: the daemon's is
/// not the caller's (impl plan §9.13).
pub fn absolute(path: &str) -> String {
    let path = std::path::Path::new(path);
    match std::env::current_dir() {
        Ok(cwd) if path.is_relative() => cwd.join(path).display().to_string(),
        _ => path.display().to_string(),
    }
}

/// The provider `name` (or the default) of the user's providers.toml, read by
/// the client: the daemon's environment is not the user's (design §4.9).
pub fn user_provider(name: Option<&str>) -> Result<Provider, trellis_diag::Diagnostic> {
    let xdg = std::env::var("XDG_CONFIG_HOME").ok();
    let home = std::env::var("HOME").ok();
    let Some(file) = providers::config_path(xdg.as_deref(), home.as_deref()) else {
        return Err(HostCode::ConfigProviders
            .diagnostic("no providers.toml: neither XDG_CONFIG_HOME nor HOME is set"));
    };
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        // No file: the built-in claude-code provider when asked for, or when a
        // `claude` is on this client's PATH (where the daemon will look for it).
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let path = client_path();
            let on_path = trellis_agent::jail::find_on_path(
                providers::CLAUDE_CODE_COMMAND.as_ref(),
                path.as_deref().map(std::ffi::OsStr::new),
            )
            .is_some();
            return providers::without_file(&file, name, on_path)
                .map(|provider| provider.with_client_env(|name| std::env::var(name).ok()));
        }
        Err(error) => {
            return Err(HostCode::ConfigProviders
                .diagnostic(format!(
                    "cannot read {}: {error} (it names the agent providers `trellis lower` may use; see docs/design.md §4.9)",
                    file.display()
                ))
                .with_file(file.display().to_string()));
        }
    };
    // The provider's `pass_env` values come from this environment, the user's,
    // never the daemon's.
    providers::select(&file, &text, name)
        .map(|provider| provider.with_client_env(|name| std::env::var(name).ok()))
}
