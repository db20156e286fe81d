//! The property runner (impl plan §8.12): a pinned number of cases generated from
//! the binders' types under a seed derived from the test hash, each judged by the
//! caller's evaluator; the first failure is shrunk to a minimal counterexample.

use soil_rt::{RtType, TypeEnv, Value};
use trellis_diag::Diagnostic;
use trellis_hash::Digest;

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

/// The seed of a property: the first eight bytes of its test hash.
pub fn seed_for(test_hash: &Digest) -> u64 {
    test_hash.prefix_u64()
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

/// A failing case, before and after shrinking; inputs as canonical JSON, one per
/// binder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterexample {
    /// The 0-based index of the first failing case.
    pub case: usize,
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
    mut eval: impl FnMut(&[Value]) -> CaseVerdict,
) -> PropertyResult {
    let generator = Generator::new(env).with_max_depth(config.max_depth);
    let mut rng = SplitMix64::new(config.seed);
    for case in 0..config.cases {
        let inputs = match generator.inputs(&mut rng, binders) {
            Ok(inputs) => inputs,
            Err(ungenerable) => return PropertyResult::Refused(ungenerable.diagnostic()),
        };
        if let CaseVerdict::Fail(message) = eval(&inputs) {
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
            return PropertyResult::Failed(Box::new(Counterexample {
                case,
                original,
                original_message: message,
                shrunk: encode_all(&shrunk.inputs, env),
                shrunk_message: shrunk.message,
                shrink_steps: shrunk.steps,
                shrink_evaluations: shrunk.evaluations,
            }));
        }
    }
    PropertyResult::Passed {
        cases: config.cases,
    }
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
                "failed at case {}\n  shrunk: {} ({})\n  steps: {}",
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
        assert_eq!(seed_for(&Digest::of(b"abc")), 0xba78_16bf_8f01_cfea);
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
