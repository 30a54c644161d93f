//! Host functions with `stream` parameters (`launch ... stream(s)`): the `param NAME stream` line,
//! the `stream P` line of a launch record, their checks when the manifest is read and the plan is
//! made (malformed lines make the plan unusable, never panic), and calls with stream arguments.

use cute_abi::manifest::seal;
use cute_runtime::plan::HostPlan;
use cute_runtime::{Arg, DType, Manifest, ParamKind, RuntimeError, TensorView};

const KERNEL: &str = "kernel scale\n\
    param x tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\n\
    param y tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\n\
    end\n";

/// A manifest with host `h(x, y, s: stream)` whose one launch has the record lines `extra`
/// between `smem` and its arguments.
fn manifest(extra: &str) -> Manifest {
    let text = format!(
        "cutec-manifest 1\narch sm_90\n{KERNEL}host h\n\
         param x tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\n\
         param s stream\n\
         param y tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\n\
         launches scale\nlaunch scale\ngrid (ceildiv $0 256) | 1 | 1\nblock 256 | 1 | 1\nsmem 0\n{extra}\
         arg tensor 0 | 0 | $0\narg tensor 2 | 0 | $1\nendlaunch\nend\n"
    );
    Manifest::parse(&seal(&text)).expect("the manifest parses")
}

fn tensor(k: u64, n: i64) -> Arg {
    Arg::tensor(TensorView::contiguous_1d(0x1_0000_0000 * k, DType::F32, n).with_bytes(n as u64 * 4))
}

#[test]
fn a_stream_parameter_has_no_dynamic_value() {
    let m = manifest("stream 1\n");
    let h = m.host("h").unwrap();
    assert_eq!(h.params[1].kind, ParamKind::Stream);
    assert_eq!(h.params[1].to_string(), "s: stream");
    assert_eq!(h.plan_error, None);
    // $0 = x.shape[0], $1 = y.shape[0]: the stream between them takes no `$k`.
    assert_eq!(h.var_sources().len(), 2);
    assert_eq!(h.launches[0].stream, Some(1));
    assert!(h.launches[0].to_string().contains("smem 0\nstream 1\narg tensor 0"));
}

#[test]
fn calls_take_a_stream_argument() {
    let m = manifest("stream 1\n");
    let plan = HostPlan::new(&m, "h").unwrap();
    let launches = plan.evaluate(&[tensor(1, 1000), Arg::Stream(0x1234), tensor(2, 1000)]).unwrap();
    assert_eq!(launches.len(), 1);
    assert_eq!(launches[0].stream, Some(1));
    assert_eq!(launches[0].config.grid, (4, 1, 1));
    // 0 is the legacy default stream: accepted.
    assert!(plan.evaluate(&[tensor(1, 1000), Arg::Stream(0), tensor(2, 1000)]).is_ok());
    // A launch without the clause goes to the call's stream.
    let plain = HostPlan::new(&manifest(""), "h").unwrap();
    assert_eq!(plain.evaluate(&[tensor(1, 64), Arg::Stream(7), tensor(2, 64)]).unwrap()[0].stream, None);
}

#[test]
fn a_non_stream_argument_is_refused() {
    let m = manifest("stream 1\n");
    let plan = HostPlan::new(&m, "h").unwrap();
    let msg = |e: RuntimeError| match e {
        RuntimeError::ArgumentMismatch(m) => m,
        other => panic!("expected ArgumentMismatch, got {other:?}"),
    };
    let e = msg(plan.evaluate(&[tensor(1, 64), Arg::i64(0), tensor(2, 64)]).unwrap_err());
    assert_eq!(e, "host `h` parameter `s` (argument 1): the host expects a stream (a CUstream handle; 0 is the legacy default stream) but got a i64 scalar");
    let e = msg(plan.evaluate(&[tensor(1, 64), tensor(3, 64), tensor(2, 64)]).unwrap_err());
    assert!(e.contains("expects a stream") && e.contains("got a f32 tensor view"), "{e}");
    // A stream where a tensor goes.
    let e = msg(plan.evaluate(&[Arg::Stream(1), Arg::Stream(1), tensor(2, 64)]).unwrap_err());
    assert!(
        e.contains("parameter `x` (argument 0): the host expects a tensor") && e.ends_with("but got a stream"),
        "{e}"
    );
}

#[test]
fn malformed_stream_lines_make_the_plan_unusable() {
    for (extra, why) in [
        ("stream\n", "bad parameter index"),
        ("stream s\n", "bad parameter index `s`"),
        ("stream -1\n", "bad parameter index"),
        ("stream 1 2\n", "bad parameter index"),
        ("stream 1\nstream 1\n", "a launch has one `stream` line"),
    ] {
        let m = manifest(extra);
        let h = m.host("h").unwrap();
        let e = h.plan_error.clone().unwrap_or_else(|| panic!("`{extra}` accepted"));
        assert!(e.contains(why), "{extra:?}: {e}");
        assert!(HostPlan::new(&m, "h").is_err());
    }
    // Well-formed but naming a parameter that is not a stream, or none: an unusable plan too.
    for (extra, why) in
        [("stream 0\n", "host parameter `x` is not a stream"), ("stream 9\n", "host parameter 9 does not exist")]
    {
        let m = manifest(extra);
        let e = HostPlan::new(&m, "h").unwrap_err().to_string();
        assert!(e.contains(why), "{extra:?}: {e}");
    }
}

#[test]
fn a_kernel_cannot_take_a_stream() {
    let e = Manifest::parse(&seal("cutec-manifest 1\nkernel k\nparam s stream\nend\n")).unwrap_err().to_string();
    assert!(e.contains("kernel `k`: parameter `s` is a stream, which only host functions take"), "{e}");
    // A plan passing a stream's index as a tensor argument is refused too.
    let text = format!(
        "cutec-manifest 1\n{KERNEL}host h\nparam s stream\nparam y tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\n\
         launches scale\nlaunch scale\narg tensor 0 | 0 | $0\narg tensor 1 | 0 | $0\nendlaunch\nend\n"
    );
    let m = Manifest::parse(&seal(&text)).unwrap();
    let e = HostPlan::new(&m, "h").unwrap_err().to_string();
    assert!(e.contains("host parameter `s` is not a tensor"), "{e}");
}
