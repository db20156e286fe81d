//! Statuses as queries: the current hashes of a definition gathered from the
//! other queries, its lock as `locks` reads it, and the status ladder
//! (lock-schema §8.6) decided by `trellis-lock` from the two; and the row of
//! `trellis status` a status becomes. Statuses are derived, never stored.

use std::collections::BTreeMap;

use trellis_diag::Diagnostic;
use trellis_hash::Digest;
use trellis_lock::{
    Current, CurrentHashes, DecisionsRecord, Edge, Lock, Lowering, Scope, Status, moved_edges,
};
use trellis_spec::{BlockSyntax, Reference};

use crate::check::{CheckOutcome, check_definition, report_diagnostics};
use crate::db::Db;
use crate::decisions::{decision_entries, empty_scope_hash, scope_decisions, scope_hash};
use crate::deep::descend;
use crate::exports::export_violations;
use crate::files::SourceFile;
use crate::hashing::{Referent, call_cycle_free, resolved_refs, soil_hash, soil_hash_with};
use crate::index::{Item, ItemKind, spec_file};
use crate::locks::{LockState, lock_state};
use crate::resolve::Target;
use crate::results::suite_key;
use crate::spec::{SpecHashes, spec_hashes, test_blocks};
use crate::spec_check::spec_diagnostics;
use crate::test_check::test_diagnostics;

/// The edges a lowering of `item` records now: its direct callees among the root's
/// functions, and every private helper it reaches (through helpers, recursively).
#[salsa::tracked(returns(ref))]
pub fn lowering_edges<'db>(db: &'db dyn Db, item: Item<'db>) -> (Vec<Edge>, Vec<Edge>) {
    let mut calls = Vec::new();
    let mut helpers: BTreeMap<String, Digest> = BTreeMap::new();
    let mut pending = vec![item];
    let mut first = true;
    while let Some(current) = pending.pop() {
        for (written, target) in resolved_refs(db, current) {
            let Target::Definition(module, name) = target else {
                continue;
            };
            let callee = Item::new(db, module.as_str(), name.as_str());
            if callee == item {
                continue;
            }
            let Some(hash) = soil_hash(db, callee) else {
                continue;
            };
            match ItemKind::of(name) {
                ItemKind::Helper if helpers.insert(name.clone(), hash).is_none() => {
                    pending.push(callee);
                }
                _ if first => calls.push(Edge {
                    name: written.clone(),
                    hash,
                }),
                _ => {}
            }
        }
        first = false;
    }
    calls.sort();
    let helpers = helpers
        .into_iter()
        .map(|(name, hash)| Edge { name, hash })
        .collect();
    (calls, helpers)
}

/// The current oracle hashes of a spec's `reference` blocks, by source text. A
/// spec without one (most) is answered from its test blocks, with no memo of
/// its own on the path every status pass confirms.
pub fn oracle_hashes(db: &dyn Db, spec: SourceFile) -> &BTreeMap<String, Digest> {
    static NONE: BTreeMap<String, Digest> = BTreeMap::new();
    let has_reference = test_blocks(db, spec)
        .iter()
        .any(|block| matches!(block.syntax, BlockSyntax::Reference(Some(_))));
    if has_reference {
        reference_hashes(db, spec)
    } else {
        &NONE
    }
}

#[salsa::tracked(returns(ref))]
fn reference_hashes(db: &dyn Db, spec: SourceFile) -> BTreeMap<String, Digest> {
    let mut out = BTreeMap::new();
    for block in test_blocks(db, spec) {
        let BlockSyntax::Reference(Some(reference)) = &block.syntax else {
            continue;
        };
        let hash = match &reference.reference {
            // A missing reference file hashes as empty; the test tier reports it.
            // Only a spec with a Python reference reads the file list: the others
            // stay asleep when files come and go.
            Reference::Python { path, .. } => crate::index::file_at(db, path).map_or_else(
                || Digest::of(b""),
                |file| Digest::of(file.text(db).as_bytes()),
            ),
            Reference::Cli { command } => Digest::of(command.as_bytes()),
        };
        out.insert(reference.line.clone(), hash);
    }
    out
}

/// The text of each Python reference a spec's `reference` blocks name, by the
/// written root-relative path; a file the root does not hold is absent. The
/// suite hashes these (and so never reads the file itself).
#[salsa::tracked(returns(ref))]
pub fn reference_texts(db: &dyn Db, spec: SourceFile) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for block in test_blocks(db, spec) {
        if let BlockSyntax::Reference(Some(reference)) = &block.syntax
            && let Reference::Python { path, .. } = &reference.reference
            && let Some(file) = crate::index::file_at(db, path)
        {
            out.insert(path.clone(), file.text(db).to_string());
        }
    }
    out
}

/// The hashes a function definition has now, all gathered: what a lowering
/// records and the services compare. The status ladder asks [`Live`] instead,
/// one rung at a time.
///
/// Gathered from the memos each time, not kept as a memo of its own: the
/// services that ask (a lowering, `test`'s shared results cache) ask once per
/// definition, and a daemon kept every definition's copy of its maps for its
/// whole life, 1.7 KB each (design §7.15). A caller that needs one hash asks
/// its own memo (`spec_hashes`, `scope_decisions`) instead.
pub fn current_hashes<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<CurrentHashes> {
    let live = Live::of(db, item)?;
    let (calls, helpers) = lowering_edges(db, item);
    let edges = calls
        .iter()
        .chain(helpers)
        .map(|edge| (edge.name.clone(), edge.hash))
        .collect();
    let scope = scope_decisions(db, item.module(db));
    let recorded = match lock_state(db, item.module(db), item.name(db)) {
        LockState::Present(Lock::Function(lock)) => lock.lowering.as_ref(),
        _ => None,
    };
    let rebound = recorded
        .map(|lowering| rebound_names(db, item, lowering))
        .unwrap_or_default();
    let edge_notes: BTreeMap<String, String> = recorded
        .map(|lowering| {
            let recorded: Vec<Edge> = trellis_lock::recorded_edges(lowering).cloned().collect();
            let moved = moved_edges(recorded.iter(), |name| current_edge(db, item, name));
            let notes = explain_moved(db, item, &recorded, moved.clone());
            moved.into_iter().zip(notes).collect()
        })
        .unwrap_or_default();
    Some(CurrentHashes {
        spec: live.spec(),
        soil_present: live.soil_present(),
        soil_hash: live.soil_hash(),
        edges,
        decisions: scope.entries.clone(),
        project_scope_hash: scope.project_scope_hash.unwrap_or_else(empty_scope_hash),
        module_scope_hash: scope.module_scope_hash.unwrap_or_else(empty_scope_hash),
        oracles: oracle_hashes(db, live.spec).clone(),
        spec_problems: live.spec_problems(),
        check_problems: live.check_problems(),
        suite_key: live.suite_key(),
        open_holes: live.open_holes(),
        rebound_names: rebound,
        edge_notes,
    })
}

/// A function definition with a spec, answering the status ladder's questions
/// from the queries as the ladder reaches them. A definition whose callee
/// moved stops at `callee-changed` and never asks for its suite key, so an
/// edit below a hub re-hashes no dependent's test program for `status`.
pub struct Live<'db> {
    db: &'db dyn Db,
    item: Item<'db>,
    spec: SourceFile,
    /// The spec's and the check's problems are known to be none
    /// ([`status_past_checks`]).
    checks_passed: bool,
    /// What the callee rung says of each moved edge.
    explain: Explain,
}

/// What a row's callee rung says of a moved callee: what changed below each
/// moved edge ([`explain_moved`]) — a walk down every callee between the row
/// and the edit, a third of a hub edit's `status` at 2,000 definitions — or
/// the edges' names alone, for a row a summary counts and does not show
/// (design §7.13).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Explain {
    Callees,
    EdgesOnly,
}

impl<'db> Live<'db> {
    /// `None` for a definition without a spec (never lowered).
    pub fn of(db: &'db dyn Db, item: Item<'db>) -> Option<Self> {
        let spec = spec_file(db, item)?;
        Some(Self {
            db,
            item,
            spec,
            checks_passed: false,
            explain: Explain::Callees,
        })
    }
}

impl Current for Live<'_> {
    fn soil_present(&self) -> bool {
        crate::soil::item_soil_file(self.db, self.item).is_some()
    }

    fn has_equation(&self) -> bool {
        crate::hashing::soil_facts(self.db, self.item).is_some()
    }

    fn soil_hash(&self) -> Option<Digest> {
        soil_hash(self.db, self.item)
    }

    fn spec(&self) -> SpecHashes {
        spec_hashes(self.db, self.spec)
    }

    fn spec_problems(&self) -> Vec<String> {
        if self.checks_passed {
            return Vec::new();
        }
        let db = self.db;
        spec_diagnostics(db, self.spec)
            .iter()
            .chain(&report_diagnostics(db, test_diagnostics(db, self.item)))
            .map(problem_line)
            .collect()
    }

    fn check_problems(&self) -> Vec<String> {
        if self.checks_passed {
            return Vec::new();
        }
        let db = self.db;
        let failed = match check_definition(db, self.item) {
            CheckOutcome::Failed(errors) => report_diagnostics(db, errors)
                .iter()
                .map(problem_line)
                .collect(),
            // No equation to check: a `.soil` that does not parse says why.
            CheckOutcome::NotLowered => crate::soil::item_soil_file(db, self.item)
                .map(|file| {
                    let parse = crate::soil::parse_soil(db, file);
                    parse.diagnostics.iter().map(problem_line).collect()
                })
                .unwrap_or_default(),
            CheckOutcome::Checked(_) => Vec::new(),
        };
        failed
            .into_iter()
            .chain(export_violations(db, self.item).iter().map(problem_line))
            .collect()
    }

    fn edge(&self, name: &str) -> Option<Digest> {
        current_edge(self.db, self.item, name)
    }

    fn oracle(&self, source: &str) -> Option<Digest> {
        oracle_hashes(self.db, self.spec).get(source).copied()
    }

    fn decision(&self, scope: Scope, label: &str) -> Option<Digest> {
        scope_decisions(self.db, self.item.module(self.db))
            .entries
            .get(&(scope, label.to_owned()))
            .copied()
    }

    fn suite_key(&self) -> Digest {
        suite_key(self.db, self.item)
    }

    fn open_holes(&self) -> Vec<String> {
        match check_definition(self.db, self.item) {
            CheckOutcome::Checked(facts) => facts.holes.iter().map(|h| h.name.clone()).collect(),
            _ => Vec::new(),
        }
    }

    fn rebound_names(&self, lowering: &Lowering) -> Vec<String> {
        rebound_names(self.db, self.item, lowering)
    }

    fn explain_moved(&self, lowering: &Lowering, edges: Vec<String>) -> Vec<String> {
        if self.explain == Explain::EdgesOnly {
            return trellis_lock::edges_named(edges);
        }
        let recorded: Vec<Edge> = trellis_lock::recorded_edges(lowering).cloned().collect();
        explain_moved(self.db, self.item, &recorded, edges)
    }
}

/// The edge `name` as `recorded` holds it (calls by written name, private
/// helpers by their own).
fn recorded_hash(recorded: &[Edge], name: &str) -> Option<Digest> {
    recorded
        .iter()
        .find(|edge| edge.name == name)
        .map(|edge| edge.hash)
}

/// `item`'s hash with every root definition it names standing for the hash
/// `recorded` holds for it (a name `recorded` lacks: the builtin it was), so it
/// equals the recorded `soil_hash` exactly when the body's text is the one
/// recorded. Types stand for what they are now.
fn hash_as_recorded(db: &dyn Db, item: Item<'_>, recorded: &[Edge]) -> Option<Digest> {
    let this = (item.module(db).as_str(), item.name(db).as_str());
    soil_hash_with(db, item, |name, target| match target {
        Target::Definition(module, callee) if (module.as_str(), callee.as_str()) != this => {
            recorded_hash(recorded, name).map_or(Referent::Builtin, Referent::Hash)
        }
        Target::Builtin => recorded_hash(recorded, name).map_or(Referent::AsNow, Referent::Hash),
        _ => Referent::AsNow,
    })
}

/// [`Current::rebound_names`]: the names of `item`'s body that resolve to
/// another target than `lowering` recorded — a builtin's name now a root
/// definition's, or a recorded callee's name now the builtin's — when that is
/// all that moved its hash (re-hashed with the recorded referents, the body
/// gives the recorded `soil_hash`).
pub(crate) fn rebound_names(db: &dyn Db, item: Item<'_>, lowering: &Lowering) -> Vec<String> {
    let recorded: Vec<Edge> = trellis_lock::recorded_edges(lowering).cloned().collect();
    let rebound = rebound_in(db, item, &recorded);
    if rebound.is_empty() || hash_as_recorded(db, item, &recorded) != Some(lowering.soil_hash) {
        return Vec::new();
    }
    rebound
}

/// The names of `item` resolving otherwise than `recorded` says, one phrase
/// each: a public root definition `recorded` lacks (the name was a builtin's:
/// a helper's name never is), or a recorded name that is the builtin's now.
fn rebound_in(db: &dyn Db, item: Item<'_>, recorded: &[Edge]) -> Vec<String> {
    let this = (item.module(db).as_str(), item.name(db).as_str());
    let mut rebound = Vec::new();
    for (name, target) in resolved_refs(db, item) {
        let was = recorded_hash(recorded, name);
        match target {
            Target::Definition(module, callee)
                if (module.as_str(), callee.as_str()) != this
                    && was.is_none()
                    && ItemKind::of(callee) != ItemKind::Helper =>
            {
                rebound.push(format!(
                    "`{name}` now names {module}::{callee}, not the builtin"
                ));
            }
            Target::Builtin if was.is_some() => rebound.push(format!(
                "`{name}` now names the builtin: the definition it named is gone"
            )),
            _ => {}
        }
    }
    rebound
}

/// The callee rung's words for each moved edge of `item` (`recorded`: its
/// lock's edges): what changed below it, so a reason never blames a callee
/// whose file is unchanged when a private helper of it moved.
pub(crate) fn explain_moved(
    db: &dyn Db,
    item: Item<'_>,
    recorded: &[Edge],
    moved: Vec<String>,
) -> Vec<String> {
    moved
        .iter()
        .map(|name| describe_edge(db, item, recorded, name).text)
        .collect()
}

/// How many callees down a reason follows a change before it names where
/// the change is instead: each callee's note nests its own callees' notes,
/// so along a call chain `n` long the notes held `n²/2` clauses between them
/// (design §7.18).
const NOTE_DEPTH: usize = 3;

/// How many of the definitions whose own body changed an abridged note names.
const NOTE_CHANGED: usize = 3;

/// One moved edge in words, with what [`callee_note`] keeps of it.
struct Described {
    text: String,
    /// How many callees down the change lies, as far as followed.
    depth: usize,
    /// The definitions below whose own body changed, as far as known (at
    /// most [`NOTE_CHANGED`]).
    changed: Vec<String>,
}

/// One moved edge of `owner`, in words (see [`explain_moved`]).
fn describe_edge(db: &dyn Db, owner: Item<'_>, recorded: &[Edge], name: &str) -> Described {
    let plain = |text: String| Described {
        text,
        depth: 1,
        changed: Vec::new(),
    };
    if ItemKind::of(name) == ItemKind::Helper {
        // The owner's lock records every helper it reaches, but not the public
        // definitions those helpers call: a helper naming one is re-hashed as
        // if the name were still the builtin's, which tells a rebinding apart
        // and leaves a callee's own change unknowable.
        let helper = Item::new(db, owner.module(db).as_str(), name);
        let same = recorded_hash(recorded, name)
            .is_some_and(|hash| hash_as_recorded(db, helper, recorded) == Some(hash));
        let rebound = rebound_in(db, helper, recorded);
        let calls_public = resolved_refs(db, helper).iter().any(|(_, target)| {
            matches!(target, Target::Definition(_, callee) if ItemKind::of(callee) != ItemKind::Helper)
        });
        return plain(match (same, rebound.is_empty(), calls_public) {
            (true, false, _) => format!(
                "`{name}`, a private helper whose body is unchanged, but {}",
                rebound.join(", ")
            ),
            (true, true, _) => format!("`{name}`, a private helper, through the helpers it calls"),
            (false, _, true) => {
                format!("`{name}`, a private helper whose body, or a definition it calls, changed")
            }
            (false, _, false) => format!("`{name}`, a private helper whose body changed"),
        });
    }
    let callee = resolved_refs(db, owner)
        .iter()
        .find(|(written, _)| written == name)
        .and_then(|(_, target)| match target {
            Target::Definition(module, callee) => {
                Some(Item::new(db, module.as_str(), callee.as_str()))
            }
            _ => None,
        });
    let note = callee.and_then(|callee| descend(|| callee_note(db, callee)).as_ref());
    match (note, recorded_hash(recorded, name)) {
        (Some(note), Some(was)) if note.hash == was && note.depth < NOTE_DEPTH => Described {
            text: format!("`{name}`, {}", note.text),
            depth: note.depth,
            changed: note.changed.clone(),
        },
        (Some(note), Some(was)) if note.hash == was => Described {
            text: match note.changed.is_empty() {
                true => {
                    format!("`{name}`, whose own body is unchanged: the change is further below it")
                }
                false => format!(
                    "`{name}`, whose own body is unchanged: the change is further below it, in {}",
                    note.changed.join(", ")
                ),
            },
            // Stands for the whole depth it leaves out, so every note above
            // it is abridged alike.
            depth: note.depth,
            changed: note.changed.clone(),
        },
        (Some(_), Some(_)) => plain(format!(
            "`{name}`, re-recorded since this lowering was checked (its lock is newer)"
        )),
        _ => plain(format!("`{name}`")),
    }
}

/// What changed in a callee since its own lock was written, in words.
#[derive(Debug, PartialEq, Eq)]
struct CalleeNote {
    /// The `soil_hash` the callee's lock recorded (a caller's edge that holds
    /// another hash was checked against another version of it).
    hash: Digest,
    text: String,
    /// How many callees down the change lies, as far as the note follows
    /// it: past [`NOTE_DEPTH`], the notes above it are abridged.
    depth: usize,
    /// The first definitions at or below the callee whose own body changed,
    /// as `module::name` in backquotes.
    changed: Vec<String>,
}

/// The note of a callee whose edge moved; `None` without a lowering.
#[salsa::tracked(returns(ref))]
fn callee_note<'db>(db: &'db dyn Db, callee: Item<'db>) -> Option<CalleeNote> {
    let LockState::Present(Lock::Function(lock)) =
        lock_state(db, callee.module(db), callee.name(db))
    else {
        return None;
    };
    let lowering = lock.lowering.as_ref()?;
    let recorded: Vec<Edge> = trellis_lock::recorded_edges(lowering).cloned().collect();
    let same = hash_as_recorded(db, callee, &recorded) == Some(lowering.soil_hash);
    let moved = moved_edges(recorded.iter(), |name| current_edge(db, callee, name));
    let mut changed = Vec::new();
    if !same {
        changed.push(format!("`{}::{}`", callee.module(db), callee.name(db)));
    }
    // Below a callee in no call cycle nothing reaches it again, so the notes
    // of its own callees never ask for its own.
    let mut depth = 1;
    let below: Vec<String> = match call_cycle_free(db, callee) {
        true => (moved.iter())
            .map(|name| {
                let described = describe_edge(db, callee, &recorded, name);
                depth = depth.max(described.depth + 1);
                for name in described.changed {
                    if changed.len() < NOTE_CHANGED && !changed.contains(&name) {
                        changed.push(name);
                    }
                }
                described.text
            })
            .collect(),
        false => moved.iter().map(|name| format!("`{name}`")).collect(),
    };
    let rebound = rebound_in(db, callee, &recorded);
    let text = match (same, below.is_empty(), rebound.is_empty()) {
        (true, true, false) => format!("whose body is unchanged, but {}", rebound.join(", ")),
        (true, false, _) => format!(
            "whose own body is unchanged: below it, {}",
            below.join(", ")
        ),
        (false, true, _) => "whose body (or a type it names) changed".to_owned(),
        (false, false, _) => format!("whose body changed, and below it, {}", below.join(", ")),
        (true, true, true) => {
            "whose hash moved though its body and edges read as recorded".to_owned()
        }
    };
    Some(CalleeNote {
        hash: lowering.soil_hash,
        text,
        depth,
        changed,
    })
}

/// A diagnostic as one clause of a status reason: where, and what.
fn problem_line(diagnostic: &Diagnostic) -> String {
    match &diagnostic.file {
        Some(file) => format!("{file}: {} ({})", diagnostic.message, diagnostic.code),
        None => format!("{} ({})", diagnostic.message, diagnostic.code),
    }
}

/// The edge named `name` of `item` as its callee is now: a direct callee's
/// straight from the references and the callee's hash, without
/// [`lowering_edges`] (after an edit below a hub every dependent's edges
/// move, and gathering them all into a memo of their own for each dependent
/// cost a fifth of its status); a private helper's edge (reached through
/// helpers, keyed by its bare name) is looked up there.
pub(crate) fn current_edge(db: &dyn Db, item: Item<'_>, name: &str) -> Option<Digest> {
    let direct = resolved_refs(db, item)
        .iter()
        .find(|(written, _)| written == name);
    if let Some((_, Target::Definition(module, callee))) = direct
        && ItemKind::of(callee) != ItemKind::Helper
    {
        let callee = Item::new(db, module.as_str(), callee.as_str());
        return if callee == item {
            None
        } else {
            soil_hash(db, callee)
        };
    }
    let (calls, helpers) = lowering_edges(db, item);
    calls
        .iter()
        .chain(helpers)
        .find(|edge| edge.name == name)
        .map(|edge| edge.hash)
}

/// The status of a function definition (lock-schema §8.6).
#[salsa::tracked(returns(ref))]
pub fn definition_status<'db>(db: &'db dyn Db, item: Item<'db>) -> Result<Status, Vec<Diagnostic>> {
    ladder(db, item, Live::of(db, item))
}

/// The status of a function whose ladder last climbed past the check rungs
/// ([`Status::passed_checks`]) when nothing since can have moved its spec's or
/// its check's problems, only hashes below it (a sealed body edit, design
/// §7.8): the same ladder, with those problems the empty lists they were, so
/// its check's memos are not revalidated. Not a query: whether the problems
/// are still empty is the caller's knowledge, not the database's. `explain`
/// says what its callee rung says of a moved callee.
pub(crate) fn status_past_checks(
    db: &dyn Db,
    item: Item<'_>,
    explain: Explain,
) -> Result<Status, Vec<Diagnostic>> {
    let live = Live::of(db, item).map(|live| Live {
        checks_passed: true,
        explain,
        ..live
    });
    ladder(db, item, live)
}

fn ladder<'db>(
    db: &'db dyn Db,
    item: Item<'db>,
    current: Option<Live<'db>>,
) -> Result<Status, Vec<Diagnostic>> {
    let Some(current) = current else {
        return Ok(Status::NotLowered {
            soil_present: false,
        });
    };
    match lock_state(db, item.module(db), item.name(db)) {
        LockState::Absent => Ok(trellis_lock::status(&current, None)),
        LockState::Unreadable(errors) => Err(errors.to_vec()),
        LockState::Present(Lock::Function(lock)) => Ok(trellis_lock::status(&current, Some(lock))),
        LockState::Present(_) => Err(vec![Diagnostic::new(
            "lock-bad-value",
            format!("the lock of {} is not a function lock", item.qualified(db)),
        )]),
    }
}

/// The row of a function whose lock cannot be read: a fresh lock fixes it,
/// adopted from the `.soil` there is, or lowered when there is none — once the
/// spec and the Soil check, since `adopt` refuses them until then (the reason
/// then says what does not check).
pub fn unreadable_function_row(db: &dyn Db, item: Item<'_>, errors: &[Diagnostic]) -> StatusRow {
    let qualified = item.qualified(db);
    let live = Live::of(db, item);
    let spec_problems = live.as_ref().map(Live::spec_problems).unwrap_or_default();
    let soil = crate::soil::item_soil_file(db, item);
    let check_problems = match (&live, soil, spec_problems.is_empty()) {
        (Some(live), Some(_), true) if !live.has_equation() => {
            let mut problems = live.check_problems();
            problems.push("the .soil file holds no equation for this definition".to_owned());
            problems
        }
        (Some(live), Some(_), true) => live.check_problems(),
        _ => Vec::new(),
    };
    let (fix, also) = if !spec_problems.is_empty() {
        (
            format!(
                "fix the spec (trellis check {qualified} shows where), then trellis adopt {qualified}"
            ),
            Some(format!(
                "the spec does not check: {}",
                spec_problems.join("; ")
            )),
        )
    } else if !check_problems.is_empty() {
        (
            format!(
                "fix the Soil (trellis check {qualified} shows where), then trellis adopt {qualified}"
            ),
            Some(format!(
                "the Soil does not check: {}",
                check_problems.join("; ")
            )),
        )
    } else if soil.is_some() {
        (format!("trellis adopt {qualified}"), None)
    } else {
        (format!("trellis lower {qualified}"), None)
    };
    let mut row = StatusRow::unreadable(qualified, "function", errors, fix);
    if let (Some(reason), Some(also)) = (&mut row.reason, also) {
        reason.push_str("; and ");
        reason.push_str(&also);
    }
    row
}

/// The status of a decision scope (`_module.tr` or `_project.tr`) against its lock.
pub fn scope_row_status(
    db: &dyn Db,
    spec: SourceFile,
    which: Scope,
    lock: Option<&Lock>,
) -> Status {
    let record: Option<&DecisionsRecord> = match lock {
        Some(Lock::Module(lock)) => Some(&lock.decisions),
        Some(Lock::Project(lock)) => Some(&lock.decisions),
        _ => None,
    };
    let labels: Vec<String> = decision_entries(db, spec)
        .iter()
        .map(|entry| entry.label.clone())
        .collect();
    trellis_lock::scope_status(which, scope_hash(db, spec), &labels, record)
}

/// One row of `trellis status`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusRow {
    /// `module::name`, `module` (a module's decisions) or `project`.
    pub name: String,
    pub kind: &'static str,
    pub status: String,
    pub reason: Option<String>,
    pub fix: Option<String>,
}

impl StatusRow {
    pub fn from_status(name: String, kind: &'static str, status: &Status) -> StatusRow {
        StatusRow {
            status: status.name().to_owned(),
            reason: (!status.is_settled()).then(|| status.reason()),
            fix: status.fixing_command(&name),
            name,
            kind,
        }
    }

    /// A row whose lock cannot be read; `fix` writes it afresh (`trellis adopt
    /// <name>` where there is something to adopt, else `trellis lower <def>`).
    pub fn unreadable(
        name: String,
        kind: &'static str,
        errors: &[Diagnostic],
        fix: String,
    ) -> StatusRow {
        let reason = errors
            .first()
            .map(|d| format!("the lock is unreadable: {}", d.message));
        StatusRow {
            name,
            kind,
            status: "lock-unreadable".to_owned(),
            reason,
            fix: Some(fix),
        }
    }
}
