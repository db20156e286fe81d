//! A Trellis entry (design §12.2): the action key a definition's results are
//! stored under, the result blob (the key's inputs as the writer saw them, the
//! rows and their seal), and what a reader checks of a blob before it uses the
//! rows. The key is the suite key alone (lock-schema §5.4), tagged with this
//! format: the suite key already covers the toolchain, the definition's
//! `formal_hash` and `test_hash`, the program (every `soil_hash` it runs) and the
//! oracles' inputs, so two roots agree on a key exactly when their suites would
//! execute the same thing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use trellis_hash::{Digest, Hasher};
use trellis_lock::{Mode, TestResult, TestRow, Tier, Word, seal_results};

/// The result blob's format name; also the action key's tag.
pub const RESULT_FORMAT: &str = "trellis-test-result/1";
/// The output file names in the action result.
pub const RESULT_PATH: &str = "trellis/result.json";
pub const SIGNATURE_PATH: &str = "trellis/signature.json";

/// What a definition's results are keyed by, as the local root computes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyInputs {
    /// `module::name`.
    pub definition: String,
    /// The toolchain that runs the suite (`trellis X soil0 Y`).
    pub toolchain: String,
    pub suite_key: Digest,
    pub soil_hash: Digest,
    pub formal_hash: Digest,
    pub test_hash: Digest,
    /// Each oracle's source line and hash (lock-schema §5.3).
    pub oracles: BTreeMap<String, Digest>,
}

impl KeyInputs {
    /// The `/ac/` key: 64 hex digits.
    pub fn action_key(&self) -> String {
        let mut hasher = Hasher::tagged(RESULT_FORMAT);
        hasher.part(self.suite_key.to_string().as_bytes());
        hasher.finish().hex()
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResultBlob {
    format: String,
    definition: String,
    toolchain: String,
    suite_key: String,
    soil_hash: String,
    formal_hash: String,
    test_hash: String,
    oracles: BTreeMap<String, String>,
    rows: Vec<RowBlob>,
    /// `seal_results(suite_key, rows)`, as the lock records it.
    results_key: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RowBlob {
    name: String,
    tier: String,
    mode: String,
    result: String,
}

/// The result blob for `rows`, run under `inputs`.
pub fn result_blob(inputs: &KeyInputs, rows: &[TestRow]) -> Vec<u8> {
    let blob = ResultBlob {
        format: RESULT_FORMAT.to_owned(),
        definition: inputs.definition.clone(),
        toolchain: inputs.toolchain.clone(),
        suite_key: inputs.suite_key.to_string(),
        soil_hash: inputs.soil_hash.to_string(),
        formal_hash: inputs.formal_hash.to_string(),
        test_hash: inputs.test_hash.to_string(),
        oracles: inputs
            .oracles
            .iter()
            .map(|(source, hash)| (source.clone(), hash.to_string()))
            .collect(),
        rows: rows
            .iter()
            .map(|row| RowBlob {
                name: row.name.clone(),
                tier: row.tier.word().to_owned(),
                mode: row.mode.word().to_owned(),
                result: row.result.word().to_owned(),
            })
            .collect(),
        results_key: seal_results(inputs.suite_key, rows).to_string(),
    };
    serde_json::to_vec(&blob).expect("a result blob serializes")
}

/// What a reader checks of a result blob fetched for `inputs`: that it is one,
/// that every input the writer recorded is the reader's own, that its seal is
/// the seal of its rows under the reader's suite key, and that the rows are
/// green (only green results are shared). The rows, when all of that holds.
pub fn verify_blob(bytes: &[u8], inputs: &KeyInputs) -> Result<Vec<TestRow>, String> {
    let blob: ResultBlob = serde_json::from_slice(bytes)
        .map_err(|error| format!("the result is not readable: {error}"))?;
    if blob.format != RESULT_FORMAT {
        return Err(format!("the result's format is `{}`", blob.format));
    }
    let expected = [
        (
            "definition",
            blob.definition.as_str(),
            inputs.definition.clone(),
        ),
        (
            "toolchain",
            blob.toolchain.as_str(),
            inputs.toolchain.clone(),
        ),
        (
            "suite key",
            blob.suite_key.as_str(),
            inputs.suite_key.to_string(),
        ),
        (
            "soil_hash",
            blob.soil_hash.as_str(),
            inputs.soil_hash.to_string(),
        ),
        (
            "formal_hash",
            blob.formal_hash.as_str(),
            inputs.formal_hash.to_string(),
        ),
        (
            "test_hash",
            blob.test_hash.as_str(),
            inputs.test_hash.to_string(),
        ),
    ];
    for (what, recorded, local) in expected {
        if recorded != local {
            return Err(format!(
                "it was recorded for {what} {recorded}, this root has {local}"
            ));
        }
    }
    let oracles: BTreeMap<String, String> = inputs
        .oracles
        .iter()
        .map(|(source, hash)| (source.clone(), hash.to_string()))
        .collect();
    if blob.oracles != oracles {
        return Err("it was recorded with other oracles than this root's".to_owned());
    }
    let rows = blob
        .rows
        .iter()
        .map(|row| {
            Some(TestRow {
                name: row.name.clone(),
                tier: Tier::from_word(&row.tier)?,
                mode: Mode::from_word(&row.mode)?,
                result: TestResult::from_word(&row.result)?,
            })
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| "a row has an unknown tier, mode or result".to_owned())?;
    if seal_results(inputs.suite_key, &rows).to_string() != blob.results_key {
        return Err("its seal is not the seal of its rows under this root's suite key".to_owned());
    }
    if rows.is_empty() {
        return Err("it has no rows".to_owned());
    }
    if let Some(row) = rows
        .iter()
        .find(|row| !matches!(row.result, TestResult::Pass | TestResult::Xfail))
    {
        return Err(format!(
            "it is not green (`{}` is {})",
            row.name,
            row.result.word()
        ));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn inputs() -> KeyInputs {
        KeyInputs {
            definition: "csvstats::mean".to_owned(),
            toolchain: "trellis 0.1.0 soil0 0.1.0".to_owned(),
            suite_key: Digest::of(b"suite"),
            soil_hash: Digest::of(b"soil"),
            formal_hash: Digest::of(b"formal"),
            test_hash: Digest::of(b"test"),
            oracles: BTreeMap::from([(
                "python: reference/stats.py::mean".to_owned(),
                Digest::of(b"stats.py"),
            )]),
        }
    }

    pub(crate) fn rows() -> Vec<TestRow> {
        vec![
            TestRow {
                name: "basics#1".to_owned(),
                tier: Tier::Expect,
                mode: Mode::Sandboxed,
                result: TestResult::Pass,
            },
            TestRow {
                name: "derived:differential:python: reference/stats.py::mean".to_owned(),
                tier: Tier::Differential,
                mode: Mode::Sandboxed,
                result: TestResult::Pass,
            },
        ]
    }

    #[test]
    fn a_blob_verifies_against_the_inputs_it_was_written_for() {
        let blob = result_blob(&inputs(), &rows());
        assert_eq!(verify_blob(&blob, &inputs()), Ok(rows()));
        assert_eq!(inputs().action_key().len(), 64);
        let mut moved = inputs();
        moved.suite_key = Digest::of(b"another suite");
        assert_ne!(moved.action_key(), inputs().action_key());
    }

    #[test]
    fn a_reader_refuses_other_inputs_a_broken_seal_and_red_rows() {
        let blob = result_blob(&inputs(), &rows());
        let mut other = inputs();
        other.test_hash = Digest::of(b"another test block");
        let error = verify_blob(&blob, &other).expect_err("other inputs");
        assert!(error.contains("test_hash"), "{error}");
        let mut other = inputs();
        other.oracles.clear();
        assert!(verify_blob(&blob, &other).is_err());

        // A row flipped after sealing: the seal no longer matches.
        let text = String::from_utf8(blob.clone()).expect("UTF-8");
        let flipped = text.replacen("\"pass\"", "\"xfail\"", 1);
        let error = verify_blob(flipped.as_bytes(), &inputs()).expect_err("flipped");
        assert!(error.contains("seal"), "{error}");

        let mut red = rows();
        red[0].result = TestResult::Fail;
        let error = verify_blob(&result_blob(&inputs(), &red), &inputs()).expect_err("red");
        assert!(error.contains("not green"), "{error}");
        assert!(verify_blob(&result_blob(&inputs(), &[]), &inputs()).is_err());
        assert!(verify_blob(b"[]", &inputs()).is_err());
    }
}
