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
use crate::ir::{self, Builder, Op, Val};
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

/// A fragment as the scalars the instruction takes: f32 values, or b32 registers.
fn registers(b: &Builder, v: Val, n: usize, as_f32: bool) -> Vec<Val> {
    let elem_ty = if as_f32 { "f32" } else { "i32" };
    let packed = if as_f32 { v } else { b.cast("vector.bitcast", v, &format!("vector<{n}xi32>")) };
    (0..n)
        .map(|i| {
            let e = b.create(
                "vector.extract",
                &[packed],
                &[b.ty(elem_ty)],
                &[("static_position", b.attr(&format!("array<i64: {i}>")))],
            );
            ir::result(e, 0)
        })
        .collect()
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
    let c_f32 = is_f32_register(&atom, MmaOperand::C);
    let a = registers(&b, ir::operand(op, 0), na, false);
    let bb = registers(&b, ir::operand(op, 1), nb, false);
    let c = registers(&b, ir::operand(op, 2), nc, c_f32);

    let list = |from: usize, n: usize| (from..from + n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
    let asm = format!(
        "{} {{{}}}, {{{}}}, {{{}}}, {{{}}};",
        atom.ptx,
        list(0, nc),
        list(nc, na),
        list(nc + na, nb),
        list(nc + na + nb, nc)
    );
    let reg = if c_f32 { "f" } else { "r" };
    let mut constraints: Vec<String> = (0..nc).map(|_| format!("={reg}")).collect();
    constraints.extend((0..na + nb).map(|_| "r".to_string()));
    constraints.extend((0..nc).map(|i| i.to_string()));
    let elem = if c_f32 { "f32" } else { "i32" };
    let struct_ty = format!("!llvm.struct<({})>", vec![elem; nc].join(", "));
    let mut operands = a;
    operands.extend(bb);
    operands.extend(c);
    let inline = b.create(
        "llvm.inline_asm",
        &operands,
        &[b.ty(&struct_ty)],
        &[
            ("asm_string", b.attr(&format!("\"{asm}\""))),
            ("constraints", b.attr(&format!("\"{}\"", constraints.join(",")))),
        ],
    );
    let out: Vec<Val> = (0..nc)
        .map(|i| {
            ir::result(
                b.create(
                    "llvm.extractvalue",
                    &[ir::result(inline, 0)],
                    &[b.ty(elem)],
                    &[("position", b.attr(&format!("array<i64: {i}>")))],
                ),
                0,
            )
        })
        .collect();
    let d_ty = ir::type_to_string(ir::value_type(ir::result(op, 0)));
    let d = if c_f32 {
        ir::result(b.create("vector.from_elements", &out, &[b.ty(&d_ty)], &[]), 0)
    } else {
        let packed = ir::result(b.create("vector.from_elements", &out, &[b.ty(&format!("vector<{nc}xi32>"))], &[]), 0);
        b.cast("vector.bitcast", packed, &d_ty)
    };
    ir::replace_uses(op, &[d]);
    ir::erase(op);
    Ok(())
}
