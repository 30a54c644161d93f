//! Thread-block clusters (sm_90): the launch clause `cluster(X[, Y[, Z]])`, the cluster special
//! registers, the cluster barrier and distributed shared memory (CuTe DSL's `cute.arch.cluster_*`).
//!
//! A cluster shape is a property of the kernel instance, not of one launch: it is compiled into
//! the kernel (PTX `.reqnctapercluster`, through `nvvm.cluster_dim`), so that an ordinary
//! `cuLaunchKernel` launches clusters and every launch path of the runtime needs nothing new but
//! a check that the grid is a multiple of the cluster. Hence one shape per instance: a second
//! launch with another shape (or with none) is an error, not a second instance, since a kernel
//! compiled on its own and launched directly must have one shape too. The builtins read special
//! registers and do not depend on the shape, so the kernel body is the same whatever the launch
//! gives (design.md (r)).

use super::value::{Origin, Value};
use super::{Frame, R};
use crate::ast::{Arg, Expr, LaunchClause};
use crate::diag::Diagnostic;
use crate::kir::{self, ClusterBarrierOp, Inst, MbarrierOp, Operand, Special, ValueTy};
use crate::span::Span;
use crate::types::{MemSpace, Scalar};
use cute_layout::Int;

/// The most blocks a cluster may have portably (the CUDA limit without the non-portable opt-in).
pub(crate) const MAX_CLUSTER_BLOCKS: i64 = 8;

/// The builtins of this module, in the order the docs list them.
pub(crate) const BUILTINS: &[&str] = &[
    "cluster_idx",
    "cluster_dim",
    "block_idx_in_cluster",
    "block_in_cluster_dim",
    "block_rank_in_cluster",
    "cluster_arrive",
    "cluster_arrive_relaxed",
    "cluster_wait",
    "cluster_sync",
    "dsmem_load",
    "dsmem_store",
];

fn usage(name: &str) -> &'static str {
    match name {
        "dsmem_load" => "dsmem_load(sA[i, j], rank)",
        "dsmem_store" => "dsmem_store(sA[i, j], rank, value)",
        "cluster_idx" => "let (cx, cy, cz) = cluster_idx();",
        "cluster_dim" => "let (nx, ny, nz) = cluster_dim();",
        "block_idx_in_cluster" => "let (bx, by, bz) = block_idx_in_cluster();",
        "block_in_cluster_dim" => "let (cx, cy, cz) = block_in_cluster_dim();",
        "block_rank_in_cluster" => "block_rank_in_cluster()",
        "cluster_arrive" => "cluster_arrive();",
        "cluster_arrive_relaxed" => "cluster_arrive_relaxed();",
        "cluster_wait" => "cluster_wait();",
        _ => "cluster_sync();",
    }
}

impl Frame<'_, '_> {
    /// `cluster(X[, Y[, Z]])` of a launch: static positive extents of at most 8 blocks in all.
    pub(crate) fn cluster_clause(&mut self, c: &LaunchClause) -> R<[u32; 3]> {
        if c.args.is_empty() || c.args.len() > 3 {
            return Err(Diagnostic::error("`cluster` takes 1 to 3 extents", c.span, "wrong number of extents")
                .with_help("write `cluster(2)` or `cluster(2, 1, 1)`: blocks per cluster in x, y, z"));
        }
        let mut dims = [1u32; 3];
        for (d, e) in dims.iter_mut().zip(&c.args) {
            let v = self.index(e)?;
            let Some(n) = v.as_static() else {
                return Err(Diagnostic::error("a cluster extent must be known at compile time", e.span, "known only at run time")
                    .with_help("the cluster shape is compiled into the kernel (PTX `.reqnctapercluster`): use a literal or a `const`"));
            };
            if !(1..=MAX_CLUSTER_BLOCKS).contains(&n) {
                return Err(Diagnostic::error(
                    format!("a cluster extent is 1 to {MAX_CLUSTER_BLOCKS}, not {n}"),
                    e.span,
                    "invalid cluster extent",
                ));
            }
            *d = n as u32;
        }
        let blocks: u32 = dims.iter().product();
        if i64::from(blocks) > MAX_CLUSTER_BLOCKS {
            return Err(Diagnostic::error(format!("a cluster of {} x {} x {} = {blocks} blocks is larger than the portable maximum of {MAX_CLUSTER_BLOCKS}", dims[0], dims[1], dims[2]), c.span, "too many blocks")
                .with_help(format!("use at most {MAX_CLUSTER_BLOCKS} blocks per cluster (the product of the extents)")));
        }
        Ok(dims)
    }

    /// Gives the kernel instance `symbol` the cluster shape of this launch (`None`: no `cluster`
    /// clause), refusing a shape that differs from an earlier launch's and a static grid extent
    /// that is not a multiple of the cluster's (the runtime checks run-time extents).
    pub(crate) fn record_cluster(
        &mut self,
        symbol: &str,
        kernel: &str,
        cluster: Option<([u32; 3], Span)>,
        grid: &[Int; 3],
        span: Span,
    ) -> R<()> {
        let shape = |c: Option<[u32; 3]>| match c {
            Some(d) => format!("`cluster({}, {}, {})`", d[0], d[1], d[2]),
            None => "no `cluster(...)` clause".to_string(),
        };
        let dims = cluster.map(|(d, _)| d);
        match self.prog.cluster_launches.get(symbol) {
            Some(&(prev, prev_span)) if prev != dims => {
                let fix = match prev {
                    Some(d) => {
                        format!("give every launch of `{kernel}` the clause `cluster({}, {}, {})`", d[0], d[1], d[2])
                    }
                    None => format!(
                        "launch `{kernel}` without clusters everywhere, or give every launch the same `cluster(...)`"
                    ),
                };
                return Err(Diagnostic::error(
                    format!("`{kernel}` is launched with {} here but with {} before", shape(dims), shape(prev)),
                    cluster.map_or(span, |(_, s)| s),
                    "a second cluster shape",
                )
                .with_secondary(prev_span, "earlier launch")
                .with_help(format!(
                    "a kernel's cluster shape is compiled into it (PTX `.reqnctapercluster`), so it has one: {fix}"
                )));
            }
            Some(_) => {}
            None => {
                self.prog.cluster_launches.insert(symbol.to_string(), (dims, cluster.map_or(span, |(_, s)| s)));
            }
        }
        let Some((dims, clause)) = cluster else {
            // An arrival on another block's barrier, or a load multicast to other blocks, needs
            // the blocks it names.
            let body = self.prog.module.kernels.iter().find(|k| k.symbol == symbol).map(|k| k.body.as_slice());
            let needs = body.and_then(|b| {
                remote_arrival(b)
                    .map(|at| (at, REMOTE_ARRIVAL))
                    .or_else(|| multicast_load(b).map(|at| (at, MULTICAST_LOAD)))
            });
            if let Some((at, (what, label, fix))) = needs {
                return Err(Diagnostic::error(
                    format!("`{kernel}` {what}, but this launch has no `cluster(...)` clause"),
                    at,
                    label,
                )
                .with_secondary(span, "launched without a cluster")
                .with_help(format!("launch `{kernel}` with a `cluster(...)` clause, or {fix}")));
            }
            return Ok(());
        };
        for (i, (g, c)) in grid.iter().zip(dims).enumerate() {
            if let Some(n) = g.as_static() {
                if n % i64::from(c) != 0 {
                    let axis = ["x", "y", "z"][i];
                    return Err(Diagnostic::error(
                        format!("the grid ({}, {}, {}) is not a multiple of the cluster ({}, {}, {}): {n} blocks in {axis} do not form whole clusters of {c}", grid[0], grid[1], grid[2], dims[0], dims[1], dims[2]),
                        span,
                        "partial cluster",
                    )
                    .with_secondary(clause, "cluster shape")
                    .with_help(format!("make the grid's {axis} extent a multiple of {c} (round it up and let the extra blocks do nothing)")));
                }
            }
        }
        if let Some(k) = self.prog.module.kernels.iter_mut().find(|k| k.symbol == symbol) {
            // A static rank the cluster does not have: known only now that the shape is.
            let blocks = i64::from(dims.iter().product::<u32>());
            if let Some((r, at)) = static_ranks(&k.body).into_iter().find(|(r, _)| *r >= blocks) {
                return Err(Diagnostic::error(format!("`{kernel}` reaches the shared memory of block rank {r}, but its clusters have {blocks} blocks (ranks 0 to {})", blocks - 1), at, "no such block")
                    .with_secondary(clause, "cluster shape")
                    .with_help("compute the rank from `block_rank_in_cluster()` and `block_in_cluster_dim()`"));
            }
            k.cluster.get_or_insert(kir::Cluster { dims, span: clause });
        }
        Ok(())
    }

    /// A call of one of [`BUILTINS`].
    pub(crate) fn cluster_call(&mut self, name: &str, args: &[Arg], span: Span) -> R<Value> {
        let want = match name {
            "dsmem_load" => 2,
            "dsmem_store" => 3,
            _ => 0,
        };
        if args.len() != want || args.iter().any(|a| a.name.is_some()) {
            let n = match want {
                0 => "no arguments".to_string(),
                n => format!("{n} positional arguments"),
            };
            return Err(Diagnostic::error(format!("`{name}` takes {n}"), span, "wrong arguments")
                .with_help(format!("write `{}`", usage(name))));
        }
        self.need_kernel(&format!("`{name}`"), span)?;
        match name {
            "cluster_idx" => self.cluster_special3(name, Special::ClusterIdx, span),
            "cluster_dim" => self.cluster_special3(name, Special::ClusterDim, span),
            "block_idx_in_cluster" => self.cluster_special3(name, Special::BlockIdxInCluster, span),
            "block_in_cluster_dim" => self.cluster_special3(name, Special::BlockInClusterDim, span),
            "block_rank_in_cluster" => Ok(self.cluster_special(name.to_string(), Special::BlockRankInCluster, span)),
            "cluster_arrive" | "cluster_arrive_relaxed" | "cluster_wait" | "cluster_sync" => {
                let ops: &[ClusterBarrierOp] = match name {
                    "cluster_arrive" => &[ClusterBarrierOp::Arrive],
                    "cluster_arrive_relaxed" => &[ClusterBarrierOp::ArriveRelaxed],
                    "cluster_wait" => &[ClusterBarrierOp::Wait],
                    // CuTe's cluster_sync(): arrive (release), then wait (acquire).
                    _ => &[ClusterBarrierOp::Arrive, ClusterBarrierOp::Wait],
                };
                for &op in ops {
                    self.emit(Inst::ClusterBarrier { op, span });
                }
                Ok(Value::Unit)
            }
            _ => self.dsmem_call(name == "dsmem_store", args, span),
        }
    }

    /// A special register of the cluster, read once per kernel at its top (as `block_idx`).
    fn cluster_special(&mut self, key: String, which: Special, span: Span) -> Value {
        if let Some(v) = self.special_values.get(&key) {
            return v.clone();
        }
        let id = self.fresh(ValueTy::Scalar(Scalar::I32));
        self.specials.push(Inst::Special { dst: id, which, span });
        let v = Value::Int(Int::var(id, 1));
        self.special_values.insert(key, v.clone());
        v
    }

    /// A (x, y, z) tuple of a per-dimension cluster register (CuTe DSL returns the three).
    fn cluster_special3(&mut self, name: &str, which: fn(u8) -> Special, span: Span) -> R<Value> {
        let items = (0..3u8).map(|d| self.cluster_special(format!("{name}.{d}"), which(d), span)).collect();
        Ok(Value::Tuple(items))
    }

    /// `dsmem_load(sA[crd], rank)` and `dsmem_store(sA[crd], rank, value)`: one element of a shared
    /// tensor in the shared memory of the block of rank `rank` in the cluster. Every block of the
    /// kernel lays its shared memory out alike, so the element is at the same offset there.
    fn dsmem_call(&mut self, store: bool, args: &[Arg], span: Span) -> R<Value> {
        let name = if store { "dsmem_store" } else { "dsmem_load" };
        let help = format!("name the element as in `{}`", usage(name));
        let (t, offset) =
            self.element_place(&args[0].value, "a distributed shared memory access", &help, not_shared_element)?;
        if t.ty.space != MemSpace::Smem {
            return Err(Diagnostic::error(
                format!("`{name}` reaches the shared memory of another block; this is an element of {}", t.ty),
                args[0].value.span,
                "not shared memory",
            )
            .with_help("pass an element of a shared-memory tensor (`make_smem_tensor`, `smem.allocate_tensor`)"));
        }
        let elem = t.ty.elem;
        if elem == Scalar::Bool || elem.is_fp8() {
            return Err(Diagnostic::error(
                format!("`{name}` of `{}` elements is not supported", elem.name()),
                args[0].value.span,
                "unsupported element type",
            )
            .with_help("keep the shared tensor in an integer or a 16/32/64-bit float type (e.g. `u8` for bytes)"));
        }
        let rank = self.cluster_rank(&args[1].value, name)?;
        let Origin::Kernel(tensor) = t.origin else { unreachable!("kernel tensors have kernel origins") };
        self.commit_requires(tensor);
        if store {
            let v = self.expr(&args[2].value)?;
            let v = self.coerce(v, elem, args[2].value.span).map_err(|d| {
                d.with_secondary(args[0].value.span, format!("expected `{}` because of this element", elem.name()))
            })?;
            let value = self.operand(&v, elem, args[2].value.span)?;
            self.emit(Inst::DsmemStore { value, tensor, ty: t.ty, offset, rank, span });
            return Ok(Value::Unit);
        }
        let dst = self.fresh(ValueTy::Scalar(elem));
        self.emit(Inst::DsmemLoad { dst, tensor, ty: t.ty, offset, rank, span });
        Ok(if elem == Scalar::I32 { Value::Int(Int::var(dst, 1)) } else { Value::Scalar(elem, dst) })
    }

    /// A block rank in the cluster: an `i32`, 0 to 7 when static (the kernel's cluster shape is
    /// not known while its body is elaborated; a rank past the cluster is undefined behaviour, as
    /// in PTX, so the docs say to compute it from `block_in_cluster_dim()`).
    pub(crate) fn cluster_rank(&mut self, e: &Expr, name: &str) -> R<Operand> {
        let v = self.expr(e)?;
        self.cluster_rank_value(&v, e.span, name)
    }

    /// [`Self::cluster_rank`] of an evaluated argument.
    pub(crate) fn cluster_rank_value(&mut self, v: &Value, span: Span, name: &str) -> R<Operand> {
        match v.clone() {
            Value::Int(i) => {
                if let Some(r) = i.as_static() {
                    if !(0..MAX_CLUSTER_BLOCKS).contains(&r) {
                        return Err(Diagnostic::error(
                            format!(
                                "`{name}`: block rank {r} is outside any cluster (ranks are 0 to {})",
                                MAX_CLUSTER_BLOCKS - 1
                            ),
                            span,
                            "out of range",
                        ));
                    }
                }
                Ok(Operand::Int(i))
            }
            Value::Scalar(Scalar::I32, id) => Ok(Operand::Value(id)),
            other => Err(Diagnostic::error(
                format!("`{name}`: the block rank must be an `i32`, found {}", crate::diag::article(&other.kind())),
                span,
                "not an i32",
            )
            .with_help("compute it from `block_rank_in_cluster()`, e.g. `(block_rank_in_cluster() + 1) % 2`")),
        }
    }
}

/// The static block ranks of the distributed shared memory accesses in `insts`, with their spans.
fn static_ranks(insts: &[Inst]) -> Vec<(i64, Span)> {
    let mut out = Vec::new();
    for i in insts {
        match i {
            Inst::DsmemLoad { rank: Operand::Int(r), span, .. }
            | Inst::DsmemStore { rank: Operand::Int(r), span, .. }
            | Inst::Mbarrier { op: MbarrierOp::ArriveCluster, arg: Some(Operand::Int(r)), span, .. } => {
                out.extend(r.as_static().map(|r| (r, *span)))
            }
            // A multicast mask reaches the block of its highest bit.
            Inst::TmaLoad { multicast: Some(Operand::Int(m)), span, .. } => {
                out.extend(m.as_static().filter(|m| *m > 0).map(|m| (63 - i64::from(m.leading_zeros()), *span)))
            }
            other => other.regions().into_iter().for_each(|r| out.extend(static_ranks(r))),
        }
    }
    out
}

/// What makes a kernel need a `cluster(...)` launch, in the words of the error when it has none:
/// what the kernel does, the label at the instruction, and the other way out.
type ClusterUse = (&'static str, &'static str, &'static str);
const REMOTE_ARRIVAL: ClusterUse = (
    "arrives on the barrier of another block of its cluster (`cta:`)",
    "a cluster-scope arrival",
    "arrive on this block's barrier (no `cta:`)",
);
const MULTICAST_LOAD: ClusterUse = (
    "multicasts a TMA load to the blocks of its cluster (`multicast:`)",
    "a multicast load",
    "load into this block only (no `multicast:`)",
);

/// The first arrival on another block's barrier (`mbarrier_arrive(bar, cta: k)`) in `insts`.
fn remote_arrival(insts: &[Inst]) -> Option<Span> {
    first_span(insts, &|i| match i {
        Inst::Mbarrier { op: MbarrierOp::ArriveCluster, span, .. } => Some(*span),
        _ => None,
    })
}

/// The first TMA load multicast to other blocks (`tma_load(..., multicast: mask)`) in `insts`.
fn multicast_load(insts: &[Inst]) -> Option<Span> {
    first_span(insts, &|i| match i {
        Inst::TmaLoad { multicast: Some(_), span, .. } => Some(*span),
        _ => None,
    })
}

/// The span `hit` gives the first instruction of `insts` (nested regions included) it matches.
fn first_span(insts: &[Inst], hit: &dyn Fn(&Inst) -> Option<Span>) -> Option<Span> {
    insts.iter().find_map(|i| hit(i).or_else(|| i.regions().into_iter().find_map(|r| first_span(r, hit))))
}

fn not_shared_element(v: &Value, span: Span) -> Diagnostic {
    Diagnostic::error(
        format!(
            "distributed shared memory is reached through an element of a shared tensor, as in `sA[i]`; found {}",
            crate::diag::article(&v.kind())
        ),
        span,
        "not a tensor element",
    )
    .with_help("write `dsmem_load(sA[i], rank)` with `sA` a shared-memory tensor")
}
