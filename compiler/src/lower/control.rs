//! Structured control flow: `scf.if`, counted loops (`scf.for`, strided loops by their trip count)
//! and loops a `break` or `return` can end (`scf.while`).

use super::{v, KernelWriter};
use cute_lang::kir::Inst;
use cute_lang::types::Scalar;
use std::collections::HashMap;

impl KernelWriter<'_> {
    /// `if`, `for` and `while`.
    pub(super) fn control(&mut self, inst: &Inst) {
        match inst {
            Inst::If { cond, then, els, span } => {
                let c = self.operand(cond, Scalar::Bool, None, *span);
                self.line(&format!("scf.if {c} {{"));
                self.region(then);
                if !els.is_empty() {
                    self.line("} else {");
                    self.region(els);
                }
                let loc = self.loc(*span);
                self.line(&format!("}} {loc}"));
            }
            Inst::For { iv, lb, ub, step, body, exit, span } => {
                if self.non_negative(lb) && self.positive(step) {
                    self.non_negative_values.insert(*iv);
                }
                let (l, u, s) = (self.int(lb, *span), self.int(ub, *span), self.int(step, *span));
                // The counter is an index integer: `i64` in a 64-bit kernel, like its bounds.
                let ix = self.ix;
                if ix != "i32" {
                    self.wide_values.insert(*iv);
                }
                let loc = self.loc(*span);
                let Some(exit) = exit else {
                    if step.as_static() != Some(1)
                        && self.non_negative(lb)
                        && self.non_negative(ub)
                        && self.positive(step)
                    {
                        // A strided loop (`for j in tid..n step block_dim.x`, `... step 32`): counted
                        // from 0 to the trip count, `iv = lb + t * step`. LLVM does not count the
                        // trips of `iv += step` with a bound it cannot relate to the start (the add
                        // might wrap for all it knows), so it would neither unroll the loop nor
                        // keep several loads in flight; with the count known it does
                        // (samples/row_sum.cute's kernels).
                        let span = *span;
                        let zero = self.op(&format!("arith.constant 0 : {ix}"), span);
                        let one = self.op(&format!("arith.constant 1 : {ix}"), span);
                        let over = self.op(&format!("arith.subi {u}, {l} : {ix}"), span);
                        let trips = self.op(&format!("arith.ceildivsi {over}, {s} : {ix}"), span);
                        let trips = self.op(&format!("arith.maxsi {trips}, {zero} : {ix}"), span);
                        let t = self.tmp();
                        self.line(&format!("scf.for {t} = {zero} to {trips} step {one} : {ix} {{"));
                        self.indent += 1;
                        let scaled = self.op(&format!("arith.muli {t}, {s} : {ix}"), span);
                        self.define(*iv, &format!("arith.addi {l}, {scaled} : {ix}"), span);
                        self.indent -= 1;
                        self.region(body);
                        self.line(&format!("}} {loc}"));
                        return;
                    }
                    self.line(&format!("scf.for {} = {l} to {u} step {s} : {ix} {{", v(*iv)));
                    self.region(body);
                    self.line(&format!("}} {loc}"));
                    return;
                };
                // A loop a `break` or `return` can end: an `scf.while` carrying the counter, which
                // goes on while `iv < ub` (signed, as `scf.for` compares) and the exit test is false.
                let (done, before) = (self.tmp(), self.tmp());
                self.line(&format!("{done} = scf.while ({before} = {l}) : ({ix}) -> {ix} {{"));
                self.indent += 1;
                self.memo.push(HashMap::new());
                let lt = self.op(&format!("arith.cmpi slt, {before}, {u} : {ix}"), *span);
                self.insts(&exit.insts);
                let stop = self.operand(&exit.value, Scalar::Bool, None, *span);
                let t = self.op("arith.constant true", *span);
                let go_on = self.op(&format!("arith.xori {stop}, {t} : i1"), *span);
                let go = self.op(&format!("arith.andi {lt}, {go_on} : i1"), *span);
                self.line(&format!("scf.condition({go}) {before} : {ix} {loc}"));
                self.memo.pop();
                self.indent -= 1;
                self.line("} do {");
                self.line(&format!("^bb0({}: {ix}):", v(*iv)));
                self.indent += 1;
                self.memo.push(HashMap::new());
                self.insts(body);
                let next = self.op(&format!("arith.addi {}, {s} : {ix}", v(*iv)), *span);
                self.line(&format!("scf.yield {next} : {ix} {loc}"));
                self.memo.pop();
                self.indent -= 1;
                self.line(&format!("}} {loc}"));
            }
            Inst::While { cond, body, span } => {
                let loc = self.loc(*span);
                self.line("scf.while : () -> () {");
                self.indent += 1;
                self.memo.push(HashMap::new());
                self.insts(&cond.insts);
                let c = self.operand(&cond.value, Scalar::Bool, None, *span);
                self.line(&format!("scf.condition({c}) {loc}"));
                self.memo.pop();
                self.indent -= 1;
                self.line("} do {");
                self.indent += 1;
                self.memo.push(HashMap::new());
                self.insts(body);
                self.line(&format!("scf.yield {loc}"));
                self.memo.pop();
                self.indent -= 1;
                self.line(&format!("}} {loc}"));
            }
            _ => unreachable!("`inst` sends only control flow here"),
        }
    }
}
