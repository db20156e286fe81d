//! A whole `.soil` file checked the way a host checks one: parsed, its type
//! declarations made the env, each equation (with its signature item) a
//! definition of module `m`. Syntax problems do not stop the check: what parsed
//! is checked, as the database checks the items of a file that partly parses.

#![allow(dead_code)]

use std::collections::HashMap;

use soil_syntax::ast;
use soil_types::{CheckReport, Definition, Env, Located, Program, SourceText};
use trellis_diag::Diagnostic;

/// What checking one file found.
pub struct FileCheck {
    pub syntax: Vec<Diagnostic>,
    pub report: CheckReport,
}

impl FileCheck {
    /// Every problem: syntax, environment and each definition's.
    pub fn problems(&self) -> Vec<&Diagnostic> {
        let mut all: Vec<&Diagnostic> = self.syntax.iter().collect();
        all.extend(&self.report.env_errors);
        for definition in &self.report.definitions {
            if let Err(diagnostics) = &definition.outcome {
                all.extend(diagnostics);
            }
        }
        all
    }
}

pub fn check_file(text: &str) -> FileCheck {
    let (file, syntax) = soil_syntax::parse_file(text);
    let source = SourceText::new(Some("m.soil".into()), text);
    let mut env = Env::default();
    let mut program = Program::default();
    // By name, so a file of many definitions is assembled in linear time.
    let mut signatures: HashMap<&str, &ast::Signature> = HashMap::new();
    for item in &file.items {
        if let ast::Item::Signature(signature) = item {
            signatures.entry(&signature.name.text).or_insert(signature);
        }
    }
    for item in &file.items {
        match item {
            ast::Item::TypeDecl(decl) => env.types.push(Located {
                node: decl.clone(),
                source: source.clone(),
            }),
            ast::Item::Equation(equation) => {
                let signature = signatures
                    .get(equation.name.text.as_str())
                    .map(|signature| Located {
                        node: (*signature).clone(),
                        source: source.clone(),
                    });
                program.definitions.push(Definition {
                    name: format!("m::{}", equation.name.text),
                    signature,
                    equation: Located {
                        node: equation.clone(),
                        source: source.clone(),
                    },
                    clauses: Vec::new(),
                    allow: Vec::new(),
                });
            }
            ast::Item::Signature(_) => {}
        }
    }
    let report = soil_types::check_program(&env, &program);
    FileCheck { syntax, report }
}
