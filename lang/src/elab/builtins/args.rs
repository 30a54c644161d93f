//! A builtin's arguments: the evaluated values with their names and spans, the argument-count and
//! named-argument checks, and the readers of layouts, shapes, tilers and modes every family shares.

use crate::diag::{did_you_mean, Diagnostic};
use crate::elab::value::Value;
use crate::elab::{layout_err, R};
use crate::span::Span;
use cute_layout::{IntTuple, Layout, Tiler};

pub struct Arg {
    pub name: Option<String>,
    pub name_span: Option<Span>,
    pub value: Value,
    pub span: Span,
}

pub(crate) fn arity(name: &str, args: &[Arg], min: usize, max: usize, span: Span, usage: &str) -> R<()> {
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

pub(crate) fn named<'a>(name: &str, args: &'a [Arg], key: &str, allowed: &[&str]) -> R<Option<&'a Arg>> {
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

pub(crate) fn positional(args: &[Arg]) -> Vec<&Arg> {
    args.iter().filter(|a| a.name.is_none()).collect()
}

pub(super) fn int_tuple(a: &Arg, what: &str) -> R<IntTuple> {
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
pub(super) fn type_bits(a: &Arg) -> R<i64> {
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

pub(super) fn static_usize(a: &Arg, what: &str) -> R<usize> {
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
pub(super) fn layout_of(a: &Arg) -> R<Layout> {
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
pub(super) fn tiler_of(v: &Value, span: Span) -> R<Tiler> {
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

pub(super) fn modes_list(a: &Arg) -> R<Vec<usize>> {
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

pub(super) fn value_crd(v: &Value, span: Span) -> R<cute_layout::Crd> {
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
