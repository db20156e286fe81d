//! `ask_human` (trellis-daemon §3.7, §8): the question is validated, persisted as
//! `<def>.question.json` beside the `.tr` (gitignored) with the spec hashes the job
//! was built against and its bundle's hash, and acknowledged; the caller ends the
//! job. The file goes through the lock store's atomic writer, so a reader never
//! sees half a question.

use std::path::Path;

use serde_json::{Value, json};
use trellis_diag::Diagnostic;

use super::jobs::JobFacts;

pub fn ask_human(
    job: JobFacts<'_>,
    root: &Path,
    arguments: &Value,
) -> Result<Value, Vec<Diagnostic>> {
    let question = arguments["question"].as_str().unwrap_or_default();
    if question.trim().is_empty() {
        return Err(vec![Diagnostic::new(
            "json-type-mismatch",
            "$.question must be a non-empty question",
        )]);
    }
    let document = json!({
        "def": job.definition,
        "kind": arguments["kind"],
        "question": question,
        "hole": arguments["hole"],
        "options": arguments["options"],
        "asked_against": job.spec_hashes,
        "bundle": job.bundle_hash,
        "created": rfc3339_now(),
    });
    let relative = format!("{}/{}.question.json", job.module, job.name);
    let text = format!(
        "{}\n",
        serde_json::to_string_pretty(&document).unwrap_or_default()
    );
    trellis_lock::write_atomic(&trellis_lock::StdFs, &root.join(&relative), text.as_bytes())
        .map_err(|error| {
            vec![
                Diagnostic::new(
                    "root-unreadable",
                    format!("cannot write {relative}: {error}"),
                )
                .with_file(relative.clone()),
            ]
        })?;
    Ok(json!({ "asked": true, "question": relative, "job": "ended" }))
}

/// Now, in UTC, as RFC 3339 (display-only, §8).
fn rfc3339_now() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (the proleptic Gregorian calendar).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3_600,
        rest / 60 % 60,
        rest % 60
    )
}
