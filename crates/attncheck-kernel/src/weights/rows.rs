//! Bounds 5 and 6 of the `attn-weights` datum (TRUSTED: part of the certificate evaluator):
//! a query's content-logit row range in every layer, for any input of the layer, from exact
//! sums of the weights (the datum and bounds 1–3: `weights.rs`). Computed on first use and cached
//! in the datum; their cost ([`AttnWeights::row_words`]) is charged before anything runs.
//!
//! **Bounds, with their proofs.**
//!
//! 5. *A query's row, every layer* (tighter than bound 3, for any input of the layer). With
//!    z = (x − μ)/√(σ² + ε_LN), LN(x) = γ ⊙ z + β, so q = z·G_Q + c_q and k = z·G_K + c_k with
//!    G = diag(γ)·W^h and c_q = β·W_Q^h + b_Q^h (exact). z sums to 0 and ‖z‖² ≤ d (bound 1),
//!    so in a query's row s_ij − s_ij′ = (z_i G_Q + c_q)·((z_j − z_j′)G_K)/√d_h where
//!    z_j − z_j′ = P(z_j − z_j′) (P = I − 𝟙𝟙ᵀ/d, the projection onto sums 0) has norm
//!    ≤ 2√d, and z_i = z_i P. By Cauchy–Schwarz the row's range is at most
//!    **Δ̃_ℓh := 2√d·(√d·‖P G_Q G_Kᵀ P‖₂ + ‖P G_K c_qᵀ‖₂)/√d_h** (the key's c_k cancels). The
//!    spectral norm: ‖P G_Q G_Kᵀ P‖₂² = λ_max(S) for S = (PG_Q)ᵀ(PG_Q)·(PG_K)ᵀ(PG_K), a
//!    d_h × d_h product of two positive semi-definite matrices, whose eigenvalues are those
//!    of a PSD matrix (similar to A^{1/2}BA^{1/2}), so λ_max^16 ≤ tr(S^16) ≤ d_h·λ_max^16
//!    and ‖P G_Q G_Kᵀ P‖₂ ≤ tr(S^16)^{1/32} (over-estimating by at most d_h^{1/32}, 1.07
//!    at d_h = 8); S^16 by four exact squarings of an integer matrix, the 32nd root by five
//!    square roots of an enclosure; ‖P G_K c_qᵀ‖₂² = c_q(PG_K)ᵀ(PG_K)c_qᵀ exactly.
//!
//! 6. *A query's row, without the triangle inequality* (every layer, any input of it).
//!    Bound 5 adds √d‖PG_QG_KᵀP‖ and ‖PG_Kc_qᵀ‖ as if the worst query direction and the
//!    bias c_q were aligned; this bound takes the two together. For a query z_i, with
//!    q = z_iG_Q + c_q and any keys, q·(k_j − k_j′) = (z_j − z_j′)·(PG_Kqᵀ) ≤ 2√d·√(qKqᵀ)
//!    with K = (PG_K)ᵀ(PG_K) (z_j − z_j′ sums to 0 and has norm ≤ 2√d, bound 1). Since z_i
//!    sums to 0, q = c_q + z_iA with A = PG_Q, ‖z_i‖² ≤ d; with Q = AᵀA and v = z_iAQ⁺
//!    (Q⁺ the pseudo-inverse), vQ = z_iAQ⁺AᵀA = z_iA (AQ⁺AᵀA = A) and
//!    vQvᵀ = z_i(AQ⁺Aᵀ)z_iᵀ ≤ ‖z_i‖² ≤ d (AQ⁺Aᵀ is an orthogonal projection). So the row's
//!    range is at most **2√d·√T/√d_h**, T = sup{(c_q + vQ)K(c_q + vQ)ᵀ : vQvᵀ ≤ d}, and
//!    [`crate::ellipsoid`] bounds T by a Lagrangian dual U(λ) whose multiplier λ an f64
//!    search proposes and exact integer arithmetic admits or rejects (λQ − QKQ positive
//!    definite, checked by its leading minors). With the best λ this is the exact maximum of
//!    the row range over all queries and keys whose normalised inputs lie in the ball
//!    ‖z‖ ≤ √d (the S-lemma), so no bound that assumes only bound 1 about a layer's input can
//!    be smaller. Q and K are bound 5's Grams (GA = d·2^596·Q, GB = d·2^596·K). With one
//!    head (d_h = d) A has rank ≤ d − 1, Q is singular, λQ − QKQ never positive definite:
//!    no λ is admitted and bound 6 is absent (bounds 3 and 5 stand).
//!

use super::{lg, limbs, AttnWeights, OP_WORDS};
use rug::ops::Pow;
use rug::{Integer, Rational};

/// Bound 5's exact quantities of one head: tr(S^16) and ‖P G_K c_qᵀ‖₂²; bound 6's checked
/// U(λ) ≥ T (`None` when no multiplier was admitted).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct RowSums {
    pub(super) trace: Rational,
    pub(super) cq2: Rational,
    pub(super) ball: Option<Rational>,
}

/// Bound 5's exact quantities for head h of one layer, tr(S^16) and c_q(PG_K)ᵀ(PG_K)c_qᵀ,
/// and bound 6's checked U(λ). `g`, `be`, `wq`, `bq`, `wk` scaled by 2^149.
#[allow(clippy::too_many_arguments)]
fn row_sums(
    d: usize,
    dh: usize,
    h: usize,
    g: &[Integer],
    be: &[Integer],
    wq: &[Integer],
    bq: &[Integer],
    wk: &[Integer],
) -> RowSums {
    // G = diag(γ)W^h at scale 2^298; dP·G = d·G − 𝟙(𝟙ᵀG); the Gram d·(PG)ᵀ(PG) = Gᵀ(dP)G
    // (P symmetric, idempotent) at scale d·2^596
    let gram = |w: &[Integer]| -> Vec<Vec<Integer>> {
        let gm: Vec<Vec<Integer>> = (0..d)
            .map(|c| {
                (0..dh)
                    .map(|k| Integer::from(&g[c] * &w[c * d + h * dh + k]))
                    .collect()
            })
            .collect();
        let col: Vec<Integer> = (0..dh).map(|k| gm.iter().map(|r| &r[k]).sum()).collect();
        let dpg: Vec<Vec<Integer>> = gm
            .iter()
            .map(|r| {
                r.iter()
                    .zip(&col)
                    .map(|(x, s)| Integer::from(x * d) - s)
                    .collect()
            })
            .collect();
        (0..dh)
            .map(|i| {
                (0..dh)
                    .map(|j| {
                        let mut acc = Integer::new();
                        for c in 0..d {
                            acc += Integer::from(&gm[c][i] * &dpg[c][j]);
                        }
                        acc
                    })
                    .collect()
            })
            .collect()
    };
    // the exact square product (dh × dh operands)
    let mul = crate::ellipsoid::mul;
    let (ga, gb) = (gram(wq), gram(wk));
    // S = X/(d²·2^1192), X = (d·GA)(d·GB); S^16 = X^16/(d²·2^1192)^16
    let mut x = mul(&ga, &gb);
    for _ in 0..4 {
        x = mul(&x, &x);
    }
    let tr: Integer = (0..dh).map(|i| &x[i][i]).sum();
    let den = (Integer::from(d * d) << 1192u32).pow(16);
    let trace = Rational::from((tr, den));
    // c_q at scale 2^298: β·W_Q^h (2^298) + b_Q^h (2^149, raised)
    let cq: Vec<Integer> = (0..dh)
        .map(|k| {
            let mut acc = Integer::from(&bq[h * dh + k] << 149u32);
            for c in 0..d {
                acc += Integer::from(&be[c] * &wq[c * d + h * dh + k]);
            }
            acc
        })
        .collect();
    // c_q(d·GB)c_qᵀ at scale 2^596·d·2^596
    let mut c2 = Integer::new();
    for i in 0..dh {
        for j in 0..dh {
            c2 += Integer::from(&cq[i] * &gb[i][j]) * &cq[j];
        }
    }
    let cq2 = Rational::from((c2, Integer::from(d) << 1192u32));
    // bound 6: Q = GA/(d·2^596), K = GB/(d·2^596), c_q = cq/2^298, r² = d
    let (s, t, r2) = (
        Integer::from(d) << 596u32,
        Integer::from(1) << 298u32,
        Integer::from(d),
    );
    let ball = crate::ellipsoid::bound(&crate::ellipsoid::Problem {
        a: &ga,
        b: &gb,
        c: &cq,
        s: &s,
        t: &t,
        r2: &r2,
    })
    .filter(|u| *u >= 0);
    RowSums { trace, cq2, ball }
}

impl AttnWeights {
    /// Bound 5's exact quantities of every head of every layer, computed on first use.
    pub(super) fn rows(&self) -> &[Vec<RowSums>] {
        self.derived.rows.get_or_init(|| {
            let (d, heads) = (self.hidden, self.heads);
            let ints = self.ints();
            ints[..6 * self.layers()]
                .chunks_exact(6)
                .map(|t| {
                    let [g, be, wq, bq, wk, _] = t else {
                        unreachable!("chunks of 6")
                    };
                    (0..heads)
                        .map(|h| row_sums(d, d / heads, h, g, be, wq, bq, wk))
                        .collect()
                })
                .collect()
        })
    }

    /// An upper bound, in 64-bit words, of what computing bound 5 (every head of every
    /// layer, `row_sums`) handles: schoolbook products of the integers' limbs, whose
    /// sizes follow from the values' widths (a product's bits are at most the sum of
    /// its factors', a sum of n terms adds ⌈log₂ n⌉), plus `OP_WORDS` per operation.
    pub fn row_words(&self) -> u128 {
        let (d, dh) = (self.hidden, self.hidden / self.heads);
        let (du, dhu) = (d as u128, dh as u128);
        let (ld, lh) = (lg(d), lg(dh));
        let mut total = 0u128;
        for l in 0..self.layers() {
            let w = |k: usize| self.widths[6 * l + k];
            let (g, be, wq, bq, wk) = (w(0).hi, w(1).hi, w(2).hi, w(3).hi, w(4).hi);
            let wmax = wq.max(wk);
            // G = diag(γ)W^h; d·PG; the Gram Gᵀ(dP)G
            let gw = g + wmax;
            let p = gw + 2 * ld + 1;
            let b0 = gw + p + ld;
            let mut words = 2 * du * dhu * (limbs(g) * limbs(wmax) + 2 * limbs(p) + 3 * OP_WORDS)
                + 2 * dhu * dhu * du * (limbs(gw) * limbs(p) + limbs(b0) + 2 * OP_WORDS);
            // X = (dGA)(dGB), then four squarings: d_h³ products each, the bits doubling
            let mut b = b0;
            for _ in 0..5 {
                words += dhu * dhu * dhu * (limbs(b) * limbs(b) + limbs(2 * b + lh) + 2 * OP_WORDS);
                b = 2 * b + lh;
            }
            // the trace over (d²·2^1192)^16, reduced (a quadratic gcd)
            let den = 16 * (1192 + 2 * ld);
            words += limbs(den) * limbs(den) + limbs(b + lh).max(limbs(den)).pow(2) + OP_WORDS;
            // c_q, then c_q(dGB)c_qᵀ over d·2^1192, reduced
            let c = (be + wq + ld).max(bq + 149) + 1;
            let c2 = 2 * c + b0 + 2 * lh;
            words += dhu * du * (limbs(be) * limbs(wq) + limbs(c) + 2 * OP_WORDS)
                + dhu
                    * dhu
                    * (limbs(c) * limbs(b0) + limbs(c + b0) * limbs(c) + limbs(c2) + 3 * OP_WORDS)
                + limbs(c2).max(limbs(1192 + ld)).pow(2);
            words += Self::ellipsoid_words(dhu, b0, c, ld, lh);
            total = total.saturating_add(words.saturating_mul(self.heads as u128));
        }
        total
    }

    /// Bound 6's words for one head (crate::ellipsoid, n = d_h, Grams of `b0` bits, c_q of
    /// `c` bits at scale 2^298, s = d·2^596): the f64 proposal (the 2n² entries reduced to
    /// f64, then at most 400 Cholesky factorisations of n³ operations), then up to two
    /// exact checks (the multipliers `bound` tries), each BA and ABA (n³ products), M⁺'s
    /// entries of at most `eb` bits (λ's numerator and denominator ≤ 261 bits), and the
    /// Bareiss updates: step k (0 ≤ k < n) updates (n − k)² entries, each two products of
    /// (k + 1)-order minors of M⁺, at most (k + 1)·(eb + log₂(n + 1)) bits by Hadamard's
    /// inequality, and one exact division by a k-order minor.
    fn ellipsoid_words(n: u128, b0: u128, c: u128, ld: u128, lh: u128) -> u128 {
        let s = 597 + ld;
        let propose = 2 * n * n * (limbs(b0 + s).pow(2) + OP_WORDS) + 400 * n * n * n;
        let products =
            n * n * n * (limbs(b0).pow(2) + limbs(2 * b0 + lh) * limbs(b0) + 4 * OP_WORDS);
        let eb = (261 + 2 * s + b0)
            .max(261 + 3 * b0 + 2 * lh)
            .max(c + 2 * b0 + 2 * lh)
            + 2;
        let per = eb + lg(n as usize + 1);
        let bareiss: u128 = (0..n)
            .map(|k| {
                let bk = (k + 1) * per + 1;
                (n - k).pow(2) * (2 * limbs(bk).pow(2) + limbs(2 * bk) * limbs(bk) + 3 * OP_WORDS)
            })
            .sum();
        let tail = n * n * (limbs(c) * limbs(b0) + limbs(c + b0) * limbs(c) + 2 * OP_WORDS)
            + 4 * limbs((n + 1) * per + 2 * c + s + 261).pow(2);
        propose + 2 * (products + bareiss + tail)
    }

    /// The words of bound 5's exact quantities of one head (at most), which each
    /// evaluation of `attn-row-logit-range` rounds to the working precision: linear in
    /// their size.
    pub fn row_eval_words(&self) -> u128 {
        let (d, dh) = (self.hidden, self.hidden / self.heads);
        let (ld, lh) = (lg(d), lg(dh));
        (0..self.layers())
            .map(|l| {
                let w = |k: usize| self.widths[6 * l + k].hi;
                let gw = w(0) + w(2).max(w(4));
                let b0 = 2 * gw + 4 * ld + 1;
                let b5 = (b0 + lh) * 32;
                let c = (w(1) + w(2) + ld).max(w(3) + 149) + 1;
                // bound 6's U(λ): numerator and denominator of at most the Bareiss bits
                // (ellipsoid_words) plus the scales t²·s and λ's 261
                let n = (dh as u128) + 1;
                let eb = (261 + 2 * (597 + ld) + b0)
                    .max(261 + 3 * b0 + 2 * lh)
                    .max(c + 2 * b0 + 2 * lh)
                    + 2;
                let kb = n * (eb + lg(dh + 1)) + 1;
                limbs(b5)
                    + limbs(16 * (1192 + 2 * ld))
                    + limbs(2 * c + b0 + 2 * lh)
                    + limbs(1192 + ld)
                    + 2 * limbs(kb + 2 * c + 597 + ld + 261)
            })
            .max()
            .unwrap_or(0)
    }
}
