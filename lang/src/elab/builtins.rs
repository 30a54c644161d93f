//! The builtin functions and methods: the layout algebra, tensor views, fragments, printing.
//!
//! Layout operations accept a layout or a tensor; on a tensor they act on its layout and give a view
//! of the same memory (CuTe's `zipped_divide(mA, tiler)` and friends).

use super::value::{Origin, TensorVal, Value};
use super::{is_static_value, layout_err, Frame, R};
use crate::ast::BinOp;
use crate::diag::{did_you_mean, Diagnostic};
use crate::kir::{BinaryOp, CopyOp, FmtSeg, FragTy, Inst, MathFn, Operand, ShuffleKind, TensorTy, ValueTy, ViewHow};
use crate::span::Span;
use crate::types::MemSpace;
use crate::types::Scalar;
use cute_layout::expr::{self, Value as XValue};
use cute_layout::{Int, IntTuple, Layout, Tiler};

pub struct Arg {
    pub name: Option<String>,
    pub name_span: Option<Span>,
    pub value: Value,
    pub span: Span,
}

/// Every builtin function, for "did you mean" help.
pub(crate) const FUNCTIONS: &[&str] = &[
    "size",
    "cosize",
    "rank",
    "depth",
    "make_layout",
    "make_ordered_layout",
    "make_layout_tv",
    "make_tensor",
    "composition",
    "complement",
    "right_inverse",
    "left_inverse",
    "coalesce",
    "filter",
    "logical_divide",
    "zipped_divide",
    "tiled_divide",
    "flat_divide",
    "logical_product",
    "zipped_product",
    "tiled_product",
    "flat_product",
    "blocked_product",
    "raked_product",
    "select",
    "group_modes",
    "flatten",
    "get",
    "local_tile",
    "local_partition",
    "print",
    "printf",
    "sync_threads",
    "min",
    "max",
    "make_identity_tensor",
    "where",
    "make_rmem_tensor",
    "make_rmem_tensor_like",
    "make_fragment",
    "make_fragment_like",
    "make_smem_tensor",
    "smem_allocator",
    "basic_copy",
    "autovec_copy",
    "copy",
    "make_copy_atom",
    "make_tiled_copy",
    "make_tiled_copy_tv",
    "print_tensor",
    "ceil_div",
    "lane_idx",
    "warp_idx",
    "shuffle_xor",
    "shuffle_down",
    "shuffle_up",
    "shuffle_idx",
    "warp_reduce",
    "warp_reduction_sum",
    "warp_reduction_max",
    "full_like",
    "zeros_like",
    "sqrt",
    "rsqrt",
    "exp",
    "exp2",
    "log",
    "log2",
    "log10",
    "sin",
    "cos",
    "tan",
    "tanh",
    "erf",
    "floor",
    "ceil",
    "round",
    "abs",
    "make_mma_atom",
    "make_tiled_mma",
    "gemm",
    "cp_async_commit_group",
    "cp_async_wait_group",
    "make_tiled_copy_A",
    "make_tiled_copy_B",
    "make_tiled_copy_C",
    "assert",
    "make_swizzle",
    "make_composed_layout",
    "tile_to_shape",
    "copy_if",
    "elem_less",
    "crd2idx",
    "idx2crd",
    "take",
    "dice",
    "filter_zeros",
    "max_common_vector",
    "max_common_layout",
    "recast_layout",
    "recast",
    "recast_tensor",
    "sizeof",
    "warpgroup_fence",
    "warpgroup_commit_group",
    "warpgroup_wait_group",
    "fence_proxy_async",
    "mbarrier_init",
    "mbarrier_init_fence",
    "mbarrier_arrive",
    "mbarrier_arrive_and_expect_tx",
    "mbarrier_wait",
    "tma_load",
    "tma_store",
    "tma_store_fence",
    "tma_store_arrive",
    "tma_store_wait",
    "cp_async_bulk_commit_group",
    "cp_async_bulk_wait_group",
    "warpgroup_reg_alloc",
    "warpgroup_reg_dealloc",
    "barrier",
    "barrier_arrive",
    // Thread-block clusters (cluster.rs).
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

/// Binary operators that can be passed as functions (`reduce(add, ...)`, `const op: fn(...)`).
pub fn is_operator(name: &str) -> bool {
    matches!(name, "add" | "sub" | "mul" | "div" | "max" | "min")
}

pub fn operator(f: &mut Frame, name: &str, a: Value, b: Value, span: Span) -> R<Value> {
    match name {
        "add" => f.binary(BinOp::Add, a, b, span, span, span),
        "sub" => f.binary(BinOp::Sub, a, b, span, span, span),
        "mul" => f.binary(BinOp::Mul, a, b, span, span, span),
        "div" => f.binary(BinOp::Div, a, b, span, span, span),
        _ => min_max(f, name == "max", a, b, span),
    }
}

fn min_max(f: &mut Frame, is_max: bool, a: Value, b: Value, span: Span) -> R<Value> {
    if let (Value::Int(x), Value::Int(y)) = (&a, &b) {
        if let (Some(p), Some(q)) = (x.as_static(), y.as_static()) {
            return Ok(Value::Int(Int::S(if is_max { p.max(q) } else { p.min(q) })));
        }
        return Ok(Value::Int(if is_max { x.maximum(y) } else { x.minimum(y) }));
    }
    let ty = match (&a, &b) {
        (Value::Scalar(s, _), _) | (_, Value::Scalar(s, _)) => *s,
        (Value::Frag(fr, _), _) | (_, Value::Frag(fr, _)) => fr.elem,
        _ => Scalar::I32,
    };
    f.need_kernel("run-time arithmetic", span)?;
    f.no_fp8_arith(ty, if is_max { "`max`" } else { "`min`" }, span)?;
    let frag = match (&a, &b) {
        (Value::Frag(fr, _), _) | (_, Value::Frag(fr, _)) => Some(fr.len()),
        _ => None,
    };
    let like = if matches!(a, Value::Frag(..)) { a.clone() } else { b.clone() };
    let x = frag_or_operand(f, &a, ty, span)?;
    let y = frag_or_operand(f, &b, ty, span)?;
    let dst = f.fresh(f.result_ty(ty, frag, &like));
    f.emit(Inst::Binary { dst, op: if is_max { BinaryOp::Max } else { BinaryOp::Min }, ty, frag, a: x, b: y, span });
    Ok(f.result_value(ty, frag, &like, dst))
}

fn frag_or_operand(f: &mut Frame, v: &Value, ty: Scalar, span: Span) -> R<Operand> {
    match v {
        Value::Frag(_, id) => Ok(Operand::Value(*id)),
        v => f.operand(v, ty, span),
    }
}

pub(super) fn arity(name: &str, args: &[Arg], min: usize, max: usize, span: Span, usage: &str) -> R<()> {
    let positional = args.iter().filter(|a| a.name.is_none()).count();
    if positional < min || positional > max {
        let want = if min == max { crate::diag::count(min, "argument") } else { format!("{min} to {max} arguments") };
        return Err(Diagnostic::error(
            format!("`{name}` takes {want}, found {positional}"),
            span,
            "wrong number of arguments",
        )
        .with_help(format!("write `{usage}`")));
    }
    Ok(())
}

pub(super) fn named<'a>(name: &str, args: &'a [Arg], key: &str, allowed: &[&str]) -> R<Option<&'a Arg>> {
    for a in args {
        if let Some(n) = &a.name {
            if !allowed.contains(&n.as_str()) {
                let mut d = Diagnostic::error(
                    format!("`{name}` has no argument named `{n}`"),
                    a.name_span.unwrap_or(a.span),
                    "unknown argument name",
                );
                d = match did_you_mean(n, allowed.iter().copied()) {
                    Some(s) => d.with_help(format!("did you mean `{s}`?")),
                    None if allowed.is_empty() => d.with_help(format!("`{name}` takes no named arguments")),
                    None => d.with_help(format!(
                        "the named arguments are {}",
                        allowed.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ")
                    )),
                };
                return Err(d);
            }
        }
    }
    Ok(args.iter().find(|a| a.name.as_deref() == Some(key)))
}

pub(super) fn positional(args: &[Arg]) -> Vec<&Arg> {
    args.iter().filter(|a| a.name.is_none()).collect()
}

fn int_tuple(a: &Arg, what: &str) -> R<IntTuple> {
    a.value.to_int_tuple().ok_or_else(|| {
        Diagnostic::error(
            format!(
                "expected {what} (integers or tuples of integers), found {}",
                crate::diag::article(&a.value.kind())
            ),
            a.span,
            format!("not {what}"),
        )
    })
}

/// An element width in bits: a type (`f16` is 16) or a static positive integer (CuTe DSL's
/// `recast_layout(new_type_bits, old_type_bits, layout)`).
fn type_bits(a: &Arg) -> R<i64> {
    match &a.value {
        Value::Type(t) => Ok(8 * i64::from(t.size_bytes())),
        Value::Int(i) => i.as_static().filter(|b| *b > 0).ok_or_else(|| {
            Diagnostic::error("an element width in bits must be a positive compile-time integer", a.span, "not a width")
        }),
        other => Err(Diagnostic::error(
            format!("expected an element type or a width in bits, found {}", crate::diag::article(&other.kind())),
            a.span,
            "not a type",
        )
        .with_help("write a type such as `u32`, or its width in bits")),
    }
}

fn static_usize(a: &Arg, what: &str) -> R<usize> {
    match &a.value {
        Value::Int(i) => i.as_static().filter(|v| *v >= 0).map(|v| v as usize).ok_or_else(|| {
            Diagnostic::error(format!("{what} must be a non-negative compile-time integer"), a.span, "not static")
        }),
        other => Err(Diagnostic::error(
            format!("{what} must be an integer, found {}", crate::diag::article(&other.kind())),
            a.span,
            "not an integer",
        )),
    }
}

/// The layout of a layout or tensor argument.
fn layout_of(a: &Arg) -> R<Layout> {
    match &a.value {
        Value::Layout(l) => Ok(l.clone()),
        Value::Tensor(t) => Ok(t.ty.layout.clone()),
        Value::Counting { layout, .. } => Ok(layout.clone()),
        Value::Int(i) => Ok(Layout::leaf(i.clone(), 1)),
        Value::Tuple(_) => {
            let shape =
                a.value.to_int_tuple().ok_or_else(|| Diagnostic::error("expected a layout", a.span, "not a layout"))?;
            Layout::col_major(shape).map_err(|e| layout_err(e, a.span))
        }
        other => Err(Diagnostic::error(
            format!("expected a layout or a tensor, found {}", crate::diag::article(&other.kind())),
            a.span,
            "not a layout",
        )),
    }
}

/// A tiler: a layout, a shape, or a tuple of layouts/extents/`_`.
fn tiler_of(v: &Value, span: Span) -> R<Tiler> {
    Ok(match v {
        Value::Layout(l) => Tiler::Layout(l.clone()),
        Value::Int(i) => Tiler::Shape(IntTuple::Int(i.clone())),
        Value::Under => Tiler::Skip,
        Value::Tuple(items) => match v.to_int_tuple() {
            Some(shape) => Tiler::Shape(shape),
            None => Tiler::Tuple(items.iter().map(|i| tiler_of(i, span)).collect::<R<_>>()?),
        },
        other => {
            return Err(Diagnostic::error(
                format!(
                    "expected a tiler (a layout, a shape, or a tuple of them), found {}",
                    crate::diag::article(&other.kind())
                ),
                span,
                "not a tiler",
            ))
        }
    })
}

/// The result of a layout operation on the first argument: a layout, or a view when it was a tensor.
fn rewrap(f: &mut Frame, first: &Arg, layout: Layout, offset: Int, how: ViewHow, span: Span) -> R<Value> {
    Ok(match &first.value {
        Value::Tensor(t) => Value::Tensor(f.view(t, layout, offset, how, span)?),
        Value::Counting { origin, .. } => {
            Value::Counting { layout, origin: origin.add(&offset).map_err(|e| layout_err(e, span))? }
        }
        _ => Value::Layout(layout),
    })
}

/// Static mode indices as arguments of an algebra op.
fn index_values(ix: &[usize]) -> Vec<XValue> {
    ix.iter().map(|&i| XValue::Int(Int::S(i as i64))).collect()
}

fn modes_list(a: &Arg) -> R<Vec<usize>> {
    match &a.value {
        Value::Int(_) => Ok(vec![static_usize(a, "a mode")?]),
        Value::Tuple(items) => items
            .iter()
            .map(|v| static_usize(&Arg { name: None, name_span: None, value: v.clone(), span: a.span }, "a mode"))
            .collect(),
        other => Err(Diagnostic::error(
            format!("expected mode indices, found {}", crate::diag::article(&other.kind())),
            a.span,
            "not modes",
        )),
    }
}

pub fn call(f: &mut Frame, name: &str, name_span: Span, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    match name {
        // C++'s `sizeof(T)`: the bytes of an element type, or of a tensor's or fragment's elements.
        "sizeof" => {
            arity(name, &args, 1, 1, span, "sizeof(T)")?;
            named(name, &args, "", &[])?;
            let a = positional(&args)[0];
            let t = match &a.value {
                Value::Type(t) => *t,
                Value::Tensor(t) => t.ty.elem,
                Value::Frag(fr, _) => fr.elem,
                other => {
                    return Err(Diagnostic::error(
                        format!("`sizeof` takes an element type, found {}", crate::diag::article(&other.kind())),
                        a.span,
                        "not a type",
                    )
                    .with_help("write `sizeof(T)` with a type (`f16`, a type parameter, `x.element_type`)"))
                }
            };
            Ok(Value::Int(Int::S(i64::from(t.size_bytes()))))
        }
        "size" | "cosize" | "rank" | "depth" => {
            arity(name, &args, 1, 1, span, &format!("{name}(x)"))?;
            let mode = named(name, &args, "mode", &["mode"])?;
            let mut l = match &positional(&args)[0].value {
                Value::Frag(ft, _) => Layout::col_major(ft.shape.clone()).map_err(lerr)?,
                // CuTe's size(tiled_mma): its threads.
                Value::TiledMma(t) if name == "size" && mode.is_none() => return Ok(Value::Int(Int::S(t.threads()))),
                // A swizzled layout's size, cosize, rank and depth are its inner layout's (CuTe's).
                Value::Composed(c) => c.layout.clone(),
                _ => layout_of(positional(&args)[0])?,
            };
            if let Some(m) = mode {
                let path = modes_list(m)?;
                l = l.get(&path).map_err(lerr)?;
            }
            Ok(Value::Int(match name {
                "size" => l.size().map_err(lerr)?,
                "cosize" => l.cosize().map_err(lerr)?,
                "rank" => Int::S(l.rank() as i64),
                _ => Int::S(l.depth() as i64),
            }))
        }
        "make_layout" => {
            arity(name, &args, 1, 1, span, "make_layout(shape, stride: stride)")?;
            let shape = int_tuple(positional(&args)[0], "a shape")?;
            match named(name, &args, "stride", &["stride"])? {
                Some(s) => {
                    let stride = int_tuple(s, "a stride")?;
                    Layout::new(shape, stride).map(Value::Layout).map_err(|e| layout_err(e, s.span))
                }
                None => Layout::col_major(shape).map(Value::Layout).map_err(lerr),
            }
        }
        "make_ordered_layout" => {
            arity(name, &args, 1, 1, span, "make_ordered_layout(shape, order: order)")?;
            let shape = int_tuple(positional(&args)[0], "a shape")?;
            let order = named(name, &args, "order", &["order"])?
                .ok_or_else(|| Diagnostic::error("`make_ordered_layout` needs `order:`", span, "missing order"))?;
            Layout::ordered(shape, &int_tuple(order, "an order")?).map(Value::Layout).map_err(lerr)
        }
        "make_layout_tv" => {
            arity(name, &args, 2, 2, span, "make_layout_tv(thr_layout, val_layout)")?;
            named(name, &args, "", &[])?;
            let p = positional(&args);
            let (tiler, tv) = cute_layout::make_layout_tv(&layout_of(p[0])?, &layout_of(p[1])?).map_err(lerr)?;
            Ok(Value::Tuple(vec![Value::from_int_tuple(&tiler), Value::Layout(tv)]))
        }
        "make_identity_tensor" => {
            arity(name, &args, 1, 1, span, "make_identity_tensor(shape)")?;
            let shape = int_tuple(positional(&args)[0], "a shape")?;
            Ok(Value::Counting { layout: Layout::identity(shape).map_err(lerr)?, origin: Int::ZERO })
        }
        "make_tensor" => {
            arity(name, &args, 2, 2, span, "make_tensor(tensor, layout)")?;
            let p = positional(&args);
            let Value::Tensor(t) = &p[0].value else {
                return Err(Diagnostic::error(
                    format!(
                        "`make_tensor` takes the tensor whose memory to view, found {}",
                        crate::diag::article(&p[0].value.kind())
                    ),
                    p[0].span,
                    "not a tensor",
                ));
            };
            if let Value::Composed(c) = &p[1].value {
                return super::swizzle::make_tensor(f, t, c, span);
            }
            let l = layout_of(p[1])?;
            let t = t.clone();
            // A view must stay inside the memory it views (a larger layout over shared memory or
            // registers would reach past the allocation).
            let cosize = |l: &Layout| l.cosize().ok().and_then(|c| c.as_static());
            if let (Some(have), Some(want)) = (cosize(&t.ty.layout), cosize(&l)) {
                if want > have {
                    return Err(Diagnostic::error(
                        format!("the layout {l} reaches {want} elements but the tensor's memory holds {have}"),
                        p[1].span,
                        "too large for the memory",
                    )
                    .with_secondary(p[0].span, format!("layout {}", t.ty.layout)));
                }
            }
            let how = ViewHow::algebra("make_view", vec![XValue::Layout(l.clone())]);
            // A plain layout lays the memory out again: a swizzle the tensor had is gone (CuTe's
            // `make_tensor(t.iterator, layout)`).
            Ok(Value::Tensor(f.view_with(&t, l, Int::ZERO, how, None, span)?))
        }
        "composition" => {
            arity(name, &args, 2, 2, span, "composition(a, b)")?;
            let p = positional(&args);
            if let Some(r) = super::swizzle::composition(&p, span) {
                return r;
            }
            let a = layout_of(p[0])?;
            let (r, arg) = match &p[1].value {
                Value::Layout(b) => (cute_layout::composition(&a, b), XValue::Layout(b.clone())),
                v => {
                    let t = tiler_of(v, p[1].span)?;
                    (cute_layout::composition_tiler(&a, &t), expr::tiler_to_value(&t))
                }
            };
            rewrap(f, p[0], r.map_err(lerr)?, Int::ZERO, ViewHow::algebra("composition", vec![arg]), span)
        }
        "complement" => {
            arity(name, &args, 1, 2, span, "complement(layout, cotarget)")?;
            let p = positional(&args);
            let l = layout_of(p[0])?;
            let r = match p.get(1) {
                Some(n) => match &n.value {
                    Value::Int(i) => cute_layout::complement(&l, i),
                    other => {
                        return Err(Diagnostic::error(
                            format!("the cotarget is an integer, not {}", crate::diag::article(&other.kind())),
                            n.span,
                            "not an integer",
                        ))
                    }
                },
                None => cute_layout::complement_default(&l),
            };
            r.map(Value::Layout).map_err(lerr)
        }
        "right_inverse" | "left_inverse" | "flatten" | "filter" => {
            arity(name, &args, 1, 1, span, &format!("{name}(layout)"))?;
            let p = positional(&args);
            let l = layout_of(p[0])?;
            let r = match name {
                "right_inverse" => cute_layout::right_inverse(&l),
                "left_inverse" => cute_layout::left_inverse(&l),
                "filter" => cute_layout::filter(&l),
                _ => Ok(l.flatten()),
            }
            .map_err(lerr)?;
            Ok(if name == "flatten" {
                rewrap(f, p[0], r, Int::ZERO, ViewHow::algebra("flatten", vec![]), span)?
            } else {
                Value::Layout(r)
            })
        }
        "coalesce" => {
            arity(name, &args, 1, 2, span, "coalesce(layout[, profile])")?;
            let p = positional(&args);
            let l = layout_of(p[0])?;
            let (r, args) = match p.get(1) {
                Some(prof) => {
                    let prof = int_tuple(prof, "a profile")?;
                    (cute_layout::coalesce_by(&l, &prof), vec![expr::int_tuple_value(&prof)])
                }
                None => (cute_layout::coalesce(&l), vec![]),
            };
            rewrap(f, p[0], r.map_err(lerr)?, Int::ZERO, ViewHow::algebra("coalesce", args), span)
        }
        "logical_divide" | "zipped_divide" | "tiled_divide" | "flat_divide" | "logical_product" | "zipped_product"
        | "tiled_product" | "flat_product" => {
            arity(name, &args, 2, 2, span, &format!("{name}(x, tiler)"))?;
            let p = positional(&args);
            let a = layout_of(p[0])?;
            let t = tiler_of(&p[1].value, p[1].span)?;
            let r = match name {
                "logical_divide" => cute_layout::logical_divide(&a, &t),
                "zipped_divide" => cute_layout::zipped_divide(&a, &t),
                "tiled_divide" => cute_layout::tiled_divide(&a, &t),
                "flat_divide" => cute_layout::flat_divide(&a, &t),
                "logical_product" => cute_layout::logical_product(&a, &t),
                "zipped_product" => cute_layout::zipped_product(&a, &t),
                "tiled_product" => cute_layout::tiled_product(&a, &t),
                _ => cute_layout::flat_product(&a, &t),
            }
            .map_err(lerr)?;
            rewrap(f, p[0], r, Int::ZERO, ViewHow::algebra(name, vec![expr::tiler_to_value(&t)]), span)
        }
        "blocked_product" | "raked_product" => {
            arity(name, &args, 2, 2, span, &format!("{name}(a, b)"))?;
            let p = positional(&args);
            let (a, b) = (layout_of(p[0])?, layout_of(p[1])?);
            let r = if name == "blocked_product" {
                cute_layout::blocked_product(&a, &b)
            } else {
                cute_layout::raked_product(&a, &b)
            }
            .map_err(lerr)?;
            Ok(Value::Layout(r))
        }
        "select" => {
            arity(name, &args, 2, 2, span, "select(x, modes)")?;
            let p = positional(&args);
            let modes = modes_list(p[1])?;
            let r = layout_of(p[0])?.select(&modes).map_err(lerr)?;
            rewrap(f, p[0], r, Int::ZERO, ViewHow::algebra("select", index_values(&modes)), span)
        }
        "get" => {
            arity(name, &args, 2, 2, span, "get(x, mode)")?;
            let p = positional(&args);
            let path = modes_list(p[1])?;
            let r = layout_of(p[0])?.get(&path).map_err(lerr)?;
            rewrap(f, p[0], r, Int::ZERO, ViewHow::algebra("get", index_values(&path)), span)
        }
        "group_modes" => {
            arity(name, &args, 3, 3, span, "group_modes(x, begin, end)")?;
            let p = positional(&args);
            let (b, e) = (static_usize(p[1], "`begin`")?, static_usize(p[2], "`end`")?);
            let r = layout_of(p[0])?.group_modes(b, e).map_err(lerr)?;
            rewrap(f, p[0], r, Int::ZERO, ViewHow::algebra("group_modes", index_values(&[b, e])), span)
        }
        "local_tile" => {
            arity(name, &args, 3, 3, span, "local_tile(tensor, tiler, coord)")?;
            let p = positional(&args);
            let l = layout_of(p[0])?;
            let t = tiler_of(&p[1].value, p[1].span)?;
            let crd = value_crd(&p[2].value, p[2].span)?;
            // The tiles of a tensor must cover its memory exactly, though the slice keeps only one of
            // them. A counting tensor reads no memory: its partial tiles are what predication uses.
            if matches!(p[0].value, Value::Tensor(_)) {
                f.require_tiles_divide(&l, &t, span)?;
            }
            let (r, off) = cute_layout::local_tile(&l, &t, &crd).map_err(lerr)?;
            let how = ViewHow::algebra("local_tile", vec![expr::tiler_to_value(&t), expr::crd_value(&crd)]);
            rewrap(f, p[0], r, off, how, span)
        }
        "local_partition" => {
            arity(name, &args, 3, 3, span, "local_partition(tensor, thread_layout, thread_index)")?;
            let p = positional(&args);
            let l = layout_of(p[0])?;
            let thr = layout_of(p[1])?;
            let Value::Int(idx) = &p[2].value else {
                return Err(Diagnostic::error("the thread index must be an integer", p[2].span, "not an integer"));
            };
            let tiler = Tiler::Shape(thr.shape.product_each().map_err(lerr)?);
            if matches!(p[0].value, Value::Tensor(_)) {
                f.require_tiles_divide(&l, &tiler, span)?;
            }
            let (r, off) = cute_layout::local_partition(&l, &thr, idx).map_err(lerr)?;
            let how = ViewHow::algebra("local_partition", vec![XValue::Layout(thr.clone()), XValue::Int(idx.clone())]);
            rewrap(f, p[0], r, off, how, span)
        }
        "min" | "max" => {
            arity(name, &args, 2, 2, span, &format!("{name}(a, b)"))?;
            let mut it = args.into_iter();
            let (a, b) =
                (it.next().map(|a| a.value).unwrap_or(Value::Unit), it.next().map(|a| a.value).unwrap_or(Value::Unit));
            min_max(f, name == "max", a, b, span)
        }
        "where" => {
            arity(name, &args, 3, 3, span, "where(condition, a, b)")?;
            where_(f, &args, span)
        }
        "make_rmem_tensor" | "make_fragment" => {
            arity(name, &args, 2, 2, span, &format!("{name}(shape, element_type)"))?;
            let p = positional(&args);
            let shape = int_tuple(p[0], "a shape")?;
            let Value::Type(elem) = p[1].value else {
                return Err(Diagnostic::error(
                    format!("the element type must be a type, found {}", crate::diag::article(&p[1].value.kind())),
                    p[1].span,
                    "not a type",
                ));
            };
            alloc(f, elem, MemSpace::Rmem, Layout::col_major(shape).map_err(lerr)?, span)
        }
        "make_rmem_tensor_like" | "make_fragment_like" => {
            arity(name, &args, 1, 2, span, &format!("{name}(tensor[, element_type])"))?;
            let p = positional(&args);
            let (shape, elem) = match &p[0].value {
                Value::Tensor(t) => (t.ty.layout.shape.clone(), t.ty.elem),
                Value::Frag(ft, _) => (ft.shape.clone(), ft.elem),
                other => {
                    return Err(Diagnostic::error(
                        format!("`{name}` takes a tensor or fragment, found {}", crate::diag::article(&other.kind())),
                        p[0].span,
                        "not a tensor",
                    ))
                }
            };
            let elem = match p.get(1).map(|a| &a.value) {
                Some(Value::Type(t)) => *t,
                Some(other) => {
                    return Err(Diagnostic::error(
                        format!("the element type must be a type, found {}", crate::diag::article(&other.kind())),
                        p[1].span,
                        "not a type",
                    ))
                }
                None => elem,
            };
            alloc(f, elem, MemSpace::Rmem, Layout::col_major(shape).map_err(lerr)?, span)
        }
        "make_smem_tensor" => {
            arity(name, &args, 2, 2, span, "make_smem_tensor(element_type, layout)")?;
            let p = positional(&args);
            let Value::Type(elem) = p[0].value else {
                return Err(Diagnostic::error(
                    format!("the element type must be a type, found {}", crate::diag::article(&p[0].value.kind())),
                    p[0].span,
                    "not a type",
                ));
            };
            if let Value::Composed(c) = &p[1].value {
                return super::swizzle::make_smem_tensor(f, elem, c, span);
            }
            alloc(f, elem, MemSpace::Smem, layout_of(p[1])?, span)
        }
        "smem_allocator" => super::smem::smem_allocator(f, &args, span),
        "crd2idx" => {
            arity(name, &args, 2, 3, span, "crd2idx(coord, shape[, stride]) or crd2idx(coord, layout)")?;
            named(name, &args, "", &[])?;
            let p = positional(&args);
            let crd = int_tuple(p[0], "a coordinate")?;
            let (shape, stride) = match (&p[1].value, p.get(2)) {
                (Value::Layout(_) | Value::Tensor(_), Some(extra)) => {
                    return Err(Diagnostic::error(
                        "`crd2idx` of a layout takes no stride: the layout has its own",
                        extra.span,
                        "extra stride",
                    )
                    .with_help("write `crd2idx(coord, layout)` or `crd2idx(coord, shape, stride)`"));
                }
                (Value::Layout(_) | Value::Tensor(_), None) => {
                    let l = layout_of(p[1])?;
                    l.no_basis("crd2idx").map_err(|e| layout_err(e, p[1].span))?;
                    (l.shape, l.stride)
                }
                _ => {
                    let shape = int_tuple(p[1], "a shape")?;
                    let stride = match p.get(2) {
                        Some(d) => int_tuple(d, "a stride")?,
                        None => Layout::col_major(shape.clone()).map_err(|e| layout_err(e, p[1].span))?.stride,
                    };
                    (shape, stride)
                }
            };
            cute_layout::crd2idx(&crd, &shape, &stride).map(Value::Int).map_err(lerr)
        }
        "idx2crd" => {
            arity(name, &args, 2, 3, span, "idx2crd(index, shape[, stride])")?;
            named(name, &args, "", &[])?;
            let p = positional(&args);
            let idx = int_tuple(p[0], "an index")?;
            let shape = int_tuple(p[1], "a shape")?;
            let r = match p.get(2) {
                Some(d) => cute_layout::idx2crd_strided(&idx, &shape, &int_tuple(d, "a stride")?),
                None => cute_layout::idx2crd(&idx, &shape),
            };
            Ok(Value::from_int_tuple(&r.map_err(lerr)?))
        }
        "take" => {
            arity(name, &args, 3, 3, span, "take(x, begin, end)")?;
            let p = positional(&args);
            let (b, e) = (static_usize(p[1], "`begin`")?, static_usize(p[2], "`end`")?);
            let r = layout_of(p[0])?.take(b, e).map_err(lerr)?;
            // CuTe's take<B,E> is select<B, ..., E-1>: the same view op.
            rewrap(f, p[0], r, Int::ZERO, ViewHow::algebra("select", index_values(&(b..e).collect::<Vec<_>>())), span)
        }
        "dice" => {
            arity(name, &args, 2, 2, span, "dice(x, coord)")?;
            let p = positional(&args);
            let crd = value_crd(&p[1].value, p[1].span)?;
            match &p[0].value {
                Value::Int(_) | Value::Tuple(_) => {
                    let t = int_tuple(p[0], "a shape")?;
                    Ok(Value::from_int_tuple(&cute_layout::dice_tuple(&crd, &t).map_err(lerr)?))
                }
                _ => cute_layout::dice(&crd, &layout_of(p[0])?).map(Value::Layout).map_err(lerr),
            }
        }
        "filter_zeros" => {
            arity(name, &args, 1, 1, span, "filter_zeros(x)")?;
            let p = positional(&args);
            let r = cute_layout::filter_zeros(&layout_of(p[0])?).map_err(lerr)?;
            // On a tensor, the same memory seen through the filtered layout (CuTe's
            // `filter_zeros(tensor)`): its broadcast modes read one element.
            rewrap(f, p[0], r.clone(), Int::ZERO, ViewHow::algebra("make_view", vec![XValue::Layout(r)]), span)
        }
        "max_common_vector" | "max_common_layout" => {
            arity(name, &args, 2, 2, span, &format!("{name}(a, b)"))?;
            let p = positional(&args);
            let (a, b) = (layout_of(p[0])?, layout_of(p[1])?);
            if name == "max_common_vector" {
                cute_layout::max_common_vector(&a, &b).map(Value::Int).map_err(lerr)
            } else {
                cute_layout::max_common_layout(&a, &b).map(Value::Layout).map_err(lerr)
            }
        }
        "recast_layout" => {
            arity(name, &args, 3, 3, span, "recast_layout(new_type, old_type, layout)")?;
            let p = positional(&args);
            let (new_bits, old_bits) = (type_bits(p[0])?, type_bits(p[1])?);
            cute_layout::recast_layout(new_bits, old_bits, &layout_of(p[2])?).map(Value::Layout).map_err(lerr)
        }
        "recast" | "recast_tensor" => super::recast::recast(f, name, &args, span),
        "make_swizzle" => super::swizzle::make_swizzle(&args, span),
        "make_composed_layout" => super::swizzle::make_composed_layout(&args, span),
        "tile_to_shape" => super::swizzle::tile_to_shape(&args, span),
        "copy" if args.iter().any(|a| a.name.as_deref() == Some("pred")) => super::copy_if::copy_pred(f, &args, span),
        "copy_if" => super::copy_if::copy_if(f, &args, span),
        "elem_less" => super::copy_if::elem_less(f, &args, span),
        "basic_copy" | "autovec_copy" | "copy" => {
            arity(name, &args, 2, 3, span, &format!("{name}(src, dst)"))?;
            let p = positional(&args);
            let (atom_bits, src, dst) = if p.len() == 3 {
                let (bits, op) = match p[0].value {
                    Value::TiledCopy { bits, op, .. } | Value::CopyAtom { bits, op, .. } => (bits, op),
                    _ => {
                        return Err(Diagnostic::error(
                            format!("with three arguments, `{name}` takes a tiled copy first"),
                            p[0].span,
                            "not a tiled copy",
                        ))
                    }
                };
                (Some((bits, op, p[0].span)), p[1], p[2])
            } else {
                (None, p[0], p[1])
            };
            copy(f, atom_bits, src, dst, span)
        }
        "make_tiled_copy_A" | "make_tiled_copy_B" => super::mma::make_tiled_copy_ab(name, &args, span),
        "make_tiled_copy_C" => super::mma::make_tiled_copy_c(&args, span),
        "make_mma_atom" => super::mma::make_mma_atom(&args, span),
        "make_tiled_mma" => super::mma::make_tiled_mma(&args, span),
        "gemm" => super::mma::gemm(f, &args, span),
        // Separate functions keep this match's stack frame small: helpers inline into each other up to
        // 64 levels deep, and every level holds one frame of `call`.
        "make_copy_atom" => make_copy_atom(&args, span),
        "cp_async_commit_group" | "cp_async_wait_group" => async_copy_group(f, name, &args, span),
        "warpgroup_fence"
        | "warpgroup_commit_group"
        | "warpgroup_wait_group"
        | "fence_proxy_async"
        | "mbarrier_init_fence"
        | "warpgroup_reg_alloc"
        | "warpgroup_reg_dealloc" => warpgroup_sync(f, name, &args, span),
        "barrier" | "barrier_arrive" => named_barrier(f, name, &args, span),
        "make_tiled_copy_tv" | "make_tiled_copy" => {
            arity(
                name,
                &args,
                3,
                3,
                span,
                &format!(
                    "{name}(copy_atom, {})",
                    if name == "make_tiled_copy" { "tv_layout, tile" } else { "thr_layout, val_layout" }
                ),
            )?;
            let p = positional(&args);
            let Value::CopyAtom { elem, bits, op } = p[0].value else {
                return Err(Diagnostic::error(
                    format!("`{name}` takes a copy atom first, found {}", crate::diag::article(&p[0].value.kind())),
                    p[0].span,
                    "not a copy atom",
                ));
            };
            let (tile, tv) = if name == "make_tiled_copy_tv" {
                cute_layout::make_layout_tv(&layout_of(p[1])?, &layout_of(p[2])?).map_err(lerr)?
            } else {
                (int_tuple(p[2], "a tile shape")?, layout_of(p[1])?)
            };
            // The TV layout is the copy's static structure (its type in the IR), as in CuTe.
            if !(tv.shape.is_static() && tv.stride.is_static() && tile.is_static()) {
                return Err(Diagnostic::error(
                    format!("a tiled copy needs a static TV layout and tile, found TV {tv} over tile {tile}"),
                    span,
                    "run-time layout",
                )
                .with_help("build the thread and value layouts from compile-time extents"));
            }
            Ok(Value::TiledCopy { elem, bits, op, tv, tile })
        }
        "print_tensor" => {
            arity(name, &args, 1, 1, span, "print_tensor(tensor, verbose: false)")?;
            let verbose = match named(name, &args, "verbose", &["verbose"])?.map(|a| &a.value) {
                None | Some(Value::Bool(false)) => false,
                Some(Value::Bool(true)) => true,
                Some(other) => {
                    return Err(Diagnostic::error(
                        format!("`verbose` is `true` or `false`, found {}", crate::diag::article(&other.kind())),
                        span,
                        "not a bool",
                    ))
                }
            };
            print_tensor(f, positional(&args)[0], verbose, span)
        }
        "ceil_div" => {
            arity(name, &args, 2, 2, span, "ceil_div(a, b)")?;
            let p = positional(&args);
            match (&p[0].value, &p[1].value) {
                (Value::Int(a), Value::Int(b)) if b.as_static() != Some(0) => {
                    a.ceil_div(b).map(Value::Int).map_err(lerr)
                }
                _ => Err(Diagnostic::error(
                    "`ceil_div` takes two integers, the second not zero",
                    span,
                    "invalid operands",
                )),
            }
        }
        "lane_idx" | "warp_idx" => {
            arity(name, &args, 0, 0, span, &format!("{name}()"))?;
            let Value::Int(t) = f.field(Value::Dim3("thread_idx"), &crate::ast::Ident { name: "x".into(), span })?
            else {
                return Err(Diagnostic::error("internal error: thread index", span, "here"));
            };
            let warp = Int::S(32);
            Ok(Value::Int(if name == "lane_idx" { t.modulo(&warp) } else { t.floor_div(&warp) }.map_err(lerr)?))
        }
        "shuffle_xor" | "shuffle_down" | "shuffle_up" | "shuffle_idx" => {
            arity(name, &args, 2, 2, span, &format!("{name}(value, offset)"))?;
            let p = positional(&args);
            let kind = match name {
                "shuffle_xor" => ShuffleKind::Xor,
                "shuffle_down" => ShuffleKind::Down,
                "shuffle_up" => ShuffleKind::Up,
                _ => ShuffleKind::Idx,
            };
            shuffle(f, kind, &p[0].value, &p[1].value, p[0].span)
        }
        "warp_reduce" | "warp_reduction_sum" | "warp_reduction_max" => {
            let (op, value) = match name {
                "warp_reduce" => {
                    arity(name, &args, 2, 2, span, "warp_reduce(op, value)")?;
                    let p = positional(&args);
                    let Value::Func(op) = &p[0].value else {
                        return Err(Diagnostic::error(
                            "`warp_reduce` takes an operation first (`add`, `max`, ...)",
                            p[0].span,
                            "not a function",
                        ));
                    };
                    (op.clone(), p[1].value.clone())
                }
                _ => {
                    arity(name, &args, 1, 1, span, &format!("{name}(value)"))?;
                    (if name.ends_with("sum") { "add" } else { "max" }.to_string(), positional(&args)[0].value.clone())
                }
            };
            // A butterfly over the 32 lanes: after five exchanges every lane holds the result.
            let mut acc = value;
            for offset in [16, 8, 4, 2, 1] {
                let other = shuffle(f, ShuffleKind::Xor, &acc, &Value::Int(Int::S(offset)), span)?;
                acc = f.call_value(&op, vec![acc, other], span)?;
            }
            Ok(acc)
        }
        name if MathFn::from_name(name).is_some() => {
            arity(name, &args, 1, 1, span, &format!("{name}(x)"))?;
            let fun = MathFn::from_name(name).unwrap_or(MathFn::Abs);
            math(f, fun, &positional(&args)[0].value, span)
        }
        "full_like" | "zeros_like" => {
            let n = if name == "full_like" { 2 } else { 1 };
            arity(name, &args, n, n, span, if n == 2 { "full_like(fragment, value)" } else { "zeros_like(fragment)" })?;
            let p = positional(&args);
            let Value::Frag(ft, _) = &p[0].value else {
                return Err(Diagnostic::error(
                    format!(
                        "`{name}` takes a fragment (from `.load()`), found {}",
                        crate::diag::article(&p[0].value.kind())
                    ),
                    p[0].span,
                    "not a fragment",
                ));
            };
            let fill = if n == 2 { p[1].value.clone() } else { Value::Int(Int::ZERO) };
            let ft = ft.clone();
            f.need_kernel(&format!("`{name}`"), span)?;
            let fill = f.coerce(fill, ft.elem, span)?;
            let x = f.operand(&fill, ft.elem, span)?;
            let elems = vec![x; ft.len()];
            let dst = f.fresh(ValueTy::Frag(ft.clone()));
            f.emit(Inst::FromElements { dst, ty: ft.elem, elems, span });
            Ok(Value::Frag(ft, dst))
        }
        "print" => {
            let text = format_args(&args, false)?;
            f.prog.module.prints.push(text);
            Ok(Value::Unit)
        }
        "printf" => printf(f, &args, span),
        "sync_threads" => {
            arity(name, &args, 0, 0, span, "sync_threads()")?;
            f.need_kernel("`sync_threads`", span)?;
            f.emit(Inst::Barrier { span });
            Ok(Value::Unit)
        }
        other => {
            let mut d = Diagnostic::error(format!("cannot find function `{other}`"), name_span, "not found");
            let mut candidates: Vec<&str> = FUNCTIONS.to_vec();
            let fns: Vec<String> = f.prog.functions.keys().cloned().collect();
            candidates.extend(fns.iter().map(String::as_str));
            if let Some(s) = did_you_mean(other, candidates) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            Err(d)
        }
    }
}

fn value_crd(v: &Value, span: Span) -> R<cute_layout::Crd> {
    Ok(match v {
        Value::Int(i) => cute_layout::Crd::Int(i.clone()),
        Value::Under => cute_layout::Crd::Under,
        Value::Tuple(items) => cute_layout::Crd::Tuple(items.iter().map(|i| value_crd(i, span)).collect::<R<_>>()?),
        other => {
            return Err(Diagnostic::error(
                format!("expected a coordinate, found {}", crate::diag::article(&other.kind())),
                span,
                "not a coordinate",
            ))
        }
    })
}

fn where_(f: &mut Frame, args: &[Arg], span: Span) -> R<Value> {
    let (c, a, b) = (&args[0], &args[1], &args[2]);
    if let Value::Bool(cond) = c.value {
        return Ok(if cond { a.value.clone() } else { b.value.clone() });
    }
    let ty = match (&a.value, &b.value) {
        (Value::Scalar(s, _), _) | (_, Value::Scalar(s, _)) => *s,
        (Value::Frag(fr, _), _) | (_, Value::Frag(fr, _)) => fr.elem,
        (Value::Int(_), _) | (_, Value::Int(_)) => Scalar::I32,
        _ => return Err(Diagnostic::error("`where` chooses between two values of one type", span, "no type")),
    };
    let frag = match (&c.value, &a.value, &b.value) {
        (Value::Frag(fr, _), _, _) | (_, Value::Frag(fr, _), _) | (_, _, Value::Frag(fr, _)) => Some(fr.len()),
        _ => None,
    };
    f.need_kernel("`where` on run-time values", span)?;
    let cop = match &c.value {
        Value::Frag(_, id) | Value::Scalar(Scalar::Bool, id) => Operand::Value(*id),
        other => {
            return Err(Diagnostic::error(
                format!("the condition of `where` is a bool, found {}", crate::diag::article(&other.kind())),
                c.span,
                "not a bool",
            ))
        }
    };
    let x = frag_or_operand(f, &a.value, ty, a.span)?;
    let y = frag_or_operand(f, &b.value, ty, b.span)?;
    let like = [&c.value, &a.value, &b.value]
        .into_iter()
        .find(|v| matches!(v, Value::Frag(..)))
        .cloned()
        .unwrap_or(Value::Unit);
    let dst = f.fresh(f.result_ty(ty, frag, &like));
    f.emit(Inst::Select { dst, ty, frag, c: cop, a: x, b: y, span });
    Ok(f.result_value(ty, frag, &like, dst))
}

/// `print("x = {}", x)` or `print(a, b)`: static values formatted now, `?` for run-time ones.
fn format_args(args: &[Arg], _runtime: bool) -> R<String> {
    let mut parts = args.iter().map(|a| a.value.clone());
    let Some(first) = parts.next() else { return Ok(String::new()) };
    if let Value::Str(fmt) = &first {
        if fmt.contains("{}") {
            let mut out = String::new();
            let mut pieces = fmt.split("{}");
            out.push_str(pieces.next().unwrap_or(""));
            for piece in pieces {
                match parts.next() {
                    Some(v) => out.push_str(&v.to_string()),
                    None => {
                        return Err(Diagnostic::error(
                            "more `{}` placeholders than values",
                            args[0].span,
                            "format string",
                        ))
                    }
                }
                out.push_str(piece);
            }
            if parts.next().is_some() {
                return Err(Diagnostic::error("more values than `{}` placeholders", args[0].span, "format string"));
            }
            return Ok(out);
        }
    }
    Ok(std::iter::once(first).chain(parts).map(|v| v.to_string()).collect::<Vec<_>>().join(" "))
}

/// The printed form of a value as segments: static parts as text, run-time parts as values, so a
/// layout with run-time extents prints its actual extents (CuTe's `cute.printf` of a layout).
fn segments(v: &Value, out: &mut Vec<FmtSeg>, span: Span) -> R<()> {
    fn text(out: &mut Vec<FmtSeg>, t: &str) {
        match out.last_mut() {
            Some(FmtSeg::Text(s)) => s.push_str(t),
            _ => out.push(FmtSeg::Text(t.to_string())),
        }
    }
    fn tuple(t: &IntTuple, out: &mut Vec<FmtSeg>) {
        match t {
            IntTuple::Int(i) => match i.as_static() {
                Some(c) => text(out, &c.to_string()),
                None => out.push(FmtSeg::Int(i.clone())),
            },
            IntTuple::Tuple(items) => {
                text(out, "(");
                for (k, x) in items.iter().enumerate() {
                    if k > 0 {
                        text(out, ",");
                    }
                    tuple(x, out);
                }
                text(out, ")");
            }
        }
    }
    match v {
        Value::Int(i) => tuple(&IntTuple::Int(i.clone()), out),
        Value::Scalar(s, id) => out.push(FmtSeg::Value(*s, *id)),
        Value::Layout(l) => {
            tuple(&l.shape, out);
            text(out, ":");
            tuple(&l.stride, out);
        }
        Value::Tuple(items) => {
            text(out, "(");
            for (k, x) in items.iter().enumerate() {
                if k > 0 {
                    text(out, ",");
                }
                segments(x, out, span)?;
            }
            text(out, ")");
        }
        Value::Tensor(t) => {
            text(out, &format!("tensor<ptr<{}, {}, align<{}>> o ", t.ty.elem.name(), t.ty.space.name(), t.ty.align));
            segments(&Value::Layout(t.ty.layout.clone()), out, span)?;
            text(out, ">");
        }
        v if is_static_value(v) => text(out, &v.to_string()),
        other => {
            return Err(Diagnostic::error(
                format!("`printf` cannot print {}", crate::diag::article(&other.kind())),
                span,
                "unsupported value",
            ))
        }
    }
    Ok(())
}

/// `printf("x = {}\n", x)`: on the GPU in kernels, by the runtime at call time in host functions.
fn printf(f: &mut Frame, args: &[Arg], span: Span) -> R<Value> {
    let Some(Value::Str(fmt)) = args.first().map(|a| &a.value) else {
        return Err(Diagnostic::error("`printf` starts with a format string", span, "no format string")
            .with_help("write `printf(\"x = {}\\n\", x)`"));
    };
    let mut segs: Vec<FmtSeg> = Vec::new();
    let mut pieces = fmt.split("{}");
    segs.push(FmtSeg::Text(pieces.next().unwrap_or("").to_string()));
    let mut rest = args[1..].iter();
    for piece in pieces {
        let Some(a) = rest.next() else {
            return Err(Diagnostic::error("more `{}` placeholders than values", args[0].span, "format string"));
        };
        segments(&a.value, &mut segs, a.span)?;
        segs.push(FmtSeg::Text(piece.to_string()));
    }
    if let Some(a) = rest.next() {
        return Err(Diagnostic::error("more values than `{}` placeholders", a.span, "extra value"));
    }
    // One text segment between values: merge neighbours, drop empties.
    let mut merged: Vec<FmtSeg> = Vec::new();
    for seg in segs {
        match (merged.last_mut(), seg) {
            (_, FmtSeg::Text(t)) if t.is_empty() => {}
            (Some(FmtSeg::Text(prev)), FmtSeg::Text(t)) => prev.push_str(&t),
            (_, seg) => merged.push(seg),
        }
    }
    let segs = merged;
    match f.mode {
        super::Mode::Kernel => f.emit(Inst::Printf { segments: segs, span }),
        super::Mode::Host => {
            if segs.iter().any(|s| matches!(s, FmtSeg::Value(..))) {
                return Err(Diagnostic::error("host functions print only integers and layouts", span, "run-time value")
                    .with_help("a run-time condition such as `n > 1024` cannot be printed: print the integers it compares, or branch on it with `if`"));
            }
            f.steps.push(crate::kir::HostStep::Print(segs));
        }
        super::Mode::Const => {
            return Err(Diagnostic::error("`printf` is not a compile-time value", span, "not constant"))
        }
    }
    Ok(Value::Unit)
}

pub fn method(f: &mut Frame, recv: Value, name: &crate::ast::Ident, args: Vec<Arg>, span: Span) -> R<Value> {
    match (name.name.as_str(), &recv) {
        ("load", Value::Tensor(t)) => {
            arity("load", &args, 0, 0, span, "t.load()")?;
            f.need_kernel("`load`", span)?;
            let n = t.ty.layout.size().ok().and_then(|s| s.as_static());
            let Some(n) = n else {
                return Err(Diagnostic::error(
                    format!("`load` needs a tensor of static size, this one is {}", t.ty.layout),
                    span,
                    "dynamic size",
                )
                .with_help("slice or tile the tensor to a static shape first"));
            };
            register_budget("a fragment", n, t.ty.elem, span)?;
            let Origin::Kernel(tid) = t.origin else { unreachable!("kernel tensors have kernel origins") };
            let ft = FragTy { elem: t.ty.elem, shape: t.ty.layout.shape.clone() };
            let dst = f.fresh(ValueTy::Frag(ft.clone()));
            f.emit(Inst::LoadFrag { dst, tensor: tid, ty: t.ty.clone(), span });
            Ok(Value::Frag(ft, dst))
        }
        ("store", Value::Tensor(t)) => {
            arity("store", &args, 1, 1, span, "t.store(fragment)")?;
            f.need_kernel("`store`", span)?;
            let Value::Frag(ft, fid) = &args[0].value else {
                return Err(Diagnostic::error(
                    format!(
                        "`store` takes a fragment (from `.load()`), found {}",
                        crate::diag::article(&args[0].value.kind())
                    ),
                    args[0].span,
                    "not a fragment",
                ));
            };
            let t: TensorVal = t.clone();
            f.store_frag(&t, ft, *fid, span)?;
            Ok(Value::Unit)
        }
        ("get_slice", Value::TiledCopy { elem, bits, op, tv, tile }) => {
            arity("get_slice", &args, 1, 1, span, "tiled_copy.get_slice(thread_index)")?;
            let Value::Int(tid) = &args[0].value else {
                return Err(Diagnostic::error("`get_slice` takes the thread index", args[0].span, "not an integer"));
            };
            Ok(Value::ThrCopy {
                elem: *elem,
                bits: *bits,
                op: *op,
                tv: tv.clone(),
                tile: tile.clone(),
                tid: tid.clone(),
            })
        }
        ("get_slice", Value::TiledMma(tiled)) => {
            arity("get_slice", &args, 1, 1, span, "tiled_mma.get_slice(thread_index)")?;
            let Value::Int(tid) = &args[0].value else {
                return Err(Diagnostic::error("`get_slice` takes the thread index", args[0].span, "not an integer"));
            };
            Ok(Value::ThrMma(Box::new((tiled.clone(), tid.clone()))))
        }
        (m, Value::ThrMma(slice)) if super::mma::THR_MMA_METHODS.contains(&m) => {
            let (tiled, tid) = (slice.0.clone(), slice.1.clone());
            super::mma::thr_mma_method(f, &tiled, &tid, m, &args, span)
        }
        ("fill", Value::Tensor(t)) => {
            let t: TensorVal = t.clone();
            fill(f, &t, &args, span)
        }
        ("retile_D" | "retile_S" | "retile", Value::ThrCopy { tv, .. } | Value::TiledCopy { tv, .. }) => {
            arity(&name.name, &args, 1, 1, span, &format!("thr_copy.{}(fragment)", name.name))?;
            // The destination's values per thread: an ldmatrix gives 2 per matrix (its TV layout
            // describes the 8-element source rows), other copies as many as their TV layout has.
            let values = match &recv {
                Value::ThrCopy { op, .. } | Value::TiledCopy { op, .. } if op.is_ldmatrix() => {
                    i64::from(op.ldmatrix_values().unwrap_or(8))
                }
                _ => tv.mode(1).ok().and_then(|m| m.size().ok()).and_then(|s| s.as_static()).unwrap_or(0),
            };
            super::mma::retile(f, &args[0], values, span)
        }
        ("partition_S" | "partition_D", Value::ThrCopy { elem, bits, tv, tile, tid, .. }) => {
            arity(&name.name, &args, 1, 1, span, &format!("thr_copy.{}(tensor)", name.name))?;
            let layout = match &args[0].value {
                Value::Tensor(t) => t.ty.layout.clone(),
                Value::Counting { layout, .. } => layout.clone(),
                other => {
                    return Err(Diagnostic::error(
                        format!("`{}` takes a tensor, found {}", name.name, crate::diag::article(&other.kind())),
                        args[0].span,
                        "not a tensor",
                    ));
                }
            };
            let lerr = |e| layout_err(e, span);
            if matches!(args[0].value, Value::Tensor(_)) {
                f.require_tiles_divide(&layout, &Tiler::Shape(tile.clone()), span)?;
            }
            let (partitioned, offset) = cute_layout::tv_partition(&layout, tv, tile, tid).map_err(lerr)?;
            let first = Arg { name: None, name_span: None, value: args[0].value.clone(), span: args[0].span };
            let how = ViewHow::Partition {
                dst: name.name == "partition_D",
                elem: *elem,
                bits: *bits,
                tv: tv.clone(),
                tile: tile.clone(),
                tid: tid.clone(),
            };
            rewrap(f, &first, partitioned, offset, how, span)
        }
        ("reduce", Value::Frag(ft, fid)) => {
            let usage = "fragment.reduce(op, init: value, profile: 0)";
            arity("reduce", &args, 1, 2, span, usage)?;
            let pos = positional(&args);
            let Value::Func(op) = &pos[0].value else {
                return Err(Diagnostic::error(
                    "`reduce` takes an operation first (`add`, `mul`, `max`, `min`)",
                    pos[0].span,
                    "not a function",
                ));
            };
            let init = match (pos.get(1).copied(), named("reduce", &args, "init", &["init", "profile"])?) {
                (Some(a), _) | (None, Some(a)) => Some(a.value.clone()),
                (None, None) => None,
            };
            let profile = named("reduce", &args, "profile", &["init", "profile"])?;
            reduce(f, op, ft, *fid, init, profile, span)
        }
        ("allocate_tensor", Value::SmemAllocator(a)) => super::smem::allocate_tensor(f, a, &args, span),
        ("to", _) => {
            arity("to", &args, 1, 1, span, "x.to(T)")?;
            let Value::Type(to) = args[0].value else {
                return Err(Diagnostic::error(
                    format!("`to` takes a type, found {}", crate::diag::article(&args[0].value.kind())),
                    args[0].span,
                    "not a type",
                ));
            };
            convert(f, recv, to, span)
        }
        (m, v) => {
            let methods: &[&str] = match v {
                Value::Tensor(_) => &["load", "store", "fill"],
                Value::TiledMma(_) => &["get_slice"],
                Value::ThrMma(..) => super::mma::THR_MMA_METHODS,
                Value::Frag(..) => &["reduce", "to"],
                Value::TiledCopy { .. } => &["get_slice", "retile"],
                Value::ThrCopy { .. } => &["partition_S", "partition_D", "retile_D", "retile_S"],
                Value::SmemAllocator(_) => &["allocate_tensor"],
                _ => &["to"],
            };
            let d = Diagnostic::error(
                format!("no method `{m}` on {}", crate::diag::article(&v.kind())),
                name.span,
                "unknown method",
            );
            Err(match did_you_mean(m, methods.iter().copied()) {
                Some(s) => d.with_help(format!("did you mean `{s}`?")),
                None => d.with_help(format!(
                    "the methods here are {}",
                    methods.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
                )),
            })
        }
    }
}

fn convert(f: &mut Frame, v: Value, to: Scalar, span: Span) -> R<Value> {
    let (from, frag, a) = match &v {
        Value::Int(i) if i.is_static() => {
            let x = i.as_static().unwrap_or(0);
            return if to == Scalar::I32 {
                Ok(v)
            } else if to.is_float() {
                f.coerce(Value::Float(x as f64), to, span)
            } else {
                f.coerce(v.clone(), to, span)
            };
        }
        Value::Float(x) if to.is_float() => return f.coerce(Value::Float(*x), to, span),
        Value::Int(i) => (Scalar::I32, None, Operand::Int(i.clone())),
        Value::Scalar(s, id) => (*s, None, Operand::Value(*id)),
        Value::Frag(ft, id) => (ft.elem, Some(ft.len()), Operand::Value(*id)),
        other => {
            return Err(Diagnostic::error(
                format!("cannot convert {} to `{}`", crate::diag::article(&other.kind()), to.name()),
                span,
                "not a number",
            ))
        }
    };
    if from == to {
        return Ok(v);
    }
    f.need_kernel("run-time conversion", span)?;
    let dst = f.fresh(f.result_ty(to, frag, &v));
    f.emit(Inst::Convert { dst, from, to, frag, a, span });
    Ok(f.result_value(to, frag, &v, dst))
}

/// `make_copy_atom(T, bits: N, op: "...")`: a copy atom of a universal or `cp.async` copy.
#[inline(never)]
fn make_copy_atom(args: &[Arg], span: Span) -> R<Value> {
    let name = "make_copy_atom";
    arity(name, args, 1, 1, span, "make_copy_atom(element_type, bits: N, op: \"universal\" | \"cp.async.ca\" | \"cp.async.cg\" | \"ldmatrix.x4\" | ...)")?;
    let Value::Type(elem) = positional(args)[0].value else {
        return Err(Diagnostic::error(
            "`make_copy_atom` takes the element type",
            positional(args)[0].span,
            "not a type",
        ));
    };
    let keys = &["bits", "op"];
    let op_arg = named(name, args, "op", keys)?;
    let is_ldmatrix = matches!(&op_arg.map(|a| &a.value), Some(Value::Str(s)) if s.starts_with("ldmatrix"));
    let bits = match named(name, args, "bits", keys)? {
        Some(b) => static_usize(b, "`bits`")? as u32,
        // An ldmatrix lane moves one 16-byte row.
        None if is_ldmatrix => 128,
        None => elem.size_bytes() * 8,
    };
    if bits == 0 || bits % (elem.size_bytes() * 8) != 0 || bits > 128 {
        return Err(Diagnostic::error(
            format!("a copy of {bits} bits does not move whole {} elements (at most 128 bits)", elem.name()),
            span,
            "invalid copy width",
        ));
    }
    let op = match op_arg {
        None => CopyOp::Universal,
        Some(a) => match &a.value {
            Value::Str(s) => CopyOp::from_name(s).ok_or_else(|| {
                Diagnostic::error(format!("unknown copy operation \"{s}\""), a.span, "unknown copy operation")
                    .with_help(format!("the copy operations are {}", CopyOp::names(true)))
            })?,
            other => {
                return Err(Diagnostic::error(
                    format!("`op` names the copy operation as a string, found {}", crate::diag::article(&other.kind())),
                    a.span,
                    "not a string",
                ))
            }
        },
    };
    // cp.async moves 4, 8 or 16 bytes (.ca) or exactly 16 bytes (.cg), as the PTX ISA says.
    let allowed = op.bits();
    if op.is_ldmatrix() && elem.size_bytes() != 2 {
        return Err(Diagnostic::error(
            format!("{} moves 16-bit elements, not {}", op.name(), elem.name()),
            span,
            "not a 16-bit type",
        ));
    }
    if !allowed.is_empty() && !allowed.contains(&bits) {
        let sizes: Vec<String> = allowed.iter().map(|b| b.to_string()).collect();
        return Err(Diagnostic::error(
            format!("{} moves {} bits, not {bits}", op.name(), sizes.join(", ")),
            span,
            "invalid copy width",
        ));
    }
    Ok(Value::CopyAtom { elem, bits, op })
}

/// `cp_async_commit_group()` and `cp_async_wait_group(n)`.
#[inline(never)]
fn async_copy_group(f: &mut Frame, name: &str, args: &[Arg], span: Span) -> R<Value> {
    let wait = if name == "cp_async_wait_group" {
        arity(name, args, 1, 1, span, "cp_async_wait_group(n)")?;
        let n = static_usize(positional(args)[0], "the number of groups left in flight")?;
        Some(u32::try_from(n).map_err(|_| Diagnostic::error("too many groups", span, "too large"))?)
    } else {
        arity(name, args, 0, 0, span, "cp_async_commit_group()")?;
        None
    };
    f.need_kernel(&format!("`{name}`"), span)?;
    f.emit(Inst::AsyncCopyGroup { wait, span });
    Ok(Value::Unit)
}

/// `warpgroup_fence()`, `warpgroup_commit_group()`, `warpgroup_wait_group(n)` (CuTe DSL's
/// `cute.nvgpu.warpgroup.fence/commit_group/wait_group`) and `fence_proxy_async()` (CuTe DSL's
/// `cute.arch.fence_proxy("async.shared", space="cta")`, CUTLASS's `fence_view_async_shared`).
#[inline(never)]
fn warpgroup_sync(f: &mut Frame, name: &str, args: &[Arg], span: Span) -> R<Value> {
    use crate::kir::WarpgroupOp;
    let op = match name {
        "warpgroup_wait_group" => {
            arity(name, args, 1, 1, span, "warpgroup_wait_group(n)")?;
            let n = static_usize(positional(args)[0], "the number of wgmma groups left in flight")?;
            if n > 7 {
                return Err(Diagnostic::error(
                    format!("`warpgroup_wait_group({n})`: wgmma.wait_group takes 0 to 7"),
                    span,
                    "too many groups",
                ));
            }
            WarpgroupOp::WaitGroup(n as u32)
        }
        "warpgroup_reg_alloc" | "warpgroup_reg_dealloc" => {
            arity(name, args, 1, 1, span, &format!("{name}(registers)"))?;
            let n = static_usize(positional(args)[0], "the registers per thread")?;
            if !(24..=256).contains(&n) || n % 8 != 0 {
                return Err(Diagnostic::error(
                    format!("`{name}({n})`: setmaxnreg takes 24 to 256 registers per thread, a multiple of 8"),
                    positional(args)[0].span,
                    "not a register count",
                )
                .with_help(
                    "CUTLASS's warp-specialized GEMMs use 40 for the producer and 232 or 240 for the consumers",
                ));
            }
            if name == "warpgroup_reg_alloc" {
                WarpgroupOp::RegAlloc(n as u32)
            } else {
                WarpgroupOp::RegDealloc(n as u32)
            }
        }
        _ => {
            arity(name, args, 0, 0, span, &format!("{name}()"))?;
            match name {
                "warpgroup_fence" => WarpgroupOp::Fence,
                "warpgroup_commit_group" => WarpgroupOp::CommitGroup,
                "mbarrier_init_fence" => WarpgroupOp::FenceMbarrierInit,
                _ => WarpgroupOp::FenceProxyAsync,
            }
        }
    };
    f.need_kernel(&format!("`{name}`"), span)?;
    f.emit(Inst::Warpgroup { op, span });
    Ok(Value::Unit)
}

/// `barrier(barrier_id: ID, number_of_threads: N)` and `barrier_arrive(...)` (CuTe DSL's
/// `cute.arch.barrier` / `barrier_arrive`): a named barrier of part of the block. Without
/// arguments `barrier()` is `sync_threads()`.
#[inline(never)]
fn named_barrier(f: &mut Frame, name: &str, args: &[Arg], span: Span) -> R<Value> {
    let usage = format!("{name}(barrier_id: 1, number_of_threads: 256)");
    if args.iter().any(|a| a.name.is_none()) {
        return Err(Diagnostic::error(format!("`{name}` takes its arguments by name"), span, "positional arguments")
            .with_help(format!("write `{usage}`")));
    }
    let keys = ["barrier_id", "number_of_threads"];
    let id = named(name, args, "barrier_id", &keys)?;
    let threads = named(name, args, "number_of_threads", &keys)?;
    f.need_kernel(&format!("`{name}`"), span)?;
    let (id, threads) = match (id, threads) {
        (None, None) if name == "barrier" => {
            f.emit(Inst::Barrier { span });
            return Ok(Value::Unit);
        }
        (Some(i), Some(t)) => (i, t),
        _ => {
            return Err(Diagnostic::error(
                format!("`{name}` needs both `barrier_id` and `number_of_threads`"),
                span,
                "missing argument",
            )
            .with_help(format!("write `{usage}`")))
        }
    };
    let operand = |a: &Arg, what: &str, ok: &dyn Fn(i64) -> bool, range: &str| -> R<Operand> {
        match &a.value {
            Value::Int(i) => match i.as_static() {
                Some(c) if !ok(c) => Err(Diagnostic::error(
                    format!("`{name}`: {what} is {c}; it must be {range}"),
                    a.span,
                    "out of range",
                )),
                _ => Ok(Operand::Int(i.clone())),
            },
            other => Err(Diagnostic::error(
                format!("`{name}`: {what} must be an integer, found {}", crate::diag::article(&other.kind())),
                a.span,
                "not an integer",
            )),
        }
    };
    // PTX: 16 barriers per block; the count is a multiple of the warp size (whole warps arrive).
    let id = operand(id, "the barrier id", &|c| (0..16).contains(&c), "0 to 15")?;
    let threads = operand(
        threads,
        "the number of threads",
        &|c| c > 0 && c % 32 == 0 && c <= 1024,
        "a multiple of 32 from 32 to 1024",
    )?;
    f.emit(Inst::NamedBarrier { id, threads, arrive: name == "barrier_arrive", span });
    Ok(Value::Unit)
}

/// CuTe's `t.fill(x)`: every element of a static-size tensor set to x.
#[inline(never)]
fn fill(f: &mut Frame, t: &TensorVal, args: &[Arg], span: Span) -> R<Value> {
    // CuTe's `t.fill(x)`: every element of a static-size tensor set to x.
    arity("fill", args, 1, 1, span, "t.fill(value)")?;
    f.need_kernel("`fill`", span)?;
    let n = t.ty.layout.size().ok().and_then(|s| s.as_static()).ok_or_else(|| {
        Diagnostic::error(
            format!("`fill` needs a tensor of static size, this one is {}", t.ty.layout),
            span,
            "not a static fragment size",
        )
    })?;
    register_budget("`fill` of a tensor", n, t.ty.elem, span)?;
    let fill = f.coerce(args[0].value.clone(), t.ty.elem, args[0].span)?;
    let x = f.operand(&fill, t.ty.elem, args[0].span)?;
    let ft = FragTy { elem: t.ty.elem, shape: t.ty.layout.shape.clone() };
    let dst = f.fresh(ValueTy::Frag(ft.clone()));
    f.emit(Inst::FromElements { dst, ty: ft.elem, elems: vec![x; n as usize], span });
    f.store_frag(&t, &ft, dst, span)?;
    Ok(Value::Unit)
}

/// An ldmatrix copy of several instructions' worth, `(8, X, Y, ...)` on both sides: one `ldmatrix.x4`
/// per coordinate of the modes after the first (CuTe's `copy` loops over them the same way).
/// `ldmatrix` copies, one instruction per source row (mode 0, 8 elements) and destination values
/// (mode 0, 2 per matrix) at each coordinate of the other modes.
fn ldmatrix_instances(f: &mut Frame, op: CopyOp, s: &TensorVal, d: &TensorVal, span: Span) -> R<Value> {
    let sizes = |l: &Layout| -> Vec<i64> {
        l.modes().iter().map(|m| m.size().ok().and_then(|x| x.as_static()).unwrap_or(-1)).collect()
    };
    let (ss, ds) = (sizes(&s.ty.layout), sizes(&d.ty.layout));
    let values = i64::from(op.ldmatrix_values().unwrap_or(8));
    if ss[1..] != ds[1..] || ss.first() != Some(&8) || ds.first() != Some(&values) || ss.iter().any(|&x| x <= 0) {
        return Err(Diagnostic::error(
            format!("an {} copy moves (8, ...) rows into ({values}, ...) registers, the other modes matching; found layouts {} and {}", op.name(), s.ty.layout, d.ty.layout),
            span,
            "modes differ",
        )
        .with_help("copy `thr_copy.partition_S(smem)` into `thr_copy.retile_D(fragment)` of the same tiled copy"));
    }
    let total: i64 = ss[1..].iter().product();
    for linear in 0..total {
        let mut rest = linear;
        let mut crd = vec![cute_layout::Crd::Under];
        for &m in &ss[1..] {
            crd.push(cute_layout::Crd::Int(Int::S(rest % m)));
            rest /= m;
        }
        let crd = cute_layout::Crd::Tuple(crd);
        let (sv, dv) = (f.slice(s, &crd, span)?, f.slice(d, &crd, span)?);
        let (Origin::Kernel(sid), Origin::Kernel(did)) = (&sv.origin, &dv.origin) else {
            unreachable!("kernel tensors have kernel origins")
        };
        f.emit(Inst::Copy {
            src: *sid,
            src_ty: sv.ty.clone(),
            dst: *did,
            dst_ty: dv.ty.clone(),
            width: Some(8),
            op,
            pred: None,
            span,
        });
    }
    Ok(Value::Unit)
}

/// Refuses `n` elements of `elem` per thread in registers past the budget (counted in 32-bit
/// registers, [`crate::kir::REGISTER_BUDGET`]).
pub(super) fn register_budget(what: &str, n: i64, elem: Scalar, span: Span) -> R<()> {
    let n = u64::try_from(n).unwrap_or(0);
    let regs = crate::kir::registers_for(n, elem);
    if regs <= crate::kir::REGISTER_BUDGET {
        return Ok(());
    }
    Err(Diagnostic::error(
        format!("{what} of {n} {} elements needs {regs} 32-bit registers per thread, more than the budget of {}", elem.name(), crate::kir::REGISTER_BUDGET),
        span,
        "too large for registers",
    )
    .with_help(format!(
        "a thread has at most 255 registers and one register tensor or fragment may take {} of them: at most {} {} elements; split the work into smaller tiles",
        crate::kir::REGISTER_BUDGET,
        crate::kir::max_register_elements(elem),
        elem.name()
    )))
}

/// A new tensor in registers or shared memory, with a static layout.
pub(crate) fn alloc(f: &mut Frame, elem: Scalar, space: MemSpace, layout: Layout, span: Span) -> R<Value> {
    alloc_with(f, elem, space, layout, None, span)
}

/// A new tensor, swizzled when `swizzle` is given (shared memory only).
pub(crate) fn alloc_with(
    f: &mut Frame,
    elem: Scalar,
    space: MemSpace,
    layout: Layout,
    swizzle: Option<cute_layout::Swizzle>,
    span: Span,
) -> R<Value> {
    let ty = alloc_ty(f, elem, space, layout, swizzle, span)?;
    let dst = f.fresh(ValueTy::Tensor(ty.clone()));
    // Allocations go to the top of the kernel, whatever region asked for them: the backend promotes
    // an `alloca` to registers only in the entry block, and shared memory is block-wide anyway.
    f.specials.push(Inst::Alloc { dst, ty: ty.clone(), span });
    Ok(Value::Tensor(TensorVal { ty, origin: Origin::Kernel(dst) }))
}

/// The type of new memory for a tensor (in a kernel, of a static layout that fits the space).
pub(crate) fn alloc_ty(
    f: &mut Frame,
    elem: Scalar,
    space: MemSpace,
    layout: Layout,
    swizzle: Option<cute_layout::Swizzle>,
    span: Span,
) -> R<TensorTy> {
    f.need_kernel(&format!("allocating {} memory", space.name()), span)?;
    let size = layout.cosize().ok().and_then(|s| s.as_static());
    let Some(size) = size else {
        return Err(Diagnostic::error(
            format!("{} tensors need a static layout, found {layout}", space.name()),
            span,
            "dynamic layout",
        ));
    };
    if space == MemSpace::Rmem {
        register_budget("a register tensor", size, elem, span)?;
    } else if size > crate::kir::MAX_SMEM as i64 / elem.size_bytes() as i64 {
        return Err(Diagnostic::error(
            format!("{size} elements of {} is too large for {}", elem.name(), space.name()),
            span,
            "too large",
        )
        .with_help("a block has at most 227 KiB of shared memory"));
    }
    // Registers and shared memory are aligned to the widest access, 16 bytes (a swizzle keeps
    // less together).
    Ok(TensorTy { elem, space, align: super::swizzle::alloc_align(swizzle, elem.size_bytes()), layout, swizzle })
}

/// Element-wise copy of one tensor into another of the same size (CuTe's `copy`, `basic_copy`,
/// `autovec_copy`): through a register fragment, which `cute-vectorize` moves in the widest chunks
/// both layouts allow.
pub(super) fn copy(f: &mut Frame, atom: Option<(u32, CopyOp, Span)>, src: &Arg, dst: &Arg, span: Span) -> R<Value> {
    copy_with(f, atom, src, dst, None, span)
}

/// `copy`, with the zero-fill predicate of a `cp.async` chunk (`copy_if`).
pub(super) fn copy_with(
    f: &mut Frame,
    atom: Option<(u32, CopyOp, Span)>,
    src: &Arg,
    dst: &Arg,
    pred: Option<Operand>,
    span: Span,
) -> R<Value> {
    let (Value::Tensor(s), Value::Tensor(d)) = (&src.value, &dst.value) else {
        return Err(Diagnostic::error("`copy` moves a tensor into a tensor", span, "not tensors"));
    };
    let (ns, nd) =
        (s.ty.layout.size().ok().and_then(|x| x.as_static()), d.ty.layout.size().ok().and_then(|x| x.as_static()));
    // An ldmatrix.x1/.x2 lane gives an 8-element row and receives 2 or 4 values.
    let ldmatrix_values = atom.and_then(|(_, op, _)| op.ldmatrix_values()).map(i64::from);
    let sizes_match = match (ns, nd, ldmatrix_values) {
        (Some(a), Some(b), Some(v)) => a * v == b * 8,
        (a, b, _) => a == b,
    };
    if !sizes_match || ns.is_none() {
        return Err(Diagnostic::error(
            format!("cannot copy a tensor of layout {} into one of layout {}", s.ty.layout, d.ty.layout),
            span,
            "sizes differ",
        )
        .with_secondary(src.span, format!("{} elements", ns.map_or("?".into(), |n| n.to_string())))
        .with_secondary(dst.span, format!("{} elements", nd.map_or("?".into(), |n| n.to_string()))));
    }
    if s.ty.elem != d.ty.elem {
        return Err(Diagnostic::error(
            format!("cannot copy {} elements into a tensor of {}", s.ty.elem.name(), d.ty.elem.name()),
            span,
            "element types differ",
        ));
    }
    // A copy atom moves `bits` at once: that many bits must be contiguous and aligned on both sides.
    let width = match atom {
        None => None,
        Some((bits, _, atom_span)) => {
            let elem_bits = s.ty.elem.size_bytes() * 8;
            let w = (bits / elem_bits).max(1);
            // An ldmatrix moves 16-byte rows out of shared memory; its registers take what it gives.
            let sides: &[(&TensorVal, &Arg, &str)] = if ldmatrix_values.is_some() {
                &[(s, src, "source")]
            } else {
                &[(s, src, "source"), (d, dst, "destination")]
            };
            for &(t, arg, side) in sides {
                let compact = Layout::col_major(t.ty.layout.shape.clone()).map_err(|e| layout_err(e, arg.span))?;
                let run = cute_layout::max_common_vector(&t.ty.layout, &compact)
                    .ok()
                    .and_then(|r| r.as_static())
                    .unwrap_or(1);
                if run % i64::from(w) != 0 {
                    return Err(Diagnostic::error(
                        format!(
                            "a {bits}-bit copy atom moves {w} {} at once, but the {side}'s contiguous extent is {run}",
                            s.ty.elem.name()
                        ),
                        arg.span,
                        format!("layout {}", t.ty.layout),
                    )
                    .with_secondary(atom_span, format!("{bits}-bit copies"))
                    .with_help(format!(
                        "use a copy atom of at most {} bits that divides it",
                        u32::try_from(run).unwrap_or(1).max(1) * elem_bits
                    )));
                }
                if t.ty.align * 8 < bits {
                    return Err(Diagnostic::error(
                        format!("a {bits}-bit copy atom needs {}-byte alignment, but the {side} is only known to be {}-byte aligned", bits / 8, t.ty.align),
                        arg.span,
                        format!("align {}", t.ty.align),
                    )
                    .with_secondary(atom_span, format!("{bits}-bit copies"))
                    .with_help("declare the tensor's alignment (`align: 16`) or use a narrower copy atom"));
                }
            }
            Some(w)
        }
    };
    f.need_kernel("`copy`", span)?;
    let n = ns.unwrap_or(0);
    register_budget("a copy", n as i64, s.ty.elem, span)?;
    let op = atom.map_or(CopyOp::Universal, |(_, op, _)| op);
    if let Some((from, to, direction)) = op.spaces().filter(|(from, to, _)| s.ty.space != *from || d.ty.space != *to) {
        let atom_span = atom.map_or(span, |(_, _, s)| s);
        return Err(Diagnostic::error(
            format!("{} copies from {direction}, not from {} to {}", op.name(), s.ty.space.name(), d.ty.space.name()),
            span,
            "wrong memory spaces",
        )
        .with_secondary(atom_span, format!("a {} copy ({} to {})", op.name(), from.name(), to.name()))
        .with_help("use a universal copy atom (`make_copy_atom(T, bits: N)`) for other copies"));
    }
    if op.is_ldmatrix() && (n != 8 || nd != ldmatrix_values) {
        return ldmatrix_instances(f, op, s, d, span);
    }
    let (Origin::Kernel(sid), Origin::Kernel(did)) = (&s.origin, &d.origin) else {
        unreachable!("kernel tensors have kernel origins")
    };
    f.emit(Inst::Copy { src: *sid, src_ty: s.ty.clone(), dst: *did, dst_ty: d.ty.clone(), width, op, pred, span });
    Ok(Value::Unit)
}

fn shuffle(f: &mut Frame, kind: ShuffleKind, value: &Value, offset: &Value, span: Span) -> R<Value> {
    f.need_kernel("a warp shuffle", span)?;
    let ty = match value {
        Value::Int(_) => Scalar::I32,
        Value::Scalar(s, _) if s.size_bytes() == 4 => *s,
        other => {
            return Err(Diagnostic::error(
                format!("warp shuffles move 32-bit values, found {}", crate::diag::article(&other.kind())),
                span,
                "not 32-bit",
            )
            .with_help("convert to f32 or i32 first"))
        }
    };
    let v = f.operand(value, ty, span)?;
    let o = match offset {
        Value::Int(i) => Operand::Int(i.clone()),
        other => {
            return Err(Diagnostic::error(
                format!("the shuffle offset is an integer, found {}", crate::diag::article(&other.kind())),
                span,
                "not an integer",
            ))
        }
    };
    let dst = f.fresh(ValueTy::Scalar(ty));
    f.emit(Inst::Shuffle { dst, kind, ty, value: v, offset: o, span });
    Ok(if ty == Scalar::I32 { Value::Int(Int::var(dst, 1)) } else { Value::Scalar(ty, dst) })
}

/// CuTe's `print_tensor`: the tensor's type and layout, then its elements in CuTe's torch-style
/// nesting (the last mode outermost, then rows of mode 0 holding mode 1), or with `verbose: true`
/// one `(coordinate)= value` line per element. Printed by every thread that calls it.
fn print_tensor(f: &mut Frame, t: &Arg, verbose: bool, span: Span) -> R<Value> {
    f.need_kernel("`print_tensor`", span)?;
    let Value::Tensor(tv) = &t.value else {
        return Err(Diagnostic::error(
            format!("`print_tensor` takes a tensor, found {}", crate::diag::article(&t.value.kind())),
            t.span,
            "not a tensor",
        ));
    };
    let frag = method(f, t.value.clone(), &crate::ast::Ident { name: "load".into(), span }, Vec::new(), span)?;
    let Value::Frag(ft, fid) = frag else { unreachable!("load gives a fragment") };
    let modes: Vec<usize> = match &tv.ty.layout.shape {
        IntTuple::Int(_) => vec![ft.len()],
        IntTuple::Tuple(items) => {
            items.iter().map(|m| m.product().ok().and_then(|p| p.as_static()).unwrap_or(1) as usize).collect()
        }
    };
    let mut elems = Vec::with_capacity(ft.len());
    for i in 0..ft.len() {
        let dst = f.fresh(ValueTy::Scalar(ft.elem));
        f.emit(Inst::Extract { dst, ty: ft.elem, frag: fid, index: i, span });
        elems.push(FmtSeg::Value(ft.elem, dst));
    }
    let mut segs =
        vec![FmtSeg::Text(format!("tensor({}, {}, align<{}>) o ", tv.ty.elem.name(), tv.ty.space.name(), tv.ty.align))];
    segments(&Value::Layout(tv.ty.layout.clone()), &mut segs, span)?;
    if verbose {
        segs.push(FmtSeg::Text(", data= (\n".into()));
        // Row-major over the coordinates, as CuTe's verbose print lists them.
        let n = ft.len();
        for k in 0..n {
            let mut coord = vec![0usize; modes.len()];
            let mut rest = k;
            for (i, m) in modes.iter().enumerate().rev() {
                coord[i] = rest % m.max(&1);
                rest /= m.max(&1);
            }
            let mut index = 0;
            let mut stride = 1;
            for (c, m) in coord.iter().zip(&modes) {
                index += c * stride;
                stride *= m;
            }
            let text: Vec<String> = coord.iter().map(|c| c.to_string()).collect();
            segs.push(FmtSeg::Text(format!("\t({})= ", text.join(","))));
            segs.push(elems[index].clone());
            segs.push(FmtSeg::Text("\n".into()));
        }
        segs.push(FmtSeg::Text(")\n".into()));
    } else {
        segs.push(FmtSeg::Text(", data=\n       ".into()));
        nested(&modes, &elems, 0, &mut segs, 8);
        segs.push(FmtSeg::Text("\n".into()));
    }
    f.emit(Inst::Printf { segments: segs, span });
    Ok(Value::Unit)
}

/// Elements of a tensor in CuTe's torch-style nesting; `base` is the colexicographic index of the
/// first element of this block.
fn nested(modes: &[usize], elems: &[FmtSeg], base: usize, out: &mut Vec<FmtSeg>, indent: usize) {
    let stride_of = |i: usize| modes[..i].iter().product::<usize>();
    match modes.len() {
        0 => {}
        1 => {
            out.push(FmtSeg::Text("[".into()));
            for j in 0..modes[0] {
                out.push(FmtSeg::Text(if j == 0 { " ".into() } else { "  ".into() }));
                out.push(elems[base + j].clone());
                out.push(FmtSeg::Text(",".into()));
            }
            out.push(FmtSeg::Text(" ]".into()));
        }
        2 => {
            out.push(FmtSeg::Text("[".into()));
            for i in 0..modes[0] {
                if i > 0 {
                    out.push(FmtSeg::Text(format!(",\n{}", " ".repeat(indent))));
                }
                out.push(FmtSeg::Text("[".into()));
                for j in 0..modes[1] {
                    out.push(FmtSeg::Text(if j == 0 { " ".into() } else { "  ".into() }));
                    out.push(elems[base + i + j * modes[0]].clone());
                    out.push(FmtSeg::Text(",".into()));
                }
                out.push(FmtSeg::Text(" ]".into()));
            }
            out.push(FmtSeg::Text("]".into()));
        }
        r => {
            // The last mode is outermost; each of its entries is a block of the other modes.
            let last = r - 1;
            out.push(FmtSeg::Text("[".into()));
            for k in 0..modes[last] {
                if k > 0 {
                    out.push(FmtSeg::Text(format!(",\n{}", " ".repeat(indent))));
                }
                nested(&modes[..last], elems, base + k * stride_of(last), out, indent + 1);
            }
            out.push(FmtSeg::Text("]".into()));
        }
    }
}

/// A math function on a float scalar or fragment (CuTe DSL's `cute.math.*`); `abs` on any number.
fn math(f: &mut Frame, fun: MathFn, v: &Value, span: Span) -> R<Value> {
    if let Value::Float(x) = v {
        let r = match fun {
            MathFn::Sqrt => x.sqrt(),
            MathFn::Rsqrt => 1.0 / x.sqrt(),
            MathFn::Exp => x.exp(),
            MathFn::Exp2 => x.exp2(),
            MathFn::Log => x.ln(),
            MathFn::Log2 => x.log2(),
            MathFn::Log10 => x.log10(),
            MathFn::Sin => x.sin(),
            MathFn::Cos => x.cos(),
            MathFn::Tan => x.tan(),
            MathFn::Tanh => x.tanh(),
            MathFn::Floor => x.floor(),
            MathFn::Ceil => x.ceil(),
            MathFn::Round => x.round(),
            MathFn::Abs => x.abs(),
            MathFn::Erf => {
                return Err(Diagnostic::error("`erf` of a literal is not computed at compile time", span, "literal")
                    .with_help("give the literal a type first, e.g. `erf(x.to(f32))`"))
            }
        };
        return Ok(Value::Float(r));
    }
    let (ty, frag, a) = match v {
        Value::Scalar(s, id) => (*s, None, Operand::Value(*id)),
        Value::Frag(ft, id) => (ft.elem, Some(ft.len()), Operand::Value(*id)),
        Value::Int(i) if fun == MathFn::Abs => (Scalar::I32, None, Operand::Int(i.clone())),
        other => {
            return Err(Diagnostic::error(
                format!("`{}` takes a float value or fragment, found a {}", fun.name(), other.kind()),
                span,
                "not a float",
            ))
        }
    };
    if !ty.is_float() && fun != MathFn::Abs {
        return Err(Diagnostic::error(
            format!("`{}` takes floats, found `{}`", fun.name(), ty.name()),
            span,
            "not a float",
        )
        .with_help("convert with `.to(f32)`"));
    }
    f.need_kernel(&format!("`{}`", fun.name()), span)?;
    f.no_fp8_arith(ty, &format!("`{}`", fun.name()), span)?;
    let dst = f.fresh(f.result_ty(ty, frag, v));
    f.emit(Inst::Math { dst, fun, ty, frag, a, span });
    Ok(f.result_value(ty, frag, v, dst))
}

/// `fragment.reduce(op, init, profile)`: profile `0` reduces every element to one value; a tuple
/// with one entry per mode reduces the modes marked `1` and keeps those marked `_` (CuTe's
/// reduction_profile), giving a fragment of the kept modes.
fn reduce(
    f: &mut Frame,
    op: &str,
    ft: &FragTy,
    fid: crate::kir::ValueId,
    init: Option<Value>,
    profile: Option<&Arg>,
    span: Span,
) -> R<Value> {
    f.no_fp8_arith(ft.elem, "`reduce`", span)?;
    let modes: Vec<i64> = match &ft.shape {
        IntTuple::Int(_) => vec![ft.len() as i64],
        IntTuple::Tuple(items) => {
            items.iter().map(|m| m.product().ok().and_then(|p| p.as_static()).unwrap_or(1)).collect()
        }
    };
    // Which top-level modes are reduced.
    let reduced: Vec<bool> = match profile.map(|p| &p.value) {
        None => vec![true; modes.len()],
        Some(Value::Int(i)) if i.as_static() == Some(0) => vec![true; modes.len()],
        Some(Value::Tuple(items)) if items.len() == modes.len() => items
            .iter()
            .map(|v| match v {
                Value::Under => Ok(false),
                Value::Int(i) if i.as_static() == Some(1) => Ok(true),
                _ => Err(Diagnostic::error(
                    "profile entries are `1` (reduce this mode) or `_` (keep it)",
                    profile.map_or(span, |p| p.span),
                    "invalid profile",
                )),
            })
            .collect::<R<_>>()?,
        Some(_) => {
            return Err(Diagnostic::error(
                format!(
                    "the profile is `0` or a tuple of {} entries (`1` or `_`), one per mode of {}",
                    modes.len(),
                    ft.shape
                ),
                profile.map_or(span, |p| p.span),
                "invalid profile",
            ));
        }
    };
    let mut strides = Vec::with_capacity(modes.len());
    let mut acc = 1i64;
    for m in &modes {
        strides.push(acc);
        acc *= m;
    }
    let kept: Vec<usize> = (0..modes.len()).filter(|i| !reduced[*i]).collect();
    // A whole fragment folded by a builtin operator is one register-level reduction in the IR.
    let builtin = match op {
        "add" => Some(BinaryOp::Add),
        "mul" => Some(BinaryOp::Mul),
        "max" => Some(BinaryOp::Max),
        "min" => Some(BinaryOp::Min),
        _ => None,
    };
    if let (true, Some(bop), false) = (kept.is_empty() && ft.len() > 0, builtin, ft.elem == Scalar::Bool) {
        let init = match init {
            Some(v) => {
                let v = f.coerce(v, ft.elem, span)?;
                Some(f.operand(&v, ft.elem, span)?)
            }
            None => None,
        };
        let dst = f.fresh(ValueTy::Scalar(ft.elem));
        f.emit(Inst::Reduce { dst, op: bop, ty: ft.elem, frag: fid, init, span });
        return Ok(Value::Scalar(ft.elem, dst));
    }
    let red: Vec<usize> = (0..modes.len()).filter(|i| reduced[*i]).collect();
    let count = |idx: &[usize]| idx.iter().map(|i| modes[*i]).product::<i64>();
    let mut results = Vec::new();
    // Colexicographic walks over the kept and the reduced modes.
    for k in 0..count(&kept) {
        let mut base = 0;
        let mut rest = k;
        for i in &kept {
            base += (rest % modes[*i]) * strides[*i];
            rest /= modes[*i];
        }
        let mut value = init.clone();
        for r in 0..count(&red) {
            let mut index = base;
            let mut rest = r;
            for i in &red {
                index += (rest % modes[*i]) * strides[*i];
                rest /= modes[*i];
            }
            let dst = f.fresh(ValueTy::Scalar(ft.elem));
            f.emit(Inst::Extract { dst, ty: ft.elem, frag: fid, index: index as usize, span });
            let x = Value::Scalar(ft.elem, dst);
            value = Some(match value {
                None => x,
                Some(a) => {
                    let a = f.coerce(a, ft.elem, span)?;
                    f.call_value(op, vec![a, x], span)?
                }
            });
        }
        results.push(
            value.ok_or_else(|| Diagnostic::error("cannot reduce an empty fragment without `init:`", span, "empty"))?,
        );
    }
    if kept.is_empty() {
        return results.pop().ok_or_else(|| Diagnostic::error("nothing to reduce", span, "empty"));
    }
    let shape = if kept.len() == 1 {
        IntTuple::Int(Int::S(modes[kept[0]]))
    } else {
        IntTuple::Tuple(kept.iter().map(|i| IntTuple::Int(Int::S(modes[*i]))).collect())
    };
    let out = FragTy { elem: ft.elem, shape };
    let mut elems = Vec::new();
    for r in results {
        let r = f.coerce(r, ft.elem, span)?;
        elems.push(f.operand(&r, ft.elem, span)?);
    }
    let dst = f.fresh(ValueTy::Frag(out.clone()));
    f.emit(Inst::FromElements { dst, ty: ft.elem, elems, span });
    Ok(Value::Frag(out, dst))
}
