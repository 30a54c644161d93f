//! The server loop: the open documents, the front end run on each version of them, and the
//! answers to the editor's requests.
//!
//! Diagnostics are debounced: a change is analysed once no further change to that document has
//! arrived for [`DEBOUNCE`], so a burst of keystrokes costs one run of the front end, and a
//! request about a document with a change still waiting analyses it first (answers always match
//! the text the editor shows). Opening a document analyses it at once. One thread does it all:
//! the front end takes milliseconds on a 1,000-line file, far less than a keystroke's interval.

use crate::completion::complete;
use crate::diagnostics::{to_lsp, Kind};
use crate::hover::markdown;
use crate::line_index::{Encoding, LineIndex};
use crossbeam_channel::RecvTimeoutError;
use cute_lang::ide::{analyze, Analysis, DefKind};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{Completion, DocumentSymbolRequest, GotoDefinition, HoverRequest, Request as _};
use lsp_types::*;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// How long a document must stay unchanged before it is analysed.
pub const DEBOUNCE: Duration = Duration::from_millis(15);

struct Document {
    version: i32,
    text: String,
    lines: LineIndex,
    /// The front end's results for `text`; `None` while a change waits for [`DEBOUNCE`].
    analysis: Option<Outcome>,
    /// The latest analysis of a version that parsed, for completion while the text does not.
    last_parsed: Option<Rc<Analysis>>,
    /// When the waiting change is to be analysed.
    due: Option<Instant>,
}

/// An analysis, or the message of a panic in the front end (a bug, reported as a diagnostic so the
/// server keeps running).
type Outcome = Result<Rc<Analysis>, String>;

struct Server {
    sender: crossbeam_channel::Sender<Message>,
    encoding: Encoding,
    documents: HashMap<Uri, Document>,
}

pub fn capabilities(encoding: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(match encoding {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }),
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into()]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Runs the server on `connection` until the client shuts it down or goes away.
pub fn run(connection: Connection) -> Result<(), String> {
    let (id, params) = connection.initialize_start().map_err(|e| e.to_string())?;
    let params: InitializeParams =
        serde_json::from_value(params).map_err(|e| format!("bad initialize parameters: {e}"))?;
    // UTF-8 positions are what the front end counts in; UTF-16 is the protocol's default.
    let offers_utf8 = params
        .capabilities
        .general
        .and_then(|g| g.position_encodings)
        .is_some_and(|e| e.contains(&PositionEncodingKind::UTF8));
    let encoding = if offers_utf8 { Encoding::Utf8 } else { Encoding::Utf16 };
    let result = serde_json::json!({
        "capabilities": capabilities(encoding),
        "serverInfo": { "name": "cutec lsp", "version": env!("CARGO_PKG_VERSION") },
    });
    connection.initialize_finish(id, result).map_err(|e| e.to_string())?;
    let mut server = Server { sender: connection.sender.clone(), encoding, documents: HashMap::new() };
    loop {
        let next_due = server.documents.values().filter_map(|d| d.due).min();
        let received = match next_due {
            Some(due) => connection.receiver.recv_timeout(due.saturating_duration_since(Instant::now())),
            None => connection.receiver.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        let message = match received {
            Ok(message) => message,
            Err(RecvTimeoutError::Timeout) => {
                server.analyze_due();
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        };
        match message {
            Message::Request(request) => {
                if connection.handle_shutdown(&request).map_err(|e| e.to_string())? {
                    return Ok(());
                }
                server.request(request);
            }
            Message::Notification(n) if n.method == "exit" => return Ok(()),
            Message::Notification(n) => server.notification(n),
            Message::Response(_) => {}
        }
    }
}

fn analyze_guarded(text: &str) -> Outcome {
    catch_unwind(AssertUnwindSafe(|| analyze(text))).map(Rc::new).map_err(|panic| {
        let message =
            panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned());
        message.unwrap_or_else(|| "the front end panicked".into())
    })
}

impl Server {
    fn send(&self, message: impl Into<Message>) {
        // The client going away ends the loop at the next receive.
        let _ = self.sender.send(message.into());
    }

    fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Ok(p) = n.extract::<DidOpenTextDocumentParams>(DidOpenTextDocument::METHOD) {
                    let doc = p.text_document;
                    self.set_text(doc.uri.clone(), doc.version, doc.text, None);
                    self.analyze(&doc.uri);
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Ok(p) = n.extract::<DidChangeTextDocumentParams>(DidChangeTextDocument::METHOD) {
                    // Full synchronisation: the last change holds the whole text.
                    if let Some(change) = p.content_changes.into_iter().last() {
                        self.set_text(
                            p.text_document.uri,
                            p.text_document.version,
                            change.text,
                            Some(Instant::now() + DEBOUNCE),
                        );
                    }
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(p) = n.extract::<DidCloseTextDocumentParams>(DidCloseTextDocument::METHOD) {
                    self.documents.remove(&p.text_document.uri);
                    self.publish(p.text_document.uri, Vec::new(), None);
                }
            }
            _ => {}
        }
    }

    fn set_text(&mut self, uri: Uri, version: i32, text: String, due: Option<Instant>) {
        let lines = LineIndex::new(&text, self.encoding);
        let last_parsed = self.documents.remove(&uri).and_then(|d| d.last_parsed);
        self.documents.insert(uri, Document { version, text, lines, analysis: None, last_parsed, due });
    }

    fn analyze_due(&mut self) {
        let now = Instant::now();
        let due: Vec<Uri> =
            self.documents.iter().filter(|(_, d)| d.due.is_some_and(|t| t <= now)).map(|(u, _)| u.clone()).collect();
        for uri in due {
            self.analyze(&uri);
        }
    }

    /// Runs the front end on the document's text unless that is done, and publishes its diagnostics.
    fn analyze(&mut self, uri: &Uri) {
        let Some(doc) = self.documents.get_mut(uri) else { return };
        if doc.analysis.is_some() {
            return;
        }
        let outcome = analyze_guarded(&doc.text);
        doc.due = None;
        if let Ok(a) = &outcome {
            if a.parsed() {
                doc.last_parsed = Some(a.clone());
            }
        }
        doc.analysis = Some(outcome.clone());
        let diagnostics = match &outcome {
            Ok(a) => {
                let errors = a.errors.iter().map(|d| to_lsp(d, Kind::Error, uri, &doc.text, &doc.lines));
                errors.chain(a.warnings.iter().map(|d| to_lsp(d, Kind::Unused, uri, &doc.text, &doc.lines))).collect()
            }
            Err(panic) => vec![lsp_types::Diagnostic {
                severity: Some(DiagnosticSeverity::ERROR),
                source: Some("cutec".into()),
                message: format!("internal error in the front end: {panic}\nhelp: this is a bug in cutec; please report it with this file"),
                ..Default::default()
            }],
        };
        let version = doc.version;
        self.publish(uri.clone(), diagnostics, Some(version));
    }

    fn publish(&self, uri: Uri, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let params = PublishDiagnosticsParams { uri, diagnostics, version };
        self.send(Notification::new(PublishDiagnostics::METHOD.into(), params));
    }

    /// The document, analysed, with the byte offset of `position` in it.
    fn at(&mut self, uri: &Uri, position: Position) -> Option<(&Document, usize)> {
        self.analyze(uri);
        let doc = self.documents.get(uri)?;
        Some((doc, doc.lines.offset(&doc.text, position)))
    }

    fn request(&mut self, request: Request) {
        let id = request.id.clone();
        // A bug in a handler answers its request with an error rather than ending the session.
        let answer = catch_unwind(AssertUnwindSafe(|| self.answer(request)));
        let response = match answer {
            Ok(Ok(result)) => Response::new_ok(id, result),
            Ok(Err((code, message))) => Response::new_err(id, code as i32, message),
            Err(_) => {
                Response::new_err(id, ErrorCode::InternalError as i32, "internal error in the language server".into())
            }
        };
        self.send(response);
    }

    fn answer(&mut self, request: Request) -> Result<serde_json::Value, (ErrorCode, String)> {
        let invalid = |e: serde_json::Error| (ErrorCode::InvalidParams, e.to_string());
        let json = |v: serde_json::Result<serde_json::Value>| v.map_err(|e| (ErrorCode::InternalError, e.to_string()));
        match request.method.as_str() {
            HoverRequest::METHOD => {
                let p: HoverParams = serde_json::from_value(request.params).map_err(invalid)?;
                let at = p.text_document_position_params;
                json(serde_json::to_value(self.hover(&at.text_document.uri, at.position)))
            }
            GotoDefinition::METHOD => {
                let p: GotoDefinitionParams = serde_json::from_value(request.params).map_err(invalid)?;
                let at = p.text_document_position_params;
                json(serde_json::to_value(self.definition(&at.text_document.uri, at.position)))
            }
            DocumentSymbolRequest::METHOD => {
                let p: DocumentSymbolParams = serde_json::from_value(request.params).map_err(invalid)?;
                json(serde_json::to_value(self.symbols(&p.text_document.uri)))
            }
            Completion::METHOD => {
                let p: CompletionParams = serde_json::from_value(request.params).map_err(invalid)?;
                let at = p.text_document_position;
                json(serde_json::to_value(self.completion(&at.text_document.uri, at.position)))
            }
            other => Err((ErrorCode::MethodNotFound, format!("`cutec lsp` does not handle `{other}`"))),
        }
    }

    fn analysis(doc: &Document) -> Option<&Analysis> {
        doc.analysis.as_ref()?.as_ref().ok().map(|a| &**a)
    }

    fn hover(&mut self, uri: &Uri, position: Position) -> Option<Hover> {
        let (doc, offset) = self.at(uri, position)?;
        let hover = Self::analysis(doc)?.hover(offset)?;
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: markdown(&hover.subject),
            }),
            range: Some(doc.lines.range(&doc.text, hover.span.start, hover.span.end)),
        })
    }

    fn definition(&mut self, uri: &Uri, position: Position) -> Option<GotoDefinitionResponse> {
        let (doc, offset) = self.at(uri, position)?;
        let def = Self::analysis(doc)?.definition(offset)?;
        Some(GotoDefinitionResponse::Scalar(Location::new(
            uri.clone(),
            doc.lines.range(&doc.text, def.span.start, def.span.end),
        )))
    }

    fn symbols(&mut self, uri: &Uri) -> Option<DocumentSymbolResponse> {
        self.analyze(uri);
        let doc = self.documents.get(uri)?;
        let items = Self::analysis(doc)?.items();
        #[allow(deprecated)] // `deprecated` is a required field, superseded by `tags`.
        let symbols = items
            .into_iter()
            .map(|d| DocumentSymbol {
                name: d.name.clone(),
                detail: d.declared.clone(),
                kind: if d.kind == DefKind::Const { SymbolKind::CONSTANT } else { SymbolKind::FUNCTION },
                tags: None,
                deprecated: None,
                range: doc.lines.range(&doc.text, d.extent.start, d.extent.end),
                selection_range: doc.lines.range(&doc.text, d.span.start, d.span.end),
                children: None,
            })
            .collect();
        Some(DocumentSymbolResponse::Nested(symbols))
    }

    fn completion(&mut self, uri: &Uri, position: Position) -> Option<CompletionResponse> {
        let (doc, offset) = self.at(uri, position)?;
        let current = Self::analysis(doc).filter(|a| a.parsed());
        let names = current.or(doc.last_parsed.as_deref());
        Some(CompletionResponse::Array(complete(&doc.text, offset, names, current.is_some())))
    }
}
