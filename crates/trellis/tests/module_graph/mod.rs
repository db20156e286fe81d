//! The module graph of one crate, read from its sources, for the tidy check
//! that no module of a named crate imports itself round a circle (design §2.2).
//!
//! An edge `a → b` is a path in `a` that names `b` by `crate::…` (in a `use` or
//! in code) or by `super::…`; the path resolves to the longest module prefix it
//! names, so `crate::service::Service` is an edge to `service`. A parent naming
//! its own child by a relative path (`jobs::handle` in `service`) is no edge:
//! that is how a parent hands out its work, and the child's `super::` is the
//! edge that counts. Code under `#[cfg(test)]` is left out — a test module is
//! imported by nothing, so it closes no circle. Comments and string literals
//! are stripped first, so a doc naming `crate::x` is no edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module inside its crate: `[]` is the crate root, `["service", "jobs"]`
/// is `crate::service::jobs`.
pub type ModulePath = Vec<String>;

/// Which modules each module names through `crate::` and `super::` paths.
#[derive(Debug, Default)]
pub struct ModuleGraph {
    pub edges: BTreeMap<ModulePath, BTreeSet<ModulePath>>,
}

/// Modules that reach each other through their imports.
#[derive(Debug)]
pub struct Circle {
    pub members: BTreeSet<ModulePath>,
    /// One circle through some of them, its first module repeated at the end.
    pub example: Vec<ModulePath>,
}

impl std::fmt::Display for Circle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = |modules: &mut dyn Iterator<Item = &ModulePath>| {
            modules.map(|module| display(module)).collect::<Vec<_>>()
        };
        write!(f, "{}", names(&mut self.example.iter()).join(" -> "))?;
        if self.members.len() + 1 > self.example.len() {
            write!(
                f,
                " (and round the whole group: {})",
                names(&mut self.members.iter()).join(", ")
            )?;
        }
        Ok(())
    }
}

/// `crate` for the root, else the path below it: `service::jobs`.
pub fn display(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_owned()
    } else {
        module.join("::")
    }
}

impl ModuleGraph {
    /// The graph of the library crate under `src` (`lib.rs` and the files
    /// below it; `main.rs` and `bin/` are crates of their own).
    pub fn of_crate(src: &Path) -> ModuleGraph {
        let mut files = Vec::new();
        collect(src, src, &mut files);
        let texts: Vec<(ModulePath, &str)> = files
            .iter()
            .map(|(module, text)| (module.clone(), text.as_str()))
            .collect();
        ModuleGraph::of_files(&texts)
    }

    /// The graph of a crate given as its files' module paths and texts.
    pub fn of_files(files: &[(ModulePath, &str)]) -> ModuleGraph {
        let mut modules: BTreeSet<ModulePath> = BTreeSet::from([Vec::new()]);
        let mut named = Vec::new();
        for (module, text) in files {
            modules.insert(module.clone());
            let tokens = tokens(text);
            let mut reader = Reader {
                tokens: &tokens,
                at: 0,
                modules: &mut modules,
                named: &mut named,
            };
            reader.items(module.clone());
        }
        let mut graph = ModuleGraph::default();
        for module in &modules {
            graph.edges.entry(module.clone()).or_default();
        }
        for (from, path) in named {
            let Some(absolute) = absolute(&from, &path) else {
                continue;
            };
            let to = (0..=absolute.len())
                .rev()
                .map(|n| absolute[..n].to_vec())
                .find(|prefix| modules.contains(prefix))
                .unwrap_or_default();
            if to != from {
                graph.edges.entry(from).or_default().insert(to);
            }
        }
        graph
    }

    /// The graph of the crate's top-level modules, each standing for its
    /// whole subtree (`service::jobs -> lowering::order` is `service ->
    /// lowering`): a circle here is two directories importing each other even
    /// where no two of their files do.
    pub fn top_level(&self) -> ModuleGraph {
        let top = |module: &ModulePath| module.iter().take(1).cloned().collect::<ModulePath>();
        let mut graph = ModuleGraph::default();
        for (from, targets) in &self.edges {
            let edges = graph.edges.entry(top(from)).or_default();
            edges.extend(targets.iter().map(top).filter(|to| *to != top(from)));
        }
        graph
    }

    /// Each group of modules that reach each other round a circle: its
    /// members, and one circle through them written from its first member
    /// back to it; empty when there is none.
    pub fn circles(&self) -> Vec<Circle> {
        let mut circles = Vec::new();
        let mut seen: BTreeSet<&ModulePath> = BTreeSet::new();
        for start in self.edges.keys() {
            if seen.contains(start) {
                continue;
            }
            let Some(example) = self.path(start, start) else {
                continue;
            };
            let members: BTreeSet<ModulePath> = self
                .edges
                .keys()
                .filter(|module| {
                    *module == start
                        || (self.path(start, module).is_some()
                            && self.path(module, start).is_some())
                })
                .cloned()
                .collect();
            seen.extend(self.edges.keys().filter(|module| members.contains(*module)));
            circles.push(Circle { members, example });
        }
        circles
    }

    /// A shortest path of edges from `from` to `to` (at least one edge), both
    /// ends included.
    fn path(&self, from: &ModulePath, to: &ModulePath) -> Option<Vec<ModulePath>> {
        let mut came_from: BTreeMap<&ModulePath, &ModulePath> = BTreeMap::new();
        let mut frontier = vec![from];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for module in frontier {
                for target in self.edges.get(module).into_iter().flatten() {
                    if target == to {
                        let mut path = vec![to.clone(), module.clone()];
                        let mut at = module;
                        while at != from {
                            at = came_from[at];
                            path.push(at.clone());
                        }
                        path.reverse();
                        return Some(path);
                    }
                    if target != from && !came_from.contains_key(target) {
                        came_from.insert(target, module);
                        next.push(target);
                    }
                }
            }
            frontier = next;
        }
        None
    }
}

/// Every `.rs` file under `dir` with its module path (`src` is `root`).
fn collect(root: &Path, dir: &Path, out: &mut Vec<(ModulePath, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()))
        .flatten()
        .map(|entry| entry.path())
        .collect();
    entries.sort();
    for path in entries {
        let relative = path.strip_prefix(root).expect("under src");
        if relative == Path::new("main.rs") || relative.starts_with("bin") {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, out);
            continue;
        }
        if path.extension().is_none_or(|extension| extension != "rs") {
            continue;
        }
        let mut module: ModulePath = relative
            .with_extension("")
            .components()
            .map(|part| part.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(module.last().map(String::as_str), Some("lib" | "mod")) {
            module.pop();
        }
        let text = std::fs::read_to_string(&path).expect("a readable source file");
        out.push((module, text));
    }
}

/// `path` (starting `crate` or `super`) as a path from the crate root, seen
/// from `from`; `None` when it climbs above the root.
fn absolute(from: &[String], path: &[String]) -> Option<ModulePath> {
    match path.first().map(String::as_str) {
        Some("crate") => Some(path[1..].to_vec()),
        Some("super") => {
            let climbs = path.iter().take_while(|part| *part == "super").count();
            let base = from.len().checked_sub(climbs)?;
            let mut out = from[..base].to_vec();
            out.extend(path[climbs..].iter().cloned());
            Some(out)
        }
        _ => None,
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
}

/// The tokens of a Rust source that matter to paths and nesting: identifiers,
/// `::` and punctuation; comments, strings, characters, lifetimes and
/// whitespace are dropped.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(end) = raw_string_end(&chars, i) {
            i = end;
        } else if c == '"' || (c == 'b' && at(i + 1) == '"') {
            i += if c == 'b' { 2 } else { 1 };
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == '\'' {
            // A character literal ('a', '\n', '\u{..}'), else a lifetime.
            if at(i + 1) == '\\' {
                // The backslash and the character it escapes (which may be `'`).
                i += 3;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_alphanumeric() || c == '_' {
            if c == 'r' && at(i + 1) == '#' {
                i += 2;
            }
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else if c == ':' && at(i + 1) == ':' {
            out.push(Token::PathSep);
            i += 2;
        } else {
            out.push(Token::Punct(c));
            i += 1;
        }
    }
    out
}

/// Where a raw string starting at `i` (`r"…"`, `r#"…"#`, `br"…"`) ends.
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|c| **c == '#').count();
    j += hashes;
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"'
            && chars[j + 1..]
                .iter()
                .take(hashes)
                .filter(|c| **c == '#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
}

/// Walks one file's tokens, noting inline modules and every `crate::` and
/// `super::` path with the module it is written in.
struct Reader<'t, 'o> {
    tokens: &'t [Token],
    at: usize,
    modules: &'o mut BTreeSet<ModulePath>,
    named: &'o mut Vec<(ModulePath, ModulePath)>,
}

impl<'t> Reader<'t, '_> {
    fn peek(&self, ahead: usize) -> Option<&'t Token> {
        self.tokens.get(self.at + ahead)
    }

    fn is(&self, ahead: usize, word: &str) -> bool {
        matches!(self.peek(ahead), Some(Token::Ident(ident)) if ident == word)
    }

    fn is_punct(&self, ahead: usize, c: char) -> bool {
        self.peek(ahead) == Some(&Token::Punct(c))
    }

    /// Reads items in `module` until its closing brace (or the end of the file).
    fn items(&mut self, module: ModulePath) {
        while let Some(token) = self.peek(0).cloned() {
            match token {
                Token::Punct('}') => {
                    self.at += 1;
                    return;
                }
                Token::Punct('{') => {
                    self.at += 1;
                    self.items(module.clone());
                }
                Token::Punct('#') if self.is_test_attribute() => self.skip_item(),
                Token::Ident(word) if word == "mod" => {
                    let name = match self.peek(1) {
                        Some(Token::Ident(name)) if self.is_punct(2, '{') => name.clone(),
                        _ => {
                            self.at += 1;
                            continue;
                        }
                    };
                    self.at += 3;
                    let mut inner = module.clone();
                    inner.push(name);
                    self.modules.insert(inner.clone());
                    self.items(inner);
                }
                Token::Ident(word) if word == "use" => {
                    self.at += 1;
                    let mut paths = Vec::new();
                    self.use_tree(Vec::new(), &mut paths);
                    for path in paths {
                        self.name(&module, path);
                    }
                }
                Token::Ident(word)
                    if (word == "crate" || word == "super")
                        && self.peek(1) == Some(&Token::PathSep)
                        && (self.at == 0 || self.tokens[self.at - 1] != Token::PathSep) =>
                {
                    let path = self.path();
                    self.name(&module, path);
                }
                _ => self.at += 1,
            }
        }
    }

    fn name(&mut self, module: &ModulePath, path: ModulePath) {
        if matches!(path.first().map(String::as_str), Some("crate" | "super")) {
            self.named.push((module.clone(), path));
        }
    }

    /// `#[cfg(test)]`, exactly.
    fn is_test_attribute(&self) -> bool {
        let expected = [
            Token::Punct('#'),
            Token::Punct('['),
            Token::Ident("cfg".to_owned()),
            Token::Punct('('),
            Token::Ident("test".to_owned()),
            Token::Punct(')'),
            Token::Punct(']'),
        ];
        self.tokens[self.at..].starts_with(&expected)
    }

    /// Skips the attributes at the cursor and the item they are on: up to its
    /// `;`, or its closing brace, whichever ends it.
    fn skip_item(&mut self) {
        while self.is_punct(0, '#') && self.is_punct(1, '[') {
            self.at += 1;
            self.skip_balanced();
        }
        let mut depth = 0usize;
        while let Some(token) = self.peek(0) {
            self.at += 1;
            match token {
                Token::Punct('(' | '[' | '{') => depth += 1,
                Token::Punct(')' | ']') => depth = depth.saturating_sub(1),
                Token::Punct('}') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        if self.is_punct(0, ';') {
                            self.at += 1;
                        }
                        return;
                    }
                }
                Token::Punct(';') if depth == 0 => return,
                _ => {}
            }
        }
    }

    /// Skips one bracketed group starting at the cursor.
    fn skip_balanced(&mut self) {
        let mut depth = 0usize;
        while let Some(token) = self.peek(0) {
            self.at += 1;
            match token {
                Token::Punct('(' | '[' | '{') => depth += 1,
                Token::Punct(')' | ']' | '}') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// `seg::seg::…` from the cursor, stopping before anything that is not a
    /// segment (`{`, `*`, `<`).
    fn path(&mut self) -> ModulePath {
        let mut path = Vec::new();
        while let Some(Token::Ident(segment)) = self.peek(0) {
            path.push(segment.clone());
            self.at += 1;
            match (self.peek(0), self.peek(1)) {
                (Some(Token::PathSep), Some(Token::Ident(_))) => self.at += 1,
                _ => break,
            }
        }
        path
    }

    /// One use tree after `prefix`, each of its paths pushed to `out` (a glob
    /// or `self` names its prefix; `as` renames nothing that matters here).
    fn use_tree(&mut self, prefix: ModulePath, out: &mut Vec<ModulePath>) {
        if self.peek(0) == Some(&Token::PathSep) {
            self.at += 1;
        }
        let mut path = prefix;
        path.extend(self.path().into_iter().filter(|segment| segment != "self"));
        if self.peek(0) == Some(&Token::PathSep) {
            self.at += 1;
        }
        match self.peek(0) {
            Some(Token::Punct('{')) => {
                self.at += 1;
                loop {
                    match self.peek(0) {
                        None => return,
                        Some(Token::Punct('}')) => {
                            self.at += 1;
                            break;
                        }
                        Some(Token::Punct(',')) => self.at += 1,
                        Some(_) => self.use_tree(path.clone(), out),
                    }
                }
            }
            Some(Token::Punct('*')) => {
                self.at += 1;
                out.push(path);
            }
            _ => {
                if self.is(0, "as") {
                    self.at += 2;
                }
                out.push(path);
            }
        }
    }
}
