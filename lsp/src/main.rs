//! `cute-lsp [--compile-budget STEPS]`: the language server on its own (the same as `cutec lsp`),
//! for the tests and the latency benchmark to drive without linking MLIR.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let budget = match args.as_slice() {
        [] => cute_lang::DEFAULT_BUDGET,
        [flag, steps] if flag == "--compile-budget" => match steps.parse() {
            Ok(steps) => steps,
            Err(_) => return usage(&format!("`{steps}` is not a number of steps")),
        },
        _ => return usage("unexpected arguments"),
    };
    match cute_lsp::run_stdio(budget) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage(what: &str) -> ExitCode {
    eprintln!("error: {what}\nusage: cute-lsp [--compile-budget STEPS]");
    ExitCode::from(2)
}
