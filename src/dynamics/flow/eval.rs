//! One right-hand side of the flow (the parent module's "One right-hand side"), into
//! reusable buffers.
//!
//! The integrators evaluate the right-hand side hundreds of thousands of times on
//! small systems (the two-token runs of clusters/higher-dim-remark: n = d = 2, four
//! evaluations per RK4 step), where allocating the intermediate vectors, block rows
//! and MPFR floats afresh cost about as much as the arithmetic. [`EvalWork`] keeps
//! them from one evaluation to the next. The arithmetic is the same operation for
//! operation — every intermediate is assigned (rounded to nearest at the precision it
//! was created with before) instead of created, every block conversion refills the
//! same layout — so each result is the same float, bit for bit. Rows are computed
//! independently in a fixed order, in parallel only for large systems (the work
//! thresholds of [`map_idx`]), so no result depends on the thread count.
//!
//! Above 128 bits and for at most four tokens, the softmax takes all rows' shifted
//! logits before their exponentials, so that two arguments a few ulps apart in
//! different rows (the symmetric pair's `ℓ₁₂ − ℓ₁₁` and `ℓ₂₁ − ℓ₂₂`) share one MPFR
//! `exp` ([`super::near`], which returns MPFR's own correctly rounded results or
//! declines); every entry is still MPFR's `exp` of the same argument, every row the
//! same sum and reciprocal, so P is the same, bit for bit.
//!
//! [`map_idx`]: super::super::dot::map_idx

use super::super::dot::{dot_into, BlockRows, Layout, NonFinite, Scratch, SEQUENTIAL_WORK};
use super::near::{exp_two_near, NearWork};
use super::{Flow, Propagator, Rhs, Vars};
use crate::fast::exp_fixed;
use crate::kernel::Interval;
use rug::{Assign, Float};

/// Buffers reused by `Flow::eval_into` (one per integration; empty to start).
#[derive(Default)]
pub struct EvalWork {
    delta: Vec<Float>,
    b: Vec<Float>,
    er: Vec<Float>,
    y: Vec<Float>,
    a: Vec<Float>,
    delta_blk: Option<BlockRows>,
    r_blk: Option<BlockRows>,
    b_blk: Option<BlockRows>,
    y_blk: Option<BlockRows>,
    a_blk: Option<BlockRows>,
    p_blk: Option<BlockRows>,
    dt_blk: Option<BlockRows>,
    /// Per-row buffers of the sequential path.
    row: RowWork,
}

/// Per-row buffers: a dot-product scratch, the softmax's temporaries and the
/// derivative's q_i with its block row.
#[derive(Default)]
struct RowWork {
    scr: Scratch,
    soft: Option<SoftWork>,
    q: Vec<Float>,
    q_blk: Option<BlockRows>,
}

/// `v` resized to `len` floats of precision `prec` (the values are overwritten by
/// the caller before they are read).
fn sized(v: &mut Vec<Float>, len: usize, prec: u32) -> &mut [Float] {
    if v.len() != len || v.first().is_some_and(|x| x.prec() != prec) {
        v.clear();
        v.resize(len, Float::new(prec));
    }
    v
}

fn blk(b: &mut Option<BlockRows>) -> &mut BlockRows {
    b.get_or_insert_with(BlockRows::empty)
}

/// `f(i, chunk_i, w)` for the `chunk`-sized pieces of `out`, in index order with the
/// caller's `seq` buffers when the total work is below [`SEQUENTIAL_WORK`] (or the
/// pool has one thread), else in parallel with per-task buffers — [`map_idx`]'s rule;
/// every piece is computed independently.
///
/// [`map_idx`]: super::super::dot::map_idx
fn rows_into<T: Send, W: Send + Default>(
    out: &mut [T],
    chunk: usize,
    work: usize,
    seq: &mut W,
    f: impl Fn(usize, &mut [T], &mut W) -> Result<(), NonFinite> + Sync + Send,
) -> Result<(), NonFinite> {
    use rayon::prelude::*;
    if chunk == 0 || out.is_empty() {
        return Ok(());
    }
    let n = out.len() / chunk;
    if n.saturating_mul(work) < SEQUENTIAL_WORK || rayon::current_num_threads() == 1 {
        for (i, c) in out.chunks_mut(chunk).enumerate() {
            f(i, c, seq)?;
        }
        Ok(())
    } else {
        out.par_chunks_mut(chunk)
            .enumerate()
            .with_min_len((1usize << 14).div_ceil(work.max(1)))
            .try_for_each_init(W::default, |w, (i, c)| f(i, c, w))
    }
}

/// Rows `(A x_j)` for every row x_j of `xs` into `out` (n × d): `out[j·d + r] = ⟨a_r, x_j⟩`.
fn rows_times_into(
    out: &mut [Float],
    a: &BlockRows,
    xs: &BlockRows,
    d: usize,
    scr: &mut Scratch,
) -> Result<(), NonFinite> {
    rows_into(out, d, d * d, scr, |j, o, scr: &mut Scratch| {
        for (r, o) in o.iter_mut().enumerate() {
            dot_into(o, a, r, xs, j, scr);
        }
        Ok(())
    })
}

impl Flow<'_> {
    /// The right-hand side and P for state `u` with propagator `prop` (z) or none
    /// (x), into `out` (its vectors resized as needed; `deriv` left empty when
    /// `want_deriv` is false), with the buffers of `ws`.
    pub(super) fn eval_into(
        &self,
        prop: Option<&Propagator>,
        u: &[Float],
        want_deriv: bool,
        ws: &mut EvalWork,
        out: &mut Rhs,
    ) -> Result<(), NonFinite> {
        let (d, prec) = (self.d, self.opts.prec);
        let n = u.len() / d;
        let EvalWork {
            delta,
            b,
            er,
            y,
            a,
            delta_blk,
            r_blk,
            b_blk,
            y_blk,
            a_blk,
            p_blk,
            dt_blk,
            row,
        } = ws;
        // reference token r and Δ_j = u_j − r (uncentered: r = 0, Δ = u)
        let r: Option<&[Float]> = self.opts.centered.then(|| &u[..d]);
        let delta: &[Float] = match r {
            Some(r) => {
                let dl = sized(delta, n * d, prec);
                for (j, row) in dl.chunks_mut(d).enumerate() {
                    for ((o, a), b) in row.iter_mut().zip(&u[j * d..(j + 1) * d]).zip(r) {
                        o.assign(a - b);
                    }
                }
                dl
            }
            None => u,
        };
        let delta_blk = blk(delta_blk);
        delta_blk.assign_floats(delta, n, d, prec)?;
        // b_j = E Δ_j, y_i = E r + b_i
        let (b, y): (&[Float], &[Float]) = match prop {
            None => (delta, u),
            Some(pr) => {
                let b = sized(b, n * d, prec);
                rows_times_into(b, &pr.rows, delta_blk, d, &mut row.scr)?;
                let y = sized(y, n * d, prec);
                match r {
                    Some(r) => {
                        let r_blk = blk(r_blk);
                        r_blk.assign_floats(r, 1, d, prec)?;
                        let er = sized(er, d, prec);
                        rows_times_into(er, &pr.rows, r_blk, d, &mut row.scr)?;
                        for (yr, br) in y.chunks_mut(d).zip(b.chunks(d)) {
                            for ((o, a), c) in yr.iter_mut().zip(br).zip(er.iter()) {
                                o.assign(a + c);
                            }
                        }
                    }
                    // r = 0: E·r is +0 (a zero row's dot products), so y = b + (+0)
                    None => {
                        let zero = Float::new(prec);
                        for (o, a) in y.iter_mut().zip(b.iter()) {
                            o.assign(a + &zero);
                        }
                    }
                }
                (b, y)
            }
        };
        let b_blk = blk(b_blk);
        b_blk.assign_floats(b, n, d, prec)?;
        // a_i = Mᵀ y_i
        let a_blk = blk(a_blk);
        match &self.m_rows {
            None => a_blk.assign_floats(y, n, d, prec)?,
            Some(m) => {
                let y_blk = blk(y_blk);
                y_blk.assign_floats(y, n, d, prec)?;
                let a = sized(a, n * d, prec);
                rows_times_into(a, m, y_blk, d, &mut row.scr)?;
                a_blk.assign_floats(a, n, d, prec)?;
            }
        }
        // P_i = softmax_j ⟨a_i, b_j⟩
        let p = sized(&mut out.p, n * n, prec);
        let (a_blk, b_blk) = (&*a_blk, &*b_blk);
        if prec > 128 && n <= NEAR_ROWS {
            // tiny systems: every row's shifted logits first, then their exponentials
            // with nearby arguments paired (one MPFR exp for two), then the rows'
            // normalisations — per entry and per row the same operations as below
            let w = &mut *row;
            for (i, logits) in p.chunks_mut(n).enumerate() {
                for (j, l) in logits.iter_mut().enumerate() {
                    dot_into(l, a_blk, i, b_blk, j, &mut w.scr);
                }
            }
            softmax_rows_paired(p, n, prec, soft_at(&mut w.soft, prec));
        } else {
            rows_into(p, n, n * d, row, |i, logits, w: &mut RowWork| {
                for (j, l) in logits.iter_mut().enumerate() {
                    dot_into(l, a_blk, i, b_blk, j, &mut w.scr);
                }
                softmax_in_place(logits, prec, soft_at(&mut w.soft, prec));
                Ok(())
            })?;
        }
        if p.iter().any(|x| !x.is_finite()) {
            return Err(NonFinite { row: 0, col: 0 });
        }
        if !want_deriv {
            out.deriv.clear();
            return Ok(());
        }
        // w_i = Σ_j P_ij Δ_j; q_i = w_i − Δ_i (z) or r + w_i (x); u̇_i = V q_i
        let p_blk = blk(p_blk);
        p_blk.assign_floats(p, n, n, prec)?;
        let dt_blk = blk(dt_blk);
        dt_blk.assign_floats_transposed(delta, n, d, prec)?;
        let (p_blk, dt_blk) = (&*p_blk, &*dt_blk);
        let vars = self.opts.vars;
        let zero = Float::new(prec);
        let deriv = sized(&mut out.deriv, n * d, prec);
        rows_into(deriv, d, n * d + d * d, row, |i, o, w: &mut RowWork| {
            let q = sized(&mut w.q, d, prec);
            for (k, qk) in q.iter_mut().enumerate() {
                dot_into(qk, p_blk, i, dt_blk, k, &mut w.scr);
                match (vars, r) {
                    (Vars::Z, _) => *qk -= &delta[i * d + k],
                    (Vars::X, Some(r)) => *qk += &r[k],
                    // r = 0: the zero token's +0
                    (Vars::X, None) => *qk += &zero,
                }
            }
            let q_blk = blk(&mut w.q_blk);
            q_blk.assign_floats_layout(q, 1, d, prec, Layout::Sparse)?;
            for (k, ok) in o.iter_mut().enumerate() {
                dot_into(ok, &self.v_rows, k, q_blk, 0, &mut w.scr);
            }
            Ok(())
        })?;
        Ok(())
    }
}

/// Rows up to which `Flow::eval_into` pairs nearby exponential arguments across rows
/// ([`exps_paired`]; at most 16 entries, so the pairing's look-up stays small).
const NEAR_ROWS: usize = 4;

/// The softmax's temporaries at one precision.
struct SoftWork {
    prec: u32,
    m: Float,
    s: Float,
    inv: Float,
    /// [`exps_paired`]'s temporaries (made on first use).
    near: Option<NearWork>,
}

impl SoftWork {
    fn new(prec: u32) -> SoftWork {
        SoftWork {
            prec,
            m: Float::new(prec),
            s: Float::new(prec + 16),
            inv: Float::new(prec + 16),
            near: None,
        }
    }
}

/// `soft`'s temporaries, made (again) for `prec` when absent or of another precision.
fn soft_at(soft: &mut Option<SoftWork>, prec: u32) -> &mut SoftWork {
    let soft = soft.get_or_insert_with(|| SoftWork::new(prec));
    if soft.prec != prec {
        *soft = SoftWork::new(prec);
    }
    soft
}

/// Point softmax of one row with the max shift: `p_j = e^{ℓ_j − m}·(1/Σ_l e^{ℓ_l − m})`,
/// `m = max_l ℓ_l` (the logits are consumed). The sum runs in index order at prec + 16
/// bits; multiplying by the rounded reciprocal adds ≤ 2 ulps.
///
/// Exponentials: for `prec ≤ 128` the kernel's fixed-point [`exp_fixed`], whose two
/// endpoints are computed independently (`[RD bound of e^{lo}, RU bound of e^{hi}]`,
/// each within 2^−122 relative): one call on `[min(x_j, x_k), max(x_j, x_k)]` yields
/// e^{x_j} and e^{x_k} for a pair of entries. Arguments outside its domain
/// (|x| ≥ 2^28) and precisions above 128 bits use MPFR's correctly rounded exp
/// (arguments below MPFR's exponent range give 0).
pub fn softmax_point(mut logits: Vec<Float>, prec: u32) -> Vec<Float> {
    let mut w = SoftWork::new(logits[0].prec());
    softmax_in_place(&mut logits, prec, &mut w);
    logits
}

/// The point softmax of each of the `logits.len()/n` rows of `logits` (`n` per row),
/// as `Flow::eval_into` computes P: for `prec > 128` and at most four rows, the
/// exponentials of all rows together with nearby arguments paired ([`exps_paired`]),
/// else row by row — either way each row is [`softmax_point`]'s, bit for bit.
pub fn softmax_rows_point(mut logits: Vec<Float>, n: usize, prec: u32) -> Vec<Float> {
    if n == 0 || logits.is_empty() {
        return logits;
    }
    let mut w = SoftWork::new(logits[0].prec());
    if prec > 128 && logits.len() <= NEAR_ROWS * n && n <= NEAR_ROWS {
        softmax_rows_paired(&mut logits, n, prec, &mut w);
    } else {
        for row in logits.chunks_mut(n) {
            softmax_in_place(row, prec, &mut w);
        }
    }
    logits
}

/// Rows of `n` logits (at most [`NEAR_ROWS`] rows, `prec > 128`): each row shifted by
/// its max, the exponentials of all rows by [`exps_paired`], each row normalised — per
/// entry and per row the operations of [`softmax_in_place`], in the same order.
fn softmax_rows_paired(logits: &mut [Float], n: usize, prec: u32, w: &mut SoftWork) {
    for row in logits.chunks_mut(n) {
        shift_by_max(row, &mut w.m);
    }
    exps_paired(logits, w);
    for row in logits.chunks_mut(n) {
        normalize(row, prec, w);
    }
}

/// [`softmax_point`] in place, with temporaries `w` (its `m` at the logits'
/// precision, `s` and `inv` at prec + 16 bits).
fn softmax_in_place(logits: &mut [Float], prec: u32, w: &mut SoftWork) {
    shift_by_max(logits, &mut w.m);
    for pair in logits.chunks_mut(2) {
        exp_pair(pair, prec);
    }
    normalize(logits, prec, w);
}

/// `ℓ_j ← ℓ_j − m`, `m = max_l ℓ_l` (`m` at the logits' precision).
fn shift_by_max(logits: &mut [Float], m: &mut Float) {
    m.assign(&logits[0]);
    for l in &logits[1..] {
        if *l > *m {
            m.assign(l);
        }
    }
    for l in logits.iter_mut() {
        *l -= &*m;
    }
}

/// `p_j ← p_j·(1/Σ_l p_l)`, the sum in index order at prec + 16 bits.
fn normalize(logits: &mut [Float], prec: u32, w: &mut SoftWork) {
    let SoftWork { s, inv, .. } = w;
    if s.prec() != prec + 16 {
        s.set_prec(prec + 16);
    }
    s.assign(0);
    for l in logits.iter() {
        *s += l;
    }
    if inv.prec() != prec + 16 {
        inv.set_prec(prec + 16);
    }
    inv.assign(s.recip_ref());
    for l in logits.iter_mut() {
        *l *= &*inv;
    }
}

/// `x ← e^x` for every entry of the shifted logits `x` of several rows (precision
/// above 128 bits, where [`exp_pair`] calls MPFR's `exp` per entry): each entry gets
/// MPFR's correctly rounded `exp`, bit for bit, but two nonzero entries whose
/// arguments are a few ulps apart (the rows of a symmetric pair) share one `exp` at
/// p + 16 bits ([`exp_two_near`], which decides or leaves both to MPFR). Zeros (the
/// rows' maxima) go to MPFR, which returns 1 at once. The `f64` images only choose
/// which pairs to try; the values come from [`exp_two_near`] or MPFR.
fn exps_paired(x: &mut [Float], w: &mut SoftWork) {
    const MAX: usize = NEAR_ROWS * NEAR_ROWS;
    debug_assert!(x.len() <= MAX);
    let len = x.len().min(MAX);
    let mut done = [false; MAX];
    let mut approx = [0f64; MAX];
    for (a, v) in approx.iter_mut().zip(x.iter()) {
        *a = v.to_f64();
    }
    let prec = x.first().map_or(w.prec, Float::prec);
    for i in 0..len {
        if done[i] {
            continue;
        }
        done[i] = true;
        if !x[i].is_zero() && x[i].is_finite() {
            let ai = approx[i];
            let partner = (i + 1..len).find(|&j| {
                !done[j]
                    && !x[j].is_zero()
                    && ai.is_normal()
                    && (approx[j] - ai).abs() <= ai.abs() * 2f64.powi(-40)
            });
            if let Some(j) = partner {
                let near = w.near.get_or_insert_with(|| NearWork::new(prec));
                if near.prec() != prec {
                    *near = NearWork::new(prec);
                }
                let (head, tail) = x.split_at_mut(j);
                if exp_two_near(&mut head[i], &mut tail[0], near) {
                    done[j] = true;
                    continue;
                }
            }
        }
        x[i].exp_mut();
    }
    for v in x[len..].iter_mut() {
        v.exp_mut();
    }
}

/// `x ← e^x` for one or two entries `x ≤ 0` (see [`softmax_point`]).
fn exp_pair(x: &mut [Float], prec: u32) {
    if prec <= 128 {
        let (i_lo, i_hi) = if x.len() == 2 && x[1] < x[0] {
            (1, 0)
        } else {
            (0, x.len() - 1)
        };
        let iv = Interval::from_endpoints(x[i_lo].clone(), x[i_hi].clone());
        if let Some(e) = exp_fixed(&iv, prec) {
            x[i_lo].assign(e.lo());
            if i_hi != i_lo {
                x[i_hi].assign(e.hi());
            }
            return;
        }
    }
    for v in x.iter_mut() {
        v.exp_mut();
    }
}
