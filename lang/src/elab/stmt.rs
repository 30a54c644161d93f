//! Statements: `let` and its patterns, assignment, `if` and `for`; the jumps (`break`, `continue`,
//! `return`) and `while` are in [`flow`](super::flow), their host forms in
//! [`host_flow`](super::host_flow).

use super::flow::{Flow, Jump};
use super::value::{Origin, TensorVal, Value};
use super::view::{check_rank, crd_has_under, element_offset};
use super::{builtins, fragment_loops, Frame, Mode, R};
use crate::ast::{Block, Expr, ExprKind, Ident, Pattern, Stmt};
use crate::check::resolve_type;
use crate::diag::Diagnostic;
use crate::kir::{self, FragTy, Inst, Operand, ValueId, ValueTy};
use crate::span::Span;
use crate::types::{MemSpace, Scalar, Ty};
use cute_layout::{Int, Layout};
use std::collections::HashMap;

/// Loops with a static trip count up to this are unrolled at compile time (every index folds).
const UNROLL_LIMIT: i64 = 64;

impl Frame<'_, '_> {
    /// A statement in a scope of its own (an `else` branch).
    pub(super) fn scoped_stmt(&mut self, s: &Stmt) -> R<Flow> {
        self.scopes.push(HashMap::new());
        let r = self.stmt(s);
        self.scopes.pop();
        r
    }

    fn bind_pattern(&mut self, p: &Pattern, v: Value) -> R<()> {
        match p {
            Pattern::Name(id) => {
                self.bind_at(id, v);
                Ok(())
            }
            Pattern::Mut(id) => {
                self.need_kernel("a `let mut` variable", id.span)?;
                let ty = match &v {
                    Value::Int(_) => Scalar::I32,
                    Value::Float(_) => Scalar::F32,
                    Value::Bool(_) => Scalar::Bool,
                    Value::Scalar(s, _) => *s,
                    other => {
                        return Err(Diagnostic::error(
                            format!(
                                "a `let mut` variable holds a number or a bool, not {}",
                                crate::diag::article(&other.kind())
                            ),
                            id.span,
                            "not a scalar",
                        ))
                    }
                };
                let layout = Layout::leaf(1, 0);
                let Value::Tensor(cell) = builtins::alloc(self, ty, MemSpace::Rmem, layout, id.span)? else {
                    unreachable!("alloc gives a tensor")
                };
                let v = self.coerce(v, ty, id.span)?;
                let operand = self.operand(&v, ty, id.span)?;
                let Origin::Kernel(cid) = cell.origin else { unreachable!("kernel tensors have kernel origins") };
                self.emit(Inst::Store {
                    value: operand,
                    tensor: cid,
                    ty: cell.ty.clone(),
                    at: kir::At::Offset(Int::ZERO),
                    span: id.span,
                });
                self.bind_at(id, Value::Var(cell, ty));
                Ok(())
            }
            Pattern::Wildcard(_) => Ok(()),
            // `(n)` is `n`, as a one-entry tuple is its entry in CuTe notation.
            Pattern::Tuple(items, _) if items.len() == 1 && !matches!(v, Value::Tuple(_)) => {
                self.bind_pattern(&items[0], v)
            }
            Pattern::Tuple(items, span) => {
                let parts = match v {
                    Value::Tuple(parts) => parts,
                    Value::Layout(l) => vec![Value::from_int_tuple(&l.shape), Value::from_int_tuple(&l.stride)],
                    other => {
                        return Err(Diagnostic::error(
                            format!(
                                "cannot destructure {} into {} names",
                                crate::diag::article(&other.kind()),
                                items.len()
                            ),
                            *span,
                            "pattern here",
                        ));
                    }
                };
                if parts.len() != items.len() {
                    return Err(Diagnostic::error(
                        format!("this pattern has {} names but the value has {} parts", items.len(), parts.len()),
                        *span,
                        "pattern here",
                    ));
                }
                for (p, v) in items.iter().zip(parts) {
                    self.bind_pattern(p, v)?;
                }
                Ok(())
            }
        }
    }

    pub(super) fn stmt(&mut self, s: &Stmt) -> R<Flow> {
        let done = |r: R<()>| r.map(|_| Flow::default());
        match s {
            Stmt::Let { pattern, ty, value, .. } => {
                let mut v = self.expr(value)?;
                if let Some(t) = ty {
                    match resolve_type(t)? {
                        Ty::Scalar(want) => v = self.coerce(v, want, value.span)?,
                        _ => {
                            return Err(Diagnostic::error(
                                "only scalar types can annotate a `let`",
                                t.span(),
                                "type here",
                            ))
                        }
                    }
                }
                done(self.bind_pattern(pattern, v))
            }
            Stmt::Assign { target, value, span } => done(self.assign(target, value, *span)),
            Stmt::Expr(e) => match self.discarded_atomic(e) {
                // An atomic whose result is dropped needs none: PTX's `red`.
                Some((op, args)) => done(self.atomic_call(op, args, e.span, false).map(|_| ())),
                None => done(self.expr(e).map(|_| ())),
            },
            Stmt::If { cond, then, els, span } => {
                let c = self.expr(cond)?;
                match c {
                    Value::Bool(b) => {
                        // A static condition: only the branch taken is elaborated (CuTe's const_expr).
                        if b {
                            self.block(then)
                        } else if let Some(e) = els {
                            self.scoped_stmt(e)
                        } else {
                            Ok(Flow::default())
                        }
                    }
                    Value::Scalar(Scalar::Bool, id) if self.mode == Mode::Host => {
                        self.host_if(id, cond.span, then, els.as_deref(), *span)
                    }
                    Value::Scalar(Scalar::Bool, id) => {
                        self.need_kernel("a run-time `if`", cond.span)?;
                        self.states_to_cells(then.stmts.iter().chain(els.as_deref()), &[], *span)?;
                        let (then_insts, t) = self.runtime_region(|f| f.block(then))?;
                        let (else_insts, e) = match els {
                            Some(e) => self.runtime_region(|f| f.scoped_stmt(e))?,
                            None => (Vec::new(), Flow::default()),
                        };
                        self.emit(Inst::If {
                            cond: Operand::Value(id),
                            then: then_insts,
                            els: else_insts,
                            span: *span,
                        });
                        let mut flags = t.flags;
                        flags.extend(e.flags.into_iter().filter(|f| !flags.contains(f)).collect::<Vec<_>>());
                        Ok(Flow { flags, always: t.always && e.always, jump: None })
                    }
                    other => Err(Diagnostic::error(
                        format!("`if` condition must be `bool`, found {}", other.kind()),
                        cond.span,
                        "not a bool",
                    )
                    .with_help("compare explicitly, e.g. `x != 0`")),
                }
            }
            Stmt::Block(b) => self.block(b),
            Stmt::For { var, start, end, step, body, span } => {
                self.for_loop(var, start, end, step.as_ref(), body, *span)
            }
            Stmt::Return { value, span } => self.return_stmt(value.as_ref(), *span),
            Stmt::While { cond, body, span } => self.while_loop(cond, body, *span),
            Stmt::Break(span) => self.break_or_continue(Jump::Break, *span),
            Stmt::Continue(span) => self.break_or_continue(Jump::Continue, *span),
            Stmt::Launch { kernel, args, clauses, span } => done(self.launch(kernel, args, clauses, *span)),
        }
    }

    fn for_loop(
        &mut self,
        var: &Ident,
        start: &Expr,
        end: &Expr,
        step: Option<&(Ident, Expr)>,
        body: &Block,
        span: Span,
    ) -> R<Flow> {
        let lb = self.index(start)?;
        let ub = self.index(end)?;
        let st = match step {
            None => Int::ONE,
            Some((kw, e)) => {
                if kw.name != "step" {
                    return Err(Diagnostic::error(
                        format!("expected `step`, found `{}`", kw.name),
                        kw.span,
                        "unknown range clause",
                    )
                    .with_help("write `for i in a..b step s`"));
                }
                let s = self.index(e)?;
                if s.as_static().is_some_and(|v| v <= 0) {
                    return Err(Diagnostic::error("the step of a range must be positive", e.span, "not positive"));
                }
                s
            }
        };
        if let (Some(a), Some(b), Some(s)) = (lb.as_static(), ub.as_static(), st.as_static()) {
            let trips = if b > a { (b - a + s - 1) / s } else { 0 };
            // A longer loop is unrolled too when it indexes a register fragment by its variable,
            // which would otherwise put the fragment in local memory (fragment_loops.rs).
            let over_fragment = || {
                trips <= fragment_loops::FRAGMENT_UNROLL_LIMIT
                    && fragment_loops::indexes_fragment(
                        body,
                        &var.name,
                        &|n| matches!(self.lookup(n), Some(Value::Tensor(t)) if t.ty.space == MemSpace::Rmem),
                    )
            };
            if trips <= UNROLL_LIMIT || self.mode != Mode::Kernel || over_fragment() {
                if self.mode != Mode::Kernel && trips > 4096 {
                    return Err(Diagnostic::error("a compile-time loop may run at most 4096 times", span, "too long"));
                }
                // The loop's head (`for i in a..b step s`) names it in a compile-budget error.
                let head = Span::new(span.start, step.map_or(end.span.end, |(_, e)| e.span.end));
                return self.unrolled_loop(
                    trips.max(0) as usize,
                    head,
                    |f, k| {
                        let i = Value::Int(Int::S(a + s * k as i64));
                        f.prog.observer.binding(var.span, &i);
                        f.scopes.push(HashMap::from([(var.name.clone(), i)]));
                        let r = f.block(body);
                        f.scopes.pop();
                        r
                    },
                    span,
                );
            }
        }
        if self.mode == Mode::Host {
            return self.host_for(var, lb, ub, st, body, span);
        }
        self.need_kernel("a loop with run-time bounds", span)?;
        self.states_to_cells(&body.stmts, &[], span)?;
        let iv = self.fresh(ValueTy::Scalar(Scalar::I32));
        self.prog.observer.binding(var.span, &Value::Int(Int::var(iv, 1)));
        let (insts, stop, l) = self.runtime_loop_body(|f| {
            f.scopes.push(HashMap::from([(var.name.clone(), Value::Int(Int::var(iv, 1)))]));
            let r = f.block(body);
            f.scopes.pop();
            r
        })?;
        let exit = self.exit_cond(&stop, span);
        self.emit(Inst::For { iv, lb, ub, step: st, body: insts, exit, span });
        Ok(self.runtime_loop_done(stop, &l, span))
    }

    fn assign(&mut self, target: &Expr, value: &Expr, span: Span) -> R<()> {
        if let ExprKind::Name(n) = &target.kind {
            return match self.lookup(n) {
                Some(Value::Var(cell, ty)) => {
                    let v = self.expr(value)?;
                    let v = self
                        .coerce(v, ty, value.span)
                        .map_err(|d| d.with_secondary(target.span, format!("`{n}` holds a `{}`", ty.name())))?;
                    let operand = self.operand(&v, ty, value.span)?;
                    let Origin::Kernel(cid) = cell.origin else { unreachable!("kernel tensors have kernel origins") };
                    self.emit(Inst::Store {
                        value: operand,
                        tensor: cid,
                        ty: cell.ty.clone(),
                        at: kir::At::Offset(Int::ZERO),
                        span,
                    });
                    Ok(())
                }
                Some(_) => Err(Diagnostic::error(
                    format!("cannot assign twice to immutable variable `{n}`"),
                    target.span,
                    "not `let mut`",
                )
                .with_help(format!("declare it with `let mut {n} = ...`, or shadow it with `let {n} = ...`"))),
                None => self.name(n, target.span).map(|_| ()),
            };
        }
        let ExprKind::Index { base, index } = &target.kind else {
            return Err(Diagnostic::error(
                "only tensor elements and slices can be assigned",
                target.span,
                "not a tensor element",
            )
            .with_help("`let` bindings are immutable; write `let x = ...` again to shadow, or assign to `t[i]`"));
        };
        let t = match self.expr(base)? {
            Value::Tensor(t) => t,
            other => {
                return Err(Diagnostic::error(
                    format!("cannot index into {}", crate::diag::article(&other.kind())),
                    base.span,
                    "not a tensor",
                ))
            }
        };
        let crd = self.coordinate(index)?;
        check_rank(&crd, &t.ty.layout, target.span)?;
        let v = self.expr(value)?;
        self.need_kernel("writing memory", span)?;
        let Origin::Kernel(tid) = t.origin else { unreachable!("kernel tensors have kernel origins") };
        if crd_has_under(&crd) || matches!(v, Value::Frag(..)) {
            let view = self.slice(&t, &crd, target.span)?;
            let Value::Frag(ft, fid) = v else {
                return Err(Diagnostic::error(
                    format!(
                        "a tensor slice takes a fragment (from `.load()`), found {}",
                        crate::diag::article(&v.kind())
                    ),
                    value.span,
                    "not a fragment",
                ));
            };
            self.store_frag(&view, &ft, fid, span)
        } else {
            // Checked here for the error's span; cute-canonicalize maps the coordinate to the offset.
            element_offset(&crd, &t.ty.layout, self.index_bits, target.span)?;
            let v = self.coerce(v, t.ty.elem, value.span).map_err(|d| {
                d.with_secondary(target.span, format!("expected `{}` because of this element", t.ty.elem.name()))
            })?;
            let operand = self.operand(&v, t.ty.elem, value.span)?;
            self.emit(Inst::Store {
                value: operand,
                tensor: tid,
                ty: t.ty.clone(),
                at: kir::At::Coord(cute_layout::expr::crd_value(&crd)),
                span,
            });
            Ok(())
        }
    }

    pub(crate) fn store_frag(&mut self, view: &TensorVal, ft: &FragTy, fid: ValueId, span: Span) -> R<()> {
        let Origin::Kernel(vid) = view.origin else { unreachable!("kernel tensors have kernel origins") };
        let n = view.ty.layout.size().ok().and_then(|s| s.as_static());
        if n != Some(ft.len() as i64) {
            return Err(Diagnostic::error(
                format!(
                    "a fragment of {} elements cannot be stored into a tensor of layout {}",
                    ft.len(),
                    view.ty.layout
                ),
                span,
                "sizes differ",
            ));
        }
        if ft.elem != view.ty.elem {
            return Err(Diagnostic::error(
                format!("a fragment of {} cannot be stored into a tensor of {}", ft.elem.name(), view.ty.elem.name()),
                span,
                "element types differ",
            )
            .with_help(format!("convert with `.to({})`", view.ty.elem.name())));
        }
        self.emit(Inst::StoreFrag { value: fid, tensor: vid, ty: view.ty.clone(), span });
        Ok(())
    }
}
