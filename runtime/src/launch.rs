//! Launch-side data: kernel arguments (`KernelArg`, the `TensorArg`
//! expansion of the cutec ABI, `ArgList`), their packing into the
//! `void**` array `cuLaunchKernel` takes, and `LaunchConfig` validation.
//! Everything here is pure (no driver calls) and unit-tested.

use std::ffi::c_void;
use std::fmt;

use crate::error::{Result, RuntimeError};

/// One kernel parameter, passed by value.
#[derive(Clone, Copy, PartialEq)]
pub enum KernelArg {
    /// A device address (`.param .u64 .ptr .global`).
    Ptr(u64),
    /// `.param .s32` / `.b32`.
    I32(i32),
    /// `.param .u32`.
    U32(u32),
    /// `.param .s64`.
    I64(i64),
    /// `.param .u64` (not a pointer).
    U64(u64),
    /// `.param .f32`.
    F32(f32),
    /// `.param .f64`.
    F64(f64),
    /// `.param .b16` holding an IEEE binary16 value (see [`crate::f16`](mod@crate::f16)),
    /// or any other 16-bit value (bf16 bits, i16, u16).
    F16Bits(u16),
    /// `.param .b8`: an 8-bit value (i8, u8, bool, f8 bits).
    U8(u8),
}

impl KernelArg {
    /// The value as a `$k` of a launch condition: every argument but a pointer is one, as an i64
    /// (floats by their bits, which no condition uses).
    pub fn dynamic_value(&self) -> Option<i64> {
        match *self {
            KernelArg::Ptr(_) => None,
            KernelArg::I32(v) => Some(i64::from(v)),
            KernelArg::U32(v) => Some(i64::from(v)),
            KernelArg::I64(v) => Some(v),
            KernelArg::U64(v) => Some(v as i64),
            KernelArg::F16Bits(v) => Some(i64::from(v)),
            KernelArg::U8(v) => Some(i64::from(v)),
            KernelArg::F32(v) => Some(i64::from(v.to_bits())),
            KernelArg::F64(v) => Some(v.to_bits() as i64),
        }
    }

    /// Size in bytes of the parameter.
    pub fn size(&self) -> usize {
        match self {
            KernelArg::Ptr(_) | KernelArg::I64(_) | KernelArg::U64(_) | KernelArg::F64(_) => 8,
            KernelArg::I32(_) | KernelArg::U32(_) | KernelArg::F32(_) => 4,
            KernelArg::F16Bits(_) => 2,
            KernelArg::U8(_) => 1,
        }
    }

    /// Short kind name used in messages.
    pub fn kind(&self) -> &'static str {
        match self {
            KernelArg::Ptr(_) => "ptr",
            KernelArg::I32(_) => "i32",
            KernelArg::U32(_) => "u32",
            KernelArg::I64(_) => "i64",
            KernelArg::U64(_) => "u64",
            KernelArg::F32(_) => "f32",
            KernelArg::F64(_) => "f64",
            KernelArg::F16Bits(_) => "f16",
            KernelArg::U8(_) => "u8",
        }
    }

    /// The 8-byte slot `cuLaunchKernel` reads the value from (native order).
    pub(crate) fn slot_value(&self) -> u64 {
        self.slot().to_le()
    }

    /// The value as little-endian bytes in an 8-byte slot (only the first
    /// `size()` bytes are meaningful).
    fn slot(&self) -> u64 {
        match *self {
            KernelArg::Ptr(v) | KernelArg::U64(v) => v,
            KernelArg::I64(v) => v as u64,
            KernelArg::I32(v) => u64::from(v as u32),
            KernelArg::U32(v) => u64::from(v),
            KernelArg::F32(v) => u64::from(v.to_bits()),
            KernelArg::F64(v) => v.to_bits(),
            KernelArg::F16Bits(v) => u64::from(v),
            KernelArg::U8(v) => u64::from(v),
        }
    }
}

impl fmt::Debug for KernelArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelArg::Ptr(v) => write!(f, "ptr({v:#x})"),
            KernelArg::I32(v) => write!(f, "i32({v})"),
            KernelArg::U32(v) => write!(f, "u32({v})"),
            KernelArg::I64(v) => write!(f, "i64({v})"),
            KernelArg::U64(v) => write!(f, "u64({v})"),
            KernelArg::F32(v) => write!(f, "f32({v})"),
            KernelArg::F64(v) => write!(f, "f64({v})"),
            KernelArg::F16Bits(v) => write!(f, "f16({v:#06x})"),
            KernelArg::U8(v) => write!(f, "u8({v})"),
        }
    }
}

/// A `.cute` tensor parameter: expands (see the crate docs) into its base
/// pointer, then its dynamic shape entries, then its dynamic stride entries,
/// all in flattened mode order. Static entries are compiled into the kernel
/// and are not passed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorArg {
    /// Device base address.
    pub ptr: u64,
    /// The `?` entries of the shape, flattened mode order.
    pub dyn_shape: Vec<i32>,
    /// The `?` entries of the stride, flattened mode order.
    pub dyn_stride: Vec<i32>,
}

impl TensorArg {
    /// A tensor argument with the given dynamic shape and stride entries.
    pub fn new(ptr: u64, dyn_shape: &[i32], dyn_stride: &[i32]) -> TensorArg {
        TensorArg { ptr, dyn_shape: dyn_shape.to_vec(), dyn_stride: dyn_stride.to_vec() }
    }

    /// Appends this tensor's kernel parameters to `out`.
    pub fn push_args(&self, out: &mut Vec<KernelArg>) {
        out.push(KernelArg::Ptr(self.ptr));
        out.extend(self.dyn_shape.iter().map(|&s| KernelArg::I32(s)));
        out.extend(self.dyn_stride.iter().map(|&s| KernelArg::I32(s)));
    }

    /// This tensor's kernel parameters.
    pub fn to_args(&self) -> Vec<KernelArg> {
        let mut v = Vec::with_capacity(1 + self.dyn_shape.len() + self.dyn_stride.len());
        self.push_args(&mut v);
        v
    }
}

/// Builds the flat argument list of a kernel, parameter by parameter:
/// `ArgList::new().tensor(&a).tensor(&b).i32(n)`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ArgList {
    args: Vec<KernelArg>,
}

impl ArgList {
    /// An empty list.
    pub fn new() -> ArgList {
        ArgList::default()
    }
    /// Appends a tensor parameter (pointer, dynamic shape, dynamic stride).
    pub fn tensor(mut self, t: &TensorArg) -> ArgList {
        t.push_args(&mut self.args);
        self
    }
    /// Appends any scalar/pointer argument.
    pub fn arg(mut self, a: KernelArg) -> ArgList {
        self.args.push(a);
        self
    }
    /// Appends a raw device pointer.
    pub fn ptr(self, p: u64) -> ArgList {
        self.arg(KernelArg::Ptr(p))
    }
    /// Appends an i32 scalar.
    pub fn i32(self, v: i32) -> ArgList {
        self.arg(KernelArg::I32(v))
    }
    /// Appends an i64 scalar.
    pub fn i64(self, v: i64) -> ArgList {
        self.arg(KernelArg::I64(v))
    }
    /// Appends an f32 scalar.
    pub fn f32(self, v: f32) -> ArgList {
        self.arg(KernelArg::F32(v))
    }
    /// The flat argument list.
    pub fn as_slice(&self) -> &[KernelArg] {
        &self.args
    }
    /// The flat argument list, owned.
    pub fn into_vec(self) -> Vec<KernelArg> {
        self.args
    }
}

/// Argument values laid out for `cuLaunchKernel`: one 8-byte aligned slot per
/// argument and an array of pointers to the slots. The driver copies the
/// values during the launch call, so this only has to outlive that call.
pub(crate) struct PackedArgs {
    slots: Vec<u64>,
}

impl PackedArgs {
    pub(crate) fn new(args: &[KernelArg]) -> PackedArgs {
        // Values are stored little-endian in the low bytes of each slot; on a
        // little-endian host (x86_64, aarch64: the CUDA hosts) the slot's
        // address is then the address of the value.
        PackedArgs { slots: args.iter().map(|a| a.slot().to_le()).collect() }
    }

    /// The `void*[]` to hand to `cuLaunchKernel`. Valid while `self` is
    /// neither moved nor dropped.
    pub(crate) fn pointers(&mut self) -> Vec<*mut c_void> {
        self.slots.iter_mut().map(|s| s as *mut u64 as *mut c_void).collect()
    }

    #[cfg(test)]
    fn slot_bytes(&self, i: usize) -> [u8; 8] {
        self.slots[i].to_ne_bytes()
    }
}

/// Hardware limits every CUDA GPU since sm_30 shares.
pub const MAX_THREADS_PER_BLOCK: u64 = 1024;
const MAX_BLOCK: (u32, u32, u32) = (1024, 1024, 64);
const MAX_GRID: (u32, u32, u32) = (i32::MAX as u32, 65535, 65535);
/// Dynamic shared memory a kernel may use without opting in.
pub const DEFAULT_MAX_DYNAMIC_SMEM: u32 = 48 * 1024;

/// Grid and block shape of a launch, plus dynamic shared memory in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks per grid (x, y, z).
    pub grid: (u32, u32, u32),
    /// Threads per block (x, y, z).
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block in bytes.
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// A 1-D launch of `block` threads per block covering `n` threads:
    /// grid = ceil(n / block).
    pub fn linear(n: u64, block: u32) -> Result<LaunchConfig> {
        if block == 0 {
            return Err(RuntimeError::InvalidLaunch("block size 0".into()));
        }
        let blocks = n.div_ceil(u64::from(block)).max(1);
        let grid = u32::try_from(blocks)
            .map_err(|_| RuntimeError::InvalidLaunch(format!("{n} threads need {blocks} blocks of {block}")))?;
        let cfg = LaunchConfig { grid: (grid, 1, 1), block: (block, 1, 1), shared_mem_bytes: 0 };
        cfg.validate()?;
        Ok(cfg)
    }

    /// Threads per block.
    pub fn threads_per_block(&self) -> u64 {
        u64::from(self.block.0) * u64::from(self.block.1) * u64::from(self.block.2)
    }

    /// Checks the device-independent limits: every dimension non-zero, block
    /// dims <= (1024, 1024, 64) with at most 1024 threads, grid dims <=
    /// (2^31-1, 65535, 65535). Device/kernel limits (registers, shared memory)
    /// are checked again at launch.
    pub fn validate(&self) -> Result<()> {
        let (bx, by, bz) = self.block;
        let (gx, gy, gz) = self.grid;
        if bx == 0 || by == 0 || bz == 0 {
            return Err(RuntimeError::InvalidLaunch(format!(
                "block dimensions must be non-zero, got {:?}",
                self.block
            )));
        }
        if gx == 0 || gy == 0 || gz == 0 {
            return Err(RuntimeError::InvalidLaunch(format!("grid dimensions must be non-zero, got {:?}", self.grid)));
        }
        if bx > MAX_BLOCK.0 || by > MAX_BLOCK.1 || bz > MAX_BLOCK.2 {
            return Err(RuntimeError::InvalidLaunch(format!(
                "block {:?} exceeds the per-dimension limit {:?}",
                self.block, MAX_BLOCK
            )));
        }
        let threads = self.threads_per_block();
        if threads > MAX_THREADS_PER_BLOCK {
            return Err(RuntimeError::InvalidLaunch(format!(
                "block {:?} has {threads} threads; the limit is {MAX_THREADS_PER_BLOCK}",
                self.block
            )));
        }
        if gx > MAX_GRID.0 || gy > MAX_GRID.1 || gz > MAX_GRID.2 {
            return Err(RuntimeError::InvalidLaunch(format!("grid {:?} exceeds the limit {:?}", self.grid, MAX_GRID)));
        }
        Ok(())
    }
}

/// Checks `args` against the parameter byte sizes the driver reports for a
/// kernel (`cuFuncGetParamInfo`).
pub(crate) fn check_params(kernel: &str, param_sizes: &[usize], args: &[KernelArg]) -> Result<()> {
    let kinds = || args.iter().map(|a| a.kind()).collect::<Vec<_>>().join(", ");
    if param_sizes.len() != args.len() {
        return Err(RuntimeError::ArgumentMismatch(format!(
            "kernel `{kernel}` takes {} parameters (byte sizes {:?}) but {} arguments were given: [{}]",
            param_sizes.len(),
            param_sizes,
            args.len(),
            kinds()
        )));
    }
    for (i, (size, arg)) in param_sizes.iter().zip(args).enumerate() {
        if *size != arg.size() {
            return Err(RuntimeError::ArgumentMismatch(format!(
                "kernel `{kernel}` parameter {i} is {size} bytes but argument {i} is {arg:?} \
                 ({} bytes); parameter sizes {:?}, arguments [{}]",
                arg.size(),
                param_sizes,
                kinds()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_arg_expands_ptr_then_shape_then_stride() {
        let t = TensorArg::new(0xdead_0000, &[128, 64], &[64]);
        assert_eq!(
            t.to_args(),
            vec![KernelArg::Ptr(0xdead_0000), KernelArg::I32(128), KernelArg::I32(64), KernelArg::I32(64)]
        );
        // Fully static layout: only the pointer.
        assert_eq!(TensorArg::new(7, &[], &[]).to_args(), vec![KernelArg::Ptr(7)]);
    }

    #[test]
    fn vector_add_abi_order() {
        // kernel vector_add(a, b, c: tensor<f32, gmem, (?):(1)>)
        let n = 1000;
        let args = ArgList::new()
            .tensor(&TensorArg::new(0x100, &[n], &[]))
            .tensor(&TensorArg::new(0x200, &[n], &[]))
            .tensor(&TensorArg::new(0x300, &[n], &[]))
            .into_vec();
        assert_eq!(
            args,
            vec![
                KernelArg::Ptr(0x100),
                KernelArg::I32(n),
                KernelArg::Ptr(0x200),
                KernelArg::I32(n),
                KernelArg::Ptr(0x300),
                KernelArg::I32(n),
            ]
        );
        let sizes: Vec<usize> = args.iter().map(KernelArg::size).collect();
        assert_eq!(sizes, vec![8, 4, 8, 4, 8, 4]);
        assert!(check_params("vector_add", &sizes, &args).is_ok());
    }

    #[test]
    fn mixed_tensors_and_scalars() {
        let args = ArgList::new()
            .tensor(&TensorArg::new(1, &[3, 4], &[5, 6]))
            .f32(2.5)
            .tensor(&TensorArg::new(2, &[], &[9]))
            .i64(-1)
            .into_vec();
        assert_eq!(
            args,
            vec![
                KernelArg::Ptr(1),
                KernelArg::I32(3),
                KernelArg::I32(4),
                KernelArg::I32(5),
                KernelArg::I32(6),
                KernelArg::F32(2.5),
                KernelArg::Ptr(2),
                KernelArg::I32(9),
                KernelArg::I64(-1),
            ]
        );
    }

    #[test]
    fn packing_bytes() {
        let args = [
            KernelArg::Ptr(0x0102_0304_0506_0708),
            KernelArg::I32(-2),
            KernelArg::F32(1.0),
            KernelArg::F16Bits(0x3c00),
            KernelArg::I64(-1),
        ];
        let mut p = PackedArgs::new(&args);
        assert_eq!(p.pointers().len(), 5);
        assert_eq!(p.slot_bytes(0), 0x0102_0304_0506_0708u64.to_le_bytes());
        assert_eq!(&p.slot_bytes(1)[..4], &(-2i32).to_le_bytes());
        assert_eq!(&p.slot_bytes(2)[..4], &1.0f32.to_le_bytes());
        assert_eq!(&p.slot_bytes(3)[..2], &0x3c00u16.to_le_bytes());
        assert_eq!(p.slot_bytes(4), [0xff; 8]);
        // Each pointer points at its own 8-byte aligned slot.
        let ptrs = p.pointers();
        for w in ptrs.windows(2) {
            assert_eq!(w[1] as usize - w[0] as usize, 8);
        }
        assert_eq!(ptrs[0] as usize % 8, 0);
    }

    #[test]
    fn param_mismatch_messages() {
        let args = [KernelArg::Ptr(1), KernelArg::Ptr(2)];
        let e = check_params("k", &[8, 4, 8], &args).unwrap_err();
        assert!(e.to_string().contains("takes 3 parameters"), "{e}");
        assert!(e.to_string().contains("[ptr, ptr]"), "{e}");
        let e = check_params("k", &[8, 4], &args).unwrap_err();
        assert!(e.to_string().contains("parameter 1 is 4 bytes"), "{e}");
    }

    #[test]
    fn launch_config_validation() {
        let ok = LaunchConfig { grid: (65536, 1, 1), block: (256, 1, 1), shared_mem_bytes: 0 };
        assert!(ok.validate().is_ok());
        let ok = LaunchConfig { grid: (1, 65535, 65535), block: (32, 32, 1), shared_mem_bytes: 0 };
        assert!(ok.validate().is_ok());

        let bad = [
            LaunchConfig { grid: (0, 1, 1), block: (256, 1, 1), shared_mem_bytes: 0 },
            LaunchConfig { grid: (1, 1, 1), block: (0, 1, 1), shared_mem_bytes: 0 },
            LaunchConfig { grid: (1, 1, 1), block: (1025, 1, 1), shared_mem_bytes: 0 },
            LaunchConfig { grid: (1, 1, 1), block: (64, 32, 1), shared_mem_bytes: 0 },
            LaunchConfig { grid: (1, 1, 1), block: (1, 1, 65), shared_mem_bytes: 0 },
            LaunchConfig { grid: (1, 65536, 1), block: (1, 1, 1), shared_mem_bytes: 0 },
            LaunchConfig { grid: (1u32 << 31, 1, 1), block: (1, 1, 1), shared_mem_bytes: 0 },
        ];
        for cfg in bad {
            let e = cfg.validate().unwrap_err();
            assert!(matches!(e, RuntimeError::InvalidLaunch(_)), "{cfg:?}");
        }
        let e = LaunchConfig { grid: (1, 1, 1), block: (64, 32, 1), shared_mem_bytes: 0 }.validate().unwrap_err();
        assert!(e.to_string().contains("2048 threads"), "{e}");
    }

    #[test]
    fn linear_config() {
        let c = LaunchConfig::linear(1 << 24, 256).unwrap();
        assert_eq!(c.grid, (65536, 1, 1));
        assert_eq!(c.block, (256, 1, 1));
        assert_eq!(LaunchConfig::linear(1000, 256).unwrap().grid, (4, 1, 1));
        assert_eq!(LaunchConfig::linear(0, 256).unwrap().grid, (1, 1, 1));
        assert!(LaunchConfig::linear(10, 0).is_err());
        assert!(LaunchConfig::linear(10, 2048).is_err());
    }
}
