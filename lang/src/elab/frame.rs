//! The state of elaborating one function (a kernel instance, a host function or a `const` item):
//! its scopes, the instructions being emitted and the values they define.

use super::flow::{self, FnCtx};
use super::value::Value;
use super::{Program, R};
use crate::ast::Ident;
use crate::diag::Diagnostic;
use crate::kir::{self, Inst, ValueId, ValueTy};
use crate::span::Span;
use crate::types::Scalar;
use std::collections::HashMap;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    Kernel,
    Host,
    Const,
}

pub(crate) struct Frame<'p, 'f> {
    pub(super) prog: &'p mut Program<'f>,
    pub(crate) mode: Mode,
    pub(super) scopes: Vec<HashMap<String, Value>>,
    /// The instruction lists being filled: the function body, then nested regions.
    pub(super) regions: Vec<Vec<Inst>>,
    /// Special registers and allocations, placed at the top of the kernel.
    pub(crate) specials: Vec<Inst>,
    pub(super) special_values: HashMap<String, Value>,
    pub(super) value_types: Vec<ValueTy>,
    pub(crate) steps: Vec<kir::HostStep>,
    pub(super) requires: Vec<kir::Require>,
    /// In a kernel, the value ids of its parameters, and the tensor maps its `tma_load`s use
    /// (`param` a value id until the kernel is built).
    pub(super) kernel_params: Vec<ValueId>,
    pub(super) tmas: Vec<kir::TmaDesc>,
    /// In a kernel, the launch conditions a view's partial tiles need, held until the view (or one
    /// of its own views) is accessed: an unpredicated access of a partial tile would overrun, a
    /// predicated copy (`copy_if`) of it does not. `staged` collects them for the view being made.
    pub(super) pending: HashMap<ValueId, Vec<kir::Require>>,
    pub(super) staged: Vec<kir::Require>,
    /// Set while `copy_if` emits its copies: their accesses are guarded, so they need no launch
    /// condition.
    pub(super) predicated: bool,
    /// Run-time `assert`s of a host function.
    pub(super) asserts: Vec<kir::Assert>,
    /// In a host function, the run-time conditions (`n < 1024`) that `bool` values stand for.
    pub(super) host_conds: HashMap<ValueId, kir::HostCond>,
    pub(super) inline_depth: usize,
    /// How many run-time regions (branches, loop bodies, guards) enclose the code being
    /// elaborated: a jump to a target at the same depth is taken at compile time.
    pub(super) depth: usize,
    /// The loops (innermost last) and functions (kernel, host, inlined `fn` calls) being
    /// elaborated: the targets of `break`/`continue` and `return`.
    pub(super) loops: Vec<flow::LoopCtx>,
    pub(super) fns: Vec<FnCtx>,
    /// The bits a kernel computes its index math in (`index(i64)`: 64), which bound the static
    /// element offsets and strides it may use.
    pub(super) index_bits: u32,
}

impl<'p, 'f> Frame<'p, 'f> {
    pub(super) fn new(prog: &'p mut Program<'f>, mode: Mode) -> Self {
        Frame {
            prog,
            mode,
            scopes: vec![HashMap::new()],
            regions: vec![Vec::new()],
            specials: Vec::new(),
            special_values: HashMap::new(),
            value_types: Vec::new(),
            steps: Vec::new(),
            requires: Vec::new(),
            kernel_params: Vec::new(),
            tmas: Vec::new(),
            pending: HashMap::new(),
            staged: Vec::new(),
            predicated: false,
            asserts: Vec::new(),
            host_conds: HashMap::new(),
            inline_depth: 0,
            depth: 0,
            loops: Vec::new(),
            fns: Vec::new(),
            index_bits: 32,
        }
    }

    pub(super) fn fresh(&mut self, ty: ValueTy) -> ValueId {
        self.value_types.push(ty);
        (self.value_types.len() - 1) as ValueId
    }

    pub(super) fn emit(&mut self, inst: Inst) {
        if !self.predicated {
            if let Inst::Load { ty, at, span, .. } | Inst::Store { ty, at, span, .. } = &inst {
                self.require_access_in_bounds(ty, at, *span);
            }
            let accessed: &[ValueId] = match &inst {
                Inst::Load { tensor, .. }
                | Inst::Store { tensor, .. }
                | Inst::LoadFrag { tensor, .. }
                | Inst::StoreFrag { tensor, .. }
                | Inst::Atomic { tensor, .. }
                | Inst::AtomicAddFrag { tensor, .. } => std::slice::from_ref(tensor),
                Inst::Copy { src, dst, .. } => &[*src, *dst],
                _ => &[],
            };
            for &id in accessed {
                self.commit_requires(id);
            }
        }
        let types = &self.value_types;
        let fragment_size = |id: ValueId| match types.get(id as usize) {
            Some(ValueTy::Frag(f)) => f.len() as u64,
            _ => 1,
        };
        self.prog.work.emitted(&inst, fragment_size);
        if let Some(r) = self.regions.last_mut() {
            r.push(inst);
        }
    }

    pub(super) fn bind(&mut self, name: &str, v: Value) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), v);
        }
    }

    /// Binds a name written at `at` (a parameter, a pattern, a loop variable), telling the observer.
    pub(super) fn bind_at(&mut self, name: &Ident, v: Value) {
        self.prog.observer.binding(name.span, &v);
        self.bind(&name.name, v);
    }

    /// 8-bit floats have no arithmetic (none on the GPU, none in CuTe DSL): `what` on a `ty`
    /// value is refused with a pointer to the conversion.
    pub(crate) fn no_fp8_arith(&self, ty: Scalar, what: &str, span: Span) -> R<()> {
        if !ty.is_fp8() {
            return Ok(());
        }
        Err(Diagnostic::error(
            format!("{what} on `{}` values: 8-bit floats are storage types with no arithmetic", ty.name()),
            span,
            format!("`{}` here", ty.name()),
        )
        .with_help(format!(
            "compute in f32 as CuTe DSL does: `x.to(f32)`, and convert a result back with `.to({})`",
            ty.name()
        )))
    }

    /// Fails unless this frame can emit run-time instructions (kernels only).
    pub(super) fn need_kernel(&self, what: &str, span: Span) -> R<()> {
        match self.mode {
            Mode::Kernel => Ok(()),
            Mode::Host => {
                Err(Diagnostic::error(format!("{what} is not available in host functions"), span, "needs a kernel")
                    .with_help("host functions compute layouts, sizes and launches; do this work in a kernel"))
            }
            Mode::Const => Err(Diagnostic::error(format!("{what} is not a compile-time value"), span, "not constant")),
        }
    }

    /// Elaborates `b` into a fresh region and returns its instructions.
    pub(super) fn region(&mut self, f: impl FnOnce(&mut Self) -> R<()>) -> R<Vec<Inst>> {
        self.regions.push(Vec::new());
        let r = f(self);
        let insts = self.regions.pop().unwrap_or_default();
        r.map(|_| insts)
    }

    pub(super) fn lookup(&self, name: &str) -> Option<Value> {
        self.scopes.iter().rev().find_map(|s| s.get(name).cloned()).or_else(|| self.prog.consts.get(name).cloned())
    }
}
