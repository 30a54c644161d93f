//! The server survives whatever the client sends (issue 30): each kind of protocol garbage gets
//! the JSON-RPC error the specification names, or none where none is due, and the next valid
//! request is still answered within [`PROMPT`]; a slow analysis never delays an answer.

#[path = "support/client.rs"]
mod client;

use client::Client;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const SERVER: &str = env!("CARGO_BIN_EXE_cute-lsp");
const URI: &str = "file:///robust.cute";
const SEED: &str = include_str!("../../samples/elementwise_add.cute");

/// How soon the server must answer a valid request after garbage, or while analysing. The server
/// waits at most 40 ms for a running analysis (`REQUEST_WAIT` in src/server.rs) and answers
/// within a few ms on an idle machine; the bound leaves room for a loaded 2-core CI machine
/// running other tests, and is still far below the seconds the slow analysis below takes, so a
/// server that blocks on it fails.
const PROMPT: Duration = Duration::from_millis(1000);

/// The id and error code a message is answered with; `None` for a message that gets no reply.
type Reply = Option<(Value, i64)>;

fn frame(body: &[u8]) -> Vec<u8> {
    let mut framed = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    framed.extend_from_slice(body);
    framed
}

fn hover_params(uri: &str) -> Value {
    json!({ "textDocument": { "uri": uri }, "position": { "line": 0, "character": 3 } })
}

/// Sends a hover request with `id` and checks it is answered (not with an error) within
/// [`PROMPT`] of `since`.
fn answered_promptly(c: &mut Client, id: Value, since: Instant, after: &str) {
    c.send(json!({ "jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": hover_params(URI) }));
    let (at, response) = c.response(&id);
    assert!(response.get("error").is_none(), "after {after}: {response}");
    let took = at.duration_since(since);
    assert!(took < PROMPT, "after {after}: answered in {took:?}");
    assert!(c.alive(), "the server exited after {after}");
}

/// A server, initialized, with [`SEED`] open and analysed at [`URI`].
fn started_with_seed() -> Client {
    started_with_seed_and(&[])
}

/// The same, the server started with `args`.
fn started_with_seed_and(args: &[&str]) -> Client {
    let mut c = Client::start(SERVER, args);
    c.initialize(json!({}));
    c.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": URI, "languageId": "cute", "version": 1, "text": SEED } }),
    );
    c.notification("textDocument/publishDiagnostics");
    c
}

#[test]
fn bad_initialize_is_an_invalid_params_error_and_the_client_may_retry() {
    let mut c = Client::start(SERVER, &[]);
    c.send(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "processId": "not a number", "capabilities": {} } }));
    let (_, response) = c.response(&json!(1));
    assert_eq!(response["error"]["code"], -32602, "{response}");
    // Before `initialize`, a request is refused, not dropped.
    let early = c.request_response("textDocument/hover", hover_params(URI));
    assert_eq!(early["error"]["code"], -32002, "{early}");
    c.initialize(json!({}));
    assert!(c.shutdown().success());
}

#[test]
fn protocol_garbage_is_answered_and_the_server_keeps_answering() {
    let mut c = started_with_seed();

    // (garbage, the id and error code it is answered with, if any)
    let cases: Vec<(&str, Vec<u8>, Reply)> = vec![
        ("bad JSON", frame(b"{\"jsonrpc\": \"2.0\", \"id\": "), Some((Value::Null, -32700))),
        ("a body not UTF-8", frame(b"\xff\xfe{\x80}"), Some((Value::Null, -32700))),
        ("a non-numeric Content-Length", b"Content-Length: lots\r\n\r\n".to_vec(), Some((Value::Null, -32700))),
        ("a header without Content-Length", b"Content-Type: x\r\n\r\n".to_vec(), Some((Value::Null, -32700))),
        ("a batch", frame(b"[1, 2]"), Some((Value::Null, -32600))),
        (
            "a request with a null id",
            frame(br#"{"jsonrpc":"2.0","id":null,"method":"shutdown"}"#),
            Some((Value::Null, -32600)),
        ),
        (
            "a request with an object id",
            frame(br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#),
            Some((Value::Null, -32600)),
        ),
        ("a method that is a number", frame(br#"{"jsonrpc":"2.0","id":7,"method":7}"#), Some((json!(7), -32600))),
        ("neither request nor notification", frame(br#"{"jsonrpc":"2.0"}"#), Some((Value::Null, -32600))),
        ("a notification of no known method", frame(br#"{"jsonrpc":"2.0","method":"$/x","params":3}"#), None),
        (
            "a didOpen with a bad text",
            frame(br#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":5}}"#),
            None,
        ),
        ("an unsolicited response", frame(br#"{"jsonrpc":"2.0","id":99,"result":null}"#), None),
    ];
    let mut next = 1000;
    for (what, bytes, code) in cases {
        let since = Instant::now();
        c.send_raw(&bytes);
        if let Some((id, code)) = code {
            let (_, response) = c.response(&id);
            assert_eq!(response["error"]["code"], code, "{what}: {response}");
        }
        next += 1;
        answered_promptly(&mut c, json!(next), since, what);
    }

    // A lone surrogate (as `JSON.stringify` writes a string cut inside a pair) in a didOpen text:
    // the document opens, the surrogate read as U+FFFD.
    let since = Instant::now();
    let body = br#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///s.cute","languageId":"cute","version":1,"text":"kernel k() { let x = \"\ud800\"; }"}}}"#;
    c.send_raw(&frame(body));
    let (_, published) = c.notification("textDocument/publishDiagnostics");
    assert_eq!(published["uri"], "file:///s.cute");
    answered_promptly(&mut c, json!(2000), since, "a lone surrogate");

    // Any number or string is an id, answered as given.
    for id in [
        json!(9007199254740993u64),
        json!(18446744073709551615u64),
        json!(-9223372036854775808i64),
        json!(2147483648u64),
        json!(1.5),
        json!(-0.25),
        json!("an id"),
        json!(""),
        json!("\u{0}cutec-id-1"),
    ] {
        answered_promptly(&mut c, id.clone(), Instant::now(), &format!("the id {id}"));
    }
    // A known method whose params do not fit is an invalid-params error.
    let response = c.request_response("textDocument/hover", json!({ "position": "here" }));
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert!(c.shutdown().success());
}

/// Two nested host loops of 1,500 trips: the front end takes seconds to evaluate them.
fn slow_program() -> String {
    "host main() {\n    for i in 0..1500 {\n        for j in 0..1500 {\n        }\n    }\n}\n".into()
}

#[test]
fn a_slow_analysis_delays_no_answer_and_its_stale_result_is_dropped() {
    // Under a budget it does not reach, the slow program's analysis runs until it is superseded.
    let mut c = started_with_seed_and(&["--compile-budget", "1000000000000"]);
    let change = |c: &mut Client, version: i32, text: &str| {
        c.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": URI, "version": version }, "contentChanges": [{ "text": text }] }),
        )
    };
    change(&mut c, 2, &slow_program());
    // Past the debounce: the slow analysis is running.
    std::thread::sleep(Duration::from_millis(50));
    for (i, method) in
        ["textDocument/hover", "textDocument/completion", "textDocument/documentSymbol"].iter().enumerate()
    {
        let id = json!(100 + i);
        let since = Instant::now();
        c.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": hover_params(URI) }));
        let (at, response) = c.response(&id);
        assert!(response.get("error").is_none(), "{method}: {response}");
        assert!(at.duration_since(since) < PROMPT, "{method} took {:?}", at.duration_since(since));
    }
    // A newer text supersedes the slow one: its diagnostics are the next published, never the
    // slow version's.
    change(&mut c, 3, SEED);
    let (_, published) = c.notification("textDocument/publishDiagnostics");
    assert_eq!(published["version"], 3, "{published}");
    assert!(c.shutdown().success());
}

/// The issue's multiplying programs (lang/tests/budget/): each takes the front end minutes, or
/// more memory than there is, without a compile budget.
const MULTIPLYING: [&str; 4] = [
    include_str!("../../lang/tests/budget/loops4.cute"),
    include_str!("../../lang/tests/budget/calls.cute"),
    include_str!("../../lang/tests/budget/hostloops.cute"),
    include_str!("../../lang/tests/budget/printf.cute"),
];

#[test]
fn a_change_cancels_the_running_analysis_and_the_new_text_is_analysed_at_once() {
    // A budget no program here reaches: each multiplying program's analysis runs for minutes
    // unless it is cancelled (under the default budget it ends with the budget's error within a
    // second, which the tests in lang/tests/budget.rs check).
    let mut c = started_with_seed_and(&["--compile-budget", "1000000000000"]);
    for (i, slow) in MULTIPLYING.iter().enumerate() {
        let version = 2 * i as i32 + 2;
        c.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": URI, "version": version }, "contentChanges": [{ "text": slow }] }),
        );
        // Past the debounce: the slow analysis is running, and requests are still answered.
        std::thread::sleep(Duration::from_millis(50));
        answered_promptly(&mut c, json!(200 + i), Instant::now(), "a multiplying program");
        // One analysis runs per document: without cancellation the next text would wait for the
        // slow one to end (seconds); cancelled, it ends at its next step.
        let since = Instant::now();
        c.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": URI, "version": version + 1 }, "contentChanges": [{ "text": SEED }] }),
        );
        let (at, published) = c.notification("textDocument/publishDiagnostics");
        assert_eq!(published["version"], version + 1, "{published}");
        assert!(at.duration_since(since) < PROMPT, "the new text waited {:?}", at.duration_since(since));
    }
    assert!(c.shutdown().success());
}
