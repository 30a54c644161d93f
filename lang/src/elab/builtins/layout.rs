//! The layout builtins: queries, construction and the algebra (CuTe's `layout.hpp` and
//! `cute.core`), on layouts or on tensors, where they give views of the same memory.
//!
//! The algebra itself is `cute_layout::expr`'s, the one the passes re-run: a builtin reads its
//! arguments with the language's readers (their diagnostics), converts them to `expr` values and
//! calls the operation of the same name through [`apply_to`]. The builtins that are nothing more
//! are rows of [`super::BUILTINS`] with the generic [`algebra`] handler and a list of [`Reader`]s;
//! the others keep a handler of their own for what differs, said at each.

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

/// Reads one argument of an algebra builtin as an `expr` value, with the language's diagnostic
/// when it is not what the operation takes.
pub(super) type Reader = fn(&Arg) -> R<XValue>;

/// The readers of [`Reader`]s, named after what they read.
pub(super) mod read {
    use super::*;

    /// A layout, or the layout of a tensor (the operation's first argument: then the result is a view).
    pub(in crate::elab::builtins) fn layout(a: &Arg) -> R<XValue> {
        layout_of(a).map(XValue::Layout)
    }
    pub(in crate::elab::builtins) fn tiler(a: &Arg) -> R<XValue> {
        tiler_of(&a.value, a.span).map(|t| expr::tiler_to_value(&t))
    }
    pub(in crate::elab::builtins) fn shape(a: &Arg) -> R<XValue> {
        int_tuple(a, "a shape").map(|t| expr::int_tuple_value(&t))
    }
    pub(in crate::elab::builtins) fn profile(a: &Arg) -> R<XValue> {
        int_tuple(a, "a profile").map(|t| expr::int_tuple_value(&t))
    }
    pub(in crate::elab::builtins) fn index(a: &Arg) -> R<XValue> {
        int_tuple(a, "an index").map(|t| expr::int_tuple_value(&t))
    }
    pub(in crate::elab::builtins) fn stride(a: &Arg) -> R<XValue> {
        int_tuple(a, "a stride").map(|t| expr::int_tuple_value(&t))
    }
    /// An element width in bits, from a type or an integer.
    pub(in crate::elab::builtins) fn bits(a: &Arg) -> R<XValue> {
        type_bits(a).map(|b| XValue::Int(Int::S(b)))
    }
    pub(in crate::elab::builtins) fn cotarget(a: &Arg) -> R<XValue> {
        match &a.value {
            Value::Int(i) => Ok(XValue::Int(i.clone())),
            other => Err(Diagnostic::error(
                format!("the cotarget is an integer, not {}", crate::diag::article(&other.kind())),
                a.span,
                "not an integer",
            )),
        }
    }
    pub(in crate::elab::builtins) fn begin(a: &Arg) -> R<XValue> {
        static_usize(a, "`begin`").map(|b| XValue::Int(Int::S(b as i64)))
    }
    pub(in crate::elab::builtins) fn end(a: &Arg) -> R<XValue> {
        static_usize(a, "`end`").map(|e| XValue::Int(Int::S(e as i64)))
    }
}

/// The generic handler: the positional arguments read by `readers`, then [`apply_to`]; a view
/// operation of `expr` (`Operation::view`) on a tensor is a view made by the same operation.
pub(super) fn algebra(f: &mut Frame, name: &str, readers: &[Reader], args: Vec<Arg>, span: Span) -> R<Value> {
    let p = positional(&args);
    let xargs = p.iter().zip(readers).map(|(a, read)| read(a)).collect::<R<Vec<_>>>()?;
    algebra_on(f, p[0], name, &xargs, span)
}

/// The one path of the algebra builtins: `expr`'s operation `op` on `args`, its error at `span`.
/// With `how`, the result is a layout of `first` (a view of it when it is a tensor); without, a value.
fn apply_to(f: &mut Frame, first: &Arg, op: &str, args: &[XValue], how: Option<ViewHow>, span: Span) -> R<Value> {
    match (apply(op, args, span)?, how) {
        (XValue::Layout(l), Some(how)) => rewrap(f, first, l, Int::ZERO, how, span),
        (XValue::Sliced(l, offset), Some(how)) => rewrap(f, first, l, offset, how, span),
        (r, _) => Ok(from_expr(r)),
    }
}

/// `expr`'s operation `op` on `args`, its error at `span`.
fn apply(op: &str, args: &[XValue], span: Span) -> R<XValue> {
    expr::apply(op, args).map_err(|e| layout_err(e, span))
}

/// An `expr` result as a value of the language: a sliced layout (`make_identity_tensor`'s) is a
/// counting tensor.
fn from_expr(v: XValue) -> Value {
    match v {
        XValue::Int(i) => Value::Int(i),
        XValue::Tuple(items) => Value::Tuple(items.into_iter().map(from_expr).collect()),
        XValue::Layout(l) => Value::Layout(l),
        XValue::Sliced(layout, origin) => Value::Counting { layout, origin },
        XValue::Composed(c) => Value::Composed(Box::new(c)),
        XValue::Swizzle(s) => Value::Swizzle(s),
        XValue::Under => Value::Under,
        other => unreachable!("no layout builtin gives {other}"),
    }
}

/// [`apply_to`] with the view `expr` says the operation makes, if any: its arguments after the first.
fn algebra_on(f: &mut Frame, first: &Arg, name: &str, args: &[XValue], span: Span) -> R<Value> {
    let how = expr::is_view_operation(name).then(|| ViewHow::algebra(name, args[1..].to_vec()));
    apply_to(f, first, name, args, how, span)
}

/// Own handler: the named `mode:` argument (a path through `Layout::get`, whose errors name the
/// path: `expr`'s `size(x, modes...)` walks another way), fragments, a tiled MMA's threads and a
/// swizzled layout's inner layout; the query of the layout is `expr`'s.
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
    apply(name, &[XValue::Layout(l)], span).map(from_expr)
}

/// Own handler: the stride is a named argument, and an error of the layout it makes is reported at it.
pub(super) fn make_layout(_f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let shape = read::shape(positional(&args)[0])?;
    match named(name, &args, "stride", &["stride"])? {
        Some(s) => apply(name, &[shape, read::stride(s)?], s.span).map(from_expr),
        None => apply(name, &[shape], span).map(from_expr),
    }
}

/// Own handler: the order is a named argument, which it needs.
pub(super) fn make_ordered_layout(_f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let shape = read::shape(positional(&args)[0])?;
    let order = named(name, &args, "order", &["order"])?
        .ok_or_else(|| Diagnostic::error("`make_ordered_layout` needs `order:`", span, "missing order"))?;
    let order = expr::int_tuple_value(&int_tuple(order, "an order")?);
    apply(name, &[shape, order], span).map(from_expr)
}

/// Own handler only for a swizzle or a swizzled layout (`elab/swizzle.rs`, with its own
/// diagnostics); the rest is generic.
pub(super) fn composition(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    if let Some(r) = crate::elab::swizzle::composition(&positional(&args), span) {
        return r;
    }
    algebra(f, name, &[read::layout, read::tiler], args, span)
}

/// Own handler: the view gives the modes one by one (as the passes print them), while `expr` is
/// given them as one list, which may be empty; the modes are read before the layout.
pub(super) fn select(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let p = positional(&args);
    let modes = modes_list(p[1])?;
    let args = [read::layout(p[0])?, XValue::Tuple(index_values(&modes))];
    apply_to(f, p[0], name, &args, Some(ViewHow::algebra(name, index_values(&modes))), span)
}

/// Own handler: `get` of a layout reports a bad mode by its whole path (`Layout::get`), where
/// `expr`'s `get` walks values one index at a time with other errors.
pub(super) fn get(f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let p = positional(&args);
    let path = modes_list(p[1])?;
    let r = layout_of(p[0])?.get(&path).map_err(lerr)?;
    rewrap(f, p[0], r, Int::ZERO, ViewHow::algebra("get", index_values(&path)), span)
}

/// Own handler only for the order of its diagnostics: `begin` and `end` are read before the layout.
pub(super) fn group_modes(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let p = positional(&args);
    let (b, e) = (read::begin(p[1])?, read::end(p[2])?);
    algebra_on(f, p[0], name, &[read::layout(p[0])?, b, e], span)
}

/// Own handler: on a tensor, its tiles must cover it (checked before the algebra).
pub(super) fn local_tile(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let p = positional(&args);
    let l = layout_of(p[0])?;
    let t = tiler_of(&p[1].value, p[1].span)?;
    let crd = value_crd(&p[2].value, p[2].span)?;
    // The tiles of a tensor must cover its memory exactly, though the slice keeps only one of
    // them. A counting tensor reads no memory: its partial tiles are what predication uses.
    // A static tile coordinate past the tiles would address memory outside the tensor.
    if matches!(p[0].value, Value::Tensor(_)) {
        f.require_tiles_divide(&l, &t, span)?;
        if let Ok(tiles) = cute_layout::zipped_divide(&l, &t).and_then(|z| z.mode(1)) {
            f.in_bounds(&crd, &tiles, p[2].span)?;
        }
    }
    algebra_on(f, p[0], name, &[XValue::Layout(l), expr::tiler_to_value(&t), expr::crd_value(&crd)], span)
}

/// Own handler: the thread index must be an integer (its own diagnostic), and on a tensor the
/// threads' tiles must cover it (checked before the algebra).
pub(super) fn local_partition(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let p = positional(&args);
    let l = layout_of(p[0])?;
    let thr = layout_of(p[1])?;
    let Value::Int(idx) = &p[2].value else {
        return Err(Diagnostic::error("the thread index must be an integer", p[2].span, "not an integer"));
    };
    let tiler = Tiler::Shape(thr.shape.product_each().map_err(lerr)?);
    // A static thread index past the threads would address memory outside the tensor.
    if matches!(p[0].value, Value::Tensor(_)) {
        f.require_tiles_divide(&l, &tiler, span)?;
        f.in_bounds(&cute_layout::Crd::Int(idx.clone()), &thr, p[2].span)?;
    }
    algebra_on(f, p[0], name, &[XValue::Layout(l), XValue::Layout(thr), XValue::Int(idx.clone())], span)
}

/// Own handler: the layout form (`crd2idx(coord, layout)`, no stride, no basis strides) and the
/// default stride's error at the shape; the index itself is `expr`'s.
pub(super) fn crd2idx(_f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
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
    let args = [&crd, &shape, &stride].map(expr::int_tuple_value);
    apply(name, &args, span).map(from_expr)
}

/// Own handler: CuTe's take<B,E> is select<B, ..., E-1>, so on a tensor it is a `select` view
/// (`expr`'s `take` is no view operation); `begin` and `end` are read before the layout.
pub(super) fn take(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let p = positional(&args);
    let (b, e) = (static_usize(p[1], "`begin`")?, static_usize(p[2], "`end`")?);
    let args = [read::layout(p[0])?, XValue::Int(Int::S(b as i64)), XValue::Int(Int::S(e as i64))];
    let how = ViewHow::algebra("select", index_values(&(b..e).collect::<Vec<_>>()));
    apply_to(f, p[0], name, &args, Some(how), span)
}

/// Own handler only for the order of its diagnostics: the coordinate is read before the shape or
/// layout it dices.
pub(super) fn dice(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let p = positional(&args);
    let crd = expr::crd_value(&value_crd(&p[1].value, p[1].span)?);
    let x = match &p[0].value {
        Value::Int(_) | Value::Tuple(_) => read::shape(p[0])?,
        _ => read::layout(p[0])?,
    };
    algebra_on(f, p[0], name, &[x, crd], span)
}

/// Own handler: on a tensor, the same memory seen through the filtered layout (CuTe's
/// `filter_zeros(tensor)`: its broadcast modes read one element), a `make_view` of it.
pub(super) fn filter_zeros(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let p = positional(&args);
    let XValue::Layout(r) = apply(name, &[read::layout(p[0])?], span)? else {
        unreachable!("expr's filter_zeros gives a layout")
    };
    rewrap(f, p[0], r.clone(), Int::ZERO, ViewHow::algebra("make_view", vec![XValue::Layout(r)]), span)
}
