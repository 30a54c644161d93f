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
//! A launch with the same grid, block, shared memory and parameter values as the stream's last
//! one (a kernel called again on the same buffers) launches the graph without updating its node:
//! the update is most of the cost the graph path still has (measured on one node, host µs per
//! launch: graph launched alone 2.0-2.5, the node updated with the same values and launched
//! 2.5-3.0, with other values every launch 3.4-3.6).
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
    /// What the node was last given (grid, block, shared memory, then every parameter's bytes),
    /// empty when unknown: a launch that gives the same again skips the node update.
    last: Vec<u8>,
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
    [
        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH,
        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT,
        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH,
    ]
    .into_iter()
    .all(|a| {
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
    /// `sizes` are the parameters' sizes in bytes when the driver reported them (one per
    /// pointer in `params`): with them, a launch that repeats the stream's last one skips the
    /// node update.
    ///
    /// # Safety
    /// The kernel's context is current; `stream` is a live stream of it; `params` holds one valid
    /// pointer per kernel parameter, to as many bytes as `sizes` says (the values are copied
    /// during the call).
    pub(crate) unsafe fn launch(
        &self,
        func: sys::CUfunction,
        cfg: &LaunchConfig,
        stream: sys::CUstream,
        params: &mut [*mut c_void],
        sizes: Option<&[usize]>,
    ) -> bool {
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
        let p = node_params(func, cfg, params.as_mut_ptr());
        // SAFETY: `params` and `sizes` as this function's contract.
        let bytes =
            sizes.filter(|s| s.len() == params.len()).map(|sizes| unsafe { LaunchBytes::new(cfg, params, sizes) });
        let i = match slots.iter().position(|s| s.stream == key) {
            Some(i) => i,
            None if slots.len() < MAX_STREAMS => {
                // SAFETY: as this function's contract.
                let graph = unsafe { Built::new(&p) };
                slots.push(Slot { stream: key, graph, last: Vec::new() });
                slots.len() - 1
            }
            None => return false,
        };
        let slot = &mut slots[i];
        let Some(g) = slot.graph.as_ref() else { return false };
        let same = bytes.as_ref().is_some_and(|b| b.equals(&slot.last));
        // SAFETY: the node of this executable graph; parameters valid per the caller. Launches
        // already queued keep the parameters they were launched with.
        let updated =
            same || unsafe { sys::cuGraphExecKernelNodeSetParams_v2(g.exec, g.node, &p) } == CUresult::CUDA_SUCCESS;
        // SAFETY: a live stream of the graph's context.
        let launched = updated && unsafe { sys::cuGraphLaunch(g.exec, stream) } == CUresult::CUDA_SUCCESS;
        if !launched {
            // This stream launches directly from now on; the direct launch says what is wrong.
            slot.graph = None;
        } else if !same {
            slot.last.clear();
            if let Some(b) = &bytes {
                b.write(&mut slot.last);
            }
        }
        launched
    }
}

/// A launch's configuration and parameter values as bytes, piece by piece: what a graph's node
/// holds after an update with them.
struct LaunchBytes<'a> {
    config: [u8; 28],
    params: &'a [*mut c_void],
    sizes: &'a [usize],
}

impl<'a> LaunchBytes<'a> {
    /// # Safety
    /// `params[i]` points to `sizes[i]` readable bytes, for every i (`params.len() == sizes.len()`).
    unsafe fn new(cfg: &LaunchConfig, params: &'a [*mut c_void], sizes: &'a [usize]) -> LaunchBytes<'a> {
        let mut config = [0u8; 28];
        let words = [cfg.grid.0, cfg.grid.1, cfg.grid.2, cfg.block.0, cfg.block.1, cfg.block.2, cfg.shared_mem_bytes];
        for (chunk, w) in config.chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&w.to_ne_bytes());
        }
        LaunchBytes { config, params, sizes }
    }

    fn pieces(&self) -> impl Iterator<Item = &[u8]> {
        // SAFETY: the contract of `new`.
        let params =
            self.params.iter().zip(self.sizes).map(|(p, n)| unsafe { std::slice::from_raw_parts(*p as *const u8, *n) });
        std::iter::once(&self.config[..]).chain(params)
    }

    fn equals(&self, bytes: &[u8]) -> bool {
        let mut rest = bytes;
        for piece in self.pieces() {
            match rest.split_at_checked(piece.len()) {
                Some((head, tail)) if head == piece => rest = tail,
                _ => return false,
            }
        }
        rest.is_empty()
    }

    fn write(&self, out: &mut Vec<u8>) {
        for piece in self.pieces() {
            out.extend_from_slice(piece);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(grid: u32, smem: u32) -> LaunchConfig {
        LaunchConfig { grid: (grid, 1, 1), block: (128, 1, 1), shared_mem_bytes: smem }
    }

    /// The bytes a launch is compared by: the same launch matches what it wrote, and a change of
    /// any parameter's value, of the grid or of the shared memory does not.
    #[test]
    fn a_launch_matches_only_its_own_bytes() {
        let (mut ptr, mut n, mut m) = (0xdead_beef_u64, 7_i32, 9_i32);
        let params =
            [&mut ptr as *mut u64 as *mut c_void, &mut n as *mut i32 as *mut c_void, &mut m as *mut i32 as *mut c_void];
        let sizes = [8, 4, 4];
        let mut last = Vec::new();
        // SAFETY: each pointer points to a live value of the size given.
        let bytes = |c: &LaunchConfig| unsafe { LaunchBytes::new(c, &params, &sizes) };
        assert!(!bytes(&cfg(4, 0)).equals(&last), "nothing recorded yet");
        bytes(&cfg(4, 0)).write(&mut last);
        assert_eq!(last.len(), 28 + 16);
        assert!(bytes(&cfg(4, 0)).equals(&last));
        assert!(!bytes(&cfg(5, 0)).equals(&last));
        assert!(!bytes(&cfg(4, 1024)).equals(&last));
        // SAFETY: the third parameter's value, written through its own pointer.
        unsafe { *(params[2] as *mut i32) = 10 };
        assert!(!bytes(&cfg(4, 0)).equals(&last));
        // Fewer parameters (a prefix of the recorded bytes) do not match either.
        // SAFETY: as above, for the first two.
        assert!(!unsafe { LaunchBytes::new(&cfg(4, 0), &params[..2], &sizes[..2]) }.equals(&last));
    }
}
