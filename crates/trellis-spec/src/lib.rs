//! `trellis-spec`: Parsing .tr specs: frontmatter, fenced blocks, block grammars, kind inference and validity rules.
