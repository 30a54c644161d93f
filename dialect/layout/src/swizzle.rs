//! Swizzles `S<B,M,S>` and composed layouts `S<B,M,S> o off o L`.
//!
//! A swizzle XORs the B bits at position M+max(S,0) into the bits at
//! M-min(S,0): `x ^ ((x & yyy) >> S)`. It is a bijection on the integers,
//! used to spread shared-memory accesses over banks.

use crate::error::{Error, Result};
use crate::int::Int;
use crate::int_tuple::IntTuple;
use crate::layout::Layout;
use std::fmt;

#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Swizzle {
    pub bits: u32,
    pub base: u32,
    pub shift: i32,
}

impl Swizzle {
    pub fn new(bits: i64, base: i64, shift: i64) -> Result<Swizzle> {
        if !(0..=62).contains(&bits) || !(0..=62).contains(&base) || !(-62..=62).contains(&shift) {
            return Err(Error::new("swizzle", format!("S<{bits},{base},{shift}> is out of range for the 64-bit index type")));
        }
        if shift.unsigned_abs() < bits.unsigned_abs() {
            return Err(Error::new("swizzle", format!("S<{bits},{base},{shift}> needs B >= 0, M >= 0 and |S| >= B")));
        }
        if bits + base + shift.abs() > 62 {
            return Err(Error::new("swizzle", format!("S<{bits},{base},{shift}> spans more bits than the 64-bit index type")));
        }
        Ok(Swizzle { bits: bits as u32, base: base as u32, shift: shift as i32 })
    }

    fn yyy_mask(&self) -> i64 {
        ((1i64 << self.bits) - 1) << (self.base as i64 + (self.shift.max(0)) as i64)
    }

    pub fn apply(&self, x: i64) -> i64 {
        let y = x & self.yyy_mask();
        let moved = if self.shift >= 0 { y >> self.shift } else { y << (-self.shift) };
        x ^ moved
    }

    /// The domain on which the swizzle is a permutation.
    pub fn size(&self) -> i64 {
        1i64 << (self.bits as i64 + self.base as i64 + self.shift.unsigned_abs() as i64)
    }
}

impl fmt::Display for Swizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "S<{},{},{}>", self.bits, self.base, self.shift)
    }
}

/// `swizzle o offset o layout`: c -> swizzle(offset + layout(c)).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ComposedLayout {
    pub swizzle: Swizzle,
    pub offset: Int,
    pub layout: Layout,
}

impl ComposedLayout {
    pub fn eval(&self, crd: &IntTuple) -> Result<Int> {
        let i = self.offset.add(&self.layout.eval(crd)?)?;
        match i {
            Int::S(v) => Ok(Int::S(self.swizzle.apply(v))),
            Int::D(_) => Err(Error::new("swizzle", "a swizzle of a dynamic index cannot be folded")),
        }
    }

    pub fn size(&self) -> Result<Int> {
        self.layout.size()
    }

    /// Right actions (composition, divides, mode selection) act on the inner
    /// layout; the swizzle and offset stay outside.
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
}
