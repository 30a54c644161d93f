//! `cutec._native`: the native half of the `cutec` Python package (the Python half is
//! `python/cutec/__init__.py`, which users import). Built on `cute-runtime` (no MLIR): it loads
//! cubins, reads their manifests and calls their host functions and kernels with tensors from any
//! array library, every argument checked against the manifest exactly as the C ABI checks it.
//!
//! * [`loaded`]: `load(source, device)` and the callables of a loaded module;
//! * [`offline`]: manifests and checks without a GPU;
//! * [`arguments`], [`tensors`], [`view`]: Python values as the runtime's arguments;
//! * [`streams`]: which stream a call goes on;
//! * [`errors`]: the exceptions; [`planned`]: checks' results as Python values;
//! * [`jax_ops`]: host functions as XLA custom calls (`cutec.jax`), over [`xla_ffi`], the XLA FFI C API.
//!
//! The user guide is `docs/python.md`.

use pyo3::prelude::*;

mod arguments;
mod errors;
mod jax_ops;
mod loaded;
mod offline;
mod planned;
mod streams;
mod tensors;
mod view;
mod xla_ffi;

/// True when the CUDA driver (libcuda) can be loaded here.
#[pyfunction]
fn driver_available() -> bool {
    cute_runtime::driver_available()
}

/// Number of CUDA devices (`cutec.Unavailable` without a driver).
#[pyfunction]
fn device_count(py: Python<'_>) -> PyResult<usize> {
    cute_runtime::Device::count().map_err(|e| errors::to_py(py, e))
}

/// `(major, minor)`: the compute capability of CUDA device `device` (`cutec.Unavailable` without a
/// driver or with no such device). `cutec.compile` picks its default target from it.
#[pyfunction]
#[pyo3(signature = (device=0))]
fn compute_capability(py: Python<'_>, device: usize) -> PyResult<(i32, i32)> {
    loaded::device(device).and_then(|d| d.compute_capability()).map_err(|e| errors::to_py(py, e))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<errors::Error>())?;
    m.add("Refused", py.get_type::<errors::Refused>())?;
    m.add("Unavailable", py.get_type::<errors::Unavailable>())?;
    m.add("NotFound", py.get_type::<errors::NotFound>())?;
    m.add_class::<view::PyTensorView>()?;
    m.add_class::<loaded::LoadedModule>()?;
    m.add_class::<loaded::HostFunction>()?;
    m.add_class::<loaded::KernelFunction>()?;
    m.add_class::<offline::PyManifest>()?;
    m.add_class::<offline::Plan>()?;
    m.add_class::<offline::KernelSignature>()?;
    m.add_function(wrap_pyfunction!(loaded::load, m)?)?;
    m.add_function(wrap_pyfunction!(offline::read_manifest, m)?)?;
    m.add_function(wrap_pyfunction!(offline::parse_manifest, m)?)?;
    m.add_function(wrap_pyfunction!(driver_available, m)?)?;
    m.add_function(wrap_pyfunction!(device_count, m)?)?;
    m.add_function(wrap_pyfunction!(compute_capability, m)?)?;
    m.add_function(wrap_pyfunction!(jax_ops::jax_register, m)?)?;
    m.add_function(wrap_pyfunction!(jax_ops::xla_ffi_handler, m)?)?;
    Ok(())
}
