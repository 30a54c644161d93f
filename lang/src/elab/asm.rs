//! `asm("ptx", outputs: types, inputs: values)`: inline PTX, for instructions the language lacks.
//!
//! The PTX is not checked here (ptxas checks it, and the compiler maps its errors back to the
//! call): what is checked is what the compiler must get right to pass the operands. Each operand's
//! register class comes from its type ([`kir::asm_constraint`]); `$0`, `$1`, ... name the outputs,
//! then the inputs, and every `$` in the text must name one of them.

use super::builtins::args::{named, positional};
use super::builtins::Arg;
use super::value::Value;
use super::{Frame, R};
use crate::diag::{article, Diagnostic};
use crate::kir::{self, Inst, ValueTy};
use crate::span::Span;
use crate::types::Scalar;
use cute_layout::Int;

const USAGE: &str = "write `asm(\"mov.u32 $0, %laneid;\", outputs: u32)` or `asm(\"add.s32 $0, $1, $2;\", outputs: i32, inputs: (a, b))`";

pub(super) fn asm_call(f: &mut Frame, args: &[Arg], span: Span) -> R<Value> {
    let allowed = ["outputs", "inputs"];
    let outputs = named("asm", args, "outputs", &allowed)?;
    let inputs = named("asm", args, "inputs", &allowed)?;
    let text = positional(args)[0];
    let Value::Str(ptx) = &text.value else {
        return Err(Diagnostic::error(
            format!("the PTX of `asm` must be a string, found {}", article(&text.value.kind())),
            text.span,
            "not a string",
        )
        .with_help(USAGE));
    };
    let out_tys = match outputs {
        None => Vec::new(),
        Some(a) => output_types(a)?,
    };
    let mut ins = Vec::new();
    if let Some(a) = inputs {
        let values = match &a.value {
            Value::Tuple(items) => items.clone(),
            v => vec![v.clone()],
        };
        for v in &values {
            let ty = input_type(v, a.span)?;
            register_class(ty, a.span, "input")?;
            ins.push((f.operand(v, ty, a.span)?, ty));
        }
    }
    check_operands(ptx, out_tys.len(), ins.len(), text.span)?;
    f.need_kernel("`asm`", span)?;
    let outs: Vec<(kir::ValueId, Scalar)> = out_tys.iter().map(|&ty| (f.fresh(ValueTy::Scalar(ty)), ty)).collect();
    f.emit(Inst::Asm { outputs: outs.clone(), ptx: ptx.clone(), inputs: ins, span });
    let mut values: Vec<Value> = outs
        .into_iter()
        .map(|(id, ty)| if ty == Scalar::I32 { Value::Int(Int::var(id, 1)) } else { Value::Scalar(ty, id) })
        .collect();
    Ok(match (values.len(), &outputs.map(|a| &a.value)) {
        (0, _) => Value::Unit,
        // `outputs: u32` gives the value itself; `outputs: (u32, u32)` (or `(u32,)`) a tuple.
        (1, Some(Value::Type(_))) => values.remove(0),
        _ => Value::Tuple(values),
    })
}

/// `outputs: T` or `outputs: (T, U, ...)`: the output registers' types.
fn output_types(a: &Arg) -> R<Vec<Scalar>> {
    let items = match &a.value {
        Value::Tuple(items) => items.clone(),
        v => vec![v.clone()],
    };
    let mut tys = Vec::new();
    for v in &items {
        let Value::Type(t) = v else {
            return Err(Diagnostic::error(
                format!("`outputs` of `asm` are types, found {}", article(&v.kind())),
                a.span,
                "not a type",
            )
            .with_help("name each output register's type: `outputs: (u32, f32)`; the call gives their values"));
        };
        register_class(*t, a.span, "output")?;
        tys.push(*t);
    }
    Ok(tys)
}

/// The type of an input: a run-time or typed value's own; an integer literal is an `i32`, a float
/// literal an `f64`.
fn input_type(v: &Value, span: Span) -> R<Scalar> {
    match v {
        Value::Int(_) => Ok(Scalar::I32),
        Value::Scalar(t, _) => Ok(*t),
        Value::Bool(_) => Ok(Scalar::Bool),
        // As in C: a float literal is a double (`f32(1.5)` is an `f32`).
        Value::Float(_) => Ok(Scalar::F64),
        other => Err(Diagnostic::error(
            format!("`asm` inputs are scalars, found {}", article(&other.kind())),
            span,
            "not a scalar",
        )
        .with_help("pass numbers or `bool`s (`inputs: (a, b)`); for a tensor element, pass the element: `t[i]`")),
    }
}

fn register_class(ty: Scalar, span: Span, what: &str) -> R<&'static str> {
    kir::asm_constraint(ty).ok_or_else(|| {
        Diagnostic::error(format!("no PTX register class holds an `asm` {what} of type `{}`", ty.name()), span, "no register class")
            .with_help("`asm` operands are 16-bit (`h`: i16, u16, f16, bf16), 32-bit (`r`: i32, u32; `f`: f32), 64-bit (`l`: i64, u64; `d`: f64) or `bool` (`b`); convert 8-bit values with `.to(i32)`")
    })
}

/// Every `$` of the PTX names an operand: `$0` to `$N-1`.
fn check_operands(ptx: &str, outputs: usize, inputs: usize, span: Span) -> R<()> {
    let count = outputs + inputs;
    let have = format!(
        "this `asm` has {} ({} then {}: `$0` to `${}`)",
        crate::diag::count(count, "operand"),
        crate::diag::count(outputs, "output"),
        crate::diag::count(inputs, "input"),
        count.saturating_sub(1)
    );
    let mut chars = ptx.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if c != '$' {
            continue;
        }
        let mut digits = String::new();
        while let Some(&(_, d)) = chars.peek().filter(|(_, d)| d.is_ascii_digit()) {
            digits.push(d);
            chars.next();
        }
        match digits.parse::<usize>() {
            Ok(n) if n < count => {}
            Ok(n) => {
                let d = Diagnostic::error(format!("`${n}` names no operand: {have}"), span, "operand out of range");
                return Err(if count == 0 {
                    d.with_help("give the registers it names: `outputs: u32`, `inputs: (a, b)`")
                } else {
                    d.with_help("outputs are numbered first, then inputs: add the missing ones to `outputs`/`inputs`")
                });
            }
            Err(_) => {
                return Err(Diagnostic::error(
                    "a `$` in `asm` must name an operand (`$0`, `$1`, ...)",
                    span,
                    "bare `$`",
                )
                .with_help("PTX names registers with `%` (`%laneid`); `$N` is the N-th operand of the `asm`"))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_are_numbered_outputs_then_inputs() {
        let at = Span::new(0, 1);
        assert!(check_operands("lop3.b32 $0, $1, $2, $3, 0x96;", 1, 3, at).is_ok());
        assert!(check_operands("mov.u32 $0, %laneid;", 1, 0, at).is_ok());
        let e = check_operands("add.s32 $0, $1, $3;", 1, 2, at).unwrap_err();
        assert!(
            e.message
                .contains("`$3` names no operand: this `asm` has 3 operands (1 output then 2 inputs: `$0` to `$2`)"),
            "{}",
            e.message
        );
        assert!(check_operands("mov.u32 $x, 1;", 1, 0, at).unwrap_err().message.contains("must name an operand"));
        assert!(check_operands("trap; $", 0, 0, at).is_err());
    }

    #[test]
    fn each_register_type_has_its_class() {
        let classes: Vec<_> = [Scalar::F16, Scalar::U32, Scalar::I64, Scalar::F32, Scalar::F64, Scalar::Bool]
            .map(kir::asm_constraint)
            .to_vec();
        assert_eq!(classes, [Some("h"), Some("r"), Some("l"), Some("f"), Some("d"), Some("b")]);
        assert_eq!(kir::asm_constraint(Scalar::U8), None);
    }
}
