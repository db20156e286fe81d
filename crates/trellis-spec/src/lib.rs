//! `trellis-spec` parses `.tr` specs (docs/tr-grammar.md): the two-key frontmatter,
//! the reserved fenced blocks found by the CommonMark parser, each block's
//! mini-language (Soil signatures, types and predicates through `soil-syntax`, so
//! there is one grammar for them), kind inference and every validity rule, plus the
//! exact byte inputs of the spec hashes. It never panics and never does I/O: the
//! root's context (the tag vocabulary, the module's definitions) is passed in. It
//! depends only on `trellis-diag`, `trellis-hash` and `soil-syntax`, never on the
//! database, locks or anything that runs code.

#![cfg_attr(test, allow(clippy::disallowed_methods, reason = "tests use files"))]

mod blocks;
mod clauses;
pub mod codes;
mod cram;
mod decisions;
mod fences;
mod frontmatter;
mod lines;
pub mod model;
mod parts;
mod property;
pub mod render;
mod report;
mod root;
mod simple;
mod soil;
mod test_block;
mod validate;
mod writeback;

pub use codes::TrCode;
pub use model::*;
pub use parts::{BlockPart, DecisionEntryPart, FormalParts, prose_hash, scope_hash, test_hash};
pub use root::{RootContext, check_in_root, invariant_property_refusals};
pub use simple::ESCAPE_HATCHES;
pub use validate::CAPABILITY_TYPES;
pub use writeback::{append_clarification, append_decision, append_test_case};

use trellis_diag::Diagnostic;

use crate::report::{Findings, Renderer};

/// Parses one `.tr` file. `file_stem` is the file name without `.tr` (`median`,
/// `_module`, `_project`). Returns the tree and every problem found, sorted by
/// position; diagnostics carry no file name (callers add it with `in_file`).
pub fn parse_tr(text: &str, file_stem: &str) -> (TrFile, Vec<Diagnostic>) {
    let renderer = Renderer::new(text);
    let mut diagnostics = Vec::new();
    let mut file_findings = Findings::default();

    let front = frontmatter::parse(text, &mut file_findings);
    let spec_name = front
        .frontmatter
        .name
        .clone()
        .or_else(|| (!file_stem.starts_with('_')).then(|| file_stem.to_owned()));
    let mut blocks = Vec::new();
    for raw in fences::reserved_fences(text, front.body_start, &mut file_findings) {
        let mut findings = Findings::default();
        let kind = raw.header.kind;
        let (syntax, empty) =
            blocks::parse(kind, &raw.content, spec_name.as_deref(), &mut findings);
        if empty && raw.closed {
            blocks::empty_block(
                &mut file_findings,
                kind,
                fences::opening_line(text, raw.location.fence),
            );
        }
        // An unclosed fence swallowed whatever follows it; only that is reported.
        if raw.closed {
            renderer.in_block(findings, &raw.location, &mut diagnostics);
        }
        blocks.push(Block {
            value: BlockValue {
                header: raw.header,
                content: raw.content,
                syntax,
            }
            .into(),
            location: raw.location,
        });
    }
    let kind = validate::infer_kind(file_stem, &blocks, text, &mut file_findings);
    let file = TrFile {
        file_stem: file_stem.to_owned(),
        kind,
        frontmatter: front.frontmatter,
        frontmatter_location: front.location,
        blocks,
        len: text.len() as u32,
    };
    validate::check(&file, text, &mut file_findings);
    renderer.file_level(file_findings, &mut diagnostics);
    sort(&mut diagnostics);
    (file, diagnostics)
}

/// Position order, then code, so output is deterministic.
pub(crate) fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| {
        let key = |d: &Diagnostic| d.span.map(|s| (s.start.offset, s.end.offset));
        key(a).cmp(&key(b)).then_with(|| a.code.cmp(&b.code))
    });
}

impl TrFile {
    /// The blocks of one kind, in document order.
    pub fn blocks_of(&self, kind: BlockKind) -> impl Iterator<Item = &Block> {
        self.blocks
            .iter()
            .filter(move |b| b.value.header.kind == kind)
    }

    /// The position-free values of one class's blocks, in document order: what a
    /// query that must not re-run after a prose edit should depend on.
    pub fn block_values(&self, class: SpanClass) -> Vec<std::sync::Arc<BlockValue>> {
        self.blocks
            .iter()
            .filter(|b| b.value.header.kind.class() == class)
            .map(|b| b.value.clone())
            .collect()
    }

    /// The parsed signature of a function spec.
    pub fn signature(&self) -> Option<&soil_syntax::ast::Signature> {
        self.blocks.iter().find_map(|b| match &b.value.syntax {
            BlockSyntax::Signature(signature) => signature.as_ref(),
            _ => None,
        })
    }

    /// The parsed declaration of a type spec.
    pub fn type_decl(&self) -> Option<&soil_syntax::ast::TypeDecl> {
        self.blocks.iter().find_map(|b| match &b.value.syntax {
            BlockSyntax::TypeDecl(decl) => decl.as_ref(),
            _ => None,
        })
    }
}
