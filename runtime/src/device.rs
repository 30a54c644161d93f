//! Opening a GPU (`Device`, a primary CUDA context) and the streams work is
//! queued on (`Stream`).

use std::fmt;
use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaStream};

use crate::driver::{self, driver_error};
use crate::error::{Result, RuntimeError};

/// One CUDA device with its primary context. Cheap to clone.
#[derive(Clone)]
pub struct Device {
    ctx: Arc<CudaContext>,
}

impl Device {
    /// Opens device `ordinal` (0 = first GPU).
    ///
    /// Errors (never panics): `NoDriver` when `libcuda.so` cannot be loaded,
    /// `DriverTooOld`, `NoDevice` when `cuInit` fails or the ordinal is out
    /// of range, `Driver` for any other driver failure.
    pub fn open(ordinal: usize) -> Result<Device> {
        let count = driver::device_count()?;
        if count == 0 {
            return Err(RuntimeError::NoDevice("the driver reports 0 CUDA devices".into()));
        }
        if ordinal >= count {
            return Err(RuntimeError::NoDevice(format!(
                "device ordinal {ordinal} requested but only {count} CUDA device(s) present"
            )));
        }
        let ctx = CudaContext::new(ordinal)
            .map_err(|e| driver_error(format!("creating the context of device {ordinal}"), e))?;
        // The runtime passes raw device pointers to kernels; ordering is the
        // plain CUDA stream order, so cudarc's per-buffer event tracking is
        // not wanted (and would need events for every allocation).
        // SAFETY: called before any buffer or stream of this context exists.
        unsafe { ctx.disable_event_tracking() };
        Ok(Device { ctx })
    }

    /// Number of CUDA devices; an error when there is no driver.
    pub fn count() -> Result<usize> {
        driver::device_count()
    }

    /// The ordinal this device was opened with.
    pub fn ordinal(&self) -> usize {
        self.ctx.ordinal()
    }

    /// Marketing name, e.g. `NVIDIA H100 80GB HBM3`.
    pub fn name(&self) -> Result<String> {
        self.ctx.name().map_err(|e| driver_error("cuDeviceGetName", e))
    }

    /// Compute capability `(major, minor)`, e.g. `(9, 0)` for sm_90.
    pub fn compute_capability(&self) -> Result<(i32, i32)> {
        self.ctx.compute_capability().map_err(|e| driver_error("cuDeviceGetAttribute(compute capability)", e))
    }

    /// Total device memory in bytes.
    pub fn total_memory(&self) -> Result<usize> {
        self.ctx.total_mem().map_err(|e| driver_error("cuDeviceTotalMem", e))
    }

    /// Number of streaming multiprocessors.
    pub fn multiprocessor_count(&self) -> Result<i32> {
        self.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
    }

    /// Largest dynamic shared memory a block may opt in to (bytes).
    pub fn max_shared_memory_per_block_optin(&self) -> Result<i32> {
        self.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
    }

    /// Any `cuDeviceGetAttribute` value.
    pub fn attribute(&self, attr: CUdevice_attribute) -> Result<i32> {
        self.ctx.attribute(attr).map_err(|e| driver_error(format!("cuDeviceGetAttribute({attr:?})"), e))
    }

    /// The CUDA version the driver supports (e.g. 13000); see
    /// [`crate::driver_version`].
    pub fn driver_version(&self) -> Result<i32> {
        driver::driver_version()
    }

    /// The device's default (legacy NULL) stream.
    pub fn default_stream(&self) -> Stream {
        Stream { inner: self.ctx.default_stream(), device: self.clone() }
    }

    /// A new non-blocking stream.
    pub fn new_stream(&self) -> Result<Stream> {
        let inner = self.ctx.new_stream().map_err(|e| driver_error("cuStreamCreate", e))?;
        Ok(Stream { inner, device: self.clone() })
    }

    /// A stream another library owns (torch's current stream, say), given by its raw `CUstream`
    /// handle (0: the legacy default stream, 2: the per-thread default stream). Launches on it are
    /// ordered with that library's work, and captured when it captures a CUDA graph. Dropping the
    /// `Stream` does not destroy it.
    ///
    /// # Safety
    /// `handle` must be a stream of this device's primary context (the one this `Device` and
    /// torch share), and it must stay alive while the returned `Stream` is used.
    pub unsafe fn borrow_stream(&self, handle: u64) -> Stream {
        // SAFETY: the caller's contract is `wrap_borrowed_stream`'s.
        let inner = unsafe { self.ctx.wrap_borrowed_stream(handle as usize as cudarc::driver::sys::CUstream) };
        Stream { inner, device: self.clone() }
    }

    /// Waits for all work on the device; reports asynchronous kernel faults.
    pub fn synchronize(&self) -> Result<()> {
        self.ctx.synchronize().map_err(|e| driver_error("cuCtxSynchronize", e))
    }

    /// Makes this device's context current on the calling thread.
    pub(crate) fn bind(&self) -> Result<()> {
        self.ctx.bind_to_thread().map_err(|e| driver_error("cuCtxSetCurrent", e))
    }

    pub(crate) fn ctx(&self) -> &Arc<CudaContext> {
        &self.ctx
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device").field("ordinal", &self.ordinal()).finish()
    }
}

/// A CUDA stream: copies, launches and timing events are ordered on it.
///
/// Work on one stream runs in order; work on different streams is only
/// ordered by explicit [`Stream::synchronize`] / [`Device::synchronize`].
#[derive(Clone)]
pub struct Stream {
    inner: Arc<CudaStream>,
    device: Device,
}

impl Stream {
    /// The device this stream belongs to.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Blocks until everything queued on the stream has finished; a kernel
    /// fault (illegal address, ...) surfaces here.
    pub fn synchronize(&self) -> Result<()> {
        self.device.bind()?;
        self.inner.synchronize().map_err(|e| driver_error("cuStreamSynchronize", e))
    }

    /// The raw `CUstream` handle (0 for the legacy default stream).
    pub fn handle(&self) -> u64 {
        self.inner.cu_stream() as usize as u64
    }

    /// Orders the work queued on this stream after the work queued so far on the stream `other`
    /// (a raw `CUstream` of the same context, e.g. the stream a `__cuda_array_interface__`
    /// producer wrote its data on): an event recorded on `other`, waited for here. The host does
    /// not block. Nothing to do when `other` is this stream.
    ///
    /// # Safety
    /// `other` must be a live stream of this stream's context.
    pub unsafe fn wait_for_raw(&self, other: u64) -> Result<()> {
        if other == self.handle() {
            return Ok(());
        }
        use cudarc::driver::result::{event, stream};
        use cudarc::driver::sys::{CUevent_flags, CUstream};
        self.device.bind()?;
        let ev = event::create(CUevent_flags::CU_EVENT_DISABLE_TIMING).map_err(|e| driver_error("cuEventCreate", e))?;
        // SAFETY: `ev` was just created; `other` is live by contract, `self` is a live stream.
        let queued = unsafe { event::record(ev, other as usize as CUstream) }
            .map_err(|e| driver_error("cuEventRecord(the producer's stream)", e))
            .and_then(|()| {
                // SAFETY: as above.
                unsafe {
                    stream::wait_event(
                        self.inner.cu_stream(),
                        ev,
                        cudarc::driver::sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                    )
                }
                .map_err(|e| driver_error("cuStreamWaitEvent", e))
            });
        // The wait holds what it needs; the event may go (its resources are freed once done).
        // SAFETY: created above, destroyed once.
        let _ = unsafe { event::destroy(ev) };
        queued
    }

    pub(crate) fn cuda(&self) -> &Arc<CudaStream> {
        &self.inner
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream").field("device", &self.device.ordinal()).finish()
    }
}
