//! The stream a call launches on.
//!
//! `stream=` takes a raw `CUstream` handle (an `int`; 0 is the legacy default stream), or an object
//! that has one: `.cuda_stream` (torch.cuda.Stream), `__cuda_stream__()` (the CUDA stream
//! protocol: `(version, handle)`), or `.ptr` (cupy.cuda.Stream). Without it, a call goes on
//! **torch's current stream** of the module's device when torch has been imported (so it is
//! ordered with torch's work and captured by `torch.cuda.graph`), and on the legacy default stream
//! otherwise. torch's current stream is read through torch's DLPack exchange API
//! (`current_work_stream`, one C call), or `torch._C._cuda_getCurrentRawStream` on a torch without
//! it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use cute_runtime::{Device, Stream};
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyTuple, PyType};

use crate::tensors::ExchangeApi;

/// How torch's current stream is read, once torch is imported.
enum TorchStream {
    Exchange(ExchangeApi),
    RawStreamFn(Py<PyAny>),
    /// torch without CUDA: calls use the legacy default stream.
    None,
}

/// Set the first time a call sees `torch` in `sys.modules`.
static TORCH: OnceLock<TorchStream> = OnceLock::new();
/// `sys.modules`, looked up once.
static SYS_MODULES: OnceLock<Py<PyDict>> = OnceLock::new();

fn sys_modules(py: Python<'_>) -> PyResult<&Bound<'_, PyDict>> {
    if SYS_MODULES.get().is_none() {
        let m = py.import("sys")?.getattr("modules")?.cast_into::<PyDict>()?.unbind();
        let _ = SYS_MODULES.set(m);
    }
    match SYS_MODULES.get() {
        Some(m) => Ok(m.bind(py)),
        None => Err(crate::errors::Error::new_err("sys.modules is unavailable")),
    }
}

fn torch_stream(py: Python<'_>) -> PyResult<Option<&'static TorchStream>> {
    if let Some(t) = TORCH.get() {
        return Ok(Some(t));
    }
    let Some(torch) = sys_modules(py)?.get_item(intern!(py, "torch"))? else { return Ok(None) };
    // A half-imported torch (a call made while torch itself is importing) is not used yet.
    let Ok(tensor) = torch.getattr(intern!(py, "Tensor")) else { return Ok(None) };
    let how = match tensor.cast::<PyType>().ok().and_then(|t| ExchangeApi::of_type(t)) {
        Some(api) => TorchStream::Exchange(api),
        None => {
            match torch.getattr(intern!(py, "_C")).and_then(|c| c.getattr(intern!(py, "_cuda_getCurrentRawStream"))) {
                Ok(f) => TorchStream::RawStreamFn(f.unbind()),
                Err(_) => TorchStream::None,
            }
        }
    };
    let _ = TORCH.set(how);
    Ok(TORCH.get())
}

/// Set when torch could not say its current stream (a torch without a usable CUDA): asking again
/// would repeat its failed CUDA initialization on every call.
static TORCH_HAS_NO_CUDA: AtomicBool = AtomicBool::new(false);

/// The default stream of a call on CUDA device `device`: torch's current stream when torch is
/// imported, else the legacy default stream (0).
fn default_handle(py: Python<'_>, device: usize) -> PyResult<u64> {
    let asked = match torch_stream(py)? {
        None | Some(TorchStream::None) => return Ok(0),
        _ if TORCH_HAS_NO_CUDA.load(Ordering::Relaxed) => return Ok(0),
        Some(TorchStream::Exchange(api)) => api.current_stream(py, device),
        Some(TorchStream::RawStreamFn(f)) => f.bind(py).call1((device,)).and_then(|h| h.extract::<u64>()),
    };
    // torch without a usable CUDA says so by raising: the legacy default stream then, from now on.
    Ok(asked.unwrap_or_else(|_| {
        TORCH_HAS_NO_CUDA.store(true, Ordering::Relaxed);
        0
    }))
}

/// The raw handle `stream=` names (see the module docs), or the default for `device`.
pub fn handle_of(py: Python<'_>, stream: Option<&Bound<'_, PyAny>>, device: usize) -> PyResult<u64> {
    let Some(s) = stream.filter(|s| !s.is_none()) else { return default_handle(py, device) };
    let bad = || {
        PyTypeError::new_err(format!(
            "stream= takes a CUstream handle (an int) or a stream object (.cuda_stream, __cuda_stream__(), .ptr), not a {}",
            crate::tensors::type_name(s)
        ))
    };
    if s.is_instance_of::<PyInt>() {
        return s.extract::<u64>().map_err(|_| bad());
    }
    if let Ok(h) = s.getattr(intern!(py, "cuda_stream")) {
        return h.extract::<u64>().map_err(|_| bad());
    }
    if s.hasattr(intern!(py, "__cuda_stream__"))? {
        let t = s.call_method0(intern!(py, "__cuda_stream__"))?;
        let t = t.cast::<PyTuple>().map_err(|_| bad())?;
        return t.get_item(1).and_then(|h| h.extract::<u64>()).map_err(|_| bad());
    }
    if let Ok(h) = s.getattr(intern!(py, "ptr")) {
        return h.extract::<u64>().map_err(|_| bad());
    }
    Err(bad())
}

/// The raw handle of an argument for a host function's `stream` parameter: an `int` (a `CUstream`
/// handle; 0 is the legacy default stream) or a stream object (`.cuda_stream`, `__cuda_stream__()`,
/// `.ptr`), as `stream=` takes. `Err` says why it is not one (`None`, a `bool`, a negative number,
/// a tensor, ...).
pub fn stream_arg_handle(obj: &Bound<'_, PyAny>) -> Result<u64, String> {
    const TAKES: &str =
        "a stream object (torch.cuda.Stream, or anything with .cuda_stream, __cuda_stream__() or .ptr) \
                         or a CUstream handle as an int (0 is the legacy default stream)";
    if obj.is_none() {
        return Err(format!("None is not a stream; pass {TAKES}"));
    }
    if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Err(format!("a bool is not a stream; pass {TAKES}"));
    }
    // A tensor (a cutec.TensorView has `.ptr`, as a CuPy stream does): not a stream.
    let py = obj.py();
    if obj.is_instance_of::<crate::view::PyTensorView>()
        || obj.hasattr(intern!(py, "__dlpack__")).unwrap_or(false)
        || obj.hasattr(intern!(py, "__cuda_array_interface__")).unwrap_or(false)
    {
        return Err(format!("a tensor ({}) is not a stream; pass {TAKES}", crate::tensors::type_name(obj)));
    }
    handle_of(obj.py(), Some(obj), 0).map_err(|_| format!("expects {TAKES}, not a {}", crate::tensors::type_name(obj)))
}

/// The streams of one device that calls have used, by handle (borrowed: never destroyed here).
pub struct StreamCache {
    device: Device,
    streams: Mutex<Vec<Stream>>,
}

/// Distinct streams remembered (the list starts over past it).
const MAX_STREAMS: usize = 64;

impl StreamCache {
    /// An empty cache for `device`.
    pub fn new(device: Device) -> StreamCache {
        StreamCache { device, streams: Mutex::new(Vec::new()) }
    }

    /// The device.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The stream with raw handle `handle` on this device.
    pub fn get(&self, handle: u64) -> Stream {
        if let Ok(mut known) = self.streams.lock() {
            if let Some(s) = known.iter().find(|s| s.handle() == handle) {
                return s.clone();
            }
            // SAFETY: a handle of this device's primary context, which torch shares, kept alive by
            // its owner while calls use it (the contract of `stream=`, docs/python.md). A wrong
            // handle makes the launch fail with the driver's error, nothing worse.
            let s = unsafe { self.device.borrow_stream(handle) };
            if known.len() >= MAX_STREAMS {
                known.clear();
            }
            known.push(s.clone());
            return s;
        }
        // SAFETY: as above.
        unsafe { self.device.borrow_stream(handle) }
    }
}
