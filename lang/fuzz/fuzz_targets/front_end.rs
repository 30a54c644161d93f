#![no_main]
//! Arbitrary bytes through the whole front end: parse and check must end in a value or diagnostics,
//! never a panic, hang or stack overflow; and whatever parses must survive the canonical printer
//! (print, re-parse, same AST modulo spans), so the printer is fuzzed along with the parser.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The entry points take `&str`; a file that is not UTF-8 reaches them through the lossy path,
    // as the driver reads it.
    let source = String::from_utf8_lossy(data);
    let parsed = cute_lang::parse(&source);
    if let Err(d) = &parsed {
        // Rendering must cope with every span a diagnostic carries.
        let _ = cute_lang::diag::render("fuzz.cute", &source, std::slice::from_ref(d));
    }
    if let Err(ds) = cute_lang::front_end(&source) {
        let _ = cute_lang::diag::render("fuzz.cute", &source, &ds);
    }
    if let Ok(file) = parsed {
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
});
