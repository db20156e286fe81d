//! The service: one root's database and the methods clients call. The daemon wraps
//! it in a mutex and serves it over the socket; `--no-daemon` calls it in-process.
//! Every request first refreshes the inputs from disk (stat, then content hash for
//! whatever moved; in the daemon only for what the change feed names), then answers
//! from queries. Params are checked against each method's declared shape first;
//! methods that write into the root hold its writer lock from that refresh on.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::Value;
use trellis_db::{Change, RootDatabase, RootJoins};
use trellis_diag::Diagnostic;
use trellis_rpc::RpcError;
use trellis_verify::{ProcessRunner, WarmPool, WarmRunner};

use crate::codes::HostCode;
use crate::loader::RootLoader;
use crate::protocol::{RefreshAnswer, Request, Timings, encode_answer};
use crate::watch::{Dirty, RootWatch, Settled};

mod ahead_time;
mod answer;
mod bundle_dir;
mod check;
mod context;
mod decision_store;
pub mod jobs;
mod locks;
pub mod lowering;
mod question;
mod shared_cache;
mod stored;
mod test;
pub mod tool_limits;
mod toolchain;
pub mod triage;
mod verify;

pub struct Service {
    db: RootDatabase,
    /// The root-wide answers, kept per module beside the database (design §7.5).
    joins: RootJoins,
    loader: RootLoader,
    /// Files the last refresh could not load; reported by every command.
    load_problems: Vec<Diagnostic>,
    /// The daemon's change feed (design §9.6); `None` means stat every file.
    watch: Option<RootWatch>,
    /// Whether a full load has happened (the feed only reports what came after).
    loaded: bool,
    /// Set by a change of many files (a first load, a batch of locks): the
    /// answers that follow parse each of them, and once one is out the parse
    /// trees no memo needs are freed (design §7.15).
    spare_parses: bool,
    /// Set by every answer of a long-lived service: an answer may parse more
    /// files than salsa's LRU keeps (one that reads something of every file
    /// no earlier answer kept, as a first `status` did before the tidy
    /// hashed every spec), and salsa frees them only when the next revision
    /// starts, so [`Service::tidy`] frees them once it is out.
    answered_since_tidy: bool,
    /// Which root-wide answers (check, status) the store this service last
    /// wrote holds: a kind answered since is stored at the next tidy.
    stored_kinds: (bool, bool),
    /// A daemon's service, which outlives its answers; a one-shot command's
    /// ends with its answer and frees nothing on the way.
    long_lived: bool,
    /// Answers read from the store while nothing is loaded (design §7.16).
    stored: Option<crate::answer_cache::Answers>,
    /// The load of the root behind the stored answers, while a thread runs it.
    warming: Option<std::sync::Arc<stored::WarmUp>>,
    /// Whether this daemon's service started from stored answers and has not
    /// loaded the root since.
    started_from_store: bool,
    /// How many times this service read the whole root ([`Service::full_loads`]).
    full_loads: usize,
    /// Files changed by refreshes no request made ([`Service::ask_ahead`]),
    /// reported by the next request's timings as its own.
    unreported_changes: usize,
    /// [`RootJoins::taken_ahead`] as of the last request's timings.
    reported_taken_ahead: usize,
    /// How long the thread that asks ahead worked since the last request.
    ahead_clock: ahead_time::AheadClock,
    /// The lowering jobs this service holds (daemon only; see `jobs`).
    jobs: jobs::Jobs,
    /// What this service last left in each bundle directory it wrote, vouched
    /// for as its inputs are: by the change feed's kind of watch where there is
    /// one, else by stats; none in a one-shot service (design §9.10).
    bundle_stamps: bundle_dir::Stamps,
    /// The last summarized `status` and what it was made from.
    summary: Option<check::Summarized>,
}

impl Service {
    /// A service that stats every file on each refresh (one-shot commands).
    pub fn new(root: PathBuf) -> Self {
        Self {
            db: RootDatabase::default(),
            joins: RootJoins::with_threads(query_threads()),
            loader: RootLoader::new(root),
            load_problems: Vec::new(),
            watch: None,
            loaded: false,
            spare_parses: false,
            answered_since_tidy: false,
            stored_kinds: (false, false),
            long_lived: false,
            stored: None,
            warming: None,
            started_from_store: false,
            full_loads: 0,
            unreported_changes: 0,
            reported_taken_ahead: 0,
            ahead_clock: ahead_time::AheadClock::default(),
            jobs: jobs::Jobs::default(),
            bundle_stamps: bundle_dir::Stamps::none(),
            summary: None,
        }
    }

    /// A service for one command in a process that ends with it: it keeps
    /// every parse ([`trellis_db::keep_every_parse`]).
    pub fn one_shot(root: PathBuf) -> Self {
        let mut service = Service::new(root);
        trellis_db::keep_every_parse(&mut service.db);
        service
    }

    /// A long-lived service that refreshes only what the change feed names, unless
    /// `watch` is false (the daemon's `TRELLIS_WATCH=off`, read once by its
    /// entry point) or the platform cannot watch (then it stats every file).
    pub fn watching(root: PathBuf, watch: bool) -> Self {
        WARM_ORACLES.get_or_init(|| WarmPool::new(WARM_ORACLE_PROCESSES));
        let mut service = Service::new(root);
        service.long_lived = true;
        service.bundle_stamps = bundle_dir::Stamps::kept();
        if watch {
            match RootWatch::new_stamped(service.root()) {
                Ok((watch, walked)) => {
                    service.watch = Some(watch);
                    service.loader.prime(walked);
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

    /// How many times this service read the whole root itself (a load
    /// taken over from the thread behind the stored answers is not its
    /// own): tests count that a change during that load waits for it
    /// instead of loading beside it (design §7.16).
    pub fn full_loads(&self) -> usize {
        self.full_loads
    }

    /// How many stamped walks of the root this service's loader made.
    pub fn walks(&self) -> usize {
        self.loader.walks()
    }

    /// Whether a thread is loading the root behind the stored answers.
    pub fn warming_up(&self) -> bool {
        self.warming.is_some()
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
        // A daemon that started from stored answers loads the root late: that
        // load is its start's, which no request reports (design §7.16), so a
        // request answers the same whether the load behind the store was done
        // first or not.
        let start_load = !self.loaded && std::mem::take(&mut self.started_from_store);
        let changed = self.reload(dirty);
        if start_load { 0 } else { changed }
    }

    /// A handle that polls readable when the change feed has news, for the
    /// daemon's thread that asks ahead; `None` without a feed.
    pub fn change_queue(&self) -> Option<std::fs::File> {
        self.watch.as_ref()?.queue().ok()
    }

    /// Applies what the change feed reported, once the writes it names are
    /// finished (or `patience_over`: a writer that keeps a file open must not
    /// stop the work for good), and hands back what the next check and status
    /// will ask salsa about, to be answered without this service's lock
    /// (design §7.10): after this change, or after one a request applied
    /// first without asking for everything.
    pub fn ask_ahead(&mut self, patience_over: bool) -> AheadOfRequests {
        if !self.loaded && self.stored.is_some() && self.change_may_have_come() {
            // The root moved under the stored answers: load it now, as the
            // next request would (design §7.16).
            self.leave_the_store();
            if !self.loaded {
                self.refresh();
            }
        }
        let Some(watch) = self.watch.as_mut().filter(|_| self.loaded) else {
            return AheadOfRequests::Nothing;
        };
        let stretch = self.ahead_clock.start();
        match watch.settled() {
            // A request applied the change first; what it did not ask for
            // (a `check` leaves the status rows) is still asked ahead.
            Settled::Quiet => {}
            Settled::Writing if !patience_over => {
                stretch.end();
                return AheadOfRequests::Writing;
            }
            Settled::Written | Settled::Writing => {
                self.unreported_changes += self.refresh();
            }
        }
        match self.joins.ask_ahead(&self.db) {
            Some(ahead) => AheadOfRequests::Ask(Asked { ahead, stretch }),
            None => {
                stretch.end();
                AheadOfRequests::Nothing
            }
        }
    }

    /// Whether the change feed has anything queued since the last take.
    fn change_may_have_come(&mut self) -> bool {
        self.watch
            .as_mut()
            .is_some_and(|watch| watch.settled() != Settled::Quiet)
    }

    /// Whether the change the feed reported may be the first half of a save
    /// that writes several files, so the thread that asks ahead lets the feed
    /// stay quiet before applying it (design §7.10); `false` without a feed.
    pub fn change_may_continue(&mut self) -> bool {
        self.watch.as_mut().is_some_and(RootWatch::may_continue)
    }

    /// Joins what was answered ahead and no request took into the root-wide
    /// answers, so the next request of the other kind does not answer it
    /// again (design §7.10).
    pub fn absorb_answered_ahead(&mut self) {
        self.joins.absorb_answered_ahead(&self.db);
    }

    /// Re-reads what `dirty` names and applies what moved; returns how many files
    /// changed.
    fn reload(&mut self, dirty: Dirty) -> usize {
        let refresh = match dirty {
            Dirty::Paths(paths) => self.loader.refresh_paths(paths),
            Dirty::Everything => {
                self.full_loads += 1;
                self.loader.refresh()
            }
        };
        self.loaded = true;
        self.load_problems = refresh.problems;
        let changed =
            refresh.change.files.len() + usize::from(refresh.change.config_text.is_some());
        self.spare_parses |= self.long_lived && changed >= MANY_FILES;
        self.apply(refresh.change);
        changed
    }

    /// Moves the database by `change`, telling the root-wide joins first; the
    /// first change creates the workspace even when it is empty.
    fn apply(&mut self, change: Change) {
        if !change.is_empty() || trellis_db::Workspace::try_get(&self.db).is_none() {
            self.joins.invalidate(&self.db, &change);
            change.apply(&mut self.db);
        }
    }

    /// The whole root's check (every definition), joined per module.
    pub fn root_check(&mut self) -> trellis_db::CheckReport {
        if let Some(check) = self
            .stored
            .as_ref()
            .and_then(|stored| stored.check.as_ref())
        {
            return check.clone();
        }
        self.joins.check(&self.db)
    }

    /// Every row of the root's status, joined per module.
    pub fn root_status(&mut self) -> Vec<&trellis_db::StatusRow> {
        (self.root_status_groups().into_iter())
            .flat_map(|group| group.rows)
            .map(|row| &**row)
            .collect()
    }

    /// The same rows in groups (the project's, then each module's), each with
    /// its counts by status.
    pub fn root_status_groups(&mut self) -> Vec<trellis_db::RowGroup<'_>> {
        if let Some(groups) = self
            .stored
            .as_ref()
            .and_then(|stored| stored.status.as_ref())
        {
            return (groups.iter())
                .map(|(rows, counts)| trellis_db::RowGroup { rows, counts })
                .collect();
        }
        self.joins.status_groups(&self.db)
    }

    /// The whole row of `name` when the summary holds it brief; `None` when
    /// the row held is whole.
    pub fn explained_row(&self, name: &str) -> Option<std::sync::Arc<trellis_db::StatusRow>> {
        if self.serves_stored_status() {
            return None;
        }
        self.joins.explained(&self.db, name)
    }

    /// What the summarized status is made from while the database and the
    /// joins stay as they are; `None` while the rows are the stored answers'.
    fn summary_source(&self) -> Option<(u64, u64)> {
        (!self.serves_stored_status()).then(|| (self.joins.instance(), self.db.changes_applied()))
    }

    /// Whether the status rows are the stored answers' (design §7.16).
    fn serves_stored_status(&self) -> bool {
        (self.stored.as_ref()).is_some_and(|stored| stored.status.is_some())
    }

    /// Answers one request, refreshing first, and reports where the time went;
    /// long commands (`test`, a lowering's gate) send progress events to
    /// `progress` as they go.
    pub fn handle(
        &mut self,
        method: &str,
        params: &Value,
        progress: &mut dyn FnMut(Value),
    ) -> Result<Value, RpcError> {
        let started = Instant::now();
        let request = Request::decode(method, params).transpose()?;
        // Held from the refresh that reads the locks to the last write.
        let _writer = if request.as_ref().is_some_and(Request::writes) {
            Some(writer_lock(self.root()).map_err(|e| failed(&[e]))?)
        } else {
            None
        };
        let from_store = self.answer_from_store(request.as_ref());
        let changed = match from_store {
            true => 0,
            false => self.refresh(),
        } + std::mem::take(&mut self.unreported_changes);
        let refreshed = started.elapsed();
        let mut result = match &request {
            Some(request) => dispatch(self, request, progress)?,
            None => dispatch_job(self, method, params)?,
        };
        let answered = started.elapsed();
        let ahead = self.ahead_clock.take_for((started, started + answered));
        if let Value::Object(fields) = &mut result {
            let timings = Timings {
                refresh_us: refreshed.as_micros() as u64,
                queries_us: (answered - refreshed).as_micros() as u64,
                files_changed: changed,
                answered_ahead: self.joins.taken_ahead() - self.reported_taken_ahead,
                ahead_us: ahead.as_micros() as u64,
                from_store,
            };
            fields.insert("timings".to_owned(), encode_answer(&timings));
            self.reported_taken_ahead = self.joins.taken_ahead();
        }
        self.answered_since_tidy = self.long_lived;
        Ok(result)
    }

    /// Whether the answers since the last tidy followed a change of many
    /// files (a first load, a batch of locks): work on the scale of the root,
    /// however long it took.
    pub fn follows_many_changes(&self) -> bool {
        self.spare_parses
    }

    /// Whether [`Service::tidy`] has work to do: a long-lived service that
    /// answered since it last tidied, or whose last answer read every file.
    pub fn untidy(&self) -> bool {
        self.spare_parses
            || self.answered_since_tidy
            || (self.long_lived && self.joins.unprepared_for_edits())
    }

    /// What a daemon does once an answer is out rather than before it
    /// (design §7.15): builds the mention index the next edit reads its
    /// reach from; after a change of many files, hashes every spec while
    /// their parses are held (a `status` would otherwise parse them all
    /// again); frees the parse trees no memo needs any more; and stores the
    /// answers for the next start (§7.16) after a first answer of each kind
    /// or a change of many files. Holds the service a tenth of a second after
    /// a first answer at 20,000 definitions; a few microseconds otherwise
    /// (the LRU finds nothing past its few hundred parses).
    pub fn tidy(&mut self) {
        self.joins.prepare_for_edits(&self.db);
        self.answered_since_tidy = false;
        if self.spare_parses {
            trellis_db::hash_every_spec(&self.db);
        }
        self.db.drop_spare_parses();
        let kind_unstored = self.joins.answered() != self.stored_kinds;
        if std::mem::take(&mut self.spare_parses) || kind_unstored {
            self.store_answers(false);
        }
    }

    pub fn load_problems(&self) -> &[Diagnostic] {
        &self.load_problems
    }

    /// Every lock of the root that cannot be read, each diagnostic naming its file
    /// (an empty or garbage lock must not pass for an absent one).
    pub fn unreadable_locks(&mut self) -> Vec<Diagnostic> {
        if let Some(problems) =
            (self.stored.as_ref()).and_then(|stored| stored.lock_problems.as_ref())
        {
            return problems.clone();
        }
        self.joins.lock_problems(&self.db)
    }
}

/// A change of at least this many files leaves a parse of each behind once
/// answered; fewer stay within what salsa's LRU keeps anyway.
const MANY_FILES: usize = 256;

/// What [`Service::ask_ahead`] found.
pub enum AheadOfRequests {
    /// Nothing changed, or nothing to ask.
    Nothing,
    /// A file is still being written: ask again when the feed has more, or
    /// after a while.
    Writing,
    /// The change is applied; answer these off the lock.
    Ask(Asked),
}

/// What the next check and status will ask, to be answered off the service's
/// lock, and the stretch of work it is timed in (`timings.ahead_us`).
pub struct Asked {
    ahead: trellis_db::AskAhead,
    stretch: ahead_time::AheadStretch,
}

impl Asked {
    /// [`trellis_db::AskAhead::answer`], ending the stretch.
    pub fn answer(self) -> bool {
        let answered = self.ahead.answer();
        self.stretch.end();
        answered
    }
}

/// How many threads may answer the queries of one request (design §7.7):
/// `TRELLIS_THREADS` when it is a positive number, else the cores this process
/// may run on, at most four — past that, the threads mostly wait on each
/// other's shared callees. Read once; answers never depend on it, so a value
/// that is no number is said on stderr and the default used.
fn query_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |cores| cores.get().min(4));
        let Ok(asked) = std::env::var("TRELLIS_THREADS") else {
            return cores;
        };
        match asked.trim().parse::<usize>() {
            Ok(threads) if threads > 0 => threads,
            _ => {
                eprintln!(
                    "trellis: TRELLIS_THREADS={asked:?} is not a positive number of threads; using {cores}"
                );
                cores
            }
        }
    })
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

/// Where the writer lock lives, root-relative (hidden: never an input).
pub const WRITER_LOCK: &str = ".trellis/writer.lock";

/// Takes the root's writer lock, waiting for the current holder; released when
/// the file is dropped (or its process ends, however it ends).
pub(super) fn writer_lock(root: &std::path::Path) -> Result<std::fs::File, Diagnostic> {
    let path = root.join(WRITER_LOCK);
    let problem = |error: std::io::Error| {
        HostCode::RootUnreadable
            .diagnostic(format!(
                "cannot take the root's writer lock {WRITER_LOCK}: {error}"
            ))
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

/// The `PATH` suites run oracles and cram under (it must reach `python3`,
/// `sh`): the client's, which the request carries; `/usr/bin:/bin` without one.
pub(crate) fn suite_path(path: Option<&str>) -> String {
    path.unwrap_or("/usr/bin:/bin").to_owned()
}

/// `suite_path` of an untyped request's `path` (the lowering methods').
pub fn client_path_param(params: &Value) -> String {
    suite_path(params.get("path").and_then(Value::as_str))
}

/// `soil.toml`'s text pinned to this toolchain (`toolchain update`'s rewrite;
/// `trellis init` writes its first `soil.toml` with it).
pub fn repin(text: &str) -> String {
    toolchain::repin(text)
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
    RpcError::invalid_params(message)
}

fn dispatch(
    service: &mut Service,
    request: &Request,
    progress: &mut dyn FnMut(Value),
) -> Result<Value, RpcError> {
    // An unreadable soil.toml is the root's first problem: report it as itself
    // (not as the empty configuration it leaves behind, "missing field").
    let config_problems: Vec<Diagnostic> = service
        .load_problems()
        .iter()
        .filter(|d| d.file.as_deref() == Some(trellis_db::CONFIG_FILE))
        .cloned()
        .collect();
    if !config_problems.is_empty() && *request != Request::Refresh {
        return Err(failed(&config_problems));
    }
    // Everything that verifies or records refuses under another toolchain's pin.
    if request.needs_pin() {
        toolchain::check_pin(service).map_err(|d| failed(&[d]))?;
    }
    Ok(match request {
        Request::Refresh => encode_answer(&RefreshAnswer {
            problems: service.load_problems().to_vec(),
        }),
        Request::Check(params) => encode_answer(&check::check(service, params)?),
        Request::Status(params) => check::status(service, params)?,
        Request::Adopt(params) => encode_answer(&locks::adopt(service, params)?),
        Request::Test(params) => {
            let mut answer = test::test(service, params, progress)?;
            // Files that could not be loaded are not tested: say so.
            answer
                .errors
                .splice(0..0, service.load_problems().iter().cloned());
            encode_answer(&answer)
        }
        Request::Review(params) => encode_answer(&locks::review(service, params)?),
        Request::DecisionsEditorial(params) => {
            encode_answer(&locks::decisions_editorial(service, params)?)
        }
        Request::ToolchainUpdate => encode_answer(&toolchain::update(service)?),
        Request::Context(params) => context::context(service, params)?,
        Request::Question(params) => encode_answer(&answer::question(service, params)?),
        Request::Answer(params) => encode_answer(&answer::answer(service, params)?),
        Request::Jobs => return Err(needs_daemon()),
    })
}

/// The methods outside the typed set: a lowering job's own (`job.*`, the job
/// socket's), and the daemon's lowering methods, which a one-shot service
/// refuses.
fn dispatch_job(service: &mut Service, method: &str, params: &Value) -> Result<Value, RpcError> {
    match method {
        "job.create" | "job.inspect" | "job.tool" => jobs::handle(service, method, params),
        "lower" | "decisions.triage" => Err(needs_daemon()),
        _ => Err(RpcError::method_not_found(method)),
    }
}

/// The lowering methods' refusal outside the daemon.
fn needs_daemon() -> RpcError {
    failed(&[needs_daemon_diagnostic()])
}

pub(crate) fn needs_daemon_diagnostic() -> Diagnostic {
    HostCode::JobNeedsDaemon.diagnostic(
        "lowering runs in the root's daemon (its jobs and agents live there): drop --no-daemon",
    )
}
