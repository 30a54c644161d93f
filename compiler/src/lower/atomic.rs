//! Atomics: `cute.atomic` on one element (its PTX type and qualifiers as attributes, since MLIR's
//! integers do not say whether they are signed) and `cute.atomic_add_frag` of a whole fragment.

use super::{mlir_scalar, mlir_tensor, v, KernelWriter};
use cute_lang::kir::Inst;
use cute_layout::atom::atomic::add_pair_ptx_type;

impl KernelWriter<'_> {
    pub(super) fn atomic(&mut self, inst: &Inst) {
        match inst {
            Inst::Atomic { dst, op, tensor, ty, offset, value, compare, pair, scope, order, span } => {
                let off = self.int(offset, *span);
                let t = if *pair {
                    format!("vector<2x{}>", mlir_scalar(ty.elem))
                } else {
                    mlir_scalar(ty.elem).to_string()
                };
                let mut operands = Vec::new();
                if let Some(c) = compare {
                    operands.push(self.operand(c, ty.elem, None, *span));
                }
                operands.push(self.operand(value, ty.elem, None, *span));
                let ptx_type = if *pair {
                    add_pair_ptx_type(ty.elem).unwrap_or_default()
                } else {
                    op.ptx_type(ty.elem).unwrap_or_default()
                };
                let text = format!(
                    "\"cute.atomic\"({}, {off}, {}) {{kind = \"{}\", order = \"{}\", scope = \"{}\", type = \"{ptx_type}\"}} : ({}, {}{}) -> ",
                    v(*tensor),
                    operands.join(", "),
                    op.name(),
                    order.name(),
                    scope.name(),
                    mlir_tensor(ty),
                    self.ix,
                    format!(", {t}").repeat(operands.len()),
                );
                match dst {
                    Some(d) => self.define(*d, &format!("{text}{t}"), *span),
                    None => {
                        let loc = self.loc(*span);
                        self.line(&format!("{text}() {loc}"));
                    }
                }
            }
            Inst::AtomicAddFrag { value, tensor, ty, scope, order, span } => {
                let loc = self.loc(*span);
                let vt = self.ty(*value);
                self.line(&format!(
                    "\"cute.atomic_add_frag\"({}, {}) {{order = \"{}\", scope = \"{}\"}} : ({vt}, {}) -> () {loc}",
                    v(*value),
                    v(*tensor),
                    order.name(),
                    scope.name(),
                    mlir_tensor(ty)
                ));
            }
            _ => unreachable!("`inst` sends only atomics here"),
        }
    }
}
