//! The compile budget: one counter of the work elaboration does at compile time.
//!
//! Elaboration evaluates what is static, so a short source can ask for a lot of work: a static
//! loop is unrolled (in a kernel up to 64 trips, 256 over a register fragment; in a host function
//! always, up to 4096), a helper is inlined at every call, a kernel is elaborated once per
//! instance. Each construct is capped on its own, but nesting multiplies: four nested `0..64`
//! loops are 16.7 million statements. So every step — a statement elaborated, a trip of an
//! unrolled loop, an inlined call, a kernel instance, an instruction emitted (a whole-tensor copy
//! or fragment access by its element count: the passes expand it per element) — is counted
//! against one limit across the whole file, and past it elaboration stops with an error at the
//! outermost construct that multiplied (the loop, call or launch that contains the rest), with
//! the count and how to restructure. The limit bounds what comes after elaboration too: the KIR, the MLIR and the PTX
//! grow with the statements elaborated.
//!
//! The same counter carries a cancellation flag: the editor sets it when a newer text supersedes
//! the one being analysed, and elaboration stops at its next step.

use crate::diag::Diagnostic;
use crate::kir::{Inst, TensorTy};
use crate::span::Span;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The steps a file may take by default. Every sample and bench kernel needs at most a quarter of
/// it (`lang/tests/budget.rs` checks; the largest, gemm_sm80, about 70,000); a file of scalar
/// statements that needs all of it takes about 1 s to check and 8 s to build in a release build
/// on 2 cores (docs/language.md, "Compile-time work").
pub const DEFAULT_BUDGET: u64 = 300_000;

/// The steps a kernel instance weighs besides its statements: an MLIR module of its own, its
/// passes and its share of ptxas (about 5 ms each, as much as 200 scalar steps).
pub(crate) const INSTANCE_WEIGHT: u64 = 200;

/// The steps one element of a whole-tensor copy or fragment access weighs: each element becomes
/// a load and a store that the back ends (LLVM's scheduler, ptxas) place among up to 240 live
/// registers, several times the cost of a scalar statement's instructions (measured in
/// docs/language.md, "Compile-time work"; long runs of unvectorized 240-element copies cost more
/// still, which this linear count does not capture).
const ELEMENT_WEIGHT: u64 = 4;

/// How much compile-time work a file may ask for, and a way to stop it early.
#[derive(Clone, Debug)]
pub struct Budget {
    /// The most steps (statements elaborated, unrolled trips, inlined calls, kernel instances).
    pub limit: u64,
    /// When set (by another thread), elaboration stops at its next step with [`cancelled`] errors.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget { limit: DEFAULT_BUDGET, cancel: None }
    }
}

impl Budget {
    /// A budget of `limit` steps, not cancellable.
    pub fn with_limit(limit: u64) -> Self {
        Budget { limit, cancel: None }
    }
}

/// The message of the error elaboration stops with when its budget's cancellation flag is set:
/// the caller that set the flag knows to discard it.
pub const CANCELLED: &str = "elaboration cancelled";

/// Whether `d` is the error of a cancelled elaboration.
pub fn cancelled(d: &Diagnostic) -> bool {
    d.message == CANCELLED
}

/// A construct that multiplies the work of what it contains.
#[derive(Clone, Debug)]
pub(crate) enum Multiplier {
    /// A loop unrolled at compile time, with its trip count.
    Unrolled { span: Span, trips: usize },
    /// A helper inlined at a call.
    Inlined { span: Span, callee: String },
    /// A kernel instance made at a launch.
    Instance { span: Span, kernel: String },
}

impl Multiplier {
    fn span(&self) -> Span {
        match self {
            Multiplier::Unrolled { span, .. }
            | Multiplier::Inlined { span, .. }
            | Multiplier::Instance { span, .. } => *span,
        }
    }

    fn label(&self) -> String {
        match self {
            Multiplier::Unrolled { trips, .. } => format!("unrolled {trips} times at compile time"),
            Multiplier::Inlined { callee, .. } => format!("`{callee}` inlined here"),
            Multiplier::Instance { kernel, .. } => format!("an instance of `{kernel}` elaborated here"),
        }
    }
}

/// The counter of one elaboration: the steps taken, the budget, and the multipliers being
/// elaborated (outermost first).
pub(crate) struct Work {
    used: u64,
    budget: Budget,
    nest: Vec<Multiplier>,
    /// Set once the budget ran out or the elaboration was cancelled: every later step fails too,
    /// so nothing after the error does more work.
    stopped: bool,
}

impl Work {
    pub(crate) fn new(budget: Budget) -> Self {
        Work { used: 0, budget, nest: Vec::new(), stopped: false }
    }

    /// Whether the budget ran out or the elaboration was cancelled: the file's other functions are
    /// not elaborated after that.
    pub(crate) fn stopped(&self) -> bool {
        self.stopped
    }

    /// One step of work at `at`.
    pub(crate) fn step(&mut self, at: Span) -> Result<(), Diagnostic> {
        self.steps(1, at)
    }

    /// `n` steps of work at `at`.
    pub(crate) fn steps(&mut self, n: u64, at: Span) -> Result<(), Diagnostic> {
        self.used += n;
        if self.budget.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)) {
            self.stopped = true;
            return Err(Diagnostic::error(CANCELLED, at, "cancelled"));
        }
        if self.used <= self.budget.limit && !self.stopped {
            return Ok(());
        }
        self.stopped = true;
        Err(self.exhausted(at))
    }

    /// An instruction emitted: its weight is added (and checked at the next step, so that emitting
    /// needs no error path). A whole-tensor access counts its elements: the passes expand it per
    /// element (a register tensor or one copy is at most 240 registers, so one such step is bounded).
    pub(crate) fn emitted(&mut self, inst: &Inst) {
        let elements = |ty: &TensorTy| {
            ELEMENT_WEIGHT * ty.layout.size().ok().and_then(|n| n.as_static()).unwrap_or(1).max(1) as u64
        };
        self.used += match inst {
            Inst::LoadFrag { ty, .. } | Inst::StoreFrag { ty, .. } => elements(ty),
            Inst::Copy { src_ty, .. } => elements(src_ty),
            Inst::FromElements { elems, .. } => elems.len().max(1) as u64,
            _ => 1,
        };
    }

    /// Enters a construct that multiplies the work of what it contains.
    pub(crate) fn enter(&mut self, m: Multiplier) {
        self.nest.push(m);
    }

    pub(crate) fn leave(&mut self) {
        self.nest.pop();
    }

    /// The error at the outermost loop or call that multiplied (else the outermost instance, else
    /// `at`), with the other multipliers labelled.
    fn exhausted(&self, at: Span) -> Diagnostic {
        let limit = self.budget.limit;
        let outer = self
            .nest
            .iter()
            .position(|m| !matches!(m, Multiplier::Instance { .. }))
            .or((!self.nest.is_empty()).then_some(0));
        let (primary, label) = match outer {
            Some(i) => (self.nest[i].span(), self.nest[i].label()),
            None => (at, "here".to_string()),
        };
        let mut d = Diagnostic::error(
            format!("this needs more than {limit} steps of compile-time work (statements elaborated, unrolled loop trips, inlined calls, kernel instances)"),
            primary,
            label,
        );
        // The other multipliers, each once (a loop nest repeats the same spans on every trip), at
        // most a few.
        let mut seen = vec![primary];
        for m in &self.nest {
            if seen.len() > 4 {
                break;
            }
            if !seen.contains(&m.span()) {
                seen.push(m.span());
                d = d.with_secondary(m.span(), m.label());
            }
        }
        let unrolls = self.nest.iter().any(|m| matches!(m, Multiplier::Unrolled { .. }));
        let how = if unrolls {
            "a loop with static bounds is unrolled at compile time (in a kernel up to 64 trips, in a host function always) and nested loops multiply: give the outer loop run-time bounds (a parameter, or a value known only at run time) so it stays a loop"
        } else {
            "nested calls and instances multiply: call the helpers fewer times, or make the repeated work a run-time loop"
        };
        d.with_help(format!(
            "{how}; or raise the budget with `cutec check/build --compile-budget N` (the default is {})",
            DEFAULT_BUDGET
        ))
    }
}
