//! Printing: compile-time `print`, `printf` on the GPU or by the host plan, and `print_tensor`.

use super::args::{named, positional, Arg};
use crate::diag::Diagnostic;
use crate::elab::value::Value;
use crate::elab::{is_static_value, Frame, R};
use crate::kir::{FmtSeg, Inst, ValueTy};
use crate::span::Span;
use cute_layout::IntTuple;

pub(super) fn print(f: &mut Frame, _name: &str, args: Vec<Arg>, _span: Span) -> R<Value> {
    let text = format_args(&args, false)?;
    f.prog.module.prints.push(text);
    Ok(Value::Unit)
}

/// `print("x = {}", x)` or `print(a, b)`: static values formatted now, `?` for run-time ones.
pub(super) fn format_args(args: &[Arg], _runtime: bool) -> R<String> {
    let mut parts = args.iter().map(|a| a.value.clone());
    let Some(first) = parts.next() else { return Ok(String::new()) };
    if let Value::Str(fmt) = &first {
        if fmt.contains("{}") {
            let mut out = String::new();
            let mut pieces = fmt.split("{}");
            out.push_str(pieces.next().unwrap_or(""));
            for piece in pieces {
                match parts.next() {
                    Some(v) => out.push_str(&v.to_string()),
                    None => {
                        return Err(Diagnostic::error(
                            "more `{}` placeholders than values",
                            args[0].span,
                            "format string",
                        ))
                    }
                }
                out.push_str(piece);
            }
            if parts.next().is_some() {
                return Err(Diagnostic::error("more values than `{}` placeholders", args[0].span, "format string"));
            }
            return Ok(out);
        }
    }
    Ok(std::iter::once(first).chain(parts).map(|v| v.to_string()).collect::<Vec<_>>().join(" "))
}

/// The printed form of a value as segments: static parts as text, run-time parts as values, so a
/// layout with run-time extents prints its actual extents (CuTe's `cute.printf` of a layout).
pub(super) fn segments(v: &Value, out: &mut Vec<FmtSeg>, span: Span) -> R<()> {
    fn text(out: &mut Vec<FmtSeg>, t: &str) {
        match out.last_mut() {
            Some(FmtSeg::Text(s)) => s.push_str(t),
            _ => out.push(FmtSeg::Text(t.to_string())),
        }
    }
    fn tuple(t: &IntTuple, out: &mut Vec<FmtSeg>) {
        match t {
            IntTuple::Int(i) => match i.as_static() {
                Some(c) => text(out, &c.to_string()),
                None => out.push(FmtSeg::Int(i.clone())),
            },
            IntTuple::Tuple(items) => {
                text(out, "(");
                for (k, x) in items.iter().enumerate() {
                    if k > 0 {
                        text(out, ",");
                    }
                    tuple(x, out);
                }
                text(out, ")");
            }
        }
    }
    match v {
        Value::Int(i) => tuple(&IntTuple::Int(i.clone()), out),
        Value::Scalar(s, id) => out.push(FmtSeg::Value(*s, *id)),
        Value::Layout(l) => {
            tuple(&l.shape, out);
            text(out, ":");
            tuple(&l.stride, out);
        }
        Value::Tuple(items) => {
            text(out, "(");
            for (k, x) in items.iter().enumerate() {
                if k > 0 {
                    text(out, ",");
                }
                segments(x, out, span)?;
            }
            text(out, ")");
        }
        Value::Tensor(t) => {
            text(out, &format!("tensor<ptr<{}, {}, align<{}>> o ", t.ty.elem.name(), t.ty.space.name(), t.ty.align));
            segments(&Value::Layout(t.ty.layout.clone()), out, span)?;
            text(out, ">");
        }
        v if is_static_value(v) => text(out, &v.to_string()),
        other => {
            return Err(Diagnostic::error(
                format!("`printf` cannot print {}", crate::diag::article(&other.kind())),
                span,
                "unsupported value",
            ))
        }
    }
    Ok(())
}

/// `printf("x = {}\n", x)`: on the GPU in kernels, by the runtime at call time in host functions.
pub(super) fn printf(f: &mut Frame, _name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let args = &args[..];
    let Some(Value::Str(fmt)) = args.first().map(|a| &a.value) else {
        return Err(Diagnostic::error("`printf` starts with a format string", span, "no format string")
            .with_help("write `printf(\"x = {}\\n\", x)`"));
    };
    let mut segs: Vec<FmtSeg> = Vec::new();
    let mut pieces = fmt.split("{}");
    segs.push(FmtSeg::Text(pieces.next().unwrap_or("").to_string()));
    let mut rest = args[1..].iter();
    for piece in pieces {
        let Some(a) = rest.next() else {
            return Err(Diagnostic::error("more `{}` placeholders than values", args[0].span, "format string"));
        };
        segments(&a.value, &mut segs, a.span)?;
        segs.push(FmtSeg::Text(piece.to_string()));
    }
    if let Some(a) = rest.next() {
        return Err(Diagnostic::error("more values than `{}` placeholders", a.span, "extra value"));
    }
    // One text segment between values: merge neighbours, drop empties.
    let mut merged: Vec<FmtSeg> = Vec::new();
    for seg in segs {
        match (merged.last_mut(), seg) {
            (_, FmtSeg::Text(t)) if t.is_empty() => {}
            (Some(FmtSeg::Text(prev)), FmtSeg::Text(t)) => prev.push_str(&t),
            (_, seg) => merged.push(seg),
        }
    }
    let segs = merged;
    match f.mode {
        crate::elab::Mode::Kernel => f.emit(Inst::Printf { segments: segs, span }),
        crate::elab::Mode::Host => {
            if segs.iter().any(|s| matches!(s, FmtSeg::Value(..))) {
                return Err(Diagnostic::error("host functions print only integers and layouts", span, "run-time value")
                    .with_help("a run-time condition such as `n > 1024` cannot be printed: print the integers it compares, or branch on it with `if`"));
            }
            f.steps.push(crate::kir::HostStep::Print(segs));
        }
        crate::elab::Mode::Const => {
            return Err(Diagnostic::error("`printf` is not a compile-time value", span, "not constant"))
        }
    }
    Ok(Value::Unit)
}

pub(super) fn print_tensor_call(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let verbose = match named(name, &args, "verbose", &["verbose"])?.map(|a| &a.value) {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(other) => {
            return Err(Diagnostic::error(
                format!("`verbose` is `true` or `false`, found {}", crate::diag::article(&other.kind())),
                span,
                "not a bool",
            ))
        }
    };
    print_tensor(f, positional(&args)[0], verbose, span)
}

/// CuTe's `print_tensor`: the tensor's type and layout, then its elements in CuTe's torch-style
/// nesting (the last mode outermost, then rows of mode 0 holding mode 1), or with `verbose: true`
/// one `(coordinate)= value` line per element. Printed by every thread that calls it.
pub(super) fn print_tensor(f: &mut Frame, t: &Arg, verbose: bool, span: Span) -> R<Value> {
    f.need_kernel("`print_tensor`", span)?;
    let Value::Tensor(tv) = &t.value else {
        return Err(Diagnostic::error(
            format!("`print_tensor` takes a tensor, found {}", crate::diag::article(&t.value.kind())),
            t.span,
            "not a tensor",
        ));
    };
    let frag = super::method(f, t.value.clone(), &crate::ast::Ident { name: "load".into(), span }, Vec::new(), span)?;
    let Value::Frag(ft, fid) = frag else { unreachable!("load gives a fragment") };
    let modes: Vec<usize> = match &tv.ty.layout.shape {
        IntTuple::Int(_) => vec![ft.len()],
        IntTuple::Tuple(items) => {
            items.iter().map(|m| m.product().ok().and_then(|p| p.as_static()).unwrap_or(1) as usize).collect()
        }
    };
    let mut elems = Vec::with_capacity(ft.len());
    for i in 0..ft.len() {
        let dst = f.fresh(ValueTy::Scalar(ft.elem));
        f.emit(Inst::Extract { dst, ty: ft.elem, frag: fid, index: i, span });
        elems.push(FmtSeg::Value(ft.elem, dst));
    }
    let mut segs =
        vec![FmtSeg::Text(format!("tensor({}, {}, align<{}>) o ", tv.ty.elem.name(), tv.ty.space.name(), tv.ty.align))];
    segments(&Value::Layout(tv.ty.layout.clone()), &mut segs, span)?;
    if verbose {
        segs.push(FmtSeg::Text(", data= (\n".into()));
        // Row-major over the coordinates, as CuTe's verbose print lists them.
        let n = ft.len();
        for k in 0..n {
            let mut coord = vec![0usize; modes.len()];
            let mut rest = k;
            for (i, m) in modes.iter().enumerate().rev() {
                coord[i] = rest % m.max(&1);
                rest /= m.max(&1);
            }
            let mut index = 0;
            let mut stride = 1;
            for (c, m) in coord.iter().zip(&modes) {
                index += c * stride;
                stride *= m;
            }
            let text: Vec<String> = coord.iter().map(|c| c.to_string()).collect();
            segs.push(FmtSeg::Text(format!("\t({})= ", text.join(","))));
            segs.push(elems[index].clone());
            segs.push(FmtSeg::Text("\n".into()));
        }
        segs.push(FmtSeg::Text(")\n".into()));
    } else {
        segs.push(FmtSeg::Text(", data=\n       ".into()));
        nested(&modes, &elems, 0, &mut segs, 8);
        segs.push(FmtSeg::Text("\n".into()));
    }
    f.emit(Inst::Printf { segments: segs, span });
    Ok(Value::Unit)
}

/// Elements of a tensor in CuTe's torch-style nesting; `base` is the colexicographic index of the
/// first element of this block.
pub(super) fn nested(modes: &[usize], elems: &[FmtSeg], base: usize, out: &mut Vec<FmtSeg>, indent: usize) {
    let stride_of = |i: usize| modes[..i].iter().product::<usize>();
    match modes.len() {
        0 => {}
        1 => {
            out.push(FmtSeg::Text("[".into()));
            for j in 0..modes[0] {
                out.push(FmtSeg::Text(if j == 0 { " ".into() } else { "  ".into() }));
                out.push(elems[base + j].clone());
                out.push(FmtSeg::Text(",".into()));
            }
            out.push(FmtSeg::Text(" ]".into()));
        }
        2 => {
            out.push(FmtSeg::Text("[".into()));
            for i in 0..modes[0] {
                if i > 0 {
                    out.push(FmtSeg::Text(format!(",\n{}", " ".repeat(indent))));
                }
                out.push(FmtSeg::Text("[".into()));
                for j in 0..modes[1] {
                    out.push(FmtSeg::Text(if j == 0 { " ".into() } else { "  ".into() }));
                    out.push(elems[base + i + j * modes[0]].clone());
                    out.push(FmtSeg::Text(",".into()));
                }
                out.push(FmtSeg::Text(" ]".into()));
            }
            out.push(FmtSeg::Text("]".into()));
        }
        r => {
            // The last mode is outermost; each of its entries is a block of the other modes.
            let last = r - 1;
            out.push(FmtSeg::Text("[".into()));
            for k in 0..modes[last] {
                if k > 0 {
                    out.push(FmtSeg::Text(format!(",\n{}", " ".repeat(indent))));
                }
                nested(&modes[..last], elems, base + k * stride_of(last), out, indent + 1);
            }
            out.push(FmtSeg::Text("]".into()));
        }
    }
}
