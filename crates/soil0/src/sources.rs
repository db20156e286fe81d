//! A program read from `.soil` files instead of env.json and program.json
//! (soil0-cli §13.8, `soil0 run FILE.soil... DEF JSON-ARGS`): each file is one
//! module, named after the file's stem; its type declarations form the
//! environment, and each equation, with the signature item of the same name when
//! the file has one, is a definition of the program in file order. The
//! definitions are built from the parse directly (no JSON round trip), each
//! carrying its whole file as its source text, so every diagnostic — syntax,
//! check or runtime — points into the file at the line an editor shows. From
//! there the program is checked and compiled exactly as [`crate::load`] does.

use std::collections::HashMap;

use soil_syntax::ast::{Item, Signature};
use soil_types::{Definition, Env, Located, Program, SourceText};
use trellis_diag::Diagnostic;

use crate::Source;
use crate::load::{Loaded, load_checked};

/// The module a file's definitions belong to: its stem when that is a module
/// name (lower-case letters, digits and `_`, starting with a letter), else
/// `main`.
pub fn module_of(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.strip_suffix(".soil").unwrap_or(file);
    let valid = stem.starts_with(|c: char| c.is_ascii_lowercase())
        && stem
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if valid {
        stem.to_owned()
    } else {
        "main".to_owned()
    }
}

/// Parses, checks and compiles the program `files` hold; every syntax error
/// of every file, or every check error, refuses it.
pub fn load_sources(files: &[Source<'_>]) -> Result<Loaded, Vec<Diagnostic>> {
    let mut env = Env::default();
    let mut program = Program::default();
    let mut errors = Vec::new();
    for file in files {
        let (parsed, diagnostics) = soil_syntax::parse_file(file.text);
        if !diagnostics.is_empty() {
            errors.extend(diagnostics.into_iter().map(|d| d.in_file(file.name)));
            continue;
        }
        let source = SourceText::new(Some(file.name.to_owned()), file.text);
        let module = module_of(file.name);
        let signatures: HashMap<&str, &Signature> = parsed
            .items
            .iter()
            .filter_map(|item| match item {
                Item::Signature(signature) => Some((signature.name.text.as_str(), signature)),
                _ => None,
            })
            .collect();
        for item in &parsed.items {
            match item {
                Item::TypeDecl(declaration) => env.types.push(Located {
                    node: declaration.clone(),
                    source: source.clone(),
                }),
                Item::Equation(equation) => {
                    let name = &equation.name.text;
                    program.definitions.push(Definition {
                        name: format!("{module}::{name}"),
                        signature: signatures.get(name.as_str()).map(|signature| Located {
                            node: (*signature).clone(),
                            source: source.clone(),
                        }),
                        equation: Located {
                            node: equation.clone(),
                            source: source.clone(),
                        },
                        clauses: Vec::new(),
                        allow: Vec::new(),
                    });
                }
                Item::Signature(_) => {}
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    load_checked(&env, program, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_the_module_its_stem_names() {
        assert_eq!(module_of("calc.soil"), "calc");
        assert_eq!(module_of("src/word_count2.soil"), "word_count2");
        assert_eq!(module_of("My File.soil"), "main");
        assert_eq!(module_of("2calc.soil"), "main");
    }
}
