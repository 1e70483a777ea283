//! The content-logit range a given input attains in a trained ALiBi model **computed in exact
//! real arithmetic** with its stored f32 weights (issue #40): an interval forward pass whose
//! every number is an outward-rounded enclosure ([`F64Iv`], the kernel's f64 tier), and from
//! the enclosures of a layer's content logits a certified lower bound on the largest range of
//! a query's row (and an upper bound, the record of how tight the enclosure is).
//!
//! Untrusted in the house's sense: it mints no verdict and lives outside the kernel; what it
//! prints (the "largest range found by search" of the certified-windows table) is a number
//! the report reads against the kernel's Δ̄_h. It is nonetheless a bound, argued here step by
//! step, so that "Δ̄_h is within 3× of a range known to be attained" is a statement about the
//! model the theorem is about, not about one rounding of it.
//!
//! # The model (exact arithmetic)
//!
//! The stored weights' f32 values are exact dyadic rationals; ε_LN is the stored f32 bit
//! pattern's value (the certificate's `ln_eps`, the ε the kernel's Δ̄_h is about); the slopes
//! are 2^{−q_h} exactly (the spec's exponents; [`slope_interval`](super::super::common::slope_interval),
//! a point when q_h is an integer, as at H = 8). For bytes b_0 … b_{L−1} (`attncheck_lm::model`,
//! pre-LN, ReLU MLP of width 4d, no positional input):
//!
//! - x_i = E[b_i] (the embedding row);
//! - per layer: y_i = LN₁(x_i), with LN(x) = γ ⊙ (x − μ)/√(σ² + ε_LN) + β, μ the mean and
//!   σ² = Σ_k (x_k − μ)²/d the population variance; qkv_i = y_i·W_qkv + b_qkv, the query of
//!   head h in columns h·d_h … of the first third, its key in the second, its value in the
//!   third; the content logit s_ij = q_i·k_j/√d_h for every j ≤ i (the scan's models attend to
//!   every earlier position: `visible_limit` is unlimited for a bias scheme without
//!   truncation, which is how `content_logit_ranges` and the training run them);
//!   S_ij = s_ij − m_h·(i − j), P_i = softmax_j(S_i·), o_i = Σ_j P_ij v_j (heads concatenated);
//!   x_i ← x_i + o_i·W_o + b_o; x_i ← x_i + ReLU(LN₂(x_i)·W_1 + b_1)·W_2 + b_2.
//!
//! Only the logits of every layer are wanted, so the last layer stops after its q and k.
//!
//! # Why each step encloses
//!
//! The invariant: every quantity of the exact model is a member of the [`F64Iv`] computed
//! for it. [`F64Iv`]'s +, −, ×, ÷, √ and exp each return an enclosure of the exact operation's
//! set of results over its operands' enclosures (its module proves each; exp is CORE-MATH's
//! correctly rounded one, widened), so by induction over the operations every step below
//! keeps the invariant; max and min are exact.
//!
//! 1. *Points.* Each weight, E's rows, d, d_h and i − j are binary64 numbers, so
//!    `from_f64` is the exact point; ε_LN is an f32, so likewise; m_h comes from the MPFR
//!    enclosure of 2^{−q_h}, rounded outward.
//! 2. *LayerNorm.* μ ∈ (Σ_k x_k)/d by interval + and ÷. The centred x_k − μ ∈ X_k − M (the
//!    exact x_k and μ are members of X_k and M; dependency only widens). The square is taken
//!    as |c|·|c| of the enclosure C of c, whose lower end is ≥ 0 (c² ≥ 0 is kept; C·C would
//!    reach below 0 when C straddles 0). Then σ² + ε ∈ (Σ|C_k|²)/d + ε, whose lower end is ≥
//!    ε > 0, so √ and 1/√ are defined; y_k ∈ C_k·(1/√(…))·γ_k + β_k.
//! 3. *Linear maps, residuals, ReLU.* Sums of products of enclosures with exact weights;
//!    ReLU(t) = max(t, 0) is increasing, so max(T, [0, 0]) encloses it.
//! 4. *Logits.* s_ij ∈ (Σ_t Q_it·K_jt)·(1/√d_h), with 1/√d_h enclosed by ÷ and √ of points.
//! 5. *Softmax.* For any real constant c, softmax_j(S_ij) = e^{S_ij − c}/Σ_l e^{S_il − c}
//!    exactly (the factor e^{−c} cancels). c is chosen as the largest midpoint of the row's
//!    enclosures (a binary64 number, so an exact point): every S_ij − c is then at most the
//!    row's width above 0, no exp overflows, the largest term is ≈ 1 and the sum Z's lower
//!    end is > 0 (so ÷ is defined), and the enclosures stay as tight as the logits'. With
//!    E_j ∋ e^{S_ij − c} (exp of an enclosure of S_ij − c), o_it = (Σ_j e^{S_ij−c}·v_jt)/Z
//!    ∈ (Σ_j E_j·V_jt)/(Σ_j E_j): the same real value as Σ_j P_ij v_jt, one ÷ per output.
//!
//! # From logit enclosures to bounds on the largest row range
//!
//! Query i's range is R_i = max_j s_ij − min_j s_ij, and the input's largest range is
//! R = max_i R_i (over the rows of one (layer, head)). For any two keys a, b of row i,
//! R_i ≥ s_ia − s_ib ≥ lo(S_ia − S_ib) (the lower end of the interval difference), so
//! **lower = max_i lo(S_ia(i) − S_ib(i))** ≤ R for any choice of a(i), b(i); the choice is the
//! keys of the largest and the smallest midpoint, which makes lower the true range up to the
//! enclosures' widths. Above: max_j s_ij ∈ max_j S_ij and min_j s_ij ∈ min_j S_ij (max and
//! min are increasing in each argument), so R_i ≤ hi(max_j S_ij − min_j S_ij) and
//! **upper = max_i** of that ≥ R. upper − lower is the enclosure's slack; a lower bound
//! ≤ 0 (or one never defined) says nothing and the report prints "—".
//!
//! # Width and cost
//!
//! First-order interval arithmetic widens by each linear map's |W| and each LayerNorm's
//! γ/σ: on the scan's models a logit enclosure is ≈ 10⁻¹³ wide at layer 0 and the range's
//! enclosure ≈ 10⁻⁸ of the range at layer 1 (the report prints the largest), far below the
//! 4 digits printed. [`ExactModel::range_at`] keeps one row of logits at a time (memory
//! linear in the input's length); time is quadratic in it (≈ 0.2 s for 64 bytes, 2.2 s for
//! 512, at d = 64, H = 8, two layers, the test profile on a loaded 2-core machine).

use crate::kernel::F64Iv;
use attncheck_lm::job::StoredWeights;

/// A linear map y = x·W + b with exact weights, W [n_in × n_out] row-major.
struct Linear {
    w: Vec<f64>,
    b: Vec<f64>,
    n_out: usize,
}

/// A LayerNorm's gain and shift.
struct Norm {
    gain: Vec<f64>,
    shift: Vec<f64>,
}

/// One layer's weights.
struct Layer {
    ln1: Norm,
    qkv: Linear,
    o: Linear,
    ln2: Norm,
    fc1: Linear,
    fc2: Linear,
}

/// A trained ALiBi model as the exact-arithmetic model of the module documentation: its f32
/// weights as exact values, ε_LN and the slopes as enclosures.
pub struct ExactModel {
    d: usize,
    heads: usize,
    eps: F64Iv,
    slopes: Vec<F64Iv>,
    emb: Vec<f64>,
    layers: Vec<Layer>,
}

/// Per layer, per head, per query i, the enclosures of s_ij for j = 0 … i.
pub type LogitEnclosures = Vec<Vec<Vec<Vec<F64Iv>>>>;

fn point(x: f64) -> F64Iv {
    F64Iv::from_f64(x)
}

impl ExactModel {
    /// The model of `w` with hidden size `hidden`, the heads' slopes enclosed by `slopes`
    /// (one per head) and ε_LN = `eps` exactly (a binary64 number, e.g. [`Self::stored_eps`]).
    /// An error names the tensor that is missing or misshapen.
    pub fn new(
        w: &StoredWeights,
        hidden: usize,
        slopes: Vec<F64Iv>,
        eps: f64,
    ) -> Result<ExactModel, String> {
        let (d, heads) = (hidden, w.heads);
        if d == 0 || heads == 0 || !d.is_multiple_of(heads) || slopes.len() != heads {
            return Err(format!(
                "hidden {d}, {heads} heads, {} slopes: hidden must be a positive multiple of heads, one slope per head",
                slopes.len()
            ));
        }
        if !(eps.is_finite() && eps > 0.0) {
            return Err(format!("ε_LN = {eps} must be positive"));
        }
        let get = |name: &str, shape: &[usize]| -> Result<Vec<f64>, String> {
            let v = w.get(name, shape).map_err(|e| e.to_string())?;
            if v.iter().any(|x| !x.is_finite()) {
                return Err(format!("stored tensor {name}: a value is not finite"));
            }
            Ok(v.into_iter().map(f64::from).collect())
        };
        let linear = |name: &str, n_in: usize, n_out: usize| -> Result<Linear, String> {
            Ok(Linear {
                w: get(&format!("{name}.w"), &[n_in, n_out])?,
                b: get(&format!("{name}.b"), &[n_out])?,
                n_out,
            })
        };
        let norm = |name: &str| -> Result<Norm, String> {
            Ok(Norm {
                gain: get(&format!("{name}.w"), &[d])?,
                shift: get(&format!("{name}.b"), &[d])?,
            })
        };
        let layers = (0..w.layers)
            .map(|l| {
                Ok(Layer {
                    ln1: norm(&format!("l{l}.ln1"))?,
                    qkv: linear(&format!("l{l}.qkv"), d, 3 * d)?,
                    o: linear(&format!("l{l}.o"), d, d)?,
                    ln2: norm(&format!("l{l}.ln2"))?,
                    fc1: linear(&format!("l{l}.fc1"), d, 4 * d)?,
                    fc2: linear(&format!("l{l}.fc2"), 4 * d, d)?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(ExactModel {
            d,
            heads,
            eps: point(eps),
            slopes,
            emb: get("emb", &[attncheck_lm::model::VOCAB, d])?,
            layers,
        })
    }

    /// The stored ε_LN (an f32 bit pattern) as its exact value; `None` if it does not read.
    pub fn stored_eps(w: &StoredWeights) -> Option<f64> {
        match attncheck_lm::job::from_hex(&w.ln_eps)?.as_slice() {
            [e] => Some(f64::from(*e)),
            _ => None,
        }
    }

    /// The enclosures of every layer's content logits for the input `bytes` (module
    /// documentation); memory L² per head and layer, for tests and short inputs.
    pub fn logits(&self, bytes: &[u8]) -> LogitEnclosures {
        let mut out = Vec::with_capacity(self.layers.len());
        self.run(bytes, self.layers.len(), &mut |qkv| {
            out.push(
                (0..self.heads)
                    .map(|h| (0..qkv.len()).map(|i| self.row(qkv, h, i)).collect())
                    .collect(),
            );
        });
        out
    }

    /// The bounds of [`range_bounds`] on `bytes`' largest row range at (`layer`, `head`),
    /// computed row by row (memory linear in the input's length); `None` for a layer or head
    /// the model does not have.
    pub fn range_at(&self, bytes: &[u8], layer: usize, head: usize) -> Option<RangeBounds> {
        if layer >= self.layers.len() || head >= self.heads {
            return None;
        }
        let mut found = None;
        self.run(bytes, layer + 1, &mut |qkv| {
            found = Some(
                (0..qkv.len())
                    .map(|i| row_bounds(&self.row(qkv, head, i)))
                    .fold(RangeBounds::EMPTY, RangeBounds::join)
                    .finish(),
            );
        });
        found
    }

    /// The forward pass through layers 0 … `upto` − 1, handing each one's q/k/v enclosures
    /// (per position, 3·d) to `seen`; the last of them stops there.
    fn run(&self, bytes: &[u8], upto: usize, seen: &mut dyn FnMut(&[Vec<F64Iv>])) {
        let d = self.d;
        let mut x: Vec<Vec<F64Iv>> = bytes
            .iter()
            .map(|&b| {
                let row = &self.emb[b as usize * d..(b as usize + 1) * d];
                row.iter().map(|&v| point(v)).collect()
            })
            .collect();
        for (l, layer) in self.layers.iter().enumerate().take(upto) {
            let qkv: Vec<Vec<F64Iv>> = x
                .iter()
                .map(|xi| apply(&layer.qkv, &self.norm(xi, &layer.ln1)))
                .collect();
            seen(&qkv);
            if l + 1 == upto {
                break;
            }
            let att = self.attend(&qkv);
            for (xi, oi) in x.iter_mut().zip(&att) {
                for (a, b) in xi.iter_mut().zip(apply(&layer.o, oi)) {
                    *a = a.add(b);
                }
                let h = apply(&layer.fc1, &self.norm(xi, &layer.ln2));
                let h: Vec<F64Iv> = h.into_iter().map(|t| t.max(point(0.0))).collect();
                for (a, b) in xi.iter_mut().zip(apply(&layer.fc2, &h)) {
                    *a = a.add(b);
                }
            }
        }
    }

    /// LN(x) (step 2).
    fn norm(&self, x: &[F64Iv], n: &Norm) -> Vec<F64Iv> {
        let dd = point(self.d as f64);
        let mean = sum(x.iter().copied()).div(dd);
        let c: Vec<F64Iv> = x.iter().map(|t| t.sub(mean)).collect();
        let var = sum(c.iter().map(|t| t.abs().mul(t.abs()))).div(dd);
        let inv = point(1.0).div(var.add(self.eps).sqrt());
        c.iter()
            .zip(n.gain.iter().zip(&n.shift))
            .map(|(t, (&g, &b))| t.mul(inv).mul(point(g)).add(point(b)))
            .collect()
    }

    /// s_ij of head `h`, query `i`, for j = 0 … i (step 4).
    fn row(&self, qkv: &[Vec<F64Iv>], h: usize, i: usize) -> Vec<F64Iv> {
        let (d, dh) = (self.d, self.d / self.heads);
        let scale = point(1.0).div(point(dh as f64).sqrt());
        let q = &qkv[i][h * dh..(h + 1) * dh];
        qkv[..=i]
            .iter()
            .map(|kj| {
                let k = &kj[d + h * dh..d + (h + 1) * dh];
                sum(q.iter().zip(k).map(|(a, b)| a.mul(*b))).mul(scale)
            })
            .collect()
    }

    /// The attention output per query, heads concatenated (step 5), one row of logits at a
    /// time.
    fn attend(&self, qkv: &[Vec<F64Iv>]) -> Vec<Vec<F64Iv>> {
        let (d, dh) = (self.d, self.d / self.heads);
        let mut out = vec![vec![point(0.0); d]; qkv.len()];
        for (h, &m) in self.slopes.iter().enumerate() {
            for (i, o) in out.iter_mut().enumerate() {
                let biased: Vec<F64Iv> = self
                    .row(qkv, h, i)
                    .iter()
                    .enumerate()
                    .map(|(j, t)| t.sub(m.mul(point((i - j) as f64))))
                    .collect();
                let c = biased
                    .iter()
                    .filter_map(|t| mid(*t))
                    .fold(f64::NEG_INFINITY, f64::max);
                let c = point(if c.is_finite() { c } else { 0.0 });
                let e: Vec<F64Iv> = biased.iter().map(|t| t.sub(c).exp()).collect();
                let z = sum(e.iter().copied());
                for t in 0..dh {
                    let col = 2 * d + h * dh + t;
                    let num = sum(e.iter().zip(qkv).map(|(ej, vj)| ej.mul(vj[col])));
                    o[h * dh + t] = num.div(z);
                }
            }
        }
        out
    }
}

/// x·W + b (step 3).
fn apply(lin: &Linear, x: &[F64Iv]) -> Vec<F64Iv> {
    (0..lin.n_out)
        .map(|o| {
            x.iter().enumerate().fold(point(lin.b[o]), |acc, (k, xk)| {
                acc.add(xk.mul(point(lin.w[k * lin.n_out + o])))
            })
        })
        .collect()
}

fn sum(xs: impl Iterator<Item = F64Iv>) -> F64Iv {
    xs.fold(point(0.0), F64Iv::add)
}

/// The midpoint of an enclosure (a choice, not a bound); `None` when undefined or unbounded.
fn mid(t: F64Iv) -> Option<f64> {
    let (lo, hi) = t.bounds()?;
    let m = lo / 2.0 + hi / 2.0;
    m.is_finite().then_some(m)
}

/// Bounds on an input's largest content-logit row range at one (layer, head).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RangeBounds {
    /// A certified lower bound (`None` when no row's enclosures are defined).
    pub lower: Option<f64>,
    /// A certified upper bound (`None` when some row's enclosure is undefined).
    pub upper: Option<f64>,
}

impl RangeBounds {
    /// No row yet: nothing known below, −∞ above (the max over no rows).
    const EMPTY: RangeBounds = RangeBounds {
        lower: None,
        upper: Some(f64::NEG_INFINITY),
    };

    /// Both bounds over the rows of `self` and `o`: the larger lower bound (any row's is
    /// one), the larger upper bound (undefined if either is).
    fn join(self, o: RangeBounds) -> RangeBounds {
        let lower = match (self.lower, o.lower) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        RangeBounds {
            lower,
            upper: self.upper.zip(o.upper).map(|(a, b)| a.max(b)),
        }
    }

    /// No row at all leaves no upper bound either.
    fn finish(self) -> RangeBounds {
        RangeBounds {
            upper: self.upper.filter(|u| *u > f64::NEG_INFINITY),
            ..self
        }
    }
}

/// One row's bounds: lo(S_a − S_b) for the keys a, b of the largest and smallest midpoint,
/// and hi(max_j S_j − min_j S_j).
fn row_bounds(row: &[F64Iv]) -> RangeBounds {
    let by_mid = |better: fn(f64, f64) -> bool| {
        row.iter()
            .filter_map(|t| Some((mid(*t)?, *t)))
            .reduce(|a, b| if better(b.0, a.0) { b } else { a })
            .map(|(_, t)| t)
    };
    let lower = by_mid(|x, y| x > y)
        .zip(by_mid(|x, y| x < y))
        .and_then(|(a, b)| a.sub(b).bounds())
        .map(|(lo, _)| lo);
    let upper = row
        .iter()
        .copied()
        .reduce(F64Iv::max)
        .zip(row.iter().copied().reduce(F64Iv::min))
        .and_then(|(mx, mn)| mx.sub(mn).bounds())
        .map(|(_, hi)| hi);
    RangeBounds { lower, upper }
}

/// The bounds of the module documentation from one (layer, head)'s logit enclosures
/// (`rows[i][j]` ∋ s_ij).
pub fn range_bounds(rows: &[Vec<F64Iv>]) -> RangeBounds {
    rows.iter()
        .map(|r| row_bounds(r))
        .fold(RangeBounds::EMPTY, RangeBounds::join)
        .finish()
}

/// The bytes of a probe written in hex (two digits a byte, either case); `None` for an odd
/// length, a non-hex digit or an empty probe.
pub fn parse_probe(hex: &str) -> Option<Vec<u8>> {
    if hex.is_empty() || !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len() / 2)
        .map(|i| {
            let two = hex.get(2 * i..2 * i + 2)?;
            if !two.bytes().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            u8::from_str_radix(two, 16).ok()
        })
        .collect()
}

/// `x` rounded down to 4 significant digits, exactly (a lower bound stays a lower bound in
/// print): ⌊x/10^e⌋·10^e with e = ⌊log₁₀ x⌋ − 3, computed in rationals and printed as the
/// decimal it is; "—" for a value that is not positive and finite (no useful lower bound).
pub fn sig_down(x: f64) -> String {
    sig_directed(x, false).unwrap_or_else(|| "—".into())
}

/// `x` rounded up to 4 significant digits, exactly (an upper bound stays an upper bound in
/// print): ⌈x/10^e⌉·10^e as [`sig_down`]; `None` for a value that is not positive and finite.
pub fn sig_up(x: f64) -> Option<String> {
    sig_directed(x, true)
}

/// ⌈x/10^e⌉·10^e (`up`) or ⌊x/10^e⌋·10^e, e = ⌊log₁₀ x⌋ − 3 (the f64 log may be one off
/// near a power of ten: then 3 or 5 digits, still rounded the asked way), in rationals.
fn sig_directed(x: f64, up: bool) -> Option<String> {
    if !x.is_finite() || x <= 0.0 {
        return None;
    }
    let e = x.log10().floor() as i32 - 3;
    let n = e.unsigned_abs();
    let ten = rug::Integer::from(rug::Integer::u_pow_u(10, n));
    let q = rug::Rational::from_f64(x)?;
    let scaled = if e >= 0 { q / &ten } else { q * &ten };
    let k = if up { scaled.ceil() } else { scaled.floor() };
    let k = k.numer();
    if e >= 0 {
        return Some(rug::Integer::from(k * &ten).to_string());
    }
    let digits = format!("{k:0>width$}", width = n as usize + 1);
    let (int, frac) = digits.split_at(digits.len() - n as usize);
    Some(format!("{int}.{frac}"))
}
