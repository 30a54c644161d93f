//! Hopper warpgroup MMA: the operand descriptors, `wgmma.mma_async` in inline PTX, and the register
//! fences around `wgmma.fence` and `wgmma.wait_group` that keep the accumulators in place.

use super::smem::byte_gep;
use super::{materialize_i32, mul, Int, Kernel, Lowered, NAME};
use crate::ir::{self, Builder, Op, Val};
use crate::passes::common::{fail, Reported};
use crate::passes::known_bits::{self, KnownBits};
use crate::passes::ptx_asm::{self, from_registers32, operand_list, registers32, PtxAsm, Reg};
use cute_layout::gmma::Major;

impl Kernel {
    /// `cute.warpgroup_fence`: the accumulators' (and register A fragments') values are in their
    /// registers before the fence.
    pub(super) fn warpgroup_fence(&self, op: Op) {
        let b = Builder::before(op);
        for root in &self.acc_roots {
            register_fence(&b, root);
        }
        b.create("nvvm.wgmma.fence.aligned", &[], &[], &[]);
    }

    /// `cute.warpgroup_wait_group`: no read of an accumulator, nor a write of an A fragment, moves
    /// above the wait.
    pub(super) fn warpgroup_wait_group(&self, op: Op) -> Result<(), Reported> {
        let b = Builder::before(op);
        let n = ir::int_attr(op, "n").ok_or_else(|| fail(op, "`cute.warpgroup_wait_group` needs an integer `n`"))?;
        b.create("nvvm.wgmma.wait.group.sync.aligned", &[], &[], &[("group", b.attr(&format!("{n} : i64")))]);
        for root in &self.acc_roots {
            register_fence(&b, root);
        }
        Ok(())
    }

    /// `cute.wgmma`, its tensor operands found among the lowered tensors.
    pub(super) fn wgmma(&self, op: Op) -> Result<(), Reported> {
        let find = |v: Val| self.tensors.iter().position(|t| ir::same_value(t.value, v));
        // An RS atom's A is a register vector, not a tensor.
        let a_regs = ir::type_to_string(ir::value_type(ir::operand(op, 0))).starts_with("vector<");
        let a = find(ir::operand(op, 0));
        let (Some(bt), true) = (find(ir::operand(op, 1)), a_regs || a.is_some()) else {
            return Err(fail(op, &format!("{NAME}: the tensor operands of `cute.wgmma` are not views or allocations")));
        };
        let b = Builder::before(op);
        wgmma(&b, op, a.map(|i| &self.tensors[i]), &self.tensors[bt])?;
        Ok(())
    }
}

/// The `cute.alloc`s (register tensors) whose views the function's `cute.wgmma` ops accumulate in,
/// and those an RS atom's A fragments are loaded from: the wgmma reads both asynchronously, so
/// both are fenced at `wgmma.fence` and `wgmma.wait_group`.
pub(super) fn wgmma_accumulators(func: Op) -> Vec<Op> {
    let mut out: Vec<Op> = Vec::new();
    for w in ir::nested_ops(func).into_iter().filter(|o| ir::op_name(*o) == "cute.wgmma") {
        for operand in [2, 0] {
            let Some(load) = ir::defining_op(ir::operand(w, operand)).filter(|d| ir::op_name(*d) == "cute.load_frag")
            else {
                continue;
            };
            let mut t = ir::operand(load, 0);
            while let Some(d) = ir::defining_op(t) {
                match ir::op_name(d).as_str() {
                    "cute.view" => t = ir::operand(d, 0),
                    "cute.alloc" => {
                        if !out.iter().any(|o| o.ptr == d.ptr) {
                            out.push(d);
                        }
                        break;
                    }
                    _ => break,
                }
            }
        }
    }
    out
}

/// CuTe's `warpgroup_fence_operand` on a whole accumulator tensor: its values pass through an
/// empty `asm volatile` that claims to rewrite them (each register tied to itself). Ordered with the
/// wgmma fence/wait (all have side effects), it keeps the backend from moving register writes of
/// the accumulators below a `wgmma.fence` or reads of them above a `wgmma.wait_group`, which the
/// PTX ISA leaves undefined. It costs no instruction.
///
/// The registers are loaded and stored one at a time: loaded as one vector, each fence gave LLVM's
/// InstCombine an insertelement chain as long as the fragment, quadratic in its length (a GEMM's
/// accumulators are 128 floats; docs/pipeline.md has the build times of samples/gemm_sm90.cute).
fn register_fence(b: &Builder, root: &(Val, i64, String)) {
    let (ptr, n, elem) = root;
    let n = *n as usize;
    let f32_regs = elem == "f32";
    // Elements a 32-bit register holds: an f32, a pair of 16-bit elements (element 2i in the low
    // half), or four FP8 values (an FP8 RS atom's A fragment).
    let per_reg = if f32_regs {
        1
    } else if elem.starts_with("f8") || elem == "i8" {
        4
    } else {
        2
    };
    if !n.is_multiple_of(per_reg) {
        return;
    }
    let nr = n / per_reg;
    // Loaded as the register itself where LLVM has the type (f32, 16-bit pairs); FP8 quadruples as
    // an i32 word (LLVM has no FP8 type).
    let as_is = f32_regs || per_reg == 4;
    let chunk_ty = match per_reg {
        1 => "f32".to_string(),
        4 => "i32".to_string(),
        _ => format!("vector<{per_reg}x{elem}>"),
    };
    let align = b.attr(&format!("{} : i64", 4 / per_reg));
    let slots: Vec<Val> = (0..nr).map(|i| byte_gep(b, *ptr, 4 * i as i64)).collect();
    let regs: Vec<Val> = slots
        .iter()
        .map(|slot| {
            let v = ir::result(
                b.create(
                    "llvm.load",
                    &[*slot],
                    &[b.ty(&chunk_ty)],
                    &[("alignment", align), ("ordering", b.attr("0 : i64"))],
                ),
                0,
            );
            if as_is {
                v
            } else {
                registers32(b, v, 1, false)[0]
            }
        })
        .collect();
    let (reg, reg_ty) = if f32_regs { (Reg::F32, "f32") } else { (Reg::B32, "i32") };
    let mut asm = PtxAsm::default();
    for (output, r) in asm.outputs(reg, nr).zip(regs) {
        asm.tied(r, output);
    }
    asm.has_side_effects();
    let Some(result) = asm.build(b, "") else { return };
    for (i, slot) in slots.iter().enumerate() {
        let r = ptx_asm::output(b, result, i, reg_ty);
        let v = if as_is {
            r
        } else {
            let one = ir::result(b.create("vector.from_elements", &[r], &[b.ty("vector<1xi32>")], &[]), 0);
            b.cast("vector.bitcast", one, &chunk_ty)
        };
        b.create("llvm.store", &[v, *slot], &[], &[("alignment", align), ("ordering", b.attr("0 : i64"))]);
    }
}

/// The 64-bit matrix descriptor of one wgmma operand tile (`cute_layout::gmma`), and whether the
/// tile is K- or MN-major: LBO, SBO and the swizzle mode from its layout (checked canonical, in
/// either form), the start address from its allocation's
/// address plus its (unswizzled) offset in it, which must be provably in the first row of the
/// swizzle pattern (base offset 0): its run-time terms multiples of the pattern's repeat.
fn descriptor(b: &Builder, op: Op, index: usize, t: &Lowered, what: &str) -> Result<(Val, Major), Reported> {
    let (info, layout, bytes) = crate::passes::verify::wgmma_tile(op, index)?;
    let (major, desc) = cute_layout::gmma::operand_desc(&layout, info.swizzle, bytes, what)
        .map_err(|e| fail(op, &format!("{NAME}: {}", e.reason)))?;
    let mode = desc.swizzle;
    let rel = match t.swizzled {
        Some((_, rel)) => rel,
        None => {
            if t.align < 16 {
                return Err(fail(
                    op,
                    &format!(
                        "{NAME}: the wgmma {what} tile must start 16-byte aligned; its alignment is only {} bytes",
                        t.align
                    ),
                ));
            }
            Int::Const(0)
        }
    };
    let e = i64::from(bytes);
    let ok = match rel {
        Int::Const(c) => cute_layout::gmma::start_ok(mode, major, c * e),
        Int::Dyn(v) => {
            let (terms, c) = known_bits::sum_terms(v);
            let mut known = KnownBits::default();
            let repeat_elems = (mode.repeat_bytes() / e) as u64;
            terms.iter().all(|t| known.of(*t).multiple_of_pow2(repeat_elems.trailing_zeros()))
                && cute_layout::gmma::start_ok(mode, major, c * e)
        }
    };
    if !ok {
        let within = match major {
            Major::K => format!("plus 0 to {} bytes in steps of 16", mode.row_bytes() - 32),
            Major::MN => "(an MN-major tile starts at its pattern's start)".to_string(),
        };
        return Err(fail(
            op,
            &format!(
                "{NAME}: cannot prove that the wgmma {what} tile ({}{layout}) starts in the first row of its swizzle pattern, 16-byte aligned (a descriptor with base offset 0): its offset in the allocation must be a multiple of {} bytes {within}",
                info.swizzle.map(|s| format!("{s} o ")).unwrap_or_default(),
                mode.repeat_bytes(),
            ),
        ));
    }
    // The start field per wgmma, ((base + offset) >> 4) & 0x3FFF. Session 25 measured the form of
    // CUTLASS's descriptor iterator, a masked base per allocation or stage plus each k-block's
    // constant offset >> 4 (both with the run-time part inside and outside the mask): fewer
    // instructions, the forward attention 1-6% faster, the backward at head dim 128 up to 4%
    // slower (7% with the run-time part outside the mask; docs/tutorial.md §18.5). Without the
    // mask the pointer's bits above the shared window reach the field (multicast GEMMs computed
    // wrong results, session 24).
    let addr = b.cast("llvm.ptrtoint", t.ptr, "i32");
    let rel_bytes = mul(b, rel, Int::Const(e));
    let start = match rel_bytes {
        Int::Const(0) => addr,
        other => b.binary("arith.addi", addr, materialize_i32(b, other)),
    };
    let field = b.binary("arith.shrui", start, b.const_int(4, "i32"));
    let field = b.binary("arith.andi", field, b.const_int(0x3FFF, "i32"));
    let field = b.cast("arith.extui", field, "i64");
    Ok((b.binary("arith.ori", field, b.const_int(desc.encode_fields() as i64, "i64")), major))
}

/// `cute.wgmma`: `wgmma.mma_async.sync.aligned.m64nNk16` (`k32` for FP8) as inline PTX on the two descriptors and
/// the accumulator registers (tied to the results, scale-d 1: D = A*B + D). Inline PTX rather
/// than `nvvm.wgmma.mma_async`: docs/design.md (o). An RS atom (`a` is `None`: operand 0 is the
/// thread's A vector) gives A as four 32-bit registers instead of a descriptor, in the PTX form
/// `d, {a0, a1, a2, a3}, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b` (no imm-trans-a:
/// a register A is K-major). The `imm-trans` immediates are 1 for an MN-major (M-major A, N-major
/// B) shared tile, as its layout says.
fn wgmma(b: &Builder, op: Op, a: Option<&Lowered>, bt: &Lowered) -> Result<(), Reported> {
    let name = ir::string_attr(op, "atom").ok_or_else(|| fail(op, "`cute.wgmma` needs an `atom` attribute"))?;
    let atom = cute_layout::MmaAtom::by_name(&name)
        .filter(|x| x.is_wgmma())
        .ok_or_else(|| fail(op, &format!("{NAME}: \"{name}\" is not a wgmma atom")))?;
    // A: one descriptor operand ("l"), or the fragment's 16-bit pairs as 32-bit registers ("r").
    let mut trans_a = Major::K;
    let a_operands: Vec<Val> = match a {
        Some(a) => {
            let (desc, major) = descriptor(b, op, 0, a, "A")?;
            trans_a = major;
            vec![desc]
        }
        None => {
            if atom.reads_smem(cute_layout::MmaOperand::A) {
                return Err(fail(
                    op,
                    &format!("{NAME}: {} reads A from shared memory, but A is a register vector", atom.name),
                ));
            }
            // 16-bit pairs or FP8 quadruples a register: 32 bits of K either way.
            let per_reg = if atom.transposable() { 2 } else { 4 };
            let na = atom.values(cute_layout::MmaOperand::A) as usize / per_reg;
            registers32(b, ir::operand(op, 0), na, false)
        }
    };
    let (desc_b, trans_b) = descriptor(b, op, 1, bt, "B")?;
    let values = atom.values(cute_layout::MmaOperand::C) as usize;
    let f32_regs = atom.c == "f32";
    let nc = if f32_regs { values } else { values / 2 };
    let c = registers32(b, ir::operand(op, 2), nc, f32_regs);
    // scale-d: 1 (D = A*B + D) unless the op's optional i1 says otherwise.
    let scale = if ir::operand_count(op) > 3 {
        b.cast("arith.extui", ir::operand(op, 3), "i32")
    } else {
        b.const_int(1, "i32")
    };
    // The nc results, then A (a descriptor, or 4 registers), B's descriptor, scale-d, and the
    // accumulators tied to the results.
    let mut asm = PtxAsm::default();
    let d = asm.outputs(if f32_regs { Reg::F32 } else { Reg::B32 }, nc);
    let a_reg = if a.is_some() { Reg::B64 } else { Reg::B32 };
    let a_at: Vec<usize> = a_operands.into_iter().map(|v| asm.input(v, a_reg)).collect();
    let (b_at, scale_at) = (asm.input(desc_b, Reg::B64), asm.input(scale, Reg::B32));
    for (output, r) in d.clone().zip(c) {
        asm.tied(r, output);
    }
    asm.has_side_effects();
    let (a_text, tail) = if a.is_some() && !atom.transposable() {
        // FP8 (`.e4m3`/`.e5m2`): both operands K-major, and no imm-trans operands in the PTX form.
        (operand_list(a_at), "1, 1".to_string())
    } else if a.is_some() {
        (operand_list(a_at), format!("1, 1, {}, {}", trans_a.trans(), trans_b.trans()))
    } else if !atom.transposable() {
        // FP8 with A in registers: no imm-trans-b either.
        (format!("{{{}}}", operand_list(a_at)), "1, 1".to_string())
    } else {
        (format!("{{{}}}", operand_list(a_at)), format!("1, 1, {}", trans_b.trans()))
    };
    let list = operand_list(d);
    // One line: the PTX joiner (ptx_join.rs) takes a `}` alone on a line for the end of a function.
    let text = format!(
        "{{ .reg .pred p; setp.ne.b32 p, ${scale_at}, 0; {} {{{list}}}, {a_text}, ${b_at}, p, {tail}; }}",
        atom.ptx
    );
    let result = asm.build(b, &text).ok_or_else(|| fail(op, "internal error: wgmma without results"))?;
    let d_ty = ir::type_to_string(ir::value_type(ir::result(op, 0)));
    let d = from_registers32(b, result, nc, &d_ty, f32_regs);
    ir::replace_uses(op, &[d]);
    Ok(())
}
