//! Launch plans: how a host function's launches are written into the manifest for the runtime to
//! evaluate at call time.
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

use cute_lang::kir::{
    Assert, CmpOp, FmtSeg, Host, HostCond, HostStep, Kernel, Launch, Param, ParamKind, PlanArg, Require, ValueId,
};
use cute_layout::int::{Atom, Op};
use cute_layout::Int;
use std::collections::HashMap;
use std::fmt::Write;

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

/// The `for` record of a host run-time loop: `for $K | START | END | STEP`, `$K` the loop
/// variable's slot. `None` when a bound cannot be written (never produced by elaboration).
pub fn for_line(var: ValueId, start: &Int, end: &Int, step: &Int, vars: &HashMap<ValueId, usize>) -> Option<String> {
    let k = vars.get(&var)?;
    Some(format!("for ${k} | {} | {} | {}\n", expr_text(start, vars)?, expr_text(end, vars)?, expr_text(step, vars)?))
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

/// An expression in the plan's S-expression syntax; `None` if it refers to a value that is not one
/// of the host's dynamic values (which elaboration never produces).
pub fn expr_text(i: &Int, vars: &HashMap<ValueId, usize>) -> Option<String> {
    match i {
        Int::S(v) => Some(v.to_string()),
        Int::D(d) => {
            let mut parts = Vec::new();
            if d.coef != 1 {
                parts.push(d.coef.to_string());
            }
            for a in d.factors.iter() {
                parts.push(atom_text(a, vars)?);
            }
            if parts.len() == 1 {
                parts.pop()
            } else {
                Some(format!("(mul {})", parts.join(" ")))
            }
        }
    }
}

fn atom_text(a: &Atom, vars: &HashMap<ValueId, usize>) -> Option<String> {
    match a {
        Atom::Var { id, .. } => vars.get(id).map(|k| format!("${k}")),
        Atom::Op(op) => {
            let (name, x, y) = match &**op {
                Op::Add(x, y) => ("add", x, y),
                Op::Div(x, y) => ("div", x, y),
                Op::Mod(x, y) => ("mod", x, y),
                Op::CeilDiv(x, y) => ("ceildiv", x, y),
                Op::Min(x, y) => ("min", x, y),
                Op::Max(x, y) => ("max", x, y),
            };
            Some(format!("({name} {} {})", expr_text(x, vars)?, expr_text(y, vars)?))
        }
        _ => None,
    }
}

/// The manifest lines of one launch. Expressions contain spaces but never `|`, which separates them:
/// ```text
/// launch elementwise_add_kernel
/// grid (div $0 16) | (div $1 256) | 1
/// block 128 | 1 | 1
/// smem 0
/// arg tensor 0 | 0 | (div $0 16) | (div $1 256) | $2 | (mul 16 $2)
/// arg scalar i32 | (mul $0 $1)
/// endlaunch
/// ```
/// A tensor argument names the host parameter it views, the element offset of the view, then the
/// values of the view's `?` entries in ABI order (shapes, then strides). A launch with a
/// `stream(s)` clause has a `stream P` line after `smem`: P is the index of the host's `stream`
/// parameter the launch goes to (without it, the launch goes to the call's stream).
pub fn launch_lines(l: &Launch, vars: &HashMap<ValueId, usize>) -> Option<String> {
    let e = |i: &Int| expr_text(i, vars);
    let dims = |d: &[Int; 3]| -> Option<String> { Some(format!("{} | {} | {}", e(&d[0])?, e(&d[1])?, e(&d[2])?)) };
    let mut out = format!(
        "launch {}\ngrid {}\nblock {}\nsmem {}\n",
        l.kernel,
        dims(&l.grid)?,
        dims(&l.block)?,
        e(&l.smem_bytes)?
    );
    if let Some(p) = l.stream {
        let _ = writeln!(out, "stream {p}");
    }
    for a in &l.args {
        match a {
            PlanArg::Tensor { host_param, offset, dyn_leaves } => {
                let mut parts = vec![host_param.to_string(), e(offset)?];
                for d in dyn_leaves {
                    parts.push(e(d)?);
                }
                let _ = writeln!(out, "arg tensor {}", parts.join(" | "));
            }
            PlanArg::Scalar { ty, value } => {
                let _ = writeln!(out, "arg scalar {} | {}", ty.name(), e(value)?);
            }
        }
    }
    out.push_str("endlaunch\n");
    Some(out)
}

/// A host `printf` as one manifest line: `print` then segments separated by ` | `, each `s:HEX`
/// (text, UTF-8 bytes in hexadecimal, so no character needs escaping) or `e:EXPR` (an integer).
/// ```text
/// print s:3e3f3f20 | e:$0 | s:0a
/// ```
pub fn print_line(segs: &[FmtSeg], vars: &HashMap<ValueId, usize>) -> Option<String> {
    let mut parts = Vec::new();
    for s in segs {
        parts.push(match s {
            FmtSeg::Text(t) => format!("s:{}", t.bytes().map(|b| format!("{b:02x}")).collect::<String>()),
            FmtSeg::Int(i) => format!("e:{}", expr_text(i, vars)?),
            FmtSeg::Value(..) => return None,
        });
    }
    Some(format!("print {}\n", parts.join(" | ")))
}

/// The position of each dynamic ABI value of a kernel (`$k`, the same numbering as a host's).
pub fn kernel_vars(k: &Kernel) -> HashMap<ValueId, usize> {
    param_vars(&k.params)
}

/// A kernel's launch condition: `require EXPR | DIVISOR | s:HEX` — EXPR (over the kernel's `$k`)
/// must be a multiple of DIVISOR; the text says what it is, for the runtime's error message.
pub fn require_line(r: &Require, vars: &HashMap<ValueId, usize>) -> Option<String> {
    let what: String = r.what.bytes().map(|b| format!("{b:02x}")).collect();
    Some(format!("require {} | {} | s:{what}\n", expr_text(&r.dividend, vars)?, r.divisor))
}

/// UTF-8 text as `s:HEX` (no character needs escaping in the line-based format).
fn hex_text(t: &str) -> String {
    format!("s:{}", t.bytes().map(|b| format!("{b:02x}")).collect::<String>())
}

/// A host `assert` over run-time values: `assert LHS OP RHS | s:MESSAGE | s:LHS_TEXT | s:RHS_TEXT`,
/// OP one of `== != < <= > >=`; the runtime refuses a call where it does not hold, naming the
/// message and the two sides' source text and values.
/// ```text
/// assert $1 == $4 | s:41206d757374... | s:412e73686170655b315d | s:422e73686170655b315d
/// ```
/// A side that cannot be written (never produced by elaboration) is written as `?`, which the
/// runtime cannot parse: the host function is then unusable rather than unchecked.
pub fn assert_line(a: &Assert, vars: &HashMap<ValueId, usize>) -> String {
    let side = |i: &Int| expr_text(i, vars).unwrap_or_else(|| "?".to_string());
    format!(
        "assert {} {} {} | {} | {} | {}\n",
        side(&a.lhs),
        a.op.symbol(),
        side(&a.rhs),
        hex_text(&a.message),
        hex_text(&a.lhs_text),
        hex_text(&a.rhs_text)
    )
}

/// The plan's name of a comparison in an `if` condition.
fn cmp_name(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "eq",
        CmpOp::Ne => "ne",
        CmpOp::Lt => "lt",
        CmpOp::Le => "le",
        CmpOp::Gt => "gt",
        CmpOp::Ge => "ge",
    }
}

/// A host `if` condition as an S-expression: `(lt A B)` (also `eq ne le gt ge`), `(and C D)`,
/// `(or C D)`, `(not C)`, over the plan's integer expressions. A side that cannot be written
/// (never produced by elaboration) is written as `?`, which the runtime cannot parse: the host
/// function is then unusable rather than wrong.
pub fn cond_text(c: &HostCond, vars: &HashMap<ValueId, usize>) -> String {
    match c {
        HostCond::Cmp { lhs, op, rhs } => {
            let side = |i: &Int| expr_text(i, vars).unwrap_or_else(|| "?".to_string());
            format!("({} {} {})", cmp_name(*op), side(lhs), side(rhs))
        }
        HostCond::And(a, b) => format!("(and {} {})", cond_text(a, vars), cond_text(b, vars)),
        HostCond::Or(a, b) => format!("(or {} {})", cond_text(a, vars), cond_text(b, vars)),
        HostCond::Not(a) => format!("(not {})", cond_text(a, vars)),
    }
}
