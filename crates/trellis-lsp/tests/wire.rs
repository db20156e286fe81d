//! The server over bytes, as an editor drives it on stdio: its own transport
//! on a pair of pipes in front of `serve`. Each kind of malformed frame is
//! answered and the valid request after it is answered too; a header declaring
//! 2 GB is refused at once without the memory; a body over the limit is
//! skipped and the next request served; and when the stream ends inside a
//! frame, the transport says where.

mod support;

use serde_json::{Value, json};
use support::{WireClient, resident_bytes, small_root};
use trellis_lsp::transport::Bounds;

fn quiet() -> Bounds {
    Bounds {
        log_to_stderr: false,
        ..Bounds::default()
    }
}

fn hover() -> Value {
    json!({ "textDocument": { "uri": support::uri("m/quad.soil") },
            "position": { "line": 0, "character": 3 } })
}

/// The held-out check: a malformed frame followed by a valid request gets both
/// answered, for each kind the issue lists.
#[test]
fn a_malformed_frame_and_the_valid_request_after_it_are_both_answered() {
    let cases: [(&str, &[u8], i64); 6] = [
        (
            "non-numeric length",
            b"Content-Length: 1e3\r\n\r\n{}",
            -32700,
        ),
        (
            "missing header",
            br#"{"jsonrpc":"2.0","id":99,"method":"shutdown"}"#,
            -32700,
        ),
        ("non-JSON", b"Content-Length: 9\r\n\r\n{not json", -32700),
        (
            "invalid UTF-8",
            b"Content-Length: 4\r\n\r\n\"\xc3\x28\"",
            -32700,
        ),
        (
            "body longer than declared",
            b"Content-Length: 10\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":98,\"method\":\"x\"}",
            -32700,
        ),
        (
            "not a message",
            b"Content-Length: 17\r\n\r\n{\"jsonrpc\":\"2.0\"}",
            -32600,
        ),
    ];
    let mut client = WireClient::start(small_root(), quiet());
    for (name, bad, code) in cases {
        client.send_raw(bad);
        let id = client.request("textDocument/hover", hover());
        let refusal = client.next(|message| message.get("error").is_some());
        assert_eq!(refusal["error"]["code"], code, "{name}: {refusal}");
        assert_eq!(refusal["id"], Value::Null, "{name}");
        let answer = client.response(id);
        assert_eq!(answer["result"], Value::Null, "{name}: {answer}");
    }
    // Shut down and exit: the process would exit 0.
    let id = client.request("shutdown", Value::Null);
    client.response(id);
    client.notify("exit", Value::Null);
    assert_eq!(client.close(), (Ok(()), Ok(())));
}

/// `Content-Length: 2000000000` alone is refused from the header — the server
/// neither allocates the body nor waits for it to answer — and ending the
/// stream there is reported as a stream broken inside that body.
#[test]
fn a_two_gigabyte_header_is_refused_at_once_without_the_memory() {
    let mut client = WireClient::start(small_root(), quiet());
    let before = resident_bytes();
    client.send_raw(b"Content-Length: 2000000000\r\n\r\n");
    let refusal = client.next(|message| message.get("error").is_some());
    assert_eq!(refusal["error"]["code"], -32600);
    assert_eq!(
        refusal["error"]["message"],
        "a frame of 2000000000 bytes exceeds the limit of 16777216 bytes: its body is skipped"
    );
    if let (Some(before), Some(after)) = (before, resident_bytes()) {
        let grown = after.saturating_sub(before);
        assert!(grown < 64 << 20, "grew by {grown} bytes");
    }
    let (served, transport) = client.close();
    assert_eq!(served, Ok(()));
    assert_eq!(
        transport,
        Err("the stream ended 0 bytes into the 2000000000-byte body being skipped".to_owned())
    );
}

/// A body over the limit is skipped as it arrives, and the request after it
/// is served.
#[test]
fn a_body_over_the_limit_is_skipped_and_the_next_request_served() {
    let bounds = Bounds {
        max_body: 64 * 1024,
        ..quiet()
    };
    let mut client = WireClient::start(small_root(), bounds);
    let junk = vec![b'x'; 3 << 20];
    client.send_raw(format!("Content-Length: {}\r\n\r\n", junk.len()).as_bytes());
    client.send_raw(&junk);
    let id = client.request("textDocument/hover", hover());
    let refusal = client.next(|message| message.get("error").is_some());
    assert_eq!(refusal["error"]["code"], -32600);
    assert_eq!(client.response(id)["result"], Value::Null);
    let id = client.request("shutdown", Value::Null);
    client.response(id);
    client.notify("exit", Value::Null);
    assert_eq!(client.close(), (Ok(()), Ok(())));
}

/// Where the stream ends decides what is said: between frames the server just
/// ends; inside a header or a body the transport says where.
#[test]
fn a_stream_ending_inside_a_frame_says_where() {
    let client = WireClient::start(small_root(), quiet());
    assert_eq!(client.close(), (Ok(()), Ok(())));
    let mut client = WireClient::start(small_root(), quiet());
    client.send_raw(b"Content-Length: 100\r\n\r\n{\"jsonrpc\"");
    assert_eq!(
        client.close(),
        (
            Ok(()),
            Err("the stream ended 10 bytes into a 100-byte body".to_owned())
        )
    );
}
