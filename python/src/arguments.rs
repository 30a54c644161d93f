//! A call's Python arguments as the runtime's `Arg`s.
//!
//! Tensors are read through their protocol ([`crate::tensors`]); Python numbers become scalars of
//! the type the parameter declares (an `int` for an `i32` parameter must fit an `i32`, a `float`
//! for an `f16` one is rounded to it). Everything else the runtime checks itself, with the
//! messages the C ABI gives: an argument that is a scalar where a tensor is expected (or the
//! reverse), a wrong count, a dtype, rank, extent, stride, alignment or bound that does not match.
//! So a Python argument is converted as faithfully as possible and left for the runtime to judge.
//!
//! The `Arg`s are written into a buffer the caller keeps between calls: a tensor slot reuses its
//! shape and stride vectors, so a warm call allocates nothing here.

use cute_runtime::f16::{f32_to_bf16_bits, f32_to_f16_bits};
use cute_runtime::{Arg, DType, HostSig, ParamKind, ParamSig, TensorView};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyTuple};

use crate::errors::refused_argument;
use crate::tensors::{not_a_tensor, read_tensor, Target};

/// What is called: for reading its arguments and naming them in messages.
#[derive(Clone, Copy)]
pub struct Callee<'a> {
    /// `host` or `kernel`.
    pub role: &'static str,
    /// The host function's or kernel's name.
    pub name: &'a str,
    /// Its parameters, in order.
    pub params: &'a [ParamSig],
}

/// A Python number (or an XLA FFI scalar attribute: [`crate::jax_ops`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Number {
    Bool(bool),
    Int(i128),
    Float(f64),
}

/// A Python `bool`, `int` or `float`.
fn exact_number(obj: &Bound<'_, PyAny>) -> Option<Number> {
    if obj.is_instance_of::<PyBool>() {
        return obj.extract::<bool>().ok().map(Number::Bool);
    }
    if obj.is_instance_of::<PyInt>() {
        return obj.extract::<i128>().ok().map(Number::Int);
    }
    if obj.is_instance_of::<PyFloat>() {
        return obj.extract::<f64>().ok().map(Number::Float);
    }
    None
}

/// Something that is not a tensor but converts to a number (NumPy scalars and the like).
fn number_like(obj: &Bound<'_, PyAny>) -> Option<Number> {
    let py = obj.py();
    if obj.hasattr(intern!(py, "__index__")).unwrap_or(false) {
        return obj.call_method0(intern!(py, "__index__")).and_then(|i| i.extract::<i128>()).ok().map(Number::Int);
    }
    if obj.hasattr(intern!(py, "__float__")).unwrap_or(false) {
        return obj.call_method0(intern!(py, "__float__")).and_then(|f| f.extract::<f64>()).ok().map(Number::Float);
    }
    None
}

/// The scalar `Arg` for `n` given to a parameter of kind `want` (`None`: no such parameter, the
/// runtime reports the count). `Err` when `n` cannot be a value of the declared type.
pub(crate) fn scalar_arg(n: Number, want: Option<&ParamKind>) -> Result<Arg, String> {
    let Some(ParamKind::Scalar(d)) = want else {
        // Not a scalar parameter: pass the number as it is; the runtime says what was expected.
        return Ok(match n {
            Number::Bool(b) => Arg::bool(b),
            Number::Int(v) => Arg::i64(i64::try_from(v).map_err(|_| format!("{v} does not fit 64 bits"))?),
            Number::Float(f) => Arg::f64(f),
        });
    };
    let d = *d;
    let float = |f: f64| -> Result<Arg, String> {
        Ok(match d {
            DType::F64 => Arg::f64(f),
            DType::F32 | DType::TF32 => Arg::Scalar(d, u64::from((f as f32).to_bits())),
            DType::F16 => Arg::f16_bits(f32_to_f16_bits(f as f32)),
            DType::BF16 => Arg::bf16_bits(f32_to_bf16_bits(f as f32)),
            _ => return Err(format!("{} scalars cannot be given from Python", d.name())),
        })
    };
    match (n, d.integer_range()) {
        (Number::Int(v), Some((lo, hi))) => {
            if v < lo || v > hi {
                return Err(format!("{v} does not fit the parameter's type {d} ({lo}..={hi})"));
            }
            // Two's complement, in the type's low bytes.
            let bits = (v as u64) & (u64::MAX >> (64 - 8 * d.size_bytes()));
            Ok(Arg::Scalar(d, bits))
        }
        (Number::Bool(b), Some(_)) => Ok(Arg::Scalar(d, u64::from(b))),
        // The runtime says "expects a i32 scalar but got a f64 scalar".
        (Number::Float(f), Some(_)) => Ok(Arg::f64(f)),
        (Number::Bool(b), None) => float(f64::from(u8::from(b))),
        (Number::Int(v), None) => float(v as f64),
        (Number::Float(f), None) => float(f),
    }
}

/// Whether the instances of a generic host function differ in a scalar parameter's type (`a: T`):
/// then a call's numbers are converted again once the instance is selected.
pub fn scalars_differ<'a>(mut instances: impl Iterator<Item = &'a HostSig>) -> bool {
    let Some(first) = instances.next() else { return false };
    instances.any(|s| {
        s.params.iter().zip(&first.params).any(|(a, b)| {
            !matches!((&a.kind, &b.kind), (ParamKind::Tensor(_), ParamKind::Tensor(_))) && a.kind != b.kind
        })
    })
}

/// Writes the `Arg`s of `args` (a call of `callee` on `target`) into `out`.
pub fn convert(args: &Bound<'_, PyTuple>, callee: Callee<'_>, target: Target<'_>, out: &mut Vec<Arg>) -> PyResult<()> {
    let py = args.py();
    let n = args.len();
    out.truncate(n);
    for (i, obj) in args.iter().enumerate() {
        let param = callee.params.get(i);
        let refuse =
            |what: &str| refused_argument(py, callee.role, callee.name, i, param.map(|p| p.name.as_str()), what);
        let scalar = |num: Number, out: &mut Vec<Arg>| -> PyResult<()> {
            let a = scalar_arg(num, param.map(|p| &p.kind)).map_err(|m| refuse(&m))?;
            if i < out.len() {
                out[i] = a;
            } else {
                out.push(a);
            }
            Ok(())
        };
        // A `stream` parameter: the handle of a stream object or an int.
        if let Some(ParamKind::Stream) = param.map(|p| &p.kind) {
            let a = Arg::Stream(crate::streams::stream_arg_handle(&obj).map_err(|m| refuse(&m))?);
            if i < out.len() {
                out[i] = a;
            } else {
                out.push(a);
            }
            continue;
        }
        if let Some(num) = exact_number(&obj) {
            scalar(num, out)?;
            continue;
        }
        // A tensor slot, its buffers reused.
        if i == out.len() {
            out.push(Arg::Tensor(TensorView::new(0, DType::U8, &[], &[])));
        } else if !matches!(out[i], Arg::Tensor(_)) {
            out[i] = Arg::Tensor(TensorView::new(0, DType::U8, &[], &[]));
        }
        let read = match out.get_mut(i) {
            Some(Arg::Tensor(v)) => read_tensor(&obj, target, v).map_err(|m| refuse(&m))?,
            _ => false,
        };
        if !read {
            let num = number_like(&obj).ok_or_else(|| refuse(&not_a_tensor(&obj)))?;
            scalar(num, out)?;
        }
    }
    Ok(())
}
