#![no_main]
//! Bytes as what an editor sends `cutec lsp`, through the server in process (`cute_lsp::serve`: the
//! framing, JSON-RPC decoding and the dispatch of the real server): it must never panic, hang or
//! stop answering.
//!
//! An input starting with `RAW` followed by a newline is sent as it is (headers and all). Any other
//! input is one message body a line, each framed with its right `Content-Length`, so the fuzzer
//! spends its time on the messages rather than the framing. After the input comes a `shutdown`
//! request with the id `fuzz-end`, then `exit`: in the framed form the server must answer it,
//! unless the input itself may have shut the server down or ended it.

use libfuzzer_sys::fuzz_target;
use std::io::{Cursor, Write};
use std::sync::{Arc, Mutex};

const END: &str = r#"{"jsonrpc":"2.0","id":"fuzz-end","method":"shutdown"}"#;
const EXIT: &str = r#"{"jsonrpc":"2.0","method":"exit"}"#;

fuzz_target!(|data: &[u8]| {
    let (mut input, framed) = match data.strip_prefix(b"RAW\n") {
        // A blank line ends whatever header the raw bytes left open.
        Some(raw) => ([raw, b"\r\n\r\n"].concat(), false),
        None => (data.split(|&b| b == b'\n').flat_map(frame).collect(), true),
    };
    input.extend(frame(END.as_bytes()));
    input.extend(frame(EXIT.as_bytes()));
    let output = Output::default();
    // An `Err` is the server ending as the protocol says (e.g. a message other than `exit` after
    // `shutdown`); a panic or a hang is the finding.
    let _ = cute_lsp::serve(Cursor::new(input), output.clone());
    let output = output.0.lock().unwrap();
    let may_end = [&b"exit"[..], b"shutdown"].iter().any(|word| data.windows(word.len()).any(|w| w == *word));
    if framed && !may_end {
        let id = br#""id":"fuzz-end""#;
        let answered = output.windows(id.len()).any(|w| w == id);
        assert!(answered, "the server stopped answering:\n{}", String::from_utf8_lossy(&output));
    }
});

fn frame(body: &[u8]) -> Vec<u8> {
    [format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes(), body].concat()
}

/// The server's output, kept for the check.
#[derive(Clone, Default)]
struct Output(Arc<Mutex<Vec<u8>>>);

impl Write for Output {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
