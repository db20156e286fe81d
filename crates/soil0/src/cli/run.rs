//! `soil0 run --env ENV.json --program PROGRAM.json DEF JSON-ARGS` (§8.6), and
//! `soil0 run FILE.soil... DEF JSON-ARGS`, the program read from Soil source
//! files (§13.8).

use std::io::{self, Write};

use super::{EXIT_OK, Host, options, read_documents, usage_error, write_errors, write_output};
use crate::Source;

pub(super) const HELP: &str = "\
soil0 run --env ENV.json --program PROGRAM.json DEF JSON-ARGS
soil0 run FILE.soil... DEF JSON-ARGS

Checks the program (any check error refuses the run), then runs definition DEF
(soil0-cli §8.6). Parameters are filled in declaration order: a parameter of type
Fs, Clock or Stdout from the real world (files relative to the working directory,
the system clock, lines printed to stderr); every other parameter is decoded from
the JSON array JSON-ARGS, which holds exactly the non-capability arguments, in
order (§7.1 canonical JSON). Example:

    soil0 run --env env.json --program program.json csvstats::median '[[3.0,1.0,2.0]]'

Writes the result's canonical JSON and exits 0. A refused run (check errors,
`unknown-definition`, `bad-arguments`, `json-*` naming the argument's JSON path
such as $[0][2]) or a failed one (`runtime-panic`, `requires-violated`,
`ensures-violated`, `depth-limit`, or `unfilled-hole` when evaluation reaches a
typed hole, naming its goal type; with the failing span and the call chain as
notes) writes {\"errors\":[...]} and exits 1. A definition with holes runs on
inputs that never reach one (§13.9).

The second form reads the program from Soil source files instead (soil0-cli
§13.8): each FILE is one module, named after its stem (calc.soil is the module
calc); its type declarations are the environment, and each equation, with the
signature of the same name when there is one, a definition, in file order. DEF
is module::name, or a bare name. Diagnostics point into the files. Example:

    soil0 run calc.soil calc::eval '[{\"tag\":\"Num\",\"value\":3}]'
";

pub(super) fn run(args: &[String], host: &dyn Host, out: &mut dyn Write) -> io::Result<u8> {
    let parsed = match options::parse("run", args, &["--env", "--program"]) {
        Ok(parsed) => parsed,
        Err(message) => return usage_error(out, &message),
    };
    if parsed.help {
        out.write_all(HELP.as_bytes())?;
        return Ok(EXIT_OK);
    }
    if parsed.options.is_empty() {
        return run_sources(&parsed.positionals, host, out);
    }
    let (env_path, program_path) = match (
        parsed.required("--env", "run"),
        parsed.required("--program", "run"),
    ) {
        (Ok(env), Ok(program)) => (env, program),
        (Err(message), _) | (_, Err(message)) => return usage_error(out, &message),
    };
    let [definition, json_args] = parsed.positionals.as_slice() else {
        return usage_error(
            out,
            &format!(
                "`soil0 run` needs DEF and JSON-ARGS (e.g. '[1, 2]'), {} arguments given",
                parsed.positionals.len()
            ),
        );
    };
    let (env, program) = match read_documents(host, env_path, program_path) {
        Ok(texts) => texts,
        Err(errors) => {
            write_errors(out, &errors)?;
            return Ok(super::EXIT_PROBLEMS);
        }
    };
    let output = crate::run(
        Source::new(env_path, &env),
        Source::new(program_path, &program),
        definition,
        json_args,
    );
    write_output(out, &output)
}

/// `soil0 run FILE.soil... DEF JSON-ARGS` (§13.8).
fn run_sources(positionals: &[String], host: &dyn Host, out: &mut dyn Write) -> io::Result<u8> {
    let [paths @ .., definition, json_args] = positionals else {
        return usage_error(
            out,
            "`soil0 run` needs --env ENV.json --program PROGRAM.json DEF JSON-ARGS, or \
             FILE.soil... DEF JSON-ARGS",
        );
    };
    if paths.is_empty() || paths.iter().any(|path| !path.ends_with(".soil")) {
        return usage_error(
            out,
            &format!(
                "`soil0 run` without --env and --program runs Soil files (FILE.soil... DEF \
                 JSON-ARGS), but {}",
                match paths.iter().find(|path| !path.ends_with(".soil")) {
                    Some(path) => format!("`{path}` is not a .soil file"),
                    None => "no file is given".to_owned(),
                }
            ),
        );
    }
    let mut texts = Vec::with_capacity(paths.len());
    let mut errors = Vec::new();
    for path in paths {
        match host.read_file(path) {
            Ok(text) => texts.push((path.as_str(), text)),
            Err(error) => errors.push(super::unreadable(path, &error)),
        }
    }
    if !errors.is_empty() {
        write_errors(out, &errors)?;
        return Ok(super::EXIT_PROBLEMS);
    }
    let sources: Vec<Source<'_>> = texts
        .iter()
        .map(|(path, text)| Source::new(path, text))
        .collect();
    let outcome = crate::run::run_sources_with_world(
        &sources,
        definition,
        json_args,
        &mut crate::run::command_line_world(),
    );
    write_output(out, &outcome.output())
}
