//! A cubin's manifest without a GPU: what it holds, and calls checked against it.
//!
//! `cutec.manifest(cubin)` reads the manifest on the host (no driver). Its host functions'
//! plans (`m.host(name)`) check a call's arguments and evaluate the plan exactly as a call on a
//! GPU does, returning the launches it would make or raising `cutec.Refused`; host functions that
//! launch nothing (only `print` steps) also run (`plan.run(*args)` returns what they print).
//! Kernels (`m.kernel(name)`) check a launch's arguments. Arguments are read as for a real call,
//! from any tensor protocol (with fake pointers: `cutec.TensorView`), but no device is checked and
//! no stream is synchronized.

use std::sync::{Arc, Mutex};

use cute_runtime::call_cache::CallCache;
use cute_runtime::plan::PlanScratch;
use cute_runtime::{check_args, HostPlan, KernelSig, Manifest, RuntimeError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::arguments::{convert, Callee};
use crate::errors::to_py;
use crate::loaded::Source;
use crate::planned;
use crate::streams::handle_of;
use crate::tensors::Target;

const OFFLINE: Target<'static> = Target { device: None, stream: None };

/// A manifest read on the host.
#[pyclass(frozen, name = "Manifest", module = "cutec._native")]
pub struct PyManifest {
    m: Arc<Manifest>,
}

/// `read_manifest(source)`: the manifest of a cubin (path or bytes), or `None` when it has none.
#[pyfunction]
pub fn read_manifest(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Option<PyManifest>> {
    let m = match Source::of(source)? {
        Source::Path(p) => Manifest::from_file(p),
        Source::Bytes(b) => Manifest::from_cubin(&b),
    }
    .map_err(|e| to_py(py, e))?;
    Ok(m.map(|m| PyManifest { m: Arc::new(m) }))
}

/// `parse_manifest(text)`: a manifest from its text (as `cutec build F.cute --emit=manifest`
/// prints it).
#[pyfunction]
pub fn parse_manifest(py: Python<'_>, text: &str) -> PyResult<PyManifest> {
    Manifest::parse(text).map(|m| PyManifest { m: Arc::new(m) }).map_err(|e| to_py(py, e))
}

#[pymethods]
impl PyManifest {
    /// The manifest text.
    #[getter]
    fn text(&self) -> String {
        self.m.text.clone()
    }
    /// The manifest's major version.
    #[getter]
    fn version(&self) -> u32 {
        self.m.version
    }
    /// The target (`sm_90`).
    #[getter]
    fn arch(&self) -> Option<String> {
        self.m.arch.clone()
    }
    /// Names of the host functions.
    #[getter]
    fn hosts(&self) -> Vec<String> {
        self.m.hosts.iter().map(|h| h.name.clone()).collect()
    }
    /// Names of the kernels.
    #[getter]
    fn kernels(&self) -> Vec<String> {
        self.m.kernels.iter().map(|k| k.name.clone()).collect()
    }
    /// The plan of host function `name` (`cutec.NotFound` lists those there are).
    fn host(&self, py: Python<'_>, name: &str) -> PyResult<Plan> {
        let plan = HostPlan::new(&self.m, name).map_err(|e| to_py(py, e))?;
        let prepared = Mutex::new(Prepared { args: Vec::new(), scratch: PlanScratch::default(), cache: CallCache::new(&plan) });
        Ok(Plan { plan, prepared })
    }
    /// The signature of kernel `name`.
    fn kernel(&self, py: Python<'_>, name: &str) -> PyResult<KernelSignature> {
        match self.m.kernel(name) {
            Some(sig) => Ok(KernelSignature { sig: sig.clone() }),
            None => Err(to_py(py, RuntimeError::KernelNotFound { name: name.to_string(), available: Some(self.kernels()) })),
        }
    }
    fn __repr__(&self) -> String {
        format!("<cutec manifest {}: {} kernels, hosts {}>", self.m.arch.as_deref().unwrap_or("?"), self.m.kernels.len(), self.hosts().join(", "))
    }
}

/// A host function's plan, without a device.
#[pyclass(frozen, name = "Plan", module = "cutec._native")]
pub struct Plan {
    plan: HostPlan,
    /// What `prepare` reuses between calls, as a loaded host function does.
    prepared: Mutex<Prepared>,
}

struct Prepared {
    args: Vec<cute_runtime::Arg>,
    scratch: PlanScratch,
    cache: CallCache,
}

impl Plan {
    fn args(&self, args: &Bound<'_, PyTuple>) -> PyResult<Vec<cute_runtime::Arg>> {
        let sig = self.plan.sig();
        let mut buf = Vec::new();
        convert(args, Callee { role: "host", name: &sig.name, params: &sig.params }, OFFLINE, &mut buf)?;
        Ok(buf)
    }
}

#[pymethods]
impl Plan {
    /// The launches a call with these arguments would make (`cutec.Refused` when refused).
    #[pyo3(signature = (*args))]
    fn check<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyList>> {
        let buf = self.args(args)?;
        let planned = self.plan.evaluate(&buf).map_err(|e| to_py(py, e))?;
        planned::launches(py, &planned)
    }

    /// Runs a host function that launches nothing (only `print` steps): the call's checks, then
    /// what it prints, returned as a string.
    #[pyo3(signature = (*args))]
    fn run(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<String> {
        let buf = self.args(args)?;
        let mut out = Vec::new();
        self.plan.run_without_device(&buf, &mut out).map_err(|e| to_py(py, e))?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// Everything a call of a loaded host function does on the host before it launches, with
    /// nothing launched: the default stream looked up (torch's current stream when torch is
    /// imported), the arguments read into a reused buffer, the plan evaluated through the same
    /// per-signature cache. Returns nothing; raises `cutec.Refused` as the call would. For measuring
    /// the host-side cost of a call without a GPU (`bench/overhead.py`).
    #[pyo3(signature = (*args))]
    fn prepare(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<()> {
        let _stream = handle_of(py, None, 0)?;
        let sig = self.plan.sig();
        let callee = Callee { role: "host", name: &sig.name, params: &sig.params };
        // In use (re-entered from a producer's Python code, or another thread): a fresh state.
        let Ok(mut guard) = self.prepared.try_lock() else {
            let mut buf = Vec::new();
            convert(args, callee, OFFLINE, &mut buf)?;
            return self.plan.evaluate_into(&buf, &mut PlanScratch::default()).map_err(|e| to_py(py, e));
        };
        let Prepared { args: buf, scratch, cache } = &mut *guard;
        convert(args, callee, OFFLINE, buf)?;
        cache.evaluate(&self.plan, buf, scratch).map_err(|e| to_py(py, e))
    }

    #[getter]
    fn name(&self) -> String {
        self.plan.sig().name.clone()
    }
    #[getter]
    fn signature(&self) -> String {
        self.plan.sig().to_string()
    }
    #[getter]
    fn params(&self) -> Vec<(String, String)> {
        planned::params(&self.plan.sig().params)
    }
    /// The kernels of its launches, in order (every branch of its `if`s: a call launches those of
    /// the branches it takes).
    #[getter]
    fn launches(&self) -> Vec<String> {
        self.plan.sig().launches.iter().map(|l| l.kernel.clone()).collect()
    }
    fn __repr__(&self) -> String {
        format!("<cutec plan {}>", self.plan.sig())
    }
}

/// A kernel's signature, without a device.
#[pyclass(frozen, name = "KernelSignature", module = "cutec._native")]
pub struct KernelSignature {
    sig: KernelSig,
}

#[pymethods]
impl KernelSignature {
    /// The flat kernel-ABI arguments of a launch with these arguments (`cutec.Refused` when a
    /// checked launch would refuse them).
    #[pyo3(signature = (*args))]
    fn check<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyList>> {
        let mut buf = Vec::new();
        convert(args, Callee { role: "kernel", name: &self.sig.name, params: &self.sig.params }, OFFLINE, &mut buf)?;
        let flat = check_args(&self.sig, &buf).map_err(|e| to_py(py, e))?;
        planned::abi_list(py, &flat)
    }
    #[getter]
    fn name(&self) -> String {
        self.sig.name.clone()
    }
    #[getter]
    fn signature(&self) -> String {
        self.sig.to_string()
    }
    #[getter]
    fn abi(&self) -> String {
        self.sig.abi()
    }
    #[getter]
    fn params(&self) -> Vec<(String, String)> {
        planned::params(&self.sig.params)
    }
    /// Dynamic shared memory every launch must give (bytes).
    #[getter]
    fn smem(&self) -> u32 {
        self.sig.dynamic_smem_bytes
    }
    fn __repr__(&self) -> String {
        format!("<cutec kernel {}>", self.sig)
    }
}
