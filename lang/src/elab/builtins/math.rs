//! Arithmetic builtins: the binary operators as functions, `min`/`max`, `where`, `ceil_div`, the
//! math functions, conversions (`x.to(T)`) and fragment reductions.

use super::args::{arity, named, positional, Arg};
use crate::ast::BinOp;
use crate::diag::Diagnostic;
use crate::elab::expr::static_f64;
use crate::elab::value::Value;
use crate::elab::{layout_err, Frame, Mode, R};
use crate::kir::{BinaryOp, FragTy, Inst, MathFn, Operand, ValueId, ValueTy};
use crate::span::Span;
use crate::types::Scalar;
use cute_layout::{Int, IntTuple};

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

pub(super) fn min_max(f: &mut Frame, is_max: bool, a: Value, b: Value, span: Span) -> R<Value> {
    if let (Value::Int(x), Value::Int(y)) = (&a, &b) {
        if let (Some(p), Some(q)) = (x.as_static(), y.as_static()) {
            return Ok(Value::Int(Int::S(if is_max { p.max(q) } else { p.min(q) })));
        }
        // An index integer may be a run-time `i32` of either sign (a parameter, a loaded value),
        // not only an extent: no folding on the positivity `Int::minimum` assumes of leaves.
        return Ok(Value::Int(if is_max { x.maximum_signed(y) } else { x.minimum_signed(y) }));
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

pub(super) fn frag_or_operand(f: &mut Frame, v: &Value, ty: Scalar, span: Span) -> R<Operand> {
    match v {
        Value::Frag(_, id) => Ok(Operand::Value(*id)),
        v => f.operand(v, ty, span),
    }
}

pub(super) fn min_max_call(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let mut it = args.into_iter();
    let (a, b) = (it.next().map(|a| a.value).unwrap_or(Value::Unit), it.next().map(|a| a.value).unwrap_or(Value::Unit));
    min_max(f, name == "max", a, b, span)
}

pub(super) fn where_call(f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    where_(f, &args, span)
}

pub(super) fn where_(f: &mut Frame, args: &[Arg], span: Span) -> R<Value> {
    let (c, a, b) = (&args[0], &args[1], &args[2]);
    if let Value::Bool(cond) = c.value {
        return Ok(if cond { a.value.clone() } else { b.value.clone() });
    }
    if f.mode == Mode::Host {
        if let Some(v) = f.host_select(&c.value, &a.value, &b.value, span)? {
            return Ok(v);
        }
    }
    // A typed side gives the type; two literals are f32 (a float literal among them, as Triton's
    // `tl.where(c, 1.0, 0.0)`) or i32.
    let ty = match (&a.value, &b.value) {
        (Value::Scalar(s, _), _) | (_, Value::Scalar(s, _)) => *s,
        (Value::Frag(fr, _), _) | (_, Value::Frag(fr, _)) => fr.elem,
        (Value::Float(_), _) | (_, Value::Float(_)) => Scalar::F32,
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

pub(super) fn ceil_div(_f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let p = positional(&args);
    match (&p[0].value, &p[1].value) {
        // `ceil_quot`, not the algebra's `ceil_div`: a value the program rounds (a padded extent
        // `ceil_div(n, 128) * 128` included), which the launch checks do not take for a tiling.
        (Value::Int(a), Value::Int(b)) if b.as_static() != Some(0) => a.ceil_quot(b).map(Value::Int).map_err(lerr),
        _ => Err(Diagnostic::error("`ceil_div` takes two integers, the second not zero", span, "invalid operands")),
    }
}

pub(super) fn math_call(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let fun = MathFn::from_name(name).unwrap_or(MathFn::Abs);
    math(f, fun, &positional(&args)[0].value, span)
}

/// A math function on a float scalar or fragment (CuTe DSL's `cute.math.*`); `abs` on any number.
pub(super) fn math(f: &mut Frame, fun: MathFn, v: &Value, span: Span) -> R<Value> {
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

/// `fma(a, b, c)`: `a * b + c` rounded once (PTX `fma.rn`), on float scalars and fragments,
/// element-wise (a scalar or literal operand is used for every element); literals fold.
pub(super) fn fma_call(f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let p = positional(&args);
    let (a, b, c) = (&p[0].value, &p[1].value, &p[2].value);
    if let (Some(x), Some(y), Some(z)) = (static_f64(a), static_f64(b), static_f64(c)) {
        return Ok(Value::Float(x.mul_add(y, z)));
    }
    // The element type: the run-time operands', which must agree (literals take it).
    let mut ty: Option<(Scalar, Span)> = None;
    let mut frag: Option<(&FragTy, Span)> = None;
    for arg in &p {
        let elem = match &arg.value {
            Value::Scalar(s, _) => *s,
            Value::Frag(ft, _) => {
                if let Some((prev, at)) = frag.filter(|(prev, _)| prev.len() != ft.len()) {
                    return Err(Diagnostic::error(
                        format!("fragments of {} and {} elements cannot be combined", prev.len(), ft.len()),
                        arg.span,
                        format!("shape {}", ft.shape),
                    )
                    .with_secondary(at, format!("shape {}", prev.shape)));
                }
                frag = frag.or(Some((ft, arg.span)));
                ft.elem
            }
            Value::Float(_) => continue,
            Value::Int(i) if i.is_static() => continue,
            other => {
                return Err(Diagnostic::error(
                    format!("`fma` takes float values or fragments, found {}", crate::diag::article(&other.kind())),
                    arg.span,
                    "not a float",
                )
                .with_help("convert with `.to(f32)`"))
            }
        };
        match ty {
            Some((t, at)) if t != elem => {
                return Err(Diagnostic::error(
                    format!("mismatched types in `fma`: `{}` and `{}`", t.name(), elem.name()),
                    arg.span,
                    format!("`{}`", elem.name()),
                )
                .with_secondary(at, format!("`{}`", t.name()))
                .with_help("convert one with `.to(T)`"))
            }
            _ => ty = Some((elem, arg.span)),
        }
    }
    let Some((ty, at)) = ty else { unreachable!("an operand that is not a literal sets the type") };
    if !ty.is_float() {
        return Err(Diagnostic::error(format!("`fma` takes floats, found `{}`", ty.name()), at, "not a float")
            .with_help("convert with `.to(f32)`; on integers write `a * b + c`"));
    }
    f.need_kernel("`fma`", span)?;
    f.no_fp8_arith(ty, "`fma`", span)?;
    let mut ops = Vec::with_capacity(3);
    for arg in &p {
        ops.push(match &arg.value {
            Value::Int(i) => Operand::Float(i.as_static().unwrap_or(0) as f64),
            v => frag_or_operand(f, v, ty, arg.span)?,
        });
    }
    let like = frag.map_or(Value::Unit, |(ft, _)| Value::Frag(ft.clone(), 0));
    let n = frag.map(|(ft, _)| ft.len());
    let dst = f.fresh(f.result_ty(ty, n, &like));
    let [a, b, c]: [Operand; 3] = ops.try_into().unwrap_or_else(|_| unreachable!("three operands"));
    f.emit(Inst::Fma { dst, ty, frag: n, a, b, c, span });
    Ok(f.result_value(ty, n, &like, dst))
}

/// `fragment.reduce(op, init, profile)`: profile `0` reduces every element to one value; a tuple
/// with one entry per mode reduces the modes marked `1` and keeps those marked `_` (CuTe's
/// reduction_profile), giving a fragment of the kept modes.
pub(super) fn reduce(
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
    if let (true, Some(bop), false) = (kept.is_empty() && !ft.is_empty(), builtin, ft.elem == Scalar::Bool) {
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

pub(super) fn convert(f: &mut Frame, v: Value, to: Scalar, span: Span) -> R<Value> {
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

/// `fragment.reduce(op, init: value, profile: 0)`.
pub(super) fn reduce_method(f: &mut Frame, ft: &FragTy, fid: ValueId, args: &[Arg], span: Span) -> R<Value> {
    let usage = "fragment.reduce(op, init: value, profile: 0)";
    arity("reduce", args, 1, 2, span, usage)?;
    let pos = positional(args);
    let Value::Func(op) = &pos[0].value else {
        return Err(Diagnostic::error(
            "`reduce` takes an operation first (`add`, `mul`, `max`, `min`)",
            pos[0].span,
            "not a function",
        ));
    };
    let init = match (pos.get(1).copied(), named("reduce", args, "init", &["init", "profile"])?) {
        (Some(a), _) | (None, Some(a)) => Some(a.value.clone()),
        (None, None) => None,
    };
    let profile = named("reduce", args, "profile", &["init", "profile"])?;
    reduce(f, op, ft, fid, init, profile, span)
}

/// `x.to(T)`.
pub(super) fn to(f: &mut Frame, recv: Value, args: &[Arg], span: Span) -> R<Value> {
    arity("to", args, 1, 1, span, "x.to(T)")?;
    let Value::Type(to) = args[0].value else {
        return Err(Diagnostic::error(
            format!("`to` takes a type, found {}", crate::diag::article(&args[0].value.kind())),
            args[0].span,
            "not a type",
        ));
    };
    convert(f, recv, to, span)
}
