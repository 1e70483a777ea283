//! sparse/log-dimension: at fixed t, the smallest d for which C(t) holds with
//! probability ≥ q grows like (4/t²)·ln n + O(1) (sparse.md §4; d = O(log n) is
//! \[paper\], the constants are \[derived\]: a check of the project's explicit
//! reconstruction of the Likhosherstov–Choromanski–Weller theorem).
//!
//! Per seed, the smallest d with t*(d) ≤ t over nested column prefixes of one long
//! S is exact (`crate::sparse::dimension::min_dimension`); d_min(n) is the
//! q-quantile over the seeds (the ⌈q·R⌉-th smallest, an exact integer). The fit
//! d_min ≈ a·ln n + b and its assertions are f64 observations; d_min(n) ≤ d_ub(n)
//! is an exact integer comparison.

use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::StatementError;
use crate::kernel::expr::build::{eq, q};
use crate::kernel::{Checked, Statement};
use crate::outcome::{Observations, Plot, Presentation, Series, Style, Table};
use crate::sparse::dimension::{min_dimension, union_bound_dimension};
use crate::spec::{check_each, ensure, exact, FieldError};
use rayon::prelude::*;
use rug::Rational;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};

/// A §5 union-bound reference value.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UbReference {
    /// n.
    pub n: usize,
    /// t (exact literal).
    pub t: String,
    /// d_ub = ⌈(2/t²)·ln(n²/δ)⌉.
    pub d_ub: u64,
}

/// Parameters of sparse/log-dimension as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// log₂ n for each n of the sweep (n = 2^e), increasing; must include e_max/2.
    pub log2_n: Vec<u32>,
    /// Thresholds t (exact literals).
    pub t: Vec<String>,
    /// Seeds per (n, t) (at most); seeds are seed_base + i.
    pub seeds: u64,
    /// Optional cost cap: at each n, seeds(n) = min(seeds, max(min_seeds,
    /// ⌊pair_budget / (n(n−1)/2)⌋)), so the largest n use fewer seeds.
    #[serde(default)]
    pub pair_budget: Option<u64>,
    /// The least number of seeds when `pair_budget` applies.
    #[serde(default = "default_min_seeds")]
    pub min_seeds: u64,
    /// First seed.
    pub seed_base: u64,
    /// Quantile q ∈ (0, 1] (exact literal): d_min(n) = the ⌈q·R⌉-th smallest per-seed d.
    pub quantile: String,
    /// δ of the union-bound dimension d_ub (exact literal).
    pub delta: String,
    /// Prefix scans stop at d_max = scan_factor · d_ub(n); a seed that needs more
    /// counts as d > d_max.
    pub scan_factor: usize,
    /// §5 union-bound values to reproduce.
    pub reference: Vec<UbReference>,
    /// Bootstrap resamples of the seeds (0 = none): at every n the R per-seed
    /// values are resampled with replacement and the fits redone, to show how far
    /// the seeds' sampling noise moves each fitted quantity.
    #[serde(default)]
    pub bootstrap: u64,
    /// Seed of the bootstrap's resampling stream.
    #[serde(default)]
    pub bootstrap_seed: u64,
    /// With a bootstrap, a fitted assertion counts as holding only if it holds
    /// for the point estimate and in at least this fraction of the resamples
    /// (exact literal in (0, 1]); otherwise the sampling noise of the seeds
    /// decides it, and it is reported as not resolved.
    #[serde(default = "default_resolve")]
    pub resolve: String,
}

fn default_resolve() -> String {
    "19/20".into()
}

fn default_min_seeds() -> u64 {
    16
}

impl Raw {
    /// The number of seeds used at n (see `pair_budget`).
    pub fn seeds_at(&self, n: usize) -> u64 {
        match self.pair_budget {
            None => self.seeds,
            Some(b) => {
                let pairs = (n as u64 * (n as u64 - 1) / 2).max(1);
                (b / pairs).max(self.min_seeds).min(self.seeds)
            }
        }
    }
}

/// Parameters of sparse/log-dimension, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The parameters as written (names and tables quote them).
    pub raw: Raw,
    /// The thresholds t, one per `t`.
    t: Vec<Rational>,
    /// The quantile q.
    quantile: Rational,
    /// δ.
    delta: Rational,
    /// The resolve fraction.
    resolve: Rational,
    /// The t of each reference row.
    reference_t: Vec<Rational>,
    /// The largest exponent of `log2_n`.
    emax: u32,
    /// d_ub(n, t) for each t (outer) and each n of `log2_n` (inner).
    d_ub: Vec<Vec<u64>>,
    /// d_ub of each reference row.
    reference_d_ub: Vec<u64>,
}

/// The largest sign matrix a seed's scan may draw, n · d_max bits (512 MiB): a t so
/// small that d_ub explodes is refused when the spec is read, not by running out of
/// memory hours later.
pub const MAX_SIGN_BITS: u64 = 1 << 32;

/// d_ub(n, t) for the spec's δ, or the error naming `field`: it must exist and, with
/// `scan_factor`, keep a seed's sign matrix within [`MAX_SIGN_BITS`].
fn checked_d_ub(
    field: &str,
    n: u64,
    t: &Rational,
    delta: &Rational,
    scan_factor: usize,
) -> Result<u64, FieldError> {
    let too_big = |what: String| {
        FieldError {
        field: field.to_string(),
        reason: format!(
            "{what}: the scan would draw n·d_max bits per seed for n = {n}, more than the {MAX_SIGN_BITS} allowed; \
             use a larger t"
        ),
    }
    };
    let d = union_bound_dimension(n, t, delta)
        .ok_or_else(|| too_big("d_ub = ⌈(2/t²)·ln(n²/δ)⌉ does not fit in 64 bits".into()))?;
    match (scan_factor as u64)
        .checked_mul(d)
        .and_then(|m| m.checked_mul(n))
    {
        Some(bits) if bits <= MAX_SIGN_BITS => Ok(d),
        _ => Err(too_big(format!("d_ub = {d}, d_max = {scan_factor}·d_ub"))),
    }
}

/// sparse/log-dimension.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(raw: Raw, _at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        check_each(&raw.log2_n, "log2_n", |f, &e| {
            ensure(
                (2..=20).contains(&e),
                f,
                format!("2^{e} is out of range: use exponents 2 to 20"),
            )
        })?;
        ensure(
            raw.log2_n.windows(2).all(|w| w[0] < w[1]),
            "log2_n",
            "must be strictly increasing",
        )?;
        ensure(
            raw.log2_n.len() >= 3,
            "log2_n",
            "needs at least three sizes for the fits",
        )?;
        let emax = *raw.log2_n.last().expect("nonempty");
        ensure(
            emax.is_multiple_of(2) && raw.log2_n.contains(&(emax / 2)),
            "log2_n",
            format!(
                "must contain n_mid = √n_max, i.e. exponent {} (the largest, {emax}, must be even)",
                emax / 2
            ),
        )?;
        check_each(&raw.t, "t", |f, s| match crate::kernel::parse_rational(s) {
            Ok(t) => ensure(t > 0 && t < 1, f, "must lie in (0, 1)"),
            Err(e) => Err(FieldError::new(f, e.to_string())),
        })?;
        ensure(
            (1..=10_000).contains(&raw.seeds),
            "seeds",
            "out of range: use 1 to 10000",
        )?;
        ensure(
            raw.seed_base.checked_add(raw.seeds).is_some(),
            "seed_base",
            "seed_base + seeds overflows u64",
        )?;
        ensure(
            (1..=raw.seeds).contains(&raw.min_seeds),
            "min_seeds",
            "must lie in 1..=seeds",
        )?;
        ensure(
            raw.pair_budget != Some(0),
            "pair_budget",
            "must be positive",
        )?;
        let q = exact("quantile", &raw.quantile)?;
        ensure(q > 0 && q <= 1, "quantile", "must lie in (0, 1]")?;
        let d = exact("delta", &raw.delta)?;
        ensure(d > 0 && d < 1, "delta", "must lie in (0, 1)")?;
        let r = exact("resolve", &raw.resolve)?;
        ensure(r > 0 && r <= 1, "resolve", "must lie in (0, 1]")?;
        ensure(
            raw.bootstrap <= 100_000,
            "bootstrap",
            "out of range: use 0 to 100000 resamples",
        )?;
        ensure(
            (1..=8).contains(&raw.scan_factor),
            "scan_factor",
            "out of range: use 1 to 8",
        )?;
        let mut reference_t = Vec::with_capacity(raw.reference.len());
        for (i, r) in raw.reference.iter().enumerate() {
            let t = exact(&format!("reference[{i}].t"), &r.t)?;
            ensure(
                t > 0 && t < 1,
                format!("reference[{i}].t"),
                "must lie in (0, 1)",
            )?;
            ensure(r.n >= 2, format!("reference[{i}].n"), "must be at least 2")?;
            reference_t.push(t);
        }
        let t = raw
            .t
            .iter()
            .map(|s| exact("t", s))
            .collect::<Result<Vec<_>, _>>()?;
        let d_ub = t
            .iter()
            .map(|t| {
                raw.log2_n
                    .iter()
                    .map(|&e| checked_d_ub("t", 1u64 << e, t, &d, raw.scan_factor))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        let reference_d_ub = raw
            .reference
            .iter()
            .zip(&reference_t)
            .enumerate()
            .map(|(i, (r, t))| {
                union_bound_dimension(r.n as u64, t, &d).ok_or_else(|| FieldError {
                    field: format!("reference[{i}].t"),
                    reason: "d_ub = ⌈(2/t²)·ln(n²/δ)⌉ does not fit in 64 bits: use a larger t"
                        .into(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Params {
            d_ub,
            reference_d_ub,
            t,
            quantile: q,
            delta: d,
            resolve: r,
            reference_t,
            emax,
            raw,
        })
    }
    /// The §5 union-bound table: d_ub = ⌈(2/t²)·ln(n²/δ)⌉ (certified ceilings).
    /// The sweep's d_min ≤ d_ub are observations: the seeds' scans are not part of
    /// any statement.
    fn statement(
        p: &Params,
        claim: &str,
        _hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        let mut st = Statement::new(claim);
        for (r, t) in p.raw.reference.iter().zip(&p.reference_t) {
            let dl = &p.delta;
            st.state(
                format!(
                    "d_ub(n = {}, t = {}, δ = {}) = {}",
                    r.n, r.t, p.raw.delta, r.d_ub
                ),
                &eq(
                    crate::sparse::construct::d_expr(r.n as u64, q(t), q(dl)),
                    r.d_ub.into(),
                ),
            );
        }
        Some(Ok(st))
    }

    type Witness = Vec<Sweep>;
    /// Every t's sweep: per seed the exact d_min (one seed is an independent unit:
    /// `run --shard i/N`), the fits and the bootstrap over the seeds.
    fn witness(p: &Params, ctx: &Ctx) -> Vec<Sweep> {
        let q = p.quantile.clone();
        let emax = p.emax;
        let mut sweeps = Vec::new();
        for ((ts, t), d_ubs) in p.raw.t.iter().zip(&p.t).zip(&p.d_ub) {
            let t = t.clone();
            let mut cells = Vec::new();
            for (&e, &d_ub) in p.raw.log2_n.iter().zip(d_ubs) {
                let n = 1usize << e;
                let d_max = p.raw.scan_factor * d_ub as usize;
                let seeds = p.raw.seeds_at(n);
                // progress per finished seed (a full-profile n = 2^16 step takes half an hour)
                let done = AtomicU64::new(0);
                let tick = |k: u64| {
                    // the changing part first: a narrow terminal cuts the message's end
                    ctx.progress.message_with(|| {
                        format!("{k}/{seeds} seeds, n = 2^{e}, t = {ts} ({})", ctx.spec.id)
                    })
                };
                tick(0);
                let per_seed: Vec<Option<usize>> = (0..seeds)
                    .into_par_iter()
                    .map(|i| {
                        // one seed's exact d_min: an independent unit (run --shard i/N)
                        let key = format!("t = {ts}, n = 2^{e}, seed {}", p.raw.seed_base + i);
                        let r = ctx.unit(&key, || min_dimension(n, &t, p.raw.seed_base + i, d_max));
                        tick(done.fetch_add(1, Ordering::Relaxed) + 1);
                        r
                    })
                    .collect();
                // a seed whose scan ends without C(t) counts as d > d_max (censored)
                let censored = per_seed.iter().filter(|x| x.is_none()).count();
                let mut ds: Vec<usize> = per_seed
                    .into_iter()
                    .map(|x| x.unwrap_or(usize::MAX))
                    .collect();
                ds.sort_unstable();
                cells.push(Cell {
                    e,
                    d_ub,
                    d_max,
                    seeds,
                    censored,
                    ds,
                });
            }
            let missing = cells.iter().any(|c| quantile(&c.ds, &q) == usize::MAX);
            let fitted = if missing {
                None
            } else {
                let pts: Vec<(f64, f64)> = cells
                    .iter()
                    .map(|c| ((c.n() as f64).ln(), quantile(&c.ds, &q) as f64))
                    .collect();
                let ub_pts: Vec<(f64, f64)> = cells
                    .iter()
                    .map(|c| ((c.n() as f64).ln(), c.d_ub as f64))
                    .collect();
                let mid = cells
                    .iter()
                    .position(|c| c.e == emax / 2)
                    .expect("n_mid is in the sweep (resolution checks that log2_n holds it)");
                let fit = fit(&pts, mid);
                let lns: Vec<f64> = pts.iter().map(|&(x, _)| x).collect();
                let samples: Vec<Vec<usize>> = cells.iter().map(|c| c.ds.clone()).collect();
                let boot = bootstrap(
                    &lns,
                    &samples,
                    &q,
                    mid,
                    p.raw.bootstrap,
                    p.raw.bootstrap_seed,
                );
                let min_seeds = samples.iter().map(Vec::len).min().unwrap_or(0);
                Some(Fitted {
                    pts,
                    ub_pts,
                    fit,
                    boot,
                    min_seeds,
                })
            };
            sweeps.push(Sweep { cells, fitted });
        }
        sweeps
    }
    /// d_min(n) ≤ d_ub(n) (exact integers) and the fits' assertions with their
    /// bootstrap (f64 observations).
    fn observe(p: &Params, w: &Vec<Sweep>, _: Option<&Checked>, _: &Ctx, o: &mut Observations) {
        let q = &p.quantile;
        let resolve = &p.resolve;
        let emax = p.emax;
        for ((ts, t), sweep) in p.raw.t.iter().zip(&p.t).zip(w) {
            let t_f = t.to_f64();
            let mut all_le = true;
            for c in &sweep.cells {
                let (e, d_ub) = (c.e, c.d_ub);
                let dq = quantile(&c.ds, q);
                if dq == usize::MAX {
                    o.observe(
                        format!("t = {ts}, n = 2^{e}: d_min(n) ≤ d_ub(n) = {d_ub}"),
                        false,
                        format!(
                            "{} of {} seeds need d > {}: the {} quantile exceeds d_ub",
                            c.censored, c.seeds, c.d_max, p.raw.quantile
                        ),
                    );
                    continue;
                }
                all_le &= dq as u64 <= d_ub;
            }
            let Some(fd) = &sweep.fitted else {
                continue;
            };
            o.observe(
                format!("t = {ts}: d_min(n) ≤ d_ub(n) for every n (exact integers)"),
                all_le,
                format!(
                    "q = {}, up to {} seeds per n (see the table), δ = {}",
                    p.raw.quantile, p.raw.seeds, p.raw.delta
                ),
            );
            let f = fd.fit;
            let (a, b) = (f.a, f.b);
            let boot = &fd.boot;
            // resolved: at least ⌈resolve·B⌉ of the B resamples agree (exact integers)
            let need = ceil_mul(resolve, boot.len() as u64);
            let resolved = |count: u64| boot.is_empty() || count >= need;
            let pct_of = |count: u64| 100.0 * count as f64 / boot.len().max(1) as f64;
            let bound = 1.1 * 4.0 / (t_f * t_f);
            let [(a_pct, a_n), (s_pct, s_n), (r_pct, r_n)] = spreads(fd, t_f);
            let interval = |what: &str, pct: [f64; 3], count: u64, digits: usize| {
                if boot.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; bootstrap over seeds ({} resamples): 90% interval of {what} [{:.digits$}, {:.digits$}], holds in {:.1}% of resamples{}",
                        boot.len(),
                        pct[0],
                        pct[2],
                        pct_of(count),
                        if resolved(count) {
                            String::new()
                        } else {
                            format!(
                                " (< {}: not resolved by the seeds)",
                                p.raw.resolve
                            )
                        }
                    )
                }
            };
            o.observe(
                format!("t = {ts}: fitted slope 0 < a ≤ 1.1·4/t² = {bound:.1}"),
                a > 0.0 && a <= bound && resolved(a_n),
                format!(
                    "d_min ≈ {a:.2}·ln n + {b:.1} (union-bound slope 4/t² = {:.1}){}",
                    4.0 / (t_f * t_f),
                    interval("a", a_pct, a_n, 2)
                ),
            );
            let share = f.share.abs();
            o.observe(
                format!("t = {ts}: a fitted c·(ln n)² term is < 10% of d_min at n = 2^{emax}"),
                share < 0.1 && resolved(s_n),
                format!(
                    "d_min ≈ {:.3}·(ln n)² + {:.2}·ln n + {:.1}; |c|·(ln n_max)²/d_min(n_max) = {share:.4}{}",
                    f.quad[0],
                    f.quad[1],
                    f.quad[2],
                    interval("the signed share", s_pct, s_n, 3)
                ),
            );
            let ratio = f.ratio;
            o.observe(
                format!(
                    "t = {ts}: d_min(n_max)/ln n_max ≤ 1.25·d_min(n_mid)/ln n_mid (n_max = 2^{emax})"
                ),
                ratio <= 1.25 && resolved(r_n),
                format!("ratio {ratio:.4}{}", interval("the ratio", r_pct, r_n, 4)),
            );
        }
    }
    /// The tables of d_min(n), the fits and their bootstrap, the union-bound
    /// references, the plot, the figures and the notes.
    fn present(p: &Params, w: &Vec<Sweep>, _: Option<&Checked>, _: &Ctx, o: &mut Presentation) {
        let q = &p.quantile;
        let mut plot = Plot {
            slug: "dmin".into(),
            title: "d_min(n) (q-quantile over seeds), its fit a·ln n + b, and the union bound d_ub"
                .into(),
            x_label: "ln n".into(),
            y_label: "d".into(),
            x_log: false,
            y_log: false,
            series: Vec::new(),
            heatmap: None,
            paths: false,
        };
        let mut table = Table::new(
            "d_min(n): quantile over seeds of the smallest d with t*(d) ≤ t (exact per seed)",
            &[
                "t",
                "n",
                "seeds",
                "d_min (quantile)",
                "median",
                "d_ub (union bound)",
                "d_min / ln n",
                "d_min ≤ d_ub",
            ],
        );
        let mut fits = Table::new(
            "Fits of d_min against ln n (f64 least squares)",
            &[
                "t",
                "a (slope)",
                "b",
                "bound 1.1·4/t²",
                "quadratic c",
                "c·(ln n_max)² / d_min(n_max)",
                "ratio (d/ln n at n_max) / (at n_mid)",
            ],
        );
        let mut spread_table = Table::new(
            format!(
                "Sampling noise: bootstrap over seeds ({} resamples with replacement of the seeds at every n, fits redone; 5% / 50% / 95%)",
                p.raw.bootstrap
            ),
            &[
                "t",
                "seeds (fewest at any n)",
                "slope a",
                "slope bound holds",
                "signed quadratic share c·(ln n_max)²/d_min(n_max)",
                "|share| < 10% holds",
                "ratio",
                "ratio ≤ 1.25 holds",
            ],
        );
        for ((ts, t), sweep) in p.raw.t.iter().zip(&p.t).zip(w) {
            let t_f = t.to_f64();
            for c in &sweep.cells {
                let (e, d_ub, d_max, seeds) = (c.e, c.d_ub, c.d_max, c.seeds);
                let n = c.n();
                let ds = &c.ds;
                let dq = quantile(ds, q);
                if dq == usize::MAX {
                    continue;
                }
                let med = quantile(ds, &Rational::from((1, 2)));
                let le = dq as u64 <= d_ub;
                let ln_n = (n as f64).ln();
                table.row(vec![
                    ts.clone(),
                    format!("2^{e}"),
                    seeds.to_string(),
                    dq.to_string(),
                    if med == usize::MAX {
                        format!("> {d_max}")
                    } else {
                        med.to_string()
                    },
                    d_ub.to_string(),
                    format!("{:.2}", dq as f64 / ln_n),
                    if le { "yes".into() } else { "no".into() },
                ]);
            }
            let Some(fd) = &sweep.fitted else {
                continue;
            };
            let f = fd.fit;
            let (a, b) = (f.a, f.b);
            let (share, ratio) = (f.share.abs(), f.ratio);
            let bound = 1.1 * 4.0 / (t_f * t_f);
            let boot = &fd.boot;
            let pct_of = |count: u64| 100.0 * count as f64 / boot.len().max(1) as f64;
            let [(a_pct, a_n), (s_pct, s_n), (r_pct, r_n)] = spreads(fd, t_f);
            let pts = &fd.pts;
            let ub_pts = fd.ub_pts.clone();
            if !boot.is_empty() {
                spread_table.row(vec![
                    ts.clone(),
                    fd.min_seeds.to_string(),
                    format!("{:.2} / {:.2} / {:.2}", a_pct[0], a_pct[1], a_pct[2]),
                    format!("{:.1}%", pct_of(a_n)),
                    format!("{:.3} / {:.3} / {:.3}", s_pct[0], s_pct[1], s_pct[2]),
                    format!("{:.1}%", pct_of(s_n)),
                    format!("{:.4} / {:.4} / {:.4}", r_pct[0], r_pct[1], r_pct[2]),
                    format!("{:.1}%", pct_of(r_n)),
                ]);
            }
            fits.row(vec![
                ts.clone(),
                format!("{a:.3}"),
                format!("{b:.2}"),
                format!("{bound:.1}"),
                format!("{:.4}", f.quad[0]),
                format!("{share:.4}"),
                format!("{ratio:.4}"),
            ]);
            o.figure(
                format!("fitted slope a at t = {ts}"),
                a,
                format!("{a:.3} (4/t² = {:.1})", 4.0 / (t_f * t_f)),
            );
            plot.series.push(Series {
                name: format!("d_min, t={ts}"),
                style: Style::Points,
                points: pts.clone(),
            });
            plot.series.push(Series {
                name: format!("fit, t={ts}"),
                style: Style::Line,
                points: pts.iter().map(|&(x, _)| (x, a * x + b)).collect(),
            });
            plot.series.push(Series {
                name: format!("d_ub, t={ts}"),
                style: Style::Dashed,
                points: ub_pts,
            });
        }
        let mut refs = Table::new(
            "Union-bound dimension d_ub = ⌈(2/t²)·ln(n²/δ)⌉ (sparse.md §5)",
            &["n", "t", "δ", "d_ub", "reference"],
        );
        for (r, &d) in p.raw.reference.iter().zip(&p.reference_d_ub) {
            refs.row(vec![
                r.n.to_string(),
                r.t.clone(),
                p.raw.delta.clone(),
                d.to_string(),
                r.d_ub.to_string(),
            ]);
        }
        o.tables.push(table);
        o.tables.push(fits);
        if p.raw.bootstrap > 0 {
            o.tables.push(spread_table);
        }
        o.tables.push(refs);
        o.plots.push(plot);
        o.note(
            "Check of the project's explicit reconstruction of the Likhosherstov–Choromanski–Weller theorem: \
             d = O(log n) is the paper's (abstract); the slope 4/t², the quantile q and the union-bound values are \
             [derived] (sparse.md §4–§5), not the paper's constants.",
        );
        o.note(
            "Both the union bound and the extreme value of ~n²/2 near-Gaussian inner products give the leading slope \
             4/t², so the empirical slope approaches it from below; the fit is an observation, not a proof.",
        );
    }
}

/// ⌈q·r⌉ in exact arithmetic, for q ∈ (0, 1] (so at most r).
fn ceil_mul(q: &Rational, r: u64) -> u64 {
    Rational::from(q * r).ceil().numer().to_u64().unwrap_or(r)
}

/// The ⌈q·R⌉-th smallest value (1-based) of the R sorted values, exact.
pub fn quantile<T: Copy>(sorted: &[T], q: &Rational) -> T {
    let r = sorted.len() as u64;
    sorted[ceil_mul(q, r).clamp(1, r) as usize - 1]
}

/// Least-squares fit of y on the columns of `x` (normal equations; a handful of
/// points, f64).
pub fn least_squares(rows: &[Vec<f64>], y: &[f64]) -> Vec<f64> {
    let m = rows[0].len();
    let mut a = nalgebra::DMatrix::<f64>::zeros(m, m);
    let mut b = nalgebra::DVector::<f64>::zeros(m);
    for (r, &yv) in rows.iter().zip(y) {
        for i in 0..m {
            b[i] += r[i] * yv;
            for j in 0..m {
                a[(i, j)] += r[i] * r[j];
            }
        }
    }
    a.lu()
        .solve(&b)
        .map(|v| v.iter().copied().collect())
        .unwrap_or_else(|| vec![f64::NAN; m])
}

/// The fitted quantities sparse.md asserts on, from the points (ln n, d_min(n)).
#[derive(Debug, Clone, Copy)]
pub struct Fit {
    /// Slope a of d_min ≈ a·ln n + b.
    pub a: f64,
    /// Intercept b.
    pub b: f64,
    /// Coefficients (c, c₁, c₀) of d_min ≈ c·(ln n)² + c₁·ln n + c₀.
    pub quad: [f64; 3],
    /// c·(ln n_max)²/d_min(n_max), with its sign (the assertion uses |·|).
    pub share: f64,
    /// (d_min/ln n at n_max) / (at n_mid).
    pub ratio: f64,
}

/// Fits `pts` (increasing ln n, the last at n_max); `mid` is the index of n_mid.
pub fn fit(pts: &[(f64, f64)], mid: usize) -> Fit {
    let xs: Vec<Vec<f64>> = pts.iter().map(|&(x, _)| vec![x, 1.0]).collect();
    let ys: Vec<f64> = pts.iter().map(|&(_, y)| y).collect();
    let ab = least_squares(&xs, &ys);
    let xq: Vec<Vec<f64>> = pts.iter().map(|&(x, _)| vec![x * x, x, 1.0]).collect();
    let cq = least_squares(&xq, &ys);
    let (ln_max, d_at_max) = *pts.last().expect("at least three sizes");
    let (ln_mid, d_mid) = pts[mid];
    Fit {
        a: ab[0],
        b: ab[1],
        quad: [cq[0], cq[1], cq[2]],
        share: cq[0] * ln_max * ln_max / d_at_max,
        ratio: (d_at_max / ln_max) / (d_mid / ln_mid),
    }
}

/// Bootstrap over seeds: `b` resamples; at each n the per-seed values `ds[i]`
/// are drawn R times with replacement, d_min(n) is their q-quantile, and the
/// points are refitted. Deterministic (SplitMix64 from `seed`, integer draws).
pub fn bootstrap(
    lns: &[f64],
    ds: &[Vec<usize>],
    q: &Rational,
    mid: usize,
    b: u64,
    seed: u64,
) -> Vec<Fit> {
    let mut rng = crate::rng::SplitMix64::new(seed);
    let mut buf = Vec::new();
    (0..b)
        .map(|_| {
            let pts: Vec<(f64, f64)> = lns
                .iter()
                .zip(ds)
                .map(|(&x, v)| {
                    buf.clear();
                    buf.extend((0..v.len()).map(|_| v[rng.below(v.len() as u64) as usize]));
                    buf.sort_unstable();
                    (x, quantile(&buf, q) as f64)
                })
                .collect();
            fit(&pts, mid)
        })
        .collect()
}

/// One n of one t's sweep: the per-seed exact d_min, sorted (a seed whose scan
/// ends without C(t) counts as d > d_max, `usize::MAX`).
#[derive(Debug, Clone)]
pub struct Cell {
    /// log₂ n.
    pub e: u32,
    /// d_ub(n).
    pub d_ub: u64,
    /// The scans' end, scan_factor · d_ub.
    pub d_max: usize,
    /// The seeds at this n.
    pub seeds: u64,
    /// Seeds that need d > d_max.
    pub censored: usize,
    /// The per-seed d_min, sorted.
    pub ds: Vec<usize>,
}

impl Cell {
    /// n = 2^e.
    fn n(&self) -> usize {
        1usize << self.e
    }
}

/// The fits of one t's sweep (f64), when every n has a quantile.
#[derive(Debug, Clone)]
pub struct Fitted {
    /// The points (ln n, d_min(n)).
    pub pts: Vec<(f64, f64)>,
    /// The points (ln n, d_ub(n)).
    pub ub_pts: Vec<(f64, f64)>,
    /// The fit.
    pub fit: Fit,
    /// The bootstrap fits over the seeds.
    pub boot: Vec<Fit>,
    /// The fewest seeds at any n.
    pub min_seeds: usize,
}

/// One t's sweep.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// Every n, in order.
    pub cells: Vec<Cell>,
    /// The fits (`None` when an n's quantile exceeds d_max).
    pub fitted: Option<Fitted>,
}

/// The bootstrap of one quantity: its 5%, 50% and 95% points, and how many
/// resamples satisfy `holds`.
fn spread(boot: &[Fit], get: fn(&Fit) -> f64, holds: &dyn Fn(f64) -> bool) -> ([f64; 3], u64) {
    let mut v: Vec<f64> = boot.iter().map(get).collect();
    v.sort_by(f64::total_cmp);
    let count = v.iter().filter(|&&x| holds(x)).count() as u64;
    let pct = if v.is_empty() {
        [f64::NAN; 3]
    } else {
        [(1, 20), (1, 2), (19, 20)].map(|p| quantile(&v, &Rational::from(p)))
    };
    (pct, count)
}

/// The bootstrap spreads of a sweep's fits: (slope, signed share, ratio), each as
/// (5/50/95%, resamples that hold).
type Spreads = [([f64; 3], u64); 3];

fn spreads(f: &Fitted, t_f: f64) -> Spreads {
    let bound = 1.1 * 4.0 / (t_f * t_f);
    [
        spread(&f.boot, |f| f.a, &|a| a > 0.0 && a <= bound),
        spread(&f.boot, |f| f.share, &|s| s.abs() < 0.1),
        spread(&f.boot, |f| f.ratio, &|r| r <= 1.25),
    ]
}
