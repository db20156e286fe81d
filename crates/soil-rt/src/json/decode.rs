//! Type-directed decoding: exactly the values of the expected type, or a
//! diagnostic naming the JSON path (`$.rows[2].cells[0]`) and its span.
// Errors are the cold path and the workspace shares one `Diagnostic` type;
// boxing it here would only move the allocation.
#![allow(clippy::result_large_err)]

use std::rc::Rc;

use trellis_diag::{Diagnostic, LineIndex, TextRange};

use super::parse::{Kind, Member, Node, parse};
use crate::codes::JsonCode;
use crate::map::MapValue;
use crate::text::Str;
use crate::types::{Payload, RtType, ShapeId, TypeBody, TypeEnv};
use crate::value::{Key, List, Value};

/// Decodes `text` as a value of `ty`.
pub fn decode(text: &str, ty: &RtType, env: &TypeEnv) -> Result<Value, Diagnostic> {
    let root = parse_root(text)?;
    Decoder::new(text, env).value(&root, ty, &[])
}

/// Decodes `text` as a JSON array holding one value per type in `types`
/// (positional arguments, soil0-cli §8.6).
pub fn decode_args(text: &str, types: &[RtType], env: &TypeEnv) -> Result<Vec<Value>, Diagnostic> {
    let mut root = parse_root(text)?;
    let mut decoder = Decoder::new(text, env);
    let describe = root.kind.describe();
    let Kind::Array(items) = &mut root.kind else {
        return Err(decoder.fail(
            JsonCode::TypeMismatch,
            root.at,
            format!(
                "expected an array of {} arguments, found {}",
                types.len(),
                describe
            ),
        ));
    };
    if items.len() != types.len() {
        return Err(decoder.fail(
            JsonCode::TypeMismatch,
            root.at,
            format!("expected {} arguments, found {}", types.len(), items.len()),
        ));
    }
    let mut values = Vec::with_capacity(items.len());
    for (i, (item, ty)) in items.iter_mut().zip(types).enumerate() {
        decoder.path.push(Segment::Index(i));
        // A string argument (a whole text, say) is taken over, not copied.
        let value = match (ty, &mut item.kind) {
            (RtType::Utf8, Kind::String(text)) => {
                Value::Str(Str::from(std::mem::take(text).into_owned()))
            }
            _ => decoder.value(item, ty, &[])?,
        };
        values.push(value);
        decoder.path.pop();
    }
    Ok(values)
}

fn parse_root(text: &str) -> Result<Node<'_>, Diagnostic> {
    parse(text).map_err(|e| {
        let span = LineIndex::new(text).span(text, TextRange::empty(e.at));
        Diagnostic::new(
            JsonCode::Syntax.code(),
            format!("invalid JSON: {}", e.message),
        )
        .with_span(span)
    })
}

enum Segment {
    Field(String),
    Index(usize),
}

struct Decoder<'a> {
    text: &'a str,
    env: &'a TypeEnv,
    path: Vec<Segment>,
    lines: Option<LineIndex>,
}

impl<'a> Decoder<'a> {
    fn new(text: &'a str, env: &'a TypeEnv) -> Self {
        Decoder {
            text,
            env,
            path: Vec::new(),
            lines: None,
        }
    }

    fn path_text(&self) -> String {
        let mut out = String::from("$");
        for segment in &self.path {
            match segment {
                Segment::Index(i) => out.push_str(&format!("[{i}]")),
                Segment::Field(name) => {
                    let plain = !name.is_empty()
                        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                    if plain {
                        out.push('.');
                        out.push_str(name);
                    } else {
                        out.push_str(&format!("[{name:?}]"));
                    }
                }
            }
        }
        out
    }

    fn fail(&mut self, code: JsonCode, at: u32, message: String) -> Diagnostic {
        let path = self.path_text();
        let lines = self.lines.get_or_insert_with(|| LineIndex::new(self.text));
        let span = lines.span(self.text, TextRange::empty(at));
        Diagnostic::new(code.code(), format!("{path}: {message}"))
            .with_span(span)
            .with_note(format!("at JSON path {path}"))
    }

    /// `fail` with the path extended by the field `key` the error is about.
    fn fail_in_field(&mut self, key: &str, code: JsonCode, at: u32, message: String) -> Diagnostic {
        self.path.push(Segment::Field(key.into()));
        let error = self.fail(code, at, message);
        self.path.pop();
        error
    }

    fn mismatch(&mut self, node: &Node<'_>, expected: &RtType) -> Diagnostic {
        let message = format!(
            "expected {}, found {}",
            self.env.display(expected),
            node.kind.describe()
        );
        self.fail(JsonCode::TypeMismatch, node.at, message)
    }

    /// Decodes `node` as `ty`, where `Param(i)` in `ty` means `args[i]`.
    fn value(
        &mut self,
        node: &Node<'_>,
        ty: &RtType,
        args: &[RtType],
    ) -> Result<Value, Diagnostic> {
        match (ty, &node.kind) {
            (RtType::Param(i), _) => match args.get(*i as usize) {
                Some(actual) => self.value(node, actual, &[]),
                None => Err(self.fail(
                    JsonCode::TypeMismatch,
                    node.at,
                    "a value of an unknown type variable cannot be decoded".into(),
                )),
            },
            (RtType::Unit, Kind::Null) => Ok(Value::Unit),
            (RtType::Bool, Kind::Bool(b)) => Ok(Value::Bool(*b)),
            (RtType::I64, Kind::Number(text)) => self.integer(node, text, ty).and_then(|t| {
                t.parse::<i64>().map(Value::I64).map_err(|_| {
                    self.fail(JsonCode::IntRange, node.at, format!("{t} is out of the I64 range"))
                })
            }),
            (RtType::U64, Kind::Number(text)) => self.integer(node, text, ty).and_then(|t| {
                t.parse::<u64>().map(Value::U64).map_err(|_| {
                    self.fail(JsonCode::IntRange, node.at, format!("{t} is out of the U64 range"))
                })
            }),
            (RtType::F64, Kind::Number(text)) => match text.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(Value::F64(x)),
                _ => Err(self.fail(
                    JsonCode::FloatRange,
                    node.at,
                    format!("{text} is out of the F64 range (write \"Infinity\" for an infinity)"),
                )),
            },
            (RtType::F64, Kind::String(s)) => match &**s {
                "NaN" => Ok(Value::F64(f64::NAN)),
                "Infinity" => Ok(Value::F64(f64::INFINITY)),
                "-Infinity" => Ok(Value::F64(f64::NEG_INFINITY)),
                _ => Err(self.fail(
                    JsonCode::TypeMismatch,
                    node.at,
                    format!("expected F64, found the string {s:?} (only \"NaN\", \"Infinity\", \"-Infinity\" stand for numbers)"),
                )),
            },
            (RtType::Utf8, Kind::String(s)) => Ok(Value::Str(Str::new(s))),
            (RtType::List(elem), Kind::Array(items)) => {
                let mut values = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    self.path.push(Segment::Index(i));
                    values.push(self.value(item, elem, args)?);
                    self.path.pop();
                }
                Ok(Value::List(List::from_vec(values)))
            }
            (RtType::Tuple(types), Kind::Array(items)) => {
                if items.len() != types.len() {
                    let message = format!(
                        "expected {} (an array of {}), found an array of {}",
                        self.env.display(ty),
                        types.len(),
                        items.len()
                    );
                    return Err(self.fail(JsonCode::TypeMismatch, node.at, message));
                }
                let mut values = Vec::with_capacity(items.len());
                for (i, (item, t)) in items.iter().zip(types).enumerate() {
                    self.path.push(Segment::Index(i));
                    values.push(self.value(item, t, args)?);
                    self.path.pop();
                }
                Ok(Value::Tuple(Rc::from(values)))
            }
            (RtType::Map(k, v), Kind::Array(entries)) => {
                let mut map = MapValue::new();
                for (i, entry) in entries.iter().enumerate() {
                    self.path.push(Segment::Index(i));
                    let pair = match &entry.kind {
                        Kind::Array(pair) if pair.len() == 2 => pair,
                        _ => {
                            let message =
                                format!("expected a [key, value] pair, found {}", entry.kind.describe());
                            return Err(self.fail(JsonCode::TypeMismatch, entry.at, message));
                        }
                    };
                    self.path.push(Segment::Index(0));
                    let key = self.value(&pair[0], k, args)?;
                    self.path.pop();
                    self.path.push(Segment::Index(1));
                    let value = self.value(&pair[1], v, args)?;
                    self.path.pop();
                    self.path.pop();
                    map.insert(Key(key), value);
                }
                Ok(Value::Map(Rc::new(map)))
            }
            (RtType::Named(id, type_args), Kind::Object(members)) => {
                let closed: Vec<RtType>;
                let type_args: &[RtType] = if type_args.iter().any(has_param) {
                    closed = type_args.iter().map(|t| t.subst(args)).collect();
                    &closed
                } else {
                    type_args
                };
                self.check_duplicates(members)?;
                let body = self.env.decl(*id).map(|d| d.body.clone());
                match body {
                    Some(TypeBody::Record(shape)) => {
                        let members: Vec<&Member<'_>> = members.iter().collect();
                        let fields = self.fields(node, &members, shape, type_args)?;
                        Ok(Value::Record(shape, Rc::from(fields)))
                    }
                    Some(TypeBody::Sum(_)) => self.variant(node, members, *id, type_args),
                    _ => Err(self.no_json_form(node, ty)),
                }
            }
            (RtType::Func, _) => Err(self.no_json_form(node, ty)),
            (RtType::Named(id, _), _)
                if !matches!(
                    self.env.decl(*id).map(|d| &d.body),
                    Some(TypeBody::Record(_) | TypeBody::Sum(_))
                ) =>
            {
                Err(self.no_json_form(node, ty))
            }
            _ => Err(self.mismatch(node, ty)),
        }
    }

    fn no_json_form(&mut self, node: &Node<'_>, ty: &RtType) -> Diagnostic {
        let message = format!("values of type {} have no JSON form", self.env.display(ty));
        self.fail(JsonCode::TypeMismatch, node.at, message)
    }

    /// The text of an integer-shaped number, or a mismatch for fractions/exponents.
    fn integer<'t>(
        &mut self,
        node: &Node<'_>,
        text: &'t str,
        ty: &RtType,
    ) -> Result<&'t str, Diagnostic> {
        if text.contains(['.', 'e', 'E']) {
            let message = format!(
                "expected {}, found the non-integer number {text}",
                self.env.display(ty)
            );
            return Err(self.fail(JsonCode::TypeMismatch, node.at, message));
        }
        Ok(text)
    }

    fn check_duplicates(&mut self, members: &[Member<'_>]) -> Result<(), Diagnostic> {
        for (i, (key, (at, _), _)) in members.iter().enumerate() {
            if members[..i].iter().any(|(k, _, _)| k == key) {
                return Err(self.fail_in_field(
                    key,
                    JsonCode::DuplicateField,
                    *at,
                    format!("the key {key:?} appears twice"),
                ));
            }
        }
        Ok(())
    }

    fn variant(
        &mut self,
        node: &Node<'_>,
        members: &[Member<'_>],
        ty: u32,
        type_args: &[RtType],
    ) -> Result<Value, Diagnostic> {
        let env = self.env;
        let tag_node = match members.iter().position(|(k, _, _)| k == "tag") {
            Some(i) => &members[i],
            None => {
                return Err(self.fail_in_field(
                    "tag",
                    JsonCode::MissingField,
                    node.at,
                    "missing field \"tag\"".into(),
                ));
            }
        };
        let Kind::String(tag_name) = &tag_node.2.kind else {
            let found = tag_node.2.kind.describe();
            return Err(self.fail_in_field(
                "tag",
                JsonCode::TypeMismatch,
                tag_node.2.at,
                format!("expected a variant name string, found {found}"),
            ));
        };
        let Some(TypeBody::Sum(variants)) = env.decl(ty).map(|d| &d.body) else {
            return Err(self.fail(JsonCode::TypeMismatch, node.at, "not a sum type".into()));
        };
        let Some(tag) = variants.iter().position(|v| v.name == *tag_name) else {
            let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
            let type_name = env.decl(ty).map_or("?", |d| d.name.as_str());
            return Err(self.fail_in_field(
                "tag",
                JsonCode::UnknownTag,
                tag_node.2.at,
                format!(
                    "{tag_name:?} is not a variant of {type_name} (expected one of {})",
                    names.join(", ")
                ),
            ));
        };
        // The tag must come first in canonical text, but a reader accepts any
        // order; only the set of keys matters.
        let rest: Vec<&Member<'_>> = members.iter().filter(|(k, _, _)| k != "tag").collect();
        let payload = match &variants[tag].payload {
            Payload::None => {
                if let Some((key, (at, _), _)) = rest.first() {
                    return Err(self.fail_in_field(
                        key,
                        JsonCode::ExtraField,
                        *at,
                        format!("unexpected field {key:?}: variant {tag_name} has no payload"),
                    ));
                }
                None
            }
            Payload::Positional(payload_ty) => {
                if let Some((key, (at, _), _)) = rest.iter().find(|(k, _, _)| k != "value") {
                    return Err(self.fail_in_field(
                        key,
                        JsonCode::ExtraField,
                        *at,
                        format!("unexpected field {key:?}"),
                    ));
                }
                self.path.push(Segment::Field("value".into()));
                let Some((_, _, value)) = rest.first() else {
                    let error = self.fail(
                        JsonCode::MissingField,
                        node.at,
                        "missing field \"value\"".into(),
                    );
                    self.path.pop();
                    return Err(error);
                };
                let decoded = self.value(value, payload_ty, type_args)?;
                self.path.pop();
                Some(decoded)
            }
            Payload::Record(shape) => {
                let fields = self.fields(node, &rest, *shape, type_args)?;
                Some(Value::Record(*shape, Rc::from(fields)))
            }
        };
        Ok(Value::Variant {
            ty,
            tag: tag as u32,
            payload: payload.map(Rc::new),
        })
    }

    /// The fields of `shape` from `members` (a record's keys, or a variant's
    /// keys other than `tag`); refuses missing and extra keys.
    fn fields(
        &mut self,
        node: &Node<'_>,
        members: &[&Member<'_>],
        shape: ShapeId,
        type_args: &[RtType],
    ) -> Result<Vec<Value>, Diagnostic> {
        let env = self.env;
        let Some(shape) = env.shape(shape) else {
            return Err(self.fail(
                JsonCode::TypeMismatch,
                node.at,
                "unknown record shape".into(),
            ));
        };
        for (key, (at, _), _) in members.iter().copied() {
            if shape.field_index(key).is_none() {
                return Err(self.fail_in_field(
                    key,
                    JsonCode::ExtraField,
                    *at,
                    format!("unexpected field {key:?}"),
                ));
            }
        }
        let mut values = Vec::with_capacity(shape.fields.len());
        for field in &shape.fields {
            self.path.push(Segment::Field(field.name.clone()));
            let Some((_, _, value)) = members.iter().copied().find(|(k, _, _)| *k == field.name)
            else {
                let error = self.fail(
                    JsonCode::MissingField,
                    node.at,
                    format!("missing field {:?}", field.name),
                );
                self.path.pop();
                return Err(error);
            };
            values.push(self.value(value, &field.ty, type_args)?);
            self.path.pop();
        }
        Ok(values)
    }
}

fn has_param(ty: &RtType) -> bool {
    match ty {
        RtType::Param(_) => true,
        RtType::List(t) => has_param(t),
        RtType::Map(k, v) => has_param(k) || has_param(v),
        RtType::Tuple(ts) | RtType::Named(_, ts) => ts.iter().any(has_param),
        _ => false,
    }
}
