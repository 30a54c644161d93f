//! The compile budget: one counter of the work elaboration does at compile time.
//!
//! Elaboration evaluates what is static, so a short source can ask for a lot of work: a static
//! loop is unrolled (in a kernel up to 64 trips, 256 over a register fragment; in a host function
//! always, up to 4096), a helper is inlined at every call, a kernel is elaborated once per
//! instance. Each construct is capped on its own, but nesting multiplies: four nested `0..64`
//! loops are 16.7 million statements. So every step — a statement elaborated, a trip of an
//! unrolled loop, an inlined call, a kernel instance, an instruction emitted — is counted against
//! one limit across the whole file, and past it elaboration stops with an error at the outermost
//! construct that multiplied (the loop, call or launch that contains the rest), with the count and
//! how to restructure.
//!
//! The limit bounds what comes after elaboration too, so an instruction weighs what it costs the
//! back ends, measured (`scripts/compile_cost_probe.py` finds the largest program of each kind the
//! budget admits and times its build): a whole-tensor copy or fragment access by the accesses the
//! passes expand it into, an element-wise fragment operation by its elements, a division or math
//! function by the code ptxas makes of it; and since LLVM and ptxas schedule a kernel's
//! instructions in time growing with the square of their number, each instruction weighs a step
//! more per `SCHEDULE_SPREAD` its kernel emitted before it.
//!
//! The same counter carries a cancellation flag: the editor sets it when a newer text supersedes
//! the one being analysed, and elaboration stops at its next step.

use crate::diag::Diagnostic;
use crate::kir::{BinaryOp, CopyOp, Inst, MathFn, Operand, TensorTy, ValueId};
use crate::span::Span;
use crate::types::{MemSpace, Scalar};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The steps a file may take by default. Every sample and bench kernel needs at most a quarter of
/// it (`lang/tests/budget.rs` checks; the largest, gemm_sm80, about 44,000); the largest program
/// of each costly kind it admits builds in at most 4.5 s in a release build on 2 cores
/// (`scripts/compile_cost_probe.py`; docs/language.md, "Compile-time work").
pub const DEFAULT_BUDGET: u64 = 300_000;

/// The steps a kernel instance weighs besides its statements: an MLIR module of its own, its
/// passes and its share of ptxas (about 5 ms each, as much as 200 scalar steps).
pub(crate) const INSTANCE_WEIGHT: u64 = 200;

/// The steps one memory access weighs (a scalar load or store, or one vector access of a
/// whole-tensor copy or fragment load/store, which the passes expand into accesses as wide as the
/// layout allows): LLVM's GVN and ptxas order each against the kernel's other accesses, several
/// times the cost of an arithmetic instruction (measured in docs/language.md, "Compile-time
/// work"). Other instructions weigh a step each; an element-wise operation on a fragment, one per
/// element.
const ACCESS_WEIGHT: u64 = 8;

/// What one element of an integer division or remainder by a run-time value costs, in plain
/// instructions: one PTX `div`/`rem`, which ptxas expands and schedules at about 17 ms each
/// (a remainder over a 240-element fragment took it 4.2 s); a float division (2 ms), 8.
const INT_DIVISION: u64 = 40;
const FLOAT_DIVISION: u64 = 8;

/// The steps one plain-instruction equivalent of an expanded operation (a division, a math
/// function) weighs: ptxas spends more on them than on as many plain instructions (19 instances of
/// a kernel taking `sin` of 64 elements took 7 s to build when they weighed 1).
const EXPANDED_WEIGHT: u64 = 3;

/// The instructions of one kernel after which each further one weighs a step more: LLVM's and
/// ptxas's scheduling of a kernel grows with the square of its instructions in one block, so an
/// instruction weighs its weight plus one step per `SCHEDULE_SPREAD` instructions the kernel
/// emitted before it. A kernel of the samples emits at most a few thousand; the budget admits
/// about 17,000 in one kernel.
const SCHEDULE_SPREAD: u64 = 512;

/// How much compile-time work a file may ask for, and a way to stop it early.
#[derive(Clone, Debug)]
pub struct Budget {
    /// The most steps (statements elaborated, unrolled trips, inlined calls, kernel instances,
    /// instructions emitted).
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
    /// The instructions the kernel being elaborated has emitted so far (an element-wise operation
    /// on a fragment counted per element, a whole-tensor access per vector access).
    instructions: u64,
}

impl Work {
    pub(crate) fn new(budget: Budget) -> Self {
        Work { used: 0, budget, nest: Vec::new(), stopped: false, instructions: 0 }
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
    /// needs no error path). A whole-tensor access counts the accesses the passes expand it into,
    /// an element-wise fragment operation its elements (`fragment_size` gives a fragment value's).
    pub(crate) fn emitted(&mut self, inst: &Inst, fragment_size: impl Fn(ValueId) -> u64) {
        let per = |frag: &Option<usize>| frag.map_or(1, |n| n as u64);
        let cost = match inst {
            Inst::Load { ty, .. } | Inst::Store { ty, .. } | Inst::Atomic { ty, .. } => side(ty, 1),
            Inst::AtomicAddFrag { ty, .. } => {
                let reds =
                    cute_layout::atom::atomic::red_fragment_for(ty.elem, &ty.layout, ty.align).map_or(1, |f| f.elems);
                side(ty, elements(ty).div_ceil(reds as u64))
            }
            Inst::LoadFrag { ty, .. } | Inst::StoreFrag { ty, .. } => side(ty, chunks(ty, None)),
            Inst::Copy { src_ty, dst_ty, width, op, .. } => match op.lane_elements() {
                // One `ldmatrix` gives each lane its values, one `stmatrix` takes them; a `cp.async`
                // moves a chunk without registers; a universal copy loads and then stores each chunk.
                Some((_, values)) if op.is_ldmatrix() => Cost::accesses(elements(src_ty) / u64::from(values).max(1)),
                Some((values, _)) => Cost::accesses(elements(src_ty) / u64::from(values).max(1)),
                None if matches!(op, CopyOp::CpAsync { .. }) => {
                    Cost::accesses(chunks(src_ty, *width).max(chunks(dst_ty, *width)))
                }
                None => side(src_ty, chunks(src_ty, *width)).and(side(dst_ty, chunks(dst_ty, *width))),
            },
            Inst::Binary { op: BinaryOp::Div | BinaryOp::Rem, ty, frag, b, .. } if !is_static(b) => {
                Cost::expanded(if ty.is_int() { INT_DIVISION } else { FLOAT_DIVISION } * per(frag))
            }
            Inst::Math { fun, ty, frag, .. } => Cost::expanded(math_instructions(*fun, *ty) * per(frag)),
            Inst::Binary { frag, .. }
            | Inst::Neg { frag, .. }
            | Inst::Not { frag, .. }
            | Inst::Cmp { frag, .. }
            | Inst::Convert { frag, .. }
            | Inst::Select { frag, .. }
            | Inst::Fma { frag, .. } => Cost::plain(per(frag)),
            Inst::Reduce { frag, .. } => Cost::plain(fragment_size(*frag)),
            Inst::FromElements { elems, .. } => Cost::plain(elems.len() as u64),
            _ => Cost::plain(1),
        };
        // Instructions m .. m + u weigh their weight plus `k / SCHEDULE_SPREAD` each: their sum.
        let units = cost.scheduling_units().max(1);
        let m = self.instructions;
        let scheduling = (units * (2 * m + units - 1) / 2) / SCHEDULE_SPREAD;
        self.used = self.used.saturating_add(cost.weight().max(1)).saturating_add(scheduling);
        self.instructions += units;
    }

    /// A kernel instance's elaboration begins: its instructions are counted from none (each is a
    /// function of its own for LLVM and ptxas).
    pub(crate) fn kernel_begins(&mut self) {
        self.instructions = 0;
    }

    /// The steps taken so far.
    pub(crate) fn used(&self) -> u64 {
        self.used
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
            None => (at, "the budget runs out here".to_string()),
        };
        let mut d = Diagnostic::error(
            format!("this needs more than {limit} steps of compile-time work (statements elaborated, unrolled loop trips, inlined calls, kernel instances, instructions emitted)"),
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
        let inlines = self.nest.iter().any(|m| matches!(m, Multiplier::Inlined { .. }));
        let how = if unrolls {
            "a loop with static bounds is unrolled at compile time (in a kernel up to 64 trips, in a host function always) and nested loops multiply: give the outer loop run-time bounds (a parameter, or a value known only at run time) so it stays a loop"
        } else if inlines {
            "nested calls and instances multiply: call the helpers fewer times, or make the repeated work a run-time loop"
        } else {
            "the kernel's instructions take the back ends longer than the budget allows (each weighs what it costs them, and scheduling grows with their square): make repeated work a run-time loop, or spread it over more threads or kernels"
        };
        d.with_help(format!(
            "{how}; or raise the budget with `cutec check/build --compile-budget N` (the default is {})",
            DEFAULT_BUDGET
        ))
    }
}

/// A tensor's elements (1 when its size is dynamic: a whole-tensor access needs a static size).
fn elements(ty: &TensorTy) -> u64 {
    ty.layout.size().ok().and_then(|n| n.as_static()).unwrap_or(1).max(1) as u64
}

/// What an instruction costs the back ends, by kind: memory accesses, plain instructions, and
/// plain-instruction equivalents of operations ptxas expands (divisions, math functions).
#[derive(Clone, Copy, Default)]
struct Cost {
    accesses: u64,
    plain: u64,
    expanded: u64,
}

impl Cost {
    fn accesses(n: u64) -> Self {
        Cost { accesses: n, ..Cost::default() }
    }

    fn plain(n: u64) -> Self {
        Cost { plain: n, ..Cost::default() }
    }

    fn expanded(n: u64) -> Self {
        Cost { expanded: n, ..Cost::default() }
    }

    fn and(self, o: Cost) -> Self {
        Cost { accesses: self.accesses + o.accesses, plain: self.plain + o.plain, expanded: self.expanded + o.expanded }
    }

    /// The steps it weighs by itself.
    fn weight(self) -> u64 {
        self.accesses * ACCESS_WEIGHT + self.plain + self.expanded * EXPANDED_WEIGHT
    }

    /// What it adds to its kernel's count of instructions to schedule. An access counts twice
    /// (ordering accesses is most of the scheduling: a kernel of 10,000 unvectorized accesses took
    /// ptxas 6 s, one of 16,000 fragment multiplies 3.5 s).
    fn scheduling_units(self) -> u64 {
        2 * self.accesses + self.plain + self.expanded
    }
}

/// `n` accesses of a tensor: register moves for a register tensor (LLVM keeps its elements in
/// registers), memory accesses for another.
fn side(ty: &TensorTy, n: u64) -> Cost {
    if ty.space == MemSpace::Rmem {
        Cost::plain(n)
    } else {
        Cost::accesses(n)
    }
}

/// The accesses moving the whole tensor to or from registers takes: as wide as its layout and
/// alignment allow (`cute-vectorize`'s width), at most `cap` elements each.
fn chunks(ty: &TensorTy, cap: Option<u32>) -> u64 {
    let width = cute_layout::vector_width(&ty.layout, ty.align, ty.elem.size_bytes()).unwrap_or(1);
    let width = cap.map_or(width, |c| width.min(c)).max(1);
    elements(ty).div_ceil(u64::from(width))
}

/// What one element of a math function costs the back ends, in plain instructions: LLVM inlines
/// libdevice's (`sin` is 86 PTX instructions with its slow path for large arguments), and ptxas's
/// time per element, measured on a 240-element f32 fragment, is what counts (`sin` 10 ms, about 24
/// multiplies' worth; `log` 8; `tanh` 6; `exp` 3; the rest one hardware instruction).
fn math_instructions(fun: MathFn, ty: Scalar) -> u64 {
    let f32 = match fun {
        MathFn::Sin | MathFn::Cos | MathFn::Tan => 48,
        MathFn::Log | MathFn::Log2 | MathFn::Log10 | MathFn::Erf => 16,
        MathFn::Tanh => 12,
        MathFn::Exp => 6,
        MathFn::Sqrt | MathFn::Rsqrt | MathFn::Exp2 | MathFn::Floor | MathFn::Ceil | MathFn::Round | MathFn::Abs => 1,
    };
    // The f64 functions are longer: as costly as `sin` but the single instructions.
    if ty == Scalar::F64 && f32 > 1 {
        48
    } else {
        f32
    }
}

/// Whether an operand is a static integer (a division by it is a multiply and shifts).
fn is_static(x: &Operand) -> bool {
    matches!(x, Operand::Int(i) if i.as_static().is_some())
}
