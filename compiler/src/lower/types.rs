//! The MLIR spelling of KIR types: scalars, tensors, fragments, layouts and tiled MMAs.

use cute_lang::kir::{FragTy, TensorTy, ValueTy};
use cute_lang::types::Scalar;

/// The MLIR spelling of a scalar type ([`cute_abi::DType::mlir_name`]: unsigned integers are
/// signless in MLIR, and the ops chosen for them (divui, cmpi ult, ...) carry the signedness; tf32
/// is stored and computed as f32).
pub fn mlir_scalar(s: Scalar) -> &'static str {
    s.mlir_name()
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
