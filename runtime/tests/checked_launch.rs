//! Checked launches refuse every kind of mismatch before any driver call.
//! `check_args` is a pure function of the manifest signature and the
//! arguments, so these run everywhere (no GPU). On a GPU the same checks run
//! inside `Kernel::launch_checked` (see `cute-run checked`).

use cute_abi::manifest::seal;
use cute_runtime::{check_args, Arg, DType, KernelArg, Manifest, RuntimeError, TensorView};

const MANIFEST: &str = "cutec-manifest 1
arch sm_90
kernel vector_add
param a tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1
param b tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1
param c tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1
end
kernel tile
param t tensor elem=f16 space=gmem align=16 rank=2 shape=(?,8) stride=(8,1)
param m tensor elem=f32 space=gmem align=4 rank=2 shape=((2,?),8) stride=((1,?),64)
param alpha scalar elem=f32
param k scalar elem=i32
end
kernel shared
param s tensor elem=f32 space=smem align=4 rank=1 shape=32 stride=1
end
";

const P: u64 = 0x7f00_0000_0000;

fn manifest() -> Manifest {
    Manifest::parse(&seal(MANIFEST)).expect("manifest parses")
}

fn vadd(m: &Manifest, a: TensorView, b: TensorView, c: TensorView) -> Result<Vec<KernelArg>, RuntimeError> {
    check_args(m.kernel("vector_add").unwrap(), &[Arg::tensor(a), Arg::tensor(b), Arg::tensor(c)])
}

fn v1(ptr: u64, n: i64) -> TensorView {
    TensorView::contiguous_1d(ptr, DType::F32, n)
}

fn tile_args(t: TensorView, m: TensorView) -> Vec<Arg> {
    vec![Arg::tensor(t), Arg::tensor(m), Arg::f32(1.5), Arg::i32(3)]
}

fn good_t() -> TensorView {
    TensorView::new(P, DType::F16, &[100, 8], &[8, 1])
}
fn good_m() -> TensorView {
    TensorView::new(P + 0x10000, DType::F32, &[2, 5, 8], &[1, 2, 64])
}

/// Asserts a refusal naming the kernel, the parameter and `what`.
fn refused(r: Result<Vec<KernelArg>, RuntimeError>, param: &str, what: &str) {
    let e = r.expect_err("must be refused");
    assert!(matches!(e, RuntimeError::ArgumentMismatch(_)), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains(&format!("parameter `{param}`")), "message does not name `{param}`: {msg}");
    assert!(msg.contains(what), "message does not say `{what}`: {msg}");
}

#[test]
fn matching_arguments_expand_to_the_kernel_abi() {
    let m = manifest();
    let flat = vadd(&m, v1(P, 1000), v1(P + 4096, 1000), v1(P + 8192, 1000).with_bytes(4000)).unwrap();
    assert_eq!(
        flat,
        vec![
            KernelArg::Ptr(P),
            KernelArg::I32(1000),
            KernelArg::Ptr(P + 4096),
            KernelArg::I32(1000),
            KernelArg::Ptr(P + 8192),
            KernelArg::I32(1000)
        ]
    );
    let flat = check_args(m.kernel("tile").unwrap(), &tile_args(good_t(), good_m())).unwrap();
    assert_eq!(
        flat,
        vec![
            KernelArg::Ptr(P),
            KernelArg::I32(100),
            KernelArg::Ptr(P + 0x10000),
            KernelArg::I32(5),
            KernelArg::I32(2),
            KernelArg::U32(1.5f32.to_bits()),
            KernelArg::U32(3),
        ]
    );
}

#[test]
fn wrong_dtype() {
    let m = manifest();
    let a = TensorView::contiguous_1d(P, DType::F16, 1000);
    refused(
        vadd(&m, a, v1(P, 1000), v1(P, 1000)),
        "a",
        "dtype mismatch: the kernel expects f32 elements but the view has f16",
    );
    // Scalars too.
    let k = m.kernel("tile").unwrap();
    let mut args = tile_args(good_t(), good_m());
    args[3] = Arg::i64(3);
    refused(check_args(k, &args), "k", "expects a i32 scalar but got a i64 scalar");
}

#[test]
fn wrong_rank() {
    let m = manifest();
    let b = TensorView::new(P, DType::F32, &[10, 100], &[1, 10]);
    refused(vadd(&m, v1(P, 1000), b, v1(P, 1000)), "b", "rank mismatch");
    let k = m.kernel("tile").unwrap();
    let t = TensorView::new(P, DType::F16, &[800], &[1]);
    refused(
        check_args(k, &tile_args(t, good_m())),
        "t",
        "rank mismatch: the kernel expects a rank-2 tensor with layout (?,8):(8,1)",
    );
}

#[test]
fn wrong_static_extent() {
    let m = manifest();
    let k = m.kernel("tile").unwrap();
    // The seed's failure: a tensor whose static extent is larger in the kernel than in memory.
    let t = TensorView::new(P, DType::F16, &[100, 4], &[8, 1]);
    refused(check_args(k, &tile_args(t, good_m())), "t", "static extent mismatch: shape entry 1 is 8 in the kernel");
    let mm = TensorView::new(P, DType::F32, &[4, 5, 8], &[1, 2, 64]);
    refused(check_args(k, &tile_args(good_t(), mm)), "m", "shape entry 0 is 2 in the kernel");
}

#[test]
fn wrong_stride() {
    let m = manifest();
    let c = TensorView::new(P, DType::F32, &[1000], &[2]);
    refused(vadd(&m, v1(P, 1000), v1(P, 1000), c), "c", "stride mismatch: stride entry 0 is 1 in the kernel");
    let k = m.kernel("tile").unwrap();
    let t = TensorView::new(P, DType::F16, &[100, 8], &[1, 100]); // column-major instead of row-major
    refused(check_args(k, &tile_args(t, good_m())), "t", "stride mismatch");
    let mm = TensorView::new(P, DType::F32, &[2, 5, 8], &[1, -2, 64]);
    refused(check_args(k, &tile_args(good_t(), mm)), "m", "dynamic stride entry 1 = -2 does not fit");
}

#[test]
fn misaligned_pointer() {
    let m = manifest();
    refused(
        vadd(&m, v1(P + 2, 1000), v1(P, 1000), v1(P, 1000)),
        "a",
        "misaligned pointer: 0x7f0000000002 is not a multiple of 4 bytes",
    );
    let k = m.kernel("tile").unwrap();
    let t = TensorView::new(P + 8, DType::F16, &[100, 8], &[8, 1]);
    refused(check_args(k, &tile_args(t, good_m())), "t", "not a multiple of 16 bytes");
}

#[test]
fn null_pointer() {
    let m = manifest();
    refused(vadd(&m, v1(P, 1000), v1(0, 1000), v1(P, 1000)), "b", "null pointer");
}

#[test]
fn dynamic_values_must_fit_i32() {
    let m = manifest();
    refused(
        vadd(&m, v1(P, 1 << 31), v1(P, 1000), v1(P, 1000)),
        "a",
        "dynamic shape entry 0 = 2147483648 is not a positive i32 extent",
    );
    refused(vadd(&m, v1(P, -1), v1(P, 1000), v1(P, 1000)), "a", "dynamic shape entry 0 = -1");
    // Extents are positive: the generated code divides by them.
    refused(
        vadd(&m, v1(P, 0).with_bytes(0), v1(P, 0), v1(P, 0)),
        "a",
        "dynamic shape entry 0 = 0 is not a positive i32 extent",
    );
    // In range per entry, but the offsets overflow the kernel's 32-bit index math.
    let k = m.kernel("tile").unwrap();
    let mm = TensorView::new(P, DType::F32, &[2, 1 << 20, 8], &[1, 1 << 12, 64]);
    refused(check_args(k, &tile_args(good_t(), mm)), "m", "beyond the kernel's 32-bit index math");
}

#[test]
fn out_of_bounds_when_the_size_is_known() {
    let m = manifest();
    // 1000 elements claimed over a 3996-byte allocation: one element short.
    let c = v1(P, 1000).with_bytes(3996);
    refused(
        vadd(&m, v1(P, 1000), v1(P, 1000), c),
        "c",
        "out of bounds: shape [1000] stride [1] reaches 4000 bytes but the view's memory holds 3996",
    );
    assert!(vadd(&m, v1(P, 1000), v1(P, 1000), v1(P, 999).with_bytes(3996)).is_ok());
}

#[test]
fn wrong_argument_count_and_kind() {
    let m = manifest();
    let k = m.kernel("vector_add").unwrap();
    let e = check_args(k, &[Arg::tensor(v1(P, 1)), Arg::tensor(v1(P, 1))]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "kernel argument mismatch: kernel `vector_add` takes 3 parameters (a, b, c) but 2 arguments were given"
    );
    refused(
        check_args(k, &[Arg::tensor(v1(P, 1)), Arg::i32(1), Arg::tensor(v1(P, 1))]),
        "b",
        "expects a tensor (tensor<f32, gmem, ?:1, align: 4>) but got a i32 scalar",
    );
    let t = m.kernel("tile").unwrap();
    let mut args = tile_args(good_t(), good_m());
    args[2] = Arg::tensor(v1(P, 1));
    refused(check_args(t, &args), "alpha", "expects a f32 scalar but got a f32 tensor view");
}

#[test]
fn shared_memory_parameters_cannot_be_passed_from_the_host() {
    let m = manifest();
    let k = m.kernel("shared").unwrap();
    refused(check_args(k, &[Arg::tensor(v1(P, 32))]), "s", "the kernel takes a smem tensor");
}

#[test]
fn messages_name_kernel_and_position() {
    let m = manifest();
    let e = vadd(&m, v1(P, 10), v1(P, 10), v1(0, 10)).unwrap_err();
    assert_eq!(e.to_string(), "kernel argument mismatch: kernel `vector_add` parameter `c` (argument 2): null pointer");
}

/// The cubin cutec built for samples/vector_add.cute (checked in as
/// testdata/vector_add.sm_90.elf): its manifest is read from the ELF symbol
/// table on the host.
#[test]
fn manifest_of_a_real_cubin() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/vector_add.sm_90.elf");
    let m = Manifest::from_file(path).expect("readable").expect("has a manifest");
    assert_eq!(m.arch.as_deref(), Some("sm_90"));
    let k = m.kernel("vector_add").expect("vector_add");
    assert_eq!(k.to_string(), "vector_add(a: tensor<f32, gmem, ?:1, align: 4>, b: tensor<f32, gmem, ?:1, align: 4>, c: tensor<f32, gmem, ?:1, align: 4>)");
    assert_eq!(k.abi(), "(u64 a, i32 a.shape[0], u64 b, i32 b.shape[0], u64 c, i32 c.shape[0])");
    refused(
        check_args(
            k,
            &[Arg::tensor(v1(P, 8)), Arg::tensor(v1(P, 8)), Arg::tensor(TensorView::contiguous_1d(P, DType::F64, 8))],
        ),
        "c",
        "dtype mismatch",
    );
}
