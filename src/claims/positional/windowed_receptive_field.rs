//! positional/windowed-receptive-field: the multi-layer receptive field of windowed
//! attention, by exact reachability.
//!
//! Windowed attention (Longformer-style, Chi et al. Fig. 2) gives bias 0 inside the
//! window and −∞ outside; MPFR's e^{−∞} is exactly +0, so the attention outside the
//! window is exactly 0 and the layer's dependency pattern is the boolean band matrix
//! A\[i\]\[j\] = 1 iff 0 ≤ i − j ≤ d, with d = w − 1 (W1) or d = w (W2). The last row of
//! A^ℓ (ℓ layers) is computed exactly on bitsets by the kernel's data operation
//! `band-reach`; the statement asserts that its support — the largest distance r
//! with a nonzero entry — is min(ℓd, L − 1), with every smaller distance reached
//! too, that the fitting windows are the claimed ones, and the Fig. 2 rows. With ℓ = 12 and L_tr = 512 the receptive field ℓd + 1 fits in the
//! training window iff w ≤ 43 (W1) or w ≤ 42 (W2).

use super::common::{SplitMix64, Window};
use crate::certificate::Hints;
use crate::claims::shape::Ctx;
use crate::claims::shape::StatementError;
use crate::kernel::expr::build::{
    add, and, call, eq, forall, ge, gt, int, le, lt, min, mul, sub, var, Term,
};
use crate::kernel::{expr, softmax, Checked, Interval, Statement};
use crate::outcome::{Plot, Presentation, Series, Style, Table};
use crate::spec::{check_each, ensure, FieldError};
use rayon::prelude::*;
use rug::float::{Round, Special};
use rug::Float;
use serde::{Deserialize, Serialize};

/// A claimed largest window whose receptive field fits in the training length.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimedFit {
    /// The window convention.
    pub convention: Window,
    /// The largest fitting w.
    pub window: u64,
}

/// The single-layer pattern of Fig. 2 for one convention.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fig2 {
    /// The window convention.
    pub convention: Window,
    /// The attended distances r of a query with at least that many predecessors.
    pub distances: Vec<u64>,
}

/// Parameters of positional/windowed-receptive-field.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Windows w.
    pub windows: Vec<u64>,
    /// Layers ℓ = 1..=max_layers.
    pub max_layers: u32,
    /// Sequence lengths L.
    pub lengths: Vec<u64>,
    /// Window conventions.
    pub conventions: Vec<Window>,
    /// The training length L_tr.
    pub train_length: u64,
    /// Layers of the "fits in L_tr" sweep.
    pub fit_layers: u32,
    /// The sweep runs over w = 1..=fit_sweep_max.
    pub fit_sweep_max: u64,
    /// Claimed largest fitting windows.
    pub claimed_max_fit: Vec<ClaimedFit>,
    /// The window of the Fig. 2 example.
    pub fig2_window: u64,
    /// The Fig. 2 pattern per convention.
    pub fig2: Vec<Fig2>,
    /// Length of the attention row used for the exact-zero tail check.
    pub tail_length: u64,
    /// Seed of its content logits.
    pub seed: u64,
}

/// positional/windowed-receptive-field.
pub struct Claim;

/// The parameters need no resolution beyond their types: `resolve` checks the ranges
/// and passes them on.
impl crate::claims::shape::Claim for Claim {
    type Raw = Params;
    type Params = Params;
    fn resolve(raw: Params, _at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        check_each(&raw.windows, "windows", |f, &w| {
            ensure(
                (1..=100_000).contains(&w),
                f,
                "window must lie in 1..=100000",
            )
        })?;
        ensure(
            (1..=256).contains(&raw.max_layers),
            "max_layers",
            "must lie in 1..=256",
        )?;
        check_each(&raw.lengths, "lengths", |f, &l| {
            ensure((2..=65_536).contains(&l), f, "length must lie in 2..=65536")
        })?;
        check_each(&raw.conventions, "conventions", |_, _| Ok(()))?;
        ensure(
            (2..=65_536).contains(&raw.train_length),
            "train_length",
            "must lie in 2..=65536",
        )?;
        ensure(
            (1..=256).contains(&raw.fit_layers),
            "fit_layers",
            "must lie in 1..=256",
        )?;
        ensure(
            (1..=2048).contains(&raw.fit_sweep_max),
            "fit_sweep_max",
            "must lie in 1..=2048",
        )?;
        ensure(
            (1..=1000).contains(&raw.fig2_window),
            "fig2_window",
            "window must lie in 1..=1000",
        )?;
        for (i, f) in raw.fig2.iter().enumerate() {
            ensure(
                !f.distances.is_empty(),
                format!("fig2[{i}].distances"),
                "must not be empty",
            )?;
        }
        for (i, c) in raw.claimed_max_fit.iter().enumerate() {
            ensure(
                c.window >= 1,
                format!("claimed_max_fit[{i}].window"),
                "window must be ≥ 1",
            )?;
        }
        ensure(
            (2..=65_536).contains(&raw.tail_length),
            "tail_length",
            "must lie in 2..=65536",
        )?;
        Ok(raw)
    }
    fn statement(
        p: &Params,
        claim: &str,
        _hints: &Hints,
    ) -> Option<Result<Statement, StatementError>> {
        Some(Ok(p.build_statement(claim)))
    }
    type Witness = ();
    fn witness(_: &Params, _: &Ctx) {}
    /// The presentation: the statement decides the claim; tables, plots and notes
    /// show its terms.
    fn present(p: &Params, _: &(), _: Option<&Checked>, ctx: &Ctx, o: &mut Presentation) {
        let prec = ctx.prec();

        // ----- supports by reachability (the kernel's band-reach; presentation) -----
        let cases: Vec<(u64, Window, u64)> = p
            .windows
            .iter()
            .flat_map(|&w| {
                p.conventions
                    .iter()
                    .flat_map(move |&c| p.lengths.iter().map(move |&l| (w, c, l)))
            })
            .collect();
        let supports: Vec<Vec<u64>> = cases
            .par_iter()
            .map(|&(w, c, l)| {
                (1..=u64::from(p.max_layers))
                    .map(|k| band_reach(l, c.max_distance(w), k))
                    .collect()
            })
            .collect();
        let mut cols = vec!["w".to_string(), "convention".into(), "L".into()];
        cols.extend((1..=p.max_layers).map(|l| format!("ℓ = {l}")));
        let col_refs: Vec<&str> = cols.iter().map(String::as_str).collect();
        let mut table = Table::new(
            "Support of the last row of A^ℓ (largest attended distance; exact reachability)",
            &col_refs,
        );
        for (&(w, c, l), sup) in cases.iter().zip(&supports) {
            let mut row = vec![w.to_string(), format!("{c:?}"), l.to_string()];
            row.extend(sup.iter().map(u64::to_string));
            table.row(row);
        }

        // ----- fits in L_tr -----
        let mut ftab = Table::new(
            format!(
                "Largest window whose {}-layer receptive field fits in L_tr = {} tokens",
                p.fit_layers, p.train_length
            ),
            &[
                "convention",
                "claimed",
                "by reachability",
                "support at that w",
                "support at w + 1",
            ],
        );
        let mut fit_figures = Vec::new();
        for cf in &p.claimed_max_fit {
            let (largest, _) = largest_fitting_window(
                cf.convention,
                p.fit_layers,
                p.train_length,
                p.fit_sweep_max,
            );
            let l = u64::from(p.fit_layers);
            let sup = |w: u64| l * cf.convention.max_distance(w);
            ftab.row(vec![
                format!("{:?}", cf.convention),
                cf.window.to_string(),
                largest.to_string(),
                sup(largest).to_string(),
                sup(largest + 1).to_string(),
            ]);
            fit_figures.push((cf.convention, largest));
        }

        // ----- MPFR's e^{−∞} (the windowed bias; a property of the trusted base) -----
        o.note(exact_zero_tail(p, prec));

        // ----- report -----
        for (conv, w) in &fit_figures {
            o.figure(
                format!(
                    "largest w fitting {} layers in L_tr = {} ({conv:?})",
                    p.fit_layers, p.train_length
                ),
                *w as f64,
                w.to_string(),
            );
        }
        o.tables.push(table);
        o.tables.push(ftab);
        let lmax = p.lengths.iter().copied().max().unwrap_or(512);
        let mut series = Vec::new();
        for (&(w, c, l), sup) in cases.iter().zip(&supports) {
            if l != lmax {
                continue;
            }
            series.push(Series {
                name: format!("w = {w}, {c:?}"),
                style: if c == Window::W1 {
                    Style::Line
                } else {
                    Style::Dashed
                },
                points: sup
                    .iter()
                    .enumerate()
                    .map(|(k, &s)| (k as f64 + 1.0, s as f64))
                    .collect(),
            });
        }
        series.push(Series {
            name: format!("L_tr − 1 = {}", p.train_length - 1),
            style: Style::Points,
            points: (1..=p.max_layers)
                .map(|l| (f64::from(l), (p.train_length - 1) as f64))
                .collect(),
        });
        o.plots.push(Plot {
            slug: "support-vs-layers".into(),
            title: format!("Receptive field of the last token (L = {lmax})"),
            x_label: "layers ℓ".into(),
            y_label: "largest attended distance".into(),
            x_log: false,
            y_log: false,
            series,
            heatmap: None,
            paths: false,
        });
        o.note(
            "Window convention W1 (0 ≤ r ≤ w − 1) vs W2 (0 ≤ r ≤ w) is [unconfirmed]; both are checked. The paper's \
             empirical claim (windowed attention extrapolates only when its multi-layer receptive field is covered by \
             L_tr) is about trained models and is not checked here; its grid of w values could not be confirmed.",
        );
    }
}

/// The claimed support: min(ℓ(w − 1), L − 1) (W1) or min(ℓw, L − 1) (W2).
pub fn support_formula(conv: Window, w: u64, layers: u64, len: u64) -> u64 {
    (layers * conv.max_distance(w)).min(len - 1)
}

/// The support of the last row of A^ℓ, by the kernel's exact `band-reach` (presentation:
/// the statement states the same term).
pub fn band_reach(len: u64, d: u64, layers: u64) -> u64 {
    let v = expr::eval_exact(
        &band_reach_term(len, d.into(), layers.into()).to_string(),
        64,
        &Default::default(),
    )
    .expect("in range: validated")
    .expect("an exact integer");
    v.numer().to_u64().expect("a support")
}

/// The length at which `layers` layers of windows up to `sweep_max` are never clipped.
fn unclipped_length(layers: u32, sweep_max: u64) -> u64 {
    u64::from(layers) * (sweep_max + 1) + 2
}

/// The largest w ≤ sweep_max whose `layers`-layer receptive field fits in `train`
/// tokens (support ≤ train − 1, by the kernel's reachability at a length where
/// nothing is clipped), and whether fitting is monotone in w over the sweep
/// (presentation; the statement decides).
pub fn largest_fitting_window(
    conv: Window,
    layers: u32,
    train: u64,
    sweep_max: u64,
) -> (u64, bool) {
    let len = unclipped_length(layers, sweep_max);
    let fits: Vec<bool> = (1..=sweep_max)
        .into_par_iter()
        .map(|w| band_reach(len, conv.max_distance(w), u64::from(layers)) < train)
        .collect();
    let largest = fits.iter().rposition(|&f| f).map_or(0, |k| k as u64 + 1);
    let monotone = fits.iter().take(largest as usize).all(|&f| f);
    (largest, monotone)
}

/// d = w − 1 (W1) or w (W2), as a term.
fn d_term(conv: Window, w: Term) -> Term {
    match conv {
        Window::W1 => sub(w, int(1)),
        Window::W2 => w,
    }
}

/// `(band-reach L d l)`: the kernel's exact reachability.
fn band_reach_term(len: impl Into<Term>, d: Term, l: Term) -> Term {
    call("band-reach", [len.into(), d, l])
}

/// `(band-reach-count L d l)`.
fn band_reach_count_term(len: impl Into<Term>, d: Term, l: Term) -> Term {
    call("band-reach-count", [len.into(), d, l])
}

const SUPPORT: &str = "support of the last row of A^ℓ = min(ℓ(w − 1), L − 1) (W1) / min(ℓw, L − 1) (W2), every smaller distance reached";

impl Params {
    fn fit_name(&self, cf: &ClaimedFit) -> String {
        format!(
            "{:?}: {} layers fit in L_tr = {} iff w ≤ {} (support ≤ L_tr − 1)",
            cf.convention, self.fit_layers, self.train_length, cf.window
        )
    }

    fn fig2_name(&self) -> String {
        format!(
            "Fig. 2 pattern at w = {}: {}",
            self.fig2_window,
            self.fig2
                .iter()
                .map(|f| format!("{:?} attends r ∈ {:?}", f.convention, f.distances))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }

    /// The statement: the kernel's exact reachability (`band-reach`) against the
    /// closed forms, the fitting windows, and the Fig. 2 rows.
    fn build_statement(&self, claim: &str) -> Statement {
        let mut st = Statement::new(claim);
        let mut cases = Vec::new();
        for &w in &self.windows {
            for &c in &self.conventions {
                for &len in &self.lengths {
                    let d = || d_term(c, w.into());
                    let reach = || band_reach_term(len, d(), var("l"));
                    cases.push(forall(
                        "l",
                        1,
                        self.max_layers,
                        and([
                            eq(reach(), min(mul([var("l"), d()]), sub(len.into(), int(1)))),
                            eq(
                                band_reach_count_term(len, d(), var("l")),
                                add([reach(), int(1)]),
                            ),
                        ]),
                    ));
                }
            }
        }
        st.state(SUPPORT, &and(cases));
        let (l, tr, sweep) = (self.fit_layers, self.train_length, self.fit_sweep_max);
        let len = unclipped_length(l, sweep);
        for cf in &self.claimed_max_fit {
            let (c, big_w) = (cf.convention, cf.window);
            let reach = |w: Term| band_reach_term(len, d_term(c, w), l.into());
            let closed = |w: Term| mul([l.into(), d_term(c, w)]);
            let tr_minus_1 = || sub(tr.into(), int(1));
            let mut f = vec![
                forall("w", 1, big_w, lt(reach(var("w")), tr.into())),
                le(closed(big_w.into()), tr_minus_1()),
            ];
            if big_w < sweep {
                f.push(forall(
                    "w",
                    big_w + 1,
                    sweep,
                    ge(reach(var("w")), tr.into()),
                ));
                f.push(gt(closed((big_w + 1).into()), tr_minus_1()));
            } else {
                // the sweep must reach past the claimed window to show it is the largest
                f.push(lt(big_w.into(), sweep.into()));
            }
            st.state(self.fit_name(cf), &and(f));
        }
        let mut rows = Vec::new();
        for fg in &self.fig2 {
            let d = fg.convention.max_distance(self.fig2_window);
            let set: std::collections::BTreeSet<u64> = fg.distances.iter().copied().collect();
            for i in 0..4 * (d + 1) + 4 {
                // the attended distances of query i are exactly the listed ones with r ≤ i
                let listed: Vec<u64> = set.iter().copied().filter(|&r| r <= i).collect();
                let max = listed.last().map_or(-1, |&r| r as i128);
                let n = i + 1;
                rows.push(eq(band_reach_term(n, d.into(), int(1)), int(max)));
                rows.push(eq(
                    band_reach_count_term(n, d.into(), int(1)),
                    listed.len().into(),
                ));
            }
        }
        st.state(self.fig2_name(), &and(rows));
        st
    }
}

/// e^{−∞} = +0 exactly in MPFR (both directions, exact ternary), so a windowed row's
/// probabilities outside the window are exactly 0; the in-window probabilities
/// (softmax enclosures of random dyadic content) sum to an enclosure of 1. A note:
/// it shows a property of the trusted base (MPFR) and of the −∞ bias by definition,
/// not a check of the claim, whose dependency pattern is the statement's band matrix.
fn exact_zero_tail(p: &Params, prec: u32) -> String {
    let mut zero_ok = true;
    for r in [Round::Down, Round::Up, Round::Nearest] {
        let mut x = Float::with_val(prec, Special::NegInfinity);
        let ord = x.exp_round(r);
        zero_ok &= x.is_zero() && x.is_sign_positive() && ord == std::cmp::Ordering::Equal;
    }
    let mut rng = SplitMix64::new(p.seed);
    let len = p.tail_length as usize;
    let mut all = true;
    let mut worst = String::new();
    for &w in &p.windows {
        for &c in &p.conventions {
            let d = c.max_distance(w) as usize;
            let inside = (d + 1).min(len);
            // content logits k/2^10 ∈ [−8, 8] for the attended positions
            let z: Vec<Interval> = (0..inside)
                .map(|_| {
                    let k = rng.range(0, 16 * 1024) as i64 - 8 * 1024;
                    Interval::from_i64(prec, k).mul_2exp(-10)
                })
                .collect();
            let pr = softmax(&z);
            let mut sum = Interval::zero(prec);
            for q in &pr {
                sum.add_assign(q);
            }
            all &= sum.contains_rational(&rug::Rational::from(1));
            if worst.is_empty() {
                worst = format!(
                    "e.g. w = {w} {c:?}, L = {len}: in-window Σp ∈ {}",
                    sum.fmt_outward(12)
                );
            }
        }
    }
    format!(
        "Attention outside the window is exactly 0: MPFR's e^(−∞) = +0 exactly (both roundings, ternary exact): \
         {zero_ok}, so every position beyond the window (r > d) of a row of length {len} gets probability exactly 0; \
         the in-window softmax enclosures sum to an enclosure of 1: {all} ({worst}). This is a property of the \
         trusted base, shown here, not a check: the claim's dependency pattern is the band matrix of the statement."
    )
}
