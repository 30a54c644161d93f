#![no_main]
//! Layout expressions, as `cutec layout eval` reads them: parse and evaluate must end in a value
//! or an error, never a panic, a stack overflow, a hang or unbounded memory; and the value must
//! print.

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    common::on_cutec_stack(|| {
        if let Ok(value) = cute_layout::expr::eval_str(src) {
            let _ = value.to_string();
        }
    });
});
