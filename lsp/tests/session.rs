//! The language server driven over stdio by a scripted client, as an editor drives it: the
//! requests and responses are asserted as snapshots (`tests/snapshots/`); update them with
//! `INSTA_UPDATE=always cargo test -p cute-lsp`.

#[path = "support/client.rs"]
mod client;

use client::{position, Client};
use serde_json::{json, Value};

const SERVER: &str = env!("CARGO_BIN_EXE_cute-lsp");
const SEED: &str = include_str!("../../samples/reduce_sum_tiled_copy.cute");
const SEED_URI: &str = "file:///work/samples/reduce_sum_tiled_copy.cute";
const BROKEN_URI: &str = "file:///work/broken.cute";

/// A kernel adding an f16 tensor to an f32 one: an error with related spans.
const MISMATCHED: &str = "kernel add(a: tensor<f32, gmem, (8):(1)>, b: tensor<f16, gmem, (8):(1)>) {
    let i = thread_idx.x;
    a[i] = a[i] + b[i];
}
";

fn open(client: &mut Client, uri: &str, text: &str) -> Value {
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "cute", "version": 1, "text": text } }),
    );
    client.notification("textDocument/publishDiagnostics").1
}

fn change(client: &mut Client, uri: &str, version: i32, text: &str) -> Value {
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] }),
    );
    client.notification("textDocument/publishDiagnostics").1
}

fn at(uri: &str, position: Value) -> Value {
    json!({ "textDocument": { "uri": uri }, "position": position })
}

#[test]
fn recorded_session() {
    let mut c = Client::start(SERVER, &[]);
    c.initialize(json!({}));

    // The seed sample: no errors.
    let diagnostics = open(&mut c, SEED_URI, SEED);
    assert_eq!(diagnostics["diagnostics"], json!([]));

    // Hover: the host's tiled copy (its TV layout), the kernel's tile of the input (per instance),
    // a kernel parameter (declared type, then the instance's layout), a builtin, a named argument.
    for (needle, n, delta) in [
        ("tiled_copy = make", 0, 0),
        ("gX = ", 0, 0),
        ("gInput: tensor<f32, gmem>", 0, 0),
        ("make_copy_atom", 0, 0),
        ("bits: 32", 0, 0),
        (".partition_S(", 0, 3),
    ] {
        let hover = c.request("textDocument/hover", at(SEED_URI, position(SEED, needle, n, delta)));
        assert!(hover["contents"]["value"].is_string(), "no hover at `{needle}`: {hover}");
    }

    // Definitions: the launch's `tiled_copy` is the host's `let`; `WARP_SIZE` is the `const` item;
    // the launched kernel is the kernel item.
    let tiled_copy = c.request("textDocument/definition", at(SEED_URI, position(SEED, "tiler_mn, tiled_copy)", 0, 10)));
    assert_eq!(tiled_copy["range"]["start"], position(SEED, "tiled_copy = make", 0, 0));
    let warp_size = c.request("textDocument/definition", at(SEED_URI, position(SEED, "WARP_SIZE;", 0, 0)));
    assert_eq!(warp_size["range"]["start"], position(SEED, "WARP_SIZE = 32", 0, 0));
    let kernel = c.request("textDocument/definition", at(SEED_URI, position(SEED, "launch reduce_rows_kernel", 0, 7)));
    assert_eq!(kernel["range"]["start"], position(SEED, "reduce_rows_kernel(gInput: tensor<f32, gmem>", 0, 0));

    let symbols = c.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": SEED_URI } }));
    assert_eq!(symbols.as_array().map(Vec::len), Some(4));

    // A broken file: a type error with related spans, then a syntax error, then fixed.
    let diagnostics = open(&mut c, BROKEN_URI, MISMATCHED);
    assert_eq!(diagnostics["diagnostics"][0]["relatedInformation"].as_array().map(Vec::len), Some(2));
    let missing_semicolon = MISMATCHED.replace("a[i] + b[i];", "a[i] + b[i].to(f32)");
    let diagnostics = change(&mut c, BROKEN_URI, 2, &missing_semicolon);
    assert!(diagnostics["diagnostics"][0]["message"].as_str().unwrap().starts_with("expected `;`"));
    let fixed = MISMATCHED.replace("a[i] + b[i];", "a[i] + b[i].to(f32);");
    let diagnostics = change(&mut c, BROKEN_URI, 3, &fixed);
    assert_eq!(diagnostics["diagnostics"], json!([]));
    // Hover on the fixed file sees the new text.
    let hover = c.request("textDocument/hover", at(BROKEN_URI, position(&fixed, "let i", 0, 4)));
    assert!(hover["contents"]["value"].as_str().unwrap().contains("i32 (run time)"));

    let transcript = c.transcript_text();
    assert!(c.shutdown().success());
    insta::assert_snapshot!("session", transcript);
}

#[test]
fn completion_offers_named_arguments_then_names_then_builtins() {
    let mut c = Client::start(SERVER, &[]);
    c.initialize(json!({}));
    open(&mut c, SEED_URI, SEED);
    // Typing `make_copy_atom(f32, ` in the host: no longer parses, the names come from the last version that did.
    let typing = SEED.replace("make_copy_atom(f32, bits: 32)", "make_copy_atom(f32, ");
    change(&mut c, SEED_URI, 2, &typing);
    let items = c.request("textDocument/completion", at(SEED_URI, position(&typing, "make_copy_atom(f32, ", 0, 20)));
    let labels: Vec<&str> = items.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap()).collect();
    assert_eq!(labels[..2], ["bits:", "op:"]);
    assert!(
        labels.contains(&"reduce_rows_kernel")
            && labels.contains(&"NUM_WARPS")
            && labels.contains(&"local_tile")
            && labels.contains(&"f16")
    );

    // After a dot: the methods and fields.
    let items = c.request("textDocument/completion", at(SEED_URI, position(SEED, "get_slice", 0, 0)));
    let labels: Vec<&str> = items.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap()).collect();
    assert!(labels.contains(&"get_slice") && labels.contains(&"partition_S") && labels.contains(&"shape"));
    assert!(!labels.contains(&"local_tile"));
    assert!(c.shutdown().success());
}

#[test]
fn utf8_positions_when_the_client_offers_them() {
    let mut c = Client::start(SERVER, &[]);
    let init = c.initialize(json!({ "general": { "positionEncodings": ["utf-8", "utf-16"] } }));
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-8");
    // `é` is two bytes: the UTF-8 column of `x` is one more than its UTF-16 column.
    let text = "host h() {\n    /* é */ let x = 1;\n    print(\"{}\", x);\n}\n";
    open(&mut c, "file:///u.cute", text);
    let hover = c.request("textDocument/hover", at("file:///u.cute", json!({ "line": 1, "character": 17 })));
    assert_eq!(
        hover["range"],
        json!({ "start": { "line": 1, "character": 17 }, "end": { "line": 1, "character": 18 } })
    );
    assert!(c.shutdown().success());
}

/// A small deterministic generator (xorshift), so a failure names a reproducible case.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// The server survives any text: mutated samples, deep nesting, control characters, non-ASCII,
/// positions past the end; every version gets its diagnostics and every request an answer.
#[test]
fn survives_any_text() {
    let samples: Vec<String> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples"))
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .collect();
    let pieces = [
        "(", ")", "{", "}", "[", "]", ";", ",", ".", "let ", "_", "?", ":", "\"", "/*", "é", "\0", "0x", "1e999", "->",
        "<", ">", "\n",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut c = Client::start(SERVER, &[]);
    c.initialize(json!({}));
    let uri = "file:///fuzz.cute";
    open(&mut c, uri, "");
    let mut version = 1;
    let mut texts = vec![
        "(".repeat(5000),
        "{".repeat(300) + &"}".repeat(300),
        "let x = ".to_string() + &"-".repeat(3000) + "1;",
        "\u{feff}kernel".into(),
    ];
    for _ in 0..150 {
        let mut text = samples[rng.below(samples.len())].clone();
        for _ in 0..1 + rng.below(4) {
            let mut at = rng.below(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            if rng.below(2) == 0 {
                text.insert_str(at, pieces[rng.below(pieces.len())]);
            } else {
                let mut end = (at + rng.below(40)).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                text.replace_range(at..end, "");
            }
        }
        texts.push(text);
    }
    for text in &texts {
        version += 1;
        let published = change(&mut c, uri, version, text);
        assert_eq!(published["version"], version);
        let lines = text.lines().count() as u32 + 2;
        for _ in 0..3 {
            let position = json!({ "line": rng.below(lines as usize), "character": rng.below(120) });
            for method in ["textDocument/hover", "textDocument/definition", "textDocument/completion"] {
                let response = c.request_response(method, at(uri, position.clone()));
                assert!(response.get("error").is_none(), "{method} failed on:\n{text}\n{response}");
            }
        }
        let symbols = c.request_response("textDocument/documentSymbol", json!({ "textDocument": { "uri": uri } }));
        assert!(symbols.get("error").is_none());
    }
    assert!(c.shutdown().success());
}
