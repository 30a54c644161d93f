//! Conversions between scalar types, 8-bit floats through NVVM's pair conversions.

use super::{mlir_scalar, KernelWriter};
use cute_lang::kir::{Operand, ValueId};
use cute_lang::span::Span;
use cute_lang::types::Scalar;

impl KernelWriter<'_> {
    pub(super) fn convert(
        &mut self,
        dst: ValueId,
        from: Scalar,
        to: Scalar,
        frag: Option<usize>,
        a: &Operand,
        span: Span,
    ) {
        let t = self.ty(dst);
        // Constants: write the value directly in the target type.
        match a {
            Operand::Float(x) if frag.is_none() => {
                self.float_const_into(Some(dst), *x, to, span);
                return;
            }
            Operand::Int(i) if frag.is_none() && i.is_static() && from != Scalar::I32 => {
                let c = i.as_static().unwrap_or(0);
                if to.is_float() {
                    self.float_const_into(Some(dst), c as f64, to, span);
                } else if to == Scalar::Bool {
                    self.define(dst, &format!("arith.constant {} : i1", c != 0), span);
                } else {
                    self.define(dst, &format!("arith.constant {c} : {t}"), span);
                }
                return;
            }
            Operand::Bool(b) => {
                self.define(dst, &format!("arith.constant {b}"), span);
                return;
            }
            _ => {}
        }
        let x = self.operand(a, from, frag, span);
        let ft = match frag {
            Some(n) => format!("vector<{n}x{}>", mlir_scalar(from)),
            None => mlir_scalar(from).to_string(),
        };
        if from.is_fp8() || to.is_fp8() {
            self.convert_fp8(dst, from, to, frag, &x, span);
            return;
        }
        if matches!((from, to), (Scalar::F16, Scalar::BF16) | (Scalar::BF16, Scalar::F16)) {
            // Same width, different formats: no single `arith` op; f32 holds both exactly.
            let wide = ft.replace(mlir_scalar(from), "f32");
            let f = self.op(&format!("arith.extf {x} : {ft} to {wide}"), span);
            self.define(dst, &format!("arith.truncf {f} : {wide} to {t}"), span);
            return;
        }
        let op = arith_conversion(from, to);
        self.define(dst, &format!("arith.{op} {x} : {ft} to {t}"), span);
    }

    /// Conversions from and to 8-bit floats, which `arith` cannot lower for NVPTX: the PTX pair
    /// conversions `cvt.rn.f16x2.{e4m3x2,e5m2x2}` (widening, exact) and
    /// `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32` (narrowing: round to nearest even, saturating to the
    /// largest finite value; NaN stays NaN), as NVVM ops (sm_89+). Everything else goes through
    /// f16 (exact for every 8-bit float) or f32: f16 and bf16 widen exactly to f32 first; f64 and
    /// integers are converted to f32 first (rounded there).
    pub(super) fn convert_fp8(
        &mut self,
        dst: ValueId,
        from: Scalar,
        to: Scalar,
        frag: Option<usize>,
        x: &str,
        span: Span,
    ) {
        let vt = |s: &str| match frag {
            Some(n) => format!("vector<{n}x{s}>"),
            None => s.to_string(),
        };
        let mt = |s: Scalar| vt(mlir_scalar(s));
        let d = Some(dst);
        if from.is_fp8() {
            let f16_last = to == Scalar::F16;
            let h = self.fp8_to_f16(if f16_last { d } else { None }, from, frag, x, span);
            if f16_last {
                return;
            }
            if to == Scalar::F64 {
                self.last(d, &format!("arith.extf {h} : {} to {}", vt("f16"), vt("f64")), span);
                return;
            }
            let f32_last = matches!(to, Scalar::F32 | Scalar::TF32);
            let f = self.last(
                if f32_last { d } else { None },
                &format!("arith.extf {h} : {} to {}", vt("f16"), vt("f32")),
                span,
            );
            if f32_last {
                return;
            }
            if to.is_fp8() {
                self.f32_to_fp8(dst, to, frag, &f, span);
            } else {
                let op = arith_conversion(Scalar::F32, to);
                self.last(d, &format!("arith.{op} {f} : {} to {}", vt("f32"), mt(to)), span);
            }
            return;
        }
        // To an 8-bit float: from f32 directly, from anything else through f32.
        let f = match from {
            Scalar::F32 | Scalar::TF32 => x.to_string(),
            _ => {
                let op = arith_conversion(from, Scalar::F32);
                self.op(&format!("arith.{op} {x} : {} to {}", mt(from), vt("f32")), span)
            }
        };
        self.f32_to_fp8(dst, to, frag, &f, span);
    }

    /// `x` (an 8-bit float scalar or vector of `from`) widened to f16, pairs at a time.
    pub(super) fn fp8_to_f16(
        &mut self,
        dst: Option<ValueId>,
        from: Scalar,
        frag: Option<usize>,
        x: &str,
        span: Span,
    ) -> String {
        let f8 = mlir_scalar(from);
        let cvt = |w: &mut Self, pair: &str| {
            w.op(&format!("nvvm.convert.f8x2.to.f16x2 {pair} : vector<2xi8> ({f8}) -> vector<2xf16>"), span)
        };
        let Some(n) = frag else {
            // Both bytes of the pair hold the value, so either half of the result is it.
            let b = self.op(&format!("arith.bitcast {x} : {f8} to i8"), span);
            let pair = self.op(&format!("vector.broadcast {b} : i8 to vector<2xi8>"), span);
            let h = cvt(self, &pair);
            return self.last(dst, &format!("vector.extract {h}[0] : f16 from vector<2xf16>"), span);
        };
        let bytes = self.op(&format!("arith.bitcast {x} : vector<{n}x{f8}> to vector<{n}xi8>"), span);
        let mut acc = self.op(&format!("arith.constant dense<0.000000e+00> : vector<{n}xf16>"), span);
        for i in (0..n).step_by(2) {
            let last = i + 2 >= n;
            let text = if i + 1 < n {
                let pair = self.op(&format!("vector.extract_strided_slice {bytes} {{offsets = [{i}], sizes = [2], strides = [1]}} : vector<{n}xi8> to vector<2xi8>"), span);
                let h = cvt(self, &pair);
                format!("vector.insert_strided_slice {h}, {acc} {{offsets = [{i}], strides = [1]}} : vector<2xf16> into vector<{n}xf16>")
            } else {
                let b = self.op(&format!("vector.extract {bytes}[{i}] : i8 from vector<{n}xi8>"), span);
                let pair = self.op(&format!("vector.broadcast {b} : i8 to vector<2xi8>"), span);
                let h2 = cvt(self, &pair);
                let h = self.op(&format!("vector.extract {h2}[0] : f16 from vector<2xf16>"), span);
                format!("vector.insert {h}, {acc} [{i}] : f16 into vector<{n}xf16>")
            };
            acc = self.last(if last { dst } else { None }, &text, span);
        }
        acc
    }

    /// f32 `x` (scalar or vector) narrowed to the 8-bit float `to`, defining `dst`: pairs at a time,
    /// `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d, a, b` puts `a` in the high byte, so a pair
    /// (x[i], x[i+1]) is converted as (a, b) = (x[i+1], x[i]) and lands in memory order.
    pub(super) fn f32_to_fp8(&mut self, dst: ValueId, to: Scalar, frag: Option<usize>, x: &str, span: Span) {
        let f8 = mlir_scalar(to);
        let cvt = |w: &mut Self, hi: &str, lo: &str| {
            w.op(&format!("nvvm.convert.f32x2.to.f8x2 {hi}, {lo} {{rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>}} : vector<2xi8> ({f8})"), span)
        };
        let Some(n) = frag else {
            let pair = cvt(self, x, x);
            let b = self.op(&format!("vector.extract {pair}[0] : i8 from vector<2xi8>"), span);
            self.define(dst, &format!("arith.bitcast {b} : i8 to {f8}"), span);
            return;
        };
        if n % 2 == 0 {
            // Each pair as an i16 (x[i] in its low byte), the halves gathered and reinterpreted.
            let mut halves = Vec::with_capacity(n / 2);
            for i in (0..n).step_by(2) {
                let lo = self.op(&format!("vector.extract {x}[{i}] : f32 from vector<{n}xf32>"), span);
                let hi = self.op(&format!("vector.extract {x}[{}] : f32 from vector<{n}xf32>", i + 1), span);
                halves.push(self.op(&format!("nvvm.convert.f32x2.to.f8x2 {hi}, {lo} {{rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>}} : i16 ({f8})"), span));
            }
            let h = n / 2;
            let packed = self.op(&format!("vector.from_elements {} : vector<{h}xi16>", halves.join(", ")), span);
            let bytes = self.op(&format!("vector.bitcast {packed} : vector<{h}xi16> to vector<{n}xi8>"), span);
            self.define(dst, &format!("arith.bitcast {bytes} : vector<{n}xi8> to vector<{n}x{f8}>"), span);
            return;
        }
        let mut acc = self.op(&format!("arith.constant dense<0> : vector<{n}xi8>"), span);
        for i in (0..n).step_by(2) {
            let lo = self.op(&format!("vector.extract {x}[{i}] : f32 from vector<{n}xf32>"), span);
            acc = if i + 1 < n {
                let hi = self.op(&format!("vector.extract {x}[{}] : f32 from vector<{n}xf32>", i + 1), span);
                let pair = cvt(self, &hi, &lo);
                self.op(&format!("vector.insert_strided_slice {pair}, {acc} {{offsets = [{i}], strides = [1]}} : vector<2xi8> into vector<{n}xi8>"), span)
            } else {
                let pair = cvt(self, &lo, &lo);
                let b = self.op(&format!("vector.extract {pair}[0] : i8 from vector<2xi8>"), span);
                self.op(&format!("vector.insert {b}, {acc} [{i}] : i8 into vector<{n}xi8>"), span)
            };
        }
        self.define(dst, &format!("arith.bitcast {acc} : vector<{n}xi8> to vector<{n}x{f8}>"), span);
    }
}

/// The `arith` op converting `from` to `to` (neither an 8-bit float).
fn arith_conversion(from: Scalar, to: Scalar) -> &'static str {
    {
        let (fb, tb) = (from.size_bytes(), to.size_bytes());
        let signed = from.is_signed() || from == Scalar::I32;
        match (from.is_float(), to.is_float()) {
            (true, true) if mlir_scalar(from) == mlir_scalar(to) => "bitcast",
            (true, true) if tb > fb => "extf",
            (true, true) => "truncf",
            (false, true) => {
                if signed {
                    "sitofp"
                } else {
                    "uitofp"
                }
            }
            (true, false) => {
                if to.is_signed() || to == Scalar::I32 {
                    "fptosi"
                } else {
                    "fptoui"
                }
            }
            (false, false) if tb > fb => {
                if signed {
                    "extsi"
                } else {
                    "extui"
                }
            }
            (false, false) if tb < fb => "trunci",
            (false, false) => "bitcast",
        }
    }
}
