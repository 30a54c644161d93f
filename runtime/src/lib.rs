//! `cute-runtime`: load cubins produced by `cutec` and launch their kernels
//! through the CUDA driver API (via `cudarc`, loaded dynamically). No MLIR.
//!
//! # API in one example
//!
//! ```no_run
//! use cute_runtime::{ArgList, Device, DeviceBuffer, LaunchConfig, Module, Result};
//!
//! fn run() -> Result<()> {
//!     let dev = Device::open(0)?;                 // Err (never a panic) without driver/GPU
//!     let stream = dev.default_stream();
//!     let module = Module::load(&dev, "vector_add.cubin")?;
//!     let kernel = module.kernel("vector_add")?;  // Err lists the kernels it does have
//!     let n = 1024;
//!     let a = DeviceBuffer::from_host(&stream, &vec![1.0f32; n])?;
//!     let b = DeviceBuffer::from_host(&stream, &vec![2.0f32; n])?;
//!     let c = DeviceBuffer::<f32>::zeros(&stream, n)?;
//!     let args = ArgList::new()
//!         .tensor(&a.tensor_arg(&[n as i32], &[]))
//!         .tensor(&b.tensor_arg(&[n as i32], &[]))
//!         .tensor(&c.tensor_arg(&[n as i32], &[]));
//!     kernel.launch(&stream, LaunchConfig::linear(n as u64, 256)?, args.as_slice())?;
//!     let out = c.to_host(&stream)?;              // synchronizes
//!     assert!(out.iter().all(|&x| x == 3.0));
//!     Ok(())
//! }
//! ```
//!
//! * [`Device::open`] → [`Device`] (primary context), [`Device::default_stream`] /
//!   [`Device::new_stream`] → [`Stream`].
//! * [`Module::load`] (path or bytes; cubin ELF, also fatbin or PTX text) →
//!   [`Module`]; [`Module::kernel`] → [`Kernel`]; [`Module::kernel_names`].
//! * [`DeviceBuffer<T>`] for `f32 f64 i32 u32 i64 u64 u16 i16 u8 i8`; f16 data
//!   is `DeviceBuffer<u16>` holding binary16 bits, see [`f16`](mod@f16).
//! * [`Kernel::launch`]`(&stream, LaunchConfig, &[KernelArg])`; the launch
//!   config is validated (non-zero dims, ≤ 1024 threads per block, grid
//!   limits), and when the driver reports parameter sizes
//!   (`cuFuncGetParamInfo`) the argument count and sizes are checked too.
//! * [`EventTimer`] / [`Stream::time_ms`] / [`Stream::median_ms`] for CUDA-event timing; [`Rng`] for
//!   reproducible inputs.
//! * [`dlpack`]: DLPack tensors (torch, CuPy, JAX) read as [`TensorView`]s; [`Device::borrow_stream`]:
//!   another library's stream (the Python extension, `python/`, uses both).
//! * [`call_cache`]: a host function's accepted calls, kept by argument signature so that a repeated
//!   call skips the plan evaluation.
//!
//! Every fallible call returns [`Result`]`<_, `[`RuntimeError`]`>` with a
//! readable message. Without a driver, [`Device::open`] returns
//! [`RuntimeError::NoDriver`] ("no CUDA driver (libcuda.so) found: ...");
//! [`RuntimeError::is_unavailable`] tells "cannot run here" (no driver, no
//! GPU, driver older than CUDA 13.0) from real failures.
//!
//! # Kernel ABI (what `cutec` emits)
//!
//! Kernel parameters are, in declaration order:
//!
//! * a **tensor** parameter `t: tensor<T, gmem, Shape:Stride>` becomes
//!   1. its base pointer: `.param .u64 .ptr .global` ([`KernelArg::Ptr`]),
//!   2. then each **dynamic** (`?`) shape entry, as `i32`, in flattened mode
//!      order,
//!   3. then each **dynamic** stride entry, as `i32`, in flattened mode order.
//!
//!   Static entries are compiled into the kernel and are not passed.
//! * a **scalar** parameter is passed by value (`i32`, `i64`, `f32`, ...).
//!
//! Example: `kernel vector_add(a: tensor<f32, gmem, (?):(1)>, b: ..., c: ...)`
//! has the parameters `(a_ptr: u64, a_shape0: i32, b_ptr: u64, b_shape0: i32,
//! c_ptr: u64, c_shape0: i32)`. A tensor `(?, 64):(?, 1)` passes
//! `(ptr, shape0, stride0)`. [`TensorArg`] performs this expansion
//! (`TensorArg { ptr, dyn_shape, dyn_stride }`), [`ArgList`] chains tensors
//! and scalars.
//!
//! # The `cute-run` binary
//!
//! `cute-run info` and `cute-run vector-add CUBIN [--n N] [--seed S]` (see
//! `runtime/README.md`). Exit codes: 0 PASS, 1 FAIL, 2 usage error,
//! 77 SKIP (no CUDA driver/GPU; the automake "skipped" convention).

pub mod call_cache;
pub mod capi;
mod checked;
mod device;
pub mod dlpack;
pub mod driver;
pub mod elf;
mod error;
pub mod f16;
pub mod fastdiv;
pub mod generic;
mod graph;
mod graph_launch;
mod host;
mod host_offline;
mod kernel;
mod launch;
pub mod manifest;
mod memory;
mod module;
pub mod plan;
pub mod rng;
mod timing;
pub mod tma;

pub use checked::{check_args, check_args_into, Arg, TensorView};
pub use generic::HostGroup;
pub use graph::Graph;
pub use host::HostFn;
pub use manifest::{DType, IntTuple, KernelSig, Manifest, ParamKind, ParamSig, Space, TensorSig};
pub use plan::{
    Assert, Cond, Expr, HostPlan, HostSig, HostStep, LaunchPlan, PlanArg, PlannedLaunch, Require, TypeArgSig,
};

pub use device::{Device, Stream};
pub use driver::{driver_version, REQUIRED_DRIVER_VERSION};
pub use error::{format_cuda_version, Result, RuntimeError};
pub use kernel::Kernel;
pub use launch::{ArgList, KernelArg, LaunchConfig, TensorArg, MAX_THREADS_PER_BLOCK};
pub use memory::{DeviceBuffer, DeviceElem};
pub use module::{classify_image, ImageKind, Module, ModuleSource};
pub use rng::Rng;
pub use timing::{median, EventTimer};

/// True when `libcuda` can be loaded on this machine (never panics).
pub fn driver_available() -> bool {
    driver::ensure_driver().is_ok()
}
