//! Spec sections by anchor (trellis-daemon §3.6, §7): `<slug>#<section>` →
//! `{ title, text }`, served from copies of the `docs/` documents compiled into
//! the binary. The working tree is never read: the spec an agent reads must be
//! the one the toolchain that checks it was built from (design §8). Every value
//! handed out borrows from the embedded `'static` text, so no path, no file and
//! no working directory can reach a lookup.

use trellis_diag::Diagnostic;

/// The documents `spec_ref` anchors name, by slug, as embedded at build time.
/// Adding a document is one line here (and its header in `docs/`).
const DOCUMENTS: &[(&str, &str)] = &[
    ("design", include_str!("../../../docs/design.md")),
    ("tr-grammar", include_str!("../../../docs/tr-grammar.md")),
    ("lock-schema", include_str!("../../../docs/lock-schema.md")),
    (
        "soil-syntax-spec",
        include_str!("../../../docs/soil-syntax-spec.md"),
    ),
    (
        "soil0-cli",
        include_str!("../../../docs/contracts/soil0-cli.md"),
    ),
    (
        "trellis-daemon",
        include_str!("../../../docs/contracts/trellis-daemon.md"),
    ),
    ("soil-toml", include_str!("../../../docs/soil-toml.md")),
    ("prelude", include_str!("../../../docs/prelude.md")),
];

/// One served section: its header's title (without the number) and its text,
/// from the header line up to the next header of the same or a higher level
/// (so a section includes its subsections).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section {
    pub title: &'static str,
    pub text: &'static str,
}

/// The slugs that resolve, in table order.
pub fn slugs() -> impl Iterator<Item = &'static str> {
    DOCUMENTS.iter().map(|(slug, _)| *slug)
}

/// The embedded copy of a document, by slug.
pub fn embedded_document(slug: &str) -> Option<&'static str> {
    DOCUMENTS
        .iter()
        .find(|(name, _)| *name == slug)
        .map(|(_, text)| *text)
}

/// Serves `reference` (`soil-syntax-spec#9.1`); anything that does not name an
/// embedded document's numbered header is `unknown-spec-ref`.
pub fn spec_section(reference: &str) -> Result<Section, Diagnostic> {
    let unknown = |why: String| {
        Diagnostic::new(
            "unknown-spec-ref",
            format!("`{reference}` is not a spec section: {why}"),
        )
    };
    let Some((slug, number)) = reference.split_once('#') else {
        return Err(unknown("an anchor is `<slug>#<section>`".into()));
    };
    let Some(document) = embedded_document(slug) else {
        let known: Vec<&str> = slugs().collect();
        return Err(unknown(format!(
            "no document `{slug}` (known: {})",
            known.join(", ")
        )));
    };
    headers(document)
        .iter()
        .position(|header| header.number == number)
        .map(|at| section_at(document, &headers(document), at))
        .ok_or_else(|| unknown(format!("`{slug}` has no section {number}")))
}

/// A numbered header: where its line starts, its level, number and title.
struct Header<'a> {
    start: usize,
    level: usize,
    number: &'a str,
    title: &'a str,
}

fn section_at(document: &'static str, headers: &[Header<'static>], at: usize) -> Section {
    let header = &headers[at];
    let end = all_headers(document)
        .into_iter()
        .find(|(start, level)| *start > header.start && *level <= header.level)
        .map_or(document.len(), |(start, _)| start);
    Section {
        title: header.title,
        text: document[header.start..end].trim_end(),
    }
}

/// Every Markdown header outside fenced code, numbered or not: (line start, level).
fn all_headers(document: &str) -> Vec<(usize, usize)> {
    lines_outside_fences(document)
        .filter_map(|(start, line)| {
            let level = line.chars().take_while(|&c| c == '#').count();
            (level > 0 && line[level..].starts_with(' ')).then_some((start, level))
        })
        .collect()
}

/// The numbered headers (`## 3.2 Title`, `## 3. Title`, `## §3.2 Title`), read
/// as the registry drift gate reads them.
fn headers(document: &str) -> Vec<Header<'_>> {
    lines_outside_fences(document)
        .filter_map(|(start, line)| {
            let level = line.chars().take_while(|&c| c == '#').count();
            if level == 0 {
                return None;
            }
            let rest = line[level..]
                .trim_start()
                .trim_start_matches('§')
                .trim_start();
            let digits = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            let number = rest[..digits].trim_end_matches('.');
            if number.is_empty() {
                return None;
            }
            Some(Header {
                start,
                level,
                number,
                title: rest[digits..].trim(),
            })
        })
        .collect()
}

/// Lines (with their byte offsets) that are not inside a fenced code block.
fn lines_outside_fences(document: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut fence: Option<String> = None;
    let mut offset = 0;
    document.split_inclusive('\n').filter_map(move |raw| {
        let start = offset;
        offset += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        let trimmed = line.trim_start();
        if let Some(marker) = &fence {
            if trimmed.starts_with(marker.as_str()) {
                fence = None;
            }
            return None;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(
                trimmed
                    .chars()
                    .take_while(|&c| c == '`' || c == '~')
                    .collect(),
            );
            return None;
        }
        Some((start, line))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_runs_to_the_next_header_of_its_level() {
        let section = spec_section("trellis-daemon#4.8").expect("4.8 exists");
        assert_eq!(section.title, "previous.soil");
        assert!(section.text.starts_with("### 4.8 previous.soil"));
        assert!(!section.text.contains("## 5."));
        let chapter = spec_section("trellis-daemon#4").expect("4 exists");
        assert!(chapter.text.contains("### 4.8 previous.soil"));
    }

    #[test]
    fn headers_inside_fences_are_not_sections() {
        // trellis-daemon §4.3 shows a rendered `# Decisions` inside a fence.
        let section = spec_section("trellis-daemon#4.3").expect("4.3 exists");
        assert!(section.text.contains("# Decisions"));
        assert!(section.text.contains("## module csvstats"));
    }

    #[test]
    fn bad_anchors_are_unknown_spec_refs() {
        for reference in ["nope", "nope#1", "design#999.9", "design#", ""] {
            let error = spec_section(reference).expect_err(reference);
            assert_eq!(error.code, "unknown-spec-ref");
        }
    }
}
