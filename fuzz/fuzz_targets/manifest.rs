#![no_main]
//! Manifest text (what `cute_manifest_read_file`, the runtime and Python read from a cubin): parse
//! must end in a manifest or an error with its line, never a panic. A manifest that parses must
//! write text that parses, and on what the writer writes, parse must undo write: the manifest
//! `m` read back from written text writes the same text again, and that text reads back as `m`.
//!
//! (The reader also accepts texts the writer never makes, which do not come back verbatim: a
//! `launch` without its `launches` summary, a `typearg` without `instance`, a host whose plan does
//! not read. So the first manifest read is not compared with the second.)

use cute_abi::manifest::{seal, Manifest};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // As found (the checksum check: almost every mutation is refused there), and sealed with a
    // matching checksum so that the mutated records reach the record parser.
    round_trip(text);
    round_trip(&seal(text));
});

fn round_trip(text: &str) {
    let Ok(first) = Manifest::parse(text) else { return };
    let written = first.to_text();
    let read = parse_written(&written);
    let again = read.to_text();
    assert_eq!(again, written, "writing what was read back changed the text");
    // `text` is what each was parsed from; everything else must be equal.
    assert_eq!(
        Manifest { text: String::new(), ..parse_written(&again) },
        Manifest { text: String::new(), ..read },
        "write then parse changed the manifest:\n{written}"
    );
}

fn parse_written(text: &str) -> Manifest {
    Manifest::parse(text).unwrap_or_else(|e| panic!("the written manifest does not parse: {e}\n{text}"))
}
