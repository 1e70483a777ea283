//! The `attn-weights` datum of certificates (TRUSTED: part of the certificate evaluator):
//! the weights of a trained pre-LayerNorm Transformer that enter a bound on its attention
//! logits, as exact data, and the certified bounds computed from them.
//!
//! **The model.** Per layer ℓ, the input x ∈ ℝ^d of a position goes through the LayerNorm
//! before attention, y = LN(x) = γ ⊙ (x − μ)/√(σ² + ε_LN) + β (μ the mean and σ² the
//! population variance of x's d entries, ε_LN > 0), then per head h
//! q = y·W_Q^h + b_Q^h and k = y·W_K^h + b_K^h, W^h the d × d_h column block h of the
//! projection (d_h = d/H), and the content logit is s_ij = q_i·k_j/√d_h (the position
//! bias, ALiBi's −m_h(i − j), is added to it afterwards and is not part of s).
//!
//! **Exact data.** Every value is an f32, i.e. an exact dyadic rational (m·2^e with
//! |m| < 2^24 and e ≥ −149), stored as its IEEE-754 bit pattern in 8 lower-case hex
//! digits. The datum is refused unless every tensor has its size, every pattern is finite
//! (NaN and ±∞ have no rational value) and the SHA-256 of the patterns (4 bytes
//! little-endian each, layer by layer: γ, β, W_Q, b_Q, W_K, b_K) is the stored one, so
//! that the hash a report prints names exactly the values the kernel bounds. All the
//! sums below are computed exactly, in integers scaled by 2^149 (so 2^298 for squares).
//!
//! **Bounds, with their proofs.**
//!
//! 1. *LayerNorm.* With z = (x − μ)/√(σ² + ε_LN), ‖z‖₂² = Σ_k (x_k − μ)²/(σ² + ε_LN)
//!    = dσ²/(σ² + ε_LN) ≤ d, since ε_LN > 0 only enlarges the denominator (and σ² = 0
//!    gives z = 0). Then ‖γ ⊙ z‖₂² = Σ γ_k² z_k² ≤ max_k γ_k² · ‖z‖₂² ≤ d·max_k γ_k², and
//!    by the triangle inequality ‖LN(x)‖₂ ≤ √d·max_k|γ_k| + ‖β‖₂ =: B_ℓ, **for every x ∈ ℝ^d**
//!    (every input of the layer, whatever the earlier layers did).
//! 2. *Spectral norm.* For a matrix W, ‖W‖₂ ≤ ‖W‖_F (the squared singular values sum to
//!    ‖W‖_F²), and ‖W‖₂ ≤ √(‖W‖₁‖W‖_∞) with ‖W‖₁ the largest column sum and ‖W‖_∞ the
//!    largest row sum of |W_ab|: ‖W‖₂² = ρ(WᵀW) ≤ ‖WᵀW‖_∞ ≤ ‖Wᵀ‖_∞‖W‖_∞ = ‖W‖₁‖W‖_∞ (the
//!    spectral radius is at most any induced norm, which is submultiplicative). So
//!    N(W) := min(‖W‖_F, √(‖W‖₁‖W‖_∞)) ≥ ‖W‖₂ = ‖Wᵀ‖₂, the norm of y ↦ y·W.
//! 3. *Logits.* ‖q‖₂ ≤ ‖y‖₂‖W_Q^h‖₂ + ‖b_Q^h‖₂ ≤ N(W_Q^h)·B_ℓ + ‖b_Q^h‖₂ =: Q̄, likewise
//!    ‖k‖₂ ≤ K̄, so |s_ij| ≤ Q̄K̄/√d_h (Cauchy–Schwarz) and the content-logit range over all
//!    inputs, all sequence lengths and all pairs (i, j), max s − min s, is at most
//!    **Δ̄_ℓh := 2·Q̄·K̄/√d_h**.
//!
//! 4. *Layer 0, exactly* (the exact range over every query/key byte pair): `weights/pairs.rs`,
//!    with its proof.
//! 5. and 6. *A query's row, every layer* (the triangle inequality's bound, then the exact
//!    maximum over the ball ‖z‖ ≤ √d by the S-lemma's dual): `weights/rows.rs`, with their proofs.
//!
//! The row operation returns min(Δ̄_ℓh, Δ̃_ℓh, 2√d·√U(λ)/√d_h) (the last when a λ was
//! admitted).
//!
//! Each operation returns an outward enclosure of the real number it names (B_ℓ,
//! Δ̄_ℓh, Δ⁰_h or the row bound): the exact rational sums, then √, ×, +, min and ÷ of the kernel's
//! outward-rounded intervals, all inclusion-monotone (bound 6: U(λ) is an exact rational). The theorem a formula states with
//! them is about the model computed in exact real arithmetic with these weights; the
//! model's own f32 evaluation rounds, which this datum does not bound.
//!
//! **Cost.** Bounded before anything runs: 1 ≤ layers ≤ [`MAX_LAYERS`], 1 ≤ H ≤ 64,
//! H | d, d ≤ [`MAX_HIDDEN`] and layers·d² ≤ [`MAX_VALUES`]; the sums of bounds 1–3 are
//! computed when the datum is read (linear in its size). Bounds 4 and 5 cost more than
//! linear (256²·d_h products per head; d_h³ products of growing integers per head), so they
//! are computed on first use and cached in the datum, and the cost model charges each once
//! per statement, before anything runs, from the datum's sizes and the bit widths of its
//! values ([`AttnWeights::row_words`], [`AttnWeights::pair_words`]: schoolbook products,
//! which GMP only beats). An operation then costs a few interval operations. A malformed
//! datum is an error naming the field, never a panic.

use crate::Interval;
use rug::Integer;
use rug::Rational;
use std::sync::{Arc, OnceLock};

mod pairs;
mod rows;
#[cfg(test)]
mod tests;

use pairs::PairRange;
use rows::RowSums;

/// The most layers a datum may hold.
pub const MAX_LAYERS: usize = 64;
/// The largest hidden size d.
pub const MAX_HIDDEN: usize = 1024;
/// The largest layers·d² (the projections' values; a bound on the reading cost).
pub const MAX_VALUES: usize = 1 << 22;
/// The most heads.
pub const MAX_HEADS: usize = 64;

/// The tensors of one layer, in digest order, with their file names.
pub const PARTS: [&str; 6] = ["ln_gain", "ln_shift", "w_q", "b_q", "w_k", "b_k"];

/// Exact norms of one d × d_h block (values scaled by 2^149).
#[derive(Clone, Debug, PartialEq)]
struct BlockNorms {
    /// Σ W_ab², scaled by 2^298.
    frob2: Integer,
    /// ‖W‖₁‖W‖_∞ = (max_b Σ_a |W_ab|)·(max_a Σ_b |W_ab|), scaled by 2^298: the product is
    /// formed once, when the datum is read, not at every call.
    holder2: Integer,
}

/// The exact sums of one head.
#[derive(Clone, Debug, PartialEq)]
struct HeadSums {
    q: BlockNorms,
    k: BlockNorms,
    /// ‖b_Q^h‖², ‖b_K^h‖², scaled by 2^298.
    bq2: Integer,
    bk2: Integer,
}

/// The bounds computed on first use (bounds 4 and 5), shared by the datum's clones.
#[derive(Debug, Default)]
struct Derived {
    /// Per layer, per head.
    rows: OnceLock<Vec<Vec<RowSums>>>,
    /// Per head of layer 0 (only with the embedding).
    pairs: OnceLock<Vec<PairRange>>,
}

/// The exact sums of one layer.
#[derive(Clone, Debug, PartialEq)]
struct LayerSums {
    /// max_k |γ_k|, scaled by 2^149.
    gamma_max: Integer,
    /// ‖β‖², scaled by 2^298.
    beta2: Integer,
    heads: Vec<HeadSums>,
}

/// One layer as stored: the six tensors' hex bit patterns, in [`PARTS`] order.
pub type LayerHex = [String; 6];

/// Layer 0's input, when the datum carries it: ε_LN and the embedding E (hex).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputHex {
    /// ε_LN, one f32 bit pattern (8 hex digits).
    pub ln_eps: String,
    /// E, 256 × d values, row-major.
    pub embedding: String,
}

/// The exact data of an `attn-weights` datum, the exact sums read from it, and the
/// bounds computed on first use.
#[derive(Clone, Debug)]
pub struct AttnWeights {
    hidden: usize,
    heads: usize,
    sha256: String,
    hex: Vec<LayerHex>,
    sums: Vec<LayerSums>,
    input: Option<InputHex>,
    /// The bit widths of the values, per layer in [`PARTS`] order, then ε_LN and E
    /// (the cost bounds' input).
    widths: Vec<Width>,
    derived: Arc<Derived>,
}

impl PartialEq for AttnWeights {
    /// Equal exact data (the cached bounds are functions of it).
    fn eq(&self, o: &AttnWeights) -> bool {
        (
            self.hidden,
            self.heads,
            &self.sha256,
            &self.hex,
            &self.input,
        ) == (o.hidden, o.heads, &o.sha256, &o.hex, &o.input)
    }
}

/// The bit width of a tensor's values scaled by 2^149: the most significant bits of
/// any, and the fewest trailing zero bits of a nonzero one (its common factor 2^lo).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Width {
    hi: u128,
    lo: u128,
}

impl Width {
    fn of(v: &[Integer]) -> Width {
        let hi = v.iter().map(|x| x.significant_bits()).max().unwrap_or(0);
        let lo = v.iter().filter_map(|x| x.find_one(0)).min().unwrap_or(0);
        Width {
            hi: hi.into(),
            lo: lo.into(),
        }
    }
}

/// Limbs (64-bit words) of an integer of `bits` bits.
fn limbs(bits: u128) -> u128 {
    bits / 64 + 1
}

/// Bits enough for n (⌈log₂(n + 1)⌉).
fn lg(n: usize) -> u128 {
    u128::from(usize::BITS - n.leading_zeros())
}

/// What one big-integer operation costs besides its words (allocation, dispatch), in
/// words: an upper bound of GMP's constant cost against a unit's 64 words.
const OP_WORDS: u128 = 16;

/// The largest byte value plus one: the embedding's rows.
pub const VOCAB: usize = 256;

/// An f32 as an integer scaled by 2^149: exact for every finite f32 (the smallest
/// subnormal is 2^−149). `None` for NaN and ±∞.
pub fn scaled(bits: u32) -> Option<Integer> {
    let (neg, e, f) = (bits >> 31 == 1, (bits >> 23) & 0xff, bits & 0x7f_ffff);
    if e == 0xff {
        return None;
    }
    // value = m·2^(ex), ex ≥ −149
    let (m, shift) = if e == 0 {
        (f, 0)
    } else {
        (f | 0x80_0000, e - 1)
    };
    let v = Integer::from(m) << shift;
    Some(if neg { -v } else { v })
}

fn decode(field: &str, s: &str, n: usize) -> Result<Vec<u32>, (String, String)> {
    if s.len() != 8 * n {
        return Err((
            field.into(),
            format!("has {} hex digits; {n} values need {}", s.len(), 8 * n),
        ));
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let h = &s[8 * i..8 * i + 8];
        if !h
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err((
                field.into(),
                format!("value {i}: `{h}` is not 8 lower-case hex digits"),
            ));
        }
        let b = u32::from_str_radix(h, 16)
            .map_err(|_| (field.into(), format!("value {i}: bad hex")))?;
        if (b >> 23) & 0xff == 0xff {
            return Err((
                field.into(),
                format!("value {i}: `{h}` is not a finite f32 (NaN or ±∞ has no exact value)"),
            ));
        }
        out.push(b);
    }
    Ok(out)
}

/// The SHA-256 (lower-case hex) of the bit patterns, 4 bytes little-endian each, in order.
pub fn digest(values: &[Vec<u32>]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in values {
        for b in part {
            h.update(b.to_le_bytes());
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn block_norms(w: &[Integer], d: usize, dh: usize, h: usize) -> BlockNorms {
    // w is d × d (row-major, input × output); the block is the columns h·d_h..(h+1)·d_h
    let mut frob2 = Integer::new();
    let mut cols = vec![Integer::new(); dh];
    let mut inf = Integer::new();
    for a in 0..d {
        let mut row = Integer::new();
        for (b, col) in cols.iter_mut().enumerate() {
            let x = &w[a * d + h * dh + b];
            frob2 += x * x;
            let ax = Integer::from(x.abs_ref());
            row += &ax;
            *col += ax;
        }
        if row > inf {
            inf = row;
        }
    }
    let one = cols.into_iter().max().unwrap_or_default();
    BlockNorms {
        frob2,
        holder2: one * inf,
    }
}

fn sum_sq(v: &[Integer]) -> Integer {
    v.iter().fold(Integer::new(), |acc, x| acc + x * x)
}

/// A layer or head index of an `attn-weights` operation that is not an integer in range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} {index} is not an integer in 0..{bound}")]
pub struct IndexError {
    /// "layer" or "head".
    pub what: &'static str,
    /// The index asked for.
    pub index: Rational,
    /// The number of layers or heads.
    pub bound: usize,
}

impl AttnWeights {
    /// Validates sizes, finiteness and the hash, and reads the exact sums; errors are
    /// (field, reason) with the fields of the certificate entry (`hidden`, `heads`,
    /// `sha256`, `layers`, `layers[l].w_q`, …).
    pub fn new(
        hidden: usize,
        heads: usize,
        sha256: &str,
        layers: Vec<LayerHex>,
        input: Option<InputHex>,
    ) -> Result<AttnWeights, (String, String)> {
        let err = |f: &str, r: String| Err((f.to_string(), r));
        if hidden == 0 || hidden > MAX_HIDDEN {
            return err(
                "hidden",
                format!("is {hidden}; must lie in 1..={MAX_HIDDEN}"),
            );
        }
        if heads == 0 || heads > MAX_HEADS || !hidden.is_multiple_of(heads) {
            return err(
                "heads",
                format!("is {heads}; must lie in 1..={MAX_HEADS} and divide hidden = {hidden}"),
            );
        }
        if layers.is_empty() || layers.len() > MAX_LAYERS {
            return err(
                "layers",
                format!("has {} layers; a model has 1..={MAX_LAYERS}", layers.len()),
            );
        }
        if layers.len() * hidden * hidden > MAX_VALUES {
            return err(
                "layers",
                format!("layers·hidden² exceeds the budget {MAX_VALUES}"),
            );
        }
        if sha256.len() != 64
            || !sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return err("sha256", "must be 64 lower-case hex digits".into());
        }
        let d = hidden;
        let dh = d / heads;
        let mut bits = Vec::with_capacity(6 * layers.len());
        for (l, lh) in layers.iter().enumerate() {
            for (part, s) in PARTS.iter().zip(lh) {
                let n = if part.starts_with("w_") { d * d } else { d };
                bits.push(decode(&format!("layers[{l}].{part}"), s, n)?);
            }
        }
        if let Some(inp) = &input {
            let eps = decode("ln_eps", &inp.ln_eps, 1)?;
            if eps[0] >> 31 == 1 || eps[0] == 0 {
                return err(
                    "ln_eps",
                    format!(
                        "`{}` is not a positive f32 (a layer norm's ε is > 0)",
                        inp.ln_eps
                    ),
                );
            }
            bits.push(eps);
            bits.push(decode("embedding", &inp.embedding, VOCAB * d)?);
        }
        let found = digest(&bits);
        if found != sha256 {
            return err(
                "sha256",
                format!("the values hash to {found}, not to the stored {sha256}"),
            );
        }
        let ints: Vec<Vec<Integer>> = bits
            .iter()
            .map(|p| {
                p.iter()
                    .map(|&b| scaled(b).expect("checked finite"))
                    .collect()
            })
            .collect();
        let widths = ints.iter().map(|v| Width::of(v)).collect();
        let layer_ints = &ints[..6 * layers.len()];
        let sums = layer_ints
            .chunks_exact(6)
            .map(|t| {
                let [g, be, wq, bq, wk, bk] = t else {
                    unreachable!("chunks of 6")
                };
                LayerSums {
                    gamma_max: g.iter().map(|x| x.clone().abs()).max().unwrap_or_default(),
                    beta2: sum_sq(be),
                    heads: (0..heads)
                        .map(|h| HeadSums {
                            q: block_norms(wq, d, dh, h),
                            k: block_norms(wk, d, dh, h),
                            bq2: sum_sq(&bq[h * dh..(h + 1) * dh]),
                            bk2: sum_sq(&bk[h * dh..(h + 1) * dh]),
                        })
                        .collect(),
                }
            })
            .collect();
        Ok(AttnWeights {
            hidden,
            heads,
            sha256: sha256.to_string(),
            hex: layers,
            sums,
            input,
            widths,
            derived: Arc::default(),
        })
    }

    /// The values scaled by 2^149, per layer in [`PARTS`] order, then ε_LN and E when
    /// present (decoded again from the hex that [`AttnWeights::new`] checked).
    fn ints(&self) -> Vec<Vec<Integer>> {
        let d = self.hidden;
        let mut out = Vec::new();
        let mut push = |s: &str, n: usize| {
            out.push(
                decode("", s, n)
                    .expect("checked when read")
                    .into_iter()
                    .map(|b| scaled(b).expect("checked finite"))
                    .collect(),
            );
        };
        for lh in &self.hex {
            for (part, s) in PARTS.iter().zip(lh) {
                push(s, if part.starts_with("w_") { d * d } else { d });
            }
        }
        if let Some(inp) = &self.input {
            push(&inp.ln_eps, 1);
            push(&inp.embedding, VOCAB * d);
        }
        out
    }

    /// Hidden size d.
    pub fn hidden(&self) -> usize {
        self.hidden
    }
    /// Heads H.
    pub fn heads(&self) -> usize {
        self.heads
    }
    /// Number of layers.
    pub fn layers(&self) -> usize {
        self.hex.len()
    }
    /// The stored (and checked) SHA-256.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
    /// The stored tensors, per layer in [`PARTS`] order.
    pub fn hex(&self) -> &[LayerHex] {
        &self.hex
    }
    /// Layer 0's input (ε_LN and the embedding), when the datum carries it.
    pub fn input(&self) -> Option<&InputHex> {
        self.input.as_ref()
    }

    fn index(i: &Rational, bound: usize, what: &'static str) -> Result<usize, IndexError> {
        if i.is_integer() {
            if let Some(v) = i.numer().to_usize().filter(|&v| v < bound) {
                return Ok(v);
            }
        }
        Err(IndexError {
            what,
            index: i.clone(),
            bound,
        })
    }

    /// √(n·2^(−2·149)) … i.e. the enclosure of √(v/2^298) for an exact scaled square sum.
    /// √(v·2^-298), outward: v rounded outward at p bits, scaled exactly (a dyadic, so
    /// no rational is formed and no gcd taken: the call is on every iteration of a
    /// window's formula).
    fn sqrt_sq(v: &Integer, p: u32) -> Interval {
        Interval::from_dyadic(p, v, -298).sqrt()
    }
    /// v·2^-149, outward.
    fn lin(v: &Integer, p: u32) -> Interval {
        Interval::from_dyadic(p, v, -149)
    }

    /// N(W) = min(‖W‖_F, √(‖W‖₁‖W‖_∞)) ≥ ‖W‖₂ (bound 2 of the module documentation).
    fn norm2_upper(b: &BlockNorms, p: u32) -> Interval {
        let frob = Self::sqrt_sq(&b.frob2, p);
        let holder = Self::sqrt_sq(&b.holder2, p);
        frob.min(&holder)
    }

    fn ln_bound_at(&self, l: usize, p: u32) -> Interval {
        let s = &self.sums[l];
        let sqrt_d = Interval::from_i64(p, self.hidden as i64).sqrt();
        &(&sqrt_d * &Self::lin(&s.gamma_max, p)) + &Self::sqrt_sq(&s.beta2, p)
    }

    /// An enclosure of B_ℓ = √d·max|γ| + ‖β‖₂ ≥ ‖LN_ℓ(x)‖₂ for every x (bound 1).
    pub fn ln_bound(&self, p: u32, l: &Rational) -> Result<Interval, IndexError> {
        let l = Self::index(l, self.layers(), "layer")?;
        Ok(self.ln_bound_at(l, p))
    }

    /// An enclosure of Δ̄_ℓh = 2·(N(W_Q^h)B_ℓ + ‖b_Q^h‖)(N(W_K^h)B_ℓ + ‖b_K^h‖)/√d_h, an upper
    /// bound on max s − min s of head h's content logits in layer ℓ over all inputs
    /// (bound 3).
    pub fn logit_range(&self, p: u32, l: &Rational, h: &Rational) -> Result<Interval, IndexError> {
        let l = Self::index(l, self.layers(), "layer")?;
        let h = Self::index(h, self.heads, "head")?;
        let b = self.ln_bound_at(l, p);
        let s = &self.sums[l].heads[h];
        let qbar = &(&Self::norm2_upper(&s.q, p) * &b) + &Self::sqrt_sq(&s.bq2, p);
        let kbar = &(&Self::norm2_upper(&s.k, p) * &b) + &Self::sqrt_sq(&s.bk2, p);
        let sqrt_dh = Interval::from_i64(p, (self.hidden / self.heads) as i64).sqrt();
        Ok((&(&qbar * &kbar) / &sqrt_dh).mul_2exp(1))
    }

    /// An enclosure of min(Δ̄_ℓh, Δ̃_ℓh, 2√d·√U(λ)/√d_h), bounds 3, 5 and 6: an upper bound
    /// on the range of a query's content logits in head h of layer ℓ (max over its keys
    /// minus min) over all inputs of the layer.
    pub fn row_logit_range(
        &self,
        p: u32,
        l: &Rational,
        h: &Rational,
    ) -> Result<Interval, IndexError> {
        let old = self.logit_range(p, l, h)?;
        let (l, h) = (
            Self::index(l, self.layers(), "layer")?,
            Self::index(h, self.heads, "head")?,
        );
        let s = &self.rows()[l][h];
        let mut m = Interval::from_rational(p, &s.trace);
        for _ in 0..5 {
            m = m.sqrt();
        }
        let sqrt_d = Interval::from_i64(p, self.hidden as i64).sqrt();
        let sqrt_dh = Interval::from_i64(p, (self.hidden / self.heads) as i64).sqrt();
        let c = Interval::from_rational(p, &s.cq2).sqrt();
        let new = (&(&sqrt_d * &(&(&sqrt_d * &m) + &c)) / &sqrt_dh).mul_2exp(1);
        let best = old.min(&new);
        Ok(match &s.ball {
            // bound 6: 2√d·√U(λ)/√d_h
            Some(u) => {
                let ball =
                    (&(&sqrt_d * &Interval::from_rational(p, u).sqrt()) / &sqrt_dh).mul_2exp(1);
                best.min(&ball)
            }
            None => best,
        })
    }

    /// An enclosure of Δ⁰_h = max_a (max_b s(a, b) − min_b s(a, b)), layer 0's exact
    /// content-logit range over the bytes of a query's row (bound 4).
    pub fn byte_logit_range(&self, p: u32, h: &Rational) -> Result<Interval, AttnOpError> {
        let h = Self::index(h, self.heads, "head")?;
        let r = self
            .pairs()
            .ok_or(AttnOpError::NoEmbedding)?
            .get(h)
            .ok_or(AttnOpError::NoEmbedding)?;
        let e = -(r.scale as i32);
        let lo = Interval::from_dyadic(p, &r.lo, e);
        let hi = Interval::from_dyadic(p, &r.hi, e);
        let range = Interval::from_endpoints(lo.lo().clone(), hi.hi().clone());
        let sqrt_dh = Interval::from_i64(p, (self.hidden / self.heads) as i64).sqrt();
        Ok(&range / &sqrt_dh)
    }

    /// The bytes (a, b, b′) whose f_a(b) − f_a(b′) is the upper end of head h's
    /// [`AttnWeights::byte_logit_range`]: the query byte, the key byte of the largest and of
    /// the smallest logit; `None` without the embedding or for a head out of range.
    pub fn byte_logit_witness(&self, h: usize) -> Option<(u8, u8, u8)> {
        self.pairs()?.get(h).map(|r| r.witness)
    }
}

/// Why an `attn-weights` operation has no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttnOpError {
    /// A layer or head index out of range.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// Layer 0's exact range needs the embedding and ε_LN.
    #[error(
        "the datum carries no embedding and ln_eps (layer 0's exact byte-pair range needs them)"
    )]
    NoEmbedding,
}
