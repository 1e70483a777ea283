//! clusters/growth-bound ([paper] `p:wellposedparticles`; bound [derived],
//! clusters.md §3).
//!
//! Claim: F_i = V·(a convex combination of the x_j), so on the discrete map
//! max_i ‖x_i^k‖ ≤ (1 + Δt‖V‖)^k max_i ‖x_i^0‖ (and e^{‖V‖t} for the flow).
//!
//! Proof sketch (discrete): x_i^{k+1} = x_i^k + Δt V Σ_j P_ij x_j^k with P_ij ≥ 0 and
//! Σ_j P_ij = 1, so ‖x_i^{k+1}‖ ≤ ‖x_i^k‖ + Δt‖V‖ max_j ‖x_j^k‖ ≤ (1 + Δt‖V‖) M_k with
//! M_k = max_j ‖x_j^k‖; induction gives the cumulative bound. ‖V‖_op ≤ ‖V‖_F, so the
//! checks use the exact Frobenius norm (enclosed), which makes the asserted bound
//! slightly weaker than the paper's but still a theorem.
//!
//! Checks, per instance (certified, on the interval enclosures of (D)):
//! - per step: M_{k+1}² ≤ (1 + Δt‖V‖_F)² M_k²;
//! - cumulative: M_k² ≤ (1 + Δt‖V‖_F)^{2k} M_0².

use super::common::{build_all, InstanceSpec};
use crate::claims::Ctx;
use crate::dynamics::discrete::{DiscreteMap, Form};
use crate::dynamics::observe::{max_all, sq_norms, Invariant};
use crate::kernel::Interval;
use crate::outcome::{Outcome, Plot, Series, Style, Table};
use crate::spec::FieldError;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;

/// Parameters of clusters/growth-bound.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// The witnesses.
    pub instances: Vec<InstanceSpec>,
}

/// The most steps an instance may ask for.
const MAX_STEPS: usize = 100_000;

impl crate::spec::Params for Params {
    fn validate(&self) -> Result<(), FieldError> {
        build_all(&self.instances, "instances", MAX_STEPS).map(|_| ())
    }
}

/// Runs the claim.
pub fn run(p: &Params, ctx: &Ctx) -> Outcome {
    let mut out = Outcome::new();
    let insts = build_all(&p.instances, "instances", MAX_STEPS).expect("validated");
    let prec = ctx.prec();
    let mut table = Table::new(
        "Growth of max_i ‖x_i^k‖ against (1 + Δt‖V‖_F)^k max_i ‖x_i^0‖",
        &[
            "instance",
            "n",
            "d",
            "Δt",
            "steps",
            "‖V‖_F",
            "M_K / M_0",
            "bound (1+Δt‖V‖_F)^K",
            "per-step proven",
            "cumulative proven",
        ],
    );
    let mut plot = Plot {
        slug: "growth".into(),
        title: "max_i ‖x_i^k‖ / max_i ‖x_i^0‖ and the bound (1 + Δt‖V‖_F)^k".into(),
        x_label: "step k".into(),
        y_label: "ratio".into(),
        x_log: false,
        y_log: true,
        series: Vec::new(),
        heatmap: None,
        paths: false,
    };
    let mut worst_slack = f64::INFINITY;
    for inst in &insts {
        let mut map = DiscreteMap::new(&inst.sys, inst.n, &inst.dt, Form::Layer, prec)
            .expect("the layer form needs no inverse");
        let (n, d) = (inst.n, inst.sys.d);
        let nf = inst.sys.v.frobenius(prec);
        let dt = Interval::from_rational(prec, &inst.dt);
        let growth = (&Interval::one(prec) + &(&dt * &nf)).powi(2);
        let m0 = max_all(&sq_norms(&inst.tokens.to_intervals(prec), n, d));
        // (1 + Δt N)^{2k} M_0², advanced once per step (shared by the cumulative check and the plot).
        let bound = RefCell::new(m0.clone());
        let ratios = RefCell::new(vec![(0.0, 1.0)]);
        let bounds = RefCell::new(vec![(0.0, 1.0)]);
        let m0_f = m0.mid_f64();
        let per_step = Invariant::new(
            format!(
                "{}: M_(k+1)² ≤ (1 + Δt‖V‖_F)² M_k² on every step",
                inst.name
            ),
            |v| {
                let before = max_all(&sq_norms(&v.before.x, v.n, v.d));
                let after = max_all(&sq_norms(&v.after.x, v.n, v.d));
                &(&growth * &before) - &after
            },
        );
        let cumulative = Invariant::new(
            format!("{}: M_k² ≤ (1 + Δt‖V‖_F)^(2k) M_0² for every k", inst.name),
            |v| {
                let after = max_all(&sq_norms(&v.after.x, v.n, v.d));
                let mut b = bound.borrow_mut();
                *b = &*b * &growth;
                let k = v.after.k as f64;
                ratios
                    .borrow_mut()
                    .push((k, (after.mid_f64() / m0_f).sqrt()));
                bounds.borrow_mut().push((k, (b.mid_f64() / m0_f).sqrt()));
                &*b - &after
            },
        );
        let mut invs = [per_step, cumulative];
        let dt_f = inst.dt.to_f64();
        let mut times = Vec::new();
        let mut states = Vec::new();
        let last = map.run(&inst.tokens, inst.steps, &mut invs, |s| {
            times.push(s.k as f64 * dt_f);
            states.push(crate::dynamics::discrete::mids(&s.x));
        });
        if std::ptr::eq(inst, insts.last().unwrap()) {
            super::common::add_visuals(
                &mut out, "last", &inst.name, &times, &states, n, d, &last.p,
            );
        }
        for inv in &invs {
            inv.certify_into(&mut out.checks);
        }
        let (t_step, t_cum) = (invs[0].tally.clone(), invs[1].tally.clone());
        drop(invs);
        let ratios = ratios.into_inner();
        let bounds = bounds.into_inner();
        let (last_r, last_b) = (ratios.last().unwrap().1, bounds.last().unwrap().1);
        worst_slack = worst_slack.min(last_b / last_r);
        table.row(vec![
            inst.name.clone(),
            n.to_string(),
            d.to_string(),
            super::common::fmt_q(&inst.dt),
            inst.steps.to_string(),
            format!("{:.6}", nf.hi_f64()),
            format!("{last_r:.6e}"),
            format!("{last_b:.6e}"),
            format!("{}/{}", t_step.proven(), t_step.steps()),
            format!("{}/{}", t_cum.proven(), t_cum.steps()),
        ]);
        plot.series.push(Series {
            name: format!("{} (observed)", inst.name),
            style: Style::Line,
            points: ratios,
        });
        plot.series.push(Series {
            name: format!("{} (bound)", inst.name),
            style: Style::Dashed,
            points: bounds,
        });
    }
    out.figure(
        "min_slack_factor",
        worst_slack,
        format!(
            "smallest bound/observed ratio at the horizon over all instances: {worst_slack:.6}"
        ),
    );
    out.tables.push(table);
    out.plots.push(plot);
    out.note(
        "The bound uses the Frobenius norm ‖V‖_F ≥ ‖V‖_op (exact rational, enclosed), so it is a theorem for \
         every instance; the flow version max‖x(t)‖ ≤ max‖x(0)‖ e^{‖V‖t} follows by letting Δt → 0.",
    );
    out
}
