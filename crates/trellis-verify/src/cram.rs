//! The cram runner (tr-grammar §3.5, mode `real`): one fresh temp dir and one
//! sequential `sh` session per block, combined output and exit status attributed
//! to each command by a marker line the generated script prints after it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use trellis_hash::Hasher;
pub use trellis_spec::{CramCommand, CramFixture, CramStep};

use crate::process::{Exit, ProcessRunner, ProcessSpec};

/// How a block's session is set up.
#[derive(Clone, Debug)]
pub struct CramConfig {
    /// Prepended to `PATH`: where the `trellis` binary (and built targets) live.
    pub tool_dir: PathBuf,
    /// The rest of `PATH`.
    pub base_path: String,
    /// Exported as `TRELLIS_ROOT`, so `trellis call` finds the root from the temp dir.
    pub root: PathBuf,
    /// Further variables (the environment is otherwise fixed, never inherited).
    pub extra_env: Vec<(String, String)>,
    /// For the whole block.
    pub timeout: Duration,
    /// Where block dirs are created; `std::env::temp_dir()` by default.
    pub temp_parent: PathBuf,
}

impl CramConfig {
    pub fn new(
        tool_dir: impl Into<PathBuf>,
        base_path: impl Into<String>,
        root: impl Into<PathBuf>,
    ) -> Self {
        CramConfig {
            tool_dir: tool_dir.into(),
            base_path: base_path.into(),
            root: root.into(),
            extra_env: Vec::new(),
            timeout: Duration::from_secs(60),
            temp_parent: std::env::temp_dir(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CramResult {
    pub commands: Vec<CommandResult>,
    /// The block could not be run at all (temp dir, fixture staging, spawn).
    pub setup_error: Option<String>,
}

impl CramResult {
    pub fn passed(&self) -> bool {
        self.setup_error.is_none() && self.commands.iter().all(|c| c.verdict == Verdict::Pass)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandResult {
    pub command: String,
    pub verdict: Verdict,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// The output, the exit status, or both differ.
    Mismatch {
        output: Option<OutputMismatch>,
        exit: Option<ExitMismatch>,
    },
    /// The block's timeout fired while this command ran; it was killed.
    Timeout {
        partial_output: String,
    },
    /// An earlier command timed out or ended the session.
    NotRun,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputMismatch {
    pub expected: String,
    pub actual: String,
    /// A line diff, `-` expected and `+` actual.
    pub diff: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExitMismatch {
    pub expected: u8,
    pub actual: i32,
}

/// Runs one cram block.
pub fn run_cram(runner: &dyn ProcessRunner, config: &CramConfig, steps: &[CramStep]) -> CramResult {
    let commands: Vec<&CramCommand> = steps
        .iter()
        .filter_map(|step| match step {
            CramStep::Command(command) => Some(command),
            CramStep::Fixture(_) => None,
        })
        .collect();
    let block = match BlockDir::create(&config.temp_parent) {
        Ok(block) => block,
        Err(error) => return setup_failure(format!("cannot create a temp dir: {error}")),
    };
    let marker = marker_for(steps);
    if let Err(error) = block.stage(steps, &marker) {
        return setup_failure(error);
    }
    let mut spec = ProcessSpec::new("/bin/sh", block.work(), config.timeout)
        .arg(block.script_path().to_string_lossy())
        .env(
            "PATH",
            format!("{}:{}", config.tool_dir.display(), config.base_path),
        )
        .env("TRELLIS_ROOT", config.root.to_string_lossy())
        .env("HOME", block.home().to_string_lossy())
        .env("TMPDIR", block.tmp().to_string_lossy())
        .env("LC_ALL", "C")
        .env("TZ", "UTC");
    for (key, value) in &config.extra_env {
        spec = spec.env(key.clone(), value.clone());
    }
    let outcome = runner.run(&spec);
    if let Exit::NotStarted(reason) = &outcome.exit {
        return setup_failure(format!("cannot start sh: {reason}"));
    }
    let session_status = match outcome.exit {
        Exit::Code(code) => code,
        Exit::Signal(signal) => 128 + signal,
        Exit::NotStarted(_) => -1,
    };
    let stdout = outcome.stdout.text();
    let mut rest = stdout.as_str();
    let mut results = Vec::with_capacity(commands.len());
    let mut session_over = false;
    for (index, command) in commands.iter().enumerate() {
        let verdict = if session_over {
            Verdict::NotRun
        } else {
            match take_until_marker(&mut rest, &marker, index) {
                Some((output, status)) => judge(command, &output, status),
                None if outcome.timed_out => {
                    session_over = true;
                    Verdict::Timeout {
                        partial_output: std::mem::take(&mut rest).to_owned(),
                    }
                }
                None => {
                    // The session ended inside this command (`exit n`, a fatal
                    // shell error): its status is the shell's.
                    session_over = true;
                    judge(command, std::mem::take(&mut rest), session_status)
                }
            }
        };
        results.push(CommandResult {
            command: command.command.clone(),
            verdict,
        });
    }
    CramResult {
        commands: results,
        setup_error: None,
    }
}

fn setup_failure(message: String) -> CramResult {
    CramResult {
        commands: Vec::new(),
        setup_error: Some(message),
    }
}

fn judge(command: &CramCommand, output: &str, status: i32) -> Verdict {
    let output_mismatch = (output != command.output).then(|| OutputMismatch {
        expected: command.output.clone(),
        actual: output.to_owned(),
        diff: line_diff(&command.output, output),
    });
    let exit_mismatch = (status != i32::from(command.exit_code)).then_some(ExitMismatch {
        expected: command.exit_code,
        actual: status,
    });
    if output_mismatch.is_none() && exit_mismatch.is_none() {
        Verdict::Pass
    } else {
        Verdict::Mismatch {
            output: output_mismatch,
            exit: exit_mismatch,
        }
    }
}

/// Splits `"<output>\n<marker> <index> <status>\n"` off the front of `rest`.
fn take_until_marker(rest: &mut &str, marker: &str, index: usize) -> Option<(String, i32)> {
    let needle = format!("\n{marker} {index} ");
    let at = rest.find(&needle)?;
    let output = rest[..at].to_owned();
    let after = &rest[at + needle.len()..];
    let line_end = after.find('\n')?;
    let status = after[..line_end].trim().parse::<i32>().ok()?;
    *rest = &after[line_end + 1..];
    Some((output, status))
}

/// A marker no transcript output will contain by accident.
fn marker_for(steps: &[CramStep]) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut hasher = Hasher::tagged("trellis-cram-marker");
    hasher
        .part(&nanos.to_be_bytes())
        .part(&std::process::id().to_be_bytes())
        .part(&COUNTER.fetch_add(1, Ordering::Relaxed).to_be_bytes())
        .part(format!("{steps:?}").as_bytes());
    format!("@@TRELLIS-CRAM-{}@@", &hasher.finish().hex()[..24])
}

/// A block's private directory tree, removed on drop:
/// `work/` (the cwd), `home/`, `tmp/`, `fixtures/` (staged contents), `session.sh`.
struct BlockDir {
    path: PathBuf,
}

#[allow(
    clippy::disallowed_methods,
    reason = "a cram block's sandbox directory is the verifier's scratch port: it stages fixtures and the session script"
)]
impl BlockDir {
    fn create(parent: &Path) -> std::io::Result<BlockDir> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mut last_error = None;
        for _ in 0..16 {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let name = format!(
                "trellis-cram-{}-{}-{}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed),
                nanos
            );
            let path = parent.join(name);
            match std::fs::create_dir(&path) {
                Ok(()) => {
                    let block = BlockDir { path };
                    for sub in ["work", "home", "tmp", "fixtures"] {
                        std::fs::create_dir(block.path.join(sub))?;
                    }
                    return Ok(block);
                }
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                    last_error = Some(error);
                }
                Err(error) => return Err(error),
            }
        }
        Err(last_error.unwrap_or_else(|| std::io::Error::other("no unique name")))
    }

    fn work(&self) -> PathBuf {
        self.path.join("work")
    }

    fn home(&self) -> PathBuf {
        self.path.join("home")
    }

    fn tmp(&self) -> PathBuf {
        self.path.join("tmp")
    }

    fn script_path(&self) -> PathBuf {
        self.path.join("session.sh")
    }

    /// Writes the fixtures' contents and the session script; fixtures are copied
    /// into place by the script itself, so each lands just before the command
    /// that follows it in the transcript.
    fn stage(&self, steps: &[CramStep], marker: &str) -> Result<(), String> {
        let mut script = String::from("exec 2>&1\n");
        let _ = writeln!(
            script,
            "cd {} || exit 125",
            quote(&self.work().to_string_lossy())
        );
        let mut command_index = 0usize;
        for (step_index, step) in steps.iter().enumerate() {
            match step {
                CramStep::Fixture(fixture) => {
                    if !is_safe_relative(&fixture.path) {
                        return Err(format!(
                            "fixture path {:?} is not a plain relative path",
                            fixture.path
                        ));
                    }
                    let staged = self.path.join("fixtures").join(step_index.to_string());
                    std::fs::write(&staged, fixture.content.as_bytes())
                        .map_err(|e| format!("cannot stage fixture {:?}: {e}", fixture.path))?;
                    if let Some((dir, _)) = fixture.path.rsplit_once('/') {
                        let _ = writeln!(script, "mkdir -p -- {}", quote(dir));
                    }
                    let _ = writeln!(
                        script,
                        "cp -- {} {}",
                        quote(&staged.to_string_lossy()),
                        quote(&fixture.path)
                    );
                }
                CramStep::Command(command) => {
                    script.push_str(&command.command);
                    script.push('\n');
                    let _ = writeln!(
                        script,
                        "printf '\\n%s %d %d\\n' '{marker}' {command_index} \"$?\""
                    );
                    command_index += 1;
                }
            }
        }
        std::fs::write(self.script_path(), &script)
            .map_err(|e| format!("cannot write the session script: {e}"))
    }
}

#[allow(
    clippy::disallowed_methods,
    reason = "removes the cram block's sandbox directory"
)]
impl Drop for BlockDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

fn is_safe_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && path
            .split('/')
            .all(|seg| !seg.is_empty() && seg != ".." && seg != ".")
}

/// Single-quoted for `sh`.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// A whole-text line diff (LCS), `-` for expected-only lines, `+` for actual-only,
/// ` ` for shared; a missing final newline is flagged.
pub fn line_diff(expected: &str, actual: &str) -> String {
    let old = split_lines(expected);
    let new = split_lines(actual);
    let mut out = String::from("--- expected\n+++ actual\n");
    // Outputs are small; past this size a plain listing is more useful anyway.
    if old.len().saturating_mul(new.len()) > 1_000_000 {
        for line in &old {
            let _ = writeln!(out, "-{line}");
        }
        for line in &new {
            let _ = writeln!(out, "+{line}");
        }
        return out;
    }
    let (n, m) = (old.len(), new.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            let _ = writeln!(out, " {}", old[i]);
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            let _ = writeln!(out, "-{}", old[i]);
            i += 1;
        } else {
            let _ = writeln!(out, "+{}", new[j]);
            j += 1;
        }
    }
    out
}

fn split_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(|l| l.to_owned()).collect();
    for line in &mut lines {
        if line.ends_with('\n') {
            line.pop();
        } else {
            line.push_str(" (no newline at end)");
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::RealRunner;
    use std::time::Instant;
    use trellis_diag::TextRange;

    fn command(text: &str, output: &str, exit_code: u8) -> CramStep {
        CramStep::Command(CramCommand {
            command: text.into(),
            output: output.into(),
            exit_code,
            range: TextRange::empty(0),
        })
    }

    fn fixture(path: &str, content: &str) -> CramStep {
        CramStep::Fixture(CramFixture {
            path: path.into(),
            content: content.into(),
            range: TextRange::empty(0),
        })
    }

    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let path = std::env::temp_dir()
                .join(format!("trellis-verify-test-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir_all(&path).expect("scratch dir");
            Scratch(path)
        }

        fn is_empty(&self) -> bool {
            std::fs::read_dir(&self.0)
                .map(|mut d| d.next().is_none())
                .unwrap_or(false)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn config(scratch: &Scratch, timeout_ms: u64) -> CramConfig {
        let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../test-data/verify/cram");
        let mut config = CramConfig::new(data.join("bin"), "/usr/bin:/bin", "/the/root");
        config.timeout = Duration::from_millis(timeout_ms);
        config.temp_parent = scratch.0.clone();
        config
    }

    fn render(result: &CramResult) -> String {
        let mut out = String::new();
        if let Some(error) = &result.setup_error {
            let _ = writeln!(out, "setup error: {error}");
        }
        for c in &result.commands {
            match &c.verdict {
                Verdict::Pass => {
                    let _ = writeln!(out, "$ {}: pass", c.command);
                }
                Verdict::Mismatch { output, exit } => {
                    let _ = writeln!(out, "$ {}: mismatch", c.command);
                    if let Some(exit) = exit {
                        let _ = writeln!(
                            out,
                            "  exit: expected {} got {}",
                            exit.expected, exit.actual
                        );
                    }
                    if let Some(output) = output {
                        out.push_str(&output.diff);
                    }
                }
                Verdict::Timeout { partial_output } => {
                    let _ = writeln!(out, "$ {}: timeout after {partial_output:?}", c.command);
                }
                Verdict::NotRun => {
                    let _ = writeln!(out, "$ {}: not run", c.command);
                }
            }
        }
        out
    }

    #[test]
    fn a_passing_transcript_with_fixtures() {
        let scratch = Scratch::new("pass");
        let steps = [
            fixture("data.csv", "1.0,2.0\n3.5\n"),
            command("cat data.csv", "1.0,2.0\n3.5\n", 0),
            command(
                "cat missing.csv",
                "cat: missing.csv: No such file or directory\n",
                1,
            ),
            fixture("sub/dir/more.txt", "more\n"),
            command("cd sub/dir\nx=$(cat more.txt)", "", 0),
            command(
                "echo \"$x in $(basename \"$PWD\")\"; ls ../..",
                "more in dir\ndata.csv\nsub\n",
                0,
            ),
            command(
                "echo \"$TRELLIS_ROOT\"; trellis call f '[1]'",
                "/the/root\ncalled: call f [1]\n",
                0,
            ),
            command("printf 'no newline'", "no newline", 0),
            command("exit 3", "", 3),
        ];
        let result = run_cram(&RealRunner, &config(&scratch, 20_000), &steps);
        expect_test::expect![[r#"
            $ cat data.csv: pass
            $ cat missing.csv: pass
            $ cd sub/dir
            x=$(cat more.txt): pass
            $ echo "$x in $(basename "$PWD")"; ls ../..: pass
            $ echo "$TRELLIS_ROOT"; trellis call f '[1]': pass
            $ printf 'no newline': pass
            $ exit 3: pass
        "#]]
        .assert_eq(&render(&result));
        assert!(result.passed());
        assert!(scratch.is_empty(), "the block dir was not removed");
    }

    #[test]
    fn an_exit_code_failure() {
        let scratch = Scratch::new("exit");
        let steps = [command("echo hi; false", "hi\n", 0), command("true", "", 2)];
        let result = run_cram(&RealRunner, &config(&scratch, 20_000), &steps);
        expect_test::expect![[r#"
            $ echo hi; false: mismatch
              exit: expected 0 got 1
            $ true: mismatch
              exit: expected 2 got 0
        "#]]
        .assert_eq(&render(&result));
        assert!(!result.passed());
    }

    #[test]
    fn an_output_mismatch_with_a_diff() {
        let scratch = Scratch::new("output");
        let steps = [
            command("printf 'a\\nb\\nc\\n'; echo oops >&2", "a\nB\nc\n", 0),
            command("echo after", "after\n", 0),
        ];
        let result = run_cram(&RealRunner, &config(&scratch, 20_000), &steps);
        expect_test::expect![[r#"
            $ printf 'a\nb\nc\n'; echo oops >&2: mismatch
            --- expected
            +++ actual
             a
            -B
            +b
             c
            +oops
            $ echo after: pass
        "#]]
        .assert_eq(&render(&result));
    }

    #[test]
    fn a_hanging_command_is_killed_at_the_block_timeout() {
        let scratch = Scratch::new("hang");
        let steps = [
            command("echo before", "before\n", 0),
            command("echo partial; sleep 30", "", 0),
            command("echo after", "after\n", 0),
        ];
        let started = Instant::now();
        let result = run_cram(&RealRunner, &config(&scratch, 500), &steps);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        expect_test::expect![[r#"
            $ echo before: pass
            $ echo partial; sleep 30: timeout after "partial\n"
            $ echo after: not run
        "#]]
        .assert_eq(&render(&result));
        assert!(scratch.is_empty());
    }

    proptest::proptest! {
        #[test]
        fn the_diff_keeps_both_sides(
            expected in proptest::collection::vec("[ab]{0,2}", 0..6),
            actual in proptest::collection::vec("[ab]{0,2}", 0..6),
        ) {
            let expected = expected.iter().map(|l| format!("{l}\n")).collect::<String>();
            let actual = actual.iter().map(|l| format!("{l}\n")).collect::<String>();
            let diff = line_diff(&expected, &actual);
            let side = |keep: char| {
                diff.lines()
                    .skip(2)
                    .filter(|l| l.starts_with(' ') || l.starts_with(keep))
                    .map(|l| format!("{}\n", &l[1..]))
                    .collect::<String>()
            };
            proptest::prop_assert_eq!(side('-'), expected);
            proptest::prop_assert_eq!(side('+'), actual);
        }

        #[test]
        fn marker_parsing_never_panics(text in "\\PC*", index in 0usize..3) {
            let mut rest = text.as_str();
            let _ = take_until_marker(&mut rest, "@@M@@", index);
        }
    }

    #[test]
    fn unsafe_fixture_paths_are_refused() {
        let scratch = Scratch::new("unsafe");
        let steps = [fixture("../escape", "x\n"), command("true", "", 0)];
        let result = run_cram(&RealRunner, &config(&scratch, 20_000), &steps);
        assert!(result.setup_error.is_some_and(|e| e.contains("escape")));
        assert!(scratch.is_empty());
    }
}
