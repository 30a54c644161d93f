//! Scalar and fragment arithmetic: operands and constants, `arith` and `math` ops.

use super::index::{euclid, Euclid};
use super::{fast_math, mlir_scalar, v, KernelWriter};
use cute_lang::kir::{BinaryOp, CmpOp, Inst, MathFn, Operand, ValueId, ValueTy};
use cute_lang::span::Span;
use cute_lang::types::Scalar;
use cute_layout::Int;

impl KernelWriter<'_> {
    /// An operand as an SSA name of type `ty`, or of `vector<len x ty>` when `frag` is set (scalars
    /// and constants are broadcast).
    pub(super) fn operand(&mut self, o: &Operand, ty: Scalar, frag: Option<usize>, span: Span) -> String {
        let mt = mlir_scalar(ty);
        let scalar = match o {
            Operand::Value(id) if self.wide_values.contains(id) && matches!(ty, Scalar::I32 | Scalar::U32) => {
                // An index integer of a 64-bit kernel (a loop counter) as an `i32` value.
                self.op(&format!("arith.trunci {} : {} to i32", v(*id), self.ix), span)
            }
            Operand::Value(id) => {
                let name = v(*id);
                let is_vec = matches!(self.k.value_types.get(*id as usize), Some(ValueTy::Frag(_)));
                if frag.is_none() || is_vec {
                    return name;
                }
                name
            }
            Operand::Int(i) => {
                if ty == Scalar::I32 || ty == Scalar::U32 {
                    self.int32(i, span)
                } else if let Some(c) = i.as_static() {
                    if ty.is_float() {
                        self.float_const(c as f64, ty, span)
                    } else {
                        self.op(&format!("arith.constant {c} : {mt}"), span)
                    }
                } else {
                    let x = self.int(i, span);
                    match (self.ix, ty.size_bytes() * 8) {
                        ("i32", _) => self.op(&format!("arith.extsi {x} : i32 to {mt}"), span),
                        (_, 64) => x,
                        (ix, _) => self.op(&format!("arith.trunci {x} : {ix} to {mt}"), span),
                    }
                }
            }
            Operand::Float(x) => self.float_const(*x, ty, span),
            Operand::Bool(b) => self.op(&format!("arith.constant {b}"), span),
        };
        match frag {
            Some(n) => self.op(&format!("vector.broadcast {scalar} : {mt} to vector<{n}x{mt}>"), span),
            None => scalar,
        }
    }

    /// Whether an operand of an `i32` comparison is an index integer of a 64-bit kernel: a
    /// run-time [`Operand::Int`] or a value kept in 64 bits.
    fn is_index_operand(&self, o: &Operand) -> bool {
        match o {
            Operand::Int(i) => i.as_static().is_none(),
            Operand::Value(id) => self.wide_values.contains(id),
            _ => false,
        }
    }

    /// An `i32` comparison's operand in the 64-bit kernel's index type: other `i32` values
    /// sign-extended.
    fn index_operand(&mut self, o: &Operand, span: Span) -> String {
        match o {
            Operand::Int(i) => self.int(i, span),
            Operand::Value(id) if self.wide_values.contains(id) => v(*id),
            other => {
                let x = self.operand(other, Scalar::I32, None, span);
                self.op(&format!("arith.extsi {x} : i32 to {}", self.ix), span)
            }
        }
    }

    /// Float constants are written as exact hexadecimal bit patterns; types narrower than f32 are
    /// built in f32 and truncated (round to nearest even, as a literal in CUDA C++).
    pub(super) fn float_const(&mut self, x: f64, ty: Scalar, span: Span) -> String {
        self.float_const_into(None, x, ty, span)
    }

    /// A float constant, defining `dst` when given (else a fresh temporary).
    pub(super) fn float_const_into(&mut self, dst: Option<ValueId>, x: f64, ty: Scalar, span: Span) -> String {
        if ty.is_fp8() {
            // The bits, rounded and saturated here as the device's conversion would.
            let c = self.op(&format!("arith.constant {} : i8", cute_lang::types::fp8_bits(x, ty) as i8), span);
            let cast = format!("arith.bitcast {c} : i8 to {}", mlir_scalar(ty));
            return self.last(dst, &cast, span);
        }
        let (text, narrow) = match ty {
            Scalar::F64 => (format!("arith.constant 0x{:016X} : f64", x.to_bits()), None),
            Scalar::F32 | Scalar::TF32 => (format!("arith.constant 0x{:08X} : f32", (x as f32).to_bits()), None),
            other => (format!("arith.constant 0x{:08X} : f32", (x as f32).to_bits()), Some(other)),
        };
        match narrow {
            None => self.last(dst, &text, span),
            Some(narrow) => {
                let c = self.op(&text, span);
                self.last(dst, &format!("arith.truncf {c} : f32 to {}", mlir_scalar(narrow)), span)
            }
        }
    }

    /// `arith`/`math` on scalars and fragments; integer `/` and `%` are Euclidean.
    pub(super) fn arith(&mut self, inst: &Inst) {
        match inst {
            Inst::Binary { dst, op, ty, frag, a, b, span } => {
                let x = self.operand(a, *ty, *frag, *span);
                let y = self.operand(b, *ty, *frag, *span);
                let (f, s) = (ty.is_float(), ty.is_signed() || *ty == Scalar::I32);
                let name = binary_op_name(*op, f, s);
                let t = self.ty(*dst);
                if s && !f && matches!(op, BinaryOp::Div | BinaryOp::Rem) {
                    // Integer `/` and `%` are Euclidean, as in the layout algebra (docs/language.md).
                    let want = if *op == BinaryOp::Div { Euclid::Quotient } else { Euclid::Remainder };
                    euclid(self, &t, &x, &y, want, Some(*dst), *span);
                } else {
                    let flags = fast_math::binary_flags(self.k.math, *op, *ty);
                    self.define(*dst, &format!("arith.{name} {x}, {y}{flags} : {t}"), *span);
                }
            }
            Inst::Neg { dst, ty, frag, a, span } => {
                let x = self.operand(a, *ty, *frag, *span);
                let t = self.ty(*dst);
                if ty.is_float() {
                    self.define(*dst, &format!("arith.negf {x} : {t}"), *span);
                } else {
                    let z = self.operand(&Operand::Int(Int::S(0)), *ty, *frag, *span);
                    self.define(*dst, &format!("arith.subi {z}, {x} : {t}"), *span);
                }
            }
            Inst::Not { dst, ty, frag, a, span } => {
                let x = self.operand(a, *ty, *frag, *span);
                let ones = if *ty == Scalar::Bool {
                    self.operand(&Operand::Bool(true), *ty, *frag, *span)
                } else {
                    self.operand(&Operand::Int(Int::S(-1)), *ty, *frag, *span)
                };
                let t = self.ty(*dst);
                self.define(*dst, &format!("arith.xori {x}, {ones} : {t}"), *span);
            }
            Inst::Cmp { dst, op, ty, frag, a, b, span } => {
                // A 64-bit kernel compares index integers (`i < n`) in 64 bits, not truncated.
                let wide = self.ix != "i32"
                    && *ty == Scalar::I32
                    && frag.is_none()
                    && [a, b].into_iter().any(|o| self.is_index_operand(o));
                let (x, y) = if wide {
                    (self.index_operand(a, *span), self.index_operand(b, *span))
                } else {
                    (self.operand(a, *ty, *frag, *span), self.operand(b, *ty, *frag, *span))
                };
                let signed = ty.is_signed() || *ty == Scalar::I32;
                let pred = match (op, ty.is_float(), signed) {
                    (CmpOp::Eq, true, _) => "oeq",
                    (CmpOp::Ne, true, _) => "une",
                    (CmpOp::Lt, true, _) => "olt",
                    (CmpOp::Le, true, _) => "ole",
                    (CmpOp::Gt, true, _) => "ogt",
                    (CmpOp::Ge, true, _) => "oge",
                    (CmpOp::Eq, false, _) => "eq",
                    (CmpOp::Ne, false, _) => "ne",
                    (CmpOp::Lt, false, true) => "slt",
                    (CmpOp::Le, false, true) => "sle",
                    (CmpOp::Gt, false, true) => "sgt",
                    (CmpOp::Ge, false, true) => "sge",
                    (CmpOp::Lt, false, false) => "ult",
                    (CmpOp::Le, false, false) => "ule",
                    (CmpOp::Gt, false, false) => "ugt",
                    (CmpOp::Ge, false, false) => "uge",
                };
                let operand_ty = match frag {
                    Some(n) => format!("vector<{n}x{}>", mlir_scalar(*ty)),
                    None if wide => self.ix.to_string(),
                    None => mlir_scalar(*ty).to_string(),
                };
                let kind = if ty.is_float() { "cmpf" } else { "cmpi" };
                self.define(*dst, &format!("arith.{kind} {pred}, {x}, {y} : {operand_ty}"), *span);
            }
            Inst::Select { dst, ty, frag, c, a, b, span } => {
                let cond = self.operand(c, Scalar::Bool, None, *span);
                let x = self.operand(a, *ty, *frag, *span);
                let y = self.operand(b, *ty, *frag, *span);
                let t = self.ty(*dst);
                let cond_ty = match (frag, c) {
                    (Some(n), Operand::Value(id))
                        if matches!(self.k.value_types.get(*id as usize), Some(ValueTy::Frag(_))) =>
                    {
                        format!("vector<{n}xi1>, ")
                    }
                    _ => String::new(),
                };
                self.define(*dst, &format!("arith.select {cond}, {x}, {y} : {cond_ty}{t}"), *span);
            }
            Inst::Math { dst, fun, ty, frag, a, span } => {
                let x = self.operand(a, *ty, *frag, *span);
                let t = self.ty(*dst);
                let text = match (self.fast_math_fn(*fun, *ty, *frag, &x, &t, *span), fun, ty.is_float()) {
                    (Some(fast), ..) => fast,
                    (None, MathFn::Abs, true) => format!("math.absf {x} : {t}"),
                    (None, MathFn::Abs, false) => format!("math.absi {x} : {t}"),
                    (None, MathFn::Round, _) => format!("math.roundeven {x} : {t}"),
                    (None, f, _) => format!("math.{} {x} : {t}", f.name()),
                };
                self.define(*dst, &text, *span);
            }
            _ => unreachable!("`inst` sends only arithmetic here"),
        }
    }
}

/// The `arith` op of a binary operator on floats (`float`) or signed or unsigned integers.
pub(super) fn binary_op_name(op: BinaryOp, float: bool, signed: bool) -> &'static str {
    match (op, float, signed) {
        (BinaryOp::Add, true, _) => "addf",
        (BinaryOp::Add, false, _) => "addi",
        (BinaryOp::Sub, true, _) => "subf",
        (BinaryOp::Sub, false, _) => "subi",
        (BinaryOp::Mul, true, _) => "mulf",
        (BinaryOp::Mul, false, _) => "muli",
        (BinaryOp::Div, true, _) => "divf",
        (BinaryOp::Div, false, true) => "divsi",
        (BinaryOp::Div, false, false) => "divui",
        (BinaryOp::Rem, true, _) => "remf",
        (BinaryOp::Rem, false, true) => "remsi",
        (BinaryOp::Rem, false, false) => "remui",
        (BinaryOp::And, ..) => "andi",
        (BinaryOp::Or, ..) => "ori",
        (BinaryOp::Xor, ..) => "xori",
        (BinaryOp::Shl, ..) => "shli",
        (BinaryOp::Shr, _, true) => "shrsi",
        (BinaryOp::Shr, _, false) => "shrui",
        (BinaryOp::Min, true, _) => "minimumf",
        (BinaryOp::Min, false, true) => "minsi",
        (BinaryOp::Min, false, false) => "minui",
        (BinaryOp::Max, true, _) => "maximumf",
        (BinaryOp::Max, false, true) => "maxsi",
        (BinaryOp::Max, false, false) => "maxui",
    }
}
