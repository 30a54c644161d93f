//! A kernel (entry function) of a loaded module: its attributes, its
//! parameter sizes, and launching it.

use std::fmt;
use std::sync::{Arc, OnceLock};

use cudarc::driver::sys::{self, CUfunction_attribute, CUresult};

use crate::checked::{check_args_into, Arg};
use crate::device::Stream;
use crate::driver::{self, check, driver_error};
use crate::error::{Result, RuntimeError};
use crate::graph_launch::GraphLaunches;
use crate::launch::{check_params, KernelArg, LaunchConfig, PackedArgs, DEFAULT_MAX_DYNAMIC_SMEM};
use crate::manifest::KernelSig;
use crate::module::Module;
use crate::tma::TmaEncode;

/// Arguments packed on the stack by `launch` (more use the heap).
const INLINE_ARGS: usize = 32;

/// A kernel of a [`Module`]; keeps the module loaded. Get one with
/// [`Module::kernel`].
#[derive(Clone)]
pub struct Kernel {
    func: sys::CUfunction,
    /// Before `module`: the graphs go before the module that holds their function.
    graphs: Arc<GraphLaunches>,
    module: Module,
    name: String,
    param_sizes: OnceLock<Option<Vec<usize>>>,
    max_threads: OnceLock<i32>,
    sig: Option<Arc<KernelSig>>,
}

// SAFETY: a CUfunction handle is usable from any thread once its context is
// current, which every use here ensures first.
unsafe impl Send for Kernel {}
unsafe impl Sync for Kernel {}

impl Kernel {
    pub(crate) fn new(func: sys::CUfunction, module: Module, name: String, sig: Option<Arc<KernelSig>>) -> Kernel {
        Kernel {
            func,
            graphs: Arc::new(GraphLaunches::new()),
            module,
            name,
            param_sizes: OnceLock::new(),
            max_threads: OnceLock::new(),
            sig,
        }
    }

    /// The kernel's signature from the cubin's cutec manifest (`None` for
    /// images without one: PTX, fatbins, cubins not built by cutec).
    pub fn signature(&self) -> Option<&KernelSig> {
        self.sig.as_deref()
    }

    /// Checks `args` against the manifest signature and returns the flat
    /// kernel-ABI argument list, without launching (a pure check: no driver
    /// call). See [`crate::check_args`].
    pub fn check(&self, args: &[Arg]) -> Result<Vec<KernelArg>> {
        let mut out = Vec::new();
        check_args_into(self.require_sig()?, args, &mut out)?;
        Ok(out)
    }

    fn require_sig(&self) -> Result<&KernelSig> {
        self.sig.as_deref().ok_or_else(|| {
            RuntimeError::NoManifest(format!(
                "kernel `{}` in {} has no cutec manifest entry, so its launches cannot be checked; \
                 rebuild the cubin with a current cutec, or use the unchecked `launch`",
                self.name,
                self.module.label()
            ))
        })
    }

    /// A checked launch: each argument is checked against the kernel's
    /// signature from the cubin's manifest (dtype, rank, static extents and
    /// strides, pointer alignment, null pointer, dynamic values fitting i32,
    /// 32-bit index range, and the memory bound when the view knows its
    /// size) before any driver call; a mismatch is an
    /// `Err(ArgumentMismatch)` naming the parameter, and nothing is
    /// launched. A launch giving less dynamic shared memory than the
    /// kernel's `smem` line is `Err(InvalidLaunch)`
    /// ([`KernelSig::check_dynamic_smem`]). Then as [`Kernel::launch`]
    /// (asynchronous).
    pub fn launch_checked(&self, stream: &Stream, cfg: LaunchConfig, args: &[Arg]) -> Result<()> {
        let sig = self.require_sig()?;
        let mut flat = Vec::with_capacity(args.len() * 2);
        check_args_into(sig, args, &mut flat)?;
        // `launch` also checks the dynamic shared memory against the signature, first thing.
        self.launch(stream, cfg, &flat)
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The module it belongs to.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// Any `cuFuncGetAttribute` value.
    pub fn attribute(&self, attr: CUfunction_attribute) -> Result<i32> {
        self.module.device().bind()?;
        let mut v: std::ffi::c_int = 0;
        // SAFETY: valid function handle, context current.
        check(&format!("cuFuncGetAttribute({}, {attr:?})", self.name), unsafe {
            sys::cuFuncGetAttribute(&mut v, attr, self.func)
        })?;
        Ok(v)
    }

    /// Most threads per block this kernel can be launched with (limited by
    /// its register use).
    pub fn max_threads_per_block(&self) -> Result<i32> {
        if let Some(v) = self.max_threads.get() {
            return Ok(*v);
        }
        let v = self.attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?;
        Ok(*self.max_threads.get_or_init(|| v))
    }

    /// Registers per thread.
    pub fn num_registers(&self) -> Result<i32> {
        self.attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)
    }

    /// Statically allocated shared memory per block, bytes.
    pub fn static_shared_bytes(&self) -> Result<i32> {
        self.attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
    }

    /// Byte size of each parameter, in order, as the driver reports it
    /// (`cuFuncGetParamInfo`, CUDA 12.4+); `None` when the driver cannot say.
    pub fn param_sizes(&self) -> Result<Option<Vec<usize>>> {
        if let Some(v) = self.param_sizes.get() {
            return Ok(v.clone());
        }
        let sizes = self.query_param_sizes()?;
        Ok(self.param_sizes.get_or_init(|| sizes).clone())
    }

    fn query_param_sizes(&self) -> Result<Option<Vec<usize>>> {
        if !driver::has_symbol("cuFuncGetParamInfo") {
            return Ok(None);
        }
        self.module.device().bind()?;
        // A kernel has at most 32764 bytes of parameters, so at most that
        // many parameters; the bound only guards against a looping driver.
        let mut limit = 32768usize;
        let mut exact_count = false;
        if let Some(count) = driver::func_param_count(self.func) {
            if count <= limit {
                limit = count;
                exact_count = true;
            }
        }
        let mut sizes = Vec::with_capacity(if exact_count { limit } else { 0 });
        // Without cuFuncGetParamCount (drivers before CUDA 13.2), probe until
        // cuFuncGetParamInfo reports an index out of range. (compute-sanitizer
        // lists that one expected CUDA_ERROR_INVALID_VALUE as an API error;
        // `--report-api-errors no` silences it.)
        for index in 0..limit {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: valid function handle, context current, symbol present.
            let r = unsafe { sys::cuFuncGetParamInfo(self.func, index, &mut offset, &mut size) };
            match r {
                CUresult::CUDA_SUCCESS => sizes.push(size),
                // Past the last parameter.
                CUresult::CUDA_ERROR_INVALID_VALUE if !exact_count => return Ok(Some(sizes)),
                _ => return Ok(None),
            }
        }
        Ok(if exact_count { Some(sizes) } else { None })
    }

    /// Launches the kernel on `stream` (asynchronously: faults inside the
    /// kernel surface at the next synchronize), through the stream's one-node
    /// graph where it can (`graph_launch`: the driver's graph launch costs the
    /// host less than `cuLaunchKernel`), else with `cuLaunchKernel`.
    ///
    /// Checked first, each giving a readable `Err`: the launch config
    /// ([`LaunchConfig::validate`]); that `args` match the kernel's parameter
    /// count and byte sizes (when the driver reports them); the kernel's
    /// thread limit; the dynamic shared memory limit (amounts above 48 KiB are
    /// opted in to automatically); and, when the cubin's manifest describes
    /// the kernel, that the dynamic shared memory covers what the kernel needs
    /// (its `smem` line, [`KernelSig::check_dynamic_smem`]) and that the grid
    /// is whole thread-block clusters of the kernel's cluster shape (its
    /// `cluster` line, [`KernelSig::check_cluster`]). Pointers are
    /// passed through unchecked: a wrong pointer corrupts device memory, not
    /// host memory.
    ///
    /// A kernel whose manifest has `fastdiv` lines takes, after its declared
    /// parameters, a multiplier and a shift per line ([`crate::fastdiv`]):
    /// `args` may be the declared parameters only (the values are then
    /// computed here from them) or the whole list, as [`Kernel::check`]
    /// returns it.
    pub fn launch(&self, stream: &Stream, cfg: LaunchConfig, args: &[KernelArg]) -> Result<()> {
        cfg.validate()?;
        if let Some(sig) = self.sig.as_deref() {
            sig.check_dynamic_smem(cfg.shared_mem_bytes)?;
            sig.check_cluster(cfg.grid)?;
            // The declared parameters only, of a kernel that divides by run-time values: the
            // multiplier and shift of each divisor are computed here (`fastdiv` lines).
            if !sig.fast_divisors.is_empty() && args.len() == crate::fastdiv::declared_abi_len(sig) {
                let mut full = args.to_vec();
                let vars = crate::fastdiv::vars_of(args);
                crate::fastdiv::push_fast_divisors(sig, &vars, &mut full)
                    .map_err(|m| RuntimeError::InvalidArgument(format!("kernel `{}`: {m}", self.name)))?;
                return self.launch_full(stream, cfg, &full, &self.tensor_maps(sig, &full)?);
            }
            return self.launch_full(stream, cfg, args, &self.tensor_maps(sig, args)?);
        }
        self.launch_full(stream, cfg, args, &[])
    }

    /// The kernel's TMA tensor maps (`tma` lines), encoded from the launch's arguments
    /// ([`crate::tma`]); none for most kernels.
    fn tensor_maps(
        &self,
        sig: &crate::manifest::KernelSig,
        args: &[KernelArg],
    ) -> Result<Vec<cudarc::driver::sys::CUtensorMap>> {
        sig.tmas
            .iter()
            .map(|t| {
                let e = t
                    .encoding(sig, args)
                    .map_err(|m| RuntimeError::InvalidArgument(format!("kernel `{}`: {m}", self.name)))?;
                e.encode()
            })
            .collect()
    }

    /// [`Kernel::launch`] with every kernel-ABI argument given, and the tensor maps that follow.
    fn launch_full(
        &self,
        stream: &Stream,
        cfg: LaunchConfig,
        args: &[KernelArg],
        maps: &[cudarc::driver::sys::CUtensorMap],
    ) -> Result<()> {
        let device = self.module.device();
        if self.sig.as_deref().is_some_and(|s| s.asserts) {
            driver::launched_with_asserts(&self.name);
        }
        if stream.device().ordinal() != device.ordinal() {
            return Err(RuntimeError::InvalidArgument(format!(
                "kernel `{}` is loaded on device {} but the stream is on device {}",
                self.name,
                device.ordinal(),
                stream.device().ordinal()
            )));
        }
        // The cached sizes, by reference (no copy per launch).
        if self.param_sizes.get().is_none() {
            self.param_sizes()?;
        }
        if let Some(Some(sizes)) = self.param_sizes.get() {
            // The tensor maps are the last parameters, 128 bytes each.
            let (declared, tail) = sizes.split_at(sizes.len().saturating_sub(maps.len()));
            if tail.iter().any(|s| *s != 128) {
                return Err(RuntimeError::ArgumentMismatch(format!(
                    "kernel `{}`: its last {} parameters are not 128-byte tensor maps (sizes {sizes:?})",
                    self.name,
                    maps.len()
                )));
            }
            check_params(&self.name, declared, args)?;
        }
        let threads = cfg.threads_per_block();
        let max_threads = self.max_threads_per_block()?;
        if threads > u64::try_from(max_threads).unwrap_or(0) {
            let regs = self.num_registers().unwrap_or(-1);
            return Err(RuntimeError::InvalidLaunch(format!(
                "kernel `{}` can run at most {max_threads} threads per block ({regs} registers \
                 per thread) but block {:?} has {threads}",
                self.name, cfg.block
            )));
        }
        if cfg.shared_mem_bytes > DEFAULT_MAX_DYNAMIC_SMEM {
            self.opt_in_shared_memory(cfg.shared_mem_bytes)?;
        }

        // Up to INLINE_ARGS arguments are packed on the stack (no allocation per launch).
        let mut inline_slots = [0u64; INLINE_ARGS];
        let mut inline_ptrs = [std::ptr::null_mut::<std::ffi::c_void>(); INLINE_ARGS];
        let mut packed;
        let mut heap_ptrs;
        let mut with_maps;
        let mut pointers: &mut [*mut std::ffi::c_void] = if args.len() <= INLINE_ARGS {
            for (slot, a) in inline_slots.iter_mut().zip(args) {
                *slot = a.slot_value();
            }
            for (p, slot) in inline_ptrs.iter_mut().zip(inline_slots.iter_mut()) {
                *p = slot as *mut u64 as *mut std::ffi::c_void;
            }
            &mut inline_ptrs[..args.len()]
        } else {
            packed = PackedArgs::new(args);
            heap_ptrs = packed.pointers();
            &mut heap_ptrs
        };
        if !maps.is_empty() {
            // The driver copies each 128-byte map from its pointer into the parameter buffer.
            with_maps = pointers.to_vec();
            with_maps.extend(maps.iter().map(|m| m as *const _ as *mut std::ffi::c_void));
            pointers = &mut with_maps;
        }
        device.bind()?;
        // SAFETY: as below; the context is current and the stream is this device's.
        let sizes = self.param_sizes.get().and_then(|s| s.as_deref());
        if unsafe { self.graphs.launch(self.func, &cfg, stream.cuda().cu_stream(), pointers, sizes) } {
            return Ok(());
        }
        // SAFETY: `pointers` point into `packed`, which outlives the call and
        // holds one value per parameter (count and sizes checked above when
        // the driver reports them); the driver copies the values during the
        // call. The kernel itself is trusted to respect its arguments.
        unsafe {
            cudarc::driver::result::launch_kernel(
                self.func,
                cfg.grid,
                cfg.block,
                cfg.shared_mem_bytes,
                stream.cuda().cu_stream(),
                pointers,
            )
        }
        .map_err(|e| {
            driver_error(
                format!(
                    "cuLaunchKernel({}, grid {:?}, block {:?}, {} B dynamic smem)",
                    self.name, cfg.grid, cfg.block, cfg.shared_mem_bytes
                ),
                e,
            )
        })
    }

    fn opt_in_shared_memory(&self, dynamic: u32) -> Result<()> {
        let device = self.module.device();
        let optin = device.max_shared_memory_per_block_optin()?;
        let static_smem = self.static_shared_bytes()?;
        let total = i64::from(dynamic) + i64::from(static_smem);
        if total > i64::from(optin) {
            return Err(RuntimeError::InvalidLaunch(format!(
                "kernel `{}` needs {dynamic} B dynamic + {static_smem} B static shared memory \
                 per block but the device allows at most {optin} B",
                self.name
            )));
        }
        let current = self.attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?;
        let wanted = i32::try_from(dynamic).unwrap_or(i32::MAX);
        if current < wanted {
            device.bind()?;
            // SAFETY: valid function handle, context current.
            check(&format!("cuFuncSetAttribute({}, MAX_DYNAMIC_SHARED_SIZE_BYTES={wanted})", self.name), unsafe {
                sys::cuFuncSetAttribute(
                    self.func,
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    wanted,
                )
            })?;
        }
        Ok(())
    }
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel").field("name", &self.name).field("module", &self.module.label()).finish()
    }
}
