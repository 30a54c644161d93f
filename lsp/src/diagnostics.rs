//! The front end's diagnostics as LSP diagnostics: the primary span is the range, its label and
//! the help follow the message, each secondary label is related information (a location in the
//! same file), as `cutec check` renders them around the source.

use crate::line_index::LineIndex;
use cute_lang::Diagnostic;
use lsp_types::{DiagnosticRelatedInformation, DiagnosticSeverity, DiagnosticTag, Location, Uri};

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

pub fn to_lsp(d: &Diagnostic, kind: Kind, uri: &Uri, text: &str, index: &LineIndex) -> lsp_types::Diagnostic {
    let (span, label) = &d.primary;
    let mut message = d.message.clone();
    if !label.is_empty() && !d.message.contains(label.as_str()) {
        message.push_str(&format!("\n{label}"));
    }
    if let Some(help) = &d.help {
        message.push_str(&format!("\nhelp: {help}"));
    }
    let related: Vec<DiagnosticRelatedInformation> = d
        .secondary
        .iter()
        .map(|(s, m)| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), index.range(text, s.start, s.end)),
            message: m.clone(),
        })
        .collect();
    lsp_types::Diagnostic {
        range: index.range(text, span.start, span.end),
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
