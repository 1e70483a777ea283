//! The plots, per training length: RF99 and perplexity against L_ex (seed mean), the
//! validation loss during training (the scan's), and the cumulative normalised gradient at
//! the largest L_ex. A slug carries `-L<l>` only when there are several lengths.

use super::view::{ats, mean, At, View};
use super::Scheme;
use crate::outcome::{round_sig, Plot, Presentation, Series, Style};
use attncheck_lm::eval::cumulative;

/// The plots.
pub(super) fn plots(v: &View, o: &mut Presentation) {
    let View { p, results, .. } = *v;
    let plans = p.plans();
    let ats = ats(&plans, results);

    // ---- plots ----
    let coarse = |x: f64| round_sig(x, 4);
    let non_window = |x: Scheme| !matches!(x, Scheme::Window(_));
    let schemes_at = |at: &At| -> Vec<Scheme> {
        let mut out: Vec<Scheme> = Vec::new();
        for (j, _) in &at.results {
            if !out.contains(&j.scheme) {
                out.push(j.scheme);
            }
        }
        out
    };
    for at in &ats {
        let l = at.l();
        let lmax = l * at.plan.eval_multiples.last().copied().unwrap_or(1);
        // RF99 against L_ex, seed mean per scheme (every window included: their RF is their reach)
        let mut series: Vec<Series> = schemes_at(at)
            .into_iter()
            .map(|sch| {
                let rows = at.of(|x| x == sch);
                Series {
                    name: sch.label(),
                    style: if non_window(sch) {
                        Style::Line
                    } else {
                        Style::Dashed
                    },
                    points: at
                        .plan
                        .eval_multiples
                        .iter()
                        .enumerate()
                        .map(|(k, &m)| {
                            let x: Vec<f64> = rows.iter().map(|(_, r)| r.rf[k] as f64).collect();
                            ((m * l) as f64, coarse(mean(&x).max(1.0)))
                        })
                        .collect(),
                }
            })
            .collect();
        series.push(Series {
            name: format!("L_tr = {l}"),
            style: Style::Points,
            points: vec![(l as f64, l as f64), (lmax as f64, l as f64)],
        });
        o.plots.push(Plot {
            slug: v.slug("rf99", l),
            title: format!(
                "RF99 against L_ex at L_tr = {l} ({}; the markers are the level L_tr)",
                v.over_seeds()
            ),
            x_label: "L_ex".into(),
            y_label: "RF99 (tokens)".into(),
            x_log: true,
            y_log: true,
            series,
            heatmap: None,
            paths: false,
        });
        o.plots.push(Plot {
            slug: v.slug("perplexity", l),
            title: format!(
                "Validation perplexity against L_ex at L_tr = {l} ({})",
                v.over_seeds()
            ),
            x_label: "L_ex".into(),
            y_label: "perplexity (bytes)".into(),
            x_log: true,
            y_log: true,
            series: schemes_at(at)
                .into_iter()
                .map(|sch| {
                    let rows = at.of(|x| x == sch);
                    Series {
                        name: sch.label(),
                        style: if non_window(sch) {
                            Style::Line
                        } else {
                            Style::Dashed
                        },
                        points: at
                            .plan
                            .eval_multiples
                            .iter()
                            .map(|&m| {
                                let x: Vec<f64> = rows.iter().map(|(_, r)| at.ppl(r, m)).collect();
                                ((m * l) as f64, coarse(mean(&x)))
                            })
                            .collect(),
                    }
                })
                .collect(),
            heatmap: None,
            paths: false,
        });
        // the validation loss during training: the scan's (the quick profile has none)
        if v.scan.is_some() {
            o.plots.push(Plot {
                slug: v.slug("validation-loss", l),
                title: format!(
                    "Validation loss during training at L_tr = {l} (seed {})",
                    p.seeds[0]
                ),
                x_label: "step".into(),
                y_label: "validation loss (nats/byte)".into(),
                x_log: false,
                y_log: false,
                series: at
                    .results
                    .iter()
                    .filter(|(j, _)| j.seed == p.seeds[0])
                    .map(|(j, r)| Series {
                        name: j.scheme.label(),
                        style: if non_window(j.scheme) {
                            Style::Line
                        } else {
                            Style::Dashed
                        },
                        points: r
                            .val_curve
                            .iter()
                            .map(|&(st, x)| (st as f64, coarse(x)))
                            .collect(),
                    })
                    .collect(),
                heatmap: None,
                paths: false,
            });
        }
        let k = at.plan.eval_multiples.len() - 1;
        let mut series: Vec<Series> = at
            .results
            .iter()
            .filter(|(j, _)| j.seed == p.seeds[0] && non_window(j.scheme))
            .map(|(j, r)| {
                let cum = cumulative(&r.curves[k]);
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
            slug: v.slug("cumulative-gradient", l),
            title: format!(
                "Cumulative normalised gradient at L_ex = {lmax}, L_tr = {l} (seed {})",
                p.seeds[0]
            ),
            x_label: "distance k + 1 from the last token".into(),
            y_label: "C(k)".into(),
            x_log: true,
            y_log: false,
            series,
            heatmap: None,
            paths: false,
        });
    }
}
