//! A convenience front door: one Soil source text straight to a [`Program`]
//! (tests, benchmarks, single-file tools).

use std::collections::HashMap;
use std::sync::Arc;

use soil_syntax::ast;
use trellis_diag::Diagnostic;

use crate::program::{Definition, Program};
use crate::types::type_env_from_decls;

/// Parses `text` (a `.soil` file: types, signatures, equations) and compiles
/// every equation, pairing each with its signature when the file has one.
/// Does not type-check: callers that need checking run the checker first.
pub fn program_from_source(text: &str, file: Option<&str>) -> Result<Program, Vec<Diagnostic>> {
    let (source, errors) = soil_syntax::parse_file(text);
    if !errors.is_empty() {
        return Err(errors);
    }
    let types = type_env_from_decls(source.items.iter().filter_map(|item| match item {
        ast::Item::TypeDecl(decl) => Some(decl),
        _ => None,
    }))?;
    let signatures: HashMap<&str, &ast::Type> = source
        .items
        .iter()
        .filter_map(|item| match item {
            ast::Item::Signature(sig) => Some((sig.name.text.as_str(), &sig.ty)),
            _ => None,
        })
        .collect();
    let shared_text: Arc<str> = Arc::from(text);
    let definitions = source
        .items
        .iter()
        .filter_map(|item| match item {
            ast::Item::Equation(eq) => Some(Definition {
                name: eq.name.text.clone(),
                module: None,
                file: file.map(str::to_owned),
                text: Some(Arc::clone(&shared_text)),
                signature: signatures.get(eq.name.text.as_str()).map(|t| (*t).clone()),
                equation: eq.clone(),
                requires: Vec::new(),
                ensures: Vec::new(),
            }),
            _ => None,
        })
        .collect();
    Program::compile(types, definitions)
}
