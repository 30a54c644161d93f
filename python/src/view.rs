//! `cutec.TensorView`: a raw device pointer with a dtype, shape, strides and (optionally) the bytes
//! it may address, exactly the C ABI's `cute_tensor`. For memory no array library describes, and
//! for checking calls without a GPU (fake, aligned pointers: `tests/test_offline.py`).

use cute_runtime::{DType, TensorView};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// The element type a name stands for: cutec's names (`f16`, `bf16`, `f32`, `i32`, `f8e4m3`,
/// ...), torch's and NumPy's (`float16`, `half`, `bfloat16`, `float32`, `float`, `int32`,
/// `float8_e4m3fn`, `bool`, ...), with or without a `torch.` prefix (so `str(torch.float16)`
/// works).
pub fn dtype_named(name: &str) -> Option<DType> {
    let name = name.strip_prefix("torch.").unwrap_or(name);
    if let Some(d) = DType::from_name(name) {
        return Some(d);
    }
    Some(match name {
        "float16" | "half" => DType::F16,
        "bfloat16" => DType::BF16,
        "float32" | "float" => DType::F32,
        "float64" | "double" => DType::F64,
        "int8" => DType::I8,
        "int16" | "short" => DType::I16,
        "int32" | "int" => DType::I32,
        "int64" | "long" => DType::I64,
        "uint8" => DType::U8,
        "uint16" => DType::U16,
        "uint32" => DType::U32,
        "uint64" => DType::U64,
        "float8_e4m3fn" => DType::F8E4M3,
        "float8_e5m2" => DType::F8E5M2,
        _ => return None,
    })
}

/// A dtype given as a name or as an object whose `str()` is one (`torch.float16`, `numpy.dtype`).
pub fn dtype_of(obj: &Bound<'_, PyAny>) -> PyResult<DType> {
    let name: String = match obj.extract::<String>() {
        Ok(s) => s,
        Err(_) => obj.str()?.extract()?,
    };
    dtype_named(&name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown dtype {name:?}; cutec's element types: {}",
            DType::ALL.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
        ))
    })
}

/// Compact row-major strides (in elements) of `shape`.
pub fn row_major(shape: &[i64]) -> Vec<i64> {
    let mut stride = vec![0i64; shape.len()];
    let mut acc = 1i64;
    for i in (0..shape.len()).rev() {
        stride[i] = acc;
        acc = acc.saturating_mul(shape[i].max(1));
    }
    stride
}

/// `cutec.TensorView(ptr, dtype, shape, strides=None, nbytes=None, device=None)`: device memory
/// at `ptr` holding `dtype` elements laid out by `shape` and `strides` (in elements; `None`:
/// compact row-major). `nbytes`, when given, is how many bytes are addressable from `ptr`: the
/// checks then also prove the layout stays inside them. `device`, when given, is the CUDA device
/// the memory is on (checked against the module's).
#[pyclass(frozen, name = "TensorView", module = "cutec")]
pub struct PyTensorView {
    pub view: TensorView,
    pub device: Option<usize>,
}

#[pymethods]
impl PyTensorView {
    #[new]
    #[pyo3(signature = (ptr, dtype, shape, strides=None, nbytes=None, device=None))]
    fn new(
        ptr: u64,
        dtype: &Bound<'_, PyAny>,
        shape: Vec<i64>,
        strides: Option<Vec<i64>>,
        nbytes: Option<u64>,
        device: Option<usize>,
    ) -> PyResult<Self> {
        let dtype = dtype_of(dtype)?;
        let stride = strides.unwrap_or_else(|| row_major(&shape));
        if stride.len() != shape.len() {
            return Err(PyTypeError::new_err(format!("{} strides for {} extents", stride.len(), shape.len())));
        }
        let mut view = TensorView::new(ptr, dtype, &shape, &stride);
        if let Some(b) = nbytes {
            view = view.with_bytes(b);
        }
        Ok(PyTensorView { view, device })
    }

    #[getter]
    fn ptr(&self) -> u64 {
        self.view.ptr
    }
    #[getter]
    fn dtype(&self) -> &'static str {
        self.view.dtype.name()
    }
    #[getter]
    fn shape(&self) -> Vec<i64> {
        self.view.shape.clone()
    }
    #[getter]
    fn strides(&self) -> Vec<i64> {
        self.view.stride.clone()
    }
    #[getter]
    fn nbytes(&self) -> Option<u64> {
        self.view.bytes
    }
    #[getter]
    fn device(&self) -> Option<usize> {
        self.device
    }

    fn __repr__(&self) -> String {
        let v = &self.view;
        let bytes = v.bytes.map_or(String::new(), |b| format!(", nbytes={b}"));
        let dev = self.device.map_or(String::new(), |d| format!(", device={d}"));
        format!(
            "TensorView(ptr={:#x}, dtype='{}', shape={:?}, strides={:?}{bytes}{dev})",
            v.ptr, v.dtype, v.shape, v.stride
        )
    }
}
