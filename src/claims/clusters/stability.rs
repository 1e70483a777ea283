//! clusters/stability — P2 proxy for the Wasserstein stability estimate
//! (\[paper\] `c:wellposedtransformers`, `e:w2estimate`; proxy \[derived\], clusters.md §3).
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
//! Statement, per instance i: one `layer` datum `Xi` with two runs (r = 0: x(0), r = 1:
//! y(0), re-derived from the seed), iterated by the kernel
//! ([`crate::dynamics::layer_data`]); squared to avoid square roots,
//! `(forall k 0 K−1 (<= δ²_{k+1} (* (pow (+ 1 (* Δt L_k)) 2) δ²_k)))` with
//! δ_k² = `(layer-max-sqdist Xi 0 1 k)`, R_k² = max over both runs of
//! `(layer-max-sqnorm Xi r k)`, and ‖V‖_F, ‖QᵀK‖_F enclosed by `(sqrt …)` of the exact
//! entries. One datum carries both runs, so they share Q, K, V and Δt by construction.

use super::common::{build_all, decided, layer_datum, Instance, InstanceSpec};
use super::growth_bound::ratio_plot;
use super::hyperplanes::{sample, RunData};
use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::StatementError;
use crate::dynamics::discrete::{DiscreteMap, Form};
use crate::dynamics::model::{random_dyadic, Mat};
use crate::kernel::expr::build::{add, call, forall, int, le, max, mul, pow, sqrt, var, Term};
use crate::kernel::expr::eval_built;
use crate::kernel::{Checked, Statement};
use crate::outcome::{Presentation, Series, Style, Table};
use crate::spec::{ensure, FieldError};
use rug::Rational;
use serde::{Deserialize, Serialize};

/// Parameters of clusters/stability as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// The witnesses (x(0) = the instance's tokens).
    pub instances: Vec<InstanceSpec>,
    /// y(0) = x(0) + 2^{−perturbation_bits} · noise, noise uniform dyadic in [−1, 1].
    pub perturbation_bits: u32,
    /// Seed of the noise (instance i uses seed + i).
    pub noise_seed: u64,
}

/// Parameters of clusters/stability, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The witnesses (x(0) = the instance's tokens), exact.
    pub instances: Vec<Instance>,
    /// y(0) = x(0) + 2^{−perturbation_bits} · noise, noise uniform dyadic in [−1, 1].
    pub perturbation_bits: u32,
    /// Seed of the noise (instance i uses seed + i).
    pub noise_seed: u64,
}

const MAX_STEPS: usize = 100_000;

/// δ_k² of datum `x` (k a term).
fn delta2(x: &str, k: Term) -> Term {
    call("layer-max-sqdist", [var(x), int(0), int(1), k])
}

/// 1 + Δt L_k, L_k = ‖V‖_F (1 + 4‖QᵀK‖_F R_k²), of datum `x` (k a term).
fn factor(x: &str, k: Term) -> Term {
    let of = |op: &str| call(op, [var(x)]);
    let sqnorm = |j: i64, k: Term| call("layer-max-sqnorm", [var(x), int(j), k]);
    let r2 = max(sqnorm(0, k.clone()), sqnorm(1, k));
    add([
        int(1),
        mul([
            of("layer-dt"),
            mul([
                sqrt(of("layer-v-frob2")),
                add([int(1), mul([int(4), sqrt(of("layer-qk-frob2")), r2])]),
            ]),
        ]),
    ])
}

fn check_name(inst: &str) -> String {
    format!("{inst}: δ_(k+1) ≤ (1 + Δt‖V‖_F(1 + 4‖QᵀK‖_F R_k²)) δ_k on every step")
}

/// clusters/stability.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(r: Raw, at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        super::common::check_run_work(&[("instances", &r.instances)], MAX_STEPS, at)?;
        let instances = build_all(&r.instances, "instances", MAX_STEPS, at)?;
        ensure(
            (1..=200).contains(&r.perturbation_bits),
            "perturbation_bits",
            "must be between 1 and 200",
        )?;
        Ok(Params {
            instances,
            perturbation_bits: r.perturbation_bits,
            noise_seed: r.noise_seed,
        })
    }
    fn statement(
        p: &Params,
        claim: &str,
        _hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        Some((|| {
            let mut st = Statement::new(claim);
            for (i, inst) in p.instances.iter().enumerate() {
                let x = format!("X{i}");
                let y0 = perturbed(&inst.tokens, p.perturbation_bits, p.noise_seed + i as u64);
                st.datum(&x, layer_datum(inst, vec![inst.tokens.clone(), y0])?);
                let k = || var("k");
                st.state(
                    check_name(&inst.name),
                    &forall(
                        "k",
                        0,
                        inst.steps as u64 - 1,
                        le(
                            delta2(&x, add([k(), int(1)])),
                            mul([pow(factor(&x, k()), 2), delta2(&x, k())]),
                        ),
                    ),
                );
            }
            Ok(st)
        })())
    }
    type Witness = Option<Deltas>;
    /// The statement's terms evaluated over its own data (presentation only: the
    /// kernel decides the obligation), and the first instance's trajectories of x.
    /// `None` when the statement cannot be built or a term not evaluated.
    fn witness(p: &Params, ctx: &Ctx) -> Option<Deltas> {
        let prec = ctx.prec();
        let data = Self::statement(p, &ctx.spec.id, &Hints::new())?.ok()?.data;
        let ev = |t: &Term| eval_built(t, prec, &data).ok().map(|x| x.mid_f64());
        let mut rows = Vec::with_capacity(p.instances.len());
        for (idx, inst) in p.instances.iter().enumerate() {
            let x = format!("X{idx}");
            let delta = |k: usize| ev(&delta2(&x, k.into())).map(f64::sqrt);
            let d0 = delta(0)?;
            let mut cum = 1.0f64;
            let mut obs = vec![(0.0, 1.0)];
            let mut bnd = vec![(0.0, 1.0)];
            for k in 0..inst.steps {
                cum *= ev(&factor(&x, k.into()))?;
                obs.push(((k + 1) as f64, delta(k + 1)? / d0));
                bnd.push(((k + 1) as f64, cum));
            }
            let dk = delta(inst.steps)?;
            rows.push(Row {
                d0,
                dk,
                cum,
                slack: cum.ln() - (dk / d0).ln(),
                obs,
                bnd,
            });
        }
        let min_log_slack = rows.iter().map(|r| r.slack).fold(f64::INFINITY, f64::min);
        // Token trajectories of x and the final attention matrix (presentation only).
        let first = match p.instances.first() {
            Some(inst) => {
                let mut map =
                    DiscreteMap::new(&inst.sys, inst.n, &inst.dt, Form::Layer, prec).ok()?;
                Some(sample(&mut map, inst, &mut [], 1, |s| &s.x))
            }
            None => None,
        };
        Some(Deltas {
            rows,
            min_log_slack,
            first,
        })
    }
    /// The table, the plots and the figure of the witness, and the notes. Nothing
    /// when the witness could not evaluate the statement's terms.
    fn present(
        p: &Params,
        w: &Option<Deltas>,
        checked: Option<&Checked>,
        _: &Ctx,
        out: &mut Presentation,
    ) {
        let Some(w) = w else {
            return;
        };
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
                "per-step obligation",
            ],
        );
        let mut plot = ratio_plot(
            "delta",
            "δ_k / δ_0 observed and the cumulative F4 bound Π(1 + Δt L_k)",
        );
        if let (Some(inst), Some(data)) = (p.instances.first(), &w.first) {
            data.visuals(&mut out.plots, "x", &inst.name, inst.n, inst.sys.d);
        }
        for (inst, r) in p.instances.iter().zip(&w.rows) {
            table.row(vec![
                inst.name.clone(),
                inst.n.to_string(),
                inst.sys.d.to_string(),
                inst.steps.to_string(),
                format!("{:.4e}", r.d0),
                format!("{:.4e}", r.dk),
                format!("{:.4e}", r.cum),
                decided(checked, &check_name(&inst.name)),
            ]);
            plot.series.push(Series {
                name: format!("{} observed", inst.name),
                style: Style::Line,
                points: r.obs.clone(),
            });
            plot.series.push(Series {
                name: format!("{} bound", inst.name),
                style: Style::Dashed,
                points: r.bnd.clone(),
            });
        }
        let min_log_slack = w.min_log_slack;
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
        out.note(
            "The obligation is stated over a `layer` datum per instance carrying the exact Q, K, V, Δt, steps and both \
             initial configurations x(0), y(0); the kernel iterates both in outward-rounded intervals when it checks \
             it (`attncheck verify` re-derives y(0) from noise_seed).",
        );
    }
}

/// y(0) = x(0) + 2^{−b} · noise (exact).
fn perturbed(x: &Mat, bits: u32, seed: u64) -> Mat {
    let noise = random_dyadic("noise", x.rows, x.cols, "-1", "1", seed, 20).expect("valid range");
    let scale = Rational::from((1, rug::Integer::from(1) << bits));
    x.add(&noise.scale(&scale))
}

/// What the witness computed for the presentation: per instance the statement's
/// terms, the smallest log-slack at the horizon, and the first instance's run.
pub struct Deltas {
    /// Per instance.
    rows: Vec<Row>,
    /// The smallest ln(bound growth / observed growth) at the horizon.
    min_log_slack: f64,
    /// The first instance's sampled run of x.
    first: Option<RunData>,
}

/// One instance's terms.
struct Row {
    /// δ_0 and δ_K.
    d0: f64,
    dk: f64,
    /// Π(1 + Δt L_k) over the steps.
    cum: f64,
    /// ln(cum) − ln(δ_K / δ_0).
    slack: f64,
    /// (k, δ_k / δ_0) and (k, Π_{j<k}(1 + Δt L_j)) for every step.
    obs: Vec<(f64, f64)>,
    bnd: Vec<(f64, f64)>,
}
