//! Drawing the sign matrix S from a seed (sparse.md §3): n rows of d
//! independent uniform signs, bit-packed (bit 1 = −1).
//!
//! Layout of the draw, fixed so that every platform and thread count gives the
//! same S: one `SplitMix64` seeded with `seed`; row after row, each row's
//! ⌈d/64⌉ words are filled directly by consecutive `next_u64()` outputs (bit c
//! of word w is column 64·w + c), and the last word of each row is masked to
//! its d mod 64 low bits (when d is not a multiple of 64). Each column is thus
//! one output bit of SplitMix64, which is equidistributed over 64-bit words.

use crate::kernel::SignMatrix;
use crate::rng::SplitMix64;

/// The n × d sign matrix drawn from `seed` (deterministic; see the module doc
/// for the exact layout).
pub fn draw_signs(n: usize, d: usize, seed: u64) -> SignMatrix {
    let words = d.div_ceil(64);
    let mut rng = SplitMix64::new(seed);
    let tail = if d.is_multiple_of(64) {
        !0u64
    } else {
        (1u64 << (d % 64)) - 1
    };
    let mut bits = Vec::with_capacity(n * words);
    for _ in 0..n {
        for w in 0..words {
            let x = rng.next_u64();
            bits.push(if w + 1 == words { x & tail } else { x });
        }
    }
    SignMatrix::from_words(n, d, bits).expect("draw_signs: tail bits are masked")
}
