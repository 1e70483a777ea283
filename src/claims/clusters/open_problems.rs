//! clusters/open-problems (\[paper\] §12, clusters.md §3; added ID). Report only.
//!
//! Four exploratory runs of variants the paper leaves open, all with the same seeded
//! tokens (n × d, uniform on [lo, hi]^d, dyadic grid), in MPFR point arithmetic:
//! 1. QᵀK with i.i.d. U[−1, 1] dyadic entries (not SPD), V = I, K = I: the rescaled
//!    flow ([`crate::dynamics::flow::rk4`], Vars::Z). The paper's figures suggest that
//!    clustering persists.
//! 2. Multi-head: x_i^{k+1} = x_i^k + Δt Σ_h Σ_j P^h_ij V_h x_j^k
//!    ([`crate::dynamics::variants::multi_head`]), shown in z^k = R^{−k}x^k with
//!    R = I + Δt Σ_h V_h.
//! 3. MLP: ż_i = W σ(V Σ_j P_ij (z_j − z_i)) ([`crate::dynamics::variants::mlp_rk4`]),
//!    σ = ReLU or tanh, W = I or random. The paper: with ReLU and W = I "every particle
//!    eventually follows one of three hyperplanes"; with tanh, or ReLU and random W,
//!    "all particles appear to collapse to 0".
//! 4. A complex leading eigenvalue of V: "we do not expect any clustering to occur".
//!
//! What is reported per run at the horizon: the number of τ-clusters of z (single
//! linkage, τ = ρ·diam z(0)), the spread diam z(T), max_i ‖z_i(T)‖, and where V has a
//! real positive leading eigenvalue, the τ-clusters of φ1*(z_i) (the hyperplane
//! structure). Nothing is asserted.

use super::common::{fmt_q, positive_rationals, prefixed};
use crate::claims::shape::Ctx;
use crate::dynamics::flow::{rk4, FlowOptions, Vars};
use crate::dynamics::model::{tokens, Mat, MatrixSpec, System};
use crate::dynamics::plots::trajectories;
use crate::dynamics::variants::{
    diameter, eigenvalues_f64, mat_mul_sq, mat_vec, max_norm, mlp_rk4, multi_head, positive_duals,
    project, rows_f64, tau_clusters, to_floats, Activation, Head,
};
use crate::kernel::Checked;
use crate::outcome::{Observations, Presentation, Table};
use crate::spec::{exact, FieldError};
use rug::{Float, Rational};
use serde::{Deserialize, Serialize};

/// Run 1: a non-SPD QᵀK.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Indefinite {
    /// Q (d × d; K = I, so QᵀK = Qᵀ).
    pub q: MatrixSpec,
    /// V (d × d).
    pub v: MatrixSpec,
    /// End time (exact).
    pub t_end: String,
    /// RK4 step (exact).
    pub h: String,
}

/// One head of run 2.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeadSpec {
    /// Q_h (m × d).
    pub q: MatrixSpec,
    /// K_h (m × d).
    pub k: MatrixSpec,
    /// V_h (d × d).
    pub v: MatrixSpec,
}

/// Run 2: multi-head layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MultiHead {
    /// The heads.
    pub heads: Vec<HeadSpec>,
    /// Δt (exact).
    pub dt: String,
    /// Number of layers.
    pub steps: usize,
}

/// One MLP run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MlpCase {
    /// `relu`, `tanh` or `identity`.
    pub sigma: String,
    /// W (d × d).
    pub w: MatrixSpec,
    /// What the paper observes (quoted in the table).
    pub paper: String,
}

/// Run 3: MLP variant.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mlp {
    /// V (d × d).
    pub v: MatrixSpec,
    /// End time (exact).
    pub t_end: String,
    /// RK4 step (exact).
    pub h: String,
    /// The (σ, W) combinations.
    pub cases: Vec<MlpCase>,
}

/// Run 4: complex leading eigenvalue.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Complex {
    /// V (d × d).
    pub v: MatrixSpec,
    /// End time (exact).
    pub t_end: String,
    /// RK4 step (exact).
    pub h: String,
}

/// Parameters of clusters/open-problems as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// Number of tokens.
    pub n: usize,
    /// Dimension.
    pub d: usize,
    /// Initial tokens (n × d), shared by all runs.
    pub tokens: MatrixSpec,
    /// Relative cluster radii ρ (τ = ρ·diam z(0)).
    pub taus: Vec<String>,
    /// Run 1.
    pub indefinite: Indefinite,
    /// Run 2.
    pub multi_head: MultiHead,
    /// Run 3.
    pub mlp: Mlp,
    /// Run 4.
    pub complex: Complex,
}

/// At most this many steps per run.
const MAX_STEPS: usize = 20_000;

/// End time and step → number of steps (errors name `pre.t_end` / `pre.h`).
fn horizon(pre: &str, t_end: &str, h: &str) -> Result<(Rational, Rational, usize), FieldError> {
    let t = exact(&format!("{pre}.t_end"), t_end)?;
    let hh = exact(&format!("{pre}.h"), h)?;
    if t <= 0 {
        return Err(FieldError::new(format!("{pre}.t_end"), "must be positive"));
    }
    if hh <= 0 {
        return Err(FieldError::new(format!("{pre}.h"), "must be positive"));
    }
    let r = Rational::from(&t / &hh);
    if *r.denom() != 1 || r > MAX_STEPS as u32 {
        return Err(FieldError::new(
            format!("{pre}.h"),
            format!("t_end/h must be an integer of at most {MAX_STEPS}"),
        ));
    }
    let steps = r.numer().to_usize().unwrap_or(0);
    Ok((t, hh, steps))
}

/// Parameters of clusters/open-problems, resolved.
pub struct Params {
    n: usize,
    d: usize,
    z0: Mat,
    taus: Vec<Rational>,
    indef: (System, Rational, Rational, usize),
    heads: Vec<Head>,
    mh_dt: Rational,
    mh_steps: usize,
    mlp_v: Mat,
    mlp: (Rational, Rational, usize),
    mlp_cases: Vec<(Activation, Mat, String, String)>,
    complex: (System, Rational, Rational, usize),
    /// R^{-1} for R = I + Δt Σ_h V_h.
    mh_rinv: Mat,
}

/// clusters/open-problems.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(r: Raw, _at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        let p = &r;
        let d = p.d;
        if !(1..=8).contains(&d) {
            return Err(FieldError::new("d", "must be between 1 and 8"));
        }
        if p.n < 2 || p.n > 200 {
            return Err(FieldError::new("n", "must be between 2 and 200"));
        }
        let z0 = tokens("tokens", &p.tokens, p.n, d, false)?;
        let taus = positive_rationals("taus", &p.taus)?;
        let id = MatrixSpec::Named("I".into());
        let sys1 = System::from_specs(d, &p.indefinite.q, &id, &p.indefinite.v)
            .map_err(|e| prefixed("indefinite", e))?;
        let (t1, h1, s1) = horizon("indefinite", &p.indefinite.t_end, &p.indefinite.h)?;
        if p.multi_head.heads.is_empty() {
            return Err(FieldError::new("multi_head.heads", "must not be empty"));
        }
        let mut heads = Vec::new();
        for (i, h) in p.multi_head.heads.iter().enumerate() {
            let sys = System::from_specs(d, &h.q, &h.k, &h.v)
                .map_err(|e| prefixed(&format!("multi_head.heads[{i}]"), e))?;
            heads.push(Head {
                qk: sys.qk,
                v: sys.v,
            });
        }
        let mh_dt = exact("multi_head.dt", &p.multi_head.dt)?;
        if mh_dt <= 0 {
            return Err(FieldError::new("multi_head.dt", "must be positive"));
        }
        if p.multi_head.steps == 0 || p.multi_head.steps > MAX_STEPS {
            return Err(FieldError::new(
                "multi_head.steps",
                format!("must be between 1 and {MAX_STEPS}"),
            ));
        }
        let Some(mh_rinv) = multi_head_r(&heads, &mh_dt, d).inverse() else {
            return Err(FieldError::new(
                "multi_head.dt",
                "R = I + Δt Σ_h V_h is singular; the rescaled picture needs it invertible",
            ));
        };
        let mlp_v = p.mlp.v.resolve("mlp.v", Some(d), d)?;
        let mlp = horizon("mlp", &p.mlp.t_end, &p.mlp.h)?;
        if p.mlp.cases.is_empty() {
            return Err(FieldError::new("mlp.cases", "must not be empty"));
        }
        let mut mlp_cases = Vec::new();
        for (i, c) in p.mlp.cases.iter().enumerate() {
            let pre = format!("mlp.cases[{i}]");
            let s = Activation::parse(&c.sigma).ok_or_else(|| {
                FieldError::new(
                    format!("{pre}.sigma"),
                    "must be \"relu\", \"tanh\" or \"identity\"",
                )
            })?;
            let w = c.w.resolve(&format!("{pre}.w"), Some(d), d)?;
            let w_label = match &c.w {
                MatrixSpec::Named(n) => n.clone(),
                MatrixSpec::Random { seed, .. } => format!("random (seed {seed})"),
                _ => "given".into(),
            };
            mlp_cases.push((s, w, w_label, c.paper.clone()));
        }
        let sys4 =
            System::from_specs(d, &id, &id, &p.complex.v).map_err(|e| prefixed("complex", e))?;
        let (t4, h4, s4) = horizon("complex", &p.complex.t_end, &p.complex.h)?;
        Ok(Params {
            n: p.n,
            d,
            z0,
            taus,
            indef: (sys1, t1, h1, s1),
            heads,
            mh_dt,
            mh_steps: p.multi_head.steps,
            mlp_v,
            mlp,
            mlp_cases,
            complex: (sys4, t4, h4, s4),
            mh_rinv,
        })
    }
    type Witness = Vec<RunRow>;
    /// Every open problem's run (MPFR point arithmetic): label, model, slug, V for
    /// φ1*, horizon, the paper's expectation and the sampled data.
    fn witness(p: &Params, ctx: &Ctx) -> Vec<RunRow> {
        let r = p;
        let prec = ctx.prec();
        let d = p.d;
        let opts = FlowOptions::new(prec, Vars::Z);

        // (label, model, slug, V for φ1*, horizon text, paper's expectation, data)
        let mut runs: Vec<RunRow> = Vec::new();

        // 1. indefinite QᵀK
        {
            let (sys, t, h, steps) = &r.indef;
            let data = sampled_rk4(sys, &r.z0, t, h, *steps, &opts, d);
            let spd = sys.qk.is_symmetric() && sys.qk.is_positive_definite();
            runs.push((
                "1. QᵀK random (not SPD)".into(),
                format!(
                    "flow, Q i.i.d. U[−1,1] dyadic, K = I (QᵀK {}), V spectrum {}",
                    if spd { "SPD" } else { "not SPD" },
                    spectrum(&sys.v)
                ),
                "indefinite".into(),
                Some(sys.v.clone()),
                format!("T = {}, RK4 h = {}", fmt_q(t), fmt_q(h)),
                "figures suggest clustering persists".into(),
                data,
            ));
        }

        // 2. multi-head
        {
            let rinv = to_floats(&r.mh_rinv, prec + 16);
            let k = every(r.mh_steps);
            let dtf = r.mh_dt.to_f64();
            let mut data = RunData::default();
            // R^{−k}, advanced every step
            let mut rpow = to_floats(&Mat::identity(d), prec + 16);
            let mut last_z = Vec::new();
            multi_head(&r.heads, &r.z0, &r.mh_dt, r.mh_steps, prec, |step, x| {
                if step > 0 {
                    rpow = mat_mul_sq(&rpow, &rinv, d, prec + 16);
                }
                if step % k == 0 || step == r.mh_steps {
                    let z: Vec<Float> = x
                        .chunks(d)
                        .flat_map(|xi| mat_vec(&rpow, d, xi, prec))
                        .collect();
                    data.times.push(step as f64 * dtf);
                    data.states.push(rows_f64(&z, d).concat());
                    last_z = z;
                }
            });
            data.z_final = Some(last_z);
            let mut vsum = Mat::zeros(d, d);
            for h in &r.heads {
                vsum = vsum.add(&h.v);
            }
            runs.push((
                format!("2. multi-head (H = {})", r.heads.len()),
                format!(
                    "layer x^(k+1) = x^k + Δt Σ_h Σ_j P^h_ij V_h x_j^k, shown in z = R^(−k)x, R = I + Δt Σ_h V_h; Σ_h V_h spectrum {}",
                    spectrum(&vsum)
                ),
                "multihead".into(),
                Some(vsum),
                format!("Δt = {}, {} layers", fmt_q(&r.mh_dt), r.mh_steps),
                "open; preliminary numerics show clustering".into(),
                data,
            ));
        }

        // 3. MLP variants
        for (ci, (sigma, w, w_label, paper)) in r.mlp_cases.iter().enumerate() {
            let (t, h, steps) = &r.mlp;
            let k = every(*steps);
            let hf = h.to_f64();
            let mut data = RunData::default();
            let z = mlp_rk4(
                &r.mlp_v,
                None,
                w,
                *sigma,
                &r.z0,
                h,
                *steps,
                prec,
                |step, z| {
                    if step % k == 0 {
                        data.times.push(step as f64 * hf);
                        data.states.push(rows_f64(z, d).concat());
                    }
                },
            );
            if z.iter().all(Float::is_finite) {
                data.z_final = Some(z);
            } else {
                data.error = Some("the state became non-finite".into());
            }
            runs.push((
                format!(
                    "3{}. MLP σ = {}, W = {}",
                    (b'a' + ci as u8) as char,
                    sigma.name(),
                    w_label
                ),
                format!(
                    "ż_i = W σ(V Σ_j P_ij (z_j − z_i)), Q = K = I, V spectrum {}",
                    spectrum(&r.mlp_v)
                ),
                format!("mlp{}", ci + 1),
                Some(r.mlp_v.clone()),
                format!("T = {}, RK4 h = {}", fmt_q(t), fmt_q(h)),
                paper.clone(),
                data,
            ));
        }

        // 4. complex leading eigenvalue
        {
            let (sys, t, h, steps) = &r.complex;
            let data = sampled_rk4(sys, &r.z0, t, h, *steps, &opts, d);
            runs.push((
                "4. complex leading eigenvalue".into(),
                format!("flow, Q = K = I, V spectrum {}", spectrum(&sys.v)),
                "complex".into(),
                Some(sys.v.clone()),
                format!("T = {}, RK4 h = {}", fmt_q(t), fmt_q(h)),
                "\"we do not expect any clustering to occur\"".into(),
                data,
            ));
        }

        runs
    }
    /// Nothing is asserted: the run is report-only.
    fn observe(_: &Params, _: &Vec<RunRow>, _: Option<&Checked>, _: &Ctx, out: &mut Observations) {
        out.declare_report_only(
            "open problems of §12: observations of variants at a finite horizon, nothing asserted",
        );
    }
    /// The cluster counts, the models, the trajectories, the figures and the notes.
    fn present(
        p: &Params,
        runs: &Vec<RunRow>,
        _: Option<&Checked>,
        ctx: &Ctx,
        out: &mut Presentation,
    ) {
        let r = p;
        let prec = ctx.prec();
        let (n, d) = (p.n, p.d);
        let z0f = to_floats(&r.z0, prec);
        let z0_rows = rows_f64(&z0f, d);
        let diam0 = diameter(&z0_rows);
        let mut cols: Vec<String> = vec!["run".into(), "horizon".into()];
        for t in &r.taus {
            cols.push(format!("τ-clusters of z, τ = {}·diam₀", fmt_q(t)));
        }
        cols.push(format!(
            "τ-clusters of φ1*(z), τ = {}·diam₀",
            fmt_q(&r.taus[r.taus.len() / 2])
        ));
        cols.push("diam z(T)".into());
        cols.push("max‖z(T)‖".into());
        cols.push("paper".into());
        let col_refs: Vec<&str> = cols.iter().map(String::as_str).collect();
        let mut table = Table::new(
            format!(
                "Open problems (§12): what the dynamics do at the horizon (n = {n}, d = {d}, diam z(0) = {diam0:.4}, max‖z(0)‖ = {:.4})",
                max_norm(&z0_rows)
            ),
            &col_refs,
        );
        let mut models = Table::new("Open problems: the models run", &["run", "model"]);
        let mut total_mid = Vec::new();
        for (label, model, slug, v, horizon, paper, data) in runs {
            models.row(vec![label.clone(), model.clone()]);
            let mut row = vec![label.clone(), horizon.clone()];
            match (&data.z_final, &data.error) {
                (Some(z), None) => {
                    let zr = rows_f64(z, d);
                    for (ti, t) in r.taus.iter().enumerate() {
                        let c = tau_clusters(&zr, t.to_f64() * diam0);
                        if ti == r.taus.len() / 2 {
                            total_mid.push((label.clone(), c));
                        }
                        row.push(c.to_string());
                    }
                    // φ1* only when the leading eigenvalue is real and positive
                    let phi = v.as_ref().and_then(|v| {
                        let ev = eigenvalues_f64(v);
                        (ev.first().is_some_and(|e| e.1 == 0.0 && e.0 > 0.0))
                            .then(|| positive_duals(v, prec))
                            .flatten()
                            .filter(|du| du.left_eigenvectors)
                    });
                    match phi {
                        Some(du) => {
                            let f1 = &du.functionals[..1];
                            let p0 = project(f1, &z0f, n, d);
                            let pt = project(f1, z, n, d);
                            let tau = r.taus[r.taus.len() / 2].to_f64() * diameter(&p0);
                            row.push(tau_clusters(&pt, tau).to_string());
                        }
                        None => row.push("— (λ1 not real)".into()),
                    }
                    row.push(format!("{:.4e}", diameter(&zr)));
                    row.push(format!("{:.4e}", max_norm(&zr)));
                }
                (_, err) => {
                    row.push(format!(
                        "failed: {}",
                        err.clone().unwrap_or_else(|| "no state".into())
                    ));
                    while row.len() < cols.len() - 1 {
                        row.push("—".into());
                    }
                }
            }
            row.push(paper.clone());
            table.row(row);
            out.plots.push(trajectories(
                &format!("{slug}-tokens"),
                &format!("{label}: token trajectories z_i(t)"),
                &data.times,
                &data.states,
                n,
                d,
            ));
        }
        let mid = fmt_q(&r.taus[r.taus.len() / 2]);
        for (label, c) in &total_mid {
            let key = label.split('.').next().unwrap_or("run").trim().to_string();
            out.figure(
                format!("clusters_run_{key}"),
                *c as f64,
                format!("{c} τ-clusters of z at the horizon (τ = {mid}·diam₀) in run {label}"),
            );
        }
        out.tables.push(table);
        out.tables.push(models);
        out.note(
            "Exploratory (paper §12, open problems): nothing is asserted. Counts at a finite horizon say what the \
             dynamics look like then, not what the limit is. All runs are MPFR point arithmetic (RK4 or the layer \
             map), not certified, from the same seeded dyadic tokens.",
        );
        out.note(
            "τ-clusters are connected components of the graph joining tokens at distance ≤ τ, τ a fraction of diam z(0). \
             The φ1* column projects on the left eigenvector of the leading eigenvalue of V (Σ_h V_h for multi-head), \
             i.e. counts the parallel hyperplanes {φ1* = c} the tokens sit on.",
        );
    }
}

/// R = I + Δt Σ_h V_h.
fn multi_head_r(heads: &[Head], dt: &Rational, d: usize) -> Mat {
    let mut s = Mat::zeros(d, d);
    for h in heads {
        s = s.add(&h.v);
    }
    Mat::identity(d).add(&s.scale(dt))
}

/// What one run produced: sampled states (z, flat f64) and the final z.
#[derive(Default)]
pub struct RunData {
    times: Vec<f64>,
    states: Vec<Vec<f64>>,
    z_final: Option<Vec<Float>>,
    error: Option<String>,
}

/// One run for the tables: label, model, plot slug, V (for φ1*), horizon text,
/// the paper's expectation, the data.
pub type RunRow = (String, String, String, Option<Mat>, String, String, RunData);

/// An RK4 run of the flow sampled about every [`every`] steps (midpoints for the
/// pictures), with the final z or the error.
fn sampled_rk4(
    sys: &System,
    z0: &Mat,
    t: &Rational,
    h: &Rational,
    steps: usize,
    opts: &FlowOptions,
    d: usize,
) -> RunData {
    let k = every(steps);
    let hf = h.to_f64();
    let mut data = RunData::default();
    let res = rk4(sys, z0, t, h, opts, |f| {
        if f.step % k == 0 {
            data.times.push(f.step as f64 * hf);
            data.states.push(rows_f64(f.state, d).concat());
        }
    });
    match res {
        Ok(res) => data.z_final = Some(res.state),
        Err(e) => data.error = Some(e.to_string()),
    }
    data
}

/// Samples about 150 states of a run.
fn every(steps: usize) -> usize {
    (steps / 150).max(1)
}

/// Formats the eigenvalues of V compactly.
fn spectrum(v: &Mat) -> String {
    eigenvalues_f64(v)
        .iter()
        .map(|(re, im)| {
            if *im == 0.0 {
                format!("{re:.4}")
            } else {
                format!(
                    "{re:.4}{}{:.4}i",
                    if *im < 0.0 { "−" } else { "+" },
                    im.abs()
                )
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
