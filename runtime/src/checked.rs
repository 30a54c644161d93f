//! Checked launches: typed tensor views and scalars, checked against a
//! kernel's manifest signature before anything reaches the driver.
//!
//! [`check_args`] is a pure function of the signature and the arguments (no
//! driver call), so every refusal is unit-tested without a GPU. On success it
//! returns the flat kernel-ABI argument list (pointer, dynamic shape entries,
//! dynamic stride entries per tensor; scalars by value).

use crate::error::{Result, RuntimeError};
use crate::launch::KernelArg;
use cute_abi::manifest::{var_sources_of, KernelSig, ParamKind, ParamSig, TensorSig};
use cute_abi::{DType, MemSpace as Space};

/// A tensor as the host sees it: a device pointer, an element type, and the
/// shape and stride leaves in flattened mode order (in elements). `bytes`,
/// when known, is how many bytes are addressable from `ptr`; the check then
/// also proves the layout stays inside them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorView {
    /// Device address of element 0.
    pub ptr: u64,
    /// Element type.
    pub dtype: DType,
    /// Shape leaves, flattened mode order.
    pub shape: Vec<i64>,
    /// Stride leaves (elements), flattened mode order.
    pub stride: Vec<i64>,
    /// Bytes addressable from `ptr` (`None`: unknown, not checked).
    pub bytes: Option<u64>,
}

impl TensorView {
    /// A view of `ptr` with the given shape and stride leaves.
    pub fn new(ptr: u64, dtype: DType, shape: &[i64], stride: &[i64]) -> TensorView {
        TensorView { ptr, dtype, shape: shape.to_vec(), stride: stride.to_vec(), bytes: None }
    }

    /// A contiguous 1-D view of `n` elements.
    pub fn contiguous_1d(ptr: u64, dtype: DType, n: i64) -> TensorView {
        TensorView::new(ptr, dtype, &[n], &[1])
    }

    /// Records how many bytes are addressable from `ptr` (enables the bounds check).
    pub fn with_bytes(mut self, bytes: u64) -> TensorView {
        self.bytes = Some(bytes);
        self
    }

    /// Reinterprets the elements as `dtype` (e.g. `u16` buffers holding f16).
    pub fn with_dtype(mut self, dtype: DType) -> TensorView {
        self.dtype = dtype;
        self
    }
}

/// One argument of a checked launch.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// A tensor parameter.
    Tensor(TensorView),
    /// A scalar parameter: its type and its bits (little-endian, low bytes).
    Scalar(DType, u64),
    /// A host function's `stream` parameter: a raw `CUstream` handle (0: the legacy default
    /// stream). [`Arg::stream`] makes one from a [`crate::Stream`]; a raw handle must be a live
    /// stream of the module's context (the contract of [`crate::Device::borrow_stream`]): a
    /// wrong one makes the launch fail with the driver's error.
    Stream(u64),
}

impl Arg {
    /// A `stream` argument: launches of the host function with `stream(s)` go to `stream`.
    pub fn stream(stream: &crate::device::Stream) -> Arg {
        Arg::Stream(stream.handle())
    }
    /// A tensor argument.
    pub fn tensor(view: TensorView) -> Arg {
        Arg::Tensor(view)
    }
    /// An `i8` scalar.
    pub fn i8(v: i8) -> Arg {
        Arg::Scalar(DType::I8, u64::from(v as u8))
    }
    /// An `i16` scalar.
    pub fn i16(v: i16) -> Arg {
        Arg::Scalar(DType::I16, u64::from(v as u16))
    }
    /// An `i32` scalar.
    pub fn i32(v: i32) -> Arg {
        Arg::Scalar(DType::I32, u64::from(v as u32))
    }
    /// An `i64` scalar.
    pub fn i64(v: i64) -> Arg {
        Arg::Scalar(DType::I64, v as u64)
    }
    /// A `u8` scalar.
    pub fn u8(v: u8) -> Arg {
        Arg::Scalar(DType::U8, u64::from(v))
    }
    /// A `u16` scalar.
    pub fn u16(v: u16) -> Arg {
        Arg::Scalar(DType::U16, u64::from(v))
    }
    /// A `u32` scalar.
    pub fn u32(v: u32) -> Arg {
        Arg::Scalar(DType::U32, u64::from(v))
    }
    /// A `u64` scalar.
    pub fn u64(v: u64) -> Arg {
        Arg::Scalar(DType::U64, v)
    }
    /// An `f32` scalar.
    pub fn f32(v: f32) -> Arg {
        Arg::Scalar(DType::F32, u64::from(v.to_bits()))
    }
    /// An `f64` scalar.
    pub fn f64(v: f64) -> Arg {
        Arg::Scalar(DType::F64, v.to_bits())
    }
    /// An `f16` scalar given as binary16 bits.
    pub fn f16_bits(v: u16) -> Arg {
        Arg::Scalar(DType::F16, u64::from(v))
    }
    /// A `bf16` scalar given as bfloat16 bits.
    pub fn bf16_bits(v: u16) -> Arg {
        Arg::Scalar(DType::BF16, u64::from(v))
    }
    /// A `bool` scalar.
    pub fn bool(v: bool) -> Arg {
        Arg::Scalar(DType::Bool, u64::from(v))
    }

    fn describe(&self) -> String {
        match self {
            Arg::Tensor(v) => format!("a {} tensor view", v.dtype),
            Arg::Scalar(d, _) => format!("a {d} scalar"),
            Arg::Stream(_) => "a stream".into(),
        }
    }
}

/// The kernel-ABI value of a scalar of type `d` with bits `bits`.
fn scalar_arg(d: DType, bits: u64) -> KernelArg {
    match d.size_bytes() {
        8 => KernelArg::U64(bits),
        4 => KernelArg::U32(bits as u32),
        2 => KernelArg::F16Bits(bits as u16),
        _ => KernelArg::U8(bits as u8),
    }
}

fn mismatch(role: &str, kernel: &str, index: usize, param: &str, what: String) -> RuntimeError {
    RuntimeError::ArgumentMismatch(format!("{role} `{kernel}` parameter `{param}` (argument {index}): {what}"))
}

/// A borrowed tensor view (what [`check_tensor_ref`] checks): lets host calls check the views
/// they build without allocating.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ViewRef<'a> {
    pub ptr: u64,
    pub dtype: DType,
    pub shape: &'a [i64],
    pub stride: &'a [i64],
    pub bytes: Option<u64>,
}

impl<'a> From<&'a TensorView> for ViewRef<'a> {
    fn from(v: &'a TensorView) -> Self {
        ViewRef { ptr: v.ptr, dtype: v.dtype, shape: &v.shape, stride: &v.stride, bytes: v.bytes }
    }
}

fn list(v: &[i64]) -> String {
    let s: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("[{}]", s.join(", "))
}

/// Checks one tensor view against a tensor parameter and appends its kernel-ABI values to `out`.
/// `role` is `kernel` or `host` (for messages).
/// What a tensor argument is checked for: the kernel or host `name` (a `role`) and the width of
/// the index math that will address it (32 or 64 bits).
#[derive(Clone, Copy)]
pub(crate) struct Callee<'a> {
    pub name: &'a str,
    pub role: &'a str,
    pub index_bits: u32,
}

impl<'a> Callee<'a> {
    pub fn kernel(sig: &'a KernelSig) -> Self {
        Callee { name: &sig.name, role: "kernel", index_bits: sig.index_bits }
    }
}

pub(crate) fn check_tensor_ref(
    callee: &Callee<'_>,
    index: usize,
    param: &str,
    sig: &TensorSig,
    view: &ViewRef<'_>,
    out: &mut Vec<KernelArg>,
) -> Result<()> {
    let Callee { name: kernel, role, index_bits } = *callee;
    let err = |what: String| mismatch(role, kernel, index, param, what);
    // A 64-bit kernel's extents, strides and offsets are `i64`; a 32-bit one's `i32`.
    let wide = index_bits == 64;
    let max_index = if wide { i64::MAX } else { i64::from(i32::MAX) };
    if sig.space != Space::Gmem {
        return Err(err(format!(
            "the {role} takes a {} tensor, which cannot be passed from the host",
            sig.space.name()
        )));
    }
    if view.ptr == 0 {
        return Err(err("null pointer".into()));
    }
    if view.dtype != sig.elem {
        return Err(err(format!(
            "dtype mismatch: the {role} expects {} elements but the view has {}",
            sig.elem, view.dtype
        )));
    }
    let leaves = sig.shape_leaves.len();
    if view.shape.len() != leaves || view.stride.len() != leaves {
        return Err(err(format!(
            "rank mismatch: the kernel expects a rank-{} tensor with layout {}:{} ({leaves} shape and stride entries) \
             but the view has shape {} and stride {}",
            sig.rank(),
            sig.shape,
            sig.stride,
            list(view.shape),
            list(view.stride)
        )));
    }
    for (i, (want, &got)) in sig.shape_leaves.iter().zip(view.shape).enumerate() {
        match want {
            Some(w) if *w != got => {
                return Err(err(format!(
                    "static extent mismatch: shape entry {i} is {w} in the {role} (layout {}:{}) but {got} in the view",
                    sig.shape, sig.stride
                )))
            }
            // Extents are at least 1: the generated code divides by them (an empty tensor has
            // nothing to launch for).
            None if !(1..=max_index).contains(&got) => {
                let ty = if wide { "i64" } else { "i32" };
                return Err(err(format!(
                    "dynamic shape entry {i} = {got} is not a positive {ty} extent (1..={max_index})"
                )));
            }
            None => {
                let d = sig.shape_div.get(i).copied().unwrap_or(1);
                if d > 1 && got % d != 0 {
                    return Err(err(format!(
                        "divisibility: shape entry {i} = {got} must be a multiple of {d} (the {role} declares `?{{div={d}}}` in {}:{})",
                        sig.shape, sig.stride
                    )));
                }
            }
            _ => {}
        }
    }
    for (i, (want, &got)) in sig.stride_leaves.iter().zip(view.stride).enumerate() {
        match want {
            Some(w) if *w != got => {
                return Err(err(format!(
                    "stride mismatch: stride entry {i} is {w} in the {role} (layout {}:{}) but {got} in the view",
                    sig.shape, sig.stride
                )))
            }
            None if !(0..=max_index).contains(&got) => {
                let ty = if wide { "i64" } else { "i32" };
                return Err(err(format!(
                    "dynamic stride entry {i} = {got} does not fit the {role}'s {ty} (0..={max_index})"
                )));
            }
            None => {
                let d = sig.stride_div.get(i).copied().unwrap_or(1);
                if d > 1 && got % d != 0 {
                    return Err(err(format!(
                        "divisibility: stride entry {i} = {got} must be a multiple of {d} (the {role} declares `?{{div={d}}}` in {}:{})",
                        sig.shape, sig.stride
                    )));
                }
            }
            _ => {}
        }
    }
    if !view.ptr.is_multiple_of(u64::from(sig.align)) {
        return Err(err(format!(
            "misaligned pointer: {:#x} is not a multiple of {} bytes (the {role}'s `align: {}`)",
            view.ptr, sig.align, sig.align
        )));
    }
    // The largest element offset the layout reaches; the kernel computes
    // offsets in i32, and must stay inside the memory when its size is known.
    if view.shape.iter().all(|&s| s > 0) {
        let mut max: i128 = 0;
        for (&s, &d) in view.shape.iter().zip(view.stride) {
            max += i128::from(s - 1) * i128::from(d);
        }
        if max > i128::from(max_index) {
            return Err(err(format!(
                "the layout reaches element offset {max}, beyond the {role}'s {index_bits}-bit index math (at most {max_index})"
            )));
        }
        if let Some(bytes) = view.bytes {
            let need = (max + 1) * i128::from(sig.elem.size_bytes());
            if need > i128::from(bytes) {
                return Err(err(format!(
                    "out of bounds: shape {} stride {} reaches {need} bytes but the view's memory holds {bytes}",
                    list(view.shape),
                    list(view.stride)
                )));
            }
        }
    }
    out.push(KernelArg::Ptr(view.ptr));
    let dynamic = |(want, &got): (&Option<i64>, &i64)| want.is_none().then_some(got);
    let values = sig.shape_leaves.iter().zip(view.shape).chain(sig.stride_leaves.iter().zip(view.stride));
    // Checked above to fit the kernel's index type.
    out.extend(values.filter_map(dynamic).map(|v| if wide { KernelArg::I64(v) } else { KernelArg::I32(v as i32) }));
    Ok(())
}

/// Checks `args` against kernel signature `sig` and appends the kernel-ABI
/// arguments to `out` (cleared first). Errors name the kernel, the
/// parameter, its position and the mismatch.
pub fn check_args_into(sig: &KernelSig, args: &[Arg], out: &mut Vec<KernelArg>) -> Result<()> {
    check_args_named(&sig.name, "kernel", &sig.params, args, sig.index_bits, out)?;
    if !sig.requires.is_empty() || !sig.fast_divisors.is_empty() {
        // The kernel's `$k` are its dynamic ABI values: every flat argument but the pointers.
        let vars = crate::fastdiv::vars_of(out);
        let sources = var_sources_of(&sig.params);
        for r in &sig.requires {
            r.check(&vars, &sig.params, &sources)
                .map_err(|m| RuntimeError::ArgumentMismatch(format!("kernel `{}`: {m}", sig.name)))?;
        }
        // The multiplier and shift of each run-time divisor, after the declared parameters.
        crate::fastdiv::push_fast_divisors(sig, &vars, out)
            .map_err(|m| RuntimeError::ArgumentMismatch(format!("kernel `{}`: {m}", sig.name)))?;
    }
    Ok(())
}

/// [`check_args_into`] for any parameter list; `role` (`kernel`, `host`) and `name` label the
/// messages; tensors are checked against index math of `index_bits` (32 or 64).
pub(crate) fn check_args_named(
    name: &str,
    role: &str,
    params: &[ParamSig],
    args: &[Arg],
    index_bits: u32,
    out: &mut Vec<KernelArg>,
) -> Result<()> {
    out.clear();
    if args.len() != params.len() {
        let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
        return Err(RuntimeError::ArgumentMismatch(format!(
            "{role} `{name}` takes {} parameters ({}) but {} arguments were given",
            params.len(),
            names.join(", "),
            args.len()
        )));
    }
    for (i, (p, a)) in params.iter().zip(args).enumerate() {
        match (&p.kind, a) {
            (ParamKind::Tensor(t), Arg::Tensor(v)) => {
                check_tensor_ref(&Callee { name, role, index_bits }, i, &p.name, t, &ViewRef::from(v), out)?
            }
            (ParamKind::Scalar(d), Arg::Scalar(g, bits)) => {
                if d != g {
                    return Err(mismatch(
                        role,
                        name,
                        i,
                        &p.name,
                        format!("dtype mismatch: the {role} expects a {d} scalar but got a {g} scalar"),
                    ));
                }
                out.push(scalar_arg(*d, *bits));
            }
            // A stream is no kernel argument: nothing to pass (launches read it from `args`).
            (ParamKind::Stream, Arg::Stream(_)) => {}
            (ParamKind::Stream, other) => {
                return Err(mismatch(
                    role,
                    name,
                    i,
                    &p.name,
                    format!(
                        "the {role} expects a stream (a CUstream handle; 0 is the legacy default stream) but got {}",
                        other.describe()
                    ),
                ))
            }
            (ParamKind::Tensor(t), other) => {
                return Err(mismatch(
                    role,
                    name,
                    i,
                    &p.name,
                    format!("the {role} expects a tensor ({t}) but got {}", other.describe()),
                ))
            }
            (ParamKind::Scalar(d), other) => {
                return Err(mismatch(
                    role,
                    name,
                    i,
                    &p.name,
                    format!("the {role} expects a {d} scalar but got {}", other.describe()),
                ))
            }
        }
    }
    Ok(())
}

/// [`check_args_into`] returning a new vector.
pub fn check_args(sig: &KernelSig, args: &[Arg]) -> Result<Vec<KernelArg>> {
    let mut out = Vec::with_capacity(args.len() * 2);
    check_args_into(sig, args, &mut out)?;
    Ok(out)
}
