//! Swizzled shared memory: CuTe's `Swizzle::apply` on an access's element offset, keeping the part
//! many accesses share apart so the backend computes it once.

use super::{add, materialize_i32, Int};
use crate::ir::{Builder, Val};
use crate::passes::known_bits::{self, Bits, KnownBits};
use cute_layout::Swizzle;

/// CuTe's `Swizzle::apply` on an i32 offset: `o ^ ((o & yyy_mask) >> S)`, with the work that is
/// the same for many accesses kept apart so the backend computes it once.
///
/// An access's offset is a sum: a per-thread part, loop-dependent parts (a pipeline stage, a
/// k-tile) and a constant (the element's position in its fragment). The swizzle maps every
/// aligned block of its period onto itself, so terms that are multiples of the period pass
/// through it unchanged: `swizzle(x + h) = swizzle(x) + h`. And it is linear over XOR, so when the
/// constant has no bit the remaining terms can set (known bits), `x + c = x ^ c` and
/// `swizzle(x + c) = swizzle(x) ^ swizzle(c)`. Every access of a thread then shares `swizzle(x)`
/// and differs by one XOR with a constant and an add (often folded into the address).
pub(super) fn apply_swizzle(b: &Builder, sw: Swizzle, offset: Int) -> Int {
    let v = match offset {
        Int::Const(o) => return Int::Const(sw.apply(o)),
        // A 64-bit kernel's offset: shared memory is far below 2^31 elements, so its low 32 bits
        // are the offset (the split below then sees one term).
        Int::Dyn(v) => materialize_i32(b, Int::Dyn(v)),
    };
    let offset = Int::Dyn(v);
    let period = sw.size();
    let (terms, constant) = known_bits::sum_terms(v);
    let mut known = KnownBits::default();
    let (high, low): (Vec<Val>, Vec<Val>) =
        terms.into_iter().partition(|t| known.of(*t).multiple_of_pow2(period.trailing_zeros()));
    let c_lo = constant.rem_euclid(period);
    // Index arithmetic is i32 and wraps: the period divides 2^32, so wrapping keeps the split.
    let c_hi = i64::from((constant - c_lo) as i32);
    let low_bits = low.iter().fold(Bits::constant(0), |acc, t| acc.add(&known.of(*t)));
    let no_carry = low_bits.disjoint(&Bits::constant(c_lo));
    if high.is_empty() && c_hi == 0 && (c_lo == 0 || !no_carry) {
        // Nothing to keep apart.
        return swizzle_value(b, sw, offset);
    }
    let low_sum = low.iter().fold(Int::Const(0), |acc, t| add(b, acc, Int::Dyn(*t)));
    let swizzled_low = if no_carry {
        xor(b, swizzle_value(b, sw, low_sum), sw.apply(c_lo))
    } else {
        swizzle_value(b, sw, add(b, low_sum, Int::Const(c_lo)))
    };
    let high_sum = high.iter().fold(Int::Const(0), |acc, t| add(b, acc, Int::Dyn(*t)));
    add(b, add(b, swizzled_low, high_sum), Int::Const(c_hi))
}

/// The swizzle itself on a value: `o ^ ((o & yyy_mask) >> S)`.
fn swizzle_value(b: &Builder, sw: Swizzle, offset: Int) -> Int {
    match offset {
        Int::Const(o) => Int::Const(sw.apply(o)),
        Int::Dyn(v) => {
            let mask = b.const_int(sw.yyy_mask(), "i32");
            let picked = b.binary("arith.andi", v, mask);
            let by = b.const_int(i64::from(sw.shift.unsigned_abs()), "i32");
            let moved = b.binary(if sw.shift >= 0 { "arith.shrui" } else { "arith.shli" }, picked, by);
            Int::Dyn(b.binary("arith.xori", v, moved))
        }
    }
}

fn xor(b: &Builder, x: Int, k: i64) -> Int {
    match x {
        _ if k == 0 => x,
        Int::Const(c) => Int::Const(c ^ k),
        Int::Dyn(v) => Int::Dyn(b.binary("arith.xori", v, b.const_int(k, "i32"))),
    }
}
