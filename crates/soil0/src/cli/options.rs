//! The shared argument grammar of `check`, `run` and `test`: `--name VALUE`
//! options (also `--name=VALUE`), `-h`/`--help`, `--` and positionals.

use std::collections::BTreeMap;

/// Parsed arguments, or the usage error's message.
pub(super) struct Parsed {
    pub help: bool,
    pub options: BTreeMap<&'static str, String>,
    pub positionals: Vec<String>,
}

/// Parses `args` for `command`, accepting the value options `known`.
pub(super) fn parse(
    command: &str,
    args: &[String],
    known: &[&'static str],
) -> Result<Parsed, String> {
    let mut parsed = Parsed {
        help: false,
        options: BTreeMap::new(),
        positionals: Vec::new(),
    };
    let mut only_positionals = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if only_positionals || !arg.starts_with('-') || arg == "-" {
            parsed.positionals.push(arg.clone());
            continue;
        }
        match arg.as_str() {
            "--" => only_positionals = true,
            "-h" | "--help" => parsed.help = true,
            flag => {
                let (name, inline) = match flag.split_once('=') {
                    Some((name, value)) => (name, Some(value.to_owned())),
                    None => (flag, None),
                };
                let Some(option) = known.iter().find(|k| **k == name) else {
                    return Err(format!("unknown option `{name}` for `soil0 {command}`"));
                };
                let value = match inline {
                    Some(value) => value,
                    None => rest
                        .next()
                        .cloned()
                        .ok_or_else(|| format!("`{name}` needs a value"))?,
                };
                if parsed.options.insert(option, value).is_some() {
                    return Err(format!("`{name}` given twice"));
                }
            }
        }
    }
    Ok(parsed)
}

impl Parsed {
    pub fn required(&self, option: &str, command: &str) -> Result<&str, String> {
        self.options
            .get(option)
            .map(String::as_str)
            .ok_or_else(|| format!("`soil0 {command}` needs `{option} FILE`"))
    }

    pub fn optional(&self, option: &str) -> Option<&str> {
        self.options.get(option).map(String::as_str)
    }
}
