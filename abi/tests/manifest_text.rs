//! Real manifests, as `cutec build samples/NAME.cute --emit=manifest` writes them: the reader
//! accepts each, and the writer gives back the same text.

use cute_abi::manifest::Manifest;

const SAMPLES: [(&str, &str); 12] = [
    ("gemm_sm90", include_str!("manifests/gemm_sm90.txt")),
    ("predicated_add", include_str!("manifests/predicated_add.txt")),
    ("chunked_add", include_str!("manifests/chunked_add.txt")),
    ("cuda_graph", include_str!("manifests/cuda_graph.txt")),
    ("two_streams", include_str!("manifests/two_streams.txt")),
    ("cluster_exchange", include_str!("manifests/cluster_exchange.txt")),
    ("control_flow", include_str!("manifests/control_flow.txt")),
    ("printing", include_str!("manifests/printing.txt")),
    ("tma_copy", include_str!("manifests/tma_copy.txt")),
    ("fast_add", include_str!("manifests/fast_add.txt")),
    ("elementwise_add", include_str!("manifests/elementwise_add.txt")),
    ("fp8_convert", include_str!("manifests/fp8_convert.txt")),
];

#[test]
fn every_sample_manifest_reads_and_writes_back_the_same_text() {
    for (name, text) in SAMPLES {
        let m = Manifest::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        for h in &m.hosts {
            assert_eq!(h.plan_error, None, "{name}: host {}", h.name);
        }
        assert_eq!(m.to_text(), text, "{name}");
        let again = Manifest::parse(&m.to_text()).unwrap();
        assert_eq!(Manifest { text: String::new(), ..again }, Manifest { text: String::new(), ..m }, "{name}");
    }
}

#[test]
fn a_nul_byte_is_a_damaged_manifest() {
    let (_, text) = SAMPLES[1];
    let at = text.find("\nkernel").unwrap() + 1;
    let damaged = format!("{}\0{}", &text[..at], &text[at..]);
    let line = text[..at].lines().count() + 1;
    let e = Manifest::parse(&damaged).unwrap_err();
    assert_eq!(e.line, line);
    assert_eq!(e.message, format!("a NUL byte at byte {at}: the manifest is damaged"));
    // Even as its last byte: a reader of the embedded symbol strips the one terminator first.
    assert!(Manifest::parse(&format!("{text}\0")).is_err());
}

/// The reader refuses a damaged manifest by its checksum, or, for damage to the first line, by a
/// version line it does not read.
fn refused<W: std::fmt::Display>(name: &str, what: impl Fn() -> W, text: &str) {
    let e = match Manifest::parse(text) {
        Ok(_) => panic!("{name}: {}: the damaged manifest was accepted", what()),
        Err(e) => e,
    };
    assert!(
        e.message
            == "manifest checksum mismatch: the cubin's manifest was altered or damaged; rebuild it with cutec build"
            || e.message.contains("no `checksum` line")
            || e.line == 1,
        "{name}: {}: {e}",
        what()
    );
}

#[test]
fn every_digit_edit_of_a_sample_manifest_is_refused() {
    let mut edits = 0;
    for (name, text) in SAMPLES {
        let mut damaged = text.to_string().into_bytes();
        for at in 0..damaged.len() {
            let c = text.as_bytes()[at];
            if !c.is_ascii_digit() {
                continue;
            }
            for d in (b'0'..=b'9').filter(|&d| d != c) {
                damaged[at] = d;
                let what = || format!("byte {at} `{}` -> `{}`", c as char, d as char);
                refused(name, what, std::str::from_utf8(&damaged).unwrap());
                edits += 1;
            }
            damaged[at] = c;
        }
    }
    // Every sample has digits in its records and its checksum: the loop above did its work.
    assert!(edits > 10_000, "{edits} edits");
}

#[test]
fn other_byte_edits_of_a_sample_manifest_are_refused() {
    for (name, text) in SAMPLES {
        let bytes = text.as_bytes();
        // Every 5th byte: replaced by a space, a letter or a newline, deleted, doubled, swapped with
        // the next one (where that changes the text).
        for at in (0..bytes.len()).step_by(5) {
            let mut damaged: Vec<(String, Vec<u8>)> = Vec::new();
            for b in [b' ', b'x', b'\n'] {
                if bytes[at] != b {
                    let mut v = bytes.to_vec();
                    v[at] = b;
                    damaged.push((format!("byte {at} -> {:?}", b as char), v));
                }
            }
            let mut v = bytes.to_vec();
            v.remove(at);
            damaged.push((format!("byte {at} deleted"), v));
            let mut v = bytes.to_vec();
            v.insert(at, bytes[at]);
            damaged.push((format!("byte {at} doubled"), v));
            if at + 1 < bytes.len() && bytes[at] != bytes[at + 1] {
                let mut v = bytes.to_vec();
                v.swap(at, at + 1);
                damaged.push((format!("bytes {at} and {} swapped", at + 1), v));
            }
            for (what, v) in damaged {
                refused(name, || &what, std::str::from_utf8(&v).expect("the samples are ASCII"));
            }
        }
        // Cut short after any line, or with one more record at the end.
        for (at, _) in text.match_indices('\n').filter(|(at, _)| at + 1 < text.len()) {
            refused(name, || format!("cut after byte {at}"), &text[..=at]);
        }
        refused(name, || "a record after the checksum", &format!("{text}end\n"));
    }
}
