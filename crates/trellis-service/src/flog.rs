//! `f.log` (trellis-daemon §9): one JSON object per line in the module directory
//! of the definition it is about, appended, gitignored, never read back as an
//! input. Every event carries `event`, `at` (RFC 3339), the job and the
//! definition; the rest of its fields are the event's own. Appending is best
//! effort: a log that cannot be written must not fail a lowering, so a failure is
//! reported on the daemon's stderr and the job goes on.

use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};

/// Appends one event. `fields` must be a JSON object; its keys join the common ones.
pub fn append(root: &Path, module: &str, job: &str, definition: &str, event: &str, fields: Value) {
    let mut line = json!({
        "event": event,
        "at": rfc3339_now(),
        "job": job,
        "definition": definition,
    });
    if let (Value::Object(line), Value::Object(fields)) = (&mut line, fields) {
        line.extend(fields);
    }
    let path = root.join(module).join("f.log");
    let text = format!("{line}\n");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(text.as_bytes()));
    if let Err(error) = written {
        eprintln!(
            "trellis daemon: cannot append to {}: {error}",
            path.display()
        );
    }
}

/// Now, in UTC, as RFC 3339 (display-only).
pub fn rfc3339_now() -> String {
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
