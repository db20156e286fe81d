//! The exact byte inputs of the spec hashes (tr-grammar §1), and the partition of
//! the file into hash classes they come from.

use trellis_diag::TextRange;
use trellis_hash::{Digest, Hasher};

use crate::model::{BlockSyntax, SpanClass, TrFile};

/// One hashed block: its normalised info string and content bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BlockPart {
    pub info: String,
    pub content: String,
}

/// The inputs of `formal_hash`: the name, then each formal block.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FormalParts {
    pub name: String,
    pub blocks: Vec<BlockPart>,
}

/// One decision entry's hash input (tr-grammar §5.2).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DecisionEntryPart {
    pub label: String,
    pub bytes: String,
}

impl FormalParts {
    pub fn hash(&self) -> Digest {
        let mut hasher = Hasher::new();
        hasher.part(self.name.as_bytes());
        for block in &self.blocks {
            hasher
                .part(block.info.as_bytes())
                .part(block.content.as_bytes());
        }
        hasher.finish()
    }
}

/// `test_hash` over test blocks' parts.
pub fn test_hash(parts: &[BlockPart]) -> Digest {
    let mut hasher = Hasher::new();
    for block in parts {
        hasher
            .part(block.info.as_bytes())
            .part(block.content.as_bytes());
    }
    hasher.finish()
}

/// `prose_hash` over the prose bytes.
pub fn prose_hash(prose: &str) -> Digest {
    let mut hasher = Hasher::new();
    hasher.part(prose.as_bytes());
    hasher.finish()
}

impl DecisionEntryPart {
    pub fn hash(&self) -> Digest {
        let mut hasher = Hasher::new();
        hasher.part(self.bytes.as_bytes());
        hasher.finish()
    }
}

/// The scope hash: the labels sorted byte-wise, NUL-separated, as one part.
pub fn scope_hash<'a>(labels: impl IntoIterator<Item = &'a str>) -> Digest {
    let mut labels: Vec<&str> = labels.into_iter().collect();
    labels.sort_unstable();
    let mut hasher = Hasher::new();
    hasher.part(labels.join("\0").as_bytes());
    hasher.finish()
}

impl TrFile {
    /// The parts of `formal_hash`. A file without a name hashes the empty name.
    pub fn formal_parts(&self) -> FormalParts {
        FormalParts {
            name: self.frontmatter.name.clone().unwrap_or_default(),
            blocks: self.class_parts(SpanClass::Formal),
        }
    }

    /// The parts of `test_hash`, in document order.
    pub fn test_parts(&self) -> Vec<BlockPart> {
        self.class_parts(SpanClass::Test)
    }

    /// `formal_hash` of [`TrFile::formal_parts`], fed from the parse with
    /// no copy of a block: a root's status hashes every spec, and at 20,000
    /// definitions copying the parts was half of that.
    pub fn formal_hash(&self) -> Digest {
        let mut hasher = Hasher::new();
        hasher.part(
            self.frontmatter
                .name
                .as_deref()
                .unwrap_or_default()
                .as_bytes(),
        );
        self.hash_class(SpanClass::Formal, &mut hasher);
        hasher.finish()
    }

    /// [`test_hash`] of [`TrFile::test_parts`], likewise.
    pub fn test_hash(&self) -> Digest {
        let mut hasher = Hasher::new();
        self.hash_class(SpanClass::Test, &mut hasher);
        hasher.finish()
    }

    /// [`prose_hash`] of [`TrFile::prose_bytes`], likewise: the prose
    /// pieces are hashed where they lie in `text`, the text this file was
    /// parsed from.
    pub fn prose_hash(&self, text: &str) -> Digest {
        let pieces: Vec<&[u8]> = (self.partition().into_iter())
            .filter(|(class, _)| *class == SpanClass::Prose)
            .filter_map(|(_, range)| text.get(range.as_usize_range()))
            .map(str::as_bytes)
            .collect();
        let mut hasher = Hasher::new();
        hasher.part_in_pieces(&pieces);
        hasher.finish()
    }

    /// Feeds each block of `class` to `hasher` as [`TrFile::class_parts`]
    /// lists it: its info string, then its content.
    fn hash_class(&self, class: SpanClass, hasher: &mut Hasher) {
        let mut info = String::new();
        for block in self.blocks_of_class(class) {
            info.clear();
            block.value.header.push_info_string(&mut info);
            hasher
                .part(info.as_bytes())
                .part(block.value.content.as_bytes());
        }
    }

    fn class_parts(&self, class: SpanClass) -> Vec<BlockPart> {
        self.blocks_of_class(class)
            .map(|b| BlockPart {
                info: b.value.header.info_string(),
                content: b.value.content.clone(),
            })
            .collect()
    }

    /// The blocks whose bytes `class`'s hash reads, in document order.
    pub fn blocks_of_class(&self, class: SpanClass) -> impl Iterator<Item = &crate::model::Block> {
        (self.blocks.iter()).filter(move |b| b.value.header.kind.class() == class)
    }

    /// Every decision entry of the file, in document order.
    pub fn decision_entries(&self) -> Vec<DecisionEntryPart> {
        self.blocks
            .iter()
            .filter_map(|b| match &b.value.syntax {
                BlockSyntax::Decisions(entries) => Some(entries),
                _ => None,
            })
            .flatten()
            .map(|e| DecisionEntryPart {
                label: e.label.clone(),
                bytes: e.bytes.clone(),
            })
            .collect()
    }

    /// The file cut into class spans: in order, non-overlapping, covering every
    /// byte exactly once (adjacent prose pieces are merged).
    pub fn partition(&self) -> Vec<(SpanClass, TextRange)> {
        let mut owned: Vec<(SpanClass, TextRange)> = Vec::new();
        if let Some(line) = self.frontmatter_location.name_line {
            owned.push((SpanClass::Formal, line));
        }
        for block in &self.blocks {
            owned.push((block.value.header.kind.class(), block.location.fence));
        }
        owned.sort_by_key(|(_, range)| range.start);
        let mut out = Vec::new();
        let mut at = 0u32;
        for (class, range) in owned {
            // Fences never overlap each other or the frontmatter; clamp defensively
            // so the partition stays a partition whatever the parser reports.
            let start = range.start.max(at);
            let end = range.end.max(start).min(self.len);
            if start > at {
                out.push((SpanClass::Prose, TextRange::new(at, start)));
            }
            if end > start {
                out.push((class, TextRange::new(start, end)));
            }
            at = at.max(end);
        }
        if at < self.len {
            out.push((SpanClass::Prose, TextRange::new(at, self.len)));
        }
        out
    }

    /// The prose bytes: `text` with every formal, test and decisions span elided.
    /// `text` must be the text this file was parsed from.
    pub fn prose_bytes(&self, text: &str) -> String {
        self.partition()
            .into_iter()
            .filter(|(class, _)| *class == SpanClass::Prose)
            .filter_map(|(_, range)| text.get(range.as_usize_range()))
            .collect()
    }
}
