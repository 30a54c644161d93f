//! The mbarrier builtins (CuTe DSL's `cute.arch.mbarrier_*`): 64-bit barriers in shared memory that
//! count arrivals and asynchronous transaction bytes (TMA loads) per phase.
//!
//! A barrier is one element of an `i64` shared tensor, written as that element:
//! `mbarrier_init(bars[s], 1)` (the builtins take the element's place, not its value). A
//! one-element `i64` shared tensor (a slice) is accepted too. The element is 8-byte aligned by
//! construction: shared allocations are 128-byte aligned and every element of an `i64` tensor is
//! 8 bytes into it (cute-verify checks the operand again on the `cute.mbarrier` op).

use super::value::{Origin, TensorVal, Value};
use super::view::{check_rank, coord_err, crd_has_under};
use super::{Frame, R};
use crate::ast::{Arg, Expr, ExprKind};
use crate::diag::Diagnostic;
use crate::kir::{Inst, MbarrierOp, Operand, TensorTy, ValueId, ValueTy};
use crate::span::Span;
use crate::types::{MemSpace, Scalar};
use cute_layout::Int;

/// The mbarrier builtins that take a barrier.
pub(crate) fn op_of(name: &str) -> Option<MbarrierOp> {
    Some(match name {
        "mbarrier_init" => MbarrierOp::Init,
        "mbarrier_arrive" => MbarrierOp::Arrive,
        "mbarrier_arrive_and_expect_tx" => MbarrierOp::ArriveExpectTx,
        "mbarrier_wait" => MbarrierOp::Wait,
        "mbarrier_try_wait" => MbarrierOp::TryWait,
        _ => return None,
    })
}

fn usage(op: MbarrierOp) -> &'static str {
    match op {
        MbarrierOp::Init => "mbarrier_init(bars[i], count)",
        MbarrierOp::Arrive | MbarrierOp::ArriveCluster => {
            "mbarrier_arrive(bars[i]) or mbarrier_arrive(bars[i], cta: rank)"
        }
        MbarrierOp::ArriveExpectTx => "mbarrier_arrive_and_expect_tx(bars[i], bytes)",
        MbarrierOp::Wait => "mbarrier_wait(bars[i], phase)",
        MbarrierOp::TryWait => "let done = mbarrier_try_wait(bars[i], phase);",
    }
}

impl Frame<'_, '_> {
    /// `mbarrier_init(bar, count)`, `mbarrier_arrive(bar[, cta: rank])`,
    /// `mbarrier_arrive_and_expect_tx(bar, bytes)`, `mbarrier_wait(bar, phase)` and
    /// `mbarrier_try_wait(bar, phase)` (a `bool`: whether the phase completed).
    pub(crate) fn mbarrier_call(&mut self, op: MbarrierOp, args: &[Arg], span: Span) -> R<Value> {
        let want = if op == MbarrierOp::Arrive { 1 } else { 2 };
        let cta = args.iter().find(|a| a.name.as_ref().is_some_and(|n| n.name == "cta"));
        if let (Some(c), false) = (cta, op == MbarrierOp::Arrive) {
            return Err(Diagnostic::error(
                format!("`{}` has no `cta:`: only `mbarrier_arrive` reaches another block's barrier", op.builtin()),
                c.value.span,
                "`cta:` here",
            )
            .with_help(format!("write `{}` on this block's barrier", usage(op))));
        }
        let named_ok =
            |a: &&Arg| a.name.is_none() || (op == MbarrierOp::Arrive && cta.is_some_and(|c| std::ptr::eq(c, *a)));
        let positional = args.iter().filter(|a| a.name.is_none()).count();
        if positional != want || !args.iter().all(|a| named_ok(&a)) || args.len() > want + usize::from(cta.is_some()) {
            return Err(Diagnostic::error(
                format!("`{}` takes {want} positional argument{}", op.builtin(), if want == 1 { "" } else { "s" }),
                span,
                "wrong arguments",
            )
            .with_help(format!("write `{}`", usage(op))));
        }
        let (t, offset) = self.barrier_place(&args[0].value)?;
        let arg = match (cta, args.get(1)) {
            (Some(c), _) => Some(self.cluster_rank(&c.value, "mbarrier_arrive")?),
            (None, Some(a)) => Some(self.mbarrier_arg(op, &a.value)?),
            (None, None) => None,
        };
        let op = if cta.is_some() { MbarrierOp::ArriveCluster } else { op };
        self.need_kernel(&format!("`{}`", op.builtin()), span)?;
        let Origin::Kernel(tensor) = t.origin else { unreachable!("kernel tensors have kernel origins") };
        Ok(self.emit_mbarrier(op, tensor, t.ty, offset, arg, span))
    }

    /// Emits one mbarrier op: `mbarrier_try_wait`'s `bool`, or unit.
    pub(crate) fn emit_mbarrier(
        &mut self,
        op: MbarrierOp,
        tensor: ValueId,
        ty: TensorTy,
        offset: Int,
        arg: Option<Operand>,
        span: Span,
    ) -> Value {
        let dst = (op == MbarrierOp::TryWait).then(|| self.fresh(ValueTy::Scalar(Scalar::Bool)));
        self.emit(Inst::Mbarrier { op, dst, tensor, ty, offset, arg, span });
        dst.map_or(Value::Unit, |d| Value::Scalar(Scalar::Bool, d))
    }

    /// The count, bytes or parity operand, checked against the PTX ISA's ranges when static.
    fn mbarrier_arg(&mut self, op: MbarrierOp, e: &Expr) -> R<Operand> {
        let v = self.expr(e)?;
        let what = match op {
            MbarrierOp::Init => "the arrival count",
            MbarrierOp::ArriveExpectTx => "the transaction bytes",
            _ => "the phase parity",
        };
        match v {
            Value::Int(i) => {
                if let Some(c) = i.as_static() {
                    let (bad, range) = match op {
                        // The PTX ISA: count in 1 ..= 2^20 - 1; tx-count in 0 ..= 2^20 - 1.
                        MbarrierOp::Init => (!(1..(1 << 20)).contains(&c), "1 to 1048575"),
                        MbarrierOp::ArriveExpectTx => (!(0..(1 << 20)).contains(&c), "0 to 1048575"),
                        _ => (!(0..=1).contains(&c), "0 or 1"),
                    };
                    if bad {
                        return Err(Diagnostic::error(
                            format!("`{}`: {what} is {c}; it must be {range}", op.builtin()),
                            e.span,
                            "out of range",
                        ));
                    }
                }
                Ok(Operand::Int(i))
            }
            Value::Scalar(Scalar::I32, id) => Ok(Operand::Value(id)),
            other => Err(Diagnostic::error(
                format!("`{}`: {what} must be an `i32`, found {}", op.builtin(), crate::diag::article(&other.kind())),
                e.span,
                "not an i32",
            )),
        }
    }

    /// The barrier operand: an element `bars[i]` of an `i64` shared tensor (its place, not its
    /// value), or a one-element `i64` shared tensor.
    pub(crate) fn barrier_place(&mut self, e: &Expr) -> R<(TensorVal, Int)> {
        let (t, offset) = self.element_place(
            e,
            "a barrier",
            "index the barrier tensor with a full coordinate, as in `bars[stage]`",
            not_barrier,
        )?;
        if t.ty.space != MemSpace::Smem || t.ty.elem != Scalar::I64 || t.ty.swizzle.is_some() {
            return Err(Diagnostic::error(format!("an mbarrier is an element of an `i64` shared-memory tensor; this is an element of {}", t.ty), e.span, "not an smem i64 barrier")
                .with_help("allocate the barriers as `smem.allocate_tensor(i64, make_layout(STAGES))` (or `make_smem_tensor(i64, ...)`) and pass `bars[i]`"));
        }
        Ok((t, offset))
    }

    /// An element written as its place, `t[crd]` (a full coordinate), or a one-element tensor:
    /// the tensor and the element's offset in it. `what` names the operand in the error for a
    /// coordinate with `_` (`help` says how to write it); `not_place` makes the error for a value
    /// that is no tensor element.
    pub(crate) fn element_place(
        &mut self,
        e: &Expr,
        what: &str,
        help: &str,
        not_place: fn(&Value, Span) -> Diagnostic,
    ) -> R<(TensorVal, Int)> {
        Ok(match &e.kind {
            ExprKind::Index { base, index } => match self.expr(base)? {
                Value::Tensor(t) => {
                    let crd = self.coordinate(index)?;
                    check_rank(&crd, &t.ty.layout, e.span)?;
                    if crd_has_under(&crd) {
                        return Err(Diagnostic::error(
                            format!("{what} is one element: the coordinate cannot contain `_`"),
                            e.span,
                            "a slice, not an element",
                        )
                        .with_help(help.to_string()));
                    }
                    let (_, offset) = cute_layout::slice_and_offset(&crd, &t.ty.layout)
                        .map_err(|err| coord_err(err, &t.ty.layout, e.span))?;
                    (t, offset)
                }
                other => return Err(not_place(&other, e.span)),
            },
            _ => match self.expr(e)? {
                Value::Tensor(t) if t.ty.layout.size().ok().and_then(|s| s.as_static()) == Some(1) => (t, Int::S(0)),
                // `pipe.producer_get_barrier(state)`.
                Value::Barrier(t, offset) => (t, offset),
                other => return Err(not_place(&other, e.span)),
            },
        })
    }
}

fn not_barrier(v: &Value, span: Span) -> Diagnostic {
    // `bars[i]` bound by a `let` or passed to a `fn` was read there: what arrives is the word's
    // value. Say so, and how to pass a barrier instead.
    if let Value::Scalar(Scalar::I64, _) = v {
        return Diagnostic::error(
            "an mbarrier is an element of an `i64` shared-memory tensor, as in `bars[i]`; this is an `i64` value, read from one where it was bound or passed",
            span,
            "a value, not a barrier",
        )
        .with_help(
            "`bars[i]` names the barrier only where it is written as the operand: a `let` or a `fn` argument holding it reads its value; pass the tensor and index it here (`f(bars, i)`, then `bars[i]` in `f`), or a pipeline's `producer_get_barrier(state)`, which passes through `let` and `fn`",
        );
    }
    Diagnostic::error(
        format!(
            "an mbarrier is an element of an `i64` shared-memory tensor, as in `bars[i]`; found {}",
            crate::diag::article(&v.kind())
        ),
        span,
        "not a barrier",
    )
    .with_help("allocate the barriers as `smem.allocate_tensor(i64, make_layout(STAGES))` and pass `bars[i]`")
}
