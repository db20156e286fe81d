//! `soil0 test [--env ENV.json] [--program PROGRAM.json] BUNDLE.json` (§10).

use std::io::{self, Write};

use super::{
    EXIT_OK, EXIT_PROBLEMS, Host, options, unreadable, usage_error, write_errors, write_output,
};
use crate::Source;

pub(super) const HELP: &str = "\
soil0 test [--env ENV.json] [--program PROGRAM.json] BUNDLE.json

Runs every case of the test bundle (soil0-cli §10) against the checked program,
each in a fresh sandbox of fakes built from the case's `fakes` (Fs: in-memory
files, Clock: a fixed time, Stdout: captured and discarded), and writes
{\"cases\":[{\"name\":...,\"outcome\":...}]} in bundle order. Outcomes: Pass, Fail
(expected and actual values), Panicked (an unexpected runtime failure) and Error
(the case could not run). Exits 0 whenever that document is written, even if
cases fail. env.json and program.json are the options when given, else the
bundle's `env` / `program` paths, relative to the bundle's directory. A bundle,
env.json or program.json that cannot be read, decoded or checked writes
{\"errors\":[...]} and exits 1.
";

pub(super) fn run(args: &[String], host: &dyn Host, out: &mut dyn Write) -> io::Result<u8> {
    let parsed = match options::parse("test", args, &["--env", "--program"]) {
        Ok(parsed) => parsed,
        Err(message) => return usage_error(out, &message),
    };
    if parsed.help {
        out.write_all(HELP.as_bytes())?;
        return Ok(EXIT_OK);
    }
    let [bundle_path] = parsed.positionals.as_slice() else {
        return usage_error(
            out,
            &format!(
                "`soil0 test` needs exactly one BUNDLE.json, {} given",
                parsed.positionals.len()
            ),
        );
    };
    let bundle = match host.read_file(bundle_path) {
        Ok(text) => text,
        Err(error) => {
            write_errors(out, &[unreadable(bundle_path, &error)])?;
            return Ok(EXIT_PROBLEMS);
        }
    };
    let output = crate::test(
        Source::new(bundle_path, &bundle),
        parsed.optional("--env"),
        parsed.optional("--program"),
        host,
    );
    write_output(out, &output)
}
