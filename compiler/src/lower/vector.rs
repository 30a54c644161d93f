//! Fragment (vector) ops: element extraction, reductions and building a fragment from scalars.

use super::arith::binary_op_name;
use super::{mlir_scalar, v, KernelWriter};
use cute_lang::kir::{BinaryOp, Inst};
use cute_lang::types::Scalar;

impl KernelWriter<'_> {
    /// `vector` ops on fragments.
    pub(super) fn vector(&mut self, inst: &Inst) {
        match inst {
            Inst::Extract { dst, ty, frag, index, span } => {
                let ft = self.ty(*frag);
                self.define(
                    *dst,
                    &format!("vector.extract {}[{index}] : {} from {ft}", v(*frag), mlir_scalar(*ty)),
                    *span,
                );
            }
            Inst::Reduce { dst, op, ty, frag, init, span } => {
                let (f, s) = (ty.is_float(), ty.is_signed() || *ty == Scalar::I32);
                let kind = match op {
                    BinaryOp::Add => "add",
                    BinaryOp::Mul => "mul",
                    BinaryOp::Min => binary_op_name(BinaryOp::Min, f, s),
                    _ => binary_op_name(BinaryOp::Max, f, s),
                };
                let acc = init.as_ref().map(|i| format!(", {}", self.operand(i, *ty, None, *span))).unwrap_or_default();
                let ft = self.ty(*frag);
                self.define(
                    *dst,
                    &format!("vector.reduction <{kind}>, {}{acc} : {ft} into {}", v(*frag), mlir_scalar(*ty)),
                    *span,
                );
            }
            Inst::FromElements { dst, ty, elems, span } => {
                let xs: Vec<String> = elems.iter().map(|e| self.operand(e, *ty, None, *span)).collect();
                let t = self.ty(*dst);
                self.define(*dst, &format!("vector.from_elements {} : {t}", xs.join(", ")), *span);
            }
            _ => unreachable!("`inst` sends only fragment ops here"),
        }
    }
}
