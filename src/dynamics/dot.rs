//! Fast point dot products at MPFR precision: block floating point with exact limb
//! arithmetic (after Arb's `arb_dot`, F. Johansson, "Faster arbitrary-precision dot
//! product and matrix multiplication", ARITH 2019).
//!
//! A 128-bit MPFR multiply-add costs ≈ 43 ns; the flow at n = d = 128 needs ≈ 8 M of
//! them per right-hand side. Here a vector (one row of a [`BlockRows`]) is stored
//! once as integers on a common scale, `v_k ≈ m_k·2^{E−W}`, with `|m_k| ≤ 2^W`,
//! `W = 64L − 2`, in `L` 64-bit limbs; a dot product multiplies limbs exactly
//! (`u64 × u64 → u128`), accumulates the exact sum of all products, and rounds
//! **once** to the output precision.
//!
//! Two layouts, chosen by the caller (both operands of a product must agree):
//! * [`Layout::Dense`] stores the offset mantissas `U_k = m_k + 2^W ∈ [0, 2^{W+1}]`,
//!   so the inner loop is a pure unsigned multiply-accumulate into `2L` column sums
//!   (low and high halves of each limb product, no carries, no signs); with the row
//!   constants `T = 2^W·Σ_k m_k + len·2^{2W−1}` the exact sum is recovered as
//!   `Σ m_k m'_k = Σ U_k U'_k − T − T'` (expand `(m + 2^W)(m' + 2^W)`).
//! * [`Layout::Sparse`] stores sign and magnitude and skips zero entries (V is
//!   sparse in the n = d = 128 run); each term's exact 2L-limb product is added to or
//!   subtracted from signed 128-bit column sums.
//!
//! # Error bound
//!
//! Let `a, b ∈ ℝ^len` be the exact inputs, with row exponents `E_a, E_b` such
//! that `|a_k| < 2^{E_a}` and `|b_k| < 2^{E_b}` (MPFR exponents: `E = max_k exp(a_k)`).
//! Conversion rounds to nearest: `a_k = ã_k + δ_k` with `ã_k = m_k 2^{E_a−W}` and
//! `|δ_k| ≤ 2^{E_a−W−1}`; likewise `b_k = b̃_k + η_k`, `|η_k| ≤ 2^{E_b−W−1}`. The
//! sum `Σ ã_k b̃_k` is computed exactly (integers), then rounded to nearest at
//! `prec` bits (relative error ≤ 2^{−prec}). Since
//! `a_k b_k − ã_k b̃_k = δ_k b_k + ã_k η_k` and `|ã_k| ≤ 2^{E_a}`,
//!
//! ```text
//! |dot(a, b) − Σ a_k b_k| ≤ 2^{−prec}·|Σ ã_k b̃_k| + len·2^{E_a+E_b−W}
//!                        ≤ 2^{−prec}·|Σ a_k b_k| + (1 + 2^{−prec})·len·2^{E_a+E_b−W}.
//! ```
//!
//! With `L = ⌈(prec + 64)/64⌉` limbs (so `W ≥ prec + 62`) the second term is at most
//! `len·2^{−prec−62}·2^{E_a+E_b}`, i.e. below one unit in the last place of
//! `‖a‖_∞‖b‖_∞` for any `len < 2^60`: the dot product is as accurate as one MPFR
//! product of the two largest entries, with no dependence on the summation order.
//! [`dot_error_bound`] returns this bound; the `dynamics_flow` tests check it against
//! exact rationals. Every step is integer arithmetic in a fixed order, so results are
//! bit-identical on every machine and for every thread count.
//!
//! No overflow: each term adds at most `2L` values `< 2^64` to a column sum, so
//! columns stay below `len·2L·2^64 < 2^127` for `len·L < 2^62` (asserted).

use rug::float::Round;
use rug::integer::Order;
use rug::ops::{AddAssignRound, AssignRound, MulAssignRound};
use rug::{Assign, Float, Integer};

mod matmul;
pub use matmul::{
    dot_mpfr, map_idx, mat_mul, mat_mul_block, mat_mul_blocks, mat_mul_blocks_into, mat_mul_to,
    SEQUENTIAL_WORK,
};

/// Limb counts up to which the fixed-size kernels serve; above, the exact
/// `Integer` fallback (precisions beyond ≈ 960 bits).
const MAX_LIMBS: usize = 16;

/// Entry flag (sparse layout): the entry is negative.
const NEG: u8 = 1;
/// Entry flag (sparse layout): the entry is zero (skipped by the kernel).
const ZERO: u8 = 2;

/// Number of 64-bit limbs per entry for output precision `prec`: `⌈(prec + 64)/64⌉`,
/// so that the scale `W = 64L − 2` has at least 62 guard bits.
pub fn limbs_for(prec: u32) -> usize {
    (prec as usize + 64).div_ceil(64)
}

/// Storage layout of a [`BlockRows`] (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Offset unsigned mantissas: the fastest inner loop for dense data.
    Dense,
    /// Sign and magnitude with zero skipping, for sparse rows.
    Sparse,
}

impl Layout {
    /// Dense for rows of 16 or more entries; sparse (sign and magnitude, no offset
    /// corrections to apply after the sum) for shorter rows, where the per-product
    /// overhead matters less than the fixed cost of a dot product.
    pub fn auto(len: usize) -> Layout {
        if len >= 16 {
            Layout::Dense
        } else {
            Layout::Sparse
        }
    }
}

/// Rows of equal length stored in block floating point: row `r` is
/// `m_{r,k}·2^{E_r − W}` with integer mantissas `|m_{r,k}| ≤ 2^W`, `W = 64L − 2`.
#[derive(Clone, Debug)]
pub struct BlockRows {
    rows: usize,
    len: usize,
    limbs: usize,
    layout: Layout,
    /// Per row: `E_r = max_k exp(v_{r,k})` (MPFR exponent), or `None` for a zero row.
    exps: Vec<Option<i64>>,
    /// `rows·len·limbs` limbs, least significant first: `U = m + 2^W` (dense) or `|m|`
    /// (sparse).
    mags: Vec<u64>,
    /// Sparse layout: per entry [`NEG`] / [`ZERO`] flags (empty when dense).
    flags: Vec<u8>,
    /// Dense layout: per row `T_r = 2^W·Σ_k m_{r,k} + len·2^{2W−1}` (empty when sparse).
    offsets: Vec<Integer>,
    /// The sequential conversion's buffers, kept for the next `assign_*` (no part of
    /// the value).
    fill: FillScratch,
}

/// Why a vector could not be converted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("non-finite entry (NaN or infinity) at row {row}, column {col}")]
pub struct NonFinite {
    /// Row of the offending entry.
    pub row: usize,
    /// Column of the offending entry.
    pub col: usize,
}

impl BlockRows {
    /// Converts `rows × len` floats (row-major) in the layout [`Layout::auto`] picks for
    /// the row length (so independently built operands agree), with mantissas
    /// for output precision `prec` (see [`limbs_for`]); each row gets its own
    /// exponent. Rounds to nearest; rows are converted in parallel.
    pub fn from_floats(
        data: &[Float],
        rows: usize,
        len: usize,
        prec: u32,
    ) -> Result<BlockRows, NonFinite> {
        BlockRows::from_floats_layout(data, rows, len, prec, Layout::auto(len))
    }

    /// [`BlockRows::from_floats`] with an explicit layout.
    pub fn from_floats_layout(
        data: &[Float],
        rows: usize,
        len: usize,
        prec: u32,
        layout: Layout,
    ) -> Result<BlockRows, NonFinite> {
        assert_eq!(data.len(), rows * len, "BlockRows::from_floats: shape");
        let mut out = BlockRows::empty();
        out.build(rows, len, prec, layout, |r, k| &data[r * len + k])?;
        Ok(out)
    }

    /// No rows: a holder whose buffers the `assign_*` conversions reuse.
    pub fn empty() -> BlockRows {
        BlockRows {
            rows: 0,
            len: 0,
            limbs: 0,
            layout: Layout::Sparse,
            exps: Vec::new(),
            mags: Vec::new(),
            flags: Vec::new(),
            offsets: Vec::new(),
            fill: FillScratch::default(),
        }
    }

    /// [`BlockRows::from_floats`] into `self`, reusing its buffers: the same rows, bit
    /// for bit, without allocating once the buffers are large enough (a right-hand side
    /// evaluated many times converts its operands into the same holders). On error
    /// `self` holds no usable rows.
    pub fn assign_floats(
        &mut self,
        data: &[Float],
        rows: usize,
        len: usize,
        prec: u32,
    ) -> Result<(), NonFinite> {
        self.assign_floats_layout(data, rows, len, prec, Layout::auto(len))
    }

    /// [`BlockRows::from_floats_layout`] into `self` (see [`BlockRows::assign_floats`]).
    pub fn assign_floats_layout(
        &mut self,
        data: &[Float],
        rows: usize,
        len: usize,
        prec: u32,
        layout: Layout,
    ) -> Result<(), NonFinite> {
        assert_eq!(data.len(), rows * len, "BlockRows::from_floats: shape");
        self.build(rows, len, prec, layout, |r, k| &data[r * len + k])
    }

    /// [`BlockRows::from_floats_transposed`] into `self` (see [`BlockRows::assign_floats`]).
    pub fn assign_floats_transposed(
        &mut self,
        data: &[Float],
        rows: usize,
        cols: usize,
        prec: u32,
    ) -> Result<(), NonFinite> {
        assert_eq!(
            data.len(),
            rows * cols,
            "BlockRows::from_floats_transposed: shape"
        );
        self.build(cols, rows, prec, Layout::auto(rows), |c, k| {
            &data[k * cols + c]
        })
    }

    /// Like [`BlockRows::from_floats`] for the transpose of a `rows × cols` matrix
    /// (row `c` of the result is column `c` of `data`).
    pub fn from_floats_transposed(
        data: &[Float],
        rows: usize,
        cols: usize,
        prec: u32,
    ) -> Result<BlockRows, NonFinite> {
        assert_eq!(
            data.len(),
            rows * cols,
            "BlockRows::from_floats_transposed: shape"
        );
        let mut out = BlockRows::empty();
        out.build(cols, rows, prec, Layout::auto(rows), |c, k| {
            &data[k * cols + c]
        })?;
        Ok(out)
    }

    /// Converts into `self`'s buffers (cleared and refilled as a fresh conversion
    /// would allocate them: mags zeroed, flags [`ZERO`], exponents `None`, offsets 0).
    fn build<'a>(
        &mut self,
        rows: usize,
        len: usize,
        prec: u32,
        layout: Layout,
        at: impl Fn(usize, usize) -> &'a Float + Sync,
    ) -> Result<(), NonFinite> {
        use rayon::prelude::*;
        let limbs = limbs_for(prec);
        assert!(
            (len as u128) * (limbs as u128) < 1 << 62,
            "BlockRows: rows too long"
        );
        self.rows = rows;
        self.len = len;
        self.limbs = limbs;
        self.layout = layout;
        let BlockRows {
            exps,
            mags,
            flags,
            offsets,
            fill,
            ..
        } = self;
        mags.clear();
        mags.resize(rows * len * limbs, 0);
        flags.clear();
        if layout == Layout::Sparse {
            flags.resize(rows * len, ZERO);
        }
        exps.clear();
        exps.resize(rows, None);
        match layout {
            Layout::Dense => {
                offsets.truncate(rows);
                for o in offsets.iter_mut() {
                    o.assign(0);
                }
                offsets.resize(rows, Integer::new());
            }
            Layout::Sparse => offsets.clear(),
        }
        if len > 0 && rows > 0 {
            let work = |scratch: &mut FillScratch,
                        r: usize,
                        m: &mut [u64],
                        f: &mut [u8],
                        e: &mut Option<i64>,
                        o: Option<&mut Integer>|
             -> Result<(), NonFinite> {
                *e = fill_row(|k| at(r, k), len, limbs, layout, m, f, o, scratch)
                    .map_err(|col| NonFinite { row: r, col })?;
                Ok(())
            };
            match layout {
                _ if rows * len * limbs < SEQUENTIAL_WORK || rayon::current_num_threads() == 1 => {
                    let scratch = fill;
                    for r in 0..rows {
                        let m = &mut mags[r * len * limbs..(r + 1) * len * limbs];
                        let (f, o): (&mut [u8], Option<&mut Integer>) = match layout {
                            Layout::Dense => (&mut [], Some(&mut offsets[r])),
                            Layout::Sparse => (&mut flags[r * len..(r + 1) * len], None),
                        };
                        work(scratch, r, m, f, &mut exps[r], o)?;
                    }
                }
                Layout::Dense => mags
                    .par_chunks_mut(len * limbs)
                    .zip(exps.par_iter_mut())
                    .zip(offsets.par_iter_mut())
                    .enumerate()
                    .with_min_len(8)
                    .try_for_each_init(FillScratch::default, |s, (r, ((m, e), o))| {
                        work(s, r, m, &mut [], e, Some(o))
                    })?,
                Layout::Sparse => mags
                    .par_chunks_mut(len * limbs)
                    .zip(flags.par_chunks_mut(len))
                    .zip(exps.par_iter_mut())
                    .enumerate()
                    .with_min_len(8)
                    .try_for_each_init(FillScratch::default, |s, (r, ((m, f), e))| {
                        work(s, r, m, f, e, None)
                    })?,
            }
        }
        Ok(())
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Length of each row.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the rows are empty (length 0).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }
    /// `E_r`: every entry of row `r` has absolute value `< 2^{E_r}` (`None`: zero row).
    pub fn row_exp(&self, r: usize) -> Option<i64> {
        self.exps[r]
    }
    /// The scale exponent `W = 64L − 2`.
    fn w(&self) -> i64 {
        (64 * self.limbs - 2) as i64
    }
}

/// Converts one row (entries `at(0..len)`) into `mags` (pre-zeroed) and `flags`
/// (sparse) or the row offset (dense), returning the row exponent, or the column of
/// a non-finite entry.
#[allow(clippy::too_many_arguments)]
fn fill_row<'a>(
    at: impl Fn(usize) -> &'a Float,
    len: usize,
    l: usize,
    layout: Layout,
    mags: &mut [u64],
    flags: &mut [u8],
    offset: Option<&mut Integer>,
    scratch: &mut FillScratch,
) -> Result<Option<i64>, usize> {
    let w = (64 * l - 2) as i64;
    let mut e_max: Option<i64> = None;
    for k in 0..len {
        let v = at(k);
        if !v.is_finite() {
            return Err(k);
        }
        if let Some(e) = v.get_exp() {
            e_max = Some(e_max.map_or(i64::from(e), |m| m.max(i64::from(e))));
        }
    }
    let Some(e_max) = e_max else {
        return Ok(None);
    };
    // Σ_k m_k as two magnitudes (dense layout), L + 1 limbs each
    let FillScratch { sums, mag, .. } = scratch;
    for v in sums.iter_mut() {
        v.clear();
        v.resize(l + 2, 0);
    }
    mag.clear();
    mag.resize(l, 0);
    let (sums, mag) = (std::mem::take(sums), std::mem::take(mag));
    let mut sums = sums;
    let mut mag = mag;
    for k in 0..len {
        let v = at(k);
        let slot = &mut mags[k * l..(k + 1) * l];
        // |m| = round(|v|·2^{W − E}) (half up, deterministic) into `mag`; |m| ≤ 2^W
        // as |v| < 2^E, so it fits L limbs.
        let neg = v.is_sign_negative();
        let nonzero = !v.is_zero() && mantissa_into(v, w - e_max, &mut mag[..l], &mut scratch.int);
        if !nonzero {
            if layout == Layout::Dense {
                slot.fill(0);
                set_bit(slot, w as usize);
            }
            continue;
        }
        match layout {
            Layout::Sparse => {
                flags[k] = if neg { NEG } else { 0 };
                slot.copy_from_slice(&mag[..l]);
            }
            Layout::Dense => {
                add_limbs(&mut sums[usize::from(neg)][..l + 1], &mag[..l]);
                // U = 2^W ± |m| ∈ [0, 2^{W+1}]
                slot.fill(0);
                set_bit(slot, w as usize);
                if neg {
                    sub_limbs(slot, &mag[..l]);
                } else {
                    add_limbs(slot, &mag[..l]);
                }
            }
        }
    }
    if let Some(o) = offset {
        // T = 2^W·Σ m + len·2^{2W−1}
        let t = &mut scratch.int;
        o.assign_digits(&sums[0][..l + 1], Order::Lsf);
        t.assign_digits(&sums[1][..l + 1], Order::Lsf);
        *o -= &*t;
        *o <<= w as u32;
        t.assign(len);
        *t <<= (2 * w - 1) as u32;
        *o += &*t;
    }
    scratch.sums = sums;
    scratch.mag = mag;
    Ok(Some(e_max))
}

/// Reusable buffers of the row conversion.
#[derive(Clone, Debug, Default)]
struct FillScratch {
    int: Integer,
    mag: Vec<u64>,
    sums: [Vec<u64>; 2],
}

/// Writes `round(|v|·2^{shift})` (half up) into `out`, returning whether it is
/// nonzero. Reads MPFR's significand limbs directly (no allocation) when GMP limbs
/// are 64-bit, else goes through an `Integer`.
fn mantissa_into(v: &Float, shift: i64, out: &mut [u64], scratch: &mut Integer) -> bool {
    out.fill(0);
    let (Some(sig), Some(e)) = (v.get_significand(), v.get_exp()) else {
        return false;
    };
    let limbs = sig.as_limbs();
    if std::mem::size_of_val(limbs) != 8 * limbs.len() {
        // 32-bit limbs: exact Integer route
        let e2 = v.to_integer_exp_in_place(scratch).expect("finite");
        scratch.abs_mut();
        let s = i64::from(e2) + shift;
        if s >= 0 {
            *scratch <<= s as u32;
        } else {
            *scratch >>= (-s - 1) as u32;
            *scratch += 1;
            *scratch >>= 1;
        }
        scratch.write_digits(out, Order::Lsf);
        return *scratch != 0;
    }
    let nl = limbs.len();
    let get = |i: usize| -> u64 {
        if i < nl {
            #[allow(clippy::useless_conversion)]
            u64::try_from(limbs[i]).unwrap_or(0)
        } else {
            0
        }
    };
    // |v| = sig·2^{e − 64·nl}; the result is sig·2^s, s = e − 64·nl + shift
    let s = i64::from(e) - 64 * nl as i64 + shift;
    let l = out.len();
    if s >= 0 {
        let (ws, bs) = ((s / 64) as usize, (s % 64) as u32);
        for i in 0..nl {
            let x = get(i);
            if i + ws < l {
                out[i + ws] |= x << bs;
            }
            if bs > 0 && i + ws + 1 < l {
                out[i + ws + 1] |= x >> (64 - bs);
            }
        }
    } else {
        let r = (-s) as u64;
        if r > 64 * nl as u64 {
            return false;
        }
        let (ws, bs) = ((r / 64) as usize, (r % 64) as u32);
        for (i, o) in out.iter_mut().enumerate() {
            let lo = get(i + ws) >> bs;
            let hi = if bs > 0 {
                get(i + ws + 1) << (64 - bs)
            } else {
                0
            };
            *o = lo | hi;
        }
        // round half up: add bit r − 1
        let rb = r - 1;
        if (get((rb / 64) as usize) >> (rb % 64)) & 1 == 1 {
            add_limbs(out, &[1]);
        }
    }
    out.iter().any(|&x| x != 0)
}

/// `acc += x` (limbs, least significant first; the carry out of `acc` is dropped —
/// callers size `acc` so that none occurs).
fn add_limbs(acc: &mut [u64], x: &[u64]) {
    let mut carry = false;
    for (i, a) in acc.iter_mut().enumerate() {
        let xi = x.get(i).copied().unwrap_or(0);
        if xi == 0 && !carry && i >= x.len() {
            break;
        }
        let (s1, c1) = a.overflowing_add(xi);
        let (s2, c2) = s1.overflowing_add(u64::from(carry));
        *a = s2;
        carry = c1 || c2;
    }
}

/// `acc −= x` (requires acc ≥ x).
fn sub_limbs(acc: &mut [u64], x: &[u64]) {
    let mut borrow = false;
    for (i, a) in acc.iter_mut().enumerate() {
        let xi = x.get(i).copied().unwrap_or(0);
        if xi == 0 && !borrow && i >= x.len() {
            break;
        }
        let (s1, b1) = a.overflowing_sub(xi);
        let (s2, b2) = s1.overflowing_sub(u64::from(borrow));
        *a = s2;
        borrow = b1 || b2;
    }
}

fn set_bit(x: &mut [u64], bit: usize) {
    x[bit / 64] |= 1 << (bit % 64);
}

/// Reusable buffers for [`dot_into`].
#[derive(Debug, Default)]
pub struct Scratch {
    int: Integer,
    limbs: Vec<u64>,
}

impl Scratch {
    /// Empty buffers.
    pub fn new() -> Scratch {
        Scratch::default()
    }
}

/// `Σ_k a_{i,k} b_{j,k}` rounded to nearest at `out`'s precision, written to `out`
/// (error bound: module docs, [`dot_error_bound`]). Both operands must have been
/// built for the same precision (limb count), with the same layout and row length.
pub fn dot_into(
    out: &mut Float,
    a: &BlockRows,
    i: usize,
    b: &BlockRows,
    j: usize,
    scr: &mut Scratch,
) {
    assert_eq!(a.len, b.len, "dot: lengths differ");
    assert_eq!(
        a.limbs, b.limbs,
        "dot: operands built for different precisions"
    );
    assert_eq!(a.layout, b.layout, "dot: operands in different layouts");
    let (Some(ea), Some(eb)) = (a.exps[i], b.exps[j]) else {
        out.assign(0);
        return;
    };
    let l = a.limbs;
    let len = a.len;
    let am = &a.mags[i * len * l..(i + 1) * len * l];
    let bm = &b.mags[j * len * l..(j + 1) * len * l];
    if l > MAX_LIMBS {
        exact_fallback(out, a, i, b, j);
    } else {
        match a.layout {
            Layout::Dense => {
                let mut acc = [0u128; 2 * MAX_LIMBS];
                match l {
                    1 => dense::<1, 2>(am, bm, &mut acc),
                    2 => dense::<2, 4>(am, bm, &mut acc),
                    3 => dense::<3, 6>(am, bm, &mut acc),
                    4 => dense::<4, 8>(am, bm, &mut acc),
                    5 => dense::<5, 10>(am, bm, &mut acc),
                    6 => dense::<6, 12>(am, bm, &mut acc),
                    _ => dense_generic(l, am, bm, &mut acc),
                }
                carry_unsigned(&acc[..2 * l], &mut scr.limbs);
                scr.int.assign_digits(&scr.limbs, Order::Lsf);
                scr.int -= &a.offsets[i];
                scr.int -= &b.offsets[j];
            }
            Layout::Sparse => {
                let af = &a.flags[i * len..(i + 1) * len];
                let bf = &b.flags[j * len..(j + 1) * len];
                let mut acc = [0i128; 2 * MAX_LIMBS];
                // fixed limb counts unroll the schoolbook product (the same exact sums)
                match l {
                    2 => sparse::<2>(am, af, bm, bf, &mut acc),
                    3 => sparse::<3>(am, af, bm, bf, &mut acc),
                    4 => sparse::<4>(am, af, bm, bf, &mut acc),
                    5 => sparse::<5>(am, af, bm, bf, &mut acc),
                    6 => sparse::<6>(am, af, bm, bf, &mut acc),
                    _ => sparse_generic(l, am, af, bm, bf, &mut acc),
                }
                let neg = carry_signed(&acc[..2 * l], &mut scr.limbs);
                scr.int.assign_digits(&scr.limbs, Order::Lsf);
                if neg {
                    scr.int = -std::mem::take(&mut scr.int);
                }
            }
        }
        out.assign_round(&scr.int, Round::Nearest);
    }
    let w = a.w();
    let shift = (ea + eb - 2 * w).clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
    *out <<= shift;
}

/// [`dot_into`] returning a new float at `prec` bits.
pub fn dot(a: &BlockRows, i: usize, b: &BlockRows, j: usize, prec: u32) -> Float {
    let mut out = Float::new(prec);
    dot_into(&mut out, a, i, b, j, &mut Scratch::new());
    out
}

/// The proven error bound of [`dot`] (module docs), rounded up:
/// `2^{−prec}(1 + 2^{1−prec})|s| + (1 + 2^{−prec})·len·2^{E_a+E_b−W}` where `s` is the
/// computed value (using `|Σ ã b̃| ≤ |s|(1 + 2^{1−prec})`).
pub fn dot_error_bound(
    computed: &Float,
    a: &BlockRows,
    i: usize,
    b: &BlockRows,
    j: usize,
    prec: u32,
) -> Float {
    let (Some(ea), Some(eb)) = (a.exps[i], b.exps[j]) else {
        return Float::new(64);
    };
    let mut t = Float::with_val(64, a.len);
    t.mul_assign_round(
        1 + Float::with_val(64, Float::i_exp(1, -(prec as i32))),
        Round::Up,
    );
    t <<= (ea + eb - a.w()) as i32;
    let mut s = Float::with_val_round(64, computed.abs_ref(), Round::Up).0;
    s.mul_assign_round(
        1 + Float::with_val(64, Float::i_exp(1, 1 - prec as i32)),
        Round::Up,
    );
    s >>= prec;
    s.add_assign_round(&t, Round::Up);
    s
}

/// Dense kernel: Σ_k U_k U'_k as column sums of limb-product halves (C = 2L).
#[inline(always)]
fn dense<const L: usize, const C: usize>(am: &[u64], bm: &[u64], out: &mut [u128; 2 * MAX_LIMBS]) {
    let mut c = [0u128; C];
    for (x, y) in am.chunks_exact(L).zip(bm.chunks_exact(L)) {
        for i in 0..L {
            let xi = u128::from(x[i]);
            for j in 0..L {
                let p = xi * u128::from(y[j]);
                c[i + j] += u128::from(p as u64);
                c[i + j + 1] += p >> 64;
            }
        }
    }
    out[..C].copy_from_slice(&c);
}

/// [`dense`] with a run-time limb count.
fn dense_generic(l: usize, am: &[u64], bm: &[u64], c: &mut [u128; 2 * MAX_LIMBS]) {
    for (x, y) in am.chunks_exact(l).zip(bm.chunks_exact(l)) {
        for (i, &xi) in x.iter().enumerate() {
            let xi = u128::from(xi);
            for (j, &yj) in y.iter().enumerate() {
                let p = xi * u128::from(yj);
                c[i + j] += u128::from(p as u64);
                c[i + j + 1] += p >> 64;
            }
        }
    }
}

/// Sparse kernel: signed sum of exact products over entries nonzero in both rows.
#[inline(always)]
fn sparse<const L: usize>(
    am: &[u64],
    af: &[u8],
    bm: &[u64],
    bf: &[u8],
    acc: &mut [i128; 2 * MAX_LIMBS],
) {
    sparse_generic(L, am, af, bm, bf, acc)
}

/// [`sparse`] with a run-time limb count.
#[inline(always)]
fn sparse_generic(
    l: usize,
    am: &[u64],
    af: &[u8],
    bm: &[u64],
    bf: &[u8],
    acc: &mut [i128; 2 * MAX_LIMBS],
) {
    let mut p = [0u64; 2 * MAX_LIMBS];
    for (k, (&fa, &fb)) in af.iter().zip(bf).enumerate() {
        if (fa | fb) & ZERO != 0 {
            continue;
        }
        let (x, y) = (&am[k * l..(k + 1) * l], &bm[k * l..(k + 1) * l]);
        // the exact 2L-limb product x·y, schoolbook with carries
        p[..2 * l].fill(0);
        for (ii, &xi) in x.iter().enumerate() {
            let mut carry: u128 = 0;
            for (jj, &yj) in y.iter().enumerate() {
                let t = u128::from(xi) * u128::from(yj) + u128::from(p[ii + jj]) + carry;
                p[ii + jj] = t as u64;
                carry = t >> 64;
            }
            p[ii + l] = carry as u64;
        }
        let m = -i128::from((fa ^ fb) & NEG); // 0 or −1
        for (a, &pc) in acc.iter_mut().zip(&p[..2 * l]) {
            *a += (i128::from(pc) ^ m) - m;
        }
    }
}

/// Resolves unsigned column sums `Σ_c acc_c·2^{64c}` into limbs.
fn carry_unsigned(acc: &[u128], out: &mut Vec<u64>) {
    out.clear();
    let mut carry: u128 = 0;
    for &a in acc {
        // a < 2^127 and carry < 2^64: no overflow
        let t = a + carry;
        out.push(t as u64);
        carry = t >> 64;
    }
    out.push(carry as u64);
    out.push((carry >> 64) as u64);
}

/// Resolves signed column sums `Σ_c acc_c·2^{64c}` into a sign and magnitude limbs.
fn carry_signed(acc: &[i128], out: &mut Vec<u64>) -> bool {
    out.clear();
    let mut carry: i128 = 0;
    for &a in acc {
        let t = a + carry;
        out.push(t as u64);
        carry = t >> 64;
    }
    // the final carry (|carry| < 2^63) as two more two's complement limbs
    out.push(carry as u64);
    out.push(if carry < 0 { u64::MAX } else { 0 });
    let neg = carry < 0;
    if neg {
        let mut c = true;
        for w in out.iter_mut() {
            let (v, o) = (!*w).overflowing_add(u64::from(c));
            *w = v;
            c = o;
        }
    }
    neg
}

/// Exact `Integer` dot product of the stored mantissas (precisions above the
/// fixed-size kernels), then one rounding.
fn exact_fallback(out: &mut Float, a: &BlockRows, i: usize, b: &BlockRows, j: usize) {
    let l = a.limbs;
    let len = a.len;
    let mut s = Integer::new();
    let mut x = Integer::new();
    let mut y = Integer::new();
    for k in 0..len {
        x.assign_digits(
            &a.mags[(i * len + k) * l..(i * len + k + 1) * l],
            Order::Lsf,
        );
        y.assign_digits(
            &b.mags[(j * len + k) * l..(j * len + k + 1) * l],
            Order::Lsf,
        );
        if a.layout == Layout::Sparse {
            let (fa, fb) = (a.flags[i * len + k], b.flags[j * len + k]);
            if (fa | fb) & ZERO != 0 {
                continue;
            }
            if (fa ^ fb) & NEG != 0 {
                x = -x;
            }
        }
        x *= &y;
        s += &x;
    }
    if a.layout == Layout::Dense {
        s -= &a.offsets[i];
        s -= &b.offsets[j];
    }
    out.assign_round(&s, Round::Nearest);
}
