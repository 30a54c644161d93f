//! Device (global memory) buffers and host <-> device copies.
//!
//! Element types are the plain scalars kernels use. There is no `f16` type
//! in std and cudarc only re-exports `half` behind a feature we do not
//! enable, so f16 data lives in `DeviceBuffer<u16>` as IEEE binary16 bit
//! patterns; convert with [`crate::f16`](mod@crate::f16).

use std::fmt;

use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr, ValidAsZeroBits};

use crate::checked::TensorView;
use crate::device::Stream;
use crate::driver::driver_error;
use crate::error::{Result, RuntimeError};
use crate::launch::{KernelArg, TensorArg};
use crate::manifest::DType;

mod sealed {
    pub trait Sealed {}
}

/// Scalar types that can live in a [`DeviceBuffer`].
pub trait DeviceElem: DeviceRepr + ValidAsZeroBits + Copy + Default + sealed::Sealed + 'static {
    /// Short type name used in messages (`f32`, `f16bits`, ...).
    const NAME: &'static str;
    /// The element type views of such a buffer have (`u16` buffers holding
    /// f16/bf16 bits: use [`TensorView::with_dtype`]).
    const DTYPE: DType;
}

macro_rules! elems {
    ($($t:ty => $name:literal, $d:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl DeviceElem for $t { const NAME: &'static str = $name; const DTYPE: DType = DType::$d; }
    )*};
}
elems!(
    f32 => "f32", F32, f64 => "f64", F64, i32 => "i32", I32, u32 => "u32", U32, i64 => "i64", I64,
    u64 => "u64", U64, u16 => "u16/f16bits", U16, i16 => "i16", I16, u8 => "u8", U8, i8 => "i8", I8,
);

/// A device allocation of `len` elements of `T`, freed on drop (stream-ordered
/// on the stream it was allocated on).
pub struct DeviceBuffer<T: DeviceElem> {
    /// Holds `max(len, 1)` elements so that even an empty buffer has a valid,
    /// distinct device address.
    slice: CudaSlice<T>,
    len: usize,
}

impl<T: DeviceElem> DeviceBuffer<T> {
    /// Allocates `len` zeroed elements.
    pub fn zeros(stream: &Stream, len: usize) -> Result<Self> {
        len.checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| RuntimeError::InvalidArgument(format!("{len} x {} overflows usize", T::NAME)))?;
        stream.device().bind()?;
        let slice = stream
            .cuda()
            .alloc_zeros::<T>(len.max(1))
            .map_err(|e| driver_error(format!("allocating {len} x {} on the device", T::NAME), e))?;
        Ok(DeviceBuffer { slice, len })
    }

    /// Allocates a buffer holding a copy of `host`.
    pub fn from_host(stream: &Stream, host: &[T]) -> Result<Self> {
        let mut buf = Self::zeros(stream, host.len())?;
        buf.copy_from_host(stream, host)?;
        Ok(buf)
    }

    /// Copies `host` into the buffer; lengths must match exactly.
    pub fn copy_from_host(&mut self, stream: &Stream, host: &[T]) -> Result<()> {
        if host.len() != self.len {
            return Err(RuntimeError::InvalidArgument(format!(
                "host->device copy of {} elements into a device buffer of {} x {}",
                host.len(),
                self.len,
                T::NAME
            )));
        }
        if host.is_empty() {
            return Ok(());
        }
        stream.device().bind()?;
        stream.cuda().memcpy_htod(host, &mut self.slice).map_err(|e| driver_error("cuMemcpyHtoD", e))
    }

    /// Copies the buffer into `host` (lengths must match) and waits for it.
    pub fn copy_to_host(&self, stream: &Stream, host: &mut [T]) -> Result<()> {
        if host.len() != self.len {
            return Err(RuntimeError::InvalidArgument(format!(
                "device->host copy of a buffer of {} x {} into {} host elements",
                self.len,
                T::NAME,
                host.len()
            )));
        }
        if host.is_empty() {
            return Ok(());
        }
        let view = self
            .slice
            .try_slice(0..self.len)
            .ok_or_else(|| RuntimeError::InvalidArgument("device buffer view out of range".into()))?;
        stream.device().bind()?;
        stream.cuda().memcpy_dtoh(&view, host).map_err(|e| driver_error("cuMemcpyDtoH", e))?;
        stream.synchronize()
    }

    /// Queues a device-to-device copy of `src` into this buffer on `stream`
    /// (`cuMemcpyDtoDAsync`; lengths must match). Asynchronous.
    pub fn copy_from_device(&mut self, stream: &Stream, src: &DeviceBuffer<T>) -> Result<()> {
        if src.len != self.len {
            return Err(RuntimeError::InvalidArgument(format!(
                "device->device copy of {} elements into a buffer of {} x {}",
                src.len,
                self.len,
                T::NAME
            )));
        }
        if self.len == 0 {
            return Ok(());
        }
        stream.device().bind()?;
        // SAFETY: both pointers are live allocations of `len` elements of T
        // (held by `self` and `src` for the call; the copy is stream-ordered
        // before any later free on this stream).
        unsafe {
            cudarc::driver::result::memcpy_dtod_async(
                self.ptr(),
                src.ptr(),
                self.size_bytes(),
                stream.cuda().cu_stream(),
            )
        }
        .map_err(|e| driver_error("cuMemcpyDtoDAsync", e))
    }

    /// Copies the buffer into a new `Vec` (waits for the copy).
    pub fn to_host(&self, stream: &Stream) -> Result<Vec<T>> {
        let mut v = vec![T::default(); self.len];
        self.copy_to_host(stream, &mut v)?;
        Ok(v)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for a zero-element buffer.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes (`len * size_of::<T>()`).
    pub fn size_bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// The device address (what a kernel's `.param .u64 .ptr .global` gets).
    pub fn ptr(&self) -> u64 {
        let (ptr, _sync) = self.slice.device_ptr(self.slice.stream());
        ptr
    }

    /// `KernelArg::Ptr(self.ptr())`.
    pub fn arg(&self) -> KernelArg {
        KernelArg::Ptr(self.ptr())
    }

    /// A typed view of this buffer for checked launches: shape and stride
    /// leaves (flattened mode order, in elements). The view records the
    /// buffer's size, so a checked launch also proves the layout stays inside it.
    pub fn view(&self, shape: &[i64], stride: &[i64]) -> TensorView {
        TensorView::new(self.ptr(), T::DTYPE, shape, stride).with_bytes(self.size_bytes() as u64)
    }

    /// The whole buffer as a contiguous 1-D view (`len:1`).
    pub fn view_1d(&self) -> TensorView {
        self.view(&[self.len as i64], &[1])
    }

    /// A tensor argument over this buffer (see the crate docs for the ABI).
    pub fn tensor_arg(&self, dyn_shape: &[i32], dyn_stride: &[i32]) -> TensorArg {
        TensorArg::new(self.ptr(), dyn_shape, dyn_stride)
    }
}

impl<T: DeviceElem> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("elem", &T::NAME)
            .field("len", &self.len)
            .field("ptr", &format_args!("{:#x}", self.ptr()))
            .finish()
    }
}
