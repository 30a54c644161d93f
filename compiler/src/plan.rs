//! Launch plans: a host function's launches as cute-abi's plan types (written by its manifest
//! writer), for the runtime to evaluate at call time.
//!
//! A host function does no work of its own on the GPU: it tiles its tensors and launches kernels.
//! Elaboration has already reduced every launch to symbolic integer expressions over the host's
//! dynamic values (the `?` entries of its tensor parameters, then its i32 parameters, numbered
//! `$0, $1, ...` in parameter order, shapes before strides). Writing those expressions down and
//! evaluating them in the runtime needs no host compiler, no object files and no linking: a call costs
//! one pass over a few integer expressions per launch (measured in docs/runtime.md).
//!
//! Expressions are S-expressions: an integer, `$k`, or `(op a b ...)` with op one of `mul` (product
//! of all operands), `add`, `div` (floor), `mod` (Euclidean), `ceildiv`, `min`.

use cute_abi::manifest::{self as abi, Expr};
use cute_lang::kir::{
    Assert, FmtSeg, Host, HostCond, HostStep, Kernel, Launch, Param, ParamKind, PlanArg, Require, ValueId,
};
use cute_layout::int::{Atom, Op};
use cute_layout::Int;
use std::collections::HashMap;

/// The position of each dynamic value of a host function in its `$k` numbering: its parameters'
/// values, then one slot per run-time loop variable, in the order of the loops' `for` records
/// (pre-order: an outer loop before the loops in its body), as the runtime expects.
pub fn host_vars(h: &Host) -> HashMap<ValueId, usize> {
    let mut map = param_vars(&h.params);
    loop_vars(&h.steps, &mut map);
    map
}

fn loop_vars(steps: &[HostStep], map: &mut HashMap<ValueId, usize>) {
    for st in steps {
        match st {
            HostStep::For { var, body, .. } => {
                let k = map.len();
                map.insert(*var, k);
                loop_vars(&body.steps, map);
            }
            HostStep::If { then, els, .. } => {
                loop_vars(&then.steps, map);
                loop_vars(&els.steps, map);
            }
            HostStep::Launch(_) | HostStep::Print(_) | HostStep::Break | HostStep::Continue => {}
        }
    }
}

/// `$k` numbering over a parameter list: each tensor's `?` entries (ABI order), each scalar.
fn param_vars(params: &[Param]) -> HashMap<ValueId, usize> {
    let mut map = HashMap::new();
    for p in params {
        match &p.kind {
            ParamKind::Tensor { dyn_leaves, .. } => {
                for id in dyn_leaves {
                    let k = map.len();
                    map.insert(*id, k);
                }
            }
            ParamKind::Scalar(_) => {
                let k = map.len();
                map.insert(p.value, k);
            }
            // Not an integer of the plan: launches name it by parameter index.
            ParamKind::Stream => {}
        }
    }
    map
}

/// The position of each dynamic ABI value of a kernel (`$k`, the same numbering as a host's).
pub fn kernel_vars(k: &Kernel) -> HashMap<ValueId, usize> {
    param_vars(&k.params)
}

/// An integer as a plan expression; `None` if it refers to a value that is not one of the
/// host's dynamic values (which elaboration never produces). A program's `ceil_div`
/// ([`Op::CeilQuot`]) is written `ceildiv` here: outside a view's extents the runtime never checks
/// a ceiling division, and manifests keep the form older runtimes read ([`leaf_expr`] keeps it).
pub fn expr(i: &Int, vars: &HashMap<ValueId, usize>) -> Option<Expr> {
    int_expr(i, vars, false)
}

/// [`expr`] for a view's extent or stride, where the runtime takes a `ceildiv` that does not
/// divide for a partial tile: a program's `ceil_div` is written `ceilquot`, which it leaves alone.
fn leaf_expr(i: &Int, vars: &HashMap<ValueId, usize>) -> Option<Expr> {
    int_expr(i, vars, true)
}

fn int_expr(i: &Int, vars: &HashMap<ValueId, usize>, quot: bool) -> Option<Expr> {
    match i {
        Int::S(v) => Some(Expr::Const(*v)),
        Int::D(d) => {
            let mut parts = Vec::new();
            if d.coef != 1 {
                parts.push(Expr::Const(d.coef));
            }
            for a in d.factors.iter() {
                parts.push(atom(a, vars, quot)?);
            }
            if parts.len() == 1 {
                parts.pop()
            } else {
                Some(Expr::Mul(parts))
            }
        }
    }
}

/// [`expr`]'s text (`(mul 16 $2)`), as the manifest writes it.
pub fn expr_text(i: &Int, vars: &HashMap<ValueId, usize>) -> Option<String> {
    expr(i, vars).map(|e| e.to_string())
}

fn atom(a: &Atom, vars: &HashMap<ValueId, usize>, quot: bool) -> Option<Expr> {
    match a {
        Atom::Var { id, .. } => vars.get(id).map(|k| Expr::Var(*k)),
        Atom::Op(op) => {
            let e = |x: &Int| int_expr(x, vars, quot);
            let two = |x: &Int, y: &Int| Some((Box::new(e(x)?), Box::new(e(y)?)));
            let list = |x: &Int, y: &Int| Some(vec![e(x)?, e(y)?]);
            Some(match &**op {
                Op::Add(x, y) => Expr::Add(list(x, y)?),
                Op::Div(x, y) => two(x, y).map(|(a, b)| Expr::Div(a, b))?,
                Op::Mod(x, y) => two(x, y).map(|(a, b)| Expr::Mod(a, b))?,
                Op::CeilDiv(x, y) => two(x, y).map(|(a, b)| Expr::CeilDiv(a, b))?,
                Op::CeilQuot(x, y) if quot => two(x, y).map(|(a, b)| Expr::CeilQuot(a, b))?,
                Op::CeilQuot(x, y) => two(x, y).map(|(a, b)| Expr::CeilDiv(a, b))?,
                Op::Min(x, y) => Expr::Min(list(x, y)?),
                Op::Max(x, y) => Expr::Max(list(x, y)?),
            })
        }
        _ => None,
    }
}

/// One launch of a host function. A tensor argument names the host parameter it views, the
/// element offset of the view, then the values of the view's `?` entries in ABI order (shapes,
/// then strides). A launch with a `stream(s)` clause goes to the host's `stream` parameter of
/// that index (without it, to the call's stream).
pub fn launch(l: &Launch, vars: &HashMap<ValueId, usize>) -> Option<abi::LaunchPlan> {
    let e = |i: &Int| expr(i, vars);
    let dims = |d: &[Int; 3]| -> Option<[Expr; 3]> { Some([e(&d[0])?, e(&d[1])?, e(&d[2])?]) };
    let mut args = Vec::with_capacity(l.args.len());
    for a in &l.args {
        args.push(match a {
            PlanArg::Tensor { host_param, offset, dyn_leaves } => abi::PlanArg::Tensor {
                host_param: *host_param,
                offset: e(offset)?,
                dyn_leaves: dyn_leaves.iter().map(|i| leaf_expr(i, vars)).collect::<Option<_>>()?,
            },
            PlanArg::Scalar { ty, value } => abi::PlanArg::Scalar { ty: *ty, value: e(value)? },
        });
    }
    Some(abi::LaunchPlan {
        kernel: l.kernel.clone(),
        grid: dims(&l.grid)?,
        block: dims(&l.block)?,
        smem: e(&l.smem_bytes)?,
        args,
        stream: l.stream,
    })
}

/// A host `printf`: text and integers (a value that is not an integer of the plan: `None`).
pub fn print(segs: &[FmtSeg], vars: &HashMap<ValueId, usize>) -> Option<Vec<abi::PrintSeg>> {
    segs.iter()
        .map(|s| match s {
            FmtSeg::Text(t) => Some(abi::PrintSeg::Text(t.clone())),
            FmtSeg::Int(i) => expr(i, vars).map(abi::PrintSeg::Int),
            FmtSeg::Value(..) => None,
        })
        .collect()
}

/// A launch condition: the value (over the kernel's or host's `$k`) must be a multiple of a
/// divisor or at least a minimum; the text says what it is, for the runtime's error message.
pub fn require(r: &Require, vars: &HashMap<ValueId, usize>) -> Option<abi::Require> {
    Some(abi::Require { expr: expr(&r.value, vars)?, need: r.need, what: r.what.clone() })
}

/// The plan's comparison for the front end's.
/// A host `assert` over run-time values: the runtime refuses a call where it does not hold,
/// naming the message and the two sides' source text and values.
pub fn assert(a: &Assert, vars: &HashMap<ValueId, usize>) -> Option<abi::Assert> {
    Some(abi::Assert {
        lhs: expr(&a.lhs, vars)?,
        op: a.op,
        rhs: expr(&a.rhs, vars)?,
        message: a.message.clone(),
        lhs_text: a.lhs_text.clone(),
        rhs_text: a.rhs_text.clone(),
    })
}

/// A host `if` condition over the plan's integer expressions.
pub fn cond(c: &HostCond, vars: &HashMap<ValueId, usize>) -> Option<abi::Cond> {
    Some(match c {
        HostCond::Cmp { lhs, op, rhs } => abi::Cond::Cmp(*op, expr(lhs, vars)?, expr(rhs, vars)?),
        HostCond::And(a, b) => abi::Cond::And(vec![cond(a, vars)?, cond(b, vars)?]),
        HostCond::Or(a, b) => abi::Cond::Or(vec![cond(a, vars)?, cond(b, vars)?]),
        HostCond::Not(a) => abi::Cond::Not(Box::new(cond(a, vars)?)),
    })
}
