//! clusters/growth-bound (\[paper\] `p:wellposedparticles`; bound \[derived\],
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
//! Statement, per instance i (datum `Xi`: the instance's exact Q, K, V, Δt, K and x^0,
//! iterated by the kernel, see [`crate::dynamics::layer_data`]), with
//! g = 1 + Δt‖V‖_F enclosed from the exact entries (`(sqrt (layer-v-frob2 Xi))`):
//! - per step: `(forall k 0 K−1 (<= M²_{k+1} (* (pow g 2) M²_k)))`;
//! - cumulative: `(forall k 1 K (<= M²_k (* (exp (* 2 k (ln g))) M²_0)))`, i.e.
//!   M_k² ≤ g^{2k} M_0² (the exponent is a bound variable, so gᵏ is written e^{k ln g}).

use super::common::{build_all, decided, layer_datum, Instance, InstanceSpec};
use super::hyperplanes::{sample, RunData};
use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::StatementError;
use crate::dynamics::discrete::{DiscreteMap, Form};
use crate::kernel::expr::build::{add, call, exp, forall, int, le, ln, mul, pow, sqrt, var, Term};
use crate::kernel::expr::eval_built;
use crate::kernel::{Checked, Statement};
use crate::outcome::{Plot, Presentation, Series, Style, Table};
use crate::spec::FieldError;
use serde::{Deserialize, Serialize};

/// Parameters of clusters/growth-bound as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// The witnesses.
    pub instances: Vec<InstanceSpec>,
}

/// Parameters of clusters/growth-bound, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The witnesses, exact.
    pub instances: Vec<Instance>,
}

/// The most steps an instance may ask for.
const MAX_STEPS: usize = 100_000;

/// M_k² = max_i ‖x_i^k‖² of datum `x` (k a term).
fn m2(x: &str, k: Term) -> Term {
    call("layer-max-sqnorm", [var(x), int(0), k])
}

/// g = 1 + Δt‖V‖_F of datum `x`.
fn growth(x: &str) -> Term {
    add([int(1), mul([call("layer-dt", [var(x)]), v_frob(x)])])
}

/// ‖V‖_F of datum `x`.
fn v_frob(x: &str) -> Term {
    sqrt(call("layer-v-frob2", [var(x)]))
}

fn per_step_name(inst: &str) -> String {
    format!("{inst}: M_(k+1)² ≤ (1 + Δt‖V‖_F)² M_k² on every step")
}

fn cumulative_name(inst: &str) -> String {
    format!("{inst}: M_k² ≤ (1 + Δt‖V‖_F)^(2k) M_0² for every k")
}

/// clusters/growth-bound.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(r: Raw, at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        super::common::check_run_work(&[("instances", &r.instances)], MAX_STEPS, at)?;
        Ok(Params {
            instances: build_all(&r.instances, "instances", MAX_STEPS, at)?,
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
                st.datum(&x, layer_datum(inst, Vec::new())?);
                let (g, last) = (growth(&x), inst.steps);
                let k = || var("k");
                st.state(
                    per_step_name(&inst.name),
                    &forall(
                        "k",
                        0,
                        last as u64 - 1,
                        le(
                            m2(&x, add([k(), int(1)])),
                            mul([pow(g.clone(), 2), m2(&x, k())]),
                        ),
                    ),
                );
                st.state(
                    cumulative_name(&inst.name),
                    &forall(
                        "k",
                        1,
                        last as u64,
                        le(
                            m2(&x, k()),
                            mul([exp(mul([int(2), k(), ln(g)])), m2(&x, int(0))]),
                        ),
                    ),
                );
            }
            Ok(st)
        })())
    }
    type Witness = Option<Growth>;
    /// The statement's terms evaluated over its own data (presentation only: the
    /// kernel decides the obligations), and the last instance's trajectories.
    /// `None` when the statement cannot be built or a term not evaluated.
    fn witness(p: &Params, ctx: &Ctx) -> Option<Growth> {
        let prec = ctx.prec();
        let data = Self::statement(p, &ctx.spec.id, &Hints::new())?.ok()?.data;
        let ev = |t: &Term| eval_built(t, prec, &data).ok();
        let mut rows = Vec::with_capacity(p.instances.len());
        for (i, inst) in p.instances.iter().enumerate() {
            let x = format!("X{i}");
            let g = ev(&growth(&x))?.mid_f64();
            let m0 = ev(&m2(&x, int(0)))?.mid_f64();
            let ratios = (0..=inst.steps)
                .map(|k| Some((k as f64, (ev(&m2(&x, k.into()))?.mid_f64() / m0).sqrt())))
                .collect::<Option<Vec<_>>>()?;
            let bounds = (0..=inst.steps)
                .map(|k| (k as f64, g.powi(k as i32)))
                .collect();
            rows.push(Row {
                v_frob: ev(&v_frob(&x))?.hi_f64(),
                ratios,
                bounds,
            });
        }
        let worst_slack = rows
            .iter()
            .map(|r| r.horizon().1 / r.horizon().0)
            .fold(f64::INFINITY, f64::min);
        // Token trajectories and the final attention matrix of the last instance: the
        // rescaled tokens z^k = R^{−k} x^k, whose clusters are visible (x^k itself
        // grows like ‖R^k‖ and squeezes every early step into the plot's centre); the
        // layer form is the fallback when R = I + ΔtV is singular.
        let last = p.instances.last().and_then(|inst| {
            let map = |form| DiscreteMap::new(&inst.sys, inst.n, &inst.dt, form, prec);
            let (mut map, what) = match map(Form::LayerRescaled) {
                Ok(m) => (m, "rescaled tokens z = R^−k x"),
                Err(_) => (
                    map(Form::Layer).ok()?,
                    "tokens x (R singular: no rescaling)",
                ),
            };
            let data = sample(&mut map, inst, &mut [], 1, |s| &s.u);
            Some((data, format!("{}, {what}", inst.name)))
        });
        Some(Growth {
            rows,
            worst_slack,
            last,
        })
    }
    /// The table, the plots and the figure of the witness, and the notes. Nothing
    /// when the witness could not evaluate the statement's terms.
    fn present(
        p: &Params,
        w: &Option<Growth>,
        checked: Option<&Checked>,
        _: &Ctx,
        out: &mut Presentation,
    ) {
        let Some(w) = w else {
            return;
        };
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
                "per-step obligation",
                "cumulative obligation",
            ],
        );
        let mut plot = ratio_plot(
            "growth",
            "max_i ‖x_i^k‖ / max_i ‖x_i^0‖ and the bound (1 + Δt‖V‖_F)^k",
        );
        for (inst, r) in p.instances.iter().zip(&w.rows) {
            let (last_r, last_b) = r.horizon();
            table.row(vec![
                inst.name.clone(),
                inst.n.to_string(),
                inst.sys.d.to_string(),
                super::common::fmt_q(&inst.dt),
                inst.steps.to_string(),
                format!("{:.6}", r.v_frob),
                format!("{last_r:.6e}"),
                format!("{last_b:.6e}"),
                decided(checked, &per_step_name(&inst.name)),
                decided(checked, &cumulative_name(&inst.name)),
            ]);
            plot.series.push(Series {
                name: format!("{} (observed)", inst.name),
                style: Style::Line,
                points: r.ratios.clone(),
            });
            plot.series.push(Series {
                name: format!("{} (bound)", inst.name),
                style: Style::Dashed,
                points: r.bounds.clone(),
            });
        }
        if let (Some(inst), Some((data, title))) = (p.instances.last(), &w.last) {
            data.visuals(&mut out.plots, "last", title, inst.n, inst.sys.d);
        }
        let worst_slack = w.worst_slack;
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
        out.note(
            "The obligations are stated over `layer` data: the certificate carries each instance's exact Q, K, V, Δt, \
             steps and initial tokens, and the kernel iterates the map in outward-rounded intervals when it checks \
             them (`attncheck verify` re-derives the tokens from the spec's seeds).",
        );
    }
}

/// An empty plot of ratios (log scale) against the step k, for observed growth
/// and its bound (shared with stability).
pub(super) fn ratio_plot(slug: &str, title: &str) -> Plot {
    Plot {
        slug: slug.into(),
        title: title.into(),
        x_label: "step k".into(),
        y_label: "ratio".into(),
        x_log: false,
        y_log: true,
        series: Vec::new(),
        heatmap: None,
        paths: false,
    }
}

/// What the witness computed for the presentation: per instance the statement's
/// terms, the smallest slack at the horizon, and the last instance's run.
pub struct Growth {
    /// Per instance.
    rows: Vec<Row>,
    /// The smallest bound/observed ratio at the horizon.
    worst_slack: f64,
    /// The last instance's sampled run and its plots' title.
    last: Option<(RunData, String)>,
}

/// One instance's terms.
struct Row {
    /// ‖V‖_F, the enclosure's upper end.
    v_frob: f64,
    /// (k, M_k / M_0) for every step.
    ratios: Vec<(f64, f64)>,
    /// (k, (1 + Δt‖V‖_F)^k) for every step.
    bounds: Vec<(f64, f64)>,
}

impl Row {
    /// M_K / M_0 and the bound at the horizon K.
    fn horizon(&self) -> (f64, f64) {
        let last = |v: &[(f64, f64)]| v.last().map_or(f64::NAN, |x| x.1);
        (last(&self.ratios), last(&self.bounds))
    }
}
