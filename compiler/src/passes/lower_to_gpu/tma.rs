//! The Tensor Memory Accelerator: bulk tensor copies between global and shared memory through a
//! tensor map (docs/design.md (q)).

use super::memory::gep;
use super::{Int, Lowered};
use crate::ir::{self, Builder, Op};
use crate::passes::ptx_asm::{operand_list, PtxAsm, Reg};

/// `cute.tma_load`: one `cp.async.bulk.tensor.Nd` in inline PTX (docs/design.md (q)): the shared
/// destination's and the barrier's 32-bit shared-window addresses, the tensor map's generic address
/// (the `byval` kernel parameter, `cvta.param` by NVPTX) and the element coordinates. A multicast
/// load (the op's `multicast` attribute) adds `.multicast::cluster` and the 16-bit mask of the
/// blocks it writes, its last operand.
pub(super) fn tma_load(b: &Builder, op: Op, smem: &Lowered, bar: &Lowered) {
    let dst = gep(b, smem, Int::Const(0));
    let dst = b.cast("llvm.ptrtoint", dst, "i32");
    let mbar = gep(b, bar, Int::Dyn(ir::operand(op, 2)));
    let mbar = b.cast("llvm.ptrtoint", mbar, "i32");
    let multicast = ir::int_attr(op, "multicast").is_some();
    let n = ir::operand_count(op) - 4 - usize::from(multicast);
    let mut asm = PtxAsm::default();
    let (d, map, bar) = (asm.input(dst, Reg::B32), asm.input(ir::operand(op, 3), Reg::B64), asm.input(mbar, Reg::B32));
    let crds: Vec<usize> = (0..n).map(|i| asm.input(ir::operand(op, 4 + i), Reg::B32)).collect();
    let mask = multicast.then(|| {
        let m = b.cast("llvm.trunc", ir::operand(op, 4 + n), "i16");
        asm.input(m, Reg::B16)
    });
    asm.clobbers_memory();
    asm.has_side_effects();
    let crds = operand_list(crds);
    let (suffix, mask) = match mask {
        Some(m) => (".multicast::cluster", format!(", ${m}")),
        None => ("", String::new()),
    };
    asm.build(
        b,
        &format!(
            "cp.async.bulk.tensor.{n}d.shared::cluster.global.mbarrier::complete_tx::bytes{suffix} [${d}], [${map}, {{{crds}}}], [${bar}]{mask};"
        ),
    );
}

/// `cute.tma_store`: NVVM's `nvvm.cp.async.bulk.tensor.global.shared.cta` (tile mode, no L2 cache
/// hint), which translates to `llvm.nvvm.cp.async.bulk.tensor.s2g.tile.Nd`: the map's generic
/// address, the source's shared address and the element coordinates (docs/design.md (q)).
pub(super) fn tma_store(b: &Builder, op: Op, smem: &Lowered) {
    let src = gep(b, smem, Int::Const(0));
    let n = ir::operand_count(op) - 2;
    let mut operands = vec![ir::operand(op, 1), src];
    operands.extend((0..n).map(|i| ir::operand(op, 2 + i)));
    b.create(
        "nvvm.cp.async.bulk.tensor.global.shared.cta",
        &operands,
        &[],
        &[("operandSegmentSizes", b.attr(&format!("array<i32: 1, 1, {n}, 0, 0>")))],
    );
}
