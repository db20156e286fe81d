//! House rules the compiler does not check (design §2): every crate's `lib.rs`
//! opens with a paragraph that names each workspace crate it depends on, so the
//! prose cannot drift from `Cargo.toml`; and every module file of every crate
//! opens with its `//!` paragraph; and the host names its diagnostic codes
//! through one enum; and the named crates' modules import each other in no
//! circle, the binary stays small, and the docs name exactly the workspace's
//! crates (design §2.2).

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod module_graph;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use module_graph::{ModuleGraph, ModulePath, display};

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every crate directory of the workspace, by name.
fn crates() -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(crates_dir())
        .expect("crates/")
        .flatten()
        .filter(|entry| entry.path().join("Cargo.toml").is_file())
        .map(|entry| {
            let name = entry.file_name().into_string().expect("UTF-8 name");
            (name, entry.path())
        })
        .collect();
    out.sort();
    assert!(out.len() >= 14, "the workspace's crates: {out:?}");
    out
}

/// The workspace crates named in the `[dependencies]` table of a manifest
/// (dev-dependencies are the tests' business, not the crate's).
fn workspace_dependencies(manifest: &str, members: &[String]) -> Vec<String> {
    let mut in_dependencies = false;
    let mut out = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
            continue;
        }
        if !in_dependencies {
            continue;
        }
        let key = line
            .split(['=', '.', ' '])
            .next()
            .unwrap_or_default()
            .trim();
        if members.iter().any(|member| member == key) {
            out.push(key.to_owned());
        }
    }
    out
}

/// The leading `//!` block of a source file.
fn opening(text: &str) -> String {
    text.lines()
        .take_while(|line| line.starts_with("//!"))
        .map(|line| line.trim_start_matches("//!"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_lib_rs_names_the_workspace_crates_it_depends_on() {
    let crates = crates();
    let members: Vec<String> = crates.iter().map(|(name, _)| name.clone()).collect();
    let mut problems = Vec::new();
    for (name, dir) in &crates {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("Cargo.toml");
        let lib = std::fs::read_to_string(dir.join("src/lib.rs")).expect("lib.rs");
        let paragraph = opening(&lib);
        for dependency in workspace_dependencies(&manifest, &members) {
            let underscored = dependency.replace('-', "_");
            if !paragraph.contains(&dependency) && !paragraph.contains(&underscored) {
                problems.push(format!(
                    "{name}/src/lib.rs does not name its dependency {dependency}"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()));
    for entry in entries.flatten() {
        let path = entry.path();
        let kind = entry.file_type().expect("file type");
        if kind.is_dir() {
            rust_files(&path, out);
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_module_file_opens_with_its_paragraph() {
    let mut files = Vec::new();
    for (_, dir) in crates() {
        rust_files(&dir.join("src"), &mut files);
    }
    assert!(
        files.len() > 100,
        "the workspace's modules: {}",
        files.len()
    );
    let missing: Vec<String> = files
        .iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).expect("readable");
            !text.starts_with("//!")
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "no `//!` paragraph:\n{}",
        missing.join("\n")
    );
}

/// The crates of the host layer, which name their codes through `HostCode`.
const HOST_CRATES: &[&str] = &["trellis", "trellis-service", "trellis-agent"];

/// The host names its diagnostic codes through `codes::HostCode` (checked
/// against the registry) or the owning crate's constants, never as a string
/// literal handed to `Diagnostic::new`, where a typo ships as `report-bug`.
#[test]
fn the_host_passes_no_raw_code_to_diagnostic_new() {
    let mut files = Vec::new();
    for host in HOST_CRATES {
        rust_files(&crates_dir().join(host).join("src"), &mut files);
    }
    let mut raw = Vec::new();
    for file in files {
        if file.ends_with("codes.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("a source file");
        let mut rest = text.as_str();
        while let Some(at) = rest.find("Diagnostic::new(") {
            rest = &rest[at + "Diagnostic::new(".len()..];
            if rest.trim_start().starts_with('"') {
                raw.push(file.display().to_string());
            }
        }
    }
    assert!(raw.is_empty(), "raw diagnostic codes in {raw:?}");
}

/// The host's three crates depend downwards (design §2.1): the binary on the
/// lowering loop and the service, the lowering loop on the service, and the
/// service on neither.
#[test]
fn the_host_crates_depend_downwards() {
    let members: Vec<String> = crates().into_iter().map(|(name, _)| name).collect();
    let dependencies = |krate: &str| {
        let manifest = std::fs::read_to_string(crates_dir().join(krate).join("Cargo.toml"))
            .expect("Cargo.toml");
        workspace_dependencies(&manifest, &members)
    };
    let binary = dependencies("trellis");
    let agent = dependencies("trellis-agent");
    let service = dependencies("trellis-service");
    assert!(
        binary.iter().any(|d| d == "trellis-agent")
            && binary.iter().any(|d| d == "trellis-service"),
        "trellis: {binary:?}"
    );
    assert!(
        agent.iter().any(|d| d == "trellis-service") && !agent.iter().any(|d| d == "trellis"),
        "trellis-agent: {agent:?}"
    );
    assert!(
        !service
            .iter()
            .any(|d| d == "trellis" || d == "trellis-agent"),
        "trellis-service: {service:?}"
    );
}

/// The crates whose modules must not import each other round a circle
/// (design §2.2); adding a crate to the check is adding its name here.
const ACYCLIC_CRATES: &[&str] = &[
    "trellis",
    "trellis-service",
    "trellis-agent",
    "trellis-rpc",
    "trellis-db",
];

#[test]
fn no_module_of_the_named_crates_imports_itself_round_a_circle() {
    let mut problems = Vec::new();
    for krate in ACYCLIC_CRATES {
        let graph = ModuleGraph::of_crate(&crates_dir().join(krate).join("src"));
        let edges: usize = graph.edges.values().map(BTreeSet::len).sum();
        assert!(
            graph.edges.len() > 4 && edges > 4,
            "{krate}: the module graph found too little: {:?}",
            graph.edges
        );
        for circle in graph.circles() {
            problems.push(format!("{krate}: {circle}"));
        }
        for circle in graph.top_level().circles() {
            problems.push(format!("{krate}, its top-level modules: {circle}"));
        }
    }
    assert!(
        problems.is_empty(),
        "modules that import each other round a circle:\n{}",
        problems.join("\n")
    );
}

/// The check itself: `crate::` and `super::` paths in `use` and in code are
/// edges (to the module they name, not the item), an inline module is a
/// module, and tests, comments, strings and `pub(crate)` are not paths; the
/// top-level graph finds directories that import each other.
#[test]
fn the_module_graph_reads_crate_and_super_paths_and_nothing_else() {
    let module = |path: &str| -> ModulePath {
        path.split("::")
            .filter(|part| !part.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let files = [
        (
            module(""),
            "pub mod a;\npub mod b;\npub mod c;\npub mod s;\n",
        ),
        (
            module("a"),
            "use crate::b::{self, Thing as Other};\n\
             // crate::c::x in a comment\n\
             pub(crate) fn g() -> &'static str { let _c = '{'; \"crate::c::y\" }\n\
             const RAW: &str = r#\"super::c\"#;\n",
        ),
        (
            module("b"),
            "pub fn h() { crate::a::g(); }\n\
             #[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::c::Z;\n}\n",
        ),
        (
            module("c"),
            "#[cfg(unix)]\nmod sys {\n    use super::*;\n}\nuse super::a;\n",
        ),
        (module("s"), "mod x;\nmod y;\n"),
        (
            module("s::x"),
            "use super::y::Z;\nfn f() { super::super::c::f() }\n",
        ),
        (module("s::y"), "pub struct Z;\n"),
    ];
    let graph = ModuleGraph::of_files(&files);
    let edges: Vec<String> = graph
        .edges
        .iter()
        .flat_map(|(from, targets)| {
            targets
                .iter()
                .map(move |to| format!("{} -> {}", display(from), display(to)))
        })
        .collect();
    assert_eq!(
        edges,
        [
            "a -> b",
            "b -> a",
            "c -> a",
            "c::sys -> c",
            "s::x -> c",
            "s::x -> s::y"
        ]
    );
    let circles: Vec<String> = graph.circles().iter().map(ToString::to_string).collect();
    assert_eq!(circles, ["a -> b -> a"]);
    // `s::x -> c` and `c -> a`, but nothing back into `s`: no circle of
    // directories beyond the files' own.
    let top: Vec<String> = graph
        .top_level()
        .circles()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(top, ["a -> b -> a"]);
    let directories = ModuleGraph::of_files(&[
        (module("p"), "mod x;\n"),
        (module("p::x"), "use crate::q::y::f;\n"),
        (module("q"), "mod y;\n"),
        (module("q::y"), "pub fn f() {}\nfn g() { crate::p::h() }\n"),
    ]);
    assert!(directories.circles().is_empty(), "{:?}", directories.edges);
    let top: Vec<String> = directories
        .top_level()
        .circles()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(top, ["p -> q -> p"], "two directories importing each other");
}

/// The binary keeps the command line, rendering, the client, the daemon's
/// accept loop and the host glue; the service and the lowering loop live in
/// the crates below it (design §2.2).
const BINARY_LINE_BUDGET: usize = 8_000;

#[test]
fn the_binary_crate_stays_under_its_line_budget() {
    let mut files = Vec::new();
    rust_files(&crates_dir().join("trellis/src"), &mut files);
    let lines: usize = files
        .iter()
        .map(|file| {
            std::fs::read_to_string(file)
                .expect("readable")
                .lines()
                .count()
        })
        .sum();
    assert!(lines > 1_000, "the binary's sources: {lines} lines");
    assert!(
        lines < BINARY_LINE_BUDGET,
        "crates/trellis/src has {lines} lines, the budget is {BINARY_LINE_BUDGET}: \
         move what is not command line, rendering, client or accept loop into the crate \
         that owns it"
    );
}

/// The text of the part of `doc` from the heading `from` to the next heading
/// that starts with `until`.
fn section<'d>(doc: &'d str, from: &str, until: &str) -> &'d str {
    let start = doc
        .find(from)
        .unwrap_or_else(|| panic!("no heading {from:?}"));
    let rest = &doc[start + from.len()..];
    &rest[..rest.find(until).unwrap_or(rest.len())]
}

/// Every backticked word of `text` that is opened by `open` and closed by `close`.
fn quoted(text: &str, open: &str, close: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find(open) {
        rest = &rest[at + open.len()..];
        if let Some(end) = rest.find(close) {
            out.insert(rest[..end].to_owned());
            rest = &rest[end + close.len()..];
        }
    }
    out
}

#[test]
fn the_design_code_map_the_layers_and_the_readme_name_exactly_the_workspace_crates() {
    let members: BTreeSet<String> = crates().into_iter().map(|(name, _)| name).collect();
    let repo = crates_dir().join("..");
    let design = std::fs::read_to_string(repo.join("docs/design.md")).expect("design.md");
    let readme = std::fs::read_to_string(repo.join("README.md")).expect("README.md");
    let code_map = quoted(
        section(&design, "\n### 2.2 Code map\n", "\n### "),
        "\n**`",
        "`**",
    );
    let layers: BTreeSet<String> = section(&design, "\n### 2.1 Layers\n", "\n### ")
        .lines()
        .filter(|line| line.starts_with("| ") && !line.starts_with("| layer"))
        .flat_map(|line| {
            let crates = line.split('|').nth(2).unwrap_or_default();
            quoted(crates, "`", "`")
        })
        .collect();
    let table = quoted(section(&readme, "\n## Crates\n", "\n## "), "\n| `", "` |");
    let mut problems = Vec::new();
    for (what, named) in [
        ("design §2.2's code map", &code_map),
        ("design §2.1's layer table", &layers),
        ("README.md's crate table", &table),
    ] {
        for missing in members.difference(named) {
            problems.push(format!("{what} does not name the crate {missing}"));
        }
        for extra in named.difference(&members) {
            problems.push(format!(
                "{what} names {extra}, which is no crate of the workspace"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
