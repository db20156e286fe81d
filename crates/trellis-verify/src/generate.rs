//! Random values from runtime types (impl plan §8.12): integers uniform with a
//! boundary bias, finite F64 plus the IEEE specials, length-geometric lists and
//! strings, records and sums recursively under a depth cap, comparator-consistent
//! maps. Every draw comes from one [`SplitMix64`], so a seed fixes the values.

use std::rc::Rc;

use soil_rt::{Key, MapValue, Payload, RtType, TypeBody, TypeEnv, TypeId, Value};
use trellis_diag::Diagnostic;

use crate::codes::Code;
use crate::splitmix::SplitMix64;

/// Depth past which containers are generated empty and sums pick non-recursive
/// variants.
pub const DEFAULT_MAX_DEPTH: usize = 4;
/// Longest list, string or map generated.
const MAX_LEN: usize = 24;
/// A sum with no finite value (every variant recursive) gives up here.
const HARD_DEPTH: usize = 64;

/// Characters strings are drawn from: mostly ASCII, with JSON escapes, controls,
/// multi-byte scalars, a combining mark and an astral-plane emoji.
const ALPHABET: &[char] = &[
    'a', 'b', 'c', 'x', 'y', 'z', 'A', 'Z', '0', '1', '9', ' ', ',', '.', '-', '_', '/', ':', '"',
    '\\', '\n', '\t', '\u{0}', '\u{7f}', 'é', 'ß', 'λ', 'Ж', '中', '\u{301}', '😀',
];

/// A type with no generator, and why (`test-ungenerable-type`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ungenerable {
    /// The offending type, displayed.
    pub ty: String,
    pub why: &'static str,
}

impl Ungenerable {
    pub fn diagnostic(&self) -> Diagnostic {
        Code::TestUngenerableType.diagnostic(format!(
            "cannot generate values of `{}`: {}",
            self.ty, self.why
        ))
    }
}

/// Generates values of runtime types in one [`TypeEnv`].
#[derive(Clone, Copy, Debug)]
pub struct Generator<'e> {
    env: &'e TypeEnv,
    max_depth: usize,
}

impl<'e> Generator<'e> {
    pub fn new(env: &'e TypeEnv) -> Self {
        Generator {
            env,
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }

    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// One value per type, in order (a property's binders). Every type is
    /// checked first, so an ungenerable binder is refused whatever the seed.
    pub fn inputs(
        &self,
        rng: &mut SplitMix64,
        types: &[RtType],
    ) -> Result<Vec<Value>, Ungenerable> {
        for ty in types {
            self.check(ty)?;
        }
        types.iter().map(|ty| self.value(rng, ty)).collect()
    }

    /// Whether every type reachable from `ty` has a generator (no functions,
    /// capabilities, opaque declarations or unresolved variables).
    pub fn check(&self, ty: &RtType) -> Result<(), Ungenerable> {
        let mut seen = Vec::new();
        self.check_in(ty, &mut seen)
    }

    fn check_in(&self, ty: &RtType, seen: &mut Vec<RtType>) -> Result<(), Ungenerable> {
        match ty {
            RtType::List(t) => self.check_in(t, seen),
            RtType::Map(k, v) => {
                self.check_in(k, seen)?;
                self.check_in(v, seen)
            }
            RtType::Tuple(items) => items.iter().try_for_each(|t| self.check_in(t, seen)),
            RtType::Named(id, args) => {
                if seen.contains(ty) {
                    return Ok(());
                }
                seen.push(ty.clone());
                let Some(decl) = self.env.decl(*id) else {
                    return Err(self.ungenerable(ty, "it names no declaration"));
                };
                let field_types = |shape: u32| {
                    self.env
                        .shape(shape)
                        .map(|s| {
                            s.fields
                                .iter()
                                .map(|f| f.ty.subst(args))
                                .collect::<Vec<_>>()
                        })
                        .unwrap_or_default()
                };
                let parts: Vec<RtType> = match &decl.body {
                    TypeBody::Opaque => {
                        return Err(
                            self.ungenerable(ty, "it is opaque (a capability or undefined type)")
                        );
                    }
                    TypeBody::Record(shape) => field_types(*shape),
                    TypeBody::Sum(variants) => variants
                        .iter()
                        .flat_map(|v| match &v.payload {
                            Payload::None => Vec::new(),
                            Payload::Positional(t) => vec![t.subst(args)],
                            Payload::Record(shape) => field_types(*shape),
                        })
                        .collect(),
                };
                parts.iter().try_for_each(|t| self.check_in(t, seen))
            }
            RtType::Param(_) => Err(self.ungenerable(ty, "it is an unresolved type variable")),
            RtType::Func => Err(self.ungenerable(ty, "functions cannot be generated")),
            _ => Ok(()),
        }
    }

    pub fn value(&self, rng: &mut SplitMix64, ty: &RtType) -> Result<Value, Ungenerable> {
        self.at(rng, ty, 0)
    }

    fn at(&self, rng: &mut SplitMix64, ty: &RtType, depth: usize) -> Result<Value, Ungenerable> {
        if depth > HARD_DEPTH {
            return Err(self.ungenerable(ty, "it has no finite value (every variant recurses)"));
        }
        Ok(match ty {
            RtType::Unit => Value::Unit,
            RtType::Bool => Value::Bool(rng.chance(1, 2)),
            RtType::I64 => Value::I64(gen_i64(rng)),
            RtType::U64 => Value::U64(gen_u64(rng)),
            RtType::F64 => Value::F64(gen_f64(rng)),
            RtType::Utf8 => {
                // Strings are leaves: their length ignores the depth cap.
                let len = self.length(rng, 0);
                Value::str(&gen_string(rng, len))
            }
            RtType::List(element) => {
                let len = self.length(rng, depth);
                let mut items = Vec::with_capacity(len);
                for _ in 0..len {
                    items.push(self.at(rng, element, depth + 1)?);
                }
                Value::list(items)
            }
            RtType::Map(key, value) => {
                let len = self.length(rng, depth);
                let mut entries = MapValue::new();
                for _ in 0..len {
                    // Keys are deduplicated by the total order, exactly as the
                    // runtime's map does: a later equal key replaces the entry.
                    let k = self.at(rng, key, depth + 1)?;
                    let v = self.at(rng, value, depth + 1)?;
                    entries.insert(Key(k), v);
                }
                Value::Map(Rc::new(entries))
            }
            RtType::Tuple(items) => {
                let mut values = Vec::with_capacity(items.len());
                for item in items {
                    values.push(self.at(rng, item, depth + 1)?);
                }
                Value::tuple(values)
            }
            RtType::Named(id, args) => self.named(rng, ty, *id, args, depth)?,
            RtType::Param(_) => {
                return Err(self.ungenerable(ty, "it is an unresolved type variable"));
            }
            RtType::Func => return Err(self.ungenerable(ty, "functions cannot be generated")),
        })
    }

    fn named(
        &self,
        rng: &mut SplitMix64,
        ty: &RtType,
        id: TypeId,
        args: &[RtType],
        depth: usize,
    ) -> Result<Value, Ungenerable> {
        let Some(decl) = self.env.decl(id) else {
            return Err(self.ungenerable(ty, "it names no declaration"));
        };
        match &decl.body {
            TypeBody::Opaque => {
                Err(self.ungenerable(ty, "it is opaque (a capability or undefined type)"))
            }
            TypeBody::Record(shape) => self.record(rng, *shape, args, depth),
            TypeBody::Sum(variants) => {
                let eligible: Vec<u32> = if depth >= self.max_depth {
                    let base: Vec<u32> = (0..variants.len() as u32)
                        .filter(|&tag| !self.payload_recurses(&variants[tag as usize].payload, id))
                        .collect();
                    if base.is_empty() {
                        (0..variants.len() as u32).collect()
                    } else {
                        base
                    }
                } else {
                    (0..variants.len() as u32).collect()
                };
                let Some(&tag) = rng.pick(&eligible) else {
                    return Err(self.ungenerable(ty, "it has no variants"));
                };
                let payload = match &variants[tag as usize].payload {
                    Payload::None => None,
                    Payload::Positional(t) => Some(self.at(rng, &t.subst(args), depth + 1)?),
                    Payload::Record(shape) => Some(self.record(rng, *shape, args, depth)?),
                };
                Ok(Value::variant(id, tag, payload))
            }
        }
    }

    fn record(
        &self,
        rng: &mut SplitMix64,
        shape: u32,
        args: &[RtType],
        depth: usize,
    ) -> Result<Value, Ungenerable> {
        let fields = self
            .env
            .shape(shape)
            .map(|s| s.fields.clone())
            .unwrap_or_default();
        let mut values = Vec::with_capacity(fields.len());
        for field in &fields {
            values.push(self.at(rng, &field.ty.subst(args), depth + 1)?);
        }
        Ok(Value::Record(shape, Rc::from(values)))
    }

    /// Whether a payload can only be built by descending into `id` again. Lists
    /// and maps do not count: they can always be empty.
    fn payload_recurses(&self, payload: &Payload, id: TypeId) -> bool {
        match payload {
            Payload::None => false,
            Payload::Positional(t) => mentions(t, id),
            Payload::Record(shape) => self
                .env
                .shape(*shape)
                .is_some_and(|s| s.fields.iter().any(|f| mentions(&f.ty, id))),
        }
    }

    /// Geometric length (continue with probability 3/4), zero at the depth cap.
    fn length(&self, rng: &mut SplitMix64, depth: usize) -> usize {
        if depth >= self.max_depth {
            return 0;
        }
        let mut len = 0;
        while len < MAX_LEN && rng.chance(3, 4) {
            len += 1;
        }
        len
    }

    fn ungenerable(&self, ty: &RtType, why: &'static str) -> Ungenerable {
        Ungenerable {
            ty: self.env.display(ty),
            why,
        }
    }
}

/// `ty` refers to declaration `id` outside any list or map.
fn mentions(ty: &RtType, id: TypeId) -> bool {
    match ty {
        RtType::Named(other, args) => *other == id || args.iter().any(|a| mentions(a, id)),
        RtType::Tuple(items) => items.iter().any(|t| mentions(t, id)),
        _ => false,
    }
}

/// A quarter of the draws are boundaries, a quarter small magnitudes (where most
/// programs branch), the rest uniform over the whole width.
fn gen_i64(rng: &mut SplitMix64) -> i64 {
    match rng.below(4) {
        0 => *rng.pick(&[0, 1, -1, i64::MIN, i64::MAX]).unwrap_or(&0),
        1 => rng.below(129) as i64 - 64,
        _ => rng.next_u64() as i64,
    }
}

fn gen_u64(rng: &mut SplitMix64) -> u64 {
    match rng.below(4) {
        0 => *rng.pick(&[0, 1, u64::MAX]).unwrap_or(&0),
        1 => rng.below(65),
        _ => rng.next_u64(),
    }
}

/// One draw in eight is an IEEE special; the rest are finite: simple values
/// (integers and quarters near zero) or arbitrary finite bit patterns.
fn gen_f64(rng: &mut SplitMix64) -> f64 {
    const SPECIALS: [f64; 7] = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        f64::MIN_POSITIVE / 4.0,
        -f64::MIN_POSITIVE / 4.0,
    ];
    if rng.chance(1, 8) {
        return *rng.pick(&SPECIALS).unwrap_or(&0.0);
    }
    if rng.chance(1, 2) {
        return (rng.below(801) as f64 - 400.0) / 4.0;
    }
    loop {
        let x = f64::from_bits(rng.next_u64());
        if x.is_finite() {
            return x;
        }
    }
}

fn gen_string(rng: &mut SplitMix64, len: usize) -> String {
    (0..len)
        .map(|_| *rng.pick(ALPHABET).unwrap_or(&'a'))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use soil_rt::{FieldDecl, PayloadDecl, prelude};

    /// `type Tree = Leaf | Node { left : Tree, value : I64, right : Tree }`.
    pub(crate) fn tree_env() -> (TypeEnv, RtType) {
        let mut env = TypeEnv::new();
        let tree = env.declare("Tree", &[]);
        let tree_ty = RtType::Named(tree, vec![]);
        let field = |name: &str, ty: RtType| FieldDecl {
            name: name.into(),
            ty,
        };
        env.define_sum(
            tree,
            vec![
                ("Leaf".into(), PayloadDecl::None),
                (
                    "Node".into(),
                    PayloadDecl::Record(vec![
                        field("left", tree_ty.clone()),
                        field("value", RtType::I64),
                        field("right", tree_ty.clone()),
                    ]),
                ),
            ],
        );
        (env, tree_ty)
    }

    fn depth(value: &Value) -> usize {
        let children: Vec<&Value> = match value {
            Value::List(items) => items.iter().collect(),
            Value::Tuple(items) | Value::Record(_, items) => items.iter().collect(),
            Value::Variant { payload, .. } => payload.iter().map(|p| p.as_ref()).collect(),
            Value::Map(entries) => entries.iter().flat_map(|(k, v)| [&k.0, v]).collect(),
            _ => Vec::new(),
        };
        1 + children.into_iter().map(depth).max().unwrap_or(0)
    }

    #[test]
    fn a_fixed_seed_fixes_the_values() {
        let env = TypeEnv::new();
        let types = [
            RtType::I64,
            RtType::F64,
            RtType::Utf8,
            RtType::List(Box::new(RtType::I64)),
            RtType::Named(prelude::OPTION, vec![RtType::Bool]),
            RtType::Map(Box::new(RtType::U64), Box::new(RtType::Unit)),
        ];
        let generator = Generator::new(&env);
        let mut rng = SplitMix64::new(42);
        let mut out = String::new();
        for _ in 0..4 {
            let values = generator.inputs(&mut rng, &types).expect("generable");
            let texts: Vec<String> = values.iter().map(|v| soil_rt::encode(v, &env)).collect();
            out.push_str(&texts.join(" | "));
            out.push('\n');
        }
        expect_test::expect![[r#"
            -24 | 77.25 | "\\́0中1" | [-1,-37] | {"tag":"Some","value":true} | [[32,null],[12805316055209107011,null]]
            -12 | 5.92779577489531e-231 | "\tZ.中é.Ж" | [-7] | {"tag":"Some","value":true} | [[0,null],[37,null],[12412851954075396187,null],[14947606774453270094,null],[15067394384252110749,null],[15406631913870834284,null],[18446744073709551615,null]]
            -43 | -3.2128320546172995e-10 | "AaZ11" | [] | {"tag":"None"} | []
            1 | 7.5 | "." | [9223372036854775807] | {"tag":"None"} | [[1,null],[26,null],[49,null],[897801992379782990,null],[8219267997525992188,null],[15420820233975852278,null]]
        "#]].assert_eq(&out);
        let mut again = SplitMix64::new(42);
        let first = generator.inputs(&mut again, &types).expect("generable");
        let texts: Vec<String> = first.iter().map(|v| soil_rt::encode(v, &env)).collect();
        assert_eq!(out.lines().next(), Some(texts.join(" | ").as_str()));
    }

    #[test]
    fn generators_respect_the_depth_cap() {
        let (env, tree) = tree_env();
        let nested = RtType::List(Box::new(RtType::List(Box::new(RtType::List(Box::new(
            RtType::List(Box::new(RtType::I64)),
        ))))));
        for cap in [0, 1, 3] {
            let generator = Generator::new(&env).with_max_depth(cap);
            let mut rng = SplitMix64::new(7);
            let mut deepest_tree = 0;
            for _ in 0..300 {
                let t = generator
                    .value(&mut rng, &tree)
                    .expect("trees are generable");
                deepest_tree = deepest_tree.max(depth(&t));
                let l = generator
                    .value(&mut rng, &nested)
                    .expect("lists are generable");
                assert!(depth(&l) <= cap + 1, "cap {cap}: list depth {}", depth(&l));
            }
            // A node adds two levels (variant, record); leaves below the cap.
            assert!(
                deepest_tree <= 2 * cap + 1,
                "cap {cap}: tree depth {deepest_tree}"
            );
        }
        // Below a generous cap, trees do branch.
        let generator = Generator::new(&env).with_max_depth(4);
        let mut rng = SplitMix64::new(7);
        let deepest = (0..100)
            .map(|_| depth(&generator.value(&mut rng, &tree).expect("generable")))
            .max();
        assert!(deepest.is_some_and(|d| d >= 5), "{deepest:?}");
    }

    #[test]
    fn maps_are_comparator_consistent() {
        let env = TypeEnv::new();
        let generator = Generator::new(&env);
        let mut rng = SplitMix64::new(3);
        let ty = RtType::Map(Box::new(RtType::F64), Box::new(RtType::I64));
        for _ in 0..200 {
            let Value::Map(entries) = generator.value(&mut rng, &ty).expect("generable") else {
                panic!("not a map");
            };
            let keys: Vec<&Value> = entries.keys().map(|k| &k.0).collect();
            for pair in keys.windows(2) {
                assert_eq!(soil_rt::compare(pair[0], pair[1]), std::cmp::Ordering::Less);
            }
        }
    }

    #[test]
    fn specials_and_non_ascii_appear() {
        let env = TypeEnv::new();
        let generator = Generator::new(&env);
        let mut rng = SplitMix64::new(11);
        let floats: Vec<f64> = (0..2000)
            .filter_map(|_| match generator.value(&mut rng, &RtType::F64) {
                Ok(Value::F64(x)) => Some(x),
                _ => None,
            })
            .collect();
        assert!(floats.iter().any(|x| x.is_nan()));
        assert!(floats.contains(&f64::NEG_INFINITY));
        assert!(floats.iter().any(|x| *x == 0.0 && x.is_sign_negative()));
        assert!(floats.iter().any(|x| x.is_subnormal()));
        let text: String = (0..200)
            .filter_map(|_| match generator.value(&mut rng, &RtType::Utf8) {
                Ok(Value::Str(s)) => Some(s.to_string()),
                _ => None,
            })
            .collect();
        assert!(!text.is_ascii());
        let ints: Vec<i64> = (0..500)
            .filter_map(|_| match generator.value(&mut rng, &RtType::I64) {
                Ok(Value::I64(n)) => Some(n),
                _ => None,
            })
            .collect();
        for boundary in [0, 1, -1, i64::MIN, i64::MAX] {
            assert!(ints.contains(&boundary), "{boundary} never drawn");
        }
    }

    #[test]
    fn ungenerable_types_are_diagnosed() {
        let env = TypeEnv::new();
        let generator = Generator::new(&env);
        let mut rng = SplitMix64::new(1);
        for ty in [
            RtType::Func,
            RtType::Param(0),
            RtType::Named(prelude::FS, vec![]),
            RtType::List(Box::new(RtType::Named(prelude::CLOCK, vec![]))),
        ] {
            let d = generator
                .inputs(&mut rng, &[RtType::I64, ty])
                .expect_err("refused before any draw");
            assert_eq!(d.diagnostic().code, "test-ungenerable-type");
        }
        let d = generator
            .check(&RtType::List(Box::new(RtType::Func)))
            .expect_err("refused")
            .diagnostic();
        expect_test::expect!["cannot generate values of `function`: functions cannot be generated"]
            .assert_eq(&d.message);
        let mut env = TypeEnv::new();
        let endless = env.declare("Endless", &[]);
        env.define_sum(
            endless,
            vec![(
                "More".into(),
                PayloadDecl::Positional(RtType::Named(endless, vec![])),
            )],
        );
        let generator = Generator::new(&env);
        let d = generator
            .value(&mut rng, &RtType::Named(endless, vec![]))
            .expect_err("no finite value");
        assert_eq!(d.diagnostic().code, "test-ungenerable-type");
    }
}
