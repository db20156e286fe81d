//! `soil0 print [--hash-form] FILE...`: canonical text (spec §9) or hash form
//! (§9.1). All files are read and parsed before anything is written, so a bad
//! file leaves stdout holding only the error document.

use std::io::{self, Write};

use soil_syntax::{hash_form_item, parse_file, print_file};
use trellis_diag::Diagnostic;

use super::{CliCode, EXIT_OK, EXIT_PROBLEMS, Host, usage_error, write_errors};

pub(super) fn run(args: &[String], host: &dyn Host, out: &mut dyn Write) -> io::Result<u8> {
    let mut hash_form = false;
    let mut paths = Vec::new();
    let mut only_paths = false;
    for arg in args {
        match arg.as_str() {
            "--" if !only_paths => only_paths = true,
            "--hash-form" if !only_paths => hash_form = true,
            "-h" | "--help" if !only_paths => {
                out.write_all(super::USAGE.as_bytes())?;
                return Ok(EXIT_OK);
            }
            flag if flag.starts_with('-') && flag.len() > 1 && !only_paths => {
                return usage_error(out, &format!("unknown option `{flag}` for `soil0 print`"));
            }
            path => paths.push(path),
        }
    }
    if paths.is_empty() {
        return usage_error(out, "`soil0 print` needs at least one FILE");
    }

    let mut rendered = Vec::with_capacity(paths.len());
    let mut errors = Vec::new();
    for path in &paths {
        let text = match host.read_file(path) {
            Ok(text) => text,
            Err(error) => {
                errors.push(
                    Diagnostic::new(
                        CliCode::FileUnreadable.as_str(),
                        format!("cannot read {path}: {error}"),
                    )
                    .with_file(*path),
                );
                continue;
            }
        };
        let (file, diagnostics) = parse_file(&text);
        if !diagnostics.is_empty() {
            errors.extend(diagnostics.into_iter().map(|d| d.in_file(path)));
            continue;
        }
        let output = if hash_form {
            file.items
                .iter()
                .map(hash_form_item)
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            print_file(&file)
        };
        rendered.push((path, output));
    }
    if !errors.is_empty() {
        write_errors(out, &errors)?;
        return Ok(EXIT_PROBLEMS);
    }
    let several = rendered.len() > 1;
    for (path, output) in rendered {
        if several {
            writeln!(out, "-- {path}")?;
        }
        out.write_all(output.as_bytes())?;
    }
    Ok(EXIT_OK)
}
