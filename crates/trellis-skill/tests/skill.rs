//! The skill's drift gate and its promises: the committed copy `docs/skill.md`
//! is exactly what this toolchain generates (bless a change with
//! `UPDATE_EXPECT=1 cargo test -p trellis-skill --test skill`, or
//! `trellis skill > docs/skill.md`); the skill names every registered repair
//! class and code and all seven tools with their schemas; it stays under its
//! token budget; and its hash is the digest of its bytes.

use trellis_diag::registry::registry;
use trellis_skill::{BUDGET_TOKENS, skill, skill_hash, skill_tokens};

#[test]
fn the_committed_skill_is_what_the_toolchain_generates() {
    // On failure: the registry, the tool schemas, the embedded docs or the corpus
    // changed the skill. Review the diff, bless it as the header says, and re-pin
    // the example root (`UPDATE_EXPECT=1 cargo test -p trellis --test skill_pin`):
    // its `[toolchain] skill` must be the new hash.
    expect_test::expect_file!["../../../docs/skill.md"].assert_eq(skill());
}

#[test]
fn the_skill_names_every_repair_class_and_code() {
    let text = skill();
    for class in &registry().repair_classes {
        assert!(
            text.contains(&format!("**{}** — {}", class.name, class.summary)),
            "the skill lacks the repair class `{}`",
            class.name
        );
    }
    // Each code is on its class's `Codes:` line, followed by its spec_ref.
    for code in &registry().codes {
        let class_at = text
            .find(&format!("**{}** — ", code.repair_class))
            .expect("the class is named");
        let line = text[class_at..]
            .lines()
            .find(|line| line.starts_with("Codes: "))
            .unwrap_or_default();
        let at = line.find(&format!("`{}`", code.code));
        // The next parenthesis after the code opens its group's spec_ref.
        let group_ref = at.and_then(|at| line[at..].split_once('(').map(|(_, rest)| rest));
        assert!(
            group_ref.is_some_and(|rest| rest.starts_with(&format!("{})", code.spec_ref))),
            "the skill lacks the code `{}` ({}) under its class `{}`",
            code.code,
            code.spec_ref,
            code.repair_class
        );
    }
}

#[test]
fn the_skill_names_all_seven_tools_with_their_schemas() {
    let text = skill();
    assert_eq!(trellis_mcp::TOOLS.len(), 7);
    for spec in trellis_mcp::TOOLS {
        let schema = format!("Input schema: `{}`", spec.input.json_schema());
        assert!(
            text.contains(&format!(" {}\n\n{}", spec.name, spec.description)),
            "the skill lacks the tool `{}` and its description",
            spec.name
        );
        assert!(text.contains(&schema), "{} lacks its schema", spec.name);
    }
}

#[test]
fn the_skill_states_the_contract_version() {
    let version = trellis_skill::contract_version();
    assert!(
        skill().contains(&format!("Contract: trellis-daemon v{}", version.version)),
        "{version:?}"
    );
}

#[test]
fn the_skill_fits_its_budget() {
    let tokens = skill_tokens();
    assert!(
        tokens <= BUDGET_TOKENS,
        "the skill is {tokens} tokens (bytes/4), over its budget of {BUDGET_TOKENS}: \
         shorten a section or lower SYNTAX_BUDGET_TOKENS"
    );
    // The reference is budgeted, not empty: the core chapters are inlined.
    for chapter in ["#### 5. Expressions", "#### 6. Patterns", "#### 3. Types"] {
        assert!(skill().contains(chapter), "{chapter} is not inlined");
    }
    assert!(skill().contains("`soil-syntax-spec#9` Canonical form"));
}

#[test]
fn the_hash_is_the_digest_of_the_bytes() {
    let hash = skill_hash();
    assert_eq!(
        hash,
        trellis_hash::Digest::of(skill().as_bytes()).to_string()
    );
    assert!(trellis_hash::Digest::parse(&hash).is_ok(), "{hash}");
}
