//! The document outline: a `.soil` file's definitions (a helper's signature and
//! equation as one), and a `.tr` file's definition with its reserved blocks —
//! clauses, tests, properties and decision entries by label.

use soil_syntax::ast::Item;
use trellis_db::{Db, SourceFile};
use trellis_diag::TextRange;
use trellis_spec::{BlockSyntax, FileKind};

use crate::paths::stem_of;
use crate::resolve::block_names;

/// What an outline entry is; the server maps it to the protocol's symbol kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutlineKind {
    Function,
    Type,
    Module,
    Block,
    Clause,
    Test,
    Decision,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outline {
    pub name: String,
    pub detail: Option<String>,
    pub kind: OutlineKind,
    /// The whole entry, and the part to select (its name), in file offsets.
    pub range: TextRange,
    pub selection: TextRange,
    pub children: Vec<Outline>,
}

pub fn outline(db: &dyn Db, path: &str, file: SourceFile) -> Vec<Outline> {
    if path.ends_with(".soil") {
        soil_outline(db, file)
    } else if path.ends_with(".tr") {
        spec_outline(db, path, file)
    } else {
        Vec::new()
    }
}

fn soil_outline(db: &dyn Db, file: SourceFile) -> Vec<Outline> {
    let mut entries: Vec<Outline> = Vec::new();
    for item in &trellis_db::parse_soil(db, file).ast.items {
        let (name, kind, detail) = match item {
            Item::Signature(signature) => (
                &signature.name,
                OutlineKind::Function,
                Some(soil_syntax::print_type(&signature.ty)),
            ),
            Item::Equation(equation) => (&equation.name, OutlineKind::Function, None),
            Item::TypeDecl(decl) => (&decl.name, OutlineKind::Type, None),
        };
        // A signature and its equation are one entry.
        if let Some(entry) = entries.iter_mut().find(|e| e.name == name.text) {
            entry.range = entry.range.cover(item.span());
            entry.detail = entry.detail.take().or(detail);
            continue;
        }
        entries.push(Outline {
            name: name.text.clone(),
            detail,
            kind,
            range: item.span(),
            selection: name.span,
            children: Vec::new(),
        });
    }
    entries
}

fn spec_outline(db: &dyn Db, path: &str, file: SourceFile) -> Vec<Outline> {
    let tr = &trellis_db::parse_spec(db, file).file;
    let whole = TextRange::new(0, tr.len);
    let mut children = Vec::new();
    for block in &tr.blocks {
        let value = &block.value;
        let location = &block.location;
        let mut entry = Outline {
            name: value.header.info_string(),
            detail: None,
            kind: OutlineKind::Block,
            range: location.fence,
            selection: location.fence,
            children: Vec::new(),
        };
        match &value.syntax {
            BlockSyntax::Signature(Some(signature)) => {
                entry.detail = Some(soil_syntax::print_type(&signature.ty));
            }
            BlockSyntax::Clauses(clauses) => {
                for clause in clauses {
                    entry.children.push(Outline {
                        name: clause.label.clone(),
                        detail: Some(clause.source.trim().to_owned()),
                        kind: OutlineKind::Clause,
                        range: location.file_range(clause.label_range.cover(clause.source_range)),
                        selection: location.file_range(clause.label_range),
                        children: Vec::new(),
                    });
                }
            }
            BlockSyntax::Test(_) | BlockSyntax::Property(_) | BlockSyntax::Cram(_) => {
                entry.kind = OutlineKind::Test;
            }
            BlockSyntax::Decisions(entries) => {
                let names = block_names(&value.syntax, &value.content, &[], None);
                for (decision, (label, range)) in entries.iter().zip(&names.labels) {
                    entry.children.push(Outline {
                        name: label.clone(),
                        detail: Some(decision.text.clone()),
                        kind: OutlineKind::Decision,
                        range: location.file_range(decision.range),
                        selection: location.file_range(*range),
                        children: Vec::new(),
                    });
                }
            }
            _ => {}
        }
        children.push(entry);
    }
    let stem = stem_of(path);
    let kind = match tr.kind {
        FileKind::Type => OutlineKind::Type,
        FileKind::Module | FileKind::Project => OutlineKind::Module,
        FileKind::Function | FileKind::Unknown => OutlineKind::Function,
    };
    let name = tr
        .frontmatter
        .name
        .clone()
        .unwrap_or_else(|| stem.to_owned());
    let selection = tr.frontmatter_location.name_value.unwrap_or_default();
    vec![Outline {
        name,
        detail: Some(tr.kind.as_str().to_owned()),
        kind,
        range: whole,
        selection,
        children,
    }]
}
