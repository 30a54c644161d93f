//! `cutec lsp`: the `.cute` language server, over stdio.
//!
//! It runs the real front end (`cute_lang::ide`, no MLIR) on every version of an open file and
//! answers from its results: diagnostics as `cutec check` reports them (plus unused `let`s), hover
//! with each value's type, layout and TV layout per kernel instance, go to definition, document
//! symbols, and completion of builtins and their named arguments. docs/editor.md describes it.

mod completion;
mod diagnostics;
mod docs;
mod hover;
mod line_index;
mod server;
mod transport;
mod workspace;

pub use server::DEBOUNCE;

/// Runs the language server on stdin and stdout until the client shuts it down, each analysis
/// under a compile budget of `budget` steps (`cutec lsp --compile-budget`, as `cutec build`).
pub fn run_stdio(budget: u64) -> Result<(), String> {
    run_on(transport::stdio(), budget)
}

/// Runs the language server on `input` and `output` until the client shuts it down or `input`
/// ends: the server in process, as the fuzz target (fuzz/fuzz_targets/lsp.rs) drives it.
pub fn serve(
    input: impl std::io::BufRead + Send + 'static,
    output: impl std::io::Write + Send + 'static,
) -> Result<(), String> {
    run_on(transport::connect(move || input, move || output), cute_lang::DEFAULT_BUDGET)
}

fn run_on(
    (connection, writer): (lsp_server::Connection, std::thread::JoinHandle<()>),
    budget: u64,
) -> Result<(), String> {
    // Analyses run on threads of their own (server.rs); the answers walk their recursive results,
    // so the loop keeps the stack `cutec` gives itself.
    let server = std::thread::Builder::new()
        .name("cutec-lsp".into())
        .stack_size(64 << 20)
        .spawn(move || server::run(connection, budget))
        .map_err(|e| format!("cannot start the server thread: {e}"))?;
    server.join().map_err(|_| "the server thread failed".to_string())??;
    writer.join().map_err(|_| "the writer thread failed".to_string())
}
