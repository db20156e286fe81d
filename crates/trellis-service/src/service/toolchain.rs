//! The toolchain pin (soil-toml §2; design §8): commands that verify refuse when
//! `soil.toml [toolchain]` names another toolchain; a lowering also refuses unless
//! `skill` pins the hash of the skill this binary gives its agent (soil-toml §2.1);
//! and `toolchain update` re-pins deliberately, rewriting only the pinned values.

use trellis_db::{Workspace, root_config};
use trellis_diag::Diagnostic;
use trellis_rpc::RpcError;

use super::{Service, failed};
use crate::codes::HostCode;
use crate::identity::{SOIL0_VERSION, VERSION};

/// `toolchain-mismatch` when the root is pinned to another toolchain.
pub fn check_pin(service: &Service) -> Result<(), Diagnostic> {
    let db = service.database();
    let config = root_config(db, Workspace::get(db))
        .as_ref()
        .map_err(Clone::clone)?;
    let pin = &config.toolchain;
    if pin.trellis != VERSION || pin.soil0_cli != SOIL0_VERSION {
        return Err(HostCode::ToolchainMismatch.diagnostic(
            format!(
                "soil.toml pins trellis {} / soil0 {}, but this is trellis {VERSION} / soil0 {SOIL0_VERSION}",
                pin.trellis, pin.soil0_cli
            ),
        )
        .with_file("soil.toml")
        .with_note("run `trellis toolchain update` to re-pin the root to this toolchain"));
    }
    Ok(())
}

/// `toolchain-mismatch` unless the root may be lowered by this binary: the
/// `trellis`/`soil0_cli` pin of [`check_pin`], and `skill` pinning the hash of
/// the skill this binary gives its agent (soil-toml §2.1). Enforced where a
/// lowering starts (`job.create`); `check`, `test` and the other commands do
/// not read the skill, so they check [`check_pin`] only.
pub fn check_lowering_pin(service: &Service) -> Result<(), Diagnostic> {
    check_pin(service)?;
    let db = service.database();
    let config = root_config(db, Workspace::get(db))
        .as_ref()
        .map_err(Clone::clone)?;
    skill_pin_problem(
        config.toolchain.skill.as_deref(),
        &trellis_skill::skill_hash(),
    )
    .map_or(Ok(()), Err)
}

/// Why `pinned` does not pin `current`, the running binary's skill hash.
fn skill_pin_problem(pinned: Option<&str>, current: &str) -> Option<Diagnostic> {
    let message = match pinned {
        Some(pinned) if pinned == current => return None,
        Some(pinned) => format!(
            "soil.toml pins the skill {pinned}, but this toolchain gives lowering agents the skill {current}"
        ),
        None => format!(
            "soil.toml pins no skill, but a lowering needs it pinned: this toolchain gives lowering agents the skill {current}"
        ),
    };
    Some(
        HostCode::ToolchainMismatch
            .diagnostic(message)
            .with_file("soil.toml")
            .with_note(
                "run `trellis toolchain update` to pin this toolchain's skill \
                 (`trellis skill` prints it; soil-toml §2.1)",
            ),
    )
}

/// Rewrites `trellis = "…"`, `soil0_cli = "…"` and `skill = "…"` inside
/// `[toolchain]` to this binary's identity. A pinned key the table lacks is
/// added after its last key (after its header when it has none), and a file
/// without the table gets one at its end: `toolchain update` is how a
/// hand-written `soil.toml` gets its pin. Every other byte of the file stays.
pub fn repin(text: &str) -> String {
    repin_to(text, &trellis_skill::skill_hash())
}

fn repin_to(text: &str, skill: &str) -> String {
    let pins = [
        ("trellis", VERSION),
        ("soil0_cli", SOIL0_VERSION),
        ("skill", skill),
    ];
    let present: Vec<&str> = toolchain_keys(text).map(|(_, key)| key).collect();
    let missing: String = pins
        .iter()
        .filter(|(key, _)| !present.contains(key))
        .map(|(key, value)| format!("{key} = \"{value}\"\n"))
        .collect();
    // The line after which the missing keys go: the table's last key, else its
    // header; `None` when the file has no `[toolchain]` table.
    let insert_after = toolchain_keys(text)
        .map(|(at, _)| at)
        .last()
        .or_else(|| toolchain_header(text));
    let mut out = String::with_capacity(text.len() + 160);
    let mut in_toolchain = false;
    for (at, line) in text.split_inclusive('\n').enumerate() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_toolchain = trimmed == "[toolchain]";
        }
        let key = trimmed.split('=').next().unwrap_or_default().trim();
        let ending = if line.ends_with('\n') { "\n" } else { "" };
        match pins
            .iter()
            .find(|(pinned, _)| in_toolchain && *pinned == key)
        {
            Some((key, value)) => out.push_str(&format!("{key} = \"{value}\"{ending}")),
            None => out.push_str(line),
        }
        if !missing.is_empty() && insert_after == Some(at) {
            if ending.is_empty() {
                out.push('\n');
            }
            out.push_str(&missing);
        }
    }
    if insert_after.is_none() {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str("[toolchain]\n");
        out.push_str(&missing);
    }
    out
}

/// The line number of the `[toolchain]` header, if the file has one.
fn toolchain_header(text: &str) -> Option<usize> {
    text.split_inclusive('\n')
        .position(|line| line.trim() == "[toolchain]")
}

/// The keys of the `[toolchain]` table, with their line numbers.
fn toolchain_keys(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut in_toolchain = false;
    text.split_inclusive('\n')
        .enumerate()
        .filter_map(move |(at, line)| {
            let trimmed = line.trim();
            if trimmed.starts_with('[') {
                in_toolchain = trimmed == "[toolchain]";
                return None;
            }
            let key = trimmed.split_once('=')?.0.trim();
            (in_toolchain && !key.starts_with('#')).then_some((at, key))
        })
}

pub fn update(service: &mut Service) -> Result<crate::protocol::ToolchainAnswer, RpcError> {
    let path = service.root().join("soil.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        failed(&[HostCode::RootUnreadable
            .diagnostic(format!("cannot read soil.toml: {e}"))
            .with_file("soil.toml")])
    })?;
    let updated = repin(&text);
    if updated != text {
        // Through the one atomic writer: a crash leaves the old pin or the new.
        trellis_lock::write_atomic(&trellis_lock::StdFs, &path, updated.as_bytes()).map_err(
            |e| {
                failed(&[HostCode::RootUnreadable
                    .diagnostic(format!("cannot write soil.toml: {e}"))
                    .with_file("soil.toml")])
            },
        )?;
    }
    Ok(crate::protocol::ToolchainAnswer {
        trellis: VERSION.to_owned(),
        soil0_cli: SOIL0_VERSION.to_owned(),
        skill: trellis_skill::skill_hash(),
        changed: updated != text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repins_only_the_toolchain_values() {
        let text = "entrypoint = \"m::f\"\n\n[toolchain]\ntrellis = \"0.0.1\"\nsoil0_cli = \"0.0.1\"\n\n[tags]\ntrellis = \"a tag that happens to share the name\"\n";
        let updated = repin(text);
        assert!(updated.contains(&format!(
            "[toolchain]\ntrellis = \"{VERSION}\"\nsoil0_cli = \"{SOIL0_VERSION}\"\n"
        )));
        assert!(updated.ends_with("[tags]\ntrellis = \"a tag that happens to share the name\"\n"));
    }

    const SKILL: &str = "sha256:00";

    #[test]
    fn a_missing_skill_pin_is_added_after_the_pinned_keys() {
        let text = "[toolchain]\ntrellis = \"0.0.1\"\nsoil0_cli = \"0.0.1\"\n\n[tags]\nskill = \"a tag\"\n";
        assert_eq!(
            repin_to(text, SKILL),
            format!(
                "[toolchain]\ntrellis = \"{VERSION}\"\nsoil0_cli = \"{SOIL0_VERSION}\"\nskill = \"{SKILL}\"\n\n[tags]\nskill = \"a tag\"\n"
            )
        );
        // At the end of a file without a final newline, too.
        let text = "[toolchain]\nsoil0_cli = \"0.0.1\"\ntrellis = \"0.0.1\"";
        assert_eq!(
            repin_to(text, SKILL),
            format!(
                "[toolchain]\nsoil0_cli = \"{SOIL0_VERSION}\"\ntrellis = \"{VERSION}\"\nskill = \"{SKILL}\"\n"
            )
        );
    }

    #[test]
    fn a_file_without_the_table_gets_one_at_its_end() {
        let pinned = format!(
            "[toolchain]\ntrellis = \"{VERSION}\"\nsoil0_cli = \"{SOIL0_VERSION}\"\nskill = \"{SKILL}\"\n"
        );
        let text = "entrypoint = \"m::f\"\n\n[tags]\nio = \"files\"";
        let updated = repin_to(text, SKILL);
        assert_eq!(updated, format!("{text}\n\n{pinned}"));
        assert_eq!(repin_to(&updated, SKILL), updated, "a fixpoint");
        assert!(trellis_db::parse_config(&updated).is_ok(), "{updated}");
        assert_eq!(repin_to("", SKILL), pinned);
    }

    #[test]
    fn a_table_missing_keys_gets_them_after_its_last_key_or_its_header() {
        let text = "[toolchain]\nsoil0_cli = \"0.0.1\"\n\n[tags]\n";
        assert_eq!(
            repin_to(text, SKILL),
            format!(
                "[toolchain]\nsoil0_cli = \"{SOIL0_VERSION}\"\ntrellis = \"{VERSION}\"\nskill = \"{SKILL}\"\n\n[tags]\n"
            )
        );
        let text = "[tags]\n\n[toolchain]\n";
        let updated = repin_to(text, SKILL);
        assert_eq!(
            updated,
            format!(
                "[tags]\n\n[toolchain]\ntrellis = \"{VERSION}\"\nsoil0_cli = \"{SOIL0_VERSION}\"\nskill = \"{SKILL}\"\n"
            )
        );
        assert!(trellis_db::parse_config(&updated).is_ok(), "{updated}");
    }

    #[test]
    fn a_present_skill_pin_is_rewritten_in_place() {
        let text = "# root\n[toolchain]\nskill = \"sha256:old\"\ntrellis = \"0.0.1\"\nsoil0_cli = \"0.0.1\"\n";
        let updated = repin_to(text, SKILL);
        assert_eq!(
            updated,
            format!(
                "# root\n[toolchain]\nskill = \"{SKILL}\"\ntrellis = \"{VERSION}\"\nsoil0_cli = \"{SOIL0_VERSION}\"\n"
            )
        );
        assert_eq!(repin_to(&updated, SKILL), updated, "a fixpoint");
    }

    #[test]
    fn the_skill_pin_problem_names_both_hashes_and_the_fix() {
        assert!(skill_pin_problem(Some(SKILL), SKILL).is_none());
        let wrong = skill_pin_problem(Some("sha256:11"), SKILL).expect("a mismatch");
        assert_eq!(wrong.code, "toolchain-mismatch");
        assert!(wrong.message.contains("sha256:11") && wrong.message.contains(SKILL));
        let missing = skill_pin_problem(None, SKILL).expect("a mismatch");
        assert!(missing.message.contains("pins no skill") && missing.message.contains(SKILL));
        for problem in [wrong, missing] {
            assert_eq!(problem.file.as_deref(), Some("soil.toml"));
            assert!(
                problem
                    .to_json()
                    .to_string()
                    .contains("trellis toolchain update")
            );
        }
    }
}
