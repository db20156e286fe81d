//! The soil0 command line as a library: argument dispatch to one module per
//! subcommand, the error codes the CLI itself reports, and the [`Host`] port the
//! commands read files through. Every machine-facing outcome is exactly one
//! document on the output: the command's result, or `{"errors":[...]}`.

mod print;

use std::io::{self, Write};

use trellis_diag::{Diagnostic, errors_document};

/// Exit statuses (the contract's: 0 success, 1 the input has problems, 2 usage).
pub const EXIT_OK: u8 = 0;
pub const EXIT_PROBLEMS: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

/// The codes the CLI reports itself (parse and check codes come from the crates
/// below). Defined once; a test checks the registry has every one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CliCode {
    UsageError,
    FileUnreadable,
    InternalError,
}

impl CliCode {
    pub const ALL: &'static [CliCode] = &[
        CliCode::UsageError,
        CliCode::FileUnreadable,
        CliCode::InternalError,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CliCode::UsageError => "usage-error",
            CliCode::FileUnreadable => "file-unreadable",
            CliCode::InternalError => "internal-error",
        }
    }
}

/// What the commands need from the outside world.
pub trait Host {
    fn read_file(&self, path: &str) -> io::Result<String>;
}

/// The real file system.
pub struct OsHost;

impl Host for OsHost {
    fn read_file(&self, path: &str) -> io::Result<String> {
        std::fs::read_to_string(path)
    }
}

pub const USAGE: &str = "\
soil0: the Soil toolchain

USAGE:
    soil0 print [--hash-form] FILE...

COMMANDS:
    print    Parse each FILE and write its canonical text (docs/soil-syntax-spec.md §9)
             to stdout. With several files, each is preceded by a `-- <path>` line.
             --hash-form writes each item's hash form (§9.1) instead, items separated
             by a blank line.

OPTIONS:
    -h, --help    Print this help.

On any error soil0 writes one JSON document {\"errors\":[...]} to stdout and exits 1
(2 for a usage error); nothing else is written to stdout in that case.
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
    use super::*;

    #[test]
    fn every_cli_code_is_registered() {
        let missing =
            trellis_diag::registry::missing_codes(CliCode::ALL.iter().map(|c| c.as_str()));
        assert!(missing.is_empty(), "unregistered codes: {missing:?}");
    }
}
