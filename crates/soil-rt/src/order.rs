//! The F64 total order (design §3.7) and the structural order on all values.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use crate::value::Value;

/// The F64 total order: every NaN (any payload, either sign) is one logical
/// value sorting after `+inf`; otherwise IEEE `totalOrder`, so `-0.0 < 0.0`.
#[inline]
pub fn f64_total_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.total_cmp(&b),
    }
}

/// The structural order behind `==`, `<`, `compare`, sorting and map keys
/// (prelude semantics): scalars by value (F64 by [`f64_total_cmp`]), strings
/// by Unicode scalar sequence, lists and tuples lexicographically, records field
/// by field in declaration order, sums by variant index then payload, maps by
/// their ascending entry lists. Well-typed programs never compare values of
/// different kinds or functions; if they do, the result is still a total order
/// (kinds by rank, functions by identity) rather than a crash.
pub fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Unit, Value::Unit) => Ordering::Equal,
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::I64(x), Value::I64(y)) => x.cmp(y),
        (Value::U64(x), Value::U64(y)) => x.cmp(y),
        (Value::F64(x), Value::F64(y)) => f64_total_cmp(*x, *y),
        // UTF-8 byte order is Unicode scalar order.
        (Value::Str(x), Value::Str(y)) => x.cmp_bytes(y),
        (Value::List(x), Value::List(y)) => compare_slices(x.as_slice(), y.as_slice()),
        (Value::Tuple(x), Value::Tuple(y)) => compare_slices(x, y),
        (Value::Record(sx, x), Value::Record(sy, y)) => {
            sx.cmp(sy).then_with(|| compare_slices(x, y))
        }
        (
            Value::Variant {
                ty: tx,
                tag: gx,
                payload: px,
            },
            Value::Variant {
                ty: ty_,
                tag: gy,
                payload: py,
            },
        ) => tx.cmp(ty_).then(gx.cmp(gy)).then_with(|| match (px, py) {
            (Some(p), Some(q)) => compare(p, q),
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
        }),
        (Value::Map(x), Value::Map(y)) => {
            let mut xs = x.iter();
            let mut ys = y.iter();
            loop {
                match (xs.next(), ys.next()) {
                    (None, None) => return Ordering::Equal,
                    (None, Some(_)) => return Ordering::Less,
                    (Some(_), None) => return Ordering::Greater,
                    (Some((kx, vx)), Some((ky, vy))) => {
                        let order = compare(&kx.0, &ky.0).then_with(|| compare(vx, vy));
                        if order != Ordering::Equal {
                            return order;
                        }
                    }
                }
            }
        }
        (Value::Func(f), Value::Func(g)) => {
            let pf = Rc::as_ptr(f) as *const () as usize;
            let pg = Rc::as_ptr(g) as *const () as usize;
            pf.cmp(&pg)
        }
        _ => kind_rank(a).cmp(&kind_rank(b)),
    }
}

/// [`compare`] with the common cases decided inline: integers, strings and
/// tuples of those, the keys a sort compares n log n times (a map's keys, a
/// `sort_list_by` key such as `(0 - count, word)`).
#[inline(always)]
pub fn compare_quick(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Tuple(x), Value::Tuple(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                let order = compare_leaf(p, q);
                if order != Ordering::Equal {
                    return order;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => compare_leaf(a, b),
    }
}

#[inline(always)]
fn compare_leaf(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::I64(x), Value::I64(y)) => x.cmp(y),
        (Value::Str(x), Value::Str(y)) => x.cmp_bytes(y),
        _ => compare(a, b),
    }
}

/// Whether `a` and `b` are equal in the structural order ([`compare`] says
/// `Equal`), decided without ordering where that is quicker: strings by
/// length and bytes (a short one by one word).
#[inline]
pub fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::I64(x), Value::I64(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        _ => compare(a, b) == Ordering::Equal,
    }
}

/// Feeds `value` to `state` so that values equal under [`compare`] hash
/// alike (map keys are hashed): every NaN as one, `-0.0` apart from `0.0`,
/// maps by their entries whatever order a table holds them in, functions by
/// identity. Costs the size of the value, like [`compare`].
pub fn hash_value<H: Hasher>(value: &Value, state: &mut H) {
    state.write_u8(kind_rank(value));
    match value {
        Value::Unit => {}
        Value::Bool(b) => state.write_u8(u8::from(*b)),
        Value::I64(n) => state.write_i64(*n),
        Value::U64(n) => state.write_u64(*n),
        Value::F64(x) => state.write_u64(if x.is_nan() {
            f64::NAN.to_bits()
        } else {
            x.to_bits()
        }),
        Value::Str(s) => s.hash(state),
        Value::List(items) => hash_slice(items.as_slice(), state),
        Value::Tuple(items) => hash_slice(items, state),
        Value::Record(shape, fields) => {
            state.write_u32(*shape);
            hash_slice(fields, state);
        }
        Value::Variant { ty, tag, payload } => {
            state.write_u32(*ty);
            state.write_u32(*tag);
            if let Some(payload) = payload {
                hash_value(payload, state);
            }
        }
        Value::Map(entries) => {
            // Order-independent: a sum of each entry's own hash.
            let mut sum: u64 = 0;
            for (key, item) in entries.iter() {
                let mut entry = rustc_hash::FxHasher::default();
                hash_value(&key.0, &mut entry);
                hash_value(item, &mut entry);
                sum = sum.wrapping_add(entry.finish());
            }
            state.write_usize(entries.len());
            state.write_u64(sum);
        }
        Value::Func(f) => state.write_usize(Rc::as_ptr(f) as *const () as usize),
    }
}

fn hash_slice<H: Hasher>(items: &[Value], state: &mut H) {
    state.write_usize(items.len());
    for item in items {
        hash_value(item, state);
    }
}

fn compare_slices(xs: &[Value], ys: &[Value]) -> Ordering {
    for (x, y) in xs.iter().zip(ys) {
        let order = compare(x, y);
        if order != Ordering::Equal {
            return order;
        }
    }
    xs.len().cmp(&ys.len())
}

fn kind_rank(v: &Value) -> u8 {
    match v {
        Value::Unit => 0,
        Value::Bool(_) => 1,
        Value::I64(_) => 2,
        Value::U64(_) => 3,
        Value::F64(_) => 4,
        Value::Str(_) => 5,
        Value::List(_) => 6,
        Value::Tuple(_) => 7,
        Value::Record(..) => 8,
        Value::Variant { .. } => 9,
        Value::Map(_) => 10,
        Value::Func(_) => 11,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Over-samples the awkward floats: NaNs with several payloads and both
    /// signs, signed zeros, infinities, subnormals, the extremes.
    fn awkward_f64() -> impl Strategy<Value = f64> {
        prop_oneof![
            3 => prop_oneof![
                Just(f64::NAN),
                Just(-f64::NAN),
                Just(f64::from_bits(0x7ff0_0000_0000_0001)),
                Just(f64::from_bits(0xfff8_0000_dead_beef)),
                Just(f64::from_bits(0x7ff4_0000_0000_0000)),
            ],
            2 => prop_oneof![Just(0.0), Just(-0.0)],
            2 => prop_oneof![Just(f64::INFINITY), Just(f64::NEG_INFINITY)],
            2 => prop_oneof![
                Just(f64::MIN_POSITIVE / 2.0),
                Just(-f64::MIN_POSITIVE / 3.0),
                Just(f64::from_bits(1)),
                Just(-f64::from_bits(1)),
                Just(f64::MAX),
                Just(f64::MIN),
            ],
            4 => any::<f64>(),
            2 => (-3i32..3).prop_map(f64::from),
        ]
    }

    proptest! {
        #[test]
        fn total_order_is_reflexive_and_antisymmetric(a in awkward_f64(), b in awkward_f64()) {
            prop_assert_eq!(f64_total_cmp(a, a), Ordering::Equal);
            prop_assert_eq!(f64_total_cmp(a, b), f64_total_cmp(b, a).reverse());
            if f64_total_cmp(a, b) == Ordering::Equal {
                // Equal means the same logical value: same bits, or both NaN.
                prop_assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
            }
        }

        #[test]
        fn total_order_is_transitive(a in awkward_f64(), b in awkward_f64(), c in awkward_f64()) {
            let mut sorted = [a, b, c];
            sorted.sort_by(|x, y| f64_total_cmp(*x, *y));
            prop_assert_ne!(f64_total_cmp(sorted[0], sorted[1]), Ordering::Greater);
            prop_assert_ne!(f64_total_cmp(sorted[1], sorted[2]), Ordering::Greater);
            prop_assert_ne!(f64_total_cmp(sorted[0], sorted[2]), Ordering::Greater);
            if f64_total_cmp(a, b) != Ordering::Greater && f64_total_cmp(b, c) != Ordering::Greater {
                prop_assert_ne!(f64_total_cmp(a, c), Ordering::Greater);
            }
        }

        #[test]
        fn total_order_agrees_with_ieee_on_ordinary_numbers(a in awkward_f64(), b in awkward_f64()) {
            let both_zero = a == 0.0 && b == 0.0;
            if !(a.is_nan() || b.is_nan() || both_zero) {
                prop_assert_eq!(Some(f64_total_cmp(a, b)), a.partial_cmp(&b));
            }
        }
    }

    #[test]
    fn nan_sorts_last_and_zeros_are_distinct() {
        assert_eq!(f64_total_cmp(f64::NAN, f64::INFINITY), Ordering::Greater);
        assert_eq!(f64_total_cmp(-f64::NAN, f64::NAN), Ordering::Equal);
        assert_eq!(f64_total_cmp(-0.0, 0.0), Ordering::Less);
        assert_eq!(Value::F64(f64::NAN), Value::F64(-f64::NAN));
        assert_ne!(Value::F64(-0.0), Value::F64(0.0));
    }

    #[test]
    fn equality_agrees_with_the_order_whatever_holds_a_string() {
        let text = Value::str("one two three fourteen");
        let Value::Str(t) = &text else {
            panic!("a string")
        };
        let cut: Vec<Value> = t.split(' ').map(|w| Value::Str(t.piece(w))).collect();
        let copies: Vec<Value> = ["one", "two", "three", "fourteen"].map(Value::str).into();
        for (a, b) in cut.iter().zip(&copies) {
            assert!(equal(a, b));
            assert_eq!(compare(a, b), Ordering::Equal);
        }
        for (a, b) in cut.iter().zip(copies.iter().skip(1)) {
            assert!(!equal(a, b));
            assert_ne!(compare(a, b), Ordering::Equal);
        }
        assert!(equal(&Value::F64(f64::NAN), &Value::F64(-f64::NAN)));
        assert!(!equal(&Value::F64(0.0), &Value::F64(-0.0)));
    }

    #[test]
    fn structural_order_is_lexicographic() {
        let a = Value::list(vec![Value::I64(1), Value::I64(2)]);
        let b = Value::list(vec![Value::I64(1), Value::I64(2), Value::I64(0)]);
        let c = Value::list(vec![Value::I64(1), Value::I64(3)]);
        assert_eq!(compare(&a, &b), Ordering::Less);
        assert_eq!(compare(&b, &c), Ordering::Less);
        assert_eq!(compare(&Value::str("ab"), &Value::str("b")), Ordering::Less);
        let none = Value::variant(0, 0, None);
        let some = Value::variant(0, 1, Some(Value::I64(-5)));
        assert_eq!(compare(&none, &some), Ordering::Less);
    }
}
