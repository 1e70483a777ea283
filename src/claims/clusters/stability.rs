//! clusters/stability — P2 proxy for the Wasserstein stability estimate
//! ([paper] `c:wellposedtransformers`, `e:w2estimate`; proxy [derived], clusters.md §3).
//!
//! Two particle systems x, y with the same n evolve by the same discrete map.
//! With δ_k = max_i ‖x_i^k − y_i^k‖ and R_k = max(max_i ‖x_i^k‖, max_i ‖y_i^k‖), fact F4
//! (clusters.md §1) gives, for F_i(x) = V Σ_j P_ij(x) x_j,
//!
//! ```text
//! max_i ‖F_i(x) − F_i(y)‖ ≤ L_k δ_k,   L_k = ‖V‖ (1 + 4‖QᵀK‖ R_k²),
//! ```
//!
//! (softmax is 1-Lipschitz from logit oscillation to ℓ1, and the logits move by at most
//! 2‖QᵀK‖R_k δ_k), hence for x^{k+1} = x^k + Δt F(x^k): δ_{k+1} ≤ (1 + Δt L_k) δ_k.
//! The check uses the exact Frobenius norms (upper bounds of the operator norms),
//! which keeps the inequality a theorem. For uniform empirical measures
//! W2(μ^k, ν^k) ≤ δ_k, so the per-step inequality is the discrete analogue of
//! W2(μ_t, ν_t) ≤ e^{Ct} W2(μ_0, ν_0).
//!
//! Checked per step on the interval enclosures of (D), squared to avoid square
//! roots: δ_{k+1}² ≤ (1 + Δt L_k)² δ_k² with δ_k² = max_i ‖x_i^k − y_i^k‖².

use super::common::{build_all, InstanceSpec};
use crate::claims::Ctx;
use crate::dynamics::discrete::{DiscreteMap, Form};
use crate::dynamics::model::{random_dyadic, Mat};
use crate::dynamics::observe::{max_all, sq_norms, Tally};
use crate::kernel::Interval;
use crate::outcome::{Outcome, Plot, Series, Style, Table};
use crate::spec::{ensure, FieldError};
use rug::Rational;
use serde::{Deserialize, Serialize};

/// Parameters of clusters/stability.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// The witnesses (x(0) = the instance's tokens).
    pub instances: Vec<InstanceSpec>,
    /// y(0) = x(0) + 2^{−perturbation_bits} · noise, noise uniform dyadic in [−1, 1].
    pub perturbation_bits: u32,
    /// Seed of the noise (instance i uses seed + i).
    pub noise_seed: u64,
}

const MAX_STEPS: usize = 100_000;

impl crate::spec::Params for Params {
    fn validate(&self) -> Result<(), FieldError> {
        build_all(&self.instances, "instances", MAX_STEPS)?;
        ensure(
            (1..=200).contains(&self.perturbation_bits),
            "perturbation_bits",
            "must be between 1 and 200",
        )
    }
}

/// y(0) = x(0) + 2^{−b} · noise (exact).
fn perturbed(x: &Mat, bits: u32, seed: u64) -> Mat {
    let noise = random_dyadic("noise", x.rows, x.cols, "-1", "1", seed, 20).expect("valid range");
    let scale = Rational::from((1, rug::Integer::from(1) << bits));
    x.add(&noise.scale(&scale))
}

/// Runs the claim.
pub fn run(p: &Params, ctx: &Ctx) -> Outcome {
    let mut out = Outcome::new();
    let insts = build_all(&p.instances, "instances", MAX_STEPS).expect("validated");
    let prec = ctx.prec();
    let mut table = Table::new(
        "δ_k = max_i ‖x_i^k − y_i^k‖ against the per-step bound δ_(k+1) ≤ (1 + Δt L_k) δ_k",
        &[
            "instance",
            "n",
            "d",
            "steps",
            "δ_0",
            "δ_K",
            "Π(1 + Δt L_k) (the bound's growth factor)",
            "per-step proven",
        ],
    );
    let mut plot = Plot {
        slug: "delta".into(),
        title: "δ_k / δ_0 observed and the cumulative F4 bound Π(1 + Δt L_k)".into(),
        x_label: "step k".into(),
        y_label: "ratio".into(),
        x_log: false,
        y_log: true,
        series: Vec::new(),
        heatmap: None,
        paths: false,
    };
    let mut min_log_slack = f64::INFINITY;
    for (idx, inst) in insts.iter().enumerate() {
        let (n, d) = (inst.n, inst.sys.d);
        let y0 = perturbed(&inst.tokens, p.perturbation_bits, p.noise_seed + idx as u64);
        let mut mx = DiscreteMap::new(&inst.sys, n, &inst.dt, Form::Layer, prec).expect("layer");
        let mut my = mx.clone();
        let nv = inst.sys.v.frobenius(prec);
        let nm = inst.sys.qk.frobenius(prec);
        let dt = Interval::from_rational(prec, &inst.dt);
        let one = Interval::one(prec);
        let delta_sq = |x: &[Interval], y: &[Interval]| {
            let diff: Vec<Interval> = x.iter().zip(y).map(|(a, b)| a - b).collect();
            max_all(&sq_norms(&diff, n, d))
        };
        let mut sx = mx.start(&inst.tokens);
        let mut sy = my.start(&y0);
        let d0 = delta_sq(&sx.x, &sy.x);
        let d0_f = d0.mid_f64().sqrt();
        let mut tally = Tally::default();
        let mut cum = one.clone();
        let dt_f = inst.dt.to_f64();
        let mut times = vec![0.0];
        let mut states = vec![crate::dynamics::discrete::mids(&sx.x)];
        let mut obs = vec![(0.0, 1.0)];
        let mut bnd = vec![(0.0, 1.0)];
        for _ in 0..inst.steps {
            let r2 = max_all(&sq_norms(&sx.x, n, d)).max(&max_all(&sq_norms(&sy.x, n, d)));
            // L_k = ‖V‖_F (1 + 4‖QᵀK‖_F R_k²)
            let l = &nv * &(&one + &(&nm * &r2).mul_i64(4));
            let g = &one + &(&dt * &l);
            let before = delta_sq(&sx.x, &sy.x);
            let nx = mx.step(&sx);
            let ny = my.step(&sy);
            let after = delta_sq(&nx.x, &ny.x);
            let margin = &(&g.powi(2) * &before) - &after;
            tally.record(nx.k, &margin);
            cum = &cum * &g;
            let k = nx.k as f64;
            obs.push((k, after.mid_f64().sqrt() / d0_f));
            bnd.push((k, cum.mid_f64()));
            times.push(k * dt_f);
            states.push(crate::dynamics::discrete::mids(&nx.x));
            sx = nx;
            sy = ny;
        }
        out.checks.certify(
            format!(
                "{}: δ_(k+1) ≤ (1 + Δt‖V‖_F(1 + 4‖QᵀK‖_F R_k²)) δ_k on every step",
                inst.name
            ),
            tally.certainty(),
            tally.summary(),
        );
        if idx == 0 {
            super::common::add_visuals(&mut out, "x", &inst.name, &times, &states, n, d, &sx.p);
        }
        let dk = delta_sq(&sx.x, &sy.x).mid_f64().sqrt();
        let slack = cum.mid_f64().ln() - (dk / d0_f).ln();
        min_log_slack = min_log_slack.min(slack);
        table.row(vec![
            inst.name.clone(),
            n.to_string(),
            d.to_string(),
            inst.steps.to_string(),
            format!("{d0_f:.4e}"),
            format!("{dk:.4e}"),
            format!("{:.4e}", cum.hi_f64()),
            format!("{}/{}", tally.proven(), tally.steps()),
        ]);
        plot.series.push(Series {
            name: format!("{} observed", inst.name),
            style: Style::Line,
            points: obs,
        });
        plot.series.push(Series {
            name: format!("{} bound", inst.name),
            style: Style::Dashed,
            points: bnd,
        });
    }
    out.figure(
        "min_log_slack",
        min_log_slack,
        format!(
            "smallest ln(bound growth / observed growth) at the horizon: {min_log_slack:.4} \
             (the F4 bound is far from tight, as Grönwall bounds are)"
        ),
    );
    out.tables.push(table);
    out.plots.push(plot);
    out.note(
        "The paper's constant C in W2(μ_t, ν_t) ≤ e^{Ct} W2(μ_0, ν_0) is [unconfirmed]; the proxy checks the derived \
         per-step Lipschitz inequality F4 with Frobenius norms, which implies the discrete analogue with \
         C = L = ‖V‖(1 + 4‖QᵀK‖R²) on the ball of radius R.",
    );
    out
}
