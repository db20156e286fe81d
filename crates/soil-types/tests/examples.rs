//! Every definition under `examples/` checks, and its §8.4 document is pinned.
//!
//! The program is assembled the way the daemon does it: types from the `.tr`
//! `soil-type` blocks, each public definition's signature, clauses and escape
//! hatches from its `.tr` (`soil-sig`, `requires`, `ensures`, `allow`), private
//! helpers with the signature items of `_private.soil`. Every definition is
//! signed, so program order does not matter (soil0-cli §7.3).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use expect_test::expect;
use soil_syntax::ast;
use soil_types::{Allow, Clause, ClauseKind, Definition, Env, Located, Program, SourceText};

const MODULES: &[&str] = &["csvstats", "inventory"];

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The body of the first fence whose info string starts with `info`.
fn fence_body(text: &str, info: &str) -> Option<String> {
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line.strip_prefix("```") else {
            continue;
        };
        if rest.split_whitespace().next() != Some(info) {
            continue;
        }
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        return Some(body.join("\n"));
    }
    None
}

/// `label: text` logical lines; indented lines continue the previous one.
fn logical_lines(body: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in body.lines() {
        if line.starts_with([' ', '\t']) {
            if let Some((_, text)) = out.last_mut() {
                text.push('\n');
                text.push_str(line);
            }
        } else if let Some((label, text)) = line.split_once(':') {
            out.push((label.trim().to_owned(), text.trim_start().to_owned()));
        }
    }
    out
}

fn sorted_paths(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    paths.retain(|p| p.extension().is_some_and(|e| e == extension));
    paths.sort();
    paths
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn type_env(root: &Path) -> Env {
    let mut env = Env::default();
    for module in MODULES {
        for path in sorted_paths(&root.join(module), "tr") {
            let text = read(&path).unwrap_or_default();
            let Some(body) = fence_body(&text, "soil-type") else {
                continue;
            };
            let (decl, diagnostics) = soil_syntax::parse_type_decl(&body);
            assert!(
                diagnostics.is_empty(),
                "{}: {diagnostics:?}",
                path.display()
            );
            env.types.push(Located {
                node: decl.expect("type declaration"),
                source: SourceText::new(Some(relative(root, &path)), &body),
            });
        }
    }
    env
}

fn clauses(tr: &str, file: &str) -> Vec<Clause> {
    let mut out = Vec::new();
    for (info, kind) in [
        ("requires", ClauseKind::Requires),
        ("ensures", ClauseKind::Ensures),
    ] {
        for (label, text) in fence_body(tr, info)
            .map(|b| logical_lines(&b))
            .unwrap_or_default()
        {
            let (predicate, diagnostics) = soil_syntax::parse_predicate(&text);
            assert!(diagnostics.is_empty(), "{file} {label}: {diagnostics:?}");
            out.push(Clause {
                kind,
                label,
                predicate: Located {
                    node: predicate.expect("predicate"),
                    source: SourceText::new(Some(file.to_owned()), &text),
                },
            });
        }
    }
    out
}

fn examples_program(root: &Path) -> Program {
    let mut program = Program::default();
    for module in MODULES {
        for path in sorted_paths(&root.join(module), "soil") {
            let text = read(&path).unwrap_or_default();
            let (file, diagnostics) = soil_syntax::parse_file(&text);
            assert!(
                diagnostics.is_empty(),
                "{}: {diagnostics:?}",
                path.display()
            );
            let source: Arc<SourceText> = SourceText::new(Some(relative(root, &path)), &text);
            for item in &file.items {
                let ast::Item::Equation(equation) = item else {
                    continue;
                };
                let name = &equation.name.text;
                let tr_path = root.join(module).join(format!("{name}.tr"));
                let tr = read(&tr_path).unwrap_or_default();
                let tr_file = relative(root, &tr_path);
                let signature = match fence_body(&tr, "soil-sig") {
                    Some(body) => {
                        let (sig, diagnostics) = soil_syntax::parse_signature(&body);
                        assert!(diagnostics.is_empty(), "{tr_file}: {diagnostics:?}");
                        sig.map(|node| Located {
                            node,
                            source: SourceText::new(Some(tr_file.clone()), &body),
                        })
                    }
                    None => file.items.iter().find_map(|i| match i {
                        ast::Item::Signature(s) if s.name.text == *name => Some(Located {
                            node: s.clone(),
                            source: source.clone(),
                        }),
                        _ => None,
                    }),
                };
                let allow = fence_body(&tr, "allow")
                    .map(|b| logical_lines(&b))
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(hatch, reason)| Allow { hatch, reason })
                    .collect();
                program.definitions.push(Definition {
                    name: format!("{module}::{name}"),
                    signature,
                    equation: Located {
                        node: equation.clone(),
                        source: source.clone(),
                    },
                    clauses: clauses(&tr, &tr_file),
                    allow,
                });
            }
        }
    }
    program
}

#[test]
fn every_example_definition_checks() {
    let root = examples_dir();
    let env = type_env(&root);
    let program = examples_program(&root);
    assert!(program.definitions.len() > 20, "the examples are found");
    let report = soil_types::check_program(&env, &program);
    expect![[r#"
        {"definition":"csvstats::_parse_cell","signature":"(index : I64) -> (raw : Utf8) -> Result F64 ParseError","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"csvstats::_halfway","signature":"(a : F64) -> (b : F64) -> F64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"csvstats::_merge_sort","signature":"(xs : List a) -> List a","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"csvstats::_merge_pairs","signature":"(runs : List (List a)) -> List (List a)","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"csvstats::_merge","signature":"(xs : List a) -> (ys : List a) -> List a","row":[],"checks":{"clauses":[],"termination":"structural","holes":[]}}
        {"definition":"csvstats::_collect_row","signature":"(acc : Result (List Row) ReadError) -> (entry : (I64, Utf8)) -> Result (List Row) ReadError","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"csvstats::all_finite","signature":"(xs : List F64) -> Bool","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"csvstats::contains","signature":"(xs : List a) -> (x : a) -> Bool","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"csvstats::count_of","signature":"(xs : List a) -> (x : a) -> I64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"csvstats::finite","signature":"(x : F64) -> Bool","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"csvstats::is_permutation","signature":"(xs : List a) -> (ys : List a) -> Bool","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"csvstats::median","signature":"(xs : List F64) ->{Panic} F64","row":["Panic"],"checks":{"clauses":[{"kind":"requires","label":"non_empty","assurance":"runtime"},{"kind":"requires","label":"finite","assurance":"runtime"},{"kind":"ensures","label":"bounded","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
        {"definition":"csvstats::non_empty","signature":"(xs : List a) -> Bool","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"csvstats::parse_row","signature":"(line : I64) -> (text : Utf8) -> Result Row ParseError","row":[],"checks":{"clauses":[{"kind":"requires","label":"positive_line","assurance":"runtime"},{"kind":"ensures","label":"blank","assurance":"runtime"},{"kind":"ensures","label":"numbered","assurance":"runtime"},{"kind":"ensures","label":"finite","assurance":"runtime"}],"termination":"structural","holes":[]}}
        {"definition":"csvstats::rank","signature":"(xs : List F64) -> (x : F64) -> I64","row":[],"checks":{"clauses":[{"kind":"requires","label":"sorted","assurance":"runtime"}],"termination":"allowed: the bisection halves the range [lo, hi) on each step, so it is finite","holes":[]}}
        {"definition":"csvstats::read_file","signature":"(fs : Fs) -> (path : Utf8) ->{Fs} Result (List Row) ReadError","row":["Fs"],"checks":{"clauses":[{"kind":"ensures","label":"numbered","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
        {"definition":"csvstats::sort","signature":"(xs : List F64) -> List F64","row":[],"checks":{"clauses":[{"kind":"ensures","label":"sorted","assurance":"runtime"},{"kind":"ensures","label":"permutation","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
        {"definition":"csvstats::sort_by","signature":"(key : a -> k) -> (xs : List a) -> List a","row":[],"checks":{"clauses":[{"kind":"ensures","label":"ordered","assurance":"runtime"},{"kind":"ensures","label":"permutation","assurance":"runtime"},{"kind":"ensures","label":"stable","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
        {"definition":"csvstats::sorted","signature":"(xs : List a) -> Bool","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"inventory::apply_all","signature":"(stock : Map Utf8 Item) -> (movements : List Movement) -> Result (Map Utf8 Item) (I64, StockError)","row":[],"checks":{"clauses":[{"kind":"requires","label":"keyed","assurance":"runtime"},{"kind":"ensures","label":"position","assurance":"runtime"}],"termination":"structural","holes":[]}}
        {"definition":"inventory::apply_movement","signature":"(stock : Map Utf8 Item) -> (movement : Movement) -> Result (Map Utf8 Item) StockError","row":[],"checks":{"clauses":[{"kind":"requires","label":"keyed","assurance":"runtime"},{"kind":"ensures","label":"keyed","assurance":"runtime"},{"kind":"ensures","label":"sizes","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
        {"definition":"inventory::find_by_name","signature":"(stock : Map Utf8 Item) -> (name : Utf8) -> Option Item","row":[],"checks":{"clauses":[{"kind":"ensures","label":"named","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
        {"definition":"inventory::low_stock","signature":"(threshold : I64) -> (stock : Map Utf8 Item) -> List (Utf8, I64)","row":[],"checks":{"clauses":[{"kind":"ensures","label":"below_threshold","assurance":"runtime"},{"kind":"ensures","label":"complete","assurance":"runtime"},{"kind":"ensures","label":"most_urgent_first","assurance":"runtime"}],"termination":"non-recursive","holes":[]}}
        {"definition":"inventory::reorder_plan","signature":"(target : I64) -> (case_size : I64) -> (stock : Map Utf8 Item) -> List (Utf8, I64)","row":[],"checks":{"clauses":[{"kind":"requires","label":"positive_case","assurance":"runtime"},{"kind":"ensures","label":"just_enough","assurance":"runtime"},{"kind":"ensures","label":"complete","assurance":"runtime"}],"termination":"non-recursive","holes":[{"name":"cases_to_order","goal":"I64","scope":[{"name":"target","type":"I64"},{"name":"case_size","type":"I64"},{"name":"stock","type":"Map Utf8 Item"},{"name":"short","type":"List Item"},{"name":"item","type":"Item"}]}]}}
        {"definition":"inventory::sales_by_sku","signature":"(movements : List Movement) -> Map Utf8 I64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
        {"definition":"inventory::stock_value","signature":"(stock : Map Utf8 Item) -> I64","row":[],"checks":{"clauses":[],"termination":"non-recursive","holes":[]}}
    "#]].assert_eq(&support::render(&report));
}
