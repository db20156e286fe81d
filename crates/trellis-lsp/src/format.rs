//! Formatting a `.soil` document through the canonical printer (soil-syntax-spec
//! §9), the same printer `write_soil` puts every draft through. Canonical form has
//! no comments, so a document with comments is refused rather than silently
//! stripped, as is one that does not parse (its diagnostics say why).

/// Why a document was not formatted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    DoesNotParse,
    HasComments { line: usize },
}

impl Refusal {
    pub fn message(&self) -> String {
        match self {
            Refusal::DoesNotParse => {
                "not formatted: the file does not parse (see its diagnostics)".to_owned()
            }
            Refusal::HasComments { line } => format!(
                "not formatted: canonical Soil has no comments (soil-syntax-spec §9) and \
                 formatting would delete the one on line {line}; move it to the spec's prose first"
            ),
        }
    }
}

/// The canonical text of a `.soil` document.
pub fn format_soil(text: &str) -> Result<String, Refusal> {
    let (file, diagnostics) = soil_syntax::parse_file(text);
    if !diagnostics.is_empty() {
        return Err(Refusal::DoesNotParse);
    }
    if let Some(line) = first_comment_line(text) {
        return Err(Refusal::HasComments { line });
    }
    Ok(soil_syntax::print_file(&file))
}

/// The 1-based line of the first `--` comment outside a string literal.
fn first_comment_line(text: &str) -> Option<usize> {
    let mut line = 1;
    let mut in_string = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            '\\' if in_string => {
                chars.next();
            }
            '"' => in_string = !in_string,
            '-' if !in_string && chars.peek() == Some(&'-') => return Some(line),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_text_or_a_refusal() {
        assert_eq!(format_soil("f   x =  x+1").as_deref(), Ok("f x = x + 1\n"));
        assert_eq!(format_soil("f x = \"--\" ++ x\n").map(|_| ()), Ok(()));
        assert_eq!(
            format_soil("f x =\n  -- why\n  x\n"),
            Err(Refusal::HasComments { line: 2 })
        );
        assert_eq!(
            format_soil("f x = (").map(|_| ()),
            Err(Refusal::DoesNotParse)
        );
    }
}
