//! The skill and its pin (soil-toml §2.1): `trellis skill` prints the skill this
//! binary gives a lowering agent and `--hash` its digest; the example root pins
//! exactly that hash (so a changed skill fails CI until the examples are
//! re-pinned); creating a lowering job refuses a missing or different pin with
//! `toolchain-mismatch` naming both hashes and the fix, while `check` and
//! `test` do not read the skill; `trellis toolchain update` writes the pin.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use support::Root;
use trellis_skill::{skill, skill_hash};

fn pinned_skill(soil_toml: &str) -> Option<String> {
    let table: toml_lite::Table = toml_lite::parse(soil_toml);
    table.get("toolchain", "skill")
}

/// Just enough TOML for `[table] key = "string"` lines: the pin under test.
mod toml_lite {
    pub struct Table(Vec<(String, String, String)>);

    pub fn parse(text: &str) -> Table {
        let mut table = String::new();
        let mut out = Vec::new();
        for line in text.lines().map(str::trim) {
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                table = name.to_owned();
            } else if let Some((key, value)) = line.split_once('=') {
                let value = value.trim().trim_matches('"').to_owned();
                out.push((table.clone(), key.trim().to_owned(), value));
            }
        }
        Table(out)
    }

    impl Table {
        pub fn get(&self, table: &str, key: &str) -> Option<String> {
            self.0
                .iter()
                .find(|(t, k, _)| t == table && k == key)
                .map(|(_, _, v)| v.clone())
        }
    }
}

/// `UPDATE_EXPECT=1` re-pins the example root, as it blesses goldens.
#[test]
fn the_example_root_pins_the_current_skill() {
    let text = support::workspace_file("examples/soil.toml");
    let pinned = pinned_skill(&text);
    if std::env::var_os("UPDATE_EXPECT").is_some() && pinned.as_deref() != Some(&skill_hash()) {
        let old = format!(
            "skill = \"{}\"",
            pinned.expect("examples/soil.toml pins a skill")
        );
        let new = format!("skill = \"{}\"", skill_hash());
        let path = support::workspace().join("examples/soil.toml");
        std::fs::write(path, text.replace(&old, &new)).expect("re-pin examples/soil.toml");
        return;
    }
    assert_eq!(
        pinned.as_deref(),
        Some(skill_hash().as_str()),
        "examples/soil.toml [toolchain] skill is not this toolchain's skill hash: the skill \
         changed (docs/skill.md shows how); review it and re-pin with \
         `UPDATE_EXPECT=1 cargo test -p trellis --test skill_pin`"
    );
}

#[test]
fn trellis_skill_prints_the_skill_and_its_hash() {
    let root = Root::examples();
    let text = root.run(&["skill"]).ok();
    assert_eq!(text.stdout, skill());
    let hash = root.run(&["skill", "--hash"]).ok();
    assert_eq!(hash.stdout, format!("{}\n", skill_hash()));
    assert_eq!(
        hash.stdout.trim(),
        trellis_hash::Digest::of(text.stdout.as_bytes()).to_string()
    );
    let usage = root.run(&["skill", "--json"]);
    assert_eq!(usage.code, Some(2), "{usage:?}");
}

/// `_job create` on `root`, returning its exit code and its one JSON document.
fn create_job(root: &Root) -> (Option<i32>, serde_json::Value) {
    let run = root.run(&[
        "_job",
        "create",
        "csvstats::median",
        "--budget",
        "20000",
        "--json",
    ]);
    (run.code, run.json())
}

fn assert_skill_mismatch(document: &serde_json::Value, pinned: Option<&str>) {
    let error = &document["errors"][0];
    assert_eq!(error["code"], "toolchain-mismatch", "{document}");
    assert_eq!(error["file"]["value"], "soil.toml", "{document}");
    assert_eq!(error["repair_class"], "update-toolchain", "{document}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains(&skill_hash()), "{message}");
    match pinned {
        Some(pinned) => assert!(message.contains(pinned), "{message}"),
        None => assert!(message.contains("pins no skill"), "{message}"),
    }
    assert!(
        error.to_string().contains("trellis toolchain update"),
        "{document}"
    );
}

#[test]
fn a_job_is_refused_when_the_skill_pin_is_missing() {
    let root = Root::examples_with_daemon();
    let pinned = root.read("soil.toml");
    let line = format!("skill = \"{}\"\n", skill_hash());
    assert!(pinned.contains(&line), "{pinned}");
    root.write("soil.toml", &pinned.replace(&line, ""));
    let (code, document) = create_job(&root);
    assert_eq!(code, Some(1), "{document}");
    assert_skill_mismatch(&document, None);
    // Commands that do not consume the skill keep working.
    root.run(&["check"]).ok();
    root.run(&["test", "csvstats::finite"]).ok();
    // The fix the diagnostic names restores the pin, byte for byte.
    root.run(&["toolchain", "update"]).ok();
    assert_eq!(root.read("soil.toml"), pinned);
    let (code, document) = create_job(&root);
    assert_eq!(code, Some(0), "{document}");
    assert!(document["job"].is_string(), "{document}");
}

#[test]
fn a_job_is_refused_when_the_skill_pin_is_another_skills() {
    let root = Root::examples_with_daemon();
    let other = format!("sha256:{}", "0".repeat(64));
    root.edit("soil.toml", &skill_hash(), &other);
    let (code, document) = create_job(&root);
    assert_eq!(code, Some(1), "{document}");
    assert_skill_mismatch(&document, Some(&other));
    root.run(&["check"]).ok();
    // `toolchain update` rewrites the pin in place.
    let update = root.run(&["toolchain", "update"]).ok();
    assert!(update.stdout.contains(&skill_hash()), "{update:?}");
    assert_eq!(
        pinned_skill(&root.read("soil.toml")).as_deref(),
        Some(skill_hash().as_str())
    );
    assert_eq!(
        root.read("soil.toml"),
        support::workspace_file("examples/soil.toml")
    );
    assert_eq!(create_job(&root).0, Some(0));
}

#[test]
fn toolchain_update_adds_a_missing_skill_pin_and_keeps_every_other_byte() {
    let root = Root::examples();
    let text = "# the root's configuration\nentrypoint = \"csvstats::median\"\n\n[toolchain]\n\
        trellis = \"0.0.1\"   \nsoil0_cli = \"0.0.1\"\n\n[tags]\n# a tag named like the key\n\
        skill = \"a tag\"\nstats = \"s\"\nio = \"i\"\nparsing = \"p\"\nsorting = \"o\"\n\
        predicates = \"q\"\nstock = \"k\"\nreporting = \"r\"\ndraft = \"d\"\n";
    root.write("soil.toml", text);
    root.run(&["--no-daemon", "toolchain", "update"]).ok();
    let expected = text
        .replace(
            "trellis = \"0.0.1\"   \n",
            &format!("trellis = \"{}\"\n", trellis_service::identity::VERSION),
        )
        .replace(
            "soil0_cli = \"0.0.1\"\n",
            &format!(
                "soil0_cli = \"{}\"\nskill = \"{}\"\n",
                trellis_service::identity::SOIL0_VERSION,
                skill_hash()
            ),
        );
    assert_eq!(root.read("soil.toml"), expected);
    // A second update changes nothing.
    let again = root.run(&["--no-daemon", "toolchain", "update"]).ok();
    assert!(again.stdout.contains("(already)"), "{again:?}");
    assert_eq!(root.read("soil.toml"), expected);
}
