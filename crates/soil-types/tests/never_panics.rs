//! Property: the checker never panics on a tree the parser returns, whatever the
//! text — mutated example programs and token soup alike.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use std::path::Path;

use proptest::prelude::*;
use soil_syntax::ast;
use soil_types::{Allow, Definition, Env, Located, Program, SourceText};

const TOKENS: &[&str] = &[
    "let",
    "in",
    "if",
    "then",
    "else",
    "match",
    "with",
    "end",
    "|",
    "->",
    "\\",
    "=",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    "..",
    ".",
    "+",
    "-",
    "*",
    "/",
    "%",
    "++",
    "==",
    "<",
    "<=",
    "and",
    "or",
    "not",
    "x",
    "xs",
    "rest",
    "f",
    "go",
    "n",
    "Some",
    "None",
    "Ok",
    "Err",
    "Row",
    "0",
    "1",
    "2.5",
    "\"s\"",
    "true",
    "?h",
    "_",
    "::",
    "csvstats",
    "len",
    "map",
    "fold",
    "at",
    "panic",
    "with",
    ":",
    "I64",
    "List",
    "F64",
    "->{Panic}",
    "a",
    "type",
    "Tree",
    "Leaf",
    "Node",
    "\n",
];

fn seeds() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = vec![
        "type Row = { line : I64, cells : List F64 }\ntype Tree a = Leaf | Node { left : Tree a, value : a, right : Tree a }\n".to_owned(),
    ];
    for dir in [
        "examples/csvstats",
        "examples/inventory",
        "test-data/soil-types/reject",
    ] {
        if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
            let mut paths: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
            paths.sort();
            for path in paths {
                if let Ok(text) = std::fs::read_to_string(&path) {
                    out.push(text);
                }
            }
        }
    }
    out
}

/// Every equation becomes a definition of module `m` (with its signature item if
/// the text has one); every type declaration goes into the env.
fn check_text(text: &str) {
    let (file, _) = soil_syntax::parse_file(text);
    let source = SourceText::new(Some("fuzz.soil".into()), text);
    let mut env = Env::default();
    let mut program = Program::default();
    for item in &file.items {
        match item {
            ast::Item::TypeDecl(decl) => env.types.push(Located {
                node: decl.clone(),
                source: source.clone(),
            }),
            ast::Item::Equation(equation) => {
                let signature = file.items.iter().find_map(|i| match i {
                    ast::Item::Signature(s) if s.name.text == equation.name.text => Some(Located {
                        node: s.clone(),
                        source: source.clone(),
                    }),
                    _ => None,
                });
                program.definitions.push(Definition {
                    name: format!("m::{}", equation.name.text),
                    signature,
                    equation: Located {
                        node: equation.clone(),
                        source: source.clone(),
                    },
                    clauses: Vec::new(),
                    allow: vec![Allow {
                        hatch: "none".into(),
                        reason: String::new(),
                    }],
                });
            }
            ast::Item::Signature(_) => {}
        }
    }
    let report = soil_types::check_program(&env, &program);
    for definition in report.definitions {
        if let Ok(facts) = definition.outcome {
            let _ = soil_types::facts_json(&facts);
        }
    }
}

fn mutate(seed: &str, edits: &[(usize, usize, usize)]) -> String {
    let mut text: Vec<char> = seed.chars().collect();
    for &(kind, at, token) in edits {
        if text.is_empty() {
            break;
        }
        let at = at % text.len();
        match kind % 3 {
            0 => {
                let end = (at + 1 + token % 12).min(text.len());
                text.drain(at..end);
            }
            1 => {
                let insert: Vec<char> = format!(" {} ", TOKENS[token % TOKENS.len()])
                    .chars()
                    .collect();
                text.splice(at..at, insert);
            }
            _ => {
                let end = (at + 1 + token % 20).min(text.len());
                let copy: Vec<char> = text[at..end].to_vec();
                text.splice(at..at, copy);
            }
        }
    }
    text.into_iter().collect()
}

#[test]
fn every_seed_checks_without_panicking() {
    for seed in seeds() {
        check_text(&seed);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn mutated_programs_never_panic(
        seed in 0usize..1000,
        edits in proptest::collection::vec((0usize..3, 0usize..100_000, 0usize..1000), 1..6),
    ) {
        let seeds = seeds();
        let text = mutate(&seeds[seed % seeds.len()], &edits);
        check_text(&text);
    }

    #[test]
    fn token_soup_never_panics(tokens in proptest::collection::vec(0usize..TOKENS.len(), 1..60)) {
        let body: Vec<&str> = tokens.iter().map(|&i| TOKENS[i]).collect();
        check_text(&format!("f : (xs : List I64) -> I64\nf xs = {}\n", body.join(" ")));
        check_text(&body.join(" "));
    }
}
