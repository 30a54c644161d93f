//! Where the files a document imports come from in the editor: the text of an open document wins
//! over its copy on disk (the importing file sees the unsaved edit), and an import is looked for
//! where `cutec build` looks (beside the importing file, then in each search directory: here the
//! workspace folders). Files are named by their paths; documents by `file:` URIs.

use cute_lang::imports::{read_text, DiskLoader, Loader};
use lsp_types::Uri;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::str::FromStr;

pub struct EditorLoader {
    pub disk: DiskLoader,
    /// The open documents' texts, by path.
    pub open: HashMap<PathBuf, String>,
}

impl Loader for EditorLoader {
    fn load(&mut self, importer: &str, path: &str) -> Result<(String, String), String> {
        let candidates = self.disk.candidates(importer, path);
        for c in &candidates {
            if let Some(text) = self.open.get(c) {
                return Ok((c.display().to_string(), text.clone()));
            }
            if c.is_file() {
                return Ok((c.display().to_string(), read_text(c)?));
            }
        }
        Err(DiskLoader::not_found(&candidates))
    }
}

/// The path of a `file:` URI (percent-decoded, `.` and `..` folded away); `None` for other schemes
/// (an unsaved `untitled:` buffer has no directory to import from).
pub fn path_of(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    // `file:///p` has an empty authority; `file://localhost/p` names this machine.
    let path = &rest[rest.find('/')?..];
    let bytes = decode(path)?;
    let path = PathBuf::from(String::from_utf8(bytes).ok()?);
    path.is_absolute().then(|| fold_dots(&path))
}

/// The `file:` URI of an absolute path.
pub fn uri_of(path: &Path) -> Option<Uri> {
    let text = path.to_str().filter(|_| path.is_absolute())?;
    let mut uri = String::from("file://");
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::from_str(&uri).ok()
}

fn decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

fn fold_dots(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_and_paths_round_trip() {
        let path = Path::new("/work/my samples/gemm é.cute");
        let uri = uri_of(path).unwrap();
        assert_eq!(uri.as_str(), "file:///work/my%20samples/gemm%20%C3%A9.cute");
        assert_eq!(path_of(&uri).unwrap(), path);
        let uri = Uri::from_str("file://localhost/a/./b/../c.cute").unwrap();
        assert_eq!(path_of(&uri).unwrap(), Path::new("/a/c.cute"));
        assert_eq!(path_of(&Uri::from_str("untitled:Untitled-1").unwrap()), None);
        assert_eq!(uri_of(Path::new("relative.cute")), None);
    }

    #[test]
    fn an_open_document_wins_over_the_disk() {
        let dir = std::env::temp_dir().join(format!("cute-lsp-loader-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("lib.cute"), "const A = 1;\n").unwrap();
        let importer = dir.join("main.cute").display().to_string();
        let mut loader = EditorLoader { disk: DiskLoader::default(), open: HashMap::new() };
        assert_eq!(loader.load(&importer, "lib.cute").unwrap().1, "const A = 1;\n");
        loader.open.insert(dir.join("lib.cute"), "const A = 2;\n".into());
        let (name, text) = loader.load(&importer, "./lib.cute").unwrap();
        assert_eq!((name, text.as_str()), (dir.join("lib.cute").display().to_string(), "const A = 2;\n"));
        assert!(loader.load(&importer, "missing.cute").unwrap_err().starts_with("no such file"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
