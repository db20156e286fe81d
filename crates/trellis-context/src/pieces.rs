//! The bundle's files before packing, one small query per piece (trellis-daemon
//! §4.2–§4.8), so an edit re-renders only the pieces that read what it touched:
//! a callee's file reads that callee's formal blocks and lock, the decisions
//! file reads the two scope files' entries, the examples read one module's
//! pairs. Everything is rendered text; nothing here knows the budget.

use std::sync::Arc;

use trellis_db::{
    Db, Item, ItemKind, Module, Target, Workspace, decision_entries, formal_blocks, lock_file,
    program_def, program_refs, property_callees, read_lock_file, root_index, spec_file,
    test_blocks,
};
use trellis_lock::{Assurance, Lock};
use trellis_spec::{BlockKind, BlockSyntax, Clause, DecisionEntry, Reference};
use trellis_verify::suite::{SuiteInput, Timeouts, expect_bundle_text};

/// A file of the bundle: its bundle-relative path and its text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BundleFile {
    pub path: String,
    pub text: Arc<str>,
}

impl BundleFile {
    fn new(path: impl Into<String>, text: impl Into<Arc<str>>) -> BundleFile {
        BundleFile {
            path: path.into(),
            text: text.into(),
        }
    }
}

/// The differential oracle as bundle.json records it (§4.7).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OracleStanza {
    Reference { path: String, symbol: String },
    Cli { command: String },
}

/// `spec.md`: the `.tr` verbatim (§4.2).
#[salsa::tracked(returns(ref))]
pub fn spec_md<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<BundleFile> {
    let file = spec_file(db, item)?;
    Some(BundleFile::new("spec.md", file.text(db).clone()))
}

/// `decisions.md` (§4.3): the project's entries, then the module's; `None` when
/// neither scope has any.
#[salsa::tracked(returns(ref))]
pub fn decisions_md<'db>(db: &'db dyn Db, module: Module<'db>) -> Option<BundleFile> {
    let index = root_index(db, Workspace::get(db));
    let mut text = String::from("# Decisions\n");
    let mut any = false;
    let scopes = [
        ("project".to_owned(), index.project),
        (
            format!("module {}", module.name(db)),
            index.module(module.name(db)).and_then(|files| files.spec),
        ),
    ];
    for (heading, scope) in scopes {
        let entries = scope.map_or(&[][..], |file| decision_entries(db, file).as_slice());
        if entries.is_empty() {
            continue;
        }
        any = true;
        text.push_str(&format!("\n## {heading}\n\n"));
        for entry in entries {
            text.push_str(&decision_line(entry));
        }
    }
    any.then(|| BundleFile::new("decisions.md", text))
}

fn decision_line(entry: &DecisionEntry) -> String {
    let mut line = format!("- **{}** — {}\n", entry.label, entry.text);
    if !entry.rejected.is_empty() {
        line.push_str(&format!("  rejected: {}\n", entry.rejected.join("; ")));
    }
    line
}

/// The definitions `item` uses (`callees/`, §4.4 as amended): those its Soil
/// calls and those its spec's clauses and properties name — public functions
/// with a spec, the target excluded — its own module's first, then the others
/// in name order. On a first lowering that is what the spec names; on a
/// re-lowering, what `previous.soil` calls besides.
#[salsa::tracked(returns(ref))]
pub fn direct_callees<'db>(db: &'db dyn Db, item: Item<'db>) -> Vec<Item<'db>> {
    let mut named: Vec<(String, String)> = program_refs(db, item)
        .iter()
        .filter_map(|target| match target {
            Target::Definition(module, name) => Some((module.clone(), name.clone())),
            _ => None,
        })
        .chain(property_callees(db, item).iter().cloned())
        .collect();
    let own = item.module(db);
    named.sort_by_key(|(module, name)| (module != own, module.clone(), name.clone()));
    named.dedup();
    named
        .into_iter()
        .map(|(module, name)| Item::new(db, module, name))
        .filter(|&callee| {
            callee != item
                && callee.kind(db) == ItemKind::Function
                && spec_file(db, callee).is_some()
        })
        .collect()
}

/// The callable surface (§4.4 as amended, impl plan §9.13): every lowered
/// function of the root — a `.tr` with its `.soil` — visible to the target, its
/// own module first, then the other modules in name order, the target excluded.
/// Another module's function is visible when that module exports it, or when the
/// module declares no `exports` block at all (tr-grammar §5.1; the resolver does
/// not restrict such modules either). Reads the file list and the modules'
/// formal blocks, so a prose edit leaves it asleep.
#[salsa::tracked(returns(ref))]
pub fn callable_surface<'db>(db: &'db dyn Db, item: Item<'db>) -> Vec<Item<'db>> {
    let index = root_index(db, Workspace::get(db));
    let own = item.module(db);
    let modules = index
        .modules
        .iter()
        .filter(|(name, _)| *name == own)
        .chain(index.modules.iter().filter(|(name, _)| *name != own));
    let mut surface = Vec::new();
    for (module, files) in modules {
        let exports = (module != own)
            .then(|| files.spec.and_then(|spec| exported(db, spec)))
            .flatten();
        for stem in files.soils.keys() {
            let lowered =
                files.specs.contains_key(stem) && ItemKind::of(stem) == ItemKind::Function;
            let visible = exports.as_ref().is_none_or(|names| names.contains(stem));
            if lowered && visible && !(module == own && stem == item.name(db)) {
                surface.push(Item::new(db, module.clone(), stem.clone()));
            }
        }
    }
    surface
}

/// The names a module's `exports` blocks list, or `None` without such a block.
fn exported(db: &dyn Db, module_spec: trellis_db::SourceFile) -> Option<Vec<String>> {
    let mut names: Option<Vec<String>> = None;
    for block in formal_blocks(db, module_spec) {
        if let BlockSyntax::Exports(exports) = &block.syntax {
            names
                .get_or_insert_with(Vec::new)
                .extend(exports.iter().map(|export| export.name.clone()));
        }
    }
    names
}

/// The directory of the definitions the target uses (§4.4).
pub const CALLEES_DIR: &str = "callees/";
/// The directory of the rest of the callable surface (§4.4 as amended).
pub const CALLABLE_DIR: &str = "callable/";

/// The path of a signature file under `dir` ([`CALLEES_DIR`] or
/// [`CALLABLE_DIR`]): its bare name within the target's module, its qualified
/// name (as a call would write it) from another module.
pub fn signature_path(db: &dyn Db, dir: &str, target: Item<'_>, callee: Item<'_>) -> String {
    if callee.module(db) == target.module(db) {
        format!("{dir}{}.md", callee.name(db))
    } else {
        format!("{dir}{}::{}.md", callee.module(db), callee.name(db))
    }
}

/// A callee's signature file (§4.4): its `soil-sig` block as written, then each
/// `requires`/`ensures` clause with the assurance its lock records (lock-schema
/// §4). Never its body.
#[salsa::tracked(returns(ref))]
pub fn callee_md<'db>(db: &'db dyn Db, callee: Item<'db>) -> Arc<str> {
    let name = callee.name(db);
    let mut text = format!("# {name}\n");
    let spec = spec_file(db, callee);
    let blocks = spec.map_or(&[][..], |file| formal_blocks(db, file).as_slice());
    if let Some(signature) = blocks.iter().find(|b| b.header.kind == BlockKind::SoilSig) {
        text.push_str(&format!(
            "\n```soil-sig\n{}\n```\n",
            signature.content.trim_end()
        ));
    }
    let assurances =
        lock_file(db, callee.module(db), name).and_then(|file| match read_lock_file(db, file) {
            Ok(Lock::Function(lock)) => lock.checks.as_ref().map(|checks| checks.clauses.clone()),
            _ => None,
        });
    let def = program_def(db, callee);
    let clauses = def
        .requires
        .iter()
        .map(|c| ("requires", c))
        .chain(def.ensures.iter().map(|c| ("ensures", c)));
    let mut wrote_heading = false;
    for (kind, clause) in clauses {
        if !wrote_heading {
            text.push('\n');
            wrote_heading = true;
        }
        let assurance = assurances
            .as_ref()
            .and_then(|map| map.get(&format!("{kind}:{}", clause.label)).copied());
        text.push_str(&clause_line(kind, clause, assurance));
    }
    Arc::from(text)
}

fn clause_line(kind: &str, clause: &Clause, assurance: Option<Assurance>) -> String {
    let note = match assurance {
        Some(Assurance::Proven) => "proven",
        Some(Assurance::Tested) => "tested",
        Some(Assurance::Assumed) => "assumed — granted without proof",
        Some(Assurance::Runtime) => {
            "runtime — demoted, guard active; do not rely on\n  this claim when reasoning about your own obligations"
        }
        None => {
            "unrecorded — no lock records it; do not rely on\n  this claim when reasoning about your own obligations"
        }
    };
    let source = clause
        .source
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    format!("- {kind} `{}` ({note}): `{source}`\n", clause.label)
}

/// `tests.json` (§4.5): the expect cases in the soil0 §10 case shape, through the
/// one expect-bundle writer, so the shape and the canonical values match what
/// `trellis test` runs. Cram blocks are not expect cases and never appear;
/// v1 derives no expect-shaped cases (its `derived:` rows are properties).
#[salsa::tracked(returns(ref))]
pub fn tests_json<'db>(db: &'db dyn Db, item: Item<'db>) -> BundleFile {
    let empty = || BundleFile::new("tests.json", r#"{"cases":[]}"#);
    let (Some(spec), Some(signature)) = (
        spec_file(db, item),
        program_def(db, item).signature.as_ref(),
    ) else {
        return empty();
    };
    let program = soil_types::Program::default();
    let nowhere = std::path::Path::new("");
    let qualified = item.qualified(db);
    let input = SuiteInput {
        definition: &qualified,
        types: trellis_db::root_types(db),
        program: &program,
        signature,
        requires: &[],
        ensures: &[],
        blocks: test_blocks(db, spec),
        seed: trellis_verify::property::seed_for(
            &trellis_db::formal_hash(db, spec),
            &trellis_db::test_hash(db, spec),
        ),
        root: nowhere,
        references: &Default::default(),
        tool_dir: nowhere,
        base_path: "",
        python: "python3",
        timeouts: Timeouts::default(),
    };
    BundleFile::new("tests.json", expect_bundle_text(&input))
}

/// The reference oracle (§4.7): the stanza, and for a Python reference the
/// referenced file verbatim as `reference.py` (absent from the root: no file).
#[salsa::tracked(returns(ref))]
pub fn oracle<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<(OracleStanza, Option<BundleFile>)> {
    let spec = spec_file(db, item)?;
    let reference = test_blocks(db, spec)
        .iter()
        .find_map(|block| match &block.syntax {
            BlockSyntax::Reference(Some(line)) => Some(line.reference.clone()),
            _ => None,
        })?;
    Some(match reference {
        Reference::Python { path, symbol } => {
            let file = trellis_db::file_at(db, &path)
                .map(|file| BundleFile::new("reference.py", file.text(db).clone()));
            (OracleStanza::Reference { path, symbol }, file)
        }
        Reference::Cli { command } => (OracleStanza::Cli { command }, None),
    })
}

/// `previous.soil` (§4.8): the checked-in Soil when re-lowering.
#[salsa::tracked(returns(ref))]
pub fn previous_soil<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<BundleFile> {
    let index = root_index(db, Workspace::get(db));
    let file = index.module(item.module(db))?.soils.get(item.name(db))?;
    Some(BundleFile::new("previous.soil", file.text(db).clone()))
}

/// `module.md` (§5, lowest tier): the module's `_module.tr`.
#[salsa::tracked(returns(ref))]
pub fn module_md<'db>(db: &'db dyn Db, module: Module<'db>) -> Option<BundleFile> {
    let index = root_index(db, Workspace::get(db));
    let file = index.module(module.name(db))?.spec?;
    Some(BundleFile::new("module.md", file.text(db).clone()))
}

/// One corpus example (§4.6): a lowered definition's `.tr` and `.soil`, whole,
/// under `examples/<module>/`. Until the prelude corpus exists (plan 04) the
/// corpus is the root's own lowered pairs.
#[salsa::tracked(returns(ref))]
pub fn example_pair<'db>(db: &'db dyn Db, item: Item<'db>) -> Vec<BundleFile> {
    let index = root_index(db, Workspace::get(db));
    let Some(files) = index.module(item.module(db)) else {
        return Vec::new();
    };
    let [Some(spec), Some(soil)] = [
        files.specs.get(item.name(db)),
        files.soils.get(item.name(db)),
    ] else {
        return Vec::new();
    };
    let [tr_path, soil_path] = example_paths(db, item);
    vec![
        BundleFile::new(tr_path, spec.text(db).clone()),
        BundleFile::new(soil_path, soil.text(db).clone()),
    ]
}

/// The two paths of an example pair, known without reading the files.
pub fn example_paths(db: &dyn Db, item: Item<'_>) -> [String; 2] {
    let (module, name) = (item.module(db), item.name(db));
    [
        format!("examples/{module}/{name}.tr"),
        format!("examples/{module}/{name}.soil"),
    ]
}
