//! Golden sample locks: each builder's canonical text is the checked-in file,
//! and each file reads back to the same model and rewrites byte for byte.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod common;

use std::fs;

use trellis_lock::*;

fn bless() -> bool {
    std::env::var_os("UPDATE_EXPECT").is_some()
}

#[test]
fn samples_are_golden_and_round_trip_byte_for_byte() {
    let dir = common::data_dir().join("ok");
    for (file, lock) in common::samples() {
        assert_eq!(
            check_invariants(&lock),
            Vec::new(),
            "{file} breaks an invariant"
        );
        let written = write_lock(&lock);
        let path = dir.join(file);
        if bless() {
            fs::create_dir_all(&dir).expect("create test-data/lock/ok");
            fs::write(&path, &written).expect("bless fixture");
        }
        let on_disk = fs::read_to_string(&path)
            .unwrap_or_else(|_| panic!("missing {file}; run with UPDATE_EXPECT=1"));
        assert_eq!(
            written, on_disk,
            "{file}: the writer drifted from the golden text"
        );
        let read = read_lock(&on_disk).unwrap_or_else(|d| panic!("{file}: {d:#?}"));
        assert_eq!(read, lock, "{file}: read gives a different model");
        assert_eq!(
            write_lock(&read),
            on_disk,
            "{file}: read → write is not byte-identical"
        );
    }
}

#[test]
fn every_fixture_in_ok_is_a_sample() {
    let mut files: Vec<String> = fs::read_dir(common::data_dir().join("ok"))
        .expect("test-data/lock/ok")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut samples: Vec<String> = common::samples()
        .iter()
        .map(|(f, _)| f.to_string())
        .collect();
    samples.sort();
    assert_eq!(files, samples);
}
