//! A kernel's fast-math controls (`math(ftz, approx, contract)`, [`FastMath`]) and `fma`.
//!
//! Each control is written where LLVM's NVPTX back end reads it, per kernel:
//! - `ftz`: the kernel's `denormal_fp_math_f32 = "preserve-sign"` (LLVM's `denormal-fp-math-f32`
//!   function attribute), so that NVPTX writes the `.ftz` forms of f32 instructions; and f32
//!   `exp2` as `llvm.intr.exp2`, which NVPTX writes as `ex2.approx.ftz.f32` alone. (libdevice's
//!   `__nv_exp2f`, which `math.exp2` becomes, reads flush-to-zero from a module flag, not from the
//!   function: it would stay `ex2.approx.f32`, which ptxas wraps in denormal range fixups.)
//! - `approx`: `fastmath<afn>` on float division (`div.approx`, and `rcp.approx` for `1 / x`) and
//!   on the `math` functions (libdevice's `__nv_fast_*` forms, `sqrt.approx`, `rsqrt.approx`); f32
//!   `exp2` as above and f32 `exp(x)` as `exp2(x * log2(e))`, as `__nv_fast_expf` computes it but
//!   in the kernel's own denormal mode.
//! - `contract`: `fastmath<contract>` on float `+`, `-` and `*`, which NVPTX fuses into `fma.rn`.
//!
//! A kernel without the clause gets none of these. (One thing holds in every kernel: f32 `sqrt` is
//! IEEE-rounded `sqrt.rn`, CUDA's default, unless `approx` asks for `sqrt.approx`.)

use super::KernelWriter;
use cute_lang::kir::{BinaryOp, FastMath, Inst, MathFn, Operand};
use cute_lang::span::Span;
use cute_lang::types::Scalar;

/// The `gpu.func` attribute of a kernel's flush-to-zero (kept on the `llvm.func` it becomes).
pub(super) fn kernel_attribute(math: FastMath) -> Option<&'static str> {
    math.ftz.then_some("denormal_fp_math_f32 = \"preserve-sign\"")
}

/// The `fastmath<...>` of a float binary op under `math` (with its leading space), if any.
pub(super) fn binary_flags(math: FastMath, op: BinaryOp, ty: Scalar) -> &'static str {
    match op {
        _ if !ty.is_float() => "",
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul if math.contract => " fastmath<contract>",
        BinaryOp::Div if math.approx => " fastmath<afn>",
        _ => "",
    }
}

impl KernelWriter<'_> {
    /// The op of `fun(x)` (of MLIR type `t`) under the kernel's controls, or `None` where the plain
    /// `math` op is right.
    pub(super) fn fast_math_fn(
        &mut self,
        fun: MathFn,
        ty: Scalar,
        frag: Option<usize>,
        x: &str,
        t: &str,
        span: Span,
    ) -> Option<String> {
        let math = self.k.math;
        let f32 = ty == Scalar::F32;
        match fun {
            MathFn::Exp2 if f32 && (math.ftz || math.approx) => Some(intrinsic("exp2", &[x], t, "none")),
            // f32 `sqrt` is `sqrt.rn` (IEEE, CUDA's default `-prec-sqrt=true`) in any kernel:
            // libdevice's `__nv_sqrtf`, which `math.sqrt` becomes, reads `__CUDA_PREC_SQRT` as 0
            // and gives `sqrt.approx`. Under `approx`, `sqrt.approx` (`rsqrt.approx` for
            // `1 / sqrt(x)`); both in the kernel's denormal mode.
            MathFn::Sqrt if f32 => Some(intrinsic("sqrt", &[x], t, if math.approx { "afn" } else { "none" })),
            MathFn::Rsqrt if f32 && math.approx => {
                let s = self.op(&intrinsic("sqrt", &[x], t, "afn"), span);
                let one = self.operand(&Operand::Float(1.0), ty, frag, span);
                Some(format!("arith.divf {one}, {s} fastmath<afn> : {t}"))
            }
            MathFn::Exp if f32 && math.approx => {
                let log2e = self.operand(&Operand::Float(std::f64::consts::LOG2_E), ty, frag, span);
                let scaled =
                    self.op(&format!("arith.mulf {x}, {log2e}{} : {t}", binary_flags(math, BinaryOp::Mul, ty)), span);
                Some(intrinsic("exp2", &[&scaled], t, "none"))
            }
            MathFn::Abs | MathFn::Floor | MathFn::Ceil | MathFn::Round => None,
            f if math.approx && ty.is_float() => Some(format!("math.{} {x} fastmath<afn> : {t}", f.name())),
            _ => None,
        }
    }

    /// `fma(a, b, c)`: `llvm.fma`, which NVPTX writes as `fma.rn` (element-wise on vectors).
    pub(super) fn fma(&mut self, inst: &Inst) {
        let Inst::Fma { dst, ty, frag, a, b, c, span } = inst else { unreachable!("`inst` sends only `fma` here") };
        let x = self.operand(a, *ty, *frag, *span);
        let y = self.operand(b, *ty, *frag, *span);
        let z = self.operand(c, *ty, *frag, *span);
        let t = self.ty(*dst);
        self.define(*dst, &intrinsic("fma", &[&x, &y, &z], &t, "none"), *span);
    }
}

/// A call of the LLVM intrinsic `llvm.NAME` on `args` of type `t` (overloaded on it), with the
/// fast-math `flags`. (Not the `math` op: `convert-gpu-to-nvvm` makes those libdevice calls, which
/// read flush-to-zero from a module flag rather than the kernel's attribute; and it would compute an
/// f16 `fma` in f32, rounding twice.)
fn intrinsic(name: &str, args: &[&str], t: &str, flags: &str) -> String {
    let types = vec![t; args.len()].join(", ");
    format!(
        "llvm.call_intrinsic \"llvm.{name}\"({}) {{fastmathFlags = #llvm.fastmath<{flags}>}} : ({types}) -> {t}",
        args.join(", ")
    )
}
