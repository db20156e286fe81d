//! What the name under the cursor is. A `.soil` file's names come from its tree
//! ([`crate::names`]); a `.tr` file's from its reserved blocks (the signature, type
//! declarations, clauses, properties, test cases, exports, decision entries and the
//! frontmatter name), whose block-relative spans are mapped back to the file; a
//! `.lock` file's from the JSON object around the cursor (a call, a helper, a
//! cited decision). Resolution follows the checker's rule: a local, else a
//! definition or helper of the module, else a builtin; constructors and types
//! find the type spec declaring them, same module first.

use soil_syntax::ast::{Item, TypeDeclBody, VariantPayload};
use trellis_db::{Db, SourceFile};
use trellis_diag::TextRange;
use trellis_spec::{BlockLocation, BlockSyntax, TestLine};

use crate::builtins::builtins;
use crate::names::{self, Name, Walk};
use crate::paths::{module_of, stem_of};

/// Which decisions block an entry lives in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DecisionScope {
    Project,
    Module(String),
}

/// What a name names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Symbol {
    /// A function or private helper of the root.
    Definition { module: String, name: String },
    /// A type of the root.
    Type { module: String, name: String },
    /// A constructor (or record type built by name) of a root type.
    Constructor {
        module: String,
        ty: String,
        name: String,
    },
    /// A prelude value, type or constructor.
    Builtin { name: String },
    /// A local of the file at hand, bound at `binder` (file offsets); `item` is
    /// the definition whose equation binds it, when it is one.
    Local {
        name: String,
        binder: TextRange,
        item: Option<(String, String)>,
    },
    /// A typed hole of a definition's equation.
    Hole {
        module: String,
        item: String,
        name: String,
    },
    /// A decision entry.
    Decision { scope: DecisionScope, label: String },
}

/// A name under the cursor: what it names and where it is written (file offsets).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    pub symbol: Symbol,
    pub range: TextRange,
}

/// The file a root-relative path names in the database, if any.
pub fn file_at(db: &dyn Db, path: &str) -> Option<SourceFile> {
    trellis_db::file_at(db, path)
}

/// The name at `offset` of the root file at `path`.
pub fn hit(db: &dyn Db, path: &str, offset: u32) -> Option<Hit> {
    let file = file_at(db, path)?;
    let module = module_of(path).unwrap_or_default().to_owned();
    if path.ends_with(".soil") {
        soil_hit(db, file, &module, offset)
    } else if path.ends_with(".tr") {
        spec_hit(db, file, path, &module, offset)
    } else if path.ends_with(".lock") {
        lock_hit(db, file, &module, offset)
    } else {
        None
    }
}

fn contains(range: TextRange, offset: u32) -> bool {
    range.start <= offset && offset <= range.end
}

fn soil_hit(db: &dyn Db, file: SourceFile, module: &str, offset: u32) -> Option<Hit> {
    let parse = trellis_db::parse_soil(db, file);
    for item in &parse.ast.items {
        if !contains(item.span(), offset) {
            continue;
        }
        let (walk, defines) = match item {
            Item::Signature(signature) => (names::signature(signature), &signature.name.text),
            Item::Equation(equation) => (names::equation(equation, None), &equation.name.text),
            Item::TypeDecl(decl) => {
                return contains(decl.name.span, offset).then(|| Hit {
                    symbol: Symbol::Type {
                        module: module.to_owned(),
                        name: decl.name.text.clone(),
                    },
                    range: decl.name.span,
                });
            }
        };
        let occurrence = walk.at(offset)?;
        let item_key = Some((module.to_owned(), defines.clone()));
        let symbol = match &occurrence.name {
            Name::Defines => Some(Symbol::Definition {
                module: module.to_owned(),
                name: occurrence.text.clone(),
            }),
            Name::Binder => Some(Symbol::Local {
                name: occurrence.text.clone(),
                binder: occurrence.range,
                item: item_key,
            }),
            Name::Local { binder } => Some(Symbol::Local {
                name: occurrence.text.clone(),
                binder: *binder,
                item: item_key,
            }),
            Name::Hole => Some(Symbol::Hole {
                module: module.to_owned(),
                item: defines.clone(),
                name: occurrence.text.clone(),
            }),
            other => resolve_free(db, module, other, &occurrence.text),
        }?;
        return Some(Hit {
            symbol,
            range: occurrence.range,
        });
    }
    None
}

/// Resolves a name no local binds, written in `module`.
pub fn resolve_free(db: &dyn Db, module: &str, name: &Name, text: &str) -> Option<Symbol> {
    match name {
        Name::Value => resolve_value(db, module, text),
        Name::Qualified { module: other } => match resolve_value(db, other, text)? {
            Symbol::Builtin { .. } => None,
            symbol => Some(symbol),
        },
        Name::Constructor => resolve_constructor(db, module, text),
        Name::Type => resolve_type(db, module, text),
        Name::Defines => Some(Symbol::Definition {
            module: module.to_owned(),
            name: text.to_owned(),
        }),
        Name::Binder | Name::Local { .. } | Name::Hole => None,
    }
}

/// Whether `module` defines `name` (a function with a spec or a body, or a helper
/// of its `_private.soil`).
pub fn defines(db: &dyn Db, module: &str, name: &str) -> bool {
    let Some(files) = trellis_db::files_of(db, module) else {
        return false;
    };
    if name.starts_with('_') {
        files
            .private_soil
            .is_some_and(|file| trellis_db::module_helpers(db, file).contains(name))
    } else {
        files.soils.contains_key(name) || files.specs.contains_key(name)
    }
}

fn resolve_value(db: &dyn Db, module: &str, name: &str) -> Option<Symbol> {
    if defines(db, module, name) {
        Some(Symbol::Definition {
            module: module.to_owned(),
            name: name.to_owned(),
        })
    } else if builtins().values.contains_key(name) {
        Some(Symbol::Builtin {
            name: name.to_owned(),
        })
    } else {
        None
    }
}

fn resolve_constructor(db: &dyn Db, module: &str, name: &str) -> Option<Symbol> {
    let index = trellis_db::type_index(db);
    if let Some(candidates) = index.constructors.get(name)
        && let Some((found_module, ty)) = same_module_first(candidates, module)
    {
        return Some(Symbol::Constructor {
            module: found_module,
            ty,
            name: name.to_owned(),
        });
    }
    builtins()
        .constructors
        .contains_key(name)
        .then(|| Symbol::Builtin {
            name: name.to_owned(),
        })
}

fn resolve_type(db: &dyn Db, module: &str, name: &str) -> Option<Symbol> {
    let index = trellis_db::type_index(db);
    let candidates: Vec<(String, String)> = index
        .declarations
        .keys()
        .filter(|(_, ty)| ty == name)
        .cloned()
        .collect();
    if let Some((found_module, ty)) = same_module_first(&candidates, module) {
        return Some(Symbol::Type {
            module: found_module,
            name: ty,
        });
    }
    builtins()
        .types
        .contains_key(name)
        .then(|| Symbol::Builtin {
            name: name.to_owned(),
        })
}

fn same_module_first(candidates: &[(String, String)], module: &str) -> Option<(String, String)> {
    candidates
        .iter()
        .find(|(m, _)| m == module)
        .or_else(|| (candidates.len() == 1).then(|| &candidates[0]))
        .cloned()
}

/// A file offset inside a block's content, as a content offset.
pub fn content_offset(location: &BlockLocation, offset: u32) -> Option<u32> {
    if !contains(location.content, offset) {
        return None;
    }
    location
        .segments
        .iter()
        .rev()
        .find(|segment| segment.file_start <= offset)
        .map(|segment| segment.content_start + (offset - segment.file_start).min(segment.len))
}

/// One reserved block's names, as [`names`] walks them: its own tree's spans
/// are block-content offsets. Test-case callees and exports are [`Name::Value`]s,
/// decision labels come back separately.
pub struct BlockNames {
    pub walk: Walk,
    /// (label, content range) of each decision entry.
    pub labels: Vec<(String, TextRange)>,
}

/// The names written in one block; `params` are the signature's named
/// parameters (and `result`), bound in clauses, at their file ranges.
pub fn block_names(
    syntax: &BlockSyntax,
    content: &str,
    params: &[(String, TextRange)],
    probe: Option<u32>,
) -> BlockNames {
    let mut walk = Walk::default();
    let mut labels = Vec::new();
    let extend = |walk: &mut Walk, other: Walk| {
        walk.occurrences.extend(other.occurrences);
        if other.scope_at_probe.is_some() {
            walk.scope_at_probe = other.scope_at_probe;
        }
    };
    match syntax {
        BlockSyntax::Signature(Some(signature)) => extend(&mut walk, names::signature(signature)),
        BlockSyntax::TypeDecl(Some(decl)) => {
            walk.occurrences.push(names::Occurrence {
                range: decl.name.span,
                text: decl.name.text.clone(),
                name: Name::Type,
            });
            let field_types = |walk: &mut Walk, fields: &[soil_syntax::ast::FieldDecl]| {
                for field in fields {
                    extend(walk, names::ty(&field.ty));
                }
            };
            match &decl.body {
                TypeDeclBody::Record(fields) => field_types(&mut walk, fields),
                TypeDeclBody::Sum(variants) => {
                    for variant in variants {
                        walk.occurrences.push(names::Occurrence {
                            range: variant.name.span,
                            text: variant.name.text.clone(),
                            name: Name::Constructor,
                        });
                        match &variant.payload {
                            VariantPayload::None => {}
                            VariantPayload::Positional(ty) => extend(&mut walk, names::ty(ty)),
                            VariantPayload::Record(fields) => field_types(&mut walk, fields),
                        }
                    }
                }
                TypeDeclBody::Opaque => {}
            }
        }
        BlockSyntax::Clauses(clauses) => {
            for clause in clauses {
                if let Some(predicate) = &clause.predicate {
                    extend(&mut walk, names::predicate(predicate, params, probe));
                }
            }
        }
        BlockSyntax::Property(Some(property)) => {
            let bound: Vec<(String, TextRange)> = property
                .binders
                .iter()
                .map(|binder| (binder.name.clone(), binder.name_range))
                .collect();
            for binder in &property.binders {
                walk.occurrences.push(names::Occurrence {
                    range: binder.name_range,
                    text: binder.name.clone(),
                    name: Name::Binder,
                });
                if let Some(ty) = &binder.ty {
                    extend(&mut walk, names::ty(ty));
                }
            }
            if let Some(body) = &property.body {
                extend(&mut walk, names::predicate(body, &bound, probe));
            }
        }
        BlockSyntax::Test(lines) => {
            for line in lines {
                if let TestLine::Case(case) = line {
                    // The case is written `callee(args) -> expected`: the callee first.
                    let start = case.range.start
                        + content
                            .get(case.range.as_usize_range())
                            .and_then(|text| text.find(&case.callee))
                            .unwrap_or(0) as u32;
                    walk.occurrences.push(names::Occurrence {
                        range: TextRange::new(start, start + case.callee.len() as u32),
                        text: case.callee.clone(),
                        name: Name::Value,
                    });
                }
            }
        }
        BlockSyntax::Exports(exports) => {
            for export in exports {
                let name = if export.name.starts_with(|c: char| c.is_ascii_uppercase()) {
                    Name::Type
                } else {
                    Name::Value
                };
                walk.occurrences.push(names::Occurrence {
                    range: export.range,
                    text: export.name.clone(),
                    name,
                });
            }
        }
        BlockSyntax::Decisions(entries) => {
            for entry in entries {
                let written = format!("**{}**", entry.label);
                let at = content
                    .get(entry.range.as_usize_range())
                    .and_then(|text| text.find(&written))
                    .map_or(entry.range.start, |at| entry.range.start + at as u32 + 2);
                labels.push((
                    entry.label.clone(),
                    TextRange::new(at, at + entry.label.len() as u32),
                ));
            }
        }
        _ => {}
    }
    BlockNames { walk, labels }
}

/// The signature's named parameters at file ranges, and `result`, for a spec:
/// what its clauses may mention.
pub fn spec_params(parse: &trellis_spec::TrFile) -> Vec<(String, TextRange)> {
    let mut params = Vec::new();
    for block in &parse.blocks {
        if let BlockSyntax::Signature(Some(signature)) = &block.value.syntax {
            for occurrence in names::signature(signature).occurrences {
                if occurrence.name == Name::Binder {
                    let range = block.location.file_range(occurrence.range);
                    params.push((occurrence.text, range));
                }
            }
        }
    }
    params.push(("result".to_owned(), TextRange::empty(0)));
    params
}

/// The scope a `.tr` file's names resolve in: the module of a module's file, none
/// (the project) for `_project.tr`.
fn spec_hit(db: &dyn Db, file: SourceFile, path: &str, module: &str, offset: u32) -> Option<Hit> {
    let parse = trellis_db::parse_spec(db, file);
    let stem = stem_of(path);
    let tr = &parse.file;
    if let Some(range) = tr.frontmatter_location.name_value
        && contains(range, offset)
        && !module.is_empty()
        && !stem.starts_with('_')
    {
        let symbol = if stem.starts_with(|c: char| c.is_ascii_uppercase()) {
            Symbol::Type {
                module: module.to_owned(),
                name: stem.to_owned(),
            }
        } else {
            Symbol::Definition {
                module: module.to_owned(),
                name: stem.to_owned(),
            }
        };
        return Some(Hit { symbol, range });
    }
    let params = spec_params(tr);
    for block in &tr.blocks {
        let Some(at) = content_offset(&block.location, offset) else {
            continue;
        };
        let names = block_names(&block.value.syntax, &block.value.content, &params, None);
        if let Some((label, range)) = names.labels.iter().find(|(_, r)| contains(*r, at)) {
            let scope = if stem == "_project" {
                DecisionScope::Project
            } else {
                DecisionScope::Module(module.to_owned())
            };
            return Some(Hit {
                symbol: Symbol::Decision {
                    scope,
                    label: label.clone(),
                },
                range: block.location.file_range(*range),
            });
        }
        let occurrence = names.walk.at(at)?;
        let range = block.location.file_range(occurrence.range);
        let symbol = match &occurrence.name {
            Name::Local { binder } => {
                // A clause's parameter is bound in the signature block (file
                // range already); a property's binder in this block.
                let binder = if params.iter().any(|(_, r)| r == binder) {
                    *binder
                } else {
                    block.location.file_range(*binder)
                };
                Symbol::Local {
                    name: occurrence.text.clone(),
                    binder,
                    item: None,
                }
            }
            Name::Binder => Symbol::Local {
                name: occurrence.text.clone(),
                binder: range,
                item: None,
            },
            Name::Defines => Symbol::Definition {
                module: module.to_owned(),
                name: stem.to_owned(),
            },
            Name::Hole => return None,
            other => resolve_free(db, module, other, &occurrence.text)?,
        };
        return Some(Hit { symbol, range });
    }
    None
}

/// The innermost JSON object around `offset` in a lock's text, when it is one
/// line's flat object (`{"name":"sort","hash":…}`): its range and value.
fn object_around(text: &str, offset: u32) -> Option<(TextRange, serde_json::Value)> {
    let offset = (offset as usize).min(text.len());
    let start = text[..offset].rfind('{')?;
    let end = start + text[start..].find('}')? + 1;
    if end < offset {
        return None;
    }
    let value = serde_json::from_str(&text[start..end]).ok()?;
    Some((TextRange::new(start as u32, end as u32), value))
}

/// Where a JSON string value `"key":"value"` sits inside `range` of `text`: the
/// value's range without its quotes.
pub fn string_value_range(
    text: &str,
    range: TextRange,
    key: &str,
    value: &str,
) -> Option<TextRange> {
    let written = format!("\"{key}\":\"{value}\"");
    let inside = text.get(range.as_usize_range())?;
    let at = range.start as usize + inside.find(&written)? + key.len() + 4;
    Some(TextRange::new(at as u32, (at + value.len()) as u32))
}

fn lock_hit(db: &dyn Db, file: SourceFile, module: &str, offset: u32) -> Option<Hit> {
    let text = file.text(db);
    let (range, object) = object_around(text, offset)?;
    if let (Some(scope), Some(label)) = (object["scope"].as_str(), object["label"].as_str()) {
        let at = string_value_range(text, range, "label", label)?;
        let scope = match scope {
            "project" => DecisionScope::Project,
            _ => DecisionScope::Module(module.to_owned()),
        };
        return contains(at, offset).then(|| Hit {
            symbol: Symbol::Decision {
                scope,
                label: label.to_owned(),
            },
            range: at,
        });
    }
    let name = object["name"].as_str()?;
    let at = string_value_range(text, range, "name", name)?;
    (contains(at, offset) && defines(db, module, name)).then(|| Hit {
        symbol: Symbol::Definition {
            module: module.to_owned(),
            name: name.to_owned(),
        },
        range: at,
    })
}
