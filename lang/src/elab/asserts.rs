//! `assert(cond)` and `assert(cond, "message")`.
//!
//! The condition is a comparison of index integers (`==`, `!=`, `<`, `<=`, `>`, `>=`), or several
//! joined by `&&`, or any other compile-time `bool`. Each comparison is decided here when it can be:
//! both sides static, or both the same run-time value (`m == m` always holds). A static
//! failure is a compile-time error at the assert. A comparison over run-time values is, in a host
//! function, a [`kir::Assert`] that the runtime checks on every call before anything is launched
//! (a plan `assert` line); in a `const` it is an error. In a kernel, the run-time part of the
//! condition (any `bool` there: float comparisons, `||` and `!` too) is an [`Inst::Assert`]: the
//! thread checks it and, where it fails, prints where and traps (CUDA's device `assert`).

use super::value::Value;
use super::{Frame, Mode, R};
use crate::ast::{Arg, BinOp, Expr, ExprKind, UnOp};
use crate::diag::{article, Diagnostic};
use crate::kir::{self, BinaryOp, CmpOp, Cond, Inst, Operand, ValueTy};
use crate::pretty::print_expr;
use crate::span::Span;
use crate::types::Scalar;
use cute_layout::Int;

/// One comparison of the condition, as far as elaboration can decide it.
enum Clause {
    /// Decided now; `why` says what the values are, for the error when it does not hold.
    Static { holds: bool, why: String, span: Span, text: String },
    /// Over run-time index integers.
    Dynamic(kir::Assert),
    /// A run-time `bool` that is not a comparison of index integers (a kernel's `x < 1.0`).
    RuntimeBool { span: Span, value: Operand },
}

pub(super) fn cmp_op(op: BinOp) -> Option<CmpOp> {
    Some(match op {
        BinOp::Eq => CmpOp::Eq,
        BinOp::Ne => CmpOp::Ne,
        BinOp::Lt => CmpOp::Lt,
        BinOp::Le => CmpOp::Le,
        BinOp::Gt => CmpOp::Gt,
        BinOp::Ge => CmpOp::Ge,
        _ => return None,
    })
}

/// `K = 64, N = 32`: the sides' values, leaving out sides that are literals.
fn side_values(sides: &[(&str, i64)]) -> String {
    let parts: Vec<String> =
        sides.iter().filter(|(t, v)| *t != v.to_string()).map(|(t, v)| format!("{t} = {v}")).collect();
    parts.join(", ")
}

impl Frame<'_, '_> {
    /// `assert(cond)` / `assert(cond, "message")` as a statement-like call (gives `()`).
    pub(super) fn assert_call(&mut self, args: &[Arg], span: Span) -> R<Value> {
        if let Some(named) = args.iter().find_map(|a| a.name.as_ref()) {
            return Err(Diagnostic::error("`assert` takes no named arguments", named.span, "named argument")
                .with_help("write `assert(condition)` or `assert(condition, \"message\")`"));
        }
        if args.is_empty() || args.len() > 2 {
            return Err(Diagnostic::error(
                format!("`assert` takes a condition and an optional message, found {} arguments", args.len()),
                span,
                "wrong number of arguments",
            )
            .with_help("write `assert(condition)` or `assert(condition, \"message\")`"));
        }
        let message = match args.get(1) {
            None => None,
            Some(a) => match self.expr(&a.value)? {
                Value::Str(s) => Some(s),
                other => {
                    return Err(Diagnostic::error(
                        format!("the message of `assert` must be a string, found {}", article(&other.kind())),
                        a.value.span,
                        "not a string",
                    )
                    .with_help("write the message as a string literal: `assert(a == b, \"a and b must agree\")`"));
                }
            },
        };
        if self.mode == Mode::Kernel {
            return self.kernel_assert(&args[0].value, message, span);
        }
        let mut clauses = Vec::new();
        self.assert_clauses(&args[0].value, &mut clauses)?;
        for c in clauses {
            match c {
                Clause::Static { holds: true, .. } => {}
                Clause::Static { holds: false, why, span: at, text } => {
                    return Err(static_failure(&message, why, at, text))
                }
                Clause::RuntimeBool { span: at, .. } => return Err(self.runtime_assert_error(at)),
                Clause::Dynamic(mut a) => {
                    if self.mode != Mode::Host {
                        return Err(self.runtime_assert_error(a.span));
                    }
                    if let Some(m) = &message {
                        a.message = m.clone();
                    }
                    self.asserts.push(a);
                }
            }
        }
        Ok(Value::Unit)
    }

    fn runtime_assert_error(&self, at: Span) -> Diagnostic {
        Diagnostic::error(
            "this `assert` depends on run-time values, which only host functions and kernels can check",
            at,
            "known only at run time",
        )
        .with_help("assert on compile-time values here")
    }

    /// A kernel's assert: static comparisons are decided now; the run-time ones, and the
    /// instructions that compute them, become one [`Inst::Assert`] (its own region, so that code
    /// generation can leave all of it out when asserts are off).
    fn kernel_assert(&mut self, cond: &Expr, message: Option<String>, span: Span) -> R<Value> {
        let mut failed = None;
        let mut checks: Vec<Operand> = Vec::new();
        let insts = self.region(|f| {
            let mut clauses = Vec::new();
            f.assert_clauses(cond, &mut clauses)?;
            for c in clauses {
                match c {
                    Clause::Static { holds: true, .. } => {}
                    Clause::Static { holds: false, why, span: at, text } => {
                        failed = Some(static_failure(&message, why, at, text));
                    }
                    Clause::RuntimeBool { value, .. } => checks.push(value),
                    Clause::Dynamic(a) => {
                        let dst = f.fresh(ValueTy::Scalar(Scalar::Bool));
                        let (lhs, rhs) = (Operand::Int(a.lhs), Operand::Int(a.rhs));
                        f.emit(Inst::Cmp { dst, op: a.op, ty: Scalar::I32, frag: None, a: lhs, b: rhs, span: a.span });
                        checks.push(Operand::Value(dst));
                    }
                }
            }
            Ok(())
        })?;
        if let Some(d) = failed {
            return Err(d);
        }
        let Some(first) = checks.first().cloned() else {
            // Decided at compile time: what computing the condition emitted stays, as it would
            // for any other expression statement.
            insts.into_iter().for_each(|i| self.emit(i));
            return Ok(Value::Unit);
        };
        self.regions.push(insts);
        let mut value = first;
        for c in &checks[1..] {
            let dst = self.fresh(ValueTy::Scalar(Scalar::Bool));
            let (a, b) = (value, c.clone());
            self.emit(Inst::Binary { dst, op: BinaryOp::And, ty: Scalar::Bool, frag: None, a, b, span });
            value = Operand::Value(dst);
        }
        let insts = self.regions.pop().unwrap_or_default();
        let message = message.unwrap_or_else(|| print_expr(cond));
        self.emit(Inst::Assert { cond: Cond { insts, value }, message, span });
        Ok(Value::Unit)
    }

    /// The comparisons of an assert's condition, `&&` flattened, in source order.
    fn assert_clauses(&mut self, e: &Expr, out: &mut Vec<Clause>) -> R<()> {
        match &e.kind {
            ExprKind::Binary(BinOp::And, a, b) => {
                self.assert_clauses(a, out)?;
                self.assert_clauses(b, out)
            }
            ExprKind::Binary(op, a, b) if cmp_op(*op).is_some() => {
                let cmp = cmp_op(*op).unwrap_or(CmpOp::Eq);
                let va = self.expr(a)?;
                let vb = self.expr(b)?;
                let text = print_expr(e);
                if let (Value::Int(x), Value::Int(y)) = (&va, &vb) {
                    let (lt, rt) = (print_expr(a), print_expr(b));
                    out.push(int_clause(x, cmp, y, lt, rt, text, e.span));
                    return Ok(());
                }
                let v = self.binary(*op, va, vb, e.span, a.span, b.span)?;
                out.push(bool_clause(v, text, e.span)?);
                Ok(())
            }
            // A kernel computes any `bool`: `||` and `!` too.
            ExprKind::Binary(BinOp::Or, _, _) | ExprKind::Unary(UnOp::Not, _) if self.mode == Mode::Kernel => {
                let v = self.expr(e)?;
                out.push(bool_clause(v, print_expr(e), e.span)?);
                Ok(())
            }
            // `||` and `!` of comparisons: decided now, or an error (the plan has only `&&`).
            ExprKind::Binary(BinOp::Or, _, _) | ExprKind::Unary(UnOp::Not, _) => {
                let operands: Vec<&Expr> = match &e.kind {
                    ExprKind::Binary(_, a, b) => vec![a, b],
                    ExprKind::Unary(_, a) => vec![a],
                    _ => unreachable!("matched above"),
                };
                let mut all = Vec::new();
                for x in operands {
                    let mut sub = Vec::new();
                    self.assert_clauses(x, &mut sub)?;
                    let mut holds = true;
                    for c in sub {
                        match c {
                            Clause::Static { holds: h, .. } => holds &= h,
                            Clause::Dynamic(_) | Clause::RuntimeBool { .. } => {
                                let op = if matches!(e.kind, ExprKind::Binary(..)) { "`||`" } else { "`!`" };
                                return Err(Diagnostic::error(format!("{op} in an `assert` needs a condition known at compile time"), e.span, format!("{op} of run-time comparisons"))
                                    .with_help("write the run-time conditions as comparisons joined by `&&`, or as several `assert`s"));
                            }
                        }
                    }
                    all.push(holds);
                }
                let holds = if all.len() == 2 { all[0] || all[1] } else { !all[0] };
                out.push(Clause::Static { holds, why: "this is false".into(), span: e.span, text: print_expr(e) });
                Ok(())
            }
            _ => {
                let v = self.expr(e)?;
                // A host condition bound earlier (`let ok = n < 8; assert(ok)`).
                if let Some((lhs, op, rhs)) = self.host_cmp_of(&v) {
                    out.push(Clause::Dynamic(kir::Assert {
                        lhs,
                        op,
                        rhs,
                        message: print_expr(e),
                        lhs_text: String::new(),
                        rhs_text: String::new(),
                        span: e.span,
                    }));
                    return Ok(());
                }
                out.push(bool_clause(v, print_expr(e), e.span)?);
                Ok(())
            }
        }
    }
}

fn int_clause(x: &Int, op: CmpOp, y: &Int, lhs_text: String, rhs_text: String, text: String, span: Span) -> Clause {
    if let (Some(p), Some(q)) = (x.as_static(), y.as_static()) {
        let why = match side_values(&[(&lhs_text, p), (&rhs_text, q)]) {
            s if s.is_empty() => format!("{p} {} {q} is false", op.symbol()),
            s => s,
        };
        return Clause::Static { holds: op.holds(p, q), why, span, text };
    }
    // The same run-time value on both sides: decided for every value (`m < m` never holds).
    if x == y {
        let why = format!("`{lhs_text}` and `{rhs_text}` are the same value");
        return Clause::Static { holds: op.holds(0, 0), why, span, text };
    }
    Clause::Dynamic(kir::Assert { lhs: x.clone(), op, rhs: y.clone(), message: text, lhs_text, rhs_text, span })
}

fn bool_clause(v: Value, text: String, span: Span) -> R<Clause> {
    match v {
        Value::Bool(holds) => Ok(Clause::Static { holds, why: "this is false".into(), span, text }),
        Value::Scalar(Scalar::Bool, id) => Ok(Clause::RuntimeBool { span, value: Operand::Value(id) }),
        other => Err(Diagnostic::error(format!("the condition of `assert` must be a comparison, found {}", article(&other.kind())), span, "not a comparison")
            .with_help("compare index integers with `==`, `!=`, `<`, `<=`, `>` or `>=`, joined by `&&`: `assert(a.shape[1] == b.shape[1])`")),
    }
}

/// The error of a comparison that is false at compile time: the message (else the condition's
/// text), labelled with the values that make it false.
fn static_failure(message: &Option<String>, why: String, at: Span, text: String) -> Diagnostic {
    let what = message.clone().unwrap_or(text);
    Diagnostic::error(format!("assert failed: {what}"), at, why)
}
