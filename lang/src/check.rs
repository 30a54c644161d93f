//! Resolving written types (`f32`, `tensor<T, space, layout>`, CuTe layout notation) into checked
//! types. Expressions and statements are checked by elaboration (`elab`).

use crate::ast::*;
use crate::diag::{did_you_mean, Diagnostic};
use crate::span::Span;
use crate::types::*;

/// Turns a written type into a checked type.
pub fn resolve_type(ty: &TypeExpr) -> Result<Ty, Diagnostic> {
    match ty {
        TypeExpr::Named(id) => match Scalar::from_name(&id.name) {
            Some(s) => Ok(Ty::Scalar(s)),
            None => {
                let names = Scalar::ALL.map(Scalar::name);
                let mut d = Diagnostic::error(format!("unknown type `{}`", id.name), id.span, "not a type");
                d = match did_you_mean(&id.name, names) {
                    Some(s) => d.with_help(format!("did you mean `{s}`?")),
                    None => d.with_help(format!(
                        "the scalar types are {}; tensors are written `tensor<T, space, layout>`",
                        names.join(" ")
                    )),
                };
                Err(d)
            }
        },
        TypeExpr::Fn { span, .. } => {
            Err(Diagnostic::error("a function type is only allowed on a `const` parameter", *span, "function type"))
        }
        TypeExpr::Infer(span) => Err(Diagnostic::error("this parameter needs a type", *span, "no type")
            .with_help("only the parameters of `fn` helpers may leave out their type")),
        TypeExpr::Tensor { layout, span, .. } => {
            let Some((elem, space, align, _)) = tensor_parts(ty)? else { unreachable!("a tensor type") };
            let Some(layout) = layout else {
                return Err(Diagnostic::error("this tensor type needs a layout here", *span, "no layout")
                    .with_help("write `tensor<T, space, shape:stride>`"));
            };
            let layout = resolve_layout(layout)?;
            Ok(Ty::Tensor(TensorType { elem, space, align: align.unwrap_or(elem.size_bytes()), layout }))
        }
    }
}

/// The parts of a written tensor type, checked: element type, memory space, the alignment if one
/// is written (a power of two of at least the element size) and the layout if one is written.
/// `None` for other types.
#[allow(clippy::type_complexity)]
pub fn tensor_parts(ty: &TypeExpr) -> Result<Option<(Scalar, MemSpace, Option<u32>, Option<LayoutType>)>, Diagnostic> {
    let TypeExpr::Tensor { elem, space, layout, align, .. } = ty else { return Ok(None) };
    let Ty::Scalar(elem_ty) = resolve_type(&TypeExpr::Named(elem.clone()))? else {
        unreachable!("named types are scalars")
    };
    let space_ty = MemSpace::from_name(&space.name).ok_or_else(|| {
        Diagnostic::error(format!("unknown memory space `{}`", space.name), space.span, "not a memory space")
            .with_help("the memory spaces are `gmem`, `smem` and `rmem`")
    })?;
    let align = match align {
        None => None,
        Some((v, s)) => {
            if *v <= 0 || (*v & (*v - 1)) != 0 || *v > 256 {
                return Err(Diagnostic::error(
                    "alignment must be a power of two between 1 and 256 bytes",
                    *s,
                    "invalid alignment",
                ));
            }
            if (*v as u32) < elem_ty.size_bytes() {
                return Err(Diagnostic::error(
                    format!(
                        "alignment {v} is smaller than the element size of {} ({} bytes)",
                        elem_ty.name(),
                        elem_ty.size_bytes()
                    ),
                    *s,
                    "too small",
                ));
            }
            Some(*v as u32)
        }
    };
    let layout = match layout {
        None => None,
        Some(l) => Some(resolve_layout(l)?),
    };
    Ok(Some((elem_ty, space_ty, align, layout)))
}

fn tuple_of(lit: &IntTupleLit) -> Result<Tuple, Diagnostic> {
    Ok(match lit {
        IntTupleLit::Int(v, s) => {
            if *v < 0 {
                return Err(Diagnostic::error("layout entries must not be negative", *s, "negative"));
            }
            Tuple::Leaf(Extent::Static(*v))
        }
        IntTupleLit::Dynamic(_) => Tuple::Leaf(Extent::Dynamic),
        IntTupleLit::DynamicDiv(d, s) => {
            if *d <= 0 {
                return Err(Diagnostic::error("expected `?{div=N}` with a positive N", *s, "invalid divisibility")
                    .with_help("`?{div=8}` declares a run-time extent that is a multiple of 8"));
            }
            Tuple::Leaf(Extent::DynamicDiv(*d))
        }
        // Elaboration replaces these by their values before resolving a parameter's type.
        IntTupleLit::DynamicDivExpr(_, s) => {
            return Err(Diagnostic::error(
                "a `?{div=...}` expression is evaluated only in a parameter's type",
                *s,
                "not a literal",
            )
            .with_help("write `?{div=N}` with an integer literal here"))
        }
        // `(x)` is the same as `x`, as CuTe prints rank-1 tuples.
        IntTupleLit::Tuple(items, _) if items.len() == 1 => tuple_of(&items[0])?,
        IntTupleLit::Tuple(items, s) => {
            if items.is_empty() {
                return Err(Diagnostic::error("empty tuple in a layout", *s, "empty"));
            }
            Tuple::Node(items.iter().map(tuple_of).collect::<Result<_, _>>()?)
        }
    })
}

/// Column-major compact strides (CuTe's default); a stride after a dynamic extent is dynamic.
fn column_major(shape: &Tuple, running: &mut Extent) -> Tuple {
    match shape {
        Tuple::Leaf(e) => {
            let stride = *running;
            *running = match (*running, *e) {
                (Extent::Static(a), Extent::Static(b)) => a.checked_mul(b).map_or(Extent::Dynamic, Extent::Static),
                _ => Extent::Dynamic,
            };
            Tuple::Leaf(stride)
        }
        Tuple::Node(items) => Tuple::Node(items.iter().map(|t| column_major(t, running)).collect()),
    }
}

/// Parses a layout in CuTe notation (`(?,8):(8,1)`), as `cute.tensor` types carry it.
pub fn parse_layout(text: &str) -> Result<LayoutType, Diagnostic> {
    let lit = crate::grammar::LayoutLitParser::new().parse(crate::lexer::Lexer::new(text)).map_err(|_| {
        Diagnostic::error(format!("`{text}` is not a layout"), Span::new(0, text.len()), "expected `shape:stride`")
    })?;
    resolve_layout(&lit)
}

pub fn resolve_layout(lit: &LayoutLit) -> Result<LayoutType, Diagnostic> {
    let shape = tuple_of(&lit.shape)?;
    for (leaf, s) in shape.leaves().iter().zip(std::iter::repeat(lit.shape.span())) {
        if *leaf == Extent::Static(0) {
            return Err(Diagnostic::error("a shape extent of 0 is not allowed", s, "zero extent"));
        }
    }
    let stride = match &lit.stride {
        None => column_major(&shape, &mut Extent::Static(1)),
        Some(s) => tuple_of(s)?,
    };
    if !shape.congruent(&stride) {
        let sspan = lit.stride.as_ref().map_or(lit.span, IntTupleLit::span);
        return Err(Diagnostic::error(
            format!("shape {shape} and stride {stride} do not have the same structure"),
            sspan,
            "stride here",
        )
        .with_secondary(lit.shape.span(), "shape here")
        .with_help("give one stride for every shape entry, nested the same way"));
    }
    Ok(LayoutType { shape, stride })
}

/// The type a literal takes when nothing else constrains it.
pub fn default_literal(t: Ty) -> Ty {
    match t {
        Ty::IntLit => Ty::Scalar(Scalar::I32),
        Ty::FloatLit => Ty::Scalar(Scalar::F32),
        t => t,
    }
}

/// The common type of two operands, with literals adapting to the other side.
pub fn unify(a: &Ty, b: &Ty) -> Option<Ty> {
    match (a, b) {
        _ if a == b => Some(a.clone()),
        (Ty::IntLit, Ty::Scalar(s)) | (Ty::Scalar(s), Ty::IntLit) if *s != Scalar::Bool => Some(Ty::Scalar(*s)),
        (Ty::FloatLit, Ty::Scalar(s)) | (Ty::Scalar(s), Ty::FloatLit) if s.is_float() => Some(Ty::Scalar(*s)),
        (Ty::IntLit, Ty::FloatLit) | (Ty::FloatLit, Ty::IntLit) => Some(Ty::FloatLit),
        _ => None,
    }
}
