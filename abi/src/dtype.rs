//! Element types: the one list every crate, the manifest, the C header and the `cute` dialect use.

use std::fmt;

/// A tensor element or scalar type: CuTe DSL's numeric types. The discriminant is the C ABI code
/// (`CUTE_DTYPE_*` in `runtime/include/cute_runtime.h`, checked against [`DType::c_name`] by a test).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum DType {
    I8 = 1,
    I16 = 2,
    I32 = 3,
    I64 = 4,
    U8 = 5,
    U16 = 6,
    U32 = 7,
    U64 = 8,
    F16 = 9,
    BF16 = 10,
    TF32 = 11,
    F32 = 12,
    F64 = 13,
    F8E4M3 = 14,
    F8E5M2 = 15,
    Bool = 16,
}

impl DType {
    /// Every element type; the C ABI code of `ALL[i]` is `i + 1`.
    pub const ALL: [DType; 16] = [
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::TF32,
        DType::F32,
        DType::F64,
        DType::F8E4M3,
        DType::F8E5M2,
        DType::Bool,
    ];

    /// The `.cute` name (`f32`, `bf16`, ...), also the manifest's.
    pub fn name(self) -> &'static str {
        match self {
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::TF32 => "tf32",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F8E4M3 => "f8e4m3",
            DType::F8E5M2 => "f8e5m2",
            DType::Bool => "bool",
        }
    }

    /// Parses a `.cute` type name.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The C header's constant: `CUTE_DTYPE_F32`, ...
    pub fn c_name(self) -> String {
        format!("CUTE_DTYPE_{}", self.name().to_ascii_uppercase())
    }

    /// The C ABI code (`CUTE_DTYPE_*` in `cute_runtime.h`).
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The type with C ABI code `code`.
    pub fn from_code(code: i32) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.code() == code)
    }

    /// The MLIR builtin type that holds a value of this type in registers. MLIR integers are
    /// signless, so signedness lives in the ops; tf32 is computed as f32; bool is `i1`.
    pub fn mlir_name(self) -> &'static str {
        match self {
            DType::I8 | DType::U8 => "i8",
            DType::I16 | DType::U16 => "i16",
            DType::I32 | DType::U32 => "i32",
            DType::I64 | DType::U64 => "i64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::TF32 | DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F8E4M3 => "f8E4M3FN",
            DType::F8E5M2 => "f8E5M2",
            DType::Bool => "i1",
        }
    }

    /// The MLIR type of this type's storage in memory: bools and 8-bit floats are bytes there
    /// (LLVM has no `i1` memory type of one byte, and no 8-bit float arithmetic to load into).
    pub fn mlir_memory_name(self) -> &'static str {
        match self {
            DType::Bool | DType::F8E4M3 | DType::F8E5M2 => "i8",
            other => other.mlir_name(),
        }
    }

    /// Storage size in bytes of the MLIR element type `name` as [`DType::mlir_name`] spells it
    /// (the passes read element types off printed MLIR types); `None` for any other type.
    pub fn mlir_size_bytes(name: &str) -> Option<u32> {
        DType::ALL.into_iter().find(|d| d.mlir_name() == name).map(DType::size_bytes)
    }

    /// Storage size in bytes (tf32 is stored in 32 bits).
    pub fn size_bytes(self) -> u32 {
        match self {
            DType::I8 | DType::U8 | DType::F8E4M3 | DType::F8E5M2 | DType::Bool => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 | DType::TF32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::TF32 | DType::F32 | DType::F64 | DType::F8E4M3 | DType::F8E5M2)
    }

    pub fn is_int(self) -> bool {
        !self.is_float() && self != DType::Bool
    }

    pub fn is_signed(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }

    /// The 8-bit floats (`f8e4m3`, `f8e5m2`): storage and conversion types with no arithmetic of
    /// their own (convert with `.to(f32)` first, as in CuTe DSL).
    pub fn is_fp8(self) -> bool {
        matches!(self, DType::F8E4M3 | DType::F8E5M2)
    }

    /// The values of an integer type (bool: 0 and 1), inclusive; `None` for floating types.
    pub fn integer_range(self) -> Option<(i128, i128)> {
        Some(match self {
            DType::I8 => (i8::MIN.into(), i8::MAX.into()),
            DType::I16 => (i16::MIN.into(), i16::MAX.into()),
            DType::I32 => (i32::MIN.into(), i32::MAX.into()),
            DType::I64 => (i64::MIN.into(), i64::MAX.into()),
            DType::U8 => (0, u8::MAX.into()),
            DType::U16 => (0, u16::MAX.into()),
            DType::U32 => (0, u32::MAX.into()),
            DType::U64 => (0, u64::MAX.into()),
            DType::Bool => (0, 1),
            _ => return None,
        })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_names_and_c_names_are_one_list() {
        for (i, d) in DType::ALL.into_iter().enumerate() {
            assert_eq!(d.code(), i as i32 + 1);
            assert_eq!(DType::from_code(d.code()), Some(d));
            assert_eq!(DType::from_name(d.name()), Some(d));
            assert_eq!(d.to_string(), d.name());
        }
        assert_eq!(DType::F8E4M3.c_name(), "CUTE_DTYPE_F8E4M3");
        assert_eq!(DType::from_code(0), None);
        assert_eq!(DType::from_name("f128"), None);
    }

    #[test]
    fn mlir_sizes_agree_with_storage_sizes() {
        for d in DType::ALL {
            assert_eq!(DType::mlir_size_bytes(d.mlir_name()), Some(d.size_bytes()), "{d}");
            assert!(DType::mlir_size_bytes(d.mlir_memory_name()).unwrap() == d.size_bytes(), "{d}");
        }
        assert_eq!(DType::mlir_size_bytes("vector<4xf32>"), None);
    }

    /// The C header declares the same codes under the same names.
    #[test]
    fn c_header_matches() {
        let header = include_str!("../../runtime/include/cute_runtime.h");
        for d in DType::ALL {
            let decl = format!("{} = {}", d.c_name(), d.code());
            assert!(header.contains(&decl), "cute_runtime.h lacks `{decl}`");
        }
        assert!(header.matches("CUTE_DTYPE_").count() >= DType::ALL.len());
    }
}
