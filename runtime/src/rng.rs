//! A tiny seeded pseudo-random generator for test inputs (no `rand` crate):
//! SplitMix64 to scramble the seed, xorshift64* for the stream. The same seed
//! gives the same numbers on every machine, so GPU test runs are repeatable.

/// Deterministic xorshift64* generator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator for `seed` (any value, including 0).
    pub fn new(seed: u64) -> Rng {
        let s = splitmix64(seed);
        // xorshift must not start from 0.
        Rng { state: if s == 0 { 0x2545_F491_4F6C_DD1D } else { s } }
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Next 32 random bits (the high half, the better-mixed one).
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `[0, 1)` with 24 random bits (every value exact in f32).
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / 16_777_216.0)
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform_f32(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next_f32()
    }

    /// Uniform integer in `[lo, hi)`; returns `lo` when the range is empty.
    pub fn range_i32(&mut self, lo: i32, hi: i32) -> i32 {
        if hi <= lo {
            return lo;
        }
        let span = (i64::from(hi) - i64::from(lo)) as u64;
        (i64::from(lo) + (self.next_u64() % span) as i64) as i32
    }

    /// `n` values uniform in `[lo, hi)`.
    pub fn vec_f32(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.uniform_f32(lo, hi)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic() {
        let a: Vec<u64> = {
            let mut r = Rng::new(42);
            (0..100).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::new(42);
            (0..100).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        let mut c = Rng::new(43);
        assert_ne!(a[0], c.next_u64());
        // Seed 0 works and is not stuck.
        let mut z = Rng::new(0);
        let (x, y) = (z.next_u64(), z.next_u64());
        assert_ne!(x, y);
        assert_ne!(x, 0);
    }

    #[test]
    fn pinned_values() {
        // Pins the sequence: changing the generator changes every GPU test
        // input, so it must be a deliberate decision.
        let mut r = Rng::new(1);
        let got: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        let mut again = Rng::new(1);
        assert_eq!(got[0], again.next_u64());
        assert_eq!(got, PINNED_SEED1.to_vec());
    }

    const PINNED_SEED1: [u64; 3] = [5424204624148110235, 15555979849632202484, 6851360858507811590];

    #[test]
    fn ranges() {
        let mut r = Rng::new(7);
        for _ in 0..10_000 {
            let f = r.next_f32();
            assert!((0.0..1.0).contains(&f));
            let g = r.uniform_f32(-1.0, 1.0);
            assert!((-1.0..1.0).contains(&g));
            let i = r.range_i32(-5, 5);
            assert!((-5..5).contains(&i));
        }
        assert_eq!(r.range_i32(3, 3), 3);
        let v = Rng::new(9).vec_f32(1000, -1.0, 1.0);
        let mean: f32 = v.iter().sum::<f32>() / 1000.0;
        assert!(mean.abs() < 0.1, "mean {mean}");
    }
}
