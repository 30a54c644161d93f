//! Diagnostics: one error with its labels and help, rendered through codespan-reporting.

use crate::span::Span;
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label, LabelStyle, Severity};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, termcolor};
use std::ops::Range;

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub message: String,
    pub primary: (Span, String),
    pub secondary: Vec<(Span, String)>,
    pub help: Option<String>,
    /// A warning travelling with errors (a failed build's list: [`render`] and [`emit`] print it
    /// as `warning:`); the warnings of a build that succeeds are a list of their own.
    pub warning: bool,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>, span: Span, label: impl Into<String>) -> Self {
        Diagnostic {
            message: message.into(),
            primary: (span, label.into()),
            secondary: Vec::new(),
            help: None,
            warning: false,
        }
    }

    /// The same diagnostic, to be printed as a warning among errors.
    pub fn into_warning(mut self) -> Self {
        self.warning = true;
        self
    }

    /// The same diagnostic with every span moved `by` bytes later.
    pub(crate) fn shifted(mut self, by: usize) -> Self {
        let shift = |s: &mut Span| *s = Span::new(s.start + by, s.end + by);
        shift(&mut self.primary.0);
        self.secondary.iter_mut().for_each(|(s, _)| shift(s));
        self
    }

    pub fn with_secondary(mut self, span: Span, label: impl Into<String>) -> Self {
        self.secondary.push((span, label.into()));
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// The codespan form, each span placed by `locate` (its file and the byte range there).
    fn to_codespan(&self, severity: Severity, locate: &dyn Fn(Span) -> (usize, Range<usize>)) -> CsDiagnostic<usize> {
        let label = |style: LabelStyle, (span, message): &(Span, String)| {
            let (file, range) = locate(*span);
            Label::new(style, file, range).with_message(message)
        };
        let mut labels = vec![label(LabelStyle::Primary, &self.primary)];
        labels.extend(self.secondary.iter().map(|l| label(LabelStyle::Secondary, l)));
        let mut d = CsDiagnostic::new(severity).with_message(&self.message).with_labels(labels);
        if let Some(help) = &self.help {
            d = d.with_notes(vec![format!("help: {help}")]);
        }
        d
    }
}

/// Renders diagnostics as plain text (`error: ...` then `┌─ file:line:col` and the source snippet).
pub fn render(file_name: &str, source: &str, diagnostics: &[Diagnostic]) -> String {
    let mut out = termcolor::NoColor::new(Vec::new());
    render_into(&mut out, file_name, source, diagnostics, Severity::Error);
    String::from_utf8_lossy(&out.into_inner()).into_owned()
}

/// [`emit`] for warnings (`warning: ...`): what the compiler could not check; the build goes on.
pub fn emit_warnings(writer: &mut dyn termcolor::WriteColor, file_name: &str, source: &str, warnings: &[Diagnostic]) {
    emit_as(writer, file_name, source, warnings, Severity::Warning);
}

/// Writes diagnostics to a terminal-capable writer (colour where the writer supports it).
///
/// They are rendered into a buffer (with ANSI colours where the writer takes colour, as a
/// terminal stream writes them) and written at once: codespan writes a few bytes at a time, and
/// an unbuffered stderr made that one `write` per character of a long source line.
pub fn emit(writer: &mut dyn termcolor::WriteColor, file_name: &str, source: &str, diagnostics: &[Diagnostic]) {
    emit_as(writer, file_name, source, diagnostics, Severity::Error);
}

fn emit_as(
    writer: &mut dyn termcolor::WriteColor,
    file_name: &str,
    source: &str,
    diagnostics: &[Diagnostic],
    severity: Severity,
) {
    write_at_once(writer, &mut |buffer| render_into(buffer, file_name, source, diagnostics, severity));
}

/// What `render` writes, rendered into a buffer (in colour where `writer` takes it) and written
/// to `writer` with one `write`.
pub(crate) fn write_at_once(
    writer: &mut dyn termcolor::WriteColor,
    render: &mut dyn FnMut(&mut dyn termcolor::WriteColor),
) {
    let mut buffer = if writer.supports_color() { termcolor::Buffer::ansi() } else { termcolor::Buffer::no_color() };
    render(&mut buffer);
    let _ = writer.write_all(buffer.as_slice());
    let _ = writer.flush();
}

fn render_into(
    writer: &mut dyn termcolor::WriteColor,
    file_name: &str,
    source: &str,
    diagnostics: &[Diagnostic],
    severity: Severity,
) {
    let mut files = SimpleFiles::new();
    files.add(file_name, source);
    // A span past the end (from a truncated file) must not abort rendering: clamp it.
    let clamp = |s: Span| (0, s.start.min(source.len())..s.end.min(source.len()).max(s.start.min(source.len())));
    render_files(writer, &files, &clamp, diagnostics, severity);
}

/// Renders diagnostics whose spans `locate` places in `files` (one file, or a program's several:
/// [`crate::sources::Sources`]).
pub(crate) fn render_files(
    writer: &mut dyn termcolor::WriteColor,
    files: &SimpleFiles<&str, &str>,
    locate: &dyn Fn(Span) -> (usize, Range<usize>),
    diagnostics: &[Diagnostic],
    severity: Severity,
) {
    let config = term::Config::default();
    for d in diagnostics {
        let severity = if d.warning { Severity::Warning } else { severity };
        let _ = term::emit(writer, &config, files, &d.to_codespan(severity, locate));
    }
}

/// `1 argument`, `2 arguments`: a count with its noun in the right number.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A noun phrase with its indefinite article: `an i32`, `a layout`.
pub fn article(phrase: &str) -> String {
    // Spelled-out letters count by their sound: "an f32" ("eff"), "a u8" ("you").
    let mut chars = phrase.chars();
    let first = chars.next().unwrap_or(' ');
    let second = chars.next().unwrap_or(' ');
    let vowel_sound = "aeioAEIO".contains(first) || (first == 'f' && second.is_ascii_digit());
    if vowel_sound {
        format!("an {phrase}")
    } else {
        format!("a {phrase}")
    }
}

/// 1-based line and column of a byte offset (columns count characters).
pub fn line_col(source: &str, offset: usize) -> (usize, usize) {
    LineIndex::new(source).line_col(offset)
}

/// Where a source's lines start, for turning many offsets into lines and columns: the lowering
/// gives every op a location, and scanning the text before each one was half of its time.
pub struct LineIndex<'a> {
    source: &'a str,
    /// The byte offset of each line's first character.
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(source: &'a str) -> LineIndex<'a> {
        let starts = std::iter::once(0).chain(source.match_indices('\n').map(|(i, _)| i + 1)).collect();
        LineIndex { source, starts }
    }

    /// 1-based line and column of a byte offset (columns count characters).
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(self.source, offset.min(self.source.len()));
        // The line is the last one that starts at or before the offset (the first always does).
        let line = self.starts.partition_point(|&start| start <= offset);
        let col = self.source[self.starts[line - 1]..offset].chars().count() + 1;
        (line, col)
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The closest name within a small edit distance, for "did you mean" help.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.len() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance counting a swap of neighbouring characters as one edit (optimal string
/// alignment), so `f23` is one edit from `f32`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(did_you_mean("thread_id", ["thread_idx", "block_idx"]), Some("thread_idx"));
        assert_eq!(did_you_mean("zzz", ["thread_idx"]), None);
        assert_eq!(did_you_mean("f23", ["f32", "f16"]), Some("f32"));
    }

    /// A writer that counts its `write` calls, taking colour or not as a terminal stream would.
    struct CountingWriter {
        bytes: Vec<u8>,
        writes: usize,
        color: bool,
    }

    impl std::io::Write for CountingWriter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.writes += 1;
            self.bytes.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl termcolor::WriteColor for CountingWriter {
        fn supports_color(&self) -> bool {
            self.color
        }
        fn set_color(&mut self, spec: &termcolor::ColorSpec) -> std::io::Result<()> {
            if self.color {
                termcolor::Ansi::new(&mut *self).set_color(spec)?;
            }
            Ok(())
        }
        fn reset(&mut self) -> std::io::Result<()> {
            if self.color {
                termcolor::Ansi::new(&mut *self).reset()?;
            }
            Ok(())
        }
    }

    /// An error on a 1 MB line is written with one `write`, the same bytes (and colours) as
    /// rendering straight to the writer gives.
    #[test]
    fn emit_writes_once() {
        let source = format!("let x = {};\n", "a".repeat(1 << 20));
        let diags = [Diagnostic::error("unknown name", Span::new(8, 8 + (1 << 20)), "here").with_help("rename it")];
        for color in [false, true] {
            let mut direct = CountingWriter { bytes: Vec::new(), writes: 0, color };
            render_into(&mut direct, "big.cute", &source, &diags, Severity::Error);
            let mut out = CountingWriter { bytes: Vec::new(), writes: 0, color };
            emit(&mut out, "big.cute", &source, &diags);
            assert_eq!(out.writes, 1, "color {color}");
            assert!(direct.writes > 1000, "color {color}: {} writes", direct.writes);
            assert_eq!(out.bytes, direct.bytes, "color {color}");
            assert_eq!(color, out.bytes.contains(&0x1b), "color {color}");
        }
    }

    #[test]
    fn line_and_column() {
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }

    /// Every offset of texts with empty lines, a trailing newline and multi-byte characters (an
    /// offset inside one counts as its start) against counting the newlines before it.
    #[test]
    fn line_index_agrees_with_counting() {
        for text in ["", "\n", "ab\ncd", "a\n\n\nb\n", "\u{e9}t\u{e9}\n\u{1F600}x\ny", "x\r\ny\n"] {
            let index = LineIndex::new(text);
            for offset in 0..=text.len() + 2 {
                let before = &text[..floor_char_boundary(text, offset.min(text.len()))];
                let line = before.matches('\n').count() + 1;
                let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                assert_eq!(index.line_col(offset), (line, col), "{text:?} at {offset}");
            }
        }
    }
}
