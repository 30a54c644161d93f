//! A cubin loaded on a GPU, and its host functions and kernels as Python callables.
//!
//! A call converts its arguments ([`crate::arguments`]) into a buffer the callable keeps, resolves
//! its stream ([`crate::streams`]) and hands both to the runtime (`HostFn::call`,
//! `Kernel::launch_checked`), which checks everything against the manifest and launches
//! asynchronously. The manifest was parsed once, at load; the host function's plan evaluation is
//! kept per argument signature (`cute_runtime::call_cache`). So a warm call costs the argument
//! protocol reads, a few comparisons and the driver's launch.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use cute_runtime::{Arg, Device, HostFn, Kernel, LaunchConfig, Module, Stream};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyTuple};

use crate::arguments::{convert, Callee};
use crate::errors::to_py;
use crate::planned;
use crate::streams::{handle_of, StreamCache};
use crate::tensors::Target;

/// Where a cubin comes from: a path, or its bytes.
pub enum Source {
    Path(PathBuf),
    Bytes(Vec<u8>),
}

impl Source {
    /// `bytes`, `bytearray` or `memoryview` are the image; `str` and `os.PathLike` a path.
    pub fn of(obj: &Bound<'_, PyAny>) -> PyResult<Source> {
        if let Ok(b) = obj.cast::<PyBytes>() {
            return Ok(Source::Bytes(b.as_bytes().to_vec()));
        }
        if let Ok(b) = obj.cast::<PyByteArray>() {
            return Ok(Source::Bytes(b.to_vec()));
        }
        let py = obj.py();
        if obj.is_instance(&py.import("builtins")?.getattr("memoryview")?)? {
            return Ok(Source::Bytes(obj.call_method0("tobytes")?.cast::<PyBytes>()?.as_bytes().to_vec()));
        }
        let path = py.import("os")?.call_method1("fspath", (obj,)).map_err(|_| {
            PyTypeError::new_err(format!(
                "a cubin is given as a path or as bytes, not a {}",
                crate::tensors::type_name(obj)
            ))
        })?;
        Ok(Source::Path(PathBuf::from(path.extract::<String>()?)))
    }
}

/// One `Device` per ordinal for the life of the process (one retain of its primary context).
static DEVICES: OnceLock<Mutex<Vec<Device>>> = OnceLock::new();

pub fn device(ordinal: usize) -> cute_runtime::Result<Device> {
    let lock = DEVICES.get_or_init(|| Mutex::new(Vec::new()));
    let mut known =
        lock.lock().map_err(|_| cute_runtime::RuntimeError::InvalidArgument("device table poisoned".into()))?;
    if let Some(d) = known.iter().find(|d| d.ordinal() == ordinal) {
        return Ok(d.clone());
    }
    let d = Device::open(ordinal)?;
    known.push(d.clone());
    Ok(d)
}

/// What the callables of one loaded module share.
struct Loaded {
    module: Module,
    streams: StreamCache,
    ordinal: usize,
}

/// A cubin loaded on a CUDA device (`cutec.load`). Its host functions and kernels are looked up
/// with `host(name)` and `kernel(name)`; the Python `cutec.Module` also makes each host function
/// an attribute.
#[pyclass(frozen, name = "LoadedModule", module = "cutec._native")]
pub struct LoadedModule {
    inner: Arc<Loaded>,
}

/// `load(source, device=0)`: loads a cubin (path or bytes) on CUDA device `device`.
#[pyfunction]
#[pyo3(signature = (source, device=0))]
pub fn load(py: Python<'_>, source: &Bound<'_, PyAny>, device: usize) -> PyResult<LoadedModule> {
    let source = Source::of(source)?;
    let dev = self::device(device).map_err(|e| to_py(py, e))?;
    let module = match &source {
        Source::Path(p) => Module::load_file(&dev, p),
        Source::Bytes(b) => Module::load_bytes(&dev, b, "<bytes>"),
    }
    .map_err(|e| to_py(py, e))?;
    Ok(LoadedModule { inner: Arc::new(Loaded { module, streams: StreamCache::new(dev), ordinal: device }) })
}

#[pymethods]
impl LoadedModule {
    /// The host function `name` (`cutec.NotFound` lists those there are).
    fn host(&self, py: Python<'_>, name: &str) -> PyResult<HostFunction> {
        let host = self.inner.module.host(name).map_err(|e| to_py(py, e))?;
        let reselect = crate::arguments::scalars_differ(host.instances());
        Ok(HostFunction { host, loaded: self.inner.clone(), args: Mutex::new(Vec::new()), reselect })
    }

    /// The kernel `name`, launched with `k(*args, grid=..., block=..., smem=0, stream=None)`.
    fn kernel(&self, py: Python<'_>, name: &str) -> PyResult<KernelFunction> {
        let kernel = self.inner.module.kernel(name).map_err(|e| to_py(py, e))?;
        Ok(KernelFunction { kernel, loaded: self.inner.clone(), args: Mutex::new(Vec::new()) })
    }

    /// Names of the host functions in the manifest.
    #[getter]
    fn hosts(&self) -> Vec<String> {
        self.inner.module.host_names()
    }

    /// Names of the kernels in the manifest.
    #[getter]
    fn kernels(&self) -> Vec<String> {
        self.inner.module.manifest().map(|m| m.kernels.iter().map(|k| k.name.clone()).collect()).unwrap_or_default()
    }

    /// The manifest text, or `None` for an image without one.
    #[getter]
    fn manifest(&self) -> Option<String> {
        self.inner.module.manifest().map(|m| m.text.clone())
    }

    /// The target the cubin was compiled for (`sm_90`).
    #[getter]
    fn arch(&self) -> Option<String> {
        self.inner.module.manifest().and_then(|m| m.arch.clone())
    }

    /// Where the module came from (its path, or `<bytes>`).
    #[getter]
    fn label(&self) -> String {
        self.inner.module.label().to_string()
    }

    /// The CUDA device ordinal it is loaded on.
    #[getter]
    fn device(&self) -> usize {
        self.inner.ordinal
    }

    /// Waits for all work on the device (kernel faults surface here).
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        self.inner.streams.device().synchronize().map_err(|e| to_py(py, e))
    }
}

impl Loaded {
    /// A call of `callee`: its arguments read into `buf` (the callable's buffer, or a fresh one
    /// when that is in use: a call re-entered from a producer's Python code, or another thread),
    /// then `launch` on the call's stream.
    fn call(
        &self,
        args: &Bound<'_, PyTuple>,
        stream: Option<&Bound<'_, PyAny>>,
        callee: Callee<'_>,
        buf: &Mutex<Vec<Arg>>,
        launch: impl FnOnce(&Stream, &[Arg]) -> cute_runtime::Result<()>,
    ) -> PyResult<()> {
        let py = args.py();
        let s = self.streams.get(handle_of(py, stream, self.ordinal)?);
        let target = Target { device: Some(self.ordinal), stream: Some(&s) };
        let mut local = Vec::new();
        let mut guard = buf.try_lock().ok();
        let buf = guard.as_deref_mut().unwrap_or(&mut local);
        convert(args, callee, target, buf)?;
        launch(&s, buf).map_err(|e| to_py(py, e))
    }

    /// The arguments of a check (no stream: nothing is launched, nothing synchronized).
    fn check_args(&self, args: &Bound<'_, PyTuple>, callee: Callee<'_>) -> PyResult<Vec<Arg>> {
        let mut buf = Vec::new();
        convert(args, callee, Target { device: Some(self.ordinal), stream: None }, &mut buf)?;
        Ok(buf)
    }
}

/// A host function of a loaded module: `f(*args, stream=None)` checks and launches
/// (asynchronously); `f.check(*args)` checks and returns the launches it would make.
#[pyclass(frozen, name = "HostFunction", module = "cutec._native")]
pub struct HostFunction {
    host: HostFn,
    loaded: Arc<Loaded>,
    args: Mutex<Vec<Arg>>,
    /// A generic host function whose instances differ in a scalar parameter's type: numbers are
    /// converted for the instance the tensors select.
    reselect: bool,
}

impl HostFunction {
    /// The parameters numbers are converted for: the first instance's (every instance's, when
    /// they differ only in tensor element types).
    fn callee(&self) -> Callee<'_> {
        let sig = self.host.signature();
        Callee { role: "host", name: self.host.name(), params: &sig.params }
    }

    /// The callee of the instance `args` select (generic host functions whose scalar parameter
    /// types differ between instances).
    fn selected_callee(&self, args: &Bound<'_, PyTuple>) -> PyResult<Callee<'_>> {
        if !self.reselect {
            return Ok(self.callee());
        }
        let first = self.loaded.check_args(args, self.callee())?;
        let i = self.host.select(&first).map_err(|e| to_py(args.py(), e))?;
        let sig = self.host.instances().nth(i).unwrap_or_else(|| self.host.signature());
        Ok(Callee { role: "host", name: self.host.name(), params: &sig.params })
    }
}

impl HostFunction {
    /// The runtime's host function.
    pub(crate) fn runtime(&self) -> &HostFn {
        &self.host
    }

    /// Calls it with `args` (already converted) on the raw stream `handle` of its device: the
    /// XLA FFI handler's call ([`crate::jax_ops`]), which has no Python arguments to read.
    pub(crate) fn call_on_stream(&self, handle: u64, args: &[Arg]) -> cute_runtime::Result<()> {
        self.host.call(&self.loaded.streams.get(handle), args)
    }
}

#[pymethods]
impl HostFunction {
    #[pyo3(signature = (*args, stream=None))]
    fn __call__(&self, args: &Bound<'_, PyTuple>, stream: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.loaded.call(args, stream, self.selected_callee(args)?, &self.args, |s, a| self.host.call(s, a))
    }

    /// The checks of a call, without launching: the launches it would make (`cutec.Refused`
    /// when it would be refused).
    #[pyo3(signature = (*args))]
    fn check<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyList>> {
        let planned =
            self.host.check(&self.loaded.check_args(args, self.selected_callee(args)?)?).map_err(|e| to_py(py, e))?;
        planned::launches(py, &planned)
    }

    #[getter]
    fn name(&self) -> String {
        self.host.name().to_string()
    }

    /// `host elementwise_add(mA: tensor<f16, gmem, ...>, ...)`; a generic host function's
    /// instances one per line (`host elementwise_add<f16>(...)`).
    #[getter]
    fn signature(&self) -> String {
        self.host.instances().map(ToString::to_string).collect::<Vec<_>>().join("\n")
    }

    /// The names of its instances (`["add<f16>", "add<f32>"]`; `[name]` when not generic).
    #[getter]
    fn instances(&self) -> Vec<String> {
        self.host.instances().map(|s| s.name.clone()).collect()
    }

    /// `[(name, type), ...]`.
    #[getter]
    fn params(&self) -> Vec<(String, String)> {
        planned::params(&self.host.signature().params)
    }

    /// The manifest text of its module (`cutec.torch` derives an op's schema and its trace-time
    /// checks from it), or `None` for an image without one.
    #[getter]
    fn manifest(&self) -> Option<String> {
        self.loaded.module.manifest().map(|m| m.text.clone())
    }

    /// The CUDA device ordinal its module is loaded on.
    #[getter]
    fn device(&self) -> usize {
        self.loaded.ordinal
    }

    fn __repr__(&self) -> String {
        format!("<cutec host function {}>", self.host.signature())
    }
}

/// `grid=`/`block=`: an int, or a tuple or list of 1 to 3 ints (missing ones are 1).
fn dims(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<(u32, u32, u32)> {
    let v: Vec<u32> = match obj.extract::<u32>() {
        Ok(x) => vec![x],
        Err(_) => obj
            .extract::<Vec<u32>>()
            .map_err(|_| PyTypeError::new_err(format!("{what}= takes an int or 1 to 3 ints")))?,
    };
    match v[..] {
        [x] => Ok((x, 1, 1)),
        [x, y] => Ok((x, y, 1)),
        [x, y, z] => Ok((x, y, z)),
        _ => Err(PyValueError::new_err(format!("{what}= takes 1 to 3 dimensions, not {}", v.len()))),
    }
}

/// A kernel of a loaded module: `k(*args, grid=..., block=..., smem=0, stream=None)` is a checked
/// launch (asynchronous); `k.check(*args)` returns the flat kernel-ABI arguments.
#[pyclass(frozen, name = "KernelFunction", module = "cutec._native")]
pub struct KernelFunction {
    kernel: Kernel,
    loaded: Arc<Loaded>,
    args: Mutex<Vec<Arg>>,
}

impl KernelFunction {
    fn callee(&self) -> Callee<'_> {
        let params = self.kernel.signature().map_or(&[][..], |s| &s.params[..]);
        Callee { role: "kernel", name: self.kernel.name(), params }
    }
}

#[pymethods]
impl KernelFunction {
    #[pyo3(signature = (*args, grid, block, smem=0, stream=None))]
    fn __call__(
        &self,
        args: &Bound<'_, PyTuple>,
        grid: &Bound<'_, PyAny>,
        block: &Bound<'_, PyAny>,
        smem: u32,
        stream: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let cfg = LaunchConfig { grid: dims(grid, "grid")?, block: dims(block, "block")?, shared_mem_bytes: smem };
        self.loaded.call(args, stream, self.callee(), &self.args, |s, a| self.kernel.launch_checked(s, cfg, a))
    }

    /// The checks of a launch, without launching: the flat kernel-ABI arguments.
    #[pyo3(signature = (*args))]
    fn check<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyList>> {
        let flat = self.kernel.check(&self.loaded.check_args(args, self.callee())?).map_err(|e| to_py(py, e))?;
        planned::abi_list(py, &flat)
    }

    #[getter]
    fn name(&self) -> String {
        self.kernel.name().to_string()
    }

    /// `vector_add(a: tensor<f32, gmem, ?:1, align: 4>, ...)`, or `None` without a manifest entry.
    #[getter]
    fn signature(&self) -> Option<String> {
        self.kernel.signature().map(ToString::to_string)
    }

    /// The kernel ABI: `(u64 a, i32 a.shape[0], ...)`.
    #[getter]
    fn abi(&self) -> Option<String> {
        self.kernel.signature().map(|s| s.abi())
    }

    #[getter]
    fn params(&self) -> Vec<(String, String)> {
        self.kernel.signature().map(|s| planned::params(&s.params)).unwrap_or_default()
    }

    fn __repr__(&self) -> String {
        format!("<cutec kernel {}>", self.signature().unwrap_or_else(|| self.kernel.name().to_string()))
    }
}
