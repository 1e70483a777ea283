//! sparse/failure-probability: P(C(t) fails) ≤ p_bound = min(1, n(n−1)·e^{−t²d/2})
//! (Hoeffding plus a union bound over the n(n−1)/2 pairs; sparse.md §3–§4,
//! \[derived\]: a check of the project's explicit reconstruction of the
//! Likhosherstov–Choromanski–Weller theorem).
//!
//! Each seed's status is exact: C(t) fails iff max_{l≠j} |⟨s_l, s_j⟩| > t·d,
//! integers by popcount against an exact rational. p_bound is an outward-rounded
//! interval. The comparison of the failure count F with R·p_bound + 3√(R·p_bound)
//! is statistical (observed), and the Clopper–Pearson interval of F/R is
//! reported beside p_bound.

use crate::claims::shape::Ctx;
use crate::claims::shape::Exact;
use crate::kernel::{Certainty, Checked, Interval};
use crate::outcome::{Observations, Presentation, Table};
use crate::sparse::sample::draw_signs;
use crate::spec::{ensure, FieldError};
use rayon::prelude::*;
use rug::Rational;
use serde::{Deserialize, Serialize};
use statrs::distribution::{Beta, ContinuousCDF};

/// Parameters of sparse/failure-probability as written in the spec.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// Sequence length n.
    pub n: usize,
    /// Dimension d.
    pub d: usize,
    /// Threshold t ∈ (0, 1) (exact literal).
    pub t: String,
    /// Number of seeds R.
    pub seeds: u64,
    /// Seeds are seed_base + i, i = 0..R.
    pub seed_base: u64,
    /// Confidence level of the Clopper–Pearson interval (e.g. 0.95).
    pub confidence: f64,
}

/// Parameters of sparse/failure-probability, resolved.
#[derive(Debug, Clone)]
pub struct Params {
    /// Sequence length n.
    pub n: usize,
    /// Dimension d.
    pub d: usize,
    /// Threshold t ∈ (0, 1).
    pub t: Exact,
    /// Number of seeds R.
    pub seeds: u64,
    /// Seeds are seed_base + i, i = 0..R.
    pub seed_base: u64,
    /// Confidence level of the Clopper–Pearson interval (e.g. 0.95).
    pub confidence: f64,
}

/// sparse/failure-probability.
pub struct Claim;

impl crate::claims::shape::Claim for Claim {
    type Raw = Raw;
    type Params = Params;
    fn resolve(r: Raw, _at: crate::claims::shape::Resolving) -> Result<Params, FieldError> {
        ensure(
            (2..=1 << 14).contains(&r.n),
            "n",
            "out of range: use 2 to 16384",
        )?;
        ensure(
            (1..=1 << 16).contains(&r.d),
            "d",
            "out of range: use 1 to 65536",
        )?;
        let t = Exact::parse("t", &r.t)?;
        ensure(*t > 0 && *t < 1, "t", "must lie in (0, 1)")?;
        ensure(
            (1..=100_000).contains(&r.seeds),
            "seeds",
            "out of range: use 1 to 100000",
        )?;
        ensure(
            r.seed_base.checked_add(r.seeds).is_some(),
            "seed_base",
            "seed_base + seeds overflows u64",
        )?;
        ensure(
            r.confidence > 0.0 && r.confidence < 1.0,
            "confidence",
            "must lie in (0, 1)",
        )?;
        Ok(Params {
            n: r.n,
            d: r.d,
            t,
            seeds: r.seeds,
            seed_base: r.seed_base,
            confidence: r.confidence,
        })
    }
    type Witness = Witness;
    /// Every seed's C(t), exact (one seed is an independent unit: `run --shard i/N`;
    /// seeds run in parallel).
    fn witness(p: &Params, ctx: &Ctx) -> Witness {
        let t = &p.t.value;
        let mut failures = 0u64;
        let mut worst = (0i64, p.seed_base);
        let mut hist: Vec<(i64, u64)> = Vec::new();
        let per_seed: Vec<(bool, i64)> = (0..p.seeds)
            .into_par_iter()
            .map(|i| {
                let seed = p.seed_base + i;
                ctx.unit(&format!("seed {seed}"), || seed_fails(p.n, p.d, t, seed))
            })
            .collect();
        for (i, &(fails, m)) in (0..p.seeds).zip(&per_seed) {
            let seed = p.seed_base + i;
            failures += u64::from(fails);
            if m > worst.0 {
                worst = (m, seed);
            }
            match hist.iter_mut().find(|h| h.0 == m) {
                Some(h) => h.1 += 1,
                None => hist.push((m, 1)),
            }
        }
        hist.sort();
        Witness {
            failures,
            worst,
            hist,
        }
    }
    /// The failure count against the union bound, and the Clopper–Pearson interval
    /// against p_bound (observed).
    fn observe(p: &Params, w: &Witness, _: Option<&Checked>, ctx: &Ctx, o: &mut Observations) {
        let prec = ctx.prec();
        let pb = union_bound(p.n, p.d, &p.t.value, prec);
        let failures = w.failures;
        let r = p.seeds;
        let rp = pb.mul_i64(r as i64);
        let allowed = &rp + &rp.sqrt().mul_i64(3);
        let fr = Interval::from_i64(prec, failures as i64);
        let within = fr.le(&allowed);
        o.observe(
            format!(
                "F ≤ R·p_bound + 3·√(R·p_bound) (R = {r} seeds, n = {}, d = {}, t = {})",
                p.n, p.d, p.t
            ),
            within == Certainty::True,
            format!(
                "F = {failures}; R·p_bound + 3√(R·p_bound) ∈ {}",
                allowed.fmt_outward(6)
            ),
        );
        let (lo, hi) = clopper_pearson(failures, r, p.confidence);
        o.observe(
            format!(
                "Clopper–Pearson {}% lower end of F/R ≤ p_bound",
                p.confidence * 100.0
            ),
            lo <= pb.hi_f64(),
            format!("[{lo:.4}, {hi:.4}] against p_bound ∈ {}", pb.fmt_outward(6)),
        );
    }
    /// The tables, figures and notes.
    fn present(p: &Params, w: &Witness, _: Option<&Checked>, ctx: &Ctx, o: &mut Presentation) {
        let prec = ctx.prec();
        let t = &p.t.value;
        let pb = union_bound(p.n, p.d, t, prec);
        let failures = w.failures;
        let r = p.seeds;
        let (lo, hi) = clopper_pearson(failures, r, p.confidence);
        let frac = failures as f64 / r as f64;
        let worst = w.worst;
        let hist = &w.hist;
        let td = Rational::from(t * p.d as u64);
        let mut table = Table::new(
            "Seeds' failure fraction against the union bound (each seed exact)",
            &[
                "n",
                "d",
                "t",
                "t·d",
                "R",
                "failures F",
                "F/R",
                "Clopper–Pearson interval",
                "p_bound",
            ],
        );
        table.row(vec![
            p.n.to_string(),
            p.d.to_string(),
            p.t.to_string(),
            td.to_string(),
            r.to_string(),
            failures.to_string(),
            format!("{frac:.4}"),
            format!("[{lo:.4}, {hi:.4}]"),
            pb.fmt_outward(6),
        ]);
        let mut dist = Table::new(
            "Distribution of max_{l≠j} |⟨s_l, s_j⟩| over the seeds",
            &["max |⟨s_l, s_j⟩|", "t* = max/d", "seeds", "C(t) holds"],
        );
        for (m, c) in hist {
            dist.row(vec![
                m.to_string(),
                format!("{:.6}", *m as f64 / p.d as f64),
                c.to_string(),
                if *m > td { "no".into() } else { "yes".into() },
            ]);
        }
        o.figure("failure fraction F/R", frac, format!("{failures}/{r}"));
        o.figure("union bound p_bound", pb.mid_f64(), pb.fmt_outward(6));
        o.figure(
            "Clopper–Pearson upper end of F/R",
            hi,
            format!("{hi:.4} ({}% two-sided)", p.confidence * 100.0),
        );
        o.tables.push(table);
        o.tables.push(dist);
        o.note(
            "Check of the project's explicit reconstruction of the Likhosherstov–Choromanski–Weller theorem \
             ([derived], sparse.md §3–§4): the constants are the reconstruction's, not the paper's.",
        );
        o.note(
            "δ is the fraction of seeds whose C(t) fails, not of targets: by the deterministic lemma a seed with C(t) \
             works for every admissible target at once. Hoeffding and the union bound are loose, so F/R is expected \
             far below p_bound.",
        );
        o.note(format!(
            "Largest max |⟨s_l, s_j⟩| over the seeds: {} (seed {}), against t·d = {td}.",
            worst.0, worst.1
        ));
    }
}

/// p_bound = min(1, n(n−1)·e^{−t²d/2}) as an outward-rounded interval.
pub fn union_bound(n: usize, d: usize, t: &Rational, prec: u32) -> Interval {
    let e = Rational::from(t * t) * Rational::from(d) / 2u32;
    let x = Interval::from_rational(prec, &e);
    let pairs = Interval::from_i64(prec, (n as i64) * (n as i64 - 1));
    (&pairs * &(-x).exp()).min(&Interval::one(prec))
}

/// Whether C(t) fails for S drawn from `seed`: max_{l≠j} |⟨s_l, s_j⟩| > t·d (exact),
/// with that maximum.
pub fn seed_fails(n: usize, d: usize, t: &Rational, seed: u64) -> (bool, i64) {
    let s = draw_signs(n, d, seed);
    let m = s.max_abs_offdiag().map_or(0, |x| x.0);
    (m > Rational::from(t * d as u64), m)
}

/// The two-sided Clopper–Pearson interval for f successes out of r at `confidence`.
pub fn clopper_pearson(f: u64, r: u64, confidence: f64) -> (f64, f64) {
    let a = (1.0 - confidence) / 2.0;
    let (ff, rr) = (f as f64, r as f64);
    let lo = if f == 0 {
        0.0
    } else {
        Beta::new(ff, rr - ff + 1.0).map_or(0.0, |b| b.inverse_cdf(a))
    };
    let hi = if f == r {
        1.0
    } else {
        Beta::new(ff + 1.0, rr - ff).map_or(1.0, |b| b.inverse_cdf(1.0 - a))
    };
    (lo, hi)
}

/// What the seeds show: the failure count, the worst seed and the histogram of
/// max_{l≠j} |⟨s_l, s_j⟩|.
#[derive(Debug, Clone)]
pub struct Witness {
    /// Seeds whose C(t) fails.
    pub failures: u64,
    /// The largest max |⟨s_l, s_j⟩| and its seed.
    pub worst: (i64, u64),
    /// (max |⟨s_l, s_j⟩|, seeds), by increasing value.
    pub hist: Vec<(i64, u64)>,
}
