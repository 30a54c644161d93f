//! cutec host functions as XLA custom calls, for `cutec.jax` (python/cutec/jax.py).
//!
//! One handler ([`xla_ffi_handler`], registered by `cutec.jax` under every op's name) serves every
//! op: the custom call's string attribute `cutec_op` names the op, registered here by
//! [`jax_register`] with the host function it calls and where each of its parameters comes from
//! (an operand, a result, or a scalar attribute named like the parameter). A name rather than a
//! number: a compiled program (from JAX's compilation cache, say) calls whatever this process
//! registered under that name, or fails saying none is.
//!
//! At run time the handler reads the operands and results as dense row-major tensors (XLA's
//! default layout, which `ffi_call` asks for), the scalars from the attributes, and calls the host
//! function on the stream XLA gives it: no Python, no GIL. The host function checks the call
//! exactly as a call from Python is checked; a refusal comes back to XLA as an error carrying the
//! runtime's message (JAX raises it), as does anything else that fails. A panic is caught.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use cute_runtime::{Arg, ParamKind, ParamSig, RuntimeError, TensorView};
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;

use crate::arguments::{scalar_arg, scalars_differ};
use crate::loaded::HostFunction;
use crate::view::row_major;
use crate::xla_ffi::{self, CallFrame, Called, Frame, XlaError};

/// The attribute naming the op a custom call runs.
const OP_ATTRIBUTE: &str = "cutec_op";

/// Where a host function's parameter comes from in the custom call.
#[derive(Clone, Copy)]
enum Source {
    Operand(usize),
    Result(usize),
    /// The scalar attribute named like the parameter.
    Attribute,
}

/// A registered op.
struct JaxOp {
    host: Py<HostFunction>,
    sources: Vec<Source>,
    /// A generic host function whose instances differ in a scalar's type: scalars are converted
    /// again for the instance the tensors select.
    reselect: bool,
    /// The arguments of a call, reused between calls.
    args: Mutex<Vec<Arg>>,
}

static OPS: OnceLock<RwLock<HashMap<String, Arc<JaxOp>>>> = OnceLock::new();

fn ops() -> &'static RwLock<HashMap<String, Arc<JaxOp>>> {
    OPS.get_or_init(Default::default)
}

/// `jax_register(name, host_fn, sources)`: makes custom calls whose `cutec_op` attribute is `name`
/// call `host_fn`, its parameter `i` taken from `sources[i]`: `("operand", k)`, `("result", k)` or
/// `("attribute", 0)` (the scalar attribute named like the parameter). Registering a name again
/// replaces what it calls.
#[pyfunction]
pub fn jax_register(name: &str, host_fn: Py<HostFunction>, sources: Vec<(String, usize)>) -> PyResult<()> {
    let host = host_fn.get().runtime();
    let params = &host.signature().params;
    if sources.len() != params.len() {
        return Err(PyValueError::new_err(format!(
            "{name}: {} sources for the {} parameters of {}",
            sources.len(),
            params.len(),
            host.name()
        )));
    }
    let sources = sources
        .iter()
        .zip(params)
        .map(|((kind, k), p)| match (kind.as_str(), &p.kind) {
            ("operand", ParamKind::Tensor(_)) => Ok(Source::Operand(*k)),
            ("result", ParamKind::Tensor(_)) => Ok(Source::Result(*k)),
            ("attribute", ParamKind::Scalar(_)) => Ok(Source::Attribute),
            _ => Err(PyValueError::new_err(format!(
                "{name}: parameter `{}` of {} cannot come from {kind:?}",
                p.name,
                host.name()
            ))),
        })
        .collect::<PyResult<Vec<_>>>()?;
    let reselect = scalars_differ(host.instances());
    let op = Arc::new(JaxOp { host: host_fn, sources, reselect, args: Mutex::new(Vec::new()) });
    ops()
        .write()
        .map_err(|_| crate::errors::Error::new_err("the cutec.jax op table is poisoned"))?
        .insert(name.into(), op);
    Ok(())
}

/// `xla_ffi_handler()`: the XLA FFI handler of every `cutec.jax` op, as the `PyCapsule`
/// `jax.ffi.register_ffi_target` takes.
#[pyfunction]
pub fn xla_ffi_handler(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let f: unsafe extern "C" fn(*mut CallFrame) -> *mut XlaError = handler;
    // SAFETY: a capsule without a name or destructor holding a function pointer, as
    // `jax.ffi.pycapsule` makes one.
    unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyCapsule_New(f as *mut std::ffi::c_void, std::ptr::null(), None)) }
}

/// The handler XLA calls.
unsafe extern "C" fn handler(frame: *mut CallFrame) -> *mut XlaError {
    // SAFETY: XLA passes its call frame, valid for the call.
    let outcome = catch_unwind(AssertUnwindSafe(|| match unsafe { Frame::of(frame) } {
        Ok(Called::Metadata) => Ok(()),
        Ok(Called::Execute(f)) => execute(&f),
        // SAFETY: as above.
        Err(m) => Err(unsafe { xla_ffi::error_in(frame, xla_ffi::FAILED_PRECONDITION, &format!("cutec: {m}")) }
            .unwrap_or(std::ptr::null_mut())),
    }));
    match outcome {
        Ok(Ok(())) => std::ptr::null_mut(),
        Ok(Err(e)) => e,
        // SAFETY: as above.
        Err(_) => unsafe { xla_ffi::error_in(frame, xla_ffi::INTERNAL, "cutec: the XLA FFI handler panicked") }
            .unwrap_or(std::ptr::null_mut()),
    }
}

/// A call: the op the frame names, its arguments read from the frame, the host function called on
/// the frame's stream. `Err`: the error to return to XLA.
fn execute(frame: &Frame<'_>) -> Result<(), *mut XlaError> {
    let name = frame.string_attr(OP_ATTRIBUTE).ok_or_else(|| {
        frame.error(
            xla_ffi::INVALID_ARGUMENT,
            &format!("cutec: the custom call has no string attribute `{OP_ATTRIBUTE}`"),
        )
    })?;
    let name = String::from_utf8_lossy(name);
    let op = ops().read().ok().and_then(|t| t.get(name.as_ref()).cloned()).ok_or_else(|| {
        frame.error(
            xla_ffi::NOT_FOUND,
            &format!(
                "cutec.jax: no op `{name}` is registered in this process: call cutec.jax.register before running \
                 a program that calls it (a compiled program from a cache too)"
            ),
        )
    })?;
    let fail = |code: i32, m: &dyn std::fmt::Display| frame.error(code, &format!("cutec op `{name}`: {m}"));
    let host = op.host.get();
    let runtime = host.runtime();
    let mut local = Vec::new();
    let mut guard = op.args.try_lock().ok();
    let args = guard.as_deref_mut().unwrap_or(&mut local);
    let refused = |m: String| fail(xla_ffi::INVALID_ARGUMENT, &m);
    fill(frame, runtime.name(), &op.sources, &runtime.signature().params, args).map_err(refused)?;
    if op.reselect {
        let i = runtime.select(args).map_err(|e| refused(e.to_string()))?;
        if let Some(sig) = runtime.instances().nth(i) {
            fill(frame, runtime.name(), &op.sources, &sig.params, args).map_err(refused)?;
        }
    }
    // XLA's own error, when it cannot say the stream, goes back as it is.
    let stream = frame.stream()?;
    host.call_on_stream(stream, args).map_err(|e| {
        let code = match e {
            RuntimeError::ArgumentMismatch(_) | RuntimeError::InvalidArgument(_) | RuntimeError::InvalidLaunch(_) => {
                xla_ffi::INVALID_ARGUMENT
            }
            _ => xla_ffi::INTERNAL,
        };
        fail(code, &e)
    })
}

/// The host function's arguments (`params`) from the call frame, into `out` (its tensor views'
/// buffers reused).
fn fill(
    frame: &Frame<'_>,
    host: &str,
    sources: &[Source],
    params: &[ParamSig],
    out: &mut Vec<Arg>,
) -> Result<(), String> {
    out.truncate(params.len());
    for (i, (p, src)) in params.iter().zip(sources).enumerate() {
        let arg = match *src {
            Source::Operand(k) => tensor(frame.operand(k), out.get_mut(i)),
            Source::Result(k) => tensor(frame.result(k), out.get_mut(i)),
            Source::Attribute => {
                let n = frame
                    .scalar_attr(&p.name)?
                    .ok_or_else(|| format!("the custom call has no scalar attribute `{}`", p.name))?;
                scalar_arg(n, Some(&p.kind)).map(Some)
            }
        }
        .map_err(|m| format!("host `{host}` parameter `{}`: {m}", p.name))?;
        match arg {
            Some(a) if i < out.len() => out[i] = a,
            Some(a) => out.push(a),
            None => {}
        }
    }
    Ok(())
}

/// A buffer as a tensor view, written into `slot` when it holds one (`Ok(None)`), else returned.
fn tensor(buffer: Result<xla_ffi::BufferRef<'_>, String>, slot: Option<&mut Arg>) -> Result<Option<Arg>, String> {
    let b = buffer?;
    let dtype = xla_ffi::element_type(b.dtype)
        .map_err(|t| format!("XLA passes an {t} buffer, which cutec has no element type for"))?;
    let bytes = b
        .dims
        .iter()
        .try_fold(u64::from(dtype.size_bytes()), |n, &d| n.checked_mul(u64::try_from(d).ok()?))
        .ok_or_else(|| {
            format!("XLA passes a buffer of extents {:?}, which is more bytes than 64 bits count", b.dims)
        })?;
    if let Some(Arg::Tensor(v)) = slot {
        v.ptr = b.data;
        v.dtype = dtype;
        v.bytes = Some(bytes);
        v.shape.clear();
        v.shape.extend_from_slice(b.dims);
        v.stride = row_major(b.dims);
        return Ok(None);
    }
    Ok(Some(Arg::Tensor(TensorView::new(b.data, dtype, b.dims, &row_major(b.dims)).with_bytes(bytes))))
}
