//! Golden bundles of the shipped examples: `csvstats::mean` (a first lowering,
//! no `previous.soil`) and `csvstats::median` (a re-lowering, with
//! `previous.soil` and `reference.py`), at a generous budget and at the
//! starvation budgets where each droppable tier in turn is the first to go.
//! Generated files are shown whole; verbatim copies are checked against their
//! source and shown by size. `UPDATE_EXPECT=1` re-blesses.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use expect_test::expect_file;
use trellis_context::{Tier, bundle_units, context_bundle, tokens};
use trellis_db::RootDatabase;

const GENEROUS: u64 = 1_000_000;

/// The root file a verbatim bundle file copies, if it is one.
fn source_of(def: &str, path: &str) -> Option<String> {
    let (module, name) = def.split_once("::")?;
    Some(match path {
        "spec.md" => format!("{module}/{name}.tr"),
        "previous.soil" => format!("{module}/{name}.soil"),
        "module.md" => format!("{module}/_module.tr"),
        "reference.py" => "reference/stats.py".to_owned(),
        _ => path.strip_prefix("examples/")?.to_owned(),
    })
}

fn render_bundle(db: &RootDatabase, def: &str, budget: u64, out: &mut String) {
    let item = trellis_db::resolve_definition(db, def, trellis_db::Named::Function)
        .expect("a definition of the examples");
    let bundle = match context_bundle(db, item, budget) {
        Ok(bundle) => bundle,
        Err(diagnostic) => {
            out.push_str(&format!(
                "budget {budget}: error[{}] {}\n",
                diagnostic.code, diagnostic.message
            ));
            return;
        }
    };
    out.push_str(&format!(
        "budget {budget}: estimate {}, hash {}\n",
        bundle.estimate, bundle.hash
    ));
    for file in &bundle.files {
        let verbatim = source_of(def, &file.path).and_then(|source| {
            let text = std::fs::read_to_string(support::examples_dir().join(&source)).ok()?;
            Some((source, text))
        });
        match verbatim {
            Some((source, text)) => {
                assert_eq!(*file.text, *text, "{} is {source} verbatim", file.path);
                out.push_str(&format!(
                    "  packed {} ({} bytes, verbatim {source})\n",
                    file.path,
                    file.text.len()
                ));
            }
            None => out.push_str(&format!(
                "  packed {} ({} bytes)\n{}\n",
                file.path,
                file.text.len(),
                indent(&file.text)
            )),
        }
    }
    for dropped in &bundle.dropped {
        out.push_str(&format!(
            "  dropped {} ({})\n",
            dropped.item, dropped.reason
        ));
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("    | {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A compact line per budget: what was packed and what dropped, by path.
fn render_cut(db: &RootDatabase, def: &str, budget: u64, out: &mut String) {
    let item = trellis_db::resolve_definition(db, def, trellis_db::Named::Function)
        .expect("a definition of the examples");
    match context_bundle(db, item, budget) {
        Ok(bundle) => {
            let packed: Vec<&str> = bundle.files.iter().map(|f| f.path.as_str()).collect();
            out.push_str(&format!(
                "budget {budget} (estimate {}): packed {}\n",
                bundle.estimate,
                packed.join(", ")
            ));
            let first = bundle.dropped.first();
            out.push_str(&format!(
                "  dropped {} files{}\n",
                bundle.dropped.len(),
                first.map_or(String::new(), |d| format!(
                    ", first {} ({})",
                    d.item, d.reason
                ))
            ));
        }
        Err(diagnostic) => out.push_str(&format!("budget {budget}: error[{}]\n", diagnostic.code)),
    }
}

/// The budgets at which each tier is the first to drop: the tokens of every
/// unit before the tier's first unit (so that unit cannot fit), and one below
/// the never-dropped files (`budget-too-small`).
fn starvation_budgets(db: &RootDatabase, def: &str) -> Vec<(String, u64)> {
    let item = trellis_db::resolve_definition(db, def, trellis_db::Named::Function)
        .expect("a definition of the examples");
    let units = bundle_units(db, item);
    let mut budgets = Vec::new();
    let mut before = 0;
    let mut seen = Vec::new();
    for unit in units.iter() {
        if unit.tier.droppable() && !seen.contains(&unit.tier) {
            seen.push(unit.tier);
            budgets.push((format!("{} drops first", unit.tier.name()), before));
        }
        before += tokens(unit.bytes());
    }
    let required: u64 = units
        .iter()
        .filter(|unit| !unit.tier.droppable())
        .map(|unit| tokens(unit.bytes()))
        .sum();
    budgets.push(("too small".to_owned(), required - 1));
    assert!(
        seen.contains(&Tier::Callable) && seen.contains(&Tier::Examples),
        "{seen:?}"
    );
    budgets
}

fn golden(def: &str) -> String {
    let db = support::examples_db();
    let mut out = format!("# {def} at a generous budget\n\n");
    render_bundle(&db, def, GENEROUS, &mut out);
    out.push_str("\n# starvation: each droppable tier in turn is the first to go\n\n");
    for (label, budget) in starvation_budgets(&db, def) {
        out.push_str(&format!("## {label}\n"));
        render_cut(&db, def, budget, &mut out);
    }
    out
}

#[test]
fn mean_first_lowering() {
    expect_file!["../../../test-data/context/mean.txt"].assert_eq(&golden("csvstats::mean"));
}

#[test]
fn median_relowering() {
    expect_file!["../../../test-data/context/median.txt"].assert_eq(&golden("csvstats::median"));
}

/// A root with no decisions in scope and a CLI oracle: no `decisions.md`, no
/// `reference.py`, the stanza alone in `oracle`, and no callees or examples.
#[test]
fn no_decisions_and_a_cli_oracle() {
    let files: Vec<(String, String)> = [
        ("soil.toml", "[toolchain]\ntrellis = \"0.1.0\"\nsoil0_cli = \"0.1.0\"\n"),
        ("_project.tr", "---\nname: bare\n---\n\n# Bare\n"),
        ("m/_module.tr", "---\nname: m\n---\n\n# Module m\n"),
        (
            "m/twice.tr",
            "---\nname: twice\n---\n\n# twice\n\nTwice its input.\n\n```soil-sig\ntwice : (x : I64) -> I64\n```\n\n```test basics\ntwice(2) -> 4\n```\n\n```reference\ncli: ./twice.sh\n```\n",
        ),
    ]
    .iter()
    .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
    .collect();
    let mut db = RootDatabase::default();
    support::load(&mut db, &files);
    let item = trellis_db::resolve_definition(&db, "m::twice", trellis_db::Named::Function)
        .expect("known");
    let bundle = context_bundle(&db, item, 10_000).clone().expect("packs");
    let paths: Vec<&str> = bundle.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["bundle.json", "spec.md", "tests.json", "module.md"]);
    expect_test::expect![[r#"{"definition":"m/twice","budget":10000,"estimate":189,"packed":["bundle.json","spec.md","tests.json","module.md"],"dropped":[],"oracle":{"tag":"Some","value":{"tag":"Cli","command":"./twice.sh"}},"spec_hashes":{"formal":"sha256:ce431a4173eb1cfc7cfff0903aa2f82460d31efc5cbd581dd03ca1251befc21a","test":"sha256:86cf7ddaf6f01816b6499f366a21e58403446a4e07a6594d09e364b2e07882c1","prose":"sha256:efa4c55ff073590479df0bf61ee4560b08e4d135c20aa2b814029c8d5326dcf2"}}"#]]
    .assert_eq(bundle.manifest());
}

/// `callees/` holds what the definition uses (here what its clause names),
/// packed first; `callable/` the rest of the callable surface, where another
/// module's functions are only when it exports them (tr-grammar §5.1); a module
/// without an `exports` block hides nothing.
#[test]
fn callees_are_what_it_uses_and_the_callable_surface_honours_exports() {
    let spec = |name: &str| {
        format!(
            "---\nname: {name}\n---\n\n# {name}\n\n```soil-sig\n{name} : (x : I64) -> I64\n```\n\n```test basics\n{name}(1) -> 1\n```\n"
        )
    };
    let files: Vec<(String, String)> = vec![
        (
            "soil.toml".into(),
            "[toolchain]\ntrellis = \"0.1.0\"\nsoil0_cli = \"0.1.0\"\n".into(),
        ),
        ("a/_module.tr".into(), "---\nname: a\n---\n\n# a\n".into()),
        (
            "a/target.tr".into(),
            spec("target").replace(
                "```test basics",
                "```ensures\nsame: result == c::open x\n```\n\n```test basics",
            ),
        ),
        ("a/near.tr".into(), spec("near")),
        ("a/near.soil".into(), "near x = x\n".into()),
        (
            "b/_module.tr".into(),
            "---\nname: b\n---\n\n# b\n\n```exports\nshown\n```\n".into(),
        ),
        ("b/shown.tr".into(), spec("shown")),
        ("b/shown.soil".into(), "shown x = x\n".into()),
        ("b/hidden.tr".into(), spec("hidden")),
        ("b/hidden.soil".into(), "hidden x = x\n".into()),
        ("c/_module.tr".into(), "---\nname: c\n---\n\n# c\n".into()),
        ("c/open.tr".into(), spec("open")),
        ("c/open.soil".into(), "open x = x\n".into()),
    ];
    let mut db = RootDatabase::default();
    support::load(&mut db, &files);
    let item = trellis_db::resolve_definition(&db, "a::target", trellis_db::Named::Function)
        .expect("known");
    let bundle = context_bundle(&db, item, 100_000).clone().expect("packs");
    let signatures: Vec<&str> = bundle
        .files
        .iter()
        .map(|f| f.path.as_str())
        .filter(|path| path.starts_with("callees/") || path.starts_with("callable/"))
        .collect();
    assert_eq!(
        signatures,
        [
            "callees/c::open.md",
            "callable/near.md",
            "callable/b::shown.md",
        ]
    );
}

/// The manifest names the callable surface and the corpus as directories, and
/// their drops as one entry each that counts them and says where the cut fell;
/// everything else file by file. (Listing every file made the manifest of a
/// 2,000-definition root some 40,000 tokens of a 100,000-token bundle.)
#[test]
fn the_manifest_names_the_callable_surface_and_the_corpus_as_directories() {
    let db = support::examples_db();
    let item = trellis_db::resolve_definition(&db, "csvstats::mean", trellis_db::Named::Function)
        .expect("known");
    let units = bundle_units(&db, item);
    // A budget that packs every unit up to the third example pair.
    let mut examples = 0;
    let mut budget = 0;
    for unit in &units {
        if unit.tier == Tier::Examples {
            examples += 1;
            if examples == 3 {
                break;
            }
        }
        budget += tokens(unit.bytes());
    }
    let bundle = context_bundle(&db, item, budget).clone().expect("packs");
    let manifest: serde_json::Value = serde_json::from_str(bundle.manifest()).expect("JSON");
    let packed: Vec<&str> = manifest["packed"]
        .as_array()
        .expect("packed")
        .iter()
        .map(|p| p.as_str().expect("a path"))
        .collect();
    assert!(
        packed.contains(&"callable/") && packed.contains(&"examples/"),
        "{packed:?}"
    );
    assert!(
        !packed.iter().any(|p| p.starts_with("examples/csvstats/")),
        "{packed:?}"
    );
    let dropped = manifest["dropped"].as_array().expect("dropped");
    let example_drops: Vec<&serde_json::Value> = dropped
        .iter()
        .filter(|d| d["item"] == "examples/")
        .collect();
    assert_eq!(example_drops.len(), 1, "{dropped:?}");
    let files = bundle
        .dropped
        .iter()
        .filter(|d| d.item.starts_with("examples/"))
        .count();
    let first = &bundle
        .dropped
        .iter()
        .find(|d| d.item.starts_with("examples/"))
        .expect("an example dropped")
        .item;
    assert_eq!(
        example_drops[0]["reason"],
        format!("over budget: {files} files from {first}"),
        "{dropped:?}"
    );
    assert!(
        dropped.iter().any(|d| d["item"] == "module.md"),
        "{dropped:?}"
    );
}

/// `read_context` (trellis-daemon §3.1) over the packed median bundle: files,
/// sorted directory listings, and the two refusals.
#[test]
fn read_context_serves_the_packed_bundle() {
    use trellis_context::{Entry, read_context};
    let db = support::examples_db();
    let item = trellis_db::resolve_definition(&db, "csvstats::median", trellis_db::Named::Function)
        .expect("known");
    let bundle = context_bundle(&db, item, 3_000).clone().expect("packs");
    let Ok(Entry::Dir { entries }) = read_context(&bundle, "") else {
        panic!("the root lists");
    };
    expect_test::expect![[r#"["bundle.json", "callable/", "callees/", "decisions.md", "previous.soil", "reference.py", "spec.md", "tests.json"]"#]]
        .assert_eq(&format!("{entries:?}"));
    assert!(
        matches!(read_context(&bundle, "callees/"), Ok(Entry::Dir { entries }) if entries.contains(&"sort.md".to_owned()))
    );
    assert!(
        matches!(read_context(&bundle, "callable/"), Ok(Entry::Dir { entries }) if !entries.contains(&"sort.md".to_owned()))
    );
    let Ok(Entry::File { content }) = read_context(&bundle, "spec.md") else {
        panic!("spec.md reads");
    };
    assert!(content.starts_with("---\nname: median"));
    assert_eq!(
        read_context(&bundle, "../soil.toml").unwrap_err().code,
        "bundle-path"
    );
    // Dropped at this budget, so not in the bundle.
    assert_eq!(
        read_context(&bundle, "module.md").unwrap_err().code,
        "bundle-not-found"
    );
}
