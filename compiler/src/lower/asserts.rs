//! A kernel's run-time `assert` (CUDA's device `assert`): the check, and where it fails, one
//! `printf` of where (file:line, kernel, block and thread) and what, then `trap`, which ends the
//! launch with an error the runtime reports. Left out whole when asserts are off.

use super::KernelWriter;
use cute_lang::kir::Inst;
use cute_lang::types::Scalar;

impl KernelWriter<'_> {
    pub(super) fn assert(&mut self, inst: &Inst) {
        let Inst::Assert { cond, message, span } = inst else { unreachable!("`inst` sends only `assert` here") };
        if !self.asserts {
            return;
        }
        let span = *span;
        self.insts(&cond.insts);
        let holds = self.operand(&cond.value, Scalar::Bool, None, span);
        let yes = self.op("arith.constant true", span);
        let failed = self.op(&format!("arith.xori {holds}, {yes} : i1"), span);
        self.line(&format!("scf.if {failed} {{"));
        self.indent += 1;
        let mut names = Vec::new();
        for op in ["gpu.block_id", "gpu.thread_id"] {
            for dim in ["x", "y", "z"] {
                let i = self.op(&format!("{op} {dim}"), span);
                names.push(self.op(&format!("arith.index_cast {i} : index to i32"), span));
            }
        }
        let (file, line, _) = self.lines.locate(span.start);
        let format = format!(
            "{}:{line}: kernel {}: block (%u,%u,%u), thread (%u,%u,%u): assertion failed: {}\n",
            file.replace('%', "%%"),
            self.k.source_name,
            message.replace('%', "%%")
        );
        self.printf_line(&format, &names, &["i32"; 6], span);
        let loc = self.loc(span);
        self.line(&format!("llvm.intr.trap {loc}"));
        self.indent -= 1;
        let loc = self.loc(span);
        self.line(&format!("}} {loc}"));
    }
}
