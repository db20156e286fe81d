//! Builds checker input from one Soil text: `type` items form the env, each
//! equation (with its signature item, if any) a definition of module `m`, in
//! source order. Clauses are attached by `-- requires label: predicate` /
//! `-- ensures label: predicate` comment lines directly above an equation, and
//! `-- allow: hatch` grants an escape hatch.

#![allow(dead_code)]

pub mod file_check;

use soil_syntax::ast;
use soil_types::{
    Allow, CheckReport, Clause, ClauseKind, Definition, Env, Located, Program, SourceText,
};

pub fn program(module: &str, text: &str) -> (Env, Program) {
    let (file, diagnostics) = soil_syntax::parse_file(text);
    assert!(
        diagnostics.is_empty(),
        "fixture does not parse: {diagnostics:?}"
    );
    let source = SourceText::new(Some(format!("{module}.soil")), text);
    let mut env = Env::default();
    let mut program = Program::default();
    let signatures: Vec<&ast::Signature> = file
        .items
        .iter()
        .filter_map(|item| match item {
            ast::Item::Signature(sig) => Some(sig),
            _ => None,
        })
        .collect();
    for item in &file.items {
        match item {
            ast::Item::TypeDecl(decl) => env.types.push(Located {
                node: decl.clone(),
                source: source.clone(),
            }),
            ast::Item::Signature(_) => {}
            ast::Item::Equation(equation) => {
                let signature = signatures
                    .iter()
                    .find(|s| s.name.text == equation.name.text)
                    .map(|s| Located {
                        node: (*s).clone(),
                        source: source.clone(),
                    });
                let (clauses, allow) = annotations(text, equation.span.start as usize);
                program.definitions.push(Definition {
                    name: format!("{module}::{}", equation.name.text),
                    signature,
                    equation: Located {
                        node: equation.clone(),
                        source: source.clone(),
                    },
                    clauses,
                    allow,
                });
            }
        }
    }
    (env, program)
}

fn annotations(text: &str, equation_start: usize) -> (Vec<Clause>, Vec<Allow>) {
    let before = &text[..equation_start];
    let mut clauses = Vec::new();
    let mut allow = Vec::new();
    let is_signature = |line: &str| {
        line.split_once(" : ").is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    for line in before
        .lines()
        .rev()
        .skip_while(|l| l.trim().is_empty())
        .skip_while(|l| is_signature(l))
    {
        let Some(rest) = line.trim().strip_prefix("-- ") else {
            break;
        };
        if let Some(hatch) = rest.strip_prefix("allow: ") {
            allow.push(Allow {
                hatch: hatch.trim().to_owned(),
                reason: String::new(),
            });
            continue;
        }
        let (kind, rest) = if let Some(r) = rest.strip_prefix("requires ") {
            (ClauseKind::Requires, r)
        } else if let Some(r) = rest.strip_prefix("ensures ") {
            (ClauseKind::Ensures, r)
        } else {
            break;
        };
        let Some((label, predicate_text)) = rest.split_once(": ") else {
            break;
        };
        let (predicate, diagnostics) = soil_syntax::parse_predicate(predicate_text);
        assert!(
            diagnostics.is_empty(),
            "predicate does not parse: {diagnostics:?}"
        );
        clauses.push(Clause {
            kind,
            label: label.to_owned(),
            predicate: Located {
                node: predicate.expect("predicate"),
                source: SourceText::new(Some("clause".into()), predicate_text),
            },
        });
    }
    clauses.reverse();
    allow.reverse();
    (clauses, allow)
}

/// Every definition's §8.4 document, or the error lines `code line:col message`.
pub fn render(report: &CheckReport) -> String {
    let mut out = String::new();
    for diagnostic in &report.env_errors {
        out.push_str(&line(diagnostic));
    }
    for definition in &report.definitions {
        match &definition.outcome {
            Ok(facts) => {
                out.push_str(&soil_types::facts_json(facts).to_string());
                out.push('\n');
            }
            Err(diagnostics) => {
                for diagnostic in diagnostics {
                    out.push_str(&line(diagnostic));
                }
            }
        }
    }
    out
}

fn line(diagnostic: &trellis_diag::Diagnostic) -> String {
    let at = diagnostic
        .span
        .map(|s| format!("{}:{}", s.start.line, s.start.column))
        .unwrap_or_else(|| "-".into());
    let notes: String = diagnostic
        .notes
        .iter()
        .map(|n| format!(" [{}]", n.message))
        .collect();
    format!(
        "{} {} {}{}\n",
        diagnostic.code, at, diagnostic.message, notes
    )
}

pub fn check(text: &str) -> String {
    let (env, program) = program("m", text);
    render(&soil_types::check_program(&env, &program))
}
