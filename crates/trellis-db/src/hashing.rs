//! `soil_hash` (design §6.3, impl plan §8.6): SHA-256 over `soil-hash/1`, the item's
//! hash form, and one `name NUL referent-hash` part per free reference sorted by
//! name — callees by their `soil_hash`, private helpers by the same recipe, types by
//! their `formal_hash` (members of a recursive type group by the group's cycle
//! hash), builtins by `soil0-builtin/<major>`. Definitions that call each other in a
//! cycle share one cycle hash over all their hash forms.

use std::collections::{BTreeMap, BTreeSet};

use soil_syntax::ast::{TypeDeclBody, VariantPayload};
use trellis_hash::{Digest, Hasher};

use crate::db::Db;
use crate::deep::descend;
use crate::files::Workspace;
use crate::graph::{Graph, cycle_through, strongly_connected};
use crate::index::{Item, ItemKind, Module, root_index};
use crate::refs::{FreeRef, equation_refs, type_refs};
use crate::resolve::{Target, resolve, type_index};

/// The rendered name a reference sorts and hashes under.
fn written(reference: &FreeRef) -> String {
    match reference {
        FreeRef::Value(name) | FreeRef::Constructor(name) | FreeRef::Type(name) => name.clone(),
        FreeRef::Qualified { module, name } => format!("{module}::{name}"),
    }
}

/// What the hashes and the call graph read of one item's Soil: its equation's
/// hash form and each free reference with its resolution, sorted by written name.
#[derive(Debug, PartialEq, Eq)]
pub struct SoilFacts {
    pub form: String,
    pub refs: Vec<(String, Target)>,
}

/// An item's [`SoilFacts`], `None` without an equation. One memo read straight
/// from its file's parse, not a chain of them (equation, hash form, references,
/// resolutions): after a text edit every re-hashed dependent confirms this memo
/// for each item of its closure, so the chain's length multiplied that walk
/// (design §7.9).
#[salsa::tracked(returns(ref))]
pub fn soil_facts<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<SoilFacts> {
    let equation = crate::soil::equation_in_file(db, item)?;
    let form = soil_syntax::hash_form_item(&soil_syntax::ast::Item::Equation(
        std::sync::Arc::clone(equation),
    ));
    let mut resolved: BTreeMap<String, Target> = BTreeMap::new();
    for reference in &equation_refs(equation) {
        resolved.insert(written(reference), resolve(db, item, reference));
    }
    Some(SoilFacts {
        form,
        refs: resolved.into_iter().collect(),
    })
}

/// Each free reference of an item with its resolution, sorted by written name.
pub fn resolved_refs<'db>(db: &'db dyn Db, item: Item<'db>) -> &'db [(String, Target)] {
    soil_facts(db, item)
        .as_ref()
        .map_or(&[], |facts| facts.refs.as_slice())
}

/// The item a reference to a root definition names.
pub(crate) fn definition_item<'db>(db: &'db dyn Db, target: &Target) -> Option<Item<'db>> {
    match target {
        Target::Definition(module, name) => Some(Item::new(db, module.as_str(), name.as_str())),
        _ => None,
    }
}

/// The root definitions `item` calls (itself included when it recurses).
fn callees<'db>(db: &'db dyn Db, item: Item<'db>) -> impl Iterator<Item = Item<'db>> {
    resolved_refs(db, item)
        .iter()
        .filter_map(move |(_, target)| definition_item(db, target))
}

/// Whether no call cycle is reachable from `item` (a self-call is not a cycle).
/// Members of a cycle get salsa's cycle fallback, `false`; everything that calls
/// into a cycle inherits it. Unlike one root-wide graph, this reads only what
/// `item` reaches, so an edit elsewhere leaves it durable (design §7.2).
#[salsa::tracked(returns(copy), cycle_result = reaches_a_cycle)]
pub fn call_cycle_free<'db>(db: &'db dyn Db, item: Item<'db>) -> bool {
    descend(|| callees(db, item).all(|callee| callee == item || call_cycle_free(db, callee)))
}

/// The cycle fallback of the `…_cycle_free` queries.
pub(crate) fn reaches_a_cycle<'db>(_db: &'db dyn Db, _id: salsa::Id, _item: Item<'db>) -> bool {
    false
}

/// The members of `item`'s call cycle, sorted, or `None` when it is in none.
/// An item that reaches no cycle (nearly all) is answered by `call_cycle_free`
/// alone, so it keeps no memo of its own on the path every pass confirms.
pub fn call_cycle<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<&'db Vec<(String, String)>> {
    if call_cycle_free(db, item) {
        return None;
    }
    call_cycle_members(db, item).as_ref()
}

#[salsa::tracked(returns(ref))]
fn call_cycle_members<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<Vec<(String, String)>> {
    cycle_of(
        db,
        item,
        |node| callees(db, node).collect(),
        call_cycle_free,
    )
}

/// The cycle through `item` of the graph `edges` describes, exploring only the
/// part below `item` that `cycle_free` says reaches a cycle.
pub(crate) fn cycle_of<'db>(
    db: &'db dyn Db,
    item: Item<'db>,
    edges: impl Fn(Item<'db>) -> Vec<Item<'db>>,
    cycle_free: fn(&'db dyn Db, Item<'db>) -> bool,
) -> Option<Vec<(String, String)>> {
    if cycle_free(db, item) {
        return None;
    }
    let start = (item.module(db).clone(), item.name(db).clone());
    cycle_through(&start, |(module, name)| {
        edges(Item::new(db, module.as_str(), name.as_str()))
            .into_iter()
            .filter(|&next| !cycle_free(db, next))
            .map(|next| (next.module(db).clone(), next.name(db).clone()))
            .collect()
    })
}

/// The same for type declarations referring to each other through their fields.
#[salsa::tracked(returns(ref))]
pub fn type_cycles(db: &dyn Db) -> BTreeMap<(String, String), Vec<(String, String)>> {
    let index = type_index(db);
    let mut graph: Graph<(String, String)> = Graph::new();
    for ((module, name), declaration) in &index.declarations {
        let mut names = BTreeSet::new();
        let mut add = |ty| names.extend(type_refs(ty));
        match &declaration.body {
            TypeDeclBody::Record(fields) => fields.iter().for_each(|f| add(&f.ty)),
            TypeDeclBody::Sum(variants) => {
                for variant in variants {
                    match &variant.payload {
                        VariantPayload::None => {}
                        VariantPayload::Positional(ty) => add(ty),
                        VariantPayload::Record(fields) => fields.iter().for_each(|f| add(&f.ty)),
                    }
                }
            }
            TypeDeclBody::Opaque => {}
        }
        let edges = names
            .into_iter()
            .filter_map(|reference| match reference {
                FreeRef::Type(ty) => index
                    .declarations
                    .keys()
                    .find(|(m, t)| *t == ty && m == module)
                    .or_else(|| index.declarations.keys().find(|(_, t)| *t == ty))
                    .cloned(),
                _ => None,
            })
            .collect();
        graph.insert((module.clone(), name.clone()), edges);
    }
    cycles_by_member(strongly_connected(&graph))
}

/// Only non-trivial components (two or more members) are cycles for hashing: a
/// definition that calls itself hashes its self-reference as `self`.
pub(crate) fn cycles_by_member(
    components: Vec<Vec<(String, String)>>,
) -> BTreeMap<(String, String), Vec<(String, String)>> {
    let mut by_member = BTreeMap::new();
    for component in components.into_iter().filter(|c| c.len() > 1) {
        for member in &component {
            by_member.insert(member.clone(), component.clone());
        }
    }
    by_member
}

/// Every function and helper item of the root, in module then name order.
#[salsa::tracked(returns(ref))]
pub fn all_code_items(db: &dyn Db) -> Vec<Item<'_>> {
    let index = root_index(db, Workspace::get(db));
    index
        .modules
        .keys()
        .flat_map(|module| {
            module_code_items(db, Module::new(db, module.clone()))
                .iter()
                .copied()
        })
        .collect()
}

/// Every function and helper item of one module, in name order: the public
/// definitions with a spec or a body, and the helpers `_private.soil` defines.
#[salsa::tracked(returns(ref))]
pub fn module_code_items<'db>(db: &'db dyn Db, module: Module<'db>) -> Vec<Item<'db>> {
    let Some(files) = crate::index::module_files(db, module) else {
        return Vec::new();
    };
    let mut names: BTreeSet<&str> = files
        .soils
        .keys()
        .chain(files.specs.keys())
        .map(String::as_str)
        .filter(|name| ItemKind::of(name) == ItemKind::Function)
        .collect();
    if let Some(private) = files.private_soil {
        names.extend(
            crate::soil::module_helpers(db, private)
                .iter()
                .map(String::as_str),
        );
    }
    names
        .into_iter()
        .map(|name| Item::new(db, module.name(db).as_str(), name))
        .collect()
}

/// `soil0-builtin/<major>`: builtins move every hash only when soil0's major does.
fn builtin_hash(db: &dyn Db) -> String {
    format!("soil0-builtin/{}", crate::config::soil0_major(db))
}

/// The `soil_hash` of a function or helper; `None` until it has a body. The
/// members of a call cycle share the cycle's hash ([`cycle_soil_hash`]).
pub fn soil_hash<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<Digest> {
    match acyclic_soil_hash(db, item) {
        Acyclic::Hash(hash) => hash,
        Acyclic::InACycle => cycle_soil_hash(db, item),
    }
}

/// What [`acyclic_soil_hash`] found: the hash of an item in no call cycle, or
/// that it is in one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Acyclic {
    Hash(Option<Digest>),
    InACycle,
}

/// An item's hash over its hash form and its referents' hashes, as if it were
/// in no call cycle. A member of one reaches itself through its callees'
/// hashes, and salsa gives every member of that cycle the fallback,
/// `InACycle`, whoever asks first; an item that only calls into a cycle is
/// hashed over the cycle's hash. The cycle is found by this recursion itself,
/// not by a separate `call_cycle_free` pass over the callees: after an edit
/// below a hub every dependent's hash is confirmed or recomputed, and a pass
/// of its own made that walk over the callees' closure twice (design §7.12).
#[salsa::tracked(returns(copy), cycle_result = found_a_cycle)]
fn acyclic_soil_hash<'db>(db: &'db dyn Db, item: Item<'db>) -> Acyclic {
    descend(|| {
        let facts = soil_facts(db, item).as_ref();
        Acyclic::Hash(facts.map(|facts| hash_facts(db, item, facts, |_, _| Referent::AsNow)))
    })
}

/// What one reference stands for in [`soil_hash_with`].
pub(crate) enum Referent {
    /// Its current referent, as [`soil_hash`] hashes it.
    AsNow,
    /// A referent hash recorded earlier (an edge of a lock).
    Hash(Digest),
    /// The builtin of that name.
    Builtin,
}

/// The `soil_hash` `item`'s equation would have if each of its references
/// stood for what `referent` says (given the written name and its current
/// resolution): with every reference [`Referent::AsNow`] it is
/// [`soil_hash`]. Status asks it whether a hash moved through the body's own
/// text or only through what its names stand for. `None` without an equation
/// or for a member of a call cycle (whose hash is the cycle's).
pub(crate) fn soil_hash_with(
    db: &dyn Db,
    item: Item<'_>,
    referent: impl Fn(&str, &Target) -> Referent,
) -> Option<Digest> {
    let facts = soil_facts(db, item).as_ref()?;
    if call_cycle(db, item).is_some() {
        return None;
    }
    Some(hash_facts(db, item, facts, referent))
}

/// The hash of `item`'s equation over its hash form and each reference
/// standing for what `referent` says.
fn hash_facts(
    db: &dyn Db,
    item: Item<'_>,
    facts: &SoilFacts,
    referent: impl Fn(&str, &Target) -> Referent,
) -> Digest {
    let from = (item.module(db).as_str(), item.name(db).as_str());
    let mut hasher = Hasher::tagged("soil-hash/1");
    hasher.part(facts.form.as_bytes());
    // One buffer for every reference's part: a re-hash after a hub edit
    // writes thousands of them.
    let mut part = String::with_capacity(128);
    for (name, target) in &facts.refs {
        part.clear();
        part.push_str(name);
        part.push('\0');
        match referent(name, target) {
            Referent::AsNow => push_referent_hash(db, from, target, &mut part),
            Referent::Hash(digest) => digest.push_written(&mut part),
            Referent::Builtin => part.push_str(&builtin_hash(db)),
        }
        hasher.part(part.as_bytes());
    }
    hasher.finish()
}

fn found_a_cycle<'db>(_db: &'db dyn Db, _id: salsa::Id, _item: Item<'db>) -> Acyclic {
    Acyclic::InACycle
}

/// The hash every member of `item`'s call cycle shares.
#[salsa::tracked(returns(copy))]
fn cycle_soil_hash<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<Digest> {
    let members = call_cycle(db, item)?;
    Some(cycle_hash(db, members))
}

/// What a reference of `from` contributes to its hash, appended to `out`: the
/// referent's hash as written, or a word for what has none.
fn push_referent_hash(db: &dyn Db, from: (&str, &str), target: &Target, out: &mut String) {
    let digest = match target {
        Target::Definition(module, name) if (module.as_str(), name.as_str()) == from => {
            return out.push_str("self");
        }
        Target::Definition(module, name) => {
            soil_hash(db, Item::new(db, module.as_str(), name.as_str())).ok_or("unlowered")
        }
        Target::Type(module, name) => {
            type_hash(db, Item::new(db, module.as_str(), name.as_str())).ok_or("unresolved")
        }
        Target::Builtin => return out.push_str(&builtin_hash(db)),
        Target::Unresolved => Err("unresolved"),
    };
    match digest {
        Ok(digest) => digest.push_written(out),
        Err(word) => out.push_str(word),
    }
}

/// One hash for a group of mutually recursive definitions: their hash forms and
/// their references out of the group, member by member in name order.
fn cycle_hash(db: &dyn Db, members: &[(String, String)]) -> Digest {
    let mut hasher = Hasher::tagged("soil-cycle/1");
    let mut sorted = members.to_vec();
    sorted.sort();
    for (module, name) in &sorted {
        let member = Item::new(db, module.as_str(), name.as_str());
        hasher.part(format!("{module}::{name}").as_bytes());
        let facts = soil_facts(db, member).as_ref();
        hasher.part(facts.map_or("", |facts| facts.form.as_str()).as_bytes());
        for (written, target) in resolved_refs(db, member) {
            let inside = matches!(target, Target::Definition(m, n) if sorted.iter().any(|(sm, sn)| sm == m && sn == n));
            let mut part = format!("{written}\0");
            match inside {
                true => part.push_str("cycle"),
                false => push_referent_hash(db, (module, name), target, &mut part),
            }
            hasher.part(part.as_bytes());
        }
    }
    hasher.finish()
}

/// A type's referent hash: its spec's `formal_hash`, or for members of a recursive
/// type group, the cycle hash over the members' canonical declarations.
#[salsa::tracked(returns(copy))]
pub fn type_hash<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<Digest> {
    let key = (item.module(db).clone(), item.name(db).clone());
    if let Some(members) = type_cycles(db).get(&key) {
        let index = type_index(db);
        let mut texts: Vec<(&String, String)> = members
            .iter()
            .filter_map(|member| {
                index
                    .declarations
                    .get(member)
                    .map(|d| (&member.1, soil_syntax::print_type_decl(d)))
            })
            .collect();
        texts.sort();
        let mut hasher = Hasher::tagged("type-cycle/1");
        for (_, text) in texts {
            hasher.part(text.as_bytes());
        }
        return Some(hasher.finish());
    }
    let file = crate::index::spec_file(db, Item::new(db, key.0.as_str(), key.1.as_str()))?;
    Some(crate::spec::formal_hash(db, file))
}
