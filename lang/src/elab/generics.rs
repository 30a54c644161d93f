//! Element-type parameters: `kernel add<T>(a: tensor<T, gmem>, ...)` and
//! `host add<T: f16 | f32>(a: tensor<T, gmem, (?):(1)>, ...)`.
//!
//! A kernel's type parameters are deduced at each launch from the element types of the tensors it
//! is given, like its layouts (the kernel is instantiated per launch anyway, so the element type is
//! one more part of the instance key). A host function is compiled ahead of time, so each of its type
//! parameters lists the element types to compile for; every combination becomes one host function
//! of the manifest (`add<f16>`, `add<f32>`), and the runtime picks the one the arguments' dtypes
//! select. Inside the function a type parameter is a type value: `make_rmem_tensor(8, T)`,
//! `x.to(T)`, `sizeof(T)`, `T.width`, and `?{div=16 / sizeof(T)}` in a parameter's layout.

use super::{Frame, Program, R};
use crate::ast::*;
use crate::diag::{did_you_mean, Diagnostic};
use crate::kir;
use crate::span::Span;
use crate::types::Scalar;

use super::value::Value;

/// Each type parameter's element type, in declaration order.
pub(crate) type Bindings = Vec<(String, Scalar)>;

/// The element type a type is written with when it names a type parameter (`tensor<T, ...>`).
fn elem_name(ty: &TypeExpr) -> Option<&Ident> {
    match ty {
        TypeExpr::Tensor { elem, .. } => Some(elem),
        _ => None,
    }
}

/// Checks the type parameters of `f` as written: known element types in the lists, no duplicates,
/// no parameter named like a scalar type, every one deducible from a tensor parameter, and a list
/// on every parameter of a host function (which is compiled for each type of it).
pub(crate) fn check_type_params(f: &Function) -> R<()> {
    if f.type_params.is_empty() {
        return Ok(());
    }
    if f.kind == FnKind::Device {
        let span = f.type_params[0].span.to(f.type_params[f.type_params.len() - 1].span);
        return Err(Diagnostic::error("`fn` helpers take no type parameters", span, "type parameters").with_help(
            "a helper's parameters without a type take any value already: write `fn f(x)` and use `x.element_type`",
        ));
    }
    for (i, tp) in f.type_params.iter().enumerate() {
        if Scalar::from_name(&tp.name.name).is_some() {
            return Err(Diagnostic::error(
                format!("type parameter `{}` has the name of an element type", tp.name.name),
                tp.name.span,
                "a scalar type's name",
            )
            .with_help("name it `T`, `U`, ..."));
        }
        if let Some(prev) = f.type_params[..i].iter().find(|p| p.name.name == tp.name.name) {
            return Err(Diagnostic::error(
                format!("type parameter `{}` is declared twice", tp.name.name),
                tp.name.span,
                "second declaration",
            )
            .with_secondary(prev.name.span, "first declared here"));
        }
        if let Some(choices) = &tp.choices {
            for (j, c) in choices.iter().enumerate() {
                if Scalar::from_name(&c.name).is_none() {
                    let names = Scalar::ALL.map(Scalar::name);
                    let mut d =
                        Diagnostic::error(format!("unknown element type `{}`", c.name), c.span, "not an element type");
                    d = match did_you_mean(&c.name, names) {
                        Some(s) => d.with_help(format!("did you mean `{s}`?")),
                        None => d.with_help(format!("the element types are {}", names.join(" "))),
                    };
                    return Err(d);
                }
                if choices[..j].iter().any(|p| p.name == c.name) {
                    return Err(Diagnostic::error(
                        format!("`{}` is listed twice for `{}`", c.name, tp.name.name),
                        c.span,
                        "listed twice",
                    ));
                }
            }
        } else if f.kind == FnKind::Host {
            return Err(Diagnostic::error(
                format!("type parameter `{}` of host function `{}` lists no element types", tp.name.name, f.name.name),
                tp.span,
                "compiled for which types?",
            )
            .with_help(format!(
                "a host function is compiled ahead of time, once per element type: write `{}: f16 | f32` (the types to compile for)",
                tp.name.name
            )));
        }
        let deducible =
            f.params.iter().any(|p| !p.is_const && elem_name(&p.ty).is_some_and(|e| e.name == tp.name.name));
        if !deducible {
            let what = if f.kind == FnKind::Host {
                "the runtime cannot tell the instances apart by the arguments"
            } else {
                "a launch cannot bind it"
            };
            return Err(Diagnostic::error(
                format!("type parameter `{}` is not the element type of any tensor parameter", tp.name.name),
                tp.name.span,
                "unbound type parameter",
            )
            .with_secondary(f.name.span, format!("{what}: `{}` takes no `tensor<{}, ...>`", f.name.name, tp.name.name))
            .with_help(format!(
                "declare a tensor parameter `tensor<{}, gmem, ...>`, or remove `{}`",
                tp.name.name, tp.name.name
            )));
        }
    }
    Ok(())
}

/// Every combination of a host function's listed element types, the first parameter's varying
/// slowest (`<T: f16 | f32, U: f32>`: `(f16, f32)`, `(f32, f32)`).
pub(crate) fn host_instances(f: &Function) -> Vec<Bindings> {
    let mut out: Vec<Bindings> = vec![Vec::new()];
    for tp in &f.type_params {
        let choices: Vec<Scalar> = tp.choices.iter().flatten().filter_map(|c| Scalar::from_name(&c.name)).collect();
        out = out
            .into_iter()
            .flat_map(|b| {
                choices.iter().map(move |s| {
                    let mut b = b.clone();
                    b.push((tp.name.name.clone(), *s));
                    b
                })
            })
            .collect();
    }
    out
}

/// The instance's name in the manifest: `add<f16>`, `add<f16,f32>`.
pub(crate) fn instance_name(f: &Function, b: &Bindings) -> String {
    format!("{}<{}>", f.name.name, b.iter().map(|(_, s)| s.name()).collect::<Vec<_>>().join(","))
}

/// What the manifest says about an instance: each type argument and the parameters it types.
pub(crate) fn host_instance(f: &Function, b: &Bindings) -> kir::HostInstance {
    let type_args = b
        .iter()
        .map(|(name, ty)| kir::TypeArg {
            name: name.clone(),
            ty: *ty,
            params: f
                .params
                .iter()
                .enumerate()
                .filter(|(_, p)| elem_name(&p.ty).is_some_and(|e| &e.name == name))
                .map(|(i, _)| i)
                .collect(),
        })
        .collect();
    kir::HostInstance { generic: f.name.name.clone(), type_args }
}

/// Deduces a kernel's type parameters from the values a launch passes (`args[i]` with its span, for
/// parameter `i`): each `tensor<T, ...>` parameter binds `T` to its argument's element type. All
/// the tensors declared `T` must agree, and the type must be one the parameter lists.
pub(crate) fn deduce(f: &Function, args: &[(&Value, Span)]) -> R<Bindings> {
    let mut out: Bindings = Vec::new();
    for tp in &f.type_params {
        let mut bound: Option<(Scalar, &Param, Span)> = None;
        for (p, (v, span)) in f.params.iter().zip(args) {
            if p.is_const || elem_name(&p.ty).is_none_or(|e| e.name != tp.name.name) {
                continue;
            }
            let Value::Tensor(t) = v else { continue };
            match bound {
                None => bound = Some((t.ty.elem, p, *span)),
                Some((s, first, first_span)) if s != t.ty.elem => {
                    return Err(Diagnostic::error(
                        format!(
                            "mixed element types for `{}`: `{}` is {} but `{}` is {}",
                            tp.name.name,
                            first.name.name,
                            s.name(),
                            p.name.name,
                            t.ty.elem.name()
                        ),
                        *span,
                        format!("{} here", t.ty.elem.name()),
                    )
                    .with_secondary(first_span, format!("{} here", s.name()))
                    .with_secondary(tp.name.span, format!("both are declared `tensor<{}, ...>`", tp.name.name))
                    .with_help(format!(
                        "pass tensors of one element type, or convert one of them (`{}` is one type per launch)",
                        tp.name.name
                    )));
                }
                Some(_) => {}
            }
        }
        let Some((s, p, span)) = bound else {
            // Only a launch that passes something else than a tensor gets here: its parameter check says so.
            continue;
        };
        if let Some(choices) = &tp.choices {
            if !choices.iter().any(|c| c.name == s.name()) {
                let list = choices.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(" | ");
                return Err(Diagnostic::error(
                    format!("`{}` is {} here, which is not one of {list}", tp.name.name, s.name()),
                    span,
                    format!("`{}` is {}", p.name.name, s.name()),
                )
                .with_secondary(tp.span, "the element types it allows")
                .with_help(format!(
                    "pass a tensor of {list}, or add {} to `{}`'s list",
                    s.name(),
                    tp.name.name
                )));
            }
        }
        out.push((tp.name.name.clone(), s));
    }
    Ok(out)
}

impl<'p, 'f> Frame<'p, 'f> {
    /// Makes each type parameter a type value in the current scope.
    pub(crate) fn bind_types(&mut self, f: &Function, b: &Bindings) {
        for (tp, (_, s)) in f.type_params.iter().zip(b) {
            self.bind_at(&tp.name, Value::Type(*s));
        }
    }

    /// `ty` with the type parameters replaced by their element types and every `?{div=EXPR}`
    /// evaluated (in this frame, where the type parameters are bound).
    pub(crate) fn subst_type(&mut self, ty: &TypeExpr, b: &Bindings) -> R<TypeExpr> {
        let sub_ident = |id: &Ident| match b.iter().find(|(n, _)| *n == id.name) {
            Some((_, s)) => Ident { name: s.name().to_string(), span: id.span },
            None => id.clone(),
        };
        Ok(match ty {
            TypeExpr::Named(id) => TypeExpr::Named(sub_ident(id)),
            TypeExpr::Infer(s) => TypeExpr::Infer(*s),
            TypeExpr::Fn { params, ret, span } => TypeExpr::Fn {
                params: params.iter().map(|p| self.subst_type(p, b)).collect::<R<_>>()?,
                ret: Box::new(self.subst_type(ret, b)?),
                span: *span,
            },
            TypeExpr::Tensor { elem, space, layout, align, span } => {
                let layout = match layout {
                    None => None,
                    Some(l) => Some(LayoutLit {
                        shape: self.subst_tuple(&l.shape)?,
                        stride: l.stride.as_ref().map(|s| self.subst_tuple(s)).transpose()?,
                        span: l.span,
                    }),
                };
                TypeExpr::Tensor { elem: sub_ident(elem), space: space.clone(), layout, align: *align, span: *span }
            }
        })
    }

    fn subst_tuple(&mut self, t: &IntTupleLit) -> R<IntTupleLit> {
        Ok(match t {
            IntTupleLit::DynamicDivExpr(e, span) => match self.expr(e)? {
                Value::Int(i) if i.as_static().is_some() => IntTupleLit::DynamicDiv(i.as_static().unwrap_or(0), *span),
                other => {
                    return Err(Diagnostic::error(
                        format!(
                            "`?{{div=...}}` needs a compile-time integer, found {}",
                            crate::diag::article(&other.kind())
                        ),
                        e.span,
                        "not a compile-time integer",
                    )
                    .with_help("write an integer, a `const`, or an expression of them such as `16 / sizeof(T)`"))
                }
            },
            IntTupleLit::Tuple(items, span) => {
                IntTupleLit::Tuple(items.iter().map(|i| self.subst_tuple(i)).collect::<R<_>>()?, *span)
            }
            other => other.clone(),
        })
    }
}

/// Whether a written type needs [`Frame::subst_type`]: it names a type parameter or has a
/// `?{div=EXPR}`.
pub(crate) fn needs_subst(ty: &TypeExpr, f: &Function) -> bool {
    fn tuple(t: &IntTupleLit) -> bool {
        match t {
            IntTupleLit::DynamicDivExpr(..) => true,
            IntTupleLit::Tuple(items, _) => items.iter().any(tuple),
            _ => false,
        }
    }
    let named = |id: &Ident| f.type_params.iter().any(|tp| tp.name.name == id.name);
    match ty {
        TypeExpr::Named(id) => named(id),
        TypeExpr::Infer(_) => false,
        TypeExpr::Fn { params, ret, .. } => params.iter().any(|p| needs_subst(p, f)) || needs_subst(ret, f),
        TypeExpr::Tensor { elem, layout, .. } => {
            named(elem) || layout.as_ref().is_some_and(|l| tuple(&l.shape) || l.stride.as_ref().is_some_and(tuple))
        }
    }
}

impl<'f> Program<'f> {
    /// The parameter types of `f` for bindings `b`, as written types with nothing left to evaluate
    /// (evaluated in a compile-time frame where the type parameters are bound).
    pub(crate) fn param_types(&mut self, f: &Function, b: &Bindings) -> R<Vec<TypeExpr>> {
        if !f.params.iter().any(|p| needs_subst(&p.ty, f)) {
            return Ok(f.params.iter().map(|p| p.ty.clone()).collect());
        }
        let mut frame = Frame::new(self, super::Mode::Const);
        for (tp, (_, s)) in f.type_params.iter().zip(b) {
            frame.bind(&tp.name.name, Value::Type(*s));
        }
        f.params
            .iter()
            .map(|p| if needs_subst(&p.ty, f) { frame.subst_type(&p.ty, b) } else { Ok(p.ty.clone()) })
            .collect()
    }
}
