//! The diagnostic registry (contract §6.1): `registry/diagnostics.json`, embedded
//! at compile time so every binary carries the registry it was built with.

use std::sync::OnceLock;

use serde::Deserialize;

/// The registry file's text, exactly as checked in.
pub const REGISTRY_JSON: &str = include_str!("../../../registry/diagnostics.json");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Registry {
    pub registry_format: u64,
    pub repair_classes: Vec<RepairClass>,
    pub codes: Vec<CodeEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepairClass {
    pub name: String,
    pub summary: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeEntry {
    pub code: String,
    pub source: String,
    pub repair_class: String,
    pub spec_ref: String,
}

/// The parsed registry. The embedded file is validated by this crate's tests, so
/// a malformed registry can never be built into a passing tree.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        serde_json::from_str(REGISTRY_JSON).unwrap_or_else(|_| Registry {
            registry_format: 1,
            repair_classes: Vec::new(),
            codes: Vec::new(),
        })
    })
}

pub fn lookup(code: &str) -> Option<&'static CodeEntry> {
    registry().codes.iter().find(|entry| entry.code == code)
}

/// Where the registry disagrees with what a crate declares of its codes, as
/// `(code, source, repair_class, spec_ref)`: one line per missing code or differing
/// field. Crates whose codes carry a class and section assert this is empty.
pub fn mismatches<'a>(
    declared: impl IntoIterator<Item = (&'a str, &'a str, &'a str, &'a str)>,
) -> Vec<String> {
    let mut found = Vec::new();
    for (code, source, repair_class, spec_ref) in declared {
        let Some(entry) = lookup(code) else {
            found.push(format!("{code}: not registered"));
            continue;
        };
        for (field, registered, declared) in [
            ("source", &entry.source, source),
            ("repair_class", &entry.repair_class, repair_class),
            ("spec_ref", &entry.spec_ref, spec_ref),
        ] {
            if registered != declared {
                found.push(format!(
                    "{code}: {field} is {registered:?} in the registry, {declared:?} in code"
                ));
            }
        }
    }
    found
}

/// The codes in `codes` that the registry lacks; crates call this from a test over
/// their full code list so an unregistered code fails the build.
pub fn missing_codes<'a>(codes: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    codes
        .into_iter()
        .filter(|code| lookup(code).is_none())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mismatches_name_the_missing_code_and_the_differing_field() {
        let entry = &registry().codes[0];
        let (code, source) = (entry.code.as_str(), entry.source.as_str());
        let declared = [
            (
                code,
                source,
                entry.repair_class.as_str(),
                entry.spec_ref.as_str(),
            ),
            (code, source, "no-such-class", entry.spec_ref.as_str()),
            ("no-such-code", "trellis", "fix-spec", "design#1"),
        ];
        let found = mismatches(declared);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[0].starts_with(&format!("{code}: repair_class is")),
            "{found:?}"
        );
        assert_eq!(found[1], "no-such-code: not registered");
    }

    #[test]
    fn the_embedded_registry_is_well_formed() {
        let parsed: Registry = serde_json::from_str(REGISTRY_JSON).expect("registry parses");
        assert_eq!(parsed.registry_format, 1);
        let classes: Vec<&str> = parsed
            .repair_classes
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        let mut seen = std::collections::BTreeSet::new();
        for entry in &parsed.codes {
            assert!(seen.insert(&entry.code), "duplicate code {}", entry.code);
            assert!(
                is_kebab_case(&entry.code),
                "code {} is not kebab-case",
                entry.code
            );
            assert!(
                classes.contains(&entry.repair_class.as_str()),
                "code {} names unknown repair class {}",
                entry.code,
                entry.repair_class
            );
            assert!(
                matches!(entry.source.as_str(), "soil0" | "trellis"),
                "code {} has source {}",
                entry.code,
                entry.source
            );
            let (slug, section) = entry.spec_ref.split_once('#').unwrap_or(("", ""));
            assert!(
                !slug.is_empty() && !section.is_empty(),
                "code {} has malformed spec_ref {:?}",
                entry.code,
                entry.spec_ref
            );
        }
    }

    fn is_kebab_case(code: &str) -> bool {
        !code.is_empty()
            && !code.starts_with('-')
            && !code.ends_with('-')
            && !code.contains("--")
            && code
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    }
}
