//! An edit's work follows what it changes, not the root's size (design §7.14):
//! the same edits, made to a root of 2,000 definitions and to one of 20,000
//! of the same shape, execute the same queries and confirm the same number of
//! memos, counted with salsa's events while a host answers `check` and
//! `status` through its joins, as the daemon does. The roots are
//! [`shaped_root`]s: prose that names callees, types and definitions anywhere,
//! record types whose specs name the functions that take them, modules of
//! twenty — a shape unlike the layered root's the benches use. Every answer is
//! also compared with salsa's own root-wide memos (debug builds), outside the
//! counts.
//!
//! The 20,000 root takes a while in a debug build; `just scale` runs this test
//! alone, in release.

use std::collections::BTreeMap;

use trellis_db::shaped::{Shape, shaped_module_spec_path, shaped_root};
use trellis_db::{Change, RootDatabase, RootJoins};

/// The module every edit is made in: in both roots, with the same neighbours.
const MODULE: usize = 50;

struct Host {
    db: RootDatabase,
    joins: RootJoins,
    files: BTreeMap<String, String>,
}

/// What one edit cost: queries executed, by name, and memos confirmed.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Work {
    executed: BTreeMap<String, usize>,
    confirmed: BTreeMap<String, usize>,
}

impl Work {
    fn executed(&self) -> usize {
        self.executed.values().sum()
    }

    fn confirmed(&self) -> usize {
        self.confirmed.values().sum()
    }
}

impl Host {
    fn new(definitions: usize) -> Host {
        let files: BTreeMap<String, String> = shaped_root(&Shape::mixed(definitions))
            .into_iter()
            .collect();
        let mut host = Host {
            db: RootDatabase::with_query_log(),
            joins: RootJoins::default(),
            files: BTreeMap::new(),
        };
        let mut change = Change::default();
        for (path, text) in &files {
            change.set_root_file(path.clone(), text.clone());
        }
        host.files = files;
        host.apply(change);
        host.answer();
        // As the daemon does once its first answer is out.
        host.joins.prepare_for_edits(&host.db);
        host
    }

    fn apply(&mut self, change: Change) {
        self.joins.invalidate(&self.db, &change);
        change.apply(&mut self.db);
    }

    /// What the daemon asks for a `check` and a `status`.
    fn answer(&mut self) {
        self.joins.check(&self.db);
        self.joins.lock_problems(&self.db);
        self.joins.status_groups(&self.db);
    }

    /// Applies `edits` (path, new text or `None` to delete) as one change and
    /// answers, counting the work.
    fn edit(&mut self, edits: &[(String, Option<String>)]) -> Work {
        let log = self.db.query_log().clone();
        log.start();
        let mut change = Change::default();
        for (path, text) in edits {
            match text {
                Some(text) => {
                    change.set_root_file(path.clone(), text.clone());
                    self.files.insert(path.clone(), text.clone());
                }
                None => {
                    change.remove_file(path.clone());
                    self.files.remove(path);
                }
            }
        }
        self.apply(change);
        self.answer();
        let mut executed = BTreeMap::new();
        for query in log.take() {
            let name = query.split('(').next().unwrap_or_default().to_owned();
            *executed.entry(name).or_default() += 1;
        }
        Work {
            executed,
            confirmed: log.take_confirmed(),
        }
    }

    fn replaced(&self, path: &str, from: &str, to: &str) -> (String, Option<String>) {
        let text = &self.files[path];
        assert!(text.contains(from), "{path} does not contain `{from}`");
        (path.to_owned(), Some(text.replacen(from, to, 1)))
    }

    /// A function of [`MODULE`] that calls nothing and that some other
    /// function calls: its body and signature reach its callers.
    fn called_leaf(&self) -> String {
        let prefix = format!("{}/", module_name());
        let soils: Vec<(&String, &String)> = (self.files.iter())
            .filter(|(path, _)| path.ends_with(".soil"))
            .collect();
        soils
            .iter()
            .filter(|(path, text)| path.starts_with(&prefix) && !text.contains("let r0"))
            .map(|(path, _)| path.trim_start_matches(&prefix).trim_end_matches(".soil"))
            .find(|name| (soils.iter()).any(|(_, text)| text.contains(&format!("{name} ("))))
            .expect("the module has a called leaf")
            .to_owned()
    }
}

fn module_name() -> String {
    shaped_module_spec_path(MODULE)
        .trim_end_matches("/_module.tr")
        .to_owned()
}

/// One kind of edit, made on the root as the edits before it left it.
type Edit = (
    &'static str,
    Box<dyn Fn(&Host) -> Vec<(String, Option<String>)>>,
);

/// The edits that move the layout or the type environment (a file or a
/// module coming or going, a type's spec): they revalidate, once per module,
/// the layout's tables and what the type environment is built from — every
/// memo of those durable inputs confirms again after such an edit (design
/// §7.1, §7.14). Nothing else of theirs may grow with the root.
const LAYOUT_EDITS: &[&str] = &[
    "prose of a record type",
    "add a definition",
    "delete it",
    "add a module",
    "delete it again",
    "a lock written",
];

/// The queries a layout edit confirms once per module (or per type), and
/// how many of their memos a module holds at most: its directory, its
/// table, its types, and each type's parse and blocks.
const LAYOUT_WALK: &[&str] = &[
    "module_directory",
    "module_files",
    "module_type_specs",
    "parse_spec",
    "formal_blocks",
];
const LAYOUT_MEMOS_PER_MODULE: usize = 3 + 2 * 2;

/// Every kind of edit, in order, around `leaf`, a called leaf of [`MODULE`].
fn edits(leaf: &str) -> Vec<Edit> {
    let module = module_name();
    let spec = format!("{module}/{leaf}.tr");
    let soil = format!("{module}/{leaf}.soil");
    let lock = format!("{module}/{leaf}.lock");
    let record = format!("{module}/Rec{MODULE:04}x0.tr");
    let decisions = shaped_module_spec_path(MODULE);
    let definition = |dir: &str, present: bool| {
        let added_spec = "---\nname: added\ntags: [shaped]\n---\n\n# added\n\nAdded.\n\n```soil-sig\nadded : (x : I64) -> I64\n```\n\n```test basics\nadded(0) -> 1\n```\n";
        let mut files = vec![
            (
                format!("{dir}/added.tr"),
                present.then(|| added_spec.to_owned()),
            ),
            (
                format!("{dir}/added.soil"),
                present.then(|| "added x =\n  x + 1\n".to_owned()),
            ),
        ];
        if dir == "zadded" {
            let own = "---\nname: zadded\n---\n\n# Module zadded\n\nAdded.\n";
            files.push((format!("{dir}/_module.tr"), present.then(|| own.to_owned())));
        }
        files
    };
    let at = |path: &String, from: &'static str, to: &'static str| {
        let path = path.clone();
        Box::new(move |host: &Host| vec![host.replaced(&path, from, to)])
            as Box<dyn Fn(&Host) -> Vec<(String, Option<String>)>>
    };
    let whole = |files: Vec<(String, Option<String>)>| {
        Box::new(move |_: &Host| files.clone())
            as Box<dyn Fn(&Host) -> Vec<(String, Option<String>)>>
    };
    vec![
        (
            "prose of a called leaf",
            at(
                &spec,
                "A generated definition.",
                "A generated, edited definition.",
            ),
        ),
        (
            "prose of a record type",
            at(&record, "A pair of numbers.", "A pair of small numbers."),
        ),
        (
            "body of a called leaf",
            at(&soil, "let base = x *", "let base = 1 + x *"),
        ),
        (
            "signature of a called leaf",
            at(&spec, "-> I64\n```", "-> Bool\n```"),
        ),
        (
            "decision entry of its module",
            at(
                &decisions,
                "one I64 or one record",
                "one I64 or one record, no more",
            ),
        ),
        ("add a definition", whole(definition(&module, true))),
        ("delete it", whole(definition(&module, false))),
        ("add a module", whole(definition("zadded", true))),
        ("delete it again", whole(definition("zadded", false))),
        (
            "a lock written",
            whole(vec![(lock.clone(), Some("{}".to_owned()))]),
        ),
        (
            "the lock rewritten",
            whole(vec![(lock, Some("[]".to_owned()))]),
        ),
    ]
}

/// Applies every kind of edit in turn to a root of `definitions`.
fn work_at(definitions: usize) -> Vec<(&'static str, Work)> {
    let mut host = Host::new(definitions);
    let leaf = host.called_leaf();
    (edits(&leaf).into_iter())
        .map(|(name, edit)| {
            let edit = edit(&host);
            (name, host.edit(&edit))
        })
        .collect()
}

#[test]
fn every_kind_of_edit_costs_the_same_at_2000_and_at_20000_definitions() {
    let small = work_at(2_000);
    let large = work_at(20_000);
    let mut table = String::new();
    let mut differ = Vec::new();
    let modules = |definitions: usize| definitions / Shape::mixed(definitions).per_module;
    for ((name, small), (_, large)) in small.iter().zip(&large) {
        table.push_str(&format!(
            "{name:<30} executed {:>4} / {:>4}, confirmed {:>5} / {:>5}\n",
            small.executed(),
            large.executed(),
            small.confirmed(),
            large.confirmed()
        ));
        let (mut small, mut large) = (small.clone(), large.clone());
        if LAYOUT_EDITS.contains(name) {
            for (work, definitions) in [(&mut small, 2_000), (&mut large, 20_000)] {
                let walked: usize = (LAYOUT_WALK.iter())
                    .filter_map(|query| work.confirmed.remove(*query))
                    .sum();
                // Module lookups re-execute when a module comes or goes.
                let looked_up = work.executed.remove("module_directory").unwrap_or(0);
                let bound = LAYOUT_MEMOS_PER_MODULE * (modules(definitions) + 1);
                assert!(
                    walked <= bound && looked_up <= modules(definitions) + 3,
                    "{name} at {definitions}: {walked} layout memos confirmed, \
                     {looked_up} lookups executed, for {} modules",
                    modules(definitions)
                );
            }
        }
        if small != large {
            let moved = |small: &BTreeMap<String, usize>, large: &BTreeMap<String, usize>| {
                let names: std::collections::BTreeSet<&String> =
                    small.keys().chain(large.keys()).collect();
                (names.into_iter())
                    .filter(|query| small.get(*query) != large.get(*query))
                    .map(|query| {
                        let count = |counts: &BTreeMap<String, usize>| {
                            counts.get(query).copied().unwrap_or(0)
                        };
                        format!("{query} {} / {}", count(small), count(large))
                    })
                    .collect::<Vec<String>>()
                    .join(", ")
            };
            differ.push(format!(
                "{name}: executed {}; confirmed {}",
                moved(&small.executed, &large.executed),
                moved(&small.confirmed, &large.confirmed)
            ));
        }
    }
    println!("{table}");
    assert!(
        differ.is_empty(),
        "work that grows with the root (2,000 / 20,000):\n{table}\n{}",
        differ.join("\n")
    );
}
