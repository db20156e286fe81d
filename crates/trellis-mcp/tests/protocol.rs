//! The protocol against a scripted job port: both handshakes, the tool list and
//! its schemas (golden), the result discipline, and bad frames.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

use std::io::Cursor;

use expect_test::{expect, expect_file};
use serde_json::{Value, json};
use trellis_mcp::{JobPort, McpServer, Tool, serve};

/// Echoes the arguments back, or fails with one diagnostic for `read_spec`.
struct Echo;

impl JobPort for Echo {
    fn call(&mut self, tool: Tool, arguments: &Value) -> Result<Value, Vec<Value>> {
        match tool {
            Tool::ReadSpec => Err(vec![
                trellis_diag::Diagnostic::new("unknown-spec-ref", "no such section").to_json(),
            ]),
            Tool::ReadContext if arguments["path"] == "big" => {
                Ok(json!({ "tag": "File", "content": "x".repeat(1000) }))
            }
            _ => Ok(json!({ "tool": tool.name(), "arguments": arguments })),
        }
    }
}

fn session(lines: &[&str]) -> Vec<Value> {
    let input = lines.join("\n");
    let mut output = Vec::new();
    let mut server = McpServer::new(Echo, "9.9.9").with_result_cap(150);
    serve(Cursor::new(input.into_bytes()), &mut output, &mut server).unwrap();
    output
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice(line).unwrap())
        .collect()
}

const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;

#[test]
fn legacy_handshake() {
    let replies = session(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"resources/list"}"#,
    ]);
    expect![[r#"
        {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"trellis","version":"9.9.9"},"instructions":"Trellis lowering job: read the bundle with read_context, write Soil with write_soil, check with check_types and run_tests, and ask_human when the spec does not decide. Every result is one JSON document."}}
        {"jsonrpc":"2.0","id":2,"result":{}}
        {"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no method named \"resources/list\"","data":{"errors":[{"code":"rpc-method-not-found","message":"no method named \"resources/list\"","file":{"tag":"None"},"span":{"tag":"None"},"notes":[],"repair_class":"report-bug","spec_ref":"design#9.2"}]}}}
    "#]]
    .assert_eq(&render(&replies));
}

#[test]
fn modern_revision_on_every_result() {
    let discover = format!(
        r#"{{"jsonrpc":"2.0","id":"a","method":"server/discover","params":{{{MODERN_META}}}}}"#
    );
    let list =
        format!(r#"{{"jsonrpc":"2.0","id":"b","method":"tools/list","params":{{{MODERN_META}}}}}"#);
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{{"name":"check_refinements","arguments":{{}},{MODERN_META}}}}}"#
    );
    let replies = session(&[&discover, &list, &call]);
    let discover = &replies[0]["result"];
    assert_eq!(discover["supportedVersions"], json!(["2026-07-28"]));
    for reply in &replies {
        assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
        assert_eq!(
            reply["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["version"],
            "9.9.9"
        );
    }
    for cacheable in &replies[..2] {
        assert_eq!(cacheable["result"]["ttlMs"], 0);
        assert_eq!(cacheable["result"]["cacheScope"], "private");
    }
    // The legacy handshake is not part of the modern revision.
    let init =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{{MODERN_META}}}}}"#);
    assert_eq!(session(&[&init])[0]["error"]["code"], -32601);
}

#[test]
fn the_seven_tools_and_their_schemas() {
    let replies = session(&[r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#]);
    let tools = replies[0]["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "read_context",
            "check_types",
            "check_refinements",
            "run_tests",
            "write_soil",
            "read_spec",
            "ask_human"
        ]
    );
    let pretty = serde_json::to_string_pretty(&replies[0]["result"]["tools"]).unwrap();
    expect_file!["../../../test-data/mcp/tools_list.json"].assert_eq(&(pretty + "\n"));
}

#[test]
fn results_are_one_compact_document() {
    let replies = session(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_context","arguments":{"path":"a"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_spec","arguments":{"ref":"x#1"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_soil","arguments":{"soil":"x","decisions_applied":[{"scope":"Project","label":"l"}]}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"shell","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_context","arguments":{"path":"big"}}}"#,
    ]);
    let texts: Vec<(bool, Value)> = replies
        .iter()
        .map(|reply| {
            let content = reply["result"]["content"].as_array().unwrap();
            assert_eq!(content.len(), 1);
            assert_eq!(content[0]["type"], "text");
            let text = content[0]["text"].as_str().unwrap();
            let document: Value = serde_json::from_str(text).unwrap();
            assert_eq!(document.to_string(), text, "compact");
            (reply["result"]["isError"].as_bool().unwrap(), document)
        })
        .collect();
    assert_eq!(
        texts[0],
        (
            false,
            json!({"tool": "read_context", "arguments": {"path": "a"}})
        )
    );
    let codes: Vec<(bool, Value)> = texts[1..]
        .iter()
        .map(|(is_error, doc)| (*is_error, doc["errors"][0]["code"].clone()))
        .collect();
    // write_soil's untagged scope is refused before the port sees it.
    assert_eq!(
        codes,
        [
            (true, json!("unknown-spec-ref")),
            (true, json!("json-type-mismatch")),
            (true, json!("mcp-unknown-tool")),
            (true, json!("mcp-result-too-large")),
        ]
    );
    let too_large = &texts[4].1["errors"][0];
    assert!(
        too_large["message"]
            .as_str()
            .unwrap()
            .contains("150 tokens")
    );
    assert_eq!(too_large["repair_class"], "fix-input");
    assert_eq!(too_large["spec_ref"], "trellis-daemon#2");
}

#[test]
fn bad_frames_are_errors_and_the_session_goes_on() {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let input: Vec<u8> = [
        b"\xff\xfe{\"jsonrpc\":\"2.0\"}\n".as_slice(),
        deep.as_bytes(),
        b"\n[1,2]\n{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}".as_slice(),
    ]
    .concat();
    let mut output = Vec::new();
    let mut server = McpServer::new(Echo, "1");
    serve(Cursor::new(input), &mut output, &mut server).unwrap();
    let replies: Vec<Value> = output
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let codes: Vec<Value> = replies
        .iter()
        .map(|r| r.get("error").map_or(json!("ok"), |e| e["code"].clone()))
        .collect();
    // Not UTF-8, nested past the parser's depth, a batch; then a ping in a
    // final frame without a newline is still answered.
    assert_eq!(
        codes,
        [json!(-32700), json!(-32700), json!(-32600), json!("ok")]
    );
}

#[test]
fn ids_are_strings_numbers_or_null_and_blank_lines_are_no_messages() {
    let replies = session(&[
        r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
        "",
        "   \r",
        r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
        // A stray response with a bad id: not answered.
        r#"{"jsonrpc":"2.0","id":{"a":1},"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"s","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
    ]);
    expect![[r#"
        {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a request id is a string, a number or null, not an object","data":{"errors":[{"code":"rpc-invalid-request","message":"a request id is a string, a number or null, not an object","file":{"tag":"None"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"design#9.2"}]}}}
        {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a request id is a string, a number or null, not an array","data":{"errors":[{"code":"rpc-invalid-request","message":"a request id is a string, a number or null, not an array","file":{"tag":"None"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"design#9.2"}]}}}
        {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a request id is a string, a number or null, not a boolean","data":{"errors":[{"code":"rpc-invalid-request","message":"a request id is a string, a number or null, not a boolean","file":{"tag":"None"},"span":{"tag":"None"},"notes":[],"repair_class":"fix-input","spec_ref":"design#9.2"}]}}}
        {"jsonrpc":"2.0","id":"s","result":{}}
        {"jsonrpc":"2.0","id":1.5,"result":{}}
        {"jsonrpc":"2.0","id":null,"result":{}}
    "#]]
    .assert_eq(&render(&replies));
}

fn render(replies: &[Value]) -> String {
    replies.iter().map(|r| format!("{r}\n")).collect()
}
