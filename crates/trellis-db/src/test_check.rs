//! The static half of a definition's tests, checked by `trellis check` rather than
//! discovered by `trellis test`: every `property` block type-checks as the very
//! wrapper definition the test runner synthesizes (`property_wrapper`, design
//! §4.1), in the definition's module with its binders typed; every `test` case's
//! arguments and expected value decode against the signature through soil-rt's
//! one codec; every `with` fake reads as the runner installs it. All of it reads
//! only position-free values (test blocks, the signature, the declarations of
//! what the properties mention), never the definition's own body, so an edit of
//! its Soil leaves this query asleep; findings are block-relative, mapped to the
//! `.tr` file by [`crate::report_diagnostics`].

use soil_syntax::ast;
use soil_types::{Declaration, Located, Program};
use trellis_diag::{Diagnostic, LineIndex, TextRange};
use trellis_spec::{BlockKind, BlockSyntax, BlockValue, Expected, JsonText, SpanClass, TestLine};
use trellis_verify::suite::program::{SigParts, property_wrapper};

use crate::assembly::{program_order, property_callees};
use crate::check::{
    block_path, block_source, checker_declaration, checker_definition, declared_env, root_types,
};
use crate::db::Db;
use crate::files::SourceFile;
use crate::index::{Item, ItemKind};
use crate::spec::{formal_blocks, test_blocks};

/// Everything statically wrong with `item`'s tests (block-relative).
#[salsa::tracked(returns(ref))]
pub fn test_diagnostics<'db>(db: &'db dyn Db, item: Item<'db>) -> Vec<Diagnostic> {
    let Some(spec) = spec_of(db, item) else {
        return Vec::new();
    };
    let Some(signature) = spec_declaration(db, item) else {
        return Vec::new();
    };
    let mut out = property_diagnostics(db, item, spec, &signature);
    out.extend(case_diagnostics(db, spec, &signature.signature.node));
    out
}

fn spec_of(db: &dyn Db, item: Item<'_>) -> Option<SourceFile> {
    if item.kind(db) != ItemKind::Function {
        return None;
    }
    crate::index::spec_file(db, item)
}

/// A function's declaration read off its spec's `soil-sig` block, lowered or not.
fn spec_declaration(db: &dyn Db, item: Item<'_>) -> Option<Declaration> {
    let spec = spec_of(db, item)?;
    let path = spec.path(db).to_string();
    formal_blocks(db, spec)
        .iter()
        .enumerate()
        .find_map(|(k, block)| match (&block.header.kind, &block.syntax) {
            (BlockKind::SoilSig, BlockSyntax::Signature(Some(signature))) => Some(Declaration {
                name: item.qualified(db),
                signature: Located {
                    node: signature.clone(),
                    source: block_source(&path, SpanClass::Formal, k, block),
                },
            }),
            _ => None,
        })
}

/// The property wrappers checked against the definition's declaration and the
/// programs of the definitions their predicates mention.
fn property_diagnostics(
    db: &dyn Db,
    item: Item<'_>,
    spec: SourceFile,
    own: &Declaration,
) -> Vec<Diagnostic> {
    let module = item.module(db).as_str();
    let path = spec.path(db).to_string();
    let mut wrappers = Vec::new();
    for (k, block) in test_blocks(db, spec).iter().enumerate() {
        let BlockSyntax::Property(Some(property)) = &block.syntax else {
            continue;
        };
        let name = block.header.name.as_deref().unwrap_or("property");
        // A block that did not parse is reported by the spec's own diagnostics.
        if let Ok(wrapper) = property_wrapper(
            Some(module),
            name,
            property,
            block_source(&path, SpanClass::Test, k, block),
        ) {
            wrappers.push(wrapper);
        }
    }
    if wrappers.is_empty() {
        return Vec::new();
    }
    let mut program = Program::default();
    program.declarations.push(own.clone());
    let mut seen = vec![(item.module(db).clone(), item.name(db).clone())];
    for (module, name) in property_callees(db, item) {
        let referenced = Item::new(db, module.as_str(), name.as_str());
        for (module, name) in program_order(db, referenced).iter() {
            let key = (module.clone(), name.clone());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let member = Item::new(db, module.as_str(), name.as_str());
            if let Some(declaration) =
                spec_declaration(db, member).or_else(|| checker_declaration(db, member).clone())
            {
                program.declarations.push(declaration);
            } else if let Some(definition) = checker_definition(db, member) {
                program.definitions.push(definition);
            }
        }
    }
    let names: Vec<String> = wrappers.iter().map(|w| w.name.clone()).collect();
    program.definitions.extend(wrappers);
    let report = soil_types::check_declared(declared_env(db), &program);
    names
        .iter()
        .filter_map(|name| match report.for_definition(name) {
            Some(Err(errors)) => Some(errors),
            _ => None,
        })
        .flatten()
        .collect()
}

/// Every `test` case's arguments and expected value decoded against the signature.
/// A case with the wrong number of arguments is `tr-bad-test-case` already.
fn case_diagnostics(db: &dyn Db, spec: SourceFile, signature: &ast::Signature) -> Vec<Diagnostic> {
    // The runner's view of the root's types, built once for every
    // definition's cases; problems in the declarations themselves are
    // reported once, elsewhere.
    let Some(types) = root_types(db).runtime_env() else {
        return Vec::new();
    };
    let parts = SigParts::of(signature);
    let rt = |ty: &ast::Type| soil_eval::rt_type(types, ty, &[], &mut Vec::new()).ok();
    let params: Vec<(String, Option<soil_rt::RtType>)> = parts
        .params
        .iter()
        .filter(|p| !p.capability)
        .map(|p| (p.name.clone(), rt(&p.ty)))
        .collect();
    let result = rt(&parts.result);
    let path = spec.path(db).to_string();
    let mut out = Vec::new();
    for (k, block) in test_blocks(db, spec).iter().enumerate() {
        if !matches!(block.syntax, BlockSyntax::Test(_)) {
            continue;
        }
        let file = block_path(&path, SpanClass::Test, k);
        out.extend(fake_diagnostics(block, &file, &parts));
        let cases = trellis_verify::suite::expect_cases(std::slice::from_ref(block));
        for named in cases {
            let case = named.case;
            if case.args.len() == params.len() {
                for (index, (arg, (name, ty))) in case.args.iter().zip(&params).enumerate() {
                    let what = format!("argument {} (`{name}`)", index + 1);
                    out.extend(mismatch(
                        block,
                        &file,
                        &named.row,
                        &what,
                        arg,
                        ty.as_ref(),
                        types,
                    ));
                }
            }
            if let Expected::Value(value) = &case.expected {
                out.extend(mismatch(
                    block,
                    &file,
                    &named.row,
                    "the expected result",
                    value,
                    result.as_ref(),
                    types,
                ));
            }
        }
    }
    out
}

/// Each `with` line's fake read as the runner installs it (`FakeFs`,
/// `FakeClock`), its error at the fake's JSON. A `with` naming no capability
/// parameter is `tr-bad-test-case` already.
fn fake_diagnostics(block: &BlockValue, file: &str, parts: &SigParts) -> Vec<Diagnostic> {
    let BlockSyntax::Test(lines) = &block.syntax else {
        return Vec::new();
    };
    lines
        .iter()
        .filter_map(|line| match line {
            TestLine::With(binding) => Some(binding),
            TestLine::Case(_) => None,
        })
        .filter_map(|binding| {
            let param = parts
                .params
                .iter()
                .find(|p| p.capability && p.name == binding.param)?;
            let text = &binding.value.text;
            let error = match &param.ty.kind {
                ast::TypeKind::Named(name) if name.text == "Fs" => {
                    soil_eval::world::FakeFs::from_json(text).err()
                }
                ast::TypeKind::Named(name) if name.text == "Clock" => {
                    soil_eval::world::FakeClock::from_json(text).err()
                }
                _ => None,
            }?;
            Some(
                error
                    .with_file(file.to_owned())
                    .with_span(span_in(block, binding.value.range)),
            )
        })
        .collect()
}

/// `tr-test-value-type` when `value` is not a value of `ty` (`None`: a type the
/// runner cannot generate or decode, which `trellis test` reports itself).
fn mismatch(
    block: &BlockValue,
    file: &str,
    row: &str,
    what: &str,
    value: &JsonText,
    ty: Option<&soil_rt::RtType>,
    types: &soil_rt::TypeEnv,
) -> Option<Diagnostic> {
    let error = soil_rt::decode(&value.text, ty?, types).err()?;
    let mut diagnostic = Diagnostic::new(
        "tr-test-value-type",
        format!(
            "{row}: {what} is not a value of its type: {}",
            error.message
        ),
    )
    .with_file(file.to_owned())
    .with_span(span_in(block, within(value, error.span)));
    for note in error.notes {
        diagnostic = diagnostic.with_note(note.message);
    }
    Some(diagnostic)
}

/// The part of `value` a decode error's span (relative to the value's text)
/// names — the offending element, not the whole argument — else all of it.
fn within(value: &JsonText, span: Option<trellis_diag::Span>) -> TextRange {
    match span {
        Some(span) if span.end.offset as usize <= value.text.len() => TextRange::new(
            value.range.start + span.start.offset,
            value.range.start + span.end.offset,
        ),
        _ => value.range,
    }
}

fn span_in(block: &BlockValue, range: TextRange) -> trellis_diag::Span {
    LineIndex::new(&block.content).span(&block.content, range)
}
