//! Callee-first programs (soil0-cli §7): what the checker and the interpreter are
//! handed for a definition, assembled from position-free values (signatures and
//! clauses from spec blocks, equations from their parses), so a program changes
//! only when what it says does. The environment is in `check` and `documents`.

use std::collections::BTreeSet;
use std::sync::Arc;

use soil_syntax::ast::Signature;
use trellis_spec::{BlockKind, BlockSyntax, Clause};

use crate::db::Db;
use crate::deep::descend;
use crate::hashing::{cycle_of, definition_item, reaches_a_cycle, resolved_refs};
use crate::index::{Item, ItemKind};
use crate::refs::predicate_refs;
use crate::resolve::{Target, resolve};
use crate::soil::{helper_signature, item_equation};
use crate::spec::formal_blocks;

/// One definition of a program: what the checker needs to know of it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProgramDef {
    pub module: String,
    pub name: String,
    /// From the `.tr` `soil-sig` block (functions) or `_private.soil` (helpers).
    /// The body is [`item_equation`]'s, not copied here: a copy per memo of
    /// every equation of the root was a ninth of a cold check's memory
    /// (design §7.15).
    pub signature: Option<Signature>,
    pub requires: Vec<Clause>,
    pub ensures: Vec<Clause>,
    /// Escape hatches granted by the spec's `allow` block, with the reasons given
    /// (a helper's are its owners', [`helper_grants`]).
    pub allowed: Vec<(String, String)>,
}

/// A definition as the program sees it.
#[salsa::tracked(returns(ref))]
pub fn program_def<'db>(db: &'db dyn Db, item: Item<'db>) -> ProgramDef {
    let mut def = ProgramDef {
        module: item.module(db).clone(),
        name: item.name(db).clone(),
        signature: None,
        requires: Vec::new(),
        ensures: Vec::new(),
        allowed: Vec::new(),
    };
    match item.kind(db) {
        // A helper's grants are its owners' (`helper_grants`): reading them here
        // would make every program's references depend on its callers' programs.
        ItemKind::Helper => def.signature = helper_signature(db, item).clone(),
        ItemKind::Function => {
            let spec = crate::index::spec_file(db, item);
            for block in spec
                .map(|file| formal_blocks(db, file).as_slice())
                .unwrap_or_default()
            {
                match (&block.header.kind, &block.syntax) {
                    (BlockKind::SoilSig, BlockSyntax::Signature(signature)) => {
                        def.signature = signature.clone()
                    }
                    (BlockKind::Requires, BlockSyntax::Clauses(clauses)) => {
                        def.requires = clauses.clone()
                    }
                    (BlockKind::Ensures, BlockSyntax::Clauses(clauses)) => {
                        def.ensures = clauses.clone()
                    }
                    _ => {}
                }
            }
            def.allowed = spec_grants(db, item);
        }
        ItemKind::Type => {}
    }
    def
}

/// The escape hatches a function's spec grants, as (hatch, reason).
fn spec_grants(db: &dyn Db, item: Item<'_>) -> Vec<(String, String)> {
    let Some(spec) = crate::index::spec_file(db, item) else {
        return Vec::new();
    };
    formal_blocks(db, spec)
        .iter()
        .filter_map(|block| match &block.syntax {
            BlockSyntax::Allow(grants) => Some(grants),
            _ => None,
        })
        .flatten()
        .map(|grant| (grant.hatch.clone(), grant.reason.clone()))
        .collect()
}

/// The escape hatches a private helper holds: every grant of the specs of its
/// owners, the module's functions whose programs reach it (soil0-cli §7.2: a
/// helper's `allow` is its owning definition's). A grant records that a person
/// accepted the helper's recursion as terminating, so one owner's grant covers
/// it for every caller. Only owners that grant something have their programs
/// read, so an edit of another function's body leaves this asleep.
#[salsa::tracked(returns(ref))]
pub fn helper_grants<'db>(db: &'db dyn Db, helper: Item<'db>) -> Vec<(String, String)> {
    let Some(files) = crate::index::files_of(db, helper.module(db)) else {
        return Vec::new();
    };
    let key = (helper.module(db).clone(), helper.name(db).clone());
    let mut grants: Vec<(String, String)> = Vec::new();
    for name in files.specs.keys() {
        if ItemKind::of(name) != ItemKind::Function {
            continue;
        }
        let owner = Item::new(db, helper.module(db).as_str(), name.as_str());
        let granted = spec_grants(db, owner);
        if granted.is_empty() || !program_order(db, owner).contains(&key) {
            continue;
        }
        for grant in granted {
            if !grants.iter().any(|(hatch, _)| *hatch == grant.0) {
                grants.push(grant);
            }
        }
    }
    grants
}

/// What a definition's program needs: its body's references, plus the references of
/// its `requires`/`ensures` clauses (predicate vocabulary such as `sorted`),
/// sorted and each once. Kept as a slice, not the set that gathers them: a
/// set's first node holds room for eleven targets, and every definition of
/// the root keeps this memo, most with one to three (design §7.15).
#[salsa::tracked(returns(ref))]
pub fn program_refs<'db>(db: &'db dyn Db, item: Item<'db>) -> Box<[Target]> {
    let mut targets: BTreeSet<Target> = resolved_refs(db, item)
        .iter()
        .map(|(_, target)| target.clone())
        .collect();
    let def = program_def(db, item);
    let mut bound: Vec<&str> = vec!["result"];
    if let Some(equation) = item_equation(db, item) {
        bound.extend(equation.params.iter().filter_map(|p| match p {
            soil_syntax::ast::Param::Named(ident) => Some(ident.text.as_str()),
            soil_syntax::ast::Param::Wildcard(_) => None,
        }));
    }
    if let Some(signature) = &def.signature {
        let mut ty = &signature.ty;
        while let soil_syntax::ast::TypeKind::Function(function) = &ty.kind {
            if let Some(name) = &function.param_name {
                bound.push(name.text.as_str());
            }
            ty = &function.result;
        }
    }
    for clause in def.requires.iter().chain(&def.ensures) {
        let Some(predicate) = &clause.predicate else {
            continue;
        };
        for reference in predicate_refs(predicate, &bound) {
            targets.insert(resolve(db, item, &reference));
        }
    }
    targets.into_iter().collect()
}

/// The root definitions a definition's program needs directly.
pub(crate) fn program_callees<'db>(
    db: &'db dyn Db,
    item: Item<'db>,
) -> impl Iterator<Item = Item<'db>> {
    program_refs(db, item)
        .iter()
        .filter_map(move |target| definition_item(db, target))
}

/// Whether no cycle of the program graph (bodies and clauses) is reachable from
/// `item`; as `call_cycle_free`, it reads only what `item` reaches.
#[salsa::tracked(returns(copy), cycle_result = reaches_a_cycle)]
pub fn program_cycle_free<'db>(db: &'db dyn Db, item: Item<'db>) -> bool {
    descend(|| {
        program_callees(db, item).all(|callee| callee == item || program_cycle_free(db, callee))
    })
}

/// The members of `item`'s program-graph cycle, so `program_order` never recurses
/// into itself; `None` when it is in none (answered by `program_cycle_free`
/// alone, as `call_cycle` is).
pub fn program_cycle<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<&'db Vec<(String, String)>> {
    if program_cycle_free(db, item) {
        return None;
    }
    program_cycle_members(db, item).as_ref()
}

#[salsa::tracked(returns(ref))]
fn program_cycle_members<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<Vec<(String, String)>> {
    cycle_of(
        db,
        item,
        |node| program_callees(db, node).collect(),
        program_cycle_free,
    )
}

/// The definitions `item` needs, as (module, name), callees before callers and
/// `item` last: the post-order of a depth-first walk of its program's closure,
/// each definition's callees in [`program_refs`] order. Mutually recursive
/// definitions are one step of the walk: their outside callees first, then
/// the members in their cycle's order.
///
/// The walk keeps its own stack and asks no callee for its order: built from
/// the callees' own orders, each a memo, the orders of a call chain `n` long
/// held `n²/2` entries between them (a `test` of the head of a chain of 5,000
/// took 2.4 s and 930 MB) and nested `n` queries on the thread's stack. Only
/// the orders asked for are kept, each over the memos of its closure's
/// references.
#[salsa::tracked(returns(ref))]
pub fn program_order<'db>(db: &'db dyn Db, item: Item<'db>) -> Arc<[(String, String)]> {
    /// One step of the walk in progress: a definition, or the members of a
    /// cycle, and the next reference to follow.
    struct Step {
        members: Vec<(String, String)>,
        member: usize,
        reference: usize,
    }
    let step_at = |item: Item<'db>| Step {
        members: match program_cycle(db, item) {
            Some(members) => members.clone(),
            None => vec![(item.module(db).clone(), item.name(db).clone())],
        },
        member: 0,
        reference: 0,
    };
    let mut order = Vec::new();
    let mut entered: BTreeSet<(String, String)> = BTreeSet::new();
    let first = step_at(item);
    entered.extend(first.members.iter().cloned());
    let mut walk = vec![first];
    while let Some(step) = walk.last_mut() {
        let Some((module, name)) = step.members.get(step.member) else {
            let done = walk.pop().expect("the walk holds the step it just read");
            order.extend(done.members);
            continue;
        };
        let refs = program_refs(db, Item::new(db, module.as_str(), name.as_str()));
        let Some(target) = refs.get(step.reference) else {
            step.member += 1;
            step.reference = 0;
            continue;
        };
        step.reference += 1;
        let Target::Definition(module, name) = target else {
            continue;
        };
        if entered.contains(&(module.clone(), name.clone())) {
            continue;
        }
        let next = step_at(Item::new(db, module.as_str(), name.as_str()));
        entered.extend(next.members.iter().cloned());
        walk.push(next);
    }
    order.into()
}

/// The root definitions the predicates of `item`'s `property` blocks mention
/// (`count_of`, `sort`, …), other than `item` itself, in first-mention order. A
/// definition without a property (most) is answered from its test blocks, with
/// no memo of its own on the path every pass confirms.
pub fn property_callees<'db>(db: &'db dyn Db, item: Item<'db>) -> &'db [(String, String)] {
    let has_property = crate::index::spec_file(db, item).is_some_and(|file| {
        crate::spec::test_blocks(db, file)
            .iter()
            .any(|block| matches!(block.syntax, BlockSyntax::Property(Some(_))))
    });
    if has_property {
        property_callee_list(db, item)
    } else {
        &[]
    }
}

#[salsa::tracked(returns(ref))]
fn property_callee_list<'db>(db: &'db dyn Db, item: Item<'db>) -> Vec<(String, String)> {
    let spec = crate::index::spec_file(db, item);
    let mut out: Vec<(String, String)> = Vec::new();
    for block in spec
        .map(|file| crate::spec::test_blocks(db, file).as_slice())
        .unwrap_or_default()
    {
        let BlockSyntax::Property(Some(property)) = &block.syntax else {
            continue;
        };
        let Some(body) = &property.body else { continue };
        let binders: Vec<&str> = property.binders.iter().map(|b| b.name.as_str()).collect();
        for reference in predicate_refs(body, &binders) {
            let Target::Definition(module, name) = resolve(db, item, &reference) else {
                continue;
            };
            let key = (module, name);
            if Item::new(db, key.0.as_str(), key.1.as_str()) != item && !out.contains(&key) {
                out.push(key);
            }
        }
    }
    out
}

/// The program a definition's tests run against: its own program plus whatever the
/// predicates of its `property` blocks mention (`count_of`, `sort`, …), callees
/// first, the definition itself last. Without properties that mention others, it
/// is the definition's own program, with no memo of its own.
pub fn test_program_order<'db>(db: &'db dyn Db, item: Item<'db>) -> &'db Arc<[(String, String)]> {
    if property_callees(db, item).is_empty() {
        program_order(db, item)
    } else {
        test_program_with_properties(db, item)
    }
}

#[salsa::tracked(returns(ref))]
fn test_program_with_properties<'db>(db: &'db dyn Db, item: Item<'db>) -> Arc<[(String, String)]> {
    let own = program_order(db, item);
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    let mut order = Vec::new();
    for (module, name) in property_callees(db, item) {
        let referenced = Item::new(db, module.as_str(), name.as_str());
        for entry in program_order(db, referenced).iter() {
            if !own.contains(entry) && seen.insert(entry.clone()) {
                order.push(entry.clone());
            }
        }
    }
    order.extend(own.iter().cloned());
    order.into()
}
