//! The canonical writer (lock-schema §1.2): 2-space pretty objects with keys in
//! schema order, every array one compact element per line, one trailing
//! newline. Hand-written so the bytes are the schema's, not a library's.

use std::collections::BTreeMap;

use trellis_hash::Digest;

use crate::model::*;
use crate::vocab::Word;

/// A document about to be printed. Objects keep the order they are built in.
enum Out {
    Null,
    Bool(bool),
    Number(u64),
    String(String),
    Array(Vec<Out>),
    Object(Vec<(String, Out)>),
}

/// The canonical text of a sidecar lock.
pub fn write_lock(lock: &Lock) -> String {
    render(&lock_out(lock))
}

/// The canonical text of `soil.lock`.
pub fn write_soil_lock(soil_lock: &SoilLock) -> String {
    render(&soil_lock_out(soil_lock))
}

fn render(out: &Out) -> String {
    let mut text = String::new();
    pretty(out, 0, &mut text);
    text.push('\n');
    text
}

fn pretty(out: &Out, indent: usize, text: &mut String) {
    match out {
        Out::Object(members) if !members.is_empty() => {
            text.push_str("{\n");
            for (i, (key, value)) in members.iter().enumerate() {
                push_indent(indent + 1, text);
                push_string(key, text);
                text.push_str(": ");
                pretty(value, indent + 1, text);
                if i + 1 < members.len() {
                    text.push(',');
                }
                text.push('\n');
            }
            push_indent(indent, text);
            text.push('}');
        }
        Out::Array(items) if !items.is_empty() => {
            text.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                push_indent(indent + 1, text);
                compact(item, text);
                if i + 1 < items.len() {
                    text.push(',');
                }
                text.push('\n');
            }
            push_indent(indent, text);
            text.push(']');
        }
        scalar_or_empty => compact(scalar_or_empty, text),
    }
}

fn compact(out: &Out, text: &mut String) {
    match out {
        Out::Null => text.push_str("null"),
        Out::Bool(b) => text.push_str(if *b { "true" } else { "false" }),
        Out::Number(n) => text.push_str(&n.to_string()),
        Out::String(s) => push_string(s, text),
        Out::Array(items) => {
            text.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                compact(item, text);
            }
            text.push(']');
        }
        Out::Object(members) => {
            text.push('{');
            for (i, (key, value)) in members.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                push_string(key, text);
                text.push(':');
                compact(value, text);
            }
            text.push('}');
        }
    }
}

fn push_indent(level: usize, text: &mut String) {
    for _ in 0..level {
        text.push_str("  ");
    }
}

/// JSON string escaping through the one escaper, soil-rt's (lock-schema §1.4).
fn push_string(s: &str, text: &mut String) {
    soil_rt::write_string(text, s);
}

fn obj(members: Vec<(&str, Out)>) -> Out {
    Out::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

fn s(text: &str) -> Out {
    Out::String(text.to_owned())
}

fn word<W: Word>(w: W) -> Out {
    s(w.word())
}

fn digest(d: &Digest) -> Out {
    Out::String(d.to_string())
}

fn opt<T>(value: &Option<T>, f: impl FnOnce(&T) -> Out) -> Out {
    value.as_ref().map_or(Out::Null, f)
}

fn strings(items: &[String]) -> Out {
    Out::Array(items.iter().map(|i| s(i)).collect())
}

fn map<V>(entries: &BTreeMap<String, V>, f: impl Fn(&V) -> Out) -> Out {
    Out::Object(entries.iter().map(|(k, v)| (k.clone(), f(v))).collect())
}

/// Set-like rows are printed sorted, so the bytes never depend on the order a
/// producer happened to collect them in.
fn sorted<T: Ord + Clone>(rows: &[T]) -> Vec<T> {
    let mut rows = rows.to_vec();
    rows.sort();
    rows
}

fn lock_out(lock: &Lock) -> Out {
    let kind = lock.kind();
    let head = |name: &str, toolchain: &Toolchain, spec: &SpecRecord| {
        vec![
            ("lock_format", Out::Number(LOCK_FORMAT)),
            ("name", s(name)),
            ("kind", word(kind)),
            ("toolchain", toolchain_out(toolchain)),
            ("spec", spec_out(spec)),
        ]
    };
    let mut members = match lock {
        Lock::Function(l) => {
            let mut m = head(&l.name, &l.toolchain, &l.spec);
            m.push(("lowering", opt(&l.lowering, lowering_out)));
            m.push(("checks", opt(&l.checks, checks_out)));
            m.push(("results_key", opt(&l.results_key, digest)));
            m.push(("tests", tests_out(&l.tests)));
            m.push((
                "oracles",
                Out::Array(sorted(&l.oracles).iter().map(oracle_out).collect()),
            ));
            m
        }
        Lock::Type(l) => {
            let mut m = head(&l.name, &l.toolchain, &l.spec);
            m.push((
                "checks",
                opt(&l.checks, |c| {
                    obj(vec![
                        ("declaration", word(c.declaration)),
                        ("invariants", map(&c.invariants, |a| word(*a))),
                    ])
                }),
            ));
            m.push(("cycle_hash", opt(&l.cycle_hash, digest)));
            m.push(("tests", tests_out(&l.tests)));
            m
        }
        Lock::Module(l) => {
            let mut m = head(&l.name, &l.toolchain, &l.spec);
            m.push(("exports", strings(&l.exports)));
            m.push(("decisions", decisions_out(&l.decisions)));
            m
        }
        Lock::Project(l) => {
            let mut m = head(&l.name, &l.toolchain, &l.spec);
            m.push(("decisions", decisions_out(&l.decisions)));
            m
        }
    };
    members.push(("accepted", Out::Bool(lock.accepted())));
    obj(members)
}

fn toolchain_out(t: &Toolchain) -> Out {
    obj(vec![
        ("trellis", s(&t.trellis)),
        ("soil0_cli", s(&t.soil0_cli)),
    ])
}

fn spec_out(spec: &SpecRecord) -> Out {
    obj(vec![
        (
            "hashes",
            obj(vec![
                ("formal", digest(&spec.hashes.formal)),
                ("test", digest(&spec.hashes.test)),
                ("prose", digest(&spec.hashes.prose)),
            ]),
        ),
        (
            "blocks",
            Out::Array(
                spec.blocks
                    .iter()
                    .map(|b| obj(vec![("block", s(&b.block)), ("author", word(b.author))]))
                    .collect(),
            ),
        ),
        ("pinned", Out::Bool(spec.pinned)),
        ("allow", strings(&spec.allow)),
    ])
}

fn edges_out(edges: &[Edge]) -> Out {
    Out::Array(
        sorted(edges)
            .iter()
            .map(|e| obj(vec![("name", s(&e.name)), ("hash", digest(&e.hash))]))
            .collect(),
    )
}

fn lowering_out(l: &Lowering) -> Out {
    obj(vec![
        ("provenance", word(l.provenance)),
        ("provider", opt(&l.provider, |p| s(p))),
        ("model", opt(&l.model, |m| s(m))),
        ("soil_hash", digest(&l.soil_hash)),
        ("calls", edges_out(&l.calls)),
        ("private_helpers", edges_out(&l.private_helpers)),
        (
            "decisions",
            obj(vec![
                (
                    "project_scope_hash",
                    digest(&l.decisions.project_scope_hash),
                ),
                ("module_scope_hash", digest(&l.decisions.module_scope_hash)),
                (
                    "applied",
                    Out::Array(
                        sorted(&l.decisions.applied)
                            .iter()
                            .map(|d| {
                                obj(vec![
                                    ("scope", word(d.scope)),
                                    ("label", s(&d.label)),
                                    ("hash", digest(&d.hash)),
                                ])
                            })
                            .collect(),
                    ),
                ),
            ]),
        ),
    ])
}

fn checks_out(c: &Checks) -> Out {
    obj(vec![
        ("signature", word(c.signature)),
        ("row", word(c.row)),
        ("clauses", map(&c.clauses, |a| word(*a))),
        ("termination", word(c.termination)),
        ("holes", strings(&c.holes)),
    ])
}

fn tests_out(tests: &[TestRow]) -> Out {
    Out::Array(
        tests
            .iter()
            .map(|t| {
                obj(vec![
                    ("name", s(&t.name)),
                    ("tier", word(t.tier)),
                    ("mode", word(t.mode)),
                    ("result", word(t.result)),
                ])
            })
            .collect(),
    )
}

fn oracle_out(o: &OracleRow) -> Out {
    obj(vec![
        ("kind", word(o.kind)),
        ("source", s(&o.source)),
        ("hash", digest(&o.hash)),
    ])
}

fn decisions_out(d: &DecisionsRecord) -> Out {
    obj(vec![
        ("scope_hash", digest(&d.scope_hash)),
        ("entries", map(&d.entries, digest)),
    ])
}

fn soil_lock_out(m: &SoilLock) -> Out {
    obj(vec![
        ("lock_format", Out::Number(LOCK_FORMAT)),
        ("definitions", map(&m.definitions, lock_out)),
        (
            "soil_private",
            Out::Array(
                sorted(&m.soil_private)
                    .iter()
                    .map(|n| {
                        obj(vec![
                            ("name", s(&n.name)),
                            ("hash", digest(&n.hash)),
                            ("owners", strings(&n.owners)),
                        ])
                    })
                    .collect(),
            ),
        ),
        (
            "escape_hatches",
            Out::Array(
                sorted(&m.escape_hatches)
                    .iter()
                    .map(|h| {
                        obj(vec![
                            ("definition", s(&h.definition)),
                            ("kind", word(h.kind)),
                            ("text", s(&h.text)),
                        ])
                    })
                    .collect(),
            ),
        ),
        ("trusted_packages", map(&m.trusted_packages, digest)),
    ])
}
