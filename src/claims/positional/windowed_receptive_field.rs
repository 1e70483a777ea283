//! positional/windowed-receptive-field: the multi-layer receptive field of windowed
//! attention, by exact reachability.
//!
//! Windowed attention (Longformer-style, Chi et al. Fig. 2) gives bias 0 inside the
//! window and −∞ outside; MPFR's e^{−∞} is exactly +0, so the attention outside the
//! window is exactly 0 and the layer's dependency pattern is the boolean band matrix
//! A[i][j] = 1 iff 0 ≤ i − j ≤ d, with d = w − 1 (W1) or d = w (W2). The last row of
//! A^ℓ (ℓ layers) is computed exactly on bitsets; its support — the largest distance
//! r with a nonzero entry — must be min(ℓd, L − 1), with every smaller distance
//! reached too. With ℓ = 12 and L_tr = 512 the receptive field ℓd + 1 fits in the
//! training window iff w ≤ 43 (W1) or w ≤ 42 (W2).

use super::common::{SplitMix64, Window};
use crate::claims::Ctx;
use crate::kernel::{softmax, Certainty, Interval};
use crate::outcome::{Outcome, Plot, Series, Style, Table};
use crate::spec::{ensure, ensure_each, FieldError};
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

impl crate::spec::Params for Params {
    fn validate(&self) -> Result<(), FieldError> {
        ensure_each(&self.windows, "windows", |&w| {
            if (1..=100_000).contains(&w) {
                Ok(())
            } else {
                Err("window must lie in 1..=100000".into())
            }
        })?;
        ensure(
            (1..=256).contains(&self.max_layers),
            "max_layers",
            "must lie in 1..=256",
        )?;
        ensure_each(&self.lengths, "lengths", |&l| {
            if (2..=65_536).contains(&l) {
                Ok(())
            } else {
                Err("length must lie in 2..=65536".into())
            }
        })?;
        ensure_each(&self.conventions, "conventions", |_| Ok(()))?;
        ensure(
            (2..=65_536).contains(&self.train_length),
            "train_length",
            "must lie in 2..=65536",
        )?;
        ensure(
            (1..=256).contains(&self.fit_layers),
            "fit_layers",
            "must lie in 1..=256",
        )?;
        ensure(
            (1..=2048).contains(&self.fit_sweep_max),
            "fit_sweep_max",
            "must lie in 1..=2048",
        )?;
        ensure(
            (1..=1000).contains(&self.fig2_window),
            "fig2_window",
            "window must lie in 1..=1000",
        )?;
        for (i, f) in self.fig2.iter().enumerate() {
            ensure(
                !f.distances.is_empty(),
                format!("fig2[{i}].distances"),
                "must not be empty",
            )?;
        }
        for (i, c) in self.claimed_max_fit.iter().enumerate() {
            ensure(
                c.window >= 1,
                format!("claimed_max_fit[{i}].window"),
                "window must be ≥ 1",
            )?;
        }
        ensure(
            (2..=65_536).contains(&self.tail_length),
            "tail_length",
            "must lie in 2..=65536",
        )?;
        Ok(())
    }
}

/// A row of bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bits(Vec<u64>);

impl Bits {
    /// `n` zero bits.
    pub fn zeros(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    /// Sets bit `j`.
    pub fn set(&mut self, j: usize) {
        self.0[j / 64] |= 1 << (j % 64);
    }
    /// Bit `j`.
    pub fn get(&self, j: usize) -> bool {
        self.0[j / 64] >> (j % 64) & 1 == 1
    }
    /// `self |= other`.
    pub fn or_assign(&mut self, other: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }
    /// Number of set bits.
    pub fn count(&self) -> u64 {
        self.0.iter().map(|w| u64::from(w.count_ones())).sum()
    }
}

/// The boolean band matrix of windowed causal attention, as bitset rows:
/// A[i][j] = 1 iff 0 ≤ i − j ≤ d.
pub fn band_matrix(len: usize, d: u64) -> Vec<Bits> {
    (0..len)
        .map(|i| {
            let mut row = Bits::zeros(len);
            let lo = i.saturating_sub(d.min(len as u64) as usize);
            for j in lo..=i {
                row.set(j);
            }
            row
        })
        .collect()
}

/// The supports of the last row of A^ℓ for ℓ = 1..=layers: for each ℓ, the largest
/// distance r with (A^ℓ)[L−1][L−1−r] ≠ 0, and whether every distance 0..=r is reached.
pub fn last_row_supports(a: &[Bits], layers: u32) -> Vec<(u64, bool)> {
    let n = a.len();
    let mut v = Bits::zeros(n);
    v.set(n - 1);
    let mut out = Vec::with_capacity(layers as usize);
    for _ in 0..layers {
        // (v A)[j] = OR_i v[i] ∧ A[i][j]
        let mut next = Bits::zeros(n);
        for (i, row) in a.iter().enumerate() {
            if v.get(i) {
                next.or_assign(row);
            }
        }
        v = next;
        let first = (0..n).find(|&j| v.get(j)).unwrap_or(n - 1);
        let support = (n - 1 - first) as u64;
        let contiguous = v.count() == support + 1;
        out.push((support, contiguous));
    }
    out
}

/// The claimed support: min(ℓ(w − 1), L − 1) (W1) or min(ℓw, L − 1) (W2).
pub fn support_formula(conv: Window, w: u64, layers: u64, len: u64) -> u64 {
    (layers * conv.max_distance(w)).min(len - 1)
}

/// The largest w ≤ sweep_max whose `layers`-layer receptive field fits in `train`
/// tokens (support ≤ train − 1, by reachability at a length where nothing is
/// clipped), and whether fitting is monotone in w over the sweep.
pub fn largest_fitting_window(
    conv: Window,
    layers: u32,
    train: u64,
    sweep_max: u64,
) -> (u64, bool) {
    let len = (u64::from(layers) * (sweep_max + 1) + 2) as usize;
    let fits: Vec<bool> = (1..=sweep_max)
        .into_par_iter()
        .map(|w| {
            let a = band_matrix(len, conv.max_distance(w));
            let (s, _) = *last_row_supports(&a, layers).last().expect("layers ≥ 1");
            s < train
        })
        .collect();
    let largest = fits.iter().rposition(|&f| f).map_or(0, |k| k as u64 + 1);
    let monotone = fits.iter().take(largest as usize).all(|&f| f);
    (largest, monotone)
}

/// The distances attended by query `i` in one layer.
fn row_distances(a: &[Bits], i: usize) -> Vec<u64> {
    (0..=i)
        .filter(|&j| a[i].get(j))
        .map(|j| (i - j) as u64)
        .rev()
        .collect()
}

/// Runs the claim.
pub fn run(p: &Params, ctx: &Ctx) -> Outcome {
    let prec = ctx.prec();
    let mut o = Outcome::new();

    // ----- supports by reachability -----
    let cases: Vec<(u64, Window, u64)> = p
        .windows
        .iter()
        .flat_map(|&w| {
            p.conventions
                .iter()
                .flat_map(move |&c| p.lengths.iter().map(move |&l| (w, c, l)))
        })
        .collect();
    let supports: Vec<Vec<(u64, bool)>> = cases
        .par_iter()
        .map(|&(w, c, l)| {
            last_row_supports(&band_matrix(l as usize, c.max_distance(w)), p.max_layers)
        })
        .collect();
    let mut cols = vec!["w".to_string(), "convention".into(), "L".into()];
    cols.extend((1..=p.max_layers).map(|l| format!("ℓ = {l}")));
    let col_refs: Vec<&str> = cols.iter().map(String::as_str).collect();
    let mut table = Table::new(
        "Support of the last row of A^ℓ (largest attended distance; exact reachability)",
        &col_refs,
    );
    let mut bad = Vec::new();
    let mut n_checked = 0u64;
    for (&(w, c, l), sup) in cases.iter().zip(&supports) {
        let mut row = vec![w.to_string(), format!("{c:?}"), l.to_string()];
        for (k, &(s, contiguous)) in sup.iter().enumerate() {
            let layers = k as u64 + 1;
            let want = support_formula(c, w, layers, l);
            n_checked += 1;
            if s != want || !contiguous {
                bad.push(format!(
                    "w = {w}, {c:?}, L = {l}, ℓ = {layers}: support {s} (contiguous: {contiguous}), formula {want}"
                ));
            }
            row.push(s.to_string());
        }
        table.row(row);
    }
    o.checks.certify(
        "support of the last row of A^ℓ = min(ℓ(w − 1), L − 1) (W1) / min(ℓw, L − 1) (W2), every smaller distance reached",
        Certainty::exact(bad.is_empty()),
        if bad.is_empty() {
            format!(
                "{n_checked} (w, convention, L, ℓ) cases: w ∈ {:?}, ℓ = 1..{}, L ∈ {:?}",
                p.windows, p.max_layers, p.lengths
            )
        } else {
            bad.into_iter().take(5).collect::<Vec<_>>().join("; ")
        },
    );

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
        let (largest, monotone) =
            largest_fitting_window(cf.convention, p.fit_layers, p.train_length, p.fit_sweep_max);
        let l = u64::from(p.fit_layers);
        let sup = |w: u64| l * cf.convention.max_distance(w);
        o.checks.certify(
            format!(
                "{:?}: {} layers fit in L_tr = {} iff w ≤ {} (support ≤ L_tr − 1)",
                cf.convention, p.fit_layers, p.train_length, cf.window
            ),
            Certainty::exact(largest == cf.window && monotone && largest < p.fit_sweep_max),
            format!(
                "reachability over w = 1..{}: largest fitting w = {largest}, fitting set is an initial segment: {monotone}",
                p.fit_sweep_max
            ),
        );
        ftab.row(vec![
            format!("{:?}", cf.convention),
            cf.window.to_string(),
            largest.to_string(),
            sup(largest).to_string(),
            sup(largest + 1).to_string(),
        ]);
        fit_figures.push((cf.convention, largest));
    }

    // ----- Fig. 2 pattern -----
    let mut fig2_bad = Vec::new();
    for f in &p.fig2 {
        let d = f.convention.max_distance(p.fig2_window);
        let len = (4 * (d + 1) + 4) as usize;
        let a = band_matrix(len, d);
        for i in 0..len {
            let got = row_distances(&a, i);
            let want: Vec<u64> = f
                .distances
                .iter()
                .copied()
                .filter(|&r| r <= i as u64)
                .collect();
            if got != want {
                fig2_bad.push(format!(
                    "{:?}, query {i}: attends {got:?}, expected {want:?}",
                    f.convention
                ));
            }
        }
    }
    o.checks.certify(
        format!(
            "Fig. 2 pattern at w = {}: {}",
            p.fig2_window,
            p.fig2
                .iter()
                .map(|f| format!("{:?} attends r ∈ {:?}", f.convention, f.distances))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Certainty::exact(fig2_bad.is_empty()),
        if fig2_bad.is_empty() {
            "every query row of the band matrix (rows near the start clipped at r ≤ i)".into()
        } else {
            fig2_bad.into_iter().take(4).collect::<Vec<_>>().join("; ")
        },
    );

    // ----- the tail outside the window is exactly 0 -----
    let (c, detail) = exact_zero_tail(p, prec);
    o.checks.certify(
        "attention outside the window is exactly 0: MPFR e^{−∞} = +0 exactly (both roundings, ternary exact), \
         and the in-window softmax sums to an enclosure of 1",
        c,
        detail,
    );

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
                .map(|(k, &(s, _))| (k as f64 + 1.0, s as f64))
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
    o
}

/// e^{−∞} = +0 exactly in MPFR (both directions, exact ternary), so a windowed row's
/// probabilities outside the window are exactly 0; the in-window probabilities
/// (certified softmax of random dyadic content) sum to an enclosure of 1.
fn exact_zero_tail(p: &Params, prec: u32) -> (Certainty, String) {
    let mut zero_ok = true;
    for r in [Round::Down, Round::Up, Round::Nearest] {
        let mut x = Float::with_val(prec, Special::NegInfinity);
        let ord = x.exp_round(r);
        zero_ok &= x.is_zero() && x.is_sign_positive() && ord == std::cmp::Ordering::Equal;
    }
    let mut rng = SplitMix64::new(p.seed);
    let len = p.tail_length as usize;
    let mut all = Certainty::True;
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
            let ok = sum.contains_rational(&rug::Rational::from(1));
            all = all.and(Certainty::exact(ok));
            if worst.is_empty() {
                worst = format!(
                    "e.g. w = {w} {c:?}, L = {len}: in-window Σp ∈ {}",
                    sum.fmt_outward(12)
                );
            }
        }
    }
    let detail = format!(
        "e^(−∞) = +0 exactly: {zero_ok}, so every position beyond the window (r > d) of a row of length {len} \
         gets probability exactly 0; {worst}"
    );
    (all.and(Certainty::exact(zero_ok)), detail)
}
