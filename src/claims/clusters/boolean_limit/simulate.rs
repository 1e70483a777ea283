//! The runs of clusters/boolean-limit: the y-layer (Q = K = V = 1, step h) with its
//! per-step invariants, the (S) symmetry record, and the x-layer cross-check of the
//! rescaling.

use super::*;
use crate::kernel::layer_map::{rest_mass, MirrorRun};

/// The (S) per-step record: the middle token and its row.
#[derive(Default)]
pub(super) struct Middle {
    /// The first consistency reading that certifies a violation (an enclosure of y_m
    /// disjoint from 0, of P_mj from 1/n, or of y from its mirror image).
    pub(super) violation: Option<Reading>,
    /// The last reading (when none is violated).
    pub(super) last: Option<Reading>,
    /// The largest width of those enclosures.
    pub(super) width: f64,
}

impl Middle {
    pub(super) fn note(&mut self, r: Reading) {
        if r.violated() && self.violation.is_none() {
            self.violation = Some(r);
        }
        self.last = Some(r);
    }
    pub(super) fn reading(&self) -> Option<Reading> {
        self.violation.or(self.last)
    }
}

/// One run of the y-layer (Q = K = V = 1, step h) with its certified invariants.
pub(super) struct Sim {
    pub(super) last: State,
    /// The name of each per-step invariant (their tallies are the caller's).
    pub(super) invariants: Vec<String>,
    /// States on which the direct gap difference alone proved F3.
    pub(super) naive_proven: usize,
    /// Token-states skipped by the row bound (enclosure contains 0), and checked.
    pub(super) skipped: usize,
    pub(super) checked: usize,
    /// Midpoints of every state (for the plots), when kept.
    pub(super) traj: Vec<Vec<f64>>,
    /// (S) only.
    pub(super) middle: Option<Middle>,
}

/// Runs the y-layer from exact sorted tokens `y0`, recording its per-step invariants
/// into `tallies` (one per invariant, created when empty; pooled over the runs of a
/// system).
pub(super) fn simulate(
    y0: &[Rational],
    h: &Rational,
    steps: usize,
    prec: u32,
    (sym, keep): (bool, bool),
    tallies: &mut Vec<StepTally>,
) -> Sim {
    let n = y0.len();
    let one = Mat::identity(1);
    let unit = System::new(one.clone(), one.clone(), one);
    let mut map = DiscreteMap::new(&unit, n, h, Form::Layer, prec)
        .expect("the layer form needs no inverse")
        .with_stochastic_rows();
    let y0m = Mat::from_rows(y0.iter().map(|y| vec![y.clone()]).collect());
    let g = (0..n - 1)
        .map(|i| Rational::from(&y0[i + 1] - &y0[i]))
        .min()
        .expect("n ≥ 2");
    let g = Interval::from_rational(prec, &g);
    let hi = Interval::from_rational(prec, h);
    let nm1 = Interval::from_i64(prec, n as i64 - 1);
    let naive = Cell::new(0usize);
    let skipped = Cell::new(0usize);
    let checked = Cell::new(0usize);
    let mut invs = vec![
        Invariant::new(
            "order kept and gaps nondecreasing (F3): y_{i+1}^{k+1} − y_i^{k+1} ≥ y_{i+1}^k − y_i^k",
            |v: &StepView| {
                let (b, a) = (&v.before.u, &v.after.u);
                let mut big = Float::with_val(prec, 0);
                for y in b {
                    let m = y.mag();
                    if m > big {
                        big = m;
                    }
                }
                let big = Interval::from_endpoints(big.clone(), big);
                let var = &big * &big;
                let spread = Interval::from_endpoints(Float::with_val(prec, 0), var.hi().clone());
                let mut all_naive = true;
                let mut m: Option<Interval> = None;
                for i in 0..n - 1 {
                    let gb = &b[i + 1] - &b[i];
                    let direct = &(&a[i + 1] - &a[i]) - &gb;
                    all_naive &= !direct.lo().is_sign_negative() || direct.lo().is_zero();
                    let mv = &(&hi * &gb) * &spread;
                    let mi = direct.intersect(&mv).unwrap_or(direct);
                    m = Some(match m {
                        None => mi,
                        Some(x) => x.min(&mi),
                    });
                }
                if all_naive {
                    naive.set(naive.get() + 1);
                }
                m.expect("n ≥ 2")
            },
        ),
        Invariant::new(
            "pointwise row bound max_j |P_ij − δ_tj| ≤ (n − 1)e^{−g|y_i|} (t = n for y_i > 0, t = 1 for y_i < 0)",
            |v: &StepView| {
                let states: Vec<&State> = if v.before.k == 0 {
                    vec![v.before, v.after]
                } else {
                    vec![v.after]
                };
                let mut m: Option<Interval> = None;
                for s in states {
                    for i in 0..n {
                        let y = &s.u[i];
                        if y.contains_zero() {
                            skipped.set(skipped.get() + 1);
                            continue;
                        }
                        checked.set(checked.get() + 1);
                        let t = if y.lo().is_sign_positive() { n - 1 } else { 0 };
                        let bound = &nm1 * &(-&(&g * &y.abs())).exp();
                        let mi = &bound - &rest_mass(&s.p[i * n..(i + 1) * n], t, prec);
                        m = Some(match m {
                            None => mi,
                            Some(x) => x.min(&mi),
                        });
                    }
                }
                m.unwrap_or_else(|| Interval::one(prec))
            },
        ),
    ];
    if sym {
        invs.push(Invariant::new(
            "every token y_i^0 ≠ 0 moves away from 0: sign(y_i)(y_i^{k+1} − y_i^k) > 0 (u̇ > 0)",
            |v: &StepView| {
                let mut m: Option<Interval> = None;
                for i in 0..n {
                    if i == n / 2 {
                        continue;
                    }
                    let d = &v.after.u[i] - &v.before.u[i];
                    let d = if i < n / 2 { -d } else { d };
                    m = Some(match m {
                        None => d,
                        Some(x) => x.min(&d),
                    });
                }
                m.unwrap_or_else(|| Interval::one(prec))
            },
        ));
    }
    tallies.resize(invs.len(), StepTally::default());
    for (inv, t) in invs.iter_mut().zip(tallies.iter_mut()) {
        inv.tally = std::mem::take(t);
    }
    let mut traj = Vec::new();
    let mut middle = sym.then_some(Middle::default());
    let uniform = Interval::from_rational(prec, &Rational::from((1, n as i64)));
    let zero = Interval::zero(prec);
    let c = n / 2;
    // (S): the middle row of a state, read against the exact uniform row
    let check_row = |md: &mut Middle, st: &State| {
        let row = &st.p[c * n..(c + 1) * n];
        for p in row {
            md.note(p.agreement(&uniform));
        }
        md.width = md.width.max(max_width(row));
    };
    // (S): the kernel's mirror run (its proof uses σ(y^0) = y^0, checked there); (G): the
    // map with the kernel's row tightening. Both keep enclosures of the exact iterates.
    let mut mirror = if sym {
        let (run, s0) =
            MirrorRun::start(y0, h, prec).expect("(S) is validated symmetric with odd n");
        Some((run, s0))
    } else {
        None
    };
    let state_of = |m: &crate::kernel::layer_map::MirrorState| State {
        k: m.k(),
        u: m.y().to_vec(),
        x: m.y().to_vec(),
        p: m.p().to_vec(),
    };
    let mut s = match &mirror {
        Some((_, s0)) => state_of(s0),
        None => map.start(&y0m),
    };
    if keep {
        traj.push(mids(&s.u));
    }
    if let Some(md) = middle.as_mut() {
        check_row(md, &s);
    }
    for _ in 0..steps {
        let next = match (mirror.as_mut(), middle.as_mut()) {
            (Some((run, ms)), Some(md)) => {
                let (raw, m_next) = run.step(ms);
                // Readings of the direct result against the symmetry the exact iterates
                // have (see the module docs): a disjoint pair would be a certified
                // inconsistency, recorded as such.
                md.note(raw[c].agreement(&zero));
                md.width = md.width.max(max_width(std::slice::from_ref(&raw[c])));
                for (i, y) in raw.iter().enumerate() {
                    md.note(y.agreement(&-&raw[n - 1 - i]));
                }
                *ms = m_next;
                let next = state_of(ms);
                check_row(md, &next);
                next
            }
            _ => map.step(&s),
        };
        let view = StepView {
            n,
            d: 1,
            before: &s,
            after: &next,
        };
        for inv in invs.iter_mut() {
            inv.check(&view);
        }
        if keep {
            traj.push(mids(&next.u));
        }
        s = next;
    }
    let last = s;
    let invariants = invs.iter().map(|i| i.name.clone()).collect();
    for (inv, t) in invs.iter_mut().zip(tallies.iter_mut()) {
        *t = std::mem::take(&mut inv.tally);
    }
    drop(invs);
    Sim {
        last,
        invariants,
        naive_proven: naive.get(),
        skipped: skipped.get(),
        checked: checked.get(),
        traj,
        middle,
    }
}

/// Runs the x-layer with the system's own Q, K, V and Δt = h/V next to the y-layer
/// and returns (the consistency reading "every step's enclosures of a·x^k and y^k
/// overlap": the first certified disagreement, else the last agreement; the largest
/// width seen).
pub(super) fn rescaling_consistent(
    s: &Scalars,
    x0: &[Rational],
    h: &Rational,
    steps: usize,
    prec: u32,
) -> (Reading, f64) {
    let n = x0.len();
    let dt = Rational::from(h / &s.v);
    let one = Mat::identity(1);
    let unit = System::new(one.clone(), one.clone(), one);
    let mut xm = DiscreteMap::new(&s.sys, n, &dt, Form::Layer, prec)
        .expect("layer form")
        .with_stochastic_rows();
    let mut ym = DiscreteMap::new(&unit, n, h, Form::Layer, prec)
        .expect("layer form")
        .with_stochastic_rows();
    let x0m = Mat::from_rows(x0.iter().map(|x| vec![x.clone()]).collect());
    let y0m = x0m.scale(&s.a);
    let a = Interval::from_rational(prec, &s.a);
    let (mut xs, mut ys) = (xm.start(&x0m), ym.start(&y0m));
    let mut reading: Option<Reading> = None;
    let mut width = 0.0f64;
    for _ in 0..=steps {
        for (x, y) in xs.u.iter().zip(&ys.u) {
            let ax = &a * x;
            let r = ax.agreement(y);
            if !reading.is_some_and(|x| x.violated()) {
                reading = Some(r);
            }
            width = width.max(max_width(&[ax]));
        }
        if xs.k == steps {
            break;
        }
        xs = xm.step(&xs);
        ys = ym.step(&ys);
    }
    (reading.expect("n ≥ 1 tokens"), width)
}
