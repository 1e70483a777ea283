//! What the observations and the presentation read, for a scan of any size: one View of
//! the claim's parameters, the scan's criteria and ε (none in the quick profile), the jobs'
//! results, the arms trained longer and the windows found; one training length's view of
//! the results (`At`); and the statistics both read (bootstrap intervals and shares, RF99
//! tracks over the checkpoints, seed spreads, the gradient mass beyond L_tr).
//!
//! The quick profile is a scan of one length and one seed without checkpoints: a part's
//! name carries " (L_tr = l)" only when there is more than one length, and a check or a
//! section whose data are absent (more than one seed, checkpoints, the explanation across
//! lengths, the arms trained longer, the certified windows) is left out.

use super::{Job, Params, Plan, Scan, ScanCriteria, Scheme};
use crate::claims::positional::common::SlopeRule;
use crate::claims::shape::Ctx;
use attncheck_lm::job::JobResult;
use rug::Rational;

/// What the observations and the presentation read: the claim's parameters, the scan and
/// its ε (`None` in the quick profile), the corpus, the jobs' results, the arms trained
/// longer and the windows found.
#[derive(Clone, Copy)]
pub(super) struct View<'a> {
    pub(super) p: &'a Params,
    /// The scan and its prediction ε, when the profile is one.
    pub(super) scan: Option<(&'a Scan, &'a Rational)>,
    pub(super) ctx: &'a Ctx<'a>,
    pub(super) c: &'a attncheck_lm::corpus::Corpus,
    pub(super) results: &'a [(Job, JobResult)],
    /// The arms trained longer, when the run has them.
    pub(super) longer: Option<&'a [(Job, JobResult)]>,
    pub(super) windows: &'a [(Job, Vec<super::window::HeadWindow>)],
}

impl<'a> View<'a> {
    /// The scan's own criteria, when there is a scan.
    pub(super) fn criteria(&self) -> Option<&'a ScanCriteria> {
        self.scan.map(|(s, _)| &s.criteria)
    }

    /// The checkpoints in percent of the steps (none without a scan).
    pub(super) fn checkpoints(&self) -> &'a [usize] {
        self.criteria().map_or(&[], |c| &c.checkpoints[..])
    }

    /// `50%, 75%, 100%`: the checkpoints and the end.
    pub(super) fn when(&self) -> Vec<String> {
        self.checkpoints()
            .iter()
            .map(|c| format!("{c}%"))
            .chain(std::iter::once("100%".to_string()))
            .collect()
    }

    /// More than one training length.
    pub(super) fn several_lengths(&self) -> bool {
        self.p.plans().len() > 1
    }

    /// More than one seed (a spread across seeds exists).
    pub(super) fn several_seeds(&self) -> bool {
        self.p.seeds.len() > 1
    }

    /// A part's name: the finding, with " (L_tr = l)" when there is more than one length.
    pub(super) fn part(&self, finding: &str, l: usize) -> String {
        if self.several_lengths() {
            format!("{finding} (L_tr = {l})")
        } else {
            finding.to_string()
        }
    }

    /// A plot's slug: `name`, with `-L<l>` when there is more than one length.
    pub(super) fn slug(&self, name: &str, l: usize) -> String {
        if self.several_lengths() {
            format!("{name}-L{l}")
        } else {
            name.to_string()
        }
    }

    /// "scan" for the scan, "run" for a profile without one.
    pub(super) fn noun(&self) -> &'static str {
        if self.scan.is_some() {
            "scan"
        } else {
            "run"
        }
    }

    /// "ALiBi uses no tokens beyond L_tr" is judged at every L_ex ≥ this multiple of
    /// L_tr: the scan's `alibi_rf_from`, or every L_ex without a scan (the quick
    /// profile's criterion, as it always was).
    pub(super) fn alibi_rf_from(&self) -> usize {
        self.criteria().map_or(1, |c| c.alibi_rf_from)
    }

    /// The schemes whose f64 bias the setup compares with the kernel's enclosure: ALiBi
    /// and Sandwich, and without a scan also ALiBi's code rule, which the quick profile
    /// has always checked (at H a power of two it is the paper rule's model, so its bias
    /// is the same numbers; the scan's setup, merged from its stored shards, never had it).
    pub(super) fn bias_schemes(&self) -> Vec<Scheme> {
        let mut v = vec![Scheme::Alibi(SlopeRule::Paper)];
        if self.scan.is_none() {
            v.push(Scheme::Alibi(SlopeRule::Code));
        }
        v.push(Scheme::Sandwich);
        v
    }

    /// The seeds a figure is the mean over: `mean over N seeds`, or `seed S` for one.
    pub(super) fn over_seeds(&self) -> String {
        if self.several_seeds() {
            format!("mean over {} seeds", self.p.seeds.len())
        } else {
            format!("seed {}", self.p.seeds[0])
        }
    }
}

/// The 2.5% and 97.5% quantiles of bootstrap RFs.
pub(super) fn ci(boot: &[usize]) -> (usize, usize) {
    let mut b = boot.to_vec();
    b.sort_unstable();
    if b.is_empty() {
        return (0, 0);
    }
    let q = |f: f64| b[((f * b.len() as f64).ceil() as usize).clamp(1, b.len()) - 1];
    (q(0.025), q(0.975))
}

/// The share of bootstrap RFs that satisfy `pred`.
pub(super) fn share(boot: &[usize], pred: impl Fn(usize) -> bool) -> f64 {
    boot.iter().filter(|&&x| pred(x)).count() as f64 / boot.len().max(1) as f64
}

/// The gradient mass at distances ≥ l of a normalised curve: 1 − C(l − 1).
pub(super) fn mass_beyond(curve: &[f64], l: usize) -> f64 {
    curve.iter().skip(l).sum()
}

pub(super) fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

/// One training length's view of the results.
pub(super) struct At<'a> {
    pub(super) plan: &'a Plan,
    pub(super) results: Vec<&'a (Job, JobResult)>,
}

impl<'a> At<'a> {
    /// The results of `plan`'s training length.
    pub(super) fn new(plan: &'a Plan, results: &'a [(Job, JobResult)]) -> At<'a> {
        At {
            plan,
            results: results
                .iter()
                .filter(|(j, _)| j.train_length == plan.train_length)
                .collect(),
        }
    }
    pub(super) fn l(&self) -> usize {
        self.plan.train_length
    }
    pub(super) fn idx(&self, m: usize) -> usize {
        self.plan
            .eval_multiples
            .iter()
            .position(|&x| x == m)
            .expect("m is one of the plan's eval_multiples (checked by validate_plan)")
    }
    pub(super) fn ppl(&self, r: &JobResult, m: usize) -> f64 {
        r.nll[self.idx(m)].exp()
    }
    pub(super) fn ratio(&self, r: &JobResult, m: usize) -> f64 {
        self.ppl(r, m) / self.ppl(r, 1)
    }
    pub(super) fn of(&self, pred: impl Fn(Scheme) -> bool) -> Vec<&'a (Job, JobResult)> {
        self.results
            .iter()
            .copied()
            .filter(|(j, _)| pred(j.scheme))
            .collect()
    }
    /// The evaluation-length indices at or above `from`·L_tr.
    pub(super) fn from(&self, from: usize) -> Vec<usize> {
        (0..self.plan.eval_multiples.len())
            .filter(|&k| self.plan.eval_multiples[k] >= from)
            .collect()
    }
}

/// The RF99 of one model at every checkpoint and at the end, per evaluation length:
/// `rf[c][k]` (c over the checkpoints, then the end), or `None` when a checkpoint is
/// missing.
pub(super) fn rf_track(r: &JobResult, checkpoints: usize) -> Option<Vec<Vec<usize>>> {
    if r.checkpoints.len() != checkpoints {
        return None;
    }
    let mut v: Vec<Vec<usize>> = r
        .checkpoints
        .iter()
        .map(|c| c.measured.rf.clone())
        .collect();
    v.push(r.rf.clone());
    Some(v)
}

/// The stability of one model's RF99 at evaluation length k: (its movement, the largest
/// minus the smallest RF99 over the checkpoints and the end; the spread of its scheme's
/// final RF99 across seeds at the same L_tr and k, largest minus smallest), and whether it
/// is stable: the movement is below the spread, or zero.
pub(super) fn rf_stability(track: &[Vec<usize>], k: usize, spread: usize) -> (usize, bool) {
    let xs: Vec<usize> = track.iter().map(|c| c[k]).collect();
    let moved = xs.iter().max().unwrap_or(&0) - xs.iter().min().unwrap_or(&0);
    (moved, moved < spread || moved == 0)
}

/// Per scheme at one training length: the spread of the final RF99 across seeds at each
/// evaluation length (largest minus smallest).
pub(super) fn seed_spread(at: &At, scheme: Scheme) -> Vec<usize> {
    let rows = at.of(|x| x == scheme);
    (0..at.plan.eval_multiples.len())
        .map(|k| {
            let v: Vec<usize> = rows.iter().map(|(_, r)| r.rf[k]).collect();
            v.iter().max().unwrap_or(&0) - v.iter().min().unwrap_or(&0)
        })
        .collect()
}

/// The results as they stood at checkpoint c (`None` when a result lacks it).
pub(super) fn as_of(results: &[(Job, JobResult)], c: usize) -> Option<Vec<(Job, JobResult)>> {
    results
        .iter()
        .map(|(j, r)| r.as_of(c).map(|x| (*j, x)))
        .collect()
}

/// One view per training length, in the plans' order.
pub(super) fn ats<'a>(plans: &'a [Plan], results: &'a [(Job, JobResult)]) -> Vec<At<'a>> {
    plans.iter().map(|plan| At::new(plan, results)).collect()
}

pub(super) fn alibi(sc: Scheme) -> bool {
    matches!(sc, Scheme::Alibi(_))
}

pub(super) fn is_window(sc: Scheme) -> bool {
    matches!(sc, Scheme::Window(_))
}

/// Per training length, ALiBi's normalised-gradient mass beyond L_tr at the trend L_ex
/// (mean over seeds).
pub(super) fn gradient_mass_beyond(ats: &[At], sc: &ScanCriteria) -> Vec<(usize, f64)> {
    ats.iter()
        .map(|at| {
            let k = at.idx(sc.trend_multiple);
            let v: Vec<f64> = at
                .of(alibi)
                .iter()
                .map(|(_, r)| mass_beyond(&r.curves[k], at.l()))
                .collect();
            (at.l(), mean(&v))
        })
        .collect()
}
