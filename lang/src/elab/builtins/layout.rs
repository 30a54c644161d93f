//! The layout builtins: queries, construction and the algebra (CuTe's `layout.hpp` and
//! `cute.core`), on layouts or on tensors, where they give views of the same memory.

use super::args::{
    int_tuple, layout_of, modes_list, named, positional, static_usize, tiler_of, type_bits, value_crd, Arg,
};
use crate::diag::Diagnostic;
use crate::elab::value::Value;
use crate::elab::{layout_err, Frame, R};
use crate::kir::ViewHow;
use crate::span::Span;
use cute_layout::expr::{self, Value as XValue};
use cute_layout::{Int, Layout, Tiler};

/// The result of a layout operation on the first argument: a layout, or a view when it was a tensor.
pub(super) fn rewrap(f: &mut Frame, first: &Arg, layout: Layout, offset: Int, how: ViewHow, span: Span) -> R<Value> {
    Ok(match &first.value {
        Value::Tensor(t) => Value::Tensor(f.view(t, layout, offset, how, span)?),
        Value::Counting { origin, .. } => {
            Value::Counting { layout, origin: origin.add(&offset).map_err(|e| layout_err(e, span))? }
        }
        _ => Value::Layout(layout),
    })
}

/// Static mode indices as arguments of an algebra op.
pub(super) fn index_values(ix: &[usize]) -> Vec<XValue> {
    ix.iter().map(|&i| XValue::Int(Int::S(i as i64))).collect()
}

pub(super) fn size_like(_f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
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

pub(super) fn make_layout(_f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let shape = int_tuple(positional(&args)[0], "a shape")?;
    match named(name, &args, "stride", &["stride"])? {
        Some(s) => {
            let stride = int_tuple(s, "a stride")?;
            Layout::new(shape, stride).map(Value::Layout).map_err(|e| layout_err(e, s.span))
        }
        None => Layout::col_major(shape).map(Value::Layout).map_err(lerr),
    }
}

pub(super) fn make_ordered_layout(_f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let shape = int_tuple(positional(&args)[0], "a shape")?;
    let order = named(name, &args, "order", &["order"])?
        .ok_or_else(|| Diagnostic::error("`make_ordered_layout` needs `order:`", span, "missing order"))?;
    Layout::ordered(shape, &int_tuple(order, "an order")?).map(Value::Layout).map_err(lerr)
}

pub(super) fn make_layout_tv(_f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let p = positional(&args);
    let (tiler, tv) = cute_layout::make_layout_tv(&layout_of(p[0])?, &layout_of(p[1])?).map_err(lerr)?;
    Ok(Value::Tuple(vec![Value::from_int_tuple(&tiler), Value::Layout(tv)]))
}

pub(super) fn make_identity_tensor(_f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let shape = int_tuple(positional(&args)[0], "a shape")?;
    Ok(Value::Counting { layout: Layout::identity(shape).map_err(lerr)?, origin: Int::ZERO })
}

pub(super) fn composition(f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let p = positional(&args);
    if let Some(r) = crate::elab::swizzle::composition(&p, span) {
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

pub(super) fn complement(_f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
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

pub(super) fn inverse_or_flatten(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
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

pub(super) fn coalesce(f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
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

pub(super) fn divide_or_product(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
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

pub(super) fn blocked_raked_product(_f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
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

pub(super) fn select(f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let p = positional(&args);
    let modes = modes_list(p[1])?;
    let r = layout_of(p[0])?.select(&modes).map_err(lerr)?;
    rewrap(f, p[0], r, Int::ZERO, ViewHow::algebra("select", index_values(&modes)), span)
}

pub(super) fn get(f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let p = positional(&args);
    let path = modes_list(p[1])?;
    let r = layout_of(p[0])?.get(&path).map_err(lerr)?;
    rewrap(f, p[0], r, Int::ZERO, ViewHow::algebra("get", index_values(&path)), span)
}

pub(super) fn group_modes(f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let p = positional(&args);
    let (b, e) = (static_usize(p[1], "`begin`")?, static_usize(p[2], "`end`")?);
    let r = layout_of(p[0])?.group_modes(b, e).map_err(lerr)?;
    rewrap(f, p[0], r, Int::ZERO, ViewHow::algebra("group_modes", index_values(&[b, e])), span)
}

pub(super) fn local_tile(f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
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

pub(super) fn local_partition(f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
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

pub(super) fn crd2idx(_f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
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

pub(super) fn idx2crd(_f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let p = positional(&args);
    let idx = int_tuple(p[0], "an index")?;
    let shape = int_tuple(p[1], "a shape")?;
    let r = match p.get(2) {
        Some(d) => cute_layout::idx2crd_strided(&idx, &shape, &int_tuple(d, "a stride")?),
        None => cute_layout::idx2crd(&idx, &shape),
    };
    Ok(Value::from_int_tuple(&r.map_err(lerr)?))
}

pub(super) fn take(f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let p = positional(&args);
    let (b, e) = (static_usize(p[1], "`begin`")?, static_usize(p[2], "`end`")?);
    let r = layout_of(p[0])?.take(b, e).map_err(lerr)?;
    // CuTe's take<B,E> is select<B, ..., E-1>: the same view op.
    rewrap(f, p[0], r, Int::ZERO, ViewHow::algebra("select", index_values(&(b..e).collect::<Vec<_>>())), span)
}

pub(super) fn dice(_f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
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

pub(super) fn filter_zeros(f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let p = positional(&args);
    let r = cute_layout::filter_zeros(&layout_of(p[0])?).map_err(lerr)?;
    // On a tensor, the same memory seen through the filtered layout (CuTe's
    // `filter_zeros(tensor)`): its broadcast modes read one element.
    rewrap(f, p[0], r.clone(), Int::ZERO, ViewHow::algebra("make_view", vec![XValue::Layout(r)]), span)
}

pub(super) fn max_common(_f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let p = positional(&args);
    let (a, b) = (layout_of(p[0])?, layout_of(p[1])?);
    if name == "max_common_vector" {
        cute_layout::max_common_vector(&a, &b).map(Value::Int).map_err(lerr)
    } else {
        cute_layout::max_common_layout(&a, &b).map(Value::Layout).map_err(lerr)
    }
}

pub(super) fn recast_layout(_f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let p = positional(&args);
    let (new_bits, old_bits) = (type_bits(p[0])?, type_bits(p[1])?);
    cute_layout::recast_layout(new_bits, old_bits, &layout_of(p[2])?).map(Value::Layout).map_err(lerr)
}
