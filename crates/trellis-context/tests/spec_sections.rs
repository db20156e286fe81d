//! `read_spec`'s sections: every registry `spec_ref` resolves through the
//! embedded copies, and what is served is the copy compiled into the binary,
//! never the working tree.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use trellis_context::{embedded_document, slugs, spec_section};

#[test]
fn every_registry_spec_ref_resolves_through_the_embedded_copies() {
    let unresolved: Vec<String> = trellis_diag::registry::registry()
        .codes
        .iter()
        .filter(|entry| spec_section(&entry.spec_ref).is_err())
        .map(|entry| format!("{}: {}", entry.code, entry.spec_ref))
        .collect();
    assert!(unresolved.is_empty(), "unresolved: {unresolved:?}");
}

#[test]
fn the_contract_slugs_and_the_amendment_slugs_are_served() {
    let served: Vec<&str> = slugs().collect();
    for slug in [
        "design",
        "tr-grammar",
        "lock-schema",
        "soil-syntax-spec",
        "soil0-cli",
        "trellis-daemon",
        "soil-toml",
    ] {
        assert!(served.contains(&slug), "{slug} is not served");
    }
    let section = spec_section("soil-syntax-spec#9.1").expect("the issue's example resolves");
    assert!(section.text.starts_with('#'));
    assert!(!section.title.is_empty());
}

/// The served text is a slice of the `'static` copy compiled in (its bytes lie
/// inside the embedded document), and serving still works from a working
/// directory with no `docs/` at all. A lookup takes no path, so nothing else
/// could be read.
#[test]
fn the_embedded_copy_not_the_working_tree_is_served() {
    let empty = std::env::temp_dir().join(format!("trellis-context-cwd-{}", std::process::id()));
    std::fs::create_dir_all(&empty).expect("a temp dir");
    std::env::set_current_dir(&empty).expect("cd into it");
    let section = spec_section("trellis-daemon#3.6").expect("served without docs/ nearby");
    let document = embedded_document("trellis-daemon").expect("embedded");
    let (start, end) = (
        document.as_ptr() as usize,
        document.as_ptr() as usize + document.len(),
    );
    let at = section.text.as_ptr() as usize;
    assert!(start <= at && at + section.text.len() <= end);
    assert_eq!(section.title, "read_spec");
    let _ = std::fs::remove_dir(&empty);
}
