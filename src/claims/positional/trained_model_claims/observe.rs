//! The observed checks, in report order: the setup (the biases are the certified
//! formulas, the sinusoidal control, and, where the scan has checkpoints, the stability of
//! what is concluded and what the arms trained longer change), then the claim's parts
//! (`parts.rs`).

use super::parts::{part_outcomes, parts};
use super::view::{as_of, ats, rf_stability, rf_track, seed_spread, At, View};
use super::{bias_enclosure, bias_fn, sig, Job, Params, Scheme};
use crate::claims::positional::common::{slope_exponents, SlopeRule};
use crate::outcome::Observations;
use attncheck_lm::job::JobResult;

/// The observed checks: the setup, one part per finding (and training length), and the
/// paper's explanation across training lengths, in report order.
pub(super) fn observe(v: &View, o: &mut Observations) {
    let p = v.p;
    let plans = p.plans();
    let cr = &p.criteria;
    let prec = v.ctx.prec();
    let ats = ats(&plans, v.results);

    // ---- setup: biases, controls, and stability where there are checkpoints ----
    o.set_part(Some(if v.checkpoints().is_empty() {
        "setup: biases and controls"
    } else {
        "setup: biases, controls and stability"
    }));
    let max_len = plans
        .iter()
        .map(|x| x.train_length * x.eval_multiples.last().copied().unwrap_or(1))
        .max()
        .unwrap_or(1);
    observe_biases(p, prec, &bias_distances(max_len), &v.bias_schemes(), o);
    for at in &ats {
        let l = at.l();
        for (j, r) in at.of(|x| x == Scheme::Sinusoidal) {
            let q = at.ratio(r, cr.sinusoidal_multiple);
            o.observe(
                format!(
                    "control, L_tr = {l}, sinusoidal seed {}: ppl({}·L_tr) ≥ {}·ppl(L_tr) (extrapolation is not free here)",
                    j.seed, cr.sinusoidal_multiple, cr.sinusoidal_ratio
                ),
                q >= cr.sinusoidal_ratio,
                format!("ratio {}", sig(q)),
            );
        }
    }
    stability(v, &ats, o);
    longer_stability(v, o);
    parts(v, &ats, o);
}

/// The setup's first checks: ALiBi's two slope rules agree at H (one model serves both),
/// and each scheme's f64 bias lies within the tolerance of the kernel's enclosure at every
/// head and distance of `rs`.
pub(super) fn observe_biases(
    p: &Params,
    prec: u32,
    rs: &[i64],
    schemes: &[Scheme],
    o: &mut Observations,
) {
    let cr = &p.criteria;
    let rules_equal =
        slope_exponents(p.heads, SlopeRule::Paper) == slope_exponents(p.heads, SlopeRule::Code);
    o.observe(
        format!(
            "ALiBi's paper and code slope rules give the same exponents at H = {} (one model serves both)",
            p.heads
        ),
        rules_equal,
        if rules_equal {
            "equal exact exponent lists: the two rules' models are the same model".to_string()
        } else {
            "the rules differ (both are trained, and the check fails: the spec asks for one model)"
                .to_string()
        },
    );
    for &scheme in schemes {
        let f = bias_fn(scheme, p).expect("bias scheme");
        let mut worst = 0.0f64;
        for h in 0..p.heads {
            for &r in rs {
                let x = f.at(h, r as usize);
                let e = bias_enclosure(scheme, p, h, r, prec).expect("bias scheme");
                let d = if e.contains_float(&rug::Float::with_val(prec, x)) {
                    0.0
                } else {
                    (x - e.lo_f64()).abs().min((x - e.hi_f64()).abs())
                };
                worst = worst.max(d);
            }
        }
        o.observe(
            format!(
                "{}: the model's f64 bias b(h, r) lies within {} of the kernel's {prec}-bit enclosure (every head, r ∈ {{{}}})",
                scheme.label(),
                cr.bias_tolerance,
                rs.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            ),
            worst <= cr.bias_tolerance,
            format!("largest distance {worst:.1e}"),
        );
    }
}

/// The distances r at which the biases are compared: a fixed ladder below the longest
/// evaluation length `max_len`, and max_len − 1.
pub(super) fn bias_distances(max_len: usize) -> Vec<i64> {
    [0, 1, 2, 5, 10, 31, 100, 511, 2047, 8191]
        .into_iter()
        .filter(|&r| (r as usize) + 1 < max_len)
        .chain(std::iter::once(max_len as i64 - 1))
        .collect()
}

/// `results` with every arm trained longer in place of the same (L_tr, scheme, seed) of
/// the scan, as that run stood at its checkpoint `c` (`None`: at its end); `None` when a
/// longer run lacks the checkpoint.
fn with_longer(
    results: &[(Job, JobResult)],
    longer: &[(Job, JobResult)],
    c: Option<usize>,
) -> Option<Vec<(Job, JobResult)>> {
    results
        .iter()
        .map(|(j, r)| {
            let same = |x: &Job| {
                x.train_length == j.train_length && x.scheme == j.scheme && x.seed == j.seed
            };
            match longer.iter().find(|(x, _)| same(x)) {
                None => Some((*j, r.clone())),
                Some((_, lr)) => match c {
                    None => Some((*j, lr.clone())),
                    Some(c) => lr.as_of(c).map(|x| (*j, x)),
                },
            }
        })
        .collect()
}

/// The arms trained longer (`sweeps.longer`, the remedy the spec fixed for a conclusion
/// that moves): with them in place of their scan runs, does every part keep its outcome
/// at the checkpoints and the end of the longer training, and does their RF99 move less
/// than their seeds' spread (with more than one seed)? Both are setup checks; they report
/// what moved and cannot make the scan's own criteria hold.
fn longer_stability(v: &View, o: &mut Observations) {
    let View { p, results, .. } = *v;
    let Some(lg) = v.scan.and_then(|(s, _)| s.sweeps.longer.as_ref()) else {
        return;
    };
    let cps = v.checkpoints();
    let when = v.when().join(", ");
    // the spread across seeds exists only with more than one
    let several = v.several_seeds();
    let arms = lg
        .arms
        .iter()
        .map(|a| {
            format!(
                "{} at L_tr = {} ({} steps)",
                a.scheme, a.train_length, a.steps
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let claim_a = format!(
        "the arms trained longer ({arms}; every seed): with them in place of their scan runs, every part of the claim has the same outcome at {when} of their training"
    );
    let claim_b = format!(
        "the arms trained longer: at every L_ex, each model's RF99 at {when} of its training moves by less than the spread of the arm's final RF99 across the {} seeds, or not at all",
        p.seeds.len()
    );
    let Some(longer) = v.longer else {
        let why = "not run: the sweep's shards are not merged (bench/sweeps/trained-scan-longer/)";
        o.observe(claim_a, false, why);
        if several {
            o.observe(claim_b, false, why);
        }
        return;
    };
    let word = |b: bool| if b { "holds" } else { "fails" };
    // the parts at the scan's checkpoints and end, then at the longer runs'
    let mut seqs: Vec<Option<Vec<(String, bool)>>> = (0..cps.len())
        .map(|c| as_of(results, c).map(|r| part_outcomes(v, &r)))
        .collect();
    seqs.push(Some(part_outcomes(v, results)));
    let base = seqs.len();
    for c in (0..cps.len()).map(Some).chain(std::iter::once(None)) {
        seqs.push(with_longer(results, longer, c).map(|r| part_outcomes(v, &r)));
    }
    let complete = seqs.iter().all(Option::is_some);
    let mut moved = Vec::new();
    let mut unmoved = 0;
    if complete {
        let seqs: Vec<Vec<(String, bool)>> = seqs.into_iter().flatten().collect();
        for (name, _) in &seqs[base] {
            let at = |v: &Vec<(String, bool)>| v.iter().find(|(n, _)| n == name).map(|x| x.1);
            let all: Vec<Option<bool>> = seqs.iter().map(at).collect();
            let tail = &all[base..];
            if tail.iter().any(|x| *x != tail[0]) {
                let show = |xs: &[Option<bool>]| {
                    xs.iter()
                        .map(|x| x.map_or("—", word))
                        .collect::<Vec<_>>()
                        .join(" → ")
                };
                moved.push(format!(
                    "{name}: scan {}; trained longer {}",
                    show(&all[..base]),
                    show(tail)
                ));
            } else {
                unmoved += 1;
            }
        }
    }
    o.observe(
        claim_a,
        complete && moved.is_empty(),
        if !complete {
            "a checkpoint's measurements are missing".to_string()
        } else if moved.is_empty() {
            format!("all {unmoved} parts keep their outcome over the longer training")
        } else {
            format!(
                "{unmoved} parts keep their outcome; moved: {}",
                moved.join("; ")
            )
        },
    );
    if !several {
        return;
    }
    let mut tally = RfTally::default();
    let plans = p.plans();
    for a in &lg.arms {
        let rows: Vec<&(Job, JobResult)> = longer
            .iter()
            .filter(|(j, _)| j.train_length == a.train_length && j.scheme.label() == a.scheme)
            .collect();
        let Some(plan) = plans.iter().find(|x| x.train_length == a.train_length) else {
            continue;
        };
        let l = plan.train_length;
        for (k, &m) in plan.eval_multiples.iter().enumerate() {
            let fin: Vec<usize> = rows
                .iter()
                .filter_map(|(_, r)| r.rf.get(k).copied())
                .collect();
            let spread = fin.iter().max().unwrap_or(&0) - fin.iter().min().unwrap_or(&0);
            for (j, r) in &rows {
                let Some(track) = rf_track(r, cps.len()) else {
                    if k == 0 {
                        tally.missing.push(j.long_name());
                    }
                    continue;
                };
                tally.pair(&j.long_name(), m * l, &track, k, spread);
            }
        }
    }
    o.observe(claim_b, tally.holds(), tally.evidence());
}

/// The RF99 stability of (model, L_ex) pairs: how many, how many stable, the models
/// without checkpoint measurements, and how each unstable pair moved.
#[derive(Default)]
struct RfTally {
    n: usize,
    stable: usize,
    missing: Vec<String>,
    moved: Vec<String>,
}

impl RfTally {
    /// One model's pair at evaluation length k (`l_ex`), against `spread`.
    fn pair(&mut self, name: &str, l_ex: usize, track: &[Vec<usize>], k: usize, spread: usize) {
        self.n += 1;
        let (mv, ok) = rf_stability(track, k, spread);
        if ok {
            self.stable += 1;
        } else {
            self.moved.push(format!(
                "{name} at L_ex {l_ex}: RF99 {} (moved {mv}, seed spread {spread})",
                track
                    .iter()
                    .map(|c| c[k].to_string())
                    .collect::<Vec<_>>()
                    .join(" → ")
            ));
        }
    }

    /// Every pair stable, and every model measured at the checkpoints.
    fn holds(&self) -> bool {
        self.missing.is_empty() && self.moved.is_empty()
    }

    /// `S of N (model, L_ex) pairs stable`, then what is missing and what moved.
    fn evidence(&self) -> String {
        let mut ev = format!("{} of {} (model, L_ex) pairs stable", self.stable, self.n);
        if !self.missing.is_empty() {
            ev.push_str(&format!(
                "; no checkpoint measurements: {}",
                self.missing.join(", ")
            ));
        }
        if !self.moved.is_empty() {
            ev.push_str(&format!("; moved: {}", self.moved.join("; ")));
        }
        ev
    }
}

/// The setup's stability checks (the scan's criterion in place of loss flatness, fixed
/// before the scan ran), where there are checkpoints: per L_tr, every model's RF99 moves
/// between the checkpoints and the end by less than the spread of the final RF99 across
/// seeds (or not at all), where there is more than one seed; and every part has the same
/// outcome at every checkpoint as at the end.
fn stability(v: &View, ats: &[At], o: &mut Observations) {
    let View { p, results, .. } = *v;
    let cps = v.checkpoints();
    if cps.is_empty() {
        return;
    }
    let when = v.when().join(", ");
    // RF99 against the spread across seeds: only where there are several seeds
    let spread_lengths: &[At] = if v.several_seeds() { ats } else { &[] };
    for at in spread_lengths {
        let l = at.l();
        let mut tally = RfTally::default();
        let mut schemes: Vec<Scheme> = Vec::new();
        for (j, _) in &at.results {
            if !schemes.contains(&j.scheme) {
                schemes.push(j.scheme);
            }
        }
        for sch in schemes {
            let spread = seed_spread(at, sch);
            for (j, r) in at.of(|x| x == sch) {
                let Some(track) = rf_track(r, cps.len()) else {
                    tally.missing.push(j.name());
                    continue;
                };
                for (k, &m) in at.plan.eval_multiples.iter().enumerate() {
                    tally.pair(&j.name(), m * l, &track, k, spread[k]);
                }
            }
        }
        o.observe(
            format!(
                "training is long enough at L_tr = {l}: at every L_ex, each model's RF99 at {when} of training moves by less than the spread of its scheme's final RF99 across the {} seeds (largest minus smallest), or not at all",
                p.seeds.len()
            ),
            tally.holds(),
            tally.evidence(),
        );
    }
    let fin = part_outcomes(v, results);
    let mut per_cp = Vec::new();
    for c in 0..cps.len() {
        per_cp.push(as_of(results, c).map(|r| part_outcomes(v, &r)));
    }
    let word = |b: bool| if b { "holds" } else { "fails" };
    let mut diff = Vec::new();
    let mut complete = true;
    for (name, ok) in &fin {
        let mut seq = Vec::new();
        for outcomes in &per_cp {
            match outcomes
                .as_ref()
                .and_then(|x| x.iter().find(|(n, _)| n == name))
            {
                Some((_, x)) => seq.push(*x),
                None => complete = false,
            }
        }
        if seq.iter().any(|x| x != ok) {
            let mut all: Vec<&str> = seq.iter().map(|&x| word(x)).collect();
            all.push(word(*ok));
            diff.push(format!("{name}: {}", all.join(" → ")));
        }
    }
    o.observe(
        format!(
            "the conclusion is stable: every part of the claim has the same outcome at {when} of training"
        ),
        complete && diff.is_empty(),
        if !complete {
            "a checkpoint's measurements are missing".to_string()
        } else if diff.is_empty() {
            format!(
                "all {} parts: {}",
                fin.len(),
                fin.iter()
                    .map(|(n, ok)| format!("{n}: {}", word(*ok)))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        } else {
            format!("moved: {}", diff.join("; "))
        },
    );
}
