//! (F) The flow of self-attention dynamics, integrated in MPFR point arithmetic
//! (clusters.md §1–§2): RK4 with a fixed exact step and an adaptive Dormand–Prince
//! 5(4) pair, in the original variables x or the rescaled variables z = e^{−tV}x.
//!
//! ```text
//! x:  ẋ_i = Σ_j P_ij V x_j,            P_ij = softmax_j (x_iᵀ M x_j),
//! z:  ż_i = Σ_j P_ij V (z_j − z_i),    P_ij = softmax_j ((e^{tV}z_i)ᵀ M e^{tV}z_j),   M = QᵀK.
//! ```
//!
//! Inputs are exact ([`System`], tokens as a rational [`Mat`], step and end time as
//! [`Rational`]); every number in the computed path is an MPFR float at the requested
//! precision or an exact integer (no `f64`). The flow is **not** certified: only
//! `supported` verdicts may rest on it.
//!
//! # One right-hand side
//!
//! With a reference token `r` (`r = u_0` when [`FlowOptions::centered`], else 0) and
//! `Δ_j = u_j − r` (u = x or z), softmax's shift invariance and `Σ_j P_ij = 1` give
//!
//! ```text
//! P_ij = softmax_j ⟨a_i, b_j⟩,  b_j = E Δ_j,  a_i = M (E r + b_i),     E = e^{tV} (z) or I (x),
//! ż_i = V (Σ_j P_ij Δ_j − Δ_i),        ẋ_i = V (r + Σ_j P_ij Δ_j).
//! ```
//!
//! Centering costs O(nd) and makes logit *differences* and `z_j − z_i` accurate to
//! the precision relative to the configuration's diameter instead of its distance
//! from 0 (clustered tokens far from the origin would otherwise lose their
//! differences to cancellation). `centered = false` is the textbook evaluation
//! (logits ⟨a_i, y_j⟩ with y = E u): use it to reproduce what a plain
//! implementation sees, e.g. ties of logits at 53 bits.
//!
//! The work is ordered as the n = d = 128 run needs it: `b_j = EΔ_j` (n d²),
//! `a_i = M y_i` (n d², skipped when M = I exactly), logits (n² d), `Σ_j P_ij Δ_j`
//! (n² d), `V(…)` (n d²), every product a fast block dot product
//! ([`super::dot`], exact limb arithmetic, one rounding). The softmax is evaluated
//! with the max shift, `P_ij = e^{ℓ_ij − m_i} / Σ_l e^{ℓ_il − m_i}`, `m_i = max_l ℓ_il`;
//! the exponentials use the fast fixed-point [`crate::fast::exp_fixed`] (relative error
//! ≤ 2^−122) when `prec ≤ 128` and its argument is in range, else MPFR's correctly
//! rounded exp (for n ≤ 4, two nearby arguments of different rows from one `exp`:
//! the same bits, see `eval`). Every output row is computed independently, in a fixed order, so
//! results are bit-identical for any rayon thread count.
//!
//! # Time stepping
//!
//! e^{tV} is never recomputed per stage: RK4 multiplies by e^{(h/2)V} (computed
//! once by [`expm`]) to reach t + h/2 and t + h; the adaptive pair multiplies e^{tV}
//! by e^{c_k hV} for its stage nodes. The propagation error grows linearly with the
//! number of steps (each product is accurate to ≈ 2^{−prec−48} relative, as E is kept
//! at prec + 16 bits).

use super::dot::{
    dot_into, map_idx, mat_mul_blocks, mat_mul_blocks_into, BlockRows, Layout, NonFinite, Scratch,
};
use super::expm::expm;
use super::model::{Mat, System};
use rug::float::Round;
use rug::ops::{AssignRound, Pow};
use rug::{Assign, Float, Rational};

mod eval;
mod near;
pub use eval::{softmax_point, softmax_rows_point, EvalWork};
pub use near::{exp_two_near, NearWork};

/// Which variables are integrated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vars {
    /// The original tokens x (grow like e^{λ1 t}).
    X,
    /// The rescaled tokens z = e^{−tV}x (the clustering theorems are about z).
    Z,
}

/// Options shared by both integrators.
#[derive(Clone, Debug)]
pub struct FlowOptions {
    /// MPFR precision (bits) of the state and of every operation.
    pub prec: u32,
    /// Integrate x or z.
    pub vars: Vars,
    /// Evaluate logits and differences relative to token 0 (module docs); default true.
    pub centered: bool,
}

impl FlowOptions {
    /// `prec` bits, the given variables, centered evaluation.
    pub fn new(prec: u32, vars: Vars) -> FlowOptions {
        FlowOptions {
            prec,
            vars,
            centered: true,
        }
    }
}

/// Tolerances of the adaptive pair (exact inputs).
#[derive(Clone, Debug)]
pub struct Tolerances {
    /// Relative tolerance (> 0).
    pub rtol: Rational,
    /// Absolute tolerance (> 0).
    pub atol: Rational,
    /// Initial step (default: min(T, 1/64)).
    pub h0: Option<Rational>,
    /// Maximum number of attempted steps (default 1,000,000).
    pub max_steps: usize,
}

impl Tolerances {
    /// `rtol`, `atol`, default initial step and step limit.
    pub fn new(rtol: Rational, atol: Rational) -> Tolerances {
        Tolerances {
            rtol,
            atol,
            h0: None,
            max_steps: 1_000_000,
        }
    }
}

/// Errors of the integrators.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FlowError {
    /// The tokens do not match the system's dimension.
    #[error("initial tokens are {rows}×{cols}; expected n×{d} with n ≥ 1")]
    Shape {
        /// Rows given.
        rows: usize,
        /// Columns given.
        cols: usize,
        /// The system's d.
        d: usize,
    },
    /// The step is not positive.
    #[error("the step h must be positive (got {h})")]
    NonPositiveStep {
        /// The step.
        h: String,
    },
    /// The end time is negative.
    #[error("the end time T must be ≥ 0 (got {t})")]
    NegativeTime {
        /// The end time.
        t: String,
    },
    /// T/h is not an integer.
    #[error("T = {t} is not an integer multiple of h = {h}")]
    StepDoesNotDivide {
        /// End time.
        t: String,
        /// Step.
        h: String,
    },
    /// Tolerances must be positive.
    #[error("rtol and atol must be positive")]
    BadTolerance,
    /// Precision out of range.
    #[error("precision {prec} is outside 16..=65536 bits")]
    Precision {
        /// The precision.
        prec: u32,
    },
    /// The state overflowed or became NaN.
    #[error("the state became non-finite at t ≈ {t}")]
    NonFinite {
        /// Time (decimal, approximate).
        t: String,
    },
    /// The adaptive step fell below 2^−60 T.
    #[error("adaptive step size underflow at t ≈ {t}")]
    StepUnderflow {
        /// Time (decimal, approximate).
        t: String,
    },
    /// The adaptive integrator exceeded its step limit.
    #[error("more than {max} steps")]
    TooManySteps {
        /// The limit.
        max: usize,
    },
}

/// The number of fixed steps h from 0 to `t_end`: h > 0, T ≥ 0 and T/h an integer that
/// fits a `usize`.
pub(crate) fn fixed_steps(t_end: &Rational, h: &Rational) -> Result<usize, FlowError> {
    if *h <= 0 {
        return Err(FlowError::NonPositiveStep { h: h.to_string() });
    }
    if *t_end < 0 {
        return Err(FlowError::NegativeTime {
            t: t_end.to_string(),
        });
    }
    let ratio = Rational::from(t_end / h);
    if *ratio.denom() != 1 {
        return Err(FlowError::StepDoesNotDivide {
            t: t_end.to_string(),
            h: h.to_string(),
        });
    }
    ratio
        .numer()
        .to_usize()
        .ok_or(FlowError::TooManySteps { max: usize::MAX })
}

/// What an observer sees after each step (and at t = 0).
#[derive(Debug)]
pub struct Frame<'a> {
    /// Step index (0 = initial state).
    pub step: usize,
    /// Time, rounded to the working precision.
    pub t: &'a Float,
    /// Time, exact.
    pub t_exact: &'a Rational,
    /// Number of tokens.
    pub n: usize,
    /// Dimension.
    pub d: usize,
    /// The state in the integrated variables, n × d row-major.
    pub state: &'a [Float],
    /// The attention matrix P at this time and state, n × n row-major.
    pub p: &'a [Float],
    /// e^{tV} (d × d, row-major, prec + 16 bits) when integrating z; `None` for x.
    pub etv: Option<&'a [Float]>,
}

/// The end state of an integration.
#[derive(Clone, Debug)]
pub struct FlowResult {
    /// Number of tokens.
    pub n: usize,
    /// Dimension.
    pub d: usize,
    /// Precision (bits).
    pub prec: u32,
    /// Integrated variables.
    pub vars: Vars,
    /// Final time, exact.
    pub t: Rational,
    /// Final state in the integrated variables, n × d row-major.
    pub state: Vec<Float>,
    /// P at the final time, n × n row-major.
    pub p: Vec<Float>,
    /// e^{TV} (d × d) when integrating z.
    pub etv: Option<Vec<Float>>,
    /// Accepted steps.
    pub steps: usize,
    /// Rejected steps (adaptive only).
    pub rejected: usize,
    /// Right-hand-side evaluations.
    pub rhs_evals: usize,
    /// Adaptive only: Σ over accepted steps of the local error estimate
    /// ‖u₅ − u₄‖_∞ (max over all coordinates), in the state's units. A heuristic
    /// global error estimate (no stability factor), usable as "the integrator's
    /// error estimate"; `None` for RK4.
    pub err_est: Option<Float>,
}

impl FlowResult {
    /// The final x (n × d): the state, or e^{TV} z_i for each token.
    pub fn x(&self) -> Vec<Float> {
        match &self.etv {
            None => self.state.clone(),
            Some(e) => apply_rows(e, &self.state, self.d, self.prec),
        }
    }
    /// The final z (n × d): the state, or e^{−TV} x_i (a fresh [`expm`]).
    pub fn z(&self, sys: &System) -> Vec<Float> {
        match self.vars {
            Vars::Z => self.state.clone(),
            Vars::X => {
                let e = expm(&sys.v, &Rational::from(-&self.t), self.prec + 16);
                apply_rows(&e, &self.state, self.d, self.prec)
            }
        }
    }
    /// Entry (i, j) of the final P.
    pub fn p_at(&self, i: usize, j: usize) -> &Float {
        &self.p[i * self.n + j]
    }
    /// Coordinate k of token i of the final state.
    pub fn state_at(&self, i: usize, k: usize) -> &Float {
        &self.state[i * self.d + k]
    }
}

/// Rows `E u_i` for a d × d matrix E (floats) and n × d rows u, fast dot products.
fn apply_rows(e: &[Float], u: &[Float], d: usize, prec: u32) -> Vec<Float> {
    let n = u.len() / d;
    let eb = BlockRows::from_floats(e, d, d, prec);
    let ub = BlockRows::from_floats(u, n, d, prec);
    match (eb, ub) {
        (Ok(eb), Ok(ub)) => {
            let mut scr = Scratch::new();
            let mut out = vec![Float::new(prec); n * d];
            for i in 0..n {
                for r in 0..d {
                    dot_into(&mut out[i * d + r], &eb, r, &ub, i, &mut scr);
                }
            }
            out
        }
        _ => vec![Float::with_val(prec, rug::float::Special::Nan); n * d],
    }
}

/// e^{tV} (d × d floats at prec + 16 bits) plus its rows in block form, as the
/// integrators carry it from step to step.
pub struct Propagator {
    floats: Vec<Float>,
    rows: BlockRows,
}

impl Propagator {
    fn new(floats: Vec<Float>, d: usize, prec: u32) -> Result<Propagator, NonFinite> {
        let rows = BlockRows::from_floats(&floats, d, d, prec)?;
        Ok(Propagator { floats, rows })
    }
    /// `self · m` (both d × d) — the propagation e^{(t+s)V} = e^{tV} e^{sV}.
    fn times(&self, m: &[Float], d: usize, prec: u32) -> Result<Propagator, NonFinite> {
        let f = super::dot::mat_mul_to(&self.floats, m, d, d, d, prec, prec + 16)?;
        Propagator::new(f, d, prec)
    }
    /// [`Propagator::times`] with `m` already converted (`mt`, the rows of mᵀ by
    /// [`BlockRows::from_floats_transposed`] at `prec`): the same product, bit for bit
    /// (the left factor's conversion is `self.rows`), for a factor used at every step.
    fn times_blocks(&self, mt: &BlockRows, d: usize, prec: u32) -> Result<Propagator, NonFinite> {
        Propagator::new(mat_mul_blocks(&self.rows, mt, prec + 16), d, prec)
    }
    /// No floats, no rows: a holder for [`Propagator::times_blocks_into`].
    fn empty() -> Propagator {
        Propagator {
            floats: Vec::new(),
            rows: BlockRows::empty(),
        }
    }
    /// [`Propagator::times_blocks`] into `out`'s buffers: the same floats (each entry one
    /// [`dot_into`] at prec + 16 bits, as `mat_mul_blocks` computes it) and the same
    /// rows (`assign_floats` is `from_floats` bit for bit), without allocating once
    /// `out` has held a d × d propagator. Large d keeps the parallel product.
    fn times_blocks_into(
        &self,
        mt: &BlockRows,
        d: usize,
        prec: u32,
        out: &mut Propagator,
        scr: &mut Scratch,
    ) -> Result<(), NonFinite> {
        if d * d * d >= super::dot::SEQUENTIAL_WORK {
            *out = self.times_blocks(mt, d, prec)?;
            return Ok(());
        }
        mat_mul_blocks_into(&self.rows, mt, prec + 16, &mut out.floats, scr);
        out.rows.assign_floats(&out.floats, d, d, prec)
    }
}

/// A prepared system: V and M = QᵀK converted once, ready for many evaluations.
pub struct Flow<'s> {
    sys: &'s System,
    opts: FlowOptions,
    d: usize,
    v_rows: BlockRows,
    /// Rows of Mᵀ; None when M = I exactly (the product is skipped).
    m_rows: Option<BlockRows>,
}

/// One evaluation of the right-hand side.
#[derive(Clone, Debug, Default)]
pub struct Rhs {
    /// u̇ (n × d), empty when only P was requested.
    pub deriv: Vec<Float>,
    /// P (n × n).
    pub p: Vec<Float>,
}

impl<'s> Flow<'s> {
    /// Prepares `sys` for integration with `opts`.
    pub fn new(sys: &'s System, opts: FlowOptions) -> Result<Flow<'s>, FlowError> {
        if !(16..=65536).contains(&opts.prec) {
            return Err(FlowError::Precision { prec: opts.prec });
        }
        let p = opts.prec;
        let d = sys.d;
        let conv =
            |m: &Mat| -> Vec<Float> { m.data.iter().map(|q| Float::with_val(p + 16, q)).collect() };
        let v_rows = BlockRows::from_floats_layout(&conv(&sys.v), d, d, p, Layout::Sparse)
            .expect("exact input is finite");
        let m_rows = if sys.qk == Mat::identity(d) {
            None
        } else {
            // logits x_iᵀ M x_j = ⟨Mᵀ x_i, x_j⟩: store the rows of Mᵀ
            Some(
                BlockRows::from_floats(&conv(&sys.qk.transpose()), d, d, p)
                    .expect("exact input is finite"),
            )
        };
        Ok(Flow {
            sys,
            opts,
            d,
            v_rows,
            m_rows,
        })
    }

    /// The options.
    pub fn options(&self) -> &FlowOptions {
        &self.opts
    }

    /// The initial state (n × d floats at the working precision) from exact tokens.
    pub fn initial_state(&self, x0: &Mat) -> Result<Vec<Float>, FlowError> {
        if x0.cols != self.d || x0.rows == 0 {
            return Err(FlowError::Shape {
                rows: x0.rows,
                cols: x0.cols,
                d: self.d,
            });
        }
        Ok(x0
            .data
            .iter()
            .map(|q| Float::with_val(self.opts.prec, q))
            .collect())
    }

    /// One right-hand side at exact time `t` (a fresh e^{tV} for z; for benches and
    /// tests — the integrators propagate e^{tV} instead).
    pub fn rhs_at(&self, t: &Rational, state: &[Float]) -> Result<Rhs, FlowError> {
        let prop = self.prop_at(t)?;
        self.eval(prop.as_ref(), state, true)
            .map_err(|_| self.nonfinite_q(t))
    }

    /// One right-hand side with a given propagator (`None` for x; for z, from
    /// [`Flow::prop_at`]): what the integrators evaluate at every stage.
    pub fn rhs(&self, prop: Option<&Propagator>, state: &[Float]) -> Result<Rhs, FlowError> {
        self.eval(prop, state, true)
            .map_err(|_| FlowError::NonFinite {
                t: "(single evaluation)".into(),
            })
    }

    /// The propagator e^{tV} at exact time `t` for z (a fresh [`expm`]); `None` for x.
    pub fn prop_at(&self, t: &Rational) -> Result<Option<Propagator>, FlowError> {
        match self.opts.vars {
            Vars::X => Ok(None),
            Vars::Z => Propagator::new(
                expm(&self.sys.v, t, self.opts.prec + 16),
                self.d,
                self.opts.prec,
            )
            .map(Some)
            .map_err(|_| self.nonfinite_q(t)),
        }
    }

    fn nonfinite_q(&self, t: &Rational) -> FlowError {
        FlowError::NonFinite {
            t: Float::with_val(24, t).to_string_radix(10, Some(8)),
        }
    }

    /// The right-hand side and P for state `u` with propagator `prop` (z) or none (x),
    /// with fresh buffers ([`Flow::eval_into`] for an integration's many calls).
    fn eval(
        &self,
        prop: Option<&Propagator>,
        u: &[Float],
        want_deriv: bool,
    ) -> Result<Rhs, NonFinite> {
        let mut out = Rhs::default();
        self.eval_into(prop, u, want_deriv, &mut EvalWork::default(), &mut out)?;
        Ok(out)
    }

    /// RK4 with fixed exact step `h` from 0 to `t_end` (an integer multiple of h),
    /// P recomputed at every stage. `observer` sees the state and P at every step
    /// (step 0 = initial state, last = final state).
    pub fn rk4(
        &self,
        x0: &Mat,
        t_end: &Rational,
        h: &Rational,
        mut observer: impl FnMut(&Frame),
    ) -> Result<FlowResult, FlowError> {
        let (d, prec) = (self.d, self.opts.prec);
        let mut u = self.initial_state(x0)?;
        let n = x0.rows;
        let steps = fixed_steps(t_end, h)?;
        let half = Rational::from(h / 2);
        let hf = Float::with_val(prec, h);
        let hf2 = Float::with_val(prec, &half);
        let hf6 = Float::with_val(prec, Rational::from(h / 6));
        // e^{(h/2)V}, converted once (the right factor of every propagation)
        let e_half = match self.opts.vars {
            Vars::Z => Some(
                BlockRows::from_floats_transposed(&expm(&self.sys.v, &half, prec + 16), d, d, prec)
                    .map_err(|_| self.nonfinite_q(&Rational::new()))?,
            ),
            Vars::X => None,
        };
        let mut prop = self.prop_at(&Rational::new())?;
        let mut t_exact = Rational::new();
        let mut evals = 0usize;
        let nf = |t: &Rational| self.nonfinite_q(t);
        // buffers reused by every step (the same operations as fresh ones, bit for bit)
        let mut ws = EvalWork::default();
        let (mut k1, mut k2, mut k3, mut k4) = (
            Rhs::default(),
            Rhs::default(),
            Rhs::default(),
            Rhs::default(),
        );
        let mut us: Vec<Float> = Vec::new();
        let mut tmp = Float::new(prec);
        // the stage propagators e^{(t+h/2)V}, e^{(t+h)V}, refilled at every step
        let (mut mid_buf, mut next_buf) = (Propagator::empty(), Propagator::empty());
        let mut prop_scr = Scratch::new();
        for step in 0..steps {
            let tf = Float::with_val(prec, &t_exact);
            self.eval_into(prop.as_ref(), &u, true, &mut ws, &mut k1)
                .map_err(|_| nf(&t_exact))?;
            observer(&Frame {
                step,
                t: &tf,
                t_exact: &t_exact,
                n,
                d,
                state: &u,
                p: &k1.p,
                etv: prop.as_ref().map(|p| p.floats.as_slice()),
            });
            let mid = match (&prop, &e_half) {
                (Some(p), Some(eh)) => {
                    p.times_blocks_into(eh, d, prec, &mut mid_buf, &mut prop_scr)
                        .map_err(|_| nf(&t_exact))?;
                    Some(&mid_buf)
                }
                _ => None,
            };
            axpy_into(&mut us, &u, &hf2, &k1.deriv, prec);
            self.eval_into(mid, &us, true, &mut ws, &mut k2)
                .map_err(|_| nf(&t_exact))?;
            axpy_into(&mut us, &u, &hf2, &k2.deriv, prec);
            self.eval_into(mid, &us, true, &mut ws, &mut k3)
                .map_err(|_| nf(&t_exact))?;
            let has_next = match (mid, &e_half) {
                (Some(p), Some(eh)) => {
                    p.times_blocks_into(eh, d, prec, &mut next_buf, &mut prop_scr)
                        .map_err(|_| nf(&t_exact))?;
                    true
                }
                _ => false,
            };
            axpy_into(&mut us, &u, &hf, &k3.deriv, prec);
            self.eval_into(has_next.then_some(&next_buf), &us, true, &mut ws, &mut k4)
                .map_err(|_| nf(&t_exact))?;
            evals += 4;
            // u += h/6 (k1 + 2k2 + 2k3 + k4): s = ((k2 + k3)·2 + k1 + k4)·(h/6), then
            // u + s (one rounding, the same sum either way round)
            for (idx, ui) in u.iter_mut().enumerate() {
                tmp.assign(&k2.deriv[idx] + &k3.deriv[idx]);
                tmp *= 2;
                tmp += &k1.deriv[idx];
                tmp += &k4.deriv[idx];
                tmp *= &hf6;
                *ui += &tmp;
            }
            // e^{(t+h)V} becomes the current propagator; the old one's buffers are the
            // next step's holder
            if let (true, Some(p)) = (has_next, prop.as_mut()) {
                std::mem::swap(p, &mut next_buf);
            }
            t_exact += h;
            if u.iter().any(|x| !x.is_finite()) {
                return Err(nf(&t_exact));
            }
        }
        self.eval_into(prop.as_ref(), &u, false, &mut ws, &mut k1)
            .map_err(|_| nf(&t_exact))?;
        let tf = Float::with_val(prec, &t_exact);
        observer(&Frame {
            step: steps,
            t: &tf,
            t_exact: &t_exact,
            n,
            d,
            state: &u,
            p: &k1.p,
            etv: prop.as_ref().map(|p| p.floats.as_slice()),
        });
        Ok(FlowResult {
            n,
            d,
            prec,
            vars: self.opts.vars,
            t: t_exact,
            state: u,
            p: k1.p,
            etv: prop.map(|p| p.floats),
            steps,
            rejected: 0,
            rhs_evals: evals,
            err_est: None,
        })
    }

    /// Adaptive Dormand–Prince 5(4) from 0 to `t_end` with error control
    /// `max_i |err_i| / (atol + rtol·max(|u_i|, |u_i^new|)) ≤ 1` (local
    /// extrapolation: the 5th-order solution is propagated; FSAL). Step sizes are
    /// dyadic (32 significant bits) except a last step that lands exactly on T.
    /// `observer` sees every accepted step.
    pub fn dopri5(
        &self,
        x0: &Mat,
        t_end: &Rational,
        tol: &Tolerances,
        mut observer: impl FnMut(&Frame),
    ) -> Result<FlowResult, FlowError> {
        let (d, prec) = (self.d, self.opts.prec);
        let mut u = self.initial_state(x0)?;
        let n = x0.rows;
        if *t_end < 0 {
            return Err(FlowError::NegativeTime {
                t: t_end.to_string(),
            });
        }
        if tol.rtol <= 0 || tol.atol <= 0 {
            return Err(FlowError::BadTolerance);
        }
        let tab = Tableau::new(prec);
        let rtol = Float::with_val(prec, &tol.rtol);
        let atol = Float::with_val(prec, &tol.atol);
        let mut h: Rational = match &tol.h0 {
            Some(h0) if *h0 > 0 => h0.clone(),
            Some(h0) => return Err(FlowError::NonPositiveStep { h: h0.to_string() }),
            None => {
                let def = Rational::from((1, 64));
                if *t_end > 0 && *t_end < def {
                    t_end.clone()
                } else {
                    def
                }
            }
        };
        let h_min = t_end * Rational::from((1, 1u64 << 60));
        let mut t_exact = Rational::new();
        let mut prop = self.prop_at(&t_exact)?;
        let nf = |t: &Rational| self.nonfinite_q(t);
        let mut ws = EvalWork::default();
        let mut k1 = Rhs::default();
        self.eval_into(prop.as_ref(), &u, true, &mut ws, &mut k1)
            .map_err(|_| nf(&t_exact))?;
        let mut evals = 1usize;
        let (mut steps, mut rejected, mut attempts) = (0usize, 0usize, 0usize);
        let mut err_est = Float::new(prec);
        {
            let tf = Float::with_val(prec, &t_exact);
            observer(&Frame {
                step: 0,
                t: &tf,
                t_exact: &t_exact,
                n,
                d,
                state: &u,
                p: &k1.p,
                etv: prop.as_ref().map(|p| p.floats.as_slice()),
            });
        }
        while t_exact < *t_end {
            attempts += 1;
            if attempts > tol.max_steps {
                return Err(FlowError::TooManySteps { max: tol.max_steps });
            }
            let remaining = Rational::from(t_end - &t_exact);
            if h >= remaining {
                h = remaining;
            }
            let hf = Float::with_val(prec, &h);
            // stage propagators e^{(t + c_k h)V}
            let props: Vec<Option<Propagator>> = match &prop {
                None => vec![None, None, None, None, None],
                Some(p0) => {
                    let mut v = Vec::with_capacity(5);
                    for c in &tab.c_exact {
                        let e = expm(&self.sys.v, &Rational::from(c * &h), prec + 16);
                        v.push(Some(p0.times(&e, d, prec).map_err(|_| nf(&t_exact))?));
                    }
                    v
                }
            };
            let mut ks: Vec<Vec<Float>> = vec![k1.deriv.clone()];
            let mut last_p = Vec::new();
            for s in 1..7 {
                let us = combo(&u, &hf, &tab.a[s], &ks, prec);
                // nodes: c2..c5 = props[0..4], c6 = c7 = 1 = props[4]
                let pi = (s - 1).min(4);
                let mut ev = Rhs::default();
                self.eval_into(props[pi].as_ref(), &us, true, &mut ws, &mut ev)
                    .map_err(|_| nf(&t_exact))?;
                evals += 1;
                ks.push(ev.deriv);
                last_p = ev.p;
            }
            // u_new = u + h Σ b_k k_k (= stage-7 argument); err = h Σ e_k k_k
            let u_new = combo(&u, &hf, &tab.a[6], &ks, prec);
            let zero_u = vec![Float::new(prec); u.len()];
            let errv = combo(&zero_u, &hf, &tab.e, &ks, prec);
            let mut err_max = Float::new(prec);
            let mut ratio = Float::new(prec);
            for ((e, a), b) in errv.iter().zip(&u).zip(&u_new) {
                let ae = Float::with_val(prec, e.abs_ref());
                if ae > err_max {
                    err_max.assign(&ae);
                }
                let mut sc = Float::with_val(prec, a.abs_ref());
                let bb = Float::with_val(prec, b.abs_ref());
                if bb > sc {
                    sc = bb;
                }
                sc *= &rtol;
                sc += &atol;
                let q = ae / sc;
                if q > ratio {
                    ratio = q;
                }
            }
            if !ratio.is_finite() {
                return Err(nf(&t_exact));
            }
            // step-size factor 0.9·ratio^{−1/5}, clamped to [1/5, 5]
            let mut fac = if ratio.is_zero() {
                Float::with_val(prec, 5)
            } else {
                let r = Float::with_val(prec, (&ratio).pow(&tab.minus_fifth));
                Float::with_val(prec, r * &tab.safety)
            };
            let lo = Float::with_val(prec, &tab.fifth);
            if fac < lo {
                fac = lo;
            }
            if fac > 5 {
                fac.assign(5);
            }
            let mut h_next = Float::with_val(prec, &h);
            h_next *= &fac;
            // dyadic, 32 significant bits
            let mut h32 = Float::new(32);
            h32.assign_round(&h_next, Round::Down);
            let h_new = h32.to_rational().unwrap_or_else(|| h.clone());
            if ratio <= 1 {
                t_exact += &h;
                u = u_new;
                err_est += &err_max;
                steps += 1;
                prop = props.into_iter().nth(4).flatten();
                k1 = Rhs {
                    deriv: ks.pop().expect("seven stages"),
                    p: last_p,
                };
                let tf = Float::with_val(prec, &t_exact);
                observer(&Frame {
                    step: steps,
                    t: &tf,
                    t_exact: &t_exact,
                    n,
                    d,
                    state: &u,
                    p: &k1.p,
                    etv: prop.as_ref().map(|p| p.floats.as_slice()),
                });
            } else {
                rejected += 1;
            }
            h = h_new;
            if h < h_min || h == 0 {
                return Err(FlowError::StepUnderflow {
                    t: Float::with_val(24, &t_exact).to_string_radix(10, Some(8)),
                });
            }
        }
        Ok(FlowResult {
            n,
            d,
            prec,
            vars: self.opts.vars,
            t: t_exact,
            state: u,
            p: k1.p,
            etv: prop.map(|p| p.floats),
            steps,
            rejected,
            rhs_evals: evals,
            err_est: Some(err_est),
        })
    }
}

/// RK4 convenience: [`Flow::new`] then [`Flow::rk4`].
pub fn rk4(
    sys: &System,
    x0: &Mat,
    t_end: &Rational,
    h: &Rational,
    opts: &FlowOptions,
    observer: impl FnMut(&Frame),
) -> Result<FlowResult, FlowError> {
    Flow::new(sys, opts.clone())?.rk4(x0, t_end, h, observer)
}

/// Dormand–Prince 5(4) convenience: [`Flow::new`] then [`Flow::dopri5`].
pub fn dopri5(
    sys: &System,
    x0: &Mat,
    t_end: &Rational,
    opts: &FlowOptions,
    tol: &Tolerances,
    observer: impl FnMut(&Frame),
) -> Result<FlowResult, FlowError> {
    Flow::new(sys, opts.clone())?.dopri5(x0, t_end, tol, observer)
}

/// Concatenates rows.
fn flat(rows: Vec<Vec<Float>>) -> Vec<Float> {
    let mut out = Vec::with_capacity(rows.iter().map(Vec::len).sum());
    for r in rows {
        out.extend(r);
    }
    out
}

/// `out = u + c·k`, entrywise at `prec` (`c·k` rounded, then the sum), into `out`'s
/// floats (resized to `u`'s length).
fn axpy_into(out: &mut Vec<Float>, u: &[Float], c: &Float, k: &[Float], prec: u32) {
    if out.len() != u.len() || out.first().is_some_and(|x| x.prec() != prec) {
        out.clear();
        out.resize(u.len(), Float::new(prec));
    }
    for ((o, ui), ki) in out.iter_mut().zip(u).zip(k) {
        o.assign(ki * c);
        *o += ui;
    }
}

/// `u + h Σ_k coef_k ks_k` (zero coefficients skipped), entrywise at `prec`.
fn combo(
    u: &[Float],
    h: &Float,
    coef: &[Option<Float>],
    ks: &[Vec<Float>],
    prec: u32,
) -> Vec<Float> {
    flat(map_idx(u.len().div_ceil(64), 64 * coef.len(), |b| {
        (b * 64..((b + 1) * 64).min(u.len()))
            .map(|idx| {
                let mut s = Float::new(prec);
                for (c, k) in coef.iter().zip(ks) {
                    if let Some(c) = c {
                        s += Float::with_val(prec, c * &k[idx]);
                    }
                }
                s *= h;
                s += &u[idx];
                s
            })
            .collect()
    }))
}

/// Dormand–Prince 5(4) coefficients at `prec` bits.
struct Tableau {
    /// Exact nodes c2..c6 (c7 = c6 = 1).
    c_exact: Vec<Rational>,
    /// Rows a[s] (s = 1..6) of the stage matrix; a[6] = b (5th order).
    a: Vec<Vec<Option<Float>>>,
    /// b − b* (error weights), 7 entries.
    e: Vec<Option<Float>>,
    /// −1/5 (the step-size exponent), 1/5 (least factor), 9/10 (safety factor).
    minus_fifth: Float,
    fifth: Float,
    safety: Float,
}

impl Tableau {
    fn new(prec: u32) -> Tableau {
        let q = |n: i64, d: i64| -> Option<Float> {
            if n == 0 {
                None
            } else {
                Some(Float::with_val(prec, Rational::from((n, d))))
            }
        };
        let a = vec![
            vec![],
            vec![q(1, 5)],
            vec![q(3, 40), q(9, 40)],
            vec![q(44, 45), q(-56, 15), q(32, 9)],
            vec![
                q(19372, 6561),
                q(-25360, 2187),
                q(64448, 6561),
                q(-212, 729),
            ],
            vec![
                q(9017, 3168),
                q(-355, 33),
                q(46732, 5247),
                q(49, 176),
                q(-5103, 18656),
            ],
            vec![
                q(35, 384),
                q(0, 1),
                q(500, 1113),
                q(125, 192),
                q(-2187, 6784),
                q(11, 84),
            ],
        ];
        let e = vec![
            q(71, 57600),
            q(0, 1),
            q(-71, 16695),
            q(71, 1920),
            q(-17253, 339200),
            q(22, 525),
            q(-1, 40),
        ];
        let c_exact = [(1, 5), (3, 10), (4, 5), (8, 9), (1, 1)]
            .iter()
            .map(|&(n, d)| Rational::from((n, d)))
            .collect();
        Tableau {
            c_exact,
            a,
            e,
            minus_fifth: Float::with_val(prec, Rational::from((-1, 5))),
            fifth: Float::with_val(prec, Rational::from((1, 5))),
            safety: Float::with_val(prec, Rational::from((9, 10))),
        }
    }
}
