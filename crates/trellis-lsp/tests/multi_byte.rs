//! Every position the server reads or writes, on text full of multi-byte
//! characters, in both encodings: each request that takes a position is sent
//! at every character of every line of every file of a root whose prose,
//! string literals and headings hold em dashes, curly quotes, arrows, no-break
//! spaces, emoji and combining accents — including the columns inside a
//! character and past a line's end — and must answer without an error; the
//! positions the server sends back (symbols, lenses, diagnostics, locations)
//! must each name a character boundary of the text they point into.
//! Completion right after each such character, in a `.tr`'s prose and in a
//! Soil string literal, lists the module's names (it once answered -32603).

mod support;

use std::collections::BTreeMap;

use lsp_server::{Message, RequestId};
use serde_json::{Value, json};
use support::{Client, MULTI_BYTE, multi_byte_root, uri};

/// Characters of `line` in the negotiated encoding.
fn units(line: &str, utf8: bool) -> u32 {
    if utf8 {
        line.len() as u32
    } else {
        line.encode_utf16().count() as u32
    }
}

/// Whether `position` names a character boundary (or a line's end) of `text`,
/// whose lines end at `\n` (the fixture has no `\r`).
fn on_boundary(text: &str, position: &Value, utf8: bool) -> bool {
    let line = position["line"].as_u64().unwrap_or(u64::MAX) as usize;
    let character = position["character"].as_u64().unwrap_or(u64::MAX) as u32;
    let Some(line) = text.split('\n').nth(line) else {
        return false;
    };
    let mut counted = 0;
    for c in line.chars() {
        if counted == character {
            return true;
        }
        counted += if utf8 {
            c.len_utf8() as u32
        } else {
            c.len_utf16() as u32
        };
    }
    counted == character
}

/// Every range in `value` (any `range`, `selectionRange` or `targetRange`
/// found at any depth) with the URI it belongs to (the nearest `uri`, else
/// `document`'s).
fn ranges<'v>(value: &'v Value, document: &'v str, out: &mut Vec<(&'v str, &'v Value)>) {
    match value {
        Value::Object(map) => {
            let uri = map.get("uri").and_then(Value::as_str).unwrap_or(document);
            for key in ["range", "selectionRange"] {
                if let Some(range) = map.get(key) {
                    out.push((uri, &range["start"]));
                    out.push((uri, &range["end"]));
                }
            }
            for (key, inner) in map {
                if key != "range" && key != "selectionRange" {
                    ranges(inner, uri, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| ranges(item, document, out)),
        _ => {}
    }
}

#[test]
fn every_position_answers_on_multi_byte_text_in_both_encodings() {
    let files = multi_byte_root();
    let texts: BTreeMap<String, String> = files
        .iter()
        .map(|(path, text)| (uri(path), text.clone()))
        .collect();
    for utf8 in [false, true] {
        let mut client = Client::start_encoded(files.clone(), utf8);
        let mut asked: Vec<(RequestId, String)> = Vec::new();
        let opened: Vec<&(String, String)> = files
            .iter()
            .filter(|(path, _)| path != "soil.toml")
            .collect();
        // All open before asking: an open cancels what runs (ContentModified).
        for (path, text) in &opened {
            client.open(path, text);
        }
        for (path, _) in &opened {
            client.published(&uri(path), |p| p["version"] == 1);
        }
        for (path, text) in opened {
            let document = json!({ "uri": uri(path) });
            for (line_number, line) in text.split('\n').enumerate() {
                // Every column, one inside each wide character, and past the end.
                for character in 0..=units(line, utf8) + 1 {
                    let position = json!({ "line": line_number, "character": character });
                    for method in [
                        "textDocument/hover",
                        "textDocument/completion",
                        "textDocument/definition",
                        "textDocument/references",
                    ] {
                        let mut params = json!({ "textDocument": document, "position": position });
                        if method == "textDocument/references" {
                            params["context"] = json!({ "includeDeclaration": true });
                        }
                        let id = client.request(method, params);
                        asked.push((id, format!("{method} {path} {line_number}:{character}")));
                    }
                }
            }
            for method in ["textDocument/documentSymbol", "textDocument/codeLens"] {
                let id = client.request(method, json!({ "textDocument": document }));
                asked.push((id, format!("{method} {path}")));
            }
        }
        let mut checked_ranges = 0;
        for (id, what) in &asked {
            let answer = client.response(id.clone());
            assert!(
                answer.get("error").is_none(),
                "{what} (utf8: {utf8}): {answer}"
            );
            let document = uri(what.split(' ').nth(1).unwrap_or_default());
            let mut found = Vec::new();
            ranges(&answer, &document, &mut found);
            for (at, position) in found {
                let text = texts
                    .get(at)
                    .unwrap_or_else(|| panic!("{what} points at {at}"));
                assert!(
                    on_boundary(text, position, utf8),
                    "{what} (utf8: {utf8}) sent {position} in {at}"
                );
                checked_ranges += 1;
            }
        }
        assert!(
            checked_ranges > 100,
            "only {checked_ranges} positions came back"
        );
        // Every publication's ranges name boundaries too.
        let published: Vec<Value> = client
            .seen
            .iter()
            .filter_map(|message| match message {
                Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                    Some(n.params.clone())
                }
                _ => None,
            })
            .collect();
        for params in &published {
            let document = params["uri"].as_str().unwrap_or_default();
            let mut found = Vec::new();
            ranges(&params["diagnostics"], document, &mut found);
            for (at, position) in found {
                assert!(on_boundary(&texts[at], position, utf8), "{params}");
            }
        }
        client.finish();
    }
}

/// Completion right after each multi-byte character — in prose and in a
/// string literal, at the character and a few letters on — answers the
/// module's names, in both encodings.
#[test]
fn completion_right_after_each_multi_byte_character_answers() {
    for utf8 in [false, true] {
        let mut client = Client::start_encoded(multi_byte_root(), utf8);
        for path in ["app/main.tr", "app/main.soil"] {
            client.open(path, &support_text(path));
        }
        let mut version = 1;
        for &c in MULTI_BYTE {
            for (path, line) in [
                ("app/main.tr", format!("More prose {c}ma and{c}")),
                (
                    "app/main.soil",
                    format!("  let more = \"{c}ma and{c}\" in more"),
                ),
            ] {
                let text = format!("{}{line}\n", support_text(path));
                version += 1;
                client.replace(path, version, &text);
                let line_number = text.matches('\n').count() - 1;
                let after = line.find(c).expect("the character") + c.len_utf8();
                for column in [&line[..after], &line[..after + 2], &line[..]] {
                    let id = client.request(
                        "textDocument/completion",
                        json!({ "textDocument": { "uri": uri(path) },
                                "position": { "line": line_number,
                                              "character": units(column, utf8) } }),
                    );
                    let answer = client.response(id);
                    let labels: Vec<&str> = answer
                        .as_array()
                        .unwrap_or_else(|| {
                            panic!("{c:?} in {path} at {column:?} (utf8: {utf8}): {answer}")
                        })
                        .iter()
                        .filter_map(|item| item["label"].as_str())
                        .collect();
                    assert!(
                        labels.contains(&"main") && labels.contains(&"text::"),
                        "{c:?} in {path}: {labels:?}"
                    );
                }
            }
        }
        client.finish();
    }
}

fn support_text(path: &str) -> String {
    multi_byte_root()
        .into_iter()
        .find(|(p, _)| p == path)
        .map(|(_, text)| text)
        .unwrap_or_default()
}
