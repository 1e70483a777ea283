//! Seeded randomness: every random instance comes from a seed in a spec, so
//! reports are identical on every platform and thread count.

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny deterministic PRNG for seeded
/// random instances, so that reports are identical on every platform.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0; Lemire's multiply-shift with rejection, unbiased).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0)");
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }
    /// Uniform in `lo..=hi` (lo ≤ hi).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    /// Log-uniform-ish integer in `1..=hi`: a uniform bit length, then uniform
    /// within it (integer-only, so identical on every platform).
    pub fn log_uniform(&mut self, hi: u64) -> u64 {
        let bits = 64 - hi.leading_zeros() as u64;
        let b = self.range(1, bits);
        let lo = 1u64 << (b - 1);
        let top = if b == 64 { u64::MAX } else { (1u64 << b) - 1 }.min(hi);
        self.range(lo, top)
    }
}
