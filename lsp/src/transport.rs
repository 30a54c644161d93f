//! The stdio transport: `Content-Length` framing and JSON-RPC, tolerant of any input.
//!
//! `lsp_server::Connection::stdio()` ends the session on the first malformed message (bad JSON, a
//! body that is not UTF-8, a bad header, a lone surrogate escape, an id that is not an `i32` or a
//! string), so an editor bug or a stray byte killed the server. Here a bad message is answered with
//! the JSON-RPC error the specification names (-32700 parse error, -32600 invalid request) and
//! reading goes on; well-formed messages reach the server as `lsp_server::Message`s.
//!
//! `lsp_server::RequestId` holds only `i32`s and strings, while JSON-RPC allows any number: other
//! ids are handed to the server as a private string and replaced by the client's value in the reply.

use crossbeam_channel::{Receiver, Sender};
use lsp_server::{Connection, ErrorCode, Message};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, Read, Write};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Starts the threads that read stdin and write stdout; the writer ends once the server drops its
/// sender (the reader may stay blocked on stdin: the process ends without it).
pub(crate) fn stdio() -> (Connection, JoinHandle<()>) {
    connect(|| std::io::stdin().lock(), || std::io::stdout().lock())
}

/// Starts the threads that read what `input` opens and write what `output` opens (each opened on
/// its thread: a locked stdin or stdout cannot move between threads).
pub(crate) fn connect<R: BufRead, W: Write>(
    input: impl FnOnce() -> R + Send + 'static,
    output: impl FnOnce() -> W + Send + 'static,
) -> (Connection, JoinHandle<()>) {
    let (to_server, receiver) = crossbeam_channel::unbounded();
    let (sender, from_server) = crossbeam_channel::unbounded();
    let (errors, error_replies) = crossbeam_channel::unbounded();
    let ids = Ids::default();
    let reader_ids = ids.clone();
    std::thread::Builder::new()
        .name("cutec-lsp-reader".into())
        .spawn(move || read_all(input(), &reader_ids, &to_server, &errors))
        .expect("cannot start the reader thread");
    let writer = std::thread::Builder::new()
        .name("cutec-lsp-writer".into())
        .spawn(move || write_all(output(), &ids, &from_server, &error_replies))
        .expect("cannot start the writer thread");
    (Connection { sender, receiver }, writer)
}

/// The ids the server sees as a private string, with the client's value to answer with.
#[derive(Clone, Default)]
struct Ids(Arc<Mutex<(u64, HashMap<String, Value>)>>);

/// Starts every private id; no sane client sends an id beginning with a NUL character, and one that
/// does is itself mapped.
const PRIVATE: &str = "\0cutec-id-";

impl Ids {
    /// The id the server sees for the client's `id` (a number or a string).
    fn to_server(&self, id: Value) -> Value {
        let fits = match &id {
            Value::Number(n) => n.as_i64().is_some_and(|n| i32::try_from(n).is_ok()),
            Value::String(s) => !s.starts_with(PRIVATE),
            _ => false,
        };
        if fits {
            return id;
        }
        let mut ids = self.0.lock().unwrap_or_else(|e| e.into_inner());
        ids.0 += 1;
        let private = format!("{PRIVATE}{}", ids.0);
        ids.1.insert(private.clone(), id);
        Value::String(private)
    }

    /// The client's id for the id of the server's reply.
    fn to_client(&self, id: Value) -> Value {
        match &id {
            Value::String(s) if s.starts_with(PRIVATE) => {
                self.0.lock().unwrap_or_else(|e| e.into_inner()).1.remove(s).unwrap_or(id)
            }
            _ => id,
        }
    }
}

/// Reads messages until stdin ends or the client sends `exit`.
fn read_all(mut input: impl BufRead, ids: &Ids, to_server: &Sender<Message>, errors: &Sender<Value>) {
    loop {
        let body = match read_frame(&mut input) {
            Frame::Body(body) => body,
            Frame::BadHeader(why) => {
                let _ = errors.send(error(Value::Null, ErrorCode::ParseError, &why));
                continue;
            }
            Frame::End => return,
        };
        match decode(&body, ids) {
            Ok(message) => {
                let exit = matches!(&message, Message::Notification(n) if n.method == "exit");
                if to_server.send(message).is_err() || exit {
                    return;
                }
            }
            Err(Some(reply)) => {
                let _ = errors.send(reply);
            }
            Err(None) => {}
        }
    }
}

enum Frame {
    Body(Vec<u8>),
    /// A header block without a usable `Content-Length`; reading resumes after it.
    BadHeader(String),
    End,
}

/// The largest body read: a longer `Content-Length` is a bad header, not a reason to run out of memory.
const MAX_BODY: usize = 1 << 30;

fn read_frame(input: &mut impl BufRead) -> Frame {
    let mut length: Option<Result<usize, String>> = None;
    let mut any = false;
    loop {
        let mut line = Vec::new();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return Frame::End,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if any {
                break;
            }
            continue; // Blank lines between messages.
        }
        any = true;
        // Found anywhere in the line, so that a header glued to the end of a body that was not
        // framed right (a short `Content-Length`) still starts the next message.
        let lower = line.to_ascii_lowercase();
        if let Some(at) = lower.find("content-length:") {
            let value = line[at + "content-length:".len()..].trim();
            length = Some(match value.parse::<usize>() {
                Ok(n) if n <= MAX_BODY => Ok(n),
                _ => Err(format!("bad Content-Length header `{value}`")),
            });
        }
    }
    match length {
        Some(Ok(n)) => {
            let mut body = Vec::new();
            match input.take(n as u64).read_to_end(&mut body) {
                Ok(read) if read == n => Frame::Body(body),
                _ => Frame::End,
            }
        }
        Some(Err(why)) => Frame::BadHeader(why),
        None => Frame::BadHeader("a message header without Content-Length".into()),
    }
}

/// The message in `body`, or the error reply to send for it: none for a response (the server sends
/// no requests) or a notification that does not fit its method (a notification has no reply).
fn decode(body: &[u8], ids: &Ids) -> Result<Message, Option<Value>> {
    let text = String::from_utf8_lossy(body);
    let value = serde_json::from_str::<Value>(&text)
        .or_else(|e| serde_json::from_str::<Value>(&replace_lone_surrogates(&text)).map_err(|_| e))
        .map_err(|e| Some(error(Value::Null, ErrorCode::ParseError, &format!("parse error: {e}"))))?;
    let Value::Object(mut object) = value else {
        return Err(Some(error(Value::Null, ErrorCode::InvalidRequest, "a message must be a JSON object")));
    };
    let id = object.remove("id");
    let invalid = |id: Option<&Value>, why: &str| {
        let id = id.filter(|id| id.is_number() || id.is_string()).cloned().unwrap_or(Value::Null);
        Some(error(id, ErrorCode::InvalidRequest, why))
    };
    match (&id, object.get("method")) {
        (_, Some(method)) if !method.is_string() => Err(invalid(id.as_ref(), "`method` must be a string")),
        (Some(id), Some(_)) if !(id.is_number() || id.is_string()) => {
            Err(invalid(None, "a request id must be a number or a string"))
        }
        (None, Some(_)) => {
            object.remove("jsonrpc");
            serde_json::from_value(Value::Object(object)).map(Message::Notification).map_err(|_| None)
        }
        (Some(id), Some(_)) => {
            let mut request = object.clone();
            request.insert("id".into(), ids.to_server(id.clone()));
            request.entry("params").or_insert(Value::Null);
            serde_json::from_value(Value::Object(request))
                .map(Message::Request)
                .map_err(|e| invalid(Some(id), &format!("invalid request: {e}")))
        }
        // A response to a request of the server (it sends none), or nothing JSON-RPC knows.
        (Some(_), None) if object.contains_key("result") || object.contains_key("error") => Err(None),
        _ => Err(invalid(id.as_ref(), "neither a request, a notification nor a response")),
    }
}

fn error(id: Value, code: ErrorCode, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code as i32, "message": message } })
}

/// `text` with each `\u` escape of a lone UTF-16 surrogate (which `JSON.stringify` emits for a
/// string cut inside a surrogate pair, and serde_json rejects) replaced by `\uFFFD`.
fn replace_lone_surrogates(text: &str) -> String {
    let hex = |s: &str| if s.len() == 4 { u16::from_str_radix(s, 16).ok() } else { None };
    let escape_at =
        |i: usize| text.get(i..i + 2).filter(|e| *e == "\\u").and_then(|_| text.get(i + 2..i + 6)).and_then(hex);
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let Some(c) = text[i..].chars().next() else { break };
        if c != '\\' {
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        match escape_at(i) {
            Some(0xD800..=0xDBFF) if escape_at(i + 6).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low)) => {
                out.push_str(&text[i..i + 12]);
                i += 12;
            }
            Some(0xD800..=0xDFFF) => {
                out.push_str("\\uFFFD");
                i += 6;
            }
            _ => {
                // Any other escape: copy it whole, so that the `\\` of `\\ud800` is not taken for an
                // escape's start.
                out.push('\\');
                i += 1;
                if let Some(next) = text[i..].chars().next() {
                    out.push(next);
                    i += next.len_utf8();
                }
            }
        }
    }
    out
}

/// Writes the server's messages (with the client's ids) and the reader's error replies.
fn write_all(mut output: impl Write, ids: &Ids, from_server: &Receiver<Message>, error_replies: &Receiver<Value>) {
    let mut errors_open = true;
    loop {
        let value = if errors_open {
            crossbeam_channel::select! {
                recv(from_server) -> m => match m { Ok(m) => to_json(m, ids), Err(_) => break },
                recv(error_replies) -> e => match e { Ok(e) => e, Err(_) => { errors_open = false; continue } },
            }
        } else {
            match from_server.recv() {
                Ok(m) => to_json(m, ids),
                Err(_) => break,
            }
        };
        if write_frame(&mut output, &value).is_err() {
            break; // The client went away.
        }
    }
    // Replies the reader queued before the server finished.
    for reply in error_replies.try_iter() {
        let _ = write_frame(&mut output, &reply);
    }
}

fn write_frame(output: &mut impl Write, message: &Value) -> std::io::Result<()> {
    let body = message.to_string();
    write!(output, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    output.flush()
}

fn to_json(message: Message, ids: &Ids) -> Value {
    let mut value = serde_json::to_value(&message).unwrap_or(Value::Null);
    if let Value::Object(object) = &mut value {
        object.insert("jsonrpc".into(), "2.0".into());
        if matches!(message, Message::Response(_)) {
            if let Some(id) = object.remove("id") {
                object.insert("id".into(), ids.to_client(id));
            }
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let fixed = replace_lone_surrogates(r#"{"a":"x\ud800y\\ud800\ud83d\ude00\udc00"}"#);
        assert_eq!(fixed, r#"{"a":"x\uFFFDy\\ud800\ud83d\ude00\uFFFD"}"#);
        let v: Value = serde_json::from_str(&fixed).unwrap();
        assert_eq!(v["a"], "x\u{FFFD}y\\ud800😀\u{FFFD}");
    }

    #[test]
    fn ids_outside_i32_round_trip() {
        let ids = Ids::default();
        for id in [json!(9007199254740993u64), json!(1.5), json!(-3), json!("a"), json!(format!("{PRIVATE}7"))] {
            let seen = ids.to_server(id.clone());
            assert!(serde_json::from_value::<lsp_server::RequestId>(seen.clone()).is_ok(), "{seen}");
            assert_eq!(ids.to_client(seen), id);
        }
    }
}
