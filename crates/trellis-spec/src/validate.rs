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
    let mut seen: Vec<(BlockKind, TextRange)> = Vec::new();
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
            Allowed::AtMostOne => {
                if let Some(&(_, first)) = seen.iter().find(|(k, _)| *k == kind) {
                    findings.duplicate(
                        TrCode::DuplicateBlock,
                        at,
                        format!("a spec has at most one `{}` block", kind.word()),
                        first,
                    );
                }
            }
            Allowed::Any => {}
        }
        seen.push((kind, at));
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
    let mut names: Vec<(&str, TextRange)> = Vec::new();
    for block in &file.blocks {
        let header = &block.value.header;
        if let Some(name) = &header.name {
            let at = opening_line(text, block.location.fence);
            if let Some(&(_, first)) = names.iter().find(|(n, _)| n == name) {
                findings.duplicate(
                    TrCode::DuplicateTestName,
                    at,
                    format!("another test block is already named `{name}`"),
                    first,
                );
            }
            names.push((name, at));
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
    let Some(signature) = file.signature() else {
        return;
    };
    let row_has_panic = final_row_has(&signature.ty, "Panic");
    let params = parameters(&signature.ty);
    let arity = params.iter().filter(|p| !p.capability).count();
    for block in file.blocks_of(BlockKind::Test) {
        let BlockSyntax::Test(lines) = &block.value.syntax else {
            continue;
        };
        for line in lines {
            match line {
                TestLine::With(binding) => {
                    let known = params
                        .iter()
                        .any(|p| p.capability && p.name == Some(binding.param.as_str()));
                    if !known {
                        findings.push(
                            TrCode::BadTestCase,
                            block.location.file_range(binding.range),
                            format!(
                                "`{}` is not a capability parameter of the signature",
                                binding.param
                            ),
                        );
                    }
                }
                TestLine::Case(case) => {
                    if case.args.len() != arity {
                        findings.push(
                            TrCode::BadTestCase,
                            block.location.file_range(case.range),
                            format!(
                                "the call passes {} argument(s); the signature takes {arity} non-capability parameter(s)",
                                case.args.len()
                            ),
                        );
                    }
                    if let Expected::Panic(at) = case.expected
                        && !row_has_panic
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
    }
}

/// The capability types: parameters of these types are supplied by `with` lines,
/// never written in a call (tr-grammar §3.3).
pub const CAPABILITY_TYPES: &[&str] = &["Fs", "Clock", "Stdout"];

struct Parameter<'a> {
    name: Option<&'a str>,
    capability: bool,
}

/// The parameters along a curried signature's spine.
fn parameters(ty: &Type) -> Vec<Parameter<'_>> {
    let mut out = Vec::new();
    let mut ty = ty;
    while let TypeKind::Function(function) = &ty.kind {
        let capability = matches!(
            &function.param.kind,
            TypeKind::Named(name) if CAPABILITY_TYPES.contains(&name.text.as_str())
        );
        let name = function.param_name.as_ref().map(|n| n.text.as_str());
        out.push(Parameter { name, capability });
        ty = &function.result;
    }
    out
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
