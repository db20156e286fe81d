//! Type-directed shrinking: from a failing input, candidates strictly simpler
//! than it (integers toward 0, floats toward 0.0 and integral values, lists and
//! strings by dropping chunks then simplifying elements, records field-wise, sums
//! toward earlier and payload-free variants and their own sub-terms), searched
//! greedily under an evaluation budget.

use std::rc::Rc;

use soil_rt::{Key, MapValue, Payload, RtType, TypeBody, TypeEnv, TypeId, Value};

/// What shrinking reached.
#[derive(Clone, Debug)]
pub struct Shrunk {
    pub inputs: Vec<Value>,
    /// The failure message of the shrunk inputs.
    pub message: String,
    /// Candidates accepted (each a strictly simpler failing input).
    pub steps: usize,
    /// Candidates evaluated (bounded by the budget).
    pub evaluations: usize,
}

/// Greedy shrinking: take the first candidate (simplest first) of any input that
/// still fails, repeat until none does or `budget` evaluations are spent.
/// `fails` returns the failure message, or `None` when the candidate passes.
pub fn shrink_inputs(
    env: &TypeEnv,
    types: &[RtType],
    inputs: Vec<Value>,
    message: String,
    budget: usize,
    mut fails: impl FnMut(&[Value]) -> Option<String>,
) -> Shrunk {
    let shrinker = Shrinker { env };
    let mut shrunk = Shrunk {
        inputs,
        message,
        steps: 0,
        evaluations: 0,
    };
    'search: loop {
        for (i, ty) in types.iter().enumerate().take(shrunk.inputs.len()) {
            for candidate in shrinker.candidates(&shrunk.inputs[i], ty) {
                if shrunk.evaluations >= budget {
                    break 'search;
                }
                shrunk.evaluations += 1;
                let mut trial = shrunk.inputs.clone();
                trial[i] = candidate;
                if let Some(message) = fails(&trial) {
                    shrunk.inputs = trial;
                    shrunk.message = message;
                    shrunk.steps += 1;
                    continue 'search;
                }
            }
        }
        break;
    }
    shrunk
}

/// Produces shrink candidates for values of a [`TypeEnv`]'s types.
#[derive(Clone, Copy, Debug)]
pub struct Shrinker<'e> {
    pub env: &'e TypeEnv,
}

impl Shrinker<'_> {
    /// Strictly simpler values of `ty` than `value`, simplest first.
    pub fn candidates(&self, value: &Value, ty: &RtType) -> Vec<Value> {
        match (ty, value) {
            (RtType::Bool, Value::Bool(true)) => vec![Value::Bool(false)],
            (RtType::I64, Value::I64(n)) => shrink_integer(i128::from(*n))
                .into_iter()
                .filter_map(|x| i64::try_from(x).ok().map(Value::I64))
                .collect(),
            (RtType::U64, Value::U64(n)) => shrink_integer(i128::from(*n))
                .into_iter()
                .filter_map(|x| u64::try_from(x).ok().map(Value::U64))
                .collect(),
            (RtType::F64, Value::F64(x)) => shrink_float(*x).into_iter().map(Value::F64).collect(),
            (RtType::Utf8, Value::Str(s)) => {
                let chars: Vec<char> = s.chars().collect();
                let mut out: Vec<Value> = chunk_removals(&chars)
                    .into_iter()
                    .map(|cs| Value::str(&cs.into_iter().collect::<String>()))
                    .collect();
                for (i, c) in chars.iter().enumerate() {
                    if *c != 'a' {
                        let mut simpler = chars.clone();
                        simpler[i] = 'a';
                        out.push(Value::str(&simpler.into_iter().collect::<String>()));
                    }
                }
                out
            }
            (RtType::List(element), Value::List(items)) => {
                let items = items.to_vec();
                let mut out: Vec<Value> = chunk_removals(&items)
                    .into_iter()
                    .map(Value::list)
                    .collect();
                for (i, item) in items.iter().enumerate() {
                    for candidate in self.candidates(item, element) {
                        let mut simpler = items.clone();
                        simpler[i] = candidate;
                        out.push(Value::list(simpler));
                    }
                }
                out
            }
            (RtType::Tuple(types), Value::Tuple(items)) => self
                .fieldwise(types, items)
                .into_iter()
                .map(Value::tuple)
                .collect(),
            (RtType::Map(key_ty, value_ty), Value::Map(entries)) => {
                self.map_candidates(key_ty, value_ty, entries)
            }
            (RtType::Named(id, args), _) => self.named(*id, args, ty, value),
            _ => Vec::new(),
        }
    }

    fn map_candidates(&self, key_ty: &RtType, value_ty: &RtType, entries: &MapValue) -> Vec<Value> {
        let pairs: Vec<(Value, Value)> = entries
            .iter()
            .map(|(k, v)| (k.0.clone(), v.clone()))
            .collect();
        let rebuild = |pairs: Vec<(Value, Value)>| {
            // Re-inserting keeps the map comparator-consistent when a shrunk key
            // collides with another (the map just gets smaller).
            let map: MapValue = pairs.into_iter().map(|(k, v)| (Key(k), v)).collect();
            Value::Map(Rc::new(map))
        };
        let mut out: Vec<Value> = chunk_removals(&pairs).into_iter().map(rebuild).collect();
        for (i, (key, value)) in pairs.iter().enumerate() {
            for candidate in self.candidates(value, value_ty) {
                let mut simpler = pairs.clone();
                simpler[i].1 = candidate;
                out.push(rebuild(simpler));
            }
            for candidate in self.candidates(key, key_ty) {
                let mut simpler = pairs.clone();
                simpler[i].0 = candidate;
                out.push(rebuild(simpler));
            }
        }
        out
    }

    fn named(&self, id: TypeId, args: &[RtType], ty: &RtType, value: &Value) -> Vec<Value> {
        let Some(decl) = self.env.decl(id) else {
            return Vec::new();
        };
        match (&decl.body, value) {
            (TypeBody::Record(_), Value::Record(shape, fields)) => {
                let types = self.field_types(*shape, args);
                self.fieldwise(&types, fields)
                    .into_iter()
                    .map(|fs| Value::Record(*shape, Rc::from(fs)))
                    .collect()
            }
            (TypeBody::Sum(variants), Value::Variant { tag, payload, .. }) => {
                let mut out = Vec::new();
                // Simpler variants: earlier ones, and payload-free ones.
                for (j, variant) in variants.iter().enumerate() {
                    let j = j as u32;
                    let simpler =
                        j < *tag || (payload.is_some() && variant.payload == Payload::None);
                    if !simpler || j == *tag {
                        continue;
                    }
                    let minimal = match &variant.payload {
                        Payload::None => Some(None),
                        Payload::Positional(t) => self.minimal(&t.subst(args), 0).map(Some),
                        Payload::Record(shape) => self.minimal_record(*shape, args, 0).map(Some),
                    };
                    if let Some(p) = minimal {
                        out.push(Value::variant(id, j, p));
                    }
                }
                let Some(variant) = variants.get(*tag as usize) else {
                    return out;
                };
                match (&variant.payload, payload.as_deref()) {
                    (Payload::Positional(t), Some(p)) => {
                        let t = t.subst(args);
                        if t == *ty {
                            out.push(p.clone());
                        }
                        for candidate in self.candidates(p, &t) {
                            out.push(Value::variant(id, *tag, Some(candidate)));
                        }
                    }
                    (Payload::Record(_), Some(Value::Record(shape, fields))) => {
                        let types = self.field_types(*shape, args);
                        // A recursive value's own sub-terms come before edits.
                        for (field, field_ty) in fields.iter().zip(&types) {
                            if field_ty == ty {
                                out.push(field.clone());
                            }
                        }
                        for fs in self.fieldwise(&types, fields) {
                            let record = Value::Record(*shape, Rc::from(fs));
                            out.push(Value::variant(id, *tag, Some(record)));
                        }
                    }
                    _ => {}
                }
                out
            }
            _ => Vec::new(),
        }
    }

    /// One candidate per simpler value of one component, the others unchanged.
    fn fieldwise(&self, types: &[RtType], values: &[Value]) -> Vec<Vec<Value>> {
        let mut out = Vec::new();
        for (i, (value, ty)) in values.iter().zip(types).enumerate() {
            for candidate in self.candidates(value, ty) {
                let mut simpler = values.to_vec();
                simpler[i] = candidate;
                out.push(simpler);
            }
        }
        out
    }

    fn field_types(&self, shape: u32, args: &[RtType]) -> Vec<RtType> {
        self.env
            .shape(shape)
            .map(|s| s.fields.iter().map(|f| f.ty.subst(args)).collect())
            .unwrap_or_default()
    }

    /// The simplest value of `ty` (zeros, empties, the first buildable variant).
    pub fn minimal(&self, ty: &RtType, depth: usize) -> Option<Value> {
        if depth > 16 {
            return None;
        }
        Some(match ty {
            RtType::Unit => Value::Unit,
            RtType::Bool => Value::Bool(false),
            RtType::I64 => Value::I64(0),
            RtType::U64 => Value::U64(0),
            RtType::F64 => Value::F64(0.0),
            RtType::Utf8 => Value::str(""),
            RtType::List(_) => Value::list(Vec::new()),
            RtType::Map(..) => Value::Map(Rc::new(MapValue::new())),
            RtType::Tuple(types) => Value::tuple(
                types
                    .iter()
                    .map(|t| self.minimal(t, depth + 1))
                    .collect::<Option<Vec<_>>>()?,
            ),
            RtType::Named(id, args) => match &self.env.decl(*id)?.body {
                TypeBody::Record(shape) => self.minimal_record(*shape, args, depth)?,
                TypeBody::Sum(variants) => variants.iter().enumerate().find_map(|(tag, v)| {
                    let payload = match &v.payload {
                        Payload::None => None,
                        Payload::Positional(t) => Some(self.minimal(&t.subst(args), depth + 1)?),
                        Payload::Record(shape) => Some(self.minimal_record(*shape, args, depth)?),
                    };
                    Some(Value::variant(*id, tag as u32, payload))
                })?,
                TypeBody::Opaque => return None,
            },
            RtType::Param(_) | RtType::Func => return None,
        })
    }

    fn minimal_record(&self, shape: u32, args: &[RtType], depth: usize) -> Option<Value> {
        let fields = self
            .field_types(shape, args)
            .iter()
            .map(|t| self.minimal(t, depth + 1))
            .collect::<Option<Vec<_>>>()?;
        Some(Value::Record(shape, Rc::from(fields)))
    }
}

/// Toward zero: 0, the magnitude of a negative, then halving distances.
fn shrink_integer(n: i128) -> Vec<i128> {
    if n == 0 {
        return Vec::new();
    }
    let mut out = vec![0];
    if n < 0 {
        out.push(-n);
    }
    let mut distance = n / 2;
    while distance != 0 {
        let candidate = n - distance;
        if !out.contains(&candidate) {
            out.push(candidate);
        }
        distance /= 2;
    }
    out
}

/// Toward 0.0: specials become 0.0 or 1.0, negatives their magnitude,
/// fractions their integral part, integers (and huge or tiny values) halve.
fn shrink_float(x: f64) -> Vec<f64> {
    let is_plain_zero = x == 0.0 && x.is_sign_positive();
    if is_plain_zero {
        return Vec::new();
    }
    if !x.is_finite() {
        return vec![0.0, 1.0];
    }
    let mut out = vec![0.0];
    if x < 0.0 {
        out.push(-x);
    }
    let integral = x.trunc();
    if integral != x && integral != 0.0 {
        out.push(integral);
    } else if integral == x && x.abs() < 9.007_199_254_740_992e15 && x.abs() >= 2.0 {
        out.extend(
            shrink_integer(x as i128)
                .into_iter()
                .skip(1)
                .filter(|c| c.signum() as f64 == x.signum())
                .map(|c| c as f64),
        );
    } else if x.abs() >= 9.007_199_254_740_992e15 {
        // Halving alone needs hundreds of steps from 1e300; try a unit first.
        out.push(1.0f64.copysign(x));
        out.push(x / 2.0);
    }
    out.retain(|c| c.to_bits() != x.to_bits());
    out
}

/// The sequence with chunks removed: the whole, then halves, quarters, ... single
/// elements, each chunk size at every aligned position.
fn chunk_removals<T: Clone>(items: &[T]) -> Vec<Vec<T>> {
    let len = items.len();
    let mut out = Vec::new();
    let mut size = len;
    while size > 0 {
        let mut start = 0;
        while start < len {
            let end = (start + size).min(len);
            let mut rest = items[..start].to_vec();
            rest.extend_from_slice(&items[end..]);
            out.push(rest);
            start += size;
        }
        size /= 2;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::Generator;
    use crate::generate::tests::tree_env;
    use crate::splitmix::SplitMix64;
    use proptest::prelude::*;
    use soil_rt::prelude;

    /// Every value of the type survives the canonical codec unchanged.
    fn well_typed(value: &Value, ty: &RtType, env: &TypeEnv) -> bool {
        let text = soil_rt::encode(value, env);
        soil_rt::decode(&text, ty, env).is_ok_and(|back| soil_rt::encode(&back, env) == text)
    }

    fn sample_types(tree: &RtType) -> Vec<RtType> {
        vec![
            RtType::I64,
            RtType::U64,
            RtType::F64,
            RtType::Utf8,
            RtType::List(Box::new(RtType::Tuple(vec![RtType::I64, RtType::Utf8]))),
            RtType::Map(Box::new(RtType::Utf8), Box::new(RtType::F64)),
            RtType::Named(prelude::OPTION, vec![RtType::List(Box::new(RtType::Bool))]),
            RtType::Named(
                prelude::RESULT,
                vec![RtType::I64, RtType::Named(prelude::IO_ERROR, vec![])],
            ),
            tree.clone(),
        ]
    }

    proptest! {
        #[test]
        fn generated_values_and_their_shrinks_are_well_typed(seed in any::<u64>(), pick in 0usize..9) {
            let (env, tree) = tree_env();
            let types = sample_types(&tree);
            let ty = &types[pick];
            let mut rng = SplitMix64::new(seed);
            let value = Generator::new(&env).value(&mut rng, ty).expect("generable");
            prop_assert!(well_typed(&value, ty, &env), "{}", soil_rt::encode(&value, &env));
            let shrinker = Shrinker { env: &env };
            for candidate in shrinker.candidates(&value, ty) {
                prop_assert!(
                    well_typed(&candidate, ty, &env),
                    "{} from {}",
                    soil_rt::encode(&candidate, &env),
                    soil_rt::encode(&value, &env)
                );
                prop_assert_ne!(&candidate, &value);
            }
        }
    }

    #[test]
    fn integers_shrink_toward_zero() {
        assert_eq!(shrink_integer(100), [0, 50, 75, 88, 94, 97, 99]);
        assert_eq!(shrink_integer(-6), [0, 6, -3, -5]);
        assert_eq!(shrink_integer(0), Vec::<i128>::new());
        let env = TypeEnv::new();
        let min = Shrinker { env: &env }.candidates(&Value::I64(i64::MIN), &RtType::I64);
        // -i64::MIN does not fit and is skipped, never wrapped.
        assert_eq!(min.first(), Some(&Value::I64(0)));
        assert!(!min.contains(&Value::I64(i64::MIN)));
    }

    #[test]
    fn floats_shrink_toward_simple_values() {
        assert_eq!(shrink_float(-2.5), [0.0, 2.5, -2.0]);
        assert_eq!(shrink_float(f64::NAN), [0.0, 1.0]);
        assert_eq!(shrink_float(-0.0), [0.0]);
        assert_eq!(shrink_float(0.0), Vec::<f64>::new());
        assert_eq!(shrink_float(8.0), [0.0, 4.0, 6.0, 7.0]);
    }

    #[test]
    fn chunks_are_removed_largest_first() {
        let removals = chunk_removals(&[1, 2, 3, 4]);
        assert_eq!(
            removals,
            [
                vec![],
                vec![3, 4],
                vec![1, 2],
                vec![2, 3, 4],
                vec![1, 3, 4],
                vec![1, 2, 4],
                vec![1, 2, 3],
            ]
        );
    }
}
