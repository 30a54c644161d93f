//! A program's source files on one span space: the root file at offset 0, each imported file
//! after the one before it, one byte apart (so the end of one file is not the start of the next).
//! Spans stay a pair of offsets through parsing, elaboration and lowering; this map turns one
//! back into its file, line and column, and renders diagnostics with each label in its own file.
//! A program of one file is that file's text at offset 0: its spans are the single-file ones.

use crate::diag::{self, Diagnostic, LineIndex};
use crate::span::Span;
use codespan_reporting::diagnostic::Severity;
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::termcolor;
use std::ops::Range;

#[derive(Clone, Debug, PartialEq)]
pub struct SourceFile {
    /// The name diagnostics and line info give it (a path, for files read from disk); also its
    /// identity: a file imported twice under one name is loaded once.
    pub name: String,
    pub text: String,
    /// Where its offset 0 lies in the program's span space.
    pub base: usize,
    /// The `import` that first brought it in (a span in the importer); `None` for the root.
    pub imported_at: Option<Span>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Sources {
    files: Vec<SourceFile>,
}

impl Sources {
    /// The program of one file, before its imports are loaded.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Sources {
        Sources { files: vec![SourceFile { name: name.into(), text: text.into(), base: 0, imported_at: None }] }
    }

    /// Adds an imported file after the last one; its index.
    pub(crate) fn add(&mut self, name: String, text: String, imported_at: Span) -> usize {
        let last = self.files.last().expect("the root is always there");
        let base = last.base + last.text.len() + 1;
        self.files.push(SourceFile { name, text, base, imported_at: Some(imported_at) });
        self.files.len() - 1
    }

    pub fn root(&self) -> &SourceFile {
        &self.files[0]
    }

    /// The root first, then the imported files in the order they were loaded.
    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    /// The index of the file called `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.files.iter().position(|f| f.name == name)
    }

    /// The index of the file an offset of the span space falls in.
    pub fn file_of(&self, offset: usize) -> usize {
        self.files.partition_point(|f| f.base <= offset).saturating_sub(1)
    }

    /// The file a span falls in and the span within it (clamped to its text).
    pub fn local(&self, span: Span) -> (usize, Span) {
        let index = self.file_of(span.start);
        let f = &self.files[index];
        let clamp = |o: usize| o.saturating_sub(f.base).min(f.text.len());
        (index, Span::new(clamp(span.start), clamp(span.end).max(clamp(span.start))))
    }

    /// A span of file `index` in the program's span space.
    pub fn global(&self, index: usize, local: Span) -> Span {
        let base = self.files[index].base;
        Span::new(base + local.start, base + local.end)
    }

    /// Every file's line starts, for placing many offsets.
    pub fn lines(&self) -> Lines<'_> {
        Lines { sources: self, index: self.files.iter().map(|f| LineIndex::new(&f.text)).collect() }
    }

    /// Renders diagnostics as plain text, each label in its file; an error in an imported file
    /// also points at the `import`s that brought the file in, up to the root.
    pub fn render(&self, diagnostics: &[Diagnostic]) -> String {
        let mut out = termcolor::NoColor::new(Vec::new());
        self.render_into(&mut out, diagnostics, Severity::Error);
        String::from_utf8_lossy(&out.into_inner()).into_owned()
    }

    /// [`diag::emit`] for a program of several files.
    pub fn emit(&self, writer: &mut dyn termcolor::WriteColor, diagnostics: &[Diagnostic]) {
        diag::write_at_once(writer, &mut |b| self.render_into(b, diagnostics, Severity::Error));
    }

    /// [`diag::emit_warnings`] for a program of several files.
    pub fn emit_warnings(&self, writer: &mut dyn termcolor::WriteColor, warnings: &[Diagnostic]) {
        diag::write_at_once(writer, &mut |b| self.render_into(b, warnings, Severity::Warning));
    }

    fn render_into(&self, writer: &mut dyn termcolor::WriteColor, diagnostics: &[Diagnostic], severity: Severity) {
        let mut files = SimpleFiles::new();
        for f in &self.files {
            files.add(f.name.as_str(), f.text.as_str());
        }
        let locate = |span: Span| -> (usize, Range<usize>) {
            let (file, local) = self.local(span);
            (file, local.range())
        };
        let with_chains: Vec<Diagnostic> = diagnostics.iter().map(|d| self.with_import_chain(d)).collect();
        diag::render_files(writer, &files, &locate, &with_chains, severity);
    }

    /// `d` with a label at each `import` between the root and the file of its primary span.
    fn with_import_chain(&self, d: &Diagnostic) -> Diagnostic {
        let mut d = d.clone();
        let mut file = self.file_of(d.primary.0.start);
        while let Some(at) = self.files[file].imported_at {
            let label = format!("`{}` is imported here", self.files[file].name);
            d.secondary.push((at, label));
            file = self.file_of(at.start);
        }
        d
    }
}

/// [`Sources`] with every file's line starts: offsets to file names, lines and columns.
pub struct Lines<'a> {
    sources: &'a Sources,
    index: Vec<LineIndex<'a>>,
}

impl<'a> Lines<'a> {
    /// The file name, 1-based line and column (in characters) of an offset of the span space.
    pub fn locate(&self, offset: usize) -> (&'a str, usize, usize) {
        let (file, local) = self.sources.local(Span::new(offset, offset));
        let (line, col) = self.index[file].line_col(local.start);
        (&self.sources.files[file].name, line, col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_files() -> Sources {
        let mut s = Sources::new("main.cute", "import \"lib.cute\";\nconst A = B;\n");
        s.add("lib.cute".into(), "const B = 1;\n".into(), Span::new(0, 18));
        s
    }

    #[test]
    fn offsets_map_to_their_file() {
        let s = two_files();
        let lib = s.files()[1].base;
        assert_eq!(lib, s.root().text.len() + 1);
        assert_eq!(s.file_of(0), 0);
        assert_eq!(s.file_of(s.root().text.len()), 0, "the end of the root is the root's");
        assert_eq!(s.file_of(lib), 1);
        assert_eq!(s.local(Span::new(lib + 6, lib + 7)), (1, Span::new(6, 7)));
        assert_eq!(s.global(1, Span::new(6, 7)), Span::new(lib + 6, lib + 7));
        assert_eq!(s.lines().locate(lib + 6), ("lib.cute", 1, 7));
        assert_eq!(s.lines().locate(25), ("main.cute", 2, 7));
    }

    /// An error in the imported file is shown there, with the `import` that brought it in.
    #[test]
    fn renders_in_the_right_file_with_the_chain() {
        let s = two_files();
        let lib = s.files()[1].base;
        let text = s.render(&[Diagnostic::error("bad", Span::new(lib + 10, lib + 11), "here")]);
        assert!(text.contains("┌─ lib.cute:1:11"), "{text}");
        assert!(text.contains("main.cute:1:1"), "{text}");
        assert!(text.contains("`lib.cute` is imported here"), "{text}");
    }
}
