//! Inputs the manifest fuzz target (fuzz/fuzz_targets/manifest.rs, issue 30) found that did not
//! read back as written: each is a test that reading, writing and reading again agree.
//!
//! A host plan the reader refuses (misnested blocks) is kept refused — no partial plan — and a
//! rewritten manifest says so (`unusable` and the reason), so that reading it again gives the same
//! refused host, never a callable empty one.

use cute_abi::manifest::{seal, Manifest};

/// `endif` closing a `for`: the first `endif` is refused, the second closes the `if`.
const MISNESTED: &str = "cutec-manifest 5\nhost e\nif (eq0 2)\nfor $1|0|0|9\nendif\nendif\nend\n";

#[test]
fn a_refused_plan_has_no_steps_and_reads_back_refused() {
    let m = Manifest::parse(&seal(MISNESTED)).expect("the manifest reads; the host is refused");
    let h = &m.hosts[0];
    assert_eq!(h.plan_error.as_deref(), Some("line 5: `endif` closes a `for` (expected `endfor`)"));
    assert!(h.steps.is_empty() && h.launches.is_empty(), "a partial plan: {:?}", h.steps);
    let written = m.to_text();
    assert!(written.contains("\nunusable s:"), "{written}");
    let again = Manifest::parse(&written).expect("the written manifest reads");
    assert_eq!(again.hosts[0].plan_error, h.plan_error);
    assert_eq!(again.to_text(), written, "writing is not idempotent");
    assert_eq!(Manifest { text: String::new(), ..again }, Manifest { text: String::new(), ..m });
}

#[test]
fn an_unusable_line_with_a_bad_reason_still_refuses_the_host() {
    let m = Manifest::parse(&seal("cutec-manifest 5\nhost e\nunusable zz\nend\n")).expect("reads");
    let why = m.hosts[0].plan_error.as_deref().expect("refused");
    assert!(why.starts_with("line 3: bad `unusable` line"), "{why}");
}

/// A field followed by carriage returns and more fields: the fields end at any white space, so the
/// kernel name is `k`, not `k\r\r`, which would be written back into a line of its own making.
#[test]
fn fields_end_at_any_white_space() {
    let m = Manifest::parse(&seal("cutec-manifest 5\nhost e\nlaunches k\r\r\tx\nend\n")).expect("reads");
    assert_eq!(m.hosts[0].launches_kernels, ["k"]);
    let written = m.to_text();
    let again = Manifest::parse(&written).expect("the written manifest reads");
    assert_eq!(again.to_text(), written);
}
