//! Formulas shared by several positional claims (one source of truth each).
//!
//! - ALiBi slopes m = 2^{−q} by the paper's rule and the official code's rule,
//!   with the exponent q kept as an exact rational.
//! - Sandwich: frequencies ω_i = 10000^{−2i/d̄} and the centred bias
//!   B̃(r) = Σ_{i∈I} (cos(r ω_i) − 1), in intervals and in f64.
//! - Window conventions W1 (0 ≤ r ≤ w − 1) and W2 (0 ≤ r ≤ w).

use crate::kernel::expr::build::{abs, call, int, le, lit, q, sub, Formula, Term};
use crate::kernel::Interval;
pub use crate::model_window::alibi::{alibi_tail_inf_expr, slope_exponents, slope_expr, SlopeRule};
use rug::Rational;
use serde::{Deserialize, Serialize};

/// An enclosure of 2^{−q} = exp(−q ln 2) (a point when q is an integer).
pub fn slope_interval(q: &Rational, prec: u32) -> Interval {
    if q.denom() == &1 {
        if let Some(e) = q.numer().to_i32() {
            return Interval::one(prec).mul_2exp(-e);
        }
    }
    (&Interval::from_rational(prec, q) * &Interval::ln2(prec)).neg_exp()
}

/// Sandwich index convention for I (positional.md §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IndexFrom {
    /// I = {0, …, d̄/2 − 1} (attention-gym, "appendix E").
    Zero,
    /// I = {1, …, d̄/2} (NeMo).
    One,
}

impl IndexFrom {
    /// The index set as a range.
    pub fn range(self, dbar: u32) -> std::ops::RangeInclusive<u32> {
        match self {
            IndexFrom::Zero => 0..=dbar / 2 - 1,
            IndexFrom::One => 1..=dbar / 2,
        }
    }
    /// `"I from 0"` / `"I from 1"`.
    pub fn label(self) -> &'static str {
        match self {
            IndexFrom::Zero => "I from 0",
            IndexFrom::One => "I from 1",
        }
    }
}

/// Enclosures of the Sandwich frequencies ω_i = 10000^{−2i/d̄} = exp(−(2i/d̄)·ln 10⁴)
/// (the kernel's `sandwich-centred` operation's own, so claims and certificates share
/// one formula).
pub fn sandwich_freqs(dbar: u32, from: IndexFrom, prec: u32) -> Vec<Interval> {
    crate::kernel::expr::sandwich::freqs(dbar, *from.range(dbar).start(), prec)
}

/// The same frequencies in f64 (nearest; for fits and heuristics only).
pub fn sandwich_freqs_f64(dbar: u32, from: IndexFrom) -> Vec<f64> {
    from.range(dbar)
        .map(|i| 10_000f64.powf(-2.0 * i as f64 / dbar as f64))
        .collect()
}

/// Certified centred Sandwich bias B̃(r) = Σ_i (cos(r ω_i) − 1), given the
/// frequency enclosures (the kernel's formula, [`crate::kernel::expr::sandwich`]).
pub fn sandwich_centred(r: i64, freqs: &[Interval]) -> Interval {
    crate::kernel::expr::sandwich::centred(r, freqs)
}

/// B̃(r) in f64 (nearest; fits, plots and the toy model only).
pub fn sandwich_centred_f64(r: f64, freqs: &[f64]) -> f64 {
    freqs.iter().map(|w| (r * w).cos() - 1.0).sum()
}

/// The per-head compression ratio c_h = 8h/H as an exact rational.
pub fn compression_ratio(h: usize, heads: usize) -> Rational {
    Rational::from((8 * h as i64, heads as i64))
}

/// ALiBi's slopes m_h = 2^{−q_h} in f64: the midpoint of [`slope_interval`] (exact when q is
/// an integer, as for every power-of-two H ≤ 8; nearest otherwise).
pub fn slopes_f64(heads: usize, rule: SlopeRule) -> Vec<f64> {
    slope_exponents(heads, rule)
        .iter()
        .map(|q| slope_interval(q, 128).mid_f64())
        .collect()
}

/// ALiBi's bias at distance r ≥ 0, −m·r, in f64 (the trained models' logit bias).
pub fn alibi_bias_f64(m: f64, r: usize) -> f64 {
    -m * r as f64
}

/// The kernel's enclosure of ALiBi's bias −2^{−q}·r.
pub fn alibi_bias(q: &Rational, r: i64, prec: u32) -> Interval {
    -&(&slope_interval(q, prec) * &Interval::from_i64(prec, r))
}

/// Sandwich's bias at distance r for a head with compression ratio c, B̃(r)/c (the
/// centred form: the same attention as p_mᵀp_n/c, positional/shift-invariance), in f64.
pub fn sandwich_bias_f64(r: usize, freqs: &[f64], c: f64) -> f64 {
    sandwich_centred_f64(r as f64, freqs) / c
}

/// The kernel's enclosure of Sandwich's bias B̃(r)/c.
pub fn sandwich_bias(r: i64, freqs: &[Interval], c: &Rational, prec: u32) -> Interval {
    &sandwich_centred(r, freqs) / &Interval::from_rational(prec, c)
}

/// Window convention (positional.md §1, "Windowed attention").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Window {
    /// 0 ≤ r ≤ w − 1: w tokens including self.
    W1,
    /// 0 ≤ r ≤ w.
    W2,
}

impl Window {
    /// The largest distance attended with window w.
    pub fn max_distance(self, w: u64) -> u64 {
        match self {
            Window::W1 => w.saturating_sub(1),
            Window::W2 => w,
        }
    }
}

// ----- ALiBi tail and seeded randomness (alibi-tail-bound, alibi-window, shift-invariance) -----

/// The uniform-in-i ALiBi tail bound T^∞(w) = e^Δ e^{−mw} / (1 − e^{−mw} + e^Δ e^{−mw}),
/// evaluated as 1 / (1 + (e^{mw} − 1)/e^Δ): increasing in every subexpression's
/// enclosure direction, so no dependency blow-up (positional.md §2, alibi-tail-bound).
pub fn alibi_tail_inf(m: &Interval, w: u64, e_delta: &Interval) -> Interval {
    let p = m.prec();
    let one = Interval::one(p);
    let emw = (m * &Interval::from_integer(p, &rug::Integer::from(w))).exp();
    &one / &(&one + &(&(&emw - &one) / e_delta))
}

pub use crate::rng::SplitMix64;

// ----- Sandwich sweeps, least-squares fits, printed references (sandwich-identity, -log-decay, -head-power-law, toy-receptive-field) -----

/// Certified B̃(r) for every r of `rs`, computed in parallel, in the order of `rs`
/// (the result does not depend on the thread count).
///
/// The values are kept for the process (`CentredMemo`): sandwich-identity's sweep
/// (r < 20000), length-usage's (r < 16384) and shift-invariance's (r < 4096) are the
/// same B̃(r) at d̄ = 128, indices from 0, 128 bits, and `run --all` computed them
/// three times. A kept value is the enclosure the kernel computed for the same r from
/// the same frequency enclosures (equal endpoints and precisions), so it is the same
/// interval, bit for bit, whichever claim computed it first.
pub fn sandwich_centred_many(rs: &[i64], freqs: &[Interval]) -> Vec<Interval> {
    use rayon::prelude::*;
    let known = CentredMemo::lookup(rs, freqs);
    let missing: Vec<i64> = rs
        .iter()
        .zip(&known)
        .filter(|(_, k)| k.is_none())
        .map(|(&r, _)| r)
        .collect();
    let computed: Vec<Interval> = missing
        .par_iter()
        .with_min_len(16)
        .map(|&r| sandwich_centred(r, freqs))
        .collect();
    CentredMemo::store(freqs, &missing, &computed);
    let mut fresh = computed.into_iter();
    known
        .into_iter()
        .map(|k| k.unwrap_or_else(|| fresh.next().expect("one value per missing r")))
        .collect()
}

/// B̃(r) values computed in this process, per frequency set (at most
/// [`CentredMemo::MAX`] values in all, ≈ 100 bytes each at 128 bits).
struct CentredMemo;

type CentredSets = Vec<(Vec<Interval>, std::collections::HashMap<i64, Interval>)>;

static CENTRED: std::sync::Mutex<CentredSets> = std::sync::Mutex::new(Vec::new());

impl CentredMemo {
    const MAX: usize = 1 << 18;

    /// The same frequency enclosures: equal endpoints at equal precisions.
    fn same(a: &[Interval], b: &[Interval]) -> bool {
        a.len() == b.len()
            && a.iter().zip(b).all(|(x, y)| {
                x == y && x.lo().prec() == y.lo().prec() && x.hi().prec() == y.hi().prec()
            })
    }

    fn lookup(rs: &[i64], freqs: &[Interval]) -> Vec<Option<Interval>> {
        let sets = CENTRED.lock().unwrap_or_else(|e| e.into_inner());
        match sets.iter().find(|(f, _)| Self::same(f, freqs)) {
            Some((_, vals)) => rs.iter().map(|r| vals.get(r).cloned()).collect(),
            None => vec![None; rs.len()],
        }
    }

    fn store(freqs: &[Interval], rs: &[i64], vals: &[Interval]) {
        let mut sets = CENTRED.lock().unwrap_or_else(|e| e.into_inner());
        let total: usize = sets.iter().map(|(_, v)| v.len()).sum();
        if total + rs.len() > Self::MAX {
            return;
        }
        let k = match sets.iter().position(|(f, _)| Self::same(f, freqs)) {
            Some(k) => k,
            None => {
                sets.push((freqs.to_vec(), Default::default()));
                sets.len() - 1
            }
        };
        for (r, v) in rs.iter().zip(vals) {
            sets[k].1.insert(*r, v.clone());
        }
    }
}

/// An ordinary least-squares line y ≈ slope·x + intercept (f64: an observation, never a proof).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LineFit {
    /// The fitted slope.
    pub slope: f64,
    /// The fitted intercept.
    pub intercept: f64,
    /// R² = 1 − SSE/SST (SST about the mean of y).
    pub r2: f64,
}

/// Fits y ≈ a·x + c by least squares (centred sums, so no cancellation between
/// large moments). `None` for fewer than two points or constant x.
pub fn line_fit(x: &[f64], y: &[f64]) -> Option<LineFit> {
    let n = x.len().min(y.len());
    if n < 2 {
        return None;
    }
    let mx = x[..n].iter().sum::<f64>() / n as f64;
    let my = y[..n].iter().sum::<f64>() / n as f64;
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x[..n].iter().zip(&y[..n]) {
        sxx += (a - mx) * (a - mx);
        sxy += (a - mx) * (b - my);
        syy += (b - my) * (b - my);
    }
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let sse: f64 = x[..n]
        .iter()
        .zip(&y[..n])
        .map(|(a, b)| (b - slope * a - intercept).powi(2))
        .sum();
    let r2 = if syy > 0.0 { 1.0 - sse / syy } else { 1.0 };
    Some(LineFit {
        slope,
        intercept,
        r2,
    })
}

/// Half a unit in the last printed digit of a decimal literal (`"-1.906"` → 1/2000,
/// `"1.9e-4"` → 1/200000, `"255"` → 1/2): the tolerance for reproducing a
/// printed reference value that was rounded to nearest.
pub fn printed_half_unit(s: &str) -> Result<Rational, crate::kernel::ParseRationalError> {
    use rug::ops::Pow;
    let err = |reason| crate::kernel::ParseRationalError::new(s, reason);
    crate::kernel::parse_rational(s)?;
    let t = s.trim().trim_start_matches(['-', '+']);
    let (mant, exp) = match t.find(['e', 'E']) {
        Some(i) => (
            &t[..i],
            t[i + 1..]
                .parse::<i32>()
                .map_err(|_| err("malformed exponent"))?,
        ),
        None => (t, 0),
    };
    if mant.contains(['/', '^']) {
        return Err(err("a printed reference must be a decimal"));
    }
    let decimals = mant
        .split_once('.')
        .map(|(_, f)| f.len() as i32)
        .unwrap_or(0);
    let e = exp - decimals;
    let unit = if e >= 0 {
        Rational::from(rug::Integer::from(10).pow(e as u32))
    } else {
        Rational::from((1, rug::Integer::from(10).pow((-e) as u32)))
    };
    Ok(unit / 2)
}

/// A printed decimal reference value, resolved: the text as printed and half a unit
/// in its last printed digit ([`printed_half_unit`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Printed {
    /// The value as printed.
    pub text: String,
    /// The value, exact.
    pub value: Rational,
    /// Half a unit in the last printed digit.
    pub half_unit: Rational,
}

impl Printed {
    /// Resolves the printed value `s` of the field `field`.
    pub fn parse(field: &str, s: &str) -> Result<Printed, crate::spec::FieldError> {
        let error = |e: crate::kernel::ParseRationalError| {
            crate::spec::FieldError::new(field, e.to_string())
        };
        let half_unit = printed_half_unit(s).map_err(error)?;
        Ok(Printed {
            text: s.to_string(),
            value: crate::kernel::parse_rational(s).map_err(error)?,
            half_unit,
        })
    }

    /// The formula |x − v| ≤ ½ unit in the last printed digit: `x` rounds to the
    /// printed digits.
    pub fn formula(&self, x: Term) -> Formula {
        le(abs(sub(x, lit(self.text.as_str()))), q(&self.half_unit))
    }
}

impl std::fmt::Display for Printed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Integer abscissae for a plot with a logarithmic x axis: every r up to 64, then
/// about 60 per decade, always ending at `hi`.
pub fn log_plot_points(lo: i64, hi: i64) -> Vec<i64> {
    let mut out: Vec<i64> = Vec::new();
    let mut x = lo as f64;
    while x <= hi as f64 {
        let r = x.round() as i64;
        if out.last() != Some(&r) {
            out.push(r);
        }
        x = if x < 64.0 { x + 1.0 } else { x * 1.04 };
    }
    if out.last() != Some(&hi) {
        out.push(hi);
    }
    out
}

/// The term (kernel::expr::build) of B̃(r) = Σ_{i∈I} (cos(rω_i) − 1), with `r` any
/// term (a literal or a bound variable such as `(- r 1)`), for certificates: the
/// kernel's `sandwich-centred` operation.
pub fn sandwich_centred_expr(r: Term, dbar: u32, from: IndexFrom) -> Term {
    call(
        "sandwich-centred",
        [int(dbar), int(*from.range(dbar).start()), r],
    )
}

// ----- terms of statements (kernel::expr::build), shared by the ALiBi claims -----

// ----- validation shared by the Sandwich claims -----

/// A head count H must be between 1 and 64; an error names `field`.
pub fn check_heads(field: &str, h: usize) -> Result<(), crate::spec::FieldError> {
    crate::spec::ensure(
        (1..=64).contains(&h),
        field,
        format!("{h} heads is out of range: use 1 to 64"),
    )
}

/// d̄ must be even and between 2 and 4096; an error names `field`.
pub fn check_dbar(field: &str, d: u32) -> Result<(), crate::spec::FieldError> {
    crate::spec::ensure(
        (2..=4096).contains(&d) && d.is_multiple_of(2),
        field,
        format!("d̄ = {d} must be even, between 2 and 4096"),
    )
}

/// A printed decimal reference value must be a decimal literal (see [`printed_half_unit`]).
pub fn check_printed(field: &str, s: &str) -> Result<(), crate::spec::FieldError> {
    printed_half_unit(s)
        .map(|_| ())
        .map_err(|e| crate::spec::FieldError::new(field, e.to_string()))
}
