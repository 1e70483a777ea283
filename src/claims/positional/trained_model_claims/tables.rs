//! The presentation's figures and measured tables: ALiBi's extrapolation ratio, the corpus
//! and the models' sizes, the checkpoints (where there are some), perplexity and RF99
//! against L_ex per L_tr, windowed and truncated attention, the certified models' weights
//! (the scan's), and the arms trained longer.

use super::view::{
    alibi, ats, ci, gradient_mass_beyond, is_window, rf_track, seed_spread, At, View,
};
use super::{sig, Job, Params, Scheme};
use crate::outcome::{round_sig, Presentation, Table};
use attncheck_lm::job::JobResult;

/// The figures: ALiBi's extrapolation ratio per L_tr and (the scan's) the gradient mass
/// beyond L_tr at its trend L_ex.
pub(super) fn figures(v: &View, o: &mut Presentation) {
    let View { p, results, .. } = *v;
    let plans = p.plans();
    let cr = &p.criteria;
    let ats = ats(&plans, results);

    // ---- figures ----
    for at in &ats {
        for (j, r) in at.of(alibi) {
            if j.seed == p.seeds[0] {
                let q = at.ratio(r, cr.extrapolation_multiple);
                o.figure(
                    format!(
                        "L_tr = {} alibi ppl({}·L_tr)/ppl(L_tr), seed {}",
                        at.l(),
                        cr.extrapolation_multiple,
                        j.seed
                    ),
                    round_sig(q, 3),
                    sig(q),
                );
            }
        }
    }
    let Some(sc) = v.criteria() else { return };
    for (l, x) in &gradient_mass_beyond(&ats, sc) {
        o.figure(
            format!(
                "L_tr = {l} alibi gradient mass beyond L_tr at {}·L_tr (seed mean)",
                sc.trend_multiple
            ),
            round_sig(*x, 3),
            sig(*x),
        );
    }
}

/// The corpus and the models' sizes.
pub(super) fn tables(v: &View, o: &mut Presentation) {
    let View { p, c, .. } = *v;
    let plans = p.plans();

    // ---- tables ----
    let mut t = Table::new(
        "Corpus (byte-level; fixed split)",
        &["package", "licence", "role"],
    );
    for (name, lic) in &c.licences {
        t.row(vec![name.clone(), lic.clone(), "`.rs` files".into()]);
    }
    t.row(vec![
        format!("{} files, hash {}", c.files, c.hash),
        "—".into(),
        format!(
            "train {} bytes, validation {} bytes (every {}th file)",
            c.train.len(),
            c.val.len(),
            p.val_every
        ),
    ]);
    o.tables.push(t);

    let params = parameter_count(p);
    let mut t = Table::new(
        format!(
            "The {}: {} layers, hidden {}, {} heads, {params} parameters for every scheme (the position schemes add none), seeds {:?}; the same budget for every arm, fixed in advance; per training length",
            v.noun(), p.layers, p.hidden, p.heads, p.seeds
        ),
        &[
            "L_tr",
            "windows w (aligned iff layers·(w − 1) ≤ L_tr)",
            "steps × batch",
            "training bytes seen",
            "training bytes per parameter",
            "checkpoints (steps)",
            "L_ex",
            "evaluation stride, scored bytes",
        ],
    );
    for plan in &plans {
        let l = plan.train_length;
        t.row(vec![
            l.to_string(),
            plan.windows
                .iter()
                .map(|&w| {
                    format!(
                        "{w}{}",
                        if p.layers * (w - 1) <= l {
                            " (aligned)"
                        } else {
                            ""
                        }
                    )
                })
                .collect::<Vec<_>>()
                .join(", "),
            format!("{} × {}", plan.steps, plan.batch),
            (plan.steps * plan.batch * l).to_string(),
            sig((plan.steps * plan.batch * l) as f64 / params as f64),
            v.checkpoints()
                .iter()
                .map(|c| (plan.steps * c / 100).to_string())
                .chain(std::iter::once(plan.steps.to_string()))
                .collect::<Vec<_>>()
                .join(", "),
            plan.eval_multiples
                .iter()
                .map(|m| (m * l).to_string())
                .collect::<Vec<_>>()
                .join(", "),
            format!("{}, {}", plan.eval_stride, plan.eval_targets),
        ]);
    }
    o.tables.push(t);
}

/// The models' trainable numbers: embedding and output projection (256·d each), per layer
/// the q/k/v, output and MLP projections with their biases and two layer norms
/// (12d² + 13d), and the final layer norm (2d); no position scheme adds any.
fn parameter_count(p: &Params) -> usize {
    let d = p.hidden;
    2 * 256 * d + p.layers * (12 * d * d + 13 * d) + 2 * d
}

/// One model's RF99 at evaluation length k at every checkpoint and the end, `a / b / c`.
fn rf_cell(track: Option<&[Vec<usize>]>, k: usize) -> Option<String> {
    Some(
        track?
            .iter()
            .map(|c| c[k].to_string())
            .collect::<Vec<_>>()
            .join(" / "),
    )
}

/// One model's ppl(m·L_tr)/ppl(L_tr) at every one of its `checkpoints` and the end,
/// `a / b / c` (`—` for a missing checkpoint).
fn ratio_cell(at: &At, r: &JobResult, checkpoints: usize, m: usize) -> String {
    let mut ratios: Vec<String> = (0..checkpoints)
        .map(|c| r.as_of(c).map_or("—".into(), |x| sig(at.ratio(&x, m))))
        .collect();
    ratios.push(sig(at.ratio(r, m)));
    ratios.join(" / ")
}

/// The arms trained longer: per arm and seed, the scan's run (its checkpoints and end)
/// above the longer run's, RF99 at every L_ex and the extrapolation ratio.
pub(super) fn longer_arms(v: &View, o: &mut Presentation) {
    let View { p, results, .. } = *v;
    let Some(lg) = v.scan.and_then(|(s, _)| s.sweeps.longer.as_ref()) else {
        return;
    };
    let plans = p.plans();
    let cr = &p.criteria;
    let cps = v.checkpoints();
    let when = v.when();
    let Some(longer) = v.longer else {
        o.notes.push(format!(
            "Arms are trained longer ({} arm(s), every seed; the spec's [profiles.full.scan.sweeps.longer]); that sweep's shards are not merged into this report yet (bench/sweeps/trained-scan-longer/), so its checks say \"not run\".",
            lg.arms.len()
        ));
        return;
    };
    for a in &lg.arms {
        let Some(plan) = plans.iter().find(|x| x.train_length == a.train_length) else {
            continue;
        };
        let l = plan.train_length;
        let at = At::new(plan, results);
        let mut cols: Vec<String> = vec!["model".into(), "seed".into(), "steps".into()];
        cols.extend(
            plan.eval_multiples
                .iter()
                .map(|m| format!("RF99 @ {} ({})", m * l, when.join(" / "))),
        );
        cols.push(format!(
            "ppl({}·L_tr)/ppl(L_tr) ({})",
            cr.extrapolation_multiple,
            when.join(" / ")
        ));
        let colrefs: Vec<&str> = cols.iter().map(String::as_str).collect();
        let mut t = Table::new(
            format!(
                "L_tr = {l}, {}: trained longer — the scan's run ({} steps) and the longer run ({} steps), each at {} of its training",
                a.scheme,
                plan.steps,
                a.steps,
                when.join(", ")
            ),
            &colrefs,
        );
        let row = |j: &Job, r: &JobResult, steps: usize| {
            let mut row = vec![j.scheme.label(), j.seed.to_string(), steps.to_string()];
            let track = rf_track(r, cps.len());
            for k in 0..plan.eval_multiples.len() {
                row.push(rf_cell(track.as_deref(), k).unwrap_or_else(|| "—".into()));
            }
            row.push(ratio_cell(&at, r, cps.len(), cr.extrapolation_multiple));
            row
        };
        for (j, r) in longer
            .iter()
            .filter(|(j, _)| j.train_length == l && j.scheme.label() == a.scheme)
        {
            if let Some((bj, br)) = results
                .iter()
                .find(|(x, _)| x.train_length == l && x.scheme == j.scheme && x.seed == j.seed)
            {
                t.row(row(bj, br, plan.steps));
            }
            t.row(row(j, r, a.steps));
        }
        o.tables.push(t);
    }
}

/// The checkpoints, where there are some: RF99 and the extrapolation ratio at each, beside
/// the seed spread (with more than one seed).
pub(super) fn checkpoints(v: &View, o: &mut Presentation) {
    let View { p, results, .. } = *v;
    let plans = p.plans();
    let cr = &p.criteria;
    let cps = v.checkpoints();
    if cps.is_empty() {
        return;
    }
    let ats = ats(&plans, results);
    let several = v.several_seeds();

    // the checkpoints: RF99 and the extrapolation ratio at each, beside the seed spread
    let when = v.when();
    for at in &ats {
        let l = at.l();
        let mut cols: Vec<String> = vec!["model".into(), "seed".into()];
        cols.extend(at.plan.eval_multiples.iter().map(|m| {
            format!(
                "RF99 @ {} ({}){}",
                m * l,
                when.join(" / "),
                if several { " [seed spread]" } else { "" }
            )
        }));
        cols.push(format!(
            "ppl({}·L_tr)/ppl(L_tr) ({})",
            cr.extrapolation_multiple,
            when.join(" / ")
        ));
        let colrefs: Vec<&str> = cols.iter().map(String::as_str).collect();
        let mut t = Table::new(
            format!(
                "L_tr = {l}: the checkpoints — RF99 at {} of training{}",
                when.join(", "),
                if several {
                    ", and the spread of the final RF99 across seeds (largest minus smallest); the stability criterion asks each model's movement to stay below that spread"
                } else {
                    ""
                }
            ),
            &colrefs,
        );
        for (j, r) in &at.results {
            let spread = seed_spread(at, j.scheme);
            let mut row = vec![j.scheme.label(), j.seed.to_string()];
            let track = rf_track(r, cps.len());
            for (k, sp) in spread.iter().enumerate() {
                row.push(match rf_cell(track.as_deref(), k) {
                    Some(c) if several => format!("{c} [{sp}]"),
                    Some(c) => c,
                    None => "—".into(),
                });
            }
            row.push(ratio_cell(at, r, cps.len(), cr.extrapolation_multiple));
            t.row(row);
        }
        o.tables.push(t);
    }
}

/// Perplexity and RF99 against L_ex per L_tr, windowed and truncated attention, and (the
/// scan's) the weights of the certified models.
pub(super) fn measured(v: &View, o: &mut Presentation) {
    let View { p, results, .. } = *v;
    let plans = p.plans();
    let cr = &p.criteria;
    let ats = ats(&plans, results);
    for at in &ats {
        let l = at.l();
        let mut cols: Vec<String> = vec!["model".into(), "seed".into()];
        cols.extend(
            at.plan
                .eval_multiples
                .iter()
                .map(|m| format!("ppl @ {}", m * l)),
        );
        let colrefs: Vec<&str> = cols.iter().map(String::as_str).collect();
        let mut t = Table::new(
            format!(
                "L_tr = {l}: validation perplexity (bytes) against L_ex — sliding windows, stride {}, the same {} scored bytes at every L_ex",
                at.plan.eval_stride, at.plan.eval_targets
            ),
            &colrefs,
        );
        for (j, r) in &at.results {
            let mut row = vec![j.scheme.label(), j.seed.to_string()];
            row.extend(at.plan.eval_multiples.iter().map(|&m| sig(at.ppl(r, m))));
            t.row(row);
        }
        o.tables.push(t);

        let mut cols: Vec<String> = vec!["model".into(), "seed".into()];
        cols.extend(
            at.plan
                .eval_multiples
                .iter()
                .map(|m| format!("RF99 @ {}", m * l)),
        );
        let colrefs: Vec<&str> = cols.iter().map(String::as_str).collect();
        let mut t = Table::new(
            format!(
                "L_tr = {l}: receptive field RF99 (cumulative normalised gradient ≥ {}; {} sequences; 95% bootstrap interval of {} resamples)",
                p.rf_threshold, p.rf_sequences, p.bootstrap
            ),
            &colrefs,
        );
        for (j, r) in &at.results {
            let mut row = vec![j.scheme.label(), j.seed.to_string()];
            row.extend((0..at.plan.eval_multiples.len()).map(|k| {
                let (a, b) = ci(&r.rf_boot[k]);
                format!("{} [{a}, {b}]", r.rf[k])
            }));
            t.row(row);
        }
        o.tables.push(t);
    }

    let mut t = Table::new(
        format!("Windowed attention (W1), {} layers", p.layers),
        &[
            "L_tr",
            "w",
            "seed",
            "layers·(w − 1)",
            "aligned (≤ L_tr)",
            "ppl @ L_tr",
            "ppl ratio @ extrapolation L_ex",
            "extrapolates",
            "gradient support @ max L_ex",
        ],
    );
    for at in &ats {
        let l = at.l();
        for (j, r) in at.of(is_window) {
            let Scheme::Window(w) = j.scheme else {
                continue;
            };
            let q = at.ratio(r, cr.extrapolation_multiple);
            t.row(vec![
                l.to_string(),
                w.to_string(),
                j.seed.to_string(),
                (p.layers * (w - 1)).to_string(),
                if p.layers * (w - 1) <= l { "yes" } else { "no" }.into(),
                sig(at.ppl(r, 1)),
                sig(q),
                if q <= cr.extrapolation_ratio {
                    "yes"
                } else {
                    "no"
                }
                .into(),
                r.support.last().map(|s| s.to_string()).unwrap_or_default(),
            ]);
        }
    }
    o.tables.push(t);

    let mut t = Table::new(
        format!(
            "Truncated attention at L_ex = {}·L_tr: every layer attends to the last W tokens only",
            cr.truncation_length
        ),
        &[
            "L_tr",
            "model",
            "seed",
            "W",
            "ppl full",
            "ppl truncated",
            "change",
            "attention scores computed (share of full)",
        ],
    );
    for at in &ats {
        let l = at.l();
        let lt = cr.truncation_length * l;
        for (j, r) in at.of(|x| matches!(x, Scheme::Alibi(_) | Scheme::Sandwich)) {
            let full = at.ppl(r, cr.truncation_length);
            for &(w, v) in &r.truncated {
                let wl = (w * l).min(lt);
                let work = (wl * (wl + 1) / 2 + (lt - wl) * wl) as f64 / (lt * (lt + 1) / 2) as f64;
                t.row(vec![
                    l.to_string(),
                    j.scheme.label(),
                    j.seed.to_string(),
                    (w * l).to_string(),
                    sig(full),
                    sig(v.exp()),
                    format!("{}%", sig(100.0 * (v.exp() / full - 1.0))),
                    sig(work),
                ]);
            }
        }
    }
    o.tables.push(t);

    // the weights of the models whose windows the scan certifies
    if v.scan.is_none() {
        return;
    }
    let mut t = Table::new(
        "Trained ALiBi weights that enter the certified implicit window (stored exactly in the shards, f32 bit patterns; carried by the certificate)",
        &["L_tr", "seed", "layers", "SHA-256 of the weights", "consistent"],
    );
    for at in &ats {
        for (j, r) in at.of(alibi) {
            if let Some(Ok(w)) = r.attention_weights() {
                t.row(vec![
                    at.l().to_string(),
                    j.seed.to_string(),
                    w.layers.len().to_string(),
                    format!("`{}`", w.sha256),
                    if w.is_consistent() { "yes" } else { "NO" }.into(),
                ]);
            }
        }
    }
    o.tables.push(t);
}
