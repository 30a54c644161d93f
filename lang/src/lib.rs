//! The `.cute` front end: lexing, parsing (lalrpop), the AST, checking and diagnostics.
//! No MLIR here, so its tests build in seconds.

pub mod ast;
pub mod check;
pub mod diag;
pub mod elab;
pub mod ide;
pub mod kir;
pub mod lexer;
pub mod parse;
pub mod pretty;
pub mod span;
pub mod types;

#[allow(clippy::all, unused_parens)]
mod grammar {
    include!(concat!(env!("OUT_DIR"), "/grammar.rs"));
}

pub use diag::Diagnostic;
pub use parse::parse;
pub use span::Span;

/// Parses and elaborates a source file: the whole front end in one call.
/// Refuses a module that uses instructions `arch` lacks: the wgmma atoms and their
/// synchronizations exist only on sm_90a (Hopper's arch-specific target), not on sm_90 or sm_80.
/// The error points at the first such use.
pub fn check_arch(module: &kir::Module, arch: &str) -> Result<(), Vec<Diagnostic>> {
    if arch == "sm_90a" {
        return Ok(());
    }
    fn first(insts: &[kir::Inst]) -> Option<(String, span::Span)> {
        insts.iter().find_map(|i| match i {
            kir::Inst::Wgmma { atom, span, .. } => {
                Some((format!("`gemm` with {} is a Hopper wgmma instruction", atom.name), *span))
            }
            kir::Inst::Warpgroup {
                op: op @ (kir::WarpgroupOp::RegAlloc(_) | kir::WarpgroupOp::RegDealloc(_)),
                span,
            } => {
                Some((format!("`{}` (setmaxnreg) is a Hopper register re-allocation instruction", op.builtin()), *span))
            }
            kir::Inst::Warpgroup { op, span }
                if !matches!(op, kir::WarpgroupOp::FenceProxyAsync | kir::WarpgroupOp::FenceMbarrierInit) =>
            {
                Some((format!("`{}` is a Hopper wgmma instruction", op.builtin()), *span))
            }
            other => other.regions().into_iter().find_map(first),
        })
    }
    // mbarrier waits (`try_wait`), transaction counts and the init fence are sm_90 instructions.
    fn first_sm90(insts: &[kir::Inst]) -> Option<(String, span::Span)> {
        insts.iter().find_map(|i| match i {
            kir::Inst::Mbarrier { op, span, .. } => Some((format!("`{}` is a Hopper mbarrier instruction", op.builtin()), *span)),
            kir::Inst::TmaLoad { span, .. } => Some(("`tma_load` is a Hopper TMA instruction".to_string(), *span)),
            kir::Inst::TmaStore { span, .. } => Some(("`tma_store` is a Hopper TMA instruction".to_string(), *span)),
            kir::Inst::BulkGroup { op, span } => Some((format!("`{}` is a Hopper TMA instruction", op.builtin()), *span)),
            kir::Inst::Warpgroup { op: op @ kir::WarpgroupOp::FenceMbarrierInit, span } => Some((format!("`{}` is a Hopper mbarrier instruction", op.builtin()), *span)),
            kir::Inst::ClusterBarrier { op, span } => Some((format!("`{}` is a Hopper thread-block cluster instruction", op.builtin()), *span)),
            kir::Inst::DsmemLoad { span, .. } | kir::Inst::DsmemStore { span, .. } => Some(("distributed shared memory (`dsmem_load`/`dsmem_store`) is a Hopper thread-block cluster feature".to_string(), *span)),
            kir::Inst::Special { which, span, .. } if which.is_cluster() => Some(("the cluster registers (`cluster_idx()`, `block_rank_in_cluster()`, ...) are a Hopper thread-block cluster feature".to_string(), *span)),
            other => other.regions().into_iter().find_map(first_sm90),
        })
    }
    for k in &module.kernels {
        if arch == "sm_80" {
            // A launch's `cluster(...)` compiles to `.reqnctapercluster`, an sm_90 directive.
            let clustered = k
                .cluster
                .map(|c| ("a `cluster(...)` launch is a Hopper thread-block cluster launch".to_string(), c.span));
            if let Some((what, span)) = clustered.or_else(|| first_sm90(&k.body)) {
                return Err(vec![Diagnostic::error(
                    format!("{what}, which needs sm_90 or later; this build is for {arch}"),
                    span,
                    format!("not available on {arch}"),
                )
                .with_help("build with `cutec build --arch sm_90` (or `sm_90a`)")]);
            }
        }
        if let Some((what, span)) = first(&k.body) {
            return Err(vec![Diagnostic::error(
                format!("{what}, which needs the sm_90a target; this build is for {arch}"),
                span,
                format!("not available on {arch}"),
            )
            .with_help("build with `cutec build --arch sm_90a` (the cubin then runs on Hopper GPUs only)")]);
        }
    }
    Ok(())
}

pub fn front_end(source: &str) -> Result<(ast::File, kir::Module), Vec<Diagnostic>> {
    let file = parse(source).map_err(|d| vec![d])?;
    let module = elab::elaborate(&file)?;
    Ok((file, module))
}
