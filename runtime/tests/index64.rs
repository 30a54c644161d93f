//! Kernels with 64-bit index math (`index 64` in the manifest) take `i64` extents and strides and
//! may be called with tensors past 2^31 - 1 elements; 32-bit kernels keep refusing them. Pure
//! checks: no GPU.

use cute_abi::manifest::seal;
use cute_runtime::plan::HostPlan;
use cute_runtime::{check_args, Arg, DType, KernelArg, Manifest, RuntimeError, TensorView};

/// The same 1-D f16 kernel in both widths.
const KERNELS: &str = "cutec-manifest 9
arch sm_90
kernel add32
param x tensor elem=f16 space=gmem align=2 rank=1 shape=? stride=1
param y tensor elem=f16 space=gmem align=2 rank=1 shape=? stride=1
end
kernel add64
param x tensor elem=f16 space=gmem align=2 rank=1 shape=? stride=1
param y tensor elem=f16 space=gmem align=2 rank=1 shape=? stride=1
index 64
end
";

/// The kernels, and a host function `h32`/`h64` launching each.
fn manifest_text() -> String {
    let host = |bits: u32| {
        format!(
            "host h{bits}\nparam x tensor elem=f16 space=gmem align=2 rank=1 shape=? stride=1\n\
             param y tensor elem=f16 space=gmem align=2 rank=1 shape=? stride=1\nlaunches add{bits}\n\
             launch add{bits}\ngrid (ceildiv $0 256) | 1 | 1\nblock 256 | 1 | 1\nsmem 0\n\
             arg tensor 0 | 0 | $0\narg tensor 1 | 0 | $1\nendlaunch\nend\n"
        )
    };
    format!("{KERNELS}{}{}", host(32), host(64))
}

/// 2^31 + 4096 elements: the GPU test's size.
const BIG: i64 = (1 << 31) + 4096;

fn manifest() -> Manifest {
    Manifest::parse(&seal(&manifest_text())).expect("manifest parses")
}

fn pair(n: i64) -> Vec<Arg> {
    let view = |i: u64| TensorView::contiguous_1d(0x1_0000_0000 * i, DType::F16, n).with_bytes(2 * n as u64);
    vec![Arg::tensor(view(1)), Arg::tensor(view(4))]
}

fn message(e: RuntimeError) -> String {
    match e {
        RuntimeError::ArgumentMismatch(m) => m,
        other => panic!("expected ArgumentMismatch, got {other:?}"),
    }
}

#[test]
fn the_manifest_records_the_width() {
    let m = manifest();
    assert_eq!(m.kernel("add32").unwrap().index_bits, 32);
    assert_eq!(m.kernel("add64").unwrap().index_bits, 64);
}

#[test]
fn a_64_bit_kernel_takes_i64_extents_past_2_31() {
    let m = manifest();
    let flat = check_args(m.kernel("add64").unwrap(), &pair(BIG)).expect("accepted");
    assert_eq!(flat[1], KernelArg::I64(BIG));
    assert_eq!(flat[3], KernelArg::I64(BIG));
    // Small extents are `i64` too: the kernel's parameters are.
    let flat = check_args(m.kernel("add64").unwrap(), &pair(1000)).unwrap();
    assert_eq!(flat[1], KernelArg::I64(1000));
}

#[test]
fn a_32_bit_kernel_still_refuses_them() {
    let m = manifest();
    let e = message(check_args(m.kernel("add32").unwrap(), &pair(BIG)).unwrap_err());
    assert!(e.contains("dynamic shape entry 0 = 2147487744 is not a positive i32 extent (1..=2147483647)"), "{e}");
    let flat = check_args(m.kernel("add32").unwrap(), &pair(1000)).unwrap();
    assert_eq!(flat[1], KernelArg::I32(1000));
}

#[test]
fn a_64_bit_kernel_refuses_what_i64_cannot_hold() {
    let m = manifest();
    let e = message(check_args(m.kernel("add64").unwrap(), &pair(0)).unwrap_err());
    assert!(e.contains("is not a positive i64 extent"), "{e}");
}

#[test]
fn host_plans_check_each_launch_against_its_kernel_width() {
    let m = manifest();
    let launches = HostPlan::new(&m, "h64").unwrap().evaluate(&pair(BIG)).expect("the 64-bit plan accepts");
    assert_eq!(launches[0].args[1], KernelArg::I64(BIG));
    let e = message(HostPlan::new(&m, "h32").unwrap().evaluate(&pair(BIG)).unwrap_err());
    assert!(e.contains("is not a positive i32 extent"), "{e}");
}

#[test]
fn a_malformed_index_line_fails_the_manifest() {
    for bad in ["index 32", "index", "index 64 64"] {
        let text = manifest_text().replacen("index 64", bad, 1);
        let e = Manifest::parse(&seal(&text)).unwrap_err();
        assert!(e.to_string().contains("bad `index` line"), "{bad}: {e}");
    }
    let twice = manifest_text().replacen("index 64", "index 64\nindex 64", 1);
    assert!(Manifest::parse(&seal(&twice)).is_err());
}
