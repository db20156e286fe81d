//! The validating reader (lock-schema §1.5): text → spanned JSON → model, field
//! by field, then the §8 invariants. Every diagnostic carries a code and the
//! line:column of the field it is about.

use std::collections::BTreeMap;

use trellis_diag::{Diagnostic, LineIndex, TextRange};
use trellis_hash::Digest;

use crate::codes::Code;
use crate::invariants::{Seg, violations};
use crate::json::{self, Member, Node, Value};
use crate::model::*;
use crate::vocab::{self, Word};

/// Reads one sidecar lock. Refuses newer formats, unknown or missing fields,
/// malformed values and broken invariants.
pub fn read_lock(text: &str) -> Result<Lock, Vec<Diagnostic>> {
    let mut reader = Reader::new(text);
    let lock = reader.document(|r, root| {
        let lock = r.lock(root)?;
        r.invariants(root, &lock);
        Some(lock)
    });
    reader.finish(lock)
}

/// Reads `soil.lock`, validating every embedded definition lock as well.
pub fn read_soil_lock(text: &str) -> Result<SoilLock, Vec<Diagnostic>> {
    let mut reader = Reader::new(text);
    let soil_lock = reader.document(|r, root| r.soil_lock(root));
    reader.finish(soil_lock)
}

/// Reads bytes from disk: invalid UTF-8 is a `lock-syntax` error at the first
/// bad byte.
pub fn read_lock_bytes(bytes: &[u8]) -> Result<Lock, Vec<Diagnostic>> {
    match std::str::from_utf8(bytes) {
        Ok(text) => read_lock(text),
        Err(error) => {
            let valid = &bytes[..error.valid_up_to()];
            let prefix = std::str::from_utf8(valid).unwrap_or("");
            let at = LineIndex::new(prefix).position(prefix, prefix.len() as u32);
            let span = trellis_diag::Span { start: at, end: at };
            Err(vec![
                Code::Syntax
                    .diagnostic("a lock is UTF-8, and this file is not")
                    .with_span(span),
            ])
        }
    }
}

struct Reader<'t> {
    text: &'t str,
    /// Built at the first diagnostic: a cold load reads 23,000 locks that
    /// have none (design §7.15).
    index: std::cell::OnceCell<LineIndex>,
    diagnostics: Vec<Diagnostic>,
}

/// The members of one object, matched against its schema's keys.
struct Fields<'n> {
    found: Vec<(&'static str, &'n Node<'n>)>,
}

impl<'n> Fields<'n> {
    fn get(&self, key: &str) -> Option<&'n Node<'n>> {
        self.found.iter().find(|(k, _)| *k == key).map(|(_, n)| *n)
    }
}

impl<'t> Reader<'t> {
    fn new(text: &'t str) -> Self {
        Self {
            text,
            index: std::cell::OnceCell::new(),
            diagnostics: Vec::new(),
        }
    }

    fn finish<T>(self, value: Option<T>) -> Result<T, Vec<Diagnostic>> {
        match value {
            Some(value) if self.diagnostics.is_empty() => Ok(value),
            _ => Err(self.diagnostics),
        }
    }

    fn report(&mut self, code: Code, message: impl Into<String>, range: TextRange) {
        let index = self.index.get_or_init(|| LineIndex::new(self.text));
        let span = index.span(self.text, range);
        self.diagnostics
            .push(code.diagnostic(message).with_span(span));
    }

    /// Parses the text and checks `lock_format` before anything else: a newer
    /// format may mean different fields, so nothing else is worth saying.
    fn document<T>(&mut self, read: impl FnOnce(&mut Self, &Node) -> Option<T>) -> Option<T> {
        let root = match json::parse(self.text) {
            Ok(root) => root,
            Err(error) => {
                self.report(Code::Syntax, error.message, error.at);
                return None;
            }
        };
        if !self.format_supported(&root) {
            return None;
        }
        read(self, &root)
    }

    fn format_supported(&mut self, root: &Node) -> bool {
        let Value::Object(members) = &root.value else {
            self.report(
                Code::BadType,
                format!("a lock is a JSON object, not {}", root.value.type_name()),
                root.range,
            );
            return false;
        };
        let Some(member) = members.iter().find(|m| m.key == "lock_format") else {
            // Reported with the other missing fields.
            return true;
        };
        let node = &member.value;
        let Value::Number(text) = &node.value else {
            return true;
        };
        let all_digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
        let newer = all_digits && text.parse::<u64>().map_or(true, |n| n > LOCK_FORMAT);
        if newer {
            self.report(
                Code::FormatNewer,
                format!(
                    "this lock was written with lock_format {text}; this toolchain reads \
                     lock_format {LOCK_FORMAT} — upgrade trellis rather than let it misread the lock"
                ),
                node.range,
            );
            return false;
        }
        true
    }

    /// Matches an object's members to `keys`: unknown, duplicate and missing
    /// keys are reported; the rest are handed back for field-by-field reading.
    fn fields<'n>(
        &mut self,
        node: &'n Node,
        keys: &[&'static str],
        what: &str,
    ) -> Option<Fields<'n>> {
        let Value::Object(members) = &node.value else {
            self.report(
                Code::BadType,
                format!("`{what}` is an object, not {}", node.value.type_name()),
                node.range,
            );
            return None;
        };
        let mut found: Vec<(&'static str, &'n Node)> = Vec::new();
        for Member {
            key,
            key_range,
            value,
        } in members
        {
            match keys.iter().find(|k| **k == key) {
                None => self.report(
                    Code::UnknownField,
                    format!(
                        "`{what}` has no field `{key}`; its fields are {}",
                        keys.join(", ")
                    ),
                    *key_range,
                ),
                Some(k) if found.iter().any(|(f, _)| f == k) => self.report(
                    Code::DuplicateKey,
                    format!("`{key}` appears twice in `{what}`"),
                    *key_range,
                ),
                Some(k) => found.push((k, value)),
            }
        }
        for key in keys {
            if !found.iter().any(|(f, _)| f == key) {
                self.report(
                    Code::MissingField,
                    format!("`{what}` is missing its `{key}` field"),
                    TextRange::new(node.range.start, node.range.start + 1),
                );
            }
        }
        Some(Fields { found })
    }

    fn string(&mut self, node: Option<&Node>) -> Option<String> {
        self.borrowed_string(node).map(str::to_owned)
    }

    /// A string value, borrowed: a digest or a vocabulary word is read from
    /// it and the text is not kept (seven digests and a few words in each of
    /// 23,000 locks at 20,000 definitions).
    fn borrowed_string<'n>(&mut self, node: Option<&'n Node>) -> Option<&'n str> {
        let node = node?;
        match &node.value {
            Value::String(s) => Some(s),
            other => {
                self.report(
                    Code::BadType,
                    format!("expected a string, found {}", other.type_name()),
                    node.range,
                );
                None
            }
        }
    }

    fn boolean(&mut self, node: Option<&Node>) -> Option<bool> {
        let node = node?;
        match &node.value {
            Value::Bool(b) => Some(*b),
            other => {
                self.report(
                    Code::BadType,
                    format!("expected true or false, found {}", other.type_name()),
                    node.range,
                );
                None
            }
        }
    }

    fn digest(&mut self, node: Option<&Node>) -> Option<Digest> {
        let text = self.borrowed_string(node)?;
        match Digest::parse(text) {
            Ok(digest) => Some(digest),
            Err(error) => {
                self.report(Code::BadHash, error.0, node?.range);
                None
            }
        }
    }

    fn word<W: Word>(&mut self, node: Option<&Node>) -> Option<W> {
        let text = self.borrowed_string(node)?;
        let word = W::from_word(text);
        if word.is_none() {
            self.report(
                Code::BadValue,
                format!("`{text}` is not one of {}", W::expected()),
                node?.range,
            );
        }
        word
    }

    fn nullable<T>(
        &mut self,
        node: Option<&Node>,
        read: impl FnOnce(&mut Self, &Node) -> Option<T>,
    ) -> Option<Option<T>> {
        let node = node?;
        match node.value {
            Value::Null => Some(None),
            _ => read(self, node).map(Some),
        }
    }

    fn array<T>(
        &mut self,
        node: Option<&Node>,
        mut read: impl FnMut(&mut Self, &Node) -> Option<T>,
    ) -> Option<Vec<T>> {
        let node = node?;
        let Value::Array(items) = &node.value else {
            self.report(
                Code::BadType,
                format!("expected an array, found {}", node.value.type_name()),
                node.range,
            );
            return None;
        };
        let read: Vec<Option<T>> = items.iter().map(|item| read(self, item)).collect();
        read.into_iter().collect()
    }

    fn strings(&mut self, node: Option<&Node>) -> Option<Vec<String>> {
        self.array(node, |r, n| r.string(Some(n)))
    }

    /// A JSON object used as a map with free keys; `key_ok` vets each key.
    fn map<T>(
        &mut self,
        node: Option<&Node>,
        key_ok: impl Fn(&str) -> Result<(), String>,
        mut read: impl FnMut(&mut Self, &Node) -> Option<T>,
    ) -> Option<BTreeMap<String, T>> {
        let node = node?;
        let Value::Object(members) = &node.value else {
            self.report(
                Code::BadType,
                format!("expected an object, found {}", node.value.type_name()),
                node.range,
            );
            return None;
        };
        let mut map = BTreeMap::new();
        let mut complete = true;
        for member in members {
            if let Err(message) = key_ok(&member.key) {
                self.report(Code::BadValue, message, member.key_range);
                complete = false;
                continue;
            }
            if map.contains_key(&*member.key) {
                self.report(
                    Code::DuplicateKey,
                    format!("`{}` appears twice", member.key),
                    member.key_range,
                );
                complete = false;
                continue;
            }
            match read(self, &member.value) {
                Some(value) => {
                    map.insert(member.key.to_string(), value);
                }
                None => complete = false,
            }
        }
        complete.then_some(map)
    }

    fn lock(&mut self, root: &Node) -> Option<Lock> {
        let Value::Object(members) = &root.value else {
            return None;
        };
        let Some(kind_member) = members.iter().find(|m| m.key == "kind") else {
            self.report(
                Code::MissingField,
                "a lock is missing its `kind` field",
                TextRange::new(root.range.start, root.range.start + 1),
            );
            return None;
        };
        let kind: Kind = self.word(Some(&kind_member.value))?;
        let format = declared_format(root);
        let keys = match kind {
            Kind::Function if format == 1 => vocab::FUNCTION_KEYS_V1,
            Kind::Function => vocab::FUNCTION_KEYS,
            Kind::Type => vocab::TYPE_KEYS,
            Kind::Module => vocab::MODULE_KEYS,
            Kind::Project => vocab::PROJECT_KEYS,
        };
        let f = self.fields(root, keys, "lock")?;
        self.lock_format(f.get("lock_format"));
        let name = self.string(f.get("name"));
        let toolchain = self.toolchain(f.get("toolchain"));
        let spec = self.spec(f.get("spec"));
        let lock = match kind {
            Kind::Function => {
                let lowering = self.nullable(f.get("lowering"), |r, n| r.lowering(n));
                let checks = self.nullable(f.get("checks"), |r, n| r.checks(n));
                let results_key = match format {
                    1 => Some(None),
                    _ => self.nullable(f.get("results_key"), |r, n| r.digest(Some(n))),
                };
                let tests = self.tests(f.get("tests"));
                let oracles = self.array(f.get("oracles"), |r, n| r.oracle(n));
                let accepted = self.boolean(f.get("accepted"));
                Lock::Function(DefinitionLock {
                    name: name?,
                    toolchain: toolchain?,
                    spec: spec?,
                    lowering: lowering?,
                    checks: checks?,
                    results_key: results_key?,
                    tests: tests?,
                    oracles: oracles?,
                    accepted: accepted?,
                })
            }
            Kind::Type => {
                let checks = self.nullable(f.get("checks"), |r, n| r.type_checks(n));
                let cycle_hash = self.nullable(f.get("cycle_hash"), |r, n| r.digest(Some(n)));
                let tests = self.tests(f.get("tests"));
                let accepted = self.boolean(f.get("accepted"));
                Lock::Type(TypeLock {
                    name: name?,
                    toolchain: toolchain?,
                    spec: spec?,
                    checks: checks?,
                    cycle_hash: cycle_hash?,
                    tests: tests?,
                    accepted: accepted?,
                })
            }
            Kind::Module => {
                let exports = self.strings(f.get("exports"));
                let decisions = self.decisions(f.get("decisions"));
                let accepted = self.boolean(f.get("accepted"));
                Lock::Module(ModuleLock {
                    name: name?,
                    toolchain: toolchain?,
                    spec: spec?,
                    exports: exports?,
                    decisions: decisions?,
                    accepted: accepted?,
                })
            }
            Kind::Project => {
                let decisions = self.decisions(f.get("decisions"));
                let accepted = self.boolean(f.get("accepted"));
                Lock::Project(ProjectLock {
                    name: name?,
                    toolchain: toolchain?,
                    spec: spec?,
                    decisions: decisions?,
                    accepted: accepted?,
                })
            }
        };
        Some(lock)
    }

    /// `lock_format` below the current one (there is none older than 1) or not
    /// an integer is a bad value; newer was refused up front.
    fn lock_format(&mut self, node: Option<&Node>) -> Option<u64> {
        let node = node?;
        let Value::Number(text) = &node.value else {
            self.report(
                Code::BadType,
                format!(
                    "`lock_format` is an integer, not {}",
                    node.value.type_name()
                ),
                node.range,
            );
            return None;
        };
        match text.parse::<u64>() {
            Ok(format) if (OLDEST_LOCK_FORMAT..=LOCK_FORMAT).contains(&format) => Some(format),
            _ => {
                self.report(
                    Code::BadValue,
                    format!(
                        "`lock_format` {text} is not a format this toolchain knows \
                         ({OLDEST_LOCK_FORMAT} to {LOCK_FORMAT})"
                    ),
                    node.range,
                );
                None
            }
        }
    }

    fn toolchain(&mut self, node: Option<&Node>) -> Option<Toolchain> {
        let f = self.fields(node?, vocab::TOOLCHAIN_KEYS, "toolchain")?;
        let trellis = self.string(f.get("trellis"));
        let soil0_cli = self.string(f.get("soil0_cli"));
        Some(Toolchain {
            trellis: trellis?,
            soil0_cli: soil0_cli?,
        })
    }

    fn spec(&mut self, node: Option<&Node>) -> Option<SpecRecord> {
        let f = self.fields(node?, vocab::SPEC_KEYS, "spec")?;
        let hashes = self.hashes(f.get("hashes"));
        let blocks = self.array(f.get("blocks"), |r, n| {
            let f = r.fields(n, vocab::BLOCK_KEYS, "blocks[]")?;
            let block = r.string(f.get("block"));
            let author = r.word(f.get("author"));
            Some(BlockAuthor {
                block: block?,
                author: author?,
            })
        });
        let pinned = self.boolean(f.get("pinned"));
        let allow = self.strings(f.get("allow"));
        Some(SpecRecord {
            hashes: hashes?,
            blocks: blocks?,
            pinned: pinned?,
            allow: allow?,
        })
    }

    fn hashes(&mut self, node: Option<&Node>) -> Option<SpecHashes> {
        let f = self.fields(node?, vocab::HASHES_KEYS, "hashes")?;
        let formal = self.digest(f.get("formal"));
        let test = self.digest(f.get("test"));
        let prose = self.digest(f.get("prose"));
        Some(SpecHashes {
            formal: formal?,
            test: test?,
            prose: prose?,
        })
    }

    fn edge(&mut self, node: &Node) -> Option<Edge> {
        let f = self.fields(node, vocab::EDGE_KEYS, "edge")?;
        let name = self.string(f.get("name"));
        let hash = self.digest(f.get("hash"));
        Some(Edge {
            name: name?,
            hash: hash?,
        })
    }

    fn lowering(&mut self, node: &Node) -> Option<Lowering> {
        let f = self.fields(node, vocab::LOWERING_KEYS, "lowering")?;
        let provenance = self.word(f.get("provenance"));
        let provider = self.nullable(f.get("provider"), |r, n| r.string(Some(n)));
        let model = self.nullable(f.get("model"), |r, n| r.string(Some(n)));
        let soil_hash = self.digest(f.get("soil_hash"));
        let calls = self.array(f.get("calls"), |r, n| r.edge(n));
        let private_helpers = self.array(f.get("private_helpers"), |r, n| r.edge(n));
        let decisions = self.applied(f.get("decisions"));
        Some(Lowering {
            provenance: provenance?,
            provider: provider?,
            model: model?,
            soil_hash: soil_hash?,
            calls: calls?,
            private_helpers: private_helpers?,
            decisions: decisions?,
        })
    }

    fn applied(&mut self, node: Option<&Node>) -> Option<AppliedDecisions> {
        let f = self.fields(node?, vocab::APPLIED_KEYS, "decisions")?;
        let project_scope_hash = self.digest(f.get("project_scope_hash"));
        let module_scope_hash = self.digest(f.get("module_scope_hash"));
        let applied = self.array(f.get("applied"), |r, n| {
            let f = r.fields(n, vocab::DECISION_EDGE_KEYS, "applied[]")?;
            let scope = r.word(f.get("scope"));
            let label = r.string(f.get("label"));
            let hash = r.digest(f.get("hash"));
            Some(DecisionEdge {
                scope: scope?,
                label: label?,
                hash: hash?,
            })
        });
        Some(AppliedDecisions {
            project_scope_hash: project_scope_hash?,
            module_scope_hash: module_scope_hash?,
            applied: applied?,
        })
    }

    fn checks(&mut self, node: &Node) -> Option<Checks> {
        let f = self.fields(node, vocab::CHECKS_KEYS, "checks")?;
        let signature = self.word(f.get("signature"));
        let row = self.word(f.get("row"));
        let clauses = self.map(
            f.get("clauses"),
            |key| clause_key(key, &["requires", "ensures"]),
            |r, n| r.word(Some(n)),
        );
        let termination = self.word(f.get("termination"));
        let holes = self.strings(f.get("holes"));
        Some(Checks {
            signature: signature?,
            row: row?,
            clauses: clauses?,
            termination: termination?,
            holes: holes?,
        })
    }

    fn type_checks(&mut self, node: &Node) -> Option<TypeChecks> {
        let f = self.fields(node, vocab::TYPE_CHECKS_KEYS, "checks")?;
        let declaration = self.word(f.get("declaration"));
        let invariants = self.map(
            f.get("invariants"),
            |key| clause_key(key, &["invariant"]),
            |r, n| r.word(Some(n)),
        );
        Some(TypeChecks {
            declaration: declaration?,
            invariants: invariants?,
        })
    }

    fn tests(&mut self, node: Option<&Node>) -> Option<Vec<TestRow>> {
        self.array(node, |r, n| {
            let f = r.fields(n, vocab::TEST_KEYS, "tests[]")?;
            let name = r.string(f.get("name"));
            let tier = r.word(f.get("tier"));
            let mode = r.word(f.get("mode"));
            let result = r.word(f.get("result"));
            Some(TestRow {
                name: name?,
                tier: tier?,
                mode: mode?,
                result: result?,
            })
        })
    }

    fn oracle(&mut self, node: &Node) -> Option<OracleRow> {
        let f = self.fields(node, vocab::ORACLE_KEYS, "oracles[]")?;
        let kind = self.word(f.get("kind"));
        let source = self.string(f.get("source"));
        let hash = self.digest(f.get("hash"));
        Some(OracleRow {
            kind: kind?,
            source: source?,
            hash: hash?,
        })
    }

    fn decisions(&mut self, node: Option<&Node>) -> Option<DecisionsRecord> {
        let f = self.fields(node?, vocab::DECISIONS_KEYS, "decisions")?;
        let scope_hash = self.digest(f.get("scope_hash"));
        let entries = self.map(
            f.get("entries"),
            |key| {
                if key.is_empty() {
                    Err("a decision label is never empty".to_owned())
                } else {
                    Ok(())
                }
            },
            |r, n| r.digest(Some(n)),
        );
        Some(DecisionsRecord {
            scope_hash: scope_hash?,
            entries: entries?,
        })
    }

    fn soil_lock(&mut self, root: &Node) -> Option<SoilLock> {
        let f = self.fields(root, vocab::SOIL_LOCK_KEYS, "soil.lock")?;
        self.lock_format(f.get("lock_format"));
        let definitions = match f.get("definitions") {
            Some(node) => self.definitions(node),
            None => None,
        };
        let soil_private = self.array(f.get("soil_private"), |r, n| {
            let f = r.fields(n, vocab::PRIVATE_NODE_KEYS, "soil_private[]")?;
            let name = r.string(f.get("name"));
            let hash = r.digest(f.get("hash"));
            let owners = r.strings(f.get("owners"));
            Some(PrivateNode {
                name: name?,
                hash: hash?,
                owners: owners?,
            })
        });
        let escape_hatches = self.array(f.get("escape_hatches"), |r, n| {
            let f = r.fields(n, vocab::HATCH_KEYS, "escape_hatches[]")?;
            let definition = r.string(f.get("definition"));
            let kind = r.word(f.get("kind"));
            let text = r.string(f.get("text"));
            Some(EscapeHatch {
                definition: definition?,
                kind: kind?,
                text: text?,
            })
        });
        let trusted_packages = self.map(
            f.get("trusted_packages"),
            |_| Ok(()),
            |r, n| r.digest(Some(n)),
        );
        Some(SoilLock {
            definitions: definitions?,
            soil_private: soil_private?,
            escape_hatches: escape_hatches?,
            trusted_packages: trusted_packages?,
        })
    }

    fn definitions(&mut self, node: &Node) -> Option<BTreeMap<String, Lock>> {
        let locks = self.map(
            Some(node),
            |_| Ok(()),
            |r, n| {
                // Embedded locks carry their own lock_format and are refused the
                // same way a sidecar would be.
                if !r.format_supported(n) {
                    return None;
                }
                r.lock(n)
            },
        )?;
        if let Value::Object(members) = &node.value {
            for member in members {
                if let Some(lock) = locks.get(&*member.key) {
                    self.invariants(&member.value, lock);
                }
            }
        }
        Some(locks)
    }

    /// Reports `lock`'s invariant violations at the fields they name.
    fn invariants(&mut self, lock_node: &Node, lock: &Lock) {
        for violation in violations(lock) {
            let range = locate(lock_node, &violation.path);
            self.report(violation.code, violation.message, range);
        }
    }
}

fn clause_key(key: &str, kinds: &[&str]) -> Result<(), String> {
    let ok = kinds.iter().any(|kind| {
        key.strip_prefix(kind)
            .and_then(|rest| rest.strip_prefix(':'))
            .is_some_and(|label| !label.is_empty())
    });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{key}` is not a clause key: expected `{}:<label>`",
            kinds.join("|")
        ))
    }
}

/// The range of the node `path` names inside `node`, or of the deepest
/// ancestor that exists.
fn locate(node: &Node, path: &[Seg]) -> TextRange {
    let mut current = node;
    for seg in path {
        let next = match (seg, &current.value) {
            (Seg::Key(key), Value::Object(members)) => {
                members.iter().find(|m| m.key == *key).map(|m| &m.value)
            }
            (Seg::Entry(key), Value::Object(members)) => {
                members.iter().find(|m| &m.key == key).map(|m| &m.value)
            }
            (Seg::Index(i), Value::Array(items)) => items.get(*i),
            _ => None,
        };
        match next {
            Some(next) => current = next,
            None => break,
        }
    }
    current.range
}

/// The `lock_format` a lock declares, read before its fields because the field
/// set depends on it; anything unreadable counts as the current format and is
/// reported by the field-by-field read.
fn declared_format(root: &Node) -> u64 {
    let Value::Object(members) = &root.value else {
        return LOCK_FORMAT;
    };
    members
        .iter()
        .find(|m| m.key == "lock_format")
        .and_then(|m| match &m.value.value {
            Value::Number(text) => text.parse::<u64>().ok(),
            _ => None,
        })
        .filter(|format| (OLDEST_LOCK_FORMAT..=LOCK_FORMAT).contains(format))
        .unwrap_or(LOCK_FORMAT)
}
