//! Swizzles and swizzled shared-memory tensors: `make_swizzle`, `make_composed_layout`,
//! `composition(swizzle, layout)`, `tile_to_shape`, and the tensors they lay out.
//!
//! A swizzled tensor keeps its swizzle in its type (`TensorTy::swizzle`) and an ordinary layout: the
//! swizzle acts on element offsets from where the composed layout was attached to memory, so views
//! (slices, tiles, partitions) move an unswizzled base and keep the swizzle, as CuTe's composed
//! layouts do (`S o off o L` sliced is `S o (off + L(c)) o L'`). The bytes an access moves at once
//! stay together only within the swizzle's unmoved runs of 2^M elements, so a swizzled tensor's
//! alignment is capped there and every vector width follows from it.

use super::builtins::args::{arity, named, positional, Arg};
use super::value::{TensorVal, Value};
use super::{layout_err, Frame, R};
use crate::diag::{article, Diagnostic};
use crate::kir::ViewHow;
use crate::span::Span;
use crate::types::MemSpace;
use cute_layout::expr::Value as XValue;
use cute_layout::{ComposedLayout, Int, Layout, Swizzle};

fn static_int(a: &Arg, what: &str) -> R<i64> {
    match &a.value {
        Value::Int(i) => i.as_static().ok_or_else(|| {
            Diagnostic::error(format!("{what} must be a compile-time integer"), a.span, "known only at run time")
        }),
        other => Err(Diagnostic::error(
            format!("{what} must be an integer, found {}", article(&other.kind())),
            a.span,
            "not an integer",
        )),
    }
}

fn plain_layout(a: &Arg) -> R<Layout> {
    match &a.value {
        Value::Layout(l) => Ok(l.clone()),
        Value::Tuple(_) | Value::Int(_) => {
            let shape =
                a.value.to_int_tuple().ok_or_else(|| Diagnostic::error("expected a layout", a.span, "not a layout"))?;
            Layout::col_major(shape).map_err(|e| layout_err(e, a.span))
        }
        other => Err(Diagnostic::error(
            format!("expected a layout, found {}", article(&other.kind())),
            a.span,
            "not a layout",
        )),
    }
}

/// `make_swizzle(B, M, S)`: CuTe's `Swizzle<B,M,S>` (B bits XORed from |S| positions above into the
/// bits above the lowest M).
#[inline(never)]
pub(super) fn make_swizzle(args: &[Arg], span: Span) -> R<Value> {
    arity("make_swizzle", args, 3, 3, span, "make_swizzle(B, M, S)")?;
    named("make_swizzle", args, "", &[])?;
    let p = positional(args);
    let (b, m, s) = (static_int(p[0], "B")?, static_int(p[1], "M")?, static_int(p[2], "S")?);
    Swizzle::new(b, m, s).map(Value::Swizzle).map_err(|e| {
        layout_err(e, span).with_help("CuTe's swizzles for 16-bit shared-memory tiles are make_swizzle(3, 3, 3) (64-element rows), (2, 3, 3) (32) and (1, 3, 3) (16)")
    })
}

fn composed(swizzle: Swizzle, offset: Int, layout: Layout, span: Span) -> R<Value> {
    ComposedLayout::new(swizzle, offset, layout).map(|c| Value::Composed(Box::new(c))).map_err(|e| layout_err(e, span))
}

/// `make_composed_layout(swizzle, offset, layout)`: `c -> swizzle(offset + layout(c))`, CuTe's
/// argument order (the function applied last comes first).
#[inline(never)]
pub(super) fn make_composed_layout(args: &[Arg], span: Span) -> R<Value> {
    arity("make_composed_layout", args, 3, 3, span, "make_composed_layout(make_swizzle(B, M, S), 0, layout)")?;
    named("make_composed_layout", args, "", &[])?;
    let p = positional(args);
    let Value::Swizzle(sw) = p[0].value else {
        return Err(Diagnostic::error(
            format!("the outer function must be a swizzle, found {}", article(&p[0].value.kind())),
            p[0].span,
            "not a swizzle",
        )
        .with_help("write `make_swizzle(B, M, S)`"));
    };
    let Value::Int(offset) = &p[1].value else {
        return Err(Diagnostic::error(
            format!("the offset must be an integer, found {}", article(&p[1].value.kind())),
            p[1].span,
            "not an integer",
        ));
    };
    composed(sw, offset.clone(), plain_layout(p[2])?, span)
}

/// `composition(swizzle, layout)` is the composed layout `swizzle o 0 o layout`;
/// `composition(swizzle o off o L, B)` composes the inner layout (a right action), as CuTe does.
/// `None` when neither argument involves a swizzle (the plain layout algebra handles it).
#[inline(never)]
pub(super) fn composition(p: &[&Arg], span: Span) -> Option<R<Value>> {
    match (&p[0].value, &p[1].value) {
        (Value::Swizzle(sw), _) => Some(plain_layout(p[1]).and_then(|l| composed(*sw, Int::ZERO, l, span))),
        (Value::Composed(c), Value::Layout(b)) => Some(
            c.map(|a| cute_layout::composition(a, b))
                .map(|c| Value::Composed(Box::new(c)))
                .map_err(|e| layout_err(e, span)),
        ),
        (Value::Composed(_), other) => Some(Err(Diagnostic::error(
            format!("a swizzled layout composes with a layout, not {}", article(&other.kind())),
            p[1].span,
            "not a layout",
        ))),
        _ => None,
    }
}

/// `tile_to_shape(atom, shape[, order])`: the atom repeated to cover `shape` (CuTe's, with the
/// repetitions in `order`, column-major by default); a swizzled atom keeps its swizzle, which is how
/// swizzled shared-memory layouts are made (`tile_to_shape(swizzle_atom, (BM, BK, STAGES))`).
#[inline(never)]
pub(super) fn tile_to_shape(args: &[Arg], span: Span) -> R<Value> {
    arity("tile_to_shape", args, 2, 3, span, "tile_to_shape(atom, shape[, order])")?;
    let p = positional(args);
    let order_arg = match named("tile_to_shape", args, "order", &["order"])? {
        Some(a) => Some(a),
        None => p.get(2).copied(),
    };
    let shape = p[1].value.to_int_tuple().ok_or_else(|| {
        Diagnostic::error(
            format!("the shape must be integers or tuples of integers, found {}", article(&p[1].value.kind())),
            p[1].span,
            "not a shape",
        )
    })?;
    let order = match order_arg {
        Some(a) => Some(a.value.to_int_tuple().ok_or_else(|| {
            Diagnostic::error("the order must be integers or tuples of integers", a.span, "not an order")
        })?),
        None => None,
    };
    let tile = |l: &Layout| cute_layout::tile_to_shape(l, &shape, order.as_ref());
    match &p[0].value {
        Value::Composed(c) => c.map(tile).map(|c| Value::Composed(Box::new(c))).map_err(|e| layout_err(e, span)),
        _ => tile(&plain_layout(p[0])?).map(Value::Layout).map_err(|e| layout_err(e, span)),
    }
}

/// The alignment a swizzled tensor's accesses can count on: the swizzle keeps runs of 2^M elements
/// in place, nothing longer.
pub(super) fn swizzled_align(align: u32, sw: Swizzle, elem_bytes: u32) -> u32 {
    let run = (1u64 << sw.base.min(20)) * u64::from(elem_bytes);
    align.min(run.min(u32::MAX as u64) as u32).max(elem_bytes)
}

/// A swizzled layout as a tensor's: the swizzle and the inner layout, the offset being folded into
/// the view's base. Refuses what cannot be memory (a dynamic offset).
fn split(c: &ComposedLayout, span: Span) -> R<(Swizzle, i64, Layout)> {
    let off = c.offset.as_static().ok_or_else(|| {
        Diagnostic::error(format!("the swizzled layout {c} has a run-time offset"), span, "dynamic offset")
            .with_help("a shared-memory tensor's swizzle needs a compile-time offset; use 0")
    })?;
    if off < 0 {
        return Err(Diagnostic::error(
            format!("the swizzled layout {c} has a negative offset"),
            span,
            "negative offset",
        ));
    }
    Ok((c.swizzle, off, c.layout.clone()))
}

/// `make_smem_tensor(T, swizzle o off o layout)`: a shared allocation laid out by a composed layout.
#[inline(never)]
pub(super) fn make_smem_tensor(f: &mut Frame, elem: crate::types::Scalar, c: &ComposedLayout, span: Span) -> R<Value> {
    let (sw, _, layout) = split_at_zero(c, span)?;
    let t = super::builtins::alloc_with(f, elem, MemSpace::Smem, layout, Some(sw), span)?;
    Ok(t)
}

/// A swizzled layout that lays out new memory: its offset must be 0 (the swizzle's origin is the
/// start of the memory).
pub(super) fn split_at_zero(c: &ComposedLayout, span: Span) -> R<(Swizzle, i64, Layout)> {
    let (sw, off, layout) = split(c, span)?;
    if off != 0 {
        return Err(Diagnostic::error(
            format!("new shared memory with the swizzled layout {c}: the offset must be 0"),
            span,
            "non-zero offset",
        )
        .with_help("allocate with offset 0 and slice the tensor instead"));
    }
    Ok((sw, off, layout))
}

/// `make_tensor(t, swizzle o off o layout)`: `t`'s memory seen through a composed layout, whose
/// swizzle acts on offsets from `t`'s first element.
#[inline(never)]
pub(super) fn make_tensor(f: &mut Frame, t: &TensorVal, c: &ComposedLayout, span: Span) -> R<Value> {
    if t.ty.space != MemSpace::Smem {
        return Err(Diagnostic::error(
            format!("a swizzled layout lays out shared memory, not {}", t.ty.space.name()),
            span,
            "not shared memory",
        )
        .with_help("swizzles spread shared-memory accesses over the banks; other memory is not banked"));
    }
    let (sw, off, layout) = split(c, span)?;
    // The swizzle acts on offsets from the start of the allocation (the bank a 16-byte run lands in
    // depends on its address), so a swizzled layout is attached to a whole allocation.
    let is_allocation = match t.origin {
        super::value::Origin::Kernel(id) => f.is_allocation(id),
        super::value::Origin::Host { .. } => false,
    };
    if !is_allocation || off != 0 {
        return Err(Diagnostic::error(format!("a swizzled layout ({c}) can lay out a whole shared allocation only"), span, "not an allocation")
            .with_help("the swizzle acts on offsets from the start of the allocation: pass the tensor `make_smem_tensor` made (not a slice or view of it), with offset 0"));
    }
    let reach =
        layout.cosize().ok().and_then(|c| c.as_static()).map(|n| ((n + off + sw.size() - 1) / sw.size()) * sw.size());
    let have = t.ty.layout.cosize().ok().and_then(|c| c.as_static());
    if let (Some(want), Some(have)) = (reach, have) {
        if want > have {
            return Err(Diagnostic::error(format!("the swizzled layout {c} reaches {want} elements (whole swizzle periods of {}) but the tensor's memory holds {have}", sw.size()), span, "too large for the memory"));
        }
    }
    let how = ViewHow::algebra("make_view", vec![XValue::Composed(c.clone())]);
    Ok(Value::Tensor(f.view_with(t, layout, Int::S(off), how, Some(sw), span)?))
}

/// The alignment a new swizzled allocation gets (its base is [`crate::kir::SMEM_ALIGN`]-aligned).
pub(super) fn alloc_align(sw: Option<Swizzle>, elem_bytes: u32) -> u32 {
    match sw {
        Some(sw) => swizzled_align(16, sw, elem_bytes),
        None => 16,
    }
}
