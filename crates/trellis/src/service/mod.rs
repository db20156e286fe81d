//! The service: one root's database and the methods clients call. The daemon wraps
//! it in a mutex and serves it over the socket; `--no-daemon` calls it in-process.
//! Every request first refreshes the inputs from disk (stat, then content hash for
//! whatever moved; in the daemon only for what the change feed names), then answers
//! from queries.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::{Value, json};
use trellis_db::RootDatabase;
use trellis_diag::Diagnostic;
use trellis_rpc::{ErrorCode, RpcError};

use crate::loader::RootLoader;
use crate::watch::{Dirty, RootWatch};

mod check;
mod context;
mod locks;
mod test;
mod toolchain;

pub struct Service {
    db: RootDatabase,
    loader: RootLoader,
    /// Files the last refresh could not load; reported by every command.
    load_problems: Vec<Diagnostic>,
    /// The daemon's change feed (design §9.6); `None` means stat every file.
    watch: Option<RootWatch>,
    /// Whether a full load has happened (the feed only reports what came after).
    loaded: bool,
}

impl Service {
    /// A service that stats every file on each refresh (one-shot commands).
    pub fn new(root: PathBuf) -> Self {
        Self {
            db: RootDatabase::default(),
            loader: RootLoader::new(root),
            load_problems: Vec::new(),
            watch: None,
            loaded: false,
        }
    }

    /// A long-lived service that refreshes only what the change feed names, unless
    /// `TRELLIS_WATCH=off` or the platform cannot watch (then it stats every file).
    pub fn watching(root: PathBuf) -> Self {
        let mut service = Service::new(root);
        let disabled = std::env::var("TRELLIS_WATCH")
            .is_ok_and(|value| matches!(value.as_str(), "off" | "0" | "false" | "no"));
        if !disabled {
            match RootWatch::new(service.root()) {
                Ok(watch) => service.watch = Some(watch),
                Err(error) => eprintln!(
                    "trellis daemon: no change feed ({error}); every request stats every file"
                ),
            }
        }
        service
    }

    pub fn root(&self) -> &std::path::Path {
        self.loader.root()
    }

    pub fn database(&self) -> &RootDatabase {
        &self.db
    }

    /// Brings the inputs up to date with the disk; returns how many files changed.
    pub fn refresh(&mut self) -> usize {
        let dirty = match &mut self.watch {
            Some(watch) if self.loaded => watch.take(),
            _ => Dirty::Everything,
        };
        let refresh = match dirty {
            Dirty::Paths(paths) => self.loader.refresh_paths(paths),
            Dirty::Everything => self.loader.refresh(),
        };
        self.loaded = true;
        self.load_problems = refresh.problems;
        let changed =
            refresh.change.files.len() + usize::from(refresh.change.config_text.is_some());
        if !refresh.change.is_empty() || trellis_db::Workspace::try_get(&self.db).is_none() {
            refresh.change.apply(&mut self.db);
        }
        changed
    }

    /// Answers one request, refreshing first, and reports where the time went.
    pub fn handle(&mut self, method: &str, params: &Value) -> Result<Value, RpcError> {
        self.handle_with_progress(method, params, &mut |_| {})
    }

    /// [`Service::handle`], with progress events for long commands (`test`).
    pub fn handle_with_progress(
        &mut self,
        method: &str,
        params: &Value,
        progress: &mut dyn FnMut(Value),
    ) -> Result<Value, RpcError> {
        let started = Instant::now();
        let changed = self.refresh();
        let refreshed = started.elapsed();
        let mut result = dispatch(self, method, params, progress)?;
        let answered = started.elapsed();
        if let Value::Object(fields) = &mut result {
            fields.insert(
                "timings".to_owned(),
                json!({
                    "refresh_us": refreshed.as_micros() as u64,
                    "queries_us": (answered - refreshed).as_micros() as u64,
                    "files_changed": changed,
                }),
            );
        }
        Ok(result)
    }

    pub fn load_problems(&self) -> &[Diagnostic] {
        &self.load_problems
    }
}

/// The toolchain pin check, for commands that run outside the daemon.
pub fn check_pin_of(service: &Service) -> Result<(), Vec<Diagnostic>> {
    toolchain::check_pin(service).map_err(|error| {
        error
            .errors()
            .iter()
            .filter_map(|value| value["message"].as_str())
            .map(|message| {
                Diagnostic::new("toolchain-mismatch", message.to_owned()).with_file("soil.toml")
            })
            .collect()
    })
}

/// A method failed with diagnostics.
pub fn failed(diagnostics: &[Diagnostic]) -> RpcError {
    RpcError::failed(diagnostics)
}

pub fn invalid_params(message: impl Into<String>) -> RpcError {
    RpcError::new(ErrorCode::InvalidParams, message)
}

fn dispatch(
    service: &mut Service,
    method: &str,
    params: &Value,
    progress: &mut dyn FnMut(Value),
) -> Result<Value, RpcError> {
    // Everything that verifies or records refuses under another toolchain's pin.
    if matches!(
        method,
        "check" | "adopt" | "test" | "review" | "decisions.editorial"
    ) {
        toolchain::check_pin(service)?;
    }
    match method {
        "refresh" => Ok(json!({ "problems": service.load_problems() })),
        "check" => check::check(service, params),
        "status" => check::status(service, params),
        "adopt" => locks::adopt(service, params),
        "test" => test::test(service, params, progress),
        "review" => locks::review(service, params),
        "decisions.editorial" => locks::decisions_editorial(service, params),
        "toolchain.update" => toolchain::update(service),
        "context" => context::context(service, params),
        _ => Err(RpcError::method_not_found(method)),
    }
}
