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
use cute_runtime::{check_args, HostGroup, HostPlan, KernelSig, Manifest, RuntimeError};
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
        self.m.host_names()
    }
    /// Names of the kernels.
    #[getter]
    fn kernels(&self) -> Vec<String> {
        self.m.kernels.iter().map(|k| k.name.clone()).collect()
    }
    /// The plan of host function `name` (`cutec.NotFound` lists those there are).
    fn host(&self, py: Python<'_>, name: &str) -> PyResult<Plan> {
        let group = HostGroup::new(&self.m, name).map_err(|e| to_py(py, e))?;
        let prepared = group
            .plans()
            .iter()
            .map(|p| {
                Mutex::new(Prepared { args: Vec::new(), scratch: PlanScratch::default(), cache: CallCache::new(p) })
            })
            .collect();
        let reselect = crate::arguments::scalars_differ(group.plans().iter().map(HostPlan::sig));
        Ok(Plan { group, prepared, reselect })
    }
    /// The signature of kernel `name`.
    fn kernel(&self, py: Python<'_>, name: &str) -> PyResult<KernelSignature> {
        match self.m.kernel(name) {
            Some(sig) => Ok(KernelSignature { sig: sig.clone() }),
            None => {
                Err(to_py(py, RuntimeError::KernelNotFound { name: name.to_string(), available: Some(self.kernels()) }))
            }
        }
    }
    fn __repr__(&self) -> String {
        format!(
            "<cutec manifest {}: {} kernels, hosts {}>",
            self.m.arch.as_deref().unwrap_or("?"),
            self.m.kernels.len(),
            self.hosts().join(", ")
        )
    }
}

/// A host function's plan, without a device.
#[pyclass(frozen, name = "Plan", module = "cutec._native")]
pub struct Plan {
    /// The host function's plan, or a generic one's instances (selected per call by dtype).
    group: HostGroup,
    /// What `prepare` reuses between calls, as a loaded host function does (per instance).
    prepared: Vec<Mutex<Prepared>>,
    /// The instances differ in a scalar parameter's type: numbers are converted per instance.
    reselect: bool,
}

struct Prepared {
    args: Vec<cute_runtime::Arg>,
    scratch: PlanScratch,
    cache: CallCache,
}

impl Plan {
    /// The parameters numbers are converted for: instance `i`'s.
    fn callee(&self, i: usize) -> Callee<'_> {
        let sig = self.group.plans()[i].sig();
        Callee { role: "host", name: self.group.name(), params: &sig.params }
    }

    /// The arguments read into `buf`, and the instance they select (`cutec.Refused` when their
    /// dtypes select none).
    fn args_into(&self, args: &Bound<'_, PyTuple>, buf: &mut Vec<cute_runtime::Arg>) -> PyResult<usize> {
        convert(args, self.callee(0), OFFLINE, buf)?;
        let i = self.group.select(buf).map_err(|e| to_py(args.py(), e))?;
        if i != 0 && self.reselect {
            convert(args, self.callee(i), OFFLINE, buf)?;
        }
        Ok(i)
    }

    fn args(&self, args: &Bound<'_, PyTuple>) -> PyResult<(usize, Vec<cute_runtime::Arg>)> {
        let mut buf = Vec::new();
        let i = self.args_into(args, &mut buf)?;
        Ok((i, buf))
    }

    /// The first instance (the only one of a non-generic host function).
    fn plan(&self) -> &HostPlan {
        &self.group.plans()[0]
    }
}

#[pymethods]
impl Plan {
    /// The launches a call with these arguments would make (`cutec.Refused` when refused).
    #[pyo3(signature = (*args))]
    fn check<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyList>> {
        let (i, buf) = self.args(args)?;
        let planned = self.group.plans()[i].evaluate(&buf).map_err(|e| to_py(py, e))?;
        planned::launches(py, &planned)
    }

    /// Runs a host function that launches nothing (only `print` steps): the call's checks, then
    /// what it prints, returned as a string.
    #[pyo3(signature = (*args))]
    fn run(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<String> {
        let (i, buf) = self.args(args)?;
        let mut out = Vec::new();
        self.group.plans()[i].run_without_device(&buf, &mut out).map_err(|e| to_py(py, e))?;
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
        // Arguments are read into the first instance's buffer; a generic host function's call
        // then goes on with the state of the instance they select.
        let Ok(mut guard) = self.prepared[0].try_lock() else {
            // In use (re-entered from a producer's Python code, or another thread): a fresh state.
            let (i, buf) = self.args(args)?;
            return self.group.plans()[i].evaluate_into(&buf, &mut PlanScratch::default()).map_err(|e| to_py(py, e));
        };
        let Prepared { args: buf, scratch, cache } = &mut *guard;
        let i = self.args_into(args, buf)?;
        if i == 0 {
            return cache.evaluate(self.plan(), buf, scratch).map_err(|e| to_py(py, e));
        }
        let plan = &self.group.plans()[i];
        match self.prepared[i].try_lock() {
            Ok(mut other) => {
                let Prepared { scratch, cache, .. } = &mut *other;
                cache.evaluate(plan, buf, scratch).map_err(|e| to_py(py, e))
            }
            Err(_) => plan.evaluate_into(buf, &mut PlanScratch::default()).map_err(|e| to_py(py, e)),
        }
    }

    #[getter]
    fn name(&self) -> String {
        self.group.name().to_string()
    }
    /// A generic host function's instances one per line.
    #[getter]
    fn signature(&self) -> String {
        self.group.plans().iter().map(|p| p.sig().to_string()).collect::<Vec<_>>().join("\n")
    }
    /// The names of its instances (`["add<f16>", "add<f32>"]`; `[name]` when not generic).
    #[getter]
    fn instances(&self) -> Vec<String> {
        self.group.plans().iter().map(|p| p.sig().name.clone()).collect()
    }
    #[getter]
    fn params(&self) -> Vec<(String, String)> {
        planned::params(&self.plan().sig().params)
    }
    /// The kernels of its launches, in order (every branch of its `if`s: a call launches those of
    /// the branches it takes).
    #[getter]
    fn launches(&self) -> Vec<String> {
        self.plan().sig().launches.iter().map(|l| l.kernel.clone()).collect()
    }
    fn __repr__(&self) -> String {
        format!("<cutec plan {}>", self.plan().sig())
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
