//! The parts of the claim, one per finding and training length (" (L_tr = l)" in the
//! name only when there are several), and the paper's explanation across training lengths
//! (only then): judged on the final results or on a checkpoint's, each by a criterion of
//! the spec (`[params.criteria]`, and the scan's `[profiles.full.scan.criteria]`), written
//! before any of its runs.

use super::view::{alibi, ats, ci, gradient_mass_beyond, is_window, share, At, View};
use super::{sig, Job, Params, Scheme};
use crate::outcome::Observations;
use attncheck_lm::job::JobResult;

/// The checks of one training length.
impl At<'_> {
    /// "ppl(m·L_tr) ≤ ratio·ppl(L_tr)", shared by the ALiBi and Sandwich parts.
    pub(super) fn observe_extrapolates(
        &self,
        cr: &super::Criteria,
        o: &mut Observations,
        j: &Job,
        r: &JobResult,
    ) {
        let q = self.ratio(r, cr.extrapolation_multiple);
        o.observe(
            format!(
                "{} seed {}: ppl({}·L_tr) ≤ {}·ppl(L_tr)",
                j.scheme.label(),
                j.seed,
                cr.extrapolation_multiple,
                cr.extrapolation_ratio
            ),
            q <= cr.extrapolation_ratio,
            format!(
                "ppl {} → {}, ratio {}",
                sig(self.ppl(r, 1)),
                sig(self.ppl(r, cr.extrapolation_multiple)),
                sig(q)
            ),
        );
    }

    /// Windowed attention w: it extrapolates iff layers·(w − 1) ≤ L_tr, and its input
    /// gradient vanishes exactly beyond layers·(w − 1).
    pub(super) fn observe_window_iff(
        &self,
        p: &Params,
        o: &mut Observations,
        j: &Job,
        r: &JobResult,
    ) {
        let (cr, l) = (&p.criteria, self.l());
        let Scheme::Window(w) = j.scheme else {
            return;
        };
        let reach = p.layers * (w - 1);
        let aligned = reach <= l;
        let q = self.ratio(r, cr.extrapolation_multiple);
        let extrap = q <= cr.extrapolation_ratio;
        o.observe(
            format!(
                "w = {w} seed {}: layers·(w − 1) = {reach} {} L_tr, so it should {}extrapolate (ppl({}·L_tr) {} {}·ppl(L_tr))",
                j.seed,
                if aligned { "≤" } else { ">" },
                if aligned { "" } else { "not " },
                cr.extrapolation_multiple,
                if aligned { "≤" } else { ">" },
                cr.extrapolation_ratio
            ),
            extrap == aligned,
            format!("ratio {}", sig(q)),
        );
        let k = self.plan.eval_multiples.len() - 1;
        let want = reach.min(l * self.plan.eval_multiples[k] - 1);
        o.observe(
            format!("w = {w} seed {}: the input gradient vanishes exactly beyond layers·(w − 1) = {reach} (the RF tool sees the window)", j.seed),
            r.support[k] == want,
            format!(
                "largest distance with a nonzero gradient at L_ex = {}: {}",
                l * self.plan.eval_multiples[k],
                r.support[k]
            ),
        );
    }

    /// Attention truncated to the last W tokens at L_ex = truncation_length·L_tr changes
    /// perplexity by less than the tolerance (ALiBi and Sandwich).
    pub(super) fn observe_truncation(
        &self,
        cr: &super::Criteria,
        o: &mut Observations,
        j: &Job,
        r: &JobResult,
    ) {
        let l = self.l();
        let wm = if j.scheme == Scheme::Sandwich {
            cr.sandwich_window
        } else {
            cr.alibi_window
        };
        let full = self.ppl(r, cr.truncation_length);
        let Some(&(_, t)) = r.truncated.iter().find(|(w, _)| *w == wm) else {
            return;
        };
        let ch = (t.exp() / full - 1.0).abs();
        o.observe(
            format!(
                "{} seed {}, L_ex = {}: attention truncated to the last W = {} tokens changes ppl by < {}%",
                j.scheme.label(),
                j.seed,
                cr.truncation_length * l,
                wm * l,
                cr.truncation_tolerance * 100.0
            ),
            ch < cr.truncation_tolerance,
            format!("ppl {} → {} ({}%)", sig(full), sig(t.exp()), sig(100.0 * ch)),
        );
    }
}

/// Every part's outcome (all of its checks hold) from the part checks of `results`.
pub(super) fn part_outcomes(v: &View, results: &[(Job, JobResult)]) -> Vec<(String, bool)> {
    let mut scratch = crate::outcome::Outcome::new();
    let mut o = Observations::new(&mut scratch);
    let plans = v.p.plans();
    parts(v, &ats(&plans, results), &mut o);
    let mut out: Vec<(String, bool)> = Vec::new();
    for c in o.checks() {
        let name = c.part.clone().unwrap_or_default();
        let ok = c.result == crate::kernel::Certainty::True;
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => *v &= ok,
            None => out.push((name, ok)),
        }
    }
    out
}

/// The parts of the claim (one per finding and training length, and the explanation
/// across training lengths), judged on `ats`' results: the final ones, or a checkpoint's.
pub(super) fn parts(v: &View, ats: &[At], o: &mut Observations) {
    let p = v.p;
    let cr = &p.criteria;
    // ---- per training length ----
    for at in ats {
        let l = at.l();
        let extrapolates =
            |o: &mut Observations, j: &Job, r: &JobResult| at.observe_extrapolates(cr, o, j, r);
        // RF99 below (`beyond` false) or above (`beyond` true) L_tr at every L_ex of `ks`
        let rf_side = |o: &mut Observations, j: &Job, r: &JobResult, ks: &[usize], beyond: bool| {
            let mut ok = true;
            let mut ev = Vec::new();
            for &k in ks {
                let sh = share(&r.rf_boot[k], |x| if beyond { x > l } else { x < l });
                ok &= sh >= cr.bootstrap_share;
                let (a, b) = ci(&r.rf_boot[k]);
                ev.push(format!(
                    "L_ex {}: {} [{a}, {b}] ({})",
                    at.plan.eval_multiples[k] * l,
                    r.rf[k],
                    sig(sh)
                ));
            }
            o.observe(
                format!(
                    "{} seed {}: RF99 {} L_tr = {l} at every L_ex ≥ {}·L_tr, in ≥ {} of bootstrap resamples",
                    j.scheme.label(),
                    j.seed,
                    if beyond { ">" } else { "<" },
                    at.plan.eval_multiples[ks[0]],
                    cr.bootstrap_share
                ),
                ok,
                format!("RF99 [95% interval] (share): {}", ev.join("; ")),
            );
        };

        o.set_part(Some(&v.part("ALiBi extrapolates", l)));
        for (j, r) in at.of(alibi) {
            extrapolates(o, j, r);
        }

        o.set_part(Some(&v.part("ALiBi uses no tokens beyond L_tr", l)));
        let ks = at.from(v.alibi_rf_from());
        for (j, r) in at.of(alibi) {
            rf_side(o, j, r, &ks, false);
        }

        o.set_part(Some(&v.part(
            "windowed attention extrapolates iff layers·(w − 1) ≤ L_tr",
            l,
        )));
        for (j, r) in at.of(is_window) {
            at.observe_window_iff(p, o, j, r);
        }

        o.set_part(Some(
            &v.part("Sandwich uses tokens beyond L_tr and extrapolates", l),
        ));
        let ks = at.from(cr.sandwich_rf_from);
        for (j, r) in at.of(|x| x == Scheme::Sandwich) {
            rf_side(o, j, r, &ks, true);
            extrapolates(o, j, r);
        }

        o.set_part(Some(&v.part("efficient windowed inference", l)));
        for (j, r) in at.of(|x| matches!(x, Scheme::Alibi(_) | Scheme::Sandwich)) {
            at.observe_truncation(cr, o, j, r);
        }
    }

    // ---- the paper's explanation, across training lengths (when there are several) ----
    let sc = match v.criteria() {
        Some(sc) if v.several_lengths() => sc,
        _ => {
            o.set_part(None);
            return;
        }
    };
    o.set_part(Some(
        "ALiBi's window against L_tr: the paper's explanation (flattest head e^(−L_tr/256))",
    ));
    let holds: Vec<(usize, bool)> = ats
        .iter()
        .map(|at| {
            let l = at.l();
            let ks = at.from(sc.alibi_rf_from);
            let all = at.of(alibi).iter().all(|(_, r)| {
                ks.iter()
                    .all(|&k| share(&r.rf_boot[k], |x| x < l) >= cr.bootstrap_share)
            });
            (l, all)
        })
        .collect();
    let upward = holds.windows(2).all(|w| !w[0].1 || w[1].1);
    o.observe(
        format!(
            "the training lengths at which ALiBi's RF99 < L_tr holds (every seed, every L_ex ≥ {}·L_tr) are upward-closed: once it holds, it holds at every larger L_tr",
            sc.alibi_rf_from
        ),
        upward,
        holds
            .iter()
            .map(|(l, h)| format!("L_tr = {l}: {}", if *h { "holds" } else { "does not hold" }))
            .collect::<Vec<_>>()
            .join("; "),
    );
    let beyond = gradient_mass_beyond(ats, sc);
    let falls = beyond.windows(2).all(|w| w[1].1 < w[0].1);
    o.observe(
        format!(
            "ALiBi's normalised-gradient mass beyond L_tr at L_ex = {}·L_tr (mean over seeds) falls strictly as L_tr grows",
            sc.trend_multiple
        ),
        falls,
        beyond
            .iter()
            .map(|(l, v)| format!("L_tr = {l}: {}", sig(*v)))
            .collect::<Vec<_>>()
            .join("; "),
    );
    o.set_part(None);
}
