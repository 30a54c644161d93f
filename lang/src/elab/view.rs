//! Tensor coordinates and views: a coordinate checked against a layout, slices, and the other
//! layouts over the same memory.

use super::value::{Origin, TensorVal, Value};
use super::{layout_err, swizzle, Frame, Mode, R};
use crate::ast::Expr;
use crate::diag::Diagnostic;
use crate::kir::{self, Inst, TensorTy, ValueId, ValueTy};
use crate::span::Span;
use crate::types::Scalar;
use cute_abi::manifest::Need;
use cute_layout::{Int, IntTuple, Layout};

/// The alignment a view keeps: its base's, unless the element offset proves less.
fn view_align(base_align: u32, offset: &Int, elem_bytes: u32) -> u32 {
    cute_layout::int::offset_alignment(base_align, offset, elem_bytes)
}

impl Frame<'_, '_> {
    /// A coordinate from index expressions: one expression (possibly a tuple), or several (a tuple).
    pub(crate) fn coordinate(&mut self, index: &[Expr]) -> R<cute_layout::Crd> {
        fn crd(v: &Value, span: Span) -> R<cute_layout::Crd> {
            Ok(match v {
                Value::Int(i) => cute_layout::Crd::Int(i.clone()),
                Value::Under => cute_layout::Crd::Under,
                Value::Tuple(items) => cute_layout::Crd::Tuple(items.iter().map(|i| crd(i, span)).collect::<R<_>>()?),
                other => {
                    return Err(Diagnostic::error(
                        format!(
                            "coordinates are integers, `_` and tuples of them, not {}",
                            crate::diag::article(&other.kind())
                        ),
                        span,
                        "not a coordinate",
                    ))
                }
            })
        }
        if index.len() == 1 {
            let v = self.expr(&index[0])?;
            return crd(&v, index[0].span);
        }
        let items = index.iter().map(|e| self.expr(e).and_then(|v| crd(&v, e.span))).collect::<R<_>>()?;
        Ok(cute_layout::Crd::Tuple(items))
    }

    /// The sub-tensor at a coordinate with `_` entries (CuTe's slicing).
    pub(crate) fn slice(&mut self, t: &TensorVal, crd: &cute_layout::Crd, span: Span) -> R<TensorVal> {
        self.in_bounds(crd, &t.ty.layout, span)?;
        let crd = natural_coordinate(crd, &t.ty.layout.shape);
        let (layout, offset) = element_offset(&crd, &t.ty.layout, self.index_bits, span)?;
        self.view(t, layout, offset, kir::ViewHow::algebra("slice", vec![cute_layout::expr::crd_value(&crd)]), span)
    }

    /// A tensor over the same memory with a new layout, its base moved by `offset` elements, made by
    /// the CuTe operation `how` (which the kernel's IR keeps).
    pub(crate) fn view(
        &mut self,
        t: &TensorVal,
        layout: Layout,
        offset: Int,
        how: kir::ViewHow,
        span: Span,
    ) -> R<TensorVal> {
        self.view_with(t, layout, offset, how, t.ty.swizzle, span)
    }

    /// Whether `id` is a tensor an `alloc` made (not a view of one).
    pub(crate) fn is_allocation(&self, id: ValueId) -> bool {
        self.specials.iter().any(|i| matches!(i, Inst::Alloc { dst, .. } | Inst::LaunchSmem { dst, .. } if *dst == id))
    }

    /// A view whose swizzle is `swizzle`: the source's for every CuTe operation, a new one (or none)
    /// when `make_tensor` lays the memory out again. A new swizzle acts on offsets from the view's
    /// base.
    pub(crate) fn view_with(
        &mut self,
        t: &TensorVal,
        layout: Layout,
        offset: Int,
        how: kir::ViewHow,
        swizzle: Option<cute_layout::Swizzle>,
        span: Span,
    ) -> R<TensorVal> {
        self.view_as(t, t.ty.elem, layout, offset, how, swizzle, span)
    }

    /// A view whose elements are `elem` (the source's, but for `recast`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn view_as(
        &mut self,
        t: &TensorVal,
        elem: Scalar,
        layout: Layout,
        offset: Int,
        how: kir::ViewHow,
        swizzle: Option<cute_layout::Swizzle>,
        span: Span,
    ) -> R<TensorVal> {
        if self.mode != Mode::Const {
            self.require_whole_tiles(&layout, span);
        }
        let mut align = view_align(t.ty.align, &offset, t.ty.elem.size_bytes());
        if let Some(sw) = swizzle {
            align = swizzle::swizzled_align(align, sw, t.ty.elem.size_bytes());
        }
        let ty = TensorTy { elem, space: t.ty.space, align, layout, swizzle };
        match &t.origin {
            Origin::Host { param, offset: base } => {
                for r in std::mem::take(&mut self.staged) {
                    self.add_require(r);
                }
                let total = base.add(&offset).map_err(|e| layout_err(e, span))?;
                Ok(TensorVal { ty, origin: Origin::Host { param: *param, offset: total } })
            }
            Origin::Kernel(src) => {
                let dst = self.fresh(ValueTy::Tensor(ty.clone()));
                let mut reqs = std::mem::take(&mut self.staged);
                reqs.extend(self.pending.get(src).into_iter().flatten().cloned());
                if !reqs.is_empty() {
                    self.pending.insert(dst, reqs);
                }
                self.emit(Inst::View { dst, src: *src, how, ty: ty.clone(), span });
                Ok(TensorVal { ty, origin: Origin::Kernel(dst) })
            }
        }
    }
}

/// `crd` with every integer that indexes a mode of several run-time extents replaced by its
/// natural coordinate (CuTe's `idx2crd`, colexicographic), as symbolic integers. The divisions are
/// then the front end's, which code generation turns into multiplies by the runtime's fast
/// divisors (design.md (n)), instead of `udiv`s the layout canonicalization would emit. The last
/// leaf takes no remainder: an index in range is below the mode's size.
fn natural_coordinate(crd: &cute_layout::Crd, shape: &IntTuple) -> cute_layout::Crd {
    use cute_layout::Crd;
    match (crd, shape) {
        (Crd::Tuple(cs), IntTuple::Tuple(ss)) if cs.len() == ss.len() => {
            Crd::Tuple(cs.iter().zip(ss).map(|(c, s)| natural_coordinate(c, s)).collect())
        }
        (Crd::Int(i), IntTuple::Tuple(_)) if !shape.is_static() => {
            fn build(i: &Int, shape: &IntTuple, stride: &mut Int, last: &mut usize, leaves: usize) -> Option<Crd> {
                match shape {
                    IntTuple::Tuple(items) => Some(Crd::Tuple(
                        items.iter().map(|s| build(i, s, stride, last, leaves)).collect::<Option<_>>()?,
                    )),
                    IntTuple::Int(s) => {
                        *last += 1;
                        let q = if stride.is(1) { i.clone() } else { i.floor_div(stride).ok()? };
                        let c = if *last == leaves || s.is(1) { q } else { q.modulo(s).ok()? };
                        *stride = stride.mul(s).ok()?;
                        Some(Crd::Int(if s.is(1) { Int::S(0) } else { c }))
                    }
                }
            }
            let leaves = shape.leaves().len();
            build(i, shape, &mut Int::S(1), &mut 0, leaves).unwrap_or_else(|| crd.clone())
        }
        _ => crd.clone(),
    }
}

pub(super) fn crd_has_under(c: &cute_layout::Crd) -> bool {
    match c {
        cute_layout::Crd::Under => true,
        cute_layout::Crd::Int(_) => false,
        cute_layout::Crd::Tuple(items) => items.iter().any(crd_has_under),
    }
}

/// A coordinate must have one entry per mode of the layout, or be one linear index.
pub(super) fn check_rank(crd: &cute_layout::Crd, layout: &Layout, span: Span) -> R<()> {
    if let cute_layout::Crd::Tuple(items) = crd {
        let rank = layout.rank();
        if items.len() != rank {
            return Err(Diagnostic::error(
                format!("this tensor has rank {rank} but the coordinate has {} entries", items.len()),
                span,
                format!("{} coordinates", items.len()),
            )
            .with_secondary(span, format!("layout {layout}"))
            .with_help(format!("give {rank} coordinates, or one linear index")));
        }
    }
    Ok(())
}

pub(super) fn coord_err(e: cute_layout::Error, layout: &Layout, span: Span) -> Diagnostic {
    Diagnostic::error(format!("this coordinate does not fit the tensor: {e}"), span, format!("layout {layout}"))
        .with_help("give one coordinate per mode (nested like the shape), or one linear index")
}

/// The element offset of a coordinate in a tensor's layout, and the layout of what it leaves free
/// (`slice_and_offset`), refused where the kernel's index arithmetic (`bits` wide: 32, or 64 with
/// `index(i64)`) could not hold it: a static offset, or with a run-time coordinate a static stride,
/// outside that range (the lowering makes each a constant of the index type, and a larger one would
/// wrap to another address), and where a static coordinate falls outside its mode
/// ([`check_in_bounds`]).
pub(super) fn element_offset(crd: &cute_layout::Crd, layout: &Layout, bits: u32, span: Span) -> R<(Layout, Int)> {
    let (sliced, offset) = cute_layout::slice_and_offset(crd, layout).map_err(|e| coord_err(e, layout, span))?;
    check_in_bounds(crd, layout, span)?;
    let fits = |v: i64| bits >= 64 || i32::try_from(v).is_ok();
    let too_large = match offset.as_static() {
        Some(v) => (!fits(v)).then(|| format!("the element offset {v}")),
        None => layout.leaves().into_iter().find_map(|(_, d)| match d {
            Int::S(v) if !fits(v) => Some(format!("the stride {v}")),
            _ => None,
        }),
    };
    match too_large {
        Some(what) => Err(Diagnostic::error(
            format!("{what} is out of the 32-bit index range the kernel computes in"),
            span,
            format!("layout {layout}"),
        )
        .with_help("kernels index memory with 32-bit integers unless they ask for `index(i64)` after their parameters: keep offsets and strides below 2^31 elements, e.g. by indexing a tile of the tensor (`local_tile`), or compute in 64 bits")),
        None => Ok((sliced, offset)),
    }
}

/// A static coordinate outside its mode's static extent (or below 0) is refused: the layout maps
/// it anyway, to an address outside the tensor, that no launch check can see (the manifest gives
/// the shape, not the accesses). A coordinate in a run-time mode is only checked against 0 here;
/// [`Frame::in_bounds`] makes its upper bound a launch condition.
pub(super) fn check_in_bounds(crd: &cute_layout::Crd, layout: &Layout, span: Span) -> R<()> {
    let outside = static_coordinates(crd, &layout.shape).into_iter().find_map(|(index, part, mode)| {
        let extent = part.product().ok().and_then(|n| n.as_static());
        (index < 0 || extent.is_some_and(|n| index >= n)).then_some((index, extent, mode))
    });
    let Some((index, extent, mode)) = outside else {
        return Ok(());
    };
    let what = if mode.is_empty() { format!("the index {index}") } else { format!("the coordinate {index}") };
    let valid = match extent {
        Some(n) => format!("{n} positions: 0 to {}", n - 1),
        None => "positions from 0".to_string(),
    };
    Err(Diagnostic::error(
        format!("{what} is outside {}", mode_of_shape(&mode, &layout.shape)),
        span,
        format!("out of bounds: {valid}"),
    )
    .with_secondary(span, format!("layout {layout}"))
    .with_help(
        "a static coordinate must lie within its mode's extent: one outside it addresses memory outside the tensor",
    ))
}

/// `the shape S`, `mode M of the shape S` or `mode (M, N) of the shape S`: where the mode path
/// `mode` leads in `shape`.
fn mode_of_shape(mode: &[usize], shape: &IntTuple) -> String {
    match mode {
        [] => format!("the shape {shape}"),
        [m] => format!("mode {m} of the shape {shape}"),
        path => {
            let path = path.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(", ");
            format!("mode ({path}) of the shape {shape}")
        }
    }
}

/// Every static leaf of `crd` with the part of `shape` it indexes and the mode path to it.
fn static_coordinates(crd: &cute_layout::Crd, shape: &IntTuple) -> Vec<(i64, IntTuple, Vec<usize>)> {
    fn walk(
        crd: &cute_layout::Crd,
        shape: &IntTuple,
        path: &mut Vec<usize>,
        out: &mut Vec<(i64, IntTuple, Vec<usize>)>,
    ) {
        use cute_layout::Crd;
        match (crd, shape) {
            (Crd::Int(i), _) => {
                if let Some(i) = i.as_static() {
                    out.push((i, shape.clone(), path.clone()));
                }
            }
            (Crd::Tuple(cs), IntTuple::Tuple(ss)) if cs.len() == ss.len() => {
                for (m, (c, s)) in cs.iter().zip(ss).enumerate() {
                    path.push(m);
                    walk(c, s, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(crd, shape, &mut Vec::new(), &mut out);
    out
}

/// The coordinate an access (`Load`/`Store` at `At::Coord`) was made with.
fn crd_of_value(v: &cute_layout::expr::Value) -> Option<cute_layout::Crd> {
    use cute_layout::expr::Value as V;
    Some(match v {
        V::Int(i) => cute_layout::Crd::Int(i.clone()),
        V::Under => cute_layout::Crd::Under,
        V::Tuple(items) => cute_layout::Crd::Tuple(items.iter().map(crd_of_value).collect::<Option<_>>()?),
        _ => return None,
    })
}

impl Frame<'_, '_> {
    /// [`check_in_bounds`], and for each static coordinate in a mode whose extent is run-time, the
    /// launch condition that the extent exceeds it, staged for the view being made (held, like a
    /// partial tile's, until the view is accessed unpredicated).
    pub(crate) fn in_bounds(&mut self, crd: &cute_layout::Crd, layout: &Layout, span: Span) -> R<()> {
        check_in_bounds(crd, layout, span)?;
        let bounds = self.bound_requires(crd, layout, span);
        self.staged.extend(bounds);
        Ok(())
    }

    /// A subscript's access (`Load`/`Store` at a coordinate of a tensor of type `ty`): the bounds
    /// of its static coordinates in run-time modes become launch conditions at once.
    pub(super) fn require_access_in_bounds(&mut self, ty: &TensorTy, at: &kir::At, span: Span) {
        let Some(crd) = (match at {
            kir::At::Coord(v) => crd_of_value(v),
            kir::At::Offset(_) => None,
        }) else {
            return;
        };
        for r in self.bound_requires(&crd, &ty.layout, span) {
            self.add_require(r);
        }
    }

    /// The launch conditions that keep the static coordinates of `crd` inside the run-time modes of
    /// `layout`: the mode's extent is at least the coordinate + 1. None for code under a run-time
    /// `if`, loop or guard of a kernel: such code may be written for launches that do not reach it
    /// (`if size(a) > 100 { a[100] = x; }`), and a condition there would refuse them.
    fn bound_requires(&self, crd: &cute_layout::Crd, layout: &Layout, span: Span) -> Vec<kir::Require> {
        if self.mode == Mode::Const || (self.mode == Mode::Kernel && self.depth > 0) {
            return Vec::new();
        }
        static_coordinates(crd, &layout.shape)
            .into_iter()
            .filter_map(|(index, part, mode)| {
                let extent = part.product().ok().filter(|n| !n.is_static())?;
                let what = if mode.is_empty() { "index" } else { "coordinate" };
                Some(kir::Require {
                    value: extent,
                    need: Need::AtLeast(index.checked_add(1)?),
                    what: format!("the static {what} {index} in {}", mode_of_shape(&mode, &layout.shape)),
                    span,
                })
            })
            .collect()
    }
}
