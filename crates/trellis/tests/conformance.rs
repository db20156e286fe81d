//! The conformance table of the agent-facing contract (trellis-daemon §11): every
//! numbered section of `docs/contracts/trellis-daemon.md` has a row, every row
//! names a section the contract has, and every test a row names exists (its file
//! under `crates/` declares `fn name`); a row without tests must say `not yet
//! built` and name the area that builds it. Also the obligations this pass found
//! implemented but untested.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::path::Path;

use support::Root;

const BEGIN: &str = "<!-- conformance:begin -->";
const END: &str = "<!-- conformance:end -->";
const NOT_BUILT: &str = "not yet built — ";

/// One row: the section number, the whole clause cell, and the proof cell.
struct Row {
    section: String,
    clause: String,
    proof: String,
}

fn rows(contract: &str) -> Result<Vec<Row>, String> {
    let start = contract
        .find(BEGIN)
        .ok_or("the contract has no conformance table (its begin marker is gone)")?;
    let end = contract[start..]
        .find(END)
        .ok_or("the conformance table has no end marker")?;
    let table = &contract[start + BEGIN.len()..start + end];
    let mut rows = Vec::new();
    for line in table.lines().map(str::trim) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        let [clause, _, proof] = cells[..] else {
            continue;
        };
        let Some(number) = clause.strip_prefix('§') else {
            continue; // the header and its rule
        };
        let section = number.split_whitespace().next().unwrap_or_default();
        rows.push(Row {
            section: section.to_owned(),
            clause: clause.to_owned(),
            proof: proof.to_owned(),
        });
    }
    Ok(rows)
}

/// The tests a proof cell names: backticked `crate/…/file.rs::name`.
fn named_tests(proof: &str) -> Vec<&str> {
    proof
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|item| item.contains(".rs::"))
        .collect()
}

/// Whether `crates/<file>` declares `fn <name>`.
fn test_exists(crates: &Path, reference: &str) -> Result<(), String> {
    let (file, name) = reference
        .split_once("::")
        .ok_or_else(|| format!("`{reference}` is not `crate/tests/file.rs::test_name`"))?;
    let text = std::fs::read_to_string(crates.join(file))
        .map_err(|_| format!("`{reference}`: there is no file crates/{file}"))?;
    let declared = text.match_indices(&format!("fn {name}")).any(|(at, m)| {
        let next = text[at + m.len()..].chars().next();
        matches!(next, Some('(' | '<'))
    });
    if declared {
        Ok(())
    } else {
        Err(format!("`{reference}`: crates/{file} has no `fn {name}`"))
    }
}

/// Everything wrong with the conformance table of `contract`.
fn problems(contract: &str, crates: &Path) -> Vec<String> {
    let rows = match rows(contract) {
        Ok(rows) => rows,
        Err(problem) => return vec![problem],
    };
    let sections = trellis_diag::drift::section_numbers(contract);
    let mut found = Vec::new();
    for section in &sections {
        if !rows.iter().any(|row| &row.section == section) {
            found.push(format!("§{section} has no conformance row"));
        }
    }
    for row in &rows {
        if !sections.contains(&row.section) {
            found.push(format!(
                "the row `{}` names §{}, which the contract does not have",
                row.clause, row.section
            ));
        }
        let tests = named_tests(&row.proof);
        if tests.is_empty() && !row.proof.starts_with(NOT_BUILT) {
            found.push(format!(
                "the row `{}` names no test and does not say `{NOT_BUILT}<area>`",
                row.clause
            ));
        }
        if row.proof.starts_with(NOT_BUILT) && row.proof.len() == NOT_BUILT.len() {
            found.push(format!("the row `{}` does not name its area", row.clause));
        }
        for test in tests {
            if let Err(problem) = test_exists(crates, test) {
                found.push(format!("the row `{}`: {problem}", row.clause));
            }
        }
    }
    found
}

fn contract() -> String {
    support::workspace_file("docs/contracts/trellis-daemon.md")
}

#[test]
fn every_contract_section_has_a_conformance_row_naming_real_tests() {
    let found = problems(&contract(), &support::workspace().join("crates"));
    assert!(
        found.is_empty(),
        "docs/contracts/trellis-daemon.md §11 is out of date:\n{}",
        found.join("\n")
    );
    assert!(rows(&contract()).unwrap().len() >= 40);
}

#[test]
fn the_conformance_check_catches_a_gap() {
    let crates = support::workspace().join("crates");
    let contract = contract();
    let row_of = |section: &str| {
        contract
            .lines()
            .find(|line| line.starts_with(&format!("| §{section} |")))
            .unwrap_or_else(|| panic!("a §{section} row"))
            .to_owned()
    };
    // A section whose only row is gone.
    let without = contract.replace(&format!("{}\n", row_of("3.3")), "");
    assert_eq!(problems(&without, &crates), ["§3.3 has no conformance row"]);
    // A test that does not exist, and one in a file that does not.
    let renamed = contract.replace(
        "`trellis-mcp/tests/protocol.rs::legacy_handshake`",
        "`trellis-mcp/tests/protocol.rs::legacy_handshak`",
    );
    assert!(
        problems(&renamed, &crates)
            .iter()
            .any(|p| p.contains("has no `fn legacy_handshak`")),
        "{:?}",
        problems(&renamed, &crates)
    );
    let moved = contract.replace(
        "trellis-mcp/tests/protocol.rs::",
        "trellis-mcp/tests/gone.rs::",
    );
    assert!(
        problems(&moved, &crates)
            .iter()
            .any(|p| p.contains("there is no file crates/trellis-mcp/tests/gone.rs"))
    );
    // A row with neither a test nor the marker, and one naming no section.
    let unproved = contract.replace(
        &row_of("3.3"),
        "| §3.3 | `check_refinements` answers None | trusted |",
    );
    assert!(
        problems(&unproved, &crates)
            .iter()
            .any(|p| p.contains("names no test"))
    );
    let stray = contract.replace(&row_of("3.3"), &row_of("3.3").replace("§3.3", "§3.9"));
    assert!(
        problems(&stray, &crates)
            .iter()
            .any(|p| p.contains("§3.9, which the contract does not have"))
    );
    // A new numbered section without a row.
    let grown = contract.replace("## 11. Conformance", "## 12. Later\n\n## 11. Conformance");
    assert_eq!(problems(&grown, &crates), ["§12 has no conformance row"]);
}

#[test]
fn an_unknown_job_is_job_not_found() {
    let root = Root::examples_with_daemon();
    let run = root.run(&["_job", "inspect", "job-0-0"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let error = &run.json()["errors"][0];
    assert_eq!(error["code"], "job-not-found", "{run:?}");
    assert_eq!(error["repair_class"], "fix-input", "{run:?}");
    assert!(error["message"].as_str().unwrap().contains("job-0-0"));
}
