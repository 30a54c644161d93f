//! The types of `.cute` values.

use std::fmt;

/// Scalar element types: CuTe DSL's numeric types, the one list every crate shares
/// ([`cute_abi::DType`]: names, sizes, C and MLIR spellings).
pub use cute_abi::DType as Scalar;

/// The bits of `x` as an 8-bit float of type `ty` (`f8e4m3`: E4M3FN, `f8e5m2`: E5M2), rounded to
/// nearest even and saturated to the largest finite value (448, 57344), as the device's
/// `cvt.rn.satfinite` and CUTLASS's default `NumericConverter` do. NaN gives the type's NaN.
pub fn fp8_bits(x: f64, ty: Scalar) -> u8 {
    let (mant_bits, bias, max_code) = match ty {
        Scalar::F8E4M3 => (3, 7, 0x7e_u8),
        _ => (2, 15, 0x7b_u8),
    };
    if x.is_nan() {
        return if ty == Scalar::F8E4M3 { 0x7f } else { 0x7e };
    }
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    // The codes 0..=max_code are increasing non-negative values: take the nearest, ties to the
    // even code (whose lowest mantissa bit is 0).
    let a = x.abs().min(fp8_value(max_code, mant_bits, bias));
    let (mut best, mut best_d) = (0u8, f64::INFINITY);
    for c in 0..=max_code {
        let d = (fp8_value(c, mant_bits, bias) - a).abs();
        if d < best_d || (d == best_d && c % 2 == 0) {
            (best, best_d) = (c, d);
        }
    }
    sign | best
}

/// The value of a non-negative 8-bit float code with `mant_bits` mantissa bits and exponent `bias`.
fn fp8_value(code: u8, mant_bits: u32, bias: i32) -> f64 {
    let (e, m) = (i32::from(code >> mant_bits), f64::from(code & ((1 << mant_bits) - 1)));
    let scale = f64::from(1u32 << mant_bits);
    if e == 0 {
        m / scale * 2f64.powi(1 - bias)
    } else {
        (1.0 + m / scale) * 2f64.powi(e - bias)
    }
}

pub use cute_abi::MemSpace;

/// One entry of a layout's shape or stride: known at compile time, or dynamic (`?`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Extent {
    Static(i64),
    Dynamic,
    /// Dynamic, and a known multiple of this.
    DynamicDiv(i64),
}

impl fmt::Display for Extent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Extent::Static(v) => write!(f, "{v}"),
            Extent::Dynamic => f.write_str("?"),
            Extent::DynamicDiv(d) => write!(f, "?{{div={d}}}"),
        }
    }
}

/// A nested integer tuple of extents, as CuTe writes shapes and strides.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tuple {
    Leaf(Extent),
    Node(Vec<Tuple>),
}

impl Tuple {
    pub fn leaves(&self) -> Vec<Extent> {
        match self {
            Tuple::Leaf(e) => vec![*e],
            Tuple::Node(items) => items.iter().flat_map(Tuple::leaves).collect(),
        }
    }

    /// Number of top-level modes (an integer has rank 1).
    pub fn rank(&self) -> usize {
        match self {
            Tuple::Leaf(_) => 1,
            Tuple::Node(items) => items.len(),
        }
    }

    pub fn congruent(&self, other: &Tuple) -> bool {
        match (self, other) {
            (Tuple::Leaf(_), Tuple::Leaf(_)) => true,
            (Tuple::Node(a), Tuple::Node(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.congruent(y)),
            _ => false,
        }
    }
}

impl fmt::Display for Tuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tuple::Leaf(e) => write!(f, "{e}"),
            Tuple::Node(items) => {
                f.write_str("(")?;
                for (i, t) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// A layout whose entries may be dynamic: the type-level part of a tensor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LayoutType {
    pub shape: Tuple,
    pub stride: Tuple,
}

impl LayoutType {
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// Number of dynamic shape entries, then of dynamic stride entries: the kernel ABI passes these.
    pub fn dynamic_counts(&self) -> (usize, usize) {
        let count = |t: &Tuple| t.leaves().iter().filter(|e| !matches!(e, Extent::Static(_))).count();
        (count(&self.shape), count(&self.stride))
    }
}

impl fmt::Display for LayoutType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.shape, self.stride)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    pub elem: Scalar,
    pub space: MemSpace,
    /// Alignment of the base pointer in bytes.
    pub align: u32,
    pub layout: LayoutType,
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tensor<{}, {}, {}, align: {}>", self.elem.name(), self.space.name(), self.layout, self.align)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Scalar(Scalar),
    /// An integer literal: static, takes the integer or float type its context needs.
    IntLit,
    /// A float literal: takes the float type its context needs.
    FloatLit,
    Tensor(TensorType),
    /// `thread_idx`, `block_idx`, ...: a value with `.x`, `.y`, `.z`.
    Dim3,
    Unit,
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Scalar(s) => f.write_str(s.name()),
            Ty::IntLit => f.write_str("integer literal"),
            Ty::FloatLit => f.write_str("float literal"),
            Ty::Tensor(t) => write!(f, "{t}"),
            Ty::Dim3 => f.write_str("dim3"),
            Ty::Unit => f.write_str("()"),
        }
    }
}

#[cfg(test)]
mod fp8_tests {
    use super::{fp8_bits, Scalar};

    #[test]
    fn e4m3_rounds_to_nearest_even_and_saturates() {
        let e = |x: f64| fp8_bits(x, Scalar::F8E4M3);
        assert_eq!((e(0.0), e(-0.0), e(1.0), e(-2.0), e(448.0)), (0x00, 0x80, 0x38, 0xc0, 0x7e));
        assert_eq!((e(1.0625), e(1.1875), e(1.2)), (0x38, 0x3a, 0x3a)); // ties to even, nearest
        assert_eq!((e(2f64.powi(-9)), e(2f64.powi(-11)), e(3.0 * 2f64.powi(-11))), (0x01, 0x00, 0x01));
        assert_eq!((e(464.0), e(1e9), e(f64::NEG_INFINITY), e(f64::NAN)), (0x7e, 0x7e, 0xfe, 0x7f));
    }

    #[test]
    fn e5m2_rounds_to_nearest_even_and_saturates() {
        let e = |x: f64| fp8_bits(x, Scalar::F8E5M2);
        assert_eq!((e(1.0), e(-1.5), e(57344.0), e(1e6), e(f64::INFINITY)), (0x3c, 0xbe, 0x7b, 0x7b, 0x7b));
        assert_eq!((e(1.125), e(1.375), e(2f64.powi(-16))), (0x3c, 0x3e, 0x01));
    }
}
