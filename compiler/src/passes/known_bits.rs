//! Known bits of i32 index arithmetic: which bits of a value can be one, and how many low bits are
//! surely zero, read off the `arith` ops that compute it.
//!
//! Index arithmetic in a kernel is built from the thread and block indices, loop variables,
//! constants, `+ * / %` and masks. Division and remainder by constants and multiplication by
//! constants leave most bits known: `(tid % 8) * 64` can only set bits 6-8. `cute-lower-to-gpu`
//! uses this to apply a swizzle to the part of an offset that varies per thread once, instead of
//! at every access (see `lower_to_gpu::apply_swizzle`): a swizzle is linear over XOR, so when an
//! offset's constant part has no bit in common with what its variable part can set, the two add
//! without carries and swizzle separately.
//!
//! The analysis is conservative: any op it does not model yields "nothing known".

use crate::ir::{self, Val};
use std::collections::HashMap;

/// What is known about an i32 value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bits {
    /// With `Some(m)`: the value is non-negative and has no one bit outside `m` (so it is at most m).
    pub may: Option<u64>,
    /// The number of low bits that are zero (at most 32).
    pub trailing_zeros: u32,
}

/// The largest i32 value: a mask that reaches past it could describe a negative i32.
const I32_MAX: u64 = i32::MAX as u64;

impl Bits {
    pub const UNKNOWN: Bits = Bits { may: None, trailing_zeros: 0 };

    pub fn constant(k: i64) -> Bits {
        let k = k as i32;
        Bits { may: (k >= 0).then_some(k as u64), trailing_zeros: if k == 0 { 32 } else { k.trailing_zeros() } }
    }

    /// A non-negative value of at most `max` with `tz` low zero bits.
    fn at_most(max: u64, tz: u32) -> Bits {
        if max > I32_MAX {
            return Bits { may: None, trailing_zeros: tz.min(32) };
        }
        let tz = tz.min(32);
        Bits { may: Some(fill_below(max) & !low_ones(tz)), trailing_zeros: tz }
    }

    /// Bits narrowed to a mask known to hold them (for a non-negative result).
    fn masked(self, mask: u64) -> Bits {
        let may = self.may.unwrap_or(u64::MAX) & mask & !low_ones(self.trailing_zeros);
        Bits {
            may: Some(may),
            trailing_zeros: if may == 0 { 32 } else { may.trailing_zeros().max(self.trailing_zeros).min(32) },
        }
    }

    /// Whether the value is surely a multiple of `2^k`.
    pub fn multiple_of_pow2(&self, k: u32) -> bool {
        self.trailing_zeros >= k
    }

    /// Whether `self + other` is surely `self | other` (no bit can be one in both, so no carry).
    pub fn disjoint(&self, other: &Bits) -> bool {
        match (self.may, other.may) {
            (Some(a), Some(b)) => a & b == 0,
            _ => false,
        }
    }

    /// What is known about `self + other`.
    pub fn add(&self, other: &Bits) -> Bits {
        let tz = self.trailing_zeros.min(other.trailing_zeros);
        match (self.may, other.may) {
            (Some(a), Some(b)) if a & b == 0 => Bits { may: Some(a | b), trailing_zeros: tz },
            (Some(a), Some(b)) => Bits::at_most(a + b, tz),
            _ => Bits { may: None, trailing_zeros: tz },
        }
    }
}

/// All bits up to and including the highest one bit of `x`.
fn fill_below(x: u64) -> u64 {
    if x == 0 {
        0
    } else {
        u64::MAX >> x.leading_zeros()
    }
}

/// The low `n` bits.
fn low_ones(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// The constant an `arith.constant` of an integer type holds.
pub fn constant_of(v: Val) -> Option<i64> {
    let op = ir::defining_op(v)?;
    (ir::op_name(op) == "arith.constant").then(|| ir::int_attr(op, "value")).flatten()
}

/// Memoized known-bits queries over one function.
#[derive(Default)]
pub struct KnownBits {
    cache: HashMap<usize, Bits>,
}

/// How far an expression is followed; deeper operands count as unknown.
const MAX_DEPTH: u32 = 32;

impl KnownBits {
    pub fn of(&mut self, v: Val) -> Bits {
        self.depth(v, 0)
    }

    fn depth(&mut self, v: Val, depth: u32) -> Bits {
        let key = v.ptr as usize;
        if let Some(b) = self.cache.get(&key) {
            return *b;
        }
        let b = if depth >= MAX_DEPTH { Bits::UNKNOWN } else { self.compute(v, depth + 1) };
        self.cache.insert(key, b);
        b
    }

    fn compute(&mut self, v: Val, depth: u32) -> Bits {
        if let Some(k) = constant_of(v) {
            return Bits::constant(k);
        }
        let Some(op) = ir::defining_op(v) else { return Bits::UNKNOWN };
        let name = ir::op_name(op);
        let arg = |i: usize, me: &mut Self| me.depth(ir::operand(op, i), depth);
        match name.as_str() {
            // CUDA's limits: at most 1024 threads per block in x and y, 64 in z; block indices
            // below 2^31.
            "gpu.thread_id" => Bits::at_most(1023, 0),
            "gpu.block_dim" => Bits::at_most(1024, 0),
            "gpu.lane_id" => Bits::at_most(31, 0),
            "gpu.block_id" | "gpu.grid_dim" | "gpu.cluster_id" | "gpu.cluster_dim" => Bits::at_most(I32_MAX, 0),
            // A cluster has at most 16 blocks (8 portably, 16 with the non-portable opt-in).
            "gpu.cluster_block_id" | "nvvm.read.ptx.sreg.cluster.ctarank" => Bits::at_most(15, 0),
            "gpu.cluster_dim_blocks" => Bits::at_most(16, 0),
            "arith.index_cast" | "arith.index_castui" | "arith.extui" => arg(0, self),
            "arith.addi" => {
                let (a, b) = (arg(0, self), arg(1, self));
                a.add(&b)
            }
            "arith.muli" => {
                let (a, b) = (arg(0, self), arg(1, self));
                let tz = (a.trailing_zeros + b.trailing_zeros).min(32);
                let pow2 =
                    |i: usize| constant_of(ir::operand(op, i)).filter(|k| *k > 0 && (*k as u64).is_power_of_two());
                match (pow2(0), pow2(1), a.may, b.may) {
                    // By a power of two: the other operand's bits move.
                    (_, Some(k), Some(m), _) | (Some(k), _, _, Some(m)) => shifted(m, k.trailing_zeros(), tz),
                    (_, _, Some(x), Some(y)) => {
                        x.checked_mul(y).map_or(Bits { may: None, trailing_zeros: tz }, |p| Bits::at_most(p, tz))
                    }
                    _ => Bits { may: None, trailing_zeros: tz },
                }
            }
            "arith.shli" => match constant_of(ir::operand(op, 1)) {
                Some(k) if (0..32).contains(&k) => {
                    let a = arg(0, self);
                    let tz = (a.trailing_zeros + k as u32).min(32);
                    match a.may {
                        Some(m) => shifted(m, k as u32, tz),
                        None => Bits { may: None, trailing_zeros: tz },
                    }
                }
                _ => Bits::UNKNOWN,
            },
            "arith.remui" | "arith.remsi" => {
                let a = arg(0, self);
                match constant_of(ir::operand(op, 1)) {
                    // Of a non-negative value (or unsigned): below the divisor; by a power of two,
                    // the value's own low bits.
                    Some(d) if d > 0 && (a.may.is_some() || name == "arith.remui") => {
                        if (d as u64).is_power_of_two() {
                            a.masked(d as u64 - 1)
                        } else {
                            Bits::at_most(d as u64 - 1, 0)
                        }
                    }
                    Some(d) if d > 0 && (d as u64).is_power_of_two() => {
                        Bits { may: None, trailing_zeros: a.trailing_zeros.min(d.trailing_zeros()) }
                    }
                    _ => Bits::UNKNOWN,
                }
            }
            "arith.divui" | "arith.divsi" | "arith.shrui" | "arith.shrsi" => {
                let a = arg(0, self);
                let Some(m) = a.may else { return Bits::UNKNOWN };
                match (name.as_str(), constant_of(ir::operand(op, 1))) {
                    ("arith.shrui" | "arith.shrsi", Some(k)) if (0..32).contains(&k) => {
                        Bits { may: None, trailing_zeros: a.trailing_zeros.saturating_sub(k as u32) }.masked(m >> k)
                    }
                    ("arith.divui" | "arith.divsi", Some(d)) if d > 0 && (d as u64).is_power_of_two() => {
                        let k = d.trailing_zeros();
                        Bits { may: None, trailing_zeros: a.trailing_zeros.saturating_sub(k) }.masked(m >> k)
                    }
                    ("arith.divui" | "arith.divsi", Some(d)) if d > 0 => Bits::at_most(m / d as u64, 0),
                    _ => Bits::UNKNOWN,
                }
            }
            "arith.andi" => {
                let (a, b) = (arg(0, self), arg(1, self));
                let tz = a.trailing_zeros.max(b.trailing_zeros);
                match (a.may, b.may) {
                    (None, None) => Bits { may: None, trailing_zeros: tz },
                    (x, y) => {
                        Bits { may: None, trailing_zeros: tz }.masked(x.unwrap_or(u64::MAX) & y.unwrap_or(u64::MAX))
                    }
                }
            }
            "arith.ori" | "arith.xori" => {
                let (a, b) = (arg(0, self), arg(1, self));
                let tz = a.trailing_zeros.min(b.trailing_zeros);
                Bits { may: a.may.zip(b.may).map(|(x, y)| x | y), trailing_zeros: tz }
            }
            "arith.select" => {
                let (a, b) = (arg(1, self), arg(2, self));
                let tz = a.trailing_zeros.min(b.trailing_zeros);
                Bits { may: a.may.zip(b.may).map(|(x, y)| x | y), trailing_zeros: tz }
            }
            _ => Bits::UNKNOWN,
        }
    }
}

/// A non-negative value with one bits in `m`, shifted left by `k`.
fn shifted(m: u64, k: u32, tz: u32) -> Bits {
    match m.checked_shl(k).filter(|s| *s <= I32_MAX && (*s >> k) == m) {
        Some(s) => Bits { may: Some(s), trailing_zeros: tz },
        None => Bits { may: None, trailing_zeros: tz },
    }
}

/// The terms of a sum: the leaves of the tree of `arith.addi` ops that computes `v` (at most 64),
/// and the sum of its constant leaves. The caller adds the terms again in its own grouping; the
/// adds are cheap and LLVM merges the ones it already has.
pub fn sum_terms(v: Val) -> (Vec<Val>, i64) {
    let mut terms = Vec::new();
    let mut constant = 0i64;
    let mut stack = vec![v];
    while let Some(x) = stack.pop() {
        if let Some(k) = constant_of(x) {
            constant = constant.wrapping_add(k);
            continue;
        }
        match ir::defining_op(x) {
            Some(op) if ir::op_name(op) == "arith.addi" && terms.len() + stack.len() < 64 => {
                stack.push(ir::operand(op, 1));
                stack.push(ir::operand(op, 0));
            }
            _ => terms.push(x),
        }
    }
    (terms, constant)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disjoint_adds_are_ors() {
        let a = Bits { may: Some(0b111 << 6), trailing_zeros: 6 };
        let b = Bits { may: Some(0b1000), trailing_zeros: 3 };
        assert!(a.disjoint(&b));
        assert_eq!(a.add(&b), Bits { may: Some(0b111_001_000), trailing_zeros: 3 });
        let c = Bits { may: Some(0b1100), trailing_zeros: 2 };
        assert!(!b.disjoint(&c));
        // 8 + 12 = 20 at most: bits 2-4, low two bits zero.
        assert_eq!(b.add(&c), Bits { may: Some(0b11100), trailing_zeros: 2 });
        assert!(!Bits::UNKNOWN.disjoint(&a));
    }

    #[test]
    fn constants_and_limits() {
        assert_eq!(Bits::constant(48), Bits { may: Some(48), trailing_zeros: 4 });
        assert_eq!(Bits::constant(0).trailing_zeros, 32);
        assert_eq!(Bits::constant(-16), Bits { may: None, trailing_zeros: 4 });
        // Past i32::MAX nothing is known about the sign.
        assert_eq!(Bits::at_most(1 << 31, 0).may, None);
        assert_eq!(Bits::at_most(1023, 0).may, Some(1023));
        assert_eq!(Bits::at_most(1024, 0).may, Some(2047));
    }

    #[test]
    fn masking_keeps_trailing_zeros() {
        let a = Bits { may: Some(0b1111_0000), trailing_zeros: 4 };
        assert_eq!(a.masked(0b0011_1000), Bits { may: Some(0b0011_0000), trailing_zeros: 4 });
        assert_eq!(Bits::UNKNOWN.masked(7), Bits { may: Some(7), trailing_zeros: 0 });
        assert_eq!(Bits::UNKNOWN.masked(0), Bits { may: Some(0), trailing_zeros: 32 });
    }

    /// The identities `cute-lower-to-gpu` splits a swizzled offset by, on i32 arithmetic: a multiple
    /// of the period passes through the swizzle, and a constant with no bit in common with the
    /// rest XORs through it. Checked exhaustively over small parts for several swizzles.
    #[test]
    fn swizzle_splits_along_the_period_and_xor() {
        use cute_layout::Swizzle;
        for (bb, mm, ss) in [(3, 3, 3), (2, 3, 3), (3, 4, 3), (1, 2, 4), (2, 2, -3), (3, 0, 3)] {
            let sw = Swizzle::new(bb, mm, ss).unwrap();
            let period = sw.size();
            let wrap = |x: i64| i64::from(x as i32);
            for x in 0..period {
                for c in [0, 1, 8, 16, 24, 48, 64, period - 1, period + 16, 7 * period + 40, -16, -period + 8] {
                    for h in [0, period, 3 * period, -2 * period, (1i64 << 31) - period] {
                        let c_lo = c.rem_euclid(period);
                        let c_hi = c - c_lo;
                        let whole = sw.apply(wrap(x + c + h) & 0xffff_ffff) & 0xffff_ffff;
                        let split = if x & c_lo == 0 {
                            (sw.apply(x) ^ sw.apply(c_lo)) + h + c_hi
                        } else {
                            sw.apply(x + c_lo) + h + c_hi
                        };
                        assert_eq!(whole, split & 0xffff_ffff, "{sw}: x {x} c {c} h {h}");
                    }
                }
            }
        }
    }

    #[test]
    fn shifts_that_overflow_are_unknown() {
        assert_eq!(shifted(0b111, 6, 6).may, Some(0b111 << 6));
        assert_eq!(shifted(1 << 30, 2, 2).may, None);
    }
}
