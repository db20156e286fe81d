//! The one canonical JSON codec for Soil values (soil0-cli §7, tr-grammar §7).
//!
//! Encoding is driven by the value (records and variants carry their
//! declaration ids); decoding is driven by the expected [`RtType`] and refuses
//! anything that is not exactly a value of it.
//!
//! The reader accepts a little more than the writer produces, never anything
//! ambiguous: whitespace, object keys in any order (a variant's `tag` need not
//! come first), an integer literal where an F64 is expected (`3` is `3.0`), and
//! map pairs in any order (a repeated key: the later pair wins, as in
//! `map_from_list`). It refuses duplicate object keys, missing and extra
//! fields, unknown tags, integers outside I64/U64, numbers outside F64 (write
//! `"Infinity"`), and documents nested deeper than 512 levels.
//! Canonical text of values with no JSON form: functions encode as the string
//! `"<function>"`, capability tokens as `{"tag":"Fs"}` (never decodable).

mod decode;
pub mod parse;

use std::fmt::Write as _;

use crate::types::{Payload, TypeEnv};
use crate::value::Value;

pub use decode::{decode, decode_args};

/// The canonical JSON text of `value`: compact, records in declaration order,
/// sums internally tagged, maps as ascending `[key, value]` pairs.
pub fn encode(value: &Value, env: &TypeEnv) -> String {
    let mut out = String::new();
    encode_into(&mut out, value, env);
    out
}

/// [`encode`], appending to `out`.
pub fn encode_into(out: &mut String, value: &Value, env: &TypeEnv) {
    match value {
        Value::Unit => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::I64(n) => {
            let _ = write!(out, "{n}");
        }
        Value::U64(n) => {
            let _ = write!(out, "{n}");
        }
        Value::F64(x) => {
            if x.is_finite() {
                out.push_str(&format_f64(*x));
            } else {
                out.push('"');
                out.push_str(&format_f64(*x));
                out.push('"');
            }
        }
        Value::Str(s) => write_string(out, s),
        Value::List(items) => write_array(out, items.as_slice(), env),
        Value::Tuple(items) => write_array(out, items, env),
        Value::Record(shape, fields) => {
            out.push('{');
            write_fields(out, *shape, fields, env);
            out.push('}');
        }
        Value::Variant { ty, tag, payload } => {
            out.push_str("{\"tag\":");
            let variant = env.variant_decl(*ty, *tag);
            match variant {
                Some(v) => write_string(out, &v.name),
                // A capability token or a value from a foreign environment:
                // name the declaration rather than fail.
                None => write_string(out, env.decl(*ty).map_or("?", |d| d.name.as_str())),
            }
            match (payload.as_deref(), variant.map(|v| &v.payload)) {
                (None, _) => {}
                (Some(Value::Record(shape, fields)), Some(Payload::Record(_))) => {
                    if !fields.is_empty() {
                        out.push(',');
                    }
                    write_fields(out, *shape, fields, env);
                }
                (Some(p), _) => {
                    out.push_str(",\"value\":");
                    encode_into(out, p, env);
                }
            }
            out.push('}');
        }
        Value::Map(entries) => {
            out.push('[');
            for (i, (key, value)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('[');
                encode_into(out, &key.0, env);
                out.push(',');
                encode_into(out, value, env);
                out.push(']');
            }
            out.push(']');
        }
        Value::Func(_) => out.push_str("\"<function>\""),
    }
}

fn write_array(out: &mut String, items: &[Value], env: &TypeEnv) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        encode_into(out, item, env);
    }
    out.push(']');
}

fn write_fields(out: &mut String, shape: u32, fields: &[Value], env: &TypeEnv) {
    let names = env.shape(shape);
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match names.and_then(|s| s.fields.get(i)) {
            Some(decl) => write_string(out, &decl.name),
            None => write_string(out, &format!("_{i}")),
        }
        out.push(':');
        encode_into(out, field, env);
    }
}

/// A JSON string with minimal escapes: `\"`, `\\`, `\n`, `\t`, `\r`, and the
/// other control characters as `\u00xx` (soil0-cli §7). The workspace's one
/// JSON string escaper: lock text (lock-schema §1.4) is written with it too.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let mut run_start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\t' => "\\t",
            b'\r' => "\\r",
            0..0x20 => "",
            _ => continue,
        };
        out.push_str(&s[run_start..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(escape);
        }
        run_start = i + 1;
    }
    out.push_str(&s[run_start..]);
    out.push('"');
}

/// The canonical text of an F64: the shortest decimal that reads back to the
/// same bits, always with a `.` or an exponent (`1.0`, `2.5e-7`, `-0.0`, `1e300`).
/// Non-finite values give `NaN`, `Infinity`, `-Infinity` (the encoder quotes them).
pub fn format_f64(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    // `Debug` is shortest-round-trip and switches to exponent form for very
    // large and very small magnitudes; it prints integral values as `1.0`.
    let mut text = format!("{x:?}");
    if !text.contains(['.', 'e', 'E']) {
        text.push_str(".0");
    }
    text
}

#[cfg(test)]
mod tests;
