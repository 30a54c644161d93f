//! The checks a host plan passes before it is used: its steps nest, its jumps land where the
//! reader put them, and each launch matches the kernel it launches.

use super::expr::Expr;
use super::plan::{HostSig, HostStep, PlanArg, PrintSeg};
use super::signature::{KernelSig, ParamKind, ParamSig, VarSource};

/// A block open while [`HostSig::structure`] walks the steps.
enum OpenBlock {
    /// An `if` at step `at`, and its `else` once seen.
    If { at: usize, els: Option<usize> },
    /// A `for` at step `at`, and the `break`/`continue` steps that leave or end its trips.
    For { at: usize, var: usize, jumps: Vec<usize> },
}

impl HostSig {
    /// Checks that the steps nest — `if` [`else`] `endif`, `for` `endfor`, `break` and `continue`
    /// inside a `for` — with the jump targets the manifest reader sets, and that the loop variables
    /// are the slots after the host's `nvars` dynamic values, in the order of their `for`s. Returns,
    /// per step, the loop variables bound there (a `for`'s own bounds are outside its loop). The
    /// evaluator relies on this: only an `endfor` jumps back, to its own loop, and a loop's state
    /// is always set by its `for` before its `endfor` reads it.
    pub(super) fn structure(&self, nvars: usize) -> std::result::Result<Vec<Vec<usize>>, String> {
        let n = self.steps.len();
        let mut open: Vec<OpenBlock> = Vec::new();
        let mut bound: Vec<usize> = Vec::new();
        let mut scopes = Vec::with_capacity(n);
        let mut loops = 0;
        fn innermost_for(open: &mut [OpenBlock]) -> Option<&mut Vec<usize>> {
            open.iter_mut().rev().find_map(|b| match b {
                OpenBlock::For { jumps, .. } => Some(jumps),
                OpenBlock::If { .. } => None,
            })
        }
        for (i, st) in self.steps.iter().enumerate() {
            scopes.push(bound.clone());
            match st {
                HostStep::If { else_at, .. } => {
                    if *else_at <= i || *else_at > n {
                        return Err(format!("step {i}: `if` continues at step {else_at}, not after it"));
                    }
                    open.push(OpenBlock::If { at: i, els: None });
                }
                HostStep::Else { end_at } => {
                    if *end_at <= i || *end_at > n {
                        return Err(format!("step {i}: `else` continues at step {end_at}, not after it"));
                    }
                    match open.last_mut() {
                        Some(OpenBlock::If { at, els: els @ None }) => {
                            if !matches!(self.steps.get(*at), Some(HostStep::If { else_at, .. }) if *else_at == i + 1) {
                                return Err(format!("step {at}: `if` does not continue after its `else` (step {i})"));
                            }
                            *els = Some(i);
                        }
                        _ => return Err(format!("step {i}: `else` without its `if`")),
                    }
                }
                HostStep::EndIf => match open.pop() {
                    Some(OpenBlock::If { at, els }) => {
                        let ok = match els {
                            Some(e) => matches!(self.steps.get(e), Some(HostStep::Else { end_at }) if *end_at == i),
                            None => matches!(self.steps.get(at), Some(HostStep::If { else_at, .. }) if *else_at == i),
                        };
                        if !ok {
                            return Err(format!("step {i}: the `if` at step {at} does not continue at its `endif`"));
                        }
                    }
                    _ => return Err(format!("step {i}: `endif` without its `if`")),
                },
                HostStep::For { var, .. } => {
                    if *var != nvars + loops {
                        return Err(format!("step {i}: `for ${var}`: expected `${}` (loop variables are numbered after the host's {nvars} dynamic values, in the order of their `for`)", nvars + loops));
                    }
                    loops += 1;
                    open.push(OpenBlock::For { at: i, var: *var, jumps: Vec::new() });
                    bound.push(*var);
                }
                HostStep::EndFor { for_at } => match open.pop() {
                    Some(OpenBlock::For { at, var, jumps }) => {
                        if *for_at != at
                            || !matches!(self.steps.get(at), Some(HostStep::For { end_at, .. }) if *end_at == i + 1)
                        {
                            return Err(format!("step {i}: `endfor` and the `for` at step {at} do not match"));
                        }
                        for j in jumps {
                            let ok = match self.steps.get(j) {
                                Some(HostStep::Break { end_at }) => *end_at == i + 1,
                                Some(HostStep::Continue { endfor_at }) => *endfor_at == i,
                                _ => false,
                            };
                            if !ok {
                                return Err(format!("step {j}: does not jump to the end of its loop (step {i})"));
                            }
                        }
                        bound.retain(|v| *v != var);
                    }
                    _ => return Err(format!("step {i}: `endfor` without its `for`")),
                },
                HostStep::Break { .. } | HostStep::Continue { .. } => match innermost_for(&mut open) {
                    Some(jumps) => jumps.push(i),
                    None => return Err(format!("step {i}: `break` or `continue` outside a `for`")),
                },
                HostStep::Launch(_) | HostStep::Print(_) | HostStep::Assert(_) | HostStep::Require(_) => {}
            }
        }
        if let Some(b) = open.last() {
            let (what, at) = match b {
                OpenBlock::If { at, .. } => ("if", at),
                OpenBlock::For { at, .. } => ("for", at),
            };
            return Err(format!("step {at}: `{what}` is not closed"));
        }
        Ok(scopes)
    }

    /// The number of loop variables (`for` steps) of the plan.
    pub fn loop_count(&self) -> usize {
        self.steps.iter().filter(|st| matches!(st, HostStep::For { .. })).count()
    }

    /// Checks the plan against the manifest's kernels: each launched kernel exists, its argument
    /// count and kinds match the kernel's parameters, a tensor argument gives one expression per
    /// `?` entry and views a tensor host parameter of the kernel's element type, and every `$k` is
    /// a dynamic value of the host. `kernel` finds a kernel of the manifest by name.
    pub fn validate<'k>(&self, kernel: impl Fn(&str) -> Option<&'k KernelSig>) -> std::result::Result<(), String> {
        let sources = self.var_sources();
        let nvars = sources.len();
        // The type of a scalar parameter's `$k` (`None` for tensor extents and strides).
        let scalar_ty = |k: usize| match sources.get(k) {
            Some(VarSource::Scalar { param }) => match self.params.get(*param).map(|p| &p.kind) {
                Some(ParamKind::Scalar(d)) => Some(*d),
                _ => None,
            },
            _ => None,
        };
        // The loop variables bound at each step (the slots of the loops around it).
        let scopes = self.structure(nvars)?;
        let nloops = self.loop_count();
        let var_ok = |e: &Expr, what: &str, open: &[usize]| {
            if let Some(k) = e.find_var(&|k| k >= nvars && !open.contains(&k)) {
                return Err(if k < nvars + nloops {
                    format!("{what}: `{e}` uses the loop variable ${k} outside its loop")
                } else {
                    format!("{what}: ${k} but the host has {nvars} dynamic values")
                });
            }
            // Integer arithmetic on a float's bits would be meaningless.
            if e.any_var(&|k| scalar_ty(k).is_some_and(|d| d.is_float())) {
                return Err(format!("{what}: `{e}` computes with a float parameter"));
            }
            Ok(())
        };
        for r in &self.requires {
            var_ok(&r.expr, "require", &[])?;
        }
        for a in &self.asserts {
            var_ok(&a.lhs, "assert", &[])?;
            var_ok(&a.rhs, "assert", &[])?;
        }
        // The loop variables bound where each launch is made (a launch is made by one step).
        let mut launch_scope: Vec<Option<&[usize]>> = vec![None; self.launches.len()];
        for (i, (st, open)) in self.steps.iter().zip(&scopes).enumerate() {
            match st {
                HostStep::Print(segs) => {
                    for seg in segs {
                        if let PrintSeg::Int(e) = seg {
                            var_ok(e, "print", open)?;
                        }
                    }
                }
                HostStep::Launch(li) => match launch_scope.get_mut(*li) {
                    Some(slot @ None) => *slot = Some(open),
                    Some(Some(_)) => return Err(format!("step {i}: launch {li} is made by two steps")),
                    None => return Err(format!("step {i}: launch {li} does not exist")),
                },
                HostStep::If { cond, .. } => {
                    if let Some(k) = cond.find_var(&|k| k >= nvars && !open.contains(&k)) {
                        return Err(if k < nvars + nloops {
                            format!("if {cond}: uses the loop variable ${k} outside its loop")
                        } else {
                            format!("if {cond}: ${k} but the host has {nvars} dynamic values")
                        });
                    }
                }
                HostStep::Assert(a) => {
                    var_ok(&a.lhs, "assert", open)?;
                    var_ok(&a.rhs, "assert", open)?;
                }
                HostStep::Require(r) => var_ok(&r.expr, "require", open)?,
                HostStep::For { var, start, end, step, .. } => {
                    let what = format!("for ${var}");
                    var_ok(start, &what, open)?;
                    var_ok(end, &what, open)?;
                    var_ok(step, &what, open)?;
                }
                HostStep::Else { .. }
                | HostStep::EndIf
                | HostStep::EndFor { .. }
                | HostStep::Break { .. }
                | HostStep::Continue { .. } => {}
            }
        }
        for (li, l) in self.launches.iter().enumerate() {
            let ctx = format!("launch {li} ({})", l.kernel);
            let k = kernel(&l.kernel).ok_or_else(|| format!("{ctx}: no kernel `{}` in the manifest", l.kernel))?;
            // A launch no step makes is never evaluated; its expressions may use no loop variable.
            let open = launch_scope.get(li).copied().flatten().unwrap_or(&[]);
            let var_ok = |e: &Expr, what: &str| var_ok(e, what, open);
            for e in l.grid.iter().chain(&l.block).chain(std::iter::once(&l.smem)) {
                var_ok(e, &ctx)?;
            }
            if let Some(p) = l.stream {
                match self.params.get(p) {
                    Some(ParamSig { kind: ParamKind::Stream, .. }) => {}
                    Some(hp) => {
                        return Err(format!("{ctx}: `stream {p}`: host parameter `{}` is not a stream", hp.name))
                    }
                    None => return Err(format!("{ctx}: `stream {p}`: host parameter {p} does not exist")),
                }
            }
            if k.params.len() != l.args.len() {
                return Err(format!(
                    "{ctx}: the kernel takes {} parameters but the plan passes {}",
                    k.params.len(),
                    l.args.len()
                ));
            }
            for (ai, (kp, a)) in k.params.iter().zip(&l.args).enumerate() {
                let actx = format!("{ctx} argument {ai} (`{}`)", kp.name);
                match (&kp.kind, a) {
                    (ParamKind::Tensor(t), PlanArg::Tensor { host_param, offset, dyn_leaves }) => {
                        let hp = self
                            .params
                            .get(*host_param)
                            .ok_or_else(|| format!("{actx}: host parameter {host_param} does not exist"))?;
                        let ParamKind::Tensor(ht) = &hp.kind else {
                            return Err(format!("{actx}: host parameter `{}` is not a tensor", hp.name));
                        };
                        if ht.elem != t.elem {
                            return Err(format!(
                                "{actx}: the kernel takes {} elements but host parameter `{}` has {}",
                                t.elem, hp.name, ht.elem
                            ));
                        }
                        let want = t.abi_len() - 1;
                        if dyn_leaves.len() != want {
                            return Err(format!(
                                "{actx}: the kernel parameter has {want} dynamic entries but the plan gives {}",
                                dyn_leaves.len()
                            ));
                        }
                        var_ok(offset, &actx)?;
                        for e in dyn_leaves {
                            var_ok(e, &actx)?;
                        }
                    }
                    (ParamKind::Scalar(d), PlanArg::Scalar { ty, value }) => {
                        if d != ty {
                            return Err(format!("{actx}: the kernel takes a {d} scalar but the plan passes a {ty}"));
                        }
                        match value {
                            Expr::Var(k) if ty.is_float() => {
                                if scalar_ty(*k) != Some(*ty) {
                                    return Err(format!(
                                        "{actx}: a {ty} argument must be a {ty} host parameter, not ${k}"
                                    ));
                                }
                            }
                            _ => var_ok(value, &actx)?,
                        }
                    }
                    (ParamKind::Tensor(_), _) => {
                        return Err(format!("{actx}: the kernel takes a tensor but the plan passes a scalar"))
                    }
                    (ParamKind::Scalar(_), _) => {
                        return Err(format!("{actx}: the kernel takes a scalar but the plan passes a tensor"))
                    }
                    (ParamKind::Stream, _) => {
                        return Err(format!("{actx}: the kernel takes a stream, which kernels cannot"))
                    }
                }
            }
        }
        Ok(())
    }
}
