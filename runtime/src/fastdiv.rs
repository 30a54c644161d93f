//! Fast division by run-time divisors: the multiplier and shift cutec's kernels divide with.
//!
//! A kernel that divides its index math by a run-time value of its parameters (`tid / n`, `tid %
//! n` with `n` a tensor extent) does not execute a division instruction (`div.u32` is about 20
//! SASS instructions: a float reciprocal, a multiply and two corrections). Its manifest block has a
//! `fastdiv EXPR` line per divisor instead, and the kernel takes two more `u32` parameters per
//! line, after its declared ones: `m = ceil(2^(31+l) / d)` and `l = ceil(log2 d)` for the divisor
//! `d = EXPR` (over the kernel's `$k`, as in `require` lines). For every `0 <= n < 2^31`,
//! `n / d = mulhi(2n, m) >> l` (three instructions: shift, `mul.hi.u32`, shift), which is what the
//! kernel computes; see docs/design.md (n) for the proof and the measurements.
//!
//! Every launch path appends the values: checked launches ([`crate::check_args`]), host calls
//! (the plan's launches), and unchecked launches ([`crate::Kernel::launch`]) given the declared
//! parameters only.

use crate::launch::KernelArg;
use cute_abi::manifest::{KernelSig, ParamKind};

/// The multiplier and shift for dividing by `d`, or `None` when `d` is not in `1..=2^31-1` (the
/// kernel's index math is `i32`; a divisor outside that range is refused, never launched).
///
/// `l = ceil(log2 d)` and `m = ceil(2^(31+l) / d)`, which is below 2^32 (`2^l < 2d`). Then
/// `m * d = 2^(31+l) + e` with `0 <= e < d <= 2^l`, and for `0 <= n < 2^31`,
/// `n * m / 2^(31+l) = n / d + n * e / (d * 2^(31+l))` where the second term is below `1/d`: the
/// floor is `floor(n / d)` (Granlund and Montgomery, "Division by invariant integers using
/// multiplication", 1994, theorem 4.2 with N = 31). The kernel computes
/// `floor(n * m / 2^(31+l))` as `mulhi(2n, m) >> l`; `2n` fits in 32 bits.
pub fn magic(d: i64) -> Option<(u32, u32)> {
    if !(1..=i64::from(i32::MAX)).contains(&d) {
        return None;
    }
    let d = d as u64;
    let l = 64 - (d - 1).leading_zeros();
    let m = (1u64 << (31 + l)).div_ceil(d);
    Some((u32::try_from(m).ok()?, l))
}

/// `n / d` as a kernel computes it from [`magic`]'s values (for tests and documentation).
pub fn divide(n: u32, (m, l): (u32, u32)) -> u32 {
    let hi = ((u64::from(n << 1) * u64::from(m)) >> 32) as u32;
    hi >> l
}

/// How many kernel-ABI values a kernel's declared parameters take (pointers, `?` entries,
/// scalars): the arguments an unchecked launch passes before the fast divisors' values.
pub fn declared_abi_len(sig: &KernelSig) -> usize {
    sig.params
        .iter()
        .map(|p| match &p.kind {
            ParamKind::Tensor(t) => t.abi_len(),
            ParamKind::Scalar(_) => 1,
            ParamKind::Stream => 0,
        })
        .sum()
}

/// Appends each fast divisor's multiplier and shift (`u32`, in the order of the `fastdiv` lines)
/// for a launch whose dynamic ABI values are `vars` (every argument but the pointers). `Err` is
/// the reason a divisor cannot be used (for the caller's message).
pub(crate) fn push_fast_divisors(sig: &KernelSig, vars: &[i64], out: &mut Vec<KernelArg>) -> Result<(), String> {
    for (i, e) in sig.fast_divisors.iter().enumerate() {
        let d = e.eval(vars).map_err(|err| format!("divisor {i} of the kernel's index math, {e}: {err}"))?;
        let (m, l) = magic(d).ok_or_else(|| {
            format!("divisor {i} of the kernel's index math, {e} = {d}, is not in 1..=2147483647 (the kernel divides by it)")
        })?;
        out.push(KernelArg::U32(m));
        out.push(KernelArg::U32(l));
    }
    Ok(())
}

/// The dynamic ABI values of a flat argument list: every argument but the pointers (the `$k`).
pub(crate) fn vars_of(args: &[KernelArg]) -> Vec<i64> {
    args.iter().filter_map(KernelArg::dynamic_value).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(d: u32, n: u32) {
        let mg = magic(i64::from(d)).unwrap();
        assert_eq!(divide(n, mg), n / d, "{n} / {d} with m={} l={}", mg.0, mg.1);
    }

    #[test]
    fn exact_for_every_divisor_and_dividend_tried() {
        let edges = |d: u32| {
            let mut v = vec![0, 1, d - 1, d, d + 1, i32::MAX as u32, i32::MAX as u32 - 1, i32::MAX as u32 - d + 1];
            // Around the multiples of d near the top of the range, where the error term is largest.
            let top = (i32::MAX as u32 / d) * d;
            v.extend([top, top.saturating_sub(1), top.saturating_sub(d), top.saturating_sub(d).saturating_sub(1)]);
            v.into_iter().filter(|&n| n <= i32::MAX as u32)
        };
        // Every divisor up to 2^12, and every power of two and its neighbours.
        let mut divisors: Vec<u32> = (1..=4096).collect();
        for p in 0..31 {
            let x = 1u32 << p;
            divisors.extend([x.saturating_sub(1).max(1), x, x + 1]);
        }
        divisors.extend([i32::MAX as u32, i32::MAX as u32 - 1, 16384, 16383, 12345, 1_000_003]);
        let mut rng = crate::rng::Rng::new(7);
        for &d in &divisors {
            if d == 0 || d > i32::MAX as u32 {
                continue;
            }
            for n in edges(d) {
                check(d, n);
            }
            for _ in 0..64 {
                check(d, (rng.next_u64() as u32) & 0x7fff_ffff);
            }
        }
        // Random divisors, every small dividend.
        for _ in 0..2000 {
            let d = ((rng.next_u64() as u32) & 0x7fff_ffff).max(1);
            for n in 0..64 {
                check(d, n);
            }
            check(d, (rng.next_u64() as u32) & 0x7fff_ffff);
        }
        // Every dividend for a few divisors.
        for d in [3u32, 7, 641, 16384, 1000] {
            for n in (0..=i32::MAX as u32).step_by(9973) {
                check(d, n);
            }
        }
    }

    /// What cutec emits for a dividend it cannot prove non-negative: with `s = x >> 31`,
    /// `floor(x / d) = fast(x ^ s) ^ s` (for x < 0, `x ^ s = -x - 1`), and the Euclidean remainder
    /// `x - q * d`.
    #[test]
    fn signed_dividends_fold_and_unfold() {
        let mut rng = crate::rng::Rng::new(11);
        for d in [1i32, 2, 3, 7, 48, 1000, 16384, 99991, i32::MAX] {
            let mg = magic(i64::from(d)).unwrap();
            let mut xs = vec![i32::MIN, i32::MIN + 1, -d - 1, -d, -d + 1, -64, -1, 0, 1, d - 1, d, i32::MAX];
            xs.extend((0..256).map(|_| rng.next_u32() as i32));
            for x in xs {
                let s = x >> 31;
                let q = (divide((x ^ s) as u32, mg) as i32) ^ s;
                assert_eq!(q, x.div_euclid(d), "{x} / {d}");
                assert_eq!(x.wrapping_sub(q.wrapping_mul(d)), x.rem_euclid(d), "{x} % {d}");
            }
        }
    }

    #[test]
    fn values() {
        assert_eq!(magic(1), Some((1 << 31, 0)));
        assert_eq!(magic(2), Some((1 << 31, 1)));
        assert_eq!(magic(3), Some((2863311531, 2)));
        assert_eq!(magic(16384), Some((1 << 31, 14)));
        assert_eq!(magic(0), None);
        assert_eq!(magic(-4), None);
        assert_eq!(magic(1 << 31), None);
        assert!(magic(i64::from(i32::MAX)).is_some());
    }
}
