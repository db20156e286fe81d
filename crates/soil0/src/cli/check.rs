//! `soil0 check --env ENV.json --program PROGRAM.json [--def NAME]` (§8.2).

use std::io::{self, Write};

use super::{EXIT_OK, Host, options, read_documents, usage_error, write_errors, write_output};
use crate::Source;

pub(super) const HELP: &str = "\
soil0 check --env ENV.json --program PROGRAM.json [--def NAME]

Decodes env.json (soil0-cli §6) and program.json (§7) and type-checks every
definition (§9). Writes the §8.4 check document of NAME, or without --def the
whole-program document {\"definitions\":[...]}, and exits 0. Any error (in the
environment, or in NAME, or without --def in any definition) writes
{\"errors\":[...]} instead and exits 1; a --def naming no definition is
`unknown-definition`. A draft with typed holes checks: its holes are listed with
their goal types.
";

pub(super) fn run(args: &[String], host: &dyn Host, out: &mut dyn Write) -> io::Result<u8> {
    let parsed = match options::parse("check", args, &["--env", "--program", "--def"]) {
        Ok(parsed) => parsed,
        Err(message) => return usage_error(out, &message),
    };
    if parsed.help {
        out.write_all(HELP.as_bytes())?;
        return Ok(EXIT_OK);
    }
    if let Some(extra) = parsed.positionals.first() {
        return usage_error(
            out,
            &format!("unexpected argument `{extra}` for `soil0 check`"),
        );
    }
    let (env_path, program_path) = match (
        parsed.required("--env", "check"),
        parsed.required("--program", "check"),
    ) {
        (Ok(env), Ok(program)) => (env, program),
        (Err(message), _) | (_, Err(message)) => return usage_error(out, &message),
    };
    let (env, program) = match read_documents(host, env_path, program_path) {
        Ok(texts) => texts,
        Err(errors) => {
            write_errors(out, &errors)?;
            return Ok(super::EXIT_PROBLEMS);
        }
    };
    let output = crate::check(
        Source::new(env_path, &env),
        Source::new(program_path, &program),
        parsed.optional("--def"),
    );
    write_output(out, &output)
}
