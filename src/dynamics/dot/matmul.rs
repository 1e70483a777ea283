//! Matrix products and the parallel map over rows, built on the fast dot product of
//! [`super`] (every entry one [`dot_into`], so the error bound there holds per entry),
//! and the plain MPFR dot product it is benchmarked against.

use super::{dot_into, BlockRows, NonFinite, Scratch};
use rug::{Assign, Float};

/// Multiply-adds below which [`map_idx`] runs sequentially (no rayon overhead for
/// small systems such as n = 20, d = 2).
pub const SEQUENTIAL_WORK: usize = 1 << 15;

/// `(0..n).map(f)` collected in index order, in parallel (tasks of about 2^14
/// multiply-adds, given `work` per item) unless the total work is small or the pool
/// has one thread. The result never depends on the split: every item is computed
/// independently.
pub fn map_idx<T: Send>(n: usize, work: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    use rayon::prelude::*;
    if n.saturating_mul(work) < SEQUENTIAL_WORK || rayon::current_num_threads() == 1 {
        (0..n).map(f).collect()
    } else {
        (0..n)
            .into_par_iter()
            .with_min_len((1usize << 14).div_ceil(work.max(1)))
            .map(f)
            .collect()
    }
}

/// The plain MPFR dot product `Σ_k a_k b_k` (one rounding per multiply and add, at
/// `prec` bits, in index order): the reference the fast kernel is benchmarked against.
pub fn dot_mpfr(a: &[Float], b: &[Float], prec: u32) -> Float {
    let mut s = Float::new(prec);
    let mut t = Float::new(prec);
    for (x, y) in a.iter().zip(b) {
        t.assign(x * y);
        s += &t;
    }
    s
}

/// `C = A·B` for `A` (r × k) and `B` (k × c), row-major floats, every entry a fast
/// dot product at `prec` bits (rows of `A` against columns of `B`), rows in parallel.
pub fn mat_mul(
    a: &[Float],
    b: &[Float],
    r: usize,
    k: usize,
    c: usize,
    prec: u32,
) -> Result<Vec<Float>, NonFinite> {
    mat_mul_to(a, b, r, k, c, prec, prec)
}

/// [`mat_mul`] with mantissas sized for `prec` (see [`super::limbs_for`]) but outputs
/// rounded to `out_prec` bits (e.g. a few guard bits above `prec`: the exact sums
/// already carry ≥ 62 guard bits, so this costs no extra limbs).
pub fn mat_mul_to(
    a: &[Float],
    b: &[Float],
    r: usize,
    k: usize,
    c: usize,
    prec: u32,
    out_prec: u32,
) -> Result<Vec<Float>, NonFinite> {
    let ab = BlockRows::from_floats(a, r, k, prec)?;
    mat_mul_block(&ab, b, c, prec, out_prec)
}

/// [`mat_mul_to`] with the left factor already converted (`ab`, built by
/// [`BlockRows::from_floats`] at `prec`): the same products, bit for bit, for a left
/// factor used many times (e.g. [`super::super::expm`]'s Horner steps by one B).
pub fn mat_mul_block(
    ab: &BlockRows,
    b: &[Float],
    c: usize,
    prec: u32,
    out_prec: u32,
) -> Result<Vec<Float>, NonFinite> {
    let bt = BlockRows::from_floats_transposed(b, ab.len(), c, prec)?;
    Ok(mat_mul_blocks(ab, &bt, out_prec))
}

/// `C = A·B` with both factors converted: `ab` the rows of A, `bt` the rows of Bᵀ
/// ([`BlockRows::from_floats_transposed`] of B), built for the same precision — the
/// products of [`mat_mul_block`], bit for bit, for a right factor used many times
/// (e.g. the flow's constant e^{(h/2)V}).
pub fn mat_mul_blocks(ab: &BlockRows, bt: &BlockRows, out_prec: u32) -> Vec<Float> {
    let (r, k, c) = (ab.rows(), ab.len(), bt.rows());
    let rows: Vec<Vec<Float>> = map_idx(r, k * c, |i| {
        let mut scr = Scratch::new();
        (0..c)
            .map(|j| {
                let mut out = Float::new(out_prec);
                dot_into(&mut out, ab, i, bt, j, &mut scr);
                out
            })
            .collect()
    });
    rows.into_iter().flatten().collect()
}

/// [`mat_mul_blocks`] sequentially into a reused buffer (`out` resized to r × c floats at
/// `out_prec` when it is not already): the same products, bit for bit, without
/// allocating once `out` has the shape — for small systems whose products run every step.
pub fn mat_mul_blocks_into(
    ab: &BlockRows,
    bt: &BlockRows,
    out_prec: u32,
    out: &mut Vec<Float>,
    scr: &mut Scratch,
) {
    let (r, c) = (ab.rows(), bt.rows());
    if out.len() != r * c || out.first().is_some_and(|x| x.prec() != out_prec) {
        *out = vec![Float::new(out_prec); r * c];
    }
    for (i, row) in out.chunks_mut(c.max(1)).enumerate() {
        for (j, o) in row.iter_mut().enumerate() {
            dot_into(o, ab, i, bt, j, scr);
        }
    }
}
