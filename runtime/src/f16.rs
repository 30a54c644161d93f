//! IEEE 754 binary16 (`f16`) and bfloat16 <-> `f32` conversion on raw `u16` bit patterns,
//! for filling and checking `DeviceBuffer<u16>` f16 tensors and for bf16 scalar arguments
//! given from Python. Thin wrappers over the `half` crate: f32 -> f16/bf16 rounds to
//! nearest, ties to even, like the GPU's `cvt.rn.f16.f32`; overflow gives inf; NaN stays a
//! quiet NaN.

use half::{bf16, f16};

/// Converts an `f32` to f16 bits (round to nearest even; overflow -> inf;
/// NaN stays NaN).
pub fn f32_to_f16_bits(x: f32) -> u16 {
    f16::from_f32(x).to_bits()
}

/// Converts f16 bits to `f32` (exact).
pub fn f16_bits_to_f32(h: u16) -> f32 {
    f16::from_bits(h).to_f32()
}

/// Converts an `f32` to bfloat16 bits (the high half, rounded to nearest even; NaN stays a
/// quiet NaN).
pub fn f32_to_bf16_bits(x: f32) -> u16 {
    bf16::from_f32(x).to_bits()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounding() {
        assert_eq!(f32_to_bf16_bits(1.0), 0x3f80);
        assert_eq!(f32_to_bf16_bits(-2.5), 0xc020);
        // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties to even (1.0); 1 + 3*2^-8 to 1 + 2^-6.
        assert_eq!(f32_to_bf16_bits(1.0 + 2f32.powi(-8)), 0x3f80);
        assert_eq!(f32_to_bf16_bits(1.0 + 3.0 * 2f32.powi(-8)), 0x3f82);
        assert_eq!(f32_to_bf16_bits(f32::MAX), 0x7f80); // rounds up to inf
        assert_eq!(f32_to_bf16_bits(f32::NEG_INFINITY), 0xff80);
        assert_eq!(f32_to_bf16_bits(f32::NAN) & 0x7fc0, 0x7fc0);
    }

    #[test]
    fn known_values() {
        assert_eq!(f32_to_f16_bits(0.0), 0x0000);
        assert_eq!(f32_to_f16_bits(-0.0), 0x8000);
        assert_eq!(f32_to_f16_bits(1.0), 0x3c00);
        assert_eq!(f32_to_f16_bits(-2.0), 0xc000);
        assert_eq!(f32_to_f16_bits(0.5), 0x3800);
        assert_eq!(f32_to_f16_bits(65504.0), 0x7bff);
        assert_eq!(f32_to_f16_bits(65519.0), 0x7bff);
        assert_eq!(f32_to_f16_bits(65520.0), 0x7c00);
        assert_eq!(f32_to_f16_bits(1e10), 0x7c00);
        assert_eq!(f32_to_f16_bits(f32::INFINITY), 0x7c00);
        assert_eq!(f32_to_f16_bits(f32::NEG_INFINITY), 0xfc00);
        assert_eq!(f32_to_f16_bits(2f32.powi(-24)), 0x0001);
        assert_eq!(f32_to_f16_bits(2f32.powi(-25)), 0x0000); // tie -> even (0)
        assert_eq!(f32_to_f16_bits(1.5 * 2f32.powi(-25)), 0x0001);
        assert_eq!(f32_to_f16_bits(3.0 * 2f32.powi(-25)), 0x0002); // 1.5 ulp tie -> even 2
        assert_eq!(f32_to_f16_bits(2f32.powi(-14)), 0x0400);
        // 1 + 2^-11 is a tie between 1.0 and 1+2^-10: even is 1.0.
        assert_eq!(f32_to_f16_bits(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(f32_to_f16_bits(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
        let nan = f32_to_f16_bits(f32::NAN);
        assert_eq!(nan & 0x7c00, 0x7c00);
        assert_ne!(nan & 0x03ff, 0);
        assert!(f16_bits_to_f32(nan).is_nan());
    }

    #[test]
    fn every_f16_round_trips() {
        for h in 0..=u16::MAX {
            let f = f16_bits_to_f32(h);
            if f.is_nan() {
                assert!(f16_bits_to_f32(f32_to_f16_bits(f)).is_nan());
            } else {
                assert_eq!(f32_to_f16_bits(f), h, "{h:#06x} -> {f}");
            }
        }
    }

    #[test]
    fn rounding_matches_nearest() {
        // For values between consecutive f16 numbers, the result is the nearer.
        let mut r = crate::rng::Rng::new(5);
        for _ in 0..100_000 {
            let x = r.uniform_f32(-70000.0, 70000.0) * r.next_f32().powi(8);
            let h = f32_to_f16_bits(x);
            let y = f16_bits_to_f32(h);
            if y.is_infinite() {
                assert!(x.abs() >= 65520.0, "{x}");
                continue;
            }
            let up = f16_bits_to_f32(h.wrapping_add(1) & 0x7fff | (h & 0x8000));
            let dn = f16_bits_to_f32(if h & 0x7fff == 0 { h } else { h - 1 });
            let err = (x - y).abs();
            assert!(err <= (x - up).abs() || up.is_infinite(), "{x} -> {y} vs {up}");
            assert!(err <= (x - dn).abs(), "{x} -> {y} vs {dn}");
        }
    }
}
