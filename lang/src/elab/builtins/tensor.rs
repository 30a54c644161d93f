//! Tensors and fragments: views of memory, new register and shared-memory tensors, fragments
//! filled with a value, and the tensor methods `load`, `store` and `fill`.

use super::alloc::{alloc, register_budget};
use super::args::{arity, int_tuple, layout_of, positional, Arg};
use crate::diag::Diagnostic;
use crate::elab::value::{Origin, TensorVal, Value};
use crate::elab::{layout_err, Frame, R};
use crate::kir::{FragTy, Inst, ValueTy, ViewHow};
use crate::span::Span;
use crate::types::MemSpace;
use cute_layout::expr::Value as XValue;
use cute_layout::{Int, Layout};

/// C++'s `sizeof(T)`: the bytes of an element type, or of a tensor's or fragment's elements.
pub(super) fn sizeof(_f: &mut Frame, _name: &str, args: Vec<Arg>, _span: Span) -> R<Value> {
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

pub(super) fn make_tensor(f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
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
        return crate::elab::swizzle::make_tensor(f, t, c, span);
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

pub(super) fn make_rmem_tensor(f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
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

pub(super) fn make_rmem_tensor_like(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
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

pub(super) fn make_smem_tensor(f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let p = positional(&args);
    let Value::Type(elem) = p[0].value else {
        return Err(Diagnostic::error(
            format!("the element type must be a type, found {}", crate::diag::article(&p[0].value.kind())),
            p[0].span,
            "not a type",
        ));
    };
    if let Value::Composed(c) = &p[1].value {
        return crate::elab::swizzle::make_smem_tensor(f, elem, c, span);
    }
    alloc(f, elem, MemSpace::Smem, layout_of(p[1])?, span)
}

pub(super) fn full_like(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let n = if name == "full_like" { 2 } else { 1 };
    arity(name, &args, n, n, span, if n == 2 { "full_like(fragment, value)" } else { "zeros_like(fragment)" })?;
    let p = positional(&args);
    let Value::Frag(ft, _) = &p[0].value else {
        return Err(Diagnostic::error(
            format!("`{name}` takes a fragment (from `.load()`), found {}", crate::diag::article(&p[0].value.kind())),
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

/// CuTe's `t.fill(x)`: every element of a static-size tensor set to x.
pub(super) fn fill(f: &mut Frame, t: &TensorVal, args: &[Arg], span: Span) -> R<Value> {
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
    f.store_frag(t, &ft, dst, span)?;
    Ok(Value::Unit)
}

/// `t.load()`: a static-size tensor as a register fragment.
pub(super) fn load(f: &mut Frame, t: &TensorVal, args: &[Arg], span: Span) -> R<Value> {
    arity("load", args, 0, 0, span, "t.load()")?;
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

/// `t.store(fragment)`.
pub(super) fn store(f: &mut Frame, t: &TensorVal, args: &[Arg], span: Span) -> R<Value> {
    arity("store", args, 1, 1, span, "t.store(fragment)")?;
    f.need_kernel("`store`", span)?;
    let Value::Frag(ft, fid) = &args[0].value else {
        return Err(Diagnostic::error(
            format!("`store` takes a fragment (from `.load()`), found {}", crate::diag::article(&args[0].value.kind())),
            args[0].span,
            "not a fragment",
        ));
    };
    f.store_frag(t, ft, *fid, span)?;
    Ok(Value::Unit)
}
