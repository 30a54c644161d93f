//! Expressions: literals, names, fields, indexing, and the unary and binary operators, folded at
//! compile time when the operands are known; and the typing of literals as run-time values.

use super::value::{Origin, Value};
use super::view::{check_rank, coord_err, crd_has_under, element_offset};
use super::{builtins, layout_err, Frame, Mode, R};
use crate::ast::{BinOp, Expr, ExprKind, FnKind, Ident, UnOp};
use crate::diag::{did_you_mean, Diagnostic};
use crate::kir::{self, BinaryOp, CmpOp, FragTy, Inst, Operand, Special, ValueId, ValueTy};
use crate::span::Span;
use crate::types::Scalar;
use cute_layout::{ComposedLayout, Int, IntTuple};

impl Frame<'_, '_> {
    /// An expression that must be an index integer.
    pub(crate) fn index(&mut self, e: &Expr) -> R<Int> {
        match self.expr(e)? {
            Value::Int(i) => Ok(i),
            other => Err(Diagnostic::error(
                format!("expected an integer, found {}", crate::diag::article(&other.kind())),
                e.span,
                "not an integer",
            )),
        }
    }

    /// A variable's current value: `let mut` cells are read here.
    fn read(&mut self, v: Value, span: Span) -> Value {
        let Value::Var(cell, ty) = v else { return v };
        let Origin::Kernel(cid) = cell.origin else { return Value::Unit };
        let dst = self.fresh(ValueTy::Scalar(ty));
        self.emit(Inst::Load { dst, tensor: cid, ty: cell.ty.clone(), at: kir::At::Offset(Int::ZERO), span });
        if ty == Scalar::I32 {
            Value::Int(Int::var(dst, 1))
        } else {
            Value::Scalar(ty, dst)
        }
    }

    pub(crate) fn expr(&mut self, e: &Expr) -> R<Value> {
        match &e.kind {
            ExprKind::Int(v) => Ok(Value::Int(Int::S(*v))),
            ExprKind::Float(v) => Ok(Value::Float(*v)),
            ExprKind::Bool(b) => Ok(Value::Bool(*b)),
            ExprKind::Str(s) => Ok(Value::Str(s.clone())),
            ExprKind::Wildcard => Ok(Value::Under),
            ExprKind::Tuple(items) => Ok(Value::Tuple(items.iter().map(|i| self.expr(i)).collect::<R<_>>()?)),
            ExprKind::Name(n) => self.name(n, e.span),
            ExprKind::Unary(op, inner) => {
                let v = self.expr(inner)?;
                self.unary(*op, v, e.span)
            }
            ExprKind::Binary(op, a, b) => {
                let va = self.expr(a)?;
                let vb = self.expr(b)?;
                self.binary(*op, va, vb, e.span, a.span, b.span)
            }
            ExprKind::Field { base, name } => {
                let v = self.expr(base)?;
                self.field(v, name)
            }
            ExprKind::Index { base, index } => {
                let v = self.expr(base)?;
                if let Value::Counting { layout, origin } = &v {
                    let crd = self.coordinate(index)?;
                    check_rank(&crd, layout, e.span)?;
                    let (kept, offset) =
                        cute_layout::slice_and_offset(&crd, layout).map_err(|err| coord_err(err, layout, e.span))?;
                    let at = origin.add(&offset).map_err(|err| layout_err(err, e.span))?;
                    if crd_has_under(&crd) {
                        return Ok(Value::Counting { layout: kept, origin: at });
                    }
                    // An element of a counting tensor is its coordinate.
                    let coord = at.to_arith_tuple(&layout.basis_paths()).map_err(|err| layout_err(err, e.span))?;
                    return Ok(Value::from_int_tuple(&coord));
                }
                let Value::Tensor(t) = v else {
                    return match v {
                        Value::Tuple(items) if index.len() == 1 => {
                            let i = self.index(&index[0])?;
                            let k = i.as_static().ok_or_else(|| {
                                Diagnostic::error("a tuple index must be static", index[0].span, "run-time index")
                            })?;
                            items.get(k as usize).cloned().ok_or_else(|| {
                                Diagnostic::error(
                                    format!("index {k} is out of range for a tuple of {} parts", items.len()),
                                    index[0].span,
                                    "out of range",
                                )
                            })
                        }
                        other => Err(Diagnostic::error(
                            format!("cannot index into {}", crate::diag::article(&other.kind())),
                            base.span,
                            "not a tensor",
                        )),
                    };
                };
                let crd = self.coordinate(index)?;
                check_rank(&crd, &t.ty.layout, e.span)?;
                if crd_has_under(&crd) {
                    return Ok(Value::Tensor(self.slice(&t, &crd, e.span)?));
                }
                element_offset(&crd, &t.ty.layout, self.index_bits, e.span)?;
                self.need_kernel("reading memory", e.span)?;
                let Origin::Kernel(tid) = t.origin else { unreachable!("kernel tensors have kernel origins") };
                let ty =
                    if t.ty.elem == Scalar::I32 { ValueTy::Scalar(Scalar::I32) } else { ValueTy::Scalar(t.ty.elem) };
                let dst = self.fresh(ty);
                self.emit(Inst::Load {
                    dst,
                    tensor: tid,
                    ty: t.ty.clone(),
                    at: kir::At::Coord(cute_layout::expr::crd_value(&crd)),
                    span: e.span,
                });
                Ok(if t.ty.elem == Scalar::I32 { Value::Int(Int::var(dst, 1)) } else { Value::Scalar(t.ty.elem, dst) })
            }
            ExprKind::Call { callee, args } => self.call(callee, args, e.span),
            ExprKind::Method { receiver, name, args } => {
                let recv = self.expr(receiver)?;
                self.method(recv, name, args, e.span)
            }
        }
    }

    pub(super) fn name(&mut self, n: &str, span: Span) -> R<Value> {
        if let Some(v) = self.lookup(n) {
            return Ok(self.read(v, span));
        }
        if let Some(s) = Scalar::from_name(n) {
            return Ok(Value::Type(s));
        }
        match n {
            "thread_idx" => return Ok(Value::Dim3("thread_idx")),
            "block_idx" => return Ok(Value::Dim3("block_idx")),
            "block_dim" => return Ok(Value::Dim3("block_dim")),
            "grid_dim" => return Ok(Value::Dim3("grid_dim")),
            _ => {}
        }
        if self.prog.functions.get(n).is_some_and(|f| f.kind == FnKind::Device) || builtins::is_operator(n) {
            return Ok(Value::Func(n.to_string()));
        }
        let mut names: Vec<String> = self.scopes.iter().flat_map(|s| s.keys().cloned()).collect();
        names.extend(self.prog.consts.keys().cloned());
        names.extend(["thread_idx", "block_idx", "block_dim", "grid_dim"].map(String::from));
        let mut d =
            Diagnostic::error(format!("cannot find value `{n}` in this scope"), span, "not found in this scope");
        if let Some(s) = did_you_mean(n, names.iter().map(String::as_str)) {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        Err(d)
    }

    pub(super) fn field(&mut self, v: Value, name: &Ident) -> R<Value> {
        let unknown = |what: &str, fields: &str| {
            Diagnostic::error(format!("no field `{}` on {what}", name.name), name.span, "unknown field")
                .with_help(format!("the fields are {fields}"))
        };
        match v {
            Value::Dim3(which) => {
                let dim = match name.name.as_str() {
                    "x" => 0,
                    "y" => 1,
                    "z" => 2,
                    _ => return Err(unknown("`dim3`", "`x`, `y` and `z`")),
                };
                self.special(which, dim, name.span)
            }
            Value::Tensor(t) => match name.name.as_str() {
                "shape" => Ok(Value::from_int_tuple(&t.ty.layout.shape)),
                "stride" => Ok(Value::from_int_tuple(&t.ty.layout.stride)),
                "layout" => Ok(match t.ty.swizzle {
                    Some(sw) => Value::Composed(Box::new(ComposedLayout {
                        swizzle: sw,
                        offset: Int::ZERO,
                        layout: t.ty.layout.clone(),
                    })),
                    None => Value::Layout(t.ty.layout.clone()),
                }),
                "element_type" => Ok(Value::Type(t.ty.elem)),
                // CuTe's `tensor.iterator`: the memory, to view with another layout (`make_tensor`).
                "iterator" => Ok(Value::Tensor(t)),
                _ => Err(unknown("tensors", "`shape`, `stride`, `layout`, `element_type` and `iterator`")),
            },
            Value::Counting { layout, .. } => match name.name.as_str() {
                "shape" => Ok(Value::from_int_tuple(&layout.shape)),
                "layout" => Ok(Value::Layout(layout)),
                _ => Err(unknown("identity tensors", "`shape` and `layout`")),
            },
            Value::Layout(l) => match name.name.as_str() {
                "shape" => Ok(Value::from_int_tuple(&l.shape)),
                "stride" => Ok(Value::from_int_tuple(&l.stride)),
                _ => Err(unknown("layouts", "`shape` and `stride`")),
            },
            Value::Frag(f, _) => match name.name.as_str() {
                "shape" => Ok(Value::from_int_tuple(&f.shape)),
                "element_type" => Ok(Value::Type(f.elem)),
                _ => Err(unknown("fragments", "`shape` and `element_type`")),
            },
            // CuTe DSL's `dtype.width`: the element type's size in bits.
            Value::Type(t) => match name.name.as_str() {
                "width" => Ok(Value::Int(Int::S(8 * i64::from(t.size_bytes())))),
                _ => Err(unknown("types", "`width` (bits; `sizeof(T)` gives bytes)")),
            },
            other => Err(Diagnostic::error(
                format!("{} has no fields", crate::diag::article(&other.kind())),
                name.span,
                "unknown field",
            )),
        }
    }

    pub(super) fn special(&mut self, which: &'static str, dim: u8, span: Span) -> R<Value> {
        self.need_kernel(&format!("`{which}`"), span)?;
        let key = format!("{which}.{dim}");
        if let Some(v) = self.special_values.get(&key) {
            return Ok(v.clone());
        }
        let id = self.fresh(ValueTy::Scalar(Scalar::I32));
        let s = match which {
            "thread_idx" => Special::ThreadIdx(dim),
            "block_idx" => Special::BlockIdx(dim),
            "block_dim" => Special::BlockDim(dim),
            _ => Special::GridDim(dim),
        };
        self.specials.push(Inst::Special { dst: id, which: s, span });
        let v = Value::Int(Int::var(id, 1));
        self.special_values.insert(key, v.clone());
        Ok(v)
    }

    /// A run-time operand of scalar type `ty` for a value.
    pub(crate) fn operand(&mut self, v: &Value, ty: Scalar, span: Span) -> R<Operand> {
        Ok(match v {
            Value::Int(i) if ty == Scalar::I32 || i.is_static() => {
                if let (Some(x), Some((lo, hi))) = (i.as_static(), ty.integer_range()) {
                    // A value outside the type's range would be written as another bit pattern
                    // (2147483648 as an i32 is -2147483648): an error here, at the value.
                    if ty != Scalar::Bool && !(lo..=hi).contains(&i128::from(x)) {
                        return Err(Diagnostic::error(
                            format!("{x} does not fit in `{}`", ty.name()),
                            span,
                            "out of range",
                        )
                        .with_help(format!("{} holds {lo} to {hi}", crate::diag::article(ty.name()))));
                    }
                }
                // A run-time value computed with constants: each constant is written as an `i32`
                // literal of a 32-bit kernel's index math, so each must fit one.
                if !i.is_static() && self.index_bits == 32 && !i.constants_within(i32::MIN.into(), i32::MAX.into()) {
                    return Err(Diagnostic::error(
                        "a constant of this `i32` computation does not fit in `i32`".to_string(),
                        span,
                        "out of range",
                    )
                    .with_help("an i32 holds -2147483648 to 2147483647; convert to `i64` first (`.to(i64)`), or compute indices in 64 bits with the kernel clause `index(i64)`"));
                }
                Operand::Int(i.clone())
            }
            Value::Scalar(s, id) if *s == ty => Operand::Value(*id),
            Value::Float(x) if ty.is_float() => Operand::Float(*x),
            Value::Bool(b) if ty == Scalar::Bool => Operand::Bool(*b),
            other => {
                return Err(Diagnostic::error(
                    format!("expected a value of type `{}`, found a {}", ty.name(), other.kind()),
                    span,
                    "wrong type",
                ))
            }
        })
    }

    /// Gives literals the type `want`; other values must already have it.
    pub(crate) fn coerce(&mut self, v: Value, want: Scalar, span: Span) -> R<Value> {
        match (&v, want) {
            (Value::Int(i), Scalar::I32) => Ok(Value::Int(i.clone())),
            (Value::Int(i), s) if i.is_static() && s != Scalar::Bool => {
                let x = i.as_static().unwrap_or(0);
                if s.is_float() {
                    Ok(self.constant(s, Operand::Float(x as f64), span))
                } else {
                    // Checked as `operand` checks an `i32`'s: outside the type's range the literal
                    // would be another bit pattern (MLIR refused `100000 : i16`, found by the
                    // pipeline fuzz target).
                    let op = self.operand(&v, s, span)?;
                    Ok(self.constant(s, op, span))
                }
            }
            (Value::Float(x), s) if s.is_float() => Ok(self.constant(s, Operand::Float(*x), span)),
            (Value::Bool(_), Scalar::Bool) => Ok(v),
            (Value::Scalar(s, _), w) if *s == w => Ok(v),
            _ => Err(Diagnostic::error(
                format!("mismatched types: expected `{}`, found {}", want.name(), v.kind()),
                span,
                format!("this is {}", v.kind()),
            )
            .with_help(format!("convert with `.to({})`", want.name()))),
        }
    }

    /// A value of type `ty` that elaboration treats as known only at run time.
    pub(super) fn dynamic_scalar(&mut self, ty: Scalar, v: Value, span: Span) -> R<Value> {
        self.need_kernel(&format!("a run-time `{}` value", ty.name()), span)?;
        let (from, a) = match &v {
            Value::Int(i) => (if i.is_static() { Scalar::I64 } else { Scalar::I32 }, Operand::Int(i.clone())),
            Value::Float(x) => (Scalar::F64, Operand::Float(*x)),
            Value::Bool(b) => (Scalar::Bool, Operand::Bool(*b)),
            Value::Scalar(s, id) => (*s, Operand::Value(*id)),
            other => {
                return Err(Diagnostic::error(
                    format!("cannot make a `{}` from a {}", ty.name(), other.kind()),
                    span,
                    "not a number",
                ))
            }
        };
        if from == ty {
            return Ok(v);
        }
        let dst = self.fresh(ValueTy::Scalar(ty));
        self.emit(Inst::Convert { dst, from, to: ty, frag: None, a, span });
        Ok(if ty == Scalar::I32 { Value::Int(Int::var(dst, 1)) } else { Value::Scalar(ty, dst) })
    }

    /// A typed constant as a run-time value (the constant folds in code generation).
    fn constant(&mut self, ty: Scalar, c: Operand, span: Span) -> Value {
        if self.mode != Mode::Kernel {
            return match c {
                Operand::Float(x) => Value::Float(x),
                Operand::Int(i) => Value::Int(i),
                Operand::Bool(b) => Value::Bool(b),
                Operand::Value(_) => Value::Unit,
            };
        }
        let dst = self.fresh(ValueTy::Scalar(ty));
        let from = match c {
            Operand::Float(_) => Scalar::F64,
            Operand::Bool(_) => Scalar::Bool,
            _ => Scalar::I64,
        };
        self.emit(Inst::Convert { dst, from, to: ty, frag: None, a: c, span });
        Value::Scalar(ty, dst)
    }

    fn unary(&mut self, op: UnOp, v: Value, span: Span) -> R<Value> {
        match (op, v) {
            (UnOp::Neg, Value::Int(i)) => i.neg().map(Value::Int).map_err(|e| layout_err(e, span)),
            (UnOp::Neg, Value::Float(x)) => Ok(Value::Float(-x)),
            (UnOp::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
            (UnOp::Not, v @ Value::Scalar(Scalar::Bool, _)) if self.mode == Mode::Host => {
                self.host_not(&v).ok_or_else(|| {
                    Diagnostic::error(
                        "cannot apply `!` to this run-time `bool` in a host function",
                        span,
                        "not a host condition",
                    )
                })
            }
            (op, v @ (Value::Scalar(..) | Value::Frag(..) | Value::Int(_))) => {
                self.need_kernel("run-time arithmetic", span)?;
                let (ty, frag, a) = match &v {
                    Value::Scalar(s, id) => (*s, None, Operand::Value(*id)),
                    Value::Frag(f, id) => (f.elem, Some(f.len()), Operand::Value(*id)),
                    Value::Int(i) => (Scalar::I32, None, Operand::Int(i.clone())),
                    _ => unreachable!(),
                };
                self.no_fp8_arith(ty, if op == UnOp::Neg { "`-`" } else { "`!`" }, span)?;
                if op == UnOp::Neg && !(ty.is_float() || ty.is_signed()) {
                    return Err(Diagnostic::error(
                        format!("cannot negate a `{}`", ty.name()),
                        span,
                        "unsigned or bool",
                    ));
                }
                if op == UnOp::Not && ty.is_float() {
                    return Err(Diagnostic::error(format!("cannot apply `!` to `{}`", ty.name()), span, "float"));
                }
                let dst = self.fresh(self.result_ty(ty, frag, &v));
                self.emit(if op == UnOp::Neg {
                    Inst::Neg { dst, ty, frag, a, span }
                } else {
                    Inst::Not { dst, ty, frag, a, span }
                });
                Ok(self.result_value(ty, frag, &v, dst))
            }
            (op, v) => Err(Diagnostic::error(
                format!("cannot apply `{}` to a {}", if op == UnOp::Neg { "-" } else { "!" }, v.kind()),
                span,
                "unsupported operand",
            )),
        }
    }

    pub(super) fn result_ty(&self, ty: Scalar, frag: Option<usize>, like: &Value) -> ValueTy {
        match (frag, like) {
            (Some(_), Value::Frag(f, _)) => ValueTy::Frag(FragTy { elem: ty, shape: f.shape.clone() }),
            (Some(n), _) => ValueTy::Frag(FragTy { elem: ty, shape: IntTuple::Int(Int::S(n as i64)) }),
            _ => ValueTy::Scalar(ty),
        }
    }

    pub(super) fn result_value(&self, ty: Scalar, frag: Option<usize>, like: &Value, dst: ValueId) -> Value {
        match (frag, like) {
            (Some(_), Value::Frag(f, _)) => Value::Frag(FragTy { elem: ty, shape: f.shape.clone() }, dst),
            (Some(n), _) => Value::Frag(FragTy { elem: ty, shape: IntTuple::Int(Int::S(n as i64)) }, dst),
            _ if ty == Scalar::I32 => Value::Int(Int::var(dst, 1)),
            _ => Value::Scalar(ty, dst),
        }
    }

    pub(crate) fn binary(&mut self, op: BinOp, a: Value, b: Value, span: Span, sa: Span, sb: Span) -> R<Value> {
        // Index integers: the layout library's symbolic arithmetic folds and keeps exact expressions.
        if let (Value::Int(x), Value::Int(y)) = (&a, &b) {
            let lerr = |e| layout_err(e, span);
            let folded = match op {
                BinOp::Add => Some(x.add(y).map_err(lerr)?),
                BinOp::Sub => Some(x.sub(y).map_err(lerr)?),
                BinOp::Mul => Some(x.mul(y).map_err(lerr)?),
                BinOp::Div | BinOp::Rem if y.as_static() == Some(0) => {
                    return Err(Diagnostic::error("division by zero", sb, "this is zero"));
                }
                BinOp::Div => Some(x.floor_div(y).map_err(lerr)?),
                BinOp::Rem => Some(x.modulo(y).map_err(lerr)?),
                _ => None,
            };
            if let Some(v) = folded {
                return Ok(Value::Int(v));
            }
            if let (Some(p), Some(q)) = (x.as_static(), y.as_static()) {
                return static_int_op(op, p, q, span);
            }
        }
        if self.mode == Mode::Host {
            if let Some(v) = self.host_binary(op, &a, &b, span, sa, sb)? {
                return Ok(v);
            }
        }
        if let (Value::Bool(x), Value::Bool(y)) = (&a, &b) {
            return match op {
                BinOp::And => Ok(Value::Bool(*x && *y)),
                BinOp::Or => Ok(Value::Bool(*x || *y)),
                BinOp::Eq => Ok(Value::Bool(x == y)),
                BinOp::Ne | BinOp::BitXor => Ok(Value::Bool(x != y)),
                _ => Err(Diagnostic::error(
                    format!("cannot apply `{}` to bools", op.symbol()),
                    span,
                    "unsupported operation",
                )),
            };
        }
        if let (Value::Float(_) | Value::Int(_), Value::Float(_) | Value::Int(_)) = (&a, &b) {
            if let (Some(x), Some(y)) = (static_f64(&a), static_f64(&b)) {
                return static_float_op(op, x, y, span);
            }
        }
        // Run-time operations: find the common element type and whether fragments are involved.
        let elem = |v: &Value| match v {
            Value::Scalar(s, _) => Some(*s),
            Value::Frag(f, _) => Some(f.elem),
            Value::Int(i) if !i.is_static() => Some(Scalar::I32),
            Value::Bool(_) => Some(Scalar::Bool),
            _ => None,
        };
        let ty = match (elem(&a), elem(&b)) {
            (Some(x), Some(y)) if x == y => x,
            (Some(x), None) | (None, Some(x)) => x,
            (Some(x), Some(y)) => {
                return Err(Diagnostic::error(
                    format!("mismatched types in `{}`: `{}` and `{}`", op.symbol(), x.name(), y.name()),
                    span,
                    "operands differ",
                )
                .with_secondary(sa, format!("`{}`", x.name()))
                .with_secondary(sb, format!("`{}`", y.name()))
                .with_help("convert one side with `.to(T)`"));
            }
            (None, None) => {
                let d = Diagnostic::error(
                    format!("cannot apply `{}` to a {} and a {}", op.symbol(), a.kind(), b.kind()),
                    span,
                    "unsupported operands",
                );
                // A stream is no number: it is only named by a launch.
                return Err(if matches!(a, Value::Stream(_)) || matches!(b, Value::Stream(_)) {
                    d.with_help("a `stream` parameter is only named in a launch's `stream(s)` clause; it cannot be computed with or compared")
                } else {
                    d
                });
            }
        };
        let frag = match (&a, &b) {
            (Value::Frag(f, _), Value::Frag(g, _)) => {
                if f.len() != g.len() {
                    return Err(Diagnostic::error(
                        format!("fragments of {} and {} elements cannot be combined", f.len(), g.len()),
                        span,
                        "sizes differ",
                    )
                    .with_secondary(sa, format!("shape {}", f.shape))
                    .with_secondary(sb, format!("shape {}", g.shape)));
                }
                Some(f.len())
            }
            (Value::Frag(f, _), _) | (_, Value::Frag(f, _)) => Some(f.len()),
            _ => None,
        };
        self.need_kernel("run-time arithmetic", span)?;
        self.no_fp8_arith(ty, &format!("`{}`", op.symbol()), span)?;
        let to_operand = |f: &mut Self, v: &Value, s: Span| -> R<Operand> {
            match v {
                Value::Frag(_, id) => Ok(Operand::Value(*id)),
                Value::Int(i) if ty.is_float() => {
                    let x = i.as_static().ok_or_else(|| {
                        Diagnostic::error(format!("an i32 cannot be combined with a `{}`", ty.name()), s, "i32 here")
                            .with_help(format!("convert with `.to({})`", ty.name()))
                    })?;
                    Ok(Operand::Float(x as f64))
                }
                v => f.operand(v, ty, s),
            }
        };
        let x = to_operand(self, &a, sa)?;
        let y = to_operand(self, &b, sb)?;
        let like = if matches!(a, Value::Frag(..)) { a.clone() } else { b.clone() };
        let kop = match op {
            BinOp::Add => Some(BinaryOp::Add),
            BinOp::Sub => Some(BinaryOp::Sub),
            BinOp::Mul => Some(BinaryOp::Mul),
            BinOp::Div => Some(BinaryOp::Div),
            BinOp::Rem => Some(BinaryOp::Rem),
            BinOp::BitAnd | BinOp::And => Some(BinaryOp::And),
            BinOp::BitOr | BinOp::Or => Some(BinaryOp::Or),
            BinOp::BitXor => Some(BinaryOp::Xor),
            BinOp::Shl => Some(BinaryOp::Shl),
            BinOp::Shr => Some(BinaryOp::Shr),
            _ => None,
        };
        if let Some(kop) = kop {
            let logical = matches!(op, BinOp::And | BinOp::Or);
            if logical != (ty == Scalar::Bool) && !matches!(op, BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor) {
                return Err(Diagnostic::error(
                    format!("cannot apply `{}` to `{}`", op.symbol(), ty.name()),
                    span,
                    "unsupported operation",
                ));
            }
            if ty.is_float()
                && matches!(kop, BinaryOp::And | BinaryOp::Or | BinaryOp::Xor | BinaryOp::Shl | BinaryOp::Shr)
            {
                return Err(Diagnostic::error(
                    format!("cannot apply `{}` to `{}`", op.symbol(), ty.name()),
                    span,
                    "bitwise operation on a float",
                ));
            }
            let dst = self.fresh(self.result_ty(ty, frag, &like));
            self.emit(Inst::Binary { dst, op: kop, ty, frag, a: x, b: y, span });
            return Ok(self.result_value(ty, frag, &like, dst));
        }
        let cmp = match op {
            BinOp::Lt => CmpOp::Lt,
            BinOp::Le => CmpOp::Le,
            BinOp::Gt => CmpOp::Gt,
            BinOp::Ge => CmpOp::Ge,
            BinOp::Eq => CmpOp::Eq,
            _ => CmpOp::Ne,
        };
        let dst = self.fresh(self.result_ty(Scalar::Bool, frag, &like));
        self.emit(Inst::Cmp { dst, op: cmp, ty, frag, a: x, b: y, span });
        Ok(self.result_value(Scalar::Bool, frag, &like, dst))
    }
}

pub(crate) fn is_static_value(v: &Value) -> bool {
    match v {
        Value::Int(i) => i.is_static(),
        Value::Float(_)
        | Value::Bool(_)
        | Value::Type(_)
        | Value::Func(_)
        | Value::Str(_)
        | Value::Under
        | Value::Unit => true,
        Value::Layout(l) => l.is_static(),
        Value::CopyAtom { .. } | Value::MmaAtom(_) | Value::TiledMma(_) => true,
        Value::TiledCopy { tv, tile, .. } => tv.is_static() && tile.is_static(),
        Value::Tuple(items) => items.iter().all(is_static_value),
        _ => false,
    }
}

pub(super) fn static_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Float(x) => Some(*x),
        Value::Int(i) => i.as_static().map(|x| x as f64),
        _ => None,
    }
}

fn static_int_op(op: BinOp, p: i64, q: i64, span: Span) -> R<Value> {
    let overflow = || Diagnostic::error("integer overflow in a compile-time value", span, "overflows 64 bits");
    Ok(match op {
        BinOp::Lt => Value::Bool(p < q),
        BinOp::Le => Value::Bool(p <= q),
        BinOp::Gt => Value::Bool(p > q),
        BinOp::Ge => Value::Bool(p >= q),
        BinOp::Eq => Value::Bool(p == q),
        BinOp::Ne => Value::Bool(p != q),
        BinOp::BitAnd => Value::Int(Int::S(p & q)),
        BinOp::BitOr => Value::Int(Int::S(p | q)),
        BinOp::BitXor => Value::Int(Int::S(p ^ q)),
        BinOp::Shl => Value::Int(Int::S(u32::try_from(q).ok().and_then(|s| p.checked_shl(s)).ok_or_else(overflow)?)),
        BinOp::Shr => Value::Int(Int::S(u32::try_from(q).ok().and_then(|s| p.checked_shr(s)).ok_or_else(overflow)?)),
        _ => {
            return Err(Diagnostic::error(
                format!("cannot apply `{}` to integers", op.symbol()),
                span,
                "unsupported operation",
            ))
        }
    })
}

fn static_float_op(op: BinOp, x: f64, y: f64, span: Span) -> R<Value> {
    Ok(match op {
        BinOp::Add => Value::Float(x + y),
        BinOp::Sub => Value::Float(x - y),
        BinOp::Mul => Value::Float(x * y),
        BinOp::Div => Value::Float(x / y),
        BinOp::Lt => Value::Bool(x < y),
        BinOp::Le => Value::Bool(x <= y),
        BinOp::Gt => Value::Bool(x > y),
        BinOp::Ge => Value::Bool(x >= y),
        BinOp::Eq => Value::Bool(x == y),
        BinOp::Ne => Value::Bool(x != y),
        _ => {
            return Err(Diagnostic::error(
                format!("cannot apply `{}` to floats", op.symbol()),
                span,
                "unsupported operation",
            ))
        }
    })
}
