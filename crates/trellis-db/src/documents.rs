//! The soil0 documents the database generates: `env.json` (soil0-cli §6) from the
//! type specs and `program.json` (§7.2) for a definition, callee-first (§7.3). Every
//! embedded Soil text comes from the canonical printer, so the documents are
//! byte-stable whatever the source formatting.

use std::sync::Arc;

use serde_json::{Value, json};
use soil_syntax::ast::{self, TypeDeclBody, VariantPayload};

use crate::assembly::{helper_grants, program_def, program_order};
use crate::check::checker_env;
use crate::db::Db;
use crate::index::{Item, ItemKind};
use crate::soil::{item_equation, item_soil_file};

fn soil_option(value: Option<Value>) -> Value {
    match value {
        Some(value) => json!({ "tag": "Some", "value": value }),
        None => json!({ "tag": "None" }),
    }
}

fn fields(fields: &[ast::FieldDecl]) -> Value {
    fields
        .iter()
        .map(|field| json!({ "name": field.name.text, "ty": soil_syntax::print_type(&field.ty) }))
        .collect()
}

/// `env.json`: every type declaration of the root.
#[salsa::tracked(returns(ref))]
pub fn env_json(db: &dyn Db) -> String {
    let types: Vec<Value> = checker_env(db)
        .types
        .iter()
        .map(|located| {
            let declaration = &located.node;
            let body = match &declaration.body {
                TypeDeclBody::Record(record) => json!({ "tag": "Record", "fields": fields(record) }),
                TypeDeclBody::Sum(variants) => {
                    let variants: Vec<Value> = variants
                        .iter()
                        .map(|variant| {
                            let (payload, record) = match &variant.payload {
                                VariantPayload::None => (None, None),
                                VariantPayload::Positional(ty) => (Some(json!(soil_syntax::print_type(ty))), None),
                                VariantPayload::Record(record) => (None, Some(fields(record))),
                            };
                            json!({ "name": variant.name.text, "payload": soil_option(payload), "fields": soil_option(record) })
                        })
                        .collect();
                    json!({ "tag": "Sum", "variants": variants })
                }
                TypeDeclBody::Opaque => json!({ "tag": "Opaque" }),
            };
            let params: Vec<&str> = declaration.params.iter().map(|p| p.text.as_str()).collect();
            json!({ "name": declaration.name.text, "params": params, "body": body })
        })
        .collect();
    json!({ "types": types }).to_string()
}

/// `program.json` for `item`: its callee-first program, item last. Stitched from
/// each member's memoized entry, so an edited body re-renders one entry and its
/// callers' programs only re-join text.
#[salsa::tracked(returns(ref))]
pub fn program_json<'db>(db: &'db dyn Db, item: Item<'db>) -> Arc<str> {
    let mut json = String::from(r#"{"definitions":["#);
    let mut first = true;
    for (module, name) in program_order(db, item).iter() {
        let member = Item::new(db, module.as_str(), name.as_str());
        if let Some(entry) = program_entry_json(db, member) {
            if !first {
                json.push(',');
            }
            json.push_str(entry);
            first = false;
        }
    }
    json.push_str("]}");
    json.into()
}

/// One definition's entry of `program.json` (§7.2); `None` until it has a body.
#[salsa::tracked(returns(as_deref))]
fn program_entry_json<'db>(db: &'db dyn Db, item: Item<'db>) -> Option<String> {
    let def = program_def(db, item);
    let equation = item_equation(db, item).as_ref()?;
    let signature = def.signature.as_ref().map(|signature| {
        json!(soil_syntax::print_item(&ast::Item::Signature(signature.clone())).trim_end())
    });
    let clauses: Vec<Value> = [("requires", &def.requires), ("ensures", &def.ensures)]
        .into_iter()
        .flat_map(|(kind, clauses)| {
            clauses.iter().filter_map(move |clause| {
                let predicate = clause.predicate.as_ref()?;
                Some(json!({ "kind": kind, "label": clause.label, "predicate": soil_syntax::print_expr(predicate) }))
            })
        })
        .collect();
    let grants = match item.kind(db) {
        ItemKind::Helper => helper_grants(db, item),
        _ => &def.allowed,
    };
    let allow: Vec<Value> = grants
        .iter()
        .map(|(hatch, reason)| json!({ "hatch": hatch, "reason": reason }))
        .collect();
    let file = item_soil_file(db, item).map(|file| json!(file.path(db).as_str()));
    let entry = json!({
        "name": format!("{}::{}", def.module, def.name),
        "file": soil_option(file),
        "signature": soil_option(signature),
        "equation": soil_syntax::print_item(&ast::Item::Equation(equation.clone())).trim_end(),
        "clauses": clauses,
        "allow": allow,
    });
    Some(entry.to_string())
}
