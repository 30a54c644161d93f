//! CUDA graphs: capture the launches queued on a stream into a graph, then
//! replay the whole graph with one call (`cuGraphLaunch`), which costs far
//! less host time than the individual launches.
//!
//! ```no_run
//! # use cute_runtime::*;
//! # fn f(dev: &Device, k: &Kernel, cfg: LaunchConfig, args: &[Arg]) -> Result<()> {
//! let stream = dev.new_stream()?;           // not the default stream: it cannot be captured
//! let graph = stream.capture(|s| {
//!     k.launch_checked(s, cfg, args)?;      // checked at capture time, recorded, not run
//!     k.launch_checked(s, cfg, args)
//! })?;
//! for _ in 0..100 {
//!     graph.launch(&stream)?;               // replays both kernels
//! }
//! stream.synchronize()?;
//! # Ok(()) }
//! ```
//!
//! Arguments are captured by value: replays use the pointers and sizes given
//! at capture time.

use std::fmt;

use cudarc::driver::sys::{self, CUstreamCaptureMode, CUstreamCaptureStatus};

use crate::device::{Device, Stream};
use crate::driver::{check, driver_error};
use crate::error::{Result, RuntimeError};

/// An instantiated CUDA graph (`CUgraph` + `CUgraphExec`), replayable on
/// any stream of its device.
pub struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    device: Device,
    nodes: usize,
}

// SAFETY: graph handles may be used from any thread with the context
// current; `Graph` has no interior mutability and the driver serializes
// launches of one exec. Concurrent use from several threads must still be
// serialized by the caller (`&self` launch is fine: cuGraphLaunch of the same
// exec from two threads is allowed, it is editing that is not).
unsafe impl Send for Graph {}
unsafe impl Sync for Graph {}

impl Drop for Graph {
    fn drop(&mut self) {
        if self.device.bind().is_ok() {
            // SAFETY: both handles were created by capture/instantiate and are
            // destroyed once; errors cannot be reported from drop.
            unsafe {
                let _ = sys::cuGraphExecDestroy(self.exec);
                let _ = sys::cuGraphDestroy(self.graph);
            }
        }
    }
}

impl Graph {
    /// Replays the graph on `stream` (asynchronously).
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        self.same_device(stream)?;
        self.device.bind()?;
        // SAFETY: exec is a live instantiated graph; the stream is valid.
        check("cuGraphLaunch", unsafe { sys::cuGraphLaunch(self.exec, stream.cuda().cu_stream()) })
    }

    /// Uploads the graph's resources ahead of the first launch.
    pub fn upload(&self, stream: &Stream) -> Result<()> {
        self.same_device(stream)?;
        self.device.bind()?;
        // SAFETY: as in `launch`.
        check("cuGraphUpload", unsafe { sys::cuGraphUpload(self.exec, stream.cuda().cu_stream()) })
    }

    /// Number of nodes (captured operations) in the graph.
    pub fn node_count(&self) -> usize {
        self.nodes
    }

    fn same_device(&self, stream: &Stream) -> Result<()> {
        if stream.device().ordinal() != self.device.ordinal() {
            return Err(RuntimeError::InvalidArgument(format!(
                "graph of device {} launched on a stream of device {}",
                self.device.ordinal(),
                stream.device().ordinal()
            )));
        }
        Ok(())
    }
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph").field("device", &self.device.ordinal()).field("nodes", &self.nodes).finish()
    }
}

impl Stream {
    fn capturable(&self) -> Result<()> {
        if self.cuda().cu_stream().is_null() {
            return Err(RuntimeError::InvalidArgument(
                "the default (legacy NULL) stream cannot be captured into a CUDA graph; \
                 capture on a stream from Device::new_stream()"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Starts capturing: until [`Stream::end_capture`], work queued on this
    /// stream is recorded into a graph instead of running (thread-local
    /// capture mode).
    pub fn begin_capture(&self) -> Result<()> {
        self.capturable()?;
        self.device().bind()?;
        // SAFETY: valid, non-NULL stream of the current context.
        unsafe {
            cudarc::driver::result::stream::begin_capture(
                self.cuda().cu_stream(),
                CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        }
        .map_err(|e| driver_error("cuStreamBeginCapture", e))
    }

    /// Ends the capture and instantiates the recorded graph.
    pub fn end_capture(&self) -> Result<Graph> {
        self.capturable()?;
        self.device().bind()?;
        // SAFETY: valid stream; the returned graph is owned by us.
        let graph = unsafe { cudarc::driver::result::stream::end_capture(self.cuda().cu_stream()) }
            .map_err(|e| driver_error("cuStreamEndCapture", e))?;
        if graph.is_null() {
            return Err(RuntimeError::InvalidArgument("the capture produced no graph".into()));
        }
        let mut nodes = 0usize;
        // SAFETY: graph is valid; a NULL node array asks for the count only.
        let _ = unsafe { sys::cuGraphGetNodes(graph, std::ptr::null_mut(), &mut nodes) };
        // SAFETY: graph is valid.
        match unsafe { cudarc::driver::result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)) } {
            Ok(exec) => Ok(Graph { graph, exec, device: self.device().clone(), nodes }),
            Err(e) => {
                // SAFETY: destroy the graph we own on the error path.
                let _ = unsafe { sys::cuGraphDestroy(graph) };
                Err(driver_error("cuGraphInstantiate", e))
            }
        }
    }

    /// True while the stream is capturing.
    pub fn is_capturing(&self) -> Result<bool> {
        self.device().bind()?;
        // SAFETY: valid stream.
        let s = unsafe { cudarc::driver::result::stream::is_capturing(self.cuda().cu_stream()) }
            .map_err(|e| driver_error("cuStreamIsCapturing", e))?;
        Ok(s == CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE)
    }

    /// The id of the capture this stream is part of (`None` when it is not capturing). An
    /// invalidated capture is an error, as is asking about the legacy default stream while
    /// another stream captures in global mode (the driver's `CUDA_ERROR_STREAM_CAPTURE_IMPLICIT`).
    pub fn capture_state(&self) -> Result<Option<u64>> {
        self.device().bind()?;
        let mut status = CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
        let mut id: sys::cuuint64_t = 0;
        let null = std::ptr::null_mut();
        // SAFETY: a live stream of the current context; the status and id outputs are valid, the
        // other outputs are optional (NULL).
        unsafe {
            sys::cuStreamGetCaptureInfo_v3(
                self.cuda().cu_stream(),
                &mut status,
                &mut id,
                null,
                null.cast(),
                null.cast(),
                null.cast(),
            )
        }
        .result()
        .map_err(|e| driver_error("cuStreamGetCaptureInfo", e))?;
        match status {
            CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE => Ok(None),
            CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE => Ok(Some(id)),
            _ => Err(RuntimeError::InvalidArgument(format!(
                "stream {:#x}: its CUDA graph capture was invalidated",
                self.handle()
            ))),
        }
    }

    /// Captures what `record` queues on this stream into a graph. The
    /// capture is ended even when `record` fails (its error is returned).
    pub fn capture<F: FnOnce(&Stream) -> Result<()>>(&self, record: F) -> Result<Graph> {
        self.begin_capture()?;
        let recorded = record(self);
        let graph = self.end_capture();
        recorded?;
        graph
    }
}
