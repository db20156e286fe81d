//! The service: one root's database and the methods clients call. The daemon wraps
//! it in a mutex and serves it over the socket; `--no-daemon` calls it in-process.
//! Every request first refreshes the inputs from disk (stat, then content hash for
//! whatever moved; in the daemon only for what the change feed names), then answers
//! from queries. Params are checked against each method's declared shape first;
//! methods that write into the root hold its writer lock from that refresh on.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::{Value, json};
use trellis_db::RootDatabase;
use trellis_diag::Diagnostic;
use trellis_rpc::{ErrorCode, RpcError};
use trellis_verify::{ProcessRunner, WarmPool, WarmRunner};

use crate::loader::RootLoader;
use crate::watch::{Dirty, RootWatch};

mod answer;
mod bundle_dir;
mod check;
mod context;
pub mod jobs;
mod locks;
pub(crate) mod lowering;
mod question;
mod test;
mod toolchain;
pub(crate) mod triage;
mod verify;

pub struct Service {
    db: RootDatabase,
    loader: RootLoader,
    /// Files the last refresh could not load; reported by every command.
    load_problems: Vec<Diagnostic>,
    /// The daemon's change feed (design §9.6); `None` means stat every file.
    watch: Option<RootWatch>,
    /// Whether a full load has happened (the feed only reports what came after).
    loaded: bool,
    /// The lowering jobs this service holds (daemon only; see `jobs`).
    jobs: jobs::Jobs,
    /// What this service last left in each bundle directory it wrote, vouched
    /// for as its inputs are: by the change feed's kind of watch where there is
    /// one, else by stats; none in a one-shot service (design §9.10).
    bundle_stamps: bundle_dir::Stamps,
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
            jobs: jobs::Jobs::default(),
            bundle_stamps: bundle_dir::Stamps::none(),
        }
    }

    /// A long-lived service that refreshes only what the change feed names, unless
    /// `watch` is false (the daemon's `TRELLIS_WATCH=off`, read once by its
    /// entry point) or the platform cannot watch (then it stats every file).
    pub fn watching(root: PathBuf, watch: bool) -> Self {
        WARM_ORACLES.get_or_init(|| WarmPool::new(WARM_ORACLE_PROCESSES));
        let mut service = Service::new(root);
        service.bundle_stamps = bundle_dir::Stamps::by_stats();
        if watch {
            match RootWatch::new(service.root()) {
                Ok(watch) => {
                    service.watch = Some(watch);
                    service.bundle_stamps = bundle_dir::Stamps::watched();
                }
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

    /// The interpreter Python oracles run under for a client's `PATH`: resolved
    /// once per `PATH` for the process's life (design §9.2) — shared by the
    /// root's service and every job's overlay — so a version manager's shim is
    /// paid once, not on every run.
    pub(crate) fn python_on(&self, path: &str, runner: &dyn ProcessRunner) -> String {
        static INTERPRETERS: std::sync::OnceLock<
            std::sync::Mutex<std::collections::HashMap<String, String>>,
        > = std::sync::OnceLock::new();
        let mut interpreters = INTERPRETERS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        interpreters
            .entry(path.to_owned())
            .or_insert_with(|| {
                trellis_verify::oracle::resolve_python(runner, self.root(), path)
                    .unwrap_or_else(|| "python3".to_owned())
            })
            .clone()
    }

    /// The warm Python oracles suites send their references to: the process's
    /// pool once a long-lived service exists (the daemon's; shared by its jobs'
    /// overlays), `None` in one-shot runs, which start a driver per run.
    pub(crate) fn warm_oracles(&self) -> Option<&'static dyn WarmRunner> {
        WARM_ORACLES.get().map(|pool| pool as &dyn WarmRunner)
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
        // Held from the refresh that reads the locks to the last write.
        let _writer = if WRITERS.contains(&method) {
            Some(writer_lock(self.root()).map_err(|e| failed(&[e]))?)
        } else {
            None
        };
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

    /// Every lock of the root that cannot be read, each diagnostic naming its file
    /// (an empty or garbage lock must not pass for an absent one).
    pub fn unreadable_locks(&self) -> Vec<Diagnostic> {
        let db = &self.db;
        let index = trellis_db::root_index(db, trellis_db::Workspace::get(db));
        index
            .project_lock
            .iter()
            .chain(
                index
                    .modules
                    .values()
                    .flat_map(|files| files.locks.values()),
            )
            .filter_map(|&file| trellis_db::read_lock_file(db, file).as_ref().err())
            .flatten()
            .cloned()
            .collect()
    }
}

/// The warm Python oracle drivers of this process (design §9.2): one per
/// interpreter, root and environment, at most this many kept idle.
static WARM_ORACLES: std::sync::OnceLock<WarmPool> = std::sync::OnceLock::new();
const WARM_ORACLE_PROCESSES: usize = 4;

/// Kills every warm oracle driver (the daemon's shutdown; none outlives it).
pub fn stop_warm_oracles() {
    if let Some(pool) = WARM_ORACLES.get() {
        pool.shutdown();
    }
}

/// The methods that write into the root. Each holds the root's writer lock
/// (lock-schema §1.6) from its refresh to its last write, so writers of one root
/// — the daemon and any `--no-daemon` processes — run one after another and none
/// builds on locks another is about to replace.
const WRITERS: &[&str] = &[
    "adopt",
    "test",
    "review",
    "decisions.editorial",
    "toolchain.update",
    "answer",
];

/// Where the writer lock lives, root-relative (hidden: never an input).
pub const WRITER_LOCK: &str = ".trellis/writer.lock";

/// Takes the root's writer lock, waiting for the current holder; released when
/// the file is dropped (or its process ends, however it ends).
pub(super) fn writer_lock(root: &std::path::Path) -> Result<std::fs::File, Diagnostic> {
    let path = root.join(WRITER_LOCK);
    let problem = |error: std::io::Error| {
        Diagnostic::new(
            "root-unreadable",
            format!("cannot take the root's writer lock {WRITER_LOCK}: {error}"),
        )
        .with_file(WRITER_LOCK)
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(problem)?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(problem)?;
    file.lock().map_err(problem)?;
    Ok(file)
}

/// The client's `PATH` a request carries (`/usr/bin:/bin` without one).
pub(crate) fn client_path_param(params: &Value) -> String {
    test::base_path(params)
}

/// The toolchain pin check, for commands that run outside the daemon.
pub fn check_pin_of(service: &Service) -> Result<(), Diagnostic> {
    toolchain::check_pin(service)
}

/// A method failed with diagnostics.
pub fn failed(diagnostics: &[Diagnostic]) -> RpcError {
    RpcError::failed(diagnostics)
}

pub fn invalid_params(message: impl Into<String>) -> RpcError {
    RpcError::new(ErrorCode::InvalidParams, message)
}

/// What one param of a method may be.
#[derive(Clone, Copy)]
enum Param {
    /// A string, `null` or absent.
    OptionalText,
    /// A string.
    Text,
    /// An array of strings, `null` or absent.
    TextList,
    /// `true`, `false`, `null` or absent.
    OptionalFlag,
}

/// The params each method takes; anything else is `-32602 invalid params`,
/// so a mistyped `{"def": 17}` cannot quietly mean "every definition".
fn params_of(method: &str) -> Option<&'static [(&'static str, Param)]> {
    use Param::*;
    Some(match method {
        "refresh" | "toolchain.update" => &[],
        "status" => &[("verify", OptionalFlag), ("path", OptionalText)],
        "check" => &[("def", OptionalText)],
        "test" => &[("def", OptionalText), ("path", OptionalText)],
        "adopt" => &[("def", OptionalText), ("cite", TextList)],
        "review" => &[("def", Text)],
        "decisions.editorial" => &[("label", Text), ("module", OptionalText)],
        "question" => &[("def", Text)],
        "answer" => &[
            ("def", Text),
            ("text", Text),
            ("scope", OptionalText),
            ("label", OptionalText),
        ],
        _ => return None,
    })
}

fn check_params(method: &str, params: &Value) -> Result<(), RpcError> {
    let Some(expected) = params_of(method) else {
        return Ok(()); // an unknown method is refused by name
    };
    let fields = match params {
        Value::Null => return check_fields(method, expected, &serde_json::Map::new()),
        Value::Object(fields) => fields,
        other => {
            return Err(invalid_params(format!(
                "{method} takes an object of params, not {other}"
            )));
        }
    };
    check_fields(method, expected, fields)
}

fn check_fields(
    method: &str,
    expected: &[(&str, Param)],
    fields: &serde_json::Map<String, Value>,
) -> Result<(), RpcError> {
    if let Some(unknown) = fields
        .keys()
        .find(|key| !expected.iter().any(|(name, _)| name == key))
    {
        return Err(invalid_params(format!(
            "{method} takes no param `{unknown}`"
        )));
    }
    for &(name, kind) in expected {
        let value = fields.get(name).unwrap_or(&Value::Null);
        let fits = match kind {
            Param::OptionalText => value.is_null() || value.is_string(),
            Param::Text => value.is_string(),
            Param::TextList => {
                value.is_null()
                    || value
                        .as_array()
                        .is_some_and(|items| items.iter().all(Value::is_string))
            }
            Param::OptionalFlag => value.is_null() || value.is_boolean(),
        };
        if !fits {
            let wanted = match kind {
                Param::OptionalText => "a string or null",
                Param::Text => "a string",
                Param::TextList => "an array of strings or null",
                Param::OptionalFlag => "true, false or null",
            };
            return Err(invalid_params(format!(
                "{method}: `{name}` must be {wanted}, not {value}"
            )));
        }
    }
    Ok(())
}

fn dispatch(
    service: &mut Service,
    method: &str,
    params: &Value,
    progress: &mut dyn FnMut(Value),
) -> Result<Value, RpcError> {
    check_params(method, params)?;
    // An unreadable soil.toml is the root's first problem: report it as itself
    // (not as the empty configuration it leaves behind, "missing field").
    let config_problems: Vec<Diagnostic> = service
        .load_problems()
        .iter()
        .filter(|d| d.file.as_deref() == Some(trellis_db::CONFIG_FILE))
        .cloned()
        .collect();
    if !config_problems.is_empty() && method != "refresh" {
        return Err(failed(&config_problems));
    }
    // Everything that verifies or records refuses under another toolchain's pin.
    if matches!(
        method,
        "check" | "adopt" | "test" | "review" | "decisions.editorial"
    ) {
        toolchain::check_pin(service).map_err(|d| failed(&[d]))?;
    }
    match method {
        "refresh" => Ok(json!({ "problems": service.load_problems() })),
        "check" => check::check(service, params),
        "status" => check::status(service, params),
        "adopt" => locks::adopt(service, params),
        "test" => test::test(service, params, progress).map(|mut answer| {
            // Files that could not be loaded are not tested: say so.
            if let Some(errors) = answer["errors"].as_array_mut() {
                let problems = service.load_problems().iter().map(Diagnostic::to_json);
                errors.splice(0..0, problems);
            }
            answer
        }),
        "review" => locks::review(service, params),
        "decisions.editorial" => locks::decisions_editorial(service, params),
        "toolchain.update" => toolchain::update(service),
        "context" => context::context(service, params),
        "question" => answer::question(service, params),
        "answer" => answer::answer(service, params),
        "job.create" | "job.inspect" | "job.tool" => jobs::handle(service, method, params),
        "lower" | "jobs" | "decisions.triage" => Err(failed(&[Diagnostic::new(
            "job-needs-daemon",
            "lowering runs in the root's daemon (its jobs and agents live there): drop --no-daemon",
        )])),
        _ => Err(RpcError::method_not_found(method)),
    }
}
