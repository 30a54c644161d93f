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
