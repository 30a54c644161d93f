//! Device `printf`.

use super::{escape, mlir_scalar, v, KernelWriter};
use cute_lang::kir::{FmtSeg, Inst};
use cute_lang::span::Span;
use cute_lang::types::Scalar;

impl KernelWriter<'_> {
    /// `gpu.printf`, its arguments promoted as C varargs are.
    pub(super) fn print(&mut self, inst: &Inst) {
        match inst {
            Inst::Printf { segments, span } => {
                let mut format = String::new();
                let mut names = Vec::new();
                let mut types = Vec::new();
                for seg in segments {
                    let (x, ty) = match seg {
                        FmtSeg::Text(t) => {
                            format.push_str(&t.replace('%', "%%"));
                            continue;
                        }
                        FmtSeg::Int(i) => {
                            (self.int(i, *span), if self.ix == "i32" { Scalar::I32 } else { Scalar::I64 })
                        }
                        FmtSeg::Value(ty, id) => (v(*id), *ty),
                    };
                    // C varargs promote floats to double and small integers to int.
                    let (x, t, conv) = if ty.is_float() {
                        let x = if ty == Scalar::F64 {
                            x
                        } else {
                            self.op(&format!("arith.extf {x} : {} to f64", mlir_scalar(ty)), *span)
                        };
                        (x, "f64", "%f")
                    } else if ty == Scalar::Bool || ty.size_bytes() < 4 {
                        let op = if ty.is_signed() { "extsi" } else { "extui" };
                        (
                            self.op(&format!("arith.{op} {x} : {} to i32", mlir_scalar(ty)), *span),
                            "i32",
                            if ty.is_signed() { "%d" } else { "%u" },
                        )
                    } else if ty.size_bytes() == 8 {
                        (x, "i64", if ty.is_signed() { "%lld" } else { "%llu" })
                    } else {
                        (x, "i32", if ty == Scalar::U32 { "%u" } else { "%d" })
                    };
                    format.push_str(conv);
                    names.push(x);
                    types.push(t);
                }
                self.printf_line(&format, &names, &types, *span);
            }
            _ => unreachable!("`inst` sends only `printf` here"),
        }
    }

    /// `gpu.printf` of a C format (`%` already doubled in its text) and its promoted arguments.
    pub(super) fn printf_line(&mut self, format: &str, names: &[String], types: &[&str], span: Span) {
        let loc = self.loc(span);
        let fmt = escape(format);
        if names.is_empty() {
            self.line(&format!("gpu.printf \"{fmt}\" {loc}"));
        } else {
            self.line(&format!("gpu.printf \"{fmt}\", {} : {} {loc}", names.join(", "), types.join(", ")));
        }
    }
}
