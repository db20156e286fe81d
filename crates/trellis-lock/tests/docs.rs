//! `docs/lock-schema.md` stays true to the code: its example is the golden
//! fixture byte for byte, every code's `spec_ref` lands on a printed section,
//! and the status ladder table lists the rungs in the code's precedence.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod common;

use std::fs;

use trellis_lock::*;

fn doc() -> String {
    fs::read_to_string(common::data_dir().join("../../docs/lock-schema.md"))
        .expect("docs/lock-schema.md")
}

#[test]
fn the_example_lock_is_the_median_fixture() {
    let doc = doc();
    let after = doc
        .split_once("(`test-data/lock/ok/median.lock`):\n\n```json\n")
        .map(|(_, rest)| rest)
        .expect("the §1.4 example");
    let example = &after[..after.find("```").expect("closing fence")];
    let fixture = fs::read_to_string(common::data_dir().join("ok/median.lock")).expect("fixture");
    assert_eq!(example, fixture);
    assert_eq!(read_lock(example).map(|l| write_lock(&l)), Ok(fixture));
}

#[test]
fn every_spec_ref_names_a_printed_section() {
    let doc = doc();
    for code in Code::ALL {
        let section = code
            .spec_ref()
            .strip_prefix("lock-schema#")
            .expect("lock-schema anchor");
        let header = if section.contains('.') {
            format!("\n### {section} ")
        } else {
            format!("\n## {section}. ")
        };
        assert!(
            doc.contains(&header),
            "{} → {section} has no header",
            code.as_str()
        );
    }
}

#[test]
fn the_ladder_table_follows_the_precedence() {
    let doc = doc();
    let table = doc
        .split_once("### 8.6 The status ladder")
        .and_then(|(_, rest)| rest.split_once("### 8.7"))
        .map(|(table, _)| table)
        .expect("§8.6");
    let rungs: Vec<&str> = table
        .lines()
        .filter_map(|line| line.strip_prefix("| "))
        .filter_map(|line| line.split(" | ").nth(1))
        .filter_map(|cell| cell.strip_prefix('`').and_then(|c| c.strip_suffix('`')))
        .collect();
    assert_eq!(rungs, Status::PRECEDENCE);
}
