//! Goldens for the canonical form and its refusals; round-trip properties.

use std::rc::Rc;

use expect_test::{Expect, expect};
use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Union};

use super::*;
use crate::json::decode::decode;
use crate::map::MapValue;
use crate::types::{FieldDecl, PayloadDecl, RtType, TypeBody, TypeEnv, prelude};
use crate::value::{Key, List};

/// The prelude plus `Row`, a parametric `Pair a b`, and `Shape` (all payload kinds).
fn test_env() -> TypeEnv {
    let mut env = TypeEnv::new();
    let row = env.declare("Row", &[]);
    let pair = env.declare("Pair", &["a", "b"]);
    let shape = env.declare("Shape", &[]);
    let field = |name: &str, ty: RtType| FieldDecl {
        name: name.into(),
        ty,
    };
    env.define_record(
        row,
        vec![
            field("line", RtType::I64),
            field("cells", RtType::List(Box::new(RtType::F64))),
        ],
    );
    env.define_record(
        pair,
        vec![
            field("left", RtType::Param(0)),
            field("right", RtType::Param(1)),
        ],
    );
    env.define_sum(
        shape,
        vec![
            (
                "Circle".into(),
                PayloadDecl::Record(vec![field("radius", RtType::F64)]),
            ),
            ("Square".into(), PayloadDecl::Positional(RtType::F64)),
            ("Empty".into(), PayloadDecl::None),
        ],
    );
    env
}

fn named(env: &TypeEnv, name: &str, args: Vec<RtType>) -> RtType {
    RtType::Named(env.lookup(name).unwrap_or(u32::MAX), args)
}

fn check_decode(text: &str, ty: &RtType, expect: Expect) {
    let env = test_env();
    let rendered = match decode(text, ty, &env) {
        Ok(value) => format!("ok {}", encode(&value, &env)),
        Err(d) => {
            let at = d.span.map_or(0, |s| s.start.offset);
            format!("{} @{at}: {}", d.code, d.message)
        }
    };
    expect.assert_eq(&rendered);
}

#[test]
fn encodes_the_canonical_form() {
    let env = test_env();
    let row = env.record_shape(env.lookup("Row").unwrap()).unwrap();
    let value = Value::tuple(vec![
        Value::Unit,
        Value::Bool(true),
        Value::I64(i64::MIN),
        Value::U64(u64::MAX),
        Value::list(vec![
            Value::F64(1.0),
            Value::F64(-0.0),
            Value::F64(2.5e-7),
            Value::F64(1e300),
            Value::F64(0.1),
            Value::F64(f64::NAN),
            Value::F64(f64::NEG_INFINITY),
        ]),
        Value::str("a\"b\\c\nd\u{1}é"),
        Value::Record(row, Rc::from(vec![Value::I64(3), Value::list(vec![])])),
        Value::variant(prelude::OPTION, prelude::NONE, None),
        Value::variant(prelude::OPTION, prelude::SOME, Some(Value::I64(4))),
        Value::variant(
            prelude::IO_ERROR,
            prelude::IO_FAILURE,
            Some(Value::Record(
                match env
                    .variant_decl(prelude::IO_ERROR, prelude::IO_FAILURE)
                    .map(|v| &v.payload)
                {
                    Some(crate::types::Payload::Record(s)) => *s,
                    _ => u32::MAX,
                },
                Rc::from(vec![Value::str("x.csv"), Value::str("boom")]),
            )),
        ),
        Value::Map(Rc::new(MapValue::from_iter([
            (Key(Value::F64(f64::NAN)), Value::Unit),
            (Key(Value::F64(-0.0)), Value::Unit),
            (Key(Value::F64(0.0)), Value::Unit),
        ]))),
    ]);
    expect![[r#"[null,true,-9223372036854775808,18446744073709551615,[1.0,-0.0,2.5e-7,1e300,0.1,"NaN","-Infinity"],"a\"b\\c\nd\u0001é",{"line":3,"cells":[]},{"tag":"None"},{"tag":"Some","value":4},{"tag":"IoFailure","path":"x.csv","message":"boom"},[[-0.0,null],[0.0,null],["NaN",null]]]"#]]
        .assert_eq(&encode(&value, &env));
}

#[test]
fn decodes_values_of_each_kind() {
    let env = test_env();
    let shape = named(&env, "Shape", vec![]);
    check_decode(
        r#"{"radius":2.0,"tag":"Circle"}"#,
        &shape,
        expect![[r#"ok {"tag":"Circle","radius":2.0}"#]],
    );
    check_decode(
        r#"{"tag":"Square","value":3}"#,
        &shape,
        expect![[r#"ok {"tag":"Square","value":3.0}"#]],
    );
    let pair = named(
        &env,
        "Pair",
        vec![RtType::Utf8, named(&env, "Option", vec![RtType::U64])],
    );
    check_decode(
        r#" { "left" : "\ud83d\ude00" , "right" : {"tag":"Some","value":7} } "#,
        &pair,
        expect![[r#"ok {"left":"😀","right":{"tag":"Some","value":7}}"#]],
    );
    let map = RtType::Map(Box::new(RtType::Utf8), Box::new(RtType::I64));
    check_decode(
        r#"[["b",1],["a",2],["b",3]]"#,
        &map,
        expect![[r#"ok [["a",2],["b",3]]"#]],
    );
}

#[test]
fn refuses_bad_documents_with_a_path() {
    let env = test_env();
    let rows = RtType::List(Box::new(named(&env, "Row", vec![])));
    check_decode(
        r#"[{"line":1,"cells":[1.0,"x"]}]"#,
        &rows,
        expect![[
            r#"json-type-mismatch @24: $[0].cells[1]: expected F64, found the string "x" (only "NaN", "Infinity", "-Infinity" stand for numbers)"#
        ]],
    );
    check_decode(
        r#"[{"line":1}]"#,
        &rows,
        expect![[r#"json-missing-field @1: $[0].cells: missing field "cells""#]],
    );
    check_decode(
        r#"[{"line":1,"cells":[],"x":0}]"#,
        &rows,
        expect![[r#"json-extra-field @22: $[0].x: unexpected field "x""#]],
    );
    check_decode(
        r#"[{"line":1,"line":2,"cells":[]}]"#,
        &rows,
        expect![[r#"json-duplicate-field @11: $[0].line: the key "line" appears twice"#]],
    );
    check_decode(
        r#"[{"line":9223372036854775808,"cells":[]}]"#,
        &rows,
        expect![[r#"json-int-range @9: $[0].line: 9223372036854775808 is out of the I64 range"#]],
    );
    check_decode(
        r#"[{"line":1.5,"cells":[]}]"#,
        &rows,
        expect![[
            r#"json-type-mismatch @9: $[0].line: expected I64, found the non-integer number 1.5"#
        ]],
    );
    check_decode(
        "[1e999]",
        &RtType::List(Box::new(RtType::F64)),
        expect![[
            r#"json-float-range @1: $[0]: 1e999 is out of the F64 range (write "Infinity" for an infinity)"#
        ]],
    );
    check_decode(
        "-1",
        &RtType::U64,
        expect![[r#"json-int-range @0: $: -1 is out of the U64 range"#]],
    );
    let shape = named(&env, "Shape", vec![]);
    check_decode(
        r#"{"tag":"Triangle"}"#,
        &shape,
        expect![[
            r#"json-unknown-tag @7: $.tag: "Triangle" is not a variant of Shape (expected one of Circle, Square, Empty)"#
        ]],
    );
    check_decode(
        r#"{"value":1}"#,
        &shape,
        expect![[r#"json-missing-field @0: $.tag: missing field "tag""#]],
    );
    check_decode(
        r#"{"tag":"Empty","value":1}"#,
        &shape,
        expect![[
            r#"json-extra-field @15: $.value: unexpected field "value": variant Empty has no payload"#
        ]],
    );
    check_decode(
        r#"{"tag":"Square"}"#,
        &shape,
        expect![[r#"json-missing-field @0: $.value: missing field "value""#]],
    );
    check_decode(
        "[1,",
        &RtType::List(Box::new(RtType::I64)),
        expect![[r#"json-syntax @3: invalid JSON: unexpected end of input"#]],
    );
    check_decode(
        "\"\\ud800\"",
        &RtType::Utf8,
        expect![[r#"json-syntax @7: invalid JSON: unpaired surrogate escape"#]],
    );
    check_decode(
        "01",
        &RtType::I64,
        expect![[r#"json-syntax @1: invalid JSON: unexpected text after the JSON value"#]],
    );
    let fs = RtType::Named(prelude::FS, vec![]);
    check_decode(
        "null",
        &fs,
        expect![[r#"json-type-mismatch @0: $: values of type Fs have no JSON form"#]],
    );
    check_decode(
        &"[".repeat(600),
        &RtType::Unit,
        expect![[r#"json-syntax @512: invalid JSON: JSON nested too deeply"#]],
    );
}

#[test]
fn decode_errors_carry_line_and_column() {
    let env = test_env();
    let error = decode(
        "[\n  true,\n  3]",
        &RtType::List(Box::new(RtType::Bool)),
        &env,
    )
    .err();
    let span = error
        .and_then(|d| d.span)
        .map(|s| (s.start.line, s.start.column));
    assert_eq!(span, Some((3, 3)));
}

#[test]
fn argument_arrays_are_positional() {
    let env = test_env();
    let values = decode_args("[1, \"x\"]", &[RtType::I64, RtType::Utf8], &env);
    assert_eq!(values.ok(), Some(vec![Value::I64(1), Value::str("x")]));
    let error = decode_args("[1]", &[RtType::I64, RtType::Utf8], &env).err();
    assert_eq!(error.map(|d| d.code), Some("json-type-mismatch".to_owned()));
}

fn awkward_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(-f64::NAN),
        Just(0.0),
        Just(-0.0),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(f64::from_bits(1)),
        Just(f64::MIN_POSITIVE / 3.0),
        Just(f64::MAX),
        any::<f64>(),
        any::<f64>(),
        (-1000i32..1000).prop_map(|n| f64::from(n) / 8.0),
    ]
}

fn type_strategy(env: &TypeEnv) -> impl Strategy<Value = RtType> + use<> {
    let row = named(env, "Row", vec![]);
    let shape = named(env, "Shape", vec![]);
    let pair = env.lookup("Pair").unwrap_or(u32::MAX);
    let leaf = prop_oneof![
        Just(RtType::Unit),
        Just(RtType::Bool),
        Just(RtType::I64),
        Just(RtType::U64),
        Just(RtType::F64),
        Just(RtType::Utf8),
        Just(RtType::Named(prelude::ORDERING, vec![])),
        Just(RtType::Named(prelude::IO_ERROR, vec![])),
        Just(row),
        Just(shape),
    ];
    leaf.prop_recursive(3, 16, 3, move |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| RtType::List(Box::new(t))),
            (inner.clone(), inner.clone()).prop_map(|(k, v)| RtType::Map(Box::new(k), Box::new(v))),
            prop::collection::vec(inner.clone(), 2..4).prop_map(RtType::Tuple),
            inner
                .clone()
                .prop_map(|t| RtType::Named(prelude::OPTION, vec![t])),
            (inner.clone(), inner.clone())
                .prop_map(|(a, e)| RtType::Named(prelude::RESULT, vec![a, e])),
            (inner.clone(), inner).prop_map(move |(a, b)| RtType::Named(pair, vec![a, b])),
        ]
    })
}

fn value_strategy(ty: &RtType, env: &Rc<TypeEnv>) -> BoxedStrategy<Value> {
    match ty {
        RtType::Unit => Just(Value::Unit).boxed(),
        RtType::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        RtType::I64 => any::<i64>().prop_map(Value::I64).boxed(),
        RtType::U64 => any::<u64>().prop_map(Value::U64).boxed(),
        RtType::F64 => awkward_f64().prop_map(Value::F64).boxed(),
        RtType::Utf8 => any::<String>().prop_map(|s| Value::str(&s)).boxed(),
        RtType::List(t) => prop::collection::vec(value_strategy(t, env), 0..4)
            .prop_map(|items| Value::List(List::from_vec(items)))
            .boxed(),
        RtType::Map(k, v) => {
            prop::collection::vec((value_strategy(k, env), value_strategy(v, env)), 0..4)
                .prop_map(|pairs| {
                    Value::Map(Rc::new(
                        pairs.into_iter().map(|(k, v)| (Key(k), v)).collect(),
                    ))
                })
                .boxed()
        }
        RtType::Tuple(ts) => ts
            .iter()
            .map(|t| value_strategy(t, env))
            .collect::<Vec<_>>()
            .prop_map(Value::tuple)
            .boxed(),
        RtType::Named(id, args) => {
            let id = *id;
            match env.decl(id).map(|d| d.body.clone()) {
                Some(TypeBody::Record(shape)) => record_strategy(env, shape, args)
                    .prop_map(move |f| Value::Record(shape, Rc::from(f)))
                    .boxed(),
                Some(TypeBody::Sum(variants)) => {
                    let options: Vec<BoxedStrategy<Value>> = variants
                        .iter()
                        .enumerate()
                        .map(|(tag, v)| {
                            let tag = tag as u32;
                            match &v.payload {
                                crate::types::Payload::None => {
                                    Just(Value::variant(id, tag, None)).boxed()
                                }
                                crate::types::Payload::Positional(t) => {
                                    value_strategy(&t.subst(args), env)
                                        .prop_map(move |p| Value::variant(id, tag, Some(p)))
                                        .boxed()
                                }
                                crate::types::Payload::Record(shape) => {
                                    let shape = *shape;
                                    record_strategy(env, shape, args)
                                        .prop_map(move |f| {
                                            Value::variant(
                                                id,
                                                tag,
                                                Some(Value::Record(shape, Rc::from(f))),
                                            )
                                        })
                                        .boxed()
                                }
                            }
                        })
                        .collect();
                    Union::new(options).boxed()
                }
                _ => Just(Value::Unit).boxed(),
            }
        }
        RtType::Param(_) | RtType::Func => Just(Value::Unit).boxed(),
    }
}

fn record_strategy(env: &Rc<TypeEnv>, shape: u32, args: &[RtType]) -> BoxedStrategy<Vec<Value>> {
    let fields = env
        .shape(shape)
        .map(|s| s.fields.clone())
        .unwrap_or_default();
    fields
        .iter()
        .map(|f| value_strategy(&f.ty.subst(args), env))
        .collect::<Vec<_>>()
        .boxed()
}

fn hash_of(value: &Value) -> u64 {
    use std::hash::Hasher;
    let mut state = rustc_hash::FxHasher::default();
    crate::order::hash_value(value, &mut state);
    state.finish()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn encode_then_decode_is_the_identity(
        (ty, value) in type_strategy(&test_env()).prop_flat_map(|ty| {
            let env = Rc::new(test_env());
            (Just(ty.clone()), value_strategy(&ty, &env))
        })
    ) {
        let env = test_env();
        let text = encode(&value, &env);
        let decoded = decode(&text, &ty, &env);
        prop_assert!(decoded.is_ok(), "{} failed to decode: {:?}", text, decoded.err());
        let decoded = decoded.unwrap_or(Value::Unit);
        prop_assert_eq!(&decoded, &value);
        prop_assert_eq!(crate::order::compare(&decoded, &value), std::cmp::Ordering::Equal);
        prop_assert_eq!(encode(&decoded, &env), text);
        // Equal values hash alike, though a decoded map's table was filled in
        // another order and NaN payloads may differ.
        prop_assert_eq!(hash_of(&decoded), hash_of(&value));
    }

    /// The quick comparison, equality and hashing agree with the structural
    /// order on any two values of one type (small types collide often).
    #[test]
    fn quick_comparison_equality_and_hash_agree_with_the_order(
        (a, b) in type_strategy(&test_env()).prop_flat_map(|ty| {
            let env = Rc::new(test_env());
            (value_strategy(&ty, &env), value_strategy(&ty, &env))
        })
    ) {
        use crate::order::{compare, compare_quick, equal};
        let order = compare(&a, &b);
        prop_assert_eq!(compare_quick(&a, &b), order);
        prop_assert_eq!(equal(&a, &b), order == std::cmp::Ordering::Equal);
        if order == std::cmp::Ordering::Equal {
            prop_assert_eq!(hash_of(&a), hash_of(&b));
        }
    }

    /// The word-wise scan of string text stops exactly where a byte-wise
    /// one would.
    #[test]
    fn word_scan_flags_exactly_the_bytes_that_end_a_run(bytes in any::<[u8; 8]>()) {
        let expected = bytes.iter().any(|&b| b == b'"' || b == b'\\' || b < 0x20);
        prop_assert_eq!(crate::json::parse::may_end_a_run(u64::from_le_bytes(bytes)), expected);
    }

    #[test]
    fn float_text_round_trips_bit_exactly(x in awkward_f64()) {
        let text = format_f64(x);
        if x.is_nan() {
            prop_assert_eq!(text, "NaN");
        } else if x.is_finite() {
            prop_assert!(text.contains(['.', 'e']), "{} lacks . or e", text);
            prop_assert_eq!(text.parse::<f64>().map(f64::to_bits), Ok(x.to_bits()));
        } else {
            prop_assert!(text == "Infinity" || text == "-Infinity");
        }
    }

    #[test]
    fn arbitrary_text_never_panics_the_decoder(text in ".{0,40}") {
        let env = test_env();
        let _ = decode(&text, &named(&env, "Shape", vec![]), &env);
        let _ = decode(&text, &RtType::List(Box::new(RtType::F64)), &env);
    }
}

/// A string without an escape is the text's own slice; one with an escape
/// owns its unescaped contents. Keys alike.
#[test]
fn strings_borrow_the_text_unless_they_hold_an_escape() {
    use std::borrow::Cow;

    let text = r#"{"plain": "value", "esc\u0041ped": "a\nb"}"#;
    let tree = parse::parse(text).ok().expect("parses");
    let parse::Kind::Object(members) = tree.kind else {
        panic!("an object")
    };
    let shown: Vec<(bool, &str, bool, &str)> = (members.iter())
        .map(|(key, _, value)| {
            let parse::Kind::String(value) = &value.kind else {
                panic!("a string")
            };
            let borrowed = |s: &Cow<'_, str>| matches!(s, Cow::Borrowed(_));
            (borrowed(key), &**key, borrowed(value), &**value)
        })
        .collect();
    assert_eq!(
        shown,
        [
            (true, "plain", true, "value"),
            (false, "escAped", false, "a\nb"),
        ]
    );
}
