//! Thread block clusters (SM90): the cluster barrier and distributed shared memory.

use super::{mlir_scalar, mlir_tensor, v, KernelWriter};
use cute_lang::kir::{self, Inst};
use cute_lang::types::Scalar;

impl KernelWriter<'_> {
    /// Cluster barriers and DSMEM loads and stores.
    pub(super) fn cluster(&mut self, inst: &Inst) {
        match inst {
            Inst::ClusterBarrier { op, span } => {
                // The NVVM ops, not `.aligned`: a divergent arrival stays correct.
                let loc = self.loc(*span);
                let name = match op {
                    kir::ClusterBarrierOp::Arrive => "nvvm.cluster.arrive",
                    kir::ClusterBarrierOp::ArriveRelaxed => "nvvm.cluster.arrive.relaxed",
                    kir::ClusterBarrierOp::Wait => "nvvm.cluster.wait",
                };
                self.line(&format!("{name} {loc}"));
            }
            Inst::DsmemLoad { dst, tensor, ty, offset, rank, span } => {
                // A shared-memory offset: 32 bits in any kernel.
                let off = self.int32(offset, *span);
                let r = self.operand(rank, Scalar::I32, None, *span);
                let t = mlir_scalar(ty.elem);
                self.define(
                    *dst,
                    &format!(
                        "\"cute.dsmem_load\"({}, {off}, {r}) : ({}, i32, i32) -> {t}",
                        v(*tensor),
                        mlir_tensor(ty)
                    ),
                    *span,
                );
            }
            Inst::DsmemStore { value, tensor, ty, offset, rank, span } => {
                let off = self.int32(offset, *span);
                let r = self.operand(rank, Scalar::I32, None, *span);
                let x = self.operand(value, ty.elem, None, *span);
                let t = mlir_scalar(ty.elem);
                let loc = self.loc(*span);
                self.line(&format!(
                    "\"cute.dsmem_store\"({}, {off}, {r}, {x}) : ({}, i32, i32, {t}) -> () {loc}",
                    v(*tensor),
                    mlir_tensor(ty)
                ));
            }
            _ => unreachable!("`inst` sends only cluster ops here"),
        }
    }
}
