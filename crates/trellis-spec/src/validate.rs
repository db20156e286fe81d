//! File-level validity rules: kind inference, block placement, names and the
//! cross-block rules (tr-grammar §2.1, §2.4, §3.1, §3.3, §4.1).

use soil_syntax::ast::{Type, TypeKind};
use trellis_diag::TextRange;

use crate::codes::TrCode;
use crate::fences::opening_line;
use crate::lines::{is_lower_ident, is_upper_ident};
use crate::model::{Block, BlockKind, BlockSyntax, Expected, FileKind, TestLine, TrFile};
use crate::report::Findings;

pub(crate) const MODULE_STEM: &str = "_module";
pub(crate) const PROJECT_STEM: &str = "_project";

/// How many blocks of a kind a file kind allows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Allowed {
    No,
    AtMostOne,
    Any,
}

fn allowed(file: FileKind, block: BlockKind) -> Allowed {
    use BlockKind as B;
    use FileKind as F;
    match (file, block) {
        (F::Unknown, _) => Allowed::Any,
        (F::Function, B::SoilSig | B::Requires | B::Ensures | B::Allow | B::Reference) => {
            Allowed::AtMostOne
        }
        (F::Function, B::Test | B::Property | B::Cram) => Allowed::Any,
        (F::Type, B::SoilType | B::Invariant) => Allowed::AtMostOne,
        (F::Module, B::Exports | B::Decisions) => Allowed::AtMostOne,
        (F::Project, B::Decisions) => Allowed::AtMostOne,
        _ => Allowed::No,
    }
}

pub(crate) fn infer_kind(
    file_stem: &str,
    blocks: &[Block],
    text: &str,
    findings: &mut Findings,
) -> FileKind {
    match file_stem {
        MODULE_STEM => return FileKind::Module,
        PROJECT_STEM => return FileKind::Project,
        _ => {}
    }
    let first = |kind| blocks.iter().find(|b| b.value.header.kind == kind);
    match (first(BlockKind::SoilSig), first(BlockKind::SoilType)) {
        (Some(_), None) => FileKind::Function,
        (None, Some(_)) => FileKind::Type,
        (Some(sig), Some(ty)) => {
            let later = if sig.location.fence.start > ty.location.fence.start {
                sig
            } else {
                ty
            };
            findings.push(
                TrCode::KindConflict,
                opening_line(text, later.location.fence),
                "a spec is a function (`soil-sig`) or a type (`soil-type`), not both",
            );
            FileKind::Unknown
        }
        (None, None) => {
            findings.push(TrCode::UnknownKind, TextRange::empty(0), "this spec has neither a `soil-sig` block (a function) nor a `soil-type` block (a type)");
            FileKind::Unknown
        }
    }
}

pub(crate) fn check(file: &TrFile, text: &str, findings: &mut Findings) {
    placement(file, text, findings);
    names(file, findings);
    tests(file, text, findings);
}

fn placement(file: &TrFile, text: &str, findings: &mut Findings) {
    let mut seen: Vec<BlockKind> = Vec::new();
    for block in &file.blocks {
        let kind = block.value.header.kind;
        let at = opening_line(text, block.location.fence);
        match allowed(file.kind, kind) {
            Allowed::No => findings.push(
                TrCode::BlockNotAllowed,
                at,
                format!(
                    "a {} spec has no `{}` block",
                    file.kind.as_str(),
                    kind.word()
                ),
            ),
            Allowed::AtMostOne if seen.contains(&kind) => findings.push(
                TrCode::DuplicateBlock,
                at,
                format!("a spec has at most one `{}` block", kind.word()),
            ),
            _ => {}
        }
        seen.push(kind);
    }
}

fn names(file: &TrFile, findings: &mut Findings) {
    let (Some(name), Some(at)) = (&file.frontmatter.name, file.frontmatter_location.name_value)
    else {
        return;
    };
    let shape_ok = match file.kind {
        FileKind::Function => is_lower_ident(name) && !name.starts_with('_'),
        FileKind::Type => is_upper_ident(name),
        FileKind::Module => is_lower_ident(name) && !name.starts_with('_'),
        FileKind::Project | FileKind::Unknown => true,
    };
    if !shape_ok {
        let want = match file.kind {
            FileKind::Type => "an upper-case identifier",
            _ => "a lower-case identifier not starting with `_`",
        };
        findings.push(
            TrCode::BadName,
            at,
            format!("a {} name is {want}; `{name}` is not", file.kind.as_str()),
        );
    }
    let stem_is_name = !matches!(file.kind, FileKind::Module | FileKind::Project);
    if stem_is_name && file.file_stem != *name {
        findings.push(
            TrCode::NameMismatch,
            at,
            format!(
                "the name `{name}` differs from the file name `{}.tr`",
                file.file_stem
            ),
        );
    }
    for block in &file.blocks {
        // With the kind unknown the two declarations compete; that is reported.
        let declared = match (&block.value.syntax, file.kind) {
            (BlockSyntax::Signature(Some(signature)), FileKind::Function) => &signature.name,
            (BlockSyntax::TypeDecl(Some(decl)), FileKind::Type) => &decl.name,
            _ => continue,
        };
        if declared.text != *name {
            findings.push(
                TrCode::DefinitionNameMismatch,
                block.location.file_range(declared.span),
                format!(
                    "the block declares `{}`, but the spec's name is `{name}`",
                    declared.text
                ),
            );
        }
    }
}

fn tests(file: &TrFile, text: &str, findings: &mut Findings) {
    let mut names: Vec<&str> = Vec::new();
    for block in &file.blocks {
        let header = &block.value.header;
        if let Some(name) = &header.name {
            if names.contains(&name.as_str()) {
                findings.push(
                    TrCode::DuplicateTestName,
                    opening_line(text, block.location.fence),
                    format!("another test block is already named `{name}`"),
                );
            }
            names.push(name);
        }
    }
    if file.kind != FileKind::Function {
        return;
    }
    let has_tests = file
        .blocks
        .iter()
        .any(|b| b.value.header.kind.is_named_test());
    let signature_block = file
        .blocks
        .iter()
        .find(|b| b.value.header.kind == BlockKind::SoilSig);
    if !has_tests && let Some(sig) = signature_block {
        findings.push(
            TrCode::MissingTestBlock,
            opening_line(text, sig.location.fence),
            "a function spec needs at least one `test`, `property` or `cram` block",
        );
    }
    let row_has_panic = signature_block.and_then(|b| match &b.value.syntax {
        BlockSyntax::Signature(Some(signature)) => Some(final_row_has(&signature.ty, "Panic")),
        _ => None,
    });
    if row_has_panic != Some(false) {
        return;
    }
    for block in &file.blocks {
        let BlockSyntax::Test(lines) = &block.value.syntax else {
            continue;
        };
        for line in lines {
            if let TestLine::Case(case) = line
                && let Expected::Panic(at) = case.expected
            {
                findings.push(
                    TrCode::PanicWithoutRow,
                    block.location.file_range(at),
                    "this case expects a panic, but the signature's effect row has no `Panic`",
                );
            }
        }
    }
}

/// Whether an arrow of a curried signature's spine carries `label` in its row.
/// The row belongs on the last arrow (soil-syntax-spec §3); where it was written
/// is the type checker's concern, not this rule's.
fn final_row_has(ty: &Type, label: &str) -> bool {
    let mut ty = ty;
    while let TypeKind::Function(function) = &ty.kind {
        if function.effects.labels.iter().any(|l| l.text == label) {
            return true;
        }
        ty = &function.result;
    }
    false
}
