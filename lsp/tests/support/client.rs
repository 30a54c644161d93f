//! A scripted LSP client: starts the server binary, speaks JSON-RPC to it over its stdin and stdout
//! (`Content-Length` framing, as an editor does), and keeps a transcript of the session.

#![allow(dead_code)] // The tests and the benchmark each use part of it.

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long to wait for any one answer before the session is declared stuck.
const PATIENCE: Duration = Duration::from_secs(20);

pub struct Client {
    child: Child,
    stdin: ChildStdin,
    /// What the server sent, with when it arrived.
    incoming: Receiver<(Instant, Value)>,
    /// Messages received while waiting for another one.
    pending: VecDeque<(Instant, Value)>,
    next_id: i64,
    /// Every message, in order: `-->` sent, `<--` received.
    pub transcript: Vec<(&'static str, Value)>,
}

fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

impl Client {
    /// Starts `binary` (the server) with `args`.
    pub fn start(binary: &str, args: &[&str]) -> Client {
        let mut child = Command::new(binary)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {binary}: {e}"));
        let stdin = child.stdin.take().expect("piped stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let (sender, incoming) = channel();
        std::thread::spawn(move || {
            while let Some(message) = read_message(&mut stdout) {
                if sender.send((Instant::now(), message)).is_err() {
                    break;
                }
            }
        });
        Client { child, stdin, incoming, pending: VecDeque::new(), next_id: 1, transcript: Vec::new() }
    }

    /// Sends `bytes` as they are: a message framed by hand, or protocol garbage.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).expect("write to the server");
        self.stdin.flush().expect("flush to the server");
        self.transcript.push(("-->", Value::String(String::from_utf8_lossy(bytes).into_owned())));
    }

    /// Waits for the response whose id is `id` and returns it with when it arrived.
    pub fn response(&mut self, id: &Value) -> (Instant, Value) {
        self.receive(&format!("response {id}"), |m| m.get("id") == Some(id) && m.get("method").is_none())
    }

    /// Whether the server process is still running.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().expect("the server's status").is_none()
    }

    pub fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write to the server");
        self.stdin.flush().expect("flush to the server");
        self.transcript.push(("-->", message));
    }

    /// Waits for the first message `wanted` accepts, keeping the others for later.
    fn receive(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> (Instant, Value) {
        if let Some(i) = self.pending.iter().position(|(_, m)| wanted(m)) {
            return self.pending.remove(i).expect("a pending message");
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.incoming.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok((at, message)) => {
                    self.transcript.push(("<--", message.clone()));
                    if wanted(&message) {
                        return (at, message);
                    }
                    self.pending.push_back((at, message));
                }
                Err(RecvTimeoutError::Timeout) => panic!("no {what} from the server within {PATIENCE:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("the server exited while waiting for {what}"),
            }
        }
    }

    /// Sends a request and returns the response's `result` (panics on an error response).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.request_response(method, params);
        assert!(response.get("error").is_none(), "{method} failed: {response}");
        response["result"].clone()
    }

    /// Sends a request and returns the whole response.
    pub fn request_response(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.receive(&format!("response to {method}"), |m| m["id"] == json!(id) && m.get("method").is_none()).1
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Waits for a notification `method` and returns its params and when it arrived.
    pub fn notification(&mut self, method: &str) -> (Instant, Value) {
        let (at, message) = self.receive(method, |m| m["method"] == method && m.get("id").is_none());
        (at, message["params"].clone())
    }

    /// Waits for the diagnostics published for `uri` and returns them.
    pub fn diagnostics_of(&mut self, uri: &str) -> Value {
        let wanted = |m: &Value| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri;
        self.receive(&format!("diagnostics of {uri}"), wanted).1["params"]["diagnostics"].clone()
    }

    /// The `initialize` handshake; returns the server's `initialize` result.
    pub fn initialize(&mut self, capabilities: Value) -> Value {
        let result =
            self.request("initialize", json!({ "processId": null, "rootUri": null, "capabilities": capabilities }));
        self.notify("initialized", json!({}));
        result
    }

    /// `shutdown`, then `exit`; returns how the server process ended.
    pub fn shutdown(mut self) -> ExitStatus {
        let result = self.request("shutdown", Value::Null);
        assert_eq!(result, Value::Null);
        self.notify("exit", Value::Null);
        self.child.wait().expect("the server exits")
    }

    /// The transcript as text: each message on its own lines, pretty-printed.
    pub fn transcript_text(&self) -> String {
        let mut out = String::new();
        for (direction, message) in &self.transcript {
            out.push_str(direction);
            out.push(' ');
            out.push_str(&serde_json::to_string_pretty(message).expect("JSON prints"));
            out.push_str("\n\n");
        }
        out
    }
}

impl Drop for Client {
    /// A test that fails leaves no server running (one may be analysing a slow file).
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The LSP position (line, UTF-16 column) of the `n`th (0-based) `needle` in `text`, `delta` bytes in.
pub fn position(text: &str, needle: &str, n: usize, delta: usize) -> Value {
    let offset = text.match_indices(needle).nth(n).unwrap_or_else(|| panic!("`{needle}` #{n} not found")).0 + delta;
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let column = before.rsplit('\n').next().map_or(0, |l| l.encode_utf16().count());
    json!({ "line": line, "character": column })
}
