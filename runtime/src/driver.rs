//! Probing the CUDA driver (`libcuda.so`) without ever panicking, and turning
//! driver error codes into readable [`RuntimeError`]s.
//!
//! cudarc loads `libcuda` lazily and panics when it is absent, so every path
//! into the driver goes through [`ensure_driver`] first.

use std::sync::{Mutex, OnceLock};

use cudarc::driver::result::DriverError;
use cudarc::driver::sys;

use crate::error::{format_cuda_version, Result, RuntimeError};

/// The oldest driver API version this crate accepts: the bindings are built
/// for CUDA 13.0 (`cuda-13000`), i.e. NVIDIA driver 580 or newer. Older
/// drivers lack some of the entry points the bindings call.
pub const REQUIRED_DRIVER_VERSION: i32 = 13000;

/// Ok when `libcuda` can be loaded; `RuntimeError::NoDriver` otherwise.
pub fn ensure_driver() -> Result<()> {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to dlopen the candidate library names.
    let present = *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() });
    if present {
        Ok(())
    } else {
        let names = cudarc::get_lib_name_candidates("cuda");
        let shown: Vec<&str> = names.iter().take(2).map(String::as_str).collect();
        Err(RuntimeError::NoDriver(format!(
            "could not dlopen {} (or {} other candidate names); install the NVIDIA driver \
             or add the directory holding libcuda.so.1 to LD_LIBRARY_PATH",
            shown.join(", "),
            names.len().saturating_sub(shown.len())
        )))
    }
}

/// The CUDA version supported by the installed driver (`cuDriverGetVersion`),
/// e.g. `13000` for CUDA 13.0. Does not need a GPU, only `libcuda`.
pub fn driver_version() -> Result<i32> {
    ensure_driver()?;
    let mut v: std::ffi::c_int = 0;
    // SAFETY: libcuda is loaded; cuDriverGetVersion only writes an int.
    let r = unsafe { sys::cuDriverGetVersion(&mut v) };
    check("cuDriverGetVersion", r)?;
    Ok(v)
}

/// Loads the driver, checks its version and runs `cuInit(0)`.
/// Failures of `cuInit` (no GPU, stub library, ...) become `NoDevice`.
pub fn init() -> Result<()> {
    let found = driver_version()?;
    if found < REQUIRED_DRIVER_VERSION {
        return Err(RuntimeError::DriverTooOld { found, required: REQUIRED_DRIVER_VERSION });
    }
    cudarc::driver::result::init().map_err(|e| {
        let (code, message) = describe(e);
        RuntimeError::NoDevice(format!(
            "cuInit failed with {code} ({message}); driver supports CUDA {}",
            format_cuda_version(found)
        ))
    })
}

/// Number of CUDA devices (after [`init`]).
pub fn device_count() -> Result<usize> {
    init()?;
    let n = cudarc::driver::result::device::get_count().map_err(|e| driver_error("cuDeviceGetCount", e))?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// True when the driver symbol `name` exists (used before calling entry
/// points that older drivers lack, since cudarc panics on missing symbols).
pub(crate) fn has_symbol(name: &str) -> bool {
    if ensure_driver().is_err() {
        return false;
    }
    // SAFETY: libcuda is present (checked above); we only look the symbol up.
    unsafe { sys::culib().get::<*const std::ffi::c_void>(name.as_bytes()).is_ok() }
}

/// `cuFuncGetParamCount` (CUDA 13.2+ drivers), looked up by hand because the
/// CUDA 13.0 bindings do not declare it. `None` when missing or failing.
pub(crate) fn func_param_count(func: sys::CUfunction) -> Option<usize> {
    type GetParamCount = unsafe extern "C" fn(sys::CUfunction, *mut usize) -> sys::CUresult;
    ensure_driver().ok()?;
    // SAFETY: libcuda is present; the signature is the documented one:
    // CUresult cuFuncGetParamCount(CUfunction func, size_t *paramCount).
    unsafe {
        let f = sys::culib().get::<GetParamCount>("cuFuncGetParamCount".as_bytes()).ok()?;
        let mut count = 0usize;
        (*f)(func, &mut count).result().ok()?;
        Some(count)
    }
}

/// `(CUDA_ERROR_NAME, "driver description")` for a driver error.
pub(crate) fn describe(e: DriverError) -> (String, String) {
    let code = match e.error_name() {
        Ok(s) => s.to_string_lossy().into_owned(),
        Err(_) => format!("{:?}", e.0),
    };
    let mut message = match e.error_string() {
        Ok(s) => s.to_string_lossy().into_owned(),
        Err(_) => String::new(),
    };
    let asserting = ASSERTING_LAUNCHES.lock().map(|k| k.clone()).unwrap_or_default();
    if let Some(hint) = trap_hint(e.0, &asserting) {
        message.push_str(&hint);
    }
    (code, message)
}

/// The kernels with run-time asserts compiled in (their manifest's `asserts` line) launched in
/// this process, newest last, at most [`ASSERTING_KEPT`]. A trap surfaces at whatever call comes
/// after it (a synchronize, a copy), which cannot tell which launch trapped: the launches name
/// the kernels that may have.
static ASSERTING_LAUNCHES: Mutex<Vec<String>> = Mutex::new(Vec::new());
const ASSERTING_KEPT: usize = 3;

/// Records a launch of kernel `name`, which has run-time asserts.
pub(crate) fn launched_with_asserts(name: &str) {
    let Ok(mut kept) = ASSERTING_LAUNCHES.lock() else { return };
    if kept.last().is_some_and(|k| k == name) {
        return;
    }
    kept.retain(|k| k != name);
    kept.push(name.to_string());
    if kept.len() > ASSERTING_KEPT {
        kept.remove(0);
    }
}

/// What a kernel that stopped on the GPU means, for the errors a `trap` gives (and so every call
/// after it: the context keeps the error). A kernel's failed run-time `assert` prints where it
/// failed before it traps: the assert is named only when a kernel with asserts (`asserting`,
/// newest last) was launched; an inline-PTX `trap` or a fault gives the same codes.
fn trap_hint(code: sys::CUresult, asserting: &[String]) -> Option<String> {
    use sys::CUresult::*;
    if !matches!(code, CUDA_ERROR_LAUNCH_FAILED | CUDA_ERROR_ILLEGAL_INSTRUCTION | CUDA_ERROR_ASSERT) {
        return None;
    }
    let unusable = "the CUDA context is now unusable: every later call in this process fails, so restart the process";
    if asserting.is_empty() {
        return Some(format!("; a kernel stopped (a fault or a `trap`); {unusable}"));
    }
    let names: Vec<String> = asserting.iter().rev().map(|k| format!("`{k}`")).collect();
    Some(format!(
        "; the kernel trapped (an assert failed? {} run-time asserts: see the printed message: file:line, kernel, block and thread); {unusable}",
        if names.len() == 1 { format!("{} has", names[0]) } else { format!("{} have", names.join(", ")) }
    ))
}

/// Wraps a cudarc `DriverError` raised by operation `op`.
pub(crate) fn driver_error(op: impl Into<String>, e: DriverError) -> RuntimeError {
    let (code, message) = describe(e);
    RuntimeError::Driver { op: op.into(), code, message }
}

/// Turns a raw `CUresult` into `Result`.
pub(crate) fn check(op: &str, r: sys::CUresult) -> Result<()> {
    r.result().map_err(|e| driver_error(op, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The errors a trapped kernel leaves (on the launch's stream and every later call) say so,
    /// naming asserts only when a kernel with asserts was launched; other errors say nothing.
    #[test]
    fn a_trap_is_explained() {
        use sys::CUresult::*;
        let one = ["gemm".to_string()];
        let two = ["gemm".to_string(), "scale".to_string()];
        for code in [CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_ILLEGAL_INSTRUCTION, CUDA_ERROR_ASSERT] {
            let hint = trap_hint(code, &one).unwrap_or_default();
            assert!(
                hint.contains("the kernel trapped (an assert failed? `gemm` has run-time asserts"),
                "{code:?}: {hint}"
            );
            let hint = trap_hint(code, &two).unwrap_or_default();
            assert!(hint.contains("`scale`, `gemm` have run-time asserts"), "{code:?}: {hint}");
            let hint = trap_hint(code, &[]).unwrap_or_default();
            assert!(!hint.contains("assert") && hint.contains("the CUDA context is now unusable"), "{code:?}: {hint}");
        }
        for code in [CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_ILLEGAL_ADDRESS] {
            assert_eq!(trap_hint(code, &one), None, "{code:?}");
        }
    }

    /// The launches of asserting kernels are kept newest last, each once, a few at most.
    #[test]
    fn asserting_launches_are_kept_newest_last() {
        for name in ["a", "b", "a", "c", "d"] {
            launched_with_asserts(name);
        }
        let kept = ASSERTING_LAUNCHES.lock().unwrap().clone();
        assert_eq!(kept, ["a", "c", "d"]);
    }
}
