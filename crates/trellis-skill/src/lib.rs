//! `trellis-skill` owns the lowering skill: the one text a lowering agent is
//! given to lower well (trellis-daemon §1, §3.6, §6.1; design §4.6). It states
//! the contract version, the seven tools with the schemas `trellis-mcp`
//! generates and when to use each, every repair class with the codes that carry
//! it from `trellis-diag`'s embedded registry, the effect lattice and the
//! capability rules (`soil-types`' effect labels and the prelude's rows), the
//! derivation strategies, a budgeted core reference of Soil cut from the
//! documents `trellis-context` embeds for `read_spec`, and worked examples from
//! the corpus (`examples/`, embedded at build time). It is a function of the
//! binary alone: it reads no file, no root and no database at run time, so its
//! hash — pinned in `soil.toml [toolchain] skill` (soil-toml §2.1) — names
//! exactly what the agent was told. `trellis skill` prints it.
//!
//! Workspace dependencies: `trellis-diag`, `trellis-hash`, `trellis-mcp`,
//! `trellis-context`, `soil-types`.

#![cfg_attr(test, allow(clippy::disallowed_methods, reason = "tests use files"))]

mod contract;
mod corpus;
mod guide;
mod reference;
mod repairs;
mod tools;

use std::sync::OnceLock;

pub use contract::{ContractVersion, contract_version};
pub use repairs::agent_action;

/// The size the whole skill must stay under, in tokens at bytes/4 (the
/// packer's estimate, trellis-daemon §5). The skill rides in every lowering
/// beside the context bundle, so it takes a fixed, small share of the agent's
/// window: under half of the 25,000-token result cap (trellis-daemon §10.3),
/// which is also the smallest bundle budget worth packing for a real
/// definition, and a twentieth of a 200,000-token window.
pub const BUDGET_TOKENS: u64 = 12_000;

/// The share of [`BUDGET_TOKENS`] the verbatim sections of the Soil syntax
/// reference may take; the sections past it are named with their `read_spec`
/// anchors instead.
pub const SYNTAX_BUDGET_TOKENS: u64 = 3_200;

/// The skill, rendered once per process.
pub fn skill() -> &'static str {
    static SKILL: OnceLock<String> = OnceLock::new();
    SKILL.get_or_init(render)
}

/// The skill's hash, `sha256:` + hex of its bytes: `trellis skill | sha256sum`
/// prints the same digits.
pub fn skill_hash() -> String {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| trellis_hash::Digest::of(skill().as_bytes()).to_string())
        .clone()
}

/// The skill's size in tokens at bytes/4.
pub fn skill_tokens() -> u64 {
    trellis_context::tokens(skill().len())
}

fn render() -> String {
    let mut out = String::new();
    out.push_str(&guide::preamble(&contract_version()));
    out.push_str(&guide::workflow());
    out.push_str(&tools::section());
    out.push_str(&guide::strategies());
    out.push_str(&guide::effects());
    out.push_str(&repairs::section());
    out.push_str(&reference::section());
    out.push_str(&corpus::section());
    out
}
