//! A Python object as a tensor view: the protocols array libraries speak.
//!
//! In the order they are tried (once per Python type; the choice is kept, so a call only pays for
//! the protocol itself):
//!
//! 1. `cutec.TensorView`: read directly.
//! 2. The DLPack C exchange API: the type has `__dlpack_c_exchange_api__` (torch 2.10 and later,
//!    and other frameworks), a capsule holding a `DLPackExchangeAPI` function table; its
//!    `dltensor_from_py_object_no_sync` fills a `DLTensor` on our stack with one C call, creating
//!    no Python object. This is torch's fast path.
//! 3. `__dlpack__(stream=...)`: a capsule holding a `DLManagedTensor(Versioned)`, read and then
//!    released by the capsule's own destructor (we only borrow the tensor). The stream we pass is
//!    the call's, so the producer orders its pending writes before our launch, as the protocol
//!    says.
//! 4. `__cuda_array_interface__` (version 2 or 3): a dict with the pointer, `typestr`, shape and
//!    byte strides. When it names the stream the data was written on, our stream waits for it
//!    (an event), as version 3 asks of consumers.
//!
//! What DLPack and the array interface do not say is the size of the memory behind a tensor, so
//! such views carry no byte count: the producer guarantees its own layout lies inside its memory,
//! and the views a host function derives from it are still checked to stay inside the tensor.

use std::ffi::{c_char, c_void, CStr};
use std::sync::Mutex;

use cute_runtime::dlpack::{
    read_dltensor, DLManagedTensor, DLManagedTensorVersioned, DLPackExchangeAPI, DLTensor, DLPACK_MAJOR_VERSION,
};
use cute_runtime::{DType, Stream, TensorView};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};

use crate::view::{row_major, PyTensorView};

/// The device and stream a call's tensors are read for.
#[derive(Clone, Copy)]
pub struct Target<'a> {
    /// The module's CUDA device; `None` for offline checks (any device is accepted).
    pub device: Option<usize>,
    /// The stream the call launches on; `None` for offline checks (no synchronization asked).
    pub stream: Option<&'a Stream>,
}

/// A producer's `DLPackExchangeAPI` (valid for the life of the process, as the protocol requires).
#[derive(Clone, Copy)]
pub struct ExchangeApi(&'static DLPackExchangeAPI);

// SAFETY: the table is immutable and lives as long as the process (DLPack's requirement of it).
unsafe impl Send for ExchangeApi {}
unsafe impl Sync for ExchangeApi {}

impl ExchangeApi {
    /// The API of a `__dlpack_c_exchange_api__` capsule, when it is one of major version 1 with
    /// the entry we use (walking the chain of older tables if the first is newer).
    fn of_capsule(capsule: &Bound<'_, PyAny>) -> Option<ExchangeApi> {
        const NAME: &CStr = c"dlpack_exchange_api";
        // SAFETY: PyCapsule_IsValid accepts any object; GetPointer is only called on a valid
        // capsule of that name.
        let p = unsafe {
            if ffi::PyCapsule_IsValid(capsule.as_ptr(), NAME.as_ptr()) == 0 {
                return None;
            }
            ffi::PyCapsule_GetPointer(capsule.as_ptr(), NAME.as_ptr()) as *const DLPackExchangeAPI
        };
        let mut header = p as *const cute_runtime::dlpack::DLPackExchangeAPIHeader;
        while !header.is_null() {
            // SAFETY: a non-NULL table pointer from the producer, alive for the process.
            let h = unsafe { &*header };
            if h.version.major == DLPACK_MAJOR_VERSION {
                // SAFETY: a major-1 header starts a major-1 table.
                let api: &'static DLPackExchangeAPI = unsafe { &*(header as *const DLPackExchangeAPI) };
                return api.dltensor_from_py_object_no_sync.map(|_| ExchangeApi(api));
            }
            header = h.prev_api;
        }
        None
    }

    /// The producer's current stream of CUDA device `device` (torch: `torch.cuda.current_stream`).
    pub fn current_stream(self, py: Python<'_>, device: usize) -> PyResult<u64> {
        let Some(f) = self.0.current_work_stream else { return Ok(0) };
        let mut out: *mut c_void = std::ptr::null_mut();
        // SAFETY: the producer's function, called as the protocol specifies, with the GIL held.
        let rc = unsafe { f(cute_runtime::dlpack::device_type::CUDA, device as i32, &mut out) };
        if rc != 0 {
            return Err(PyErr::take(py).unwrap_or_else(|| crate::errors::Error::new_err("current_work_stream failed")));
        }
        Ok(out as usize as u64)
    }

    /// The exchange API of a type, if it has one (torch.Tensor's, for the default stream).
    pub fn of_type(ty: &Bound<'_, PyType>) -> Option<ExchangeApi> {
        ty.getattr(intern!(ty.py(), "__dlpack_c_exchange_api__")).ok().and_then(|c| ExchangeApi::of_capsule(&c))
    }
}

/// How objects of one Python type are read.
#[derive(Clone, Copy)]
enum Protocol {
    View,
    Exchange(ExchangeApi),
    DLPack,
    ArrayInterface,
    NotATensor,
}

/// The protocol chosen for each type seen, by type object.
static PROTOCOLS: Mutex<Vec<(Py<PyType>, Protocol)>> = Mutex::new(Vec::new());
/// Types remembered at most (a process sees a handful; the list is cleared if one sees more).
const MAX_TYPES: usize = 64;

fn protocol_of(obj: &Bound<'_, PyAny>) -> Protocol {
    let ty = obj.get_type();
    if let Ok(known) = PROTOCOLS.lock() {
        if let Some((_, p)) = known.iter().find(|(t, _)| t.as_ptr() == ty.as_ptr()) {
            return *p;
        }
    }
    let py = obj.py();
    let p = if obj.is_instance_of::<PyTensorView>() {
        Protocol::View
    } else if let Some(api) = ExchangeApi::of_type(&ty) {
        Protocol::Exchange(api)
    } else if ty.hasattr(intern!(py, "__dlpack__")).unwrap_or(false) {
        Protocol::DLPack
    } else if obj.hasattr(intern!(py, "__cuda_array_interface__")).unwrap_or(false) {
        Protocol::ArrayInterface
    } else {
        Protocol::NotATensor
    };
    if let Ok(mut known) = PROTOCOLS.lock() {
        if known.len() >= MAX_TYPES {
            known.clear();
        }
        known.push((ty.unbind(), p));
    }
    p
}

/// Reads `obj` into `out` (reusing its buffers) for a call on `target`: `Ok(false)` when `obj`
/// speaks none of the protocols (`out` untouched), `Err` saying why it cannot be a tensor argument
/// (the caller names the parameter).
pub fn read_tensor(obj: &Bound<'_, PyAny>, target: Target<'_>, out: &mut TensorView) -> Result<bool, String> {
    match protocol_of(obj) {
        Protocol::View => read_view(obj, target, out),
        Protocol::Exchange(api) => read_exchange(obj, api, target, out),
        Protocol::DLPack => read_dlpack(obj, target, out),
        Protocol::ArrayInterface => read_array_interface(obj, target, out),
        Protocol::NotATensor => return Ok(false),
    }
    .map(|()| true)
}

/// Why `obj` is neither a tensor nor a number.
pub fn not_a_tensor(obj: &Bound<'_, PyAny>) -> String {
    format!(
        "a {} is not a tensor: pass a CUDA tensor (torch, CuPy, JAX: anything with __dlpack__ or \
         __cuda_array_interface__) or a cutec.TensorView",
        type_name(obj)
    )
}

/// `obj`'s type name, for messages.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

fn read_view(obj: &Bound<'_, PyAny>, target: Target<'_>, out: &mut TensorView) -> Result<(), String> {
    let v = obj.cast::<PyTensorView>().map_err(|e| e.to_string())?.get();
    if let (Some(d), Some(o)) = (v.device, target.device) {
        if d != o {
            return Err(format!("the view is on cuda:{d} but the module is loaded on cuda:{o}"));
        }
    }
    out.ptr = v.view.ptr;
    out.dtype = v.view.dtype;
    out.bytes = v.view.bytes;
    out.shape.clone_from(&v.view.shape);
    out.stride.clone_from(&v.view.stride);
    Ok(())
}

fn read_exchange(
    obj: &Bound<'_, PyAny>,
    api: ExchangeApi,
    target: Target<'_>,
    out: &mut TensorView,
) -> Result<(), String> {
    let Some(f) = api.0.dltensor_from_py_object_no_sync else { return read_dlpack(obj, target, out) };
    let mut t = DLTensor::zeroed();
    // SAFETY: the producer's function for objects of this type, called with the GIL held; `t`
    // is filled in and stays valid until we return to Python.
    let rc = unsafe { f(obj.as_ptr() as *mut c_void, &mut t) };
    if rc != 0 {
        let why = PyErr::take(obj.py()).map_or_else(|| "no reason given".to_string(), |e| e.to_string());
        return Err(format!("its producer could not describe it ({why})"));
    }
    // SAFETY: a DLTensor the producer just filled in (shape and strides valid until we return).
    unsafe { read_dltensor(&t, target.device, out) }
}

/// The `stream` value `__dlpack__` takes for our stream: 1 for the legacy default stream (0 is
/// not allowed there), the handle otherwise; -1 (no synchronization) offline.
fn dlpack_stream(target: Target<'_>) -> i64 {
    match target.stream.map(Stream::handle) {
        None => -1,
        Some(0) => 1,
        Some(h) => h as i64,
    }
}

fn read_dlpack(obj: &Bound<'_, PyAny>, target: Target<'_>, out: &mut TensorView) -> Result<(), String> {
    let py = obj.py();
    let kwargs = PyDict::new(py);
    kwargs.set_item(intern!(py, "stream"), dlpack_stream(target)).map_err(|e| e.to_string())?;
    let capsule = match obj.call_method(intern!(py, "__dlpack__"), (), Some(&kwargs)) {
        Ok(c) => c,
        // Host-memory producers refuse a stream; asked without one they export, and the device
        // check below says what is wrong.
        Err(first) => {
            obj.call_method0(intern!(py, "__dlpack__")).map_err(|_| format!("its __dlpack__ raised {first}"))?
        }
    };
    // SAFETY: the name and pointer are read from a capsule we hold; the tensor stays valid while
    // the capsule lives (it is released by the capsule's destructor when we drop it).
    unsafe {
        let name = ffi::PyCapsule_GetName(capsule.as_ptr());
        if name.is_null() {
            ffi::PyErr_Clear();
            return Err("its __dlpack__ returned something other than a DLPack capsule".into());
        }
        let p = ffi::PyCapsule_GetPointer(capsule.as_ptr(), name);
        if p.is_null() {
            ffi::PyErr_Clear();
            return Err("its __dlpack__ capsule holds no tensor".into());
        }
        match CStr::from_ptr(name as *const c_char).to_bytes() {
            b"dltensor" => read_dltensor(&(*(p as *const DLManagedTensor)).dl_tensor, target.device, out),
            b"dltensor_versioned" => {
                let m = &*(p as *const DLManagedTensorVersioned);
                if m.version.major != DLPACK_MAJOR_VERSION {
                    return Err(format!(
                        "its DLPack tensor has major version {} (cutec reads {DLPACK_MAJOR_VERSION})",
                        m.version.major
                    ));
                }
                read_dltensor(&m.dl_tensor, target.device, out)
            }
            used => Err(format!(
                "its __dlpack__ returned a capsule named {:?} (already consumed?)",
                String::from_utf8_lossy(used)
            )),
        }
    }
}

/// The element type of an array-interface `typestr` (`<f2`, `<f4`, `|b1`, `<i4`, ...).
pub fn dtype_of_typestr(typestr: &str) -> Result<DType, String> {
    let b = typestr.as_bytes();
    let bad = || format!("typestr {typestr:?} has no cutec element type");
    if b.len() < 3 || !matches!(b[0], b'<' | b'|' | b'=') {
        return Err(if b.first() == Some(&b'>') { format!("typestr {typestr:?} is big-endian") } else { bad() });
    }
    let size: usize = typestr[2..].parse().map_err(|_| bad())?;
    Ok(match (b[1], size) {
        (b'f', 2) => DType::F16,
        (b'f', 4) => DType::F32,
        (b'f', 8) => DType::F64,
        (b'i', 1) => DType::I8,
        (b'i', 2) => DType::I16,
        (b'i', 4) => DType::I32,
        (b'i', 8) => DType::I64,
        (b'u', 1) => DType::U8,
        (b'u', 2) => DType::U16,
        (b'u', 4) => DType::U32,
        (b'u', 8) => DType::U64,
        (b'b', 1) => DType::Bool,
        _ => return Err(bad()),
    })
}

fn read_array_interface(obj: &Bound<'_, PyAny>, target: Target<'_>, out: &mut TensorView) -> Result<(), String> {
    let py = obj.py();
    let s = |e: PyErr| format!("its __cuda_array_interface__ is malformed ({e})");
    let cai = obj.getattr(intern!(py, "__cuda_array_interface__")).map_err(s)?;
    let get = |key: &str| cai.get_item(key).ok().filter(|v| !v.is_none());
    if get("mask").is_some() {
        return Err("masked arrays (a __cuda_array_interface__ with a mask) are not supported".into());
    }
    let typestr: String = get("typestr").ok_or("its __cuda_array_interface__ has no typestr")?.extract().map_err(s)?;
    let dtype = dtype_of_typestr(&typestr)?;
    let shape: Vec<i64> = get("shape").ok_or("its __cuda_array_interface__ has no shape")?.extract().map_err(s)?;
    let data = get("data").ok_or("its __cuda_array_interface__ has no data")?;
    let data = data.cast::<PyTuple>().map_err(|e| s(e.into()))?;
    let ptr: u64 = data.get_item(0).and_then(|p| p.extract()).map_err(s)?;
    let itemsize = i64::from(dtype.size_bytes());
    let stride = match get("strides") {
        None => row_major(&shape),
        Some(st) => {
            let bytes: Vec<i64> = st.extract().map_err(s)?;
            if bytes.len() != shape.len() {
                return Err(format!(
                    "its __cuda_array_interface__ gives {} strides for {} extents",
                    bytes.len(),
                    shape.len()
                ));
            }
            if let Some(b) = bytes.iter().find(|b| *b % itemsize != 0) {
                return Err(format!("byte stride {b} is not a multiple of the element size {itemsize}"));
            }
            bytes.iter().map(|b| b / itemsize).collect()
        }
    };
    // Version 3: the data is ready only once the work queued on `stream` is done (1: the legacy
    // default stream, 2: the per-thread one). Order our stream after it.
    if let (Some(ours), Some(theirs)) = (target.stream, get("stream")) {
        let theirs: u64 = theirs.extract().map_err(s)?;
        let theirs = if theirs == 1 { 0 } else { theirs };
        // SAFETY: the producer names a live stream of the device its data is on.
        unsafe { ours.wait_for_raw(theirs) }
            .map_err(|e| format!("waiting for the producer's stream {theirs:#x}: {e}"))?;
    }
    out.ptr = ptr;
    out.dtype = dtype;
    out.bytes = None;
    out.shape.clone_from(&shape);
    out.stride.clone_from(&stride);
    Ok(())
}
