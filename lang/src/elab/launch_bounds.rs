//! Launch bounds a kernel needs at compile time. A kernel that re-allocates registers between its
//! warpgroups (`warpgroup_reg_alloc`/`warpgroup_reg_dealloc`, PTX `setmaxnreg`) is compiled for
//! one block shape (`.reqntid`): ptxas splits the register file by it, and `setmaxnreg` moves
//! registers within that budget. The shape comes from the kernel's launches in host functions,
//! which must all give the same static block.
//!
//! The budget is checked too ([`register_budget`]): a block of T threads has
//! floor(65536 / T / 8) · 8 registers a thread (168 for 384 threads), and the counts the warpgroups
//! ask for with `setmaxnreg` may not add up to more than that times the warpgroups. Past it,
//! `setmaxnreg.inc` waits for registers no warpgroup gives back, and the kernel hangs on the GPU
//! (flash_attention_bwd_sm90 did, with 32 + 2 × 240 > 3 × 168: FlashAttention-3's 24 + 2 × 240
//! and CUTLASS's 40 + 2 × 232 are exactly 3 × 168).

use super::ring_threads::{Guards, Threads};
use crate::diag::Diagnostic;
use crate::kir::{HostStep, Inst, Kernel, Launch, Module, WarpgroupOp};
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
        // One error for the instances of a source kernel that share the mistake.
        if let Some(d) = register_budget(k, want) {
            if !diags.iter().any(|e: &Diagnostic| e.message == d.message && e.primary.0 == d.primary.0) {
                diags.push(d);
            }
        }
        k.reqntid = Some(want);
        k.blocks_per_sm = blocks_per_sm(k, want);
    }
    diags
}

/// How many blocks of `block` threads an SM's 65,536 registers hold when every warpgroup of kernel
/// `k` asks for its count (`setmaxnreg`): a one-warpgroup producer at 24 and one consumer at 232
/// (256 a thread, two warpgroups) leave room for two, which ptxas then compiles for
/// (`.minnctapersm 2`: at most 128 registers a thread until the warpgroups re-allocate). 1 where a
/// warpgroup keeps the launch's share, or the threads that ask are not known.
fn blocks_per_sm(k: &Kernel, block: [u32; 3]) -> u32 {
    let threads = block.iter().product::<u32>();
    let guards = Guards::new(k, Some(block.map(i64::from)));
    let mut asks: Vec<Option<(u32, Span)>> = vec![None; (threads / 128) as usize];
    if asked(&guards, &k.body, &guards.all(k), &mut asks).is_err() {
        return 1;
    }
    let Some(per_block) = asks.iter().map(|a| a.map(|(n, _)| n * 128)).sum::<Option<u32>>() else { return 1 };
    (65536 / per_block.max(1)).max(1)
}

/// The error, if the register counts kernel `k`'s warpgroups ask for (`setmaxnreg`) exceed what a
/// block of `block` threads has. A warpgroup that asks for none keeps the launch's count. Where
/// the checker cannot tell which threads reach a `setmaxnreg` (a condition it does not follow),
/// there is no check.
fn register_budget(k: &Kernel, block: [u32; 3]) -> Option<Diagnostic> {
    let threads = block.iter().product::<u32>();
    let warpgroups = (threads / 128) as usize;
    let per_thread = (65536 / threads / 8 * 8).min(256);
    let guards = Guards::new(k, Some(block.map(i64::from)));
    let mut asks: Vec<Option<(u32, Span)>> = vec![None; warpgroups];
    asked(&guards, &k.body, &guards.all(k), &mut asks).ok()?;
    let total: u32 = asks.iter().map(|a| a.map_or(per_thread, |(n, _)| n)).sum();
    let have = per_thread * warpgroups as u32;
    if total <= have {
        return None;
    }
    let terms: Vec<String> = asks.iter().map(|a| a.map_or(per_thread, |(n, _)| n).to_string()).collect();
    // Each `setmaxnreg`, labelled with the warpgroups that reach it; the error points at the first.
    let mut sites: Vec<(Span, u32, Vec<String>)> = Vec::new();
    for (w, (n, at)) in asks.iter().enumerate().filter_map(|(w, a)| a.map(|a| (w, a))) {
        match sites.iter_mut().find(|s| s.0 == at) {
            Some(s) => s.2.push(w.to_string()),
            None => sites.push((at, n, vec![w.to_string()])),
        }
    }
    let label = |(_, n, ws): &(Span, u32, Vec<String>)| {
        format!("{} {}: {n} each", if ws.len() == 1 { "warpgroup" } else { "warpgroups" }, ws.join(", "))
    };
    let first = sites.first()?;
    let mut d = Diagnostic::error(
        format!(
            "the warpgroups of kernel `{}` ask for {} = {total} registers a thread, but a block of {threads} threads has {per_thread} a thread for each of its {warpgroups} warpgroups ({have}): `setmaxnreg.inc` would wait forever and the kernel hang",
            k.source_name,
            terms.join(" + ")
        ),
        first.0,
        label(first),
    );
    for site in &sites[1..] {
        d = d.with_secondary(site.0, label(site));
    }
    Some(d.with_help(format!(
        "give back more (`warpgroup_reg_dealloc`) or ask for less (`warpgroup_reg_alloc`) so that the counts add up to at most {have}: e.g. 24 + 2 × 240 or 40 + 2 × 232 for three warpgroups"
    )))
}

/// The count each warpgroup asks for last (`asks[w]`), walking `insts` with the threads that reach
/// them; `Err` where the threads are not known.
fn asked(g: &Guards, insts: &[Inst], threads: &Threads, asks: &mut [Option<(u32, Span)>]) -> Result<(), ()> {
    for i in insts {
        match i {
            Inst::If { cond, then, els, span } => {
                let (t, e) = g.split(threads, cond, *span);
                asked(g, then, &t, asks)?;
                asked(g, els, &e, asks)?;
            }
            Inst::Warpgroup { op: WarpgroupOp::RegAlloc(n) | WarpgroupOp::RegDealloc(n), span } => {
                let set = threads.as_ref().map_err(drop)?;
                for (t, _) in set.iter().enumerate().filter(|(_, on)| **on) {
                    if let Some(a) = asks.get_mut(t / 128) {
                        *a = Some((*n, *span));
                    }
                }
            }
            other => {
                for r in other.regions() {
                    asked(g, r, threads, asks)?;
                }
            }
        }
    }
    Ok(())
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
