//! Barriers: the block's `__syncthreads`, named barriers, and mbarriers in shared memory.

use super::{mlir_tensor, v, KernelWriter};
use cute_lang::kir::Inst;
use cute_lang::types::Scalar;

impl KernelWriter<'_> {
    /// Block, named and memory barriers.
    pub(super) fn barrier(&mut self, inst: &Inst) {
        match inst {
            Inst::Barrier { span } => {
                let loc = self.loc(*span);
                self.line(&format!("gpu.barrier {loc}"));
            }
            Inst::NamedBarrier { id, threads, arrive, span } => {
                let i = self.operand(id, Scalar::I32, None, *span);
                let n = self.operand(threads, Scalar::I32, None, *span);
                let loc = self.loc(*span);
                if *arrive {
                    // `nvvm.barrier.arrive` has no LLVM translation in MLIR 22 (only
                    // `convert-nvvm-to-llvm` lowers it): call the intrinsic it stands for.
                    self.line(&format!("llvm.call_intrinsic \"llvm.nvvm.barrier.cta.arrive.aligned.count\"({i}, {n}) : (i32, i32) -> () {loc}"));
                } else {
                    // The intrinsic `nvvm.barrier` stands for, not the op: MLIR 22 prints
                    // `nvvm.barrier id = %a number_of_threads = %b` and its parser then takes the
                    // next line for more of the op (a printed `--emit=cute` would not re-parse).
                    self.line(&format!("llvm.call_intrinsic \"llvm.nvvm.barrier.cta.sync.aligned.count\"({i}, {n}) : (i32, i32) -> () {loc}"));
                }
            }
            Inst::Mbarrier { op, dst, tensor, ty, offset, arg, span } => {
                // A shared-memory offset: 32 bits in any kernel.
                let off = self.int32(offset, *span);
                let (a, at) = match arg {
                    Some(x) => (format!(", {}", self.operand(x, Scalar::I32, None, *span)), ", i32"),
                    None => (String::new(), ""),
                };
                let loc = self.loc(*span);
                let (result, result_ty) = match dst {
                    Some(d) => (format!("{} = ", v(*d)), "i1"),
                    None => (String::new(), "()"),
                };
                self.line(&format!(
                    "{result}\"cute.mbarrier\"({}, {off}{a}) {{kind = \"{}\"}} : ({}, i32{at}) -> {result_ty} {loc}",
                    v(*tensor),
                    op.kind(),
                    mlir_tensor(ty)
                ));
            }
            _ => unreachable!("`inst` sends only barriers here"),
        }
    }
}
