//! Code lenses: above each definition, type and decision scope, the status row
//! `trellis status` prints for it — the status, why, and the command that fixes
//! it. The lens runs that command through the host (`trellis.run`): every write
//! into the root goes through the CLI and its writer lock, never this server.

use soil_syntax::ast::Item;
use trellis_db::{Db, SourceFile, StatusRow};
use trellis_diag::TextRange;

use crate::hover::status_row;
use crate::paths::{module_of, stem_of};

/// One lens: where it sits (file offsets), its row, and the fixing commands'
/// arguments (`[["adopt", "m::f"], ["test", "m::f"]]`) when the fix is nothing
/// but commands (a fix that starts with an edit only a person can make is shown,
/// not run).
pub struct Lens {
    pub range: TextRange,
    pub row: StatusRow,
    pub commands: Option<Vec<Vec<String>>>,
}

impl Lens {
    pub fn title(&self) -> String {
        let mut title = self.row.status.clone();
        if let Some(reason) = &self.row.reason {
            title.push_str(&format!(": {reason}"));
        }
        if let Some(fix) = &self.row.fix {
            title.push_str(&format!(" — run `{fix}`"));
        }
        title
    }
}

/// The row a file shows, by its place in the root.
fn row_name(path: &str) -> Option<String> {
    let stem = stem_of(path);
    match (module_of(path), stem) {
        (None, "_project") => Some("project".to_owned()),
        (Some(module), "_module") => Some(module.to_owned()),
        (Some(_), "_private") | (None, _) => None,
        (Some(module), stem) => Some(format!("{module}::{stem}")),
    }
}

pub fn lenses(db: &dyn Db, path: &str, file: SourceFile) -> Vec<Lens> {
    if !(path.ends_with(".tr") || path.ends_with(".soil")) {
        return Vec::new();
    }
    let Some(name) = row_name(path) else {
        return Vec::new();
    };
    let Some(row) = status_row(db, &name) else {
        return Vec::new();
    };
    let range = if path.ends_with(".soil") {
        let stem = stem_of(path);
        trellis_db::parse_soil(db, file)
            .ast
            .items
            .iter()
            .find_map(|item| match item {
                Item::Equation(equation) if equation.name.text == stem => Some(equation.name.span),
                _ => None,
            })
            .unwrap_or_default()
    } else {
        let tr = &trellis_db::parse_spec(db, file).file;
        tr.frontmatter_location.name_value.unwrap_or_default()
    };
    let commands = row.fix.as_deref().and_then(runnable);
    vec![Lens {
        range,
        row,
        commands,
    }]
}

/// `trellis adopt m::f && trellis test m::f` → `[["adopt", "m::f"], ["test",
/// "m::f"]]`: the host runs the binary itself. `None` unless every step is a
/// `trellis` command.
pub fn runnable(fix: &str) -> Option<Vec<Vec<String>>> {
    fix.split(" && ")
        .map(|step| {
            let words: Vec<String> = step.split_whitespace().map(str::to_owned).collect();
            (words.len() > 1 && words[0] == "trellis").then(|| words[1..].to_vec())
        })
        .collect()
}
