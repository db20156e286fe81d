//! The lock reader's view of a JSON document: every value and key with its byte
//! range, so each diagnostic can point at the field it is about (serde_json's
//! `Value` forgets positions). The parsing itself is soil-rt's one JSON reader;
//! this module only shapes its tree for the lock reader.

use std::borrow::Cow;

use trellis_diag::TextRange;

/// A value of the document with its range. Keys, strings and numbers borrow
/// the document's text (a string holding an escape owns its unescaped
/// contents): a cold load reads 23,000 locks at 20,000 definitions, forty-odd
/// keys and strings each.
#[derive(Clone, Debug, PartialEq)]
pub struct Node<'t> {
    pub range: TextRange,
    pub value: Value<'t>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value<'t> {
    Null,
    Bool(bool),
    /// The number's text, validated against the JSON grammar.
    Number(&'t str),
    String(Cow<'t, str>),
    Array(Vec<Node<'t>>),
    Object(Vec<Member<'t>>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Member<'t> {
    pub key: Cow<'t, str>,
    pub key_range: TextRange,
    pub value: Node<'t>,
}

impl Value<'_> {
    /// The JSON type's name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub message: String,
    pub at: TextRange,
}

/// Parses one JSON document (surrounding whitespace allowed, nothing else).
pub fn parse(text: &str) -> Result<Node<'_>, SyntaxError> {
    match soil_rt::json_tree::parse(text) {
        Ok(node) => Ok(convert(node)),
        Err(error) => {
            let end = text
                .get(error.at as usize..)
                .and_then(|rest| rest.chars().next())
                .map_or(error.at, |c| error.at + c.len_utf8() as u32);
            Err(SyntaxError {
                message: error.message,
                at: TextRange::new(error.at, end),
            })
        }
    }
}

fn convert(node: soil_rt::json_tree::Node<'_>) -> Node<'_> {
    use soil_rt::json_tree::Kind;
    let value = match node.kind {
        Kind::Null => Value::Null,
        Kind::Bool(b) => Value::Bool(b),
        Kind::Number(text) => Value::Number(text),
        Kind::String(text) => Value::String(text),
        Kind::Array(items) => Value::Array(items.into_iter().map(convert).collect()),
        Kind::Object(members) => Value::Object(
            members
                .into_iter()
                .map(|(key, (start, end), value)| Member {
                    key,
                    key_range: TextRange::new(start, end),
                    value: convert(value),
                })
                .collect(),
        ),
    };
    Node {
        range: TextRange::new(node.at, node.end),
        value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keeps_ranges_of_keys_and_values() {
        let text = r#"{"a": [1, "x\u00e9\ud83d\ude00"], "b": null}"#;
        let node = parse(text).expect("parses");
        let Value::Object(members) = &node.value else {
            panic!("object expected")
        };
        assert_eq!(&text[members[0].key_range.as_usize_range()], r#""a""#);
        assert_eq!(
            &text[members[0].value.range.as_usize_range()],
            r#"[1, "x\u00e9\ud83d\ude00"]"#
        );
        let Value::Array(items) = &members[0].value.value else {
            panic!("array expected")
        };
        assert_eq!(items[1].value, Value::String("xé😀".into()));
        assert_eq!(members[1].value.value, Value::Null);
    }

    #[test]
    fn errors_point_at_the_offending_byte() {
        // Wording is not contractual; the position is.
        let cases = [
            ("{\"a\" 1}", 5),
            ("[1,]", 3),
            ("\"abc", 4),
            ("{} x", 3),
            ("01", 1),
            ("\"\\ud800\"", 7),
            ("\"a\\xb\"", 3),
            ("\"a\\\u{e9}b\"", 3),
        ];
        for (text, offset) in cases {
            let error = parse(text).expect_err(text);
            assert_eq!(error.at.start, offset, "{text}: {}", error.message);
            assert!(!error.message.is_empty());
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let text = "[".repeat(10_000);
        let error = parse(&text).expect_err("too deep");
        assert_eq!(error.at.start as usize, soil_rt::json_tree::MAX_DEPTH);
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,64}") {
            let _ = parse(&text);
        }

        #[test]
        fn agrees_with_serde_json_on_acceptance(text in "[\\[\\]{}\":,0-9a-z \\\\-]{0,24}") {
            let ours = parse(&text).is_ok();
            let theirs = serde_json::from_str::<serde_json::Value>(&text).is_ok();
            prop_assert_eq!(ours, theirs);
        }
    }
}
