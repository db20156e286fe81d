//! Dispatches a reserved block's content to its grammar.

use trellis_diag::TextRange;

use crate::codes::TrCode;
use crate::lines::lines;
use crate::model::{BlockKind, BlockSyntax};
use crate::report::Findings;
use crate::{clauses, cram, decisions, property, simple, soil, test_block};

/// Parses `content` as a `kind` block. Findings are in content coordinates, except
/// `tr-empty-block`, which the caller places on the fence.
pub(crate) fn parse(
    kind: BlockKind,
    content: &str,
    spec_name: Option<&str>,
    findings: &mut Findings,
) -> (BlockSyntax, bool) {
    let empty = is_empty(kind, content);
    let syntax = match kind {
        BlockKind::SoilSig => BlockSyntax::Signature(if empty {
            None
        } else {
            let (signature, diagnostics) = soil::signature(content);
            findings.soil(diagnostics);
            signature
        }),
        BlockKind::SoilType => BlockSyntax::TypeDecl(if empty {
            None
        } else {
            let (decl, diagnostics) = soil::type_decl(content);
            findings.soil(diagnostics);
            decl
        }),
        BlockKind::Requires | BlockKind::Ensures | BlockKind::Invariant => {
            BlockSyntax::Clauses(clauses::parse(content, findings))
        }
        BlockKind::Test => BlockSyntax::Test(test_block::parse(content, spec_name, findings)),
        BlockKind::Property => BlockSyntax::Property(if empty {
            None
        } else {
            property::parse(content, findings)
        }),
        BlockKind::Cram => BlockSyntax::Cram(cram::parse(content, findings)),
        BlockKind::Reference => BlockSyntax::Reference(simple::reference(content, findings)),
        BlockKind::Allow => BlockSyntax::Allow(simple::allow(content, findings)),
        BlockKind::Exports => BlockSyntax::Exports(simple::exports(content, findings)),
        BlockKind::Decisions => BlockSyntax::Decisions(decisions::parse(content, findings)),
    };
    let must_hold_something = !matches!(kind, BlockKind::Exports | BlockKind::Decisions);
    (syntax, empty && must_hold_something)
}

/// Only blank lines (and, outside transcripts, `--` comment lines).
fn is_empty(kind: BlockKind, content: &str) -> bool {
    lines(content).iter().all(|line| {
        line.is_blank() || (kind != BlockKind::Cram && line.text.trim_start().starts_with("--"))
    })
}

/// Reports an empty block at its opening fence line (file coordinates).
pub(crate) fn empty_block(findings: &mut Findings, kind: BlockKind, at: TextRange) {
    findings.push(
        TrCode::EmptyBlock,
        at,
        format!("this `{}` block is empty", kind.word()),
    );
}
