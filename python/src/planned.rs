//! Signatures and checks as Python values: parameter lists, the launches a host call would make,
//! and a kernel's flat ABI arguments, as plain lists, dicts, tuples and ints (pointers are ints).

use cute_runtime::{KernelArg, ParamKind, ParamSig, PlannedLaunch};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// `("ptr", 0x7f...)`, `("i32", 2048)`, `("f32", 0.5)`: one kernel-ABI value.
pub fn abi_value<'py>(py: Python<'py>, a: &KernelArg) -> PyResult<Bound<'py, PyAny>> {
    let v = match *a {
        KernelArg::Ptr(p) => ("ptr", p).into_pyobject(py)?.into_any(),
        KernelArg::I32(v) => ("i32", v).into_pyobject(py)?.into_any(),
        KernelArg::U32(v) => ("u32", v).into_pyobject(py)?.into_any(),
        KernelArg::I64(v) => ("i64", v).into_pyobject(py)?.into_any(),
        KernelArg::U64(v) => ("u64", v).into_pyobject(py)?.into_any(),
        KernelArg::F32(v) => ("f32", v).into_pyobject(py)?.into_any(),
        KernelArg::F64(v) => ("f64", v).into_pyobject(py)?.into_any(),
        KernelArg::F16Bits(v) => ("b16", v).into_pyobject(py)?.into_any(),
        KernelArg::U8(v) => ("b8", v).into_pyobject(py)?.into_any(),
    };
    Ok(v)
}

/// A list of kernel-ABI values.
pub fn abi_list<'py>(py: Python<'py>, args: &[KernelArg]) -> PyResult<Bound<'py, PyList>> {
    let items = args.iter().map(|a| abi_value(py, a)).collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// The launches of a checked host call: one dict per launch, `kernel`, `grid`, `block`, `smem`,
/// `args` (the flat ABI values) and `views` (per tensor argument: the kernel parameter, the host
/// parameter it views, the element offset, shape and strides).
pub fn launches<'py>(py: Python<'py>, planned: &[PlannedLaunch]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for l in planned {
        let d = PyDict::new(py);
        d.set_item("kernel", &l.kernel)?;
        d.set_item("grid", l.config.grid)?;
        d.set_item("block", l.config.block)?;
        d.set_item("smem", l.config.shared_mem_bytes)?;
        d.set_item("args", abi_list(py, &l.args)?)?;
        let views = PyList::empty(py);
        for (param, host_param, offset, shape, stride) in &l.views {
            let v = PyDict::new(py);
            v.set_item("param", param)?;
            v.set_item("host_param", host_param)?;
            v.set_item("offset", offset)?;
            v.set_item("shape", shape.clone())?;
            v.set_item("strides", stride.clone())?;
            views.append(v)?;
        }
        d.set_item("views", views)?;
        // The host's `stream` parameter (its index) the launch goes to; None: the call's stream.
        d.set_item("stream", l.stream)?;
        list.append(d)?;
    }
    Ok(list)
}

/// `[(name, type), ...]`: `("mA", "tensor<f16, gmem, (?,?{div=8}):(?{div=8},1), align: 16>")`,
/// `("s", "i32")`.
pub fn params(ps: &[ParamSig]) -> Vec<(String, String)> {
    ps.iter()
        .map(|p| {
            let ty = match &p.kind {
                ParamKind::Tensor(t) => t.to_string(),
                ParamKind::Scalar(d) => d.name().to_string(),
                ParamKind::Stream => "stream".to_string(),
            };
            (p.name.clone(), ty)
        })
        .collect()
}
