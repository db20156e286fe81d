//! Each request's answer, computed on a worker from a snapshot of the database:
//! the protocol's params in, the protocol's result out, positions converted at
//! this edge only. A snapshot whose revision is overtaken by an edit unwinds with
//! `salsa::Cancelled` at its next query; the caller turns that into the
//! protocol's `ContentModified`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lsp_server::ErrorCode;
use lsp_types::{
    CodeDescription, CodeLens, Command, CompletionItem, CompletionItemKind, CompletionParams,
    CompletionResponse, DiagnosticRelatedInformation, DiagnosticSeverity, DocumentFormattingParams,
    DocumentSymbol, DocumentSymbolResponse, GotoDefinitionParams, GotoDefinitionResponse, Hover,
    HoverContents, HoverParams, Location, MarkupContent, MarkupKind, NumberOrString,
    ReferenceParams, SymbolKind, TextEdit, Uri,
};
use salsa::Database as _;
use serde_json::{Value, json};
use trellis_db::RootDatabase;
use trellis_diag::{Diagnostic, TextRange};

use crate::complete::{CompletionKind, completions};
use crate::findings::{Finding, Severity};
use crate::navigate::{FileRange, definitions, references};
use crate::outline::{Outline, OutlineKind, outline};
use crate::paths::uri_of;
use crate::resolve::{file_at, hit};
use crate::text::{Encoding, Lines};

/// Where an open document is: a file the root checks (root-relative), or
/// somewhere else (then its text travels with the request).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    Root(String),
    Outside { name: String, text: String },
}

/// What a request needs besides the snapshot.
#[derive(Clone)]
pub struct Context {
    pub root: Option<PathBuf>,
    pub encoding: Encoding,
    /// The root paths whose open buffers differ from the disk, in order (filled
    /// for the requests that run or offer `trellis` commands).
    pub unsaved: Vec<String>,
}

/// A request failed: the protocol's code and a message.
pub struct Failure {
    pub code: i32,
    pub message: String,
}

impl Failure {
    pub fn invalid(message: impl Into<String>) -> Failure {
        Failure {
            code: ErrorCode::InvalidParams as i32,
            message: message.into(),
        }
    }

    pub fn failed(message: impl Into<String>) -> Failure {
        Failure {
            code: ErrorCode::RequestFailed as i32,
            message: message.into(),
        }
    }
}

pub type Answer = Result<Value, Failure>;

fn to_value(value: impl serde::Serialize) -> Answer {
    serde_json::to_value(value).map_err(|e| Failure::failed(e.to_string()))
}

fn lines<'a>(db: &'a RootDatabase, path: &str, encoding: Encoding) -> Option<Lines<'a>> {
    let file = file_at(db, path)?;
    Some(Lines::new(file.text(db), encoding))
}

fn location(db: &RootDatabase, context: &Context, at: &FileRange) -> Option<Location> {
    let root = context.root.as_ref()?;
    let lines = lines(db, &at.path, context.encoding)?;
    Some(Location::new(
        uri_of(&root.join(&at.path)),
        lines.range(at.range),
    ))
}

/// The byte offset of the request's position in a root document.
fn offset_in(
    db: &RootDatabase,
    context: &Context,
    path: &str,
    position: lsp_types::Position,
) -> Option<u32> {
    Some(lines(db, path, context.encoding)?.offset(position))
}

pub fn hover(db: &RootDatabase, context: &Context, place: &Place, params: HoverParams) -> Answer {
    let Place::Root(path) = place else {
        return Ok(Value::Null);
    };
    let position = params.text_document_position_params.position;
    let Some(offset) = offset_in(db, context, path, position) else {
        return Ok(Value::Null);
    };
    let Some(found) = hit(db, path, offset) else {
        return Ok(Value::Null);
    };
    let Some(text) = crate::hover::hover(db, &found.symbol, found.range.start) else {
        return Ok(Value::Null);
    };
    let range = lines(db, path, context.encoding).map(|lines| lines.range(found.range));
    to_value(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: text,
        }),
        range,
    })
}

pub fn definition(
    db: &RootDatabase,
    context: &Context,
    place: &Place,
    params: GotoDefinitionParams,
) -> Answer {
    let Place::Root(path) = place else {
        return Ok(Value::Null);
    };
    let position = params.text_document_position_params.position;
    let Some(found) = offset_in(db, context, path, position).and_then(|o| hit(db, path, o)) else {
        return Ok(Value::Null);
    };
    let targets: Vec<Location> = definitions(db, path, &found.symbol)
        .iter()
        .filter_map(|at| location(db, context, at))
        .collect();
    if targets.is_empty() {
        return Ok(Value::Null);
    }
    to_value(GotoDefinitionResponse::Array(targets))
}

pub fn references_of(
    db: &RootDatabase,
    context: &Context,
    place: &Place,
    params: ReferenceParams,
) -> Answer {
    let Place::Root(path) = place else {
        return Ok(Value::Null);
    };
    let position = params.text_document_position.position;
    let Some(found) = offset_in(db, context, path, position).and_then(|o| hit(db, path, o)) else {
        return Ok(Value::Null);
    };
    let found: Vec<Location> =
        references(db, path, &found.symbol, params.context.include_declaration)
            .iter()
            .filter_map(|at| location(db, context, at))
            .collect();
    to_value(found)
}

pub fn document_symbols(db: &RootDatabase, context: &Context, place: &Place) -> Answer {
    let Place::Root(path) = place else {
        return Ok(Value::Null);
    };
    let (Some(file), Some(lines)) = (file_at(db, path), lines(db, path, context.encoding)) else {
        return Ok(Value::Null);
    };
    #[allow(
        deprecated,
        reason = "`deprecated` is a required field of the protocol's struct"
    )]
    fn symbol(entry: &Outline, lines: &Lines<'_>) -> DocumentSymbol {
        DocumentSymbol {
            name: if entry.name.is_empty() {
                "(unnamed)".to_owned()
            } else {
                entry.name.clone()
            },
            detail: entry.detail.clone(),
            kind: match entry.kind {
                OutlineKind::Function => SymbolKind::FUNCTION,
                OutlineKind::Type => SymbolKind::STRUCT,
                OutlineKind::Module => SymbolKind::MODULE,
                OutlineKind::Block => SymbolKind::NAMESPACE,
                OutlineKind::Clause => SymbolKind::PROPERTY,
                OutlineKind::Test => SymbolKind::EVENT,
                OutlineKind::Decision => SymbolKind::CONSTANT,
            },
            tags: None,
            deprecated: None,
            range: lines.range(entry.range),
            // The protocol wants the selection inside the range.
            selection_range: lines.range(
                if entry.range.start <= entry.selection.start
                    && entry.selection.end <= entry.range.end
                {
                    entry.selection
                } else {
                    TextRange::empty(entry.range.start)
                },
            ),
            children: Some(
                entry
                    .children
                    .iter()
                    .map(|child| symbol(child, lines))
                    .collect(),
            ),
        }
    }
    let symbols: Vec<DocumentSymbol> = outline(db, path, file)
        .iter()
        .map(|entry| symbol(entry, &lines))
        .collect();
    to_value(DocumentSymbolResponse::Nested(symbols))
}

pub fn formatting(
    db: &RootDatabase,
    context: &Context,
    place: &Place,
    _params: DocumentFormattingParams,
) -> Answer {
    let (name, text): (&str, &str) = match place {
        Place::Root(path) => match file_at(db, path) {
            Some(file) => (path, file.text(db)),
            None => return Ok(Value::Null),
        },
        Place::Outside { name, text } => (name, text),
    };
    if !name.ends_with(".soil") {
        return Ok(Value::Null);
    }
    let canonical = crate::format::format_soil(text).map_err(|r| Failure::failed(r.message()))?;
    if canonical == text {
        return to_value(Vec::<TextEdit>::new());
    }
    let lines = Lines::new(text, context.encoding);
    let whole = lines.range(TextRange::new(0, text.len() as u32));
    to_value(vec![TextEdit::new(whole, canonical)])
}

pub fn completion(
    db: &RootDatabase,
    context: &Context,
    place: &Place,
    params: CompletionParams,
) -> Answer {
    let Place::Root(path) = place else {
        return Ok(Value::Null);
    };
    let Some(file) = file_at(db, path) else {
        return Ok(Value::Null);
    };
    let text = file.text(db);
    let offset = Lines::new(text, context.encoding).offset(params.text_document_position.position);
    let items: Vec<CompletionItem> = completions(db, path, text, offset)
        .into_iter()
        .map(|completion| CompletionItem {
            kind: Some(match completion.kind {
                CompletionKind::Local => CompletionItemKind::VARIABLE,
                CompletionKind::Function => CompletionItemKind::FUNCTION,
                CompletionKind::Type => CompletionItemKind::STRUCT,
                CompletionKind::Constructor => CompletionItemKind::ENUM_MEMBER,
                CompletionKind::Module => CompletionItemKind::MODULE,
                CompletionKind::Builtin => CompletionItemKind::FUNCTION,
                CompletionKind::FenceLanguage => CompletionItemKind::KEYWORD,
            }),
            detail: completion.detail,
            label: completion.label,
            ..CompletionItem::default()
        })
        .collect();
    to_value(CompletionResponse::Array(items))
}

/// The command a lens runs: `trellis.run` with the steps' arguments.
pub const RUN_COMMAND: &str = "trellis.run";
/// The command (and custom request `trellis/readSpec`) serving a spec section.
pub const READ_SPEC_COMMAND: &str = "trellis.readSpec";

pub fn code_lenses(db: &RootDatabase, context: &Context, place: &Place) -> Answer {
    let Place::Root(path) = place else {
        return Ok(Value::Null);
    };
    let (Some(file), Some(lines)) = (file_at(db, path), lines(db, path, context.encoding)) else {
        return Ok(Value::Null);
    };
    let lenses: Vec<CodeLens> = crate::lenses::lenses(db, path, file)
        .into_iter()
        .map(|lens| {
            let mut title = lens.title();
            // The row is the buffers' status; the command acts on the disk. They
            // agree only once every buffer is saved.
            let commands = match (lens.commands, unsaved_note(&context.unsaved)) {
                (Some(_), Some(note)) => {
                    title.push_str(&format!(" ({note})"));
                    None
                }
                (commands, _) => commands,
            };
            CodeLens {
                range: lines.range(lens.range),
                command: Some(Command {
                    title,
                    command: if commands.is_some() {
                        RUN_COMMAND.to_owned()
                    } else {
                        String::new()
                    },
                    arguments: commands.map(|steps| vec![json!(steps)]),
                }),
                data: None,
            }
        })
        .collect();
    to_value(lenses)
}

/// What a lens says, and a `trellis.run` answers, while buffers are unsaved:
/// `save m/f.soil first` (none when every buffer is saved).
pub fn unsaved_note(unsaved: &[String]) -> Option<String> {
    let first = unsaved.first()?;
    Some(match unsaved.len() {
        1 => format!("save {first} first: `trellis` acts on the saved files"),
        n => format!(
            "save {first} and {} other file{} first: `trellis` acts on the saved files",
            n - 1,
            if n == 2 { "" } else { "s" }
        ),
    })
}

/// One spec section by anchor (`soil-syntax-spec#9.1`), from the copies built into
/// the binary: what a diagnostic's code description links to (read_spec's answer).
pub fn read_spec(reference: &str) -> Answer {
    match trellis_context::spec_section(reference) {
        Ok(section) => Ok(json!({ "title": section.title, "text": section.text })),
        Err(diagnostic) => Err(Failure::invalid(diagnostic.message)),
    }
}

/// The link a diagnostic's code description carries: its spec section, for
/// `trellis.readSpec` (or `trellis spec REF`) to open.
pub fn spec_link(spec_ref: &str) -> Option<Uri> {
    if spec_ref.is_empty() {
        return None;
    }
    format!("trellis-spec:{spec_ref}").parse().ok()
}

/// One finding as the protocol's diagnostic. Notes with a place become related
/// information (in the same file), notes without one join the message.
pub fn protocol_diagnostic(
    finding: &Finding,
    uri: &Uri,
    lines: Option<&Lines<'_>>,
) -> lsp_types::Diagnostic {
    let diagnostic: &Diagnostic = &finding.diagnostic;
    let range_of = |span: &trellis_diag::Span| match lines {
        Some(lines) => lines.range(TextRange::new(span.start.offset, span.end.offset)),
        // No text to count in (a file that could not be read): the span's own
        // line and column.
        None => lsp_types::Range::new(
            lsp_types::Position::new(
                span.start.line.saturating_sub(1),
                span.start.column.saturating_sub(1),
            ),
            lsp_types::Position::new(
                span.end.line.saturating_sub(1),
                span.end.column.saturating_sub(1),
            ),
        ),
    };
    let range = diagnostic.span.as_ref().map(range_of).unwrap_or_default();
    let mut message = diagnostic.message.clone();
    let mut related = Vec::new();
    for note in &diagnostic.notes {
        match &note.span {
            Some(span) => related.push(DiagnosticRelatedInformation {
                location: Location::new(uri.clone(), range_of(span)),
                message: note.message.clone(),
            }),
            None => {
                message.push_str("\nnote: ");
                message.push_str(&note.message);
            }
        }
    }
    lsp_types::Diagnostic {
        range,
        severity: Some(match finding.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Information => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(diagnostic.code.clone())),
        code_description: spec_link(&diagnostic.spec_ref).map(|href| CodeDescription { href }),
        source: Some(format!("trellis ({})", diagnostic.repair_class)),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: Some(json!({
            "repair_class": diagnostic.repair_class,
            "spec_ref": diagnostic.spec_ref,
        })),
    }
}

/// Every root file's protocol diagnostics, by URI (files without any left out).
pub fn root_diagnostics(
    db: &RootDatabase,
    root: &Path,
    load_problems: &[Diagnostic],
    encoding: Encoding,
) -> BTreeMap<String, Vec<lsp_types::Diagnostic>> {
    let findings = crate::findings::root_findings(db, load_problems);
    let mut out = BTreeMap::new();
    for (path, findings) in findings {
        db.unwind_if_revision_cancelled();
        let uri = uri_of(&root.join(&path));
        let file = file_at(db, &path);
        let lines = file.map(|file| Lines::new(file.text(db), encoding));
        let diagnostics = findings
            .iter()
            .map(|finding| protocol_diagnostic(finding, &uri, lines.as_ref()))
            .collect();
        out.insert(uri.as_str().to_owned(), diagnostics);
    }
    out
}

/// A document outside the root: its syntax's diagnostics and the note saying so.
pub fn outside_diagnostics(
    uri: &Uri,
    name: &str,
    text: &str,
    why: &str,
    encoding: Encoding,
) -> Vec<lsp_types::Diagnostic> {
    let lines = Lines::new(text, encoding);
    crate::findings::outside_findings(name, text, why)
        .iter()
        .map(|finding| protocol_diagnostic(finding, uri, Some(&lines)))
        .collect()
}
