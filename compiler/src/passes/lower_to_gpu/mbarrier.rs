//! Memory barriers in shared memory (`cute.mbarrier`): init, arrive, arrive with an expected
//! transaction count, the parity wait and its one-probe test, and the arrival on another block's
//! barrier in the cluster.

use super::memory::gep;
use super::{Int, Lowered, NAME};
use crate::ir::{self, Builder, Op, Val};
use crate::passes::common::{fail, Reported};
use crate::passes::ptx_asm::{output, PtxAsm, Reg};

/// `cute.mbarrier` on the barrier's shared-memory address: `nvvm.mbarrier.init`,
/// `nvvm.mbarrier.arrive` and `nvvm.mbarrier.arrive.expect_tx` (LLVM intrinsics), and the wait as a
/// `mbarrier.try_wait.parity` loop in inline PTX. Inline PTX for the wait rather than
/// `nvvm.mbarrier.try_wait.parity`: that op is lowered (to the same loop) only by
/// `convert-nvvm-to-llvm`, which our pipeline does not run; docs/design.md (p).
pub(super) fn mbarrier(b: &Builder, op: Op, t: &Lowered) -> Result<(), Reported> {
    let kind = ir::string_attr(op, "kind").unwrap_or_default();
    let bar = gep(b, t, Int::Dyn(ir::operand(op, 1)));
    match kind.as_str() {
        "init" => {
            b.create("nvvm.mbarrier.init", &[bar, ir::operand(op, 2)], &[], &[]);
        }
        "arrive" => {
            b.create("nvvm.mbarrier.arrive", &[bar], &[b.ty("i64")], &[]);
        }
        "arrive_expect_tx" => {
            b.create("nvvm.mbarrier.arrive.expect_tx", &[bar, ir::operand(op, 2)], &[b.ty("i64")], &[]);
        }
        // Inline PTX on the barrier's shared-window address (it fits 32 bits: CUTLASS's
        // `cast_smem_ptr_to_uint`) and the op's argument, each on one line: the PTX joiner
        // (ptx_join.rs) takes a `}` alone on a line for the end of a function.
        "wait" => {
            // The PTX ISA's try_wait with a suspend-time hint, as CUTLASS's `ClusterBarrier::wait`.
            let (asm, a, parity) = on_barrier(b, op, bar, 0);
            asm.build(b, &format!("{{ .reg .pred p; LAB_WAIT: mbarrier.try_wait.parity.shared::cta.b64 p, [${a}], ${parity}, 10000000; @p bra.uni DONE; bra.uni LAB_WAIT; DONE: }}"));
        }
        "try_wait" => {
            // One probe, CUTLASS's `ClusterBarrier::try_wait`: the predicate comes back as 0 or 1
            // in a 32-bit register (`selp`, output 0), which is truncated to the op's `i1`.
            let (asm, a, parity) = on_barrier(b, op, bar, 1);
            let text = format!("{{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [${a}], ${parity}; selp.b32 $0, 1, 0, p; }}");
            let result = asm.build(b, &text).expect("the asm has an output");
            let bit = output(b, result, 0, "i32");
            ir::replace_uses(op, &[b.cast("llvm.trunc", bit, "i1")]);
        }
        "arrive_cluster" => {
            // CUTLASS's `ClusterBarrier::arrive(cta_id)`: the barrier's shared-window address in
            // the block of the given rank (`mapa`), and an arrival there with the default
            // semantics (release at CTA scope), as CUTLASS writes it. `.release.cluster` would
            // make every arrival a cluster-scope fence: on the H100 the multicast GEMM's
            // consumers, which release each stage in both blocks, stalled on it (`ncu`: 11.9
            // `membar` stall cycles per issued instruction, session 20).
            let (asm, a, rank) = on_barrier(b, op, bar, 0);
            asm.build(b, &format!("{{ .reg .b32 remote; mapa.shared::cluster.u32 remote, ${a}, ${rank}; mbarrier.arrive.shared::cluster.b64 _, [remote]; }}"));
        }
        other => return Err(fail(op, &format!("{NAME}: `cute.mbarrier` kind \"{other}\" is unknown"))),
    }
    Ok(())
}

/// An inline-PTX builder with `outputs` 32-bit outputs, then the barrier's 32-bit shared-window
/// address and the op's argument (the parity or the rank) as inputs: those inputs' numbers.
fn on_barrier(b: &Builder, op: Op, bar: Val, outputs: usize) -> (PtxAsm, usize, usize) {
    let addr = b.cast("llvm.ptrtoint", bar, "i32");
    let mut asm = PtxAsm::default();
    asm.outputs(Reg::B32, outputs);
    let (a, arg) = (asm.input(addr, Reg::B32), asm.input(ir::operand(op, 2), Reg::B32));
    asm.clobbers_memory();
    asm.has_side_effects();
    (asm, a, arg)
}
