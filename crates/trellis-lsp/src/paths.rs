//! Editor documents by URI, root files by root-relative path: the mapping between
//! the two, and which of a root's paths the database checks. Only `file:` URIs
//! name files; the server never touches the file system to resolve one (the host
//! handed it the root's canonical path, and a document outside it is checked for
//! its syntax alone).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::Uri;

/// The absolute path a `file:` URI names, percent-decoded.
pub fn path_of(uri: &Uri) -> Option<PathBuf> {
    let text = uri.as_str();
    let rest = text.strip_prefix("file://")?;
    // `file://localhost/x` and `file:///x` both name `/x`.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%'
            && let Some(byte) = bytes
                .get(at + 1..at + 3)
                .and_then(|hex| std::str::from_utf8(hex).ok())
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            decoded.push(byte);
            at += 3;
            continue;
        }
        decoded.push(bytes[at]);
        at += 1;
    }
    String::from_utf8(decoded).ok().map(PathBuf::from)
}

/// The `file:` URI of an absolute path, percent-encoding what a URI path cannot hold.
pub fn uri_of(path: &Path) -> Uri {
    let mut text = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        let keep = byte.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&byte);
        if keep {
            text.push(byte as char);
        } else {
            text.push_str(&format!("%{byte:02X}"));
        }
    }
    Uri::from_str(&text).unwrap_or_else(|_| Uri::from_str("file:///").expect("a valid URI"))
}

/// A path's root-relative, `/`-separated text, when it lies inside `root` (and
/// not inside a directory the root walk skips: hidden ones, build output).
pub fn relative(root: &Path, path: &Path) -> Option<String> {
    let inside = path.strip_prefix(root).ok()?;
    let parts: Vec<&str> = inside
        .components()
        .map(|component| component.as_os_str().to_str())
        .collect::<Option<_>>()?;
    let (file, dirs) = parts.split_last()?;
    let skipped = |dir: &&str| dir.starts_with('.') || matches!(*dir, "target" | "__pycache__");
    if dirs.iter().any(skipped) || file.is_empty() {
        return None;
    }
    Some(parts.join("/"))
}

/// Whether the database checks a root-relative path: `soil.toml`, `_project.tr`
/// and its lock, and the `.tr`, `.soil` and `.lock` files of a module directory.
/// Anything else inside the root is, for checking, outside it.
pub fn is_checked(relative: &str) -> bool {
    let parts: Vec<&str> = relative.split('/').collect();
    match parts.as_slice() {
        ["soil.toml"] | ["_project.tr"] | ["_project.lock"] => true,
        [_, file] => [".tr", ".soil", ".lock"]
            .iter()
            .any(|ext| file.ends_with(ext) && file.len() > ext.len()),
        _ => false,
    }
}

/// The module a root-relative path belongs to (`csvstats/median.tr` → `csvstats`).
pub fn module_of(relative: &str) -> Option<&str> {
    match relative.split_once('/') {
        Some((module, rest)) if !rest.contains('/') => Some(module),
        _ => None,
    }
}

/// A file's stem (`csvstats/median.tr` → `median`).
pub fn stem_of(relative: &str) -> &str {
    let file = relative.rsplit('/').next().unwrap_or(relative);
    file.rsplit_once('.').map_or(file, |(stem, _)| stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_through_percent_encoding() {
        let path = Path::new("/tmp/a root/ç#1/median.tr");
        let uri = uri_of(path);
        assert_eq!(uri.as_str(), "file:///tmp/a%20root/%C3%A7%231/median.tr");
        assert_eq!(path_of(&uri).as_deref(), Some(path));
        let other = Uri::from_str("file://localhost/x/y.soil").unwrap();
        assert_eq!(path_of(&other), Some(PathBuf::from("/x/y.soil")));
        assert_eq!(
            path_of(&Uri::from_str("untitled:Untitled-1").unwrap()),
            None
        );
    }

    #[test]
    fn relative_paths_and_what_is_checked() {
        let root = Path::new("/r");
        assert_eq!(
            relative(root, Path::new("/r/m/f.soil")).as_deref(),
            Some("m/f.soil")
        );
        assert_eq!(relative(root, Path::new("/r/.trellis/x.tr")), None);
        assert_eq!(relative(root, Path::new("/elsewhere/f.soil")), None);
        assert!(is_checked("m/f.soil") && is_checked("soil.toml") && is_checked("_project.tr"));
        assert!(!is_checked("m/sub/f.soil") && !is_checked("notes.tr") && !is_checked("m/f.py"));
        assert_eq!((module_of("m/f.tr"), stem_of("m/f.tr")), (Some("m"), "f"));
    }
}
