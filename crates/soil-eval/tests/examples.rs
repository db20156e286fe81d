//! Runs the expect cases of the examples/csvstats specs through the
//! interpreter: the module's types, signatures, requires/ensures clauses and
//! equations are loaded from its `.tr` and `.soil` files the way the
//! toolchain joins them, and each `test` block case is compared in canonical JSON.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use std::sync::Arc;

use soil_eval::world::FakeFs;
use soil_eval::{Clause, Definition, Program, RunError, World, rt_type, type_env_from_decls};
use soil_syntax::ast;

const MODULE: &str = "examples/csvstats";

fn read(relative: &str) -> String {
    let path = format!("{}/../../{relative}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

fn module_files(ext: &str) -> Vec<String> {
    let dir = format!("{}/../../{MODULE}", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {dir}: {e}"))
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(ext))
        .collect();
    names.sort();
    names
}

/// The fenced blocks of a `.tr` text: `(info string, content)`.
fn blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        match (&mut current, line.strip_prefix("```")) {
            (None, Some(info)) if !info.is_empty() => {
                current = Some((info.trim().to_owned(), String::new()))
            }
            (Some(_), Some("")) => out.extend(current.take()),
            (Some((_, body)), _) => {
                body.push_str(line);
                body.push('\n');
            }
            _ => {}
        }
    }
    out
}

/// `label: predicate` entries; continuation lines are indented.
fn clauses(body: &str, file: &str) -> Vec<Clause> {
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in body.lines() {
        match line.split_once(':') {
            Some((label, rest)) if !line.starts_with(' ') && !label.contains(' ') => {
                entries.push((label.to_owned(), rest.trim_start().to_owned()));
            }
            _ => {
                if let Some((_, text)) = entries.last_mut() {
                    text.push('\n');
                    text.push_str(line);
                }
            }
        }
    }
    entries
        .into_iter()
        .map(|(label, text)| {
            let (predicate, errors) = soil_syntax::parse_predicate(&text);
            assert!(errors.is_empty(), "{file} {label}: {errors:?}");
            let predicate = predicate.unwrap_or_else(|| panic!("{file} {label}: no predicate"));
            Clause {
                label,
                predicate,
                file: Some(file.to_owned()),
                text: Some(Arc::from(text.as_str())),
            }
        })
        .collect()
}

struct Spec {
    name: String,
    signature: Option<ast::Type>,
    requires: Vec<Clause>,
    ensures: Vec<Clause>,
    tests: Vec<String>,
}

fn load() -> (Program, Vec<Spec>) {
    let mut type_decls = Vec::new();
    let mut specs = Vec::new();
    for name in module_files(".tr") {
        let file = format!("{MODULE}/{name}");
        let text = read(&file);
        let mut spec = Spec {
            name: name.trim_end_matches(".tr").to_owned(),
            signature: None,
            requires: Vec::new(),
            ensures: Vec::new(),
            tests: Vec::new(),
        };
        for (info, body) in blocks(&text) {
            match info.split_whitespace().next().unwrap_or("") {
                "soil-type" => {
                    let (parsed, errors) = soil_syntax::parse_file(&body);
                    assert!(errors.is_empty(), "{file}: {errors:?}");
                    type_decls.extend(parsed.items.into_iter().filter_map(|i| match i {
                        ast::Item::TypeDecl(decl) => Some(decl),
                        _ => None,
                    }));
                }
                "soil-sig" => {
                    let (parsed, errors) = soil_syntax::parse_file(&body);
                    assert!(errors.is_empty(), "{file}: {errors:?}");
                    spec.signature = parsed.items.into_iter().find_map(|i| match i {
                        ast::Item::Signature(sig) => Some(sig.ty),
                        _ => None,
                    });
                }
                "requires" => spec.requires = clauses(&body, &file),
                "ensures" => spec.ensures = clauses(&body, &file),
                "test" => spec.tests.push(body),
                _ => {}
            }
        }
        specs.push(spec);
    }
    let types = type_env_from_decls(&type_decls).unwrap_or_else(|e| panic!("types: {e:?}"));
    let mut definitions = Vec::new();
    for name in module_files(".soil") {
        let file = format!("{MODULE}/{name}");
        let text = read(&file);
        let (parsed, errors) = soil_syntax::parse_file(&text);
        assert!(errors.is_empty(), "{file}: {errors:?}");
        let shared: Arc<str> = Arc::from(text.as_str());
        let signatures: Vec<(String, ast::Type)> = parsed
            .items
            .iter()
            .filter_map(|i| match i {
                ast::Item::Signature(sig) => Some((sig.name.text.clone(), sig.ty.clone())),
                _ => None,
            })
            .collect();
        for item in &parsed.items {
            let ast::Item::Equation(equation) = item else {
                continue;
            };
            let spec = specs.iter().find(|s| s.name == equation.name.text);
            let signature = spec.and_then(|s| s.signature.clone()).or_else(|| {
                signatures
                    .iter()
                    .find(|(n, _)| *n == equation.name.text)
                    .map(|(_, t)| t.clone())
            });
            definitions.push(Definition {
                name: equation.name.text.clone(),
                module: Some("csvstats".into()),
                file: Some(file.clone()),
                text: Some(Arc::clone(&shared)),
                signature,
                equation: equation.clone(),
                requires: spec.map(|s| s.requires.clone()).unwrap_or_default(),
                ensures: spec.map(|s| s.ensures.clone()).unwrap_or_default(),
            });
        }
    }
    let program = Program::compile(types, definitions).unwrap_or_else(|e| panic!("compile: {e:?}"));
    (program, specs)
}

/// Runs every `name(args) -> expected` case of `spec`'s test blocks.
fn run_cases(program: &Program, spec: &Spec) -> usize {
    let signature = spec
        .signature
        .as_ref()
        .unwrap_or_else(|| panic!("{} has no signature", spec.name));
    let arity = program.params(&spec.name).map_or(0, |p| p.len());
    let mut result_type = signature;
    for _ in 0..arity {
        if let ast::TypeKind::Function(f) = &result_type.kind {
            result_type = &f.result;
        }
    }
    let result_type = rt_type(program.types(), result_type, &[], &mut Vec::new())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut count = 0;
    for block in &spec.tests {
        let mut world = World::sandbox();
        for line in block.lines().filter(|l| !l.trim().is_empty()) {
            if let Some(fake) = line.strip_prefix("with fs = ") {
                world.fs = Box::new(FakeFs::from_json(fake).unwrap_or_else(|e| panic!("{e:?}")));
                continue;
            }
            let (call, expected) = line
                .split_once(" -> ")
                .unwrap_or_else(|| panic!("bad case {line}"));
            let args = call
                .strip_prefix(&format!("{}(", spec.name))
                .and_then(|rest| rest.strip_suffix(')'))
                .unwrap_or_else(|| panic!("bad call {call}"));
            let actual = match program.run_json(&spec.name, &format!("[{args}]"), &mut world) {
                Ok(json) => json,
                Err(RunError::Panic(p)) => panic!("{line}: {p}"),
                Err(RunError::Refused(d)) => panic!("{line}: {d:?}"),
            };
            let expected = soil_rt::decode(expected, &result_type, program.types())
                .map(|v| soil_rt::encode(&v, program.types()))
                .unwrap_or_else(|e| panic!("{line}: expected value: {e:?}"));
            assert_eq!(actual, expected, "{line}");
            count += 1;
        }
    }
    count
}

#[test]
fn csvstats_expect_cases_pass() {
    let (program, specs) = load();
    let mut ran = Vec::new();
    for spec in specs
        .iter()
        .filter(|s| !s.tests.is_empty() && program.params(&s.name).is_some())
    {
        ran.push((spec.name.clone(), run_cases(&program, spec)));
    }
    let names: Vec<&str> = ran.iter().map(|(n, _)| n.as_str()).collect();
    for wanted in ["median", "read_file", "sort"] {
        assert!(
            names.contains(&wanted),
            "no cases ran for {wanted}: {ran:?}"
        );
    }
    assert!(ran.iter().map(|(_, n)| n).sum::<usize>() >= 10, "{ran:?}");
}

#[test]
fn csvstats_clauses_guard_the_run() {
    let (program, _) = load();
    let outcome = program.run_json("median", "[[]]", &mut World::sandbox());
    match outcome {
        Err(RunError::Panic(panic)) => {
            assert_eq!(panic.code.code(), "requires-violated");
            assert_eq!(panic.file.as_deref(), Some("examples/csvstats/median.tr"));
            assert_eq!(panic.message, "median requires non_empty does not hold");
        }
        other => panic!("expected a requires violation, got {other:?}"),
    }
}
