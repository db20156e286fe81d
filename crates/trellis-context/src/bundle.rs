//! The context bundle of one definition at one budget, as a query
//! (`context_bundle`). The plan — which units exist, in priority order, and
//! their paths — reads only the file list and the few pieces whose presence is
//! their content; the packer then reads each unit's files through its own query
//! and stops at the first that does not fit, naming the rest by path without
//! reading them. So salsa records a bundle's dependency only on what it packs
//! (plus the one unit that overflowed): an edit to a dropped callee or example
//! does not wake it. The manifest is rendered last because it lists the packing.

use std::sync::Arc;

use trellis_db::{Db, Item, ItemKind, Module, Workspace, root_index, spec_file, spec_hashes};
use trellis_diag::Diagnostic;
use trellis_hash::{Digest, Hasher};

use crate::manifest::{self, Manifest};
use crate::packer::{Dropped, Packing, REASON_AFTER, REASON_OVER_BUDGET, Tier, Unit, tokens};
use crate::pieces::{
    BundleFile, CALLABLE_DIR, CALLEES_DIR, OracleStanza, callable_surface, callee_md, decisions_md,
    direct_callees, example_pair, example_paths, module_md, oracle, previous_soil, signature_path,
    spec_md, tests_json,
};

/// A packed bundle: what a host writes (every file, `bundle.json` first) and
/// what it reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextBundle {
    /// `csvstats/median`.
    pub definition: String,
    pub budget: u64,
    pub estimate: u64,
    /// `bundle.json`, then the packed files in priority order.
    pub files: Vec<BundleFile>,
    pub dropped: Vec<Dropped>,
    /// Over every file's path and bytes, in path order (questions, §8).
    pub hash: Digest,
}

impl ContextBundle {
    pub fn manifest(&self) -> &str {
        &self.files[0].text
    }
}

/// Which piece a planned unit is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum UnitKey<'db> {
    Spec,
    Decisions,
    Tests,
    Previous,
    Reference,
    /// A definition the target uses, under `callees/`.
    Callee(Item<'db>),
    /// Another definition it could call, under `callable/`.
    Callable(Item<'db>),
    Example(Item<'db>),
    ModuleProse,
}

/// A unit of the plan: its tier, which piece, and its files' paths.
#[derive(Clone, Debug, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct PlannedUnit<'db> {
    pub tier: Tier,
    pub key: UnitKey<'db>,
    pub paths: Vec<String>,
}

/// The bundle's units in priority order (§5), without their contents.
#[salsa::tracked(returns(ref))]
pub fn bundle_plan<'db>(db: &'db dyn Db, item: Item<'db>) -> Vec<PlannedUnit<'db>> {
    let module = Module::new(db, item.module(db).clone());
    let unit = |tier, key, path: &str| PlannedUnit {
        tier,
        key,
        paths: vec![path.to_owned()],
    };
    let mut plan = Vec::new();
    if spec_file(db, item).is_some() {
        plan.push(unit(Tier::Spec, UnitKey::Spec, "spec.md"));
    }
    if decisions_md(db, module).is_some() {
        plan.push(unit(Tier::Spec, UnitKey::Decisions, "decisions.md"));
    }
    plan.push(unit(Tier::Tests, UnitKey::Tests, "tests.json"));
    let index = root_index(db, Workspace::get(db));
    let files = index.module(item.module(db));
    if files.is_some_and(|files| files.soils.contains_key(item.name(db))) {
        plan.push(unit(Tier::Previous, UnitKey::Previous, "previous.soil"));
    }
    if let Some((_, Some(_))) = oracle(db, item) {
        plan.push(unit(Tier::Reference, UnitKey::Reference, "reference.py"));
    }
    // What the definition uses first; then the rest of what it could call.
    let uses = direct_callees(db, item);
    for &callee in uses {
        let path = signature_path(db, CALLEES_DIR, item, callee);
        plan.push(unit(Tier::Callees, UnitKey::Callee(callee), &path));
    }
    for &callable in callable_surface(db, item) {
        if !uses.contains(&callable) {
            let path = signature_path(db, CALLABLE_DIR, item, callable);
            plan.push(unit(Tier::Callable, UnitKey::Callable(callable), &path));
        }
    }
    let own = item.module(db);
    let modules = std::iter::once(own).chain(index.modules.keys().filter(|name| *name != own));
    for name in modules {
        let Some(files) = index.module(name) else {
            continue;
        };
        for stem in files.soils.keys() {
            let is_pair =
                files.specs.contains_key(stem) && ItemKind::of(stem) == ItemKind::Function;
            if !is_pair || (name == own && stem == item.name(db)) {
                continue;
            }
            let example = Item::new(db, name.clone(), stem.clone());
            plan.push(PlannedUnit {
                tier: Tier::Examples,
                key: UnitKey::Example(example),
                paths: example_paths(db, example).to_vec(),
            });
        }
    }
    if files.is_some_and(|files| files.spec.is_some()) {
        plan.push(unit(Tier::ModuleProse, UnitKey::ModuleProse, "module.md"));
    }
    plan
}

/// A planned unit's files, each read through its own query.
fn unit_files<'db>(db: &'db dyn Db, item: Item<'db>, key: UnitKey<'db>) -> Vec<BundleFile> {
    let module = || Module::new(db, item.module(db).clone());
    let found = match key {
        UnitKey::Spec => spec_md(db, item).clone(),
        UnitKey::Decisions => decisions_md(db, module()).clone(),
        UnitKey::Tests => Some(tests_json(db, item).clone()),
        UnitKey::Previous => previous_soil(db, item).clone(),
        UnitKey::Reference => oracle(db, item).as_ref().and_then(|(_, file)| file.clone()),
        UnitKey::Callee(callee) => Some(BundleFile {
            path: signature_path(db, CALLEES_DIR, item, callee),
            text: callee_md(db, callee).clone(),
        }),
        UnitKey::Callable(callable) => Some(BundleFile {
            path: signature_path(db, CALLABLE_DIR, item, callable),
            text: callee_md(db, callable).clone(),
        }),
        UnitKey::Example(example) => return example_pair(db, example).clone(),
        UnitKey::ModuleProse => module_md(db, module()).clone(),
    };
    found.into_iter().collect()
}

/// Every unit with its contents (what the packer would read at an unlimited
/// budget), for tests and tools that want the whole picture.
pub fn bundle_units<'db>(db: &'db dyn Db, item: Item<'db>) -> Vec<Unit> {
    bundle_plan(db, item)
        .iter()
        .map(|planned| Unit {
            tier: planned.tier,
            files: unit_files(db, item, planned.key),
        })
        .collect()
}

/// The packer over the plan (§5): the never-dropped units must fit; then the
/// longest priority-order prefix that fits, reading no unit after the first
/// that does not (and the few after it that [`cheaper_packed`] weighs).
fn pack_plan<'db>(db: &'db dyn Db, item: Item<'db>, budget: u64) -> Result<Packing, Diagnostic> {
    let plan = bundle_plan(db, item);
    let required: Vec<Unit> = plan
        .iter()
        .filter(|planned| !planned.tier.droppable())
        .map(|planned| Unit {
            tier: planned.tier,
            files: unit_files(db, item, planned.key),
        })
        .collect();
    crate::packer::pack(&required, budget)?;
    let mut packing = Packing {
        packed: Vec::new(),
        dropped: Vec::new(),
        tokens: 0,
    };
    let mut over = false;
    let mut at = 0;
    while let Some(planned) = plan.get(at) {
        at += 1;
        if over {
            packing
                .dropped
                .extend(planned.paths.iter().map(|path| Dropped {
                    item: path.clone(),
                    reason: REASON_AFTER.to_owned(),
                }));
            continue;
        }
        let files = unit_files(db, item, planned.key);
        let cost = tokens(files.iter().map(|file| file.text.len()).sum());
        if planned.tier.droppable() && packing.tokens + cost > budget {
            if let Some(group) = cheaper_packed(db, item, &plan[at - 1..], files) {
                at += group.len() - 1;
                for files in group {
                    packing.tokens += tokens(files.iter().map(|file| file.text.len()).sum());
                    packing.packed.extend(files);
                }
                continue;
            }
            over = true;
            packing
                .dropped
                .extend(planned.paths.iter().map(|path| Dropped {
                    item: path.clone(),
                    reason: REASON_OVER_BUDGET.to_owned(),
                }));
            continue;
        }
        packing.tokens += cost;
        packing.packed.extend(files);
    }
    Ok(packing)
}

/// The files of the first unit over the budget and of the rest of its group
/// (the rest of its [`SUMMARIZED`] directory, or the unit alone), when they
/// cost no more than the manifest entry their drop would write: dropping them
/// would make the bundle larger, not smaller, and a larger budget, packing
/// them, would then weigh less than a smaller one (the estimate must grow
/// with the budget, trellis-daemon §5). The allowance covers rounding and the
/// next entry's reason, which loses its "after " when the cut moves past the
/// group. Reads the group's units only until they cost more than that.
fn cheaper_packed<'db>(
    db: &'db dyn Db,
    item: Item<'db>,
    from: &[PlannedUnit<'db>],
    first_files: Vec<BundleFile>,
) -> Option<Vec<Vec<BundleFile>>> {
    let first = from.first()?;
    let first_path = first.paths.first()?;
    let (group, entries): (&[PlannedUnit<'db>], Vec<Dropped>) = match summarized(first_path) {
        Some(dir) => {
            let end = (from.iter())
                .position(|unit| unit.paths.first().and_then(|path| summarized(path)) != Some(dir))
                .unwrap_or(from.len());
            let count: usize = from[..end].iter().map(|unit| unit.paths.len()).sum();
            let entry = Dropped {
                item: dir.to_owned(),
                reason: summary_reason(REASON_OVER_BUDGET, count, first_path),
            };
            (&from[..end], vec![entry])
        }
        None => {
            let entries = (first.paths.iter())
                .map(|path| Dropped {
                    item: path.clone(),
                    reason: REASON_OVER_BUDGET.to_owned(),
                })
                .collect();
            (&from[..1], entries)
        }
    };
    let entry_bytes: usize = (entries.iter())
        .map(|entry| manifest::dropped_entry(entry).to_string().len() + 1)
        .sum();
    let allowance = tokens(entry_bytes) + 2;
    let cost = |files: &[BundleFile]| tokens(files.iter().map(|file| file.text.len()).sum());
    let mut spent = cost(&first_files);
    let mut files = vec![first_files];
    for unit in &group[1..] {
        if spent > allowance {
            return None;
        }
        let unit_files = unit_files(db, item, unit.key);
        spent += cost(&unit_files);
        files.push(unit_files);
    }
    (spent <= allowance).then_some(files)
}

/// The packed bundle of `item` at `budget` tokens, or `budget-too-small`.
#[salsa::tracked(returns(ref))]
pub fn context_bundle<'db>(
    db: &'db dyn Db,
    item: Item<'db>,
    budget: u64,
) -> Result<Arc<ContextBundle>, Diagnostic> {
    let packing = pack_plan(db, item, budget)?;
    let definition = format!("{}/{}", item.module(db), item.name(db));
    let hashes = spec_file(db, item).map(|file| spec_hashes(db, file));
    let spec_hashes = match hashes {
        Some(h) => [
            h.formal.to_string(),
            h.test.to_string(),
            h.prose.to_string(),
        ],
        None => Default::default(),
    };
    let oracle_stanza: Option<&OracleStanza> = oracle(db, item).as_ref().map(|(stanza, _)| stanza);
    let (packed_paths, dropped) = manifest_lists(&packing);
    let render = |estimate| {
        manifest::render(&Manifest {
            definition: definition.clone(),
            budget,
            estimate,
            packed: packed_paths.iter().map(String::as_str).collect(),
            dropped: &dropped,
            oracle: oracle_stanza,
            spec_hashes: spec_hashes.clone(),
        })
    };
    // The estimate counts the manifest, which prints the estimate: only the
    // estimate's digit count moves the manifest's length, so settle the number
    // arithmetically and render twice.
    let digits = |n: u64| n.to_string().len();
    let rest = render(0).len() - digits(0);
    let mut estimate = packing.tokens + tokens(rest + digits(0));
    for _ in 0..4 {
        let settled = packing.tokens + tokens(rest + digits(estimate));
        if settled == estimate {
            break;
        }
        estimate = settled;
    }
    let text = render(estimate);
    let mut files = vec![BundleFile {
        path: "bundle.json".to_owned(),
        text: Arc::from(text),
    }];
    files.extend(packing.packed.iter().cloned());
    let hash = bundle_hash(&files);
    Ok(Arc::new(ContextBundle {
        definition,
        budget,
        estimate,
        files,
        dropped: packing.dropped,
        hash,
    }))
}

/// The directories the manifest names once instead of file by file (§4.1 as
/// amended): the callable surface and the corpus grow with the root, and an
/// agent lists them with `read_context`; a manifest naming each of their files
/// cost some 40,000 tokens of a 100,000-token bundle on a root of 2,000
/// definitions.
const SUMMARIZED: [&str; 2] = [CALLABLE_DIR, "examples/"];

fn summarized(path: &str) -> Option<&'static str> {
    SUMMARIZED.into_iter().find(|dir| path.starts_with(dir))
}

/// The manifest's `packed` and `dropped`: `bundle.json`, then every packed file
/// in priority order, a [`SUMMARIZED`] directory once where its first file
/// would be; every dropped file, a summarized directory's drops as one entry
/// whose reason counts them and names the first (where the cut fell).
fn manifest_lists(packing: &Packing) -> (Vec<String>, Vec<Dropped>) {
    let mut packed = vec!["bundle.json".to_owned()];
    for file in &packing.packed {
        let entry = summarized(&file.path).unwrap_or(&file.path);
        if !packed.iter().any(|have| have == entry) {
            packed.push(entry.to_owned());
        }
    }
    // (entry, the first drop's reason and path, how many files)
    let mut dropped: Vec<(Dropped, String, usize)> = Vec::new();
    for drop in &packing.dropped {
        let Some(dir) = summarized(&drop.item) else {
            dropped.push((drop.clone(), String::new(), 1));
            continue;
        };
        match dropped.iter_mut().find(|(entry, _, _)| entry.item == dir) {
            Some((_, _, count)) => *count += 1,
            None => dropped.push((
                Dropped {
                    item: dir.to_owned(),
                    reason: drop.reason.clone(),
                },
                drop.item.clone(),
                1,
            )),
        }
    }
    let dropped = dropped
        .into_iter()
        .map(|(mut entry, first, count)| {
            if !first.is_empty() {
                entry.reason = summary_reason(&entry.reason, count, &first);
            }
            entry
        })
        .collect();
    (packed, dropped)
}

/// The reason of a summarized directory's one entry: why its first dropped
/// file was dropped, how many were, and which was first (where the cut fell).
fn summary_reason(reason: &str, count: usize, first: &str) -> String {
    let files = if count == 1 { "file" } else { "files" };
    format!("{reason}: {count} {files} from {first}")
}

/// Over every file's path and bytes, in path order.
fn bundle_hash(files: &[BundleFile]) -> Digest {
    let mut by_path: Vec<&BundleFile> = files.iter().collect();
    by_path.sort_by(|a, b| a.path.cmp(&b.path));
    let mut hasher = Hasher::tagged("trellis-context-bundle/1");
    for file in by_path {
        hasher.part(file.path.as_bytes()).part(file.text.as_bytes());
    }
    hasher.finish()
}

impl ContextBundle {
    /// A bundle a host assembles itself rather than packs (a triage job's: a
    /// decision entry, a spec and its Soil), with the same hash rule. The first
    /// file is the manifest; `budget` and `estimate` are its bytes/4 size.
    pub fn assembled(definition: String, files: Vec<(String, String)>) -> ContextBundle {
        let files: Vec<BundleFile> = files
            .into_iter()
            .map(|(path, text)| BundleFile {
                path,
                text: Arc::from(text),
            })
            .collect();
        let estimate = files
            .iter()
            .map(|file| crate::packer::tokens(file.text.len()))
            .sum();
        ContextBundle {
            definition,
            budget: estimate,
            estimate,
            hash: bundle_hash(&files),
            files,
            dropped: Vec::new(),
        }
    }
}
