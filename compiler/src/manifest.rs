//! The kernel manifest cutec embeds in every cubin (format: `docs/runtime.md`,
//! reader: `runtime/src/manifest.rs`).
//!
//! The manifest is versioned, line-based UTF-8 text describing each kernel's
//! parameters (element type, memory space, alignment, rank, shape and stride
//! in CuTe notation with `?` for dynamic entries). It is placed in the
//! kernel module as the global `__cutec_manifest` (a byte array with
//! external linkage in address space 1), which ptxas keeps with its
//! initializer as an `OBJECT` symbol in `.nv.global.init`; the runtime reads
//! it from the cubin's ELF symbol table on the host (no GPU needed).

use cute_lang::kir::{HostBranch, HostStep, Module, Param, ParamKind, ValueId};
use cute_layout::IntTuple;
use std::collections::HashMap;
use std::fmt::Write;

/// The name of the global holding the manifest.
pub const MANIFEST_SYMBOL: &str = "__cutec_manifest";
/// The manifest format's major version.
pub const MANIFEST_VERSION: u32 = 1;
/// The version of a manifest whose host functions branch at run time (`if` ... `endif` in a
/// `host` block): a runtime that does not know the records must not read the plan, as it would
/// carry out every branch.
pub const MANIFEST_VERSION_HOST_FLOW: u32 = 2;
/// The version of a manifest with a `fastdiv` line in a kernel block: such a kernel takes two
/// more parameters per line, which a runtime that skipped the line would not pass.
pub const MANIFEST_VERSION_FAST_DIV: u32 = 3;
/// The version of a manifest with a `tma` line in a kernel block: such a kernel takes a 128-byte
/// tensor map per line that a runtime that skipped the line would not pass.
pub const MANIFEST_VERSION_TMA: u32 = 4;
/// The version of a manifest with a `cluster` line in a kernel block: a runtime that skipped the
/// line would not refuse grids that are not whole clusters (the driver would, without saying why).
pub const MANIFEST_VERSION_CLUSTER: u32 = 5;
/// The version of a manifest whose host functions loop at run time (`for` ... `endfor`, `break`,
/// `continue` in a `host` block): a runtime that skipped the records would make each launch of a
/// loop body once, with its loop variable unbound.
pub const MANIFEST_VERSION_HOST_LOOPS: u32 = 6;
/// The version of a manifest with a `tma ... store=1` line: TMA stores write whole 16-byte chunks,
/// and a runtime that ignored the attribute would not refuse a tensor whose rows end inside one
/// (the store would write past them).
pub const MANIFEST_VERSION_TMA_STORE: u32 = 7;

/// A shape or stride in CuTe notation: `?` for a dynamic entry, `?{div=N}` where the kernel relies
/// on it being a multiple of N (the runtime refuses a value that is not).
pub fn tuple_text(t: &IntTuple) -> String {
    match t {
        IntTuple::Int(i) => i.as_static().map_or_else(|| i.to_string(), |v| v.to_string()),
        IntTuple::Tuple(items) => format!("({})", items.iter().map(tuple_text).collect::<Vec<_>>().join(",")),
    }
}

fn params(ps: &[Param], out: &mut String) {
    for p in ps {
        match &p.kind {
            ParamKind::Scalar(s) => {
                let _ = writeln!(out, "param {} scalar elem={}", p.name, s.name());
            }
            // A host function's CUDA stream: no `$k`, never passed to a kernel; launches name it
            // with a `stream P` line (P: its index among the host's parameters).
            ParamKind::Stream => {
                let _ = writeln!(out, "param {} stream", p.name);
            }
            ParamKind::Tensor { ty, .. } => {
                let _ = writeln!(
                    out,
                    "param {} tensor elem={} space={} align={} rank={} shape={} stride={}",
                    p.name,
                    ty.elem.name(),
                    ty.space.name(),
                    ty.align,
                    ty.layout.shape.rank(),
                    tuple_text(&ty.layout.shape),
                    tuple_text(&ty.layout.stride)
                );
            }
        }
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
/// ```
///
/// One `kernel` block per kernel instance, named by its cubin symbol (with `cluster X Y Z` when it
/// runs in thread-block clusters, `smem N` when every
/// launch must provide N bytes of dynamic shared memory, and a `fastdiv EXPR` line per run-time
/// divisor of its index math, `fast_divisors[kernel index]`, see [`crate::lower`]); one `host` block per host
/// function with its parameters and the kernels it launches (readers that do not know a line skip
/// it). A generic host function has one block per instance, named `NAME<f16>`, with an
/// `instance NAME` line and a `typearg T f16 PARAM...` line per type parameter.
pub fn manifest_text(module: &Module, arch: &str, fast_divisors: &[Vec<String>]) -> String {
    let branches = module.hosts.iter().any(|h| h.steps.iter().any(|st| matches!(st, HostStep::If { .. })));
    let loops = module.hosts.iter().any(|h| h.steps.iter().any(HostStep::has_loop));
    let version = if module.kernels.iter().any(|k| k.tmas.iter().any(|t| t.store)) {
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
        MANIFEST_VERSION
    };
    let mut out = format!("cutec-manifest {version}\narch {arch}\n");
    for (ki, k) in module.kernels.iter().enumerate() {
        let _ = writeln!(out, "kernel {}", k.symbol);
        params(&k.params, &mut out);
        // The dynamic shared memory every launch must provide (the kernel's shared-memory tensors
        // when they exceed the 48 KiB static limit, and what its `allocate_tensor`s take of the
        // launch's own region); the runtime refuses a launch that gives less.
        let smem = k.min_dynamic_smem_bytes();
        if smem > 0 {
            let _ = writeln!(out, "smem {smem}");
        }
        // The thread-block cluster shape the kernel is compiled for (`.reqnctapercluster`): the
        // runtime refuses grids that are not whole clusters before launching.
        if let Some(c) = &k.cluster {
            let _ = writeln!(out, "cluster {} {} {}", c.dims[0], c.dims[1], c.dims[2]);
        }
        let vars = crate::plan::kernel_vars(k);
        for r in &k.requires {
            if let Some(line) = crate::plan::require_line(r, &vars) {
                out.push_str(&line);
            }
        }
        // Each run-time divisor the kernel divides by with a multiplier and a shift: the runtime
        // evaluates EXPR over the kernel's `$k` at launch and passes the two values after the
        // declared parameters, in the order of these lines.
        for d in fast_divisors.get(ki).into_iter().flatten() {
            let _ = writeln!(out, "fastdiv {d}");
        }
        // Each TMA tensor map the kernel takes after those (a 128-byte `CUtensorMap` by value),
        // encoded by the runtime at launch from the tensor parameter's argument.
        for t in &k.tmas {
            let list = |v: &[String]| if v.len() == 1 { v[0].clone() } else { format!("({})", v.join(",")) };
            let _ = writeln!(
                out,
                "tma {} elem={} order={} box={} swizzle={}{}",
                k.params[t.param].name,
                t.elem.name(),
                list(&t.order.iter().map(|o| o.to_string()).collect::<Vec<_>>()),
                list(&t.box_dims.iter().map(|o| o.to_string()).collect::<Vec<_>>()),
                t.swizzle_bytes,
                if t.store { " store=1" } else { "" }
            );
        }
        out.push_str("end\n");
    }
    for h in &module.hosts {
        let _ = writeln!(out, "host {}", h.name);
        params(&h.params, &mut out);
        // An instance of a generic host function: which one, and each type argument with the
        // parameters it types (the runtime selects the instance by their dtypes).
        if let Some(inst) = &h.instance {
            let _ = writeln!(out, "instance {}", inst.generic);
            for ta in &inst.type_args {
                let names: Vec<&str> =
                    ta.params.iter().filter_map(|i| h.params.get(*i)).map(|p| p.name.as_str()).collect();
                let _ = writeln!(out, "typearg {} {} {}", ta.name, ta.ty.name(), names.join(" "));
            }
        }
        let vars = crate::plan::host_vars(h);
        // The checks before anything is launched, then the plan the runtime carries out when the
        // host function is called, step by step.
        let top = HostBranch { requires: h.requires.clone(), asserts: h.asserts.clone(), steps: h.steps.clone() };
        branch_lines(&top, &vars, &mut out);
        out.push_str("end\n");
    }
    out
}

/// A host block's (or one `if` branch's, or one loop body's) `require` and `assert` lines, then its
/// steps; a run-time `if` is `if COND`, its branch, `else` and the other branch when there is one,
/// then `endif`; a run-time loop is `for ...`, its body, then `endfor`.
fn branch_lines(b: &HostBranch, vars: &HashMap<ValueId, usize>, out: &mut String) {
    for r in &b.requires {
        if let Some(line) = crate::plan::require_line(r, vars) {
            out.push_str(&line);
        }
    }
    for a in &b.asserts {
        out.push_str(&crate::plan::assert_line(a, vars));
    }
    for step in &b.steps {
        match step {
            HostStep::Launch(l) => {
                let _ = writeln!(out, "launches {}", l.kernel);
                if let Some(lines) = crate::plan::launch_lines(l, vars) {
                    out.push_str(&lines);
                }
            }
            HostStep::Print(segs) => {
                if let Some(line) = crate::plan::print_line(segs, vars) {
                    out.push_str(&line);
                }
            }
            HostStep::If { cond, then, els, .. } => {
                let _ = writeln!(out, "if {}", crate::plan::cond_text(cond, vars));
                branch_lines(then, vars, out);
                if !els.is_empty() {
                    out.push_str("else\n");
                    branch_lines(els, vars, out);
                }
                out.push_str("endif\n");
            }
            // A run-time loop: `for $K | START | END | STEP`, its body, `endfor`. A bound that
            // cannot be written leaves `for` without them, which the runtime refuses (the host
            // is then unusable rather than wrong).
            HostStep::For { var, start, end, step, body, .. } => {
                out.push_str(
                    &crate::plan::for_line(*var, start, end, step, vars).unwrap_or_else(|| "for\n".to_string()),
                );
                branch_lines(body, vars, out);
                out.push_str("endfor\n");
            }
            HostStep::Break => out.push_str("break\n"),
            HostStep::Continue => out.push_str("continue\n"),
        }
    }
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
