//! The property runner (impl plan §8.12): a pinned number of cases generated from
//! the binders' types under a seed derived from the definition's contract and
//! tests (its formal and test hashes), each judged by the caller's evaluator —
//! after any examples the caller holds (the spec's own expect cases), which are
//! judged first; the first failure is shrunk to a minimal counterexample.

use soil_rt::{RtType, TypeEnv, Value};
use trellis_diag::Diagnostic;
use trellis_hash::{Digest, Hasher};

use crate::generate::{DEFAULT_MAX_DEPTH, Generator};
use crate::shrink::shrink_inputs;
use crate::splitmix::SplitMix64;

/// Cases for a property over a pure signature (design §4.5).
pub const PURE_CASES: usize = 128;
/// Cases when fakes are involved (each case builds and runs fake capabilities).
pub const FAKE_CASES: usize = 32;
/// Shrink candidates evaluated at most, per failing property.
pub const DEFAULT_SHRINK_BUDGET: usize = 2000;

pub fn case_count(uses_fakes: bool) -> usize {
    if uses_fakes { FAKE_CASES } else { PURE_CASES }
}

/// The seed of a definition's generated cases (its properties and derived
/// clause rows): the first eight bytes of a hash over its formal hash and its
/// test hash, so a sample is drawn afresh whenever anything the drawn cases
/// check — a clause, a property, an expect case — changes (tr-grammar §3.4).
/// A clause added after a sample was drawn is never judged by that sample alone.
pub fn seed_for(formal_hash: &Digest, test_hash: &Digest) -> u64 {
    let mut hasher = Hasher::tagged("property-seed/1");
    hasher.part(formal_hash.bytes()).part(test_hash.bytes());
    hasher.finish().prefix_u64()
}

/// The `k`-th fresh seed after `seed` (`k` from 1): the samples `status
/// --verify --reseed N` draws beyond the recorded one. Deterministic, so a row
/// one of them flips can be found again.
pub fn reseed(seed: u64, k: u64) -> u64 {
    let mut hasher = Hasher::tagged("property-reseed/1");
    hasher.part(&seed.to_be_bytes()).part(&k.to_be_bytes());
    hasher.finish().prefix_u64()
}

/// One evaluated case: the predicate held, or it did not (false, or a panic),
/// with a message saying how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaseVerdict {
    Pass,
    Fail(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropertyConfig {
    pub cases: usize,
    pub seed: u64,
    pub max_depth: usize,
    pub shrink_budget: usize,
}

impl PropertyConfig {
    pub fn new(cases: usize, seed: u64) -> Self {
        PropertyConfig {
            cases,
            seed,
            max_depth: DEFAULT_MAX_DEPTH,
            shrink_budget: DEFAULT_SHRINK_BUDGET,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PropertyResult {
    Passed {
        cases: usize,
    },
    Failed(Box<Counterexample>),
    /// A binder type has no generator (`test-ungenerable-type`).
    Refused(Diagnostic),
}

/// Where a failing case came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaseOrigin {
    /// One of the caller's examples, by its name (an expect row, `basics#2`).
    Example(String),
    /// The 0-based index of a generated case.
    Drawn(usize),
}

impl std::fmt::Display for CaseOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaseOrigin::Example(name) => write!(f, "the spec's own example {name}"),
            CaseOrigin::Drawn(case) => write!(f, "case {case}"),
        }
    }
}

/// A failing case, before and after shrinking; inputs as canonical JSON, one per
/// binder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterexample {
    /// The first failing case.
    pub case: CaseOrigin,
    pub original: Vec<String>,
    pub original_message: String,
    pub shrunk: Vec<String>,
    pub shrunk_message: String,
    pub shrink_steps: usize,
    pub shrink_evaluations: usize,
}

/// Runs a property over `binders` (their runtime types in `env`).
pub fn run_property(
    config: &PropertyConfig,
    env: &TypeEnv,
    binders: &[RtType],
    eval: impl FnMut(&[Value]) -> CaseVerdict,
) -> PropertyResult {
    run_property_from(config, env, binders, &[], eval)
}

/// [`run_property`], judging `examples` (named inputs, one value per binder)
/// before any generated case: each example is evaluated exactly once, in order,
/// and a failing one is shrunk like a generated failure. `cases` in the result
/// counts the generated cases only.
pub fn run_property_from(
    config: &PropertyConfig,
    env: &TypeEnv,
    binders: &[RtType],
    examples: &[(String, Vec<Value>)],
    mut eval: impl FnMut(&[Value]) -> CaseVerdict,
) -> PropertyResult {
    for (name, inputs) in examples {
        if let CaseVerdict::Fail(message) = eval(inputs) {
            let failed = CaseOrigin::Example(name.clone());
            return falsified(config, env, binders, failed, inputs.clone(), message, eval);
        }
    }
    let generator = Generator::new(env).with_max_depth(config.max_depth);
    let mut rng = SplitMix64::new(config.seed);
    for case in 0..config.cases {
        let inputs = match generator.inputs(&mut rng, binders) {
            Ok(inputs) => inputs,
            Err(ungenerable) => return PropertyResult::Refused(ungenerable.diagnostic()),
        };
        if let CaseVerdict::Fail(message) = eval(&inputs) {
            let failed = CaseOrigin::Drawn(case);
            return falsified(config, env, binders, failed, inputs, message, eval);
        }
    }
    PropertyResult::Passed {
        cases: config.cases,
    }
}

/// The result for a failing case: shrunk within the budget.
fn falsified(
    config: &PropertyConfig,
    env: &TypeEnv,
    binders: &[RtType],
    case: CaseOrigin,
    inputs: Vec<Value>,
    message: String,
    mut eval: impl FnMut(&[Value]) -> CaseVerdict,
) -> PropertyResult {
    let original = encode_all(&inputs, env);
    let shrunk = shrink_inputs(
        env,
        binders,
        inputs,
        message.clone(),
        config.shrink_budget,
        |candidate| match eval(candidate) {
            CaseVerdict::Pass => None,
            CaseVerdict::Fail(message) => Some(message),
        },
    );
    PropertyResult::Failed(Box::new(Counterexample {
        case,
        original,
        original_message: message,
        shrunk: encode_all(&shrunk.inputs, env),
        shrunk_message: shrunk.message,
        shrink_steps: shrunk.steps,
        shrink_evaluations: shrunk.evaluations,
    }))
}

fn encode_all(values: &[Value], env: &TypeEnv) -> Vec<String> {
    values.iter().map(|v| soil_rt::encode(v, env)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::tests::tree_env;
    use soil_rt::prelude;

    fn ints(value: &Value) -> Vec<i64> {
        match value {
            Value::List(items) => items
                .iter()
                .filter_map(|v| {
                    if let Value::I64(n) = v {
                        Some(*n)
                    } else {
                        None
                    }
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    fn list_i64() -> RtType {
        RtType::List(Box::new(RtType::I64))
    }

    fn render(result: &PropertyResult) -> String {
        match result {
            PropertyResult::Passed { cases } => format!("passed {cases} cases"),
            PropertyResult::Refused(d) => format!("refused: {} {}", d.code, d.message),
            PropertyResult::Failed(c) => format!(
                "failed at {}\n  shrunk: {} ({})\n  steps: {}",
                c.case,
                c.shrunk.join(" "),
                c.shrunk_message,
                c.shrink_steps
            ),
        }
    }

    #[test]
    fn case_counts_and_seeds_are_pinned() {
        assert_eq!(case_count(false), 128);
        assert_eq!(case_count(true), 32);
        let (formal, test) = (Digest::of(b"formal"), Digest::of(b"test"));
        expect_test::expect!["0x6d7c1a9485e52d8c"]
            .assert_eq(&format!("{:#018x}", seed_for(&formal, &test)));
        // Anything the drawn cases check draws a new sample: a clause (the
        // formal hash) as much as a property (the test hash).
        assert_ne!(
            seed_for(&Digest::of(b"formal, one more clause"), &test),
            seed_for(&formal, &test)
        );
        assert_ne!(
            seed_for(&formal, &Digest::of(b"test, one more case")),
            seed_for(&formal, &test)
        );
        assert_ne!(seed_for(&formal, &test), seed_for(&test, &formal));
        let seed = seed_for(&formal, &test);
        let fresh: std::collections::BTreeSet<u64> = (1..=16).map(|k| reseed(seed, k)).collect();
        assert_eq!(fresh.len(), 16, "every reseed is another seed");
        assert!(!fresh.contains(&seed));
        assert_eq!(reseed(seed, 3), reseed(seed, 3), "reseeds are reproducible");
    }

    #[test]
    fn examples_are_judged_before_any_drawn_case_and_shrunk_when_they_fail() {
        let env = TypeEnv::new();
        let mut order = Vec::new();
        let examples = vec![
            (
                "basics#1".to_owned(),
                vec![Value::List(soil_rt::List::from_vec(vec![Value::I64(1)]))],
            ),
            (
                "basics#2".to_owned(),
                vec![Value::List(soil_rt::List::from_vec(vec![
                    Value::I64(5),
                    Value::I64(40),
                ]))],
            ),
        ];
        // True of every list the seed draws here (none holds exactly 40),
        // false of the second example.
        let result = run_property_from(
            &PropertyConfig::new(128, 1),
            &env,
            &[list_i64()],
            &examples,
            |inputs| {
                order.push(encode_all(inputs, &env).join(" "));
                if ints(&inputs[0]).contains(&40) {
                    CaseVerdict::Fail("it holds 40".into())
                } else {
                    CaseVerdict::Pass
                }
            },
        );
        assert_eq!(order[..2], ["[1]", "[5,40]"]);
        let PropertyResult::Failed(counterexample) = &result else {
            panic!("the failing example fails the property: {result:?}");
        };
        assert_eq!(counterexample.case, CaseOrigin::Example("basics#2".into()));
        assert_eq!(counterexample.original, ["[5,40]"]);
        assert_eq!(counterexample.shrunk, ["[40]"]);
        let passed = run_property_from(
            &PropertyConfig::new(128, 1),
            &env,
            &[list_i64()],
            &examples[..1],
            |_| CaseVerdict::Pass,
        );
        assert_eq!(passed, PropertyResult::Passed { cases: 128 });
    }

    #[test]
    fn a_true_property_passes_every_case() {
        let env = TypeEnv::new();
        let mut seen = 0;
        let result = run_property(
            &PropertyConfig::new(128, 1),
            &env,
            &[list_i64()],
            |inputs| {
                seen += 1;
                let xs = ints(&inputs[0]);
                let mut twice = xs.clone();
                twice.reverse();
                twice.reverse();
                if twice == xs {
                    CaseVerdict::Pass
                } else {
                    CaseVerdict::Fail("reverse".into())
                }
            },
        );
        assert_eq!(result, PropertyResult::Passed { cases: 128 });
        assert_eq!(seen, 128);
    }

    #[test]
    fn sort_is_not_the_identity_shrinks_to_two_unordered_elements() {
        let env = TypeEnv::new();
        let result = run_property(
            &PropertyConfig::new(128, 42),
            &env,
            &[list_i64()],
            |inputs| {
                let xs = ints(&inputs[0]);
                let mut sorted = xs.clone();
                sorted.sort();
                if sorted == xs {
                    CaseVerdict::Pass
                } else {
                    CaseVerdict::Fail(format!("sort {xs:?} = {sorted:?}"))
                }
            },
        );
        let PropertyResult::Failed(counterexample) = &result else {
            panic!("expected a failure: {result:?}");
        };
        // Two elements out of order, both as close to 0 as the order allows.
        assert_eq!(counterexample.shrunk, ["[0,-1]"]);
        expect_test::expect![[r#"
            failed at case 1
              shrunk: [0,-1] (sort [0, -1] = [-1, 0])
              steps: 9"#]]
        .assert_eq(&render(&result));
    }

    #[test]
    fn sum_below_a_hundred_shrinks_to_a_single_hundred() {
        let env = TypeEnv::new();
        let result = run_property(
            &PropertyConfig::new(128, 7),
            &env,
            &[list_i64()],
            |inputs| {
                let sum: i128 = ints(&inputs[0]).iter().map(|&n| i128::from(n)).sum();
                if sum < 100 {
                    CaseVerdict::Pass
                } else {
                    CaseVerdict::Fail(format!("sum is {sum}"))
                }
            },
        );
        expect_test::expect![[r#"
            failed at case 1
              shrunk: [100] (sum is 100)
              steps: 62"#]]
        .assert_eq(&render(&result));
    }

    #[test]
    fn records_and_sums_shrink_field_wise_and_toward_leaves() {
        let (env, tree) = tree_env();
        fn max_value(tree: &Value) -> i64 {
            match tree {
                Value::Variant {
                    payload: Some(p), ..
                } => match p.as_ref() {
                    Value::Record(_, fields) => {
                        let own = if let Value::I64(n) = fields[1] {
                            n
                        } else {
                            i64::MIN
                        };
                        own.max(max_value(&fields[0])).max(max_value(&fields[2]))
                    }
                    _ => i64::MIN,
                },
                _ => i64::MIN,
            }
        }
        let binders = [tree, RtType::Named(prelude::OPTION, vec![RtType::F64])];
        let result = run_property(&PropertyConfig::new(128, 5), &env, &binders, |inputs| {
            let biggest = max_value(&inputs[0]);
            if biggest <= 10 {
                CaseVerdict::Pass
            } else {
                CaseVerdict::Fail(format!("a node holds {biggest}"))
            }
        });
        expect_test::expect![[r#"
            failed at case 1
              shrunk: {"tag":"Node","left":{"tag":"Leaf"},"value":11,"right":{"tag":"Leaf"}} {"tag":"None"} (a node holds 11)
              steps: 64"#]].assert_eq(&render(&result));
    }

    #[test]
    fn generation_is_deterministic_and_shrinking_is_bounded() {
        let env = TypeEnv::new();
        let run = |budget: usize| {
            let mut config = PropertyConfig::new(128, 99);
            config.shrink_budget = budget;
            run_property(&config, &env, &[list_i64(), RtType::Utf8], |inputs| {
                if ints(&inputs[0]).len() < 3 {
                    CaseVerdict::Pass
                } else {
                    CaseVerdict::Fail("long".into())
                }
            })
        };
        assert_eq!(run(2000), run(2000));
        let PropertyResult::Failed(bounded) = run(3) else {
            panic!("expected a failure");
        };
        assert!(bounded.shrink_evaluations <= 3);
    }

    #[test]
    fn ungenerable_binders_are_refused() {
        let env = TypeEnv::new();
        let result = run_property(&PropertyConfig::new(128, 1), &env, &[RtType::Func], |_| {
            CaseVerdict::Pass
        });
        assert!(
            matches!(result, PropertyResult::Refused(ref d) if d.code == "test-ungenerable-type")
        );
    }
}
