//! The layer map (D) in outward-rounded intervals: the two operations one step of
//! the discrete map in layer form is made of (TRUSTED: the certificate evaluator
//! iterates the `layer` datum with them, [`crate::layer_data`]).
//!
//! ```text
//! x_i^{k+1} = x_i^k + Δt V Σ_j P_ij(x^k) x_j^k,        P_ij(x) = softmax_j ⟨Q x_i, K x_j⟩ = softmax_j x_iᵀ(QᵀK)x_j.
//! ```
//!
//! The step uses Σ_j P_ij x_j = x_i + Σ_j P_ij (x_j − x_i) (exact because Σ_j P_ij = 1):
//! the interval enclosure of the right side stays tight when tokens cluster, since
//! the widths of the P_ij multiply differences, not positions. Every operation is
//! an [`Interval`] operation, so the enclosures contain the exact iterates of the
//! map for the exact rational data (each step applies inclusion-monotone
//! operations to enclosures of the previous iterate). Softmax is the kernel's
//! certified `p_i = 1 / (1 + Σ_{j≠i} e^{s_j − s_i})` form, stable for logits of any
//! size.
//!
//! The untrusted dynamics of the application (its `dynamics::discrete`, with the
//! rescaled forms of the map) are built from the same two operations.

use crate::{softmax_into, Interval};
use rug::Rational;

/// `y = A x` for a d × d interval matrix (row-major) and a d-vector.
pub fn mat_vec_into(a: &[Interval], x: &[Interval], d: usize, y: &mut [Interval]) {
    for (r, yr) in y.iter_mut().enumerate() {
        let row = &a[r * d..(r + 1) * d];
        let mut s = &row[0] * &x[0];
        for c in 1..d {
            s.add_assign(&(&row[c] * &x[c]));
        }
        *yr = s;
    }
}

/// The attention matrix P(x) (n × n) of tokens x (n × d), certified:
/// P_ij = softmax_j x_iᵀ M x_j, given `qk_t` = Mᵀ = (QᵀK)ᵀ (the paper's
/// orientation: row i is the query x_i). Computed as a_i = Mᵀ x_i,
/// logit_ij = ⟨a_i, x_j⟩.
pub fn attention(
    qk_t: &[Interval],
    x: &[Interval],
    n: usize,
    d: usize,
    prec: u32,
) -> Vec<Interval> {
    let mut a = vec![Interval::zero(prec); n * d];
    for i in 0..n {
        mat_vec_into(qk_t, &x[i * d..(i + 1) * d], d, &mut a[i * d..(i + 1) * d]);
    }
    let mut p = Vec::with_capacity(n * n);
    let mut logits = Vec::with_capacity(n);
    let mut row = Vec::with_capacity(n);
    for i in 0..n {
        logits.clear();
        let ai = &a[i * d..(i + 1) * d];
        for j in 0..n {
            let xj = &x[j * d..(j + 1) * d];
            let mut s = &ai[0] * &xj[0];
            for c in 1..d {
                s.add_assign(&(&ai[c] * &xj[c]));
            }
            logits.push(s);
        }
        softmax_into(&logits, prec, &mut row);
        p.append(&mut row);
    }
    p
}

/// An enclosure of the partition sum Σ_i Σ_j e^{s_ij}, s_ij = x_iᵀ M x_j (the sum of every
/// softmax denominator of P(x)), given `qk_t` = Mᵀ = (QᵀK)ᵀ. For Q = K = I it is the
/// Lyapunov function 𝓛 = Σ_i Σ_j e^{⟨x_i, x_j⟩} of clusters/collapse.
///
/// Guarantee: every term is an outward-rounded product, sum or `exp` of enclosures,
/// all inclusion-monotone, so the result contains the exact sum for any x in the
/// enclosure `x`.
///
/// Cost: the terms are added in the order (i, j), i then j; the enclosure of e^{s_ij}
/// for j > i is kept until row j, where e^{s_ji} is not computed again when the
/// enclosure of s_ji equals that of s_ij endpoint for endpoint (as for QᵀK = I, whose
/// logits ⟨x_i, x_j⟩ are the same interval products in the same order): `exp` of an
/// interval is a function of its endpoints' values and precision (MPFR rounds
/// correctly), so the kept enclosure is the one the call would return, and the sum is
/// the same, bit for bit.
pub fn partition(qk_t: &[Interval], x: &[Interval], n: usize, d: usize, prec: u32) -> Interval {
    let mut a = vec![Interval::zero(prec); d];
    let mut total = Interval::zero(prec);
    // kept[i·n + j] for j > i: (s_ij, e^{s_ij}), taken at (j, i)
    let mut kept: Vec<Option<(Interval, Interval)>> = vec![None; n * n];
    for i in 0..n {
        mat_vec_into(qk_t, &x[i * d..(i + 1) * d], d, &mut a);
        for j in 0..n {
            let xj = &x[j * d..(j + 1) * d];
            let mut s = &a[0] * &xj[0];
            for c in 1..d {
                s.add_assign(&(&a[c] * &xj[c]));
            }
            let mirror = if j < i { kept[j * n + i].take() } else { None };
            let e = match mirror {
                Some((s_ji, e_ji)) if same_enclosure(&s_ji, &s) => e_ji,
                _ => s.exp(),
            };
            total.add_assign(&e);
            if j > i {
                kept[i * n + j] = Some((s, e));
            }
        }
    }
    total
}

/// Whether two enclosures have equal endpoints (as values) at the same precision.
fn same_enclosure(a: &Interval, b: &Interval) -> bool {
    a.prec() == b.prec()
        && a.lo().prec() == b.lo().prec()
        && a.hi().prec() == b.hi().prec()
        && a.lo() == b.lo()
        && a.hi() == b.hi()
}

/// [`attention`] with every row tightened by the identity that makes it a softmax row:
/// Σ_l P_il = 1 exactly, so P_il = 1 − Σ_{m≠l} P_im (see `tighten_stochastic_row`).
pub fn attention_stochastic(
    qk_t: &[Interval],
    x: &[Interval],
    n: usize,
    d: usize,
    prec: u32,
) -> Vec<Interval> {
    let mut p = attention(qk_t, x, n, d, prec);
    for row in p.chunks_mut(n.max(1)) {
        tighten_stochastic_row(row, prec);
    }
    p
}

/// An enclosure of Σ_{l≠t} P_l = 1 − P_t for a row P of an attention matrix made by
/// [`attention`] or [`attention_stochastic`] (a softmax row: its exact entries sum to
/// 1): the intersection of the interval sum of the other entries with 1 − P_t. Both
/// contain the exact value, so the intersection does; it is never empty for true
/// enclosures (should rounding ever make it so, the sum alone is returned). The sum is
/// tight (relative to the entries) when they are tiny, the complement when P_t → 1.
pub fn rest_mass(row: &[Interval], t: usize, prec: u32) -> Interval {
    let mut rest = Interval::zero(prec);
    for (l, p) in row.iter().enumerate() {
        if l != t {
            rest.add_assign(p);
        }
    }
    let comp = &Interval::one(prec) - &row[t];
    rest.intersect(&comp).unwrap_or(rest)
}

/// Tightens one softmax row in place: entry l (in order) is intersected with
/// 1 − [`rest_mass`] of the others (which reads the entries tightened before it).
///
/// Proof sketch. The exact row sums to 1, so P_l = 1 − Σ_{m≠l} P_m, and every
/// interval in the row contains its exact entry (induction over l: each replacement
/// is the intersection of two enclosures of P_l). Why: the softmax bounds a saturated
/// entry from below by a⁻/(a⁻ + R⁺), with R⁺ at least one ulp of the row sum, so with
/// logits of width W its enclosure is about [1 − ulp·e^W, 1], while the complement of
/// the tiny entries is as tight as they are. Cost: O(n²) per row (each entry sums the
/// others in order, the same rounding sequence as an explicit sum).
fn tighten_stochastic_row(row: &mut [Interval], prec: u32) {
    for l in 0..row.len() {
        let comp = &Interval::one(prec) - &rest_mass(row, l, prec);
        if let Some(x) = row[l].intersect(&comp) {
            row[l] = x;
        }
    }
}

/// One residual step u_i + A w_i of the n × d state `u` with attention `p` (n × n)
/// and the d × d matrix `a` (Δt V for the layer). With `layer`,
/// w_i = u_i + Σ_{j≠i} P_ij (u_j − u_i) = Σ_j P_ij u_j (the layer form); without it,
/// w_i = Σ_{j≠i} P_ij (u_j − u_i) (the rescaled forms, not used by the kernel).
pub fn residual_step(
    a: &[Interval],
    u: &[Interval],
    p: &[Interval],
    (n, d): (usize, usize),
    prec: u32,
    layer: bool,
) -> Vec<Interval> {
    let mut out = Vec::with_capacity(n * d);
    let mut avg = vec![Interval::zero(prec); d];
    let mut upd = vec![Interval::zero(prec); d];
    for i in 0..n {
        let ui = &u[i * d..(i + 1) * d];
        // avg = Σ_j P_ij (u_j − u_i)   (so that Σ_j P_ij u_j = u_i + avg).
        for a in avg.iter_mut() {
            *a = Interval::zero(prec);
        }
        for j in 0..n {
            if j == i {
                continue;
            }
            let pij = &p[i * n + j];
            for c in 0..d {
                let diff = &u[j * d + c] - &ui[c];
                avg[c].add_assign(&(pij * &diff));
            }
        }
        if layer {
            // Σ_j P_ij x_j = x_i + avg.
            for c in 0..d {
                avg[c].add_assign(&ui[c]);
            }
        }
        mat_vec_into(a, &avg, d, &mut upd);
        for c in 0..d {
            out.push(&ui[c] + &upd[c]);
        }
    }
    out
}

/// max over a non-empty list of intervals (enclosure of the maximum).
pub fn max_all<'a>(it: impl IntoIterator<Item = &'a Interval>) -> Interval {
    let mut it = it.into_iter();
    let first = it.next().expect("max_all of an empty list").clone();
    it.fold(first, |m, x| m.max(x))
}

/// Enclosures of the squared Euclidean norms ‖u_i‖² of the rows of an n × d state.
pub fn sq_norms(u: &[Interval], n: usize, d: usize) -> Vec<Interval> {
    (0..n)
        .map(|i| {
            let row = &u[i * d..(i + 1) * d];
            let mut s = row[0].powi(2);
            for x in &row[1..] {
                s.add_assign(&x.powi(2));
            }
            s
        })
        .collect()
}

/// The layer map (D) for d = 1 and Q = K = V = 1 (logits y_i y_j), step h, run from
/// exact mirror-symmetric tokens, with the symmetry of the exact iterates used to keep
/// the enclosures narrow. Rows of P are tightened as in [`attention_stochastic`].
///
/// Proof sketch. Let σ(y)_i = −y_{n−1−i} and F(y)_i = y_i + h Σ_j P_ij(y) y_j with
/// P_ij(y) = e^{y_i y_j} / Σ_l e^{y_i y_l}. The logits of σ(y) are
/// σ(y)_i σ(y)_j = y_{n−1−i} y_{n−1−j}, so P(σ(y))_ij = P(y)_{n−1−i, n−1−j} and
/// F(σ(y))_i = −y_{n−1−i} + h Σ_j P(y)_{n−1−i, n−1−j}·(−y_{n−1−j}) = −F(y)_{n−1−i}
/// = σ(F(y))_i: F commutes with σ. [`MirrorRun::start`] checks y^0 = σ(y^0) exactly
/// (and n odd), so by induction y^k = σ(y^k) for every k: y_i^k = −y_{n−1−i}^k, and the
/// middle token y_c^k (c = (n − 1)/2) equals −y_c^k = 0. Each [`MirrorRun::step`]
/// therefore intersects the enclosure of y_i^{k+1} with the negated enclosure of
/// y_{n−1−i}^{k+1} (both contain the exact value; the negated enclosures are taken
/// before any intersection) and sets y_c to [0, 0]. Without this the width of y_c grows
/// like y_n² per step (the products P_cj·y_j do not cancel in intervals). The states
/// are opaque: only the run makes them, so the symmetry the step relies on is that of
/// the exact data the run was started from.
#[derive(Clone, Debug)]
pub struct MirrorRun {
    /// [1] = (QᵀK)ᵀ.
    qk_t: Vec<Interval>,
    /// [h] = Δt V.
    step: Vec<Interval>,
    n: usize,
    prec: u32,
}

/// A state of a [`MirrorRun`]: enclosures of the iterate y^k and of P(y^k).
#[derive(Clone, Debug)]
pub struct MirrorState {
    k: usize,
    y: Vec<Interval>,
    p: Vec<Interval>,
}

impl MirrorState {
    /// The step index k.
    pub fn k(&self) -> usize {
        self.k
    }
    /// Enclosures of y^k (n values).
    pub fn y(&self) -> &[Interval] {
        &self.y
    }
    /// Enclosures of P(y^k) (n × n, row-major).
    pub fn p(&self) -> &[Interval] {
        &self.p
    }
}

/// Why a [`MirrorRun`] cannot start.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MirrorError {
    /// The symmetry argument needs an odd number n ≥ 3 of tokens.
    #[error("a mirror run needs an odd number of tokens, at least 3 (got {0})")]
    Count(usize),
    /// y_i ≠ −y_{n−1−i}.
    #[error("the tokens are not mirror-symmetric: y[{0}] ≠ −y[{1}]")]
    NotSymmetric(usize, usize),
}

impl MirrorRun {
    /// Starts the run from exact tokens `y0` (checked: n odd, n ≥ 3, y0 = σ(y0)) with
    /// step h, at `prec` bits; returns the run and the state at k = 0.
    pub fn start(
        y0: &[Rational],
        h: &Rational,
        prec: u32,
    ) -> Result<(MirrorRun, MirrorState), MirrorError> {
        let n = y0.len();
        if n < 3 || n.is_multiple_of(2) {
            return Err(MirrorError::Count(n));
        }
        if let Some(i) = (0..n).find(|&i| y0[i] != Rational::from(-&y0[n - 1 - i])) {
            return Err(MirrorError::NotSymmetric(i, n - 1 - i));
        }
        let run = MirrorRun {
            qk_t: vec![Interval::from_rational(prec, &Rational::from(1))],
            step: vec![Interval::from_rational(prec, h)],
            n,
            prec,
        };
        let y: Vec<Interval> = y0
            .iter()
            .map(|q| Interval::from_rational(prec, q))
            .collect();
        let p = attention_stochastic(&run.qk_t, &y, n, 1, prec);
        Ok((run, MirrorState { k: 0, y, p }))
    }

    /// One step: the residual step of the layer map on `s`, whose direct result is
    /// returned first (for readings: it is an enclosure of y^{k+1} before the
    /// symmetry is used), then the state at k + 1 (intersected with its mirror image,
    /// the middle token set to 0, P recomputed and tightened).
    pub fn step(&self, s: &MirrorState) -> (Vec<Interval>, MirrorState) {
        let (n, prec) = (self.n, self.prec);
        let raw = residual_step(&self.step, &s.y, &s.p, (n, 1), prec, true);
        let mut y = raw.clone();
        for (i, yi) in y.iter_mut().enumerate() {
            if let Some(t) = yi.intersect(&-&raw[n - 1 - i]) {
                *yi = t;
            }
        }
        y[n / 2] = Interval::zero(prec);
        let p = attention_stochastic(&self.qk_t, &y, n, 1, prec);
        (raw, MirrorState { k: s.k + 1, y, p })
    }
}
