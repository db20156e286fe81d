//! Every code this crate emits is registered, with the spec_ref of its rule.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use trellis_diag::registry::{lookup, missing_codes};
use trellis_spec::TrCode;
use trellis_spec::codes::all_code_strs;

#[test]
fn every_code_is_registered_with_its_rule() {
    assert_eq!(missing_codes(all_code_strs()), Vec::<&str>::new());
    for code in TrCode::ALL {
        let entry = lookup(code.as_str()).expect("registered");
        assert_eq!(entry.spec_ref, code.spec_ref(), "{}", code.as_str());
        assert_eq!(entry.repair_class, "fix-spec", "{}", code.as_str());
        assert_eq!(entry.source, "trellis", "{}", code.as_str());
    }
}

#[test]
fn the_grammar_doc_has_a_subsection_per_rule() {
    let doc = include_str!("../../../docs/tr-grammar.md");
    for (i, code) in TrCode::ALL.iter().enumerate() {
        let header = format!("### 6.{} `{}`", i + 1, code.as_str());
        assert!(doc.contains(&header), "docs/tr-grammar.md lacks {header:?}");
    }
}
