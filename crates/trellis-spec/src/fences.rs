//! Reserved fenced blocks, found by the CommonMark parser (impl plan §8.3), and
//! their info strings (tr-grammar §2.3).

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use trellis_diag::TextRange;

use crate::codes::TrCode;
use crate::model::{BlockHeader, BlockKind, BlockLocation, Segment};
use crate::report::Findings;

/// A reserved fence as found, before its content is parsed.
pub(crate) struct RawFence {
    pub header: BlockHeader,
    pub content: String,
    pub location: BlockLocation,
    /// False when the fence runs to the end of its container.
    pub closed: bool,
}

/// Every reserved fence in `text[body_start..]`, in document order.
pub(crate) fn reserved_fences(
    text: &str,
    body_start: u32,
    findings: &mut Findings,
) -> Vec<RawFence> {
    let body = &text[body_start as usize..];
    let mut out = Vec::new();
    let mut open: Option<Open> = None;
    for (event, range) in Parser::new_ext(body, Options::empty()).into_offset_iter() {
        let range = TextRange::new(
            range.start as u32 + body_start,
            range.end as u32 + body_start,
        );
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                open = Some(Open {
                    info: info.to_string(),
                    fence: range,
                    content: String::new(),
                    segments: Vec::new(),
                    content_range: None,
                });
            }
            Event::Text(piece) => {
                if let Some(block) = &mut open {
                    let content_start = block.content.len() as u32;
                    let source = &text[range.as_usize_range()];
                    // A tab partly consumed by container indentation comes back as
                    // spaces the file does not hold; map such a piece to its start.
                    let len = if source == &*piece {
                        piece.len() as u32
                    } else {
                        0
                    };
                    block.segments.push(Segment {
                        content_start,
                        file_start: range.start,
                        len,
                    });
                    block.content.push_str(&piece);
                    block.content_range = Some(match block.content_range {
                        Some(seen) => seen.cover(range),
                        None => range,
                    });
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(block) = open.take()
                    && let Some(fence) = block.finish(text, findings)
                {
                    out.push(fence);
                }
            }
            _ => {}
        }
    }
    out
}

struct Open {
    info: String,
    fence: TextRange,
    content: String,
    segments: Vec<Segment>,
    content_range: Option<TextRange>,
}

impl Open {
    fn finish(self, text: &str, findings: &mut Findings) -> Option<RawFence> {
        let mut words = self.info.split_whitespace();
        let kind = BlockKind::from_word(words.next()?)?;
        let opening_line = opening_line(text, self.fence);
        let header = parse_info(kind, words.collect(), opening_line, findings);
        let content_range = self
            .content_range
            .unwrap_or(TextRange::empty(opening_line.end));
        let after_content = text
            .get(content_range.end as usize..self.fence.end as usize)
            .unwrap_or("");
        let fence_char = text[self.fence.as_usize_range()]
            .chars()
            .find(|c| matches!(c, '`' | '~'))
            .unwrap_or('`');
        let closed = after_content.contains(&String::from(fence_char).repeat(3));
        if !closed {
            findings.push(
                TrCode::UnclosedFence,
                opening_line,
                format!(
                    "this `{}` block has no closing fence; it runs to the end of its container",
                    kind.word()
                ),
            );
        }
        Some(RawFence {
            header,
            content: self.content,
            location: BlockLocation {
                fence: self.fence,
                content: content_range,
                segments: self.segments,
            },
            closed,
        })
    }
}

/// The fence's first line, without its terminator.
pub(crate) fn opening_line(text: &str, fence: TextRange) -> TextRange {
    let slice = &text[fence.as_usize_range()];
    let end = slice.find('\n').unwrap_or(slice.len());
    let end = slice[..end].trim_end_matches('\r').len();
    TextRange::new(fence.start, fence.start + end as u32)
}

fn parse_info(
    kind: BlockKind,
    rest: Vec<&str>,
    at: TextRange,
    findings: &mut Findings,
) -> BlockHeader {
    let mut header = BlockHeader {
        kind,
        name: None,
        xfail: false,
        agent: false,
    };
    // The order is fixed: name, then xfail, then @agent; `stage` is how far we are.
    let mut stage = 0;
    let mut bad = false;
    for word in rest {
        let (word_stage, ok) = match word {
            "xfail" => (2, kind.is_named_test()),
            "@agent" => (3, true),
            _ => (1, kind.is_named_test() && is_block_name(word)),
        };
        if word_stage <= stage {
            bad = true;
            findings.push(TrCode::BadInfoString, at, format!("`{word}` is repeated or out of order: the info string is `<block> [name] [xfail] [@agent]`"));
            continue;
        }
        stage = word_stage;
        if !ok {
            bad = true;
            let why = match word_stage {
                2 => format!(
                    "`xfail` is allowed only on `test`, `property` and `cram`, not `{}`",
                    kind.word()
                ),
                _ if kind.is_named_test() => {
                    format!("`{word}` is not a block name (`[A-Za-z_][A-Za-z0-9_-]*`)")
                }
                _ => format!("a `{}` block takes no name; found `{word}`", kind.word()),
            };
            findings.push(TrCode::BadInfoString, at, why);
            continue;
        }
        match word_stage {
            1 => header.name = Some(word.to_owned()),
            2 => header.xfail = true,
            _ => header.agent = true,
        }
    }
    if kind.is_named_test() && header.name.is_none() && !bad {
        findings.push(
            TrCode::MissingBlockName,
            at,
            format!(
                "a `{}` block needs a name: `{} NAME`",
                kind.word(),
                kind.word()
            ),
        );
    }
    header
}

fn is_block_name(word: &str) -> bool {
    crate::lines::is_word(
        word,
        |c| c.is_ascii_alphabetic() || c == '_',
        |c| c.is_ascii_alphanumeric() || c == '_' || c == '-',
    )
}
