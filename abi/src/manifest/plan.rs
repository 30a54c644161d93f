//! Host-function plans: the `host` blocks of the manifest. A host function's parameters, its
//! checks (`require`, `assert`), and its steps (launches with their grid, block, shared memory and
//! kernel arguments as expressions over the call's dynamic values `$k`, prints, run-time `if`s and
//! loops), as cutec writes them and the runtime carries them out (docs/runtime.md).

use std::fmt;

use super::expr::{parse_expr, skip_ws, CmpOp, Cond, EvalError, Expr};
use super::signature::{hex_text, var_name_of, var_sources_of, ParamKind, ParamSig, Require, VarSource};
use crate::DType;

/// A host function's run-time `assert` (`assert LHS OP RHS | s:MESSAGE | s:LHS_TEXT | s:RHS_TEXT`):
/// the call is refused unless `LHS OP RHS` holds for its dynamic values. The texts are the
/// `.cute` source of the message (or of the condition) and of the two sides, for the error message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assert {
    /// The left side.
    pub lhs: Expr,
    /// The comparison.
    pub op: CmpOp,
    /// The right side.
    pub rhs: Expr,
    /// The user's message, or the condition's source text.
    pub message: String,
    /// The left side's source text (`A.shape[1]`); may be empty.
    pub lhs_text: String,
    /// The right side's source text; may be empty.
    pub rhs_text: String,
}

impl Assert {
    /// Parses the fields after `assert`.
    pub fn parse(rest: &str) -> std::result::Result<Assert, String> {
        let mut fields = rest.split('|').map(str::trim);
        let cond = fields.next().unwrap_or("").as_bytes();
        let mut pos = 0;
        let lhs = parse_expr(cond, &mut pos, 0).map_err(|e| format!("`assert`: {e}"))?;
        skip_ws(cond, &mut pos);
        let start = pos;
        while cond.get(pos).is_some_and(|c| b"=!<>".contains(c)) {
            pos += 1;
        }
        let sym = std::str::from_utf8(&cond[start..pos]).unwrap_or("");
        let op = CmpOp::ALL.into_iter().find(|o| o.symbol() == sym).ok_or_else(|| {
            format!("`assert`: expected a comparison (== != < <= > >=) after the left side, found `{sym}`")
        })?;
        let rhs = parse_expr(cond, &mut pos, 0).map_err(|e| format!("`assert`: {e}"))?;
        skip_ws(cond, &mut pos);
        if pos != cond.len() {
            return Err(format!(
                "`assert`: unexpected `{}` after the condition",
                String::from_utf8_lossy(&cond[pos..])
            ));
        }
        let mut text =
            || fields.next().filter(|f| !f.is_empty()).map(hex_text).transpose().map(Option::unwrap_or_default);
        let (message, lhs_text, rhs_text) = (text()?, text()?, text()?);
        Ok(Assert { lhs, op, rhs, message, lhs_text, rhs_text })
    }

    /// Checks the condition for `vars`: `Err("assert failed: MESSAGE (A.shape[1] = 64, B.shape[1] = 96)")`
    /// when it does not hold. A side without source text is named after its value (`n`,
    /// `A.shape[1]`, through `params` and `sources`) or shown as its expression; a side whose text is
    /// its value (a literal) is not repeated.
    pub fn check(&self, vars: &[i64], params: &[ParamSig], sources: &[VarSource]) -> std::result::Result<(), String> {
        let name = |text: &str, e: &Expr| -> String {
            match (text, e) {
                ("", Expr::Var(k)) => sources.get(*k).map_or_else(|| e.to_string(), |src| var_name_of(params, *src)),
                ("", e) => e.to_string(),
                (t, _) => t.to_string(),
            }
        };
        let (lname, rname) = (name(&self.lhs_text, &self.lhs), name(&self.rhs_text, &self.rhs));
        let what = || {
            if self.message.is_empty() {
                format!("{lname} {} {rname}", self.op.symbol())
            } else {
                self.message.clone()
            }
        };
        let l = self.lhs.eval(vars).map_err(|e| format!("assert `{}`: {e}", what()))?;
        let r = self.rhs.eval(vars).map_err(|e| format!("assert `{}`: {e}", what()))?;
        if self.op.holds(l, r) {
            return Ok(());
        }
        let values: Vec<String> = [(&lname, l), (&rname, r)]
            .into_iter()
            .filter(|(t, v)| **t != v.to_string())
            .map(|(t, v)| format!("{t} = {v}"))
            .collect();
        let values = if values.is_empty() { String::new() } else { format!(" ({})", values.join(", ")) };
        Err(format!("assert failed: {}{values}", what()))
    }
}

impl fmt::Display for Assert {
    /// `$1 == $4 (A and B must have the same K)`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.lhs, self.op.symbol(), self.rhs)?;
        if !self.message.is_empty() {
            write!(f, " ({})", self.message)?;
        }
        Ok(())
    }
}

/// One segment of a host `print` step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrintSeg {
    /// Literal text.
    Text(String),
    /// An integer expression, printed in decimal.
    Int(Expr),
}

/// One step of a host function, in source order. A run-time `if` is a flat run of steps: `If`,
/// the then-branch, [`HostStep::Else`] and the else-branch when there is one, [`HostStep::EndIf`];
/// the jump targets are step indices, always forward.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostStep {
    /// `launches[i]`.
    Launch(usize),
    /// A host `print` (run at call time, before the following launches).
    Print(Vec<PrintSeg>),
    /// `if COND`: when `cond` does not hold, continue at step `else_at` (after the matching
    /// `Else`, or the matching `EndIf`).
    If {
        /// The condition.
        cond: Cond,
        /// Where the call continues when it does not hold.
        else_at: usize,
    },
    /// `else`: the end of a then-branch that was taken; continue at step `end_at` (the matching
    /// `EndIf`).
    Else {
        /// The matching `EndIf`.
        end_at: usize,
    },
    /// `endif`: nothing to do.
    EndIf,
    /// An `assert` line inside a branch: checked only when the branch is taken.
    Assert(Assert),
    /// A `require` line inside a branch: checked only when the branch is taken.
    Require(Require),
    /// `for $K | START | END | STEP`: a run-time loop. The bounds and the step are evaluated once,
    /// on entry; a step that is not positive refuses the call. When the loop makes no trip, the
    /// call continues at `end_at` (after the matching `EndFor`); otherwise `$K` (`var`, a slot after
    /// the host's dynamic values) is START and the body follows.
    For {
        /// The loop variable's slot in the call's dynamic values.
        var: usize,
        /// The first value (inclusive).
        start: Expr,
        /// The bound (exclusive).
        end: Expr,
        /// The step (must evaluate to a positive value).
        step: Expr,
        /// The step after the matching `EndFor`.
        end_at: usize,
    },
    /// `endfor`: the end of a trip. With trips left, `$K` advances by the step and the call goes
    /// back to the step after `for_at` (the only backward jump of a plan); otherwise it goes on.
    EndFor {
        /// The matching `For`.
        for_at: usize,
    },
    /// `break`: leaves the innermost loop, continuing at `end_at` (after its `EndFor`).
    Break {
        /// The step after the innermost loop's `EndFor`.
        end_at: usize,
    },
    /// `continue`: ends this trip of the innermost loop, continuing at `endfor_at` (its `EndFor`).
    Continue {
        /// The innermost loop's `EndFor`.
        endfor_at: usize,
    },
}

/// A block of a host plan opened and not closed yet.
#[derive(Debug)]
enum Block {
    /// An `if` (its step index) and its `else` once read.
    If { at: usize, els: Option<usize> },
    /// A `for` (its step index) and the `break`/`continue` steps inside it, whose targets are
    /// set when it closes.
    For { at: usize, jumps: Vec<usize> },
}

/// The blocks of a host plan not closed yet while its steps are appended in order: each jump
/// target is set when its block closes. Blocks nest: an `endif` closes an `if`, an `endfor` a
/// `for`, and `break`/`continue` belong to the innermost `for`. The reader and cutec both build
/// plans with it.
#[derive(Debug, Default)]
pub struct StepNesting(Vec<Block>);

impl StepNesting {
    /// Whether every block is closed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many `if`s and `for`s are open.
    pub fn unclosed(&self) -> (usize, usize) {
        let ifs = self.0.iter().filter(|b| matches!(b, Block::If { .. })).count();
        (ifs, self.0.len() - ifs)
    }

    /// Appends `step` to `h`'s steps (its jump targets, if any, are set here).
    pub fn push(&mut self, h: &mut HostSig, step: HostStep) -> Result<(), String> {
        let here = h.steps.len();
        let open = &mut self.0;
        match step {
            HostStep::If { cond, .. } => {
                h.steps.push(HostStep::If { cond, else_at: here + 1 });
                open.push(Block::If { at: here, els: None });
            }
            HostStep::Else { .. } => {
                let Some(Block::If { at, els }) = open.last_mut() else { return Err("`else` without `if`".into()) };
                if els.is_some() {
                    return Err("a second `else` for one `if`".into());
                }
                *els = Some(here);
                if let Some(HostStep::If { else_at, .. }) = h.steps.get_mut(*at) {
                    *else_at = here + 1;
                }
                h.steps.push(HostStep::Else { end_at: here + 1 });
            }
            HostStep::EndIf => {
                let Some(Block::If { at, els }) = open.pop() else {
                    return Err(if open.is_empty() {
                        "`endif` without `if`".into()
                    } else {
                        "`endif` closes a `for` (expected `endfor`)".into()
                    });
                };
                match els {
                    Some(e) => {
                        if let Some(HostStep::Else { end_at }) = h.steps.get_mut(e) {
                            *end_at = here;
                        }
                    }
                    None => {
                        if let Some(HostStep::If { else_at, .. }) = h.steps.get_mut(at) {
                            *else_at = here;
                        }
                    }
                }
                h.steps.push(HostStep::EndIf);
            }
            HostStep::For { var, start, end, step, .. } => {
                h.steps.push(HostStep::For { var, start, end, step, end_at: here + 1 });
                open.push(Block::For { at: here, jumps: Vec::new() });
            }
            HostStep::EndFor { .. } => {
                let Some(Block::For { at, jumps }) = open.pop() else {
                    return Err(if open.is_empty() {
                        "`endfor` without `for`".into()
                    } else {
                        "`endfor` closes an `if` (expected `endif`)".into()
                    });
                };
                if let Some(HostStep::For { end_at, .. }) = h.steps.get_mut(at) {
                    *end_at = here + 1;
                }
                for j in jumps {
                    match h.steps.get_mut(j) {
                        Some(HostStep::Break { end_at }) => *end_at = here + 1,
                        Some(HostStep::Continue { endfor_at }) => *endfor_at = here,
                        _ => {}
                    }
                }
                h.steps.push(HostStep::EndFor { for_at: at });
            }
            HostStep::Break { .. } | HostStep::Continue { .. } => {
                let kw = if matches!(step, HostStep::Break { .. }) { "break" } else { "continue" };
                // Of the innermost `for`, through any `if`s inside it.
                let Some(jumps) = open.iter_mut().rev().find_map(|b| match b {
                    Block::For { jumps, .. } => Some(jumps),
                    Block::If { .. } => None,
                }) else {
                    return Err(format!("`{kw}` outside a `for`"));
                };
                jumps.push(here);
                h.steps.push(if kw == "break" {
                    HostStep::Break { end_at: here + 1 }
                } else {
                    HostStep::Continue { endfor_at: here }
                });
            }
            other => h.steps.push(other),
        }
        Ok(())
    }
}

/// The text of a host `print` step for the call's dynamic values.
pub fn format_print(segs: &[PrintSeg], vars: &[i64]) -> std::result::Result<String, EvalError> {
    let mut out = String::new();
    write_print(segs, vars, &mut out)?;
    Ok(out)
}

/// [`format_print`] appended to `out`.
pub fn write_print(segs: &[PrintSeg], vars: &[i64], out: &mut String) -> std::result::Result<(), EvalError> {
    use std::fmt::Write as _;
    for seg in segs {
        match seg {
            PrintSeg::Text(t) => out.push_str(t),
            PrintSeg::Int(e) => {
                let _ = write!(out, "{}", e.eval(vars)?);
            }
        }
    }
    Ok(())
}

pub(super) fn parse_print(rest: &str) -> std::result::Result<Vec<PrintSeg>, String> {
    rest.split('|')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(|f| match f.strip_prefix("e:") {
            Some(e) => Expr::parse(e).map(PrintSeg::Int),
            None => hex_text(f).map(PrintSeg::Text),
        })
        .collect()
}

/// One kernel argument of a launch plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanArg {
    /// A view of host parameter `host_param` (its index), `offset` elements after its pointer,
    /// with the values of the kernel parameter's `?` entries (shapes, then strides).
    Tensor {
        /// Index of the host parameter viewed.
        host_param: usize,
        /// Element offset of the view.
        offset: Expr,
        /// The kernel parameter's dynamic entries, ABI order.
        dyn_leaves: Vec<Expr>,
    },
    /// A scalar of type `ty` with value `value`.
    Scalar {
        /// The scalar type.
        ty: DType,
        /// Its value.
        value: Expr,
    },
}

/// One launch of a host function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchPlan {
    /// The kernel (a `kernel` block of the same manifest).
    pub kernel: String,
    /// Grid (x, y, z).
    pub grid: [Expr; 3],
    /// Block (x, y, z).
    pub block: [Expr; 3],
    /// Dynamic shared memory bytes.
    pub smem: Expr,
    /// The kernel's arguments in order.
    pub args: Vec<PlanArg>,
    /// `stream P`: the index of the host's `stream` parameter the launch goes to; `None`: the
    /// stream the call is made on.
    pub stream: Option<usize>,
}

impl LaunchPlan {
    pub(super) fn new(kernel: &str) -> LaunchPlan {
        let one = || Expr::Const(1);
        LaunchPlan {
            kernel: kernel.to_string(),
            grid: [one(), one(), one()],
            block: [one(), one(), one()],
            smem: Expr::Const(0),
            args: Vec::new(),
            stream: None,
        }
    }

    /// Parses one line inside `launch ... endlaunch`; unknown records are ignored.
    pub(super) fn parse_line(&mut self, fields: &str) -> std::result::Result<(), String> {
        let (kw, rest) = fields.split_once(' ').unwrap_or((fields, ""));
        let parts = || rest.split('|').map(str::trim).collect::<Vec<_>>();
        let exprs = |v: &[&str]| v.iter().map(|s| Expr::parse(s)).collect::<std::result::Result<Vec<_>, _>>();
        let three = |what: &str| -> std::result::Result<[Expr; 3], String> {
            let v = exprs(&parts())?;
            <[Expr; 3]>::try_from(v)
                .map_err(|v| format!("`{what}` needs 3 expressions separated by `|`, got {}", v.len()))
        };
        match kw {
            "grid" => self.grid = three("grid")?,
            "block" => self.block = three("block")?,
            "smem" => self.smem = Expr::parse(rest)?,
            "stream" => {
                if self.stream.is_some() {
                    return Err("a launch has one `stream` line".into());
                }
                let p = rest.trim().parse::<usize>().map_err(|_| format!("`stream`: bad parameter index `{rest}`"))?;
                self.stream = Some(p);
            }
            "arg" => {
                let p = parts();
                let (kind, first) = p.first().and_then(|f| f.split_once(' ')).ok_or("`arg` needs a kind")?;
                match kind {
                    "tensor" => {
                        let host_param = first
                            .trim()
                            .parse::<usize>()
                            .map_err(|_| format!("`arg tensor`: bad parameter index `{first}`"))?;
                        let offset = Expr::parse(p.get(1).ok_or("`arg tensor` without an offset")?)?;
                        let dyn_leaves = exprs(&p[2..])?;
                        self.args.push(PlanArg::Tensor { host_param, offset, dyn_leaves });
                    }
                    "scalar" => {
                        let ty = DType::from_name(first.trim())
                            .ok_or_else(|| format!("`arg scalar`: unknown type `{first}`"))?;
                        let value = Expr::parse(p.get(1).ok_or("`arg scalar` without a value")?)?;
                        // A float is passed through: its bit pattern, or a float host parameter.
                        if ty.is_float() && !matches!(value, Expr::Const(_) | Expr::Var(_)) {
                            return Err(format!("`arg scalar {ty}`: a plan computes only with integers; a {ty} is a constant (its bits) or a host parameter"));
                        }
                        if p.len() > 2 {
                            return Err("`arg scalar` takes one value".into());
                        }
                        self.args.push(PlanArg::Scalar { ty, value });
                    }
                    other => return Err(format!("unknown argument kind `{other}`")),
                }
            }
            _ => {} // forward compatibility
        }
        Ok(())
    }
}

impl fmt::Display for LaunchPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "launch {}", self.kernel)?;
        writeln!(f, "grid {} | {} | {}", self.grid[0], self.grid[1], self.grid[2])?;
        writeln!(f, "block {} | {} | {}", self.block[0], self.block[1], self.block[2])?;
        writeln!(f, "smem {}", self.smem)?;
        if let Some(p) = self.stream {
            writeln!(f, "stream {p}")?;
        }
        for a in &self.args {
            match a {
                PlanArg::Tensor { host_param, offset, dyn_leaves } => {
                    write!(f, "arg tensor {host_param} | {offset}")?;
                    for d in dyn_leaves {
                        write!(f, " | {d}")?;
                    }
                    writeln!(f)?;
                }
                PlanArg::Scalar { ty, value } => writeln!(f, "arg scalar {ty} | {value}")?,
            }
        }
        write!(f, "endlaunch")
    }
}

/// A host function: its parameters and its launch plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSig {
    /// The host function's name.
    pub name: String,
    /// Its parameters in declaration order.
    pub params: Vec<ParamSig>,
    /// The launches, in order.
    pub launches: Vec<LaunchPlan>,
    /// The kernels named by `launches KERNEL` lines (a summary; older manifests have only these).
    pub launches_kernels: Vec<String>,
    /// Why the plan cannot be used, when the manifest's plan is malformed or does not match the
    /// kernels it launches (the rest of the manifest still loads).
    pub plan_error: Option<String>,
    /// Launch conditions checked before anything is launched (`require` lines).
    pub requires: Vec<Require>,
    /// The host's run-time `assert`s, checked before anything is launched (`assert` lines).
    pub asserts: Vec<Assert>,
    /// Launches and prints in source order (`HostStep::Launch(i)` is `launches[i]`).
    pub steps: Vec<HostStep>,
    /// For an instance of a generic host function (`host add<T: f16 | f32>`, named `add<f16>`):
    /// the generic's name (`instance add`).
    pub generic: Option<String>,
    /// The instance's type arguments (`typearg T f16 mA mB mC`).
    pub type_args: Vec<TypeArgSig>,
    /// The tuning table it was built with (`tuned M,N | NAME=VALUE; ...` lines, `cutec tune`):
    /// what each tuned shape's winner set. The dispatch itself is in the steps (run-time `if`s
    /// over the extents), so a reader that skips the lines calls the same launches.
    pub tuned: Vec<String>,
}

/// One type argument of an instance of a generic host function: type parameter `name` is `dtype`,
/// the element type of the tensor parameters `params` (indices).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeArgSig {
    /// The type parameter (`T`).
    pub name: String,
    /// Its element type in this instance.
    pub dtype: DType,
    /// The tensor parameters declared with element type `name`.
    pub params: Vec<usize>,
}

impl TypeArgSig {
    /// Parses the fields after `typearg` (`T f16 mA mB`) against the host's parameters read so far.
    pub(super) fn parse(rest: &[&str], params: &[ParamSig]) -> std::result::Result<TypeArgSig, String> {
        let [name, dtype, names @ ..] = rest else {
            return Err("`typearg` needs a name, an element type and parameters".into());
        };
        let dtype =
            DType::from_name(dtype).ok_or_else(|| format!("`typearg {name}`: unknown element type `{dtype}`"))?;
        if names.is_empty() {
            return Err(format!("`typearg {name}` names no parameter"));
        }
        let mut idx = Vec::with_capacity(names.len());
        for n in names {
            let i = params
                .iter()
                .position(|p| p.name == *n)
                .ok_or_else(|| format!("`typearg {name}`: no parameter `{n}` (before this line)"))?;
            match &params[i].kind {
                ParamKind::Tensor(t) if t.elem == dtype => idx.push(i),
                ParamKind::Tensor(t) => {
                    return Err(format!("`typearg {name} {dtype}`: parameter `{n}` has element type {}", t.elem))
                }
                ParamKind::Scalar(_) | ParamKind::Stream => {
                    return Err(format!("`typearg {name}`: parameter `{n}` is not a tensor"))
                }
            }
        }
        Ok(TypeArgSig { name: name.to_string(), dtype, params: idx })
    }
}

impl HostSig {
    /// A host function named `name` with nothing in it yet.
    pub fn new(name: &str) -> HostSig {
        HostSig {
            name: name.to_string(),
            params: Vec::new(),
            launches: Vec::new(),
            launches_kernels: Vec::new(),
            plan_error: None,
            requires: Vec::new(),
            asserts: Vec::new(),
            steps: Vec::new(),
            generic: None,
            type_args: Vec::new(),
            tuned: Vec::new(),
        }
    }

    /// The sources of `$0, $1, ...`, in order.
    pub fn var_sources(&self) -> Vec<VarSource> {
        var_sources_of(&self.params)
    }

    /// A name for `$k`: `mA.shape[0]`, `n`.
    pub fn var_name(&self, src: VarSource) -> String {
        var_name_of(&self.params, src)
    }
}

impl fmt::Display for HostSig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params: Vec<String> = self.params.iter().map(ToString::to_string).collect();
        write!(f, "host {}({})", self.name, params.join(", "))
    }
}
