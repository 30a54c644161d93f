//! The C ABI (`runtime/include/cute_runtime.h`): opaque handles, status
//! codes, a thread-local error message, checked launches and CUDA graphs.
//!
//! Every function returns a `cute_status` (`CUTE_OK` = 0) and never unwinds
//! into C: panics are caught and reported as `CUTE_ERROR_INTERNAL`.
//! `cute_last_error()` gives the message of the last failing call on the
//! calling thread. Handles are released with their `*_release` function;
//! releasing NULL is a no-op. Kernels, streams and graphs keep their module /
//! device alive internally, so release order does not matter.

#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)]

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::checked::{Arg, TensorView};
use crate::device::{Device, Stream};
use crate::driver::{self, driver_error};
use crate::error::{Result, RuntimeError};
use crate::graph::Graph;
use crate::host::HostFn;
use crate::kernel::Kernel;
use crate::launch::LaunchConfig;
use crate::manifest::{DType, Manifest};
use crate::module::Module;

/// Status codes (`cute_status` in C).
pub const CUTE_OK: c_int = 0;
/// No driver, no GPU or driver too old.
pub const CUTE_ERROR_UNAVAILABLE: c_int = 1;
/// A checked launch was refused: an argument does not match the kernel.
pub const CUTE_ERROR_ARGUMENT_MISMATCH: c_int = 2;
/// Misuse: NULL handle, bad length, bad dtype code, ...
pub const CUTE_ERROR_INVALID_ARGUMENT: c_int = 3;
/// Bad grid/block/shared memory.
pub const CUTE_ERROR_INVALID_LAUNCH: c_int = 4;
/// No kernel of that name.
pub const CUTE_ERROR_NOT_FOUND: c_int = 5;
/// Not a loadable image, or a corrupt manifest.
pub const CUTE_ERROR_INVALID_IMAGE: c_int = 6;
/// A file could not be read.
pub const CUTE_ERROR_IO: c_int = 7;
/// A CUDA driver call failed.
pub const CUTE_ERROR_DRIVER: c_int = 8;
/// Checked launch of a kernel without a manifest entry.
pub const CUTE_ERROR_NO_MANIFEST: c_int = 9;
/// A bug in cute-runtime (a caught panic).
pub const CUTE_ERROR_INTERNAL: c_int = 10;

/// Most shape/stride leaves a `cute_tensor` holds.
pub const CUTE_MAX_LEAVES: usize = 16;
/// `cute_arg.kind` of a tensor.
pub const CUTE_ARG_TENSOR: i32 = 1;
/// `cute_arg.kind` of a scalar.
pub const CUTE_ARG_SCALAR: i32 = 2;
/// `cute_arg.kind` of a host function's `stream` parameter: `value.stream` is a `CUstream`.
pub const CUTE_ARG_STREAM: i32 = 3;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(msg: &str) {
    let c = CString::new(msg.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

/// The `cute_status` code of an error (`cute_status_name` names it): what the C ABI returns for it.
pub fn status_of(e: &RuntimeError) -> c_int {
    match e {
        RuntimeError::NoDriver(_) | RuntimeError::NoDevice(_) | RuntimeError::DriverTooOld { .. } => {
            CUTE_ERROR_UNAVAILABLE
        }
        RuntimeError::ArgumentMismatch(_) => CUTE_ERROR_ARGUMENT_MISMATCH,
        RuntimeError::InvalidArgument(_) => CUTE_ERROR_INVALID_ARGUMENT,
        RuntimeError::InvalidLaunch(_) => CUTE_ERROR_INVALID_LAUNCH,
        RuntimeError::KernelNotFound { .. } | RuntimeError::HostNotFound { .. } => CUTE_ERROR_NOT_FOUND,
        RuntimeError::InvalidImage(_) => CUTE_ERROR_INVALID_IMAGE,
        RuntimeError::Io { .. } => CUTE_ERROR_IO,
        RuntimeError::Driver { .. } => CUTE_ERROR_DRIVER,
        RuntimeError::NoManifest(_) => CUTE_ERROR_NO_MANIFEST,
    }
}

/// Runs `f`, converting `Err` and panics into a status + last error.
fn guard(f: impl FnOnce() -> Result<()>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => CUTE_OK,
        Ok(Err(e)) => {
            set_last_error(&e.to_string());
            status_of(&e)
        }
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_last_error(&format!("internal error in cute-runtime (please report): {what}"));
            CUTE_ERROR_INTERNAL
        }
    }
}

fn invalid(msg: impl Into<String>) -> RuntimeError {
    RuntimeError::InvalidArgument(msg.into())
}

unsafe fn handle<'a, T>(p: *const T, what: &str) -> Result<&'a T> {
    // SAFETY: the caller passes a handle from this library or NULL.
    unsafe { p.as_ref() }.ok_or_else(|| invalid(format!("{what} is NULL")))
}

unsafe fn out_ptr<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T> {
    // SAFETY: the caller passes a writable location or NULL.
    unsafe { p.as_mut() }.ok_or_else(|| invalid(format!("{what} (output pointer) is NULL")))
}

/// Drops a handle made by `Box::into_raw` here; NULL is a no-op, and a panic in a destructor
/// does not cross the C boundary.
unsafe fn release<T>(p: *mut T) {
    if !p.is_null() {
        // SAFETY: the caller passes a handle this library created with Box::into_raw, once.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(p) })));
    }
}

unsafe fn c_str<'a>(p: *const c_char, what: &str) -> Result<&'a str> {
    if p.is_null() {
        return Err(invalid(format!("{what} is NULL")));
    }
    // SAFETY: non-NULL, NUL-terminated by contract.
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|_| invalid(format!("{what} is not UTF-8")))
}

/// Opaque device handle.
pub struct cute_device(Device);
/// Opaque stream handle.
pub struct cute_stream(Stream);
/// Opaque module handle.
pub struct cute_module {
    module: Module,
    manifest: Option<CString>,
}
/// Opaque kernel handle.
pub struct cute_kernel(Kernel);
/// Opaque graph handle.
pub struct cute_graph(Graph);
/// Opaque host-function handle.
pub struct cute_host(HostFn);

/// Grid, block and dynamic shared memory of a launch.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cute_launch_config {
    /// Blocks per grid (x, y, z).
    pub grid: [u32; 3],
    /// Threads per block (x, y, z).
    pub block: [u32; 3],
    /// Dynamic shared memory per block, bytes.
    pub shared_mem_bytes: u32,
}

/// A tensor view: device pointer, element type, shape and stride leaves
/// (flattened mode order, in elements), and the bytes addressable from
/// `ptr` (0 = unknown: no bounds check).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cute_tensor {
    /// Device address.
    pub ptr: u64,
    /// `CUTE_DTYPE_*`.
    pub dtype: i32,
    /// Number of shape (and stride) leaves used.
    pub nleaves: i32,
    /// Shape leaves.
    pub shape: [i64; CUTE_MAX_LEAVES],
    /// Stride leaves.
    pub stride: [i64; CUTE_MAX_LEAVES],
    /// Bytes addressable from `ptr`; 0 = unknown.
    pub bytes: u64,
}

/// The value of a `cute_arg`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union cute_arg_value {
    /// `CUTE_ARG_TENSOR`.
    pub tensor: *const cute_tensor,
    /// Signed integer scalars.
    pub i: i64,
    /// Unsigned integer scalars, bool, and f16/bf16/f8 bit patterns.
    pub u: u64,
    /// f32 / f64 / tf32 scalars.
    pub f: f64,
    /// `CUTE_ARG_STREAM`: a `CUstream` (NULL: the legacy default stream).
    pub stream: *mut c_void,
}

/// One argument of `cute_kernel_launch`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct cute_arg {
    /// `CUTE_ARG_TENSOR`, `CUTE_ARG_SCALAR` or `CUTE_ARG_STREAM`.
    pub kind: i32,
    /// For scalars: `CUTE_DTYPE_*`.
    pub dtype: i32,
    /// The value.
    pub value: cute_arg_value,
}

fn dtype_of(code: i32, what: &str) -> Result<DType> {
    DType::from_code(code).ok_or_else(|| invalid(format!("{what}: unknown dtype code {code}")))
}

unsafe fn convert_args(args: *const cute_arg, nargs: usize) -> Result<Vec<Arg>> {
    if nargs == 0 {
        return Ok(Vec::new());
    }
    if args.is_null() {
        return Err(invalid(format!("args is NULL but nargs is {nargs}")));
    }
    // SAFETY: the caller passes `nargs` valid elements.
    let args = unsafe { std::slice::from_raw_parts(args, nargs) };
    let mut out = Vec::with_capacity(nargs);
    for (i, a) in args.iter().enumerate() {
        match a.kind {
            CUTE_ARG_TENSOR => {
                // SAFETY: a tensor argument's value is the `tensor` field.
                let t = unsafe { a.value.tensor };
                // SAFETY: NULL or a valid cute_tensor.
                let t =
                    unsafe { t.as_ref() }.ok_or_else(|| invalid(format!("argument {i}: tensor pointer is NULL")))?;
                let n = usize::try_from(t.nleaves).ok().filter(|&n| n <= CUTE_MAX_LEAVES).ok_or_else(|| {
                    invalid(format!("argument {i}: nleaves {} not in 0..={CUTE_MAX_LEAVES}", t.nleaves))
                })?;
                let mut v =
                    TensorView::new(t.ptr, dtype_of(t.dtype, &format!("argument {i}"))?, &t.shape[..n], &t.stride[..n]);
                if t.bytes != 0 {
                    v = v.with_bytes(t.bytes);
                }
                out.push(Arg::Tensor(v));
            }
            CUTE_ARG_SCALAR => {
                let d = dtype_of(a.dtype, &format!("argument {i}"))?;
                // SAFETY: all union fields are plain 8-byte values.
                let (iv, uv, fv) = unsafe { (a.value.i, a.value.u, a.value.f) };
                out.push(match d {
                    DType::I8 => Arg::i8(iv as i8),
                    DType::I16 => Arg::i16(iv as i16),
                    DType::I32 => Arg::i32(iv as i32),
                    DType::I64 => Arg::i64(iv),
                    DType::F32 | DType::TF32 => Arg::Scalar(d, u64::from((fv as f32).to_bits())),
                    DType::F64 => Arg::f64(fv),
                    DType::Bool => Arg::bool(uv != 0),
                    _ => Arg::Scalar(d, uv),
                });
            }
            CUTE_ARG_STREAM => {
                // SAFETY: a stream argument's value is the `stream` field.
                out.push(Arg::Stream(unsafe { a.value.stream } as usize as u64));
            }
            k => {
                return Err(invalid(format!(
                    "argument {i}: unknown kind {k} (CUTE_ARG_TENSOR=1, CUTE_ARG_SCALAR=2, CUTE_ARG_STREAM=3)"
                )))
            }
        }
    }
    Ok(out)
}

/// The message of the last failing call on this thread ("" if none). Valid
/// until the next failing call on the same thread.
#[no_mangle]
pub extern "C" fn cute_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// A static name for a status code (`"CUTE_ERROR_ARGUMENT_MISMATCH"`).
#[no_mangle]
pub extern "C" fn cute_status_name(status: c_int) -> *const c_char {
    let s: &'static CStr = match status {
        CUTE_OK => c"CUTE_OK",
        CUTE_ERROR_UNAVAILABLE => c"CUTE_ERROR_UNAVAILABLE",
        CUTE_ERROR_ARGUMENT_MISMATCH => c"CUTE_ERROR_ARGUMENT_MISMATCH",
        CUTE_ERROR_INVALID_ARGUMENT => c"CUTE_ERROR_INVALID_ARGUMENT",
        CUTE_ERROR_INVALID_LAUNCH => c"CUTE_ERROR_INVALID_LAUNCH",
        CUTE_ERROR_NOT_FOUND => c"CUTE_ERROR_NOT_FOUND",
        CUTE_ERROR_INVALID_IMAGE => c"CUTE_ERROR_INVALID_IMAGE",
        CUTE_ERROR_IO => c"CUTE_ERROR_IO",
        CUTE_ERROR_DRIVER => c"CUTE_ERROR_DRIVER",
        CUTE_ERROR_NO_MANIFEST => c"CUTE_ERROR_NO_MANIFEST",
        CUTE_ERROR_INTERNAL => c"CUTE_ERROR_INTERNAL",
        _ => c"CUTE_ERROR_UNKNOWN_STATUS",
    };
    s.as_ptr()
}

/// 1 when libcuda can be loaded, else 0.
#[no_mangle]
pub extern "C" fn cute_driver_available() -> c_int {
    catch_unwind(crate::driver_available).map_or(0, c_int::from)
}

/// Opens device `ordinal` (its primary context).
#[no_mangle]
pub unsafe extern "C" fn cute_device_open(ordinal: c_int, out: *mut *mut cute_device) -> c_int {
    guard(|| {
        let out = unsafe { out_ptr(out, "out") }?;
        *out = std::ptr::null_mut();
        let ordinal = usize::try_from(ordinal).map_err(|_| invalid(format!("device ordinal {ordinal} is negative")))?;
        *out = Box::into_raw(Box::new(cute_device(Device::open(ordinal)?)));
        Ok(())
    })
}

/// Releases a device handle.
#[no_mangle]
pub unsafe extern "C" fn cute_device_release(dev: *mut cute_device) {
    unsafe { release(dev) }
}

/// Waits for all work on the device.
#[no_mangle]
pub unsafe extern "C" fn cute_device_synchronize(dev: *const cute_device) -> c_int {
    guard(|| unsafe { handle(dev, "device") }?.0.synchronize())
}

/// Creates a new (non-blocking) stream; capturable into graphs.
#[no_mangle]
pub unsafe extern "C" fn cute_stream_create(dev: *const cute_device, out: *mut *mut cute_stream) -> c_int {
    guard(|| {
        let out = unsafe { out_ptr(out, "out") }?;
        *out = std::ptr::null_mut();
        let s = unsafe { handle(dev, "device") }?.0.new_stream()?;
        *out = Box::into_raw(Box::new(cute_stream(s)));
        Ok(())
    })
}

/// The device's default (legacy NULL) stream; cannot be captured.
#[no_mangle]
pub unsafe extern "C" fn cute_stream_default(dev: *const cute_device, out: *mut *mut cute_stream) -> c_int {
    guard(|| {
        let out = unsafe { out_ptr(out, "out") }?;
        *out = std::ptr::null_mut();
        let s = unsafe { handle(dev, "device") }?.0.default_stream();
        *out = Box::into_raw(Box::new(cute_stream(s)));
        Ok(())
    })
}

/// Waits for everything queued on the stream; kernel faults surface here.
#[no_mangle]
pub unsafe extern "C" fn cute_stream_synchronize(stream: *const cute_stream) -> c_int {
    guard(|| unsafe { handle(stream, "stream") }?.0.synchronize())
}

/// The stream's raw `CUstream` (NULL for the legacy default stream), for a host function's
/// `stream` parameter (`cute_arg_stream`); NULL also when `stream` is NULL.
#[no_mangle]
pub unsafe extern "C" fn cute_stream_raw(stream: *const cute_stream) -> *mut c_void {
    // SAFETY: NULL or a stream handle from this library.
    match unsafe { stream.as_ref() } {
        Some(s) => s.0.handle() as usize as *mut c_void,
        None => std::ptr::null_mut(),
    }
}

/// Releases a stream handle.
#[no_mangle]
pub unsafe extern "C" fn cute_stream_release(stream: *mut cute_stream) {
    unsafe { release(stream) }
}

/// Allocates `bytes` of device memory (at least 256-byte aligned).
#[no_mangle]
pub unsafe extern "C" fn cute_malloc(dev: *const cute_device, bytes: usize, out_ptr_: *mut u64) -> c_int {
    guard(|| {
        let out = unsafe { out_ptr(out_ptr_, "out") }?;
        *out = 0;
        unsafe { handle(dev, "device") }?.0.bind()?;
        // SAFETY: context current.
        *out = unsafe { cudarc::driver::result::malloc_sync(bytes.max(1)) }
            .map_err(|e| driver_error(format!("cuMemAlloc({bytes})"), e))?;
        Ok(())
    })
}

/// Frees memory from `cute_malloc` (0 is a no-op).
#[no_mangle]
pub unsafe extern "C" fn cute_free(dev: *const cute_device, ptr: u64) -> c_int {
    guard(|| {
        if ptr == 0 {
            return Ok(());
        }
        unsafe { handle(dev, "device") }?.0.bind()?;
        // SAFETY: ptr came from cute_malloc by contract.
        unsafe { cudarc::driver::result::free_sync(ptr) }.map_err(|e| driver_error("cuMemFree", e))
    })
}

/// Copies `bytes` from host `src` to device `dst`, ordered on `stream`;
/// returns after the copy has completed.
#[no_mangle]
pub unsafe extern "C" fn cute_memcpy_htod(
    stream: *const cute_stream,
    dst: u64,
    src: *const c_void,
    bytes: usize,
) -> c_int {
    guard(|| {
        let s = &unsafe { handle(stream, "stream") }?.0;
        if bytes == 0 {
            return Ok(());
        }
        if src.is_null() || dst == 0 {
            return Err(invalid("cute_memcpy_htod: NULL source or destination"));
        }
        // SAFETY: `src` holds `bytes` readable bytes by contract.
        let host = unsafe { std::slice::from_raw_parts(src as *const u8, bytes) };
        s.device().bind()?;
        // SAFETY: dst is device memory of at least `bytes` by contract; we
        // wait for the copy before `host` can go away.
        unsafe { cudarc::driver::result::memcpy_htod_async(dst, host, s.cuda().cu_stream()) }
            .map_err(|e| driver_error("cuMemcpyHtoDAsync", e))?;
        s.synchronize()
    })
}

/// Copies `bytes` from device `src` to host `dst`, ordered on `stream`;
/// returns after the copy has completed.
#[no_mangle]
pub unsafe extern "C" fn cute_memcpy_dtoh(
    stream: *const cute_stream,
    dst: *mut c_void,
    src: u64,
    bytes: usize,
) -> c_int {
    guard(|| {
        let s = &unsafe { handle(stream, "stream") }?.0;
        if bytes == 0 {
            return Ok(());
        }
        if dst.is_null() || src == 0 {
            return Err(invalid("cute_memcpy_dtoh: NULL source or destination"));
        }
        // SAFETY: `dst` holds `bytes` writable bytes by contract.
        let host = unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, bytes) };
        s.device().bind()?;
        // SAFETY: as above; we wait before returning.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(host, src, s.cuda().cu_stream()) }
            .map_err(|e| driver_error("cuMemcpyDtoHAsync", e))?;
        s.synchronize()
    })
}

fn module_handle(module: Module) -> *mut cute_module {
    let manifest = module.manifest().and_then(|m| CString::new(m.text.clone()).ok());
    Box::into_raw(Box::new(cute_module { module, manifest }))
}

/// Loads a cubin (or fatbin / PTX) file.
#[no_mangle]
pub unsafe extern "C" fn cute_module_load_file(
    dev: *const cute_device,
    path: *const c_char,
    out: *mut *mut cute_module,
) -> c_int {
    guard(|| {
        let out = unsafe { out_ptr(out, "out") }?;
        *out = std::ptr::null_mut();
        let dev = unsafe { handle(dev, "device") }?;
        let path = unsafe { c_str(path, "path") }?;
        *out = module_handle(Module::load_file(&dev.0, path)?);
        Ok(())
    })
}

/// Loads an image from memory (`len` bytes; e.g. an embedded cubin).
#[no_mangle]
pub unsafe extern "C" fn cute_module_load_data(
    dev: *const cute_device,
    data: *const c_void,
    len: usize,
    out: *mut *mut cute_module,
) -> c_int {
    guard(|| {
        let out = unsafe { out_ptr(out, "out") }?;
        *out = std::ptr::null_mut();
        let dev = unsafe { handle(dev, "device") }?;
        if data.is_null() {
            return Err(invalid("data is NULL"));
        }
        // SAFETY: `data` holds `len` readable bytes by contract.
        let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, len) };
        *out = module_handle(Module::load_bytes(&dev.0, bytes, "<memory>")?);
        Ok(())
    })
}

/// Releases a module handle (kernels obtained from it stay valid).
#[no_mangle]
pub unsafe extern "C" fn cute_module_release(module: *mut cute_module) {
    unsafe { release(module) }
}

/// The module's manifest text, or NULL when the image has none. Owned by
/// the module handle.
#[no_mangle]
pub unsafe extern "C" fn cute_module_manifest(module: *const cute_module) -> *const c_char {
    // SAFETY: NULL or a live handle.
    match unsafe { module.as_ref() } {
        Some(m) => m.manifest.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
        None => std::ptr::null(),
    }
}

/// Reads the manifest of a cubin file on the host (no GPU needed). On
/// success `*out` is a string to free with `cute_string_free`, or NULL when
/// the file is a cubin (ELF) without a manifest. A file that cannot be read is
/// `CUTE_ERROR_IO`; an empty or non-ELF file, a malformed ELF or a damaged
/// manifest (one with a NUL byte before its end, among others) is
/// `CUTE_ERROR_INVALID_IMAGE`, with the reason in `cute_last_error()`.
#[no_mangle]
pub unsafe extern "C" fn cute_manifest_read_file(path: *const c_char, out: *mut *mut c_char) -> c_int {
    guard(|| {
        let out = unsafe { out_ptr(out, "out") }?;
        *out = std::ptr::null_mut();
        let path = unsafe { c_str(path, "path") }?;
        if let Some(m) = Manifest::from_cubin_file(path)? {
            // The reader refuses a manifest with a NUL byte, so this cannot fail.
            *out = CString::new(m.text).map_err(|_| invalid("manifest contains NUL"))?.into_raw();
        }
        Ok(())
    })
}

/// Frees a string returned by this library.
#[no_mangle]
pub unsafe extern "C" fn cute_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: created by CString::into_raw.
        drop(unsafe { CString::from_raw(s) });
    }
}

/// Looks a kernel up by name.
#[no_mangle]
pub unsafe extern "C" fn cute_module_kernel(
    module: *const cute_module,
    name: *const c_char,
    out: *mut *mut cute_kernel,
) -> c_int {
    guard(|| {
        let out = unsafe { out_ptr(out, "out") }?;
        *out = std::ptr::null_mut();
        let m = unsafe { handle(module, "module") }?;
        let name = unsafe { c_str(name, "name") }?;
        *out = Box::into_raw(Box::new(cute_kernel(m.module.kernel(name)?)));
        Ok(())
    })
}

/// Releases a kernel handle.
#[no_mangle]
pub unsafe extern "C" fn cute_kernel_release(kernel: *mut cute_kernel) {
    unsafe { release(kernel) }
}

/// Checks `args` against the kernel's manifest signature without launching
/// (no driver call).
#[no_mangle]
pub unsafe extern "C" fn cute_kernel_check(kernel: *const cute_kernel, args: *const cute_arg, nargs: usize) -> c_int {
    guard(|| {
        let k = unsafe { handle(kernel, "kernel") }?;
        let args = unsafe { convert_args(args, nargs) }?;
        k.0.check(&args).map(|_| ())
    })
}

/// Checked, asynchronous launch of `kernel` on `stream`: every argument is
/// checked against the manifest first; a mismatch returns
/// `CUTE_ERROR_ARGUMENT_MISMATCH` (message names the parameter) and
/// nothing is launched.
#[no_mangle]
pub unsafe extern "C" fn cute_kernel_launch(
    kernel: *const cute_kernel,
    stream: *const cute_stream,
    config: *const cute_launch_config,
    args: *const cute_arg,
    nargs: usize,
) -> c_int {
    guard(|| {
        let k = unsafe { handle(kernel, "kernel") }?;
        let s = unsafe { handle(stream, "stream") }?;
        let c = unsafe { handle(config, "config") }?;
        let cfg = LaunchConfig {
            grid: (c.grid[0], c.grid[1], c.grid[2]),
            block: (c.block[0], c.block[1], c.block[2]),
            shared_mem_bytes: c.shared_mem_bytes,
        };
        let args = unsafe { convert_args(args, nargs) }?;
        k.0.launch_checked(&s.0, cfg, &args)
    })
}

/// Looks a host function of the module's manifest up by name (its kernels are looked up once,
/// here). `CUTE_ERROR_INVALID_ARGUMENT` when there is no such host function (the message lists
/// those there are), `CUTE_ERROR_INVALID_IMAGE` when its launch plan is unusable.
#[no_mangle]
pub unsafe extern "C" fn cute_module_host(
    module: *const cute_module,
    name: *const c_char,
    out: *mut *mut cute_host,
) -> c_int {
    guard(|| {
        let out = unsafe { out_ptr(out, "out") }?;
        *out = std::ptr::null_mut();
        let m = unsafe { handle(module, "module") }?;
        let name = unsafe { c_str(name, "name") }?;
        *out = Box::into_raw(Box::new(cute_host(m.module.host(name)?)));
        Ok(())
    })
}

/// Releases a host-function handle.
#[no_mangle]
pub unsafe extern "C" fn cute_host_release(host: *mut cute_host) {
    unsafe { release(host) }
}

/// Checks a host call without launching: the arguments against the host's parameters, then the
/// evaluated launch plan (partial tiles, bounds, grid limits). No driver call.
#[no_mangle]
pub unsafe extern "C" fn cute_host_check(host: *const cute_host, args: *const cute_arg, nargs: usize) -> c_int {
    guard(|| {
        let h = unsafe { handle(host, "host") }?;
        let args = unsafe { convert_args(args, nargs) }?;
        h.0.check(&args).map(|_| ())
    })
}

/// Calls a host function on `stream` (asynchronously): checks, evaluates its launch plan, and
/// launches its kernels. A refusal (`CUTE_ERROR_ARGUMENT_MISMATCH`, e.g. a partial tile, or
/// `CUTE_ERROR_INVALID_LAUNCH`) launches nothing; the message names the parameter.
#[no_mangle]
pub unsafe extern "C" fn cute_host_call(
    host: *const cute_host,
    stream: *const cute_stream,
    args: *const cute_arg,
    nargs: usize,
) -> c_int {
    guard(|| {
        let h = unsafe { handle(host, "host") }?;
        let s = unsafe { handle(stream, "stream") }?;
        let args = unsafe { convert_args(args, nargs) }?;
        h.0.call(&s.0, &args)
    })
}

/// Starts capturing the work queued on `stream` into a graph.
#[no_mangle]
pub unsafe extern "C" fn cute_graph_begin_capture(stream: *const cute_stream) -> c_int {
    guard(|| unsafe { handle(stream, "stream") }?.0.begin_capture())
}

/// Ends the capture on `stream` and instantiates the graph.
#[no_mangle]
pub unsafe extern "C" fn cute_graph_end_capture(stream: *const cute_stream, out: *mut *mut cute_graph) -> c_int {
    guard(|| {
        let out = unsafe { out_ptr(out, "out") }?;
        *out = std::ptr::null_mut();
        let g = unsafe { handle(stream, "stream") }?.0.end_capture()?;
        *out = Box::into_raw(Box::new(cute_graph(g)));
        Ok(())
    })
}

/// Replays a graph on `stream` (asynchronously).
#[no_mangle]
pub unsafe extern "C" fn cute_graph_launch(graph: *const cute_graph, stream: *const cute_stream) -> c_int {
    guard(|| {
        let g = unsafe { handle(graph, "graph") }?;
        g.0.launch(&unsafe { handle(stream, "stream") }?.0)
    })
}

/// Releases a graph handle.
#[no_mangle]
pub unsafe extern "C" fn cute_graph_release(graph: *mut cute_graph) {
    unsafe { release(graph) }
}

/// The CUDA version the driver supports (e.g. 13000) in `*out`.
#[no_mangle]
pub unsafe extern "C" fn cute_driver_version(out: *mut c_int) -> c_int {
    guard(|| {
        let out = unsafe { out_ptr(out, "out") }?;
        *out = driver::driver_version()?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_not_panics_without_handles() {
        unsafe {
            let mut dev: *mut cute_device = std::ptr::null_mut();
            let st = cute_device_open(0, &mut dev);
            if st != CUTE_OK {
                assert!(dev.is_null());
                assert_eq!(st, CUTE_ERROR_UNAVAILABLE, "{:?}", CStr::from_ptr(cute_last_error()));
            }
            cute_device_release(dev);
            assert_eq!(
                cute_kernel_launch(std::ptr::null(), std::ptr::null(), std::ptr::null(), std::ptr::null(), 0),
                CUTE_ERROR_INVALID_ARGUMENT
            );
            let msg = CStr::from_ptr(cute_last_error()).to_str().unwrap();
            assert_eq!(msg, "invalid argument: kernel is NULL");
            assert_eq!(cute_device_open(0, std::ptr::null_mut()), CUTE_ERROR_INVALID_ARGUMENT);
            assert_eq!(
                cute_host_call(std::ptr::null(), std::ptr::null(), std::ptr::null(), 0),
                CUTE_ERROR_INVALID_ARGUMENT
            );
            assert_eq!(CStr::from_ptr(cute_last_error()).to_str().unwrap(), "invalid argument: host is NULL");
            let mut h: *mut cute_host = std::ptr::null_mut();
            assert_eq!(cute_module_host(std::ptr::null(), c"x".as_ptr(), &mut h), CUTE_ERROR_INVALID_ARGUMENT);
            assert!(h.is_null());
            cute_host_release(std::ptr::null_mut());
            let name = CStr::from_ptr(cute_status_name(CUTE_ERROR_ARGUMENT_MISMATCH));
            assert_eq!(name.to_str().unwrap(), "CUTE_ERROR_ARGUMENT_MISMATCH");
            let mut s: *mut c_char = std::ptr::null_mut();
            assert_eq!(cute_manifest_read_file(c"/nonexistent.cubin".as_ptr(), &mut s), CUTE_ERROR_IO);
        }
    }

    #[test]
    fn converts_c_args() {
        let mut t = cute_tensor {
            ptr: 0x1000,
            dtype: DType::F32.code(),
            nleaves: 2,
            shape: [0; 16],
            stride: [0; 16],
            bytes: 64,
        };
        t.shape[..2].copy_from_slice(&[4, 4]);
        t.stride[..2].copy_from_slice(&[1, 4]);
        let args = [
            cute_arg { kind: CUTE_ARG_TENSOR, dtype: 0, value: cute_arg_value { tensor: &t } },
            cute_arg { kind: CUTE_ARG_SCALAR, dtype: DType::I32.code(), value: cute_arg_value { i: -5 } },
            cute_arg { kind: CUTE_ARG_SCALAR, dtype: DType::F32.code(), value: cute_arg_value { f: 2.5 } },
        ];
        let v = unsafe { convert_args(args.as_ptr(), 3) }.unwrap();
        assert_eq!(v[0], Arg::Tensor(TensorView::new(0x1000, DType::F32, &[4, 4], &[1, 4]).with_bytes(64)));
        assert_eq!(v[1], Arg::i32(-5));
        assert_eq!(v[2], Arg::f32(2.5));
        let t17 = cute_tensor { nleaves: 17, ..t };
        let a17 = [cute_arg { kind: CUTE_ARG_TENSOR, dtype: 0, value: cute_arg_value { tensor: &t17 } }];
        assert!(unsafe { convert_args(a17.as_ptr(), 1) }.is_err());
        // A host function's `stream` parameter: the CUstream, NULL being the legacy default stream.
        let streams = [
            cute_arg { kind: CUTE_ARG_STREAM, dtype: 0, value: cute_arg_value { stream: 0x7f00_1234 as *mut c_void } },
            cute_arg { kind: CUTE_ARG_STREAM, dtype: 0, value: cute_arg_value { stream: std::ptr::null_mut() } },
        ];
        assert_eq!(unsafe { convert_args(streams.as_ptr(), 2) }.unwrap(), [Arg::Stream(0x7f00_1234), Arg::Stream(0)]);
        assert!(unsafe { cute_stream_raw(std::ptr::null()) }.is_null());
        let bad = [cute_arg { kind: 9, dtype: 0, value: cute_arg_value { u: 0 } }];
        let e = unsafe { convert_args(bad.as_ptr(), 1) }.unwrap_err().to_string();
        assert!(e.contains("unknown kind 9 (CUTE_ARG_TENSOR=1, CUTE_ARG_SCALAR=2, CUTE_ARG_STREAM=3)"), "{e}");
        assert!(unsafe { convert_args(std::ptr::null(), 1) }.is_err());
    }
}
