//! The `layer` datum of certificates (TRUSTED: part of the certificate evaluator).
//!
//! A [`LayerData`] holds the *exact* initial data of the discrete map (D) in layer
//! form — Q, K ∈ ℚ^{m×d}, V ∈ ℚ^{d×d}, Δt ∈ ℚ, a number of steps K, and one or more
//! initial token configurations x^{(r),0} ∈ ℚ^{n×d} (the *runs*), all iterated by the
//! same map
//!
//! ```text
//! x_i^{k+1} = x_i^k + Δt V Σ_j P_ij(x^k) x_j^k,   P_ij(x) = softmax_j x_iᵀ(QᵀK)x_j.
//! ```
//!
//! The kernel iterates it with the layer map ([`crate::layer_map`]) in outward-rounded
//! intervals at a working precision (on first use), and derives from the iterates
//! per-step enclosures of two quantities (then cached, by precision):
//! - `sqnorm[r][k]` ∋ max_i ‖x_i^{(r),k}‖²,
//! - `sqdist[(r, s)][k]` ∋ max_i ‖x_i^{(r),k} − x_i^{(s),k}‖² (r < s).
//!
//! Other per-step quantities ([`Traced`]) are traced on demand from the iterates at
//! that precision (then cached):
//! - [`Traced::Partition`]: `partition[r][k]` ∋ Σ_i Σ_j e^{⟨Q x_i^{(r),k}, K x_j^{(r),k}⟩};
//! - [`Traced::Tokens`]: `tokens[r][k]` ∋ every coordinate x_ic^{(r),k} (n·d enclosures
//!   per step, for `layer-coord`);
//! - [`Traced::Dual`]: per step the pair (sup, inf) over λ ∈ [lo, hi] of
//!   max_j |a_i(λ)·x_j^{(r),k}|, a_i(λ) = row i of adj(V − λI) ([`crate::layer_dual`]).
//!
//! **Guarantee.** For every run r, step k ≤ K and precision p, the returned intervals
//! contain the exact real values for the exact data. Reason: each step of
//! the layer map applies inclusion-monotone kernel operations (outward-rounded
//! +, −, ×, certified softmax) to an enclosure of x^k, using the exact identity
//! Σ_j P_ij x_j = x_i + Σ_{j≠i} P_ij (x_j − x_i) (Σ_j P_ij = 1); max and the squared
//! norms are inclusion-monotone too. The certificate carries the exact data only,
//! never the enclosures.
//!
//! **One walk per precision.** Every quantity above is a function of the iterates'
//! enclosures x^{(r),k} alone, so the datum keeps the iterates of its last walk, with
//! the precision they were computed at, when they fit [`MAX_KEPT_BITS`], and derives
//! the next quantity asked at that precision from them instead of walking again (else
//! it walks again, as it would without them). Why the answers are the same: the walk is
//! deterministic (the same outward-rounded operations on the same exact data at the same
//! precision give the same enclosures, bit for bit), the kept iterates are used only
//! when their recorded precision equals the one asked, and the exact data are fixed at
//! [`LayerData::new`] (no method changes them; a clone, which shares the kept walk, has
//! equal data). A walk at another precision replaces them (one is kept per datum).
//!
//! **Cost.** Bounded before anything runs: at most [`MAX_RUNS`] runs, n ≤ 512,
//! d ≤ 64, m ≤ 512, K ≤ 100 000, and runs·K·n²·d ≤ [`MAX_COST`]; at precision p also
//! runs·K·n²·d·⌈p/128⌉ ≤ 4·[`MAX_COST`] and (K + 1)·(#runs + #pairs)·2p ≤ 2^32 bits
//! of stored enclosures. A malformed or over-budget datum is an error naming the
//! field, never a panic.

use crate::layer_dual::{adj_row, dual_bounds, dual_max_abs, MAX_DUAL_D};
use crate::layer_map::{attention, max_all, partition, residual_step, sq_norms};
use crate::{Interval, Mat};
use rug::Rational;
use std::sync::{Arc, Mutex, OnceLock};

/// The most initial configurations one datum may iterate.
pub const MAX_RUNS: usize = 4;
/// The largest runs·K·n²·d a datum may cost (≈ the number of interval multiply-adds).
pub const MAX_COST: u128 = 1 << 24;
const MAX_N: usize = 512;
const MAX_D: usize = 64;
const MAX_M: usize = 512;
const MAX_STEPS: usize = 100_000;
const MAX_STORED_BITS: u128 = 1 << 32;
/// The most bits a kept walk may take: (K + 1)·runs·n·d enclosures of two endpoints,
/// each counted at p + 512 bits (the value and, generously, its MPFR header and
/// allocation). Above it the iterates are not kept and each quantity walks again.
pub const MAX_KEPT_BITS: u128 = 1 << 28;

/// Why a `layer-max-sqnorm` / `layer-max-sqdist` query has no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// Iterating at this precision is over the cost budget.
    #[error(
        "iterating at {prec} bits would cost {cost} (runs·steps·n²·d·⌈p/128⌉); the limit is {}",
        4 * MAX_COST
    )]
    Cost {
        /// The precision.
        prec: u32,
        /// runs·steps·n²·d·⌈p/128⌉.
        cost: u128,
    },
    /// The per-step enclosures at this precision would take too much memory.
    #[error(
        "the per-step enclosures at {prec} bits would take {stored} bits; the limit is {MAX_STORED_BITS}"
    )]
    Stored {
        /// The precision.
        prec: u32,
        /// The bits they would take.
        stored: u128,
    },
    /// The step index is not an integer in 0..=K.
    #[error("step {step} is not an integer in 0..={steps}")]
    Step {
        /// The index asked for.
        step: Rational,
        /// K.
        steps: usize,
    },
    /// The run index is not an integer below the number of runs.
    #[error("run {run} is not an integer in 0..{runs}")]
    Run {
        /// The index asked for.
        run: Rational,
        /// The number of runs.
        runs: usize,
    },
    /// `layer-max-sqdist` was asked for the distance of a run to itself.
    #[error("runs {0} and {0} must differ")]
    SameRun(usize),
    /// A `layer-dual-*` bracket that is not lo ≤ hi.
    #[error("the bracket [{lo}, {hi}] must have lo ≤ hi")]
    Bracket {
        /// lo.
        lo: Rational,
        /// hi.
        hi: Rational,
    },
    /// A `layer-dual-*` row that is not an integer in 0..d.
    #[error("row {row} is not an integer in 0..{d}")]
    Row {
        /// The row asked for.
        row: Rational,
        /// d.
        d: usize,
    },
    /// A `layer-coord` token that is not an integer in 0..n.
    #[error("token {token} is not an integer in 0..{n}")]
    Token {
        /// The token asked for.
        token: Rational,
        /// n.
        n: usize,
    },
    /// A `layer-coord` coordinate that is not an integer in 0..d.
    #[error("coordinate {coord} is not an integer in 0..{d}")]
    Coord {
        /// The coordinate asked for.
        coord: Rational,
        /// d.
        d: usize,
    },
    /// The dual operations are defined for d ≤ MAX_DUAL_D only (d⁴ work).
    #[error(
        "the dual operations need d ≤ {}, the datum has d = {0}",
        crate::layer_dual::MAX_DUAL_D
    )]
    DualDim(usize),
    /// More distinct traced quantities than a datum may ask for.
    #[error("a layer datum may trace at most {MAX_TRACES} quantities (precisions counted apart)")]
    Traces,
}

/// The most traced quantities (× precisions) one datum may cache.
pub const MAX_TRACES: usize = 16;

/// A per-step quantity the kernel traces along every run of a datum on demand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Traced {
    /// Σ_i Σ_j e^{s_ij}, s_ij = ⟨Q x_i, K x_j⟩: the sum of the softmax denominators
    /// (𝓛 = Σ_ij e^{⟨x_i, x_j⟩} when Q = K = I).
    Partition,
    /// Every coordinate x_ic of every token, row-major (n·d enclosures per step).
    Tokens,
    /// (sup, inf) over λ ∈ [lo, hi] of max_j |a_row(λ)·x_j|, a_row(λ) = row `row` of
    /// adj(V − λI): two enclosures per step ([`crate::layer_dual`]).
    Dual {
        /// The bracket's lower end (exact).
        lo: Rational,
        /// The bracket's upper end (exact, ≥ lo).
        hi: Rational,
        /// The row i < d.
        row: usize,
    },
}

impl Traced {
    /// Enclosures stored per step and run (n tokens of dimension d).
    fn width(&self, n: usize, d: usize) -> u128 {
        match self {
            Traced::Partition => 1,
            Traced::Dual { .. } => 2,
            Traced::Tokens => (n * d) as u128,
        }
    }
}

/// Per run, per step: the traced enclosures.
type Trace = Vec<Vec<Interval>>;

/// The traces computed so far: (precision, quantity, enclosures).
type Traces = Vec<(u32, Traced, Arc<Trace>)>;

/// Per-step enclosures at one precision.
#[derive(Debug)]
struct Summary {
    /// [run][k]: max_i ‖x_i^k‖².
    sqnorm: Vec<Vec<Interval>>,
    /// [pair index][k]: max_i ‖x_i^(r),k − x_i^(s),k‖², pairs (r, s), r < s, in lexicographic order.
    sqdist: Vec<Vec<Interval>>,
}

/// The summaries computed so far, by precision (shared by clones).
type Cache = Vec<(u32, Arc<Summary>)>;

/// The iterates of one walk: [run][k] the n·d enclosures of x^{(r),k}, row-major.
type Iterates = Vec<Vec<Vec<Interval>>>;

/// The kept walk: its precision and iterates (shared by clones).
type Kept = Option<(u32, Arc<Iterates>)>;

/// The exact data of a `layer` datum, and its cached per-step enclosures.
#[derive(Clone)]
pub struct LayerData {
    q: Mat,
    k: Mat,
    v: Mat,
    dt: Rational,
    steps: usize,
    runs: Vec<Mat>,
    cache: Arc<Mutex<Cache>>,
    /// The traced quantities computed so far, by precision and quantity.
    traces: Arc<Mutex<Traces>>,
    /// The iterates of the last walk that fit [`MAX_KEPT_BITS`], with its precision.
    kept: Arc<Mutex<Kept>>,
    /// ‖V‖_F² and ‖QᵀK‖_F², computed on first use (the work budget counts them once).
    frob2: Arc<[OnceLock<Rational>; 2]>,
}

impl PartialEq for LayerData {
    /// Equal exact data (the cache is not part of the meaning).
    fn eq(&self, o: &LayerData) -> bool {
        (&self.q, &self.k, &self.v, &self.dt, self.steps, &self.runs)
            == (&o.q, &o.k, &o.v, &o.dt, o.steps, &o.runs)
    }
}

impl std::fmt::Debug for LayerData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LayerData")
            .field("n", &self.n())
            .field("d", &self.d())
            .field("dt", &self.dt)
            .field("steps", &self.steps)
            .field("runs", &self.runs.len())
            .finish_non_exhaustive()
    }
}

fn field_err<T>(
    field: impl Into<String>,
    reason: impl Into<String>,
) -> Result<T, (String, String)> {
    Err((field.into(), reason.into()))
}

impl LayerData {
    /// Validates shapes and the cost bound; errors are (field, reason) with the
    /// fields of the certificate entry (`q`, `k`, `v`, `dt`, `steps`, `tokens[r]`).
    pub fn new(
        q: Mat,
        k: Mat,
        v: Mat,
        dt: Rational,
        steps: usize,
        runs: Vec<Mat>,
    ) -> Result<LayerData, (String, String)> {
        let d = v.rows;
        if d == 0 || d > MAX_D || v.cols != d {
            return field_err("v", format!("must be d × d with 1 ≤ d ≤ {MAX_D}"));
        }
        if q.rows == 0 || q.rows > MAX_M || q.cols != d {
            return field_err("q", format!("must be m × d (d = {d}) with 1 ≤ m ≤ {MAX_M}"));
        }
        if (k.rows, k.cols) != (q.rows, q.cols) {
            return field_err("k", format!("must have the shape of q ({} × {d})", q.rows));
        }
        if dt <= 0 {
            return field_err("dt", "must be positive");
        }
        if steps == 0 || steps > MAX_STEPS {
            return field_err("steps", format!("must be between 1 and {MAX_STEPS}"));
        }
        if runs.is_empty() || runs.len() > MAX_RUNS {
            return field_err(
                "tokens",
                format!("must list 1 to {MAX_RUNS} initial configurations"),
            );
        }
        let n = runs[0].rows;
        if n == 0 || n > MAX_N {
            return field_err("tokens[0]", format!("must have 1 to {MAX_N} rows"));
        }
        for (r, x) in runs.iter().enumerate() {
            if (x.rows, x.cols) != (n, d) {
                return field_err(format!("tokens[{r}]"), format!("must be n × d = {n} × {d}"));
            }
        }
        let cost = runs.len() as u128 * steps as u128 * (n * n) as u128 * d as u128;
        if cost > MAX_COST {
            return field_err(
                "steps",
                format!("runs·steps·n²·d = {cost} exceeds the budget {MAX_COST}"),
            );
        }
        Ok(LayerData {
            q,
            k,
            v,
            dt,
            steps,
            runs,
            cache: Arc::default(),
            traces: Arc::default(),
            kept: Arc::default(),
            frob2: Arc::default(),
        })
    }
    /// Number of tokens n.
    pub fn n(&self) -> usize {
        self.runs[0].rows
    }
    /// Dimension d.
    pub fn d(&self) -> usize {
        self.v.rows
    }
    /// Q (m × d).
    pub fn q(&self) -> &Mat {
        &self.q
    }
    /// K (m × d).
    pub fn k(&self) -> &Mat {
        &self.k
    }
    /// V (d × d).
    pub fn v(&self) -> &Mat {
        &self.v
    }
    /// Δt.
    pub fn dt(&self) -> &Rational {
        &self.dt
    }
    /// The number of steps K.
    pub fn steps(&self) -> usize {
        self.steps
    }
    /// The initial configurations.
    pub fn runs(&self) -> &[Mat] {
        &self.runs
    }
    /// ‖V‖_F² = Σ_ab V_ab², exact (computed once).
    pub fn v_frob2(&self) -> Rational {
        self.frob2[0].get_or_init(|| self.v.frobenius_sq()).clone()
    }
    /// ‖QᵀK‖_F², exact (computed once).
    pub fn qk_frob2(&self) -> Rational {
        self.frob2[1]
            .get_or_init(|| self.q.transpose().mul(&self.k).frobenius_sq())
            .clone()
    }

    fn summary(&self, prec: u32) -> Result<Arc<Summary>, QueryError> {
        self.iteration_cost(prec)?;
        let nr = self.runs.len() as u128;
        let k = self.steps as u128;
        let stored = (k + 1) * (nr + nr * (nr - 1) / 2) * 2 * u128::from(prec);
        if stored > MAX_STORED_BITS {
            return Err(QueryError::Stored { prec, stored });
        }
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, s)) = cache.iter().find(|(p, _)| *p == prec) {
            return Ok(s.clone());
        }
        let s = Arc::new(self.iterate(prec));
        cache.push((prec, s.clone()));
        Ok(s)
    }

    /// The precision-dependent budget of one iteration at `prec` (errors as for
    /// [`QueryError::Cost`]).
    fn iteration_cost(&self, prec: u32) -> Result<(), QueryError> {
        let nr = self.runs.len() as u128;
        let (n, d, k) = (self.n() as u128, self.d() as u128, self.steps as u128);
        let cost = nr * k * n * n * d * u128::from(prec.div_ceil(128));
        if cost > 4 * MAX_COST {
            return Err(QueryError::Cost { prec, cost });
        }
        Ok(())
    }

    /// Mᵀ = (QᵀK)ᵀ enclosed at `prec`, so that the logit x_iᵀ M x_j is ⟨Mᵀ x_i, x_j⟩.
    fn qk_t(&self, prec: u32) -> Vec<Interval> {
        self.q
            .transpose()
            .mul(&self.k)
            .transpose()
            .to_intervals(prec)
    }

    /// Iterates every run K steps at `prec` in lockstep and calls `visit` with the
    /// tokens x^k of every run, for k = 0..=K.
    fn walk(&self, prec: u32, mut visit: impl FnMut(&[&[Interval]])) {
        #[cfg(test)]
        tests::WALKS.with(|w| w.set(w.get() + 1));
        let (n, d) = (self.n(), self.d());
        // Mᵀ and Δt V
        let qk_t = self.qk_t(prec);
        let step_mat = self.v.scale(&self.dt).to_intervals(prec);
        let attend = |x: Vec<Interval>| {
            let p = attention(&qk_t, &x, n, d, prec);
            (x, p)
        };
        // per run, the tokens x^k and P(x^k)
        let mut states: Vec<_> = self
            .runs
            .iter()
            .map(|x| attend(x.to_intervals(prec)))
            .collect();
        for step in 0..=self.steps {
            if step > 0 {
                states = states
                    .iter()
                    .map(|(x, p)| attend(residual_step(&step_mat, x, p, (n, d), prec, true)))
                    .collect();
            }
            let xs: Vec<&[Interval]> = states.iter().map(|(x, _)| x.as_slice()).collect();
            visit(&xs);
        }
    }

    /// Calls `visit` with the tokens x^k of every run at `prec`, for k = 0..=K: from the
    /// kept walk when it is at `prec`; else by a walk, kept (replacing the one kept) when
    /// (K + 1)·runs·n·d·2·(p + 512) ≤ [`MAX_KEPT_BITS`]. The same enclosures either way
    /// (module doc, "One walk per precision").
    fn each_step(&self, prec: u32, mut visit: impl FnMut(&[&[Interval]])) {
        let endpoints =
            (self.steps as u128 + 1) * self.runs.len() as u128 * (self.n() * self.d()) as u128 * 2;
        if endpoints * (u128::from(prec) + 512) > MAX_KEPT_BITS {
            return self.walk(prec, visit);
        }
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let iterates = match &*kept {
            Some((p, it)) if *p == prec => it.clone(),
            _ => {
                let mut it: Iterates = vec![Vec::with_capacity(self.steps + 1); self.runs.len()];
                self.walk(prec, |xs| {
                    for (r, x) in xs.iter().enumerate() {
                        it[r].push(x.to_vec());
                    }
                });
                let it = Arc::new(it);
                *kept = Some((prec, it.clone()));
                it
            }
        };
        drop(kept);
        for k in 0..=self.steps {
            let xs: Vec<&[Interval]> = iterates.iter().map(|run| run[k].as_slice()).collect();
            visit(&xs);
        }
    }

    /// Iterates every run K steps at `prec` in lockstep and records the per-step maxima.
    fn iterate(&self, prec: u32) -> Summary {
        let (n, d) = (self.n(), self.d());
        let nr = self.runs.len();
        let pairs: Vec<(usize, usize)> = (0..nr)
            .flat_map(|r| (r + 1..nr).map(move |s| (r, s)))
            .collect();
        let mut out = Summary {
            sqnorm: vec![Vec::with_capacity(self.steps + 1); nr],
            sqdist: vec![Vec::with_capacity(self.steps + 1); pairs.len()],
        };
        self.each_step(prec, |states| {
            for (r, x) in states.iter().enumerate() {
                out.sqnorm[r].push(max_all(&sq_norms(x, n, d)));
            }
            for (q, &(r, s)) in pairs.iter().enumerate() {
                let diff: Vec<Interval> = states[r]
                    .iter()
                    .zip(states[s].iter())
                    .map(|(a, b)| a - b)
                    .collect();
                out.sqdist[q].push(max_all(&sq_norms(&diff, n, d)));
            }
        });
        out
    }

    /// The enclosures of `what` along every run at `prec` (iterated on first use,
    /// then cached). Errors: over the iteration budget, over the storage budget
    /// ((K + 1)·runs·2p bits), or more than [`MAX_TRACES`] traces.
    fn trace(&self, prec: u32, what: &Traced) -> Result<Arc<Trace>, QueryError> {
        self.iteration_cost(prec)?;
        let stored = (self.steps as u128 + 1)
            * self.runs.len() as u128
            * what.width(self.n(), self.d())
            * 2
            * u128::from(prec);
        if stored > MAX_STORED_BITS {
            return Err(QueryError::Stored { prec, stored });
        }
        let mut traces = self.traces.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, t)) = traces.iter().find(|(p, w, _)| *p == prec && w == what) {
            return Ok(t.clone());
        }
        if traces.len() >= MAX_TRACES {
            return Err(QueryError::Traces);
        }
        let (n, d) = (self.n(), self.d());
        let cap = (self.steps + 1) * what.width(n, d) as usize;
        let mut out: Trace = vec![Vec::with_capacity(cap); self.runs.len()];
        // the dual rows a_i over the bracket and at its lower end (crate::layer_dual)
        let duals = match what {
            Traced::Dual { lo, hi, row } => {
                let lo = Interval::from_rational(prec, lo);
                let bracket = lo.hull(&Interval::from_rational(prec, hi));
                Some((
                    adj_row(&self.v, &bracket, *row, prec),
                    adj_row(&self.v, &lo, *row, prec),
                ))
            }
            Traced::Partition | Traced::Tokens => None,
        };
        let tokens = *what == Traced::Tokens;
        let qk_t = self.qk_t(prec);
        self.each_step(prec, |states| {
            for (r, &x) in states.iter().enumerate() {
                match &duals {
                    None if tokens => out[r].extend(x.iter().cloned()),
                    None => out[r].push(partition(&qk_t, x, n, d, prec)),
                    Some((a_int, a_pt)) => {
                        let (sup, inf) = dual_bounds(
                            &dual_max_abs(a_int, x, n, d),
                            &dual_max_abs(a_pt, x, n, d),
                        );
                        out[r].push(sup);
                        out[r].push(inf);
                    }
                }
            }
        });
        let t = Arc::new(out);
        traces.push((prec, what.clone(), t.clone()));
        Ok(t)
    }

    /// `i` as an index below `bound`, when it is an exact integer in range.
    fn index(i: &Rational, bound: usize) -> Option<usize> {
        if !i.is_integer() {
            return None;
        }
        i.numer().to_usize().filter(|&i| i < bound)
    }
    fn step_index(&self, k: &Rational) -> Result<usize, QueryError> {
        Self::index(k, self.steps + 1).ok_or_else(|| QueryError::Step {
            step: k.clone(),
            steps: self.steps,
        })
    }
    fn run_index(&self, r: &Rational) -> Result<usize, QueryError> {
        Self::index(r, self.runs.len()).ok_or_else(|| QueryError::Run {
            run: r.clone(),
            runs: self.runs.len(),
        })
    }

    /// Calls `visit(k, xs)` with the enclosures x^{(r),k} of every run r at `prec`, for
    /// k = 0..=K, in order: the same iterates every query derives from (the kept walk when
    /// it is at `prec`, else a walk, kept when it fits). For readers outside the evaluator
    /// (a claim's untrusted samples of the same map): the walk they cause is then the one
    /// the queries at `prec` read, on this datum and its clones, instead of a second one.
    /// Errors: over the iteration budget ([`QueryError::Cost`]).
    pub fn visit_iterates(
        &self,
        prec: u32,
        mut visit: impl FnMut(usize, &[&[Interval]]),
    ) -> Result<(), QueryError> {
        self.iteration_cost(prec)?;
        let mut k = 0;
        self.each_step(prec, |xs| {
            visit(k, xs);
            k += 1;
        });
        Ok(())
    }

    /// An enclosure of max_i ‖x_i^{(r),k}‖² at `prec`.
    pub fn max_sqnorm(
        &self,
        prec: u32,
        r: &Rational,
        k: &Rational,
    ) -> Result<Interval, QueryError> {
        let (r, k) = (self.run_index(r)?, self.step_index(k)?);
        Ok(self.summary(prec)?.sqnorm[r][k].clone())
    }

    /// An enclosure of max_i ‖x_i^{(r),k} − x_i^{(s),k}‖² at `prec` (r ≠ s).
    pub fn max_sqdist(
        &self,
        prec: u32,
        r: &Rational,
        s: &Rational,
        k: &Rational,
    ) -> Result<Interval, QueryError> {
        let (r, s, k) = (self.run_index(r)?, self.run_index(s)?, self.step_index(k)?);
        if r == s {
            return Err(QueryError::SameRun(r));
        }
        let (a, b) = (r.min(s), r.max(s));
        let nr = self.runs.len();
        // index of (a, b) among the pairs in lexicographic order
        let idx = a * nr - a * (a + 1) / 2 + (b - a - 1);
        Ok(self.summary(prec)?.sqdist[idx][k].clone())
    }

    /// An enclosure of Σ_i Σ_j e^{⟨Q x_i^{(r),k}, K x_j^{(r),k}⟩} at `prec`
    /// ([`Traced::Partition`]).
    pub fn partition(&self, prec: u32, r: &Rational, k: &Rational) -> Result<Interval, QueryError> {
        let (r, k) = (self.run_index(r)?, self.step_index(k)?);
        Ok(self.trace(prec, &Traced::Partition)?[r][k].clone())
    }

    /// An enclosure of the coordinate x_ic^{(r),k} of token i at step k of run r at
    /// `prec` ([`Traced::Tokens`]: every coordinate of every step, traced once per
    /// precision). Errors: r, k, i (0..n) or c (0..d) not an integer in range, and the
    /// trace budgets.
    pub fn coord(
        &self,
        prec: u32,
        r: &Rational,
        k: &Rational,
        i: &Rational,
        c: &Rational,
    ) -> Result<Interval, QueryError> {
        let (r, k) = (self.run_index(r)?, self.step_index(k)?);
        let (n, d) = (self.n(), self.d());
        let i = Self::index(i, n).ok_or_else(|| QueryError::Token {
            token: i.clone(),
            n,
        })?;
        let c = Self::index(c, d).ok_or_else(|| QueryError::Coord {
            coord: c.clone(),
            d,
        })?;
        Ok(self.trace(prec, &Traced::Tokens)?[r][k * n * d + i * d + c].clone())
    }

    /// Enclosures of sup (`sup` true) or inf over λ ∈ [lo, hi] of
    /// max_j |a_i(λ)·x_j^{(r),k}|, a_i(λ) = row i of adj(V − λI), at `prec`
    /// ([`Traced::Dual`], [`crate::layer_dual`]). Errors: lo > hi, i not an integer in
    /// 0..d, d > [`MAX_DUAL_D`], bad r or k, and the trace budgets.
    #[allow(clippy::too_many_arguments)]
    pub fn dual(
        &self,
        prec: u32,
        r: &Rational,
        k: &Rational,
        lo: &Rational,
        hi: &Rational,
        i: &Rational,
        sup: bool,
    ) -> Result<Interval, QueryError> {
        let (r, k) = (self.run_index(r)?, self.step_index(k)?);
        if lo > hi {
            return Err(QueryError::Bracket {
                lo: lo.clone(),
                hi: hi.clone(),
            });
        }
        let d = self.d();
        let row = Self::index(i, d).ok_or_else(|| QueryError::Row { row: i.clone(), d })?;
        if d > MAX_DUAL_D {
            return Err(QueryError::DualDim(d));
        }
        let what = Traced::Dual {
            lo: lo.clone(),
            hi: hi.clone(),
            row,
        };
        Ok(self.trace(prec, &what)?[r][2 * k + usize::from(!sup)].clone())
    }
}

#[cfg(test)]
mod tests;
