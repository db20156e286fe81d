//! The soil0 command line as a library: argument dispatch to one module per
//! subcommand, the error codes the CLI itself reports, and the [`Host`] port the
//! commands read files through. Every machine-facing outcome is exactly one
//! document on the output: the command's result, or `{"errors":[...]}`.

mod check;
mod options;
mod print;
mod run;
mod test;

use std::io::{self, Write};

use trellis_diag::{Diagnostic, errors_document};

/// Exit statuses (soil0-cli §1.3).
pub const EXIT_OK: u8 = 0;
/// The input has problems (unreadable, syntax errors, ...).
pub const EXIT_PROBLEMS: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
/// A toolchain bug: the panic hook's `internal-error` document.
pub const EXIT_INTERNAL: u8 = 3;

/// The codes the CLI reports itself (parse and check codes come from the crates
/// below). Defined once; a test checks the registry has every one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CliCode {
    UsageError,
    FileUnreadable,
    InternalError,
    /// A test bundle that does not match §10 (the message starts with the JSON path).
    BadBundle,
}

impl CliCode {
    pub const ALL: &'static [CliCode] = &[
        CliCode::UsageError,
        CliCode::FileUnreadable,
        CliCode::InternalError,
        CliCode::BadBundle,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CliCode::UsageError => "usage-error",
            CliCode::FileUnreadable => "file-unreadable",
            CliCode::InternalError => "internal-error",
            CliCode::BadBundle => "bad-bundle",
        }
    }
}

/// What the commands need from the outside world.
pub trait Host {
    fn read_file(&self, path: &str) -> io::Result<String>;
}

/// The real file system.
pub struct OsHost;

#[allow(
    clippy::disallowed_methods,
    reason = "soil0's command line: the one real file-system host"
)]
impl Host for OsHost {
    fn read_file(&self, path: &str) -> io::Result<String> {
        std::fs::read_to_string(path)
    }
}

pub const USAGE: &str = "\
soil0: the Soil toolchain (docs/contracts/soil0-cli.md)

USAGE:
    soil0 print [--hash-form] FILE...
    soil0 check --env ENV.json --program PROGRAM.json [--def NAME]
    soil0 run   --env ENV.json --program PROGRAM.json DEF JSON-ARGS
    soil0 run   FILE.soil... DEF JSON-ARGS
    soil0 test  [--env ENV.json] [--program PROGRAM.json] BUNDLE.json
    soil0 COMMAND --help

COMMANDS:
    print    Parse each FILE and write its canonical text (docs/soil-syntax-spec.md §9)
             to stdout. With several files, each is preceded by a `-- <path>` line.
             --hash-form writes each item's hash form (§9.1) instead, items separated
             by a blank line.
    check    Decode env.json (§6) and program.json (§7), type-check every definition
             (§9) and write the §8.4 document of NAME, or {\"definitions\":[...]} for
             the whole program.
    run      Check the program, then run DEF (§8.6): capability parameters (Fs, Clock,
             Stdout) come from the real world, the others are decoded in order from
             the JSON array JSON-ARGS. Writes the result's canonical JSON (§7.1).
             Lines the program prints through Stdout go to stderr. Given FILE.soil...
             instead of the options, the program is those Soil files, one module
             each, named after the file's stem (§13.8).
    test     Run every case of the test bundle BUNDLE.json (§10) with fakes built per
             case and write {\"cases\":[...]}. env.json and program.json are the
             options when given, else the bundle's `env` / `program` paths (relative
             to the bundle's directory).

OPTIONS:
    -h, --help    Print this help.

stdout holds exactly one document. Exit status: 0 success (for `test`, even when
cases fail); 1 the input has problems or the run was refused or panicked, with
{\"errors\":[...]} on stdout; 2 usage error; 3 internal error.
";

/// Runs soil0 with `args` (without the program name), writing the command's
/// output to `out`; returns the exit status. Errors writing `out` are returned so
/// the binary can treat a closed pipe as a clean exit.
pub fn run(args: &[String], host: &dyn Host, out: &mut dyn Write) -> io::Result<u8> {
    let Some((command, rest)) = args.split_first() else {
        return usage_error(out, "no command given; try `soil0 --help`");
    };
    match command.as_str() {
        "-h" | "--help" | "help" => {
            out.write_all(USAGE.as_bytes())?;
            Ok(EXIT_OK)
        }
        "print" => print::run(rest, host, out),
        "check" => check::run(rest, host, out),
        "run" => run::run(rest, host, out),
        "test" => test::run(rest, host, out),
        other => usage_error(
            out,
            &format!("unknown command `{other}`; try `soil0 --help`"),
        ),
    }
}

/// Writes a usage error document and returns the usage exit status.
pub(crate) fn usage_error(out: &mut dyn Write, message: &str) -> io::Result<u8> {
    let diagnostic = Diagnostic::new(CliCode::UsageError.as_str(), message);
    write_errors(out, &[diagnostic])?;
    Ok(EXIT_USAGE)
}

/// The `file-unreadable` diagnostic for `path`.
pub(crate) fn unreadable(path: &str, error: &io::Error) -> Diagnostic {
    Diagnostic::new(
        CliCode::FileUnreadable.as_str(),
        format!("cannot read {path}: {error}"),
    )
    .with_file(path)
}

/// Reads env.json and program.json, reporting every unreadable one.
pub(crate) fn read_documents(
    host: &dyn Host,
    env: &str,
    program: &str,
) -> Result<(String, String), Vec<Diagnostic>> {
    match (host.read_file(env), host.read_file(program)) {
        (Ok(env), Ok(program)) => Ok((env, program)),
        (env_read, program_read) => Err([(env, env_read.err()), (program, program_read.err())]
            .into_iter()
            .filter_map(|(path, error)| error.map(|e| unreadable(path, &e)))
            .collect()),
    }
}

/// Writes a command's document and a newline; returns its exit status.
pub(crate) fn write_output(out: &mut dyn Write, output: &crate::Output) -> io::Result<u8> {
    out.write_all(output.document.as_bytes())?;
    out.write_all(b"\n")?;
    Ok(output.exit)
}

/// Writes `{"errors":[...]}` and a newline.
pub fn write_errors(out: &mut dyn Write, diagnostics: &[Diagnostic]) -> io::Result<()> {
    out.write_all(errors_document(diagnostics).as_bytes())?;
    out.write_all(b"\n")
}

/// The document the binary's panic hook prints: an internal error, never a
/// backtrace.
pub fn internal_error_document(message: &str) -> String {
    errors_document(&[Diagnostic::new(CliCode::InternalError.as_str(), message)])
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use expect_test::{Expect, expect};

    use super::*;

    /// Files held in memory.
    struct MemoryHost(BTreeMap<&'static str, &'static str>);

    impl Host for MemoryHost {
        fn read_file(&self, path: &str) -> io::Result<String> {
            self.0
                .get(path)
                .map(|text| (*text).to_owned())
                .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such file"))
        }
    }

    fn host() -> MemoryHost {
        MemoryHost(BTreeMap::from([
            (
                "m/f.soil",
                "f x = x+1 -- comment\ng : I64\ng = let y = 2 in y",
            ),
            ("m/g.soil", "h = [ 1,2 ]"),
            ("m/bad.soil", "f x = (x +\n\ng = \"open\n"),
        ]))
    }

    #[track_caller]
    fn check(args: &[&str], expect: Expect) {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let mut out = Vec::new();
        let code = run(&args, &host(), &mut out).expect("writing to a Vec cannot fail");
        expect.assert_eq(&format!("exit {code}\n{}", String::from_utf8_lossy(&out)));
    }

    #[test]
    fn prints_canonical_text() {
        check(
            &["print", "m/f.soil"],
            expect![[r#"
                exit 0
                f x = x + 1

                g : I64

                g =
                  let y = 2 in
                  y
            "#]],
        );
    }

    #[test]
    fn several_files_get_path_headers() {
        check(
            &["print", "m/g.soil", "m/g.soil"],
            expect![[r#"
                exit 0
                -- m/g.soil
                h = [1, 2]
                -- m/g.soil
                h = [1, 2]
            "#]],
        );
    }

    #[test]
    fn hash_form_numbers_binders() {
        check(
            &["print", "--hash-form", "m/f.soil"],
            expect![[r#"
                exit 0
                f %0 = %0 + 1

                g : I64

                g =
                  let %0 = 2 in
                  %0
            "#]],
        );
    }

    #[test]
    fn bad_input_is_one_error_document_and_nothing_else() {
        check(
            &["print", "m/f.soil", "m/bad.soil", "m/missing.soil"],
            expect![[r#"
                exit 1
                {"errors":[{"code":"unclosed-delimiter","message":"`(` is never closed: the next item begins before its closer","file":{"tag":"Some","value":"m/bad.soil"},"span":{"tag":"Some","value":{"start":{"line":1,"column":7,"offset":6},"end":{"line":1,"column":8,"offset":7}}},"notes":[],"repair_class":"fix-syntax","spec_ref":"soil-syntax-spec#2.7"},{"code":"unterminated-string","message":"string literal is not closed on its line (write a newline as `\\n`)","file":{"tag":"Some","value":"m/bad.soil"},"span":{"tag":"Some","value":{"start":{"line":3,"column":5,"offset":16},"end":{"line":3,"column":10,"offset":21}}},"notes":[],"repair_class":"fix-syntax","spec_ref":"soil-syntax-spec#2.6"},{"code":"file-unreadable","message":"cannot read m/missing.soil: no such file","file":{"tag":"Some","value":"m/missing.soil"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#8.1"}]}
            "#]],
        );
    }

    #[test]
    fn usage_errors_exit_2_with_a_document() {
        check(
            &[],
            expect![[r#"
                exit 2
                {"errors":[{"code":"usage-error","message":"no command given; try `soil0 --help`","file":{"tag":"None"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#1.3"}]}
            "#]],
        );
        check(
            &["print", "--width", "m/f.soil"],
            expect![[r#"
                exit 2
                {"errors":[{"code":"usage-error","message":"unknown option `--width` for `soil0 print`","file":{"tag":"None"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#1.3"}]}
            "#]],
        );
        check(
            &["frobnicate"],
            expect![[r#"
                exit 2
                {"errors":[{"code":"usage-error","message":"unknown command `frobnicate`; try `soil0 --help`","file":{"tag":"None"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#1.3"}]}
            "#]],
        );
    }

    #[test]
    fn new_commands_report_usage_errors() {
        let cases: &[&[&str]] = &[
            &["check", "--program", "p.json"],
            &["check", "--env", "e.json", "--program", "p.json", "extra"],
            &["check", "--env"],
            &["check", "--env", "a", "--env", "b", "--program", "p"],
            &["run", "--env", "e.json", "--program", "p.json", "m::f"],
            &[
                "run",
                "--env",
                "e.json",
                "--program",
                "p.json",
                "--fakes",
                "x",
                "m::f",
                "[]",
            ],
            &["test"],
            &["test", "a.json", "b.json"],
            &["test", "--def", "m::f", "a.json"],
        ];
        let mut out = String::new();
        for args in cases {
            let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
            let mut buffer = Vec::new();
            let code = run(&args, &host(), &mut buffer).expect("write");
            let document: serde_json::Value =
                serde_json::from_slice(&buffer).expect("one JSON document");
            assert_eq!(document["errors"][0]["code"], "usage-error");
            out.push_str(&format!(
                "exit {code} {}\n",
                document["errors"][0]["message"].as_str().unwrap_or("")
            ));
        }
        expect![[r#"
            exit 2 `soil0 check` needs `--env FILE`
            exit 2 unexpected argument `extra` for `soil0 check`
            exit 2 `--env` needs a value
            exit 2 `--env` given twice
            exit 2 `soil0 run` needs DEF and JSON-ARGS (e.g. '[1, 2]'), 1 arguments given
            exit 2 unknown option `--fakes` for `soil0 run`
            exit 2 `soil0 test` needs exactly one BUNDLE.json, 0 given
            exit 2 `soil0 test` needs exactly one BUNDLE.json, 2 given
            exit 2 unknown option `--def` for `soil0 test`
        "#]]
        .assert_eq(&out);
    }

    #[test]
    fn unreadable_inputs_are_reported_together() {
        check(
            &["check", "--env", "nope.json", "--program", "gone.json"],
            expect![[r#"
                exit 1
                {"errors":[{"code":"file-unreadable","message":"cannot read nope.json: no such file","file":{"tag":"Some","value":"nope.json"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#8.1"},{"code":"file-unreadable","message":"cannot read gone.json: no such file","file":{"tag":"Some","value":"gone.json"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"soil0-cli#8.1"}]}
            "#]],
        );
    }

    #[test]
    fn each_command_has_its_own_help() {
        for (command, help) in [
            ("check", check::HELP),
            ("run", run::HELP),
            ("test", test::HELP),
        ] {
            for flag in ["-h", "--help"] {
                let args = vec![command.to_owned(), flag.to_owned()];
                let mut out = Vec::new();
                let code = super::run(&args, &host(), &mut out).expect("write");
                assert_eq!(
                    (code, String::from_utf8(out).expect("UTF-8")),
                    (EXIT_OK, help.to_owned())
                );
                assert!(help.starts_with(&format!("soil0 {command} ")), "{help}");
            }
        }
    }

    #[test]
    fn the_panic_document_is_an_internal_error() {
        let document: serde_json::Value =
            serde_json::from_str(&internal_error_document("boom")).expect("JSON");
        assert_eq!(document["errors"][0]["code"], "internal-error");
        assert_eq!(document["errors"][0]["repair_class"], "report-bug");
    }

    #[test]
    fn help_describes_every_command() {
        let mut out = Vec::new();
        let code = run(&["--help".to_owned()], &host(), &mut out).expect("write");
        let text = String::from_utf8(out).expect("utf-8");
        assert_eq!(code, EXIT_OK);
        for command in [
            "soil0 print [--hash-form] FILE...",
            "soil0 check --env ENV.json --program PROGRAM.json [--def NAME]",
            "soil0 run   --env ENV.json --program PROGRAM.json DEF JSON-ARGS",
            "soil0 run   FILE.soil... DEF JSON-ARGS",
            "soil0 test  [--env ENV.json] [--program PROGRAM.json] BUNDLE.json",
        ] {
            assert!(text.contains(command), "{text}");
        }
    }

    #[test]
    fn every_cli_code_is_registered() {
        let missing =
            trellis_diag::registry::missing_codes(CliCode::ALL.iter().map(|c| c.as_str()));
        assert!(missing.is_empty(), "unregistered codes: {missing:?}");
    }
}
