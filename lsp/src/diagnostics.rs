//! The front end's diagnostics as LSP diagnostics: the primary span is the range, its label and
//! the help follow the message, each secondary label is related information (a location in its
//! file), as `cutec check` renders them around the source.
//!
//! An analysis covers a document and the files it imports, on one span space ([`Program`] maps a
//! span back to its file's URI and position). A diagnostic inside an imported file is shown in the
//! document on the `import` that leads to that file, saying where it is; and in that file, when it
//! is open, at its place.

use crate::line_index::{Encoding, LineIndex};
use crate::workspace::uri_of;
use cute_lang::sources::Sources;
use cute_lang::{Diagnostic, Span};
use lsp_types::{DiagnosticRelatedInformation, DiagnosticSeverity, DiagnosticTag, Location, Range, Uri};
use std::path::Path;

/// What kind of finding a front-end diagnostic is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An error `cutec check` reports.
    Error,
    /// A warning `cutec check` reports too (what the compiler could not check).
    Warning,
    /// An unused binding: reported only in the editor, and shown faded.
    Unused,
}

/// The files of one analysis: each one's URI (the document's for the root; `None` for a file with
/// no absolute path) and line starts.
pub struct Program<'a> {
    pub sources: &'a Sources,
    uris: Vec<Option<Uri>>,
    lines: Vec<LineIndex>,
}

impl<'a> Program<'a> {
    pub fn new(sources: &'a Sources, root: &Uri, encoding: Encoding) -> Program<'a> {
        let files = sources.files();
        let uris = files
            .iter()
            .enumerate()
            .map(|(i, f)| if i == 0 { Some(root.clone()) } else { uri_of(Path::new(&f.name)) })
            .collect();
        let lines = files.iter().map(|f| LineIndex::new(&f.text, encoding)).collect();
        Program { sources, uris, lines }
    }

    pub fn uri(&self, file: usize) -> Option<&Uri> {
        self.uris[file].as_ref()
    }

    /// The file a span of the span space is in, and its range there.
    pub fn range(&self, span: Span) -> (usize, Range) {
        let (file, local) = self.sources.local(span);
        (file, self.lines[file].range(&self.sources.files()[file].text, local.start, local.end))
    }

    pub fn location(&self, span: Span) -> Option<Location> {
        let (file, range) = self.range(span);
        Some(Location::new(self.uri(file)?.clone(), range))
    }

    /// The name of `file` as the document's reader knows it: relative to the document's directory
    /// where it lies below it.
    pub fn name(&self, file: usize) -> String {
        let name = Path::new(&self.sources.files()[file].name);
        let dir = Path::new(&self.sources.root().name).parent().unwrap_or(Path::new(""));
        name.strip_prefix(dir).unwrap_or(name).display().to_string()
    }

    /// `d` as shown in the document: at its place when it is in the document, else on the
    /// `import` of the document that leads to the file it is in.
    pub fn in_root(&self, d: &Diagnostic, kind: Kind) -> lsp_types::Diagnostic {
        let (file, range) = self.range(d.primary.0);
        if file == 0 {
            return self.convert(d, kind, range, String::new(), Vec::new());
        }
        let mut import = d.primary.0;
        while let Some(at) = self.sources.files()[self.sources.file_of(import.start)].imported_at {
            import = at;
            if self.sources.file_of(at.start) == 0 {
                break;
            }
        }
        let start = range.start;
        let prefix = format!("in `{}` at {}:{}: ", self.name(file), start.line + 1, start.character + 1);
        let place = self.location(d.primary.0).map(|location| DiagnosticRelatedInformation {
            location,
            message: if d.primary.1.is_empty() { d.message.clone() } else { d.primary.1.clone() },
        });
        self.convert(d, kind, self.range(import).1, prefix, place.into_iter().collect())
    }

    /// `d` as shown in the imported `file` it is in.
    pub fn in_file(&self, d: &Diagnostic, kind: Kind) -> lsp_types::Diagnostic {
        self.convert(d, kind, self.range(d.primary.0).1, String::new(), Vec::new())
    }

    fn convert(
        &self,
        d: &Diagnostic,
        kind: Kind,
        range: Range,
        prefix: String,
        mut related: Vec<DiagnosticRelatedInformation>,
    ) -> lsp_types::Diagnostic {
        let label = &d.primary.1;
        let mut message = prefix + &d.message;
        if !label.is_empty() && !d.message.contains(label.as_str()) {
            message.push_str(&format!("\n{label}"));
        }
        if let Some(help) = &d.help {
            message.push_str(&format!("\nhelp: {help}"));
        }
        related.extend(d.secondary.iter().filter_map(|(s, m)| {
            Some(DiagnosticRelatedInformation { location: self.location(*s)?, message: m.clone() })
        }));
        lsp_types::Diagnostic {
            range,
            severity: Some(match kind {
                Kind::Error => DiagnosticSeverity::ERROR,
                Kind::Warning | Kind::Unused => DiagnosticSeverity::WARNING,
            }),
            source: Some("cutec".into()),
            message,
            related_information: (!related.is_empty()).then_some(related),
            tags: (kind == Kind::Unused).then(|| vec![DiagnosticTag::UNNECESSARY]),
            ..Default::default()
        }
    }
}
