//! The root-wide answers — `check` of every definition, every `status` row, the
//! unreadable locks — joined outside salsa entry by entry, so a request after an
//! edit asks salsa only about the entries the edit can reach (design §7.5).
//! Salsa's own root-wide memos revalidate every memo of the root after any text
//! edit (§7.1); a host that keeps a `RootJoins` beside its database instead
//! keeps each module's last entries — its own files' and one per spec and lock
//! — and re-asks exactly those an edit may move, as the mention index
//! ([`crate::mentions`]) reaches them. What no mention can bound — a new soil0
//! pin, the project's files, a type, a file outside the module layout — drops
//! every part. The entries are asked through the functions salsa's per-module
//! memos are built from, and the check is joined by the same `join_check`
//! salsa's memo uses.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::FxHashMap;
use trellis_diag::Diagnostic;

use crate::ahead::{AskAhead, Coming, Shelf};
use crate::change::Change;
use crate::check_report::{
    CheckReport, check_module_head, check_module_helpers, check_spec_entry, join_check,
};
use crate::db::RootDatabase;
use crate::files::FileKind;
use crate::files::{SourceFile, Workspace};
use crate::index::{ModuleFiles, RootIndex, root_index};
use crate::locks::read_lock_file;
use crate::mentions::{Mentions, Owner, Reached, Said};
use crate::sealed::{self, BodyEdit, BodyFace, SpecEdit};
use crate::spread;
use crate::status::{Explain, StatusRow};
use crate::status_rows::{HeldRow, project_status_row, scope_status_row, spec_status_entry};

pub use crate::tally::StatusCount;
use crate::tally::{CountTally, Share, Tally};

/// How the name of a spec's file ends ([`FileKind::Spec`]).
const SPEC_SUFFIX: &str = ".tr";

/// What an edit may have moved of an entry it reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Moved {
    /// Only hashes below its check rungs: a sealed body edit below it (§7.8).
    Hashes,
    Everything,
}

/// What a [`Part::refresh`] asked salsa about.
#[derive(Debug, PartialEq, Eq)]
enum Refreshed {
    Nothing,
    /// The module's own entry and these stems (in order), each in its place.
    Stems(Vec<String>),
    /// Everything, or the stems came or went: a join is made again whole.
    Whole,
}

impl Refreshed {
    fn asked(&self) -> bool {
        *self != Refreshed::Nothing
    }
}

/// One kind of a module's part, entry by entry: what belongs to the module as a
/// whole (`M`), and one entry per file stem (`S`), with the stems an edit
/// reached since and what it may have moved of each. Refreshing asks salsa
/// again for the module's own entry and the reached stems' alone, and keeps
/// every other entry.
struct Part<M, S> {
    entries: Option<(M, BTreeMap<String, S>)>,
    stale: FxHashMap<String, Moved>,
}

impl<M, S> Default for Part<M, S> {
    fn default() -> Self {
        Part {
            entries: None,
            stale: FxHashMap::default(),
        }
    }
}

impl<M, S> Part<M, S> {
    /// The part as the database has it now: built whole the first time, and
    /// afterwards the module's own entry and the reached stems' asked again,
    /// over `stems`, the module's current list (so a stem that came is asked,
    /// one that went is dropped).
    /// `stem` is handed the entry held for a stem whose hashes alone moved.
    /// Returns what was asked.
    fn refresh<'a>(
        &mut self,
        stems: impl Iterator<Item = &'a String> + Clone,
        module: impl FnOnce() -> M,
        mut stem: impl FnMut(&str, Option<&S>) -> S,
    ) -> Refreshed {
        match &mut self.entries {
            Some(_) if self.stale.is_empty() => Refreshed::Nothing,
            // The same stems as held: the reached entries are replaced in
            // place, and every other entry stays where it is.
            Some((own, by_stem)) if by_stem.keys().eq(stems.clone()) => {
                let mut asked: Vec<String> = Vec::with_capacity(self.stale.len());
                for (name, value) in by_stem.iter_mut() {
                    *value = match self.stale.get(name) {
                        None => continue,
                        Some(Moved::Hashes) => stem(name, Some(value)),
                        Some(Moved::Everything) => stem(name, None),
                    };
                    asked.push(name.clone());
                }
                self.stale.clear();
                *own = module();
                Refreshed::Stems(asked)
            }
            _ => {
                let mut kept = self
                    .entries
                    .take()
                    .map(|(_, by_stem)| by_stem)
                    .unwrap_or_default();
                let by_stem = stems
                    .map(|name| {
                        let value = match (kept.remove(name), self.stale.get(name)) {
                            (Some(value), None) => value,
                            (Some(value), Some(Moved::Hashes)) => stem(name, Some(&value)),
                            _ => stem(name, None),
                        };
                        (name.clone(), value)
                    })
                    .collect();
                self.stale.clear();
                self.entries = Some((module(), by_stem));
                Refreshed::Whole
            }
        }
    }

    /// The stems of `stems` the next refresh asks salsa about, each with the
    /// entry it is handed (see [`Part::refresh`]).
    fn to_ask<'a>(&self, stems: impl Iterator<Item = &'a String>) -> Vec<(&'a String, Option<&S>)> {
        match &self.entries {
            None => stems.map(|stem| (stem, None)).collect(),
            // Most modules: nothing reached, and no stem looked at.
            Some(_) if self.stale.is_empty() => Vec::new(),
            Some((_, held)) => stems
                .filter_map(|stem| match self.stale.get(stem)? {
                    Moved::Hashes => Some((stem, held.get(stem))),
                    Moved::Everything => Some((stem, None)),
                })
                .collect(),
        }
    }

    /// Marks `stem` to be asked again for what `moved`.
    fn reach(&mut self, stem: &str, moved: Moved) {
        match self.stale.get_mut(stem) {
            Some(was) => *was = (*was).max(moved),
            None => {
                self.stale.insert(stem.to_owned(), moved);
            }
        }
    }

    fn entries(&self) -> &(M, BTreeMap<String, S>) {
        self.entries.as_ref().expect("refreshed before it is read")
    }
}

/// One module's parts, each filled when first asked for: the check (its own
/// files' findings before the specs', its helpers' after), the status rows
/// (its decision scope's before the specs'), and the unreadable locks.
#[derive(Default)]
struct ModuleParts {
    check: Part<(CheckReport, CheckReport), CheckReport>,
    status: Part<Option<Arc<StatusRow>>, Option<HeldRow>>,
    lock_problems: Part<(), Vec<Diagnostic>>,
    /// Each part's entries joined in order, made again when one moves, so a
    /// join costs one append per module.
    check_joined: CheckReport,
    status_joined: Vec<Arc<StatusRow>>,
    status_counts: Vec<StatusCount>,
    lock_problems_joined: Vec<Diagnostic>,
    /// Whether a joined row's reason names a spec's file: only such a row
    /// can cite the spec an edit moved ([`RootJoins::reach_citing`]).
    status_names_a_spec: bool,
}

impl ModuleParts {
    /// Marks the entries of `stems` to be asked again for what `moved`: a
    /// move of hashes alone reaches the status rows, which compare them, and
    /// neither the checks nor the locks.
    fn reach<'a>(&mut self, stems: impl IntoIterator<Item = &'a String>, moved: Moved) {
        for stem in stems {
            self.status.reach(stem, moved);
            if moved == Moved::Everything {
                self.check.reach(stem, moved);
                self.lock_problems.reach(stem, moved);
            }
        }
    }

    /// Joins the status rows again after a refresh: when every row kept its
    /// place, only the rows `refreshed` asked are copied (a hub edit moves a
    /// few rows in each of most modules), else every row.
    fn join_status(&mut self, refreshed: &Refreshed) {
        let (scope, specs) = self.status.entries();
        // The stems are as they were, and whether a stem has a row is its
        // kind's: the rows kept their places unless the scope's row came or went.
        let rows = usize::from(scope.is_some()) + specs.values().flatten().count();
        match refreshed {
            Refreshed::Stems(asked) if rows == self.status_joined.len() => {
                let mut at = 0;
                if let Some(scope) = scope {
                    self.status_joined[0] = Arc::clone(scope);
                    at = 1;
                }
                let mut asked = asked.iter().peekable();
                for (stem, held) in specs {
                    let was_asked = asked.next_if(|name| *name == stem).is_some();
                    let Some(held) = held else { continue };
                    if was_asked {
                        self.status_joined[at] = Arc::clone(&held.row);
                    }
                    at += 1;
                }
            }
            _ => {
                self.status_joined = (scope.iter())
                    .chain(specs.values().flatten().map(|held| &held.row))
                    .map(Arc::clone)
                    .collect();
            }
        }
        self.status_counts = count_statuses(&self.status_joined);
        self.status_names_a_spec = self
            .status_joined
            .iter()
            .any(|row| (row.reason.as_deref()).is_some_and(|reason| reason.contains(SPEC_SUFFIX)));
    }

    /// Whether a row of this module is brief ([`Explain::EdgesOnly`]).
    fn holds_brief_rows(&self) -> bool {
        (self.status.entries.as_ref())
            .is_some_and(|(_, specs)| specs.values().flatten().any(|held| held.brief))
    }

    /// Climbs the ladder of each brief row again, saying what changed below
    /// its moved callees, and joins the rows again if one was.
    fn explain_brief_rows(&mut self, db: &RootDatabase, module: &str, files: &ModuleFiles) {
        let Some((_, specs)) = self.status.entries.as_mut() else {
            return;
        };
        let mut explained = false;
        for (stem, held) in specs.iter_mut() {
            if !held.as_ref().is_some_and(|held| held.brief) {
                continue;
            }
            let brief = held.take();
            *held = spec_status_entry(db, module, files, stem, brief.as_ref(), Explain::Callees);
            explained = true;
        }
        if explained {
            self.join_status(&Refreshed::Whole);
        }
    }

    /// The stems (`_module` for the module's own) whose findings or status
    /// rows cite the spec at `path`.
    fn citing(&self, module: &str, path: &str) -> Vec<String> {
        let cites = |diagnostics: &[Diagnostic]| {
            (diagnostics.iter()).any(|diagnostic| diagnostic.file.as_deref() == Some(path))
        };
        let row_cites = |row: &StatusRow| row.reason.as_deref().is_some_and(|r| r.contains(path));
        let mut citing: Vec<String> = Vec::new();
        if cites(&self.check_joined.diagnostics)
            && let Some(((head, helpers), by_stem)) = &self.check.entries
        {
            if cites(&head.diagnostics) || cites(&helpers.diagnostics) {
                citing.push("_module".to_owned());
            }
            (by_stem.iter())
                .filter(|(_, report)| cites(&report.diagnostics))
                .for_each(|(stem, _)| citing.push(stem.clone()));
        }
        if self.status_names_a_spec {
            for row in self.status_joined.iter().filter(|row| row_cites(row)) {
                match row.name.split_once("::") {
                    Some((_, stem)) => citing.push(stem.to_owned()),
                    None if row.name == module => citing.push("_module".to_owned()),
                    None => {}
                }
            }
        }
        citing
    }

    fn is_reached(&self) -> bool {
        !(self.check.stale.is_empty()
            && self.status.stale.is_empty()
            && self.lock_problems.stale.is_empty())
    }
}

/// The modules whose parts of one kind (check or status) may hold an entry
/// to ask: an answer after an edit visits these alone, not every module of
/// the root (at 20,000 definitions a thousand, listed several times an
/// edit). A module is listed when it is reached, dropped or comes; a join
/// of the kind settles them all.
struct Unsettled {
    /// Every module: nothing of the kind is joined yet, or every part was
    /// dropped.
    everything: bool,
    modules: BTreeSet<String>,
}

impl Default for Unsettled {
    fn default() -> Self {
        Unsettled {
            everything: true,
            modules: BTreeSet::new(),
        }
    }
}

impl Unsettled {
    /// The index's modules this kind visits, in the index's order.
    fn of<'i>(&self, index: &'i RootIndex) -> Vec<(&'i String, &'i Arc<ModuleFiles>)> {
        match self.everything {
            true => index.modules.iter().collect(),
            false => (self.modules.iter())
                .filter_map(|module| index.modules.get_key_value(module))
                .collect(),
        }
    }

    fn settle(&mut self) {
        self.everything = false;
        self.modules.clear();
    }

    /// Takes again in `tally` the share of each module listed (every module
    /// of the index when everything is), as `share` reads it from its part.
    fn retake(
        &self,
        tally: &mut Tally,
        index: &RootIndex,
        parts: &FxHashMap<String, ModuleParts>,
        share: impl Fn(&ModuleParts) -> Share,
    ) {
        let now = |module: &str| {
            (index.modules.contains_key(module))
                .then(|| parts.get(module).map(&share))
                .flatten()
        };
        match self.everything {
            true => tally.retake(true, index.modules.keys().map(String::as_str), now),
            false => tally.retake(false, self.modules.iter().map(String::as_str), now),
        }
    }
}

/// A host's cache of the root-wide answers (see the module paragraph). Every
/// change to the database passes through [`RootJoins::invalidate`] just before
/// it is applied; a change applied without it is noticed (the database counts
/// its changes) and drops everything. In debug builds every answer is compared
/// with salsa's own root-wide memo.
#[derive(Default)]
pub struct RootJoins {
    parts: FxHashMap<String, ModuleParts>,
    project_row: Option<Arc<StatusRow>>,
    project_counts: Vec<StatusCount>,
    mentions: Mentions,
    /// Body edits whose reach waits to be marked until they are applied and
    /// it is known whether they were sealed ([`crate::sealed`]).
    body_edits: Vec<BodyEdit>,
    /// [`RootDatabase::changes_applied`] as of the parts held.
    synced: u64,
    /// How many threads may ask salsa about the entries to refresh before
    /// they are joined ([`crate::spread`]); 0 and 1 ask on the caller's alone.
    threads: usize,
    /// Answers asked ahead of the next request ([`crate::ahead`]).
    shelf: Arc<Shelf>,
    /// Whether a check, a status was ever asked for: only what a host asks
    /// for is asked ahead (a first answer of the root is no edit's work).
    asked_check: bool,
    asked_status: bool,
    /// How many entries answers took from the shelf (tests and benchmarks).
    taken_ahead: usize,
    /// The modules whose check, status and lock parts may have entries to ask.
    unsettled_check: Unsettled,
    unsettled_status: Unsettled,
    unsettled_locks: Unsettled,
    /// What the check and the lock problems sum over every module's part.
    check_tally: Tally,
    lock_tally: Tally,
    /// The modules a row of whose status names a spec's file (the tally's
    /// count unused).
    status_naming_specs: Tally,
    /// Every module's status counts summed.
    status_counts: CountTally,
    /// How many modules the answers so far visited (tests and benchmarks).
    visited: usize,
    /// The modules that may hold brief rows ([`Explain::EdgesOnly`]), which
    /// a full status explains before it answers.
    brief_modules: BTreeSet<String>,
    /// Which joins these are ([`RootJoins::instance`]).
    instance: Instance,
}

/// A number no other [`RootJoins`] of the process has.
struct Instance(u64);

impl Default for Instance {
    fn default() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Instance(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

impl RootJoins {
    /// Joins that ask the entries an answer needs on up to `threads` threads
    /// first (a host passes the cores it may use; tests keep the default, one).
    pub fn with_threads(threads: usize) -> Self {
        RootJoins {
            threads,
            ..RootJoins::default()
        }
    }

    /// A number no other joins of the process have. With the database's
    /// [`RootDatabase::changes_applied`] it names what every answer of these
    /// joins is a function of: a host may keep an answer it derived while both
    /// stay the same (design §7.5).
    pub fn instance(&self) -> u64 {
        self.instance.0
    }

    /// The entries the next check and status will ask salsa about, to be
    /// answered ahead of them on another thread (design §7.10); `None`
    /// when they ask nothing. The answers are for the database as it is now:
    /// a host takes it after applying a change, or after a request that
    /// asked for only part of what a change moved.
    pub fn ask_ahead(&mut self, db: &RootDatabase) -> Option<AskAhead> {
        self.sync(db);
        let index = root_index(db, Workspace::get(db));
        fn owned<S>(
            &(module, files, stem, _): &ToAsk<'_, S>,
        ) -> (String, Arc<ModuleFiles>, String) {
            (module.to_owned(), Arc::clone(files), stem.to_owned())
        }
        let check: Vec<_> = match self.asked_check {
            true => (self.checks_to_ask(index).iter()).map(owned).collect(),
            false => Vec::new(),
        };
        let status: Vec<_> = match self.asked_status {
            true => (self.rows_to_ask(index).iter())
                .map(|entry| (owned(entry), entry.3.cloned().flatten()))
                .collect(),
            false => Vec::new(),
        };
        if check.is_empty() && status.is_empty() {
            return None;
        }
        Some(AskAhead::new(db, self.threads, check, status, &self.shelf))
    }

    /// The check entries the next answer asks salsa about, as (module,
    /// files, stem, the entry held): one per spec, over the modules whose
    /// check part is unsettled.
    fn checks_to_ask<'s>(&'s self, index: &'s RootIndex) -> Vec<ToAsk<'s, CheckReport>> {
        let modules = self.unsettled_check.of(index);
        self.to_ask_by(modules, |parts| &parts.check, |files| &files.specs)
    }

    /// [`RootJoins::checks_to_ask`] for the status rows, each with the row
    /// held for a stem whose hashes alone moved.
    fn rows_to_ask<'s>(&'s self, index: &'s RootIndex) -> Vec<ToAsk<'s, Option<HeldRow>>> {
        let modules = self.unsettled_status.of(index);
        self.to_ask_by(modules, |parts| &parts.status, |files| &files.specs)
    }

    /// The entries of `modules`' `part` the next answer asks salsa about, one
    /// per file of `stems`.
    fn to_ask_by<'s, 'i: 's, M: 's, S: 's>(
        &'s self,
        modules: Vec<(&'i String, &'i Arc<ModuleFiles>)>,
        part: impl Fn(&ModuleParts) -> &Part<M, S>,
        stems: impl Fn(&'i ModuleFiles) -> &'i BTreeMap<String, SourceFile>,
    ) -> Vec<ToAsk<'s, S>> {
        (modules.into_iter())
            .flat_map(|(module, files)| {
                let stems = stems(files).keys();
                let stems = match self.parts.get(module) {
                    Some(parts) => part(parts).to_ask(stems),
                    None => stems.map(|stem| (stem, None)).collect(),
                };
                (stems.into_iter())
                    .map(move |(stem, held)| (module.as_str(), files, stem.as_str(), held))
            })
            .collect()
    }

    /// Marks what `reached` names as moved by `moved`: for everything, a
    /// module reached whole is dropped; for hashes alone, its every stem is
    /// marked, as the index has it now.
    fn mark(&mut self, db: &RootDatabase, reached: BTreeMap<String, Reached>, moved: Moved) {
        for (module, stems) in reached {
            match (stems, moved) {
                (Reached::Stems(stems), _) => self.reach(&module, &stems, moved),
                (Reached::Whole, Moved::Everything) => self.drop_part(&module),
                (Reached::Whole, Moved::Hashes) => {
                    let index = root_index(db, Workspace::get(db));
                    if let Some(files) = index.modules.get(&module) {
                        self.reach(&module, files.specs.keys(), moved);
                    }
                }
            }
        }
    }

    /// Marks `stems` of `module`'s parts (held ones alone) to be asked again
    /// for what `moved`, and lists the module as unsettled for the kinds
    /// that moves.
    fn reach<'a>(
        &mut self,
        module: &str,
        stems: impl IntoIterator<Item = &'a String>,
        moved: Moved,
    ) {
        let Some(parts) = self.parts.get_mut(module) else {
            return;
        };
        parts.reach(stems, moved);
        self.unsettled_status.modules.insert(module.to_owned());
        if moved == Moved::Everything {
            self.unsettled_check.modules.insert(module.to_owned());
            self.unsettled_locks.modules.insert(module.to_owned());
        }
    }

    /// Drops `module`'s parts: every kind asks it whole again (a module that
    /// came has none yet, and is listed all the same).
    fn drop_part(&mut self, module: &str) {
        self.parts.remove(module);
        self.status_naming_specs.retake(false, [module], |_| None);
        self.unsettled_check.modules.insert(module.to_owned());
        self.unsettled_status.modules.insert(module.to_owned());
        self.unsettled_locks.modules.insert(module.to_owned());
    }

    /// Drops every module's parts: every kind asks every module again.
    fn drop_every_part(&mut self) {
        self.parts.clear();
        self.status_naming_specs = Tally::default();
        self.unsettled_check = Unsettled::default();
        self.unsettled_status = Unsettled::default();
        self.unsettled_locks = Unsettled::default();
    }

    /// Drops the parts `change` can move. Call it just before `change.apply(db)`,
    /// while `db` still holds the texts the change replaces.
    pub fn invalidate(&mut self, db: &RootDatabase, change: &Change) {
        self.shelf.clear();
        self.prepare_for_edits(db);
        self.synced = db.changes_applied() + 1;
        if self.parts.is_empty() {
            // Nothing held: the index is built afresh when next needed, and
            // every module is asked whole.
            self.mentions = Mentions::default();
            self.drop_every_part();
            return;
        }
        let mut seeds = Vec::new();
        let mut bodies: Vec<Owner> = Vec::new();
        let mut words = Vec::new();
        if let Some(config) = &change.config_text {
            let before = ConfigReach::of(Workspace::get(db).config_text(db));
            let after = ConfigReach::of(config);
            if before.soil0_major != after.soil0_major {
                self.drop_every_part();
            }
            // A tag declared or withdrawn moves the specs that name it alone.
            words.extend(before.tags.symmetric_difference(&after.tags).cloned());
        }
        // Edits whose face is kept: their owners' own entries move alone.
        let mut sealed_files: Vec<(Owner, &str)> = Vec::new();
        for (path, text) in &change.files {
            let kind = FileKind::of(camino::Utf8Path::new(path));
            let spec = match (kind, text) {
                (FileKind::Spec, Some(text)) => Some(trellis_spec::parse_tr(text, stem_of(path)).0),
                _ => None,
            };
            let edit = spec.as_ref().map(|spec| sealed::spec_edit(db, path, spec));
            let said = match (&spec, text) {
                (Some(spec), _) => Some(Said::Spec(spec)),
                (None, Some(text)) => Some(Said::Text(text)),
                (None, None) => None,
            };
            match self.mentions.update(path, said) {
                Some((owner, module_came_or_went)) => {
                    // Whoever names the module may resolve differently now.
                    if module_came_or_went {
                        words.push(owner.0.clone());
                        self.drop_part(&owner.0);
                    } else if text.is_some() && sealed::is_body_file(path, &owner) {
                        bodies.push(owner);
                        continue;
                    } else if kind == FileKind::Lock || edit == Some(SpecEdit::Sealed) {
                        sealed_files.push((owner, path));
                        continue;
                    } else if owner.1 == "_module"
                        && edit == Some(SpecEdit::Moved { exports: false })
                    {
                        // Its decisions or grants moved: its module's entries
                        // read them, and nobody else does.
                        self.drop_part(&owner.0);
                        continue;
                    }
                    seeds.push(owner);
                }
                // The project's spec speaks for every module, unless its
                // face was kept: its own row and findings are asked anew by
                // every answer.
                None if edit == Some(SpecEdit::Sealed) => {}
                None => self.drop_every_part(),
            }
        }
        if self.parts.is_empty() {
            return;
        }
        for (owner, path) in sealed_files {
            self.reach(&owner.0, [&owner.1], Moved::Everything);
            if FileKind::of(camino::Utf8Path::new(path)) == FileKind::Spec {
                self.reach_citing(path);
            }
        }
        match self.mentions.reach(seeds, &words) {
            Some(reached) => self.mark(db, reached, Moved::Everything),
            None => self.drop_every_part(),
        }
        for owner in bodies {
            // Its own entries read the body, whatever the edit was.
            self.reach(&owner.0, [&owner.1], Moved::Everything);
            let Some(reached) = self.mentions.reach(vec![owner.clone()], &[]) else {
                self.drop_every_part();
                return;
            };
            match BodyFace::of(db, &owner) {
                Some(before) => self.body_edits.push(BodyEdit {
                    owner,
                    before,
                    reach: reached,
                }),
                None => self.mark(db, reached, Moved::Everything),
            }
        }
    }

    /// Builds the mention index the next edit's reach is read from, if parts
    /// are held and it is not built yet (design §7.15): one pass over the
    /// words of every spec's blocks and every Soil file, read from the parses
    /// the first answer made. A first answer does not wait for it; a host
    /// calls this once that answer is out (the daemon does, off the
    /// request), or the first edit builds it, from the texts as they were.
    pub fn prepare_for_edits(&mut self, db: &RootDatabase) {
        self.sync(db);
        if !self.mentions.built && !self.parts.is_empty() {
            self.mentions.build(db);
        }
    }

    /// Whether [`RootJoins::prepare_for_edits`] has work to do.
    pub fn unprepared_for_edits(&self) -> bool {
        !self.mentions.built && !self.parts.is_empty()
    }

    /// Marks every held entry whose findings cite the spec at `path`: a
    /// finding is located in its spec's text when answered, so an edit that
    /// moves the lines of a spec moves what cites it, though nothing it
    /// reads of the spec moved (design §7.14). Only the modules with a
    /// finding or a row naming a spec are looked at: a root whose every row
    /// has a reason (tests never run) otherwise searched 22,000 reasons for
    /// the path on each prose edit, 5-15 ms at 20,000 definitions.
    fn reach_citing(&mut self, path: &str) {
        let looked_at: BTreeSet<&String> = (self.check_tally.holding().iter())
            .chain(self.status_naming_specs.holding())
            .collect();
        let reached: Vec<(String, Vec<String>)> = (looked_at.iter())
            .filter_map(|module| Some((*module, self.parts.get(*module)?)))
            .map(|(module, parts)| (module.clone(), parts.citing(module, path)))
            .filter(|(_, citing)| !citing.is_empty())
            .collect();
        debug_assert!(
            (self.parts.iter())
                .filter(|(module, _)| !looked_at.contains(module))
                .all(|(module, parts)| parts.citing(module, path).is_empty()),
            "a module passed over cites {path}"
        );
        for (module, citing) in reached {
            self.reach(&module, &citing, Moved::Everything);
        }
    }

    /// The whole root's check, as [`crate::check_root`] answers it for the root.
    pub fn check(&mut self, db: &RootDatabase) -> CheckReport {
        self.sync(db);
        self.asked_check = true;
        let index = root_index(db, Workspace::get(db));
        let ahead = self.checks_to_ask(index);
        let shelved = (self.shelf).take_checks(db.changes_applied(), keys_of(&ahead), Coming::Wait);
        let taken = shelved.as_ref().map_or(0, Vec::len);
        let answered = answered_ahead(
            &ahead,
            shelved.or_else(|| {
                spread::answer_ahead(db, &ahead, self.threads, |db, (module, files, stem, _)| {
                    check_spec_entry(db, module, files, stem)
                })
            }),
        );
        self.taken_ahead += taken;
        self.join_check_parts(db, index, answered);
        let (parts, tally) = (&self.parts, &self.check_tally);
        let joined = join_check(db, |_, report| {
            report.checked += tally.total();
            // A module the tally holds has a part: the join just settled both.
            for parts in (tally.holding().iter()).filter_map(|module| parts.get(module)) {
                report.append_findings(&parts.check_joined);
            }
        });
        debug_assert_eq!(
            joined,
            (db.query_log()).unrecorded(|| crate::check_report::check_root(db, None)),
            "the joined check differs from the database's"
        );
        joined
    }

    /// Refreshes every module's check part, taking the entries in `answered`
    /// (by module and stem) and asking salsa for the rest.
    fn join_check_parts(
        &mut self,
        db: &RootDatabase,
        index: &crate::index::RootIndex,
        mut answered: Answered<CheckReport>,
    ) {
        let modules = self.unsettled_check.of(index);
        self.visited += modules.len();
        for (module, files) in modules {
            let parts = self.parts_of(module);
            let mut answered = answered.get_mut(module.as_str());
            let refreshed = parts.check.refresh(
                files.specs.keys(),
                || {
                    let head = check_module_head(db, files);
                    (head, check_module_helpers(db, module, files))
                },
                |stem, _| {
                    (answered.as_mut().and_then(|answered| answered.remove(stem)))
                        .unwrap_or_else(|| check_spec_entry(db, module, files, stem))
                },
            );
            if refreshed.asked() {
                let ((head, helpers), specs) = parts.check.entries();
                let mut joined = head.clone();
                specs.values().for_each(|entry| joined.append(entry));
                joined.append(helpers);
                parts.check_joined = joined;
            }
        }
        let share = |parts: &ModuleParts| {
            let joined = &parts.check_joined;
            (joined.checked, joined.has_findings())
        };
        (self.unsettled_check).retake(&mut self.check_tally, index, &self.parts, share);
        self.unsettled_check.settle();
    }

    /// Every row of the root's status, in [`crate::root_status`]'s order.
    pub fn status(&mut self, db: &RootDatabase) -> Vec<&StatusRow> {
        (self.status_groups(db).into_iter())
            .flat_map(|group| group.rows)
            .map(|row| &**row)
            .collect()
    }

    /// The root's status rows in [`crate::root_status`]'s order, in groups —
    /// the project's row, then each module's — each with its counts by status
    /// and kind, so a summary can count a group whose rows it does not show
    /// without reading them.
    pub fn status_groups(&mut self, db: &RootDatabase) -> Vec<RowGroup<'_>> {
        self.join_status(db);
        self.explain_brief_rows(db);
        self.status_groups_joined(db, true)
    }

    /// [`RootJoins::status_groups`] for a summary, which shows a few rows of
    /// each status and counts the rest: a `callee-changed` row climbed again
    /// after an edit below it may name its moved edges without what changed
    /// below them (design §7.13); [`RootJoins::explained`] says it of a row
    /// that is shown. A hub edit's `status` then walks no callee of the rows
    /// it only counts. The groups are made as they are read, and come with
    /// every group's counts summed: a summary reads them only until the rest
    /// can change nothing it says, and counts the rest from the sums (design
    /// §7.5).
    pub fn status_summary(
        &mut self,
        db: &RootDatabase,
    ) -> (impl Iterator<Item = RowGroup<'_>>, Vec<StatusCount>) {
        self.join_status(db);
        let index = root_index(db, Workspace::get(db));
        self.project_row = project_status_row(db).map(Arc::new);
        self.project_counts = count_statuses(self.project_row.as_slice());
        let mut totals = self.status_counts.total().to_vec();
        for (status, kind, count) in &self.project_counts {
            match (totals.iter_mut()).find(|(s, k, _)| s == status && k == kind) {
                Some((_, _, sum)) => *sum += count,
                None => totals.push((status.clone(), kind, *count)),
            }
        }
        debug_assert!(
            {
                let joined = self.status_groups_joined(db, false);
                let mut summed: Vec<StatusCount> = Vec::new();
                for (status, kind, count) in joined.iter().flat_map(|group| group.counts) {
                    match (summed.iter_mut()).find(|(s, k, _)| s == status && k == kind) {
                        Some((_, _, sum)) => *sum += count,
                        None => summed.push((status.clone(), kind, *count)),
                    }
                }
                summed.sort();
                let mut kept = totals.clone();
                kept.sort();
                summed == kept
            },
            "the status counts summed differ from every module's"
        );
        let parts = &self.parts;
        let groups = std::iter::once(RowGroup {
            rows: self.project_row.as_slice(),
            counts: &self.project_counts,
        })
        .chain((index.modules.keys()).map(move |module| {
            let parts = &parts[module.as_str()];
            RowGroup {
                rows: &parts.status_joined,
                counts: &parts.status_counts,
            }
        }));
        (groups, totals)
    }

    /// The row of `name` (`module::definition`) as [`RootJoins::status_groups`]
    /// has it, when a summary holds it brief; `None` when it is not brief
    /// (the row held is the whole row).
    pub fn explained(&self, db: &RootDatabase, name: &str) -> Option<Arc<StatusRow>> {
        let (module, stem) = name.split_once("::")?;
        let index = root_index(db, Workspace::get(db));
        let files = index.modules.get(module)?;
        let (_, specs) = self.parts.get(module)?.status.entries.as_ref()?;
        let held = specs.get(stem)?.as_ref().filter(|held| held.brief)?;
        spec_status_entry(db, module, files, stem, Some(held), Explain::Callees)
            .map(|entry| entry.row)
    }

    /// Says what changed below the moved callees of every brief row.
    fn explain_brief_rows(&mut self, db: &RootDatabase) {
        let index = root_index(db, Workspace::get(db));
        for module in std::mem::take(&mut self.brief_modules) {
            let (Some(files), Some(parts)) =
                (index.modules.get(&module), self.parts.get_mut(&module))
            else {
                continue;
            };
            parts.explain_brief_rows(db, &module, files);
            let names_a_spec = parts.status_names_a_spec;
            self.note_naming_specs(&module, names_a_spec);
        }
    }

    /// Keeps whether `module`'s status rows name a spec's file.
    fn note_naming_specs(&mut self, module: &str, names_a_spec: bool) {
        (self.status_naming_specs).retake(false, [module], |_| Some((0, names_a_spec)));
    }

    /// Asks salsa for the status rows an edit moved (or takes them from the
    /// shelf) and joins them in.
    fn join_status(&mut self, db: &RootDatabase) {
        self.sync(db);
        self.asked_status = true;
        let index = root_index(db, Workspace::get(db));
        let ahead = self.rows_to_ask(index);
        let shelved = (self.shelf).take_rows(db.changes_applied(), keys_of(&ahead), Coming::Wait);
        let taken = shelved.as_ref().map_or(0, Vec::len);
        let answered = answered_ahead(
            &ahead,
            shelved.or_else(|| {
                spread::answer_ahead(
                    db,
                    &ahead,
                    self.threads,
                    |db, &(module, files, stem, held)| {
                        let held = held.and_then(Option::as_ref);
                        spec_status_entry(db, module, files, stem, held, Explain::EdgesOnly)
                    },
                )
            }),
        );
        self.taken_ahead += taken;
        self.join_status_parts(db, index, answered);
    }

    /// The groups of the rows joined; `whole`: every row explained, and so
    /// equal to salsa's root-wide memo (debug builds compare them).
    fn status_groups_joined(&mut self, db: &RootDatabase, whole: bool) -> Vec<RowGroup<'_>> {
        let index = root_index(db, Workspace::get(db));
        self.project_row = project_status_row(db).map(Arc::new);
        self.project_counts = count_statuses(self.project_row.as_slice());
        let parts = &self.parts;
        let groups: Vec<RowGroup<'_>> = std::iter::once(RowGroup {
            rows: self.project_row.as_slice(),
            counts: &self.project_counts,
        })
        .chain((index.modules.keys()).map(|module| {
            let parts = &parts[module.as_str()];
            RowGroup {
                rows: &parts.status_joined,
                counts: &parts.status_counts,
            }
        }))
        .collect();
        // A brief row differs from the memo's in its reason alone.
        debug_assert!(
            {
                let memo = (db.query_log()).unrecorded(|| crate::status_rows::root_status(db));
                let joined: Vec<&StatusRow> = (groups.iter())
                    .flat_map(|group| group.rows)
                    .map(|row| &**row)
                    .collect();
                joined.len() == memo.len()
                    && joined.iter().zip(memo).all(|(joined, memo)| {
                        if whole || joined.status != "callee-changed" {
                            *joined == memo
                        } else {
                            (&joined.name, &joined.status, &joined.fix)
                                == (&memo.name, &memo.status, &memo.fix)
                        }
                    })
            },
            "the joined status differs from the database's"
        );
        groups
    }

    /// Refreshes every module's status part, taking the entries in `answered`
    /// (by module and stem) and asking salsa for the rest.
    fn join_status_parts(
        &mut self,
        db: &RootDatabase,
        index: &crate::index::RootIndex,
        mut answered: Answered<Option<HeldRow>>,
    ) {
        let modules = self.unsettled_status.of(index);
        self.visited += modules.len();
        for (module, files) in modules {
            let parts = self.parts_of(module);
            let mut answered = answered.get_mut(module.as_str());
            let refreshed = parts.status.refresh(
                files.specs.keys(),
                || scope_status_row(db, module, files).map(Arc::new),
                |stem, held| {
                    (answered.as_mut().and_then(|answered| answered.remove(stem))).unwrap_or_else(
                        || {
                            let held = held.and_then(Option::as_ref);
                            spec_status_entry(db, module, files, stem, held, Explain::EdgesOnly)
                        },
                    )
                },
            );
            if refreshed.asked() {
                parts.join_status(&refreshed);
                let names_a_spec = parts.status_names_a_spec;
                if parts.holds_brief_rows() {
                    self.brief_modules.insert(module.clone());
                }
                self.note_naming_specs(module, names_a_spec);
            }
        }
        let (parts, listed) = (&self.parts, &self.unsettled_status);
        let counts = |module: &str| {
            (index.modules.contains_key(module))
                .then(|| parts.get(module).map(|parts| parts.status_counts.clone()))
                .flatten()
        };
        let every = listed.everything;
        let modules: Vec<&str> = match every {
            true => index.modules.keys().map(String::as_str).collect(),
            false => listed.modules.iter().map(String::as_str).collect(),
        };
        self.status_counts.retake(every, modules, counts);
        self.unsettled_status.settle();
    }

    /// Joins into the parts whatever was answered ahead and is still on the
    /// shelf, without waiting for answers still coming and without asking
    /// salsa for any entry (design §7.10). A host calls it after answering
    /// ahead: an edit a client only checks leaves its status rows shelved,
    /// and the next change would empty the shelf, so the `status` after a
    /// run of checked edits would answer every one of them again.
    pub fn absorb_answered_ahead(&mut self, db: &RootDatabase) {
        self.sync(db);
        let index = root_index(db, Workspace::get(db));
        let revision = db.changes_applied();
        // A kind never asked for was never asked ahead ([`RootJoins::ask_ahead`])
        // and its parts hold nothing: what it would ask is every stem of the
        // root, listed on every edit of a host that only checks.
        if self.asked_check {
            let ahead = self.checks_to_ask(index);
            if let Some(checks) = (self.shelf).take_checks(revision, keys_of(&ahead), Coming::Skip)
            {
                let answered = answered_ahead(&ahead, Some(checks));
                self.taken_ahead += ahead.len();
                self.join_check_parts(db, index, answered);
            }
        }
        if self.asked_status {
            let ahead = self.rows_to_ask(index);
            if let Some(rows) = (self.shelf).take_rows(revision, keys_of(&ahead), Coming::Skip) {
                let answered = answered_ahead(&ahead, Some(rows));
                self.taken_ahead += ahead.len();
                self.join_status_parts(db, index, answered);
            }
        }
    }

    /// The problems of every lock file that cannot be read, the project's first.
    /// The locks to read are read on the joins' threads first: on a first
    /// answer that is every lock of the root (a fifth of a cold `check`).
    pub fn lock_problems(&mut self, db: &RootDatabase) -> Vec<Diagnostic> {
        self.sync(db);
        let index = root_index(db, Workspace::get(db));
        let unreadable = |file| {
            read_lock_file(db, file)
                .as_ref()
                .err()
                .into_iter()
                .flatten()
        };
        let mut problems: Vec<Diagnostic> = index
            .project_lock
            .into_iter()
            .flat_map(unreadable)
            .cloned()
            .collect();
        let modules = self.unsettled_locks.of(index);
        let ahead = self.to_ask_by(modules, |parts| &parts.lock_problems, |files| &files.locks);
        let answers = spread::answer_ahead(db, &ahead, self.threads, |db, (_, files, stem, _)| {
            lock_entry_problems(db, files, stem)
        });
        let mut answered = answered_ahead(&ahead, answers);
        let modules = self.unsettled_locks.of(index);
        self.visited += modules.len();
        for (module, files) in modules {
            let parts = self.parts_of(module);
            let mut answered = answered.get_mut(module.as_str());
            let refreshed = parts.lock_problems.refresh(
                files.locks.keys(),
                || (),
                |stem, _| {
                    (answered.as_mut().and_then(|answered| answered.remove(stem)))
                        .unwrap_or_else(|| lock_entry_problems(db, files, stem))
                },
            );
            if refreshed.asked() {
                let (_, by_stem) = parts.lock_problems.entries();
                parts.lock_problems_joined = by_stem.values().flatten().cloned().collect();
            }
        }
        let share = |parts: &ModuleParts| (0, !parts.lock_problems_joined.is_empty());
        (self.unsettled_locks).retake(&mut self.lock_tally, index, &self.parts, share);
        self.unsettled_locks.settle();
        let project = problems.len();
        for parts in (self.lock_tally.holding().iter()).filter_map(|module| self.parts.get(module))
        {
            problems.extend(parts.lock_problems_joined.iter().cloned());
        }
        debug_assert_eq!(
            problems[project..],
            (db.query_log()).unrecorded(|| every_lock_problem(db, index)),
            "the joined lock problems differ from the database's"
        );
        problems
    }

    /// The modules whose parts are held with no entry to ask again, sorted:
    /// what the next answer asks salsa nothing about (for tests and benchmarks).
    pub fn held_modules(&mut self, db: &RootDatabase) -> Vec<&str> {
        self.sync(db);
        let mut held: Vec<&str> = (self.parts.iter())
            .filter(|(_, parts)| !parts.is_reached())
            .map(|(module, _)| module.as_str())
            .collect();
        held.sort_unstable();
        held
    }

    /// The `module::stem` entries of held modules whose check the next answer
    /// asks salsa about again, sorted (for tests and benchmarks).
    pub fn reached_entries(&mut self, db: &RootDatabase) -> Vec<String> {
        self.sync(db);
        let mut reached: Vec<String> = (self.parts.iter())
            .flat_map(|(module, parts)| {
                (parts.check.stale.keys()).map(move |stem| format!("{module}::{stem}"))
            })
            .collect();
        reached.sort_unstable();
        reached
    }

    /// How many held status rows the next answer climbs again from their
    /// hashes alone (design §7.8; for tests and benchmarks).
    pub fn rehashed_rows(&mut self, db: &RootDatabase) -> usize {
        self.sync(db);
        (self.parts.values())
            .flat_map(|parts| parts.status.stale.values())
            .filter(|&&moved| moved == Moved::Hashes)
            .count()
    }

    /// Whether a check and a status were ever asked of these joins: what a
    /// host can store of their answers without asking for more.
    pub fn answered(&self) -> (bool, bool) {
        (self.asked_check, self.asked_status)
    }

    /// How many entries the answers so far took as they were answered ahead
    /// ([`RootJoins::ask_ahead`]; for tests and benchmarks).
    pub fn taken_ahead(&self) -> usize {
        self.taken_ahead
    }

    /// How many modules the check, status and lock joins visited so far:
    /// after an edit, the modules it reached, not the root's (tests and
    /// benchmarks).
    pub fn visited_modules(&self) -> usize {
        self.visited
    }

    /// `module`'s parts, made empty the first time it is asked for.
    fn parts_of(&mut self, module: &str) -> &mut ModuleParts {
        if !self.parts.contains_key(module) {
            self.parts.insert(module.to_owned(), ModuleParts::default());
        }
        self.parts.get_mut(module).expect("inserted above")
    }

    /// Makes the parts answer for `db` as it is: everything is dropped if a
    /// change reached it without [`RootJoins::invalidate`].
    /// Body edits applied since are marked by what they moved.
    fn sync(&mut self, db: &RootDatabase) {
        if self.synced != db.changes_applied() {
            self.drop_every_part();
            self.mentions = Mentions::default();
            self.body_edits.clear();
            self.synced = db.changes_applied();
        }
        for edit in std::mem::take(&mut self.body_edits) {
            let moved = match edit.is_sealed(db) {
                true => Moved::Hashes,
                false => Moved::Everything,
            };
            self.mark(db, edit.reach, moved);
        }
    }
}

/// An entry the next answer asks salsa about: module, its files, the stem,
/// and the entry held for a stem whose hashes alone moved.
type ToAsk<'s, S> = (&'s str, &'s Arc<ModuleFiles>, &'s str, Option<&'s S>);

/// The (module, stem) of each entry, as the shelf marks its answers.
fn keys_of<'s, S>(
    entries: &'s [ToAsk<'s, S>],
) -> impl ExactSizeIterator<Item = (&'s str, &'s str)> + Clone {
    entries.iter().map(|&(module, _, stem, _)| (module, stem))
}

/// The entries answered ahead, by module and stem, for the join to take instead
/// of asking again: the same revision and the same held entry, so the same
/// answer ([`spread::answer_ahead`]).
fn answered_ahead<S, R>(ahead: &[ToAsk<'_, S>], answers: Option<Vec<R>>) -> Answered<R> {
    let mut answered: FxHashMap<String, FxHashMap<String, R>> = FxHashMap::default();
    for (&(module, _, stem, _), answer) in ahead.iter().zip(answers.into_iter().flatten()) {
        (answered.entry(module.to_owned()).or_default()).insert(stem.to_owned(), answer);
    }
    answered
}

/// Entries answered ahead of a join, by module and stem.
type Answered<R> = FxHashMap<String, FxHashMap<String, R>>;

/// Some consecutive status rows — the project's, or one module's — with how
/// many have each status and kind.
#[derive(Clone, Copy)]
pub struct RowGroup<'a> {
    /// Shared with the joins, which keep them between answers.
    pub rows: &'a [Arc<StatusRow>],
    /// (status, kind, how many), in order of first appearance.
    pub counts: &'a [StatusCount],
}

/// How many of `rows` have each status and kind, in order of first
/// appearance: a [`RowGroup`]'s counts.
pub fn count_statuses(rows: &[Arc<StatusRow>]) -> Vec<StatusCount> {
    let mut counts: Vec<StatusCount> = Vec::new();
    for row in rows {
        match (counts.iter_mut())
            .find(|(status, kind, _)| *status == row.status && *kind == row.kind)
        {
            Some((_, _, count)) => *count += 1,
            None => counts.push((row.status.clone(), row.kind, 1)),
        }
    }
    counts
}

/// The file stem of a root-relative path: `f` for `m/f.tr`.
fn stem_of(path: &str) -> &str {
    let file = path.rsplit_once('/').map_or(path, |(_, file)| file);
    file.rsplit_once('.').map_or(file, |(stem, _)| stem)
}

/// The problems of one lock file of a module, by its stem.
/// Every module's lock problems in the index's order, each lock asked
/// (debug builds compare [`RootJoins::lock_problems`] with them).
fn every_lock_problem(db: &RootDatabase, index: &RootIndex) -> Vec<Diagnostic> {
    (index.modules.values())
        .flat_map(|files| {
            (files.locks.keys()).flat_map(|stem| lock_entry_problems(db, files, stem))
        })
        .collect()
}

fn lock_entry_problems(db: &RootDatabase, files: &ModuleFiles, stem: &str) -> Vec<Diagnostic> {
    (files.locks.get(stem))
        .and_then(|&file| read_lock_file(db, file).as_ref().err())
        .cloned()
        .unwrap_or_default()
}

/// What a module's parts read of `soil.toml` ([`crate::config::declared_tags`]
/// and [`crate::config::soil0_major`]): an edit that leaves both alone — a
/// tag's description, the entrypoint, the trellis pin — keeps every part, and
/// the join's head reports the configuration's own error anew each time.
struct ConfigReach {
    tags: std::collections::BTreeSet<String>,
    soil0_major: String,
}

impl ConfigReach {
    fn of(text: &str) -> ConfigReach {
        let config = crate::config::parse_config(text).ok();
        ConfigReach {
            tags: (config.iter())
                .flat_map(|config| config.tags.keys().cloned())
                .collect(),
            soil0_major: crate::config::soil0_major_of(config.as_ref()),
        }
    }
}
