//! Rules that need the root around the file (tr-grammar §2.1, §2.2, §5.1) and the
//! v1 refusal the test tier reports for invariants (§4.2). The caller supplies the
//! context; nothing here reads a file.

use trellis_diag::{Diagnostic, TextRange};

use crate::codes::TrCode;
use crate::model::{BlockKind, BlockSyntax, FileKind, TrFile};
use crate::report::{Findings, Renderer};

/// What the root knows about a file's surroundings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RootContext<'a> {
    /// `soil.toml [tags]` keys.
    pub tags: &'a [String],
    /// For `_module.tr`: the module directory's name.
    pub module_dir: Option<&'a str>,
    /// For `_module.tr`: the names of the function and type specs in the module.
    /// `None` skips the `tr-unknown-export` rule.
    pub module_definitions: Option<&'a [String]>,
}

/// `tr-undeclared-tag`, the module `tr-name-mismatch`, and `tr-unknown-export`.
/// `text` is the text `file` was parsed from.
pub fn check_in_root(file: &TrFile, text: &str, context: &RootContext<'_>) -> Vec<Diagnostic> {
    let mut findings = Findings::default();
    for (tag, &range) in file
        .frontmatter
        .tags
        .iter()
        .zip(&file.frontmatter_location.tags)
    {
        if !context.tags.iter().any(|t| t == tag) {
            findings.push(
                TrCode::UndeclaredTag,
                range,
                format!("the tag `{tag}` is not declared in soil.toml [tags]"),
            );
        }
    }
    if file.kind == FileKind::Module {
        if let (Some(dir), Some(name), Some(at)) = (
            context.module_dir,
            &file.frontmatter.name,
            file.frontmatter_location.name_value,
        ) && dir != name
        {
            findings.push(
                TrCode::NameMismatch,
                at,
                format!("the module is named `{name}` but lives in `{dir}/`"),
            );
        }
        if let Some(definitions) = context.module_definitions {
            for block in file.blocks_of(BlockKind::Exports) {
                let BlockSyntax::Exports(exports) = &block.value.syntax else {
                    continue;
                };
                for export in exports {
                    if !definitions.contains(&export.name) {
                        let at = block.location.file_range(export.range);
                        findings.push(
                            TrCode::UnknownExport,
                            at,
                            format!("`{}` has no spec in this module", export.name),
                        );
                    }
                }
            }
        }
    }
    render(text, findings)
}

/// The test tier's v1 refusal of invariant-derived properties, one per
/// `invariant` clause (`unsupported-invariant-property`). The spec stays valid.
pub fn invariant_property_refusals(file: &TrFile, text: &str) -> Vec<Diagnostic> {
    let mut findings = Findings::default();
    for block in file.blocks_of(BlockKind::Invariant) {
        let BlockSyntax::Clauses(clauses) = &block.value.syntax else {
            continue;
        };
        for clause in clauses {
            let at = block.location.file_range(TextRange::new(
                clause.label_range.start,
                clause.source_range.end,
            ));
            findings.push(
                TrCode::UnsupportedInvariantProperty,
                at,
                format!("`derived:invariant:{}` is not generated in v1: generating values that satisfy an invariant needs constrained generation", clause.label),
            );
        }
    }
    render(text, findings)
}

fn render(text: &str, findings: Findings) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    Renderer::new(text).file_level(findings, &mut out);
    crate::sort(&mut out);
    out
}
