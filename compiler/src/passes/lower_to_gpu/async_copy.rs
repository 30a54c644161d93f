//! Asynchronous copies into shared memory: `cp.async` (zero-filling under a predicate), and the
//! warp-wide matrix copies between shared memory and MMA registers: `ldmatrix`, `stmatrix`.

use super::memory::{gep, load_frag_memory, static_offset, store_frag};
use super::{Int, Lowered, NAME};
use crate::ir::{self, Builder, Op, Val};
use crate::passes::common::{copy_op, fail, Reported};
use crate::passes::ptx_asm::{PtxAsm, Reg};
use cute_layout::atom::CopyOp;

/// `cp.async` of a whole tensor from global to shared memory: one instruction per chunk of `w`
/// elements, which must be the atom's width exactly (a narrower proven width is an error, never a
/// silently different instruction). Unpredicated, NVVM's op. With a predicate, inline PTX with the
/// `ignore-src` predicate operand (PTX 7.5) set where the predicate is false: nothing is read and
/// the chunk is zero-filled. NVVM's op has only the `src-size` form of that, a `selp` of 16 or 0
/// bytes which ptxas turns back into a predicate (a SEL and an ISETP per chunk, a large part of a
/// GEMM's k-tile loop: docs/pipeline.md has the counts); the predicate goes to the LDGSTS as it is.
#[allow(clippy::too_many_arguments)]
pub(super) fn cp_async(
    b: &Builder,
    op: Op,
    name: &str,
    src: &Lowered,
    dst: &Lowered,
    n: usize,
    w: usize,
    pred: Option<Val>,
) -> Result<(), Reported> {
    let copy = copy_op(name)
        .filter(|c| c.lane_elements().is_none())
        .ok_or_else(|| fail(op, &format!("{NAME}: unknown copy operation \"{name}\"")))?;
    let want = ir::int_attr(op, "max_vector").unwrap_or(0) as usize;
    let bytes = (w as u32) * src.elem_bytes;
    if w != want || !copy.bits().contains(&(bytes * 8)) {
        return Err(fail(op, &format!("{name} of {} bytes needs {want}-element chunks contiguous and aligned on both sides, but the layouts prove only {w} ({} with {}-byte alignment, {} with {}-byte alignment)", want as u32 * src.elem_bytes, src.layout, src.align, dst.layout, dst.align)));
    }
    let cache = if name == "cp.async.cg" { "cg" } else { "ca" };
    let ignore_src = pred.map(|p| b.binary("arith.xori", p, b.const_int(1, "i1")));
    for chunk in 0..n / w {
        let so = static_offset(b, (chunk * w) as i64, &src.leaves)
            .map_err(|_| fail(op, "a copy needs tensors of static shape"))?;
        let dof = static_offset(b, (chunk * w) as i64, &dst.leaves)
            .map_err(|_| fail(op, "a copy needs tensors of static shape"))?;
        let (sp, dp) = (gep(b, src, so), gep(b, dst, dof));
        match ignore_src {
            None => {
                b.create(
                    "nvvm.cp.async.shared.global",
                    &[dp, sp],
                    &[],
                    &[
                        ("size", b.attr(&format!("{bytes} : i32"))),
                        ("modifier", b.attr(&format!("#nvvm<load_cache_modifier {cache}>"))),
                    ],
                );
            }
            Some(ignore) => {
                // The destination as a 32-bit shared-window address; `b`: a predicate register.
                let dst32 = b.cast("llvm.ptrtoint", dp, "i32");
                let mut asm = PtxAsm::default();
                let (d, s, p) = (asm.input(dst32, Reg::B32), asm.input(sp, Reg::B64), asm.input(ignore, Reg::Pred));
                asm.clobbers_memory();
                asm.has_side_effects();
                asm.build(b, &format!("cp.async.{cache}.shared.global [${d}], [${s}], {bytes}, ${p};"));
            }
        }
    }
    Ok(())
}

/// `ldmatrix.x{1,2,4}`: this lane gives the shared-memory address of its 8-element row (`src`,
/// which must be 16 contiguous, aligned bytes; only the first 8 per matrix lanes' are used) and
/// receives one register per matrix, its MMA values in `dst` order (register j = values 2j, 2j+1).
fn ldmatrix(b: &Builder, op: Op, (m, layout): (usize, &str), src: &Lowered, dst: &Lowered) -> Result<(), Reported> {
    let i32_ty = b.ty("i32");
    let row = gep(b, src, Int::Const(0));
    // One matrix comes back as an i32, more as a struct of them.
    let result_ty = if m == 1 { i32_ty } else { b.ty(&format!("!llvm.struct<({})>", vec!["i32"; m].join(", "))) };
    let ld = b.create(
        "nvvm.ldmatrix",
        &[row],
        &[result_ty],
        &[
            ("num", b.attr(&format!("{m} : i32"))),
            ("layout", b.attr(&format!("#nvvm.mma_layout<{layout}>"))),
            ("shape", b.attr("#nvvm.ld_st_matrix_shape<m = 8, n = 8>")),
            ("eltType", b.attr("#nvvm.ld_st_matrix_elt_type<b16>")),
        ],
    );
    let regs: Vec<Val> = if m == 1 {
        vec![ir::result(ld, 0)]
    } else {
        (0..m)
            .map(|i| {
                ir::result(
                    b.create(
                        "llvm.extractvalue",
                        &[ir::result(ld, 0)],
                        &[i32_ty],
                        &[("position", b.attr(&format!("array<i64: {i}>")))],
                    ),
                    0,
                )
            })
            .collect()
    };
    let packed = ir::result(b.create("vector.from_elements", &regs, &[b.ty(&format!("vector<{m}xi32>"))], &[]), 0);
    let values = b.cast("vector.bitcast", packed, &format!("vector<{}x{}>", 2 * m, dst.elem));
    store_frag(b, op, dst, values, "dst_vector")
}

/// `stmatrix.x{1,2,4}` (sm_90): this lane gives one register per matrix, its MMA values in `src`
/// order (register j = values 2j, 2j+1), and the shared-memory address of its 8-element row
/// (`dst`, which must be 16 contiguous, aligned bytes; only the first 8 per matrix lanes' are used).
fn stmatrix(b: &Builder, op: Op, (m, layout): (usize, &str), src: &Lowered, dst: &Lowered) -> Result<(), Reported> {
    let values = load_frag_memory(b, op, src, "src_vector")?;
    let packed = b.cast("vector.bitcast", values, &format!("vector<{m}xi32>"));
    let i32_ty = b.ty("i32");
    let mut operands = vec![gep(b, dst, Int::Const(0))];
    operands.extend((0..m).map(|i| {
        ir::result(
            b.create(
                "vector.extract",
                &[packed],
                &[i32_ty],
                &[("static_position", b.attr(&format!("array<i64: {i}>")))],
            ),
            0,
        )
    }));
    b.create(
        "nvvm.stmatrix",
        &operands,
        &[],
        &[
            ("layout", b.attr(&format!("#nvvm.mma_layout<{layout}>"))),
            ("shape", b.attr("#nvvm.ld_st_matrix_shape<m = 8, n = 8>")),
            ("eltType", b.attr("#nvvm.ld_st_matrix_elt_type<b16>")),
        ],
    );
    Ok(())
}

/// A warp-wide 8x8-matrix copy `name`, `ldmatrix` or `stmatrix`, of `src` into `dst` (`n` elements
/// each, proven contiguous in runs of `w`), once its shared-memory side is proven one row of 8
/// contiguous, 16-byte aligned elements per lane. `.trans` (the transposed matrices of an M- or
/// N-major tile) is NVVM's column layout.
pub(super) fn matrix_copy(
    b: &Builder,
    op: Op,
    name: &str,
    (src, n_src, w_src): (&Lowered, usize, usize),
    (dst, n_dst, w_dst): (&Lowered, usize, usize),
) -> Result<(), Reported> {
    let (matrices, trans, row, n, w, what) = match copy_op(name) {
        Some(CopyOp::Ldmatrix { matrices, trans }) => (
            matrices,
            trans,
            src,
            n_src,
            w_src,
            "reads one row of 8 contiguous, 16-byte aligned elements per lane, but the source",
        ),
        Some(CopyOp::Stmatrix { matrices, trans }) => (
            matrices,
            trans,
            dst,
            n_dst,
            w_dst,
            "writes one row of 8 contiguous, 16-byte aligned elements per lane, but the destination",
        ),
        _ => return Err(fail(op, &format!("{NAME}: unknown copy operation \"{name}\""))),
    };
    if n != 8 || w != 8 {
        return Err(fail(
            op,
            &format!(
                "{name} {what} has {n} elements proven contiguous in runs of {w} (layout {}, {}-byte alignment)",
                row.layout, row.align
            ),
        ));
    }
    let form = (usize::from(matrices), if trans { "col" } else { "row" });
    if matches!(copy_op(name), Some(CopyOp::Ldmatrix { .. })) {
        ldmatrix(b, op, form, src, dst)
    } else {
        stmatrix(b, op, form, src, dst)
    }
}
