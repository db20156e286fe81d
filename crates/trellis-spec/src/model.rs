//! The parsed `.tr` file. Block values are position-free (spans relative to the
//! block's content); absolute file positions live only in the `*Location` types,
//! so a prose edit above a block leaves its value equal (ARCHITECTURE, salsa notes).

use soil_syntax::ast::{Expr, Signature, Type, TypeDecl};
use trellis_diag::TextRange;

/// What a `.tr` file specifies (tr-grammar §2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    Function,
    Type,
    Module,
    Project,
    /// Neither `soil-sig` nor `soil-type` (or both): already reported.
    Unknown,
}

impl FileKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FileKind::Function => "function",
            FileKind::Type => "type",
            FileKind::Module => "module",
            FileKind::Project => "project",
            FileKind::Unknown => "unknown",
        }
    }
}

/// The hash class of a byte of the file (tr-grammar §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpanClass {
    Formal,
    Test,
    Decisions,
    Prose,
}

/// A reserved fence's first info-string word (tr-grammar §2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BlockKind {
    SoilSig,
    SoilType,
    Requires,
    Ensures,
    Invariant,
    Allow,
    Exports,
    Test,
    Property,
    Cram,
    Reference,
    Decisions,
}

impl BlockKind {
    pub const ALL: &'static [BlockKind] = &[
        BlockKind::SoilSig,
        BlockKind::SoilType,
        BlockKind::Requires,
        BlockKind::Ensures,
        BlockKind::Invariant,
        BlockKind::Allow,
        BlockKind::Exports,
        BlockKind::Test,
        BlockKind::Property,
        BlockKind::Cram,
        BlockKind::Reference,
        BlockKind::Decisions,
    ];

    pub fn word(self) -> &'static str {
        match self {
            BlockKind::SoilSig => "soil-sig",
            BlockKind::SoilType => "soil-type",
            BlockKind::Requires => "requires",
            BlockKind::Ensures => "ensures",
            BlockKind::Invariant => "invariant",
            BlockKind::Allow => "allow",
            BlockKind::Exports => "exports",
            BlockKind::Test => "test",
            BlockKind::Property => "property",
            BlockKind::Cram => "cram",
            BlockKind::Reference => "reference",
            BlockKind::Decisions => "decisions",
        }
    }

    pub fn from_word(word: &str) -> Option<BlockKind> {
        BlockKind::ALL
            .iter()
            .copied()
            .find(|kind| kind.word() == word)
    }

    pub fn class(self) -> SpanClass {
        match self {
            BlockKind::SoilSig
            | BlockKind::SoilType
            | BlockKind::Requires
            | BlockKind::Ensures
            | BlockKind::Invariant
            | BlockKind::Allow
            | BlockKind::Exports => SpanClass::Formal,
            BlockKind::Test | BlockKind::Property | BlockKind::Cram | BlockKind::Reference => {
                SpanClass::Test
            }
            BlockKind::Decisions => SpanClass::Decisions,
        }
    }

    /// `test`, `property` and `cram` take a name and may be `xfail`.
    pub fn is_named_test(self) -> bool {
        matches!(
            self,
            BlockKind::Test | BlockKind::Property | BlockKind::Cram
        )
    }
}

/// The parsed info string: `<block> [name] [xfail] [@agent]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BlockHeader {
    pub kind: BlockKind,
    pub name: Option<String>,
    pub xfail: bool,
    pub agent: bool,
}

impl BlockHeader {
    /// The normalised info string, the one that is hashed (tr-grammar §2.3).
    pub fn info_string(&self) -> String {
        let mut out = String::new();
        self.push_info_string(&mut out);
        out
    }

    /// Appends [`BlockHeader::info_string`] to `out`: the words, one space
    /// between each.
    pub fn push_info_string(&self, out: &mut String) {
        out.push_str(self.kind.word());
        if let Some(name) = &self.name {
            out.push(' ');
            out.push_str(name);
        }
        if self.xfail {
            out.push_str(" xfail");
        }
        if self.agent {
            out.push_str(" @agent");
        }
    }
}

/// A reserved block: its position-free value and where it sits in the file.
/// The value is shared, not copied, with whatever keeps it beyond the parse
/// (the database's per-kind block lists).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Block {
    pub value: std::sync::Arc<BlockValue>,
    pub location: BlockLocation,
}

/// Everything a block means, with spans relative to `content`. Equal before and
/// after any edit outside the block.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BlockValue {
    pub header: BlockHeader,
    /// The content exactly as the CommonMark parser yields it (container markers
    /// of lists and block quotes removed).
    pub content: String,
    pub syntax: BlockSyntax,
}

/// Where a block sits in the file: absolute byte ranges.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BlockLocation {
    /// The whole fence, opening and closing lines included.
    pub fence: TextRange,
    /// From the first to the last content byte (may include container markers).
    pub content: TextRange,
    /// How content offsets map to file offsets: contiguous runs.
    pub segments: Vec<Segment>,
}

/// `len` bytes of content starting at `content_start` are the file bytes starting
/// at `file_start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Segment {
    pub content_start: u32,
    pub file_start: u32,
    pub len: u32,
}

impl BlockLocation {
    /// The file offset of a content offset.
    pub fn file_offset(&self, content_offset: u32) -> u32 {
        let mut best = self.content.start;
        for segment in &self.segments {
            if content_offset < segment.content_start {
                break;
            }
            let within = (content_offset - segment.content_start).min(segment.len);
            best = segment.file_start + within;
        }
        best
    }

    /// A content range in file coordinates.
    pub fn file_range(&self, range: TextRange) -> TextRange {
        let start = self.file_offset(range.start);
        let end = self.file_offset(range.end).max(start);
        TextRange::new(start, end)
    }
}

/// A block's mini-language, parsed. Spans are relative to the block's content.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BlockSyntax {
    Signature(Option<Signature>),
    TypeDecl(Option<TypeDecl>),
    /// `requires`, `ensures`, `invariant`.
    Clauses(Vec<Clause>),
    Test(Vec<TestLine>),
    Property(Option<Property>),
    Cram(Vec<CramStep>),
    Reference(Option<ReferenceLine>),
    Allow(Vec<Grant>),
    Exports(Vec<Export>),
    Decisions(Vec<DecisionEntry>),
}

/// `label: predicate` (tr-grammar §3.2).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Clause {
    pub label: String,
    pub label_range: TextRange,
    /// The predicate's source text (continuation lines included).
    pub source: String,
    pub source_range: TextRange,
    /// `None` when the predicate did not parse (diagnostics say why).
    pub predicate: Option<Expr>,
}

/// One logical line of a `test` block (tr-grammar §3.3).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TestLine {
    With(WithBinding),
    Case(TestCase),
}

/// `with param = json`: the fake for a capability parameter, in scope for the
/// following cases of the block until rebound.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WithBinding {
    pub param: String,
    pub value: JsonText,
    pub range: TextRange,
}

/// `callee(args) -> expected`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TestCase {
    pub callee: String,
    pub args: Vec<JsonText>,
    pub expected: Expected,
    /// The fakes in scope for this case, by parameter name, in binding order.
    pub fakes: Vec<(String, JsonText)>,
    pub range: TextRange,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expected {
    Value(JsonText),
    /// `-> panic`; the range is the `panic` word's.
    Panic(TextRange),
}

/// A JSON value as written: the text (so a later type-directed decoder can read
/// numbers without `f64` rounding) and its generic parse.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct JsonText {
    pub text: String,
    pub value: serde_json::Value,
    pub range: TextRange,
}

/// `forall (x : T) ... . predicate` (tr-grammar §3.4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Property {
    pub binders: Vec<Binder>,
    /// Present when a (refused) `where` filter was written.
    pub where_range: Option<TextRange>,
    pub body_source: String,
    pub body_range: TextRange,
    pub body: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Binder {
    pub name: String,
    pub name_range: TextRange,
    pub type_source: String,
    pub type_range: TextRange,
    pub ty: Option<Type>,
}

/// One step of a cram transcript (tr-grammar §3.5).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CramStep {
    Fixture(CramFixture),
    Command(CramCommand),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CramFixture {
    pub path: String,
    /// Every line with its newline.
    pub content: String,
    pub range: TextRange,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CramCommand {
    /// The command, continuation lines joined with newlines.
    pub command: String,
    /// The expected combined output: each output line with its newline.
    pub output: String,
    pub exit_code: u8,
    pub range: TextRange,
}

/// The `reference` block's one line: verbatim (the differential test is named
/// `derived:differential:<line>`, lock-schema §5.2) and parsed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ReferenceLine {
    pub line: String,
    pub reference: Reference,
}

/// The differential oracle (tr-grammar §3.6).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Reference {
    Python { path: String, symbol: String },
    Cli { command: String },
}

/// `hatch: reason` (tr-grammar §3.7).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Grant {
    pub hatch: String,
    /// The reason, whitespace runs collapsed to single spaces.
    pub reason: String,
    /// The grant as written (its logical line): what the audit view lists.
    pub line: String,
    pub range: TextRange,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Export {
    pub name: String,
    pub range: TextRange,
}

/// `- **label** — text` plus continuation and `rejected:` lines (tr-grammar §5.2).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DecisionEntry {
    pub label: String,
    /// The text, lines joined with single spaces.
    pub text: String,
    pub rejected: Vec<String>,
    /// The entry's exact bytes: what its hash covers.
    pub bytes: String,
    pub range: TextRange,
}

/// The frontmatter's meaning (tr-grammar §2.1).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Frontmatter {
    pub name: Option<String>,
    pub tags: Vec<String>,
}

/// Where the frontmatter's parts sit (absolute; the frontmatter is always first).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FrontmatterLocation {
    /// The whole frontmatter, both `---` lines included; empty when absent.
    pub range: TextRange,
    /// The `name:` line with its line terminator: the formal span.
    pub name_line: Option<TextRange>,
    pub name_value: Option<TextRange>,
    pub tags: Vec<TextRange>,
}

/// A parsed `.tr` file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TrFile {
    pub file_stem: String,
    pub kind: FileKind,
    pub frontmatter: Frontmatter,
    pub frontmatter_location: FrontmatterLocation,
    /// Reserved blocks in document order.
    pub blocks: Vec<Block>,
    /// The file's length in bytes.
    pub len: u32,
}
