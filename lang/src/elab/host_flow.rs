//! Run-time control flow in host functions: `if`/`else` on comparisons of run-time index integers,
//! and `for` loops with run-time bounds or step.
//!
//! A comparison of run-time index integers in a host function (`n < 1024`, `size(a) % 8 == 0`)
//! is a [`kir::HostCond`], joined by `&&`, `||` and `!`. It travels as a run-time `bool` value
//! whose id this frame maps to its condition, so it can be bound with `let` and tested later. A
//! host `if` on one elaborates both branches, each into a [`kir::HostBranch`] of its own: the
//! launches, prints, `assert`s and partial-tile conditions (`require`) made inside a branch belong
//! to it, and the runtime checks them only when the branch is taken. Comparisons decided at compile
//! time (both sides static, or the same value on both sides) stay static `bool`s, so an `if` on
//! them elaborates only the branch taken, as everywhere else.
//!
//! A host `for` whose bounds or step are known only at run time is elaborated once, into a
//! [`kir::HostStep::For`]: its variable is a fresh run-time index integer (usable wherever one is:
//! launch arguments, grids, tiles, offsets, conditions), which the plan gives a slot of its own
//! after the host's dynamic values. The body's checks belong to the loop and are made per trip.
//! `break` and `continue` of such a loop, also under host `if`s in its body, are plan steps; a
//! jump under a run-time condition to any other target (an unrolled loop, the end of the host
//! function) has no plan step and is refused.

use super::asserts::cmp_op;
use super::flow::LoopCtx;
use super::value::Value;
use super::{Frame, Mode, R};
use crate::ast::{BinOp, Block, Ident, Stmt};
use crate::diag::{article, Diagnostic};
use crate::kir::{self, CmpOp, HostCond, ValueTy};
use crate::span::Span;
use crate::types::Scalar;
use cute_layout::Int;
use std::collections::HashMap;

/// A condition operand: decided now, or a run-time host condition.
enum Cond {
    Static(bool),
    Run(HostCond),
}

impl Frame<'_, '_> {
    /// A run-time host condition as a value (a `bool` the frame can branch on).
    fn host_cond_value(&mut self, c: HostCond) -> Value {
        let id = self.fresh(ValueTy::Scalar(Scalar::Bool));
        self.host_conds.insert(id, c);
        Value::Scalar(Scalar::Bool, id)
    }

    fn as_cond(&self, v: &Value) -> Option<Cond> {
        match v {
            Value::Bool(b) => Some(Cond::Static(*b)),
            Value::Scalar(Scalar::Bool, id) => self.host_conds.get(id).cloned().map(Cond::Run),
            _ => None,
        }
    }

    /// `a OP b` in a host function where the operands involve run-time values: a comparison of
    /// index integers, or `&&`/`||` of conditions. `Ok(None)` leaves the operation to the general
    /// rules (and their errors).
    pub(super) fn host_binary(
        &mut self,
        op: BinOp,
        a: &Value,
        b: &Value,
        span: Span,
        sa: Span,
        sb: Span,
    ) -> R<Option<Value>> {
        debug_assert_eq!(self.mode, Mode::Host);
        if let Some(cmp) = cmp_op(op) {
            match (a, b) {
                (Value::Int(x), Value::Int(y)) => {
                    if let (Some(p), Some(q)) = (x.as_static(), y.as_static()) {
                        return Ok(Some(Value::Bool(cmp.holds(p, q))));
                    }
                    // The same run-time value on both sides: decided for every value.
                    if x == y {
                        return Ok(Some(Value::Bool(cmp.holds(0, 0))));
                    }
                    return Ok(Some(self.host_cond_value(HostCond::Cmp { lhs: x.clone(), op: cmp, rhs: y.clone() })));
                }
                (Value::Int(i), Value::Float(_)) | (Value::Float(_), Value::Int(i)) if !i.is_static() => {
                    let at = if matches!(a, Value::Float(_)) { sa } else { sb };
                    return Err(Diagnostic::error(
                        format!(
                            "cannot compare a run-time integer with a float (`{}`) in a host function",
                            op.symbol()
                        ),
                        at,
                        "a float",
                    )
                    .with_help("host conditions compare index integers: write an integer, e.g. `size(a) > 1`"));
                }
                _ => {}
            }
            if self.as_cond(a).is_some_and(|c| matches!(c, Cond::Run(_)))
                || self.as_cond(b).is_some_and(|c| matches!(c, Cond::Run(_)))
            {
                return Err(Diagnostic::error(
                    format!("cannot apply `{}` to run-time conditions in a host function", op.symbol()),
                    span,
                    "comparison of conditions",
                )
                .with_help("combine host conditions with `&&`, `||` and `!`"));
            }
            if let Some(at) =
                [(a, sa), (b, sb)].into_iter().find_map(|(v, at)| matches!(v, Value::Tensor(_)).then_some(at))
            {
                return Err(Diagnostic::error(format!("cannot compare a tensor with `{}`", op.symbol()), at, "a tensor")
                    .with_help("a host function branches on index integers: compare an extent, e.g. `size(a) < 4096` or `a.shape[1] <= 1024`"));
            }
            return Ok(None);
        }
        if matches!(op, BinOp::And | BinOp::Or) {
            let (Some(x), Some(y)) = (self.as_cond(a), self.as_cond(b)) else {
                let (bad, at) = if self.as_cond(a).is_none() { (a, sa) } else { (b, sb) };
                if self.as_cond(a).is_some() || self.as_cond(b).is_some() || matches!(bad, Value::Int(_)) {
                    return Err(Diagnostic::error(
                        format!("`{}` joins conditions, found {}", op.symbol(), article(&bad.kind())),
                        at,
                        "not a condition",
                    )
                    .with_help("compare explicitly, e.g. `n != 0`"));
                }
                return Ok(None);
            };
            let and = op == BinOp::And;
            let v = match (x, y) {
                (Cond::Static(p), Cond::Static(q)) => Value::Bool(if and { p && q } else { p || q }),
                // `c && true` is `c`, `c && false` is false; `c || false` is `c`, `c || true` is true.
                (Cond::Static(p), Cond::Run(c)) | (Cond::Run(c), Cond::Static(p)) => {
                    if p == and {
                        self.host_cond_value(c)
                    } else {
                        Value::Bool(p)
                    }
                }
                (Cond::Run(c), Cond::Run(d)) => {
                    let c = if and {
                        HostCond::And(Box::new(c), Box::new(d))
                    } else {
                        HostCond::Or(Box::new(c), Box::new(d))
                    };
                    self.host_cond_value(c)
                }
            };
            return Ok(Some(v));
        }
        Ok(None)
    }

    /// `!c` of a run-time host condition (`None`: not one).
    pub(super) fn host_not(&mut self, v: &Value) -> Option<Value> {
        match self.as_cond(v)? {
            Cond::Run(c) => Some(self.host_cond_value(HostCond::Not(Box::new(c)))),
            Cond::Static(b) => Some(Value::Bool(!b)),
        }
    }

    /// `where(c, a, b)` in a host function, `c` a run-time condition and `a`, `b` index integers:
    /// `b + (a - b) * [c]` as plan arithmetic (`None`: not such a call). A launch plan's
    /// expressions have no select, so the indicator `[c]` (1 where `c` holds, else 0) is built from
    /// what they have, exact in i64: `x >= y` is `min(max(x - y + 1, 0), 1)` and likewise for the
    /// other comparisons, `&&` a product, `||` a `max`, `!` `1 - [c]`.
    pub(super) fn host_select(&self, c: &Value, a: &Value, b: &Value, span: Span) -> R<Option<Value>> {
        let Some(Cond::Run(c)) = self.as_cond(c) else {
            return Ok(None);
        };
        let (Value::Int(a), Value::Int(b)) = (a, b) else {
            let other = if matches!(a, Value::Int(_)) { b } else { a };
            return Err(Diagnostic::error(
                format!("`where` on a run-time condition in a host function chooses between index integers, found {}", article(&other.kind())),
                span,
                "not an index integer",
            )
            .with_help("a launch plan computes with index integers (extents, tile counts, grid sizes); pass other values to a kernel and choose there"));
        };
        let at = |e| super::layout_err(e, span);
        let picked = a.sub(b).and_then(|d| d.mul(&indicator(&c)?)).and_then(|d| b.add(&d)).map_err(at)?;
        Ok(Some(Value::Int(picked)))
    }

    /// The run-time condition a host `assert` clause stands for, when `v` is one made by a single
    /// comparison (`let ok = n < 8; assert(ok)`).
    pub(super) fn host_cmp_of(&self, v: &Value) -> Option<(Int, CmpOp, Int)> {
        match self.as_cond(v)? {
            Cond::Run(HostCond::Cmp { lhs, op, rhs }) => Some((lhs, op, rhs)),
            _ => None,
        }
    }

    /// A host `if` on the run-time `bool` `id`: both branches elaborated, each into its own plan
    /// branch.
    pub(super) fn host_if(
        &mut self,
        id: kir::ValueId,
        cond_span: Span,
        then: &Block,
        els: Option<&Stmt>,
        span: Span,
    ) -> R<super::flow::Flow> {
        let Some(cond) = self.host_conds.get(&id).cloned() else {
            return Err(Diagnostic::error(
                "a host function can branch only on comparisons of index integers",
                cond_span,
                "not a host condition",
            )
            .with_help("compare index integers (`==`, `!=`, `<`, `<=`, `>`, `>=`), joined by `&&`, `||` and `!`"));
        };
        let then = self.host_branch(|f| f.block(then))?;
        let els = match els {
            Some(e) => self.host_branch(|f| f.scoped_stmt(e))?,
            None => kir::HostBranch::default(),
        };
        if !(then.is_empty() && els.is_empty()) {
            self.steps.push(kir::HostStep::If { cond, then, els, span });
        }
        // The only run-time jumps of a host function are `break` and `continue` steps of its
        // run-time loops (`flow` refuses the others), which the runtime takes: control goes on
        // here as far as elaboration is concerned.
        Ok(super::flow::Flow::default())
    }

    /// A host `for` with run-time bounds or step (a static step is already checked positive): the
    /// body elaborated once, with `var` a run-time index integer, into a plan loop.
    pub(super) fn host_for(
        &mut self,
        var: &Ident,
        start: Int,
        end: Int,
        step: Int,
        body: &Block,
        span: Span,
    ) -> R<super::flow::Flow> {
        let iv = self.fresh(ValueTy::Scalar(Scalar::I32));
        let i = Value::Int(Int::var(iv, 1));
        self.prog.observer.binding(var.span, &i);
        self.loops.push(LoopCtx::host());
        let body = self.host_branch(|f| {
            f.scopes.push(HashMap::from([(var.name.clone(), i)]));
            let r = f.block(body);
            f.scopes.pop();
            r
        });
        self.loops.pop();
        let body = body?;
        if !body.is_empty() {
            self.steps.push(kir::HostStep::For { var: iv, start, end, step, body, span });
        }
        Ok(super::flow::Flow::default())
    }

    /// `break`/`continue` of the innermost loop, a host run-time loop: a plan step. What follows
    /// it in its block is unreachable; what follows the host `if` around it is elaborated (the
    /// runtime skips it when the jump is taken).
    pub(super) fn host_jump(&mut self, jump: super::flow::Jump) -> super::flow::Flow {
        self.steps.push(if jump == super::flow::Jump::Break { kir::HostStep::Break } else { kir::HostStep::Continue });
        super::flow::Flow { flags: Vec::new(), always: true, jump: None }
    }

    /// Elaborates a branch of a host `if` (or the body of a host loop): its steps, `assert`s and
    /// `require`s are its own. It is a run-time region: a jump in it that the plan cannot make
    /// (a `return`, a `break` of an unrolled loop) is refused rather than taken at compile time.
    pub(super) fn host_branch(&mut self, f: impl FnOnce(&mut Self) -> R<super::flow::Flow>) -> R<kir::HostBranch> {
        let steps = std::mem::take(&mut self.steps);
        let requires = std::mem::take(&mut self.requires);
        let asserts = std::mem::take(&mut self.asserts);
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        let branch = kir::HostBranch {
            steps: std::mem::replace(&mut self.steps, steps),
            requires: std::mem::replace(&mut self.requires, requires),
            asserts: std::mem::replace(&mut self.asserts, asserts),
        };
        r.map(|_| branch)
    }
}

/// A jump under a run-time condition in a host function that the plan cannot make: a `return`,
/// or a `break`/`continue` of a loop unrolled at compile time.
pub(super) fn host_jump_error(what: &str, span: Span) -> Diagnostic {
    if what == "`return`" {
        return Diagnostic::error(
            "`return` inside a run-time `if` or loop is not available in host functions",
            span,
            "run-time return",
        )
        .with_help("put what follows in the `else` branch of the `if`, or leave the loop with `break`");
    }
    Diagnostic::error(format!("{what} under a run-time condition cannot leave a loop unrolled at compile time"), span, "run-time jump")
        .with_help("in a host function, `break` and `continue` under a run-time `if` work in a loop with run-time bounds; give this loop run-time bounds, or make the condition static")
}

/// 1 where the host condition `c` holds, else 0, as index-integer arithmetic ([`Frame::host_select`]).
fn indicator(c: &HostCond) -> cute_layout::Result<Int> {
    let one = Int::S(1);
    // 1 where the integer d is at least 1, else 0 (for parameters of any sign).
    let positive = |d: Int| d.indicator_of_positive();
    Ok(match c {
        HostCond::Cmp { lhs, op, rhs } => match op {
            CmpOp::Gt => positive(lhs.sub(rhs)?),
            CmpOp::Ge => positive(lhs.sub(rhs)?.add(&one)?),
            CmpOp::Lt => positive(rhs.sub(lhs)?),
            CmpOp::Le => positive(rhs.sub(lhs)?.add(&one)?),
            CmpOp::Eq | CmpOp::Ne => {
                let ge = positive(lhs.sub(rhs)?.add(&one)?);
                let le = positive(rhs.sub(lhs)?.add(&one)?);
                let eq = ge.mul(&le)?;
                if *op == CmpOp::Eq {
                    eq
                } else {
                    one.sub(&eq)?
                }
            }
        },
        HostCond::And(x, y) => indicator(x)?.mul(&indicator(y)?)?,
        // a + b - a·b: `maximum` would fold on the positivity it assumes of leaves.
        HostCond::Or(x, y) => {
            let (a, b) = (indicator(x)?, indicator(y)?);
            a.add(&b)?.sub(&a.mul(&b)?)?
        }
        HostCond::Not(x) => one.sub(&indicator(x)?)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The indicator of every comparison, and of `&&`, `||`, `!` over them, evaluated at run-time
    /// values (zero and negative ones too: `i32` parameters) is 1 exactly where the condition holds.
    #[test]
    fn indicator_is_one_exactly_where_the_condition_holds() {
        let (x, y) = (Int::var(0, 1), Int::var(1, 1));
        let cmp = |op| HostCond::Cmp { lhs: x.clone(), op, rhs: y.clone() };
        let shifted = HostCond::Cmp { lhs: x.add(&Int::S(3)).unwrap(), op: CmpOp::Lt, rhs: Int::S(130) };
        for vx in -5..=5 {
            for vy in -5..=5 {
                let env = |id: u32| Some(if id == 0 { vx } else { vy });
                let value = |c: &HostCond| indicator(c).unwrap().eval(&env).unwrap();
                for op in CmpOp::ALL {
                    assert_eq!(value(&cmp(op)), i64::from(op.holds(vx, vy)), "{vx} {} {vy}", op.symbol());
                }
                let (lt, ne) = (cmp(CmpOp::Lt), cmp(CmpOp::Ne));
                let and = HostCond::And(Box::new(lt.clone()), Box::new(ne.clone()));
                let or = HostCond::Or(Box::new(lt.clone()), Box::new(cmp(CmpOp::Eq)));
                let not = HostCond::Not(Box::new(and.clone()));
                assert_eq!(value(&and), i64::from(vx < vy && vx != vy));
                assert_eq!(value(&or), i64::from(vx <= vy));
                assert_eq!(value(&not), i64::from(!(vx < vy && vx != vy)));
                assert_eq!(value(&shifted), i64::from(vx + 3 < 130));
                // Comparisons with constants (`l == -1 && r == 0`): nothing folded on the
                // positivity the layout algebra assumes of extents, which i32 parameters lack.
                let eq = |v: &Int, k: i64| HostCond::Cmp { lhs: v.clone(), op: CmpOp::Eq, rhs: Int::S(k) };
                let both = HostCond::And(Box::new(eq(&x, -1)), Box::new(eq(&y, 0)));
                assert_eq!(value(&both), i64::from(vx == -1 && vy == 0), "{vx} == -1 && {vy} == 0");
                let either = HostCond::Or(Box::new(eq(&x, -1)), Box::new(eq(&y, 0)));
                assert_eq!(value(&either), i64::from(vx == -1 || vy == 0), "{vx} == -1 || {vy} == 0");
                let ge = HostCond::Cmp { lhs: x.clone(), op: CmpOp::Ge, rhs: Int::S(-2) };
                assert_eq!(value(&ge), i64::from(vx >= -2), "{vx} >= -2");
            }
        }
    }
}
