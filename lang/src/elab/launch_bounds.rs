//! Launch bounds a kernel needs at compile time. A kernel that re-allocates registers between its
//! warpgroups (`warpgroup_reg_alloc`/`warpgroup_reg_dealloc`, PTX `setmaxnreg`) is compiled for
//! one block shape (`.reqntid`): ptxas splits the register file by it, and `setmaxnreg` moves
//! registers within that budget. The shape comes from the kernel's launches in host functions,
//! which must all give the same static block.

use crate::diag::Diagnostic;
use crate::kir::{HostStep, Inst, Launch, Module, WarpgroupOp};
use crate::span::Span;

/// Sets [`crate::kir::Kernel::reqntid`] of every kernel that needs one; the errors, if a kernel's
/// launches do not fix its block shape.
pub(super) fn apply(module: &mut Module) -> Vec<Diagnostic> {
    let mut launches = Vec::new();
    for h in &module.hosts {
        collect(&h.steps, &mut launches);
    }
    let mut diags = Vec::new();
    for k in &mut module.kernels {
        let Some(used) = first_setmaxnreg(&k.body) else { continue };
        let mine: Vec<&Launch> = launches.iter().copied().filter(|l| l.kernel == k.symbol).collect();
        let Some(first) = mine.first() else {
            diags.push(
                Diagnostic::error(format!("kernel `{}` re-allocates registers, so it must be launched from a host function with a static block", k.source_name), used, "setmaxnreg needs the block shape")
                    .with_help("launch it from a `host` function, e.g. `launch k(...) grid(g) block(384)`: ptxas sizes the registers by the block's threads"),
            );
            continue;
        };
        let shape = |l: &Launch| -> Option<[u32; 3]> {
            let mut out = [1u32; 3];
            for (o, b) in out.iter_mut().zip(&l.block) {
                *o = u32::try_from(b.as_static()?).ok()?;
            }
            Some(out)
        };
        let Some(want) = shape(first) else {
            diags.push(
                Diagnostic::error(
                    format!("kernel `{}` re-allocates registers, so its block must be static", k.source_name),
                    first.span,
                    "run-time block",
                )
                .with_secondary(used, "registers re-allocated here")
                .with_help("give `block(...)` compile-time extents: ptxas sizes the registers by the block's threads"),
            );
            continue;
        };
        if let Some(other) = mine.iter().find(|l| shape(l) != Some(want)) {
            diags.push(
                Diagnostic::error(format!("kernel `{}` re-allocates registers, so every launch must use one block shape; this one differs from ({}, {}, {})", k.source_name, want[0], want[1], want[2]), other.span, "another block shape")
                    .with_secondary(first.span, "first launched here")
                    .with_secondary(used, "registers re-allocated here")
                    .with_help("launch it with the same `block(...)` everywhere, or make a second kernel"),
            );
            continue;
        }
        let threads: u32 = want.iter().product();
        if !threads.is_multiple_of(128) {
            diags.push(
                Diagnostic::error(format!("kernel `{}` re-allocates registers per warpgroup, but its block of {threads} threads is not whole warpgroups", k.source_name), first.span, "not a multiple of 128 threads")
                    .with_secondary(used, "registers re-allocated here")
                    .with_help("`setmaxnreg` acts on warpgroups of 128 threads: launch a multiple of 128"),
            );
            continue;
        }
        k.reqntid = Some(want);
    }
    diags
}

/// Every launch of the host steps, nested ones included.
pub(super) fn collect<'a>(steps: &'a [HostStep], out: &mut Vec<&'a Launch>) {
    for s in steps {
        match s {
            HostStep::Launch(l) => out.push(l),
            HostStep::If { then, els, .. } => {
                collect(&then.steps, out);
                collect(&els.steps, out);
            }
            HostStep::For { body, .. } => collect(&body.steps, out),
            HostStep::Print(_) | HostStep::Break | HostStep::Continue => {}
        }
    }
}

fn first_setmaxnreg(insts: &[Inst]) -> Option<Span> {
    insts.iter().find_map(|i| match i {
        Inst::Warpgroup { op: WarpgroupOp::RegAlloc(_) | WarpgroupOp::RegDealloc(_), span } => Some(*span),
        other => other.regions().into_iter().find_map(first_setmaxnreg),
    })
}
