//! `cutec build -D NAME=VALUE`: the value of a top-level `const` item replaced before compiling
//! (specialization from the command line or Python's `cutec.compile(consts=...)`).
//!
//! The replacement is made in the source text, at the span of the item's value expression, so the
//! compiler sees an ordinary file: every check and diagnostic applies to the new value, and a
//! diagnostic there shows the line as compiled. A value must be one line, so line numbers stay.

use crate::ast::Item;
use crate::imports::Loader;

/// One `NAME=VALUE` of the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstOverride {
    pub name: String,
    pub value: String,
}

impl std::str::FromStr for ConstOverride {
    type Err = String;

    /// `NAME=VALUE`, VALUE an expression of one line (`128`, `(64, 32)`, `true`).
    fn from_str(arg: &str) -> Result<ConstOverride, String> {
        let Some((name, value)) = arg.split_once('=') else {
            return Err(format!("`{arg}` is not NAME=VALUE (for example `-D BM=128`)"));
        };
        let (name, value) = (name.trim(), value.trim());
        let ident = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident {
            return Err(format!("`{name}` is not a const's name (a letter or `_`, then letters, digits, `_`)"));
        }
        if value.is_empty() || value.contains(['\n', '\r']) {
            return Err(format!(
                "the value of `{name}` must be an expression on one line (for example `-D {name}=128`)"
            ));
        }
        Ok(ConstOverride { name: name.to_string(), value: value.to_string() })
    }
}

/// `source` with each override's value put in place of its `const` item's value. A source that does
/// not parse is returned as it is (compiling it reports why). Errors: a name that is no top-level
/// `const` (the message lists those there are), a name given twice, a value that is not one
/// expression.
pub fn apply(source: &str, overrides: &[ConstOverride]) -> Result<String, String> {
    check_all(overrides)?;
    let mut found = vec![false; overrides.len()];
    let mut consts = Vec::new();
    let Some(out) = apply_found(source, overrides, &mut found, &mut consts) else { return Ok(source.to_string()) };
    match found.iter().position(|f| !f) {
        Some(k) => Err(not_found(&overrides[k], &consts, "the source has")),
        None => Ok(out),
    }
}

/// The overrides applied to every file of a program as [`Loader`] gives it (the root through
/// [`Overriding::root`]): a `const` of an imported file is overridden in that file.
pub struct Overriding<'a> {
    inner: &'a mut dyn Loader,
    overrides: &'a [ConstOverride],
    /// Per override, the file whose `const` it replaced.
    found: Vec<Option<String>>,
    /// Per override, a second file defining its `const`: the program is ambiguous.
    again: Vec<Option<String>>,
    /// The names of every top-level `const` seen.
    consts: Vec<String>,
    /// A file did not parse (compiling it reports why): its `const`s are unknown.
    unparsed: bool,
    /// The files seen (a file two others import is loaded once per import, and counted once).
    files: Vec<String>,
}

impl<'a> Overriding<'a> {
    /// Checks the overrides (no name twice, each value one expression).
    pub fn new(inner: &'a mut dyn Loader, overrides: &'a [ConstOverride]) -> Result<Overriding<'a>, String> {
        check_all(overrides)?;
        let n = overrides.len();
        Ok(Overriding {
            inner,
            overrides,
            found: vec![None; n],
            again: vec![None; n],
            consts: Vec::new(),
            unparsed: false,
            files: Vec::new(),
        })
    }

    /// The root file's text, overridden.
    pub fn root(&mut self, name: &str, text: &str) -> String {
        self.apply_to(name, text)
    }

    fn apply_to(&mut self, name: &str, text: &str) -> String {
        let again = self.files.iter().any(|f| f == name);
        if !again {
            self.files.push(name.to_string());
        }
        let mut here = vec![false; self.overrides.len()];
        let Some(out) = apply_found(text, self.overrides, &mut here, &mut self.consts) else {
            self.unparsed = true;
            return text.to_string();
        };
        if again {
            return out;
        }
        for (k, _) in here.iter().enumerate().filter(|(_, h)| **h) {
            match &self.found[k] {
                None => self.found[k] = Some(name.to_string()),
                Some(_) => self.again[k] = Some(name.to_string()),
            }
        }
        out
    }

    /// Every override replaced one `const`: else which had none, or which had two (in which files).
    pub fn finish(self) -> Result<(), String> {
        for (k, o) in self.overrides.iter().enumerate() {
            match (&self.found[k], &self.again[k]) {
                (None, _) if self.unparsed => {}
                (None, _) => {
                    let whose = if self.files.len() > 1 { "the program has" } else { "the source has" };
                    return Err(not_found(o, &self.consts, whose));
                }
                (Some(first), Some(second)) => {
                    return Err(format!(
                        "-D {}: both `{first}` and `{second}` define `const {}`; the program must define it once",
                        o.name, o.name
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }
}

impl Loader for Overriding<'_> {
    fn load(&mut self, importer: &str, path: &str) -> Result<(String, String), String> {
        let (name, text) = self.inner.load(importer, path)?;
        let text = self.apply_to(&name, &text);
        Ok((name, text))
    }
}

/// No name is given twice, and each value is one expression.
fn check_all(overrides: &[ConstOverride]) -> Result<(), String> {
    for (k, o) in overrides.iter().enumerate() {
        if overrides[..k].iter().any(|p| p.name == o.name) {
            return Err(format!("`{}` is given twice (-D {}=...)", o.name, o.name));
        }
        check_value(o)?;
    }
    Ok(())
}

fn not_found(o: &ConstOverride, consts: &[String], whose: &str) -> String {
    let known =
        if consts.is_empty() { "it has none".to_string() } else { format!("its consts: {}", consts.join(", ")) };
    format!("-D {}: {whose} no top-level `const {}` to override ({known})", o.name, o.name)
}

/// `source` with the overrides whose `const` it defines applied (marked in `found`); the names of
/// its `const`s are added to `consts`. `None` for a source that does not parse.
fn apply_found(
    source: &str,
    overrides: &[ConstOverride],
    found: &mut [bool],
    consts: &mut Vec<String>,
) -> Option<String> {
    let file = crate::parse(source).ok()?;
    let mut edits = Vec::new();
    for item in &file.items {
        let Item::Const(c) = item else { continue };
        consts.push(c.name.name.clone());
        if let Some(k) = overrides.iter().position(|o| o.name == c.name.name) {
            found[k] = true;
            edits.push((c.value.span, overrides[k].value.as_str()));
        }
    }
    edits.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    let mut out = source.to_string();
    for (span, value) in edits {
        out.replace_range(span.range(), value);
    }
    Some(out)
}

/// The value parses as exactly one expression: `const NAME = VALUE;` alone is one const item whose
/// value ends where VALUE does (so `1; kernel ...` or `1 // x` is refused).
fn check_value(o: &ConstOverride) -> Result<(), String> {
    let prefix = format!("const {} = ", o.name);
    let text = format!("{prefix}{};", o.value);
    let bad = |why: String| format!("-D {}={}: the value is not one expression: {why}", o.name, o.value);
    let file = crate::parse(&text).map_err(|d| bad(d.message))?;
    match file.items.as_slice() {
        [Item::Const(c)] if c.value.span.range() == (prefix.len()..prefix.len() + o.value.len()) => Ok(()),
        _ => Err(bad("it does not end where the value does".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(arg: &str) -> ConstOverride {
        arg.parse().unwrap()
    }

    const SRC: &str = "const BM = 64;\nconst TILE: layout = (8, 4);\nkernel k(g: tensor<f32, gmem>) {\n}\n";

    #[test]
    fn replaces_the_values_in_place() {
        let out = apply(SRC, &[o("TILE=(16, 2)"), o("BM = 128")]).unwrap();
        assert_eq!(out, SRC.replace("= 64", "= 128").replace("(8, 4)", "(16, 2)"));
        assert_eq!(apply(SRC, &[]).unwrap(), SRC);
    }

    #[test]
    fn refuses_unknown_repeated_and_bad() {
        let e = apply(SRC, &[o("BN=1")]).unwrap_err();
        assert_eq!(e, "-D BN: the source has no top-level `const BN` to override (its consts: BM, TILE)");
        assert_eq!(apply(SRC, &[o("BM=1"), o("BM=2")]).unwrap_err(), "`BM` is given twice (-D BM=...)");
        for bad in ["BM=1; kernel x() {}", "BM=1 // c", "BM=(1,", "BM=1 2"] {
            let e = apply(SRC, &[o(bad)]).unwrap_err();
            assert!(e.starts_with(&format!("-D {}: the value is not one expression", bad.replace("= ", "="))), "{e}");
        }
        assert!("BM".parse::<ConstOverride>().unwrap_err().contains("is not NAME=VALUE"));
        assert!("9x=1".parse::<ConstOverride>().unwrap_err().contains("is not a const's name"));
        assert!("BM=".parse::<ConstOverride>().unwrap_err().contains("must be an expression on one line"));
    }

    /// A const of an imported file is overridden there; one that two files define is ambiguous.
    #[test]
    fn overrides_the_const_of_an_imported_file() {
        let mut files =
            crate::imports::MemoryLoader::from([("lib.cute", "const BK = 64;\n"), ("b.cute", "const BK = 1;\n")]);
        let overrides = [o("BK=128")];
        let mut loader = Overriding::new(&mut files, &overrides).unwrap();
        assert_eq!(loader.root("main.cute", "import \"lib.cute\";\n"), "import \"lib.cute\";\n");
        assert_eq!(loader.load("main.cute", "lib.cute").unwrap().1, "const BK = 128;\n");
        loader.finish().unwrap();
        // A file imported by two files is one definition.
        let mut loader = Overriding::new(&mut files, &overrides).unwrap();
        loader.root("main.cute", "import \"lib.cute\";\n");
        assert_eq!(loader.load("main.cute", "lib.cute").unwrap().1, "const BK = 128;\n");
        assert_eq!(loader.load("other.cute", "lib.cute").unwrap().1, "const BK = 128;\n");
        loader.finish().unwrap();
        let mut loader = Overriding::new(&mut files, &overrides).unwrap();
        loader.load("main.cute", "lib.cute").unwrap();
        loader.load("main.cute", "b.cute").unwrap();
        let e = loader.finish().unwrap_err();
        assert_eq!(e, "-D BK: both `lib.cute` and `b.cute` define `const BK`; the program must define it once");
        let bm = [o("BM=1")];
        let mut loader = Overriding::new(&mut files, &bm).unwrap();
        loader.root("main.cute", "import \"lib.cute\";\n");
        loader.load("main.cute", "lib.cute").unwrap();
        let e = loader.finish().unwrap_err();
        assert_eq!(e, "-D BM: the program has no top-level `const BM` to override (its consts: BK)");
    }

    #[test]
    fn leaves_a_source_that_does_not_parse() {
        assert_eq!(apply("const = ;", &[o("BM=1")]).unwrap(), "const = ;");
    }
}
