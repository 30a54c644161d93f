//! `cute-lsp`: the language server on its own (the same as `cutec lsp`), for the tests and the
//! latency benchmark to drive without linking MLIR.

use std::process::ExitCode;

fn main() -> ExitCode {
    match cute_lsp::run_stdio() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
