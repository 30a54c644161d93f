//! Early exits: `return` anywhere in a kernel or `fn`, `break` and `continue` in loops, and
//! `while` loops (docs/language.md §6; why they are structured: docs/design.md (l)).
//!
//! Elaboration is an evaluator, so a jump whose target is reached through compile-time code only
//! (a `break` under a static `if` in an unrolled loop, a `return` outside every run-time branch) is
//! taken at compile time: what follows it is not elaborated, like the branch a static `if` does not
//! take. A jump under a run-time condition sets an **exit flag** instead, a `bool` register cell
//! (one per loop for `break`, one for `continue`, one per kernel or inlined `fn` call for
//! `return`): the statements after one that may have set a flag are guarded by `if` none is set, a
//! run-time loop whose body may set its `break` flag or a `return` flag also tests them before
//! each trip (KIR `For::exit`, `While::cond`), and the code stays structured (`scf.if`,
//! `scf.for`, `scf.while`). Flags are false outside their construct: each is cleared where its
//! construct ends (after the loop, after each trip, after the inlined call).

use super::budget::Multiplier;
use super::host_flow::host_jump_error;
use super::{builtins, Frame, Mode, Value, R};
use crate::ast::{Block, Expr, Stmt};
use crate::diag::Diagnostic;
use crate::kir::{At, BinaryOp, Cond, Inst, Operand, TensorTy, ValueId, ValueTy};
use crate::span::Span;
use crate::types::{MemSpace, Scalar};
use cute_layout::{Int, Layout};
use std::collections::HashMap;

/// How control leaves a piece of code.
#[derive(Clone, Debug, Default)]
pub(crate) struct Flow {
    /// Exit flags it may have set at run time: the code after it runs only while none is set.
    pub flags: Vec<ValueId>,
    /// Every path has left (through `flags` or `jump`): the code after it is unreachable.
    pub always: bool,
    /// A jump taken at compile time, to the innermost loop (`break`, `continue`) or function.
    pub jump: Option<Jump>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Jump {
    Return,
    Break,
    Continue,
}

impl Flow {
    fn add_flags(&mut self, flags: &[ValueId]) {
        for f in flags {
            if !self.flags.contains(f) {
                self.flags.push(*f);
            }
        }
    }

    fn without(mut self, flag: Option<ValueId>) -> Flow {
        self.flags.retain(|f| Some(*f) != flag);
        self
    }
}

/// A loop being elaborated: the target of `break` and `continue`.
#[derive(Clone, Debug, Default)]
pub(crate) struct LoopCtx {
    /// Unrolled at compile time: a jump at `depth` is taken now.
    unrolled: bool,
    /// The run-time depth of the loop's body.
    depth: usize,
    /// A host function's run-time loop: `break` and `continue` in it are steps of the plan.
    host: bool,
    brk: Option<ValueId>,
    cont: Option<ValueId>,
}

impl LoopCtx {
    /// A host function's run-time loop (its jumps are plan steps, [`Frame::host_jump`]).
    pub(crate) fn host() -> LoopCtx {
        LoopCtx { host: true, ..LoopCtx::default() }
    }
}

/// A kernel, host function or inlined `fn` call being elaborated: the target of `return`.
#[derive(Clone, Debug)]
pub(crate) struct FnCtx {
    /// The run-time depth of the body: a `return` at this depth is taken at compile time.
    depth: usize,
    /// A `fn` helper (which may return a value) and its declared result type.
    helper: bool,
    ret_ty: Option<Scalar>,
    ret: Option<ValueId>,
    /// The cell a run-time `return EXPR` stores into, and its type.
    result: Option<(ValueId, Scalar)>,
    /// The value of a `return EXPR` taken at compile time.
    value: Option<Value>,
}

impl FnCtx {
    pub(crate) fn new(depth: usize, helper: bool, ret_ty: Option<Scalar>) -> FnCtx {
        FnCtx { depth, helper, ret_ty, ret: None, result: None, value: None }
    }
}

/// The type of a one-element register cell of `ty` (what `builtins::alloc` makes).
fn cell_ty(f: &Frame, id: ValueId) -> TensorTy {
    match f.value_types.get(id as usize) {
        Some(ValueTy::Tensor(t)) => t.clone(),
        _ => unreachable!("exit flags and results are register cells"),
    }
}

impl Frame<'_, '_> {
    /// Elaborates statements in order. After one that may have left at run time, the rest is
    /// guarded by `if` no exit flag it may have set is set; after one that always leaves, the rest
    /// is unreachable and not elaborated.
    pub(crate) fn stmts(&mut self, stmts: &[Stmt]) -> R<Flow> {
        let mut acc = Flow::default();
        let mut guards = Vec::new();
        let mut result = Ok(());
        for (i, s) in stmts.iter().enumerate() {
            let f = match self.prog.work.step(s.span()).and_then(|()| self.stmt(s)) {
                Ok(f) => f,
                Err(d) => {
                    result = Err(d);
                    break;
                }
            };
            acc.add_flags(&f.flags);
            if f.always || f.jump.is_some() {
                acc.always = true;
                acc.jump = f.jump;
                break;
            }
            if !f.flags.is_empty() && i + 1 < stmts.len() {
                let span = stmts[i + 1].span();
                let cond = self.none_set(&f.flags, span);
                self.open_guard(cond, span, &mut guards);
            }
        }
        self.close_guards(guards);
        result.map(|_| acc)
    }

    fn open_guard(&mut self, cond: Operand, span: Span, guards: &mut Vec<(Operand, Span)>) {
        guards.push((cond, span));
        self.regions.push(Vec::new());
        self.depth += 1;
    }

    fn close_guards(&mut self, mut guards: Vec<(Operand, Span)>) {
        while let Some((cond, span)) = guards.pop() {
            let then = self.regions.pop().unwrap_or_default();
            self.depth -= 1;
            self.emit(Inst::If { cond, then, els: Vec::new(), span });
        }
    }

    /// A block in a scope of its own.
    pub(crate) fn block(&mut self, b: &Block) -> R<Flow> {
        self.scopes.push(HashMap::new());
        let r = self.stmts(&b.stmts);
        self.scopes.pop();
        r
    }

    /// A branch of a run-time `if` (or the body of a run-time loop), into a region of its own.
    pub(crate) fn runtime_region(&mut self, f: impl FnOnce(&mut Self) -> R<Flow>) -> R<(Vec<Inst>, Flow)> {
        self.regions.push(Vec::new());
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        let insts = self.regions.pop().unwrap_or_default();
        r.map(|flow| (insts, flow))
    }

    /// A new `bool` register cell, false from the start of the kernel.
    fn flag(&mut self, what: &str, span: Span) -> R<ValueId> {
        if self.mode == Mode::Host {
            return Err(host_jump_error(what, span));
        }
        if self.mode != Mode::Kernel {
            return Err(Diagnostic::error(
                format!("{what} under a run-time condition is only available in kernels"),
                span,
                "run-time jump",
            )
            .with_help("host functions run their statements at compile time: make the condition static"));
        }
        let id = self.cell(Scalar::Bool, span)?;
        let ty = cell_ty(self, id);
        self.specials.push(Inst::Store {
            value: Operand::Bool(false),
            tensor: id,
            ty,
            at: At::Offset(Int::ZERO),
            span,
        });
        Ok(id)
    }

    pub(super) fn cell(&mut self, ty: Scalar, span: Span) -> R<ValueId> {
        match builtins::alloc(self, ty, MemSpace::Rmem, Layout::leaf(1, 0), span)? {
            Value::Tensor(t) => match t.origin {
                super::Origin::Kernel(id) => Ok(id),
                _ => unreachable!("kernel allocations have kernel origins"),
            },
            _ => unreachable!("alloc gives a tensor"),
        }
    }

    pub(super) fn set(&mut self, cell: ValueId, value: Operand, span: Span) {
        let ty = cell_ty(self, cell);
        self.emit(Inst::Store { value, tensor: cell, ty, at: At::Offset(Int::ZERO), span });
    }

    pub(super) fn get(&mut self, cell: ValueId, span: Span) -> ValueId {
        let ty = cell_ty(self, cell);
        let dst = self.fresh(ValueTy::Scalar(ty.elem));
        self.emit(Inst::Load { dst, tensor: cell, ty, at: At::Offset(Int::ZERO), span });
        dst
    }

    /// Whether any of `flags` is set (emitted here).
    fn any_set(&mut self, flags: &[ValueId], span: Span) -> Operand {
        let mut acc: Option<Operand> = None;
        for &f in flags {
            let x = Operand::Value(self.get(f, span));
            acc = Some(match acc {
                None => x,
                Some(a) => {
                    let dst = self.fresh(ValueTy::Scalar(Scalar::Bool));
                    self.emit(Inst::Binary { dst, op: BinaryOp::Or, ty: Scalar::Bool, frag: None, a, b: x, span });
                    Operand::Value(dst)
                }
            });
        }
        acc.unwrap_or(Operand::Bool(false))
    }

    /// Whether none of `flags` is set (emitted here).
    fn none_set(&mut self, flags: &[ValueId], span: Span) -> Operand {
        let any = self.any_set(flags, span);
        let dst = self.fresh(ValueTy::Scalar(Scalar::Bool));
        self.emit(Inst::Not { dst, ty: Scalar::Bool, frag: None, a: any, span });
        Operand::Value(dst)
    }

    pub(crate) fn break_or_continue(&mut self, jump: Jump, span: Span) -> R<Flow> {
        let word = if jump == Jump::Break { "break" } else { "continue" };
        let Some(l) = self.loops.last().cloned() else {
            return Err(Diagnostic::error(format!("`{word}` outside of a loop"), span, "not in a `for` or `while`")
                .with_help(if self.fns.last().is_some_and(|f| f.helper) {
                    "a `fn` helper cannot leave a loop of its caller: return a value and test it there"
                } else {
                    "`break` and `continue` go in the body of a `for` or `while` loop"
                }));
        };
        if l.unrolled && l.depth == self.depth {
            return Ok(Flow { flags: Vec::new(), always: true, jump: Some(jump) });
        }
        if l.host {
            return Ok(self.host_jump(jump));
        }
        let existing = if jump == Jump::Break { l.brk } else { l.cont };
        let flag = match existing {
            Some(f) => f,
            None => {
                let f = self.flag(&format!("`{word}`"), span)?;
                let ctx = self.loops.last_mut().expect("checked above");
                if jump == Jump::Break {
                    ctx.brk = Some(f)
                } else {
                    ctx.cont = Some(f)
                }
                f
            }
        };
        self.set(flag, Operand::Bool(true), span);
        Ok(Flow { flags: vec![flag], always: true, jump: None })
    }

    pub(crate) fn return_stmt(&mut self, value: Option<&Expr>, span: Span) -> R<Flow> {
        let Some(ctx) = self.fns.last().cloned() else { unreachable!("statements are elaborated in a function") };
        let v = match value {
            Some(e) if !ctx.helper => {
                let what = if self.mode == Mode::Host { "a host function" } else { "a kernel" };
                return Err(Diagnostic::error(format!("{what} cannot return a value"), e.span, "a value").with_help(
                    if self.mode == Mode::Host {
                        "write `return;`"
                    } else {
                        "write results into a tensor parameter, and `return;`"
                    },
                ));
            }
            Some(e) => Some(self.expr(e)?),
            None => None,
        };
        if ctx.depth == self.depth {
            // Taken at compile time.
            match (v, ctx.result) {
                (Some(v), Some((cell, ty))) => self.store_result(v, cell, ty, value, span)?,
                (v, _) => {
                    if let Some(ctx) = self.fns.last_mut() {
                        ctx.value = v;
                    }
                }
            }
            return Ok(Flow { flags: Vec::new(), always: true, jump: Some(Jump::Return) });
        }
        if self.mode == Mode::Host {
            // A host function's plan has no registers to carry a result or a `returned` flag
            // past a run-time branch (they would be a kernel's rmem cells).
            return Err(host_fn_return_error(v.is_some(), value.map_or(span, |e| e.span)));
        }
        if let Some(v) = v {
            let (cell, ty) = match ctx.result {
                Some(r) => r,
                None => {
                    let ty = match (ctx.ret_ty, &v) {
                        (Some(t), _) => t,
                        (None, Value::Int(_)) => Scalar::I32,
                        (None, Value::Float(_)) => Scalar::F32,
                        (None, Value::Bool(_)) => Scalar::Bool,
                        (None, Value::Scalar(s, _)) => *s,
                        (None, other) => {
                            return Err(Diagnostic::error(
                                format!(
                                    "a `fn` that returns under a run-time condition returns a number or a bool, not {}",
                                    crate::diag::article(&other.kind())
                                ),
                                value.map_or(span, |e| e.span),
                                "returned here",
                            )
                            .with_help(
                                "return this value as the `fn`'s last statement, outside run-time `if`s and loops",
                            ));
                        }
                    };
                    let cell = self.cell(ty, span)?;
                    if let Some(ctx) = self.fns.last_mut() {
                        ctx.result = Some((cell, ty));
                    }
                    (cell, ty)
                }
            };
            self.store_result(v, cell, ty, value, span)?;
        }
        let flag = match ctx.ret {
            Some(f) => f,
            None => {
                let f = self.flag("`return`", span)?;
                if let Some(ctx) = self.fns.last_mut() {
                    ctx.ret = Some(f);
                }
                f
            }
        };
        self.set(flag, Operand::Bool(true), span);
        Ok(Flow { flags: vec![flag], always: true, jump: None })
    }

    fn store_result(&mut self, v: Value, cell: ValueId, ty: Scalar, value: Option<&Expr>, span: Span) -> R<()> {
        let at = value.map_or(span, |e| e.span);
        let v = self.coerce(v, ty, at).map_err(|d| d.with_help(format!("every `return` of a `fn` that returns under a run-time condition gives a `{}` (the first one's type, or the declared `-> T`)", ty.name())))?;
        let operand = self.operand(&v, ty, at)?;
        self.set(cell, operand, span);
        Ok(())
    }

    /// The result of an inlined `fn` call whose body ended with `flow`, and clearing its `return`
    /// flag for the code after the call.
    pub(crate) fn finish_call(&mut self, ctx: FnCtx, flow: &Flow, name: &str, end: Span) -> R<Value> {
        if let Some(f) = ctx.ret {
            self.set(f, Operand::Bool(false), end);
        }
        match ctx.result {
            Some((cell, ty)) => {
                if !flow.always {
                    return Err(Diagnostic::error(
                        format!("`{name}` can reach its end without returning a value"),
                        end,
                        "no `return` here",
                    )
                    .with_help(
                        "it returns a value under a run-time condition, so every path must: end it with a `return`",
                    ));
                }
                let dst = self.get(cell, end);
                Ok(if ty == Scalar::I32 { Value::Int(Int::var(dst, 1)) } else { Value::Scalar(ty, dst) })
            }
            None => Ok(ctx.value.unwrap_or(Value::Unit)),
        }
    }

    /// One trip of an unrolled loop's body, with the loop variable bound. `Ok(None)` when the loop
    /// stops here (a `break` or `return` taken at compile time).
    fn unrolled_trip(
        &mut self,
        trip: impl FnOnce(&mut Self) -> R<Flow>,
        acc: &mut Flow,
        guards: &mut Vec<(Operand, Span)>,
        last: bool,
        span: Span,
    ) -> R<bool> {
        let f = trip(self)?;
        let cont = self.loops.last().and_then(|l| l.cont);
        if cont.is_some_and(|c| f.flags.contains(&c)) {
            self.set(cont.expect("checked"), Operand::Bool(false), span);
        }
        let f = f.without(cont);
        match f.jump {
            Some(Jump::Break) => return Ok(false),
            Some(Jump::Return) => {
                acc.jump = Some(Jump::Return);
                acc.always = true;
                return Ok(false);
            }
            _ => {}
        }
        acc.add_flags(&f.flags);
        if !f.flags.is_empty() && !last {
            let cond = self.none_set(&f.flags, span);
            self.open_guard(cond, span, guards);
        }
        Ok(true)
    }

    /// A loop unrolled at compile time: `trips` bodies in order (each given its trip number).
    /// `head` is where the loop is named (its `for ... in a..b`), `span` the whole loop.
    pub(crate) fn unrolled_loop(
        &mut self,
        trips: usize,
        head: Span,
        mut trip: impl FnMut(&mut Self, usize) -> R<Flow>,
        span: Span,
    ) -> R<Flow> {
        self.loops.push(LoopCtx { unrolled: true, depth: self.depth, host: false, brk: None, cont: None });
        self.prog.work.enter(Multiplier::Unrolled { span: head, trips });
        let mut acc = Flow::default();
        let mut guards = Vec::new();
        let mut r = Ok(());
        for k in 0..trips {
            let trip = self
                .prog
                .work
                .step(head)
                .and_then(|()| self.unrolled_trip(|f| trip(f, k), &mut acc, &mut guards, k + 1 == trips, span));
            match trip {
                Ok(true) => {}
                Ok(false) => break,
                Err(d) => {
                    r = Err(d);
                    break;
                }
            }
        }
        self.prog.work.leave();
        self.close_guards(guards);
        let l = self.loops.pop().unwrap_or_default();
        r?;
        Ok(self.loop_done(acc, &l, span))
    }

    /// After a loop: its `break` flag cleared, and the flags the code after it must test.
    fn loop_done(&mut self, acc: Flow, l: &LoopCtx, span: Span) -> Flow {
        if let Some(b) = l.brk.filter(|b| acc.flags.contains(b)) {
            self.set(b, Operand::Bool(false), span);
        }
        acc.without(l.brk).without(l.cont)
    }

    /// A run-time loop's body, elaborated by `body` into its own region: the body's instructions
    /// (ending with clearing its `continue` flag), what stops the loop before a trip (its `break`
    /// flag and `return` flags the body may set), and its loop context.
    pub(crate) fn runtime_loop_body(
        &mut self,
        body: impl FnOnce(&mut Self) -> R<Flow>,
    ) -> R<(Vec<Inst>, Vec<ValueId>, LoopCtx)> {
        self.loops.push(LoopCtx { unrolled: false, depth: self.depth + 1, host: false, brk: None, cont: None });
        let r = self.runtime_region(body);
        let l = self.loops.pop().unwrap_or_default();
        let (mut insts, flow) = r?;
        if let Some(c) = l.cont.filter(|c| flow.flags.contains(c)) {
            let ty = cell_ty(self, c);
            insts.push(Inst::Store {
                value: Operand::Bool(false),
                tensor: c,
                ty,
                at: At::Offset(Int::ZERO),
                span: Span::default(),
            });
        }
        let stop = flow.without(l.cont).flags;
        Ok((insts, stop, l))
    }

    /// The test of a loop that `stop` flags end: computed in a region of its own.
    pub(crate) fn exit_cond(&mut self, stop: &[ValueId], span: Span) -> Option<Cond> {
        if stop.is_empty() {
            return None;
        }
        self.regions.push(Vec::new());
        let value = self.any_set(stop, span);
        let insts = self.regions.pop().unwrap_or_default();
        Some(Cond { insts, value })
    }

    /// After a run-time loop: its `break` flag cleared; the flags the code after it must test.
    pub(crate) fn runtime_loop_done(&mut self, stop: Vec<ValueId>, l: &LoopCtx, span: Span) -> Flow {
        self.loop_done(Flow { flags: stop, always: false, jump: None }, l, span)
    }

    /// `while COND { BODY }` (kernels only).
    pub(crate) fn while_loop(&mut self, cond: &Expr, body: &Block, span: Span) -> R<Flow> {
        self.need_kernel("a `while` loop", span)?;
        self.states_to_cells(&body.stmts, &[cond], span)?;
        self.regions.push(Vec::new());
        self.depth += 1;
        let c = self.expr(cond);
        self.depth -= 1;
        let mut head = self.regions.pop().unwrap_or_default();
        let c = match c? {
            // `while false`: the body never runs, and is not elaborated (like a static `if`).
            Value::Bool(false) => return Ok(Flow::default()),
            Value::Bool(true) => Operand::Bool(true),
            Value::Scalar(Scalar::Bool, id) => Operand::Value(id),
            other => {
                return Err(Diagnostic::error(
                    format!("`while` condition must be `bool`, found {}", other.kind()),
                    cond.span,
                    "not a bool",
                )
                .with_help("compare explicitly, e.g. `x != 0`"))
            }
        };
        let (insts, stop, l) = self.runtime_loop_body(|f| f.block(body))?;
        let value = match self.exit_cond(&stop, span) {
            None => c,
            Some(exit) => {
                // Go on while COND and no flag is set.
                head.extend(exit.insts);
                self.regions.push(head);
                let none = self.fresh(ValueTy::Scalar(Scalar::Bool));
                self.emit(Inst::Not { dst: none, ty: Scalar::Bool, frag: None, a: exit.value, span });
                let go = self.fresh(ValueTy::Scalar(Scalar::Bool));
                self.emit(Inst::Binary {
                    dst: go,
                    op: BinaryOp::And,
                    ty: Scalar::Bool,
                    frag: None,
                    a: c,
                    b: Operand::Value(none),
                    span,
                });
                head = self.regions.pop().unwrap_or_default();
                Operand::Value(go)
            }
        };
        self.emit(Inst::While { cond: Cond { insts: head, value }, body: insts, span });
        Ok(self.runtime_loop_done(stop, &l, span))
    }
}

/// A `return` under a run-time condition in a `fn` a host function calls: the plan computes values
/// without branches, so a value is selected with `where`, and a `return;` is the `else` branch.
fn host_fn_return_error(with_value: bool, span: Span) -> Diagnostic {
    if !with_value {
        return host_jump_error("`return`", span);
    }
    Diagnostic::error(
        "a `fn` called from a host function cannot return a value under a run-time condition",
        span,
        "run-time return",
    )
    .with_help("select the value with `where(cond, a, b)` and return it as the `fn`'s last statement (a host function's plan computes values without branches), or make the condition static")
}
