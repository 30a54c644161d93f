//! TMA tensor maps: the 128-byte `CUtensorMap` parameters of kernels that use `tma_load` or
//! `tma_store` (the encoding has no direction: one map serves both).
//!
//! Such a kernel's manifest block has a `tma PARAM elem=T order=(..) box=(..) swizzle=S` line per
//! tensor map (version 4), with `store=1` (version 7) when a `tma_store` writes through it. The kernel takes the maps by value, after its declared parameters and
//! its fast divisors, one `.param .align 64 .b8 [128]` each. They are never given by the caller:
//! every launch ([`crate::Kernel::launch`], which host calls, checked launches, the C API and
//! Python all go through) encodes them from the launch's arguments for the tensor parameter
//! `PARAM` (pointer, extents, strides) with `cuTensorMapEncodeTiled`. [`TmaEncode::encoding`] is the
//! pure part (what the driver gets, and the checks TMA needs), tested without a GPU.

use crate::launch::KernelArg;
pub use cute_abi::manifest::TmaSig;
use cute_abi::manifest::{tma_elem_bytes, KernelSig, ParamKind};
use cute_abi::DType;

/// What `cuTensorMapEncodeTiled` is given, in the map's dimension order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmaEncoding {
    pub elem: DType,
    pub address: u64,
    pub dims: Vec<u64>,
    /// Bytes, of dimensions 1.. (dimension 0 is contiguous).
    pub strides: Vec<u64>,
    pub box_dims: Vec<u32>,
    pub swizzle_bytes: u32,
}

/// The tensor map of a `tma` record for one launch (the record and its parsing: [`TmaSig`]).
pub trait TmaEncode {
    /// The map for a launch whose flat kernel-ABI arguments are `args` (the declared parameters'
    /// values first), with TMA's requirements checked: a 16-byte aligned address, strides that
    /// are multiples of 16 bytes below 2^40, extents 1 to 2^32, the box's inner extent a multiple
    /// of 16 bytes and at most the swizzle span; for a map a TMA store writes through, rows whose
    /// length is a multiple of 16 bytes (TMA stores write whole 16-byte chunks: one that a row
    /// ends inside would be written past the row's end, into its padding or past the tensor).
    fn encoding(&self, sig: &KernelSig, args: &[KernelArg]) -> Result<TmaEncoding, String>;
}

impl TmaEncode for TmaSig {
    fn encoding(&self, sig: &KernelSig, args: &[KernelArg]) -> Result<TmaEncoding, String> {
        let mut at = 0usize;
        for p in &sig.params[..self.param] {
            at += match &p.kind {
                ParamKind::Tensor(t) => t.abi_len(),
                ParamKind::Scalar(_) => 1,
                // Host parameters only: a kernel block never has one (the manifest refuses it).
                ParamKind::Stream => 0,
            };
        }
        let p = &sig.params[self.param];
        let ParamKind::Tensor(t) = &p.kind else { return Err(format!("`{}` is not a tensor parameter", p.name)) };
        let Some(&KernelArg::Ptr(address)) = args.get(at) else {
            return Err(format!("the arguments do not hold tensor `{}` (no pointer at ABI position {at})", p.name));
        };
        let mut next = at + 1;
        let mut take = |leaves: &[Option<i64>]| -> Result<Vec<i64>, String> {
            leaves
                .iter()
                .map(|l| match l {
                    Some(v) => Ok(*v),
                    None => {
                        let v = args
                            .get(next)
                            .and_then(KernelArg::dynamic_value)
                            .ok_or_else(|| format!("missing a dynamic entry of tensor `{}`", p.name))?;
                        next += 1;
                        Ok(v)
                    }
                })
                .collect()
        };
        let shape = take(&t.shape_leaves)?;
        let stride = take(&t.stride_leaves)?;
        let eb = tma_elem_bytes(self.elem).unwrap_or(1);
        let what = |m: &str| format!("tensor map of `{}`: {m}", p.name);
        if address % 16 != 0 {
            return Err(what(&format!("the address {address:#x} is not 16-byte aligned, as TMA requires")));
        }
        let mut dims = Vec::new();
        let mut strides = Vec::new();
        for (i, &m) in self.order.iter().enumerate() {
            let d = shape[m];
            if !(1..=1i64 << 32).contains(&d) {
                return Err(what(&format!("extent {d} of mode {m} is not in 1..=2^32")));
            }
            dims.push(d as u64);
            if i > 0 {
                let s = stride[m].checked_mul(eb as i64).unwrap_or(-1);
                if s <= 0 || s % 16 != 0 || s >= 1i64 << 40 {
                    return Err(what(&format!("the stride of mode {m} is {} elements = {s} bytes; TMA needs a positive multiple of 16 bytes below 2^40", stride[m])));
                }
                strides.push(s as u64);
            }
        }
        let row_bytes = dims[0] * eb;
        if self.store && !row_bytes.is_multiple_of(16) {
            return Err(what(&format!(
                "its rows are {} elements = {row_bytes} bytes (mode {}); TMA stores write whole 16-byte chunks, so a store would write past the end of each row: the extent must be a multiple of {} elements",
                dims[0],
                self.order[0],
                16 / eb.max(1)
            )));
        }
        let box_dims: Vec<u32> = self.order.iter().map(|&m| self.box_dims[m]).collect();
        let inner = u64::from(box_dims[0]) * eb;
        if !inner.is_multiple_of(16) || (self.swizzle_bytes > 0 && inner > u64::from(self.swizzle_bytes)) {
            return Err(what(&format!("the box's inner extent is {inner} bytes; it must be a multiple of 16 bytes and at most the swizzle's {} bytes", self.swizzle_bytes)));
        }
        Ok(TmaEncoding { elem: self.elem, address, dims, strides, box_dims, swizzle_bytes: self.swizzle_bytes })
    }
}

impl TmaEncoding {
    /// `cuTensorMapEncodeTiled`: element strides 1, no interleave, L2 promotion 128 B, zeros out of
    /// bounds.
    pub fn encode(&self) -> crate::error::Result<cudarc::driver::sys::CUtensorMap> {
        use cudarc::driver::sys::*;
        let ty = match self.elem {
            DType::I8 | DType::U8 | DType::F8E4M3 | DType::F8E5M2 | DType::Bool => {
                CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8
            }
            DType::I16 | DType::U16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT16,
            DType::F16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            DType::BF16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            DType::I32 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_INT32,
            DType::U32 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT32,
            DType::F32 | DType::TF32 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            DType::I64 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_INT64,
            DType::U64 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT64,
            DType::F64 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
        };
        let swizzle = match self.swizzle_bytes {
            32 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
            64 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
            128 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            _ => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        };
        let rank = self.dims.len();
        let elem_strides = [1u32; 5];
        let mut map = CUtensorMap { opaque: [0; 16] };
        // SAFETY: the arrays hold `rank` (dims, box, element strides) and `rank - 1` (strides)
        // entries, as the driver reads; `map` is a valid, aligned CUtensorMap. The driver only
        // encodes the values (no device access).
        let r = unsafe {
            cuTensorMapEncodeTiled(
                &mut map,
                ty,
                rank as u32,
                self.address as *mut std::ffi::c_void,
                self.dims.as_ptr(),
                self.strides.as_ptr(),
                self.box_dims.as_ptr(),
                elem_strides.as_ptr(),
                CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                swizzle,
                CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        };
        r.result().map_err(|e| crate::driver::driver_error(format!("cuTensorMapEncodeTiled({self:?})"), e))?;
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::Manifest;
    use cute_abi::manifest::seal;

    const TEXT: &str = "cutec-manifest 4\nkernel k\n\
        param gA tensor elem=bf16 space=gmem align=16 rank=2 shape=(?,?) stride=(?{div=8},1)\n\
        param n scalar elem=i32\n\
        tma gA elem=bf16 order=(1,0) box=(64,64) swizzle=128\nend\n";

    #[test]
    fn parses_and_encodes_a_row_major_map() {
        let m = Manifest::parse(&seal(TEXT)).unwrap();
        let k = m.kernel("k").unwrap();
        assert_eq!(
            k.tmas,
            vec![TmaSig {
                param: 0,
                elem: DType::BF16,
                order: vec![1, 0],
                box_dims: vec![64, 64],
                swizzle_bytes: 128,
                store: false
            }]
        );
        assert!(k.abi().ends_with("i32 n, tmap gA[128])"), "{}", k.abi());
        let args =
            [KernelArg::Ptr(0x1000), KernelArg::I32(100), KernelArg::I32(72), KernelArg::I32(72), KernelArg::I32(5)];
        let e = k.tmas[0].encoding(k, &args).unwrap();
        assert_eq!(
            e,
            TmaEncoding {
                elem: DType::BF16,
                address: 0x1000,
                dims: vec![72, 100],
                strides: vec![144],
                box_dims: vec![64, 64],
                swizzle_bytes: 128
            }
        );
        // A row stride that is not a multiple of 16 bytes, a misaligned address.
        let mut bad = args;
        bad[3] = KernelArg::I32(68);
        assert!(k.tmas[0].encoding(k, &bad).unwrap_err().contains("multiple of 16 bytes"));
        bad = args;
        bad[0] = KernelArg::Ptr(0x1008);
        assert!(k.tmas[0].encoding(k, &bad).unwrap_err().contains("16-byte aligned"));
        assert!(k.tmas[0].encoding(k, &args[..2]).is_err());
        // Rows of 100 bf16 (200 bytes) in a padded row stride: a load may read them...
        let mut padded = args;
        padded[2] = KernelArg::I32(100);
        padded[3] = KernelArg::I32(128);
        assert!(k.tmas[0].encoding(k, &padded).is_ok());
        // ...but a store would write the 16-byte chunk the row ends in, past its end.
        let m = Manifest::parse(&seal(
            &TEXT.replace("cutec-manifest 4", "cutec-manifest 7").replace("swizzle=128", "swizzle=128 store=1"),
        ))
        .unwrap();
        let k = m.kernel("k").unwrap();
        assert!(k.tmas[0].store);
        let e = k.tmas[0].encoding(k, &padded).unwrap_err();
        assert!(
            e.contains("rows are 100 elements = 200 bytes (mode 1)") && e.contains("a multiple of 8 elements"),
            "{e}"
        );
        assert!(k.tmas[0].encoding(k, &args).is_ok());
    }

    #[test]
    fn malformed_tma_lines_fail_the_manifest_without_panicking() {
        let head = "cutec-manifest 4\nkernel k\nparam gA tensor elem=bf16 space=gmem align=16 rank=2 shape=(?,?) stride=(?,1)\nparam s scalar elem=f32\n";
        for line in [
            "tma",
            "tma nope elem=bf16 order=(1,0) box=(64,64) swizzle=0",
            "tma s elem=f32 order=(1,0) box=(64,64) swizzle=0",
            "tma gA elem=f32 order=(1,0) box=(64,64) swizzle=0",
            "tma gA elem=bf16 order=(0,1) box=(64,64) swizzle=0",
            "tma gA elem=bf16 order=(1,1) box=(64,64) swizzle=0",
            "tma gA elem=bf16 order=(1,0) box=(64,300) swizzle=0",
            "tma gA elem=bf16 order=(1,0) box=(64) swizzle=0",
            "tma gA elem=bf16 order=(1,0) box=(64,64) swizzle=48",
            "tma gA elem=bf16 order=(1,0) box=(64,-1) swizzle=0",
            "tma gA elem=bf16 order=(1,0,9) box=(64,64,1) swizzle=0",
            "tma gA elem=bf16 order=(99999999999999999999,0) box=(64,64) swizzle=0",
            "tma gA elem=bf16 box=(64,64) swizzle=0",
            "tma gA elem=bf16 order=(1,0) box=(64,64) swizzle=0 store=yes",
        ] {
            let e = Manifest::parse(&seal(&format!("{head}{line}\nend\n"))).unwrap_err();
            assert!(e.to_string().contains("`tma` line"), "{line}: {e}");
        }
        // Outside a kernel block a `tma` line is ignored (an unknown record of a host block).
        assert!(Manifest::parse(&seal("cutec-manifest 4\nhost h\ntma gA\nend\n")).is_ok());
    }
}
