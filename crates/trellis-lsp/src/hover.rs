//! Hover text, in Markdown: a name's type; a definition's signature, its status
//! with the reason and the command that fixes it, and its hashes; a hole's goal
//! and the locals in scope; a decision's text. Everything is read from the same
//! queries `check` and `status` answer from, so the editor and the CLI agree.

use trellis_db::{CheckOutcome, Db, Item};
use trellis_spec::BlockSyntax;

use crate::builtins::{builtins, documentation};
use crate::resolve::{DecisionScope, Symbol, file_at};

/// The hover text for a symbol under the cursor (`at` is the name's start, for a
/// local's type at that very place).
pub fn hover(db: &dyn Db, symbol: &Symbol, at: u32) -> Option<String> {
    match symbol {
        Symbol::Definition { module, name } => Some(definition(db, module, name)),
        Symbol::Type { module, name } => Some(type_hover(db, module, name)),
        Symbol::Constructor { module, ty, name } => Some(format!(
            "constructor `{name}` of `{module}::{ty}`\n\n{}",
            type_hover(db, module, ty)
        )),
        Symbol::Builtin { name } => builtin(name),
        Symbol::Local { name, item, .. } => {
            let ty = item.as_ref().and_then(|(module, owner)| {
                let item = Item::new(db, module.clone(), owner.clone());
                trellis_db::name_types(db, item)
                    .iter()
                    .find(|named| named.span.start == at)
                    .map(|named| named.ty.clone())
            });
            Some(match ty {
                Some(ty) => format!("```soil\n{name} : {ty}\n```\nlocal"),
                None => format!("```soil\n{name}\n```\nlocal"),
            })
        }
        Symbol::Hole { module, item, name } => hole(db, module, item, name),
        Symbol::Decision { scope, label } => decision(db, scope, label),
    }
}

fn soil_block(text: &str) -> String {
    format!("```soil\n{text}\n```")
}

/// The signature as declared: the spec's `soil-sig`, or a helper's own.
pub fn declared_signature(db: &dyn Db, module: &str, name: &str) -> Option<String> {
    let item = Item::new(db, module.to_owned(), name.to_owned());
    if let Some(signature) = trellis_db::helper_signature(db, item) {
        return Some(format!(
            "{} : {}",
            signature.name.text,
            soil_syntax::print_type(&signature.ty)
        ));
    }
    let file = file_at(db, &format!("{module}/{name}.tr"))?;
    trellis_db::formal_blocks(db, file)
        .iter()
        .find_map(|block| match &block.syntax {
            BlockSyntax::Signature(Some(signature)) => Some(format!(
                "{} : {}",
                signature.name.text,
                soil_syntax::print_type(&signature.ty)
            )),
            _ => None,
        })
}

/// The `status` row of a name (`module::name`, a module, `project`). A
/// function's is derived from its own status query alone, so a hover never
/// waits for the root's whole status table; the rarer rows (types, decision
/// scopes) are read from that table.
pub fn status_row(db: &dyn Db, name: &str) -> Option<trellis_db::StatusRow> {
    trellis_db::Workspace::try_get(db)?;
    if let Some((module, def)) = name.split_once("::")
        && trellis_db::ItemKind::of(def) == trellis_db::ItemKind::Function
    {
        crate::resolve::file_at(db, &format!("{module}/{def}.tr"))?;
        let item = Item::new(db, module.to_owned(), def.to_owned());
        return Some(match trellis_db::definition_status(db, item) {
            Ok(status) => trellis_db::StatusRow::from_status(name.to_owned(), "function", status),
            Err(errors) => trellis_db::unreadable_function_row(db, item, errors),
        });
    }
    trellis_db::root_status(db)
        .iter()
        .find(|row| row.name == name)
        .cloned()
}

/// One status line: `**stale-spec** — the reason · fix: \`trellis adopt m::f\``.
pub fn status_line(row: &trellis_db::StatusRow) -> String {
    let mut line = format!("**{}**", row.status);
    if let Some(reason) = &row.reason {
        line.push_str(&format!(" — {reason}"));
    }
    if let Some(fix) = &row.fix {
        line.push_str(&format!(" · fix: `{fix}`"));
    }
    line
}

fn definition(db: &dyn Db, module: &str, name: &str) -> String {
    let qualified = format!("{module}::{name}");
    let mut text = match declared_signature(db, module, name) {
        Some(signature) => soil_block(&format!("{qualified}\n{signature}")),
        None => soil_block(&qualified),
    };
    if name.starts_with('_') {
        text.push_str("\n\nprivate helper (its callers' locks record it)");
    } else if let Some(row) = status_row(db, &qualified) {
        text.push_str(&format!("\n\nstatus: {}", status_line(&row)));
    }
    let mut hashes = Vec::new();
    if let Some(file) = file_at(db, &format!("{module}/{name}.tr")) {
        let spec = trellis_db::spec_hashes(db, file);
        hashes.push(format!("formal `{}`", spec.formal));
        hashes.push(format!("test `{}`", spec.test));
        hashes.push(format!("prose `{}`", spec.prose));
    }
    let item = Item::new(db, module.to_owned(), name.to_owned());
    if let Some(soil) = trellis_db::soil_hash(db, item) {
        hashes.push(format!("soil `{soil}`"));
    }
    if !hashes.is_empty() {
        text.push_str("\n\nhashes: ");
        text.push_str(&hashes.join(", "));
    }
    text
}

fn type_hover(db: &dyn Db, module: &str, name: &str) -> String {
    let index = trellis_db::type_index(db);
    let declaration = index
        .declarations
        .get(&(module.to_owned(), name.to_owned()))
        .map(soil_syntax::print_type_decl)
        .unwrap_or_else(|| format!("type {name}"));
    let mut text = soil_block(&declaration);
    if let Some(row) = status_row(db, &format!("{module}::{name}")) {
        text.push_str(&format!("\n\nstatus: {}", status_line(&row)));
    }
    if let Some(file) = file_at(db, &format!("{module}/{name}.tr")) {
        text.push_str(&format!(
            "\n\nhashes: formal `{}`",
            trellis_db::formal_hash(db, file)
        ));
    }
    text
}

fn builtin(name: &str) -> Option<String> {
    let builtins = builtins();
    if let Some(ty) = builtins.values.get(name) {
        let mut text = soil_block(&format!("{name} : {ty}"));
        if let Some((meaning, cost)) = documentation(name) {
            text.push_str(&format!("\n\n{meaning}\n\ncost: {cost}"));
        }
        text.push_str("\n\nbuiltin (prelude)");
        return Some(text);
    }
    if let Some(ty) = builtins.constructors.get(name) {
        let decl = builtins.types.get(ty).cloned().unwrap_or_default();
        return Some(format!(
            "constructor `{name}` of `{ty}`\n\n{}\n\nbuiltin (prelude)",
            soil_block(&decl)
        ));
    }
    builtins.types.get(name).map(|decl| {
        let shown = if decl.is_empty() {
            format!("type {name}")
        } else {
            decl.clone()
        };
        format!("{}\n\nbuiltin type (prelude)", soil_block(&shown))
    })
}

fn hole(db: &dyn Db, module: &str, item: &str, name: &str) -> Option<String> {
    let owner = Item::new(db, module.to_owned(), item.to_owned());
    let CheckOutcome::Checked(facts) = trellis_db::check_definition(db, owner) else {
        return Some(format!(
            "hole `?{name}` in `{module}::{item}`: its goal is known once the definition checks"
        ));
    };
    let hole = facts.holes.iter().find(|hole| hole.name == name)?;
    let mut text = soil_block(&format!("?{name} : {}", hole.goal));
    text.push_str(&format!("\n\nhole in `{module}::{item}`"));
    if !hole.scope.is_empty() {
        text.push_str("; in scope:\n");
        for entry in &hole.scope {
            text.push_str(&format!("\n- `{} : {}`", entry.name, entry.ty));
        }
    }
    Some(text)
}

fn decision(db: &dyn Db, scope: &DecisionScope, label: &str) -> Option<String> {
    let (path, scope_name) = match scope {
        DecisionScope::Project => ("_project.tr".to_owned(), "project".to_owned()),
        DecisionScope::Module(module) => (format!("{module}/_module.tr"), module.clone()),
    };
    let file = file_at(db, &path)?;
    let entry = trellis_db::decision_entries(db, file)
        .iter()
        .find(|entry| entry.label == label)?;
    let mut text = format!("**{label}** ({scope_name} decision)\n\n{}", entry.text);
    for rejected in &entry.rejected {
        text.push_str(&format!("\n\nrejected: {rejected}"));
    }
    Some(text)
}
