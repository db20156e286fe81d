//! `read_context` over a packed bundle (trellis-daemon §3.1): a file's content,
//! or a directory's sorted entries with directories suffixed `/`. The bundle
//! is served from memory — the same files a host writes — so what the agent
//! reads cannot drift from what `trellis context` shows. A path that leaves the
//! bundle is `bundle-path`; one that names nothing in it is `bundle-not-found`.

use std::collections::BTreeSet;

use trellis_diag::Diagnostic;

use crate::bundle::ContextBundle;
use crate::packer::check_bundle_path;

/// What a path names inside a bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    File { content: String },
    Dir { entries: Vec<String> },
}

/// Reads `path` in `bundle`. The bundle's root is `""` or `"."`; a trailing `/`
/// on a directory is accepted.
pub fn read_context(bundle: &ContextBundle, path: &str) -> Result<Entry, Diagnostic> {
    let path = path.strip_suffix('/').unwrap_or(path);
    let prefix = if path.is_empty() || path == "." {
        String::new()
    } else {
        check_bundle_path(path)?;
        if let Some(file) = bundle.files.iter().find(|file| file.path == path) {
            return Ok(Entry::File {
                content: file.text.to_string(),
            });
        }
        format!("{path}/")
    };
    let entries: BTreeSet<String> = bundle
        .files
        .iter()
        .filter_map(|file| file.path.strip_prefix(&prefix))
        .map(|rest| match rest.split_once('/') {
            Some((dir, _)) => format!("{dir}/"),
            None => rest.to_owned(),
        })
        .collect();
    if entries.is_empty() {
        // The signature directories are absent when nothing belongs in them:
        // say why, so an agent does not take it for a broken bundle.
        let why = match path {
            "callees" => {
                ": no definition this one uses is known (its spec names none and it has no \
                 Soil yet), or none fit the budget; `callable/` holds what it may call"
            }
            "callable" => ": nothing else is callable from here, or it did not fit the budget",
            _ => "",
        };
        return Err(Diagnostic::new(
            "bundle-not-found",
            format!("nothing named `{path}` in the context bundle{why}"),
        ));
    }
    Ok(Entry::Dir {
        entries: entries.into_iter().collect(),
    })
}
