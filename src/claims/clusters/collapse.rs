//! clusters/collapse (\[paper\] `t:cas-Idintro`, `l:cas1circle`, `l:stationary`,
//! `e:finiteinegral`; clusters.md §3).
//!
//! Claim: for V = −I_d and QᵀK = I_d, ‖x_i(t)‖ → 0 for every i, hence P(t) → J/n.
//! Supporting facts: ‖x_i(t)‖ ≤ max{max_j ‖x_j(0)‖, √(2n)}; the Lyapunov function
//! 𝓛 = Σ_i Σ_j e^{⟨x_i, x_j⟩} is nonincreasing (d𝓛/dt = −2 Σ_i Z_i ‖ẋ_i‖²), and
//! 𝓛 ≥ n² + ‖Σ_i x_i‖² ≥ n² [derived: e^s ≥ 1 + s termwise].
//!
//! Checks, on the discrete map (D) with Δt from the spec, in outward-rounded
//! intervals:
//! - per step (certified: obligations of the certificate over the instance's `layer`
//!   datum Xi, which the kernel iterates 4T/Δt steps; issue #24):
//!   `(forall k 0 K−1 (<= (layer-partition Xi 0 (+ k 1)) (layer-partition Xi 0 k)))`,
//!   i.e. 𝓛(x^{k+1}) ≤ 𝓛(x^k) (Q = K = I, so the partition sum Σ_ij e^{⟨Qx_i, Kx_j⟩} is
//!   𝓛), and the ball bound `(forall k 1 K (<= (layer-max-sqnorm Xi 0 k)
//!   (max (layer-max-sqnorm Xi 0 0) 2n)))`, i.e. ‖x_i^k‖² ≤ max{max_j ‖x_j^0‖², 2n} —
//!   continuous-time statements checked on the map for these instances, so a failure
//!   at a large Δt would not refute the paper (the report would say so);
//! - at the horizon (observed; the proof is by compactness, no rate): with the
//!   rate guide of clusters.md (deviations from the mean decay like t^{−1/2}),
//!   max_i ‖x(4T)‖ ≤ 0.6 · max_i ‖x(T)‖ for T ≥ 10, and 𝓛 − n² decreasing over the
//!   sampled times; the same outcome at the spec precision and at twice it.

use super::common::{build_all, fmt_q, layer_datum, Instance, InstanceSpec};
use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::StatementError;
use crate::dynamics::discrete::{DiscreteMap, Form};
use crate::dynamics::layer_data::LayerData;
use crate::dynamics::model::Mat;
use crate::dynamics::observe::{max_all, sq_norms};
use crate::kernel::expr::build::{add, call, forall, int, le, max, var, Term};
use crate::kernel::layer_map::partition;
use crate::kernel::{Checked, Interval, Statement};
use crate::outcome::{Observations, Plot, Presentation, Series, Style, Table};
use crate::spec::{ensure, exact, FieldError};
use rug::Rational;
use serde::{Deserialize, Serialize};

/// Parameters of clusters/collapse as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// The witnesses: V = −I and QᵀK = I are required; `steps` is ignored in
    /// favour of `t_first` (the run goes to 4·t_first).
    pub instances: Vec<InstanceSpec>,
    /// T: the ratio is asserted between T and 4T (T ≥ 10).
    pub t_first: String,
    /// The asserted ratio bound max‖x(4T)‖ / max‖x(T)‖ (clusters.md: 0.6).
    pub ratio_bound: String,
}

/// Parameters of clusters/collapse, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The witnesses (V = −I, QᵀK = I), exact.
    pub instances: Vec<Instance>,
    /// Per instance, the steps of the run: 4T / Δt (a whole number).
    pub steps: Vec<usize>,
    /// T: the ratio is asserted between T and 4T (T ≥ 10).
    pub t_first: Rational,
    /// The asserted ratio bound, in (0, 1).
    pub ratio_bound: Rational,
}

const MAX_STEPS: usize = 1_000_000;

fn check_hypotheses(insts: &[super::common::Instance]) -> Result<(), FieldError> {
    for (i, inst) in insts.iter().enumerate() {
        let d = inst.sys.d;
        let minus_i = Mat::identity(d).scale(&rug::Rational::from(-1));
        ensure(
            inst.sys.v == minus_i,
            format!("instances[{i}].v"),
            "this claim is proved for V = −I (use v = \"-I\")",
        )?;
        ensure(
            inst.sys.qk == Mat::identity(d),
            format!("instances[{i}].q"),
            "this claim is proved for QᵀK = I (use q = k = \"I\")",
        )?;
    }
    Ok(())
}

/// The name of instance `inst`'s per-step obligation `what`.
fn per_step_name(inst: &str, what: &str) -> String {
    format!("{inst}: {what} on every step of (D)")
}

const LYAPUNOV: &str = "𝓛 nonincreasing";
const BALL: &str = "ball bound max{max‖x(0)‖, √(2n)}";

/// clusters/collapse.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(r: Raw, at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        super::common::check_run_work(&[("instances", &r.instances)], MAX_STEPS, at)?;
        let t = exact("t_first", &r.t_first)?;
        ensure(t >= 10, "t_first", "the ratio assertion is for T ≥ 10")?;
        // the horizon of every instance, 4·t_first/Δt steps (its `steps` field is 1), bounded
        // as every instance's steps are (the map's work, weighed) and in sum, before any
        // instance is built
        let mut steps = Vec::with_capacity(r.instances.len());
        let mut total = 0u128;
        for (i, inst) in r.instances.iter().enumerate() {
            let dt = exact(&format!("instances[{i}].dt"), &inst.dt)?;
            ensure(dt > 0, format!("instances[{i}].dt"), "must be positive")?;
            let q = Rational::from(&t * 4u32) / &dt;
            let whole = (*q.denom() == 1 && q <= MAX_STEPS)
                .then(|| q.numer().to_usize())
                .flatten();
            let Some(k) = whole else {
                return Err(FieldError::new(
                    format!("instances[{i}].dt"),
                    "4·t_first must be a whole number of steps (at most 10^6)",
                ));
            };
            let work = super::common::instance_work(inst.n, inst.d, k);
            total += work;
            ensure(
                at.weigh(work) <= super::common::MAX_INSTANCE_WORK
                    && at.weigh(total) <= super::common::MAX_RUN_WORK,
                format!("instances[{i}].dt"),
                format!(
                    "4·t_first/Δt = {k} steps: n·d·(2n + d)·steps is {} (with the instances \
                     before it, {}), above the bound 2^34 of an instance or 2^35 of a run: use a \
                     larger Δt, a smaller t_first, n or d",
                    at.show(work),
                    at.show(total)
                ),
            )?;
            steps.push(k);
        }
        let insts = build_all(&r.instances, "instances", MAX_STEPS, at)?;
        check_hypotheses(&insts)?;
        let ratio_bound = exact("ratio_bound", &r.ratio_bound)?;
        ensure(
            ratio_bound > 0 && ratio_bound < 1,
            "ratio_bound",
            "must be in (0, 1)",
        )?;
        Ok(Params {
            instances: insts,
            steps,
            t_first: t,
            ratio_bound,
        })
    }
    /// Per instance, the two per-step facts over its `layer` datum iterated 4T/Δt steps.
    fn statement(
        p: &Params,
        claim: &str,
        _hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        Some((|| {
            let mut st = Statement::new(claim);
            for (i, (inst, &steps)) in p.instances.iter().zip(&p.steps).enumerate() {
                let x = format!("X{i}");
                let run = Instance {
                    steps,
                    ..inst.clone()
                };
                st.datum(&x, walked_datum(layer_datum(&run, Vec::new())?));
                let k = || var("k");
                let partition = |k: Term| call("layer-partition", [var(&x), int(0), k]);
                let sqnorm = |k: Term| call("layer-max-sqnorm", [var(&x), int(0), k]);
                st.state(
                    per_step_name(&inst.name, LYAPUNOV),
                    &forall(
                        "k",
                        0,
                        steps as u64 - 1,
                        le(partition(add([k(), int(1)])), partition(k())),
                    ),
                );
                st.state(
                    per_step_name(&inst.name, BALL),
                    &forall(
                        "k",
                        1,
                        steps as u64,
                        le(sqnorm(k()), max(sqnorm(int(0)), (2 * inst.n).into())),
                    ),
                );
            }
            Ok(st)
        })())
    }
    type Witness = Runs;
    /// Simulates every instance at two precisions.
    fn witness(p: &Params, ctx: &Ctx) -> Runs {
        let prec = ctx.prec();
        Runs(
            p.instances
                .iter()
                .zip(&p.steps)
                .map(|(inst, &steps)| {
                    let k_first = steps / 4;
                    (
                        simulate_walked(inst, steps, k_first, prec),
                        simulate(inst, steps, k_first, 2 * prec),
                    )
                })
                .collect(),
        )
    }
    /// Per instance: the rate guide at two precisions and the decrease of 𝓛 over the
    /// sampled times (observations; the per-step facts are the statement's).
    fn observe(p: &Params, w: &Runs, _: Option<&Checked>, ctx: &Ctx, out: &mut Observations) {
        let (t_first, bound) = (&p.t_first, &p.ratio_bound);
        let prec = ctx.prec();
        for (inst, (a, b)) in p.instances.iter().zip(&w.0) {
            let (ratio, ratio2, ok, ok2) = ratios(p, a, b, prec);
            out.observe(
                format!(
                    "{}: max‖x(4T)‖ ≤ {}·max‖x(T)‖ at T = {} (rate guide), at {prec} and {} bits",
                    inst.name,
                    fmt_q(bound),
                    fmt_q(t_first),
                    2 * prec
                ),
                ok && ok2,
                format!(
                    "ratio ∈ {} ({prec} bits), {} ({} bits)",
                    ratio.fmt_outward(6),
                    ratio2.fmt_outward(6),
                    2 * prec
                ),
            );
            let decreasing = a.samples.windows(2).all(|w| w[1].3.lt(&w[0].3).is_true());
            out.observe(
                format!("{}: 𝓛 − n² decreasing over the sampled times", inst.name),
                decreasing,
                format!(
                    "𝓛 − n² from {} to {}",
                    a.samples[0].3.fmt_outward(6),
                    a.samples.last().unwrap().3.fmt_outward(6)
                ),
            );
        }
    }
    /// The summary and sample tables, the pictures of the first instance, the plot of
    /// the decay, the figure and the note.
    fn present(p: &Params, w: &Runs, _: Option<&Checked>, ctx: &Ctx, out: &mut Presentation) {
        let bound = &p.ratio_bound;
        let prec = ctx.prec();
        let mut summary = Table::new(
            "Collapse: max_i ‖x_i‖ at T and 4T (enclosures), at two precisions",
            &[
                "instance",
                "Δt",
                "max‖x(0)‖",
                "max‖x(T)‖",
                "max‖x(4T)‖",
                "ratio",
                &format!("ratio ≤ {}", fmt_q(bound)),
                "ratio at 2× precision",
            ],
        );
        let mut plot = Plot {
            slug: "decay".into(),
            title: "max_i ‖x_i(t)‖ and 𝓛 − n² on the discrete map (V = −I, QᵀK = I)".into(),
            x_label: "t".into(),
            y_label: "value".into(),
            x_log: true,
            y_log: true,
            series: Vec::new(),
            heatmap: None,
            paths: false,
        };
        let mut worst_ratio: f64 = 0.0;
        for (idx, (inst, (a, b))) in p.instances.iter().zip(&w.0).enumerate() {
            let (ratio, ratio2, ok, _) = ratios(p, a, b, prec);
            worst_ratio = worst_ratio.max(ratio.hi_f64());
            if idx == 0 {
                let (times, states): (Vec<f64>, Vec<Vec<f64>>) = a.states.iter().cloned().unzip();
                super::common::add_visuals(
                    &mut out.plots,
                    "run",
                    &inst.name,
                    &times,
                    &states,
                    inst.n,
                    inst.sys.d,
                    &a.p_final,
                );
            }
            summary.row(vec![
                inst.name.clone(),
                fmt_q(&inst.dt),
                a.samples[0].1.fmt_outward(6),
                a.at_t.fmt_outward(6),
                a.at_4t.fmt_outward(6),
                ratio.fmt_outward(6),
                if ok { "yes".into() } else { "no".into() },
                ratio2.fmt_outward(6),
            ]);
            let mut t = Table::new(
                format!("{}: samples", inst.name),
                &["t", "max_i ‖x_i‖", "max_ij |P_ij − 1/n|", "𝓛 − n²"],
            );
            let stride = (a.samples.len() / 8).max(1);
            for (i, (tt, m, pu, l)) in a.samples.iter().enumerate() {
                if i % stride == 0 || i + 1 == a.samples.len() {
                    t.row(vec![
                        format!("{tt:.2}"),
                        m.fmt_outward(6),
                        pu.fmt_outward(6),
                        l.fmt_outward(6),
                    ]);
                }
            }
            out.tables.push(t);
            let pos = |f: &dyn Fn(&Sample) -> f64| {
                a.samples
                    .iter()
                    .filter(|s| s.0 > 0.0)
                    .map(|s| (s.0, f(s)))
                    .collect::<Vec<_>>()
            };
            plot.series.push(Series {
                name: format!("{}: max‖x‖", inst.name),
                style: Style::Line,
                points: pos(&|s| s.1.mid_f64()),
            });
            plot.series.push(Series {
                name: format!("{}: 𝓛 − n²", inst.name),
                style: Style::Dashed,
                points: pos(&|s| s.3.mid_f64()),
            });
        }
        out.figure(
            "worst_ratio",
            worst_ratio,
            format!(
                "largest max‖x(4T)‖ / max‖x(T)‖ over the witnesses (upper end): {worst_ratio:.6}"
            ),
        );
        out.tables.insert(0, summary);
        out.plots.push(plot);
        out.note(
            "No rate is stated in the paper (the proof is by compactness). The rate guide of clusters.md (deviations \
             from the mean obey ẏ ≈ −Cy with Ċ ≈ −2C², so ‖y‖ ~ t^{−1/2} and the ratio over a ×4 time step tends to \
             1/2) is a derived heuristic; 0.6 is its asserted bound for T ≥ 10.",
        );
    }
}

/// 𝓛 = Σ_i Σ_j e^{⟨x_i, x_j⟩}, enclosed: the kernel's partition sum with QᵀK = I (the
/// same enclosure the statement's `layer-partition` decides with; here for the samples).
fn lyapunov(x: &[Interval], n: usize, d: usize) -> Interval {
    let prec = x[0].prec();
    let eye = Mat::identity(d).to_intervals(prec);
    partition(&eye, x, n, d, prec)
}

/// max_ij |P_ij − 1/n|, enclosed.
fn dist_uniform(p: &[Interval], n: usize) -> Interval {
    let u = Interval::one(p[0].prec()).div_i64(n as i64);
    max_all(&p.iter().map(|p| (p - &u).abs()).collect::<Vec<_>>())
}

/// What one run records at the sample times.
/// One sample: t, max‖x‖, ‖P − J/n‖_max, 𝓛 − n².
type Sample = (f64, Interval, Interval, Interval);

struct Run {
    states: Vec<(f64, Vec<f64>)>,
    p_final: Vec<Interval>,
    samples: Vec<Sample>,
    at_t: Interval,
    at_4t: Interval,
}

/// What a run reads off the iterates x^0, …, x^K of (D), shown to it in order: the samples
/// every K/40 steps, max‖x‖ at T and 4T, and P at the end.
struct Sampler {
    n: usize,
    d: usize,
    steps: usize,
    k_first: usize,
    sample_every: usize,
    dt: f64,
    n2: Interval,
    /// The map, for P(x^k) when the caller does not have it (the same enclosure the
    /// map's step computes from the same x^k).
    map: DiscreteMap,
    run: Run,
}

impl Sampler {
    fn new(inst: &super::common::Instance, steps: usize, k_first: usize, prec: u32) -> Sampler {
        let (n, d) = (inst.n, inst.sys.d);
        Sampler {
            n,
            d,
            steps,
            k_first,
            sample_every: (steps / 40).max(1),
            dt: inst.dt.to_f64(),
            n2: Interval::from_i64(prec, (n * n) as i64),
            map: DiscreteMap::new(&inst.sys, n, &inst.dt, Form::Layer, prec).expect("layer"),
            run: Run {
                states: Vec::new(),
                p_final: Vec::new(),
                samples: Vec::new(),
                at_t: Interval::zero(prec),
                at_4t: Interval::zero(prec),
            },
        }
    }

    /// The iterate x^k (k = 0, 1, …, K in order), with P(x^k) when the caller has it.
    fn see(&mut self, k: usize, x: &[Interval], p: Option<&[Interval]>) {
        let (n, d) = (self.n, self.d);
        let last = k == self.steps;
        let sampled = k == 0 || k.is_multiple_of(self.sample_every) || last;
        let owned;
        let p = match p {
            Some(p) => p,
            None if sampled => {
                owned = self.map.attention(x);
                &owned[..]
            }
            None => &[],
        };
        if sampled {
            let m = max_all(&sq_norms(x, n, d)).sqrt();
            let l = lyapunov(x, n, d);
            let t = k as f64 * self.dt;
            self.run
                .samples
                .push((t, m, dist_uniform(p, n), &l - &self.n2));
            self.run
                .states
                .push((t, crate::dynamics::discrete::mids(x)));
        }
        if k > 0 && (k == self.k_first || last) {
            let m = max_all(&sq_norms(x, n, d)).sqrt();
            if k == self.k_first {
                self.run.at_t = m.clone();
            }
            if last {
                self.run.at_4t = m;
            }
        }
        if last {
            self.run.p_final = p.to_vec();
        }
    }
}

/// One run of (D) by the claim's own map, sampled (the per-step facts are decided by the
/// kernel over the statement's datum, not here).
fn simulate(inst: &super::common::Instance, steps: usize, k_first: usize, prec: u32) -> Run {
    let mut sampler = Sampler::new(inst, steps, k_first, prec);
    let mut s = sampler.map.start(&inst.tokens);
    sampler.see(0, &s.x, Some(&s.p));
    for _ in 0..steps {
        let next = sampler.map.step(&s);
        sampler.see(next.k, &next.x, Some(&next.p));
        s = next;
    }
    sampler.run
}

/// The `layer` data whose iterates the witness read at the working precision, for the
/// statement to take ([`walked_datum`]).
static WALKED: std::sync::Mutex<Vec<LayerData>> = std::sync::Mutex::new(Vec::new());
/// At most this many are held (a witness whose statement is never built leaves its own).
const MAX_WALKED: usize = 8;

/// The run at the working precision, read off the iterates of the instance's `layer`
/// datum (the kernel's walk, at `prec`): the map is the same (the layer map's attention
/// and residual step on the same exact data at the same precision, so the same
/// enclosures bit for bit as [`simulate`]'s), and the statement's datum, when it is
/// built from the same exact data, takes this one ([`walked_datum`]), so the evaluator
/// reads the iterates kept by this walk instead of walking again (`LayerData`'s "one walk
/// per precision"). The samples are untrusted as before: they are read, not checked.
/// Falls back to [`simulate`] when the datum cannot be built or walked.
fn simulate_walked(inst: &Instance, steps: usize, k_first: usize, prec: u32) -> Run {
    let run = Instance {
        steps,
        ..inst.clone()
    };
    let Ok(crate::kernel::expr::Datum::Layer(data)) = layer_datum(&run, Vec::new()) else {
        return simulate(inst, steps, k_first, prec);
    };
    let mut sampler = Sampler::new(inst, steps, k_first, prec);
    if data
        .visit_iterates(prec, |k, xs| sampler.see(k, xs[0], None))
        .is_err()
    {
        return simulate(inst, steps, k_first, prec);
    }
    let mut walked = WALKED.lock().unwrap_or_else(|e| e.into_inner());
    if walked.len() >= MAX_WALKED {
        walked.remove(0);
    }
    walked.push(data);
    sampler.run
}

/// `datum`, or the equal datum a witness walked (taken from [`WALKED`]): the same exact
/// data, so the same meaning and certificate; only its kept walk differs.
fn walked_datum(datum: crate::kernel::expr::Datum) -> crate::kernel::expr::Datum {
    let crate::kernel::expr::Datum::Layer(data) = &datum else {
        return datum;
    };
    let mut walked = WALKED.lock().unwrap_or_else(|e| e.into_inner());
    match walked.iter().position(|w| w == data) {
        Some(i) => crate::kernel::expr::Datum::Layer(walked.remove(i)),
        None => datum,
    }
}

/// Each instance's run at the working precision and at twice it.
pub struct Runs(Vec<(Run, Run)>);

/// The ratio of max‖x‖ at 4T and T at two precisions, and its bound.
fn ratios(p: &Params, a: &Run, b: &Run, prec: u32) -> (Interval, Interval, bool, bool) {
    let bound = &p.ratio_bound;
    let ratio = &a.at_4t / &a.at_t;
    let ratio2 = &b.at_4t / &b.at_t;
    let bq = Interval::from_rational(prec, bound);
    let ok = ratio.le(&bq).is_true();
    let ok2 = ratio2.le(&bq.with_prec(2 * prec)).is_true();
    (ratio, ratio2, ok, ok2)
}
