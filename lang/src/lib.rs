//! The `.cute` front end: lexing, parsing (lalrpop), the AST, checking and diagnostics.
//! No MLIR here, so its tests build in seconds.

pub mod ast;
pub mod check;
pub mod diag;
pub mod elab;
pub mod ide;
pub mod imports;
pub mod kir;
pub mod lexer;
pub mod overrides;
pub mod parse;
pub mod pretty;
pub mod sources;
pub mod span;
mod target;
pub mod tune;
pub mod types;

#[allow(clippy::all, unused_parens)]
mod grammar {
    include!(concat!(env!("OUT_DIR"), "/grammar.rs"));
}

pub use diag::Diagnostic;
pub use elab::{Budget, DEFAULT_BUDGET};
pub use parse::parse;
pub use span::Span;
pub use target::check_arch;

/// Parses and elaborates a source file: the whole front end in one call, with the default
/// compile budget.
pub fn front_end(source: &str) -> Result<(ast::File, kir::Module), Vec<Diagnostic>> {
    front_end_with(source, Budget::default())
}

/// [`front_end`] with a compile budget of the caller's (`cutec --compile-budget`, the editor's
/// cancellable analysis).
pub fn front_end_with(source: &str, budget: Budget) -> Result<(ast::File, kir::Module), Vec<Diagnostic>> {
    front_end_tuned(source, budget, None)
}

/// [`front_end_with`] with the tuning table of `cutec build --tuning` (none: the file's own consts).
pub fn front_end_tuned(
    source: &str,
    budget: Budget,
    tuning: Option<&tune::Table>,
) -> Result<(ast::File, kir::Module), Vec<Diagnostic>> {
    let file = parse(source).map_err(|d| vec![d])?;
    if !file.imports.is_empty() {
        // The error `imports::load` gives for a source with no files beside it.
        return front_end_files(&mut sources::Sources::new("<input>", source), &mut imports::NoFiles, budget);
    }
    let module = match tuning {
        Some(table) => elab::elaborate_tuned(&file, source, table, budget)?,
        None => elab::elaborate(&file, budget)?,
    };
    Ok((file, module))
}

/// The front end on a program of several files: the root file of `sources` and every file it
/// imports, which `loader` finds and which are added to `sources` (diagnostics' spans are in its
/// span space: render them with [`sources::Sources::render`]).
pub fn front_end_files(
    sources: &mut sources::Sources,
    loader: &mut dyn imports::Loader,
    budget: Budget,
) -> Result<(ast::File, kir::Module), Vec<Diagnostic>> {
    front_end_files_tuned(sources, loader, budget, None)
}

/// [`front_end_files`] with the tuning table of `cutec build --tuning`. The `tune` blocks are the
/// root file's (at the start of the span space, so the root text is what their spans index).
pub fn front_end_files_tuned(
    sources: &mut sources::Sources,
    loader: &mut dyn imports::Loader,
    budget: Budget,
    tuning: Option<&tune::Table>,
) -> Result<(ast::File, kir::Module), Vec<Diagnostic>> {
    let file = imports::load(sources, loader)?;
    let module = match tuning {
        Some(table) => elab::elaborate_tuned(&file, &sources.root().text, table, budget)?,
        None => elab::elaborate(&file, budget)?,
    };
    Ok((file, module))
}
