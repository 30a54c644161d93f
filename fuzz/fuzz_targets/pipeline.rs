#![no_main]
//! Arbitrary bytes as a `.cute` file through the whole compile to PTX, in process, as
//! `cutec build --emit=ptx` runs it: it must end in PTX or diagnostics, never a panic (one caught at
//! a pass boundary, `CompileError::PassPanic`, is an internal error: a finding too; so is an MLIR
//! verifier error after lowering, `CompileError::Mlir`), a hang or
//! unbounded memory. Whatever parses must also survive the canonical printer (print, re-parse, same
//! AST modulo spans), so the printer is fuzzed along with the parser.

mod common;

use cute_compiler::pipeline::{compile, source_arch, CompileError, Options, Stage};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The driver reads a file that is not UTF-8 through the lossy path.
    let source = String::from_utf8_lossy(data).into_owned();
    common::on_cutec_stack(|| {
        round_trip(&source);
        build(&source);
    });
});

fn round_trip(source: &str) {
    let file = match cute_lang::parse(source) {
        Ok(file) => file,
        Err(d) => {
            // Rendering must cope with every span a diagnostic carries.
            let _ = cute_lang::diag::render("fuzz.cute", source, std::slice::from_ref(&d));
            return;
        }
    };
    let printed = cute_lang::pretty::print_file(&file);
    let reparsed = match cute_lang::parse(&printed) {
        Ok(f) => f,
        Err(d) => panic!("printed program does not parse: {}\n{printed}", d.message),
    };
    assert!(
        cute_lang::pretty::strip_spans(&reparsed) == cute_lang::pretty::strip_spans(&file),
        "round trip changed the AST:\n{printed}"
    );
    assert_eq!(cute_lang::pretty::print_file(&reparsed), printed, "printing is not idempotent");
}

fn build(source: &str) {
    // A `// cutec-build: --arch sm_90a` line picks the target, as for the samples.
    let options = Options { arch: source_arch(source).unwrap_or_default(), ..Options::default() };
    match compile(source, "fuzz.cute", Stage::Ptx, &options) {
        Ok(_) | Err(CompileError::Internal(_) | CompileError::Ptxas(_)) => {}
        // The front end accepted the program, so MLIR refusing what our lowering made of it is a
        // compiler bug (none in the 1,524 inputs of the issue-30 long run's grown corpus).
        Err(CompileError::Mlir(errors)) => panic!("MLIR refused the lowered program: {errors:?}"),
        Err(CompileError::Source(ds)) => {
            let _ = cute_lang::diag::render("fuzz.cute", source, &ds);
        }
        Err(CompileError::PassPanic(p)) => panic!("a pass panicked: {p:?}"),
    }
}
