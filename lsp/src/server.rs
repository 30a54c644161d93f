//! The server loop: the open documents, the front end run on each version of them, and the
//! answers to the editor's requests.
//!
//! Diagnostics are debounced: a change is analysed once no further change to that document has
//! arrived for [`DEBOUNCE`], so a burst of keystrokes costs one run of the front end. Opening a
//! document analyses it at once.
//!
//! The front end runs on a thread of its own per analysis (at most one per document), never on
//! the loop's: a file that takes long to elaborate must not freeze the answers to other messages.
//! A request about a document whose analysis is not finished waits for it at most
//! [`REQUEST_WAIT`] (answers match the text the editor shows whenever the front end is quick), then
//! answers from the last finished analysis. A result for a text that has changed since is dropped
//! and the newest text analysed instead: a change (or closing the document) cancels the running
//! analysis, which stops at its next step of compile-time work (`cute_lang::Budget`), and the
//! compile budget bounds any one analysis, so no text keeps a thread busy for long.
//!
//! A document's imports are read as `cutec build` reads them, beside it and then in the workspace
//! folders, with the open documents' texts in place of their files ([`EditorLoader`]). A change to
//! an open document (or its opening or closing) makes the documents that import it due again.

use crate::completion::complete;
use crate::diagnostics::{Kind, Program};
use crate::hover::markdown;
use crate::line_index::{Encoding, LineIndex};
use crate::workspace::{path_of, EditorLoader};
use crossbeam_channel::{Receiver, Sender};
use cute_lang::ide::{analyze_files, Analysis, DefKind, Subject};
use cute_lang::imports::DiskLoader;
use cute_lang::sources::Sources;
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{Completion, DocumentSymbolRequest, GotoDefinition, HoverRequest, Request as _};
use lsp_types::*;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a document must stay unchanged before it is analysed.
pub const DEBOUNCE: Duration = Duration::from_millis(15);

/// How long a request waits for its document's analysis before answering from the previous one.
const REQUEST_WAIT: Duration = Duration::from_millis(40);

struct Document {
    version: i32,
    text: String,
    /// Its path, for a `file:` document: imports are found beside it, and it is imported by it.
    path: Option<PathBuf>,
    lines: Arc<LineIndex>,
    /// Which text this is: analyses of other generations are stale.
    generation: u64,
    /// The latest finished analysis, of `text` or of an earlier text.
    analysed: Option<Analysed>,
    /// The latest analysis of a version that parsed, for completion while the text does not.
    last_parsed: Option<Arc<Analysis>>,
    /// When the text is to be analysed; `None` once its analysis has started.
    due: Option<Instant>,
    /// The cancellation flag of the analysis of this document running on its thread, if one runs.
    running: Option<Arc<AtomicBool>>,
}

impl Document {
    /// Stops the document's running analysis, if one runs: its text is stale, or nobody waits for it.
    fn cancel_analysis(&self) {
        if let Some(cancel) = &self.running {
            cancel.store(true, Ordering::Relaxed);
        }
    }
}

/// A finished analysis with the text it analysed (positions in answers refer to that text).
struct Analysed {
    generation: u64,
    text: Arc<str>,
    lines: Arc<LineIndex>,
    outcome: Outcome,
}

/// An analysis, or the message of a panic in the front end (a bug, reported as a diagnostic so the
/// server keeps running).
type Outcome = Result<Arc<Analysis>, String>;

/// What an analysis thread sends back: the document, the generation of the text it analysed, and
/// the outcome.
type Finished = (Uri, u64, Outcome);

struct Server {
    sender: Sender<Message>,
    encoding: Encoding,
    documents: HashMap<Uri, Document>,
    generations: u64,
    finished_sender: Sender<Finished>,
    finished: Receiver<Finished>,
    /// The compile budget of each analysis, in steps.
    budget: u64,
    /// Where imports are looked for after beside the importing file: the workspace folders.
    search_dirs: Vec<PathBuf>,
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

/// Runs the server on `connection` until the client shuts it down or goes away, each analysis
/// under a compile budget of `budget` steps.
pub fn run(connection: Connection, budget: u64) -> Result<(), String> {
    let Some((encoding, search_dirs)) = initialize(&connection) else { return Ok(()) };
    let (finished_sender, finished) = crossbeam_channel::unbounded();
    let mut server = Server {
        sender: connection.sender.clone(),
        encoding,
        documents: HashMap::new(),
        generations: 0,
        finished_sender,
        finished,
        budget,
        search_dirs,
    };
    loop {
        let next_due = server.documents.values().filter(|d| d.running.is_none()).filter_map(|d| d.due).min();
        let timeout = next_due.map_or(Duration::from_secs(3600), |due| due.saturating_duration_since(Instant::now()));
        let message = crossbeam_channel::select! {
            recv(connection.receiver) -> message => match message {
                Ok(message) => message,
                Err(_) => return Ok(()),
            },
            recv(server.finished) -> finished => {
                if let Ok(finished) = finished {
                    server.install(finished);
                }
                continue;
            },
            default(timeout) => {
                server.analyze_due();
                continue;
            },
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

/// Answers requests until a valid `initialize` (the handshake): the position encoding and the
/// workspace folders; `None` if the client goes away first. A bad `initialize` is answered with an
/// invalid-params error, and the client may try again.
fn initialize(connection: &Connection) -> Option<(Encoding, Vec<PathBuf>)> {
    loop {
        let request = match connection.receiver.recv().ok()? {
            Message::Request(request) => request,
            Message::Notification(n) if n.method == "exit" => return None,
            _ => continue,
        };
        if request.method != "initialize" {
            let message = "the server is not initialized yet".to_string();
            let _ = connection
                .sender
                .send(Response::new_err(request.id, ErrorCode::ServerNotInitialized as i32, message).into());
            continue;
        }
        let params = match serde_json::from_value::<InitializeParams>(request.params) {
            Ok(params) => params,
            Err(e) => {
                let message = format!("bad initialize parameters: {e}");
                let _ = connection
                    .sender
                    .send(Response::new_err(request.id, ErrorCode::InvalidParams as i32, message).into());
                continue;
            }
        };
        // UTF-8 positions are what the front end counts in; UTF-16 is the protocol's default.
        let offers_utf8 = params
            .capabilities
            .general
            .and_then(|g| g.position_encodings)
            .is_some_and(|e| e.contains(&PositionEncodingKind::UTF8));
        let encoding = if offers_utf8 { Encoding::Utf8 } else { Encoding::Utf16 };
        #[allow(deprecated)] // `root_uri` is what clients without workspace folders send.
        let folders: Vec<Uri> = match (params.workspace_folders, params.root_uri) {
            (Some(folders), _) => folders.into_iter().map(|f| f.uri).collect(),
            (None, root) => root.into_iter().collect(),
        };
        let result = serde_json::json!({
            "capabilities": capabilities(encoding),
            "serverInfo": { "name": "cutec lsp", "version": env!("CARGO_PKG_VERSION") },
        });
        let _ = connection.sender.send(Response::new_ok(request.id, result).into());
        return Some((encoding, folders.iter().filter_map(path_of).collect()));
    }
}

fn analyze_guarded(sources: Sources, mut loader: EditorLoader, cancel: Arc<AtomicBool>, limit: u64) -> Outcome {
    let budget = cute_lang::Budget { limit, cancel: Some(cancel) };
    catch_unwind(AssertUnwindSafe(|| analyze_files(sources, &mut loader, budget))).map(Arc::new).map_err(|panic| {
        let message =
            panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned());
        message.unwrap_or_else(|| "the front end panicked".into())
    })
}

/// The server ending (shutdown, exit, or the client gone) stops the analyses still running: their
/// results have nowhere to go.
impl Drop for Server {
    fn drop(&mut self) {
        self.documents.values().for_each(Document::cancel_analysis);
    }
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
                    self.set_text(doc.uri.clone(), doc.version, doc.text, Instant::now());
                    // A document that could not import this file before may now.
                    self.importers_due(&doc.uri, true);
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Ok(p) = n.extract::<DidChangeTextDocumentParams>(DidChangeTextDocument::METHOD) {
                    // Full synchronisation: the last change holds the whole text.
                    if let Some(change) = p.content_changes.into_iter().last() {
                        let uri = p.text_document.uri;
                        self.set_text(uri.clone(), p.text_document.version, change.text, Instant::now() + DEBOUNCE);
                        self.importers_due(&uri, false);
                    }
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(p) = n.extract::<DidCloseTextDocumentParams>(DidCloseTextDocument::METHOD) {
                    // Its importers read it from the disk again.
                    self.importers_due(&p.text_document.uri, false);
                    if let Some(d) = self.documents.remove(&p.text_document.uri) {
                        d.cancel_analysis();
                    }
                    self.publish(p.text_document.uri, Vec::new(), None);
                }
            }
            _ => {}
        }
    }

    fn set_text(&mut self, uri: Uri, version: i32, text: String, due: Instant) {
        let lines = Arc::new(LineIndex::new(&text, self.encoding));
        self.generations += 1;
        let generation = self.generations;
        let old = self.documents.remove(&uri);
        // The running analysis is of an older text: stop it (the new text starts when it has).
        if let Some(d) = &old {
            d.cancel_analysis();
        }
        let (analysed, last_parsed, running) = match old {
            Some(d) => (d.analysed, d.last_parsed, d.running),
            None => (None, None, None),
        };
        let path = path_of(&uri);
        let doc = Document { version, text, lines, path, generation, analysed, last_parsed, due: Some(due), running };
        self.documents.insert(uri, doc);
    }

    /// Makes due again the other documents whose last analysis read the document `uri` (with
    /// `any_importer`, also those with an `import` and errors, which may be that the import was not
    /// found): what they import has changed.
    fn importers_due(&mut self, uri: &Uri, any_importer: bool) {
        let Some(path) = self.documents.get(uri).and_then(|d| d.path.clone()) else { return };
        let due = Instant::now() + DEBOUNCE;
        for (other, doc) in &mut self.documents {
            let analysis = doc.analysed.as_ref().and_then(|a| a.outcome.as_ref().ok());
            let reads = analysis.is_some_and(|a| imports(a, &path));
            let failed = analysis.is_none_or(|a| !a.errors.is_empty());
            let has_import = || doc.text.lines().any(|l| l.trim_start().starts_with("import"));
            if other != uri && (reads || (any_importer && failed && has_import())) {
                doc.cancel_analysis();
                self.generations += 1;
                doc.generation = self.generations;
                doc.due = Some(due);
            }
        }
    }

    fn analyze_due(&mut self) {
        let now = Instant::now();
        let due: Vec<Uri> = self
            .documents
            .iter()
            .filter(|(_, d)| d.running.is_none() && d.due.is_some_and(|t| t <= now))
            .map(|(u, _)| u.clone())
            .collect();
        for uri in due {
            self.start(&uri);
        }
    }

    /// Starts analysing the document's text on a thread of its own, unless one of its analyses
    /// runs (the text is then analysed when that one finishes).
    fn start(&mut self, uri: &Uri) {
        let open = self
            .documents
            .iter()
            .filter(|(other, _)| *other != uri)
            .filter_map(|(_, d)| Some((d.path.clone()?, d.text.clone())))
            .collect();
        let loader = EditorLoader { disk: DiskLoader { search_dirs: self.search_dirs.clone() }, open };
        let Some(doc) = self.documents.get_mut(uri) else { return };
        if doc.running.is_some() || doc.due.is_none() {
            return;
        }
        let name = doc.path.as_ref().map_or_else(|| uri.as_str().to_string(), |p| p.display().to_string());
        let sources = Sources::new(name, doc.text.clone());
        let (generation, uri, finished, limit) =
            (doc.generation, uri.clone(), self.finished_sender.clone(), self.budget);
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        // The front end walks programs recursively: give it the stack `cutec` gives itself.
        let spawned =
            std::thread::Builder::new().name("cutec-lsp-analysis".into()).stack_size(64 << 20).spawn(move || {
                let _ = finished.send((uri, generation, analyze_guarded(sources, loader, flag, limit)));
            });
        if spawned.is_ok() {
            doc.running = Some(cancel);
            doc.due = None;
        }
    }

    /// Takes a finished analysis: the document's if its text has not changed since (and publishes
    /// its diagnostics), dropped otherwise.
    fn install(&mut self, (uri, generation, outcome): Finished) {
        let Some(doc) = self.documents.get_mut(&uri) else { return };
        doc.running = None;
        if generation != doc.generation {
            return; // Stale: the newer text is due and the loop starts it.
        }
        if let Ok(a) = &outcome {
            if a.parsed() {
                doc.last_parsed = Some(a.clone());
            }
        }
        let text: Arc<str> = doc.text.as_str().into();
        let lines = doc.lines.clone();
        let before = doc.analysed.replace(Analysed { generation, text, lines, outcome });
        // The open files among those this analysis read, or the one before it read, show its
        // diagnostics in them (or no longer do).
        let read = |a: &Option<Analysed>| -> Vec<PathBuf> {
            let files = a.as_ref().and_then(|a| a.outcome.as_ref().ok()).map(|a| a.sources.files());
            files.unwrap_or_default().iter().skip(1).map(|f| PathBuf::from(&f.name)).collect()
        };
        let mut paths = read(&before);
        paths.extend(read(&doc.analysed));
        let others: Vec<Uri> = self
            .documents
            .iter()
            .filter(|(other, d)| *other != &uri && d.path.as_ref().is_some_and(|p| paths.contains(p)))
            .map(|(other, _)| other.clone())
            .collect();
        for u in std::iter::once(uri).chain(others) {
            self.publish_document(u);
        }
    }

    /// Publishes the diagnostics of the open document `uri`: those of its own analysis, and those
    /// that the analyses of the documents importing it found in it.
    fn publish_document(&self, uri: Uri) {
        let Some(doc) = self.documents.get(&uri) else { return };
        let mut diagnostics: Vec<lsp_types::Diagnostic> = match doc.analysed.as_ref().map(|a| &a.outcome) {
            None => Vec::new(),
            Some(Ok(a)) => {
                let program = Program::new(&a.sources, &uri, self.encoding);
                let errors = a.errors.iter().map(|d| program.in_root(d, Kind::Error));
                let warnings = a.warnings.iter().map(|d| program.in_root(d, Kind::Warning));
                let unused = a.unused.iter().map(|d| program.in_root(d, Kind::Unused));
                errors.chain(warnings).chain(unused).collect()
            }
            Some(Err(panic)) => vec![lsp_types::Diagnostic {
                severity: Some(DiagnosticSeverity::ERROR),
                source: Some("cutec".into()),
                message: format!("internal error in the front end: {panic}\nhelp: this is a bug in cutec; please report it with this file"),
                ..Default::default()
            }],
        };
        for (importer, other) in &self.documents {
            let Some(Ok(a)) = other.analysed.as_ref().map(|a| &a.outcome) else { continue };
            let Some(file) = doc.path.as_ref().and_then(|p| imported_index(a, p)).filter(|_| importer != &uri) else {
                continue;
            };
            let program = Program::new(&a.sources, importer, self.encoding);
            let found = a.errors.iter().map(|d| (d, Kind::Error)).chain(a.warnings.iter().map(|d| (d, Kind::Warning)));
            for (d, kind) in found.filter(|(d, _)| a.sources.file_of(d.primary.0.start) == file) {
                let shown = program.in_file(d, kind);
                let same = |s: &lsp_types::Diagnostic| s.range == shown.range && s.message == shown.message;
                if !diagnostics.iter().any(same) {
                    diagnostics.push(shown);
                }
            }
        }
        let current = doc.analysed.as_ref().is_some_and(|a| a.generation == doc.generation);
        self.publish(uri, diagnostics, current.then_some(doc.version));
    }

    /// Waits at most [`REQUEST_WAIT`] for the analysis of the document's current text, taking
    /// whatever other analyses finish meanwhile.
    fn analyze(&mut self, uri: &Uri) {
        self.start(uri);
        let deadline = Instant::now() + REQUEST_WAIT;
        while self.documents.get(uri).is_some_and(|d| d.analysed.as_ref().is_none_or(|a| a.generation != d.generation))
        {
            match self.finished.recv_deadline(deadline) {
                Ok(finished) => self.install(finished),
                Err(_) => return,
            }
            self.start(uri);
        }
    }

    fn publish(&self, uri: Uri, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let params = PublishDiagnosticsParams { uri, diagnostics, version };
        self.send(Notification::new(PublishDiagnostics::METHOD.into(), params));
    }

    /// The document's latest analysis, with the byte offset of `position` in the text it analysed.
    fn at(&mut self, uri: &Uri, position: Position) -> Option<(&Analysed, usize)> {
        self.analyze(uri);
        let analysed = self.documents.get(uri)?.analysed.as_ref()?;
        Some((analysed, analysed.lines.offset(&analysed.text, position)))
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

    fn hover(&mut self, uri: &Uri, position: Position) -> Option<Hover> {
        let encoding = self.encoding;
        let (done, offset) = self.at(uri, position)?;
        let analysis = done.outcome.as_ref().ok()?;
        let hover = analysis.hover(offset)?;
        let mut value = markdown(&hover.subject);
        if let Subject::Definition(h) = &hover.subject {
            let file = analysis.sources.file_of(h.def.span.start);
            if file != 0 {
                let program = Program::new(&analysis.sources, uri, encoding);
                value.push_str(&format!("\n\n*defined in `{}`*", program.name(file)));
            }
        }
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value }),
            range: Some(done.lines.range(&done.text, hover.span.start, hover.span.end)),
        })
    }

    fn definition(&mut self, uri: &Uri, position: Position) -> Option<GotoDefinitionResponse> {
        let encoding = self.encoding;
        let (done, offset) = self.at(uri, position)?;
        let analysis = done.outcome.as_ref().ok()?;
        let def = analysis.definition(offset)?;
        let location = Program::new(&analysis.sources, uri, encoding).location(def.span)?;
        Some(GotoDefinitionResponse::Scalar(location))
    }

    fn symbols(&mut self, uri: &Uri) -> Option<DocumentSymbolResponse> {
        self.analyze(uri);
        let done = self.documents.get(uri)?.analysed.as_ref()?;
        let items = done.outcome.as_ref().ok()?.items();
        #[allow(deprecated)] // `deprecated` is a required field, superseded by `tags`.
        let symbols = items
            .into_iter()
            .map(|d| DocumentSymbol {
                name: d.name.clone(),
                detail: d.declared.clone(),
                kind: if d.kind == DefKind::Const { SymbolKind::CONSTANT } else { SymbolKind::FUNCTION },
                tags: None,
                deprecated: None,
                range: done.lines.range(&done.text, d.extent.start, d.extent.end),
                selection_range: done.lines.range(&done.text, d.span.start, d.span.end),
                children: None,
            })
            .collect();
        Some(DocumentSymbolResponse::Nested(symbols))
    }

    fn completion(&mut self, uri: &Uri, position: Position) -> Option<CompletionResponse> {
        self.analyze(uri);
        let doc = self.documents.get(uri)?;
        let offset = doc.lines.offset(&doc.text, position);
        // Only an analysis of the text shown tells what the cursor is in; an older one still
        // knows the names.
        let done = doc.analysed.as_ref().filter(|a| a.generation == doc.generation);
        let current = done.and_then(|a| a.outcome.as_ref().ok()).map(|a| &**a).filter(|a| a.parsed());
        let names = current.or(doc.last_parsed.as_deref());
        Some(CompletionResponse::Array(complete(&doc.text, offset, names, current.is_some())))
    }
}

/// The index in `a`'s sources of the imported file at `path`, if `a` read it.
fn imported_index(a: &Analysis, path: &std::path::Path) -> Option<usize> {
    a.sources.files().iter().skip(1).position(|f| std::path::Path::new(&f.name) == path).map(|i| i + 1)
}

/// Whether the analysis `a` read the file at `path` as an import.
fn imports(a: &Analysis, path: &std::path::Path) -> bool {
    imported_index(a, path).is_some()
}
