//! The producer and consumer states of a pipeline (CuTe DSL's `PipelineState`): the stage a role
//! is at and the parity of its round, advanced together by `advance()`.
//!
//! A state starts as a compile-time count of the stages it has passed (its stage `count % STAGES`,
//! its parity `(count / STAGES) % 2`), so that a ring walked under compile-time control flow (an
//! unrolled loop) gets constant barrier offsets and parities, the PTX a hand-written ring has.
//! Before a run-time `if` or loop whose statements advance it (`st.advance()` written in them), it
//! moves into two `i32` register cells, index and phase, as a hand-written ring's `let mut stage`
//! and `let mut phase`, and stays there: `advance()` is then `index += 1` and, past the last
//! stage, `index = 0; phase = 1 - phase`. A state passed by name to a function that advances its
//! parameter (`fn produce(pipe, st) { ... st.advance(); }`, through any depth of such calls)
//! counts as advanced there, so a producer or consumer loop can be a function of its own. A
//! state advanced otherwise out of sight (kept in a tuple, say) is not seen in time, and is
//! refused where it is advanced.

use super::builtins::args::{arity, Arg};
use super::pipeline::Pipeline;
use super::value::Value;
use super::{Frame, R};
use crate::ast::{BinOp, Block, Expr, ExprKind, Function, Stmt};
use crate::diag::Diagnostic;
use crate::kir::{Inst, Operand, ValueId};
use crate::span::Span;
use crate::types::Scalar;
use cute_layout::Int;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Where a state's stage and parity are.
#[derive(Clone, Copy, Debug)]
enum At {
    /// Known at compile time: the stages passed so far.
    Count(i64),
    /// In register cells (`i32`): the stage index and the round's parity.
    Cells { index: ValueId, phase: ValueId },
}

/// A producer or consumer state of one pipeline.
#[derive(Debug)]
pub struct PipeState {
    pub(super) pipe: Arc<Pipeline>,
    pub(super) producer: bool,
    at: Mutex<At>,
    /// The run-time control-flow depth at which the state was made (`Frame::depth`).
    depth: usize,
    pub(super) span: Span,
}

impl PartialEq for PipeState {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl PipeState {
    pub(super) fn new(pipe: Arc<Pipeline>, producer: bool, depth: usize, span: Span) -> PipeState {
        PipeState { pipe, producer, at: Mutex::new(At::Count(0)), depth, span }
    }

    fn at(&self) -> At {
        *self.at.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_at(&self, at: At) {
        *self.at.lock().unwrap_or_else(|e| e.into_inner()) = at;
    }

    pub(super) fn role(&self) -> &'static str {
        if self.producer {
            "producer"
        } else {
            "consumer"
        }
    }

    /// The stage index, 0 to STAGES - 1 (read from its cell here when it is in one).
    pub(super) fn index(&self, f: &mut Frame, span: Span) -> Int {
        match self.at() {
            At::Count(c) => Int::S(c % self.pipe.stages),
            At::Cells { index, .. } => Int::var(f.get(index, span), 1),
        }
    }

    /// The parity of the round, 0 or 1.
    pub(super) fn phase(&self, f: &mut Frame, span: Span) -> Int {
        match self.at() {
            At::Count(c) => Int::S((c / self.pipe.stages) % 2),
            At::Cells { phase, .. } => Int::var(f.get(phase, span), 1),
        }
    }

    /// Moves the state into register cells, here (before a run-time `if` or loop that advances it).
    fn to_cells(&self, f: &mut Frame, span: Span) -> R<()> {
        let At::Count(c) = self.at() else { return Ok(()) };
        let (stages, depth) = (self.pipe.stages, f.depth);
        let index = f.cell(Scalar::I32, span)?;
        let phase = f.cell(Scalar::I32, span)?;
        f.set(index, Operand::Int(Int::S(c % stages)), span);
        f.set(phase, Operand::Int(Int::S((c / stages) % 2)), span);
        self.set_at(At::Cells { index, phase });
        // Made under the control flow that began here: the cells hold the state on every path.
        debug_assert!(depth >= self.depth);
        Ok(())
    }

    fn advance(&self, f: &mut Frame, span: Span) -> R<()> {
        match self.at() {
            At::Count(_) if f.depth > self.depth => Err(Diagnostic::error(
                "a pipeline state kept at compile time cannot be advanced here, under run-time control flow",
                span,
                "advanced under a run-time `if` or loop",
            )
            .with_secondary(self.span, "the state is made here")
            .with_help("the compiler keeps a state in registers from before a run-time `if` or loop whose statements call `st.advance()`, or pass `st` by name to a function that does: write the `advance()` there (not after a run-time `break` or `return`, nor on a state kept in a tuple), or make the state inside it")),
            At::Count(c) => {
                self.set_at(At::Count(c + 1));
                Ok(())
            }
            At::Cells { index, phase } => {
                // A hand-written ring's `stage += 1; if stage == STAGES { stage = 0; phase = 1 - phase; }`.
                let i = Value::Int(Int::var(f.get(index, span), 1));
                let next = f.binary(BinOp::Add, i, Value::Int(Int::ONE), span, span, span)?;
                let next_op = f.operand(&next, Scalar::I32, span)?;
                f.set(index, next_op, span);
                let wrap = f.binary(BinOp::Eq, next, Value::Int(Int::S(self.pipe.stages)), span, span, span)?;
                let Value::Scalar(Scalar::Bool, wrap) = wrap else {
                    unreachable!("a run-time index compared to a constant is a run-time bool")
                };
                let then = f.region(|f| {
                    f.set(index, Operand::Int(Int::ZERO), span);
                    let p = Value::Int(Int::var(f.get(phase, span), 1));
                    let flipped = f.binary(BinOp::Sub, Value::Int(Int::ONE), p, span, span, span)?;
                    let flipped = f.operand(&flipped, Scalar::I32, span)?;
                    f.set(phase, flipped, span);
                    Ok(())
                })?;
                f.emit(Inst::If { cond: Operand::Value(wrap), then, els: Vec::new(), span });
                Ok(())
            }
        }
    }
}

/// How `print` shows a state.
impl std::fmt::Display for PipeState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at() {
            At::Count(c) => write!(
                f,
                "PipelineState({}, index {}, phase {})",
                self.role(),
                c % self.pipe.stages,
                (c / self.pipe.stages) % 2
            ),
            At::Cells { .. } => write!(f, "PipelineState({}, index and phase in registers)", self.role()),
        }
    }
}

pub(crate) const STATE_METHODS: &[&str] = &["advance", "index", "phase", "count"];

/// `state.method()`.
pub(super) fn state_method(f: &mut Frame, st: &PipeState, m: &str, args: &[Arg], span: Span) -> R<Value> {
    arity(m, args, 0, 0, span, &format!("state.{m}()"))?;
    Ok(Value::Int(match m {
        "advance" => return st.advance(f, span).map(|()| Value::Unit),
        "index" => st.index(f, span),
        "phase" => st.phase(f, span),
        "count" => match st.at() {
            At::Count(c) => Int::S(c),
            At::Cells { .. } => {
                return Err(Diagnostic::error(
                    "`count()` is known only while a state is advanced at compile time; this one is advanced under run-time control flow",
                    span,
                    "count known only at run time",
                )
                .with_secondary(st.span, "the state is made here")
                .with_help("use `index()` and `phase()`, which are run-time values here"))
            }
        },
        _ => unreachable!("dispatched on STATE_METHODS"),
    }))
}

impl Frame<'_, '_> {
    /// Before a run-time `if` or loop over `stmts` (and `exprs`, its condition): moves the states
    /// that the statements advance into register cells.
    pub(super) fn states_to_cells<'s>(
        &mut self,
        stmts: impl IntoIterator<Item = &'s Stmt>,
        exprs: &[&Expr],
        span: Span,
    ) -> R<()> {
        let mut scan = Advanced { functions: &self.prog.functions, names: Vec::new(), calls: 0 };
        for s in stmts {
            scan.stmt(s, None);
        }
        for e in exprs {
            scan.expr(e, None);
        }
        for n in scan.names {
            if let Some(Value::PipeState(st)) = self.lookup(&n) {
                if st.depth == self.depth {
                    st.to_cells(self, span)?;
                }
            }
        }
        Ok(())
    }
}

/// The scan for the states a run-time `if` or loop advances: the names `n` of its `n.advance()`
/// calls, and of the arguments `n` of its calls to functions that advance the parameter `n` is
/// passed as (through their calls too).
struct Advanced<'a, 'f> {
    functions: &'a HashMap<String, &'f Function>,
    names: Vec<String>,
    /// Function bodies entered so far: a bound on the scan (recursion, or a very deep call tree).
    calls: usize,
}

/// The bodies a scan enters at most, in all.
const MAX_SCANNED_CALLS: usize = 256;

impl Advanced<'_, '_> {
    /// The scanned `if` or loop's name for `n`: `n` itself there; inside a called function, the
    /// caller's name its parameter `n` stands for (`names`), none for the function's own names.
    fn outer(n: &str, names: Option<&HashMap<String, String>>) -> Option<String> {
        match names {
            Some(map) => map.get(n).cloned(),
            None => Some(n.to_string()),
        }
    }

    /// `n.advance()` on `n` found.
    fn found(&mut self, n: &str, names: Option<&HashMap<String, String>>) {
        if let Some(n) = Self::outer(n, names) {
            if !self.names.contains(&n) {
                self.names.push(n);
            }
        }
    }

    fn stmt(&mut self, s: &Stmt, names: Option<&HashMap<String, String>>) {
        match s {
            Stmt::Let { value, .. } | Stmt::Expr(value) => self.expr(value, names),
            Stmt::Assign { target, value, .. } => {
                self.expr(target, names);
                self.expr(value, names);
            }
            Stmt::If { cond, then, els, .. } => {
                self.expr(cond, names);
                self.block(then, names);
                if let Some(e) = els {
                    self.stmt(e, names);
                }
            }
            Stmt::Block(b) => self.block(b, names),
            Stmt::For { body, .. } => self.block(body, names),
            Stmt::While { cond, body, .. } => {
                self.expr(cond, names);
                self.block(body, names);
            }
            Stmt::Return { value: Some(e), .. } => self.expr(e, names),
            Stmt::Return { value: None, .. } | Stmt::Break(_) | Stmt::Continue(_) | Stmt::Launch { .. } => {}
        }
    }

    fn block(&mut self, b: &Block, names: Option<&HashMap<String, String>>) {
        b.stmts.iter().for_each(|s| self.stmt(s, names));
    }

    fn expr(&mut self, e: &Expr, names: Option<&HashMap<String, String>>) {
        match &e.kind {
            ExprKind::Method { receiver, name, args } => {
                if let (ExprKind::Name(n), "advance") = (&receiver.kind, name.name.as_str()) {
                    self.found(n, names);
                }
                self.expr(receiver, names);
                args.iter().for_each(|a| self.expr(&a.value, names));
            }
            ExprKind::Call { callee, args } => {
                args.iter().for_each(|a| self.expr(&a.value, names));
                self.call(&callee.name, args, names);
            }
            ExprKind::Tuple(items) => items.iter().for_each(|i| self.expr(i, names)),
            ExprKind::Unary(_, a) | ExprKind::Field { base: a, .. } => self.expr(a, names),
            ExprKind::Binary(_, a, b) => {
                self.expr(a, names);
                self.expr(b, names);
            }
            ExprKind::Index { base, index } => {
                self.expr(base, names);
                index.iter().for_each(|i| self.expr(i, names));
            }
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::Name(_)
            | ExprKind::Wildcard => {}
        }
    }

    /// A call of a user function: its body, with each parameter that a positional argument
    /// `n` (a plain name) is passed as standing for `n`.
    fn call(&mut self, callee: &str, args: &[crate::ast::Arg], names: Option<&HashMap<String, String>>) {
        let Some(f) = self.functions.get(callee).copied() else { return };
        let mut map = HashMap::new();
        for (p, a) in f.params.iter().zip(args) {
            if let (None, ExprKind::Name(n)) = (&a.name, &a.value.kind) {
                if let Some(outer) = Self::outer(n, names) {
                    map.insert(p.name.name.clone(), outer);
                }
            }
        }
        if map.is_empty() || self.calls >= MAX_SCANNED_CALLS {
            return;
        }
        self.calls += 1;
        self.block(&f.body, Some(&map));
    }
}
