//! The cutec compiler: AST → `cute` IR (`lower`), our passes (`passes`, one per file), and the
//! pipeline down to PTX and cubin (`pipeline`, `ptxas`).

pub mod codegen;
pub mod header;
pub(crate) mod ir;
pub mod lower;
pub mod manifest;
pub mod passes;
pub mod pipeline;
pub mod plan;
pub mod ptx_join;
pub mod ptxas;
pub mod timings;

pub use pipeline::{compile, compile_files, Asserts, CompileError, Options, Output, Session, Stage};
