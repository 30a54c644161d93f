//! TMA loads (sm_90): `tma_load(gA, sA, bars[i], (m, n))` copies the tile `(m, n)` of shape
//! `sA.shape` of the kernel tensor parameter `gA` into the shared tensor `sA` with one
//! `cp.async.bulk.tensor` instruction, completing on the mbarrier `bars[i]`. The tensor map (CuTe
//! DSL's `make_tiled_tma_atom`) is a hidden kernel parameter the runtime encodes at launch from
//! `gA`'s argument, the box `sA.shape` and `sA`'s swizzle ([`kir::TmaDesc`]).
//!
//! The coordinate may also be given in elements, `tma_load(gA, sA, bars[i], elements: (r, k))`
//! (the box starts at element `(r, k)`, anywhere: a grouped GEMM's group starts at any row),
//! for loads and stores alike.
//!
//! Multicast (sm_90 clusters): `tma_load(gA, sA, bars[i], (m, n), multicast: mask)` writes the box
//! into `sA` in the shared memory of every block of the cluster whose rank is a bit of `mask`, and
//! completes its bytes on `bars[i]` in each of them (`.multicast::cluster`, CuTe's
//! `SM90_TMA_LOAD_MULTICAST`): each block of a 2x1 GEMM cluster loads half of the shared operand.
//!
//! TMA stores: `tma_store(sC, gC, (m, n))` copies the shared tensor `sC` (the box, under the same
//! rules as a load's destination) to the tile `(m, n)` of `gC`, through a map of the same kind (one
//! map serves loads and stores of the same tensor, box and swizzle). The store is asynchronous,
//! in bulk groups: `tma_store_fence()` before it (the threads' writes of `sC` visible to the TMA
//! engine), `tma_store_arrive()` to commit and `tma_store_wait(n)` before `sC` is written again.

use super::value::{Origin, TensorVal, Value};
use super::view::{check_rank, coord_err, crd_has_under};
use super::{Frame, R};
use crate::ast::{Arg, Expr, ExprKind};
use crate::diag::Diagnostic;
use crate::kir::{self, Inst, ValueId};
use crate::span::Span;
use crate::types::MemSpace;
use cute_layout::{Int, IntTuple};

/// How the two TMA directions name their operands in messages.
struct Roles {
    builtin: &'static str,
    usage: &'static str,
    /// What the global tensor is to the copy ("source" of a load, "destination" of a store).
    global: &'static str,
    /// What the shared tensor is.
    shared: &'static str,
    /// Which argument the tile coordinate is.
    crd_arg: &'static str,
    /// What TMA does with the shared box ("writes" for a load, "reads" for a store).
    box_verb: &'static str,
}

const LOAD: Roles = Roles {
    builtin: "tma_load",
    usage: "tma_load(gA, sA, bars[i], (m, n))",
    global: "source",
    shared: "destination",
    crd_arg: "fourth",
    box_verb: "writes",
};
const STORE: Roles = Roles {
    builtin: "tma_store",
    usage: "tma_store(sC, gC, (m, n))",
    global: "destination",
    shared: "source",
    crd_arg: "third",
    box_verb: "reads",
};

/// What a TMA copy's operands come to: the map (an index into the kernel's maps), the shared box
/// and the element coordinates in the map's dimension order.
struct TmaCopy {
    tma: usize,
    smem: kir::ValueId,
    smem_ty: kir::TensorTy,
    coords: Vec<Int>,
}

/// The help of a bad `multicast:` mask.
const MASK_HELP: &str =
    "bit r of the mask is the block of rank r in the cluster: `3` (0x3) for both blocks of a cluster of 2";

impl Frame<'_, '_> {
    pub(crate) fn tma_load_call(&mut self, args: &[Arg], span: Span) -> R<Value> {
        let is_multicast = |a: &Arg| a.name.as_ref().is_some_and(|n| n.name == "multicast");
        let (mask_arg, args): (Vec<&Arg>, Vec<&Arg>) = args.iter().partition(|a| is_multicast(a));
        if args.len() != 4
            || args[..3].iter().any(|a| a.name.is_some())
            || !coordinate_arg(args[3])
            || mask_arg.len() > 1
        {
            return Err(Diagnostic::error("`tma_load` takes 4 arguments", span, "wrong arguments").with_help(format!(
                "write `{}` (a tile coordinate), or `elements: (r, k)` as the last argument (an element coordinate); `multicast: mask` may follow",
                LOAD.usage
            )));
        }
        self.need_kernel("`tma_load`", span)?;
        let copy = self.tma_copy(&LOAD, &args[0].value, &args[1].value, args[3])?;
        let (bar, offset) = self.barrier_place(&args[2].value)?;
        let Origin::Kernel(bar_id) = bar.origin else { unreachable!() };
        let multicast = match mask_arg.first() {
            Some(a) => Some(self.multicast_mask(&a.value)?),
            None => None,
        };
        self.emit(Inst::TmaLoad {
            tma: copy.tma,
            smem: copy.smem,
            smem_ty: copy.smem_ty,
            bar: bar_id,
            bar_ty: bar.ty,
            offset,
            coords: copy.coords,
            multicast,
            span,
        });
        Ok(Value::Unit)
    }

    /// The `multicast:` mask of a TMA load: an `i32` whose bit `r` names the block of rank `r` in
    /// the cluster (PTX's 16-bit `ctaMask`); a static one is 1 to 255 (8 blocks at most) and is
    /// checked against the cluster at the launch.
    fn multicast_mask(&mut self, e: &Expr) -> R<kir::Operand> {
        match self.expr(e)? {
            Value::Int(i) => {
                if let Some(m) = i.as_static() {
                    if !(1..1 << super::cluster::MAX_CLUSTER_BLOCKS).contains(&m) {
                        return Err(Diagnostic::error(
                            format!("`tma_load`: the multicast mask {m} names no block or a rank past 7"),
                            e.span,
                            "out of range",
                        )
                        .with_help(MASK_HELP));
                    }
                }
                Ok(kir::Operand::Int(i))
            }
            Value::Scalar(crate::types::Scalar::I32, id) => Ok(kir::Operand::Value(id)),
            other => Err(Diagnostic::error(
                format!(
                    "`tma_load`: the multicast mask must be an `i32`, found {}",
                    crate::diag::article(&other.kind())
                ),
                e.span,
                "not an i32",
            )
            .with_help(MASK_HELP)),
        }
    }

    /// `tma_store(sC, gC, (m, n))`: one `cp.async.bulk.tensor` from shared to global memory.
    pub(crate) fn tma_store_call(&mut self, args: &[Arg], span: Span) -> R<Value> {
        if args.len() != 3 || args[..2].iter().any(|a| a.name.is_some()) || !coordinate_arg(&args[2]) {
            return Err(Diagnostic::error("`tma_store` takes 3 arguments", span, "wrong arguments").with_help(
                format!(
                "write `{}` (a tile coordinate), or `elements: (r, c)` as the last argument (an element coordinate)",
                STORE.usage
            ),
            ));
        }
        self.need_kernel("`tma_store`", span)?;
        let copy = self.tma_copy(&STORE, &args[1].value, &args[0].value, &args[2])?;
        self.emit(Inst::TmaStore { tma: copy.tma, smem: copy.smem, smem_ty: copy.smem_ty, coords: copy.coords, span });
        Ok(Value::Unit)
    }

    /// `tma_store_fence()`: `fence.proxy.async.shared::cta` (CuTe's `tma_store_fence`, the same
    /// instruction as `fence_proxy_async()`): this thread's writes of shared memory become visible
    /// to the TMA engine, which reads the box through the async proxy.
    pub(crate) fn tma_store_fence_call(&mut self, args: &[Arg], span: Span) -> R<Value> {
        if !args.is_empty() {
            return Err(Diagnostic::error("`tma_store_fence` takes no arguments", span, "wrong arguments")
                .with_help("write `tma_store_fence()`"));
        }
        self.need_kernel("`tma_store_fence`", span)?;
        self.emit(Inst::Warpgroup { op: kir::WarpgroupOp::FenceProxyAsync, span });
        Ok(Value::Unit)
    }

    /// `tma_store_arrive()` (`cp.async.bulk.commit_group`; CuTe DSL's
    /// `cute.arch.cp_async_bulk_commit_group()`, also accepted under that name) and
    /// `tma_store_wait(n)` (`cp.async.bulk.wait_group.read n`; CuTe DSL's
    /// `cute.arch.cp_async_bulk_wait_group(n, read=True)`, accepted as
    /// `cp_async_bulk_wait_group(n, read: true)`; with `read: false` it also waits for the writes
    /// to global memory).
    pub(crate) fn bulk_group_call(&mut self, name: &str, args: &[Arg], span: Span) -> R<Value> {
        let op = match name {
            "tma_store_arrive" | "cp_async_bulk_commit_group" => {
                if !args.is_empty() {
                    return Err(Diagnostic::error(format!("`{name}` takes no arguments"), span, "wrong arguments")
                        .with_help(format!("write `{name}()`")));
                }
                kir::BulkGroupOp::Commit
            }
            _ => {
                let dsl = name == "cp_async_bulk_wait_group";
                let usage = if dsl { "cp_async_bulk_wait_group(n, read: true)" } else { "tma_store_wait(n)" };
                let positional: Vec<&Arg> = args.iter().filter(|a| a.name.is_none()).collect();
                let mut read = !dsl;
                for a in args.iter().filter(|a| a.name.is_some()) {
                    let key = a.name.as_ref().map(|n| n.name.as_str()).unwrap_or_default();
                    if !dsl || key != "read" {
                        let at = a.name.as_ref().map_or(a.value.span, |n| n.span);
                        let help = if key == "read" {
                            "`tma_store_wait(n)` waits for the reads of shared memory only; `cp_async_bulk_wait_group(n, read: false)` also waits for the writes to global memory".to_string()
                        } else {
                            format!("write `{usage}`")
                        };
                        return Err(Diagnostic::error(
                            format!("`{name}` has no argument named `{key}`"),
                            at,
                            "unknown argument name",
                        )
                        .with_help(help));
                    }
                    read = match self.expr(&a.value)? {
                        Value::Bool(b) => b,
                        other => {
                            return Err(Diagnostic::error(
                                format!(
                                    "`read:` must be a compile-time `true` or `false`, found {}",
                                    crate::diag::article(&other.kind())
                                ),
                                a.value.span,
                                "not a static bool",
                            ))
                        }
                    };
                }
                let [n_arg] = positional.as_slice() else {
                    return Err(Diagnostic::error(
                        format!("`{name}` takes 1 positional argument, the number of bulk groups left in flight"),
                        span,
                        "wrong arguments",
                    )
                    .with_help(format!("write `{usage}`")));
                };
                let n = match self.expr(&n_arg.value)? {
                    Value::Int(i) => i.as_static().filter(|v| (0..=63).contains(v)),
                    _ => None,
                };
                let Some(n) = n else {
                    return Err(Diagnostic::error(format!("`{name}`: the number of bulk groups left in flight must be a compile-time integer from 0 to 63"), n_arg.value.span, "not a static group count")
                        .with_help("`0` waits for every committed TMA store; `1` leaves the newest one running"));
                };
                kir::BulkGroupOp::Wait { n: n as u32, read }
            }
        };
        self.need_kernel(&format!("`{name}`"), span)?;
        self.emit(Inst::BulkGroup { op, span });
        Ok(Value::Unit)
    }

    /// The checks and the map a TMA copy needs, in either direction: `g` the kernel's global tensor
    /// parameter, `s` the shared box, `crd` the tile coordinate.
    fn tma_copy(&mut self, roles: &Roles, g_expr: &Expr, s_expr: &Expr, crd: &Arg) -> R<TmaCopy> {
        let builtin = roles.builtin;
        let (g, gid) = self.tma_global(roles, g_expr)?;
        let (s, within) = self.tma_shared(roles, s_expr)?;
        if s.ty.elem != g.ty.elem {
            return Err(Diagnostic::error(
                format!(
                    "`{builtin}`: the shared tensor holds {} but the global tensor {}",
                    s.ty.elem.name(),
                    g.ty.elem.name()
                ),
                s_expr.span,
                "element types differ",
            ));
        }
        let Origin::Kernel(sid) = s.origin else { unreachable!() };
        let order = map_order(builtin, &g, g_expr.span)?;
        let esize = i64::from(g.ty.elem.size_bytes());
        let box_dims = compact_box(roles, &s, &order, esize, s_expr.span)?;
        let swizzle_bytes = box_swizzle_bytes(builtin, &s, box_dims[order[0]] * esize, esize, s_expr.span)?;
        self.check_box_placement(roles, within, sid, swizzle_bytes, esize, s_expr.span)?;
        let coords = self.tile_coords(builtin, &crd.value, &order, &box_dims, crd.name.is_some())?;
        let store = roles.builtin == STORE.builtin;
        let desc = kir::TmaDesc { param: gid as usize, elem: g.ty.elem, order, box_dims, swizzle_bytes, store };
        let tma = self.tma_map(desc);
        Ok(TmaCopy { tma, smem: sid, smem_ty: s.ty, coords })
    }

    /// The global tensor of a TMA copy: a global tensor parameter of the kernel itself, and its value id.
    fn tma_global(&mut self, roles: &Roles, g_expr: &Expr) -> R<(TensorVal, ValueId)> {
        let Roles { builtin, global, crd_arg, .. } = *roles;
        let g = match self.expr(g_expr)? {
            Value::Tensor(t) => t,
            other => {
                return Err(Diagnostic::error(
                    format!(
                        "`{builtin}`: the {global} must be a global tensor parameter of the kernel, found {}",
                        crate::diag::article(&other.kind())
                    ),
                    g_expr.span,
                    "not a tensor",
                ))
            }
        };
        let Origin::Kernel(gid) = g.origin else { unreachable!("kernel tensors have kernel origins") };
        let is_param = self.kernel_params.contains(&gid);
        if !is_param || g.ty.space != MemSpace::Gmem {
            return Err(Diagnostic::error(format!("`{builtin}`: the {global} must be a global tensor parameter of the kernel itself (not a view or tile of one): the tensor map describes the whole tensor"), g_expr.span, "not a kernel tensor parameter")
                .with_help(format!("pass the parameter and give the tile's coordinate as the {crd_arg} argument")));
        }
        Ok((g, gid))
    }

    /// The shared box of a TMA copy, and for a slice of a shared tensor the allocation it slices and
    /// its offset into it.
    fn tma_shared(&mut self, roles: &Roles, s_expr: &Expr) -> R<(TensorVal, Option<(ValueId, Int)>)> {
        let Roles { builtin, shared, .. } = *roles;
        // The shared box: a shared tensor, or a slice `sA[_, _, stage]` of one (a stage of a
        // multi-stage ring), whose allocation and offset into it are kept for the alignment check.
        let not_shared = |v: &Value| {
            Diagnostic::error(
                format!(
                    "`{builtin}`: the {shared} must be a shared-memory tensor, found {}",
                    crate::diag::article(&v.kind())
                ),
                s_expr.span,
                "not a shared tensor",
            )
        };
        let (s, within) = match &s_expr.kind {
            ExprKind::Index { base, index } => {
                let t = match self.expr(base)? {
                    Value::Tensor(t) if t.ty.space == MemSpace::Smem => t,
                    other => return Err(not_shared(&other)),
                };
                let crd = self.coordinate(index)?;
                check_rank(&crd, &t.ty.layout, s_expr.span)?;
                if !crd_has_under(&crd) {
                    return Err(Diagnostic::error(
                        format!("`{builtin}`: the {shared} is one element, not a box"),
                        s_expr.span,
                        "an element, not a slice",
                    )
                    .with_help("slice the stage with `_` in the box's modes, as in `sA[_, _, stage]`"));
                }
                let (_, offset) = cute_layout::slice_and_offset(&crd, &t.ty.layout)
                    .map_err(|err| coord_err(err, &t.ty.layout, s_expr.span))?;
                let Origin::Kernel(base_id) = t.origin else { unreachable!("kernel tensors have kernel origins") };
                (self.slice(&t, &crd, s_expr.span)?, Some((base_id, offset)))
            }
            _ => match self.expr(s_expr)? {
                Value::Tensor(t) if t.ty.space == MemSpace::Smem => (t, None),
                other => return Err(not_shared(&other)),
            },
        };
        Ok((s, within))
    }

    /// Checks that the box is placed as TMA requires.
    fn check_box_placement(
        &self,
        roles: &Roles,
        within: Option<(ValueId, Int)>,
        sid: ValueId,
        swizzle_bytes: u32,
        esize: i64,
        span: Span,
    ) -> R<()> {
        let Roles { builtin, shared, .. } = *roles;
        // The destination: a shared allocation, or a slice of one at an offset that keeps the
        // alignment, aligned as TMA requires (128 bytes, and the swizzle's repeat, 8 rows of it:
        // 1024 bytes for 128B, which is also the swizzle's period, so the slice is swizzled as a
        // box of its own). Compiler-placed allocations are aligned to their swizzle's period;
        // `allocate_tensor`s at their offset.
        let need = u64::from(swizzle_bytes).max(16) * 8;
        let alloc_id = match &within {
            Some((base, offset)) => {
                let bytes = offset.divisibility().unsigned_abs().saturating_mul(esize as u64);
                if bytes % need != 0 {
                    return Err(Diagnostic::error(format!("`{builtin}`: the slice starts {} elements into its shared tensor, which is not known to be a multiple of {need} bytes (TMA{} needs {need}-byte aligned boxes)", offset, if swizzle_bytes > 0 { format!(" with a {swizzle_bytes}B swizzle") } else { String::new() }), span, "misaligned slice")
                        .with_help("slice whole stages of a buffer whose stage size is a multiple of that, as in `sA[_, _, stage]` of `tile_to_shape(atom, (R, C, STAGES))`"));
                }
                *base
            }
            None => sid,
        };
        // A whole allocation laid out again (`make_tensor(alloc, layout)`, the same memory from its
        // first byte) is placed where the allocation is.
        let alloc_id = self.relaid_allocation(alloc_id);
        let placed = self.specials.iter().chain(self.regions.iter().flatten()).find_map(|i| match i {
            Inst::Alloc { dst, ty, .. } if *dst == alloc_id => Some(kir::smem_alloc_align(ty)),
            Inst::LaunchSmem { dst, offset, .. } if *dst == alloc_id => {
                Some(if offset % need == 0 { need } else { offset & offset.wrapping_neg() })
            }
            _ => None,
        });
        match placed {
            Some(a) if a >= need => {}
            Some(a) => {
                return Err(Diagnostic::error(
                    format!(
                        "`{builtin}`: the shared tensor is {a}-byte aligned; TMA{} needs {need}",
                        if swizzle_bytes > 0 { format!(" with a {swizzle_bytes}B swizzle") } else { String::new() }
                    ),
                    span,
                    format!("misaligned {shared}"),
                )
                .with_help(format!("allocate it at an offset that is a multiple of {need}")));
            }
            None => {
                return Err(Diagnostic::error(format!("`{builtin}`: the {shared} must be a shared-memory allocation (`make_smem_tensor` or `smem.allocate_tensor`, or `make_tensor` of a whole one) or a slice `t[..., _, ...]` of one, not another view"), span, "not an allocation")
                    .with_help("allocate the stages as one tensor and pass a stage, as in `sA[_, _, stage]`"));
            }
        }
        Ok(())
    }

    /// The allocation `id` lays out again, where `id` is `make_tensor` of a whole allocation
    /// (through any number of such views); `id` itself otherwise.
    fn relaid_allocation(&self, id: ValueId) -> ValueId {
        let mut id = id;
        while !self.is_allocation(id) {
            let src = self.specials.iter().chain(self.regions.iter().flatten()).find_map(|i| match i {
                Inst::View { dst, src, how: kir::ViewHow::Algebra { op, .. }, .. }
                    if *dst == id && op == "make_view" =>
                {
                    Some(*src)
                }
                _ => None,
            });
            match src {
                Some(s) => id = s,
                None => break,
            }
        }
        id
    }

    /// The coordinate in the map's dimension order, in elements: a tile coordinate's entries times
    /// the box's extents (it counts boxes), an element coordinate's (`elements:`) as they are.
    fn tile_coords(
        &mut self,
        builtin: &str,
        crd_expr: &Expr,
        order: &[usize],
        box_dims: &[i64],
        elements: bool,
    ) -> R<Vec<Int>> {
        let rank = order.len();
        let what = if elements { "element coordinate" } else { "tile coordinate" };
        let crd = self.coordinate(std::slice::from_ref(crd_expr))?;
        let tile: Vec<Int> = match &crd {
            cute_layout::Crd::Tuple(items) if items.len() == rank => items
                .iter()
                .map(|c| match c {
                    cute_layout::Crd::Int(i) => Ok(i.clone()),
                    _ => Err(()),
                })
                .collect::<Result<_, _>>()
                .map_err(|_| {
                    Diagnostic::error(
                        format!("`{builtin}`: the {what} is a tuple of integers"),
                        crd_expr.span,
                        format!("not a {what}"),
                    )
                })?,
            _ => {
                return Err(Diagnostic::error(
                    format!("`{builtin}`: the {what} must have {rank} integers, one per mode of the global tensor"),
                    crd_expr.span,
                    "wrong coordinate",
                ))
            }
        };
        let mut coords = Vec::new();
        for &d in order {
            let c = tile[d]
                .mul(&Int::S(if elements { 1 } else { box_dims[d] }))
                .map_err(|e| Diagnostic::error(format!("`{builtin}`: {e}"), crd_expr.span, "bad coordinate"))?;
            coords.push(c);
        }
        Ok(coords)
    }

    /// The index of the kernel's tensor map `desc`, added unless the kernel has it.
    fn tma_map(&mut self, desc: kir::TmaDesc) -> usize {
        // One map per (tensor, box, swizzle): a load and a store of the same tile share it (the
        // encoding has no direction; the zero fill only applies to loads). A map any store
        // writes through is marked, for the runtime's 16-byte row check.
        match self.tmas.iter().position(|t| t.same_map(&desc)) {
            Some(i) => {
                self.tmas[i].store |= desc.store;
                i
            }
            None => {
                self.tmas.push(desc);
                self.tmas.len() - 1
            }
        }
    }
}

/// The order of the map's dimensions over the global tensor's modes: the modes must be flat (2 to
/// 5 of them), exactly one with static stride 1 (the map's dimension 0), and the tensor 16-byte
/// aligned.
fn map_order(builtin: &str, g: &TensorVal, g_span: Span) -> R<Vec<usize>> {
    // The global tensor's modes: flat, one of them with static stride 1 (the map's dimension 0).
    let gl = &g.ty.layout;
    let rank = gl.shape.rank();
    let flat = matches!(&gl.shape, IntTuple::Tuple(items) if items.iter().all(|i| matches!(i, IntTuple::Int(_))))
        || matches!(gl.shape, IntTuple::Int(_));
    let leaves = gl.leaves();
    let inner: Vec<usize> =
        leaves.iter().enumerate().filter(|(_, (_, st))| st.as_static() == Some(1)).map(|(i, _)| i).collect();
    if !flat || !(2..=5).contains(&rank) || inner.len() != 1 {
        return Err(Diagnostic::error(format!("`{builtin}`: the global tensor's layout {} must have 2 to 5 flat modes, exactly one of them with static stride 1", gl), g_span, "no tensor map for this layout")
            .with_help("type the parameter like `tensor<bf16, gmem, (?,?):(?,1), align: 16>`"));
    }
    if g.ty.align < 16 {
        return Err(Diagnostic::error(
            format!("`{builtin}`: the global tensor must be 16-byte aligned (`align: 16`), it is {}", g.ty.align),
            g_span,
            "alignment below 16",
        )
        .with_help("add `align: 16` to the parameter's type"));
    }
    let mut order = inner.clone();
    order.extend((0..rank).filter(|i| *i != inner[0]));
    Ok(order)
}

/// The box's extent in each of the global tensor's modes, checked to be the compact box TMA writes
/// or reads.
fn compact_box(roles: &Roles, s: &TensorVal, order: &[usize], esize: i64, s_span: Span) -> R<Vec<i64>> {
    let Roles { builtin, box_verb, .. } = *roles;
    let rank = order.len();
    // The box: the shared tensor's shape, static, laid out compactly with the map's dimension
    // 0 fastest (as TMA writes it).
    // Each mode is coalesced first: a stage of `tile_to_shape(atom, (R, C, STAGES))` has modes
    // like `(8,16):(64,512)`, which is the box extent 128 at stride 64.
    let sl = &s.ty.layout;
    let box_modes: Option<Vec<(i64, i64)>> = if sl.shape.rank() == rank {
        sl.modes()
            .iter()
            .map(|m| {
                let c = cute_layout::coalesce(m).ok()?;
                match c.leaves().as_slice() {
                    [(sh, st)] => Some((sh.as_static()?, if sh.is(1) { 0 } else { st.as_static()? })),
                    _ => None,
                }
            })
            .collect()
    } else {
        None
    };
    let Some(box_modes) = box_modes.filter(|b| b.len() == rank) else {
        return Err(Diagnostic::error(format!("`{builtin}`: the shared tensor's layout {} must have the global tensor's {rank} modes, each one static extent at one stride (the box)", sl), s_span, "not a box"));
    };
    let box_dims: Vec<i64> = box_modes.iter().map(|m| m.0).collect();
    let mut stride = 1i64;
    let mut want = vec![0i64; rank];
    for &d in order {
        want[d] = stride;
        stride *= box_dims[d];
    }
    // A mode of extent 1 has no stride to check.
    if box_modes.iter().zip(&want).any(|((e, st), w)| *e != 1 && st != w)
        || box_dims.iter().any(|b| !(1..=256).contains(b))
        || (box_dims[order[0]] * esize) % 16 != 0
    {
        return Err(Diagnostic::error(format!("`{builtin}`: the shared tensor's layout {} is not the compact box TMA {box_verb}: expected strides {:?} (the global tensor's stride-1 mode fastest), extents 1 to 256, the inner extent a multiple of 16 bytes", sl, want), s_span, "not a TMA box")
            .with_help("allocate it like `make_smem_tensor(bf16, make_layout((64, 64), stride: (64, 1)))`"));
    }
    Ok(box_dims)
}

/// The bytes of the TMA swizzle the box's swizzle is (0 for none); `inner_bytes` is the box's
/// extent in the map's dimension 0, in bytes.
fn box_swizzle_bytes(builtin: &str, s: &TensorVal, inner_bytes: i64, esize: i64, s_span: Span) -> R<u32> {
    Ok(match s.ty.swizzle {
        None => 0,
        Some(sw) => {
            // On byte addresses TMA's swizzles are Swizzle<1|2|3, 4, 3> (32, 64, 128 bytes).
            let m_bytes = i64::from(sw.base) + esize.trailing_zeros() as i64;
            let bytes: u32 = match sw.bits {
                1 => 32,
                2 => 64,
                3 => 128,
                _ => 0,
            };
            if m_bytes != 4 || sw.shift != 3 || bytes == 0 || inner_bytes > i64::from(bytes) {
                return Err(Diagnostic::error(format!("`{builtin}`: the swizzle {sw} of the shared tensor is not one TMA applies (on byte addresses Swizzle<3,4,3> = 128B, <2,4,3> = 64B, <1,4,3> = 32B, with the inner box extent at most that many bytes; here {inner_bytes} bytes)"), s_span, "not a TMA swizzle")
                    .with_help("for 16-bit elements use `composition(make_swizzle(3, 3, 3), make_layout((R, 64), stride: (64, 1)))`"));
            }
            bytes
        }
    })
}

/// A TMA copy's coordinate argument: positional (a tile coordinate) or `elements:`.
fn coordinate_arg(a: &Arg) -> bool {
    a.name.as_ref().is_none_or(|n| n.name == "elements")
}
