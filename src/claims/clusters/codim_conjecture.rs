//! clusters/codim-conjecture (\[paper\] `c:codim`, open; clusters.md §3). Report only.
//!
//! Conjecture: with k ≥ 1 the number of eigenvalues of V with positive real part (no
//! hypothesis on Q, K), every z_i(t) approaches one of at most three parallel affine
//! subspaces of codimension k. Equivalently (for real eigenvalues), the vectors
//! (φ_1*(z_i), …, φ_k*(z_i)) of dual functionals accumulate at no more than three
//! points.
//!
//! Run: per V and per seed, the rescaled flow ż_i = Σ_j P_ij V(z_j − z_i) (RK4 in MPFR,
//! [`crate::dynamics::flow::rk4`], Vars::Z, Q = K = I), z(0) uniform on [lo, hi]^d on the
//! dyadic grid, to T; then the number of τ-clusters (single linkage) of the projected
//! vectors at T for τ = ρ·diam(projected z(0)), several ρ. Nothing is asserted: a
//! count above 3 at finite T is not a counterexample (clusters may still merge), a
//! count ≤ 3 is not evidence of a limit. The φ_k* are left eigenvectors by inverse
//! iteration ([`crate::dynamics::variants::positive_duals`]); when a complex pair has
//! positive real part and k = d the coordinates are used (codimension d: points).
//!
//! A profile may add the authors' largest configuration (`largest`, [`super::largest_flow`]):
//! V symmetric sparse with eigenvalues of both signs, run on the flow's tier ladder
//! (double-double first, confirmed by MPFR at the spec's precision).

use super::common::{fmt_q, positive_rationals, prefixed};
use crate::claims::shape::Ctx;
use crate::dynamics::flow::{rk4, FlowOptions, Vars};
use crate::dynamics::model::Mat;
use crate::dynamics::model::{DyadicRange, MatrixSpec, System};
use crate::dynamics::plots::trajectories;
use crate::dynamics::variants::{diameter, max_norm, positive_duals, project, tau_clusters, Duals};
use crate::kernel::Checked;
use crate::outcome::{Observations, Presentation, Table};
use crate::spec::{exact, FieldError};
use rayon::prelude::*;
use rug::Rational;
use serde::{Deserialize, Serialize};

/// One value matrix to explore.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Label for tables.
    pub name: String,
    /// Dimension.
    pub d: usize,
    /// V (d × d).
    pub v: MatrixSpec,
}

/// Parameters of clusters/codim-conjecture as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// Number of tokens.
    pub n: usize,
    /// Token range `[lo, hi]` (exact literals).
    pub range: [String; 2],
    /// Seeds of the initial tokens (one run per seed and case).
    pub seeds: Vec<u64>,
    /// End time T (exact).
    pub t_end: String,
    /// RK4 step h (exact; T/h an integer).
    pub h: String,
    /// Relative cluster radii ρ: τ = ρ·diam of the projected initial vectors.
    pub taus: Vec<String>,
    /// The value matrices.
    pub cases: Vec<Case>,
    /// The authors' largest configuration made exact, on the flow's tier ladder (a
    /// profile adds it; [`super::largest_flow`]).
    #[serde(default)]
    pub largest: Vec<super::largest_flow::LargestSpec>,
}

/// Parameters of clusters/codim-conjecture, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// Number of tokens.
    pub n: usize,
    /// The grid of the initial tokens.
    pub range: DyadicRange,
    /// Seeds of the initial tokens.
    pub seeds: Vec<u64>,
    /// End time T.
    pub t_end: Rational,
    /// RK4 step h.
    pub h: Rational,
    /// T/h.
    pub steps: usize,
    /// Relative cluster radii ρ.
    pub taus: Vec<Rational>,
    /// The value matrices, named.
    pub cases: Vec<(String, Mat)>,
    /// The largest-configuration runs.
    pub largest: Vec<super::largest_flow::Largest>,
}

/// At most this many RK4 steps per run.
const MAX_STEPS: usize = 20_000;

/// clusters/codim-conjecture.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(r: Raw, at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        let p = &r;
        if p.n < 2 || p.n > 200 {
            return Err(FieldError::new("n", "must be between 2 and 200"));
        }
        if p.seeds.is_empty() {
            return Err(FieldError::new("seeds", "must not be empty"));
        }
        let t_end = exact("t_end", &p.t_end)?;
        let h = exact("h", &p.h)?;
        if t_end <= 0 {
            return Err(FieldError::new("t_end", "must be positive"));
        }
        if h <= 0 {
            return Err(FieldError::new("h", "must be positive"));
        }
        let ratio = Rational::from(&t_end / &h);
        if *ratio.denom() != 1 || ratio > MAX_STEPS as u32 {
            return Err(FieldError::new(
                "h",
                format!("t_end/h must be an integer of at most {MAX_STEPS}"),
            ));
        }
        let steps = ratio.numer().to_usize().unwrap_or(0);
        let taus = positive_rationals("taus", &p.taus)?;
        let range = DyadicRange::new("range", &p.range[0], &p.range[1], 20)?;
        if p.cases.is_empty() {
            return Err(FieldError::new("cases", "must not be empty"));
        }
        let mut cases = Vec::new();
        for (i, c) in p.cases.iter().enumerate() {
            let pre = format!("cases[{i}]");
            if c.d < 1 || c.d > 8 {
                return Err(FieldError::new(
                    format!("{pre}.d"),
                    "must be between 1 and 8",
                ));
            }
            let v =
                c.v.resolve("v", Some(c.d), c.d)
                    .map_err(|e| prefixed(&pre, e))?;
            if positive_duals(&v, 64).is_none() {
                return Err(FieldError::new(
                    format!("{pre}.v"),
                    "needs real eigenvalues in the right half-plane, or all d of them there",
                ));
            }
            cases.push((c.name.clone(), v));
        }
        Ok(Params {
            n: p.n,
            range,
            seeds: p.seeds.clone(),
            t_end,
            h,
            steps,
            taus,
            cases,
            largest: super::largest_flow::resolve(&p.largest, at)?,
        })
    }
    type Witness = Found;
    /// Every (V, seed) flow (an independent unit: run --shard i/N; seeds run in parallel).
    fn witness(p: &Params, ctx: &Ctx) -> Found {
        let r = p;
        let prec = ctx.prec();
        let opts = FlowOptions::new(prec, Vars::Z);
        let sample_every = (r.steps / 120).max(1);
        let h_f = r.h.to_f64();
        let mut cases = Vec::new();
        for (name, v) in &r.cases {
            let d = v.rows;
            let duals = positive_duals(v, prec)
                .expect("positive duals at the run precision (found at 64 bits when resolved)");
            let sys = System::new(Mat::identity(d), Mat::identity(d), v.clone());
            // one (V, seed) flow is an independent unit (run --shard i/N); seeds run in parallel
            let seed_runs: Vec<SeedRun> = p
                .seeds
                .par_iter()
                .enumerate()
                .map(|(si, &seed)| {
                    let key = format!("{name}, seed {seed}");
                    ctx.unit(&key, || {
                        let z0 = p.range.draw(p.n, d, seed);
                        let mut run = SeedRun::default();
                        let want_plot = si == 0;
                        let res = rk4(&sys, &z0, &r.t_end, &r.h, &opts, |f| {
                            if want_plot && (f.step % sample_every == 0) {
                                run.times.push(f.step as f64 * h_f);
                                run.states.push(
                                    project(&duals.functionals, f.state, f.n, f.d)
                                        .into_iter()
                                        .flatten()
                                        .collect(),
                                );
                            }
                        });
                        match res {
                            Ok(res) => {
                                let z0f = crate::dynamics::variants::to_floats(&z0, prec);
                                let p0 = project(&duals.functionals, &z0f, p.n, d);
                                let pt = project(&duals.functionals, &res.state, p.n, d);
                                let zt = crate::dynamics::variants::rows_f64(&res.state, d);
                                let d0 = diameter(&p0);
                                run.cells.push(format!("{d0:.4}"));
                                run.cells.push(format!("{:.4}", diameter(&pt)));
                                for (ti, t) in r.taus.iter().enumerate() {
                                    let c = tau_clusters(&pt, t.to_f64() * d0);
                                    if ti == r.taus.len() / 2 {
                                        run.mid_count = Some(c);
                                    }
                                    run.cells.push(c.to_string());
                                }
                                run.cells.push(format!("{:.4}", max_norm(&zt)));
                            }
                            Err(e) => run.cells.push(format!("flow failed: {e}")),
                        }
                        run
                    })
                })
                .collect();
            cases.push(CaseRun {
                duals,
                runs: seed_runs,
            });
        }
        // the largest configuration, one unit per run (the tier ladder inside)
        let largest = p
            .largest
            .iter()
            .map(|l| {
                ctx.unit(&format!("largest: {}", l.name), || {
                    super::largest_flow::run(l, prec, &p.taus, ctx.spec.check_tolerance)
                })
            })
            .collect();
        Found { cases, largest }
    }
    /// Nothing is asserted: the run is report-only.
    fn observe(_: &Params, _: &Found, _: Option<&Checked>, _: &Ctx, out: &mut Observations) {
        out.declare_report_only(
            "open conjecture (c:codim): observations of the projected cluster structure at finite T, nothing asserted",
        );
    }
    /// The cluster counts, the spectra, the trajectories of the first seed, the
    /// figures and the notes.
    fn present(p: &Params, w: &Found, _: Option<&Checked>, ctx: &Ctx, out: &mut Presentation) {
        let r = p;
        let mut cols: Vec<String> = vec![
            "V".into(),
            "seed".into(),
            "k".into(),
            "diam φ(z(0))".into(),
            "diam φ(z(T))".into(),
        ];
        for t in &r.taus {
            cols.push(format!("τ-clusters, τ = {}·diam₀", fmt_q(t)));
        }
        cols.push("max‖z(T)‖".into());
        let col_refs: Vec<&str> = cols.iter().map(String::as_str).collect();
        let mut table = Table::new(
            format!(
                "τ-clusters of (φ_1*(z_i), …, φ_k*(z_i)) at T = {} (n = {}, Q = K = I, RK4 h = {})",
                fmt_q(&r.t_end),
                p.n,
                fmt_q(&r.h)
            ),
            &col_refs,
        );
        let mut spectra = Table::new(
            "Value matrices: eigenvalues with positive real part and the functionals used",
            &[
                "V",
                "d",
                "k",
                "eigenvalues (Re > 0)",
                "e^(−T·min Re λ), Re λ > 0",
                "functionals",
            ],
        );
        let t_f = r.t_end.to_f64();
        let mut max_count = 0usize;
        let mut over_three = 0usize;
        let mut runs = 0usize;
        for (ci, ((name, v), case)) in r.cases.iter().zip(&w.cases).enumerate() {
            let d = v.rows;
            let duals = &case.duals;
            let k = duals.functionals.len();
            spectra.row(vec![
                name.clone(),
                d.to_string(),
                k.to_string(),
                duals
                    .eigenvalues
                    .iter()
                    .map(|(re, im)| {
                        if *im == 0.0 {
                            format!("{re:.9}")
                        } else {
                            format!(
                                "{re:.9} {} {:.9}i",
                                if *im < 0.0 { "−" } else { "+" },
                                im.abs()
                            )
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                format!(
                    "{:.3e}",
                    (-t_f
                        * duals
                            .eigenvalues
                            .iter()
                            .map(|e| e.0)
                            .fold(f64::INFINITY, f64::min))
                    .exp()
                ),
                if duals.left_eigenvectors {
                    "left eigenvectors φ_l* (unit norm)".into()
                } else {
                    "coordinates (k = d: the subspaces are points)".into()
                },
            ]);
            for (si, (&seed, run)) in p.seeds.iter().zip(&case.runs).enumerate() {
                let mut row = vec![name.clone(), seed.to_string(), k.to_string()];
                row.extend(run.cells.iter().cloned());
                while row.len() < cols.len() {
                    row.push("—".into());
                }
                if let Some(c) = run.mid_count {
                    max_count = max_count.max(c);
                    over_three += usize::from(c > 3);
                    runs += 1;
                }
                table.row(row);
                if si == 0 {
                    let mut plot = trajectories(
                        &format!("case{}-phi", ci + 1),
                        &format!("{name}, seed {seed}: (φ_1*(z_i(t)), …, φ_k*(z_i(t))), k = {k}"),
                        &run.times,
                        &run.states,
                        p.n,
                        k,
                    );
                    if k == 2 {
                        plot.x_label = "φ_1*(z_i)".into();
                        plot.y_label = "φ_2*(z_i)".into();
                    }
                    out.plots.push(plot);
                }
            }
        }
        let mid = fmt_q(&r.taus[r.taus.len() / 2]);
        out.figure(
            "max_clusters",
            max_count as f64,
            format!(
                "{max_count}: the largest number of τ-clusters of the projected tokens at T (τ = {mid}·diam₀) over all {runs} runs"
            ),
        );
        out.figure(
            "runs_over_three",
            over_three as f64,
            format!(
                "{over_three} of {runs} runs with more than 3 τ-clusters at T (τ = {mid}·diam₀)"
            ),
        );
        out.tables.push(table);
        out.tables.push(spectra);
        out.note(
            "Exploratory (open conjecture c:codim): nothing is asserted. A count above 3 at a finite T is not a \
             counterexample (clusters can still merge later); a count of at most 3 is not evidence of a limit. The flow \
             is MPFR point arithmetic (RK4), not certified; the functionals come from inverse iteration.",
        );
        out.note(
            "τ-clusters are connected components of the graph joining projected tokens at distance ≤ τ, with τ a \
             fraction of the diameter of the projected initial tokens; the table gives several fractions so that \
             clusters still in the middle of merging are visible.",
        );
        out.note(
            "The slowest approach to the conjectured subspaces is governed by the smallest positive real part of an \
             eigenvalue (column e^(−T·min Re λ) of the spectra table): where that factor is not small, counts at the \
             finer τ mostly measure clusters that are still merging, not the limit.",
        );
        super::largest_flow::present(
            out,
            &p.largest,
            &w.largest,
            &p.taus,
            ctx.spec.check_tolerance,
        );
    }
}

/// One (V, seed) flow's results: the table cells after the seed's, the cluster count
/// at the middle τ (None when the flow failed), and the sampled projections for the
/// plot (first seed only).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct SeedRun {
    cells: Vec<String>,
    mid_count: Option<usize>,
    times: Vec<f64>,
    states: Vec<Vec<f64>>,
}

/// Every value matrix's runs, and the largest-configuration runs.
pub struct Found {
    /// Per value matrix.
    cases: Vec<CaseRun>,
    /// Per largest-configuration run.
    largest: Vec<super::largest_flow::LargestRun>,
}

/// One value matrix: its positive-real-part duals and every seed's run.
pub struct CaseRun {
    /// The eigenvalues with positive real part and the functionals.
    duals: Duals,
    /// Every seed's run, in seed order.
    runs: Vec<SeedRun>,
}
