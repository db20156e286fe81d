//! Hostile `.soil` inputs of a chosen size, generated deterministically: the
//! shapes issue 41 names (a valid file ending in an unclosed parenthesis full of
//! stray tokens, many unclosed brackets, deep nesting, long lines of operators,
//! huge records and rows) and a few more that stress one checker walk each.
//! Shared by the parser's and the checker's tests, the checker's fuzz target and
//! `check_bench` (soil-types), which include this file by path.

#![allow(dead_code)]

/// One family of inputs; [`Shape::text`] renders it at about `size` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Valid definitions, then `broken x = (x` and stray tokens to the end.
    UnclosedParen,
    /// The same, with the parenthesis closed at the end: the stray names make
    /// one application of thousands of arguments, past the nesting bound.
    StrayApplication,
    /// One application of thousands of known names (`x`, a definition,
    /// literals), past the nesting bound too.
    KnownApplication,
    /// A list of applications of unknown names, each within the nesting bound:
    /// thousands of unknown names and effect rows in one body for the checker.
    WideApplications,
    /// A list of applications of the parameter to known names, each within the
    /// bound: one long arrow type, used thousands of times.
    KnownWideApplications,
    /// `(((x a ...) b ...) c ...)`: applications chained through parentheses,
    /// each within the bound, give the parameter thousands of arrows; then
    /// the parameter is used thousands of times.
    ChainedApplications,
    /// An unclosed parenthesis in the first definition, then valid definitions.
    UnclosedThenDefinitions,
    /// Every definition breaks the same way: `fN x = (x + (`.
    ManyUnclosed,
    /// `((((...x...))))` far past the nesting bound.
    DeepNesting,
    /// One line of `x + 1 - x * 2 ...` far past the nesting bound.
    OperatorLine,
    /// One list literal of many elements.
    HugeList,
    /// A record type with many fields, built, updated and matched.
    HugeRecord,
    /// A sum type with many variants and a match over all of them.
    HugeSum,
    /// A signature whose effect row names many labels and row variables.
    HugeRow,
    /// Many definitions, each using names that resolve to nothing.
    UnknownNames,
    /// A lambda of many parameters applied to as many arguments.
    ManyParameters,
    /// Token soup from the whole vocabulary, lines and all.
    TokenSoup,
}

impl Shape {
    pub const ALL: &'static [Shape] = &[
        Shape::UnclosedParen,
        Shape::StrayApplication,
        Shape::KnownApplication,
        Shape::WideApplications,
        Shape::KnownWideApplications,
        Shape::ChainedApplications,
        Shape::UnclosedThenDefinitions,
        Shape::ManyUnclosed,
        Shape::DeepNesting,
        Shape::OperatorLine,
        Shape::HugeList,
        Shape::HugeRecord,
        Shape::HugeSum,
        Shape::HugeRow,
        Shape::UnknownNames,
        Shape::ManyParameters,
        Shape::TokenSoup,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Shape::UnclosedParen => "unclosed-paren",
            Shape::StrayApplication => "stray-application",
            Shape::KnownApplication => "known-application",
            Shape::WideApplications => "wide-applications",
            Shape::KnownWideApplications => "known-wide-applications",
            Shape::ChainedApplications => "chained-applications",
            Shape::UnclosedThenDefinitions => "unclosed-then-definitions",
            Shape::ManyUnclosed => "many-unclosed",
            Shape::DeepNesting => "deep-nesting",
            Shape::OperatorLine => "operator-line",
            Shape::HugeList => "huge-list",
            Shape::HugeRecord => "huge-record",
            Shape::HugeSum => "huge-sum",
            Shape::HugeRow => "huge-row",
            Shape::UnknownNames => "unknown-names",
            Shape::ManyParameters => "many-parameters",
            Shape::TokenSoup => "token-soup",
        }
    }

    /// The input at about `size` bytes (never less).
    pub fn text(self, size: usize) -> String {
        let mut out = String::with_capacity(size + 256);
        match self {
            Shape::UnclosedParen => {
                definitions(&mut out, size / 2);
                out.push_str("broken x = (x ");
                words(&mut out, size, STRAY);
            }
            Shape::StrayApplication => {
                definitions(&mut out, size / 2);
                out.push_str("broken x = (x ");
                words(&mut out, size, &["a", "b", "c", "d", "e"]);
                out.push_str(")\n");
            }
            Shape::KnownApplication => {
                definitions(&mut out, size / 2);
                out.push_str("broken x = (x ");
                words(&mut out, size, &["x", "f0", "1", "x", "\"s\""]);
                out.push_str(")\n");
            }
            Shape::WideApplications => {
                definitions(&mut out, size / 2);
                out.push_str("broken x = [");
                applications(&mut out, size, &["a", "b", "c", "d", "e"]);
                out.push_str("]\n");
            }
            Shape::KnownWideApplications => {
                definitions(&mut out, size / 2);
                out.push_str("broken x = [");
                applications(&mut out, size, &["x", "f0", "1", "x", "\"s\""]);
                out.push_str("]\n");
            }
            Shape::ChainedApplications => {
                let links = 20;
                out.push_str("broken x = [");
                out.push_str(&"(".repeat(links));
                out.push('x');
                for link in 0..links {
                    for k in 0..100 {
                        out.push_str(if (link + k) % 3 == 0 { " 1" } else { " x" });
                    }
                    out.push_str(")\n  ");
                }
                while out.len() < size {
                    out.push_str(", x");
                }
                out.push_str("]\n");
            }
            Shape::UnclosedThenDefinitions => {
                out.push_str("broken : (x : I64) -> I64\n\nbroken x = (x + 1\n\n");
                definitions(&mut out, size);
            }
            Shape::ManyUnclosed => {
                let mut i = 0;
                while out.len() < size {
                    out.push_str(&format!("f{i} x = (x + (\n\n"));
                    i += 1;
                }
            }
            Shape::DeepNesting => {
                let depth = size.saturating_sub(16) / 2;
                out.push_str("deep x = ");
                out.push_str(&"(".repeat(depth));
                out.push('x');
                out.push_str(&")".repeat(depth));
                out.push('\n');
            }
            Shape::OperatorLine => {
                out.push_str("ops x = x");
                let ops = [" + 1", " - x", " * 2", " + x"];
                let mut k = 0;
                while out.len() < size {
                    out.push_str(ops[k % ops.len()]);
                    k += 1;
                }
                out.push('\n');
            }
            Shape::HugeList => {
                out.push_str("many : (x : I64) -> List I64\n\nmany x = [x");
                let mut k = 0;
                while out.len() < size {
                    out.push_str(if k % 2 == 0 { ", x + 1" } else { ", 2" });
                    k += 1;
                }
                out.push_str("]\n");
            }
            Shape::HugeRecord => {
                let fields = (size / 40).max(1);
                let names: Vec<String> = (0..fields).map(|i| format!("f{i}")).collect();
                out.push_str("type Big = { ");
                out.push_str(
                    &names
                        .iter()
                        .map(|n| format!("{n} : I64"))
                        .collect::<Vec<_>>()
                        .join(", "),
                );
                out.push_str(" }\n\nmake : (x : I64) -> Big\n\nmake x = Big { ");
                out.push_str(
                    &names
                        .iter()
                        .map(|n| format!("{n} = x"))
                        .collect::<Vec<_>>()
                        .join(", "),
                );
                out.push_str(" }\n\nbump : (b : Big) -> Big\n\nbump b = { b with ");
                out.push_str(
                    &names
                        .iter()
                        .map(|n| format!("{n} = b.{n} + 1"))
                        .collect::<Vec<_>>()
                        .join(", "),
                );
                out.push_str(
                    " }\n\nfirst : (b : Big) -> I64\n\nfirst b = match b with\n  | Big { ",
                );
                out.push_str(&names.join(", "));
                out.push_str(" } -> f0\n  end\n");
            }
            Shape::HugeSum => {
                let variants = (size / 24).max(1);
                out.push_str("type Many = V0");
                for i in 1..variants {
                    out.push_str(&format!(" | V{i}"));
                }
                out.push_str("\n\npick : (m : Many) -> I64\n\npick m = match m with\n");
                for i in 0..variants {
                    out.push_str(&format!("  | V{i} -> {i}\n"));
                }
                out.push_str("  end\n");
            }
            Shape::HugeRow => {
                let count = (size / 16).max(1);
                let mut row: Vec<String> = Vec::new();
                for i in 0..count {
                    row.push(match i % 4 {
                        0 => "Panic".to_owned(),
                        1 => format!("e{i}"),
                        2 => format!("Label{i}"),
                        _ => "Fs".to_owned(),
                    });
                }
                let row = row.join(", ");
                out.push_str(&format!(
                    "wide : (f : (x : I64) ->{{{row}}} I64) ->{{{row}}} I64\n\nwide f = f 1 + f 2\n"
                ));
            }
            Shape::UnknownNames => {
                let mut i = 0;
                while out.len() < size {
                    out.push_str(&format!(
                        "g{i} : (x : I64) -> I64\n\ng{i} x = missing{i} x + lost x (gone{i} 1) + g{i}x\n\n"
                    ));
                    i += 1;
                }
            }
            Shape::ManyParameters => {
                let count = (size / 12).max(1);
                let params: Vec<String> = (0..count).map(|i| format!("p{i}")).collect();
                out.push_str("wide x = (\\");
                out.push_str(&params.join(" "));
                out.push_str(" -> p0 + x)");
                for i in 0..count {
                    out.push_str(if i % 2 == 0 { " 1" } else { " x" });
                }
                out.push('\n');
            }
            Shape::TokenSoup => {
                let mut state = 0x2545_f491_4f6c_dd1d_u64;
                while out.len() < size {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    out.push_str(TOKENS[(state % TOKENS.len() as u64) as usize]);
                    out.push(' ');
                }
            }
        }
        out
    }
}

/// What [`Shape::UnclosedParen`] strews inside its parenthesis.
const STRAY: &[&str] = &[
    "x", "y", "+", "1", "f0", ",", "z", "*", "\"s\"", "]", "w", "(", "2.5", "-",
];

/// The whole token vocabulary, for soups and mutations.
pub const TOKENS: &[&str] = &[
    "let",
    "in",
    "if",
    "then",
    "else",
    "match",
    "with",
    "end",
    "|",
    "->",
    "\\",
    "=",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    "..",
    ".",
    "+",
    "-",
    "*",
    "/",
    "%",
    "++",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "and",
    "or",
    "not",
    "x",
    "xs",
    "rest",
    "f",
    "go",
    "n",
    "Some",
    "None",
    "Ok",
    "Err",
    "Row",
    "0",
    "1",
    "2.5",
    "7u",
    "\"s\"",
    "true",
    "false",
    "?h",
    "_",
    "::",
    "len",
    "map",
    "fold",
    "at",
    "panic",
    ":",
    "I64",
    "List",
    "F64",
    "->{Panic}",
    "a",
    "type",
    "Tree",
    "Leaf",
    "Node",
    "\n",
    "\n",
    "@",
    "\"open",
];

/// Valid signed definitions until `out` holds `size` bytes.
pub fn definitions(out: &mut String, size: usize) {
    let mut i = 0;
    while out.len() < size {
        out.push_str(&format!(
            "f{i} : (x : I64) -> I64\n\nf{i} x =\n  let y = x + {i} in\n  if y > 3 then y * 2 else y - 1\n\n"
        ));
        i += 1;
    }
}

/// Applications `x w w ...` of 100 arguments each from `vocabulary`, comma
/// separated a line each, until `out` holds `size` bytes.
fn applications(out: &mut String, size: usize, vocabulary: &[&str]) {
    let mut k = 0;
    while out.len() < size {
        if k > 0 {
            out.push_str(",\n  ");
        }
        out.push('x');
        for _ in 0..100 {
            out.push(' ');
            out.push_str(vocabulary[k % vocabulary.len()]);
            k += 1;
        }
    }
}

/// `vocabulary` cycled, sixteen words a line, until `out` holds `size` bytes.
fn words(out: &mut String, size: usize, vocabulary: &[&str]) {
    let mut k = 0;
    while out.len() < size {
        out.push_str(vocabulary[k % vocabulary.len()]);
        k += 1;
        out.push_str(if k % 16 == 0 { "\n  " } else { " " });
    }
}
