//! The suite runner over the examples and inline fixtures.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use expect_test::expect;
use soil_syntax::ast;
use soil_types::{Clause, ClauseKind, Definition, Env, Located, Program, SourceText};
use trellis_spec::{BlockKind, BlockSyntax, BlockValue, SpanClass};
use trellis_verify::suite::{
    ProgressEvent, SuiteInput, SuiteOutcome, SuiteTypes, Tier, Timeouts, expect_bundle,
    expect_bundle_text, run_suite,
};
use trellis_verify::{RealRunner, WarmPool, WarmRunner};

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// One module's specs and Soil, enough to build any definition's suite input.
struct Module {
    name: String,
    env: Env,
    /// `env`'s types, prepared as a host prepares them: once for every suite.
    types: SuiteTypes,
    /// Every definition of the module (all are signed, so order is free).
    definitions: Vec<Definition>,
    specs: Vec<Spec>,
}

struct Spec {
    name: String,
    signature: ast::Signature,
    requires: Vec<trellis_spec::Clause>,
    ensures: Vec<trellis_spec::Clause>,
    tests: Vec<std::sync::Arc<BlockValue>>,
    /// The seed of generated cases, as a host derives it (formal and test hash).
    seed: u64,
}

fn clauses_of(
    file: &trellis_spec::TrFile,
    kind: BlockKind,
) -> Vec<(trellis_spec::Clause, Arc<SourceText>)> {
    file.blocks_of(kind)
        .flat_map(|b| {
            let source = SourceText::new(Some(format!("{}.tr", file.file_stem)), &b.value.content);
            match &b.value.syntax {
                BlockSyntax::Clauses(c) => {
                    c.iter().map(|c| (c.clone(), Arc::clone(&source))).collect()
                }
                _ => Vec::new(),
            }
        })
        .collect()
}

fn load_module(dir: &Path, extra_soil: &[(&str, &str)]) -> Module {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    let mut env = Env::default();
    let mut specs = Vec::new();
    let mut signed: Vec<(String, Located<ast::Signature>, Vec<Clause>)> = Vec::new();
    // The `allow` grants of each spec, as a host hands them to the checker.
    let mut grants: Vec<(String, Vec<soil_types::Allow>)> = Vec::new();
    let mut soil_files: Vec<(String, String)> = Vec::new();
    for path in &entries {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        match path.extension().and_then(|e| e.to_str()) {
            Some("tr") => {
                let (file, _) = trellis_spec::parse_tr(&text, &stem);
                if let Some(decl) = file.type_decl() {
                    let block = file.blocks_of(BlockKind::SoilType).next().unwrap();
                    env.types.push(Located {
                        node: decl.clone(),
                        source: SourceText::new(Some(format!("{stem}.tr")), &block.value.content),
                    });
                }
                let Some(signature) = file.signature() else {
                    continue;
                };
                let sig_block = file.blocks_of(BlockKind::SoilSig).next().unwrap();
                let requires = clauses_of(&file, BlockKind::Requires);
                let ensures = clauses_of(&file, BlockKind::Ensures);
                let mut clauses = Vec::new();
                for (kind, list) in [
                    (ClauseKind::Requires, &requires),
                    (ClauseKind::Ensures, &ensures),
                ] {
                    for (clause, source) in list {
                        if let Some(predicate) = &clause.predicate {
                            clauses.push(Clause {
                                kind,
                                label: clause.label.clone(),
                                predicate: Located {
                                    node: predicate.clone(),
                                    source: Arc::clone(source),
                                },
                            });
                        }
                    }
                }
                let allowed = file
                    .blocks_of(BlockKind::Allow)
                    .filter_map(|block| match &block.value.syntax {
                        trellis_spec::BlockSyntax::Allow(list) => Some(list),
                        _ => None,
                    })
                    .flatten()
                    .map(|grant| soil_types::Allow {
                        hatch: grant.hatch.clone(),
                        reason: grant.reason.clone(),
                    })
                    .collect();
                grants.push((stem.clone(), allowed));
                signed.push((
                    stem.clone(),
                    Located {
                        node: signature.clone(),
                        source: SourceText::new(
                            Some(format!("{stem}.tr")),
                            &sig_block.value.content,
                        ),
                    },
                    clauses,
                ));
                let tests = file.block_values(SpanClass::Test);
                let parts: Vec<trellis_spec::BlockPart> = tests
                    .iter()
                    .map(|b| trellis_spec::BlockPart {
                        info: b.header.info_string(),
                        content: b.content.clone(),
                    })
                    .collect();
                specs.push(Spec {
                    name: stem,
                    signature: signature.clone(),
                    requires: requires.into_iter().map(|(c, _)| c).collect(),
                    ensures: ensures.into_iter().map(|(c, _)| c).collect(),
                    tests,
                    seed: trellis_verify::property::seed_for(
                        &file.formal_parts().hash(),
                        &trellis_spec::test_hash(&parts),
                    ),
                });
            }
            Some("soil") => soil_files.push((format!("{stem}.soil"), text)),
            _ => {}
        }
    }
    for (file, text) in extra_soil {
        soil_files.retain(|(f, _)| f != file);
        soil_files.push((file.to_string(), text.to_string()));
    }
    let mut definitions = Vec::new();
    for (file, text) in &soil_files {
        let (parsed, errors) = soil_syntax::parse_file(text);
        assert!(errors.is_empty(), "{file}: {errors:?}");
        let source = SourceText::new(Some(file.clone()), text);
        let private_sigs: Vec<&ast::Signature> = parsed
            .items
            .iter()
            .filter_map(|i| match i {
                ast::Item::Signature(s) => Some(s),
                _ => None,
            })
            .collect();
        for item in &parsed.items {
            let ast::Item::Equation(equation) = item else {
                continue;
            };
            let def_name = equation.name.text.clone();
            let (signature, clauses) = match signed.iter().find(|(n, _, _)| *n == def_name) {
                Some((_, sig, clauses)) => (Some(sig.clone()), clauses.clone()),
                None => (
                    private_sigs
                        .iter()
                        .find(|s| s.name.text == def_name)
                        .map(|s| Located {
                            node: (*s).clone(),
                            source: Arc::clone(&source),
                        }),
                    Vec::new(),
                ),
            };
            definitions.push(Definition {
                name: format!("{name}::{def_name}"),
                signature,
                equation: Located {
                    node: equation.clone(),
                    source: Arc::clone(&source),
                },
                clauses,
                allow: grants
                    .iter()
                    .find(|(n, _)| *n == def_name)
                    .map(|(_, allowed)| allowed.clone())
                    .unwrap_or_default(),
            });
        }
    }
    Module {
        name,
        types: SuiteTypes::of(&env),
        env,
        definitions,
        specs,
    }
}

impl Module {
    fn program_for(&self, def: &str) -> Program {
        let full = format!("{}::{def}", self.name);
        let mut definitions: Vec<Definition> = self
            .definitions
            .iter()
            .filter(|d| d.name != full)
            .cloned()
            .collect();
        definitions.extend(self.definitions.iter().filter(|d| d.name == full).cloned());
        Program {
            definitions,
            ..Program::default()
        }
    }

    fn spec(&self, def: &str) -> &Spec {
        self.specs.iter().find(|s| s.name == def).unwrap()
    }

    fn has_body(&self, def: &str) -> bool {
        let full = format!("{}::{def}", self.name);
        self.definitions.iter().any(|d| d.name == full)
    }

    fn run(&self, def: &str, tool_dir: &Path) -> SuiteOutcome {
        self.run_with(def, tool_dir, None)
    }

    fn run_with(&self, def: &str, tool_dir: &Path, warm: Option<&dyn WarmRunner>) -> SuiteOutcome {
        let program = self.program_for(def);
        let spec = self.spec(def);
        let full = format!("{}::{def}", self.name);
        let input = self.input(&full, &program, spec, tool_dir);
        run_suite(&input, &RealRunner, warm, &mut |_| {})
    }

    fn input<'a>(
        &'a self,
        full: &'a str,
        program: &'a Program,
        spec: &'a Spec,
        tool_dir: &'a Path,
    ) -> SuiteInput<'a> {
        SuiteInput {
            definition: full,
            types: &self.types,
            program,
            signature: &spec.signature,
            requires: &spec.requires,
            ensures: &spec.ensures,
            blocks: &spec.tests,
            seed: spec.seed,
            root: examples_root(),
            references: references(),
            tool_dir,
            base_path: "/usr/bin:/bin",
            python: "python3",
            timeouts: Timeouts::default(),
        }
    }
}

fn examples_root() -> &'static Path {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(examples)
}

/// Every Python reference of the examples, as the host would hand it over.
fn references() -> &'static std::collections::BTreeMap<String, String> {
    static REFERENCES: std::sync::OnceLock<std::collections::BTreeMap<String, String>> =
        std::sync::OnceLock::new();
    REFERENCES.get_or_init(|| {
        let dir = examples_root().join("reference");
        std::fs::read_dir(&dir)
            .expect("the examples' reference directory")
            .flatten()
            .filter(|entry| entry.path().extension().is_some_and(|e| e == "py"))
            .map(|entry| {
                let name = entry.file_name().into_string().expect("UTF-8 name");
                let text = std::fs::read_to_string(entry.path()).expect("reference text");
                (format!("reference/{name}"), text)
            })
            .collect()
    })
}

fn stand_in_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../test-data/verify/cram/bin")
}

fn render(outcome: &SuiteOutcome, skip_cram: bool) -> String {
    let mut out = String::new();
    for d in &outcome.preflight {
        out.push_str(&format!("preflight {}: {}\n", d.code, d.message));
    }
    for row in outcome
        .rows
        .iter()
        .filter(|r| r.tier != Tier::Cram || !skip_cram)
    {
        out.push_str(&format!(
            "{} {} {} {}\n",
            row.name,
            row.tier.as_str(),
            row.mode.as_str(),
            row.result.as_str()
        ));
        if let Some(detail) = &row.detail {
            out.push_str(&format!("  {}\n", detail.message));
        }
    }
    for oracle in &outcome.oracles {
        out.push_str(&format!("oracle {} {}\n", oracle.kind, oracle.source));
    }
    out
}

#[test]
fn bundle_of_read_file_tests_has_the_contract_shape() {
    let module = load_module(&examples().join("csvstats"), &[]);
    let program = module.program_for("read_file");
    let spec = module.spec("read_file");
    let bin = stand_in_bin();
    let input = module.input("csvstats::read_file", &program, spec, &bin);
    let bundle = serde_json::to_string_pretty(&expect_bundle(&input)).unwrap();
    expect![[r#"
        {
          "cases": [
            {
              "name": "reads#1",
              "def": "csvstats::read_file",
              "args": [
                "data.csv"
              ],
              "expect": {
                "tag": "Value",
                "value": {
                  "tag": "Ok",
                  "value": [
                    {
                      "line": 1,
                      "cells": [
                        1.0,
                        2.0
                      ]
                    },
                    {
                      "line": 3,
                      "cells": [
                        3.5,
                        4.0
                      ]
                    }
                  ]
                }
              },
              "fakes": {
                "fs": {
                  "files": {
                    "data.csv": "1.0,2.0\n\n3.5,4\n",
                    "empty.csv": ""
                  }
                }
              }
            },
            {
              "name": "reads#2",
              "def": "csvstats::read_file",
              "args": [
                "empty.csv"
              ],
              "expect": {
                "tag": "Value",
                "value": {
                  "tag": "Ok",
                  "value": []
                }
              },
              "fakes": {
                "fs": {
                  "files": {
                    "data.csv": "1.0,2.0\n\n3.5,4\n",
                    "empty.csv": ""
                  }
                }
              }
            },
            {
              "name": "failures#1",
              "def": "csvstats::read_file",
              "args": [
                "ragged.csv"
              ],
              "expect": {
                "tag": "Value",
                "value": {
                  "tag": "Err",
                  "value": {
                    "tag": "Malformed",
                    "line": 2,
                    "error": {
                      "tag": "BadArity",
                      "value": 1
                    }
                  }
                }
              },
              "fakes": {
                "fs": {
                  "files": {
                    "ragged.csv": "1,2\n3\n",
                    "bad.csv": "1,2\n3,x\n"
                  }
                }
              }
            },
            {
              "name": "failures#2",
              "def": "csvstats::read_file",
              "args": [
                "bad.csv"
              ],
              "expect": {
                "tag": "Value",
                "value": {
                  "tag": "Err",
                  "value": {
                    "tag": "Malformed",
                    "line": 2,
                    "error": {
                      "tag": "BadCell",
                      "index": 1,
                      "raw": "x"
                    }
                  }
                }
              },
              "fakes": {
                "fs": {
                  "files": {
                    "ragged.csv": "1,2\n3\n",
                    "bad.csv": "1,2\n3,x\n"
                  }
                }
              }
            },
            {
              "name": "failures#3",
              "def": "csvstats::read_file",
              "args": [
                "missing.csv"
              ],
              "expect": {
                "tag": "Value",
                "value": {
                  "tag": "Err",
                  "value": {
                    "tag": "Unreadable",
                    "value": {
                      "tag": "NotFound",
                      "path": "missing.csv"
                    }
                  }
                }
              },
              "fakes": {
                "fs": {
                  "files": {
                    "ragged.csv": "1,2\n3\n",
                    "bad.csv": "1,2\n3,x\n"
                  }
                }
              }
            }
          ]
        }"#]]
    .assert_eq(&bundle);
}

#[test]
fn bundle_of_median_tests_is_canonical() {
    let module = load_module(&examples().join("csvstats"), &[]);
    let program = module.program_for("median");
    let spec = module.spec("median");
    let bin = stand_in_bin();
    let input = module.input("csvstats::median", &program, spec, &bin);
    expect![[r#"{"cases":[{"name":"basics#1","def":"csvstats::median","args":[[3.0,1.0,2.0]],"expect":{"tag":"Value","value":2.0},"fakes":{}},{"name":"basics#2","def":"csvstats::median","args":[[4.0,1.0,3.0,2.0]],"expect":{"tag":"Value","value":2.5},"fakes":{}},{"name":"basics#3","def":"csvstats::median","args":[[5.0]],"expect":{"tag":"Value","value":5.0},"fakes":{}},{"name":"basics#4","def":"csvstats::median","args":[[0.0,-0.0,1.0]],"expect":{"tag":"Value","value":0.0},"fakes":{}},{"name":"extremes#1","def":"csvstats::median","args":[[1.7976931348623157e308,1.7976931348623157e308]],"expect":{"tag":"Value","value":1.7976931348623157e308},"fakes":{}},{"name":"extremes#2","def":"csvstats::median","args":[[-1.7976931348623157e308,1.7976931348623157e308]],"expect":{"tag":"Value","value":0.0},"fakes":{}},{"name":"extremes#3","def":"csvstats::median","args":[[5e-324,5e-324]],"expect":{"tag":"Value","value":5e-324},"fakes":{}}]}"#]].assert_eq(&expect_bundle_text(&input));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&expect_bundle_text(&input)).unwrap(),
        expect_bundle(&input)
    );
}

/// The example modules, each carrying what its programs need: inventory calls
/// csvstats, so its definitions and types come with it.
fn example_modules() -> Vec<Module> {
    let csvstats = load_module(&examples().join("csvstats"), &[]);
    let mut inventory = load_module(&examples().join("inventory"), &[]);
    let mut definitions = csvstats.definitions.clone();
    definitions.append(&mut inventory.definitions);
    inventory.definitions = definitions;
    inventory
        .env
        .types
        .extend(csvstats.env.types.iter().cloned());
    inventory.types = SuiteTypes::of(&inventory.env);
    vec![csvstats, inventory]
}

#[test]
fn whole_examples_run() {
    // Cram rows need `trellis call`; they are covered by the cram tests below.
    let bin = stand_in_bin();
    let mut out = String::new();
    for module in example_modules() {
        let mut names: Vec<&str> = module.specs.iter().map(|s| s.name.as_str()).collect();
        names.sort();
        for name in names {
            if !module.has_body(name) {
                out.push_str(&format!("== {}::{name}: not lowered\n", module.name));
                continue;
            }
            let outcome = module.run(name, &bin);
            out.push_str(&format!(
                "== {}::{name}\n{}",
                module.name,
                render(&outcome, true)
            ));
        }
    }
    expect![[r#"
        == csvstats::all_finite
        basics#1 expect sandboxed pass
        basics#2 expect sandboxed pass
        basics#3 expect sandboxed pass
        basics#4 expect sandboxed pass
        concatenation property sandboxed pass
        == csvstats::contains
        pushed property sandboxed pass
        by_count property sandboxed pass
        nan_is_found property sandboxed pass
        == csvstats::count_of
        concatenation property sandboxed pass
        pushed property sandboxed pass
        bounded property sandboxed pass
        == csvstats::finite
        basics#1 expect sandboxed pass
        basics#2 expect sandboxed pass
        basics#3 expect sandboxed pass
        basics#4 expect sandboxed pass
        basics#5 expect sandboxed pass
        basics#6 expect sandboxed pass
        not_special property sandboxed pass
        == csvstats::is_permutation
        reversed property sandboxed pass
        extra_element property sandboxed pass
        symmetric property sandboxed pass
        == csvstats::mean: not lowered
        == csvstats::median
        basics#1 expect sandboxed pass
        basics#2 expect sandboxed pass
        basics#3 expect sandboxed pass
        basics#4 expect sandboxed pass
        extremes#1 expect sandboxed pass
        extremes#2 expect sandboxed pass
        extremes#3 expect sandboxed pass
        order_free property sandboxed pass
        singleton property sandboxed pass
        derived:requires:non_empty property sandboxed pass
        derived:requires:finite property sandboxed pass
        derived:ensures:bounded property sandboxed pass
        derived:differential:python: reference/stats.py::median differential sandboxed pass
        oracle python python: reference/stats.py::median
        == csvstats::non_empty
        not_the_empty_list property sandboxed pass
        pushed property sandboxed pass
        == csvstats::parse_row
        rows#1 expect sandboxed pass
        rows#2 expect sandboxed pass
        rows#3 expect sandboxed pass
        errors#1 expect sandboxed pass
        errors#2 expect sandboxed pass
        errors#3 expect sandboxed pass
        errors#4 expect sandboxed pass
        errors#5 expect sandboxed pass
        errors#6 expect sandboxed pass
        errors#7 expect sandboxed pass
        round_trip property sandboxed pass
        derived:requires:positive_line property sandboxed pass
        derived:ensures:blank property sandboxed pass
        derived:ensures:numbered property sandboxed pass
        derived:ensures:finite property sandboxed pass
        == csvstats::rank
        basics#1 expect sandboxed pass
        basics#2 expect sandboxed pass
        basics#3 expect sandboxed pass
        basics#4 expect sandboxed pass
        basics#5 expect sandboxed pass
        counts_smaller property sandboxed pass
        derived:requires:sorted property sandboxed pass
        == csvstats::read_file
        reads#1 expect sandboxed pass
        reads#2 expect sandboxed pass
        failures#1 expect sandboxed pass
        failures#2 expect sandboxed pass
        failures#3 expect sandboxed pass
        derived:ensures:numbered property sandboxed pass
        == csvstats::sort
        basics#1 expect sandboxed pass
        basics#2 expect sandboxed pass
        basics#3 expect sandboxed pass
        total_order#1 expect sandboxed pass
        total_order#2 expect sandboxed pass
        idempotent property sandboxed pass
        order_free property sandboxed pass
        derived:ensures:sorted property sandboxed pass
        derived:ensures:permutation property sandboxed pass
        == csvstats::sort_by
        agrees_with_sort property sandboxed pass
        constant_key_keeps_order property sandboxed pass
        by_length property sandboxed pass
        == csvstats::sorted
        pairs property sandboxed pass
        singleton property sandboxed pass
        sort_output property sandboxed pass
        == inventory::apply_all
        batches#1 expect sandboxed pass
        batches#2 expect sandboxed pass
        batches#3 expect sandboxed pass
        first_failure_wins#1 expect sandboxed pass
        receive_then_sell property sandboxed pass
        derived:requires:keyed property sandboxed pass
        derived:ensures:position property sandboxed pass
        == inventory::apply_movement
        sales#1 expect sandboxed pass
        sales#2 expect sandboxed pass
        sales#3 expect sandboxed pass
        sales#4 expect sandboxed pass
        sales#5 expect sandboxed pass
        deliveries_and_counts#1 expect sandboxed pass
        deliveries_and_counts#2 expect sandboxed pass
        deliveries_and_counts#3 expect sandboxed pass
        deliveries_and_counts#4 expect sandboxed pass
        listing#1 expect sandboxed pass
        listing#2 expect sandboxed pass
        listing#3 expect sandboxed pass
        counted property sandboxed pass
        derived:requires:keyed property sandboxed pass
        derived:ensures:keyed property sandboxed pass
        derived:ensures:sizes property sandboxed pass
        == inventory::find_by_name
        lookups#1 expect sandboxed pass
        lookups#2 expect sandboxed pass
        lookups#3 expect sandboxed pass
        derived:ensures:named property sandboxed pass
        == inventory::low_stock
        shop#1 expect sandboxed pass
        shop#2 expect sandboxed pass
        shop#3 expect sandboxed pass
        ties_by_sku#1 expect sandboxed pass
        derived:ensures:below_threshold property sandboxed pass
        derived:ensures:complete property sandboxed pass
        derived:ensures:most_urgent_first property sandboxed pass
        == inventory::reorder_plan
        preflight unfilled-hole: `reorder_plan` cannot run: `reorder_plan` contains the unfilled hole ?cases_to_order
        == inventory::sales_by_sku
        basics#1 expect sandboxed pass
        basics#2 expect sandboxed pass
        total property sandboxed pass
        == inventory::stock_value
        basics#1 expect sandboxed pass
        basics#2 expect sandboxed pass
        one_item property sandboxed pass
    "#]].assert_eq(&out);
}

/// The csvstats module with `sort`'s spec replaced by `spec` (and, optionally,
/// its body by `body`).
fn sort_with(spec: &str, body: Option<&str>) -> Module {
    let extra: Vec<(&str, &str)> = body.map(|b| ("sort.soil", b)).into_iter().collect();
    let mut module = load_module(&examples().join("csvstats"), &extra);
    let (file, diagnostics) = trellis_spec::parse_tr(spec, "sort");
    assert!(
        diagnostics.iter().all(|d| !d.code.starts_with("tr-bad")),
        "{diagnostics:?}"
    );
    let tests = file.block_values(SpanClass::Test);
    let s = module.specs.iter_mut().find(|s| s.name == "sort").unwrap();
    s.tests = tests;
    let requires = clauses_of(&file, BlockKind::Requires);
    if !requires.is_empty() {
        // The suite's requires (wrappers, probes, filters); the runtime guard
        // of the compiled definition is unchanged.
        s.requires = requires.into_iter().map(|(c, _)| c).collect();
    }
    let ensures = clauses_of(&file, BlockKind::Ensures);
    if !ensures.is_empty() {
        // The suite's derived ensures rows; the compiled guards are unchanged.
        s.ensures = ensures.into_iter().map(|(c, _)| c).collect();
    }
    s.seed = trellis_verify::property::seed_for(
        &file.formal_parts().hash(),
        &trellis_spec::test_hash(&file.test_parts()),
    );
    module
}

const SORT_HEAD: &str =
    "---\nname: sort\n---\n\n```soil-sig\nsort : (xs : List F64) -> List F64\n```\n\n";

#[test]
fn a_wrong_sort_fails_its_properties_with_shrunk_counterexamples_deterministically() {
    let spec = format!(
        "{SORT_HEAD}```test basics\nsort([2.0, 1.0]) -> [1.0, 2.0]\n```\n\n```property idempotent\nforall (xs : List F64). sort (sort xs) == sort xs\n```\n"
    );
    let module = sort_with(&spec, Some("sort xs = reverse (_merge_sort xs)\n"));
    let first = render(&module.run("sort", &stand_in_bin()), true);
    let second = render(&module.run("sort", &stand_in_bin()), true);
    assert_eq!(first, second, "a fixed seed gives the same run");
    expect![[r#"
        basics#1 expect sandboxed fail
          the definition panicked: sort ensures sorted does not hold
        idempotent property sandboxed fail
          falsified by [0.0,4.021183215461982e-276] (shrunk in 2 steps from [-2.6991144063356286e262,-4.021183215461982e-276]): the predicate panicked: ensures-violated: sort ensures sorted does not hold at sort.tr:8..21 in _property_idempotent > sort
        derived:ensures:sorted property sandboxed fail
          falsified by [0.0,1.0] (shrunk in 1 step from the spec's own example basics#1, [2.0,1.0]): the predicate is false
        derived:ensures:permutation property sandboxed pass
    "#]].assert_eq(&first);
}

/// A clause false only on one of the spec's own examples — an input no seed is
/// likely to draw — fails its derived row, whatever the sample: the expect row
/// that runs that example under the clause's guard and the derived row judge
/// the clause alike (issue 40: `derived:ensures:X` recorded `pass` while an
/// expect case failed on X).
#[test]
fn a_derived_ensures_row_judges_the_specs_own_examples_before_any_drawn_input() {
    let spec = format!(
        "{SORT_HEAD}```ensures\nnot_this_one: result != [7.5, 8.5]\n```\n\n```test basics\nsort([2.0, 1.0]) -> [1.0, 2.0]\nsort([8.5, 7.5]) -> [7.5, 8.5]\n```\n"
    );
    let module = sort_with(&spec, None);
    expect![[r#"
        basics#1 expect sandboxed pass
        basics#2 expect sandboxed pass
        derived:ensures:not_this_one property sandboxed fail
          falsified by [8.5,7.5] (shrunk in 0 steps from the spec's own example basics#2, [8.5,7.5]): the predicate is false
    "#]]
    .assert_eq(&render(&module.run("sort", &stand_in_bin()), true));
}

#[test]
fn a_sort_dropping_duplicates_shrinks_to_a_minimal_pair() {
    let spec = format!(
        "{SORT_HEAD}```test basics\nsort([2.0, 1.0]) -> [1.0, 2.0]\n```\n\n```property keeps_length\nforall (xs : List F64). len (sort xs) == len xs\n```\n"
    );
    let dedup = "sort xs = fold (\\acc x -> if contains acc x then acc else acc ++ [x]) [] (_merge_sort xs)\n";
    let module = sort_with(&spec, Some(dedup));
    expect![[r#"
        basics#1 expect sandboxed pass
        keeps_length property sandboxed fail
          falsified by [-5.562684646268003e-309,-5.562684646268003e-309] (shrunk in 2 steps from [-5.562684646268003e-309,1.349061588161522e298,-5.562684646268003e-309,-8.25,1.999719785603176e-261,-4.7047893543631767e-169]): the predicate panicked: ensures-violated: sort ensures permutation does not hold at sort.tr:35..59 in _property_keeps_length > sort
        derived:ensures:sorted property sandboxed pass
        derived:ensures:permutation property sandboxed fail
          falsified by [-5.562684646268003e-309,-5.562684646268003e-309] (shrunk in 2 steps from [-5.562684646268003e-309,1.349061588161522e298,-5.562684646268003e-309,-8.25,1.999719785603176e-261,-4.7047893543631767e-169]): the predicate is false
    "#]].assert_eq(&render(&module.run("sort", &stand_in_bin()), true));
}

#[test]
fn contradictory_expect_cases_stop_the_suite_before_anything_runs() {
    let spec = format!(
        "{SORT_HEAD}```test basics\nsort([2.0, 1.0]) -> [1.0, 2.0]\n```\n\n```test again\nsort([2.0, 1.0]) -> [2.0, 1.0]\n```\n"
    );
    let module = sort_with(&spec, None);
    expect![[r#"
        preflight preflight-contradiction: basics#1 (line ?) and again#1 (line ?) call csvstats::sort with the same input [[2.0,1.0]] but expect [1.0,2.0] and [2.0,1.0]
    "#]].assert_eq(&render(&module.run("sort", &stand_in_bin()), true));
}

#[test]
fn xfail_blocks_turn_fail_into_xfail_and_pass_into_xpass() {
    let spec = format!(
        "{SORT_HEAD}```test wrong xfail\nsort([2.0, 1.0]) -> [2.0, 1.0]\n```\n\n```test right xfail\nsort([3.0, 1.0]) -> [1.0, 3.0]\n```\n"
    );
    let module = sort_with(&spec, None);
    expect![[r#"
        wrong#1 expect sandboxed xfail
        right#1 expect sandboxed xpass
        derived:ensures:sorted property sandboxed pass
        derived:ensures:permutation property sandboxed pass
    "#]]
    .assert_eq(&render(&module.run("sort", &stand_in_bin()), true));
}

#[test]
fn where_filters_and_cli_oracles_through_the_suite() {
    let spec = format!(
        "{SORT_HEAD}```test basics\nsort([2.0, 1.0]) -> [1.0, 2.0]\nsort([]) -> []\n```\n\n```property filtered\nforall (xs : List F64) where len xs > 1. sort xs == xs\n```\n\n```reference\ncli: echo '[1.0, 2.0]'\n```\n"
    );
    let module = sort_with(&spec, None);
    expect![[r#"
        basics#1 expect sandboxed pass
        basics#2 expect sandboxed pass
        filtered property sandboxed error
          the property cannot run: unsupported-where-filter: `where` filters need constrained generation, which v1 does not have
        derived:ensures:sorted property sandboxed pass
        derived:ensures:permutation property sandboxed pass
        derived:differential:cli: echo '[1.0, 2.0]' differential sandboxed fail
          Soil and the oracle disagree on basics#2
        oracle cli cli: echo '[1.0, 2.0]'
    "#]].assert_eq(&render(&module.run("sort", &stand_in_bin()), true));
}

#[test]
fn cram_blocks_run_real_with_the_tool_dir_on_path() {
    let spec = format!(
        "{SORT_HEAD}```test basics\nsort([]) -> []\n```\n\n```cram calls\n$ trellis call csvstats::sort '[[]]'\ncalled: call csvstats::sort [[]]\n$ trellis call again\nnot what it prints\n```\n"
    );
    let module = sort_with(&spec, None);
    expect![[r#"
        basics#1 expect sandboxed pass
        derived:ensures:sorted property sandboxed pass
        derived:ensures:permutation property sandboxed pass
        calls#1 cram real pass
        calls#2 cram real fail
          output differs:
        --- expected
        +++ actual
        -not what it prints
        +called: call again

    "#]]
    .assert_eq(&render(&module.run("sort", &stand_in_bin()), false));
}

#[test]
fn vacuous_requires_fires_when_no_case_is_in_the_domain() {
    let spec = format!(
        "{SORT_HEAD}```requires\nlong: len xs > 3\n```\n\n```test basics\nsort([]) -> []\nsort([2.0, 1.0]) -> [1.0, 2.0]\n```\n"
    );
    let module = sort_with(&spec, None);
    expect![[r#"
        preflight preflight-vacuous-requires: requires `long` of csvstats::sort holds for none of its 2 expect case inputs: the tests never exercise the definition's domain
    "#]].assert_eq(&render(&module.run("sort", &stand_in_bin()), true));
}

#[test]
fn derived_requires_rows_check_the_expect_cases_and_ensures_rows_refuse_vacuity() {
    let spec = format!(
        "{SORT_HEAD}```requires\nlong: len xs > 20\n```\n\n```test basics\nsort([]) -> []\nsort([4.0, 3.0, 2.0, 1.0, 0.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0]) -> [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0]\n```\n"
    );
    let module = sort_with(&spec, None);
    expect![[r#"
        basics#1 expect sandboxed pass
        basics#2 expect sandboxed pass
        derived:requires:long property sandboxed fail
          expect case basics#1 does not satisfy requires `long` (the predicate is false): the spec's own example is outside its precondition
        derived:ensures:sorted property sandboxed error
          the ensures clause was not exercised: test-requires-too-selective: 128 of 128 generated inputs were outside the requires clauses (or panicked), so `sorted` was barely tested
        derived:ensures:permutation property sandboxed error
          the ensures clause was not exercised: test-requires-too-selective: 128 of 128 generated inputs were outside the requires clauses (or panicked), so `permutation` was barely tested
    "#]].assert_eq(&render(&module.run("sort", &stand_in_bin()), true));
}

#[test]
fn a_satisfiable_requires_passes_the_probe_and_its_row() {
    let spec = format!(
        "{SORT_HEAD}```requires\nsome: len xs >= 0\n```\n\n```test basics\nsort([]) -> []\n```\n"
    );
    let module = sort_with(&spec, None);
    expect![[r#"
        basics#1 expect sandboxed pass
        derived:requires:some property sandboxed pass
        derived:ensures:sorted property sandboxed pass
        derived:ensures:permutation property sandboxed pass
    "#]]
    .assert_eq(&render(&module.run("sort", &stand_in_bin()), true));
}

#[test]
fn oracle_errors_and_hangs_are_error_rows() {
    for (reference, why) in [
        ("cli: echo nope", "non-JSON"),
        ("cli: echo oops >&2; exit 3", "a failing oracle"),
        ("cli: sleep 30", "a hanging oracle"),
    ] {
        let spec = format!(
            "{SORT_HEAD}```test basics\nsort([2.0, 1.0]) -> [1.0, 2.0]\n```\n\n```reference\n{reference}\n```\n"
        );
        let module = sort_with(&spec, None);
        let program = module.program_for("sort");
        let bin = stand_in_bin();
        let mut input = module.input("csvstats::sort", &program, module.spec("sort"), &bin);
        input.timeouts.oracle = std::time::Duration::from_millis(300);
        let outcome = run_suite(&input, &RealRunner, None, &mut |_| {});
        let row = outcome
            .rows
            .iter()
            .find(|r| r.tier == Tier::Differential)
            .unwrap();
        assert_eq!(
            row.result.as_str(),
            "error",
            "{why}: {}",
            render(&outcome, true)
        );
        assert_eq!(outcome.oracles.len(), 1, "{why}");
    }
}

#[test]
fn a_warm_oracle_gives_the_suite_outcome_a_cold_one_gives() {
    let pool = WarmPool::new(2);
    let bin = stand_in_bin();
    // Median as lowered, and an upper-middle median whose differential row fails.
    let wrong = "median xs =\n  at (sort xs) (len xs / 2)\n";
    for body in [None, Some(wrong)] {
        let extra: Vec<(&str, &str)> = body.map(|b| ("median.soil", b)).into_iter().collect();
        let module = load_module(&examples().join("csvstats"), &extra);
        let cold = module.run("median", &bin);
        let differential = cold
            .rows
            .iter()
            .find(|row| row.tier == Tier::Differential)
            .expect("median has a differential row");
        assert_eq!(
            differential.result.as_str(),
            if body.is_none() { "pass" } else { "fail" }
        );
        for round in ["first", "second"] {
            let warm = module.run_with("median", &bin, Some(&pool));
            assert_eq!(warm, cold, "the {round} warm suite differs");
        }
    }
    assert_eq!(pool.started(), 1, "one driver served all four runs");
}

#[test]
fn progress_reports_preflight_then_every_row() {
    let module = load_module(&examples().join("csvstats"), &[]);
    let program = module.program_for("median");
    let bin = stand_in_bin();
    let input = module.input("csvstats::median", &program, module.spec("median"), &bin);
    let mut events = Vec::new();
    let outcome = run_suite(&input, &RealRunner, None, &mut |event| {
        events.push(match event {
            ProgressEvent::PreflightDone { diagnostics } => format!("preflight {diagnostics}"),
            ProgressEvent::RowFinished(row) => row.name,
        })
    });
    assert_eq!(events.len(), outcome.rows.len() + 1);
    assert_eq!(events[0], "preflight 0");
    assert!(outcome.is_green(), "{}", render(&outcome, true));
}

/// `execute_bundle` stands in for soil0's library `test`: on every example
/// definition's bundle, both give the same outcome tags.
#[test]
fn execute_bundle_agrees_with_soil0_test_on_the_examples() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../test-data/soil0/examples");
    let env_text = std::fs::read_to_string(dir.join("env.json")).unwrap();
    let program_text = std::fs::read_to_string(dir.join("program.json")).unwrap();
    let loaded = soil0::load(
        soil0::Source::new("env.json", &env_text),
        soil0::Source::new("program.json", &program_text),
    )
    .unwrap_or_else(|d| panic!("{d:?}"));
    let module = load_module(&examples().join("csvstats"), &[]);
    let bin = stand_in_bin();
    let mut compared = 0;
    for spec in &module.specs {
        if !module.has_body(&spec.name) {
            continue;
        }
        let full = format!("csvstats::{}", spec.name);
        let program = module.program_for(&spec.name);
        let input = module.input(&full, &program, spec, &bin);
        let text = expect_bundle_text(&input);
        let bundle = soil0::bundle::decode_bundle(soil0::Source::new("tests.json", &text))
            .unwrap_or_else(|d| panic!("{}: {d:?}", spec.name));
        let theirs: serde_json::Value = serde_json::from_str(&soil0::bundle::run_cases(
            &loaded,
            "tests.json",
            &bundle.cases,
        ))
        .unwrap();
        let ours =
            trellis_verify::suite::execute_bundle(&module.types, &program, &expect_bundle(&input))
                .unwrap();
        let tags = |doc: &serde_json::Value| -> Vec<String> {
            doc["cases"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| format!("{} {}", c["name"], c["outcome"]["tag"]))
                .collect()
        };
        assert_eq!(tags(&ours), tags(&theirs), "{}", spec.name);
        compared += tags(&ours).len();
    }
    assert!(compared > 20, "{compared}");
}

/// The expect bundle (soil0-cli §10) of every example definition, one per line:
/// the assembly of every example test block, pinned.
#[test]
fn bundles_of_every_example_definition() {
    let bin = stand_in_bin();
    let mut out = String::new();
    for module in example_modules() {
        let mut names: Vec<&str> = module.specs.iter().map(|s| s.name.as_str()).collect();
        names.sort();
        for name in names {
            if !module.has_body(name) {
                continue;
            }
            let program = module.program_for(name);
            let spec = module.spec(name);
            let qualified = format!("{}::{name}", module.name);
            let input = module.input(&qualified, &program, spec, &bin);
            out.push_str(&format!("{qualified}\n{}\n", expect_bundle_text(&input)));
        }
    }
    expect_test::expect_file!["../../../test-data/verify/example-bundles.txt"].assert_eq(&out);
}
