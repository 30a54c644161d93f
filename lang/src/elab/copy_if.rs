//! Predicated copies: CuTe's `copy_if(atom, pred, src, dst)` (CuTe DSL: `copy(atom, src, dst,
//! pred=...)`) and `copy_if(pred, src, dst)`, and `elem_less`, which predicates are made with.
//!
//! A predicated copy is how tails are handled: the source or destination may be a partial tile (a
//! tile of a run-time extent it does not divide), which an unpredicated access refuses (the launch
//! condition that the extent is a multiple of the tile, held on the view until it is accessed, see
//! `Frame::pending`). Under `copy_if` the accesses are guarded by the predicate, so no condition is
//! added: the predicate, made from an identity tensor partitioned like the data, is what keeps them
//! in bounds.
//!
//! With an atom, mode 0 of `src`/`dst` is one atom's values and `pred` has one entry per atom
//! (the rest modes, indexed colexicographically, as CuTe's `copy_if` groups modes 1..R); without
//! one, `pred` has one entry per element. A false entry skips the copy, except for `cp.async`,
//! which zero-fills its chunk (its PTX `ignore-src` predicate is set: nothing is read), so a shared-memory
//! tile's out-of-range part holds zeros for the MMA.

use super::builtins::args::{arity, named, positional, Arg};
use super::builtins::copy_with;
use super::value::{Origin, TensorVal, Value};
use super::{layout_err, Frame, R};
use crate::ast::BinOp;
use crate::diag::{article, Diagnostic};
use crate::kir::{At, CopyOp, Inst, Operand, ValueTy};
use crate::span::Span;
use crate::types::Scalar;
use cute_layout::expr::crd_value;
use cute_layout::{Crd, Int, IntTuple};

/// `copy(atom, src, dst, pred: p)`, CuTe DSL's spelling of `copy_if(atom, p, src, dst)`.
#[inline(never)]
pub(super) fn copy_pred(f: &mut Frame, args: &[Arg], span: Span) -> R<Value> {
    arity("copy", args, 3, 3, span, "copy(atom, src, dst, pred: predicate)")?;
    let pred = named("copy", args, "pred", &["pred"])?
        .ok_or_else(|| Diagnostic::error("`copy` with a predicate needs `pred:`", span, "missing pred"))?;
    let p = positional(args);
    predicated(f, Some(p[0]), pred, p[1], p[2], span)
}

/// `copy_if(atom, pred, src, dst)` or `copy_if(pred, src, dst)`.
#[inline(never)]
pub(super) fn copy_if(f: &mut Frame, args: &[Arg], span: Span) -> R<Value> {
    arity("copy_if", args, 3, 4, span, "copy_if(atom, pred, src, dst)")?;
    named("copy_if", args, "", &[])?;
    let p = positional(args);
    match p.len() {
        4 => predicated(f, Some(p[0]), p[1], p[2], p[3], span),
        _ => predicated(f, None, p[0], p[1], p[2], span),
    }
}

fn predicated(f: &mut Frame, atom: Option<&Arg>, pred: &Arg, src: &Arg, dst: &Arg, span: Span) -> R<Value> {
    f.need_kernel("`copy_if`", span)?;
    let atom = match atom {
        None => None,
        Some(a) => match a.value {
            Value::TiledCopy { bits, op, .. } | Value::CopyAtom { bits, op, .. } => Some((bits, op, a.span)),
            _ => {
                return Err(Diagnostic::error(
                    format!(
                        "the first argument of a predicated copy is a copy atom or tiled copy, found {}",
                        article(&a.value.kind())
                    ),
                    a.span,
                    "not a copy atom",
                ))
            }
        },
    };
    let (Value::Tensor(s), Value::Tensor(d)) = (&src.value, &dst.value) else {
        return Err(Diagnostic::error("a predicated copy moves a tensor into a tensor", span, "not tensors"));
    };
    if let Some((_, op, atom_span)) = atom {
        if op.lane_elements().is_some() {
            let (name, verb) = if op.is_stmatrix() { ("stmatrix", "writes") } else { ("ldmatrix", "reads") };
            return Err(Diagnostic::error(
                format!("`{name}` cannot be predicated: it {verb} shared memory, which is always whole"),
                atom_span,
                name,
            )
            .with_help(
                "predicate the global-to-shared copy (cp.async zero-fills) and copy shared memory unpredicated",
            ));
        }
    }
    let Value::Tensor(p) = &pred.value else {
        return Err(Diagnostic::error(format!("the predicate must be a tensor of `bool`, found {}", article(&pred.value.kind())), pred.span, "not a tensor")
            .with_help("make one with `make_fragment(shape, bool)` and fill it with `elem_less` of an identity tensor's coordinates"));
    };
    if p.ty.elem != Scalar::Bool {
        return Err(Diagnostic::error(
            format!("the predicate must be a tensor of `bool`, found one of `{}`", p.ty.elem.name()),
            pred.span,
            "not bool",
        ));
    }
    // The chunks: with an atom, mode 0 is one chunk and the rest modes index them; without, every
    // element is a chunk.
    let shape = &s.ty.layout.shape;
    let rest: IntTuple = match (atom, shape) {
        (Some(_), IntTuple::Tuple(modes)) if modes.len() >= 2 => IntTuple::Tuple(modes[1..].to_vec()),
        (Some(_), _) => IntTuple::Int(Int::S(1)),
        (None, _) => shape.clone(),
    };
    let chunks = rest.product().ok().and_then(|n| n.as_static()).ok_or_else(|| {
        Diagnostic::error(
            format!("a predicated copy needs a static number of chunks, found the shape {shape}"),
            src.span,
            "dynamic shape",
        )
    })?;
    let have = p.ty.layout.size().ok().and_then(|n| n.as_static());
    if have != Some(chunks) {
        let per = if atom.is_some() {
            "one per copy-atom chunk (the source's modes after the first)"
        } else {
            "one per element"
        };
        return Err(Diagnostic::error(
            format!(
                "the predicate has {} entries but the copy has {chunks} chunks ({per}, {rest})",
                have.map_or("?".into(), |n| n.to_string())
            ),
            pred.span,
            "wrong size",
        )
        .with_secondary(src.span, format!("layout {}", s.ty.layout)));
    }
    let sizes =
        (s.ty.layout.size().ok().and_then(|n| n.as_static()), d.ty.layout.size().ok().and_then(|n| n.as_static()));
    if sizes.0 != sizes.1 {
        return Err(Diagnostic::error(
            format!("cannot copy a tensor of layout {} into one of layout {}", s.ty.layout, d.ty.layout),
            span,
            "sizes differ",
        ));
    }
    if chunks > 256 {
        return Err(Diagnostic::error(
            format!("a predicated copy of {chunks} chunks per thread is too large"),
            span,
            "too large",
        ));
    }
    let Origin::Kernel(pid) = p.origin else { unreachable!("kernel tensors have kernel origins") };
    let zero_fill = matches!(atom, Some((_, CopyOp::CpAsync { .. }, _)));
    for i in 0..chunks {
        // The chunk: src[_, rest-coordinate of i] with an atom, src[coordinate of i] without.
        let at = cute_layout::idx2crd(&IntTuple::Int(Int::S(i)), &rest).map_err(|e| layout_err(e, span))?;
        let crd = match (atom, shape) {
            (Some(_), IntTuple::Tuple(modes)) if modes.len() >= 2 => {
                let mut parts = vec![Crd::Under];
                match &at {
                    IntTuple::Tuple(items) => parts.extend(items.iter().map(Crd::from_tuple)),
                    single => parts.push(Crd::from_tuple(single)),
                }
                Crd::Tuple(parts)
            }
            (Some(_), _) => Crd::Under,
            (None, _) => Crd::Int(Int::S(i)),
        };
        // pred(i), the i-th entry in the predicate's colexicographic order.
        let cond = f.fresh(ValueTy::Scalar(Scalar::Bool));
        f.emit(Inst::Load {
            dst: cond,
            tensor: pid,
            ty: p.ty.clone(),
            at: At::Coord(crd_value(&Crd::Int(Int::S(i)))),
            span: pred.span,
        });
        let was = std::mem::replace(&mut f.predicated, true);
        let r = if atom.is_none() {
            // One element: `if pred(i) { dst(i) = src(i) }`, i a linear (colexicographic) index, so
            // the two tensors need only the same size.
            f.region(|f| move_element(f, s, d, &Crd::Int(Int::S(i)), span))
                .map(|then| f.emit(Inst::If { cond: Operand::Value(cond), then, els: Vec::new(), span }))
        } else {
            let (sc, dc) = if matches!(crd, Crd::Under) {
                (s.clone(), d.clone())
            } else {
                (f.slice(s, &crd, src.span)?, f.slice(d, &crd, dst.span)?)
            };
            let (sa, da) = (
                Arg { name: None, name_span: None, value: Value::Tensor(sc), span: src.span },
                Arg { name: None, name_span: None, value: Value::Tensor(dc), span: dst.span },
            );
            if zero_fill {
                copy_with(f, atom, &sa, &da, Some(Operand::Value(cond)), span).map(|_| ())
            } else {
                f.region(|f| copy_with(f, atom, &sa, &da, None, span).map(|_| ()))
                    .map(|then| f.emit(Inst::If { cond: Operand::Value(cond), then, els: Vec::new(), span }))
            }
        };
        f.predicated = was;
        r?;
    }
    Ok(Value::Unit)
}

/// `dst(c) = src(c)` for one coordinate.
fn move_element(f: &mut Frame, s: &TensorVal, d: &TensorVal, crd: &Crd, span: Span) -> R<()> {
    if s.ty.elem != d.ty.elem {
        return Err(Diagnostic::error(
            format!("cannot copy {} elements into a tensor of {}", s.ty.elem.name(), d.ty.elem.name()),
            span,
            "element types differ",
        ));
    }
    let (Origin::Kernel(sid), Origin::Kernel(did)) = (&s.origin, &d.origin) else {
        unreachable!("kernel tensors have kernel origins")
    };
    let v = f.fresh(ValueTy::Scalar(s.ty.elem));
    f.emit(Inst::Load { dst: v, tensor: *sid, ty: s.ty.clone(), at: At::Coord(crd_value(crd)), span });
    f.emit(Inst::Store {
        value: Operand::Value(v),
        tensor: *did,
        ty: d.ty.clone(),
        at: At::Coord(crd_value(crd)),
        span,
    });
    Ok(())
}

/// `elem_less(a, b)`: every coordinate of `a` below the one of `b` in the same position (CuTe's,
/// for predicates: `elem_less(coordinate, shape)` is "inside the tensor"). Static when both are.
#[inline(never)]
pub(super) fn elem_less(f: &mut Frame, args: &[Arg], span: Span) -> R<Value> {
    arity("elem_less", args, 2, 2, span, "elem_less(coordinate, shape)")?;
    named("elem_less", args, "", &[])?;
    let p = positional(args);
    let (a, b) = (leaves(p[0])?, leaves(p[1])?);
    if a.len() != b.len() {
        return Err(Diagnostic::error(
            format!("`elem_less` compares coordinates of one profile, found {} and {} entries", a.len(), b.len()),
            span,
            "different ranks",
        )
        .with_secondary(p[0].span, format!("{} entries", a.len()))
        .with_secondary(p[1].span, format!("{} entries", b.len())));
    }
    let mut acc = Value::Bool(true);
    for (x, y) in a.into_iter().zip(b) {
        let lt = f.binary(BinOp::Lt, Value::Int(x), Value::Int(y), span, p[0].span, p[1].span)?;
        acc = f.binary(BinOp::And, acc, lt, span, span, span)?;
    }
    Ok(acc)
}

fn leaves(a: &Arg) -> R<Vec<Int>> {
    a.value.to_int_tuple().map(|t| t.leaves()).ok_or_else(|| {
        Diagnostic::error(
            format!("`elem_less` compares integer coordinates, found {}", article(&a.value.kind())),
            a.span,
            "not a coordinate",
        )
    })
}
