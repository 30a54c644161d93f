//! Inline PTX (`asm`): one `llvm.inline_asm` with the outputs' constraints (`=r`, ...), then the
//! inputs', then the memory clobber, marked as having side effects. 16-bit floats travel in `.b16`
//! registers (`h`), as their bits.

use super::{escape, mlir_scalar, KernelWriter};
use cute_lang::kir::{asm_constraint, Inst};
use cute_lang::types::Scalar;

/// The MLIR type an operand of `ty` has in the `llvm.inline_asm`: 16-bit floats as `i16`.
fn register_type(ty: Scalar) -> &'static str {
    if matches!(ty, Scalar::F16 | Scalar::BF16) {
        "i16"
    } else {
        mlir_scalar(ty)
    }
}

impl KernelWriter<'_> {
    pub(super) fn asm(&mut self, inst: &Inst) {
        let Inst::Asm { outputs, ptx, inputs, span } = inst else { unreachable!("`inst` sends only `asm` here") };
        let span = *span;
        let mut constraints: Vec<String> = Vec::new();
        for (_, ty) in outputs {
            constraints.push(format!("={}", asm_constraint(*ty).unwrap_or("r")));
        }
        let (mut args, mut arg_tys) = (Vec::new(), Vec::new());
        for (op, ty) in inputs {
            let mut x = self.operand(op, *ty, None, span);
            let reg = register_type(*ty);
            if reg != mlir_scalar(*ty) {
                x = self.op(&format!("arith.bitcast {x} : {} to {reg}", mlir_scalar(*ty)), span);
            }
            args.push(x);
            arg_tys.push(reg);
            constraints.push(asm_constraint(*ty).unwrap_or("r").to_string());
        }
        constraints.push("~{memory}".to_string());
        let out_tys: Vec<&str> = outputs.iter().map(|(_, ty)| register_type(*ty)).collect();
        let result = match out_tys.as_slice() {
            [] => "()".to_string(),
            [one] => one.to_string(),
            many => format!("!llvm.struct<({})>", many.join(", ")),
        };
        // The marker names the call's line and column (and its file, when imported), for ptxas
        // errors in the PTX (the `.loc` before an asm block may be an earlier instruction's): it
        // travels with the block, through unrolling too.
        let (file, line, col) = self.lines.locate(span.start);
        let root = self.lines.locate(0).0;
        let file = if file == root { String::new() } else { format!("{file}:") };
        let text = format!(
            "llvm.inline_asm has_side_effects \"{}\", \"{}\" {} : ({}) -> {result}",
            escape(&format!("{}{file}{line}:{col}\n\t{ptx}", crate::ptxas::ASM_MARKER)),
            constraints.join(","),
            args.join(", "),
            arg_tys.join(", ")
        );
        if outputs.is_empty() {
            let loc = self.loc(span);
            self.line(&format!("{text} {loc}"));
            return;
        }
        // Each output is the asm's result (one) or a field of it (several), through a bitcast for
        // 16-bit floats.
        let regs = if outputs.len() == 1 { None } else { Some(self.op(&text, span)) };
        for (i, &(dst, ty)) in outputs.iter().enumerate() {
            let value = match &regs {
                None => text.clone(),
                Some(regs) => format!("llvm.extractvalue {regs}[{i}] : {result}"),
            };
            if register_type(ty) == mlir_scalar(ty) {
                self.define(dst, &value, span);
            } else {
                let bits = self.op(&value, span);
                self.define(dst, &format!("arith.bitcast {bits} : i16 to {}", mlir_scalar(ty)), span);
            }
        }
    }
}
