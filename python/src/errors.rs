//! The exceptions of `cutec`, and the runtime's errors raised as them.
//!
//! Every error the runtime reports becomes an exception carrying the runtime's message unchanged
//! (the text the C ABI's `cute_last_error` gives) and, as `.status`, the C ABI's status name
//! (`CUTE_ERROR_ARGUMENT_MISMATCH`, ...). The class says what kind of failure it is:
//!
//! * `cutec.Refused`: the call was refused before anything was launched (an argument that does
//!   not match the manifest, a failed `require` or `assert`, a partial tile, a launch
//!   configuration out of range);
//! * `cutec.Unavailable`: no CUDA driver, no GPU, or a driver too old;
//! * `cutec.NotFound`: no kernel or host function of that name (the message lists those there are);
//! * `cutec.Error`: the base class, and everything else (a driver call that failed, an unreadable
//!   cubin, ...).

use std::ffi::CStr;

use cute_runtime::capi::{cute_status_name, status_of};
use cute_runtime::RuntimeError;
use pyo3::create_exception;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

create_exception!(cutec, Error, PyRuntimeError, "A cutec failure; `.status` is the C ABI status name.");
create_exception!(
    cutec,
    Refused,
    Error,
    "A call refused before anything was launched (the message names the parameter)."
);
create_exception!(cutec, Unavailable, Error, "No CUDA driver, no GPU, or a driver older than CUDA 13.0.");
create_exception!(cutec, NotFound, Error, "No kernel or host function of that name.");

/// The runtime's error as a Python exception of the matching class, with `.status` set.
pub fn to_py(py: Python<'_>, e: RuntimeError) -> PyErr {
    let status = status_of(&e);
    let message = e.to_string();
    let err = match e {
        RuntimeError::ArgumentMismatch(_) | RuntimeError::InvalidArgument(_) | RuntimeError::InvalidLaunch(_) => {
            Refused::new_err(message)
        }
        RuntimeError::NoDriver(_) | RuntimeError::NoDevice(_) | RuntimeError::DriverTooOld { .. } => {
            Unavailable::new_err(message)
        }
        RuntimeError::KernelNotFound { .. } | RuntimeError::HostNotFound { .. } => NotFound::new_err(message),
        _ => Error::new_err(message),
    };
    // SAFETY: cute_status_name returns a static NUL-terminated string for every code.
    let name = unsafe { CStr::from_ptr(cute_status_name(status)) }.to_string_lossy();
    // Setting an attribute on a fresh exception object cannot fail in practice; if it did, the
    // exception would still carry its message.
    let _ = err.value(py).setattr("status", name.as_ref());
    err
}

/// An argument refused on the Python side (before the runtime sees it), worded as the runtime
/// words its own refusals: `kernel argument mismatch: host `h` parameter `x` (argument 0): ...`.
pub fn refused_argument(
    py: Python<'_>,
    role: &str,
    function: &str,
    index: usize,
    param: Option<&str>,
    what: &str,
) -> PyErr {
    let param = param.map_or(String::new(), |p| format!(" parameter `{p}`"));
    to_py(py, RuntimeError::ArgumentMismatch(format!("{role} `{function}`{param} (argument {index}): {what}")))
}
