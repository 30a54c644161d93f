//! Tensor cores: `cute.mma` (SM80), `cute.wgmma` and the warpgroup's fences, groups and register
//! reallocation (SM90).

use super::{mlir_tensor, v, KernelWriter};
use cute_lang::kir::{self, Inst};
use cute_lang::types::Scalar;

impl KernelWriter<'_> {
    /// MMA and warpgroup ops.
    pub(super) fn mma(&mut self, inst: &Inst) {
        match inst {
            Inst::Mma { dst, atom, a, b, c, span } => {
                let (ta, tb, tc, td) = (self.ty(*a), self.ty(*b), self.ty(*c), self.ty(*dst));
                self.define(
                    *dst,
                    &format!(
                        "\"cute.mma\"({}, {}, {}) {{atom = \"{}\"}} : ({ta}, {tb}, {tc}) -> {td}",
                        v(*a),
                        v(*b),
                        v(*c),
                        atom.name
                    ),
                    *span,
                );
            }
            Inst::Wgmma { dst, atom, a, a_ty, b, b_ty, c, scale_d, span } => {
                let (tc, td) = (self.ty(*c), self.ty(*dst));
                let scale = scale_d.as_ref().map(|p| self.operand(p, Scalar::Bool, None, *span));
                let (so, st) = match &scale {
                    Some(p) => (format!(", {p}"), ", i1"),
                    None => (String::new(), ""),
                };
                // An RS atom's A is a register fragment (a vector), an SS atom's a shared tensor.
                let ta = a_ty.as_ref().map(mlir_tensor).unwrap_or_else(|| self.ty(*a));
                self.define(
                    *dst,
                    &format!(
                        "\"cute.wgmma\"({}, {}, {}{so}) {{atom = \"{}\"}} : ({ta}, {}, {tc}{st}) -> {td}",
                        v(*a),
                        v(*b),
                        v(*c),
                        atom.name,
                        mlir_tensor(b_ty)
                    ),
                    *span,
                );
            }
            Inst::Warpgroup { op, span } => {
                let loc = self.loc(*span);
                match op {
                    kir::WarpgroupOp::Fence => self.line(&format!("\"cute.warpgroup_fence\"() : () -> () {loc}")),
                    kir::WarpgroupOp::CommitGroup => self.line(&format!("nvvm.wgmma.commit.group.sync.aligned {loc}")),
                    kir::WarpgroupOp::WaitGroup(n) => self.line(&format!("\"cute.warpgroup_wait_group\"() {{n = {n} : i64}} : () -> () {loc}")),
                    kir::WarpgroupOp::FenceProxyAsync => self.line(&format!("nvvm.fence.proxy {{kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}} {loc}")),
                    kir::WarpgroupOp::FenceMbarrierInit => self.line(&format!("nvvm.fence.mbarrier.init {loc}")),
                    kir::WarpgroupOp::RegAlloc(n) => self.line(&format!("nvvm.setmaxregister increase {n} {loc}")),
                    kir::WarpgroupOp::RegDealloc(n) => self.line(&format!("nvvm.setmaxregister decrease {n} {loc}")),
                }
            }
            _ => unreachable!("`inst` sends only MMA and warpgroup ops here"),
        }
    }
}
