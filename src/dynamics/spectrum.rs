//! Certified spectra of small rational matrices (clusters.md §1 `d:good`, `d:goodmulti`, §4).
//!
//! - The characteristic polynomial det(xI − V) is computed **exactly** in rationals by
//!   Faddeev–LeVerrier: M_1 = I, c_{d−1} = −tr(V); M_k = V M_{k−1} + c_{d−k+1} I,
//!   c_{d−k} = −tr(V M_k)/k (Newton's identities; exact for any d).
//! - The leading eigenvalue λ1 is enclosed by an **isolating interval** [l, h] with
//!   dyadic endpoints: an f64 estimate only places the first bracket; the sign of p at
//!   l and h is evaluated exactly (Horner in rationals), bisection keeps a strict sign
//!   change, so a root lies in [l, h] (intermediate value theorem). Simplicity and
//!   uniqueness in [l, h]: the interval Horner enclosure of p' on [l, h] excludes 0, so p
//!   is strictly monotone there (one root, and p'(λ1) ≠ 0 means λ1 is simple).
//! - Dominance (d ≤ 3): deflate p(x) = (x − λ1) q(x) by synthetic division with λ1 ∈ [l, h]
//!   (interval coefficients that contain the true q). d = 2: q = x + b, the other root is
//!   −b; certify |b| < λ1. d = 3: q = x² + b x + c; both roots lie strictly inside the disc
//!   |μ| < ρ iff (Jury/Schur–Cohn, scaled by ρ) |c| < ρ² and |b|ρ < ρ² + c. Evaluated
//!   in outward intervals at λ1's enclosure, so a True decides it for the true λ1.
//!   The other pair is complex iff b² − 4c < 0 (certified sign), with |μ|² = c.
//! - Eigenvectors: for a simple λ1, adj(V − λ1 I) has rank one and (V − λ1 I) adj = det · I = 0,
//!   so its nonzero columns are right eigenvectors and its nonzero rows left
//!   eigenvectors (φ1*). Evaluated with λ1's enclosure, the chosen column/row encloses
//!   the true one; it is certified nonzero when one entry's enclosure excludes 0. The
//!   residuals (V − λ1 I)φ1 and φ1*(V − λ1 I) are enclosed and must contain 0 (reported).
//! - Failures are diagnosed exactly where possible: repeated roots by the exact gcd of
//!   p and p' (for d ≤ 3 a repeated root is rational), a complex leading pair by the
//!   certified signs above. Each failure names the violated hypothesis.

use super::model::Mat;
use crate::kernel::{Certainty, Interval};
use rug::{Integer, Rational};

/// A polynomial with exact rational coefficients, lowest degree first.
pub type Poly = Vec<Rational>;

/// The characteristic polynomial det(xI − V), monic, lowest degree first (exact,
/// Faddeev–LeVerrier).
pub fn char_poly(v: &Mat) -> Poly {
    let d = v.rows;
    let mut c = vec![Rational::new(); d + 1];
    c[d] = Rational::from(1);
    let mut m = Mat::identity(d);
    for k in 1..=d {
        let vm = v.mul(&m);
        let tr = (0..d).fold(Rational::new(), |s, i| s + vm.at(i, i));
        c[d - k] = -tr / Rational::from(k as i64);
        // M_{k+1} = V M_k + c_{d−k} I.
        m = vm.add(&Mat::identity(d).scale(&c[d - k]));
    }
    c
}

/// p(x), exactly.
pub fn eval_exact(p: &[Rational], x: &Rational) -> Rational {
    p.iter().rev().fold(Rational::new(), |acc, a| acc * x + a)
}

/// An enclosure of p(x) for x in an interval (Horner, outward).
pub fn eval_interval(p: &[Rational], x: &Interval) -> Interval {
    let prec = x.prec();
    p.iter().rev().fold(Interval::zero(prec), |acc, a| {
        &(&acc * x) + &Interval::from_rational(prec, a)
    })
}

/// The derivative of p.
pub fn derivative(p: &[Rational]) -> Poly {
    p.iter()
        .enumerate()
        .skip(1)
        .map(|(i, a)| a * Rational::from(i as i64))
        .collect()
}

fn trim(p: &mut Poly) {
    while p.len() > 1 && p.last().is_some_and(|a| *a == 0) {
        p.pop();
    }
}

/// The monic gcd of two nonzero polynomials (exact Euclid).
pub fn poly_gcd(a: &[Rational], b: &[Rational]) -> Poly {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    trim(&mut a);
    trim(&mut b);
    while !(b.len() == 1 && b[0] == 0) {
        // a mod b
        let mut r = a.clone();
        let db = b.len() - 1;
        let lead = b[db].clone();
        while r.len() > db && !(r.len() == 1 && r[0] == 0) {
            let dr = r.len() - 1;
            let f = Rational::from(&r[dr] / &lead);
            for i in 0..=db {
                let t = Rational::from(&f * &b[i]);
                r[dr - db + i] -= t;
            }
            r.pop();
            trim(&mut r);
            if r.is_empty() {
                r.push(Rational::new());
            }
        }
        if r.is_empty() {
            r.push(Rational::new());
        }
        a = b;
        b = r;
    }
    let lead = a.last().cloned().unwrap_or_else(|| Rational::from(1));
    a.iter().map(|x| Rational::from(x / &lead)).collect()
}

/// A complex number in f64 (starting guesses only).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct C64 {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl C64 {
    fn abs(self) -> f64 {
        self.re.hypot(self.im)
    }
}

/// f64 estimates of all roots of a monic polynomial of degree ≤ 3 (untrusted;
/// used only to place brackets and to word error messages).
pub fn roots_f64(p: &[Rational]) -> Vec<C64> {
    let c: Vec<f64> = p.iter().map(Rational::to_f64).collect();
    let quad = |b: f64, c0: f64| -> Vec<C64> {
        let disc = b * b - 4.0 * c0;
        if disc >= 0.0 {
            let s = disc.sqrt();
            vec![
                C64 {
                    re: (-b + s) / 2.0,
                    im: 0.0,
                },
                C64 {
                    re: (-b - s) / 2.0,
                    im: 0.0,
                },
            ]
        } else {
            let s = (-disc).sqrt() / 2.0;
            vec![
                C64 {
                    re: -b / 2.0,
                    im: s,
                },
                C64 {
                    re: -b / 2.0,
                    im: -s,
                },
            ]
        }
    };
    match c.len() - 1 {
        1 => vec![C64 { re: -c[0], im: 0.0 }],
        2 => quad(c[1], c[0]),
        3 => {
            // One real root by bisection on [−B, B] (Cauchy bound), then deflate.
            let bnd = 1.0 + c[..3].iter().fold(0.0f64, |m, a| m.max(a.abs()));
            let f = |x: f64| ((x + c[2]) * x + c[1]) * x + c[0];
            let (mut lo, mut hi) = (-bnd, bnd);
            for _ in 0..200 {
                let mid = 0.5 * (lo + hi);
                if f(mid) > 0.0 {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            let r = 0.5 * (lo + hi);
            let b = c[2] + r;
            let c0 = c[1] + r * b;
            let mut out = vec![C64 { re: r, im: 0.0 }];
            out.extend(quad(b, c0));
            out
        }
        _ => Vec::new(),
    }
}

/// A certified leading eigenvalue with its dual vectors.
#[derive(Clone, Debug)]
pub struct Leading {
    /// Exact isolating interval [l, h] (dyadic endpoints) with p(l)·p(h) < 0.
    pub lo: Rational,
    /// Upper end of the isolating interval.
    pub hi: Rational,
    /// The enclosure of λ1 as an interval.
    pub lambda: Interval,
    /// Enclosure of p' on [l, h] (excludes 0: λ1 simple and unique in [l, h]).
    pub dp: Interval,
    /// The other eigenvalues.
    pub others: Vec<Other>,
    /// Right eigenvector φ1 (normalised to sum 1 when the sum is certified nonzero).
    pub right: Vec<Interval>,
    /// Left eigenvector φ1* normalised to sum 1.
    pub left: Vec<Interval>,
    /// max |((V − λ1 I) φ1)_i| (upper end) — the residual contains 0 by construction.
    pub right_residual: f64,
    /// max |(φ1*(V − λ1 I))_j| (upper end).
    pub left_residual: f64,
    /// Whether both residual enclosures contain 0 (consistency).
    pub residuals_contain_zero: bool,
}

/// One of the other eigenvalues.
#[derive(Clone, Debug)]
pub enum Other {
    /// A real eigenvalue (enclosure).
    Real(Interval),
    /// A complex-conjugate pair: real part and modulus enclosures.
    Pair {
        /// Re μ.
        re: Interval,
        /// |μ|.
        modulus: Interval,
    },
}

impl Other {
    /// |μ| (enclosure).
    pub fn modulus(&self) -> Interval {
        match self {
            Other::Real(x) => x.abs(),
            Other::Pair { modulus, .. } => modulus.clone(),
        }
    }
    /// A short description with `digits` significant digits.
    pub fn describe(&self, digits: usize) -> String {
        match self {
            Other::Real(x) => x.fmt_outward(digits),
            Other::Pair { re, modulus } => format!(
                "complex pair, Re = {}, |μ| = {}",
                re.fmt_outward(digits),
                modulus.fmt_outward(digits)
            ),
        }
    }
}

/// Why V is not (certifiably) a good-triple value matrix. The `Display` text names
/// the hypothesis of `d:good` that fails.
#[derive(Clone, Debug, PartialEq)]
pub enum SpectrumError {
    /// d > 3: the dominance certificate is implemented for d ≤ 3 only.
    Dimension(usize),
    /// The eigenvalue of largest modulus is a complex pair.
    NotReal(String),
    /// The leading eigenvalue is repeated.
    NotSimple(String),
    /// The leading eigenvalue is ≤ 0.
    NotPositive(String),
    /// Another eigenvalue has modulus ≥ λ1.
    NotDominant(String),
    /// The enclosures could not decide at this precision.
    Undecided(String),
}

impl std::fmt::Display for SpectrumError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpectrumError::Dimension(d) => write!(
                f,
                "good triple: the spectral certificate is implemented for d ≤ 3 (got d = {d})"
            ),
            SpectrumError::NotReal(s) => write!(f, "good triple: λ1 is not real ({s})"),
            SpectrumError::NotSimple(s) => write!(f, "good triple: λ1 is not simple ({s})"),
            SpectrumError::NotPositive(s) => write!(f, "good triple: λ1 is not positive ({s})"),
            SpectrumError::NotDominant(s) => {
                write!(f, "good triple: λ1 is not dominant (λ1 > |λ_k| fails: {s})")
            }
            SpectrumError::Undecided(s) => {
                write!(f, "good triple: could not certify the spectrum ({s})")
            }
        }
    }
}

impl std::error::Error for SpectrumError {}

fn dyadic(x: f64) -> Rational {
    Rational::from_f64(x).unwrap_or_default()
}

fn sign(q: &Rational) -> i32 {
    q.cmp0() as i32
}

/// Isolates a simple real root of p near the f64 guess `g`: a bracket [l, h] with a
/// strict exact sign change, of width ≤ 2^{−(prec+8)}·max(1, |g|), on which the
/// enclosure of p' excludes 0. `None` if no such bracket is found.
pub fn isolate(p: &[Rational], g: f64, prec: u32) -> Option<(Rational, Rational, Interval)> {
    let scale = g.abs().max(1.0);
    let mut delta = dyadic(scale * 2f64.powi(-30));
    let center = dyadic(g);
    let (mut lo, mut hi) = (None, None);
    for _ in 0..8 {
        let l = Rational::from(&center - &delta);
        let h = Rational::from(&center + &delta);
        let (sl, sh) = (sign(&eval_exact(p, &l)), sign(&eval_exact(p, &h)));
        if sl * sh < 0 {
            lo = Some(l);
            hi = Some(h);
            break;
        }
        delta *= Rational::from(16);
    }
    let (mut lo, mut hi) = (lo?, hi?);
    let s_lo = sign(&eval_exact(p, &lo));
    let target = dyadic(scale) * Rational::from((Integer::from(1), Integer::from(1) << (prec + 8)));
    while Rational::from(&hi - &lo) > target {
        let mid = Rational::from(&lo + &hi) / Rational::from(2);
        let sm = sign(&eval_exact(p, &mid));
        if sm == 0 {
            lo = mid.clone();
            hi = mid;
            break;
        } else if sm == s_lo {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let x = Interval::from_rational(prec, &lo).hull(&Interval::from_rational(prec, &hi));
    let dp = eval_interval(&derivative(p), &x);
    if dp.contains_zero() {
        return None;
    }
    Some((lo, hi, dp))
}

/// det of a small interval matrix (Laplace; d ≤ 4 in practice).
fn det(m: &[Interval], d: usize, prec: u32) -> Interval {
    match d {
        0 => Interval::one(prec),
        1 => m[0].clone(),
        2 => &(&m[0] * &m[3]) - &(&m[1] * &m[2]),
        _ => {
            let mut s = Interval::zero(prec);
            for j in 0..d {
                let minor = minor(m, d, 0, j);
                let t = &m[j] * &det(&minor, d - 1, prec);
                if j % 2 == 0 {
                    s.add_assign(&t);
                } else {
                    s.sub_assign(&t);
                }
            }
            s
        }
    }
}

fn minor(m: &[Interval], d: usize, r: usize, c: usize) -> Vec<Interval> {
    let mut out = Vec::with_capacity((d - 1) * (d - 1));
    for i in 0..d {
        for j in 0..d {
            if i != r && j != c {
                out.push(m[i * d + j].clone());
            }
        }
    }
    out
}

/// adj(M) for a d × d interval matrix: adj_{ij} = (−1)^{i+j} det M_{(j,i)}.
pub fn adjugate(m: &[Interval], d: usize, prec: u32) -> Vec<Interval> {
    if d == 1 {
        return vec![Interval::one(prec)];
    }
    let mut out = Vec::with_capacity(d * d);
    for i in 0..d {
        for j in 0..d {
            let c = det(&minor(m, d, j, i), d - 1, prec);
            out.push(if (i + j) % 2 == 0 { c } else { -c });
        }
    }
    out
}

/// V − μ I as an interval matrix.
pub fn shifted(v: &Mat, mu: &Interval, prec: u32) -> Vec<Interval> {
    let d = v.rows;
    let mut m = v.to_intervals(prec);
    for i in 0..d {
        m[i * d + i] = &m[i * d + i] - mu;
    }
    m
}

fn mag_mid(v: &[Interval]) -> f64 {
    v.iter().map(|x| x.mid_f64().abs()).sum()
}

fn normalise(v: Vec<Interval>) -> Vec<Interval> {
    let prec = v[0].prec();
    let s = v.iter().fold(Interval::zero(prec), |a, x| &a + x);
    if !s.contains_zero() {
        return v.iter().map(|x| x / &s).collect();
    }
    // Fall back to the entry of largest magnitude (certified nonzero by the caller).
    let big = v
        .iter()
        .max_by(|a, b| a.mid_f64().abs().total_cmp(&b.mid_f64().abs()))
        .cloned()
        .expect("nonempty");
    v.iter().map(|x| x / &big).collect()
}

/// Right and left eigenvectors of V for a simple eigenvalue μ (enclosure), from the
/// column / row of adj(V − μI) of largest midpoint mass. `None` if the chosen
/// column or row is not certified nonzero.
pub fn eigvecs(v: &Mat, mu: &Interval, prec: u32) -> Option<(Vec<Interval>, Vec<Interval>)> {
    let d = v.rows;
    let a = adjugate(&shifted(v, mu, prec), d, prec);
    let col = (0..d)
        .map(|j| (0..d).map(|i| a[i * d + j].clone()).collect::<Vec<_>>())
        .max_by(|x, y| mag_mid(x).total_cmp(&mag_mid(y)))?;
    let row = (0..d)
        .map(|i| a[i * d..(i + 1) * d].to_vec())
        .max_by(|x, y| mag_mid(x).total_cmp(&mag_mid(y)))?;
    if col.iter().all(Interval::contains_zero) || row.iter().all(Interval::contains_zero) {
        return None;
    }
    Some((normalise(col), normalise(row)))
}

/// (max |residual| upper end, whether every entry contains 0) of (V − μI)φ and φ*(V − μI).
pub fn residuals(
    v: &Mat,
    mu: &Interval,
    right: &[Interval],
    left: &[Interval],
) -> (f64, f64, bool) {
    let d = v.rows;
    let prec = mu.prec();
    let m = shifted(v, mu, prec);
    let mut ok = true;
    let (mut rr, mut lr) = (0.0f64, 0.0f64);
    for i in 0..d {
        let mut s = Interval::zero(prec);
        let mut t = Interval::zero(prec);
        for j in 0..d {
            s.add_assign(&(&m[i * d + j] * &right[j]));
            t.add_assign(&(&left[j] * &m[j * d + i]));
        }
        ok &= s.contains_zero() && t.contains_zero();
        rr = rr.max(s.mag().to_f64_round(rug::float::Round::Up));
        lr = lr.max(t.mag().to_f64_round(rug::float::Round::Up));
    }
    (rr, lr, ok)
}

/// Exact diagnosis of a repeated eigenvalue of largest modulus (d ≤ 3): returns the
/// repeated root r when |r| ≥ |μ| for every other root μ.
fn repeated_leading(p: &[Rational]) -> Option<Rational> {
    let g = poly_gcd(p, &derivative(p));
    let d = p.len() - 1;
    match (d, g.len() - 1) {
        (_, 0) => None,
        (2, 1) => Some(-g[0].clone()),
        (3, 2) => Some(&p[2] / Rational::from(-3)),
        (3, 1) => {
            let r = Rational::from(-&g[0]);
            let other = Rational::from(-&p[2]) - &r * Rational::from(2);
            (Rational::from(r.abs_ref()) >= Rational::from(other.abs_ref())).then_some(r)
        }
        _ => None,
    }
}

/// Certifies that V's eigenvalue of largest modulus is real, positive, simple and
/// strictly dominant (clusters.md `d:good`), and encloses λ1, φ1, φ1*. d ≤ 3.
pub fn leading(v: &Mat, prec: u32) -> Result<Leading, SpectrumError> {
    let d = v.rows;
    if d > 3 {
        return Err(SpectrumError::Dimension(d));
    }
    let p = char_poly(v);
    if d == 1 {
        let lam = p[0].clone() * Rational::from(-1);
        if lam <= 0 {
            return Err(SpectrumError::NotPositive(format!("λ1 = {lam}")));
        }
        let one = vec![Interval::one(prec)];
        return Ok(Leading {
            lambda: Interval::from_rational(prec, &lam),
            lo: lam.clone(),
            hi: lam,
            dp: Interval::one(prec),
            others: Vec::new(),
            right: one.clone(),
            left: one,
            right_residual: 0.0,
            left_residual: 0.0,
            residuals_contain_zero: true,
        });
    }
    if let Some(r) = repeated_leading(&p) {
        return Err(SpectrumError::NotSimple(format!(
            "the eigenvalue {} of largest modulus is repeated (exact gcd of p and p')",
            r
        )));
    }
    let est = roots_f64(&p);
    if d == 2 {
        // Exact discriminant of x² + p1 x + p0.
        let disc = Rational::from(&p[1] * &p[1]) - &p[0] * Rational::from(4);
        if disc < 0 {
            return Err(SpectrumError::NotReal(format!(
                "complex pair {:.6} ± {:.6}i (exact discriminant {} < 0)",
                est[0].re,
                est[0].im.abs(),
                disc
            )));
        }
        let tr = Rational::from(-&p[1]);
        // Real roots λ± with λ+ + λ− = tr: |λ−| < λ+ iff tr > 0.
        if tr < 0 {
            return Err(SpectrumError::NotPositive(format!(
                "tr V = {tr} < 0, so the eigenvalue of largest modulus is the negative root"
            )));
        }
        if tr == 0 {
            return Err(SpectrumError::NotDominant(format!(
                "tr V = 0, so the two real eigenvalues are ±{:.6}",
                est[0].re.abs()
            )));
        }
    }
    // The real root of largest modulus among the estimates.
    let g = est
        .iter()
        .filter(|z| z.im == 0.0)
        .max_by(|a, b| a.abs().total_cmp(&b.abs()))
        .map(|z| z.re)
        .ok_or_else(|| SpectrumError::Undecided("no real root estimate".into()))?;
    let (lo, hi, dp) = isolate(&p, g, prec).ok_or_else(|| {
        SpectrumError::Undecided(format!(
            "no isolating interval with a sign change and p' ≠ 0 near {g:.10} at {prec} bits"
        ))
    })?;
    let lam = Interval::from_rational(prec, &lo).hull(&Interval::from_rational(prec, &hi));
    let ip = |i: usize| Interval::from_rational(prec, &p[i]);
    let zero = Interval::zero(prec);
    let (others, dominant) = if d == 2 {
        // q(x) = x + (p1 + λ1): the other root is −(p1 + λ1).
        let mu = -(&ip(1) + &lam);
        let dom = mu.abs().lt(&lam);
        (vec![Other::Real(mu)], dom)
    } else {
        let b = &ip(2) + &lam;
        let c = &ip(1) + &(&lam * &b);
        let rho = lam.abs();
        let rho2 = &rho * &rho;
        let jury = c.abs().lt(&rho2).and((&b.abs() * &rho).lt(&(&rho2 + &c)));
        let disc = &(&b * &b) - &c.mul_i64(4);
        let half = -(&b.div_i64(2));
        let others = if disc.lt(&zero).is_true() {
            let m = c.sqrt();
            if jury.is_false() || m.gt(&rho).is_true() {
                return Err(SpectrumError::NotReal(format!(
                    "the complex pair has modulus {} > |real root| {}",
                    m.fmt_outward(10),
                    rho.fmt_outward(10)
                )));
            }
            vec![Other::Pair {
                re: half,
                modulus: m,
            }]
        } else if disc.gt(&zero).is_true() {
            let s = disc.sqrt().div_i64(2);
            vec![Other::Real(&half + &s), Other::Real(&half - &s)]
        } else {
            return Err(SpectrumError::Undecided(
                "the sign of the deflated discriminant is undecided".into(),
            ));
        };
        (others, jury)
    };
    match dominant {
        Certainty::True => {}
        Certainty::False => {
            return Err(SpectrumError::NotDominant(format!(
                "another eigenvalue has modulus ≥ |{}|",
                lam.fmt_outward(10)
            )))
        }
        Certainty::Unknown => {
            return Err(SpectrumError::Undecided(format!(
                "dominance undecided at {prec} bits"
            )))
        }
    }
    if !lam.gt(&zero).is_true() {
        return Err(SpectrumError::NotPositive(format!(
            "the eigenvalue of largest modulus is {}",
            lam.fmt_outward(10)
        )));
    }
    let (right, left) = eigvecs(v, &lam, prec)
        .ok_or_else(|| SpectrumError::Undecided("adj(V − λ1 I) not certified nonzero".into()))?;
    let (rr, lr, ok) = residuals(v, &lam, &right, &left);
    Ok(Leading {
        lo,
        hi,
        lambda: lam,
        dp,
        others,
        right,
        left,
        right_residual: rr,
        left_residual: lr,
        residuals_contain_zero: ok,
    })
}

/// ⟨Qφ1, Kφ1⟩ = φ1ᵀ (QᵀK) φ1 (enclosure); the good-triple condition is that it is > 0.
pub fn quad_form(qk: &Mat, phi: &[Interval]) -> Interval {
    let d = qk.rows;
    let prec = phi[0].prec();
    let m = qk.to_intervals(prec);
    let mut s = Interval::zero(prec);
    for i in 0..d {
        for j in 0..d {
            s.add_assign(&(&(&phi[i] * &m[i * d + j]) * &phi[j]));
        }
    }
    s
}

/// Why (QᵀK, V) is not certified a good triple (`d:good`).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GoodTripleError {
    /// A spectral hypothesis on V fails or is undecided.
    #[error("{0}")]
    Spectrum(#[from] SpectrumError),
    /// ⟨Qφ1, Kφ1⟩ > 0 fails; the enclosure of ⟨Qφ1, Kφ1⟩.
    #[error("good triple: ⟨Qφ1, Kφ1⟩ > 0 fails (⟨Qφ1, Kφ1⟩ = {0})")]
    NotPositive(String),
    /// ⟨Qφ1, Kφ1⟩ > 0 is undecided at this precision; the enclosure.
    #[error("good triple: could not certify ⟨Qφ1, Kφ1⟩ > 0 (enclosure {0})")]
    Undecided(String),
}

impl GoodTripleError {
    /// The spec field of the failing hypothesis: `v` for a spectral one, `q` for
    /// ⟨Qφ1, Kφ1⟩ > 0.
    pub fn field(&self) -> &'static str {
        match self {
            GoodTripleError::Spectrum(_) => "v",
            GoodTripleError::NotPositive(_) | GoodTripleError::Undecided(_) => "q",
        }
    }
}

/// Certifies the good-triple hypotheses (`d:good`) for (QᵀK, V): the spectral ones
/// via [`leading`], and ⟨Qφ1, Kφ1⟩ > 0. Error texts name the failing hypothesis.
pub fn good_triple(qk: &Mat, v: &Mat, prec: u32) -> Result<(Leading, Interval), GoodTripleError> {
    let lead = leading(v, prec)?;
    let g = quad_form(qk, &lead.right);
    match g.gt(&Interval::zero(prec)) {
        Certainty::True => Ok((lead, g)),
        Certainty::False => Err(GoodTripleError::NotPositive(g.fmt_outward(6))),
        Certainty::Unknown => Err(GoodTripleError::Undecided(g.fmt_outward(6))),
    }
}

/// The paranormal structure of a **diagonal** V (`d:goodmulti`): λ = max diag > 0,
/// ℱ = span{e_i : v_ii = λ}, 𝒢 = span of the other axes (both V-invariant, V|_ℱ = λ Id),
/// ρ(V|_𝒢) = max |v_ii| over 𝒢 < λ, and QᵀK symmetric positive definite — all exact.
#[derive(Clone, Debug)]
pub struct Paranormal {
    /// λ.
    pub lambda: Rational,
    /// Coordinates spanning ℱ.
    pub f_axes: Vec<usize>,
    /// Coordinates spanning 𝒢.
    pub g_axes: Vec<usize>,
    /// ρ(V|_𝒢) (0 if 𝒢 = {0}).
    pub rho_g: Rational,
}

/// Checks `d:goodmulti` exactly for diagonal V. Errors name the hypothesis and the
/// field (`"v"` or `"q"`).
pub fn paranormal(qk: &Mat, v: &Mat) -> Result<Paranormal, (&'static str, String)> {
    let d = v.rows;
    for i in 0..d {
        for j in 0..d {
            if i != j && *v.at(i, j) != 0 {
                return Err((
                    "v",
                    "paranormal: only diagonal V is supported (ℱ ⊕ 𝒢 from the coordinate axes)"
                        .into(),
                ));
            }
        }
    }
    if !qk.is_positive_definite() {
        return Err((
            "q",
            "paranormal: QᵀK ≻ 0 fails (QᵀK is not symmetric positive definite)".into(),
        ));
    }
    let lambda = (0..d).map(|i| v.at(i, i).clone()).max().expect("d ≥ 1");
    if lambda <= 0 {
        return Err((
            "v",
            format!("paranormal: λ = max diag V = {lambda} is not > 0"),
        ));
    }
    let f_axes: Vec<usize> = (0..d).filter(|&i| *v.at(i, i) == lambda).collect();
    let g_axes: Vec<usize> = (0..d).filter(|&i| *v.at(i, i) != lambda).collect();
    let rho_g = g_axes
        .iter()
        .map(|&i| Rational::from(v.at(i, i).abs_ref()))
        .max()
        .unwrap_or_default();
    if rho_g >= lambda {
        return Err((
            "v",
            format!("paranormal: ρ(V|_𝒢) = {rho_g} is not < λ = {lambda}"),
        ));
    }
    Ok(Paranormal {
        lambda,
        f_axes,
        g_axes,
        rho_g,
    })
}

/// ‖V‖_op = λ_max(VᵀV)^{1/2}, certified via [`leading`] on the exact VᵀV (needs its
/// largest eigenvalue simple; d ≤ 3).
pub fn op_norm(v: &Mat, prec: u32) -> Result<Interval, SpectrumError> {
    let g = v.transpose().mul(v);
    Ok(leading(&g, prec)?.lambda.sqrt())
}
