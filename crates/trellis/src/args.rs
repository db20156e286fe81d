//! Command-line parsing, by hand (no argument-parsing crate: the surface is small
//! and its help text is the documentation). Parsing is pure: it turns the argument
//! list into a [`Command`] or a usage error, and never exits the process.

use std::fmt;

pub const USAGE: &str = "\
trellis — spec-driven development with Soil

Usage: trellis <command> [options]

Commands:
  init [DIR]                      start a root in DIR (default: here; created if
                                  absent, refused if it holds one): soil.toml
                                  pinned to this binary, _project.tr, the module
                                  hello with one specified and lowered definition,
                                  hello::greet, its locks and tests (green), and a
                                  .gitignore for what must not be committed
  check [DEF] [--json]            check specs and Soil (all definitions, or one)
                                  and list the open typed holes
  status [--json] [--verify [--reseed N]] [--all]
                                  what is green, what is stale, and why: the rows
                                  needing work, ten of each status, and a summary
                                  counting all (--all: every row); --verify
                                  recomputes every status from scratch (a fresh
                                  database, every suite re-run, nothing written)
                                  and reports each row where they disagree;
                                  --reseed N also re-runs properties and derived
                                  ensures rows under N fresh seeds and reports
                                  each recorded row a fresh sample flips
  refresh [--json]                reload the root's files into the daemon
  adopt [DEF|TYPE|MODULE|project] [--cite SCOPE:LABEL]... [--json]
                                  record hand-written Soil as a human-verified
                                  lowering (all definitions, or one, citing the
                                  decisions it applies: project:LABEL, module:LABEL),
                                  or stamp one type's, module's or the project's
                                  lock; says when it resets an acceptance
  review DEF [--json]             accept a prose-only edit after reading it
  answer DEF [--text ANSWER] [--scope project|module] [--label LABEL] [--interactive]
                                  answer DEF's open question (status lists them):
                                  the answer is written into the spec (a
                                  Clarifications Q/A pair, or for a Rule a decision
                                  entry of the module or project, labelled LABEL or
                                  from the question) and DEF is to be lowered again;
                                  refused with a diff if the spec changed since it
                                  was asked. Without --text it asks on the terminal
                                  (an option's number picks that option);
                                  --interactive asks on a stdin that is no terminal
  test [DEF] [--json]             run the test tiers and record results in the locks
  call DEF JSON-ARGS [--json]     run a definition with real capabilities: its
                                  result as canonical JSON, or the error
  repl [--json]                   call definitions line by line (`DEF JSON-ARGS`,
                                  `:keep NAME` to save the last call as a test
                                  case, `:json` to switch errors between human and
                                  JSON, `:help`, `:quit`); history in
                                  .trellis/repl_history
  decisions editorial LABEL [--module M] [--json]
                                  declare a decision edit meaning-preserving
  decisions triage [LABEL] [--provider NAME] [--json]
                                  ask an agent whether each lowering flagged by a
                                  changed decision (LABEL's, or any) still follows
                                  it: `conforms` re-stamps, else it stays flagged
  toolchain update [--json]       pin soil.toml [toolchain] to this binary (adds
                                  the table or a key it lacks)
  cache keygen                    a new signing key for the shared result cache:
                                  the secret for CI (TRELLIS_CACHE_SIGNING_KEY),
                                  the public key for soil.toml [cache] trusted_keys
  lower [DEF]... [--provider NAME] [--jobs N] [--json]
                                  lower definitions with an agent (all that are not
                                  lowered, partial or stale when none is named),
                                  callee-first: up to N jobs at once in the daemon
                                  (default: one per core, at most 4; at most 64), a
                                  definition starting once the callees it may call
                                  have landed, and held (not lowered) when one fails
                                  or asks; drafts that add private helpers land in
                                  queue order, so the root ends byte for byte as with
                                  --jobs 1. A line per job state change (--json: one
                                  event per line). Providers:
                                  ~/.config/trellis/providers.toml; without it, the
                                  `claude` on PATH (Claude Code in a bubblewrap jail,
                                  also --provider claude-code)
  jobs [--json]                   the lowering queue (what each entry waits on), the
                                  running jobs and the finished ones with their
                                  outcomes
  context DEF --budget N [--out DIR] [--json]
                                  write DEF's context bundle (to .trellis/context/,
                                  or an empty DIR) and list what was packed and dropped
  spec REF                        print a spec section, e.g. soil-syntax-spec#9.1
  skill [--hash]                  print the lowering skill this binary gives an
                                  agent (--hash: its sha256, the value soil.toml
                                  [toolchain] skill pins)
  daemon run|stop|status          manage the root's daemon
  lsp                             serve the Language Server Protocol on stdio
                                  for an editor (unsaved buffers overlay the
                                  root for the editor only)

Options:
  --json        where a command lists it: print its answer as one JSON document,
                errors too (`{\"errors\":[...]}` on stdout); without it errors
                are diagnostics for a person, on stderr
  --no-daemon   answer in this process instead of the root's daemon
  -h, --help    print this help
  -V, --version print the version

DEF is a definition name, `module::name` (for example `csvstats::median`).
The root is $TRELLIS_ROOT, else the nearest directory upwards holding soil.toml.
The daemon learns of edits from an inotify watch; TRELLIS_WATCH=off makes it stat
every file on each request instead (for a root on a network filesystem).
A request's queries run on up to four threads (one per core); TRELLIS_THREADS=N
sets how many (1: the caller's thread alone). Answers are the same either way.
";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Help,
    Version,
    Init {
        /// Where the root goes; `None` is the working directory.
        dir: Option<String>,
    },
    Check {
        def: Option<String>,
        json: bool,
    },
    Status {
        json: bool,
        verify: bool,
        /// Every row in the human table, green ones too.
        all: bool,
        /// With `verify`: fresh seeds to re-run the generated tiers under.
        reseed: Option<u32>,
    },
    Refresh {
        json: bool,
    },
    Adopt {
        def: Option<String>,
        cite: Vec<String>,
        json: bool,
    },
    Review {
        def: String,
        json: bool,
    },
    Answer {
        def: String,
        /// The answer; `None` asks for it on stdin.
        text: Option<String>,
        scope: Option<String>,
        label: Option<String>,
        /// Ask on stdin even when it is not a terminal.
        interactive: bool,
    },
    Test {
        def: Option<String>,
        json: bool,
    },
    Call {
        def: String,
        args: String,
        json: bool,
    },
    Repl {
        /// Start with `:json` on.
        json: bool,
    },
    DecisionsEditorial {
        label: String,
        module: Option<String>,
        json: bool,
    },
    ToolchainUpdate {
        json: bool,
    },
    CacheKeygen,
    Context {
        def: String,
        budget: u64,
        /// Absolute once the client has resolved it (the daemon's cwd is not ours).
        out: Option<String>,
        json: bool,
    },
    Spec {
        reference: String,
    },
    Lower {
        defs: Vec<String>,
        provider: Option<String>,
        /// `--jobs N`; `None` leaves the daemon's default.
        jobs: Option<usize>,
        json: bool,
    },
    DecisionsTriage {
        label: Option<String>,
        provider: Option<String>,
        json: bool,
    },
    Jobs {
        json: bool,
    },
    Skill {
        /// Print the hash instead of the text.
        hash: bool,
    },
    Daemon(DaemonCommand),
    Lsp,
}

impl Command {
    /// Whether `--json` was given: the answer, or the errors, as the JSON
    /// document instead of the human view.
    pub fn json(&self) -> bool {
        match self {
            Command::Check { json, .. }
            | Command::Status { json, .. }
            | Command::Refresh { json }
            | Command::Adopt { json, .. }
            | Command::Review { json, .. }
            | Command::Test { json, .. }
            | Command::Call { json, .. }
            | Command::Repl { json }
            | Command::DecisionsEditorial { json, .. }
            | Command::ToolchainUpdate { json }
            | Command::Context { json, .. }
            | Command::Lower { json, .. }
            | Command::DecisionsTriage { json, .. }
            | Command::Jobs { json } => *json,
            Command::Help
            | Command::Version
            | Command::Init { .. }
            | Command::CacheKeygen
            | Command::Answer { .. }
            | Command::Spec { .. }
            | Command::Skill { .. }
            | Command::Daemon(_)
            | Command::Lsp => false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DaemonCommand {
    Run,
    Stop,
    Status,
}

/// A parsed invocation: the command and the global flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invocation {
    pub command: Command,
    pub no_daemon: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The process's arguments as text. Every name and value trellis takes is
/// UTF-8, so an argument that is not is a usage error naming it (lossily, with
/// the invalid bytes escaped), never a panic.
pub fn from_os(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Result<Vec<String>, UsageError> {
    args.into_iter()
        .enumerate()
        .map(|(at, arg)| {
            arg.into_string().map_err(|raw| {
                use std::os::unix::ffi::OsStrExt;
                let shown: String = raw
                    .as_bytes()
                    .utf8_chunks()
                    .flat_map(|chunk| {
                        let invalid = chunk.invalid().iter().map(|b| format!("\\x{b:02x}"));
                        std::iter::once(chunk.valid().to_owned()).chain(invalid)
                    })
                    .collect();
                UsageError(format!(
                    "argument {} (`{shown}`) is not valid UTF-8; trellis takes UTF-8 names and values",
                    at + 1
                ))
            })
        })
        .collect()
}

/// `--budget N`: a whole number of tokens (trellis-daemon §5).
fn parse_budget(budget: Option<String>) -> Result<u64, UsageError> {
    let budget = budget.ok_or_else(|| UsageError("`context` needs --budget N".into()))?;
    budget.parse().map_err(|_| {
        UsageError(format!(
            "--budget needs a whole number of tokens, not `{budget}`"
        ))
    })
}

/// `--jobs N`: from 1 to the daemon's most (`schedule::MAX_JOBS`).
fn parse_jobs(count: &str) -> Result<usize, UsageError> {
    let most = trellis_agent::schedule::MAX_JOBS;
    count
        .parse()
        .ok()
        .filter(|jobs| (1..=most).contains(jobs))
        .ok_or_else(|| {
            UsageError(format!(
                "--jobs needs a whole number from 1 to {most}, not `{count}`"
            ))
        })
}

pub fn parse(args: &[String]) -> Result<Invocation, UsageError> {
    let mut no_daemon = false;
    let mut json = false;
    let mut verify = false;
    let mut reseed: Option<String> = None;
    let mut all = false;
    let mut hash = false;
    let mut module = None;
    let mut cite = Vec::new();
    let mut budget = None;
    let mut out = None;
    let mut provider: Option<String> = None;
    let mut jobs: Option<String> = None;
    let mut text = None;
    let mut scope = None;
    let mut label = None;
    let mut interactive = false;
    let mut words = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                return Ok(Invocation {
                    command: Command::Help,
                    no_daemon,
                });
            }
            "-V" | "--version" => {
                return Ok(Invocation {
                    command: Command::Version,
                    no_daemon,
                });
            }
            "--no-daemon" => no_daemon = true,
            "--json" => json = true,
            "--verify" => verify = true,
            "--reseed" => match iter.next() {
                Some(value) => reseed = Some(value.clone()),
                None => return Err(UsageError("--reseed needs a number of seeds".into())),
            },
            "--all" => all = true,
            "--hash" => hash = true,
            "--cite" => match iter.next() {
                Some(value) => cite.push(value.clone()),
                None => return Err(UsageError("--cite needs SCOPE:LABEL".into())),
            },
            "--module" => match iter.next() {
                Some(name) => module = Some(name.clone()),
                None => return Err(UsageError("--module needs a module name".into())),
            },
            "--budget" => match iter.next() {
                Some(value) => budget = Some(value.clone()),
                None => return Err(UsageError("--budget needs a token count".into())),
            },
            "--provider" => match iter.next() {
                Some(value) => provider = Some(value.clone()),
                None => return Err(UsageError("--provider needs a provider name".into())),
            },
            "--jobs" => match iter.next() {
                Some(value) => jobs = Some(value.clone()),
                None => return Err(UsageError("--jobs needs a number of jobs".into())),
            },
            "--out" => match iter.next() {
                Some(value) => out = Some(value.clone()),
                None => return Err(UsageError("--out needs a directory".into())),
            },
            "--text" => match iter.next() {
                Some(value) => text = Some(value.clone()),
                None => return Err(UsageError("--text needs the answer".into())),
            },
            // The value is checked by the service (`job-bad-scope`), like the
            // same param sent over the socket.
            "--scope" => match iter.next() {
                Some(value) => scope = Some(value.clone()),
                None => return Err(UsageError("--scope needs project or module".into())),
            },
            "--label" => match iter.next() {
                Some(value) => label = Some(value.clone()),
                None => return Err(UsageError("--label needs a decision label".into())),
            },
            "--interactive" => interactive = true,
            flag if flag.starts_with("--") => {
                return Err(UsageError(format!("unknown option `{flag}`")));
            }
            word => words.push(word.to_owned()),
        }
    }
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let command = match words.as_slice() {
        [] => return Err(UsageError("no command given; see `trellis --help`".into())),
        ["init"] => Command::Init { dir: None },
        ["init", dir] => Command::Init {
            dir: Some((*dir).to_owned()),
        },
        ["check"] => Command::Check { def: None, json },
        ["check", def] => Command::Check {
            def: Some((*def).to_owned()),
            json,
        },
        ["status"] => Command::Status {
            json,
            verify,
            all,
            reseed: match reseed.take() {
                None => None,
                Some(_) if !verify => {
                    return Err(UsageError(
                        "--reseed only applies to `status --verify`".into(),
                    ));
                }
                Some(count) => {
                    Some(count.parse().ok().filter(|&n: &u32| n > 0).ok_or_else(|| {
                        UsageError(format!(
                            "--reseed needs a positive number of seeds, not `{count}`"
                        ))
                    })?)
                }
            },
        },
        ["refresh"] => Command::Refresh { json },
        ["adopt"] => Command::Adopt {
            def: None,
            cite: std::mem::take(&mut cite),
            json,
        },
        ["adopt", def] => Command::Adopt {
            def: Some((*def).to_owned()),
            cite: std::mem::take(&mut cite),
            json,
        },
        ["review", def] => Command::Review {
            def: (*def).to_owned(),
            json,
        },
        ["answer", def] => Command::Answer {
            def: (*def).to_owned(),
            text: text.take(),
            scope: scope.take(),
            label: label.take(),
            interactive: std::mem::take(&mut interactive),
        },
        ["test"] => Command::Test { def: None, json },
        ["test", def] => Command::Test {
            def: Some((*def).to_owned()),
            json,
        },
        ["repl"] => Command::Repl { json },
        ["call", def, args] => Command::Call {
            def: (*def).to_owned(),
            args: (*args).to_owned(),
            json,
        },
        ["decisions", "editorial", label] => Command::DecisionsEditorial {
            label: (*label).to_owned(),
            module: module.take(),
            json,
        },
        ["toolchain", "update"] => Command::ToolchainUpdate { json },
        ["cache", "keygen"] => Command::CacheKeygen,
        ["context", def] => Command::Context {
            def: (*def).to_owned(),
            budget: parse_budget(budget.take())?,
            out: out.take(),
            json,
        },
        ["spec", reference] => Command::Spec {
            reference: (*reference).to_owned(),
        },
        ["lower", defs @ ..] => Command::Lower {
            defs: defs.iter().map(|def| (*def).to_owned()).collect(),
            provider: provider.take(),
            jobs: match jobs.take() {
                None => None,
                Some(count) => Some(parse_jobs(&count)?),
            },
            json,
        },
        ["jobs"] => Command::Jobs { json },
        ["decisions", "triage"] => Command::DecisionsTriage {
            label: None,
            provider: provider.take(),
            json,
        },
        ["decisions", "triage", label] => Command::DecisionsTriage {
            label: Some((*label).to_owned()),
            provider: provider.take(),
            json,
        },
        ["skill"] => Command::Skill { hash },
        ["daemon", "run"] => Command::Daemon(DaemonCommand::Run),
        ["daemon", "stop"] => Command::Daemon(DaemonCommand::Stop),
        ["daemon", "status"] => Command::Daemon(DaemonCommand::Status),
        ["lsp"] => Command::Lsp,
        _ => {
            return Err(UsageError(format!(
                "unknown command or wrong arguments: `{}`; see `trellis --help`",
                words.join(" ")
            )));
        }
    };
    if json && !command.json() {
        return Err(UsageError(format!("`{}` does not take --json", words[0])));
    }
    if verify && !matches!(command, Command::Status { .. }) {
        return Err(UsageError("--verify only applies to `status`".into()));
    }
    if reseed.is_some() {
        return Err(UsageError(
            "--reseed only applies to `status --verify`".into(),
        ));
    }
    if all && !matches!(command, Command::Status { .. }) {
        return Err(UsageError("--all only applies to `status`".into()));
    }
    if hash && !matches!(command, Command::Skill { .. }) {
        return Err(UsageError("--hash only applies to `skill`".into()));
    }
    if module.is_some() {
        return Err(UsageError(
            "--module only applies to `decisions editorial`".into(),
        ));
    }
    if !cite.is_empty() {
        return Err(UsageError("--cite only applies to `adopt`".into()));
    }
    if provider.is_some() {
        return Err(UsageError("--provider only applies to `lower`".into()));
    }
    if jobs.is_some() {
        return Err(UsageError("--jobs only applies to `lower`".into()));
    }
    if budget.is_some() || out.is_some() {
        return Err(UsageError(
            "--budget and --out only apply to `context`".into(),
        ));
    }
    if text.is_some() || scope.is_some() || label.is_some() || interactive {
        return Err(UsageError(
            "--text, --scope, --label and --interactive only apply to `answer`".into(),
        ));
    }
    if let Command::Answer {
        text: Some(_),
        interactive: true,
        ..
    } = &command
    {
        return Err(UsageError(
            "`answer` takes --text or --interactive, not both".into(),
        ));
    }
    Ok(Invocation { command, no_daemon })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_words(line: &str) -> Result<Invocation, UsageError> {
        let args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        parse(&args)
    }

    #[test]
    fn commands_parse() {
        assert_eq!(
            parse_words("status --json").map(|i| i.command),
            Ok(Command::Status {
                json: true,
                verify: false,
                all: false,
                reseed: None,
            })
        );
        assert_eq!(
            parse_words("status --verify --reseed 16").map(|i| i.command),
            Ok(Command::Status {
                json: false,
                verify: true,
                all: false,
                reseed: Some(16),
            })
        );
        for refused in [
            "status --reseed 4",
            "status --verify --reseed 0",
            "status --verify --reseed x",
            "test --reseed 2",
        ] {
            assert!(parse_words(refused).is_err(), "{refused}");
        }
        assert_eq!(
            parse_words("check --json").map(|i| i.command),
            Ok(Command::Check {
                def: None,
                json: true
            })
        );
        assert_eq!(
            parse_words("--no-daemon check csvstats::median"),
            Ok(Invocation {
                command: Command::Check {
                    def: Some("csvstats::median".into()),
                    json: false,
                },
                no_daemon: true
            })
        );
        assert_eq!(
            parse_words("decisions editorial cell-errors --module csvstats").map(|i| i.command),
            Ok(Command::DecisionsEditorial {
                label: "cell-errors".into(),
                module: Some("csvstats".into()),
                json: false,
            })
        );
    }

    #[test]
    fn context_and_spec_parse() {
        assert_eq!(
            parse_words("context csvstats::mean --budget 4000 --out b --json").map(|i| i.command),
            Ok(Command::Context {
                def: "csvstats::mean".into(),
                budget: 4000,
                out: Some("b".into()),
                json: true
            })
        );
        assert_eq!(
            parse_words("spec soil-syntax-spec#9.1").map(|i| i.command),
            Ok(Command::Spec {
                reference: "soil-syntax-spec#9.1".into()
            })
        );
        assert_eq!(
            parse_words("skill --hash").map(|i| i.command),
            Ok(Command::Skill { hash: true })
        );
        assert_eq!(
            parse_words("skill").map(|i| i.command),
            Ok(Command::Skill { hash: false })
        );
        assert_eq!(
            parse_words("init words").map(|i| i.command),
            Ok(Command::Init {
                dir: Some("words".into())
            })
        );
        assert_eq!(
            parse_words("init").map(|i| i.command),
            Ok(Command::Init { dir: None })
        );
        assert_eq!(
            parse_words("call m::f [] --json").map(|i| i.command),
            Ok(Command::Call {
                def: "m::f".into(),
                args: "[]".into(),
                json: true
            })
        );
        assert_eq!(
            parse_words("test --json").map(|i| i.command),
            Ok(Command::Test {
                def: None,
                json: true
            })
        );
        assert_eq!(
            parse_words("repl").map(|i| i.command),
            Ok(Command::Repl { json: false })
        );
    }

    #[test]
    fn answer_parses() {
        assert_eq!(
            parse_words("answer csvstats::mean --text yes --scope module --label l")
                .map(|i| i.command),
            Ok(Command::Answer {
                def: "csvstats::mean".into(),
                text: Some("yes".into()),
                scope: Some("module".into()),
                label: Some("l".into()),
                interactive: false,
            })
        );
        assert_eq!(
            parse_words("answer csvstats::mean --interactive").map(|i| i.command),
            Ok(Command::Answer {
                def: "csvstats::mean".into(),
                text: None,
                scope: None,
                label: None,
                interactive: true,
            })
        );
        assert_eq!(parse_words("lsp").map(|i| i.command), Ok(Command::Lsp));
        assert!(parse_words("lsp --json").is_err() && parse_words("lsp x").is_err());
    }

    #[test]
    fn lower_takes_a_number_of_jobs() {
        assert_eq!(
            parse_words("lower m::f m::g --jobs 8 --json").map(|i| i.command),
            Ok(Command::Lower {
                defs: vec!["m::f".into(), "m::g".into()],
                provider: None,
                jobs: Some(8),
                json: true,
            })
        );
        assert_eq!(
            parse_words("lower").map(|i| i.command),
            Ok(Command::Lower {
                defs: Vec::new(),
                provider: None,
                jobs: None,
                json: false,
            })
        );
        let error = parse_words("lower --jobs 0").expect_err("zero jobs");
        assert_eq!(
            error.to_string(),
            "--jobs needs a whole number from 1 to 64, not `0`"
        );
    }

    #[test]
    fn mistakes_are_usage_errors() {
        for line in [
            "",
            "chek",
            "check a b",
            "status --bogus",
            "spec x --json",
            "refresh --module m",
            "context csvstats::mean",
            "context csvstats::mean --budget lots",
            "context csvstats::mean --budget -1",
            "check --budget 10",
            "spec",
            "skill extra",
            "skill --json",
            "check --hash",
            "answer",
            "answer m::f --text",
            "answer m::f --scope",
            "answer m::f --json",
            "answer m::f --text a --interactive",
            "check --text a",
            "status --scope module",
            "init a b",
            "init --json",
            "lower --jobs",
            "lower --jobs 0",
            "lower --jobs 65",
            "lower --jobs many",
            "status --jobs 2",
            "decisions triage --jobs 2",
        ] {
            assert!(parse_words(line).is_err(), "{line:?} parsed");
        }
    }
}
