//! The prelude as an editor shows it: each builtin value's signature, type and
//! constructor, read once from `soil-types`' one prelude text, and each value's
//! documentation from its one documentation table.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use soil_syntax::ast::{Item, TypeDeclBody};

pub struct Builtins {
    /// Value name → its signature's type, canonical.
    pub values: BTreeMap<String, String>,
    /// Type name → its declaration, canonical (`List`, `I64` and the other
    /// primitives have none and map to an empty text).
    pub types: BTreeMap<String, String>,
    /// Constructor name → the type declaring it.
    pub constructors: BTreeMap<String, String>,
}

const PRIMITIVES: &[&str] = &["I64", "U64", "F64", "Bool", "Utf8", "Unit", "List", "Map"];

pub fn builtins() -> &'static Builtins {
    static BUILTINS: OnceLock<Builtins> = OnceLock::new();
    BUILTINS.get_or_init(|| {
        let (file, _) = soil_syntax::parse_file(soil_types::PRELUDE);
        let mut builtins = Builtins {
            values: BTreeMap::new(),
            types: PRIMITIVES
                .iter()
                .map(|name| ((*name).to_owned(), String::new()))
                .collect(),
            constructors: BTreeMap::new(),
        };
        for item in &file.items {
            match item {
                Item::Signature(signature) => {
                    builtins.values.insert(
                        signature.name.text.clone(),
                        soil_syntax::print_type(&signature.ty),
                    );
                }
                Item::TypeDecl(decl) => {
                    let name = decl.name.text.clone();
                    match &decl.body {
                        TypeDeclBody::Sum(variants) => {
                            for variant in variants {
                                builtins
                                    .constructors
                                    .insert(variant.name.text.clone(), name.clone());
                            }
                        }
                        TypeDeclBody::Record(_) => {
                            builtins.constructors.insert(name.clone(), name.clone());
                        }
                        TypeDeclBody::Opaque => {}
                    }
                    builtins
                        .types
                        .insert(name, soil_syntax::print_type_decl(decl));
                }
                Item::Equation(_) => {}
            }
        }
        builtins
    })
}

/// A builtin value's documentation: its meaning and cost (docs/prelude.md).
pub fn documentation(name: &str) -> Option<(&'static str, &'static str)> {
    soil_types::PRELUDE_DOCS
        .iter()
        .flat_map(|section| section.builtins.iter())
        .find(|doc| doc.name == name)
        .map(|doc| (doc.meaning, doc.cost))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prelude_is_read_whole() {
        let builtins = builtins();
        assert_eq!(
            builtins.values.get("len").map(String::as_str),
            Some("(xs : List a) -> I64")
        );
        assert_eq!(
            builtins.constructors.get("Some").map(String::as_str),
            Some("Option")
        );
        assert!(builtins.types.contains_key("I64") && builtins.types.contains_key("Ordering"));
        assert!(documentation("len").is_some());
    }
}
