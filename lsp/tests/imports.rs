//! Documents that import other files: the server finds the imports beside the document and in the
//! workspace folders, an open document's text wins over its file, names resolve across files, and
//! an error in an imported file shows in the document (on the `import`) and in that file.

#[path = "support/client.rs"]
mod client;

use client::{position, Client};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const SERVER: &str = env!("CARGO_BIN_EXE_cute-lsp");

/// Found through the workspace folder (not beside the document, which is in `app/`).
const LIB: &str = "const SCALE = 2.0;\n\nfn scaled(v) {\n    return SCALE * v;\n}\n";
const MAIN: &str = "import \"lib/common.cute\";\n\nhost run() {\n    let x = scaled(3.0);\n    print(\"{}\", x);\n}\n";

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

fn open(client: &mut Client, uri: &str, text: &str) {
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "cute", "version": 1, "text": text } }),
    );
}

fn change(client: &mut Client, uri: &str, version: i32, text: &str) {
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] }),
    );
}

fn at(uri: &str, position: Value) -> Value {
    json!({ "textDocument": { "uri": uri }, "position": position })
}

/// A directory of its own under the system's temporary one, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("cute-lsp-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        std::fs::create_dir_all(dir.join("app")).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_document_sees_the_files_it_imports_and_their_errors() {
    let dir = TempDir::new("imports");
    std::fs::write(dir.0.join("lib/common.cute"), LIB).unwrap();
    let (main_uri, lib_uri) = (uri(&dir.0.join("app/main.cute")), uri(&dir.0.join("lib/common.cute")));
    let mut c = Client::start(SERVER, &[]);
    c.request(
        "initialize",
        json!({ "processId": null, "rootUri": null, "capabilities": {},
                "workspaceFolders": [{ "uri": uri(&dir.0), "name": "w" }] }),
    );
    c.notify("initialized", json!({}));

    // The library from the disk: no "cannot import", and its names resolve into it.
    open(&mut c, &main_uri, MAIN);
    assert_eq!(c.diagnostics_of(&main_uri), json!([]));
    let def = c.request("textDocument/definition", at(&main_uri, position(MAIN, "scaled(3.0)", 0, 0)));
    assert_eq!(def["uri"], lib_uri);
    assert_eq!(def["range"]["start"], position(LIB, "scaled(v)", 0, 0));
    let hover = c.request("textDocument/hover", at(&main_uri, position(MAIN, "scaled(3.0)", 0, 0)));
    let hover = hover["contents"]["value"].as_str().unwrap();
    assert!(hover.contains("defined in `") && hover.contains("common.cute`"), "{hover}");

    // An unsaved edit of the library breaks what the document calls: only the call elaborates
    // it, so the library alone is clean; the document shows the error on its `import`.
    let broken = LIB.replace("SCALE * v", "SCALE * v + true");
    open(&mut c, &lib_uri, &broken);
    let in_main = c.diagnostics_of(&main_uri);
    assert_eq!(in_main.as_array().map(Vec::len), Some(1), "{in_main}");
    assert_eq!(in_main[0]["range"]["start"]["line"], 0, "on the import: {in_main}");
    let message = in_main[0]["message"].as_str().unwrap();
    assert!(message.contains("common.cute` at 4:"), "{message}");
    assert!(!message.contains("cannot import"), "{message}");
    assert_eq!(in_main[0]["relatedInformation"][0]["location"]["uri"], lib_uri);
    // ... and the library, open, shows it at its place.
    let mut in_lib = c.diagnostics_of(&lib_uri);
    while in_lib.as_array().is_some_and(Vec::is_empty) {
        in_lib = c.diagnostics_of(&lib_uri);
    }
    assert_eq!(in_lib[0]["range"]["start"]["line"], 3, "{in_lib}");

    // Fixing the library clears both; closed, it is read from the disk again (which the editor
    // did not save: `scaled` is gone).
    change(&mut c, &lib_uri, 2, LIB);
    assert_eq!(c.diagnostics_of(&main_uri), json!([]));
    std::fs::write(dir.0.join("lib/common.cute"), "const SCALE = 2.0;\n").unwrap();
    c.notify("textDocument/didClose", json!({ "textDocument": { "uri": lib_uri } }));
    let in_main = c.diagnostics_of(&main_uri);
    assert!(in_main[0]["message"].as_str().unwrap().contains("cannot find"), "{in_main}");
    assert!(c.shutdown().success());
}

#[test]
fn a_missing_import_is_an_error_on_it() {
    let dir = TempDir::new("missing");
    let main_uri = uri(&dir.0.join("app/main.cute"));
    let mut c = Client::start(SERVER, &[]);
    c.initialize(json!({}));
    open(&mut c, &main_uri, MAIN);
    let diagnostics = c.diagnostics_of(&main_uri);
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert!(message.starts_with("cannot import `lib/common.cute`: no such file"), "{message}");
    assert_eq!(diagnostics[0]["range"]["start"], position(MAIN, "\"lib", 0, 0));
    // Opening the file (unsaved, not on disk) makes the import work.
    open(&mut c, &uri(&dir.0.join("app/lib/common.cute")), LIB);
    let mut in_main = c.diagnostics_of(&main_uri);
    while in_main != json!([]) {
        in_main = c.diagnostics_of(&main_uri);
    }
    assert!(c.shutdown().success());
}

/// The repository's GEMM samples import their library: no errors, and a name from the library
/// resolves into it.
#[test]
fn the_gemm_sample_and_its_library() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().join("samples");
    let text = std::fs::read_to_string(samples.join("gemm_sm90.cute")).unwrap();
    let lib = std::fs::read_to_string(samples.join("lib/gemm_sm90_common.cute")).unwrap();
    let sample_uri = uri(&samples.join("gemm_sm90.cute"));
    let mut c = Client::start(SERVER, &[]);
    c.initialize(json!({}));
    open(&mut c, &sample_uri, &text);
    let fp8_uri = uri(&samples.join("gemm_sm90_fp8.cute"));
    open(&mut c, &fp8_uri, &std::fs::read_to_string(samples.join("gemm_sm90_fp8.cute")).unwrap());
    for u in [&sample_uri, &fp8_uri] {
        let diagnostics = c.diagnostics_of(u);
        let errors: Vec<&Value> = diagnostics.as_array().unwrap().iter().filter(|d| d["severity"] == 1).collect();
        assert!(errors.is_empty(), "{u}: {errors:?}");
    }
    let def = c.request("textDocument/definition", at(&sample_uri, position(&text, "(BM + BN)", 0, 1)));
    assert_eq!(def["uri"], uri(&samples.join("lib/gemm_sm90_common.cute")));
    assert_eq!(def["range"]["start"], position(&lib, "const BM", 0, 6));
    assert!(c.shutdown().success());
}
