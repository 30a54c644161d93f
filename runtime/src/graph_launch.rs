//! Launching a kernel through a one-node CUDA graph: the node gets each launch's grid, block,
//! shared memory and parameters (`cuGraphExecKernelNodeSetParams`), then the graph is launched
//! on the launch's stream (`cuGraphLaunch`).
//!
//! Why: on the H100 machines the driver's graph launch costs the host less than its kernel
//! launch. Measured there (an empty kernel of 14 parameters, host µs per launch, variants
//! interleaved, median of 9 rounds): `cuLaunchKernel` 3.7-4.1, the node's parameters set and the
//! graph launched 2.2-3.0 on the legacy default stream (3.2-3.4 with the parameters changing
//! every launch) and 2.0-2.5 on a created stream; docs/runtime.md has the table.
//!
//! What stays as it was: stream order (a graph launch is ordered after the stream's earlier work,
//! and the legacy default stream keeps its implicit synchronization), the kernel's attributes
//! (dynamic shared memory opt-in), and asynchronous faults. What a graph adds: launches of one
//! executable graph are ordered with each other whatever their streams, so each (kernel, stream)
//! pair has a graph of its own, up to [`MAX_STREAMS`] streams per kernel. Kernels compiled with a
//! thread-block cluster shape always launch directly: a graph's kernel node did not keep the
//! clusters of the grid it was updated to (samples/cluster_exchange.cute's cluster registers came
//! out wrong on grids other than the first).
//!
//! The direct `cuLaunchKernel` is used instead while the stream is capturing (the capture then
//! records a kernel node, as before), for streams past [`MAX_STREAMS`], while another thread is
//! launching the same kernel, when the driver refuses a step of the graph path (the direct launch
//! then reports the error in its usual words), and everywhere when `CUTEC_LAUNCH=direct`.

use std::ffi::c_void;
use std::sync::{Mutex, OnceLock};

use cudarc::driver::sys::{self, CUresult, CUstreamCaptureStatus};

use crate::launch::LaunchConfig;

/// Streams per kernel that get a graph; launches on further streams are direct.
pub const MAX_STREAMS: usize = 8;

/// One stream's graph: the executable graph and its kernel node.
struct Slot {
    stream: u64,
    /// `None` once the driver refused to build or update it: that stream launches directly.
    graph: Option<Built>,
}

struct Built {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    node: sys::CUgraphNode,
}

/// The graphs of one kernel, by stream.
pub(crate) struct GraphLaunches {
    slots: Mutex<Vec<Slot>>,
    /// Whether the kernel may launch through a graph at all (no compiled cluster shape).
    eligible: OnceLock<bool>,
}

// SAFETY: the graph handles are only used under the mutex, with the kernel's context current.
unsafe impl Send for GraphLaunches {}
unsafe impl Sync for GraphLaunches {}

/// `CUTEC_LAUNCH=direct` turns graph launches off for the process.
fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("CUTEC_LAUNCH").map_or(true, |v| v != "direct"))
}

/// True when `func` was compiled without a cluster shape (`.reqnctapercluster`): the required
/// cluster width, height and depth are each 0 (none) or 1 (an unknown answer counts as a shape).
fn no_cluster_shape(func: sys::CUfunction) -> bool {
    use sys::CUfunction_attribute::*;
    [CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH].into_iter().all(|a| {
        let mut v = -1;
        // SAFETY: a valid function of the current context.
        let r = unsafe { sys::cuFuncGetAttribute(&mut v, a, func) };
        r == CUresult::CUDA_SUCCESS && v <= 1
    })
}

fn node_params(func: sys::CUfunction, cfg: &LaunchConfig, params: *mut *mut c_void) -> sys::CUDA_KERNEL_NODE_PARAMS {
    sys::CUDA_KERNEL_NODE_PARAMS {
        func,
        gridDimX: cfg.grid.0,
        gridDimY: cfg.grid.1,
        gridDimZ: cfg.grid.2,
        blockDimX: cfg.block.0,
        blockDimY: cfg.block.1,
        blockDimZ: cfg.block.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        kernelParams: params,
        extra: std::ptr::null_mut(),
        // With `func` set, the kernel handle and context are not read.
        kern: std::ptr::null_mut(),
        ctx: std::ptr::null_mut(),
    }
}

impl Built {
    /// A graph of one kernel node with these parameters, instantiated.
    ///
    /// # Safety
    /// The kernel's context is current; `params` holds one valid pointer per kernel parameter.
    unsafe fn new(p: &sys::CUDA_KERNEL_NODE_PARAMS) -> Option<Built> {
        let mut graph = std::ptr::null_mut();
        // SAFETY: output pointer valid.
        if unsafe { sys::cuGraphCreate(&mut graph, 0) } != CUresult::CUDA_SUCCESS {
            return None;
        }
        let mut node = std::ptr::null_mut();
        let mut exec = std::ptr::null_mut();
        // SAFETY: a graph we own, no dependencies, parameters valid per the caller.
        let ok = unsafe { sys::cuGraphAddKernelNode_v2(&mut node, graph, std::ptr::null(), 0, p) } == CUresult::CUDA_SUCCESS
            // SAFETY: the graph is complete.
            && unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0) } == CUresult::CUDA_SUCCESS;
        if !ok {
            // SAFETY: the graph we created; nothing else refers to it.
            unsafe { sys::cuGraphDestroy(graph) };
            return None;
        }
        Some(Built { graph, exec, node })
    }
}

impl Drop for Built {
    fn drop(&mut self) {
        // SAFETY: handles we own; launches already queued keep what they need (the driver defers
        // the release of an executable graph until its launches are done).
        unsafe {
            sys::cuGraphExecDestroy(self.exec);
            sys::cuGraphDestroy(self.graph);
        }
    }
}

impl GraphLaunches {
    pub(crate) fn new() -> GraphLaunches {
        GraphLaunches { slots: Mutex::new(Vec::new()), eligible: OnceLock::new() }
    }

    /// Launches `func` on `stream` through the stream's graph: `true` when it did, `false` when
    /// this launch must be direct (see the module docs).
    ///
    /// # Safety
    /// The kernel's context is current; `stream` is a live stream of it; `params` holds one valid
    /// pointer per kernel parameter (the values are copied during the call).
    pub(crate) unsafe fn launch(&self, func: sys::CUfunction, cfg: &LaunchConfig, stream: sys::CUstream, params: *mut *mut c_void) -> bool {
        if !enabled() || !*self.eligible.get_or_init(|| no_cluster_shape(func)) {
            return false;
        }
        let mut status = CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
        // SAFETY: a live stream (caller); an error (the legacy stream while another stream
        // captures in global mode) means: launch directly, which reports it.
        if unsafe { sys::cuStreamIsCapturing(stream, &mut status) } != CUresult::CUDA_SUCCESS
            || status != CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
        {
            return false;
        }
        let Ok(mut slots) = self.slots.try_lock() else { return false };
        let key = stream as usize as u64;
        let p = node_params(func, cfg, params);
        let i = match slots.iter().position(|s| s.stream == key) {
            Some(i) => i,
            None if slots.len() < MAX_STREAMS => {
                // SAFETY: as this function's contract.
                let graph = unsafe { Built::new(&p) };
                slots.push(Slot { stream: key, graph });
                slots.len() - 1
            }
            None => return false,
        };
        let Some(g) = slots[i].graph.as_ref() else { return false };
        // SAFETY: the node of this executable graph; parameters valid per the caller. Launches
        // already queued keep the parameters they were launched with.
        let launched = unsafe { sys::cuGraphExecKernelNodeSetParams_v2(g.exec, g.node, &p) } == CUresult::CUDA_SUCCESS
            // SAFETY: a live stream of the graph's context.
            && unsafe { sys::cuGraphLaunch(g.exec, stream) } == CUresult::CUDA_SUCCESS;
        if !launched {
            // This stream launches directly from now on; the direct launch says what is wrong.
            slots[i].graph = None;
        }
        launched
    }
}
