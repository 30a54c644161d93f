//! Inline PTX (`llvm.inline_asm`) built from its operands, so that no lowering writes a constraint
//! string by hand (Triton's `PTXBuilder` is the idea). Output registers come first (`$0`, `$1`, ...),
//! then the inputs in the order they are added; each operand's register class gives its constraint,
//! an input can share an output's register (read and rewritten in place), and the builder adds the
//! memory clobber and the side-effect flag. Also here: the moves between vectors and the 32-bit
//! registers that PTX's matrix instructions take and give.

use crate::ir::{self, Builder, Val};
use std::ops::Range;

/// A PTX register class, as an inline-asm constraint names it.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Reg {
    /// `.b32` (`r`): integers, packed 16-bit pairs, shared-window addresses.
    B32,
    /// `.b64` (`l`): generic addresses, descriptors.
    B64,
    /// `.b16` (`h`): 16-bit values (f16 and bf16 bits).
    B16,
    /// `.f32` (`f`).
    F32,
    /// `.f64` (`d`).
    F64,
    /// `.pred` (`b`).
    Pred,
}

impl Reg {
    fn constraint(self) -> &'static str {
        match self {
            Reg::B32 => "r",
            Reg::B64 => "l",
            Reg::B16 => "h",
            Reg::F32 => "f",
            Reg::F64 => "d",
            Reg::Pred => "b",
        }
    }

    /// The MLIR type of an output register of this class.
    fn mlir_type(self) -> &'static str {
        match self {
            Reg::B32 => "i32",
            Reg::B64 => "i64",
            Reg::B16 => "i16",
            Reg::F32 => "f32",
            Reg::F64 => "f64",
            Reg::Pred => "i1",
        }
    }
}

/// One `llvm.inline_asm` op being put together.
#[derive(Default)]
pub(crate) struct PtxAsm {
    outputs: Vec<Reg>,
    inputs: Vec<(Val, String)>,
    clobbers_memory: bool,
    has_side_effects: bool,
}

impl PtxAsm {
    /// `n` more output registers of class `reg` (before any input); their operand numbers.
    pub(crate) fn outputs(&mut self, reg: Reg, n: usize) -> Range<usize> {
        debug_assert!(self.inputs.is_empty(), "outputs are numbered before inputs");
        let first = self.outputs.len();
        self.outputs.extend(std::iter::repeat_n(reg, n));
        first..first + n
    }

    /// An input in a register of class `reg`; its operand number.
    pub(crate) fn input(&mut self, value: Val, reg: Reg) -> usize {
        self.push_input(value, reg.constraint().to_string())
    }

    /// An input in the register of output `output`, which the instruction reads and rewrites.
    pub(crate) fn tied(&mut self, value: Val, output: usize) -> usize {
        self.push_input(value, output.to_string())
    }

    fn push_input(&mut self, value: Val, constraint: String) -> usize {
        self.inputs.push((value, constraint));
        self.outputs.len() + self.inputs.len() - 1
    }

    /// The instruction reads or writes memory the compiler cannot see (`~{memory}`).
    pub(crate) fn clobbers_memory(&mut self) {
        self.clobbers_memory = true;
    }

    /// The instruction must stay, in order with the other side effects, even if its results are unused.
    pub(crate) fn has_side_effects(&mut self) {
        self.has_side_effects = true;
    }

    /// The constraint string: the outputs (`=c`), the inputs, then the clobbers.
    fn constraints(&self) -> String {
        let outputs = self.outputs.iter().map(|r| format!("={}", r.constraint()));
        let inputs = self.inputs.iter().map(|(_, c)| c.clone());
        let clobbers = self.clobbers_memory.then(|| "~{memory}".to_string());
        outputs.chain(inputs).chain(clobbers).collect::<Vec<_>>().join(",")
    }

    /// Creates the `llvm.inline_asm` running `asm` at `b`; its result is the struct of the output
    /// registers (`None` without outputs).
    pub(crate) fn build(&self, b: &Builder, asm: &str) -> Option<Val> {
        let operands: Vec<Val> = self.inputs.iter().map(|(v, _)| *v).collect();
        let types: Vec<&str> = self.outputs.iter().map(|r| r.mlir_type()).collect();
        let results =
            if types.is_empty() { vec![] } else { vec![b.ty(&format!("!llvm.struct<({})>", types.join(", ")))] };
        let mut attrs = vec![
            ("asm_string", b.attr(&format!("\"{asm}\""))),
            ("constraints", b.attr(&format!("\"{}\"", self.constraints()))),
        ];
        if self.has_side_effects {
            attrs.push(("has_side_effects", b.attr("unit")));
        }
        let op = b.create("llvm.inline_asm", &operands, &results, &attrs);
        (!results.is_empty()).then(|| ir::result(op, 0))
    }
}

/// Operand numbers as PTX writes a register list: `$0, $1, $2`.
pub(crate) fn operand_list(numbers: impl IntoIterator<Item = usize>) -> String {
    numbers.into_iter().map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")
}

/// Register `i` of an inline-asm result struct, of MLIR type `reg_ty`.
pub(crate) fn output(b: &Builder, result: Val, i: usize, reg_ty: &str) -> Val {
    let position = b.attr(&format!("array<i64: {i}>"));
    ir::result(b.create("llvm.extractvalue", &[result], &[b.ty(reg_ty)], &[("position", position)]), 0)
}

/// A vector as `n` 32-bit registers: f32 values, or 16-bit pairs packed into i32 (element 2i in the
/// low half of register i, as PTX expects).
pub(crate) fn registers32(b: &Builder, v: Val, n: usize, as_f32: bool) -> Vec<Val> {
    let elem_ty = if as_f32 { "f32" } else { "i32" };
    let packed = if as_f32 { v } else { b.cast("vector.bitcast", v, &format!("vector<{n}xi32>")) };
    (0..n)
        .map(|i| {
            ir::result(
                b.create(
                    "vector.extract",
                    &[packed],
                    &[b.ty(elem_ty)],
                    &[("static_position", b.attr(&format!("array<i64: {i}>")))],
                ),
                0,
            )
        })
        .collect()
}

/// The `n` registers of an inline-asm result struct back as a vector of type `vec_ty` (f32 values,
/// or i32 registers of packed 16-bit pairs).
pub(crate) fn from_registers32(b: &Builder, result: Val, n: usize, vec_ty: &str, as_f32: bool) -> Val {
    let reg_ty = if as_f32 { "f32" } else { "i32" };
    let regs: Vec<Val> = (0..n).map(|i| output(b, result, i, reg_ty)).collect();
    if as_f32 {
        return ir::result(b.create("vector.from_elements", &regs, &[b.ty(vec_ty)], &[]), 0);
    }
    let packed = ir::result(b.create("vector.from_elements", &regs, &[b.ty(&format!("vector<{n}xi32>"))], &[]), 0);
    b.cast("vector.bitcast", packed, vec_ty)
}
