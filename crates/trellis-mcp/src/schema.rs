//! The contract's Soil types as data (trellis-daemon §1: internally tagged sums,
//! records with every field present, the `Option` encoding), with the two things
//! the server derives from them: the JSON Schema `tools/list` advertises and the
//! validation every call's arguments pass before reaching the job. One
//! description feeds both, so what a client is told and what the server accepts
//! cannot drift. Agent CLIs do not validate inputs against the schema (they pass
//! `{}`, wrong types and untagged sums through), so the server must.

use serde_json::{Map, Value, json};
use trellis_diag::Diagnostic;

/// A Soil type, as far as tool inputs need.
#[derive(Clone, Copy, Debug)]
pub enum Ty {
    Utf8,
    List(&'static Ty),
    /// `{"tag":"None"}` or `{"tag":"Some","value":…}`.
    Option(&'static Ty),
    /// Every field required, nothing else allowed.
    Record(&'static [(&'static str, Ty)]),
    /// Internally tagged: `{"tag": constructor, …its fields}`.
    Sum(&'static [(&'static str, &'static [(&'static str, Ty)])]),
}

impl Ty {
    /// The JSON Schema of this type.
    pub fn json_schema(&self) -> Value {
        match self {
            Ty::Utf8 => json!({ "type": "string" }),
            Ty::List(item) => json!({ "type": "array", "items": item.json_schema() }),
            Ty::Option(inner) => {
                let mut some = tagged("Some", &[]);
                some["properties"]["value"] = inner.json_schema();
                some["required"] = json!(["tag", "value"]);
                json!({ "oneOf": [tagged("None", &[]), some] })
            }
            Ty::Record(fields) => object(None, fields),
            Ty::Sum(variants) => {
                let alternatives: Vec<Value> = variants
                    .iter()
                    .map(|(tag, fields)| tagged(tag, fields))
                    .collect();
                json!({ "oneOf": alternatives })
            }
        }
    }

    /// Checks `value` against this type; the diagnostic names the path (`$.a.b`).
    pub fn validate(&self, value: &Value, path: &str) -> Result<(), Diagnostic> {
        match self {
            Ty::Utf8 => match value {
                Value::String(_) => Ok(()),
                other => Err(mismatch(path, "a string", other)),
            },
            Ty::List(item) => match value {
                Value::Array(items) => items
                    .iter()
                    .enumerate()
                    .try_for_each(|(i, v)| item.validate(v, &format!("{path}[{i}]"))),
                other => Err(mismatch(path, "an array", other)),
            },
            Ty::Option(inner) => {
                const SOME: &[(&str, Ty)] = &[];
                let fields = fields_of(value, path)?;
                match fields.get("tag").and_then(Value::as_str) {
                    Some("None") => record(fields, SOME, path, Some("None")),
                    Some("Some") => {
                        extra_fields(fields, &["tag", "value"], path)?;
                        let inner_value =
                            fields.get("value").ok_or_else(|| missing(path, "value"))?;
                        inner.validate(inner_value, &format!("{path}.value"))
                    }
                    _ => Err(unknown_tag(path, fields.get("tag"), &["None", "Some"])),
                }
            }
            Ty::Record(expected) => record(fields_of(value, path)?, expected, path, None),
            Ty::Sum(variants) => {
                let fields = fields_of(value, path)?;
                let tag = fields.get("tag").and_then(Value::as_str);
                match variants.iter().find(|(name, _)| Some(*name) == tag) {
                    Some((name, expected)) => record(fields, expected, path, Some(name)),
                    None => {
                        let names: Vec<&str> = variants.iter().map(|(name, _)| *name).collect();
                        Err(unknown_tag(path, fields.get("tag"), &names))
                    }
                }
            }
        }
    }
}

fn object(tag: Option<&str>, fields: &[(&str, Ty)]) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    if let Some(tag) = tag {
        properties.insert("tag".to_owned(), json!({ "const": tag }));
        required.push(json!("tag"));
    }
    for (name, ty) in fields {
        properties.insert((*name).to_owned(), ty.json_schema());
        required.push(json!(name));
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn tagged(tag: &str, fields: &[(&str, Ty)]) -> Value {
    object(Some(tag), fields)
}

fn fields_of<'v>(value: &'v Value, path: &str) -> Result<&'v Map<String, Value>, Diagnostic> {
    value
        .as_object()
        .ok_or_else(|| mismatch(path, "an object", value))
}

fn record(
    fields: &Map<String, Value>,
    expected: &[(&str, Ty)],
    path: &str,
    tag: Option<&str>,
) -> Result<(), Diagnostic> {
    let mut allowed: Vec<&str> = expected.iter().map(|(name, _)| *name).collect();
    if tag.is_some() {
        allowed.push("tag");
    }
    extra_fields(fields, &allowed, path)?;
    for (name, ty) in expected {
        let value = fields.get(*name).ok_or_else(|| missing(path, name))?;
        ty.validate(value, &format!("{path}.{name}"))?;
    }
    Ok(())
}

fn extra_fields(
    fields: &Map<String, Value>,
    allowed: &[&str],
    path: &str,
) -> Result<(), Diagnostic> {
    match fields.keys().find(|key| !allowed.contains(&key.as_str())) {
        Some(extra) => Err(Diagnostic::new(
            "json-extra-field",
            format!(
                "{path} has no field {} (expected: {})",
                excerpt(extra),
                allowed.join(", ")
            ),
        )),
        None => Ok(()),
    }
}

fn missing(path: &str, field: &str) -> Diagnostic {
    Diagnostic::new(
        "json-missing-field",
        format!(
            "{path} lacks the field `{field}`; every field is required (use {{\"tag\":\"None\"}} for an absent option)"
        ),
    )
}

fn mismatch(path: &str, wanted: &str, found: &Value) -> Diagnostic {
    let found = match found {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    Diagnostic::new(
        "json-type-mismatch",
        format!("{path} must be {wanted}, not {found}"),
    )
}

fn unknown_tag(path: &str, tag: Option<&Value>, names: &[&str]) -> Diagnostic {
    let found = tag.map_or_else(
        || "no tag".to_owned(),
        |tag| match tag {
            Value::String(tag) => format!("tag {}", excerpt(tag)),
            other => format!("the tag {}", excerpt(&other.to_string())),
        },
    );
    Diagnostic::new(
        "json-unknown-tag",
        format!(
            "{path} has {found}; sums are internally tagged, one of: {}",
            names
                .iter()
                .map(|name| format!("{{\"tag\":\"{name}\"…}}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
}

/// How much of an argument a message quotes.
const EXCERPT_CHARS: usize = 64;

/// An argument as a message quotes it: its first characters, and its length
/// when there is more, so that a message never grows with a hostile input.
pub fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        None => format!("{text:?}"),
        Some((end, _)) => format!("{:?}… ({} bytes)", &text[..end], text.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCOPE: Ty = Ty::Sum(&[("Project", &[]), ("Module", &[])]);
    const REF: Ty = Ty::Record(&[("scope", SCOPE), ("hole", Ty::Option(&Ty::Utf8))]);

    #[test]
    fn validation_follows_the_encoding() {
        let ok = json!({"scope": {"tag": "Module"}, "hole": {"tag": "Some", "value": "h"}});
        assert!(REF.validate(&ok, "$").is_ok());
        let cases = [
            (
                json!({"scope": "Module", "hole": {"tag": "None"}}),
                "json-type-mismatch",
            ),
            (
                json!({"scope": {"tag": "Modul"}, "hole": {"tag": "None"}}),
                "json-unknown-tag",
            ),
            (json!({"scope": {"tag": "Module"}}), "json-missing-field"),
            (
                json!({"scope": {"tag": "Module"}, "hole": {"tag": "None"}, "x": 1}),
                "json-extra-field",
            ),
            (
                json!({"scope": {"tag": "Module"}, "hole": {"tag": "Some", "value": 3}}),
                "json-type-mismatch",
            ),
        ];
        for (value, code) in cases {
            assert_eq!(REF.validate(&value, "$").unwrap_err().code, code, "{value}");
        }
    }

    #[test]
    fn messages_quote_an_excerpt_of_a_hostile_input() {
        let key = "k".repeat(1 << 20);
        let mut value = json!({"scope": {"tag": "Module"}, "hole": {"tag": "None"}});
        value[key.as_str()] = json!(1);
        let extra = REF.validate(&value, "$").unwrap_err();
        assert_eq!(extra.code, "json-extra-field");
        assert!(extra.message.len() < 200, "{}", extra.message);
        assert!(
            extra.message.contains("(1048576 bytes)"),
            "{}",
            extra.message
        );
        let tag = json!({"scope": {"tag": key}, "hole": {"tag": "None"}});
        assert!(REF.validate(&tag, "$").unwrap_err().message.len() < 300);
        assert_eq!(excerpt("short"), "\"short\"");
        let long = "é".repeat(100);
        assert!(excerpt(&long).ends_with("… (200 bytes)"));
        assert_eq!(excerpt(&long).matches('é').count(), EXCERPT_CHARS);
    }
}
