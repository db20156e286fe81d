//! The suite key (lock-schema §5.4): one hash over everything a definition's test
//! suite executes, so a recorded result is reused only while every input it ran
//! on is unchanged — the action-key discipline of build systems, applied to tests.
//!
//! What the suite reads, and so what the key covers:
//!
//! - the toolchain that runs it;
//! - the definition's spec: the formal blocks (signature, clauses, grants) and
//!   the test blocks (cases, properties, cram, references; they seed properties);
//! - every definition in its test program (its body's callees, the definitions
//!   its clauses and properties mention, and theirs), each by its `soil_hash`
//!   and — because every clause is a runtime guard — its spec's formal hash; a
//!   private helper by its `soil_hash` and signature. The program enters as
//!   [`program_digest`]s, a Merkle hash over the program graph: each
//!   definition's digest covers its own entry and its direct program callees'
//!   digests, so a key reads its direct callees, never its whole closure, and an
//!   edit below a hub re-hashes each dependent once. Name resolution is covered
//!   by the membership itself: a root definition that comes to shadow a builtin
//!   joins the program and moves the key;
//! - the types the suite can observe ([`suite_types_digest`]): the environment
//!   holds every type of the root by name, and a program observes exactly what
//!   it answers for the names the program looks up — type names, constructors,
//!   and fields read or updated (a field of a record whose type is not known yet
//!   is looked up among every record type declaring it) — and, in turn, for the
//!   type names those declarations mention. Each such type enters with its
//!   spec's formal hash, and a type added elsewhere that answers none of those
//!   names moves nothing (it used to: the whole environment was hashed, so a new
//!   module re-ran every suite);
//! - each Python reference's directory: every file under it but the locks (the
//!   driver puts that directory first on `sys.path`, so any local import
//!   resolves there, and an oracle reads its data files from beside itself; the
//!   host's walk loads every file under a directory holding a `.py`, data as its
//!   digest), and each CLI oracle's command text;
//! - for cram transcripts, the programs of every `trellis call DEF` they run; a
//!   transcript that runs any other `trellis` command depends on the whole root.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use soil_syntax::ast::{TypeDeclBody, VariantPayload};
use trellis_hash::{Digest, Hasher};
use trellis_spec::{BlockKind, BlockSyntax, CramStep, Reference};

use crate::assembly::{program_callees, program_cycle, program_def, property_callees};
use crate::db::Db;
use crate::deep::descend;
use crate::documents::env_json;
use crate::files::Workspace;
use crate::hashing::soil_hash;
use crate::index::{Item, ItemKind, Module, root_index, spec_file};
use crate::refs::EnvNames;
use crate::resolve::{split_definition_name, type_index};
use crate::soil::helper_signature;
use crate::spec::{formal_blocks, formal_hash, test_blocks, test_hash};
use crate::tables::module_hashes;

/// The version every key is computed under: results recorded by another build
/// are not reused (the workspace shares one version).
const TOOLCHAIN: &str = concat!("trellis ", env!("CARGO_PKG_VERSION"));

/// The key over everything `item`'s suite executes.
#[salsa::tracked(returns(copy))]
pub fn suite_key<'db>(db: &'db dyn Db, item: Item<'db>) -> Digest {
    // `/4`: generated cases are seeded by the formal and the test hash
    // (`trellis_verify::property::seed_for`), a reference's directory is
    // keyed whole, and the types are narrowed to those the program observes
    // (`suite_types_digest`); results recorded under earlier tags drew another
    // sample or hashed another key.
    let mut hasher = Hasher::tagged("suite-key/4");
    hasher.part(TOOLCHAIN.as_bytes());
    let spec = spec_file(db, item);
    match spec {
        Some(spec) => hasher
            .part(formal_hash(db, spec).to_string().as_bytes())
            .part(test_hash(db, spec).to_string().as_bytes()),
        None => hasher.part(b"no spec").part(b""),
    };
    hasher.part(b"program");
    hasher.part(program_digest(db, item).bytes());
    for (module, name) in property_callees(db, item) {
        let mentioned = Item::new(db, module.as_str(), name.as_str());
        hasher.part(program_digest(db, mentioned).bytes());
    }
    hasher.part(b"types");
    hasher.part(suite_types_digest(db, item).bytes());
    if let Some(spec) = spec {
        for block in test_blocks(db, spec) {
            match &block.syntax {
                BlockSyntax::Reference(Some(reference)) => {
                    hasher.part(b"oracle").part(reference.line.as_bytes());
                    oracle_inputs(db, &mut hasher, &reference.reference);
                }
                BlockSyntax::Cram(steps) => {
                    for step in steps {
                        if let CramStep::Command(command) = step {
                            cram_inputs(db, &mut hasher, &command.command);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    hasher.finish()
}

/// The digest of `env.json`, hashed once per change of the type environment
/// rather than by every suite key that needs it whole (a cram command that runs
/// any `trellis` command but `call`).
#[salsa::tracked(returns(copy))]
fn env_digest(db: &dyn Db) -> Digest {
    Digest::of(env_json(db).as_bytes())
}

/// Adds the names `item`'s own text asks the type environment for: a
/// function's or helper's signature, body and clauses; a type's own name and
/// its invariants. Read by [`program_env_names`] alone, inside it: a query of
/// its own was one more memo per definition for an early cutoff the program's
/// names already make.
fn add_own_env_names(db: &dyn Db, item: Item<'_>, names: &mut EnvNames) {
    if item.kind(db) == ItemKind::Type {
        names.types.insert(item.name(db).clone());
        let blocks = spec_file(db, item).map(|spec| formal_blocks(db, spec).as_slice());
        for block in blocks.unwrap_or_default() {
            if let (BlockKind::Invariant, BlockSyntax::Clauses(clauses)) =
                (&block.header.kind, &block.syntax)
            {
                for predicate in clauses.iter().filter_map(|c| c.predicate.as_ref()) {
                    names.add_expr(predicate);
                }
            }
        }
        return;
    }
    let def = program_def(db, item);
    if let Some(signature) = &def.signature {
        names.add_type(&signature.ty);
    }
    if let Some(equation) = crate::soil::item_equation(db, item) {
        names.add_equation(equation);
    }
    for clause in def.requires.iter().chain(&def.ensures) {
        if let Some(predicate) = &clause.predicate {
            names.add_expr(predicate);
        }
    }
}

/// The names `item`'s program asks the type environment for: its own and its
/// program callees', gathered as [`program_digest`] hashes (members of a cycle
/// share theirs). Syntax alone: a type added to the root never re-derives it.
#[salsa::tracked(returns(ref))]
fn program_env_names<'db>(db: &'db dyn Db, item: Item<'db>) -> EnvNames {
    descend(|| {
        let mut names = EnvNames::default();
        match program_cycle(db, item) {
            None => {
                add_own_env_names(db, item, &mut names);
                for callee in program_callees(db, item).filter(|&callee| callee != item) {
                    names.extend(program_env_names(db, callee));
                }
            }
            Some(members) => {
                let inside = |callee: Item<'db>| {
                    members.iter().any(|(module, name)| {
                        callee.module(db) == module && callee.name(db) == name
                    })
                };
                for (module, name) in members {
                    let member = Item::new(db, module.as_str(), name.as_str());
                    add_own_env_names(db, member, &mut names);
                    for callee in program_callees(db, member).filter(|&callee| !inside(callee)) {
                        names.extend(program_env_names(db, callee));
                    }
                }
            }
        }
        names
    })
}

/// Everything `item`'s suite asks the type environment for: its program's
/// names, those of the programs its properties and its cram `trellis call`s
/// run, and its properties' binder types and predicates. `None` when a cram
/// command may read the whole root (then the whole environment is the input).
/// Read by [`suite_types_digest`] alone, inside it; most suites add nothing to
/// their program's names, which are then borrowed, not copied.
fn suite_env_names<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<Cow<'db, EnvNames>> {
    let mut names = Cow::Borrowed(program_env_names(db, item));
    for (module, name) in property_callees(db, item) {
        names.to_mut().extend(program_env_names(
            db,
            Item::new(db, module.as_str(), name.as_str()),
        ));
    }
    let blocks = spec_file(db, item).map(|spec| test_blocks(db, spec).as_slice());
    for block in blocks.unwrap_or_default() {
        match &block.syntax {
            BlockSyntax::Property(Some(property)) => {
                for ty in property.binders.iter().filter_map(|b| b.ty.as_ref()) {
                    names.to_mut().add_type(ty);
                }
                if let Some(body) = &property.body {
                    names.to_mut().add_expr(body);
                }
            }
            BlockSyntax::Cram(steps) => {
                for step in steps {
                    let CramStep::Command(command) = step else {
                        continue;
                    };
                    match cram_reach(&command.command) {
                        CramReach::Nothing => {}
                        CramReach::WholeRoot => return None,
                        CramReach::Calls(calls) => {
                            for call in calls {
                                if let Some((module, name)) = split_definition_name(&call) {
                                    let called = Item::new(db, module, name);
                                    names.to_mut().extend(program_env_names(db, called));
                                }
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Some(names)
}

/// The types `item`'s suite can observe, by formal hash: the environment's
/// answers for [`suite_env_names`], and for the type names their declarations
/// mention, transitively; the whole environment when a cram command may read
/// the whole root. Re-derived when a type is added or edited anywhere, but
/// equal — so the key stays asleep — unless one of its answers moved.
#[salsa::tracked(returns(copy))]
pub fn suite_types_digest<'db>(db: &'db dyn Db, item: Item<'db>) -> Digest {
    let Some(names) = suite_env_names(db, item) else {
        return Digest::of(format!("whole environment {}", env_digest(db)).as_bytes());
    };
    let lookup = env_lookup(db);
    let answer = |names: &EnvNames, into: &mut Vec<(String, String)>| {
        for (table, asked) in [
            (&lookup.by_type, &names.types),
            (&lookup.by_constructor, &names.constructors),
            (&lookup.by_field, &names.fields),
        ] {
            for name in asked {
                into.extend(table.get(name).into_iter().flatten().cloned());
            }
        }
    };
    let mut observed: BTreeSet<(String, String)> = BTreeSet::new();
    let mut pending = Vec::new();
    answer(&names, &mut pending);
    while let Some(ty) = pending.pop() {
        if let Some(mentioned) = lookup.mentions.get(&ty)
            && observed.insert(ty)
        {
            answer(mentioned, &mut pending);
        }
    }
    let mut hasher = Hasher::tagged("suite-types/1");
    for (module, name) in &observed {
        hasher.part(module.as_bytes()).part(name.as_bytes());
        match spec_file(db, Item::new(db, module.as_str(), name.as_str())) {
            Some(spec) => hasher.part(formal_hash(db, spec).bytes()),
            None => hasher.part(b"no spec"),
        };
    }
    hasher.finish()
}

/// The root's types by each name the environment answers for.
#[derive(Debug, Default, PartialEq, Eq)]
struct EnvLookup {
    by_type: BTreeMap<String, Vec<(String, String)>>,
    by_constructor: BTreeMap<String, Vec<(String, String)>>,
    by_field: BTreeMap<String, Vec<(String, String)>>,
    /// The type names each declaration mentions (its fields' and payloads').
    mentions: BTreeMap<(String, String), EnvNames>,
}

#[salsa::tracked(returns(ref))]
fn env_lookup(db: &dyn Db) -> EnvLookup {
    let index = type_index(db);
    let mut lookup = EnvLookup {
        by_constructor: index.constructors.clone(),
        ..EnvLookup::default()
    };
    for (key, declaration) in &index.declarations {
        let mut mentioned = EnvNames::default();
        let mut fields = |fields: &[soil_syntax::ast::FieldDecl], mentioned: &mut EnvNames| {
            for field in fields {
                mentioned.add_type(&field.ty);
                lookup
                    .by_field
                    .entry(field.name.text.clone())
                    .or_default()
                    .push(key.clone());
            }
        };
        match &declaration.body {
            TypeDeclBody::Record(record) => fields(record, &mut mentioned),
            TypeDeclBody::Sum(variants) => {
                for variant in variants {
                    match &variant.payload {
                        VariantPayload::None => {}
                        VariantPayload::Positional(ty) => mentioned.add_type(ty),
                        VariantPayload::Record(record) => fields(record, &mut mentioned),
                    }
                }
            }
            TypeDeclBody::Opaque => {}
        }
        lookup
            .by_type
            .entry(key.1.clone())
            .or_default()
            .push(key.clone());
        lookup.mentions.insert(key.clone(), mentioned);
    }
    lookup
}

/// The Merkle digest of `item`'s program (bodies and clauses, as
/// `program_order` assembles it): its own entry and each direct program
/// callee's digest. The members of a cycle share one digest over all their
/// entries and the digests of what they call outside it.
#[salsa::tracked(returns(copy))]
pub fn program_digest<'db>(db: &'db dyn Db, item: Item<'db>) -> Digest {
    descend(|| {
        let mut hasher = Hasher::tagged("program-digest/1");
        match program_cycle(db, item) {
            None => {
                program_entry(db, &mut hasher, item);
                for callee in program_callees(db, item).filter(|&callee| callee != item) {
                    hasher.part(program_digest(db, callee).bytes());
                }
            }
            Some(members) => {
                let mut sorted = members.clone();
                sorted.sort();
                let inside = |callee: Item<'db>| {
                    sorted.iter().any(|(module, name)| {
                        callee.module(db) == module && callee.name(db) == name
                    })
                };
                for (module, name) in &sorted {
                    let member = Item::new(db, module.as_str(), name.as_str());
                    program_entry(db, &mut hasher, member);
                    for callee in program_callees(db, member).filter(|&callee| !inside(callee)) {
                        hasher.part(program_digest(db, callee).bytes());
                    }
                }
            }
        }
        hasher.finish()
    })
}

/// One definition of a program: its name, body hash and contract.
fn program_entry(db: &dyn Db, hasher: &mut Hasher, item: Item<'_>) {
    hasher
        .part(item.module(db).as_bytes())
        .part(item.name(db).as_bytes());
    match soil_hash(db, item) {
        Some(body) => hasher.part(body.bytes()),
        None => hasher.part(b"no body"),
    };
    match item.kind(db) {
        ItemKind::Helper => match helper_signature(db, item) {
            Some(signature) => hasher.part(soil_syntax::print_type(&signature.ty).as_bytes()),
            None => hasher.part(b"no contract"),
        },
        ItemKind::Function | ItemKind::Type => match spec_file(db, item) {
            Some(spec) => hasher.part(formal_hash(db, spec).bytes()),
            None => hasher.part(b"no contract"),
        },
    };
}

/// A Python reference's directory (every file under it by path and content —
/// a data file's content is its digest, as the host loads it — but the locks,
/// which `trellis test` writes: keying them would stale every run by its own
/// record), or a CLI oracle's command.
fn oracle_inputs(db: &dyn Db, hasher: &mut Hasher, reference: &Reference) {
    match reference {
        Reference::Python { path, .. } => {
            let dir = match path.rsplit_once('/') {
                Some((dir, _)) => format!("{dir}/"),
                None => String::new(),
            };
            for file in crate::index::files_under(db, &dir) {
                let file_path = file.path(db);
                if crate::files::FileKind::of(file_path) != crate::files::FileKind::Lock {
                    hasher
                        .part(file_path.as_str().as_bytes())
                        .part(Digest::of(file.text(db).as_bytes()).to_string().as_bytes());
                }
            }
        }
        Reference::Cli { command } => {
            hasher.part(command.as_bytes());
        }
    }
}

/// What one cram command reaches of the root.
fn cram_inputs(db: &dyn Db, hasher: &mut Hasher, command: &str) {
    match cram_reach(command) {
        CramReach::Nothing => {}
        CramReach::Calls(names) => {
            for name in names {
                hasher.part(b"call").part(name.as_bytes());
                let Some((module, name)) = split_definition_name(&name) else {
                    continue;
                };
                let target = Item::new(db, module, name);
                hasher.part(program_digest(db, target).bytes());
            }
        }
        CramReach::WholeRoot => {
            hasher.part(b"whole root");
            let index = root_index(db, Workspace::get(db));
            for module in index.modules.keys() {
                for row in module_hashes(db, Module::new(db, module.clone())) {
                    hasher.part(module.as_bytes()).part(row.name.as_bytes());
                    if let Some(spec) = &row.spec {
                        for hash in [spec.formal, spec.test] {
                            hasher.part(hash.to_string().as_bytes());
                        }
                    }
                    let body = row.soil_hash.map(|hash| hash.to_string());
                    hasher.part(body.as_deref().unwrap_or("no body").as_bytes());
                }
            }
        }
    }
}

/// How much of the root a cram command can observe through `trellis`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum CramReach {
    Nothing,
    Calls(Vec<String>),
    WholeRoot,
}

/// Reads a shell command for `trellis` invocations: `trellis call DEF …` runs
/// DEF's program; any other `trellis` command may read anything in the root.
pub(crate) fn cram_reach(command: &str) -> CramReach {
    let words: Vec<&str> = command
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')' | '`'))
        .filter(|word| !word.is_empty())
        .collect();
    let mut calls = Vec::new();
    for (at, word) in words.iter().enumerate() {
        if *word != "trellis" && !word.ends_with("/trellis") {
            continue;
        }
        let mut rest = words[at + 1..].iter().filter(|w| !w.starts_with('-'));
        match (rest.next(), rest.next()) {
            (Some(&"call"), Some(def)) => calls.push(def.trim_matches(['\'', '"']).to_owned()),
            _ => return CramReach::WholeRoot,
        }
    }
    if calls.is_empty() {
        CramReach::Nothing
    } else {
        CramReach::Calls(calls)
    }
}

#[cfg(test)]
mod tests {
    use super::{CramReach, cram_reach};

    #[test]
    fn cram_commands_reach_what_they_call() {
        assert_eq!(cram_reach("printf 'a\\n' > data.csv"), CramReach::Nothing);
        assert_eq!(
            cram_reach("trellis call csvstats::median '[[1.0]]'"),
            CramReach::Calls(vec!["csvstats::median".to_owned()])
        );
        assert_eq!(
            cram_reach("cat x | /usr/bin/trellis --no-daemon call inventory/low_stock 1"),
            CramReach::Calls(vec!["inventory/low_stock".to_owned()])
        );
        assert_eq!(cram_reach("trellis status"), CramReach::WholeRoot);
        assert_eq!(cram_reach("trellis"), CramReach::WholeRoot);
    }
}
