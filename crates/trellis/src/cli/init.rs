//! `trellis init [DIR]`: a new root that checks, tests and is green from its
//! first command (soil-toml §1.1). It writes `soil.toml` pinned to this
//! toolchain, `_project.tr`, the module `hello` with one specified and lowered
//! definition (`hello::greet`) and a `.gitignore` for what Trellis writes that is
//! not source; then, in this process, records the hand-written lowering
//! (`adopt`, which stamps the module and project locks too) and runs its tests,
//! so the locks are written by the same code every later command uses. It never
//! overwrites: a directory already holding a root, or any file init would
//! write, is refused before anything is written.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;
use trellis_diag::Diagnostic;
use trellis_service::codes::HostCode;

use crate::args::Command;
use crate::client::{self, ClientError};
use crate::render;

/// The lines the root's `.gitignore` needs: what Trellis writes beside the
/// sources (lock-schema §1.1; design §9.8).
const GITIGNORE: &[&str] = &[".trellis/", "soil.lock", "*.question.json", "f.log"];

const MODULE: &str = "hello";

/// `_project.tr`, with `{name}` for the project's name.
const PROJECT_TR: &str = "\
---
name: {name}
---

# {name}

What this project is for, in a few sentences. Everything here is prose: the
lowering agent reads it with every definition it lowers, so say what a reader
of any one spec should know about the whole.

Project-wide rules go in a `decisions` block, one entry each
(`trellis spec tr-grammar#5.2`).
";

const MODULE_TR: &str = "\
---
name: hello
---

# hello

A first module, to be renamed or replaced. A module is a directory of specs: one
`.tr` file per definition, its lowered Soil in the `.soil` beside it, and its
lock in the `.lock` that Trellis writes. `exports` lists what other modules may
call.

```exports
greet
```
";

const GREET_TR: &str = "\
---
name: greet
---

# greet

A greeting for a name: `Hello, `, then the name, then `!`.

The blocks below are the formal spec (`trellis spec tr-grammar#3`): the
signature, a clause every result must satisfy (it becomes a derived test), expect
cases, and a property checked on generated names.

```soil-sig
greet : (name : Utf8) -> Utf8
```

```ensures
framed: starts_with result \"Hello, \" and ends_with result \"!\"
```

```test basics
greet(\"world\") -> \"Hello, world!\"
greet(\"\") -> \"Hello, !\"
```

```property length
forall (name : Utf8). str_len (greet name) == str_len name + 8
```
";

const GREET_SOIL: &str = "greet name = \"Hello, \" ++ name ++ \"!\"\n";

/// `soil.toml` before its pin: [`trellis_service::service::repin`] fills the
/// `[toolchain]` table, exactly as `trellis toolchain update` would.
const SOIL_TOML: &str = "\
# This root's configuration (`trellis spec soil-toml#1`).

# The toolchain this root is verified with; `trellis toolchain update` re-pins it.
[toolchain]

[tags]
# The tags a spec's frontmatter may name, one line each:
# parsing = \"text to structured values\"
";

/// Runs `trellis init`; any other command is a usage error.
pub fn run(command: &Command) -> ExitCode {
    let Command::Init { dir } = command else {
        return ExitCode::from(2);
    };
    let dir = PathBuf::from(dir.as_deref().unwrap_or("."));
    let stderr = &mut std::io::stderr();
    let root = match write_root(&dir) {
        Ok(root) => root,
        Err(refusal) => {
            render::diagnostics(stderr, &[refusal]);
            return ExitCode::FAILURE;
        }
    };
    let stdout = &mut std::io::stdout().lock();
    let _ = writeln!(stdout, "a new Trellis root in {}", dir.display());
    // The root's first records, by the requests every later command sends.
    let mut code = 0;
    for command in [
        Command::Adopt {
            def: None,
            cite: Vec::new(),
            json: false,
        },
        Command::Test {
            def: None,
            json: false,
        },
    ] {
        let (method, params) = match &command {
            Command::Adopt { .. } => ("adopt", json!({})),
            _ => ("test", json!({ "path": crate::client_env::client_path() })),
        };
        let answer = client::request(&root, true, method, params, &mut |_| {});
        code = match answer {
            Ok(result) => render::answer(stdout, &command, &result),
            Err(ClientError::Failed(errors)) => {
                render::diagnostics(stderr, &errors);
                1
            }
            Err(ClientError::Transport(message)) => {
                let _ = writeln!(stderr, "trellis: {message}");
                1
            }
        };
        if code != 0 {
            return ExitCode::from(code);
        }
    }
    let _ = writeln!(
        stdout,
        "\nnext: `trellis status` shows where every definition stands; edit \
         {MODULE}/greet.tr or add a spec beside it, then `trellis check`, \
         `trellis lower` (or write the .soil and `trellis adopt`) and `trellis test`"
    );
    ExitCode::from(code)
}

/// Writes the new root's sources into `dir` (created if absent) and returns
/// it canonicalized; refuses without writing anything if one is there.
fn write_root(dir: &Path) -> Result<PathBuf, Diagnostic> {
    let sources = [
        "soil.toml".to_owned(),
        "_project.tr".to_owned(),
        format!("{MODULE}/_module.tr"),
        format!("{MODULE}/greet.tr"),
        format!("{MODULE}/greet.soil"),
    ];
    let taken: Vec<&str> = sources
        .iter()
        .map(String::as_str)
        .filter(|path| dir.join(path).exists())
        .collect();
    if !taken.is_empty() {
        let what = if taken.contains(&"soil.toml") {
            "already holds a Trellis root (soil.toml)".to_owned()
        } else {
            format!("already holds {}", taken.join(", "))
        };
        return Err(HostCode::ConfigRootExists
            .diagnostic(format!(
                "{} {what}; `trellis init` writes only into a directory without them",
                dir.display()
            ))
            .with_note("name a new directory: `trellis init DIR`"));
    }
    let unwritable = |path: &Path, error: std::io::Error| {
        HostCode::RootUnreadable.diagnostic(format!("cannot write {}: {error}", path.display()))
    };
    let module_dir = dir.join(MODULE);
    std::fs::create_dir_all(&module_dir).map_err(|e| unwritable(&module_dir, e))?;
    let root = dir.canonicalize().map_err(|e| unwritable(dir, e))?;
    let name = project_name(&root);
    let texts = [
        trellis_service::service::repin(SOIL_TOML),
        PROJECT_TR.replace("{name}", &name),
        MODULE_TR.to_owned(),
        GREET_TR.to_owned(),
        GREET_SOIL.to_owned(),
    ];
    for (path, text) in sources.iter().zip(&texts) {
        let path = dir.join(path);
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|mut file| file.write_all(text.as_bytes()))
            .map_err(|e| unwritable(&path, e))?;
    }
    let gitignore = dir.join(".gitignore");
    let present = std::fs::read_to_string(&gitignore).unwrap_or_default();
    std::fs::write(&gitignore, with_ignored(&present)).map_err(|e| unwritable(&gitignore, e))?;
    Ok(root)
}

/// `present` (a `.gitignore`, perhaps empty) with the lines Trellis needs that
/// it lacks appended; its own lines stay as they were.
fn with_ignored(present: &str) -> String {
    let mut text = present.to_owned();
    let missing: Vec<&str> = GITIGNORE
        .iter()
        .copied()
        .filter(|line| !present.lines().any(|have| have.trim() == *line))
        .collect();
    if missing.is_empty() {
        return text;
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# Written by Trellis beside the sources: not to be committed.\n");
    for line in missing {
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// The project's name: the root directory's own name when it is a plain word
/// (letters, digits, `-`, `_`, `.`), else `project`.
fn project_name(root: &Path) -> String {
    root.file_name()
        .and_then(|name| name.to_str())
        .filter(|name| {
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        })
        .unwrap_or("project")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gitignore_gains_only_the_lines_it_lacks() {
        let fresh = with_ignored("");
        assert!(
            fresh.ends_with(".trellis/\nsoil.lock\n*.question.json\nf.log\n"),
            "{fresh}"
        );
        assert_eq!(with_ignored(&fresh), fresh, "a fixpoint");
        let theirs = with_ignored("target/\nsoil.lock");
        assert!(
            theirs.starts_with("target/\nsoil.lock\n# Written by Trellis"),
            "{theirs}"
        );
        assert_eq!(theirs.matches("soil.lock").count(), 1, "{theirs}");
    }

    #[test]
    fn the_project_is_named_after_its_directory_when_it_can_be() {
        assert_eq!(project_name(Path::new("/tmp/wordfreq")), "wordfreq");
        assert_eq!(project_name(Path::new("/tmp/my words")), "project");
        assert_eq!(project_name(Path::new("/")), "project");
    }
}
