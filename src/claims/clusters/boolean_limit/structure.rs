//! The structure at T of clusters/boolean-limit: each row of P(T) classified
//! against e_1 and e_n, the bounded tokens, the distinct rows and the leaders, every
//! comparison recorded as a decided margin.

use super::enclosure::{decided, row_distance};
use super::*;
use crate::kernel::layer_map::rest_mass;

/// How a row of P(T) is classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Class {
    /// Within row_tol of e_1.
    First,
    /// Within row_tol of e_n.
    Last,
    /// Neither.
    Free,
}

/// The limit structure read off the state at T.
pub(super) struct Structure {
    pub(super) class: Vec<Class>,
    /// Upper end of the distance of each row to its unit vector (the nearer one for free rows).
    pub(super) dist: Vec<Float>,
    /// (i): at most one free row, e_1-rows before the free row before the e_n-rows.
    pub(super) ordered: bool,
    /// Tokens not certified to satisfy |y_i(T)| > A_n.
    pub(super) bounded: usize,
    /// Distinct rows (rows within row_tol of each other count as equal; greedy classes).
    pub(super) distinct: usize,
    /// Columns of P(T) with an entry above row_tol (1-based).
    pub(super) leaders: Vec<usize>,
    /// Comparisons the enclosures leave undecided (a row's distance to e_1 or e_n
    /// against row_tol, or |y_i(T)| against A_n): the structure is then not resolved
    /// at this precision, which is not the same as not converged.
    pub(super) undecided: usize,
}

impl Structure {
    /// Reads the structure; every comparison with row_tol and A_n is also recorded
    /// in `res` as a [`decided`] margin.
    pub(super) fn read(
        s: &State,
        n: usize,
        tol: &Interval,
        a_n: &Interval,
        prec: u32,
        res: &mut StepTally,
    ) -> Structure {
        let tol_lo = tol.lo();
        let mut class = Vec::with_capacity(n);
        let mut dist = Vec::with_capacity(n);
        let (steps0, proven0) = (res.steps(), res.proven());
        for i in 0..n {
            let row = &s.p[i * n..(i + 1) * n];
            let (r1, rn) = (rest_mass(row, 0, prec), rest_mass(row, n - 1, prec));
            res.record(i, &decided(&r1 - tol));
            res.record(i, &decided(&rn - tol));
            let d1 = r1.hi().clone();
            let dn = rn.hi().clone();
            let c = if d1 <= *tol_lo {
                Class::First
            } else if dn <= *tol_lo {
                Class::Last
            } else {
                Class::Free
            };
            class.push(c);
            dist.push(if d1 <= dn { d1 } else { dn });
        }
        let rank = |c: Class| match c {
            Class::First => 0,
            Class::Free => 1,
            Class::Last => 2,
        };
        let free = class.iter().filter(|c| **c == Class::Free).count();
        let ordered = free <= 1 && class.windows(2).all(|w| rank(w[0]) <= rank(w[1]));
        let bounded = s.u.iter().filter(|y| !y.abs().gt(a_n).is_true()).count();
        for (i, y) in s.u.iter().enumerate() {
            res.record(i, &decided(&y.abs() - a_n));
        }
        let undecided = (res.steps() - steps0) - (res.proven() - proven0);
        let mut reps: Vec<usize> = Vec::new();
        for i in 0..n {
            let row = &s.p[i * n..(i + 1) * n];
            let same = reps
                .iter()
                .any(|&r| row_distance(row, &s.p[r * n..(r + 1) * n]) <= *tol_lo);
            if !same {
                reps.push(i);
            }
        }
        let leaders = (0..n)
            .filter(|&j| (0..n).any(|i| *s.p[i * n + j].hi() > *tol_lo))
            .map(|j| j + 1)
            .collect();
        Structure {
            class,
            dist,
            ordered,
            bounded,
            distinct: reps.len(),
            undecided,
            leaders,
        }
    }

    /// The rows of one class, 1-based, as "1–3" / "4, 6" / "—".
    pub(super) fn rows(&self, c: Class) -> String {
        let v: Vec<usize> = (0..self.class.len())
            .filter(|&i| self.class[i] == c)
            .map(|i| i + 1)
            .collect();
        fmt_indices(&v)
    }

    /// Upper end of the largest distance of a classified row to its unit vector.
    pub(super) fn worst_classified(&self) -> Option<Float> {
        self.class
            .iter()
            .zip(&self.dist)
            .filter(|(c, _)| **c != Class::Free)
            .map(|(_, d)| d.clone())
            .reduce(|a, b| if a >= b { a } else { b })
    }

    /// A precision-independent summary used to compare two precisions.
    pub(super) fn signature(&self) -> String {
        format!(
            "e_1 rows {}; free {}; e_n rows {}; bounded {}; distinct {}; leaders {}",
            self.rows(Class::First),
            self.rows(Class::Free),
            self.rows(Class::Last),
            self.bounded,
            self.distinct,
            fmt_indices(&self.leaders)
        )
    }
}

/// 1-based indices as "1–3", "2, 5" or "—".
pub(super) fn fmt_indices(v: &[usize]) -> String {
    if v.is_empty() {
        return "—".into();
    }
    let contiguous = v.windows(2).all(|w| w[1] == w[0] + 1);
    if contiguous && v.len() > 2 {
        format!("{}–{}", v[0], v[v.len() - 1])
    } else {
        v.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// An upper end printed rounded up ("≤ …" cells).
pub(super) fn fmt_up(x: &Float, digits: usize) -> String {
    Interval::from_endpoints(x.clone(), x.clone()).fmt_hi(digits)
}

/// log₁₀ of an upper end, rounded up (for figures; −∞ for 0).
pub(super) fn log10_up(x: &Float) -> f64 {
    if x.is_zero() {
        return f64::NEG_INFINITY;
    }
    let mut l = x.clone();
    l.log10_round(Round::Up);
    l.to_f64_round(Round::Up)
}
