//! Test support: the soil0 documents of the examples root, assembled from its
//! `.tr` and `.soil` files the way the daemon will (soil0-cli §6, §7, §10), and
//! a way to run soil0 both in process and as the binary.
//!
//! env.json: every `soil-type` block. program.json: every equation of every
//! `.soil` file, module by module, `_private.soil` first (every definition is
//! signed, so any order is callee-first, §7.3), with the public definition's
//! `soil-sig`, `requires`/`ensures` and `allow` blocks from its `.tr`, and the
//! signature item of `_private.soil` for a private helper. tests.json: every
//! `test` block case of a lowered definition, named `block#k`, with the fakes its
//! `with` lines bind.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use soil_syntax::ast;
use trellis_spec::{BlockKind, BlockSyntax, Expected, TestLine};

pub const MODULES: &[&str] = &["csvstats", "inventory"];

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn examples_root() -> PathBuf {
    workspace_root().join("examples")
}

/// The checked-in fixtures: test-data/soil0/examples.
pub fn fixtures() -> PathBuf {
    workspace_root().join("test-data/soil0/examples")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn sorted_paths(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    paths.retain(|p| p.extension().is_some_and(|e| e == extension));
    paths.sort();
    paths
}

fn tr_file(path: &Path) -> trellis_spec::TrFile {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (file, diagnostics) = trellis_spec::parse_tr(&read(path), &stem);
    assert!(
        diagnostics.is_empty(),
        "{}: {diagnostics:?}",
        path.display()
    );
    file
}

fn blocks(
    file: &trellis_spec::TrFile,
    kind: BlockKind,
) -> impl Iterator<Item = &trellis_spec::Block> {
    file.blocks
        .iter()
        .filter(move |b| b.value.header.kind == kind)
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("JSON");
    text.push('\n');
    text
}

fn field_json(field: &ast::FieldDecl) -> Value {
    json!({ "name": field.name.text, "ty": soil_syntax::print_type(&field.ty) })
}

fn option(value: Option<Value>) -> Value {
    match value {
        Some(value) => json!({ "tag": "Some", "value": value }),
        None => json!({ "tag": "None" }),
    }
}

fn type_json(decl: &ast::TypeDecl) -> Value {
    let body = match &decl.body {
        ast::TypeDeclBody::Record(fields) => {
            json!({ "tag": "Record", "fields": fields.iter().map(field_json).collect::<Vec<_>>() })
        }
        ast::TypeDeclBody::Sum(variants) => json!({
            "tag": "Sum",
            "variants": variants.iter().map(|v| {
                let (payload, fields) = match &v.payload {
                    ast::VariantPayload::None => (None, None),
                    ast::VariantPayload::Positional(ty) => (Some(json!(soil_syntax::print_type(ty))), None),
                    ast::VariantPayload::Record(fields) => {
                        (None, Some(json!(fields.iter().map(field_json).collect::<Vec<_>>())))
                    }
                };
                json!({ "name": v.name.text, "payload": option(payload), "fields": option(fields) })
            }).collect::<Vec<_>>(),
        }),
        ast::TypeDeclBody::Opaque => json!({ "tag": "Opaque" }),
    };
    json!({
        "name": decl.name.text,
        "params": decl.params.iter().map(|p| p.text.clone()).collect::<Vec<_>>(),
        "body": body,
    })
}

/// env.json of the examples root (§6), pretty-printed.
pub fn env_json() -> String {
    let mut types = Vec::new();
    for module in MODULES {
        for path in sorted_paths(&examples_root().join(module), "tr") {
            let file = tr_file(&path);
            for block in blocks(&file, BlockKind::SoilType) {
                if let BlockSyntax::TypeDecl(Some(decl)) = &block.value.syntax {
                    types.push(type_json(decl));
                }
            }
        }
    }
    pretty(&json!({ "types": types }))
}

fn item_text(item: ast::Item) -> String {
    soil_syntax::print_item(&item).trim_end().to_owned()
}

/// program.json of the examples root (§7), pretty-printed.
pub fn program_json() -> String {
    let root = examples_root();
    let mut definitions = Vec::new();
    for module in MODULES {
        for path in sorted_paths(&root.join(module), "soil") {
            let (file, diagnostics) = soil_syntax::parse_file(&read(&path));
            assert!(
                diagnostics.is_empty(),
                "{}: {diagnostics:?}",
                path.display()
            );
            let relative = format!(
                "{module}/{}",
                path.file_name().unwrap_or_default().to_string_lossy()
            );
            for item in &file.items {
                let ast::Item::Equation(equation) = item else {
                    continue;
                };
                let name = &equation.name.text;
                let tr_path = root.join(module).join(format!("{name}.tr"));
                let spec = tr_path.exists().then(|| tr_file(&tr_path));
                let mut signature = file.items.iter().find_map(|i| match i {
                    ast::Item::Signature(s) if s.name.text == *name => Some(item_text(i.clone())),
                    _ => None,
                });
                let mut clauses = Vec::new();
                let mut allow = Vec::new();
                if let Some(spec) = &spec {
                    for block in &spec.blocks {
                        match (&block.value.header.kind, &block.value.syntax) {
                            (BlockKind::SoilSig, BlockSyntax::Signature(Some(sig))) => {
                                signature = Some(item_text(ast::Item::Signature(sig.clone())));
                            }
                            (
                                kind @ (BlockKind::Requires | BlockKind::Ensures),
                                BlockSyntax::Clauses(list),
                            ) => {
                                let kind = if *kind == BlockKind::Requires {
                                    "requires"
                                } else {
                                    "ensures"
                                };
                                for clause in list {
                                    clauses.push(json!({ "kind": kind, "label": clause.label, "predicate": clause.source }));
                                }
                            }
                            (BlockKind::Allow, BlockSyntax::Allow(grants)) => {
                                for grant in grants {
                                    allow.push(
                                        json!({ "hatch": grant.hatch, "reason": grant.reason }),
                                    );
                                }
                            }
                            _ => {}
                        }
                    }
                }
                definitions.push(json!({
                    "name": format!("{module}::{name}"),
                    "file": option(Some(json!(relative))),
                    "signature": option(signature.map(Value::String)),
                    "equation": item_text(item.clone()),
                    "clauses": clauses,
                    "allow": allow,
                }));
            }
        }
    }
    pretty(&json!({ "definitions": definitions }))
}

/// tests.json: a §10 bundle of every `test` block case of a lowered example
/// definition, naming env.json and program.json beside it.
pub fn tests_json() -> String {
    let root = examples_root();
    let mut cases = Vec::new();
    for module in MODULES {
        for path in sorted_paths(&root.join(module), "tr") {
            let stem = path
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            if !root.join(module).join(format!("{stem}.soil")).exists() {
                continue; // not lowered yet (mean.tr): nothing to run
            }
            let file = tr_file(&path);
            for block in blocks(&file, BlockKind::Test) {
                let BlockSyntax::Test(lines) = &block.value.syntax else {
                    continue;
                };
                let block_name = block.value.header.name.clone().unwrap_or_default();
                let mut k = 0;
                for line in lines {
                    let TestLine::Case(case) = line else { continue };
                    k += 1;
                    let expect = match &case.expected {
                        Expected::Value(value) => json!({ "tag": "Value", "value": value.value }),
                        Expected::Panic(_) => json!({ "tag": "Panic", "code": { "tag": "None" } }),
                    };
                    let fakes: serde_json::Map<String, Value> = case
                        .fakes
                        .iter()
                        .map(|(name, fake)| (name.clone(), fake.value.clone()))
                        .collect();
                    cases.push(json!({
                        "name": format!("{stem}.{block_name}#{k}"),
                        "def": format!("{module}::{}", case.callee),
                        "args": case.args.iter().map(|a| a.value.clone()).collect::<Vec<_>>(),
                        "expect": expect,
                        "fakes": fakes,
                    }));
                }
            }
        }
    }
    pretty(&json!({
        "env": { "tag": "Some", "value": "env.json" },
        "program": { "tag": "Some", "value": "program.json" },
        "cases": cases,
    }))
}

/// Files read relative to the workspace root, as the binary (run there) reads them.
pub struct RootedHost;

impl soil0::cli::Host for RootedHost {
    fn read_file(&self, path: &str) -> std::io::Result<String> {
        std::fs::read_to_string(workspace_root().join(path))
    }
}

/// soil0 in process, reading files relative to the workspace root: exit status
/// and stdout.
pub fn library(args: &[&str]) -> (u8, String) {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let mut out = Vec::new();
    let code = soil0::cli::run(&args, &RootedHost, &mut out).expect("writing to a Vec");
    (code, String::from_utf8(out).expect("UTF-8 output"))
}

/// The soil0 binary: exit status, stdout and stderr.
pub fn binary(args: &[&str]) -> (u8, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_soil0"))
        .args(args)
        .current_dir(workspace_root())
        .output()
        .expect("soil0 runs");
    let code = output.status.code().map_or(255, |c| c as u8);
    (
        code,
        String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    )
}

/// Paths given to soil0, relative to the workspace root.
pub const ENV: &str = "test-data/soil0/examples/env.json";
pub const PROGRAM: &str = "test-data/soil0/examples/program.json";
pub const TESTS: &str = "test-data/soil0/examples/tests.json";
