//! House rules the compiler does not check (design §2): every crate's `lib.rs`
//! opens with a paragraph that names each workspace crate it depends on, so the
//! prose cannot drift from `Cargo.toml`; and every module file of every crate
//! opens with its `//!` paragraph; and the host names its diagnostic codes
//! through one enum.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use std::path::{Path, PathBuf};

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
