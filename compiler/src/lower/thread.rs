//! Where a thread is (thread, block and cluster indices) and what it exchanges with its warp
//! (shuffles).

use super::{mlir_scalar, v, KernelWriter};
use cute_lang::kir::{Inst, ShuffleKind, Special};
use cute_lang::types::Scalar;
use cute_layout::Int;

impl KernelWriter<'_> {
    /// Special registers and warp shuffles.
    pub(super) fn thread(&mut self, inst: &Inst) {
        match inst {
            Inst::Special { dst, which, span } => {
                let (op, d) = match which {
                    Special::ThreadIdx(d) => ("gpu.thread_id", d),
                    Special::BlockIdx(d) => ("gpu.block_id", d),
                    Special::BlockDim(d) => ("gpu.block_dim", d),
                    Special::GridDim(d) => ("gpu.grid_dim", d),
                    // The cluster registers: upstream's gpu ops, which convert-gpu-to-nvvm turns
                    // into `nvvm.read.ptx.sreg.{clusterid,nclusterid,cluster.ctaid,cluster.nctaid}`.
                    Special::ClusterIdx(d) => ("gpu.cluster_id", d),
                    Special::ClusterDim(d) => ("gpu.cluster_dim", d),
                    Special::BlockIdxInCluster(d) => ("gpu.cluster_block_id", d),
                    Special::BlockInClusterDim(d) => ("gpu.cluster_dim_blocks", d),
                    Special::BlockRankInCluster => {
                        // No gpu op reads `%cluster_ctarank`: the NVVM one, already an i32.
                        self.non_negative_values.insert(*dst);
                        self.define(*dst, "nvvm.read.ptx.sreg.cluster.ctarank : i32", *span);
                        return;
                    }
                };
                let dim = ["x", "y", "z"][*d as usize % 3];
                self.non_negative_values.insert(*dst);
                if !matches!(
                    which,
                    Special::ThreadIdx(_)
                        | Special::BlockIdx(_)
                        | Special::ClusterIdx(_)
                        | Special::BlockIdxInCluster(_)
                ) {
                    self.positive_values.insert(*dst);
                }
                let idx = self.op(&format!("{op} {dim}"), *span);
                self.define(*dst, &format!("arith.index_cast {idx} : index to i32"), *span);
            }
            Inst::Shuffle { dst, kind, ty, value, offset, span } => {
                let x = self.operand(value, *ty, None, *span);
                let o = self.operand(offset, Scalar::I32, None, *span);
                let w = self.int32(&Int::S(32), *span);
                let k = match kind {
                    ShuffleKind::Xor => "xor",
                    ShuffleKind::Down => "down",
                    ShuffleKind::Up => "up",
                    ShuffleKind::Idx => "idx",
                };
                let loc = self.loc(*span);
                let valid = self.tmp();
                self.line(&format!(
                    "{}, {valid} = gpu.shuffle {k} {x}, {o}, {w} : {} {loc}",
                    v(*dst),
                    mlir_scalar(*ty)
                ));
            }
            _ => unreachable!("`inst` sends only thread indices and shuffles here"),
        }
    }
}
