//! `cute-lower-mma`: lowers each `cute.mma` to the PTX `mma.sync` instruction of its atom, as
//! `llvm.inline_asm` on 32-bit registers.
//!
//! The fragments are vectors in the atom's TV-layout value order, which is the PTX register order
//! (see `cute_layout::mma`): 16-bit inputs are packed two per `b32` register by a `vector.bitcast`
//! (element 2i in the low half of register i, as PTX expects), tf32 inputs are f32 bit patterns, and
//! f32 accumulators are one `f` register each. The accumulator registers are tied to the result
//! registers (constraints "0", "1", ...), so ptxas sees one read-modify-write accumulator (CuTe's
//! `mma_sm80.hpp` passes C and D as separate operands instead). The asm has no side effects: an MMA
//! whose result is never used is removed, like any other arithmetic.
//!
//! Why inline PTX rather than `nvgpu.mma.sync`: docs/design.md (g).

use super::common::{fail, Reported};
use super::ptx_asm::{from_registers32, operand_list, registers32, PtxAsm, Reg};
use crate::ir::{self, Builder, Op};
use cute_layout::{MmaAtom, MmaOperand};
use melior::pass::Pass;

pub const NAME: &str = "cute-lower-mma";
pub const SUMMARY: &str = "Lower cute.mma to the atom's mma.sync instruction (inline PTX on b32/f32 registers)";

static PASS_ID: super::PassId = super::PassId(5);

pub fn create() -> Pass {
    super::external(&PASS_ID, NAME, SUMMARY, run)
}

fn run(module: Op) -> Result<(), Reported> {
    for op in ir::nested_ops(module) {
        if ir::op_name(op) == "cute.mma" {
            lower(op)?;
        }
    }
    Ok(())
}

/// The PTX register class of an element type's registers: `f` for f32 accumulators, `r` (b32) for
/// packed 16-bit values and tf32 bit patterns.
fn is_f32_register(atom: &MmaAtom, op: MmaOperand) -> bool {
    op == MmaOperand::C && atom.c == "f32"
}

fn lower(op: Op) -> Result<(), Reported> {
    let name = ir::string_attr(op, "atom").ok_or_else(|| fail(op, "`cute.mma` needs an `atom` attribute"))?;
    let atom = MmaAtom::by_name(&name).ok_or_else(|| fail(op, &format!("{NAME}: unknown MMA atom \"{name}\"")))?;
    let b = Builder::before(op);
    // Registers per operand: 32 bits each.
    let count = |o: MmaOperand| {
        let bits = if atom.elem(o) == "f16" || atom.elem(o) == "bf16" { 16 } else { 32 };
        (atom.values(o) * bits / 32) as usize
    };
    let (na, nb, nc) = (count(MmaOperand::A), count(MmaOperand::B), count(MmaOperand::C));
    let c_f32 = is_f32_register(atom, MmaOperand::C);
    let a = registers32(&b, ir::operand(op, 0), na, false);
    let bb = registers32(&b, ir::operand(op, 1), nb, false);
    let c = registers32(&b, ir::operand(op, 2), nc, c_f32);

    let mut asm = PtxAsm::default();
    let d = asm.outputs(if c_f32 { Reg::F32 } else { Reg::B32 }, nc);
    let a_at: Vec<usize> = a.into_iter().map(|v| asm.input(v, Reg::B32)).collect();
    let b_at: Vec<usize> = bb.into_iter().map(|v| asm.input(v, Reg::B32)).collect();
    let c_at: Vec<usize> = d.clone().zip(c).map(|(output, v)| asm.tied(v, output)).collect();
    let text = format!(
        "{} {{{}}}, {{{}}}, {{{}}}, {{{}}};",
        atom.ptx,
        operand_list(d),
        operand_list(a_at),
        operand_list(b_at),
        operand_list(c_at)
    );
    let result = asm.build(&b, &text).ok_or_else(|| fail(op, "internal error: mma without results"))?;
    let d_ty = ir::type_to_string(ir::value_type(ir::result(op, 0)));
    let d = from_registers32(&b, result, nc, &d_ty, c_f32);
    ir::replace_uses(op, &[d]);
    ir::erase(op);
    Ok(())
}
