//! Kernels that divide by run-time values with a multiplier and a shift (`fastdiv` lines, manifest
//! version 3): every launch path appends the two values per divisor after the declared
//! parameters, and refuses a divisor the kernel could not divide by. No GPU needed.

use cute_abi::manifest::seal;
use cute_runtime::fastdiv::{declared_abi_len, divide, magic};
use cute_runtime::plan::HostPlan;
use cute_runtime::{check_args, Arg, DType, KernelArg, Manifest, RuntimeError, TensorView};

/// `cutec build samples/elementwise_add.cute --emit=manifest`, the naive kernel and its host
/// function (`tid / n` and `tid % n`, n = gA.shape[1] = `$1`), plus a kernel dividing by a stride
/// (`$2`), which may be 0.
const MANIFEST: &str = "cutec-manifest 3
arch sm_90
kernel naive_elementwise_add_kernel
param gA tensor elem=f16 space=gmem align=16 rank=2 shape=(?,?{div=8}) stride=(?{div=8},1)
param gB tensor elem=f16 space=gmem align=16 rank=2 shape=(?,?{div=8}) stride=(?{div=8},1)
param gC tensor elem=f16 space=gmem align=16 rank=2 shape=(?,?{div=8}) stride=(?{div=8},1)
fastdiv $1
end
kernel by_stride
param a tensor elem=f32 space=gmem align=4 rank=2 shape=(?,?) stride=(?,1)
fastdiv (mul 2 $2)
fastdiv $1
end
host naive_elementwise_add
param mA tensor elem=f16 space=gmem align=16 rank=2 shape=(?,?{div=8}) stride=(?{div=8},1)
param mB tensor elem=f16 space=gmem align=16 rank=2 shape=(?,?{div=8}) stride=(?{div=8},1)
param mC tensor elem=f16 space=gmem align=16 rank=2 shape=(?,?{div=8}) stride=(?{div=8},1)
launches naive_elementwise_add_kernel
launch naive_elementwise_add_kernel
grid (ceildiv (mul $0 $1) 256) | 1 | 1
block 256 | 1 | 1
smem 0
arg tensor 0 | 0 | $0 | $1 | $2
arg tensor 1 | 0 | $3 | $4 | $5
arg tensor 2 | 0 | $6 | $7 | $8
endlaunch
end
";

fn views(m: i64, n: i64) -> Vec<Arg> {
    (0..3)
        .map(|i| {
            Arg::tensor(
                TensorView::new(0x1_0000_0000 * (i + 1), DType::F16, &[m, n], &[n, 1]).with_bytes((m * n * 2) as u64),
            )
        })
        .collect()
}

fn magic_args(d: i64) -> [KernelArg; 2] {
    let (m, l) = magic(d).unwrap();
    [KernelArg::U32(m), KernelArg::U32(l)]
}

#[test]
fn checked_launches_append_the_multiplier_and_shift() {
    let m = Manifest::parse(&seal(MANIFEST)).unwrap();
    assert_eq!(m.version, 3);
    let k = m.kernel("naive_elementwise_add_kernel").unwrap();
    assert_eq!(declared_abi_len(k), 12);
    for n in [8i64, 1000, 16384, 24680] {
        let flat = check_args(k, &views(64, n)).unwrap();
        assert_eq!(flat.len(), 14);
        assert_eq!(flat[12..], magic_args(n));
        // What the kernel computes from them is tid / n.
        let KernelArg::U32(mult) = flat[12] else { panic!() };
        let KernelArg::U32(shift) = flat[13] else { panic!() };
        for tid in [0u32, 1, n as u32 - 1, n as u32, 64 * n as u32 - 1] {
            assert_eq!(divide(tid, (mult, shift)), tid / n as u32);
        }
    }
    assert_eq!(magic(16384), Some((1 << 31, 14)));
    assert!(k.abi().ends_with("i32 gC.stride[0], u32 fastdiv[0].multiplier, u32 fastdiv[0].shift)"), "{}", k.abi());
}

#[test]
fn host_calls_append_them_to_the_launch() {
    let m = Manifest::parse(&seal(MANIFEST)).unwrap();
    let plan = HostPlan::new(&m, "naive_elementwise_add").unwrap();
    let launches = plan.evaluate(&views(100, 1000)).unwrap();
    assert_eq!(launches.len(), 1);
    let l = &launches[0];
    assert_eq!(l.config.grid, (391, 1, 1));
    assert_eq!(l.args.len(), 14);
    assert_eq!(l.args[12..], magic_args(1000));
    // The same values as a checked launch of the kernel.
    let direct = check_args(m.kernel("naive_elementwise_add_kernel").unwrap(), &views(100, 1000)).unwrap();
    assert_eq!(l.args, direct);
}

#[test]
fn divisors_the_kernel_cannot_divide_by_are_refused() {
    let m = Manifest::parse(&seal(MANIFEST)).unwrap();
    let k = m.kernel("by_stride").unwrap();
    let a = |stride: i64| {
        vec![Arg::tensor(TensorView::new(0x1000, DType::F32, &[if stride > 8 { 1 } else { 4 }, 8], &[stride, 1]))]
    };
    let flat = check_args(k, &a(8)).unwrap();
    assert_eq!(flat.len(), 4 + 4);
    assert_eq!(flat[4..6], magic_args(16));
    assert_eq!(flat[6..8], magic_args(8));
    // A zero stride is a valid view, but the kernel divides by twice it.
    let e = check_args(k, &a(0)).unwrap_err();
    let RuntimeError::ArgumentMismatch(msg) = e else { panic!("{e:?}") };
    assert!(
        msg.contains(
            "kernel `by_stride`: divisor 0 of the kernel's index math, (mul 2 $2) = 0, is not in 1..=2147483647"
        ),
        "{msg}"
    );
    // Beyond i32: the kernel's index math could not hold it.
    let e = check_args(k, &a(1 << 30)).unwrap_err();
    assert!(e.to_string().contains("= 2147483648, is not in"), "{e}");
}
