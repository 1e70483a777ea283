//! (D): the exact discrete map — a residual attention layer with tied weights —
//! evaluated in outward-rounded intervals.
//!
//! Layer form (clusters.md §1, `e:discreteequation`):
//!
//! ```text
//! x_i^{k+1} = x_i^k + Δt V Σ_j P_ij(x^k) x_j^k,        P_ij(x) = softmax_j ⟨Q x_i, K x_j⟩ = softmax_j x_iᵀ(QᵀK)x_j.
//! ```
//!
//! Rescaled form (`r:discreterescaling`), with R = I + ΔtV invertible and z^k = R^{−k} x^k:
//!
//! ```text
//! z_i^{k+1} = z_i^k + Δt R^{−1} V Σ_j P_ij(R^k z^k) (z_j^k − z_i^k).
//! ```
//!
//! Both forms use Σ_j P_ij x_j = x_i + Σ_j P_ij (x_j − x_i) (exact because Σ_j P_ij = 1):
//! the interval enclosure of the right side stays tight when tokens cluster,
//! since the widths of the P_ij multiply differences, not positions. Every
//! operation is an [`Interval`] operation, so the enclosures contain the exact
//! iterates of the map for the exact rational data (the containment argument is
//! the usual one for interval arithmetic: each step applies inclusion-monotone
//! operations to enclosures of the previous iterate). Softmax is the kernel's
//! certified `p_i = 1 / (1 + Σ_{j≠i} e^{s_j − s_i})` form, stable for logits of any
//! size (clusters.md §2: logits reach e^{2λ1 t}‖z‖², so the precision must be about
//! log2 max|logit| + 60 bits for O(1) logit differences to be resolved).
//!
//! **Trusted (layer form).** The attention matrix and the residual step are the
//! kernel's ([`crate::kernel::layer_map`]): the certificate evaluator iterates the
//! `layer` datum with them ([`super::layer_data`]), so they are part of the trust base
//! of the claims whose certificates carry one (growth-bound, stability); their reports
//! say so. This module (the other forms, the state, the invariants) is not.

use super::model::{Mat, System};
use crate::kernel::layer_map::{attention, attention_stochastic, mat_vec_into, residual_step};
use crate::kernel::Interval;
use rug::Rational;

/// Which variable the map iterates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// The layer itself: x^{k+1} = x^k + Δt V Σ_j P_ij x_j.
    Layer,
    /// The rescaled tokens z^k = R^{−k} x^k, by the rescaled recursion.
    Rescaled,
    /// The layer iterates x^k, and z^k = R^{−k} x^k formed from them (`State::u`):
    /// the same exact z^k as [`Form::Rescaled`] with a different wrapping profile.
    /// The rescaled recursion computes P from R^k z^k, which multiplies the widths of
    /// z by |R^k| entrywise and feeds them back through the logits (for a random
    /// non-normal V this lost ~120 bits in 50 steps); here the feedback loop runs on x
    /// and only the final R^{−k} x^k product widens z. Measured on V_2D (n = 20, 120
    /// steps, 128 bits): widths of z 2.9e−24 (rescaled) vs 2.3e−20 (this form).
    LayerRescaled,
}

/// The state after k steps: the iterated variable, the tokens x^k and the
/// attention matrix P(x^k), all as interval enclosures (row-major).
#[derive(Clone, Debug)]
pub struct State {
    /// The step index k.
    pub k: usize,
    /// The iterated variable: x^k (layer form) or z^k (rescaled form), n × d.
    pub u: Vec<Interval>,
    /// The tokens x^k (n × d); equal to `u` in the layer form.
    pub x: Vec<Interval>,
    /// P(x^k), n × n.
    pub p: Vec<Interval>,
}

/// What a per-step observer sees on one step: the state before and after (the
/// invariants of [`super::observe`] read it).
pub struct StepView<'a> {
    /// Number of tokens.
    pub n: usize,
    /// Dimension.
    pub d: usize,
    /// State k (with P(x^k)).
    pub before: &'a State,
    /// State k + 1.
    pub after: &'a State,
}

/// The discrete map for one system, step size and precision.
#[derive(Clone, Debug)]
pub struct DiscreteMap {
    /// Number of tokens.
    pub n: usize,
    /// Dimension.
    pub d: usize,
    /// Working precision in bits.
    pub prec: u32,
    /// The form iterated.
    pub form: Form,
    /// Δt, exact.
    pub dt: Rational,
    /// Mᵀ = (QᵀK)ᵀ, so that the logit x_iᵀ M x_j is ⟨Mᵀ x_i, x_j⟩ (as in the flow).
    qk_t: Vec<Interval>,
    /// The matrix applied to the attention average: Δt V (layer) or Δt R^{−1} V (rescaled).
    step_mat: Vec<Interval>,
    /// R = I + Δt V (rescaled form: x^{k+1} = R x^k ... kept as R^k).
    r: Vec<Interval>,
    rk: Vec<Interval>,
    /// R^{−1} (layer-rescaled form), and R^{−k}.
    r_inv: Vec<Interval>,
    r_inv_k: Vec<Interval>,
    /// Rows of P tightened by Σ_j P_ij = 1 ([`DiscreteMap::with_stochastic_rows`]).
    stochastic_rows: bool,
}

/// Why a discrete map cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapError {
    /// R = I + ΔtV is singular, so z^k = R^{−k} x^k is undefined.
    SingularR,
}

impl std::fmt::Display for MapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MapError::SingularR => f.write_str(
                "R = I + Δt·V is singular, so the rescaled map z = R^{-k} x is undefined",
            ),
        }
    }
}

fn mat_intervals(m: &Mat, prec: u32) -> Vec<Interval> {
    m.to_intervals(prec)
}

/// `C = A B` for d × d interval matrices.
fn mat_mul(a: &[Interval], b: &[Interval], d: usize) -> Vec<Interval> {
    let mut out = Vec::with_capacity(d * d);
    for i in 0..d {
        for j in 0..d {
            let mut s = &a[i * d] * &b[j];
            for l in 1..d {
                s.add_assign(&(&a[i * d + l] * &b[l * d + j]));
            }
            out.push(s);
        }
    }
    out
}

impl DiscreteMap {
    /// Builds the map. The rescaled form needs R = I + ΔtV invertible (checked
    /// exactly); R^{−1} V is formed in exact rationals and then enclosed.
    pub fn new(
        sys: &System,
        n: usize,
        dt: &Rational,
        form: Form,
        prec: u32,
    ) -> Result<DiscreteMap, MapError> {
        let d = sys.d;
        let r = sys.r(dt);
        let step = match form {
            Form::Layer | Form::LayerRescaled => sys.v.scale(dt),
            Form::Rescaled => r
                .inverse()
                .ok_or(MapError::SingularR)?
                .mul(&sys.v)
                .scale(dt),
        };
        let r_inv = match form {
            Form::LayerRescaled => mat_intervals(&r.inverse().ok_or(MapError::SingularR)?, prec),
            _ => Vec::new(),
        };
        Ok(DiscreteMap {
            n,
            d,
            prec,
            form,
            dt: dt.clone(),
            qk_t: mat_intervals(&sys.qk.transpose(), prec),
            step_mat: mat_intervals(&step, prec),
            r: mat_intervals(&r, prec),
            rk: mat_intervals(&Mat::identity(d), prec),
            r_inv,
            r_inv_k: mat_intervals(&Mat::identity(d), prec),
            stochastic_rows: false,
        })
    }

    /// The attention matrix P(x) (n × n) of tokens x (n × d), certified:
    /// P_ij = softmax_j x_iᵀ M x_j with M = QᵀK (the paper's orientation: row i is
    /// the query x_i). Computed as a_i = Mᵀ x_i, logit_ij = ⟨a_i, x_j⟩. Until issue
    /// 23 it used a_i = M x_i, i.e. x_jᵀ M x_i: the transposed attention whenever M
    /// is not symmetric.
    pub fn attention(&self, x: &[Interval]) -> Vec<Interval> {
        if self.stochastic_rows {
            attention_stochastic(&self.qk_t, x, self.n, self.d, self.prec)
        } else {
            attention(&self.qk_t, x, self.n, self.d, self.prec)
        }
    }

    /// The same map with every row of P tightened by the kernel's
    /// [`attention_stochastic`] (each entry intersected with 1 − the sum of the
    /// others: exact rows sum to 1). Costs O(n²) per row.
    pub fn with_stochastic_rows(mut self) -> DiscreteMap {
        self.stochastic_rows = true;
        self
    }

    /// The initial state from exact tokens (x^0 = z^0).
    pub fn start(&mut self, tokens: &Mat) -> State {
        assert_eq!((tokens.rows, tokens.cols), (self.n, self.d));
        self.rk = mat_intervals(&Mat::identity(self.d), self.prec);
        self.r_inv_k = self.rk.clone();
        let u = tokens.to_intervals(self.prec);
        let p = self.attention(&u);
        State {
            k: 0,
            x: u.clone(),
            u,
            p,
        }
    }

    /// One step of the map.
    pub fn step(&mut self, s: &State) -> State {
        let (n, d) = (self.n, self.d);
        if self.form == Form::LayerRescaled {
            return self.step_layer_rescaled(s);
        }
        let u = residual_step(
            &self.step_mat,
            &s.u,
            &s.p,
            (n, d),
            self.prec,
            self.form == Form::Layer,
        );
        let x = match self.form {
            Form::Layer | Form::LayerRescaled => u.clone(),
            Form::Rescaled => {
                self.rk = mat_mul(&self.r, &self.rk, d);
                let mut x = vec![Interval::zero(self.prec); n * d];
                for i in 0..n {
                    mat_vec_into(
                        &self.rk,
                        &u[i * d..(i + 1) * d],
                        d,
                        &mut x[i * d..(i + 1) * d],
                    );
                }
                x
            }
        };
        let p = self.attention(&x);
        State {
            k: s.k + 1,
            u,
            x,
            p,
        }
    }

    /// One step of the layer on `s.x`, then z^{k+1} = R^{−(k+1)} x^{k+1}.
    fn step_layer_rescaled(&mut self, s: &State) -> State {
        let (n, d) = (self.n, self.d);
        let as_layer = State {
            k: s.k,
            u: s.x.clone(),
            x: s.x.clone(),
            p: s.p.clone(),
        };
        self.form = Form::Layer;
        let next = self.step(&as_layer);
        self.form = Form::LayerRescaled;
        self.r_inv_k = mat_mul(&self.r_inv, &self.r_inv_k, d);
        let mut z = vec![Interval::zero(self.prec); n * d];
        for i in 0..n {
            mat_vec_into(
                &self.r_inv_k,
                &next.x[i * d..(i + 1) * d],
                d,
                &mut z[i * d..(i + 1) * d],
            );
        }
        State {
            k: next.k,
            u: z,
            x: next.x,
            p: next.p,
        }
    }

    /// Runs `steps` steps from `tokens`, showing every step to `each_step` (the
    /// claims' invariants, [`super::observe`]) and calling `visit` on every state
    /// (including the initial one).
    pub fn run(
        &mut self,
        tokens: &Mat,
        steps: usize,
        mut each_step: impl FnMut(&StepView),
        mut visit: impl FnMut(&State),
    ) -> State {
        let mut s = self.start(tokens);
        visit(&s);
        for _ in 0..steps {
            let next = self.step(&s);
            let view = StepView {
                n: self.n,
                d: self.d,
                before: &s,
                after: &next,
            };
            each_step(&view);
            visit(&next);
            s = next;
        }
        s
    }
}

/// The largest width among enclosures (rounded up, as f64), for precision reports.
pub fn max_width(v: &[Interval]) -> f64 {
    v.iter()
        .map(|x| x.width_up().to_f64_round(rug::float::Round::Up))
        .fold(0.0, f64::max)
}

/// Midpoints as f64 (for plots and untrusted summaries only).
pub fn mids(v: &[Interval]) -> Vec<f64> {
    v.iter().map(Interval::mid_f64).collect()
}
