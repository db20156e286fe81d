//! A compact, readable rendering of a parsed file, for goldens and debugging.

use std::fmt::Write as _;

use trellis_diag::LineIndex;

use crate::model::{
    BlockSyntax, CramStep, Expected, JsonText, Reference, ReferenceLine, TestLine, TrFile,
};

/// One line per node, indented by depth; Soil fragments are shown as written with
/// `✓` when the Soil parser produced a tree and `✗` when it did not.
pub fn render(file: &TrFile, text: &str) -> String {
    let index = LineIndex::new(text);
    let mut out = String::new();
    let name = file.frontmatter.name.as_deref().unwrap_or("<none>");
    let _ = writeln!(
        out,
        "{} {name} (stem {})",
        file.kind.as_str(),
        file.file_stem
    );
    if !file.frontmatter.tags.is_empty() {
        let _ = writeln!(out, "tags {}", file.frontmatter.tags.join(", "));
    }
    for block in &file.blocks {
        let start = index.position(text, block.location.fence.start).line;
        let end = index
            .position(text, block.location.fence.end.saturating_sub(1))
            .line;
        let _ = writeln!(
            out,
            "{} [lines {start}-{end}]",
            block.value.header.info_string()
        );
        render_syntax(&block.value.syntax, &mut out);
    }
    out
}

fn tick<T>(node: &Option<T>) -> &'static str {
    if node.is_some() { "✓" } else { "✗" }
}

fn json(value: &JsonText) -> String {
    serde_json::to_string(&value.value).unwrap_or_default()
}

fn render_syntax(syntax: &BlockSyntax, out: &mut String) {
    let mut line = |depth: usize, text: String| {
        let _ = writeln!(out, "{}{text}", "  ".repeat(depth));
    };
    match syntax {
        BlockSyntax::Signature(signature) => line(1, format!("signature {}", tick(signature))),
        BlockSyntax::TypeDecl(decl) => line(1, format!("type declaration {}", tick(decl))),
        BlockSyntax::Clauses(clauses) => {
            for clause in clauses {
                line(
                    1,
                    format!(
                        "{}: {} {}",
                        clause.label,
                        one_line(&clause.source),
                        tick(&clause.predicate)
                    ),
                );
            }
        }
        BlockSyntax::Test(lines) => {
            for test_line in lines {
                match test_line {
                    TestLine::With(binding) => line(
                        1,
                        format!("with {} = {}", binding.param, json(&binding.value)),
                    ),
                    TestLine::Case(case) => {
                        let args: Vec<String> = case.args.iter().map(json).collect();
                        let expected = match &case.expected {
                            Expected::Value(value) => json(value),
                            Expected::Panic(_) => "panic".to_owned(),
                        };
                        let fakes: Vec<&str> =
                            case.fakes.iter().map(|(name, _)| name.as_str()).collect();
                        let fakes = if fakes.is_empty() {
                            String::new()
                        } else {
                            format!("  [fakes {}]", fakes.join(", "))
                        };
                        line(
                            1,
                            format!(
                                "case {}({}) -> {expected}{fakes}",
                                case.callee,
                                args.join(", ")
                            ),
                        );
                    }
                }
            }
        }
        BlockSyntax::Property(property) => match property {
            None => line(1, "property ✗".to_owned()),
            Some(property) => {
                for binder in &property.binders {
                    line(
                        1,
                        format!(
                            "forall {} : {} {}",
                            binder.name,
                            binder.type_source,
                            tick(&binder.ty)
                        ),
                    );
                }
                if property.where_range.is_some() {
                    line(1, "where (refused)".to_owned());
                }
                line(
                    1,
                    format!(
                        "holds {} {}",
                        one_line(&property.body_source),
                        tick(&property.body)
                    ),
                );
            }
        },
        BlockSyntax::Cram(steps) => {
            for step in steps {
                match step {
                    CramStep::Fixture(fixture) => line(
                        1,
                        format!("fixture {} ({} bytes)", fixture.path, fixture.content.len()),
                    ),
                    CramStep::Command(command) => {
                        line(
                            1,
                            format!("$ {}", command.command.replace('\n', "\n    > ")),
                        );
                        for output in command.output.lines() {
                            line(2, format!("| {output}"));
                        }
                        if command.exit_code != 0 {
                            line(2, format!("[{}]", command.exit_code));
                        }
                    }
                }
            }
        }
        BlockSyntax::Reference(reference) => match reference {
            None => line(1, "reference ✗".to_owned()),
            Some(ReferenceLine {
                reference: Reference::Python { path, symbol },
                ..
            }) => line(1, format!("python {path} :: {symbol}")),
            Some(ReferenceLine {
                reference: Reference::Cli { command },
                ..
            }) => line(1, format!("cli {command}")),
        },
        BlockSyntax::Allow(grants) => {
            for grant in grants {
                line(1, format!("{}: {}", grant.hatch, grant.reason));
            }
        }
        BlockSyntax::Exports(exports) => {
            let names: Vec<&str> = exports.iter().map(|e| e.name.as_str()).collect();
            line(1, names.join(", "));
        }
        BlockSyntax::Decisions(entries) => {
            for entry in entries {
                line(1, format!("{} — {}", entry.label, entry.text));
                for rejected in &entry.rejected {
                    line(2, format!("rejected: {rejected}"));
                }
            }
        }
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
