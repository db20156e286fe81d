//! The World: the capability ports a program's `Fs`, `Clock` and `Stdout`
//! parameters act through, with real implementations and JSON-built fakes.
//! This is the only place the interpreter touches files, clocks or stdout.
// Errors are the cold path and the workspace shares one `Diagnostic` type.
#![allow(clippy::result_large_err)]

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::{Arc, Mutex};

use trellis_diag::Diagnostic;

use crate::codes::EvalCode;

/// Why a file operation failed; becomes the prelude's `IoError`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IoFailure {
    NotFound,
    PermissionDenied,
    Other(String),
}

/// The `Fs` capability.
pub trait Fs: Send {
    fn read_text(&mut self, path: &str) -> Result<String, IoFailure>;
    fn write_text(&mut self, path: &str, text: &str) -> Result<(), IoFailure>;
}

/// The `Clock` capability.
pub trait Clock: Send {
    /// Seconds since the Unix epoch, UTC.
    fn now_seconds(&mut self) -> i64;
}

/// The `Stdout` capability.
pub trait Stdout: Send {
    fn print_line(&mut self, line: &str);
}

/// The capabilities one run may use.
pub struct World {
    pub fs: Box<dyn Fs>,
    pub clock: Box<dyn Clock>,
    pub stdout: Box<dyn Stdout>,
}

impl World {
    /// The real world: files relative to the process's working directory, the
    /// system clock, the process's stdout.
    pub fn real() -> World {
        World {
            fs: Box::new(RealFs),
            clock: Box::new(RealClock),
            stdout: Box::new(RealStdout),
        }
    }

    /// A sandbox: no files, the clock at 0, stdout captured and discarded.
    pub fn sandbox() -> World {
        World {
            fs: Box::new(FakeFs::default()),
            clock: Box::new(FakeClock { now: 0 }),
            stdout: Box::new(CapturedStdout::default()),
        }
    }
}

pub struct RealFs;

#[allow(
    clippy::disallowed_methods,
    reason = "the interpreter's one real file-system port (soil0-cli §8.6): World `read_file`/`write_file` land here"
)]
impl Fs for RealFs {
    fn read_text(&mut self, path: &str) -> Result<String, IoFailure> {
        std::fs::read_to_string(path).map_err(io_failure)
    }

    fn write_text(&mut self, path: &str, text: &str) -> Result<(), IoFailure> {
        std::fs::write(path, text).map_err(io_failure)
    }
}

fn io_failure(error: std::io::Error) -> IoFailure {
    match error.kind() {
        std::io::ErrorKind::NotFound => IoFailure::NotFound,
        std::io::ErrorKind::PermissionDenied => IoFailure::PermissionDenied,
        _ => IoFailure::Other(error.to_string()),
    }
}

pub struct RealClock;

impl Clock for RealClock {
    fn now_seconds(&mut self) -> i64 {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        now.map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
    }
}

pub struct RealStdout;

impl Stdout for RealStdout {
    fn print_line(&mut self, line: &str) {
        let mut out = std::io::stdout().lock();
        // A closed stdout is not the program's failure; the line is dropped.
        let _ = writeln!(out, "{line}");
    }
}

/// An in-memory file system: `{"files":{"data.csv":"1,2\n"}}`. Writes are kept
/// and visible to later reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FakeFs {
    pub files: BTreeMap<String, String>,
}

impl FakeFs {
    pub fn from_json(text: &str) -> Result<FakeFs, Diagnostic> {
        let value = parse_fake(text, "Fs")?;
        let files = value
            .get("files")
            .and_then(|f| f.as_object())
            .ok_or_else(|| fake_error("Fs", "expected {\"files\":{path: text, ...}}"))?;
        let mut out = BTreeMap::new();
        for (path, content) in files {
            let content = content.as_str().ok_or_else(|| {
                fake_error("Fs", &format!("the content of {path:?} must be a string"))
            })?;
            out.insert(path.clone(), content.to_owned());
        }
        if value.as_object().is_some_and(|o| o.len() != 1) {
            return Err(fake_error("Fs", "only the key \"files\" is allowed"));
        }
        Ok(FakeFs { files: out })
    }
}

impl Fs for FakeFs {
    fn read_text(&mut self, path: &str) -> Result<String, IoFailure> {
        self.files.get(path).cloned().ok_or(IoFailure::NotFound)
    }

    fn write_text(&mut self, path: &str, text: &str) -> Result<(), IoFailure> {
        self.files.insert(path.to_owned(), text.to_owned());
        Ok(())
    }
}

/// A fixed clock: `{"now":1700000000}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FakeClock {
    pub now: i64,
}

impl FakeClock {
    pub fn from_json(text: &str) -> Result<FakeClock, Diagnostic> {
        let value = parse_fake(text, "Clock")?;
        let now = value
            .get("now")
            .and_then(|n| n.as_i64())
            .ok_or_else(|| fake_error("Clock", "expected {\"now\": <integer seconds>}"))?;
        if value.as_object().is_some_and(|o| o.len() != 1) {
            return Err(fake_error("Clock", "only the key \"now\" is allowed"));
        }
        Ok(FakeClock { now })
    }
}

impl Clock for FakeClock {
    fn now_seconds(&mut self) -> i64 {
        self.now
    }
}

/// Stdout captured into a shared buffer the caller keeps a handle to.
#[derive(Clone, Debug, Default)]
pub struct CapturedStdout {
    lines: Arc<Mutex<Vec<String>>>,
}

impl CapturedStdout {
    /// The lines printed so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl Stdout for CapturedStdout {
    fn print_line(&mut self, line: &str) {
        if let Ok(mut lines) = self.lines.lock() {
            lines.push(line.to_owned());
        }
    }
}

fn parse_fake(text: &str, what: &str) -> Result<serde_json::Value, Diagnostic> {
    serde_json::from_str(text).map_err(|e| fake_error(what, &format!("invalid JSON: {e}")))
}

fn fake_error(what: &str, message: &str) -> Diagnostic {
    Diagnostic::new(
        EvalCode::BadArguments.code(),
        format!("invalid {what} fake: {message}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fakes_build_from_json() {
        let mut fs = FakeFs::from_json(r#"{"files":{"data.csv":"1,2\n"}}"#).expect("valid fake");
        assert_eq!(fs.read_text("data.csv"), Ok("1,2\n".to_owned()));
        assert_eq!(fs.read_text("nope"), Err(IoFailure::NotFound));
        fs.write_text("out.txt", "hi").expect("fake writes succeed");
        assert_eq!(fs.read_text("out.txt"), Ok("hi".to_owned()));
        let mut clock = FakeClock::from_json(r#"{"now":1700000000}"#).expect("valid fake");
        assert_eq!(clock.now_seconds(), 1_700_000_000);
        let out = CapturedStdout::default();
        let mut handle = out.clone();
        handle.print_line("a");
        assert_eq!(out.lines(), vec!["a".to_owned()]);
    }

    #[test]
    fn bad_fakes_are_refused_with_a_code() {
        let errors = [
            FakeFs::from_json("[").err(),
            FakeFs::from_json(r#"{"files":{"a":1}}"#).err(),
            FakeFs::from_json(r#"{"files":{},"x":1}"#).err(),
            FakeClock::from_json(r#"{"now":"soon"}"#).err(),
        ];
        for error in errors {
            assert_eq!(error.map(|d| d.code), Some("bad-arguments".to_owned()));
        }
    }
}
