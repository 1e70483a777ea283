//! Bound 4 of the `attn-weights` datum (TRUSTED: part of the certificate evaluator): layer 0's
//! exact content-logit range over every query/key byte pair, from the exact weights and
//! embedding (the datum and bounds 1–3: `weights.rs`). Computed on first use and cached in the
//! datum; its cost ([`AttnWeights::pair_words`]) is charged before anything runs.
//!
//! **The bound, with its proof.**
//!
//! 4. *Layer 0, exactly* (when the datum carries the token embedding E, 256 × d, and the
//!    layer norms' ε_LN, both exact f32 values). In a model whose layer-0 input at a
//!    position holding byte a is E\[a\] (no position vector added at the input, as ALiBi's),
//!    the content logit of a query holding byte a and a key holding byte b is
//!    s(a, b) = q(a)·k(b)/√d_h with q(a) = LN(E\[a\])·W_Q^h + b_Q^h, k(b) likewise. Write
//!    n_a = d·(E\[a\] − μ_a) (exact), ρ_a = 1/√(Σ_i n_a,i²/d + d²ε_LN) (the only irrational
//!    number: LN(E\[a\]) = γ ⊙ n_a·ρ_a + β), u_a = (γ ⊙ n_a)·W_Q^h, v_b = (γ ⊙ n_b)·W_K^h,
//!    c_q = β·W_Q^h + b_Q^h and c_k = β·W_K^h + b_K^h (all exact). Then
//!    √d_h·s(a, b) = ρ_aρ_b(u_a·v_b) + ρ_a(u_a·c_k) + ρ_b(c_q·v_b) + c_q·c_k, and for a
//!    fixed query byte a the terms ρ_a(u_a·c_k) and c_q·c_k do not depend on b, so
//!    s(a, b) − s(a, b′) = (f_a(b) − f_a(b′))/√d_h with f_a(b) = ρ_b·(ρ_a(u_a·v_b) + c_q·v_b).
//!    A query's row holds its own byte and the bytes of the keys it sees, and every set of
//!    key bytes occurs in some input (the sequence b, b′, a), so the largest content-logit
//!    range of a row over all inputs is **Δ⁰_h = max_a (max_b f_a(b) − min_b f_a(b))/√d_h**,
//!    attained by a byte triple (a, b, b′). The kernel computes every u_a·v_b and c_q·v_b
//!    exactly (integers scaled by 2^596), encloses each ρ_a between integer square roots
//!    at a common scale 2^T (T ≥ 128 bits beyond the largest ρ's magnitude), so every
//!    f_a(b) lies in an integer interval at scale 2^(2T+596); the maximum over a of
//!    (max_b upper − min_b lower) bounds Δ⁰_h from above and the maximum of
//!    (max_b lower − min_b upper) from below, both exact integers. The bytes attaining the
//!    upper bound are kept ([`AttnWeights::byte_logit_witness`]): a test evaluates their
//!    logits. Cost: 256²·d products of integers of about 900 bits, once, when the datum is
//!    read (d ≤ [`MAX_HIDDEN`]).
//!

use super::{lg, limbs, sum_sq, AttnWeights, OP_WORDS, VOCAB};
use rug::{Assign, Integer};

/// The exact bounds of bound 4 for one head of layer 0: Δ⁰_h·√d_h·2^scale lies in
/// [lo, hi], and the bytes (a, b, b′) attain the upper end's f_a(b) − f_a(b′).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct PairRange {
    pub(super) lo: Integer,
    pub(super) hi: Integer,
    pub(super) scale: u32,
    pub(super) witness: (u8, u8, u8),
}

/// The scale 2^t of the enclosures of σ_a = √(d/M_a): t = ⌊b/2⌋ + 130 for the largest
/// M_a of b bits, which leaves at least 128 bits in the smallest σ_a·2^t (M_a < 2^b, so
/// σ_a·2^t > √d·2^(t − b/2) ≥ 2^129). [`AttnWeights::pair_words`] charges the same t
/// from its bound on b (test `sigma_scale_and_sqrt_quotient_are_exact`).
pub(super) fn sigma_scale(m: &[Integer]) -> u32 {
    m.iter().map(|x| x.significant_bits()).max().unwrap_or(1) / 2 + 130
}

/// `(⌊√⌊n/m⌋⌋, ⌈√⌈n/m⌉⌉)` for n ≥ 0 and m > 0: integers around √(n/m) (the floor and
/// ceiling are monotone, so ⌊√⌊x⌋⌋ ≤ √x ≤ ⌈√⌈x⌉⌉), each the tightest such integer.
pub(super) fn sqrt_quotient(n: &Integer, m: &Integer) -> (Integer, Integer) {
    let (q, r) = Integer::from(n).div_rem_floor(m.clone());
    let lo = q.clone().sqrt();
    let up = if r == 0 { q } else { q + 1u32 };
    let (s, rem) = up.sqrt_rem(Integer::new());
    let hi = if rem == 0 { s } else { s + 1u32 };
    (lo, hi)
}

/// Bound 4: per head of layer 0, the exact integer enclosure of the byte-pair range.
/// `e` is E (256 × d), `g`, `b` γ and β, `wq`, `bq`, `wk` the projections (all scaled by
/// 2^149), `eps` ε_LN scaled by 2^149 (b_K cancels within a query's row).
#[allow(clippy::too_many_arguments)]
fn pair_ranges(
    d: usize,
    heads: usize,
    e: &[Integer],
    eps: &Integer,
    g: &[Integer],
    b: &[Integer],
    wq: &[Integer],
    bq: &[Integer],
    wk: &[Integer],
) -> Vec<PairRange> {
    let dh = d / heads;
    // n_a = d·E[a] − Σ E[a] (scale 2^149); M_a = Σ n² + d³·ε·2^149 (scale 2^298), so that
    // ρ_a = 2^149·√(d/M_a)
    let di = Integer::from(d);
    let d3eps = (Integer::from(d * d * d) * eps) << 149u32;
    let mut n = Vec::with_capacity(VOCAB);
    let mut m = Vec::with_capacity(VOCAB);
    for a in 0..VOCAB {
        let row = &e[a * d..(a + 1) * d];
        let sum: Integer = row.iter().sum();
        let na: Vec<Integer> = row.iter().map(|x| Integer::from(x * &di) - &sum).collect();
        m.push(sum_sq(&na) + &d3eps);
        n.push(na);
    }
    // σ_a = √(d/M_a) (ρ_a = 2^149·σ_a), enclosed as integers at scale 2^t: ⌊√⌊d·2^2t/M⌋⌋ ≤
    // σ·2^t ≤ ⌈√⌈d·2^2t/M⌉⌉, t leaving ≥ 128 bits in the smallest σ
    let t = sigma_scale(&m);
    let num = Integer::from(&di << (2 * t));
    let sig: Vec<(Integer, Integer)> = m.iter().map(|ma| sqrt_quotient(&num, ma)).collect();
    // u_a = (γ ⊙ n_a)·W_Q^h (scale 2^447), v_b likewise; c = β·W^h + b^h (scale 2^298)
    let proj = |w: &[Integer], h: usize, v: &[Integer]| -> Vec<Integer> {
        (0..dh)
            .map(|k| {
                let mut acc = Integer::new();
                for i in 0..d {
                    acc += Integer::from(&v[i] * &w[i * d + h * dh + k]);
                }
                acc
            })
            .collect()
    };
    let gn: Vec<Vec<Integer>> = n
        .iter()
        .map(|na| {
            na.iter()
                .zip(g)
                .map(|(x, y)| Integer::from(x * y))
                .collect()
        })
        .collect();
    // the common factor 2^z of the entries of a set of exact values, dropped (exact: the
    // z low bits of every entry are 0), so that the products below have as few limbs as the
    // weights' mantissas need
    fn strip(x: &mut [Vec<Integer>]) -> u32 {
        let z = x
            .iter()
            .flatten()
            .filter_map(|v| v.find_one(0))
            .min()
            .unwrap_or(0);
        for v in x.iter_mut().flatten() {
            *v >>= z;
        }
        z
    }
    let mut out = Vec::with_capacity(heads);
    for h in 0..heads {
        // u_a at scale 2^(447 − zu), v_b at 2^(447 − zv)
        let mut u: Vec<Vec<Integer>> = gn.iter().map(|x| proj(wq, h, x)).collect();
        let mut v: Vec<Vec<Integer>> = gn.iter().map(|x| proj(wk, h, x)).collect();
        let zu = strip(&mut u);
        let zv = strip(&mut v);
        let cq: Vec<Integer> = proj(wq, h, b)
            .into_iter()
            .zip(&bq[h * dh..(h + 1) * dh])
            .map(|(x, y)| x + (Integer::from(y) << 149u32))
            .collect();
        // u_a·v_b at scale 2^s1 (s1 = 894 − z_u − z_v), c_q·v_b at 2^s2 (s2 = 745 − z_v); t_ab = ρ_a(u_a·v_b) + c_q·v_b with
        // ρ_a = 2^149·σ̂_a/2^t is T_ab/2^(t+s), s = max(s1 − 149, s2), where
        // T_ab = σ̂_a·2^(s − s1 + 149)·(u_a·v_b) + 2^(t + s − s2)·(c_q·v_b); and
        // f_a(b) = ρ_b·t_ab = σ̂_b·T_ab/2^(2t + s − 149) (each σ̂ by its lower or upper end,
        // by the sign of what it multiplies).
        // s1 − 149 = s2 − z_u ≤ s2 (z_u ≥ 0), so s = s2 = 745 − z_v, the shifts are
        // s − s1 + 149 = z_u and t + s − s2 = t, and the scale is 2t + 596 − z_v ≥ 0: z_v = 0
        // when every v_b is 0, and otherwise z_v ≤ log₂ max|v| < log₂ d + 2·277 + (t − 129)
        // (v = Σ_d (γ·n)·W_K; γ and W_K are f32 at scale 2^149, below 2^277; n² ≤ M and
        // M < 2^(2(t − 130) + 2) by `sigma_scale`), which is below 2t + 596 since t ≥ 130 and
        // log₂ d ≤ 10 (d ≤ `MAX_HIDDEN`).
        let (sa, sc) = (zu, t);
        let scale =
            u32::try_from(2 * i64::from(t) + 596 - i64::from(zv)).expect("z_v < 2t + 596 (above)");
        let cv: Vec<Integer> = v
            .iter()
            .map(|vb| {
                let mut acc = Integer::new();
                for (x, y) in cq.iter().zip(vb) {
                    acc += Integer::from(x * y);
                }
                acc << sc
            })
            .collect();
        let sig_a: Vec<(Integer, Integer)> = sig
            .iter()
            .map(|(lo, hi)| (Integer::from(lo << sa), Integer::from(hi << sa)))
            .collect();
        let (mut best_hi, mut best_lo) = (None::<Integer>, None::<Integer>);
        let mut witness = (0u8, 0u8, 0u8);
        let (mut uv, mut tmp) = (Integer::new(), Integer::new());
        let (mut t_lo, mut t_hi) = (Integer::new(), Integer::new());
        let (mut f_lo, mut f_hi) = (Integer::new(), Integer::new());
        let (mut max_hi, mut min_lo, mut max_lo, mut min_hi) = (
            Integer::new(),
            Integer::new(),
            Integer::new(),
            Integer::new(),
        );
        for a in 0..VOCAB {
            let (sl_a, sh_a) = (&sig_a[a].0, &sig_a[a].1);
            let (mut arg_max, mut arg_min) = (0u8, 0u8);
            for bb in 0..VOCAB {
                uv.assign(0);
                for (x, y) in u[a].iter().zip(&v[bb]) {
                    tmp.assign(x * y);
                    uv += &tmp;
                }
                let (lo_a, hi_a) = if uv >= 0 { (sl_a, sh_a) } else { (sh_a, sl_a) };
                t_lo.assign(lo_a * &uv);
                t_lo += &cv[bb];
                t_hi.assign(hi_a * &uv);
                t_hi += &cv[bb];
                let (sl_b, sh_b) = &sig[bb];
                f_lo.assign(if t_lo >= 0 { sl_b } else { sh_b } * &t_lo);
                f_hi.assign(if t_hi >= 0 { sh_b } else { sl_b } * &t_hi);
                if bb == 0 {
                    max_hi.assign(&f_hi);
                    min_hi.assign(&f_hi);
                    max_lo.assign(&f_lo);
                    min_lo.assign(&f_lo);
                    continue;
                }
                if f_hi > max_hi {
                    max_hi.assign(&f_hi);
                    arg_max = bb as u8;
                }
                if f_hi < min_hi {
                    min_hi.assign(&f_hi);
                }
                if f_lo > max_lo {
                    max_lo.assign(&f_lo);
                }
                if f_lo < min_lo {
                    min_lo.assign(&f_lo);
                    arg_min = bb as u8;
                }
            }
            let hi = Integer::from(&max_hi - &min_lo);
            let lo = Integer::from(&max_lo - &min_hi);
            if best_hi.as_ref().is_none_or(|x| hi > *x) {
                best_hi = Some(hi);
                witness = (a as u8, arg_max, arg_min);
            }
            if best_lo.as_ref().is_none_or(|x| lo > *x) {
                best_lo = Some(lo);
            }
        }
        out.push(PairRange {
            lo: best_lo.unwrap_or_default(),
            hi: best_hi.unwrap_or_default(),
            scale,
            witness,
        });
    }
    out
}

impl AttnWeights {
    /// Bound 4's enclosures of every head, computed on first use; `None` without the
    /// embedding.
    pub(super) fn pairs(&self) -> Option<&[PairRange]> {
        self.input.as_ref()?;
        Some(self.derived.pairs.get_or_init(|| {
            let ints = self.ints();
            let [g, be, wq, bq, wk, _] = &ints[0..6] else {
                unreachable!("layer 0 has six tensors")
            };
            let n = ints.len();
            pair_ranges(
                self.hidden,
                self.heads,
                &ints[n - 1],
                &ints[n - 2][0],
                g,
                be,
                wq,
                bq,
                wk,
            )
        }))
    }

    /// An upper bound, in 64-bit words, of what computing bound 4 (`pair_ranges`)
    /// handles, as for [`AttnWeights::row_words`] (0 without the embedding): per head
    /// the projections of the 256 bytes, then per byte pair d_h products of the
    /// projections with their common powers of 2 dropped (at most the bits between
    /// the highest and the fewest trailing zeros the widths allow) and a few products
    /// with the square roots' enclosures.
    pub fn pair_words(&self) -> u128 {
        if self.input.is_none() {
            return 0;
        }
        let (d, dh, heads) = (self.hidden, self.hidden / self.heads, self.heads as u128);
        let (du, dhu, v) = (d as u128, dh as u128, VOCAB as u128);
        let (ld, lh) = (lg(d), lg(dh));
        let n = self.widths.len();
        let (eps, e) = (self.widths[n - 2], self.widths[n - 1]);
        let w = |k: usize| self.widths[k];
        let (g, be, wq, bq, wk) = (w(0), w(1).hi, w(2), w(3).hi, w(4));
        // n_a = d·E[a] − ΣE[a]; M_a = Σ n² + (d³·ε) << 149; t as in pair_ranges
        let nh = e.hi + ld + 1;
        let m = (2 * nh + ld).max(eps.hi + 3 * ld + 149) + 1;
        let t = m / 2 + 130;
        let words = v * du * (limbs(nh) * limbs(nh) + limbs(nh) * limbs(g.hi) + 3 * OP_WORDS)
            + v * (limbs(2 * t + ld) * limbs(m) + 2 * limbs(2 * t + ld).pow(2) + 4 * OP_WORDS);
        // per head: u_a, v_b unstripped, then stripped of at least lo bits
        let gn = nh + g.hi;
        let (uh, vh) = (gn + wq.hi + ld, gn + wk.hi + ld);
        let (ulo, vlo) = (e.lo + g.lo + wq.lo, e.lo + g.lo + wk.lo);
        let (su, sv) = (uh.saturating_sub(ulo), vh.saturating_sub(vlo));
        let c = (be + wq.hi + ld).max(bq + 149) + 1;
        let uv = su + sv + lh;
        let sig_a = t + ld + uh;
        let tt = (sig_a + uv).max(c + sv + lh + t) + 1;
        let f = t + ld + tt;
        let per_head = 2 * v * du * dhu * (limbs(gn) * limbs(wq.hi.max(wk.hi)) + OP_WORDS)
            + du * dhu * (limbs(be) * limbs(wq.hi) + OP_WORDS)
            + v * dhu * (limbs(c) * limbs(sv) + limbs(c + sv + lh + t) + OP_WORDS)
            + v * (2 * limbs(sig_a) + OP_WORDS)
            + v * v
                * (dhu * (limbs(su) * limbs(sv) + limbs(uv) + 2 * OP_WORDS)
                    + 2 * limbs(sig_a) * limbs(uv)
                    + 2 * limbs(t + ld) * limbs(tt)
                    + 8 * limbs(f)
                    + 12 * OP_WORDS);
        words.saturating_add(per_head.saturating_mul(heads))
    }
}
