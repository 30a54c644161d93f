//! Swizzles `S<B,M,S>` and composed layouts `S<B,M,S> o off o L`.
//!
//! A swizzle is CuTe's `Swizzle<BBits, MBase, SShift>` (cute/swizzle.hpp):
//!
//! ```text
//! bit_msk = (1 << B) - 1
//! yyy_msk = bit_msk << (M + max(0, S))
//! zzz_msk = bit_msk << (M - min(0, S))
//! apply(x) = x ^ shiftr(x & yyy_msk, S)      shiftr by a negative S shifts left
//! ```
//!
//! i.e. the B bits YYY are XORed into the B bits ZZZ, |S| positions away;
//! the lowest M bits (one vector of 2^M elements) never move. CuTe requires
//! |S| >= B, so YYY and ZZZ never overlap: YYY is left as it is, which makes
//! every swizzle a bijection on the integers and its own inverse.
//!
//! What it is for: a row-major shared-memory tile whose rows are 128 bytes
//! long puts column block j of every row in the same 4 banks. XORing the row
//! (YYY) into the column block (ZZZ) sends the 8 rows' blocks to 8 different
//! groups of banks; docs/layout-algebra.md ("Swizzles") has the numbers and
//! tests/swizzle.rs counts the conflicts by brute force.

use crate::error::{Error, Result};
use crate::int::Int;
use crate::int_tuple::IntTuple;
use crate::layout::Layout;
use std::fmt;

/// CuTe's `Swizzle<B,M,S>`: `bits` = B, `base` = M, `shift` = S.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Swizzle {
    pub bits: u32,
    pub base: u32,
    pub shift: i32,
}

impl Swizzle {
    /// `Swizzle<B,M,S>`, with CuTe's preconditions (B >= 0, M >= 0,
    /// |S| >= B) and the bits it touches inside the 64-bit index type.
    pub fn new(bits: i64, base: i64, shift: i64) -> Result<Swizzle> {
        if !(0..=62).contains(&bits) || !(0..=62).contains(&base) || !(-62..=62).contains(&shift) {
            return Err(Error::new("swizzle", format!("S<{bits},{base},{shift}> is out of range for the 64-bit index type (B and M in 0..=62, S in -62..=62)")));
        }
        if shift.unsigned_abs() < bits.unsigned_abs() {
            return Err(Error::new("swizzle", format!("S<{bits},{base},{shift}> needs |S| >= B, or the bits read (YYY) and the bits written (ZZZ) would overlap")));
        }
        if bits + base + shift.abs() > 62 {
            return Err(Error::new(
                "swizzle",
                format!("S<{bits},{base},{shift}> spans more bits than the 64-bit index type"),
            ));
        }
        Ok(Swizzle { bits: bits as u32, base: base as u32, shift: shift as i32 })
    }

    fn bit_mask(&self) -> i64 {
        (1i64 << self.bits) - 1
    }

    /// The bits that are read: B bits at M + max(0,S).
    pub fn yyy_mask(&self) -> i64 {
        self.bit_mask() << (self.base as i64 + self.shift.max(0) as i64)
    }

    /// The bits that are flipped: B bits at M - min(0,S).
    pub fn zzz_mask(&self) -> i64 {
        self.bit_mask() << (self.base as i64 - self.shift.min(0) as i64)
    }

    /// `x ^ shiftr(x & yyy_msk, S)`, exactly as CuTe's `Swizzle::apply`.
    pub fn apply(&self, x: i64) -> i64 {
        // `x & yyy` is non-negative and below 2^(B+M+|S|) <= 2^62, so neither
        // shift can overflow, whatever the sign of x.
        let yyy = x & self.yyy_mask();
        let moved = if self.shift >= 0 { yyy >> self.shift } else { yyy << -self.shift };
        x ^ moved
    }

    /// 2^(B+M+|S|): every aligned block of this many indices is mapped onto
    /// itself, since no bit at or above B+M+|S| is read or written.
    pub fn size(&self) -> i64 {
        1i64 << (self.bits as i64 + self.base as i64 + self.shift.unsigned_abs() as i64)
    }
}

impl fmt::Display for Swizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "S<{},{},{}>", self.bits, self.base, self.shift)
    }
}

/// `swizzle o offset o layout`: c -> swizzle(offset + layout(c)), CuTe's
/// `ComposedLayout<Swizzle, Offset, Layout>`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ComposedLayout {
    pub swizzle: Swizzle,
    pub offset: Int,
    pub layout: Layout,
}

impl ComposedLayout {
    /// `make_composed_layout(swizzle, offset, layout)`. A swizzle acts on
    /// integer indices, so neither the offset nor the layout may carry basis
    /// elements (coordinates of an identity layout).
    pub fn new(swizzle: Swizzle, offset: Int, layout: Layout) -> Result<ComposedLayout> {
        const OP: &str = "make_composed_layout";
        if offset.has_basis() {
            return Err(Error::new(
                OP,
                format!("the offset {offset} is a coordinate, not an index; a swizzle acts on integer indices"),
            ));
        }
        if layout.has_basis_strides() {
            return Err(Error::new(
                OP,
                format!(
                    "the layout {layout} has basis strides (it maps to coordinates); a swizzle acts on integer indices"
                ),
            ));
        }
        Ok(ComposedLayout { swizzle, offset, layout })
    }

    pub fn eval(&self, crd: &IntTuple) -> Result<Int> {
        let i = self.offset.add(&self.layout.eval(crd)?)?;
        match i {
            Int::S(v) => Ok(Int::S(self.swizzle.apply(v))),
            Int::D(_) => Err(Error::new(
                "swizzle",
                format!("the index {i} is dynamic; a swizzle of a dynamic index cannot be folded"),
            )),
        }
    }

    pub fn size(&self) -> Result<Int> {
        self.layout.size()
    }

    /// CuTe's `cosize(ComposedLayout)`: the cosize of the inner layout (the
    /// swizzle and offset are not counted). It is the exact codomain size
    /// when the inner layout's image is a union of aligned 2^(B+M+|S|)
    /// blocks, as for every tiled swizzle atom; otherwise the swizzle can
    /// send an index past it, as in CuTe.
    pub fn cosize(&self) -> Result<Int> {
        self.layout.cosize()
    }

    /// Right actions (composition, divides, products, tile_to_shape, mode
    /// selection) act on the inner layout; the swizzle and offset stay
    /// outside, as CuTe's overloads for `ComposedLayout` do.
    pub fn map(&self, f: impl FnOnce(&Layout) -> Result<Layout>) -> Result<ComposedLayout> {
        Ok(ComposedLayout { swizzle: self.swizzle, offset: self.offset.clone(), layout: f(&self.layout)? })
    }
}

impl fmt::Display for ComposedLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} o {} o {}", self.swizzle, self.offset, self.layout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swizzle_permutes() {
        let s = Swizzle::new(3, 4, 3).unwrap();
        let mut seen = vec![false; s.size() as usize];
        for x in 0..s.size() {
            let y = s.apply(x);
            assert!(!seen[y as usize]);
            seen[y as usize] = true;
        }
        assert_eq!(s.apply(0b1000_0000), 0b1001_0000);
        assert_eq!(s.to_string(), "S<3,4,3>");
        assert!(Swizzle::new(3, 4, 2).is_err());
    }

    #[test]
    fn masks_are_cutes() {
        // S<3,3,3>: bit_msk 0b111, yyy at bit 3+3 = 6, zzz at bit 3.
        let s = Swizzle::new(3, 3, 3).unwrap();
        assert_eq!((s.yyy_mask(), s.zzz_mask()), (0b111_000_000, 0b000_111_000));
        // S<2,4,-3>: yyy at 4 + max(0,-3) = 4, zzz at 4 - min(0,-3) = 7.
        let s = Swizzle::new(2, 4, -3).unwrap();
        assert_eq!((s.yyy_mask(), s.zzz_mask()), (0b11 << 4, 0b11 << 7));
    }

    #[test]
    fn bad_swizzles_are_errors() {
        for (b, m, s) in [
            (-1, 3, 3),
            (3, -1, 3),
            (3, 3, 2),
            (3, 3, -2),
            (3, 63, 3),
            (20, 30, 20),
            (i64::MAX, 0, 0),
            (0, 0, i64::MIN),
        ] {
            assert!(Swizzle::new(b, m, s).is_err(), "S<{b},{m},{s}> accepted");
        }
        let e = Swizzle::new(3, 3, 2).unwrap_err().to_string();
        assert!(e.contains("|S| >= B"), "{e}");
    }

    #[test]
    fn composed_layout_rejects_coordinates() {
        let sw = Swizzle::new(1, 0, 1).unwrap();
        assert!(ComposedLayout::new(sw, Int::ZERO, Layout::identity(crate::tup![2, 2]).unwrap()).is_err());
        assert!(ComposedLayout::new(
            sw,
            Int::basis(&[0], &Int::S(1)).unwrap(),
            Layout::col_major(IntTuple::from(4)).unwrap()
        )
        .is_err());
    }
}
