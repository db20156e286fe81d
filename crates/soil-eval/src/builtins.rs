//! The prelude's values: ONE table, name → arity → implementation
//! (prelude semantics in docs; types live in the checker's prelude).

use std::rc::Rc;

use soil_rt::{
    Key, List, MapValue, Payload, Str, Value, compare, compare_quick, encode, map_for_update,
    prelude as ids,
};

use crate::codes::EvalCode;
use crate::machine::{Machine, Prepared, Res, option_payload};
use crate::world::IoFailure;

/// Index of a builtin in [`BUILTINS`].
pub type BuiltinId = u16;

pub(crate) struct Builtin {
    pub name: &'static str,
    pub arity: u8,
    /// Runs with the arguments at `stack[base..base + arity]`.
    pub run: fn(&mut Machine<'_>, usize) -> Res<Value>,
}

macro_rules! builtins {
    ($($name:tt / $arity:literal => $run:expr,)*) => {
        pub(crate) static BUILTINS: &[Builtin] = &[
            $(Builtin { name: $name, arity: $arity, run: $run },)*
        ];
    };
}

/// The largest list `range` builds; beyond it the run panics instead of
/// exhausting memory.
const MAX_RANGE: i64 = 100_000_000;

builtins! {
    "nan" / 0 => |_, _| Ok(Value::F64(f64::NAN)),
    "infinity" / 0 => |_, _| Ok(Value::F64(f64::INFINITY)),
    "panic" / 1 => |m, b| {
        let message = m.arg_str(b, 0)?;
        Err(m.fail(EvalCode::RuntimePanic, message.to_string()))
    },
    "compare" / 2 => |m, b| {
        let tag = match compare(&m.stack[b], &m.stack[b + 1]) {
            std::cmp::Ordering::Less => ids::LESS,
            std::cmp::Ordering::Equal => ids::EQUAL,
            std::cmp::Ordering::Greater => ids::GREATER,
        };
        Ok(Value::variant(ids::ORDERING, tag, None))
    },
    "min" / 2 => |m, b| {
        let pick = if compare(&m.stack[b], &m.stack[b + 1]).is_le() { 0 } else { 1 };
        Ok(m.take(b, pick))
    },
    "max" / 2 => |m, b| {
        let pick = if compare(&m.stack[b], &m.stack[b + 1]).is_ge() { 0 } else { 1 };
        Ok(m.take(b, pick))
    },
    // Lists
    "len" / 1 => |m, b| Ok(Value::I64(m.arg_list(b, 0)?.len() as i64)),
    "at" / 2 => |m, b| {
        let xs = m.arg_list(b, 0)?;
        let i = m.arg_i64(b, 1)?;
        match index(&xs, i) {
            Some(v) => Ok(v.clone()),
            None => Err(m.fail(EvalCode::RuntimePanic, format!("index {i} out of range for a list of length {}", xs.len()))),
        }
    },
    "get" / 2 => |m, b| {
        let xs = m.arg_list(b, 0)?;
        let i = m.arg_i64(b, 1)?;
        Ok(option(index(&xs, i).cloned()))
    },
    "first" / 1 => |m, b| Ok(option(m.arg_list(b, 0)?.get(0).cloned())),
    "last" / 1 => |m, b| {
        let xs = m.arg_list(b, 0)?;
        Ok(option(xs.as_slice().last().cloned()))
    },
    "push" / 2 => |m, b| {
        let xs = m.arg_list(b, 0)?;
        let x = m.take(b, 1);
        Ok(Value::List(xs.push(x)))
    },
    "append" / 2 => |m, b| {
        let xs = m.arg_list(b, 0)?;
        let ys = m.arg_list(b, 1)?;
        Ok(Value::List(xs.concat(ys)))
    },
    "concat" / 1 => |m, b| {
        let xss = m.arg_list(b, 0)?;
        let total = xss.iter().map(|xs| if let Value::List(xs) = xs { xs.len() } else { 0 }).sum();
        let mut out = Vec::with_capacity(total);
        // Each inner list is released once its elements are out, so the
        // lists and their concatenation are not all held at once.
        for xs in xss.into_values() {
            append_list(m, &mut out, xs)?;
        }
        Ok(Value::list(out))
    },
    "reverse" / 1 => |m, b| {
        let xs = m.arg_list(b, 0)?;
        Ok(Value::list(xs.iter().rev().cloned().collect()))
    },
    "range" / 2 => |m, b| {
        let from = m.arg_i64(b, 0)?;
        let to = m.arg_i64(b, 1)?;
        if to.saturating_sub(from) > MAX_RANGE {
            return Err(m.fail(EvalCode::RuntimePanic, format!("range {from} {to} is too large (more than {MAX_RANGE} elements)")));
        }
        Ok(Value::list((from..to.max(from)).map(Value::I64).collect()))
    },
    "take" / 2 => |m, b| {
        let n = m.arg_i64(b, 0)?;
        let xs = m.arg_list(b, 1)?;
        Ok(Value::List(xs.slice(0, clamp_index(n))))
    },
    "drop" / 2 => |m, b| {
        let n = m.arg_i64(b, 0)?;
        let xs = m.arg_list(b, 1)?;
        Ok(Value::List(xs.skip(clamp_index(n))))
    },
    "slice" / 3 => |m, b| {
        let xs = m.arg_list(b, 0)?;
        let from = m.arg_i64(b, 1)?;
        let to = m.arg_i64(b, 2)?;
        Ok(Value::List(xs.slice(clamp_index(from), clamp_index(to))))
    },
    "zip" / 2 => |m, b| {
        let xs = m.arg_list(b, 0)?;
        let ys = m.arg_list(b, 1)?;
        Ok(Value::list(xs.iter().zip(ys.iter()).map(|(x, y)| Value::pair(x.clone(), y.clone())).collect()))
    },
    "enumerate" / 1 => |m, b| {
        let xs = m.arg_list(b, 0)?;
        Ok(Value::list(xs.iter().enumerate().map(|(i, x)| Value::pair(Value::I64(i as i64), x.clone())).collect()))
    },
    // `map`, `filter` and `fold` hand each element to the function by value
    // (moved out of a list nothing else holds), and `map` and `filter` build
    // their result in the storage of such a list.
    "map" / 2 => |m, b| {
        let f = m.take(b, 0);
        let f = m.prepare(&f, 1);
        let mut items = m.arg_list(b, 1)?.into_vec();
        for item in items.iter_mut() {
            let x = std::mem::replace(item, Value::Unit);
            *item = m.apply_prepared(&f, x)?;
        }
        Ok(Value::list(items))
    },
    "filter" / 2 => |m, b| {
        let keep = m.take(b, 0);
        let keep = m.prepare(&keep, 1);
        let mut items = m.arg_list(b, 1)?.into_vec();
        let mut kept = 0;
        for i in 0..items.len() {
            let x = std::mem::replace(&mut items[i], Value::Unit);
            if m.test(&keep, &x)? {
                items[kept] = x;
                kept += 1;
            }
        }
        items.truncate(kept);
        Ok(Value::list(items))
    },
    "fold" / 3 => |m, b| {
        let step = m.take(b, 0);
        let step = m.prepare(&step, 2);
        let mut acc = m.take(b, 1);
        let xs = m.arg_list(b, 2)?;
        for x in xs.into_values() {
            let base = m.stack.len();
            m.stack.push(acc);
            m.stack.push(x);
            acc = m.call_prepared(&step, base)?;
        }
        Ok(acc)
    },
    "any" / 2 => |m, b| {
        let test = m.take(b, 0);
        let test = m.prepare(&test, 1);
        let xs = m.arg_list(b, 1)?;
        for x in xs.iter() {
            if m.test(&test, x)? {
                return Ok(Value::Bool(true));
            }
        }
        Ok(Value::Bool(false))
    },
    "all" / 2 => |m, b| {
        let test = m.take(b, 0);
        let test = m.prepare(&test, 1);
        let xs = m.arg_list(b, 1)?;
        for x in xs.iter() {
            if !m.test(&test, x)? {
                return Ok(Value::Bool(false));
            }
        }
        Ok(Value::Bool(true))
    },
    "find" / 2 => |m, b| {
        let test = m.take(b, 0);
        let test = m.prepare(&test, 1);
        let xs = m.arg_list(b, 1)?;
        for x in xs.iter() {
            if m.test(&test, x)? {
                return Ok(option(Some(x.clone())));
            }
        }
        Ok(option(None))
    },
    "minimum" / 1 => |m, b| extreme(m, b, std::cmp::Ordering::Less, "minimum"),
    "maximum" / 1 => |m, b| extreme(m, b, std::cmp::Ordering::Greater, "maximum"),
    "sum_i64" / 1 => |m, b| {
        let xs = m.arg_list(b, 0)?;
        let mut total: i64 = 0;
        for x in xs.iter() {
            match x {
                Value::I64(n) => total = total.wrapping_add(*n),
                other => return Err(m.type_error(format!("sum_i64 needs I64 elements, found {}", other.kind()))),
            }
        }
        Ok(Value::I64(total))
    },
    "sum_f64" / 1 => |m, b| {
        let xs = m.arg_list(b, 0)?;
        let mut total = 0.0;
        for x in xs.iter() {
            match x {
                Value::F64(v) => total += v,
                other => return Err(m.type_error(format!("sum_f64 needs F64 elements, found {}", other.kind()))),
            }
        }
        Ok(Value::F64(total))
    },
    "sort_list" / 1 => |m, b| {
        let mut items = m.arg_list(b, 0)?.into_vec();
        items.sort_by(compare_quick);
        Ok(Value::list(items))
    },
    "sort_list_by" / 2 => |m, b| {
        let key = m.take(b, 0);
        let key = m.prepare(&key, 1);
        let xs = m.arg_list(b, 1)?;
        let mut keyed = Vec::with_capacity(xs.len());
        for x in xs.into_vec() {
            let k = m.apply_prepared(&key, x.clone())?;
            keyed.push((k, x));
        }
        // `sort_by` is stable: elements with equal keys keep their order.
        keyed.sort_by(|a, b| compare_quick(&a.0, &b.0));
        Ok(Value::list(keyed.into_iter().map(|(_, x)| x).collect()))
    },
    // Strings (lengths and slices count Unicode scalar values)
    "str_len" / 1 => |m, b| Ok(Value::I64(m.arg_str(b, 0)?.chars().count() as i64)),
    "str_slice" / 3 => |m, b| {
        let s = m.arg_str(b, 0)?;
        let from = clamp_index(m.arg_i64(b, 1)?);
        let to = clamp_index(m.arg_i64(b, 2)?);
        // Byte offsets of the characters at `from` and `to`, clamped.
        let mut offsets = s.char_indices().map(|(at, _)| at).chain([s.len()]);
        let start = offsets.nth(from).unwrap_or(s.len());
        let end = if to > from { offsets.nth(to - from - 1).unwrap_or(s.len()) } else { start };
        Ok(Value::Str(s.piece(&s[start..end])))
    },
    "split" / 2 => |m, b| {
        let s = m.arg_str(b, 0)?;
        let sep = m.arg_str(b, 1)?;
        if sep.is_empty() {
            return Ok(Value::list(vec![Value::Str(s)]));
        }
        Ok(Value::list(match sep.as_bytes() {
            [byte] if byte.is_ascii() => split_at_byte(&s, *byte),
            _ => s.split(sep.as_str()).map(|part| Value::Str(s.piece(part))).collect(),
        }))
    },
    "join" / 2 => |m, b| {
        let sep = m.arg_str(b, 0)?;
        let parts = m.arg_list(b, 1)?;
        let mut out = String::new();
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                out.push_str(&sep);
            }
            match part {
                Value::Str(p) => out.push_str(p),
                other => return Err(m.type_error(format!("join needs Utf8 parts, found {}", other.kind()))),
            }
        }
        Ok(Value::Str(Str::from(out)))
    },
    "trim" / 1 => |m, b| {
        let s = m.arg_str(b, 0)?;
        Ok(Value::Str(s.piece(s.trim())))
    },
    "lines" / 1 => |m, b| {
        let s = m.arg_str(b, 0)?;
        Ok(Value::list(s.lines().map(|line| Value::Str(s.piece(line))).collect()))
    },
    "chars" / 1 => |m, b| {
        let s = m.arg_str(b, 0)?;
        Ok(Value::list(s.chars().map(|c| Value::str(c.encode_utf8(&mut [0; 4]))).collect()))
    },
    // Characters: a character is a one-character Utf8; the classes hold for a
    // non-empty string whose every character is in the class.
    "is_alpha" / 1 => |m, b| Ok(Value::Bool(all_chars(&m.arg_str(b, 0)?, char::is_alphabetic))),
    "is_digit" / 1 => |m, b| Ok(Value::Bool(all_chars(&m.arg_str(b, 0)?, |c| c.is_ascii_digit()))),
    "is_space" / 1 => |m, b| Ok(Value::Bool(all_chars(&m.arg_str(b, 0)?, char::is_whitespace))),
    "code_point" / 1 => |m, b| {
        let s = m.arg_str(b, 0)?;
        let mut chars = s.chars();
        Ok(option(match (chars.next(), chars.next()) {
            (Some(c), None) => Some(Value::I64(i64::from(u32::from(c)))),
            _ => None,
        }))
    },
    "from_code_point" / 1 => |m, b| {
        let n = m.arg_i64(b, 0)?;
        let c = u32::try_from(n).ok().and_then(char::from_u32);
        Ok(option(c.map(|c| Value::str(c.encode_utf8(&mut [0; 4])))))
    },
    "str_contains" / 2 => |m, b| {
        let (s, needle) = (m.arg_str(b, 0)?, m.arg_str(b, 1)?);
        Ok(Value::Bool(s.contains(needle.as_str())))
    },
    "starts_with" / 2 => |m, b| {
        let (s, prefix) = (m.arg_str(b, 0)?, m.arg_str(b, 1)?);
        Ok(Value::Bool(s.starts_with(prefix.as_str())))
    },
    "ends_with" / 2 => |m, b| {
        let (s, suffix) = (m.arg_str(b, 0)?, m.arg_str(b, 1)?);
        Ok(Value::Bool(s.ends_with(suffix.as_str())))
    },
    "replace" / 3 => |m, b| {
        let (s, from, to) = (m.arg_str(b, 0)?, m.arg_str(b, 1)?, m.arg_str(b, 2)?);
        if from.is_empty() {
            return Ok(Value::Str(s));
        }
        Ok(Value::Str(Str::from(s.replace(from.as_str(), &to))))
    },
    "to_upper" / 1 => |m, b| Ok(Value::Str(Str::from(m.arg_str(b, 0)?.to_uppercase()))),
    "to_lower" / 1 => |m, b| Ok(Value::Str(Str::from(m.arg_str(b, 0)?.to_lowercase()))),
    "parse_i64" / 1 => |m, b| Ok(option(m.arg_str(b, 0)?.parse::<i64>().ok().map(Value::I64))),
    "parse_f64" / 1 => |m, b| Ok(option(m.arg_str(b, 0)?.parse::<f64>().ok().map(Value::F64))),
    "show" / 1 => |m, b| Ok(Value::Str(Str::from(encode(&m.stack[b], &m.program.types)))),
    // Numbers
    "to_f64" / 1 => |m, b| Ok(Value::F64(m.arg_i64(b, 0)? as f64)),
    "truncate" / 1 => |m, b| {
        let x = m.arg_f64(b, 0)?.trunc();
        // 2^63 is exactly representable; i64 covers [-2^63, 2^63).
        let in_range = (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x);
        Ok(option(in_range.then(|| Value::I64(x as i64))))
    },
    "to_u64" / 1 => |m, b| Ok(option(u64::try_from(m.arg_i64(b, 0)?).ok().map(Value::U64))),
    "u64_to_i64" / 1 => |m, b| Ok(option(i64::try_from(m.arg_u64(b, 0)?).ok().map(Value::I64))),
    "abs" / 1 => |m, b| Ok(Value::F64(m.arg_f64(b, 0)?.abs())),
    "abs_i64" / 1 => |m, b| Ok(Value::I64(m.arg_i64(b, 0)?.wrapping_abs())),
    "floor" / 1 => |m, b| Ok(Value::F64(m.arg_f64(b, 0)?.floor())),
    "ceil" / 1 => |m, b| Ok(Value::F64(m.arg_f64(b, 0)?.ceil())),
    "sqrt" / 1 => |m, b| Ok(Value::F64(m.arg_f64(b, 0)?.sqrt())),
    "is_nan" / 1 => |m, b| Ok(Value::Bool(m.arg_f64(b, 0)?.is_nan())),
    "is_finite" / 1 => |m, b| Ok(Value::Bool(m.arg_f64(b, 0)?.is_finite())),
    // Maps
    "map_empty" / 0 => |_, _| Ok(Value::Map(Rc::new(MapValue::new()))),
    "map_insert" / 3 => |m, b| {
        let key = m.take(b, 0);
        let value = m.take(b, 1);
        let mut map = m.arg_map(b, 2)?;
        map_for_update(&mut map).insert(Key(key), value);
        Ok(Value::Map(map))
    },
    "map_get" / 2 => |m, b| {
        let key = Key(m.take(b, 0));
        let map = m.arg_map(b, 1)?;
        Ok(option(map.get(&key).cloned()))
    },
    "map_remove" / 2 => |m, b| {
        let key = Key(m.take(b, 0));
        let mut map = m.arg_map(b, 1)?;
        if map.contains_key(&key) {
            map_for_update(&mut map).remove(&key);
        }
        Ok(Value::Map(map))
    },
    "map_has" / 2 => |m, b| {
        let key = Key(m.take(b, 0));
        Ok(Value::Bool(m.arg_map(b, 1)?.contains_key(&key)))
    },
    "map_size" / 1 => |m, b| Ok(Value::I64(m.arg_map(b, 0)?.len() as i64)),
    "map_keys" / 1 => |m, b| Ok(Value::list(m.arg_map(b, 0)?.keys().map(|k| k.0.clone()).collect())),
    "map_values" / 1 => |m, b| Ok(Value::list(m.arg_map(b, 0)?.values().cloned().collect())),
    "map_to_list" / 1 => |m, b| {
        let map = m.arg_map(b, 0)?;
        Ok(Value::list(map.iter().map(|(k, v)| Value::pair(k.0.clone(), v.clone())).collect()))
    },
    "map_from_list" / 1 => |m, b| {
        let entries = m.arg_list(b, 0)?;
        let mut map = MapValue::new();
        for entry in entries.iter() {
            match entry {
                Value::Tuple(pair) if pair.len() == 2 => {
                    map.insert(Key(pair[0].clone()), pair[1].clone());
                }
                other => return Err(m.type_error(format!("map_from_list needs (key, value) pairs, found {}", other.kind()))),
            }
        }
        Ok(Value::Map(Rc::new(map)))
    },
    // Option / Result
    "unwrap_or" / 2 => |m, b| match option_payload(m.take(b, 0)) {
        Ok(Some(value)) => Ok(value),
        Ok(None) => Ok(m.take(b, 1)),
        Err(other) => Err(m.type_error(format!("unwrap_or needs an Option, found {}", other.kind()))),
    },
    "option_map" / 2 => |m, b| {
        let f = m.take(b, 0);
        match option_payload(m.take(b, 1)) {
            Ok(Some(value)) => {
                let mapped = m.apply(&f, std::slice::from_ref(&value))?;
                Ok(option(Some(mapped)))
            }
            Ok(None) => Ok(option(None)),
            Err(other) => Err(m.type_error(format!("option_map needs an Option, found {}", other.kind()))),
        }
    },
    "result_map" / 2 => |m, b| {
        let f = m.take(b, 0);
        match m.take(b, 1) {
            Value::Variant { tag: ids::OK, payload: Some(p), .. } => {
                let mapped = m.apply(&f, std::slice::from_ref(&*p))?;
                Ok(Value::variant(ids::RESULT, ids::OK, Some(mapped)))
            }
            err @ Value::Variant { tag: ids::ERR, .. } => Ok(err),
            other => Err(m.type_error(format!("result_map needs a Result, found {}", other.kind()))),
        }
    },
    "and_then" / 2 => |m, b| {
        let f = m.take(b, 0);
        match m.take(b, 1) {
            Value::Variant { tag: ids::OK, payload: Some(p), .. } => m.apply(&f, std::slice::from_ref(&*p)),
            err @ Value::Variant { tag: ids::ERR, .. } => Ok(err),
            other => Err(m.type_error(format!("and_then needs a Result, found {}", other.kind()))),
        }
    },
    // Capabilities: the token argument only proves the capability was granted.
    "read_text" / 2 => |m, b| {
        let path = m.arg_str(b, 1)?;
        let outcome = m.world.fs.read_text(&path);
        Ok(match outcome {
            Ok(text) => Value::variant(ids::RESULT, ids::OK, Some(Value::Str(Str::from(text)))),
            Err(failure) => io_error(m, &path, failure),
        })
    },
    "write_text" / 3 => |m, b| {
        let path = m.arg_str(b, 1)?;
        let text = m.arg_str(b, 2)?;
        let outcome = m.world.fs.write_text(&path, &text);
        Ok(match outcome {
            Ok(()) => Value::variant(ids::RESULT, ids::OK, Some(Value::Unit)),
            Err(failure) => io_error(m, &path, failure),
        })
    },
    "now_seconds" / 1 => |m, _| Ok(Value::I64(m.world.clock.now_seconds())),
    "print_line" / 2 => |m, b| {
        let line = m.arg_str(b, 1)?;
        m.world.stdout.print_line(&line);
        Ok(Value::Unit)
    },
    // Fused forms: the compiler puts one in place of a nest of prelude calls
    // that it computes without the intermediate value ([`fuse`]). Their names
    // are not identifiers, so no program can name them.
    FUSED_TAKE_SORTED / 2 => |m, b| {
        let n = clamp_index(m.arg_i64(b, 0)?);
        let items = m.arg_list(b, 1)?.into_vec();
        let keyed = items.into_iter().map(|x| (x, Value::Unit)).collect();
        Ok(Value::list(first_sorted(keyed, n).into_iter().map(|(x, _)| x).collect()))
    },
    FUSED_TAKE_SORTED_BY / 3 => |m, b| {
        let n = clamp_index(m.arg_i64(b, 0)?);
        let key = m.take(b, 1);
        let key = m.prepare(&key, 1);
        let xs = m.arg_list(b, 2)?;
        let mut keyed = Vec::with_capacity(xs.len());
        for x in xs.into_vec() {
            let k = m.apply_prepared(&key, x.clone())?;
            keyed.push((k, x));
        }
        Ok(Value::list(first_sorted(keyed, n).into_iter().map(|(_, x)| x).collect()))
    },
    FUSED_CONCAT_MAP / 2 => |m, b| {
        let f = m.take(b, 0);
        let f = m.prepare(&f, 1);
        let mut out = Vec::new();
        // Each list `f` makes is emptied into the result and let go before
        // the next is made, so its storage is the next one's.
        for x in m.arg_list(b, 1)?.into_values() {
            let xs = m.apply_prepared(&f, x)?;
            append_list(m, &mut out, xs)?;
        }
        Ok(Value::list(out))
    },
    FUSED_MAP_GET_OR / 3 => |m, b| {
        let key = Key(m.take(b, 0));
        let map = m.arg_map(b, 1)?;
        Ok(match map.get(&key) {
            Some(value) => value.clone(),
            None => m.take(b, 2),
        })
    },
}

/// `unwrap_or (map_get key m) default`: the value of `key`, or `default`,
/// without building the `Option` in between (a count's `map_insert w
/// (unwrap_or (map_get w counts) 0 + 1) counts` does it once per word).
const FUSED_MAP_GET_OR: &str = "unwrap_or (map_get key m) default";

/// The id of the fused `unwrap_or (map_get key m) default`.
pub(crate) fn fused_map_get_or() -> BuiltinId {
    lookup(FUSED_MAP_GET_OR).unwrap_or(BuiltinId::MAX)
}

/// `take n (sort_list xs)` and `take n (sort_list_by key xs)`: the first `n`
/// of the sorted list, selected without sorting the rest.
const FUSED_TAKE_SORTED: &str = "take n (sort_list xs)";
const FUSED_TAKE_SORTED_BY: &str = "take n (sort_list_by key xs)";

/// Moves the elements of the list `xs` onto `out` (copies them when the list
/// is shared): one list of `concat`'s.
fn append_list(m: &Machine<'_>, out: &mut Vec<Value>, xs: Value) -> Res<()> {
    match xs {
        Value::List(xs) => match xs.into_unique_vec() {
            Ok(mut items) => out.append(&mut items),
            Err(shared) => out.extend_from_slice(shared.as_slice()),
        },
        other => {
            return Err(m.type_error(format!(
                "concat needs a list of lists, found a {}",
                other.kind()
            )));
        }
    }
    Ok(())
}

/// `concat (map f xs)`: `f`'s lists end to end, each emptied into the result
/// as it is made instead of all of them held until `concat` (the lines of a
/// text split into words).
const FUSED_CONCAT_MAP: &str = "concat (map f xs)";

/// The fused builtin that computes `outer .. (inner a..) ..` when the compiler
/// may put it in place of that nest, and the position of the inner call
/// among the outer call's arguments. The fused builtin takes the outer
/// call's arguments with the inner call's in its place.
pub(crate) fn fuse(outer: BuiltinId, inner: BuiltinId) -> Option<(BuiltinId, usize)> {
    let (fused, position) = match (BUILTINS[outer as usize].name, BUILTINS[inner as usize].name) {
        ("unwrap_or", "map_get") => (FUSED_MAP_GET_OR, 0),
        ("take", "sort_list") => (FUSED_TAKE_SORTED, 1),
        ("take", "sort_list_by") => (FUSED_TAKE_SORTED_BY, 1),
        ("concat", "map") => (FUSED_CONCAT_MAP, 0),
        _ => return None,
    };
    lookup(fused).map(|id| (id, position))
}

/// The first `n` of `keyed` in ascending order of key, equal keys in their
/// order in `keyed` (what a stable sort puts first), found by selection when
/// `n` is a small part of the list: O(len) comparisons, then O(n log n).
fn first_sorted(keyed: Vec<(Value, Value)>, n: usize) -> Vec<(Value, Value)> {
    let mut keyed: Vec<(Value, usize, Value)> = keyed
        .into_iter()
        .enumerate()
        .map(|(i, (k, x))| (k, i, x))
        .collect();
    // The position breaks ties, so the order is total and selection agrees
    // with the stable sort.
    let order = |a: &(Value, usize, Value), b: &(Value, usize, Value)| {
        compare_quick(&a.0, &b.0).then(a.1.cmp(&b.1))
    };
    if n < keyed.len() {
        keyed.select_nth_unstable_by(n, order);
        keyed.truncate(n);
    }
    keyed.sort_unstable_by(order);
    keyed.into_iter().map(|(k, _, x)| (k, x)).collect()
}

/// The names of every prelude value, in table order (the fused forms are
/// not prelude values).
pub fn prelude_value_names() -> impl Iterator<Item = &'static str> {
    BUILTINS
        .iter()
        .map(|b| b.name)
        .filter(|name| !name.contains(' '))
}

pub(crate) fn lookup(name: &str) -> Option<BuiltinId> {
    BUILTINS
        .iter()
        .position(|b| b.name == name)
        .map(|i| i as BuiltinId)
}

/// `split s sep` for a one-byte (ASCII) separator, the common case (a space,
/// a comma, a tab): the separators are found eight bytes at a time, counted
/// first so the list is sized once.
fn split_at_byte(s: &Str, sep: u8) -> Vec<Value> {
    let bytes = s.as_bytes();
    let mut count = 0;
    for_each_byte(bytes, sep, |_| count += 1);
    let mut parts = Vec::with_capacity(count + 1);
    let mut start = 0;
    // An ASCII separator sits between characters.
    for_each_byte(bytes, sep, |at| {
        parts.push(Value::Str(s.piece_at(start, at)));
        start = at + 1;
    });
    parts.push(Value::Str(s.piece_at(start, bytes.len())));
    parts
}

/// Calls `found` with each position of `byte` in `bytes`, in order. Each
/// eight bytes are tested as one word: a byte equal to `byte` becomes zero
/// under the exclusive or, and the arithmetic below sets the top bit of
/// exactly the zero bytes.
fn for_each_byte(bytes: &[u8], byte: u8, mut found: impl FnMut(usize)) {
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let pattern = u64::from_le_bytes([byte; 8]);
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word) ^ pattern;
        let mut zeros = !((((x & LOW) + LOW) | x) | LOW);
        while zeros != 0 {
            found(at + (zeros.trailing_zeros() / 8) as usize);
            zeros &= zeros - 1;
        }
        at += 8;
    }
    for (i, &b) in chunks.remainder().iter().enumerate() {
        if b == byte {
            found(at + i);
        }
    }
}

fn option(value: Option<Value>) -> Value {
    match value {
        Some(v) => Value::variant(ids::OPTION, ids::SOME, Some(v)),
        None => Value::variant(ids::OPTION, ids::NONE, None),
    }
}

fn all_chars(s: &str, class: impl Fn(char) -> bool) -> bool {
    !s.is_empty() && s.chars().all(class)
}

fn index(xs: &List, i: i64) -> Option<&Value> {
    usize::try_from(i).ok().and_then(|i| xs.get(i))
}

/// A count or position clamped to `[0, usize::MAX]`.
fn clamp_index(n: i64) -> usize {
    usize::try_from(n.max(0)).unwrap_or(usize::MAX)
}

fn extreme(m: &mut Machine<'_>, b: usize, wanted: std::cmp::Ordering, name: &str) -> Res<Value> {
    let xs = m.arg_list(b, 0)?;
    let mut best: Option<&Value> = None;
    for x in xs.iter() {
        best = match best {
            Some(current) if compare(x, current) != wanted => Some(current),
            _ => Some(x),
        };
    }
    match best {
        Some(v) => Ok(v.clone()),
        None => Err(m.fail(EvalCode::RuntimePanic, format!("{name} of an empty list"))),
    }
}

fn io_error(m: &Machine<'_>, path: &str, failure: IoFailure) -> Value {
    let (tag, mut fields) = match failure {
        IoFailure::NotFound => (ids::NOT_FOUND, vec![Value::str(path)]),
        IoFailure::PermissionDenied => (ids::PERMISSION_DENIED, vec![Value::str(path)]),
        IoFailure::Other(message) => (
            ids::IO_FAILURE,
            vec![Value::str(path), Value::str(&message)],
        ),
    };
    let shape = match m
        .program
        .types
        .variant_decl(ids::IO_ERROR, tag)
        .map(|v| &v.payload)
    {
        Some(Payload::Record(shape)) => *shape,
        _ => {
            fields.truncate(1);
            u32::MAX
        }
    };
    let error = Value::variant(
        ids::IO_ERROR,
        tag,
        Some(Value::Record(shape, Rc::from(fields))),
    );
    Value::variant(ids::RESULT, ids::ERR, Some(error))
}

/// Typed access to builtin arguments; a mismatch is a `runtime-type-error`
/// (only an ill-typed program reaches one).
impl Machine<'_> {
    pub(crate) fn arg_i64(&self, base: usize, i: usize) -> Res<i64> {
        match &self.stack[base + i] {
            Value::I64(n) => Ok(*n),
            other => Err(self.type_error(format!("expected I64, found {}", other.kind()))),
        }
    }

    pub(crate) fn arg_u64(&self, base: usize, i: usize) -> Res<u64> {
        match &self.stack[base + i] {
            Value::U64(n) => Ok(*n),
            other => Err(self.type_error(format!("expected U64, found {}", other.kind()))),
        }
    }

    pub(crate) fn arg_f64(&self, base: usize, i: usize) -> Res<f64> {
        match &self.stack[base + i] {
            Value::F64(x) => Ok(*x),
            other => Err(self.type_error(format!("expected F64, found {}", other.kind()))),
        }
    }

    pub(crate) fn arg_str(&self, base: usize, i: usize) -> Res<Str> {
        match &self.stack[base + i] {
            Value::Str(s) => Ok(s.clone()),
            other => Err(self.type_error(format!("expected Utf8, found {}", other.kind()))),
        }
    }

    /// Takes a list argument (moving it, so a uniquely owned list stays unique).
    pub(crate) fn arg_list(&mut self, base: usize, i: usize) -> Res<List> {
        match self.take(base, i) {
            Value::List(xs) => Ok(xs),
            other => Err(self.type_error(format!("expected a List, found {}", other.kind()))),
        }
    }

    pub(crate) fn arg_map(&mut self, base: usize, i: usize) -> Res<Rc<MapValue>> {
        match self.take(base, i) {
            Value::Map(map) => Ok(map),
            other => Err(self.type_error(format!("expected a Map, found {}", other.kind()))),
        }
    }

    /// Applies a predicate and insists on a Bool; a comparison of the
    /// argument with a constant is decided on it where it lies, with no
    /// frame, no copy and no call (the `\w -> w != ""` of a filter over a
    /// text's words, a tenth of a word count's time as a call).
    pub(crate) fn test(&mut self, f: &Prepared<'_>, x: &Value) -> Res<bool> {
        if let Some(comparison) = f.comparison()
            && let Some(holds) = self.decide(comparison, x)
        {
            return Ok(holds);
        }
        match self.apply_prepared(f, x.clone())? {
            Value::Bool(b) => Ok(b),
            other => {
                Err(self.type_error(format!("a predicate returned {}, not a Bool", other.kind())))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_search_finds_exactly_the_naive_positions() {
        let texts: [&[u8]; 5] = [
            b"",
            b"a b  c",
            b"one two three four five six seven eight nine",
            "déjà  vu \u{7f}\u{80} é ".as_bytes(),
            &[
                b' ', 0x80, 0xa0, b' ', 0xff, 0x20, 0x21, 0x1f, b' ', b' ', b' ', b' ', b' ',
            ],
        ];
        for text in texts {
            for byte in [b' ', b',', 0x7f, 0x21] {
                let mut found = Vec::new();
                for_each_byte(text, byte, |at| found.push(at));
                let naive: Vec<usize> = (0..text.len()).filter(|&i| text[i] == byte).collect();
                assert_eq!(found, naive, "{text:?} {byte}");
            }
        }
    }

    /// The name set itself is cross-checked against the checker's prelude in
    /// `tests/prelude.rs`; here, that no name is implemented twice.
    #[test]
    fn no_prelude_value_is_implemented_twice() {
        let names: Vec<&str> = prelude_value_names().collect();
        let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len());
        assert_eq!(
            lookup("map_from_list").map(|b| BUILTINS[b as usize].arity),
            Some(1)
        );
    }
}
