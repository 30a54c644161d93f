//! The Tensor Memory Accelerator: bulk tensor loads and stores through the kernel's TMA
//! descriptors, and bulk async groups.

use super::{mlir_tensor, v, KernelWriter};
use cute_lang::kir::{self, Inst};
use cute_lang::types::Scalar;
use std::fmt::Write;

impl KernelWriter<'_> {
    /// TMA loads and stores, bulk group commit and wait.
    pub(super) fn tma(&mut self, inst: &Inst) {
        match inst {
            Inst::TmaLoad { tma, smem, smem_ty, bar, bar_ty, offset, coords, multicast, span } => {
                // PTX takes shared-memory offsets and TMA coordinates in 32 bits.
                let off = self.int32(offset, *span);
                let cs: Vec<String> = coords.iter().map(|c| self.int32(c, *span)).collect();
                // The multicast mask, an operand after the coordinates, marked by an attribute.
                let mask = multicast.as_ref().map(|m| self.operand(m, Scalar::I32, None, *span));
                let loc = self.loc(*span);
                let mut ops = format!("{}, {}, {off}, %tma{tma}", v(*smem), v(*bar));
                let mut tys = format!("{}, {}, i32, !llvm.ptr", mlir_tensor(smem_ty), mlir_tensor(bar_ty));
                for c in cs.iter().chain(&mask) {
                    let _ = write!(ops, ", {c}");
                    tys.push_str(", i32");
                }
                let attrs = if mask.is_some() { " {multicast = 1 : i32}" } else { "" };
                self.line(&format!("\"cute.tma_load\"({ops}){attrs} : ({tys}) -> () {loc}"));
            }
            Inst::TmaStore { tma, smem, smem_ty, coords, span } => {
                let cs: Vec<String> = coords.iter().map(|c| self.int32(c, *span)).collect();
                let loc = self.loc(*span);
                let mut ops = format!("{}, %tma{tma}", v(*smem));
                let mut tys = format!("{}, !llvm.ptr", mlir_tensor(smem_ty));
                for c in &cs {
                    let _ = write!(ops, ", {c}");
                    tys.push_str(", i32");
                }
                self.line(&format!("\"cute.tma_store\"({ops}) : ({tys}) -> () {loc}"));
            }
            // NVVM's ops translate to the `llvm.nvvm.cp.async.bulk.*` intrinsics (docs/design.md (q)).
            Inst::BulkGroup { op, span } => {
                let loc = self.loc(*span);
                match op {
                    kir::BulkGroupOp::Commit => self.line(&format!("nvvm.cp.async.bulk.commit.group {loc}")),
                    kir::BulkGroupOp::Wait { n, read: true } => {
                        self.line(&format!("nvvm.cp.async.bulk.wait_group {n} {{read}} {loc}"))
                    }
                    kir::BulkGroupOp::Wait { n, read: false } => {
                        self.line(&format!("nvvm.cp.async.bulk.wait_group {n} {loc}"))
                    }
                }
            }
            _ => unreachable!("`inst` sends only TMA ops here"),
        }
    }
}
