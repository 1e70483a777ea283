//! positional/toy-receptive-field: the receptive field of an untrained toy model
//! (attention only, value = identity, uniform content so the logits are the bias
//! alone, heads averaged, 12 layers), measured with the cumulative normalised
//! gradient of the last position.
//!
//! Per layer the Jacobian is J = A (no residual) or J = (I + A)/2 (residual), with
//! A = (1/H)Σ_h A_h and A_h the causal softmax of head h's bias; g = e_lastᵀJ^ℓ,
//! C(k) = Σ_{r≤k} g_{L−1−r}/Σ_j g_j and RF99 = min{k : C(k) ≥ 0.99}.
//!
//! A is never formed for ALiBi or windows: with u_i = g_i/(H·Z_i(h)),
//! (gA)_j = Σ_h Σ_{i≥j} u_i w_h(i − j), which is the backward recurrence
//! v_j = u_j + e^{−m}v_{j+1} for ALiBi and a w-term sum for windows (O(L·H) and
//! O(L·w) per layer). Sandwich weights have no such structure; its A is stored as
//! a packed lower triangle once for the largest L (rows do not depend on L: the
//! model is causal) and every smaller L uses its top-left block. f64 throughout
//! (the claim is `supported`); the same computation in 128-bit intervals at one
//! length decides RF99 there with enclosures and bounds the f64 error.

use super::common::{
    compression_ratio, sandwich_centred_f64, sandwich_centred_many, sandwich_freqs,
    sandwich_freqs_f64, slope_exponents, slope_interval, IndexFrom, SlopeRule, Window,
};
use crate::claims::shape::Ctx;
use crate::kernel::{parse_rational, Certainty, Checked, Interval};
use crate::outcome::{Observations, Plot, Presentation, Series, Style, Table};
use crate::spec::{check_each, ensure, FieldError};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// The bias of a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// 0 inside the window, −∞ outside (every head alike).
    Window,
    /// −m_h·r.
    Alibi,
    /// B̃(r)/c_h, c_h = 8h/H.
    Sandwich,
}

/// One model of the RF table, with its printed RF99 values.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// A short name (used by `saturation` and `growth`).
    pub name: String,
    /// The bias.
    pub kind: Kind,
    /// Window size (windows only).
    #[serde(default)]
    pub w: Option<u64>,
    /// Window convention (windows only; default W1).
    #[serde(default)]
    pub convention: Option<Window>,
    /// Slope rule (ALiBi only).
    #[serde(default)]
    pub rule: Option<SlopeRule>,
    /// Lengths of the printed values (default: `lengths`).
    #[serde(default)]
    pub lengths: Option<Vec<usize>>,
    /// Printed RF99 with the residual, one per length.
    pub residual: Vec<usize>,
    /// Printed RF99 without the residual, one per length.
    pub plain: Vec<usize>,
    /// Whether the model appears in the RF-vs-L plots (default true).
    #[serde(default)]
    pub plot: Option<bool>,
}

/// Residual (J = (I + A)/2) or not (J = A).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// J = (I + A)/2.
    Residual,
    /// J = A.
    Plain,
}

impl Variant {
    fn label(self) -> &'static str {
        match self {
            Variant::Residual => "residual",
            Variant::Plain => "no residual",
        }
    }
}

/// An asserted saturation: |RF(to) − RF(from)|/RF(from) ≤ max_rel_change.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Saturation {
    /// Model name.
    pub model: String,
    /// Variant.
    pub variant: Variant,
    /// The two lengths.
    pub lengths: [usize; 2],
    /// Largest relative change.
    pub max_rel_change: f64,
}

/// An asserted growth: RF(to) ≥ min_ratio·RF(from), for each listed variant.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Growth {
    /// Model name.
    pub model: String,
    /// Variants.
    pub variants: Vec<Variant>,
    /// The two lengths.
    pub lengths: [usize; 2],
    /// Smallest ratio.
    pub min_ratio: f64,
}

/// Parameters of positional/toy-receptive-field as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// H.
    pub heads: usize,
    /// ℓ.
    pub layers: usize,
    /// Sandwich d̄.
    pub dbar: u32,
    /// Sandwich index convention.
    pub from: IndexFrom,
    /// Lengths of the RF table.
    pub lengths: Vec<usize>,
    /// Extra lengths for the plots and the window invariance (Sandwich: only those ≤ 8192).
    pub extra_lengths: Vec<usize>,
    /// The C(k) threshold (exact literal).
    pub threshold: String,
    /// Largest |ours − printed| accepted (reported when ≠ 0).
    pub rf_tolerance: usize,
    /// The models.
    pub models: Vec<Model>,
    /// ALiBi saturation assertions.
    pub saturation: Vec<Saturation>,
    /// Sandwich growth assertions.
    pub growth: Vec<Growth>,
    /// The length of the 128-bit interval run.
    pub interval_length: usize,
    /// Largest |g_f64 − enclosure midpoint| accepted (Σg = 1).
    pub agreement: f64,
    /// Smallest accepted |C(k) − threshold| at k = RF99 and RF99 − 1 in f64.
    pub min_margin: f64,
}

const MAX_LEN: usize = 1 << 16;
const MAX_DENSE: usize = 8192;

/// Parameters of positional/toy-receptive-field, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// The parameters as written (names and tables quote them).
    pub raw: Raw,
    /// The attention-mass threshold, in (0, 1).
    threshold: rug::Rational,
    /// Per saturation check, the index of its model in `models`.
    saturation_model: Vec<usize>,
    /// Per growth check, the index of its model in `models`.
    growth_model: Vec<usize>,
}

/// positional/toy-receptive-field.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(raw: Raw, _at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        ensure(
            (1..=64).contains(&raw.heads),
            "heads",
            "must be between 1 and 64",
        )?;
        ensure(
            (1..=64).contains(&raw.layers),
            "layers",
            "must be between 1 and 64",
        )?;
        ensure(
            raw.dbar >= 2 && raw.dbar.is_multiple_of(2) && raw.dbar <= 4096,
            "dbar",
            "must be even, between 2 and 4096",
        )?;
        let len_ok = |f: &str, &l: &usize| {
            ensure(
                (2..=MAX_LEN).contains(&l),
                f,
                format!("length {l} is out of range: use 2 to {MAX_LEN}"),
            )
        };
        check_each(&raw.lengths, "lengths", len_ok)?;
        for (i, l) in raw.extra_lengths.iter().enumerate() {
            len_ok(&format!("extra_lengths[{i}]"), l)?;
        }
        let t = parse_rational(&raw.threshold)
            .map_err(|e| FieldError::new("threshold", e.to_string()))?;
        ensure(t > 0 && t < 1, "threshold", "must lie in (0, 1)")?;
        let (mut saturation_model, mut growth_model) = (Vec::new(), Vec::new());
        ensure(!raw.models.is_empty(), "models", "must not be empty")?;
        for (i, m) in raw.models.iter().enumerate() {
            let f = |s: &str| format!("models[{i}].{s}");
            match m.kind {
                Kind::Window => {
                    let w =
                        m.w.ok_or_else(|| FieldError::new(f("w"), "a window needs w"))?;
                    ensure(w >= 1 && w <= MAX_LEN as u64, f("w"), "window must be ≥ 1")?;
                    ensure(m.rule.is_none(), f("rule"), "only ALiBi models take a rule")?;
                }
                Kind::Alibi => {
                    ensure(
                        m.rule.is_some(),
                        f("rule"),
                        "an ALiBi model needs rule = \"paper\" or \"code\"",
                    )?;
                    ensure(m.w.is_none(), f("w"), "only windows take w")?;
                    ensure(
                        m.convention.is_none(),
                        f("convention"),
                        "only windows take a convention",
                    )?;
                }
                Kind::Sandwich => {
                    ensure(m.w.is_none(), f("w"), "only windows take w")?;
                    ensure(m.rule.is_none(), f("rule"), "only ALiBi models take a rule")?;
                    ensure(
                        m.convention.is_none(),
                        f("convention"),
                        "only windows take a convention",
                    )?;
                }
            }
            let lens = m.lengths.as_ref().unwrap_or(&raw.lengths);
            if let Some(l) = &m.lengths {
                check_each(l, &f("lengths"), len_ok)?;
            }
            for (name, v) in [("residual", &m.residual), ("plain", &m.plain)] {
                ensure(
                    v.len() == lens.len(),
                    f(name),
                    format!("has {} values for {} lengths", v.len(), lens.len()),
                )?;
            }
            if m.kind == Kind::Sandwich {
                ensure(
                    lens.iter().all(|&l| l <= MAX_DENSE),
                    f("lengths"),
                    format!("Sandwich is computed densely: lengths up to {MAX_DENSE}"),
                )?;
            }
            ensure(
                !raw.models[..i].iter().any(|o| o.name == m.name),
                f("name"),
                format!("duplicate model name `{}`", m.name),
            )?;
        }
        let known = |n: &str| raw.models.iter().position(|m| m.name == n);
        for (i, s) in raw.saturation.iter().enumerate() {
            let Some(mi) = known(&s.model) else {
                return Err(FieldError::new(
                    format!("saturation[{i}].model"),
                    format!("no model named `{}`", s.model),
                ));
            };
            saturation_model.push(mi);
            ensure(
                s.lengths.iter().all(|l| len_ok("", l).is_ok()),
                format!("saturation[{i}].lengths"),
                "out of range",
            )?;
            ensure(
                s.max_rel_change >= 0.0,
                format!("saturation[{i}].max_rel_change"),
                "must be ≥ 0",
            )?;
        }
        for (i, g) in raw.growth.iter().enumerate() {
            let Some(mi) = known(&g.model) else {
                return Err(FieldError::new(
                    format!("growth[{i}].model"),
                    format!("no model named `{}`", g.model),
                ));
            };
            growth_model.push(mi);
            ensure(
                !g.variants.is_empty(),
                format!("growth[{i}].variants"),
                "must not be empty",
            )?;
            ensure(
                g.lengths.iter().all(|l| len_ok("", l).is_ok()),
                format!("growth[{i}].lengths"),
                "out of range",
            )?;
            ensure(
                g.min_ratio > 0.0,
                format!("growth[{i}].min_ratio"),
                "must be positive",
            )?;
        }
        ensure(
            (2..=2048).contains(&raw.interval_length),
            "interval_length",
            "must be between 2 and 2048",
        )?;
        ensure(raw.agreement > 0.0, "agreement", "must be positive")?;
        ensure(raw.min_margin >= 0.0, "min_margin", "must be ≥ 0")?;
        Ok(Params {
            raw,
            threshold: t,
            saturation_model,
            growth_model,
        })
    }
    type Witness = Found;
    /// The f64 runs at every length, and the two-precision runs at one length.
    fn witness(p: &Params, ctx: &Ctx) -> Found {
        let prec = ctx.prec();
        let t_rat = p.threshold.clone();
        let t = t_rat.to_f64();
        let mut all_lengths: Vec<usize> = p.raw.lengths.clone();
        for m in &p.raw.models {
            if let Some(l) = &m.lengths {
                all_lengths.extend(l);
            }
        }
        all_lengths.extend(&p.raw.extra_lengths);
        all_lengths.sort_unstable();
        all_lengths.dedup();
        let top = *all_lengths.last().expect("non-empty");
        let idx = |l: usize| all_lengths.iter().position(|&x| x == l).expect("listed");

        // ----- f64 runs -----
        let mut res = Results {
            rf: Vec::new(),
            min_margin: (f64::INFINITY, String::new()),
        };
        for m in &p.raw.models {
            ctx.progress
                .message(format!("{}: {} (f64)", ctx.spec.id, m.name));
            let lens: Vec<usize> = if m.kind == Kind::Sandwich {
                all_lengths
                    .iter()
                    .copied()
                    .filter(|&l| l <= MAX_DENSE)
                    .collect()
            } else {
                all_lengths.clone()
            };
            let a = prepare_f64(p, m, lens.iter().copied().max().unwrap_or(top));
            let mut per: [Vec<usize>; 2] = [vec![0; all_lengths.len()], vec![0; all_lengths.len()]];
            for (vi, &variant) in VARIANTS.iter().enumerate() {
                for &l in &lens {
                    let g = gradient_f64(&a, l, p.raw.layers, variant);
                    let (k, above, below) = rf_f64(&g, t);
                    per[vi][idx(l)] = k;
                    let margin = above.min(below);
                    if margin < res.min_margin.0 {
                        res.min_margin =
                            (margin, format!("{}, {}, L = {l}", m.name, variant.label()));
                    }
                }
            }
            res.rf.push(per);
        }

        // ----- two precisions: 128-bit intervals at one length -----
        let t_rat = p.threshold.clone();
        let n = p.raw.interval_length;
        let t_int = Interval::from_rational(prec, &t_rat);
        let mut two = Vec::new();
        for m in &p.raw.models {
            ctx.progress.message(format!(
                "{}: {} ({prec}-bit intervals, L = {n})",
                ctx.spec.id, m.name
            ));
            let ai = prepare_interval(p, m, n, prec);
            let af = prepare_f64(p, m, n);
            for &variant in &VARIANTS {
                let gi = gradient_interval(&ai, n, p.raw.layers, variant, prec);
                let gf = gradient_f64(&af, n, p.raw.layers, variant);
                let dev = gi
                    .iter()
                    .zip(&gf)
                    .map(|(a, b)| (a.mid_f64() - b).abs())
                    .fold(0.0, f64::max);
                let ki = rf_interval(&gi, &t_int);
                let (kf, _, _) = rf_f64(&gf, t);
                two.push(TwoPrecisions {
                    name: m.name.clone(),
                    variant,
                    ki,
                    kf,
                    dev,
                });
            }
        }
        Found {
            all_lengths,
            res,
            two,
        }
    }
    /// RF99 against §3, saturation, growth, windows, the f64 margins and the two
    /// precisions (observations: f64 runs and this claim's own interval code).
    fn observe(p: &Params, w: &Found, _: Option<&Checked>, ctx: &Ctx, o: &mut Observations) {
        let prec = ctx.prec();
        let (all_lengths, res) = (&w.all_lengths, &w.res);
        let idx = |l: usize| w.idx(l);
        let get = |mi: usize, v: Variant, l: usize| w.get(mi, v, l);
        for (mi, m) in p.raw.models.iter().enumerate() {
            let lens = m.lengths.as_ref().unwrap_or(&p.raw.lengths);
            let mut ok = true;
            let mut off = Vec::new();
            for (li, &l) in lens.iter().enumerate() {
                let ours = [res.rf[mi][0][idx(l)], res.rf[mi][1][idx(l)]];
                let refs = [m.residual[li], m.plain[li]];
                for k in 0..2 {
                    let d = ours[k].abs_diff(refs[k]);
                    if d != 0 {
                        off.push(format!(
                            "L = {l} {}: {} vs {}",
                            VARIANTS[k].label(),
                            ours[k],
                            refs[k]
                        ));
                    }
                    ok &= d <= p.raw.rf_tolerance;
                }
            }
            o.observe(
                format!(
                    "{}: RF99 reproduces §3 (±{}) at L ∈ {:?}, residual and not",
                    m.name, p.raw.rf_tolerance, lens
                ),
                ok,
                if off.is_empty() {
                    "every value exact".into()
                } else {
                    format!("differences: {}", off.join("; "))
                },
            );
        }
        for (s, &mi) in p.raw.saturation.iter().zip(&p.saturation_model) {
            let (a, b) = (
                get(mi, s.variant, s.lengths[0]),
                get(mi, s.variant, s.lengths[1]),
            );
            let rel = (b as f64 - a as f64).abs() / a as f64;
            o.observe(
                format!(
                    "{} ({}): RF99 changes by ≤ {}% from L = {} to {} (saturates)",
                    s.model,
                    s.variant.label(),
                    100.0 * s.max_rel_change,
                    s.lengths[0],
                    s.lengths[1]
                ),
                rel <= s.max_rel_change,
                format!("{a} → {b}: {:.2}%", 100.0 * rel),
            );
        }
        for (g, &mi) in p.raw.growth.iter().zip(&p.growth_model) {
            for &v in &g.variants {
                let (a, b) = (get(mi, v, g.lengths[0]), get(mi, v, g.lengths[1]));
                let ratio = b as f64 / a as f64;
                o.observe(
                    format!(
                        "{} ({}): RF99(L = {}) ≥ {}·RF99(L = {}) (grows with L)",
                        g.model,
                        v.label(),
                        g.lengths[1],
                        g.min_ratio,
                        g.lengths[0]
                    ),
                    ratio >= g.min_ratio,
                    format!("{b} / {a} = {ratio:.3}"),
                );
            }
        }
        // windows: identical for every L ≥ layers·w
        for (mi, m) in p.raw.models.iter().enumerate() {
            if m.kind != Kind::Window {
                continue;
            }
            let w = m.w.unwrap_or(1) as usize;
            let lens: Vec<usize> = all_lengths
                .iter()
                .copied()
                .filter(|&l| l >= p.raw.layers * w)
                .collect();
            let vals: Vec<[usize; 2]> = lens
                .iter()
                .map(|&l| [res.rf[mi][0][idx(l)], res.rf[mi][1][idx(l)]])
                .collect();
            let same = vals.windows(2).all(|x| x[0] == x[1]);
            o.observe(
                format!(
                    "{}: RF99 identical for every L ≥ {}·w = {} (L ∈ {:?})",
                    m.name,
                    p.raw.layers,
                    p.raw.layers * w,
                    lens
                ),
                !lens.is_empty() && same,
                vals.first()
                    .map(|v| format!("residual {} / no residual {}", v[0], v[1]))
                    .unwrap_or_else(|| "no length ≥ layers·w".into()),
            );
        }
        o.observe(
            format!(
                "f64 RF99 decisions are robust: |C(k) − {}| ≥ {:e} at k = RF99 and RF99 − 1",
                p.raw.threshold, p.raw.min_margin
            ),
            res.min_margin.0 >= p.raw.min_margin,
            format!(
                "smallest margin {:.3e} ({})",
                res.min_margin.0, res.min_margin.1
            ),
        );

        let n = p.raw.interval_length;
        let mut worst_dev = 0f64;
        let mut c_all = Certainty::True;
        let mut rf_detail = Vec::new();
        for r in &w.two {
            worst_dev = worst_dev.max(r.dev);
            let (ki, ci) = r.ki;
            let kf = r.kf;
            let c = ci.and(Certainty::exact(ki == Some(kf)));
            if c != Certainty::True {
                rf_detail.push(format!(
                    "{} {}: {:?} vs {kf}",
                    r.name,
                    r.variant.label(),
                    ki
                ));
            }
            c_all = c_all.and(c);
        }
        // observed: the enclosures come from this module's interval model, not from a
        // statement decided by the kernel, so they support the f64 values and prove nothing
        o.observe(
            format!("L = {n}: RF99 of every model and variant decided by {prec}-bit enclosures, equal to the f64 value"),
            c_all == Certainty::True,
            if rf_detail.is_empty() {
                "C(RF99 − 1) < threshold ≤ C(RF99) decided by the enclosures for each (interval code of this claim, \
                 not a kernel statement: an observation)"
                    .into()
            } else {
                rf_detail.join("; ")
            },
        );
        o.observe(
            format!(
                "two precisions at L = {n}: f64 gradient within {:e} of the enclosure midpoints",
                p.raw.agreement
            ),
            worst_dev <= p.raw.agreement,
            format!("max |g_f64 − midpoint| = {worst_dev:.3e}"),
        );
    }
    /// The RF table, the figures, the two-precision table, the plots and the notes.
    fn present(p: &Params, w: &Found, _: Option<&Checked>, ctx: &Ctx, o: &mut Presentation) {
        let prec = ctx.prec();
        let (all_lengths, res) = (&w.all_lengths, &w.res);
        let top = *all_lengths.last().expect("non-empty");
        let idx = |l: usize| w.idx(l);
        let get = |mi: usize, v: Variant, l: usize| w.get(mi, v, l);
        let mut table = Table::new(
            format!(
                "Toy RF99 (threshold {}, {} layers, H = {}; windows W1 unless stated): ours vs positional.md §3, residual / no residual",
                p.raw.threshold, p.raw.layers, p.raw.heads
            ),
            &["model", "L", "ours", "§3", "match"],
        );
        let mut exact = 0usize;
        let mut total = 0usize;
        for (mi, m) in p.raw.models.iter().enumerate() {
            let lens = m.lengths.as_ref().unwrap_or(&p.raw.lengths);
            for (li, &l) in lens.iter().enumerate() {
                let ours = [res.rf[mi][0][idx(l)], res.rf[mi][1][idx(l)]];
                let refs = [m.residual[li], m.plain[li]];
                let mut cells = Vec::new();
                for k in 0..2 {
                    total += 1;
                    let d = ours[k].abs_diff(refs[k]);
                    if d == 0 {
                        exact += 1;
                    }
                    cells.push(d == 0);
                }
                table.row(vec![
                    m.name.clone(),
                    l.to_string(),
                    format!("{} / {}", ours[0], ours[1]),
                    format!("{} / {}", refs[0], refs[1]),
                    match (cells[0], cells[1]) {
                        (true, true) => "exact".into(),
                        _ => "±".to_string() + &p.raw.rf_tolerance.to_string(),
                    },
                ]);
            }
        }
        o.figures.push(crate::outcome::Figure {
            name: "RF99 values matching §3 exactly".into(),
            value: exact as f64,
            text: format!("{exact} of {total}"),
        });
        o.tables.push(table);

        for (s, &mi) in p.raw.saturation.iter().zip(&p.saturation_model) {
            let (a, b) = (
                get(mi, s.variant, s.lengths[0]),
                get(mi, s.variant, s.lengths[1]),
            );
            let rel = (b as f64 - a as f64).abs() / a as f64;
            o.figure(
                format!(
                    "RF99 change {} ({}), L = {} → {}",
                    s.model,
                    s.variant.label(),
                    s.lengths[0],
                    s.lengths[1]
                ),
                rel,
                format!("{a} → {b} ({:.2}%)", 100.0 * rel),
            );
        }
        for (g, &mi) in p.raw.growth.iter().zip(&p.growth_model) {
            for &v in &g.variants {
                let (a, b) = (get(mi, v, g.lengths[0]), get(mi, v, g.lengths[1]));
                let ratio = b as f64 / a as f64;
                o.figure(
                    format!(
                        "RF99 ratio {} ({}), L = {} / {}",
                        g.model,
                        v.label(),
                        g.lengths[1],
                        g.lengths[0]
                    ),
                    ratio,
                    format!("{ratio:.3}"),
                );
            }
        }
        let n = p.raw.interval_length;
        let mut it = Table::new(
            format!(
                "Two precisions at L = {n}: RF99 from {prec}-bit enclosures vs f64, and max |g_f64 − g| (Σg = 1)"
            ),
            &["model", "variant", "RF99 (enclosures)", "RF99 (f64)", "max |g_f64 − midpoint|"],
        );
        for r in &w.two {
            let (ki, ci) = r.ki;
            it.row(vec![
                r.name.clone(),
                r.variant.label().into(),
                match (ki, ci) {
                    (Some(k), Certainty::True) => k.to_string(),
                    (Some(k), _) => format!("undecided at {k}"),
                    (None, _) => "undecided".into(),
                },
                r.kf.to_string(),
                format!("{:.2e}", r.dev),
            ]);
        }
        o.tables.push(it);

        // ----- plots: RF99 against L -----
        for (vi, &variant) in VARIANTS.iter().enumerate() {
            let mut series: Vec<Series> = p
                .raw
                .models
                .iter()
                .enumerate()
                .filter(|(_, m)| m.plot.unwrap_or(true))
                .map(|(mi, m)| Series {
                    name: m.name.clone(),
                    style: Style::Line,
                    points: all_lengths
                        .iter()
                        .filter(|&&l| m.kind != Kind::Sandwich || l <= MAX_DENSE)
                        .map(|&l| (l as f64, res.rf[mi][vi][idx(l)] as f64))
                        .collect(),
                })
                .collect();
            series.push(Series {
                name: "L − 1".into(),
                style: Style::Dashed,
                points: [all_lengths[0], top]
                    .iter()
                    .map(|&l| (l as f64, (l - 1) as f64))
                    .collect(),
            });
            o.plots.push(Plot {
                slug: match variant {
                    Variant::Residual => "rf-residual".into(),
                    Variant::Plain => "rf-plain".into(),
                },
                title: format!(
                    "Toy RF99 against L, {} ({} layers, H = {})",
                    variant.label(),
                    p.raw.layers,
                    p.raw.heads
                ),
                x_label: "L".into(),
                y_label: "RF99".into(),
                x_log: true,
                y_log: true,
                series,
                heatmap: None,
                paths: false,
            });
        }
        o.note(
            "The receptive-field tool of the paper (cumulative normalised gradient) is [unconfirmed] in its details; \
             this toy model has no trained content (logits = bias alone), so it measures what the biases allow, not what \
             trained models use. The untrained ALiBi RF (≈ 1.3–2k) exceeds L_tr = 512: the paper's \"RF < L_tr\" needs \
             trained content logits (see trained-model-claims).",
        );
        o.note(
            "A is applied without being formed for ALiBi (backward recurrence v_j = u_j + e^{−m}v_{j+1} per head) and \
             windows (w-term sums); Sandwich's A is stored once as a packed lower triangle for the largest L (rows do \
             not depend on L). Σ_j g_j = 1 because every J is row-stochastic.",
        );
    }
}

// ----- the averaged attention, f64 -----

/// The head-averaged causal attention A of a model, prepared up to some length.
enum Attn {
    /// A[i, j] = 1/(min(i, d) + 1) for i − d ≤ j ≤ i (d = largest distance).
    Window { d: usize },
    /// Per head x_h = e^{−m_h} and s_h[i] = 1/(H·Z_i(h)).
    Alibi { x: Vec<f64>, s: Vec<Vec<f64>> },
    /// Packed lower triangle: row i holds A[i, 0..=i] from offset i(i + 1)/2.
    Dense { rows: Vec<f64> },
}

fn tri(i: usize) -> usize {
    i * (i + 1) / 2
}

/// Head h's Sandwich weights W_h(r) = exp(B̃(r)/c_h), r < n, from f64 B̃.
fn sandwich_weights_f64(p: &Params, n: usize) -> Vec<Vec<f64>> {
    let f = sandwich_freqs_f64(p.raw.dbar, p.raw.from);
    let b: Vec<f64> = (0..n).map(|r| sandwich_centred_f64(r as f64, &f)).collect();
    (1..=p.raw.heads)
        .map(|h| {
            let c = compression_ratio(h, p.raw.heads).to_f64();
            b.iter().map(|v| (v / c).exp()).collect()
        })
        .collect()
}

fn max_distance(m: &Model) -> usize {
    m.convention
        .unwrap_or(Window::W1)
        .max_distance(m.w.unwrap_or(1)) as usize
}

fn prepare_f64(p: &Params, m: &Model, n: usize) -> Attn {
    let hh = p.raw.heads as f64;
    match m.kind {
        Kind::Window => Attn::Window { d: max_distance(m) },
        Kind::Alibi => {
            let qs = slope_exponents(p.raw.heads, m.rule.unwrap_or(SlopeRule::Code));
            let ms: Vec<f64> = qs
                .iter()
                .map(|q| slope_interval(q, 128).mid_f64())
                .collect();
            let x = ms.iter().map(|m| (-m).exp()).collect();
            // Z_i = (1 − e^{−m(i+1)})/(1 − e^{−m}), without cancellation
            let s = ms
                .iter()
                .map(|&m| {
                    let den = (-m).exp_m1();
                    (0..n)
                        .map(|i| den / ((-m * (i as f64 + 1.0)).exp_m1() * hh))
                        .collect()
                })
                .collect();
            Attn::Alibi { x, s }
        }
        Kind::Sandwich => {
            let w = sandwich_weights_f64(p, n);
            let s: Vec<Vec<f64>> = w
                .iter()
                .map(|wh| {
                    let mut z = 0.0;
                    wh.iter()
                        .map(|v| {
                            z += v;
                            1.0 / (hh * z)
                        })
                        .collect()
                })
                .collect();
            let mut rows = vec![0.0; tri(n)];
            // rows are independent: fill them in parallel
            let mut slices: Vec<&mut [f64]> = Vec::with_capacity(n);
            let mut rest = rows.as_mut_slice();
            for i in 0..n {
                let (a, b) = rest.split_at_mut(i + 1);
                slices.push(a);
                rest = b;
            }
            slices.into_par_iter().enumerate().for_each(|(i, row)| {
                for (j, out) in row.iter_mut().enumerate() {
                    let r = i - j;
                    *out = (0..w.len()).map(|h| w[h][r] * s[h][i]).sum();
                }
            });
            Attn::Dense { rows }
        }
    }
}

impl Attn {
    /// v = gA on the first g.len() positions.
    fn apply(&self, g: &[f64]) -> Vec<f64> {
        let n = g.len();
        match self {
            Attn::Window { d } => {
                let u: Vec<f64> = (0..n).map(|i| g[i] / ((i.min(*d) + 1) as f64)).collect();
                (0..n)
                    .map(|j| u[j..=(j + d).min(n - 1)].iter().sum())
                    .collect()
            }
            Attn::Alibi { x, s } => {
                let mut v = vec![0.0; n];
                for (xh, sh) in x.iter().zip(s) {
                    let mut acc = 0.0;
                    for j in (0..n).rev() {
                        acc = acc * xh + g[j] * sh[j];
                        v[j] += acc;
                    }
                }
                v
            }
            Attn::Dense { rows } => {
                const B: usize = 256;
                let mut v = vec![0.0; n];
                v.par_chunks_mut(B).enumerate().for_each(|(b, out)| {
                    let j0 = b * B;
                    for (i, &gi) in g.iter().enumerate().skip(j0) {
                        if gi == 0.0 {
                            continue;
                        }
                        let row = &rows[tri(i)..tri(i) + i + 1];
                        let j1 = (j0 + out.len()).min(i + 1);
                        for (o, a) in out[..j1 - j0].iter_mut().zip(&row[j0..j1]) {
                            *o += gi * a;
                        }
                    }
                });
                v
            }
        }
    }
}

/// g = e_lastᵀ J^layers at length n (f64).
fn gradient_f64(a: &Attn, n: usize, layers: usize, variant: Variant) -> Vec<f64> {
    let mut g = vec![0.0; n];
    g[n - 1] = 1.0;
    for _ in 0..layers {
        let v = a.apply(&g);
        g = match variant {
            Variant::Plain => v,
            Variant::Residual => g.iter().zip(&v).map(|(a, b)| 0.5 * (a + b)).collect(),
        };
    }
    g
}

/// RF99 = min{k : C(k) ≥ t} and the margins C(RF) − t ≥ 0 and t − C(RF − 1) > 0.
pub fn rf_f64(g: &[f64], t: f64) -> (usize, f64, f64) {
    let total: f64 = g.iter().sum();
    let mut c = 0.0;
    let mut prev = 0.0;
    for k in 0..g.len() {
        c += g[g.len() - 1 - k];
        if c / total >= t {
            return (k, c / total - t, t - prev / total);
        }
        prev = c;
    }
    (g.len() - 1, 0.0, 0.0)
}

// ----- the same in 128-bit intervals -----

enum AttnI {
    Window {
        d: usize,
    },
    Alibi {
        x: Vec<Interval>,
        s: Vec<Vec<Interval>>,
    },
    Dense {
        rows: Vec<Interval>,
    },
}

fn prepare_interval(p: &Params, m: &Model, n: usize, prec: u32) -> AttnI {
    let hh = Interval::from_i64(prec, p.raw.heads as i64);
    let one = Interval::one(prec);
    let normalise = |w: &[Interval]| -> Vec<Interval> {
        let mut z = Interval::zero(prec);
        w.iter()
            .map(|v| {
                z.add_assign(v);
                &one / &(&hh * &z)
            })
            .collect()
    };
    match m.kind {
        Kind::Window => AttnI::Window { d: max_distance(m) },
        Kind::Alibi => {
            let qs = slope_exponents(p.raw.heads, m.rule.unwrap_or(SlopeRule::Code));
            let x: Vec<Interval> = qs
                .iter()
                .map(|q| slope_interval(q, prec).neg_exp())
                .collect();
            let s = x
                .iter()
                .map(|xh| {
                    let mut pw = one.clone();
                    let w: Vec<Interval> = (0..n)
                        .map(|_| {
                            let cur = pw.clone();
                            pw = &pw * xh;
                            cur
                        })
                        .collect();
                    normalise(&w)
                })
                .collect();
            AttnI::Alibi { x, s }
        }
        Kind::Sandwich => {
            let rs: Vec<i64> = (0..n as i64).collect();
            let b = sandwich_centred_many(&rs, &sandwich_freqs(p.raw.dbar, p.raw.from, prec));
            let w: Vec<Vec<Interval>> = (1..=p.raw.heads)
                .map(|h| {
                    let c = Interval::from_rational(prec, &compression_ratio(h, p.raw.heads));
                    b.iter().map(|v| (v / &c).exp()).collect()
                })
                .collect();
            let s: Vec<Vec<Interval>> = w.iter().map(|wh| normalise(wh)).collect();
            let rows: Vec<Interval> = (0..n)
                .into_par_iter()
                .flat_map_iter(|i| {
                    let (w, s) = (&w, &s);
                    (0..=i).map(move |j| {
                        let mut acc = Interval::zero(prec);
                        for h in 0..w.len() {
                            acc.add_assign(&(&w[h][i - j] * &s[h][i]));
                        }
                        acc
                    })
                })
                .collect();
            AttnI::Dense { rows }
        }
    }
}

impl AttnI {
    fn apply(&self, g: &[Interval]) -> Vec<Interval> {
        let n = g.len();
        let prec = g[0].prec();
        match self {
            AttnI::Window { d } => {
                let u: Vec<Interval> = (0..n)
                    .map(|i| g[i].div_i64((i.min(*d) + 1) as i64))
                    .collect();
                (0..n)
                    .map(|j| {
                        let mut acc = Interval::zero(prec);
                        for x in &u[j..=(j + d).min(n - 1)] {
                            acc.add_assign(x);
                        }
                        acc
                    })
                    .collect()
            }
            AttnI::Alibi { x, s } => {
                let per_head: Vec<Vec<Interval>> = x
                    .par_iter()
                    .zip(s)
                    .map(|(xh, sh)| {
                        let mut out = vec![Interval::zero(prec); n];
                        let mut acc = Interval::zero(prec);
                        for j in (0..n).rev() {
                            acc = &(&acc * xh) + &(&g[j] * &sh[j]);
                            out[j] = acc.clone();
                        }
                        out
                    })
                    .collect();
                (0..n)
                    .map(|j| {
                        let mut v = Interval::zero(prec);
                        for h in &per_head {
                            v.add_assign(&h[j]);
                        }
                        v
                    })
                    .collect()
            }
            AttnI::Dense { rows } => (0..n)
                .into_par_iter()
                .map(|j| {
                    let mut acc = Interval::zero(prec);
                    for (i, gi) in g.iter().enumerate().skip(j) {
                        acc.add_assign(&(gi * &rows[tri(i) + j]));
                    }
                    acc
                })
                .collect(),
        }
    }
}

fn gradient_interval(
    a: &AttnI,
    n: usize,
    layers: usize,
    variant: Variant,
    prec: u32,
) -> Vec<Interval> {
    let mut g = vec![Interval::zero(prec); n];
    g[n - 1] = Interval::one(prec);
    for _ in 0..layers {
        let v = a.apply(&g);
        g = match variant {
            Variant::Plain => v,
            Variant::Residual => g
                .iter()
                .zip(&v)
                .map(|(a, b)| (a + b).mul_2exp(-1))
                .collect(),
        };
    }
    g
}

/// RF99 decided from enclosures: the k with C(k − 1) < t ≤ C(k) certified, where
/// C(k) = Σ_{r≤k} g_{L−1−r} / Σ_j g_j. `Unknown` when the threshold is not decided.
fn rf_interval(g: &[Interval], t: &Interval) -> (Option<usize>, Certainty) {
    let prec = g[0].prec();
    let mut total = Interval::zero(prec);
    for x in g {
        total.add_assign(x);
    }
    let mut c = Interval::zero(prec);
    for k in 0..g.len() {
        c.add_assign(&g[g.len() - 1 - k]);
        let ck = &c / &total;
        match ck.ge(t) {
            Certainty::True => return (Some(k), Certainty::True),
            Certainty::False => {}
            Certainty::Unknown => return (Some(k), Certainty::Unknown),
        }
    }
    (None, Certainty::Unknown)
}

/// RF99 of every (model, variant, length) in f64, with the smallest threshold margin.
struct Results {
    /// rf[model][variant][length index] for `all_lengths`.
    rf: Vec<[Vec<usize>; 2]>,
    min_margin: (f64, String),
}

const VARIANTS: [Variant; 2] = [Variant::Residual, Variant::Plain];

/// One model and variant at the interval length: RF99 from the enclosures (and
/// whether it is decided), from f64, and the largest |g_f64 − midpoint|.
#[derive(Debug, Clone)]
pub struct TwoPrecisions {
    /// The model's name.
    name: String,
    /// The variant.
    variant: Variant,
    /// RF99 from the enclosures and its certainty.
    ki: (Option<usize>, Certainty),
    /// RF99 from f64.
    kf: usize,
    /// max |g_f64 − midpoint|.
    dev: f64,
}

/// What the run computed: RF99 of every model, variant and length (f64), and the
/// two-precision runs at one length.
pub struct Found {
    /// Every length, sorted.
    all_lengths: Vec<usize>,
    /// The f64 runs.
    res: Results,
    /// The two-precision runs, per model and variant.
    two: Vec<TwoPrecisions>,
}

impl Found {
    /// The index of length `l` in `all_lengths`.
    fn idx(&self, l: usize) -> usize {
        self.all_lengths
            .iter()
            .position(|&x| x == l)
            .expect("listed")
    }
    /// RF99 of model `mi`, variant `v`, at length `l`.
    fn get(&self, mi: usize, v: Variant, l: usize) -> usize {
        self.res.rf[mi][if v == Variant::Residual { 0 } else { 1 }][self.idx(l)]
    }
}
