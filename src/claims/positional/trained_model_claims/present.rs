//! The quick profile's observations and presentation: one training length, one part per
//! finding.

use super::scan::{bias_distances, ci, observe_biases, share, At};
use super::{sig, Job, Params, Plan, Scheme};
use crate::claims::positional::common::SlopeRule;
use crate::claims::shape::Ctx;
use crate::outcome::{Observations, Plot, Presentation, Series, Style, Table};
use attncheck_lm::job::JobResult;

/// The observed checks, one part per finding, in report order.
pub(super) fn observe(
    p: &Params,
    plan: &Plan,
    ctx: &Ctx,
    results: &[(Job, JobResult)],
    o: &mut Observations,
) {
    let l = plan.train_length;
    let cr = &p.criteria;
    let at = At::new(plan, results);
    // One check each, shared by the ALiBi and Sandwich parts (the same words for both).
    let extrapolates =
        |o: &mut Observations, j: &Job, r: &JobResult| at.observe_extrapolates(cr, o, j, r);
    // RF99 below (`beyond` false) or above (`beyond` true) L_tr at the k-th L_ex, in enough resamples.
    let rf_side = |o: &mut Observations, j: &Job, r: &JobResult, k: usize, beyond: bool| {
        let s = share(&r.rf_boot[k], |x| if beyond { x > l } else { x < l });
        o.observe(
            format!(
                "{} seed {}, L_ex = {}: RF99 {} L_tr = {l} in ≥ {} of bootstrap resamples",
                j.scheme.label(),
                j.seed,
                plan.eval_multiples[k] * l,
                if beyond { ">" } else { "<" },
                cr.bootstrap_share
            ),
            s >= cr.bootstrap_share,
            format!(
                "RF99 = {} (95% interval {:?}), share {}",
                r.rf[k],
                ci(&r.rf_boot[k]),
                sig(s)
            ),
        );
    };

    // ---- setup: the biases are the certified formulas; the slope rules coincide ----
    o.set_part(Some("setup: biases and controls"));
    let max_len = l * plan.eval_multiples.last().copied().unwrap_or(1);
    observe_biases(
        p,
        ctx.prec(),
        &bias_distances(max_len),
        &[
            Scheme::Alibi(SlopeRule::Paper),
            Scheme::Alibi(SlopeRule::Code),
            Scheme::Sandwich,
        ],
        o,
    );
    for (j, r) in at.of(|s| s == Scheme::Sinusoidal) {
        let q = at.ratio(r, cr.sinusoidal_multiple);
        o.observe(
            format!(
                "control, sinusoidal seed {}: ppl({}·L_tr) ≥ {}·ppl(L_tr) (extrapolation is not free here)",
                j.seed, cr.sinusoidal_multiple, cr.sinusoidal_ratio
            ),
            q >= cr.sinusoidal_ratio,
            format!("ratio {}", sig(q)),
        );
    }

    // ---- (1) ALiBi extrapolates ----
    o.set_part(Some("ALiBi extrapolates"));
    for (j, r) in at.of(|s| matches!(s, Scheme::Alibi(_))) {
        extrapolates(o, j, r);
    }

    // ---- (2) ALiBi uses no tokens beyond L_tr ----
    o.set_part(Some("ALiBi uses no tokens beyond L_tr"));
    for (j, r) in at.of(|s| matches!(s, Scheme::Alibi(_))) {
        for k in 0..plan.eval_multiples.len() {
            rf_side(o, j, r, k, false);
        }
    }

    // ---- (3) windowed attention extrapolates iff layers·(w − 1) ≤ L_tr ----
    o.set_part(Some(
        "windowed attention extrapolates iff layers·(w − 1) ≤ L_tr",
    ));
    for (j, r) in at.of(|s| matches!(s, Scheme::Window(_))) {
        at.observe_window_iff(p, o, j, r);
    }

    // ---- (4) Sandwich uses information beyond L_tr and still extrapolates ----
    o.set_part(Some("Sandwich uses tokens beyond L_tr and extrapolates"));
    for (j, r) in at.of(|s| s == Scheme::Sandwich) {
        for (k, _) in p
            .eval_multiples
            .iter()
            .enumerate()
            .filter(|(_, &m)| m >= cr.sandwich_rf_from)
        {
            rf_side(o, j, r, k, true);
        }
        extrapolates(o, j, r);
    }

    // ---- (5) efficient windowed inference ----
    o.set_part(Some("efficient windowed inference"));
    for (j, r) in at.of(|s| matches!(s, Scheme::Alibi(_) | Scheme::Sandwich)) {
        at.observe_truncation(cr, o, j, r);
    }
    o.set_part(None);
}

/// The figures, tables, plots and notes.
pub(super) fn present(
    p: &Params,
    plan: &Plan,
    c: &attncheck_lm::corpus::Corpus,
    results: &[(Job, JobResult)],
    o: &mut Presentation,
) {
    let l = plan.train_length;
    let cr = &p.criteria;
    let at = At::new(plan, results);
    let lt = cr.truncation_length * l;

    // ---- figures ----
    for (j, r) in results {
        if matches!(
            j.scheme,
            Scheme::Alibi(_) | Scheme::Sandwich | Scheme::Sinusoidal
        ) && j.seed == p.seeds[0]
        {
            let q = at.ratio(r, cr.extrapolation_multiple);
            o.figure(
                format!(
                    "{} ppl({}·L_tr)/ppl(L_tr)",
                    j.scheme.label(),
                    cr.extrapolation_multiple
                ),
                crate::outcome::round_sig(q, 3),
                sig(q),
            );
        }
    }

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

    let mut cols: Vec<String> = vec!["model".into(), "seed".into(), "final train loss".into()];
    cols.extend(
        plan.eval_multiples
            .iter()
            .map(|m| format!("ppl @ {}", m * l)),
    );
    let colrefs: Vec<&str> = cols.iter().map(String::as_str).collect();
    let mut t = Table::new(
        format!("Validation perplexity (bytes) against L_ex: sliding windows, stride {}, the same {} scored bytes at every L_ex", plan.eval_stride, plan.eval_targets),
        &colrefs,
    );
    for (j, r) in results {
        let mut row = vec![
            j.scheme.label(),
            j.seed.to_string(),
            r.loss_curve.last().map(|&x| sig(x)).unwrap_or_default(),
        ];
        row.extend(plan.eval_multiples.iter().map(|&m| sig(at.ppl(r, m))));
        t.row(row);
    }
    o.tables.push(t);

    let mut cols: Vec<String> = vec!["model".into(), "seed".into()];
    cols.extend(
        plan.eval_multiples
            .iter()
            .map(|m| format!("RF99 @ {}", m * l)),
    );
    let colrefs: Vec<&str> = cols.iter().map(String::as_str).collect();
    let mut t = Table::new(
        format!(
            "Receptive field RF99 (cumulative normalised gradient ≥ {}; {} sequences; 95% bootstrap interval of {} resamples), L_tr = {l}",
            p.rf_threshold, p.rf_sequences, p.bootstrap
        ),
        &colrefs,
    );
    for (j, r) in results {
        let mut row = vec![j.scheme.label(), j.seed.to_string()];
        row.extend((0..plan.eval_multiples.len()).map(|k| {
            let (a, b) = ci(&r.rf_boot[k]);
            format!("{} [{a}, {b}]", r.rf[k])
        }));
        t.row(row);
    }
    o.tables.push(t);

    let mut t = Table::new(
        format!("Windowed attention (W1), {} layers, L_tr = {l}", p.layers),
        &[
            "w",
            "seed",
            "layers·(w − 1)",
            "aligned (≤ L_tr)",
            "ppl @ L_tr",
            "ppl ratio @ 8·L_tr",
            "extrapolates",
            "gradient support @ max L_ex",
        ],
    );
    for (j, r) in at.of(|s| matches!(s, Scheme::Window(_))) {
        let Scheme::Window(w) = j.scheme else {
            continue;
        };
        let q = at.ratio(r, cr.extrapolation_multiple);
        t.row(vec![
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
    o.tables.push(t);

    let mut t = Table::new(
        format!(
            "Truncated attention at L_ex = {lt}: every layer attends to the last W tokens only"
        ),
        &[
            "model",
            "seed",
            "W",
            "ppl full",
            "ppl truncated",
            "change",
            "attention scores computed (share of full)",
        ],
    );
    for (j, r) in at.of(|s| matches!(s, Scheme::Alibi(_) | Scheme::Sandwich)) {
        let full = at.ppl(r, cr.truncation_length);
        for &(w, v) in &r.truncated {
            let wl = (w * l).min(lt);
            let work = (wl * (wl + 1) / 2 + (lt - wl) * wl) as f64 / (lt * (lt + 1) / 2) as f64;
            t.row(vec![
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
    o.tables.push(t);

    if !p.fixture.is_empty() {
        let mut t = Table::new(
            "Published numbers (fixtures: reported, never asserted; different data and scale)",
            &["source", "model", "length", "perplexity"],
        );
        for f in &p.fixture {
            t.row(vec![
                f.source.clone(),
                f.model.clone(),
                f.length.to_string(),
                format!("{}", f.perplexity),
            ]);
        }
        o.tables.push(t);
    }

    // ---- plots ----
    let first_seed = p.seeds[0];
    let main: Vec<&(Job, JobResult)> = results
        .iter()
        .filter(|(j, _)| j.seed == first_seed)
        .collect();
    let coarse = |x: f64| crate::outcome::round_sig(x, 4);
    o.plots.push(Plot {
        slug: "perplexity".into(),
        title: format!("Validation perplexity against L_ex (L_tr = {l}, seed {first_seed})"),
        x_label: "L_ex".into(),
        y_label: "perplexity (bytes)".into(),
        x_log: true,
        y_log: true,
        series: main
            .iter()
            .map(|(j, r)| Series {
                name: j.scheme.label(),
                style: Style::Line,
                points: p
                    .eval_multiples
                    .iter()
                    .map(|&m| ((m * l) as f64, coarse(at.ppl(r, m))))
                    .collect(),
            })
            .collect(),
        heatmap: None,
        paths: false,
    });
    let k = plan.eval_multiples.len() - 1;
    let lmax = l * plan.eval_multiples[k];
    let mut series: Vec<Series> = main
        .iter()
        .filter(|(j, _)| !matches!(j.scheme, Scheme::Window(w) if w != plan.windows[0]))
        .map(|(j, r)| {
            let cum = attncheck_lm::eval::cumulative(&r.curves[k]);
            Series {
                name: j.scheme.label(),
                style: Style::Line,
                points: super::super::common::log_plot_points(1, lmax as i64)
                    .into_iter()
                    .map(|d| (d as f64, coarse(cum[(d - 1) as usize])))
                    .collect(),
            }
        })
        .collect();
    series.push(Series {
        name: format!("L_tr = {l}"),
        style: Style::Dashed,
        points: vec![(l as f64, 0.0), (l as f64, 1.0)],
    });
    o.plots.push(Plot {
        slug: "cumulative-gradient".into(),
        title: format!("Cumulative normalised gradient at L_ex = {lmax} (seed {first_seed})"),
        x_label: "distance k + 1 from the last token".into(),
        y_label: "C(k)".into(),
        x_log: true,
        y_log: false,
        series,
        heatmap: None,
        paths: false,
    });
    let mut win: Vec<Series> = p
        .seeds
        .iter()
        .map(|&s| Series {
            name: format!("seed {s}"),
            style: Style::Points,
            points: at
                .of(|sc| matches!(sc, Scheme::Window(_)))
                .iter()
                .filter(|(j, _)| j.seed == s)
                .filter_map(|(j, r)| match j.scheme {
                    Scheme::Window(w) => {
                        Some((w as f64, coarse(at.ratio(r, cr.extrapolation_multiple))))
                    }
                    _ => None,
                })
                .collect(),
        })
        .collect();
    let wmax = *plan.windows.iter().max().unwrap_or(&1) as f64;
    let boundary = (l / p.layers + 1) as f64;
    win.push(Series {
        name: format!("criterion {}", cr.extrapolation_ratio),
        style: Style::Dashed,
        points: vec![
            (1.0, cr.extrapolation_ratio),
            (wmax, cr.extrapolation_ratio),
        ],
    });
    win.push(Series {
        name: format!("layers·(w − 1) = L_tr (w = {boundary})"),
        style: Style::Dashed,
        points: vec![(boundary, 1.0), (boundary, cr.extrapolation_ratio * 1.5)],
    });
    o.plots.push(Plot {
        slug: "windowed".into(),
        title: format!(
            "Windowed attention: ppl({}·L_tr)/ppl(L_tr) against w",
            cr.extrapolation_multiple
        ),
        x_label: "window w".into(),
        y_label: "perplexity ratio".into(),
        x_log: false,
        y_log: true,
        series: win,
        heatmap: None,
        paths: false,
    });

    o.note(format!(
        "Scale: pre-LN decoder with a ReLU MLP (4·hidden), {} layers, hidden {}, {} heads, L_tr = {l}, {} steps of {} sequences ({} training bytes seen), seeds {:?}; \
         the paper trains 12 layers, hidden 768, L_tr = 512 for 50k steps. A finite experiment: every part is at most supported.",
        p.layers, p.hidden, p.heads, plan.steps, plan.batch, plan.steps * plan.batch * l, p.seeds
    ));
    o.note(
        "Determinism (threads pinned, print rounded): weights, batches and bootstrap draws come from SplitMix64 seeds; \
         each (scheme, seed) job runs on one thread — every matrix product is one sequential gemm call \
         (crates/attncheck-lm/src/mm.rs), attention, layer norm and loss in f32 with sums in an order fixed by the shapes (attn.rs, ops.rs), candle's elementwise pool \
         pinned to CANDLE_NUM_THREADS=1 — and jobs run side by side, so the numbers do not depend on the thread count \
         or the order in which jobs finish; the report prints 4 significant digits.",
    );
    o.note(
        "Evaluation is sliding-window with a fixed stride (the ALiBi paper's App. B uses stride 1); every L_ex scores the same \
         bytes. The receptive field is taken from the mean of the per-sequence normalised gradient curves (gradient of the \
         last position's loss with respect to the token embeddings, L2 norm per position), as the paper's cumulative plots; \
         its threshold and norm are [unconfirmed] details.",
    );
    o.note(
        "Sandwich uses the centred bias B̃(r)/c_h, which gives exactly the attention of p_mᵀp_n/c_h (positional/shift-invariance); \
         windowed models have no other position information; sinusoidal embeddings use ω_i = 10000^{−2i/hidden} \
         (sandwich_freqs_f64 of common.rs); RoPE rotates query/key halves with base 10000.",
    );
}
