//! DLPack tensors as checked-launch views.
//!
//! DLPack (`dlpack.h`, major version 1) is how array libraries hand each other device memory:
//! torch, CuPy, JAX and others describe a tensor as a [`DLTensor`] (pointer, device, dtype, shape,
//! strides in elements), reached through a `DLManagedTensor` or a `DLManagedTensorVersioned` (the
//! `__dlpack__` protocol), or filled in directly by the producer's [`DLPackExchangeAPI`] (the
//! function table some frameworks, torch 2.10 and later among them, attach to their tensor type
//! as `__dlpack_c_exchange_api__`).
//!
//! This module holds those C structs, laid out as the header lays them out, and
//! [`view_of_dltensor`]: a `DLTensor` read into a [`TensorView`] that the checked launches and host
//! calls then check like any other. It refuses, with a message, what a cutec kernel cannot take:
//! memory a CUDA kernel cannot address (host memory, other vendors' devices), a CUDA device other
//! than the module's, an element type with no cutec equivalent, vector lanes, more dimensions than
//! a view holds. It only reads the structs; getting them from the producer (and releasing them)
//! is the caller's part (the Python extension, `python/`).

use std::ffi::{c_int, c_void};

use crate::checked::TensorView;
use crate::manifest::DType;

/// DLPack major version these structs follow.
pub const DLPACK_MAJOR_VERSION: u32 = 1;

/// `DLDeviceType`: the devices a view may live on, and the others named in messages.
pub mod device_type {
    /// Host memory.
    pub const CPU: i32 = 1;
    /// CUDA device memory.
    pub const CUDA: i32 = 2;
    /// Pinned host memory (`cudaMallocHost`).
    pub const CUDA_HOST: i32 = 3;
    /// ROCm device memory.
    pub const ROCM: i32 = 10;
    /// CUDA managed (unified) memory.
    pub const CUDA_MANAGED: i32 = 13;
}

/// `DLDevice`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DLDevice {
    /// A `DLDeviceType` ([`device_type`]).
    pub device_type: i32,
    /// The device ordinal (0 for host and managed memory).
    pub device_id: i32,
}

/// `DLDataType`: type code, bits per element, vector lanes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DLDataType {
    /// `DLDataTypeCode`: 0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool, 7..14 float8 kinds.
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes (1 for scalars).
    pub lanes: u16,
}

/// `DLTensor`: a strided view of device memory; `shape` and `strides` point to `ndim` values each
/// (`strides` may be NULL before DLPack 1.2: compact row-major).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLTensor {
    /// Start of the allocation (the first element is `byte_offset` bytes further).
    pub data: *mut c_void,
    /// Where the memory lives.
    pub device: DLDevice,
    /// Number of dimensions.
    pub ndim: i32,
    /// Element type.
    pub dtype: DLDataType,
    /// `ndim` extents.
    pub shape: *mut i64,
    /// `ndim` strides in elements, or NULL for compact row-major.
    pub strides: *mut i64,
    /// Bytes from `data` to the first element.
    pub byte_offset: u64,
}

impl DLTensor {
    /// An empty tensor for a producer to fill in (`dltensor_from_py_object_no_sync`).
    pub fn zeroed() -> DLTensor {
        DLTensor {
            data: std::ptr::null_mut(),
            device: DLDevice { device_type: 0, device_id: 0 },
            ndim: 0,
            dtype: DLDataType { code: 0, bits: 0, lanes: 0 },
            shape: std::ptr::null_mut(),
            strides: std::ptr::null_mut(),
            byte_offset: 0,
        }
    }
}

/// `DLManagedTensor` (the unversioned `__dlpack__` capsule, named `dltensor`).
#[repr(C)]
pub struct DLManagedTensor {
    /// The tensor.
    pub dl_tensor: DLTensor,
    /// The producer's context.
    pub manager_ctx: *mut c_void,
    /// Releases the tensor (called by the capsule's destructor when the consumer does not take it).
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// `DLPackVersion`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DLPackVersion {
    /// Major: the struct layout.
    pub major: u32,
    /// Minor: added enumeration values.
    pub minor: u32,
}

/// `DLManagedTensorVersioned` (the `dltensor_versioned` capsule).
#[repr(C)]
pub struct DLManagedTensorVersioned {
    /// The producer's DLPack version; fields after `deleter` may only be read when the major
    /// version is [`DLPACK_MAJOR_VERSION`].
    pub version: DLPackVersion,
    /// The producer's context.
    pub manager_ctx: *mut c_void,
    /// Releases the tensor.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    /// `DLPACK_FLAG_BITMASK_*`.
    pub flags: u64,
    /// The tensor.
    pub dl_tensor: DLTensor,
}

/// `DLPackExchangeAPIHeader`.
#[repr(C)]
pub struct DLPackExchangeAPIHeader {
    /// The table's DLPack version; only major version 1 is read.
    pub version: DLPackVersion,
    /// An older table, for consumers of an older major version.
    pub prev_api: *mut DLPackExchangeAPIHeader,
}

/// `DLPackExchangeAPI`: the function table a framework attaches to its tensor type as the
/// capsule `__dlpack_c_exchange_api__` (name `dlpack_exchange_api`). cutec uses two entries:
/// `dltensor_from_py_object_no_sync` (fills a `DLTensor` for a Python tensor object, no
/// allocation, valid until control returns to Python) and `current_work_stream` (the framework's
/// current stream for a device, e.g. torch's current CUDA stream).
#[repr(C)]
pub struct DLPackExchangeAPI {
    /// Version and chain.
    pub header: DLPackExchangeAPIHeader,
    /// Allocates a tensor in the producer (unused here).
    pub managed_tensor_allocator: Option<unsafe extern "C" fn()>,
    /// Exports an owning `DLManagedTensorVersioned` (unused here).
    pub managed_tensor_from_py_object_no_sync: Option<unsafe extern "C" fn()>,
    /// Imports a tensor into the producer (unused here).
    pub managed_tensor_to_py_object_no_sync: Option<unsafe extern "C" fn()>,
    /// `int (*)(PyObject* obj, DLTensor* out)`: 0, or -1 with a Python exception set. May be NULL.
    pub dltensor_from_py_object_no_sync: Option<unsafe extern "C" fn(*mut c_void, *mut DLTensor) -> c_int>,
    /// `int (*)(DLDeviceType, int32_t device_id, void** out_stream)`: 0, or -1 with a Python
    /// exception set.
    pub current_work_stream: Option<unsafe extern "C" fn(i32, i32, *mut *mut c_void) -> c_int>,
}

/// The cutec element type of a DLPack data type, or a message saying why there is none.
pub fn dtype_of(t: DLDataType) -> Result<DType, String> {
    if t.lanes != 1 {
        return Err(format!(
            "a vector type ({} lanes of code {} with {} bits) has no cutec element type",
            t.lanes, t.code, t.bits
        ));
    }
    let d = match (t.code, t.bits) {
        (0, 8) => DType::I8,
        (0, 16) => DType::I16,
        (0, 32) => DType::I32,
        (0, 64) => DType::I64,
        (1, 8) => DType::U8,
        (1, 16) => DType::U16,
        (1, 32) => DType::U32,
        (1, 64) => DType::U64,
        (2, 16) => DType::F16,
        (2, 32) => DType::F32,
        (2, 64) => DType::F64,
        (4, 16) => DType::BF16,
        (6, 8) => DType::Bool,
        (10, 8) => DType::F8E4M3,
        (12, 8) => DType::F8E5M2,
        (code, bits) => {
            let kind = match code {
                0 => "int",
                1 => "uint",
                2 => "float",
                3 => "opaque handle",
                4 => "bfloat",
                5 => "complex",
                6 => "bool",
                7..=9 | 11 | 13 | 14 => "float8 (a variant cutec does not have: it has e4m3fn and e5m2)",
                15..=17 => "sub-byte float",
                _ => "unknown",
            };
            return Err(format!("DLPack type code {code} ({kind}) with {bits} bits has no cutec element type"));
        }
    };
    Ok(d)
}

/// A human name of a DLPack device type (for messages).
pub fn device_name(device_type: i32) -> String {
    match device_type {
        device_type::CPU => "cpu".into(),
        device_type::CUDA => "cuda".into(),
        device_type::CUDA_HOST => "pinned host memory (cuda_host)".into(),
        4 => "opencl".into(),
        7 => "vulkan".into(),
        8 => "metal".into(),
        device_type::ROCM => "rocm".into(),
        11 => "rocm_host".into(),
        device_type::CUDA_MANAGED => "cuda_managed".into(),
        14 => "oneapi".into(),
        other => format!("device type {other}"),
    }
}

/// Reads `t` as a view for a checked launch on CUDA device `ordinal` (`None`: any CUDA device, for
/// offline checks). The view's pointer is `data + byte_offset`; its memory size is unknown to
/// DLPack, so `bytes` is `None` (the producer guarantees its layout lies inside its memory; the
/// views a host function derives are still checked against the tensor's own extent).
///
/// # Safety
/// `t.shape` (and `t.strides` when non-NULL) must point to `t.ndim` readable `i64`s, as DLPack
/// requires of a producer.
pub unsafe fn view_of_dltensor(t: &DLTensor, ordinal: Option<usize>) -> Result<TensorView, String> {
    let mut v = TensorView::new(0, DType::U8, &[], &[]);
    // SAFETY: the caller's contract.
    unsafe { read_dltensor(t, ordinal, &mut v) }?;
    Ok(v)
}

/// [`view_of_dltensor`] into an existing view, reusing its shape and stride buffers (a call from
/// Python converts every tensor argument this way, without allocating once warm).
///
/// # Safety
/// As [`view_of_dltensor`].
pub unsafe fn read_dltensor(t: &DLTensor, ordinal: Option<usize>, out: &mut TensorView) -> Result<(), String> {
    match t.device.device_type {
        device_type::CUDA => {
            if let Some(o) = ordinal {
                if usize::try_from(t.device.device_id).ok() != Some(o) {
                    return Err(format!(
                        "the tensor is on cuda:{} but the module is loaded on cuda:{o}",
                        t.device.device_id
                    ));
                }
            }
        }
        // Managed memory is addressable from every device.
        device_type::CUDA_MANAGED => {}
        other => {
            return Err(format!(
            "the tensor is in {} memory; cutec kernels take CUDA device memory (move it with .cuda() or .to(\"cuda\"))",
            device_name(other)
        ))
        }
    }
    let dtype = dtype_of(t.dtype)?;
    let ndim = usize::try_from(t.ndim).map_err(|_| format!("negative ndim {}", t.ndim))?;
    if ndim > crate::capi::CUTE_MAX_LEAVES {
        return Err(format!("{ndim} dimensions; a view holds at most {}", crate::capi::CUTE_MAX_LEAVES));
    }
    if ndim > 0 && t.shape.is_null() {
        return Err(format!("the producer gave no shape for {ndim} dimensions"));
    }
    let ptr = (t.data as u64).checked_add(t.byte_offset).ok_or_else(|| "data + byte_offset overflows".to_string())?;
    out.ptr = ptr;
    out.dtype = dtype;
    out.bytes = None;
    out.shape.clear();
    out.stride.clear();
    if ndim == 0 {
        return Ok(());
    }
    // SAFETY: the caller guarantees `ndim` readable values.
    out.shape.extend_from_slice(unsafe { std::slice::from_raw_parts(t.shape, ndim) });
    if t.strides.is_null() {
        // Before DLPack 1.2 NULL strides meant compact row-major.
        out.stride.resize(ndim, 0);
        let mut acc = 1i64;
        for i in (0..ndim).rev() {
            out.stride[i] = acc;
            acc = acc.saturating_mul(out.shape[i].max(1));
        }
    } else {
        // SAFETY: as above.
        out.stride.extend_from_slice(unsafe { std::slice::from_raw_parts(t.strides, ndim) });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(device: DLDevice, dtype: DLDataType, shape: &mut [i64], strides: Option<&mut [i64]>) -> DLTensor {
        DLTensor {
            data: 0x7f00_0000_0000usize as *mut c_void,
            device,
            ndim: shape.len() as i32,
            dtype,
            shape: shape.as_mut_ptr(),
            strides: strides.map_or(std::ptr::null_mut(), |s| s.as_mut_ptr()),
            byte_offset: 64,
        }
    }

    const CUDA0: DLDevice = DLDevice { device_type: device_type::CUDA, device_id: 0 };
    const F16: DLDataType = DLDataType { code: 2, bits: 16, lanes: 1 };

    #[test]
    fn reads_pointer_shape_strides() {
        let (mut shape, mut strides) = ([4i64, 8], [1i64, 4]);
        let t = tensor(CUDA0, F16, &mut shape, Some(&mut strides));
        let v = unsafe { view_of_dltensor(&t, Some(0)) }.unwrap();
        assert_eq!(v, TensorView::new(0x7f00_0000_0040, DType::F16, &[4, 8], &[1, 4]));
        // NULL strides: compact row-major.
        let mut shape = [2i64, 3, 5];
        let t = tensor(CUDA0, DLDataType { code: 4, bits: 16, lanes: 1 }, &mut shape, None);
        let v = unsafe { view_of_dltensor(&t, None) }.unwrap();
        assert_eq!((v.dtype, v.stride), (DType::BF16, vec![15, 5, 1]));
        // A 0-d tensor.
        let t = DLTensor { ndim: 0, shape: std::ptr::null_mut(), ..tensor(CUDA0, F16, &mut [], None) };
        assert_eq!(unsafe { view_of_dltensor(&t, Some(0)) }.unwrap().shape, Vec::<i64>::new());
    }

    #[test]
    fn refusals_say_why() {
        let mut shape = [4i64];
        let cpu = tensor(DLDevice { device_type: device_type::CPU, device_id: 0 }, F16, &mut shape, None);
        assert_eq!(
            unsafe { view_of_dltensor(&cpu, Some(0)) }.unwrap_err(),
            "the tensor is in cpu memory; cutec kernels take CUDA device memory (move it with .cuda() or .to(\"cuda\"))"
        );
        let mut shape = [4i64];
        let dev1 = tensor(DLDevice { device_type: device_type::CUDA, device_id: 1 }, F16, &mut shape, None);
        assert_eq!(
            unsafe { view_of_dltensor(&dev1, Some(0)) }.unwrap_err(),
            "the tensor is on cuda:1 but the module is loaded on cuda:0"
        );
        assert!(unsafe { view_of_dltensor(&dev1, None) }.is_ok());
        let mut shape = [4i64];
        let managed = tensor(DLDevice { device_type: device_type::CUDA_MANAGED, device_id: 0 }, F16, &mut shape, None);
        assert!(unsafe { view_of_dltensor(&managed, Some(3)) }.is_ok());
        let mut shape = [4i64];
        let c64 = tensor(CUDA0, DLDataType { code: 5, bits: 64, lanes: 1 }, &mut shape, None);
        assert_eq!(
            unsafe { view_of_dltensor(&c64, Some(0)) }.unwrap_err(),
            "DLPack type code 5 (complex) with 64 bits has no cutec element type"
        );
        let mut shape = [4i64];
        let vec4 = tensor(CUDA0, DLDataType { code: 2, bits: 32, lanes: 4 }, &mut shape, None);
        assert!(unsafe { view_of_dltensor(&vec4, Some(0)) }.unwrap_err().contains("4 lanes"));
        let mut shape = [1i64; 17];
        let deep = tensor(CUDA0, F16, &mut shape, None);
        assert_eq!(unsafe { view_of_dltensor(&deep, Some(0)) }.unwrap_err(), "17 dimensions; a view holds at most 16");
    }

    #[test]
    fn every_cutec_type_but_tf32_has_a_dlpack_type_of_its_size() {
        let codes = [
            (0, 8),
            (0, 16),
            (0, 32),
            (0, 64),
            (1, 8),
            (1, 16),
            (1, 32),
            (1, 64),
            (2, 16),
            (2, 32),
            (2, 64),
            (4, 16),
            (6, 8),
            (10, 8),
            (12, 8),
        ];
        let mut seen = Vec::new();
        for (code, bits) in codes {
            let d = dtype_of(DLDataType { code, bits, lanes: 1 }).unwrap();
            assert_eq!(d.size_bytes() * 8, u32::from(bits), "{d}");
            seen.push(d);
        }
        let missing: Vec<DType> = DType::ALL.into_iter().filter(|d| !seen.contains(d)).collect();
        // tf32 is stored as f32 and has no DLPack type of its own.
        assert_eq!(missing, vec![DType::TF32]);
    }

    #[test]
    fn struct_layouts_match_the_header() {
        // x86_64 / aarch64 (LP64): the offsets dlpack.h implies.
        assert_eq!(std::mem::size_of::<DLTensor>(), 48);
        assert_eq!(std::mem::offset_of!(DLTensor, shape), 24);
        assert_eq!(std::mem::offset_of!(DLTensor, byte_offset), 40);
        assert_eq!(std::mem::offset_of!(DLManagedTensor, deleter), 56);
        assert_eq!(std::mem::offset_of!(DLManagedTensorVersioned, dl_tensor), 32);
        assert_eq!(std::mem::offset_of!(DLPackExchangeAPI, dltensor_from_py_object_no_sync), 40);
        assert_eq!(std::mem::offset_of!(DLPackExchangeAPI, current_work_stream), 48);
    }
}
