//! The MLIR spelling of KIR types: scalars, tensors, fragments, layouts and tiled MMAs.

use cute_lang::kir::{FragTy, TensorTy, ValueTy};
use cute_lang::types::Scalar;

/// The MLIR spelling of a scalar type. Unsigned integers are signless in MLIR; the ops chosen for
/// them (divui, cmpi ult, ...) carry the signedness. tf32 is stored and computed as f32.
pub fn mlir_scalar(s: Scalar) -> &'static str {
    match s {
        Scalar::I8 | Scalar::U8 => "i8",
        Scalar::I16 | Scalar::U16 => "i16",
        Scalar::I32 | Scalar::U32 => "i32",
        Scalar::I64 | Scalar::U64 => "i64",
        Scalar::F16 => "f16",
        Scalar::BF16 => "bf16",
        Scalar::TF32 | Scalar::F32 => "f32",
        Scalar::F64 => "f64",
        Scalar::F8E4M3 => "f8E4M3FN",
        Scalar::F8E5M2 => "f8E5M2",
        Scalar::Bool => "i1",
    }
}

pub fn mlir_tensor(t: &TensorTy) -> String {
    format!("!cute.tensor<{}, \"{}\", {}, \"{}\">", mlir_scalar(t.elem), t.space.name(), t.align, t.layout_text())
}

/// `!cute.tiled_mma<"ATOM", "(TM,TN,TK)", "(M,N,K)">`.
pub fn mlir_tiled_mma(t: &cute_layout::TiledMma) -> String {
    let ([lm, ln, lk], [m, n, k]) = (t.atom_layout, t.tile);
    format!("!cute.tiled_mma<\"{}\", \"({lm},{ln},{lk})\", \"({m},{n},{k})\">", t.atom.name)
}

pub fn mlir_layout(l: &cute_layout::Layout) -> String {
    format!("!cute.layout<\"{l}\">")
}

fn mlir_frag(f: &FragTy) -> String {
    format!("vector<{}x{}>", f.len(), mlir_scalar(f.elem))
}

pub(super) fn mlir_value_ty(t: &ValueTy) -> String {
    match t {
        ValueTy::Scalar(s) => mlir_scalar(*s).to_string(),
        ValueTy::Frag(f) => mlir_frag(f),
        ValueTy::Tensor(t) => mlir_tensor(t),
    }
}
