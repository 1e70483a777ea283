//! The flow's double-double tier: the same RK4 as [`super::flow`] (same right-hand
//! side, same centering, same work order, same propagation of e^{tV} by products with
//! e^{(h/2)V}) in double-double arithmetic ([`super::dd`], about 106 bits, f64's
//! exponent range), every product a vectorised dd matrix product
//! ([`super::ddmat`]). Like the MPFR flow it is **not** certified: only `supported`
//! verdicts may rest on it. Claims reach it only through the tier ladder
//! ([`super::tiered`]), where a dd run is the first rung and its figures are shown only
//! where the MPFR run at the spec's precision agrees with them.
//!
//! # One right-hand side
//!
//! With the rows as dd matrices (tokens u: n × d), `r = u_0` (centered) or 0,
//!
//! ```text
//! Δ = u − r,  B = Δ·Eᵀ,  Y = B + (r·Eᵀ),  A = Y·M,  L = A·Bᵀ,  P = softmax_rows(L),
//! Q = P·Δ − Δ (z)  or  r + P·Δ (x),   u̇ = (V·Qᵀ)ᵀ,
//! ```
//!
//! E = e^{tV} (z) or I (x, the products skipped), M = QᵀK (skipped when M = I
//! exactly). `u̇ = (V·Qᵀ)ᵀ` runs over V's rows so that its zeros are skipped (V is
//! sparse in the n = d = 128 run). The softmax uses the max shift,
//! `P_ij = e^{L_ij − m_i}·(1/Σ_l e^{L_il − m_i})`, sums in index order, dd [`exp`]
//! (0 below −600, so rows of P become sparse once the logits spread; the product P·Δ
//! skips the zeros). Each logit is one dd dot product of two rows
//! ([`DdMat::dot_rows`]).
//!
//! # The f64 pre-pass
//!
//! Logits whose exponential is flushed to 0 need not be computed. An f64 product
//! `ℓ̃ = A_hi·B_hiᵀ` ([`DdMat::product_hi`], n²d fused multiply-adds, cheap) bounds
//! them: with `L_ij` the dd logit that [`DdMat::dot_rows`] would return,
//!
//! ```text
//! |L_ij − ℓ̃_ij| ≤ (γ_d + 2u + u² + ε_dd)·Σ_k |A_hi,ik||B_hi,jk| ≤ (d + 3)u·‖A_hi,i‖₂‖B_hi,j‖₂ =: β_ij
//! ```
//!
//! (γ_d: the f64 sum; 2u + u²: the dropped low parts, `|x_lo| ≤ u|x_hi|`; ε_dd ≈ 4d²u²:
//! the dd dot product, [`super::ddmat`]; Cauchy–Schwarz). The code uses
//! `4(d + 4)u·ñ_i·ñ_j` with the f64 norms ñ (relative error ≤ (d/2 + 2)u), four times
//! the bound, and widens every comparison by 2u of its operands' magnitudes for its own
//! rounding. Then `m_i = max_j L_ij ≥ max_j (ℓ̃_ij − β_ij)`, and a logit with
//! `ℓ̃_ij + β_ij < max_l (ℓ̃_il − β_il) − 601` has `L_ij − m_i < −601`, so
//! `exp(L_ij − m_i)` is flushed to 0 whether computed or not; the maximum is among
//! the logits kept. So the pre-pass changes no bit of P (a test compares with
//! [`DdFlow::unfiltered`]); NaNs keep every logit. A row with a single logit kept is
//! the unit row (`exp(L − L) = 1` exactly, `1/1 = 1`): its logit is not computed at
//! all. Once the tokens spread, every row of the n = d = 128 run is such a row (each
//! token attends only to itself from t ≈ 2 on).
//!
//! # Accuracy
//!
//! Each dd operation has relative error ≤ 12u² (u = 2^−53, [`super::dd`]); each
//! product entry errs by at most ≈ (4K² + 12K)u² times the sum of the absolute terms
//! ([`super::ddmat`]), typically ≈ √K·u² of it. So a right-hand side is as accurate
//! as an MPFR one at ≈ 100 bits; the tests compare whole runs with the 128-bit MPFR
//! flow (`tests/it/dynamics_dd.rs`), and `bench/anchors/run_dynamics.sh` compares the
//! n = d = 128 run's z(T) with the 128-bit run's (8.8·10⁻³² relative, as close as MPFR
//! at 106 bits; bench/anchors/RESULTS.md). e^{(h/2)V} comes from [`expm_dd`].
//!
//! # Determinism
//!
//! Every entry is computed by a fixed sequence of IEEE operations (fused
//! multiply-adds where written, correctly rounded on every target): rows go to
//! threads whole, lanes of a vector never mix. Results are bit-identical for every
//! thread count and instruction set (AVX-512, AVX2, scalar).

use super::dd::{self, add, div, exp, mul, sub, Dd};
use super::ddexpm::expm_dd;
use super::ddmat::DdMat;
use super::dot::map_idx;
use super::flow::{fixed_steps, FlowError, FlowOptions, FlowResult, Frame, Vars};
use super::model::{Mat, System};
use pulp::{Simd, WithSimd};
use rug::{Float, Rational};

/// Precision (bits) of the MPFR floats a dd result is reported in (`hi + lo` rounded
/// to nearest; exact unless the two parts lie more than 75 bits apart).
pub const OUT_PREC: u32 = 128;

/// A prepared system for the dd tier.
pub struct DdFlow<'s> {
    sys: &'s System,
    opts: FlowOptions,
    d: usize,
    v: DdMat,
    m: Option<DdMat>,
    filter: bool,
}

/// One dd right-hand side: u̇ (n × d) and P (n × n).
#[derive(Clone, Debug)]
pub struct DdRhs {
    /// u̇.
    pub deriv: DdMat,
    /// P.
    pub p: DdMat,
}

fn dd_mat(m: &Mat) -> DdMat {
    DdMat::from_fn(m.rows, m.cols, |r, c| {
        Dd::from_rational(&m.data[r * m.cols + c])
    })
}

/// A dd matrix as MPFR floats (row-major, [`OUT_PREC`] bits).
pub fn to_floats(m: &DdMat) -> Vec<Float> {
    let mut out = Vec::with_capacity(m.rows() * m.cols());
    for r in 0..m.rows() {
        for c in 0..m.cols() {
            out.push(m.get(r, c).to_float(OUT_PREC));
        }
    }
    out
}

impl<'s> DdFlow<'s> {
    /// Prepares `sys`; `opts.prec` is ignored (the tier is ≈ 106 bits), `opts.vars`
    /// and `opts.centered` are honoured.
    pub fn new(sys: &'s System, opts: FlowOptions) -> DdFlow<'s> {
        let m = if sys.qk == Mat::identity(sys.d) {
            None
        } else {
            Some(dd_mat(&sys.qk))
        };
        DdFlow {
            sys,
            d: sys.d,
            v: dd_mat(&sys.v),
            m,
            opts,
            filter: true,
        }
    }

    /// Computes every logit in dd, without the f64 pre-pass that skips the ones whose
    /// exponential is flushed to 0 (module docs): for tests, which check that the
    /// pre-pass changes no bit.
    pub fn unfiltered(mut self) -> DdFlow<'s> {
        self.filter = false;
        self
    }

    /// The initial state (n × d) from exact tokens (each rounded to nearest dd).
    pub fn initial_state(&self, x0: &Mat) -> Result<DdMat, FlowError> {
        if x0.cols != self.d || x0.rows == 0 {
            return Err(FlowError::Shape {
                rows: x0.rows,
                cols: x0.cols,
                d: self.d,
            });
        }
        Ok(dd_mat(x0))
    }

    /// `(e^{tV})ᵀ` in dd for z ([`expm_dd`]); `None` for x.
    pub fn prop_at(&self, t: &Rational) -> Option<DdMat> {
        match self.opts.vars {
            Vars::X => None,
            Vars::Z => Some(expm_dd(&self.sys.v, t).transpose()),
        }
    }

    /// One right-hand side with propagator `et = (e^{tV})ᵀ` (z) or none (x).
    pub fn rhs(&self, et: Option<&DdMat>, u: &DdMat) -> DdRhs {
        let (n, d) = (u.rows(), self.d);
        let centered = self.opts.centered;
        let r: Vec<Dd> = (0..d)
            .map(|k| if centered { u.get(0, k) } else { Dd::ZERO })
            .collect();
        let delta = if centered {
            DdMat::from_fn(n, d, |j, k| sub(u.get(j, k), r[k]))
        } else {
            u.clone()
        };
        let (b, y) = match et {
            None => (delta.clone(), u.clone()),
            Some(et) => {
                let b = delta.product(et);
                let rm = DdMat::from_fn(1, d, |_, k| r[k]);
                let er = rm.product(et);
                let y = DdMat::from_fn(n, d, |j, k| add(b.get(j, k), er.get(0, k)));
                (b, y)
            }
        };
        let a = match &self.m {
            None => y,
            Some(m) => y.product(m),
        };
        let bt = b.transpose();
        let lf = a.product_hi(&bt);
        let (na, nb) = (row_norms(&a), row_norms(&b));
        let stride = bt.stride();
        let filter = self.filter;
        let rows = map_idx(n, 64 * n, |i| {
            pulp::Arch::new().dispatch(SoftmaxRow {
                a: &a,
                b: &b,
                i,
                lf: &lf[i * stride..i * stride + n],
                na: na[i],
                nb: &nb,
                filter,
            })
        });
        let p = DdMat::from_fn(n, n, |i, j| rows[i][j]);
        let w = p.product(&delta);
        let q = DdMat::from_fn(n, d, |i, k| match self.opts.vars {
            Vars::Z => sub(w.get(i, k), delta.get(i, k)),
            Vars::X => add(r[k], w.get(i, k)),
        });
        let deriv = self.v.product(&q.transpose()).transpose();
        DdRhs { deriv, p }
    }

    /// RK4 with fixed exact step `h` from 0 to `t_end`, end state only (no observer:
    /// nothing is converted to MPFR until the end).
    pub fn rk4_end(
        &self,
        x0: &Mat,
        t_end: &Rational,
        h: &Rational,
    ) -> Result<FlowResult, FlowError> {
        self.rk4_impl(x0, t_end, h, None::<fn(&Frame)>)
    }

    /// RK4 as [`super::flow::Flow::rk4`]: `observer` sees every step (state, P and
    /// e^{tV} converted to MPFR floats at [`OUT_PREC`] bits, which costs O(n² + nd)
    /// conversions per step).
    pub fn rk4(
        &self,
        x0: &Mat,
        t_end: &Rational,
        h: &Rational,
        observer: impl FnMut(&Frame),
    ) -> Result<FlowResult, FlowError> {
        self.rk4_impl(x0, t_end, h, Some(observer))
    }

    fn rk4_impl(
        &self,
        x0: &Mat,
        t_end: &Rational,
        h: &Rational,
        mut observer: Option<impl FnMut(&Frame)>,
    ) -> Result<FlowResult, FlowError> {
        let d = self.d;
        let mut u = self.initial_state(x0)?;
        let n = x0.rows;
        let steps = fixed_steps(t_end, h)?;
        let half = Rational::from(h / 2);
        let (hf, hf2, hf6) = (
            Dd::from_rational(h),
            Dd::from_rational(&half),
            Dd::from_rational(&Rational::from(h / 6)),
        );
        // (e^{(h/2)V})ᵀ: Eᵀ_{t+h/2} = (e^{(h/2)V})ᵀ · Eᵀ_t
        let eh_t = match self.opts.vars {
            Vars::Z => Some(expm_dd(&self.sys.v, &half).transpose()),
            Vars::X => None,
        };
        let mut prop = self.prop_at(&Rational::new());
        let mut t_exact = Rational::new();
        let mut evals = 0usize;
        let nf = |t: &Rational| FlowError::NonFinite {
            t: Float::with_val(24, t).to_string_radix(10, Some(8)),
        };
        let mut show = |step: usize, t: &Rational, u: &DdMat, p: &DdMat, prop: &Option<DdMat>| {
            if let Some(obs) = observer.as_mut() {
                let tf = Float::with_val(OUT_PREC, t);
                let etv = prop.as_ref().map(|e| to_floats(&e.transpose()));
                obs(&Frame {
                    step,
                    t: &tf,
                    t_exact: t,
                    n,
                    d,
                    state: &to_floats(u),
                    p: &to_floats(p),
                    etv: etv.as_deref(),
                });
            }
        };
        for step in 0..steps {
            let k1 = self.rhs(prop.as_ref(), &u);
            show(step, &t_exact, &u, &k1.p, &prop);
            let mid = match (&prop, &eh_t) {
                (Some(p), Some(eh)) => Some(eh.product(p)),
                _ => None,
            };
            let u2 = axpy(&u, hf2, &k1.deriv);
            let k2 = self.rhs(mid.as_ref(), &u2);
            let u3 = axpy(&u, hf2, &k2.deriv);
            let k3 = self.rhs(mid.as_ref(), &u3);
            let next = match (&mid, &eh_t) {
                (Some(p), Some(eh)) => Some(eh.product(p)),
                _ => None,
            };
            let u4 = axpy(&u, hf, &k3.deriv);
            let k4 = self.rhs(next.as_ref(), &u4);
            evals += 4;
            u = DdMat::from_fn(n, d, |i, k| {
                let s = add(k2.deriv.get(i, k), k3.deriv.get(i, k)).scale(2.0);
                let s = add(add(s, k1.deriv.get(i, k)), k4.deriv.get(i, k));
                add(mul(s, hf6), u.get(i, k))
            });
            prop = next;
            t_exact += h;
            if !u.is_finite() {
                return Err(nf(&t_exact));
            }
        }
        let last = self.rhs(prop.as_ref(), &u);
        if !last.p.is_finite() {
            return Err(nf(&t_exact));
        }
        show(steps, &t_exact, &u, &last.p, &prop);
        Ok(FlowResult {
            n,
            d,
            prec: 106,
            vars: self.opts.vars,
            t: t_exact,
            state: to_floats(&u),
            p: to_floats(&last.p),
            etv: prop.map(|e| to_floats(&e.transpose())),
            steps,
            rejected: 0,
            rhs_evals: evals,
            err_est: None,
        })
    }
}

/// `u + c·k` entrywise.
fn axpy(u: &DdMat, c: Dd, k: &DdMat) -> DdMat {
    DdMat::from_fn(u.rows(), u.cols(), |i, j| {
        add(u.get(i, j), mul(c, k.get(i, j)))
    })
}

/// RK4 in the dd tier: [`DdFlow::new`] then [`DdFlow::rk4`].
pub fn rk4(
    sys: &System,
    x0: &Mat,
    t_end: &Rational,
    h: &Rational,
    opts: &FlowOptions,
    observer: impl FnMut(&Frame),
) -> Result<FlowResult, FlowError> {
    DdFlow::new(sys, opts.clone()).rk4(x0, t_end, h, observer)
}

/// Euclidean norms of the rows' leading parts (f64, k ascending).
fn row_norms(m: &DdMat) -> Vec<f64> {
    (0..m.rows())
        .map(|i| {
            m.row_hi(i)
                .iter()
                .fold(0.0f64, |s, &x| x.mul_add(x, s))
                .sqrt()
        })
        .collect()
}

/// Row i of P = softmax(A·Bᵀ) with the max shift (module docs), the logits that can
/// matter found by the f64 pre-pass.
struct SoftmaxRow<'a> {
    a: &'a DdMat,
    b: &'a DdMat,
    i: usize,
    /// The f64 logits of row i.
    lf: &'a [f64],
    /// ‖A_hi[i]‖₂ and ‖B_hi[j]‖₂ (f64).
    na: f64,
    nb: &'a [f64],
    filter: bool,
}

impl WithSimd for SoftmaxRow<'_> {
    type Output = Vec<Dd>;
    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) -> Vec<Dd> {
        let SoftmaxRow {
            a,
            b,
            i,
            lf,
            na,
            nb,
            filter,
        } = self;
        let n = lf.len();
        // |L_ij − lf_ij| ≤ β_ij (module docs), widened by the rounding of this test
        let c = 4.0 * (a.cols() as f64 + 4.0) * dd::U;
        let slack = 2.0 * dd::U;
        let beta = |j: usize| c * na * nb[j];
        let mut mlow = f64::NEG_INFINITY;
        for (j, &l) in lf.iter().enumerate() {
            let bj = beta(j);
            mlow = mlow.max(l - bj - slack * (l.abs() + bj));
        }
        let cut = -dd::EXP_FLUSH + 1.0;
        let thr = mlow - cut - slack * (mlow.abs() + cut);
        let cand: Vec<usize> = (0..n)
            .filter(|&j| {
                let (l, bj) = (lf[j], beta(j));
                let up = l + bj + slack * (l.abs() + bj);
                // kept unless provably below the threshold (NaN keeps it)
                !filter || up.partial_cmp(&thr) != Some(std::cmp::Ordering::Less)
            })
            .collect();
        let mut logits = vec![Dd::ZERO; n];
        if cand.len() == 1 {
            // the unit row: exp(L − L) = 1 exactly and 1/1 = 1, whatever L
            logits[cand[0]] = Dd::ONE;
            return logits;
        }
        for &j in &cand {
            logits[j] = a.dot_rows(i, b, j);
        }
        let mut m = logits[cand[0]];
        for &j in &cand[1..] {
            if logits[j].gt(m) {
                m = logits[j];
            }
        }
        let mut e = vec![Dd::ZERO; n];
        for &j in &cand {
            e[j] = exp(sub(logits[j], m));
        }
        let mut s = Dd::ZERO;
        for v in &e {
            if v.hi != 0.0 {
                s = add(s, *v);
            }
        }
        let inv = div(Dd::ONE, s);
        for v in &mut e {
            if v.hi != 0.0 {
                *v = mul(*v, inv);
            }
        }
        e
    }
}
