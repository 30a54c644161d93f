//! The kernel manifest cutec embeds in every cubin: the module's kernels and host functions as
//! cute-abi's manifest types, written by cute-abi's one writer (format: `docs/runtime.md` and
//! `cute_abi::manifest`; reader: the same crate, through the runtime).
//!
//! The manifest is versioned, line-based UTF-8 text describing each kernel's
//! parameters (element type, memory space, alignment, rank, shape and stride
//! in CuTe notation with `?` for dynamic entries). It is placed in the
//! kernel module as the global `__cutec_manifest` (a byte array with
//! external linkage in address space 1), which ptxas keeps with its
//! initializer as an `OBJECT` symbol in `.nv.global.init`; the runtime reads
//! it from the cubin's ELF symbol table on the host (no GPU needed).

use cute_abi::manifest::{
    Expr, HostSig, HostStep as Step, IntTuple as AbiTuple, KernelSig, Manifest, Need, ParamKind as AbiParamKind,
    ParamSig, PlanArg as AbiPlanArg, Require, StepNesting, TensorSig, TmaSig, TypeArgSig, MANIFEST_VERSION_BASE,
    MANIFEST_VERSION_BOUND, MANIFEST_VERSION_CEIL_QUOT, MANIFEST_VERSION_CLUSTER, MANIFEST_VERSION_FAST_DIV,
    MANIFEST_VERSION_HOST_FLOW, MANIFEST_VERSION_HOST_LOOPS, MANIFEST_VERSION_INDEX64, MANIFEST_VERSION_TMA,
    MANIFEST_VERSION_TMA_STORE,
};
use cute_lang::kir::{HostBranch, HostStep, Kernel, Module, Param, ParamKind, TensorTy, ValueId};
use cute_layout::IntTuple;
use std::collections::HashMap;
use std::fmt::Write;

pub use cute_abi::manifest::MANIFEST_SYMBOL;

/// The lowest version that can hold the module's manifest: each version adds records an older
/// runtime must not skip (`cute_abi::manifest`'s version constants say which).
fn version(module: &Module, fast_divisors: &[Vec<String>]) -> u32 {
    let branches = module.hosts.iter().any(|h| h.steps.iter().any(|st| matches!(st, HostStep::If { .. })));
    let loops = module.hosts.iter().any(|h| h.steps.iter().any(HostStep::has_loop));
    if module.kernels.iter().any(|k| k.index64.is_some()) {
        // An older runtime would skip `index 64` and pass `i32` extents to an `i64` kernel.
        MANIFEST_VERSION_INDEX64
    } else if module.kernels.iter().any(|k| k.tmas.iter().any(|t| t.store)) {
        MANIFEST_VERSION_TMA_STORE
    } else if loops {
        MANIFEST_VERSION_HOST_LOOPS
    } else if module.kernels.iter().any(|k| k.cluster.is_some()) {
        MANIFEST_VERSION_CLUSTER
    } else if module.kernels.iter().any(|k| !k.tmas.is_empty()) {
        MANIFEST_VERSION_TMA
    } else if fast_divisors.iter().any(|d| !d.is_empty()) {
        MANIFEST_VERSION_FAST_DIV
    } else if branches {
        MANIFEST_VERSION_HOST_FLOW
    } else {
        MANIFEST_VERSION_BASE
    }
}

/// The manifest text of an elaborated module for target `arch` (`sm_90`, ...).
///
/// ```text
/// cutec-manifest 1
/// arch sm_90
/// kernel vector_add
/// param a tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1
/// ...
/// end
/// host add
/// param a tensor ...
/// launches vector_add
/// end
/// checksum 0123456789abcdef
/// ```
///
/// One `kernel` block per kernel instance, named by its cubin symbol (with `cluster X Y Z` when it
/// runs in thread-block clusters, `smem N` when every
/// launch must provide N bytes of dynamic shared memory, and a `fastdiv EXPR` line per run-time
/// divisor of its index math, `fast_divisors[kernel index]`, see [`crate::lower`]); one `host` block per host
/// function with its parameters and the kernels it launches (readers that do not know a line skip
/// it). A generic host function has one block per instance, named `NAME<f16>`, with an
/// `instance NAME` line and a `typearg T f16 PARAM...` line per type parameter; an `asserts` line
/// in a kernel block when the kernel has run-time asserts compiled in. The last line is
/// the checksum of the text before it (cute-abi's writer adds it; the runtime refuses a manifest
/// that does not match it).
///
/// `asserts`: whether kernels' run-time `assert`s are compiled in (`--release-asserts`); a kernel
/// with one gets an `asserts` line (the runtime then explains a trap as a likely failed assert).
pub fn manifest_text(module: &Module, arch: &str, fast_divisors: &[Vec<String>], asserts: bool) -> String {
    let kernels = module.kernels.iter().enumerate().map(|(ki, k)| {
        let mut sig = kernel(k, fast_divisors.get(ki).map_or(&[], Vec::as_slice));
        sig.asserts = asserts && has_assert(&k.body);
        sig
    });
    let mut m = Manifest {
        version: version(module, fast_divisors),
        arch: Some(arch.to_string()),
        kernels: kernels.collect(),
        hosts: module.hosts.iter().map(host).collect(),
        text: String::new(),
    };
    if has_minimum(&m) {
        m.version = m.version.max(MANIFEST_VERSION_BOUND);
    }
    if has_ceil_quot(&m) {
        m.version = m.version.max(MANIFEST_VERSION_CEIL_QUOT);
    }
    m.to_text()
}

/// Whether a launch passes a view whose extents hold a program's `ceil_div` (`ceilquot`).
fn has_ceil_quot(m: &Manifest) -> bool {
    let quot = |e: &Expr| e.find_map(&|x| matches!(x, Expr::CeilQuot(..)).then_some(())).is_some();
    m.hosts.iter().flat_map(|h| &h.launches).flat_map(|l| &l.args).any(|a| match a {
        AbiPlanArg::Tensor { dyn_leaves, .. } => dyn_leaves.iter().any(quot),
        AbiPlanArg::Scalar { .. } => false,
    })
}

/// Whether a kernel body holds a run-time `assert` (in any region).
fn has_assert(insts: &[cute_lang::kir::Inst]) -> bool {
    insts.iter().any(|i| matches!(i, cute_lang::kir::Inst::Assert { .. }) || i.regions().into_iter().any(has_assert))
}

/// Whether a launch condition anywhere in `m` asks for a minimum (`require EXPR | >=MIN`), which
/// only a version-8 reader knows.
fn has_minimum(m: &Manifest) -> bool {
    let at_least = |r: &Require| matches!(r.need, Need::AtLeast(_));
    m.kernels.iter().any(|k| k.requires.iter().any(at_least))
        || m.hosts.iter().any(|h| {
            h.requires.iter().any(at_least) || h.steps.iter().any(|st| matches!(st, Step::Require(r) if at_least(r)))
        })
}

/// A shape or stride: `None` for a dynamic entry, with the divisor the kernel relies on it being a
/// multiple of (the runtime refuses a value that is not), in flattened order in `divs`.
fn tuple(t: &IntTuple, divs: &mut Vec<i64>) -> AbiTuple {
    match t {
        IntTuple::Int(i) => {
            divs.push(if i.is_static() { 1 } else { i.divisibility().max(1) });
            AbiTuple::Leaf(i.as_static())
        }
        IntTuple::Tuple(items) => AbiTuple::Node(items.iter().map(|x| tuple(x, divs)).collect()),
    }
}

fn tensor(ty: &TensorTy) -> TensorSig {
    let (mut shape_div, mut stride_div) = (Vec::new(), Vec::new());
    let shape = tuple(&ty.layout.shape, &mut shape_div);
    let stride = tuple(&ty.layout.stride, &mut stride_div);
    TensorSig {
        elem: ty.elem,
        space: ty.space,
        align: ty.align,
        shape_leaves: shape.leaves(),
        stride_leaves: stride.leaves(),
        shape,
        stride,
        shape_div,
        stride_div,
    }
}

fn params(ps: &[Param]) -> Vec<ParamSig> {
    let kind = |p: &Param| match &p.kind {
        ParamKind::Scalar(s) => AbiParamKind::Scalar(*s),
        // A host function's CUDA stream: no `$k`, never passed to a kernel; launches name it
        // by its index among the host's parameters.
        ParamKind::Stream => AbiParamKind::Stream,
        ParamKind::Tensor { ty, .. } => AbiParamKind::Tensor(tensor(ty)),
    };
    ps.iter().map(|p| ParamSig { name: p.name.clone(), kind: kind(p) }).collect()
}

/// A kernel: its parameters; the dynamic shared memory every launch must provide (the kernel's
/// shared-memory tensors when they exceed the 48 KiB static limit, and what its
/// `allocate_tensor`s take of the launch's own region), which the runtime refuses a launch to give
/// less of; the thread-block cluster shape it is compiled for (`.reqnctapercluster`: the runtime
/// refuses grids that are not whole clusters); its launch conditions; each run-time divisor it
/// divides by with a multiplier and a shift (the runtime evaluates it over the kernel's `$k` at
/// launch and passes the two values after the declared parameters, in this order); and each TMA
/// tensor map it takes after those (a 128-byte `CUtensorMap` by value, encoded by the runtime at
/// launch from the tensor parameter's argument).
fn kernel(k: &Kernel, fast_divisors: &[String]) -> KernelSig {
    let vars = crate::plan::kernel_vars(k);
    let tma = |t: &cute_lang::kir::TmaDesc| TmaSig {
        param: t.param,
        elem: t.elem,
        order: t.order.clone(),
        box_dims: t.box_dims.iter().map(|&b| u32::try_from(b).unwrap_or(0)).collect(),
        swizzle_bytes: t.swizzle_bytes,
        store: t.store,
    };
    KernelSig {
        name: k.symbol.clone(),
        params: params(&k.params),
        requires: k.requires.iter().filter_map(|r| crate::plan::require(r, &vars)).collect(),
        dynamic_smem_bytes: u32::try_from(k.min_dynamic_smem_bytes()).unwrap_or(u32::MAX),
        // Written by `crate::plan::expr_text`, so always readable.
        fast_divisors: fast_divisors
            .iter()
            .map(|d| cute_abi::manifest::Expr::parse(d).expect("a fast divisor cutec wrote"))
            .collect(),
        tmas: k.tmas.iter().map(tma).collect(),
        cluster: k.cluster.as_ref().map_or([1, 1, 1], |c| c.dims),
        // `index(i64)`: the runtime passes i64 extents and strides and accepts tensors past
        // 2^31 - 1 elements; a 32-bit kernel is refused them.
        index_bits: if k.index64.is_some() { 64 } else { 32 },
        asserts: false,
    }
}

/// A host function: its parameters; for an instance of a generic host function, which one and
/// each type argument with the parameters it types (the runtime selects the instance by their
/// dtypes); the checks before anything is launched; then its plan, step by step. A plan that
/// cannot be written (never produced by elaboration) is left out: the block then names only the
/// kernels it launches, and the runtime refuses to call it (unusable rather than wrong).
fn host(h: &cute_lang::kir::Host) -> HostSig {
    let mut sig = HostSig::new(&h.name);
    sig.params = params(&h.params);
    sig.generic = h.instance.as_ref().map(|i| i.generic.clone());
    sig.tuned = h.tuned.clone();
    let type_args = h.instance.iter().flat_map(|i| &i.type_args);
    sig.type_args =
        type_args.map(|ta| TypeArgSig { name: ta.name.clone(), dtype: ta.ty, params: ta.params.clone() }).collect();
    let vars = crate::plan::host_vars(h);
    let top = HostBranch { requires: h.requires.clone(), asserts: h.asserts.clone(), steps: h.steps.clone() };
    let mut plan = sig.clone();
    if branch(&top, &vars, &mut plan, &mut StepNesting::default(), true).is_some() {
        return plan;
    }
    launched_kernels(&h.steps, &mut sig.launches_kernels);
    sig
}

/// The kernels a host's steps launch, in order (what a host without a plan names).
fn launched_kernels(steps: &[HostStep], out: &mut Vec<String>) {
    for st in steps {
        match st {
            HostStep::Launch(l) => out.push(l.kernel.clone()),
            HostStep::If { then, els, .. } => {
                launched_kernels(&then.steps, out);
                launched_kernels(&els.steps, out);
            }
            HostStep::For { body, .. } => launched_kernels(&body.steps, out),
            HostStep::Print(_) | HostStep::Break | HostStep::Continue => {}
        }
    }
}

/// A host block's (or one `if` branch's, or one loop body's) checks, then its steps: the host's
/// own checks run before anything is launched, a branch's when it is taken. A run-time `if` is
/// its condition, its branch, and the other branch when there is one; a run-time loop is its
/// bounds and its body. `None`: something that cannot be written.
fn branch(
    b: &HostBranch,
    vars: &HashMap<ValueId, usize>,
    h: &mut HostSig,
    nesting: &mut StepNesting,
    top: bool,
) -> Option<()> {
    use crate::plan;
    let push = |h: &mut HostSig, nesting: &mut StepNesting, st: Step| nesting.push(h, st).ok();
    for r in b.requires.iter().filter_map(|r| plan::require(r, vars)) {
        if top {
            h.requires.push(r);
        } else {
            push(h, nesting, Step::Require(r))?;
        }
    }
    for a in &b.asserts {
        let a = plan::assert(a, vars)?;
        if top {
            h.asserts.push(a);
        } else {
            push(h, nesting, Step::Assert(a))?;
        }
    }
    for step in &b.steps {
        match step {
            HostStep::Launch(l) => {
                h.launches_kernels.push(l.kernel.clone());
                h.launches.push(plan::launch(l, vars)?);
                push(h, nesting, Step::Launch(h.launches.len() - 1))?;
            }
            HostStep::Print(segs) => {
                if let Some(segs) = plan::print(segs, vars) {
                    push(h, nesting, Step::Print(segs))?;
                }
            }
            HostStep::If { cond, then, els, .. } => {
                push(h, nesting, Step::If { cond: plan::cond(cond, vars)?, else_at: 0 })?;
                branch(then, vars, h, nesting, false)?;
                if !els.is_empty() {
                    push(h, nesting, Step::Else { end_at: 0 })?;
                    branch(els, vars, h, nesting, false)?;
                }
                push(h, nesting, Step::EndIf)?;
            }
            HostStep::For { var, start, end, step, body, .. } => {
                let e = |i| plan::expr(i, vars);
                let (start, end, step) = (e(start)?, e(end)?, e(step)?);
                push(h, nesting, Step::For { var: *vars.get(var)?, start, end, step, end_at: 0 })?;
                branch(body, vars, h, nesting, false)?;
                push(h, nesting, Step::EndFor { for_at: 0 })?;
            }
            HostStep::Break => push(h, nesting, Step::Break { end_at: 0 })?,
            HostStep::Continue => push(h, nesting, Step::Continue { endfor_at: 0 })?,
        }
    }
    Some(())
}

/// The MLIR text of the `llvm.mlir.global` op holding `text`, to place inside
/// `gpu.module @kernels { ... }` (ends with a newline).
///
/// Every byte that is not printable ASCII, plus `"` and `\`, is written as a
/// `\XX` hex escape, so the attribute is exactly `text`'s bytes and the array
/// length is its byte length.
pub fn manifest_global(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut escaped = String::with_capacity(bytes.len() + bytes.len() / 8);
    for &b in bytes {
        match b {
            b'"' | b'\\' => {
                let _ = write!(escaped, "\\{b:02X}");
            }
            0x20..=0x7e => escaped.push(b as char),
            _ => {
                let _ = write!(escaped, "\\{b:02X}");
            }
        }
    }
    format!(
        "    llvm.mlir.global external constant @{MANIFEST_SYMBOL}(\"{escaped}\") {{addr_space = 1 : i32}} : !llvm.array<{} x i8>\n",
        bytes.len()
    )
}
