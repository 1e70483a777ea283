//! The cost model: what evaluating a formula, or a whole statement, costs before
//! anything is evaluated, held to [`MAX_WORK`]. Each operator's own charge is its
//! entry of the table ([`super::ops`]); data operations add what their data's sizes
//! give.

use super::datum::{Data, Datum, SparseRows};
use super::ops::{int_atom, lookup};
use super::syntax::Sexp;
use super::units::{
    limbs, precision_factor, units, INNER_PRODUCT_WORDS, LITERAL_DIGITS_PER_UNIT, MAX_EXACT_BITS,
    PAIRS_PER_UNIT, WORDS_PER_UNIT,
};

use std::collections::{BTreeMap, BTreeSet};

/// What a `sandwich-centred` value found in the statement's memo costs: a lock and a
/// hash lookup (measured with the other charges, bench/charges.md).
const SANDWICH_LOOKUP: u128 = 2;

/// The table's charge of `op` (an unknown one, which the grammar refuses, is charged 1).
fn charge(op: &str) -> u128 {
    lookup(op).map_or(1, |o| o.charge)
}

/// The evaluation cost of a parsed formula with no data, at 128 bits ([`work_with`]).
pub fn work(e: &Sexp) -> u128 {
    work_with(e, &Data::new(), 128)
}

/// The evaluation cost of a parsed formula over `data` at `prec` bits, checked
/// against [`super::units::MAX_WORK`] before anything is evaluated: one per node, a `forall`/`sum`
/// body counted once per value of its range (nested ranges multiply), each data
/// operation at the cost its data's sizes give, and, once per formula, each literal's
/// reading and each layer datum's iteration. Saturating.
pub fn work_with(e: &Sexp, data: &Data, prec: u32) -> u128 {
    let mut c = Cost::new(data, prec, 0);
    let per = c.node(e);
    per.saturating_add(c.once)
}

/// The running totals of the costs of `formulas` decided together over `data` at
/// `prec` bits (what [`crate::check`] holds to [`super::units::MAX_WORK`]): the k-th total is the
/// cost of reading every datum ([`datum_cost`]) and of the formulas 0..=k. A
/// computation cached in a datum (a layer datum's iterations, its traces and exact
/// quantities) is shared by every formula of the statement, so it is counted once for
/// all of them, as the evaluator pays it; everything else is counted per formula.
/// Saturating.
pub fn work_of_all<'a>(
    formulas: impl IntoIterator<Item = &'a Sexp>,
    data: &'a Data,
    prec: u32,
) -> Vec<u128> {
    let mut c = Cost::new(
        data,
        prec,
        data.values().map(datum_cost).fold(0, u128::saturating_add),
    );
    let mut per = 0u128;
    formulas
        .into_iter()
        .map(|e| {
            per = per.saturating_add(c.node(e));
            per.saturating_add(c.once)
        })
        .collect()
}

/// What reading and validating a datum costs, in units: its size in words (a sign
/// row's 64-bit words, a rational's limbs, a weight's 32 bits), [`WORDS_PER_UNIT`] to
/// a unit, and the per-row or per-entry overhead of the reader.
pub fn datum_cost(d: &Datum) -> u128 {
    match d {
        Datum::Signs(s) => {
            let (n, w) = (s.n() as u128, s.d().div_ceil(64) as u128);
            n.saturating_add(units(n.saturating_mul(w)))
        }
        Datum::Sparse(b) => b.rows.iter().fold(b.n as u128, |acc, r| {
            let words: u128 = r.iter().map(|(_, v)| limbs(v)).sum();
            acc.saturating_add(r.len() as u128)
                .saturating_add(units(words))
        }),
        Datum::Layer(l) => {
            let entries = |m: &crate::Mat| -> u128 { m.data.iter().map(limbs).sum() };
            let words = [l.q(), l.k(), l.v()]
                .into_iter()
                .chain(l.runs())
                .map(entries)
                .fold(limbs(l.dt()), u128::saturating_add);
            1 + units(words) + (l.n() * l.d() * (l.runs().len() + 3)) as u128
        }
        Datum::Attn(a) => {
            // the tensors of every layer (w_q, w_k: d² each; γ, β, b_q, b_k: d each) and
            // the embedding (256·d), hashed and summed exactly once when the datum is read
            // (bounds 4 and 5 are computed on first use: their operations charge them)
            let d = a.hidden() as u128;
            let embedding = if a.input().is_some() { 256 * d + 1 } else { 0 };
            let values = (a.layers() as u128).saturating_mul(2 * d * d + 4 * d) + embedding;
            1 + values / 16
        }
    }
}

/// The states a layer datum's walk computes: (K + 1) per run (`layer_data`'s `walk`).
fn layer_states(l: &crate::layer_data::LayerData) -> u128 {
    (l.runs().len() as u128).saturating_mul(l.steps() as u128 + 1)
}

/// The precision factor of the layer walk: max(1, q·⌈√q⌉/4), q = ⌈p/128⌉ (1 at 128 and
/// 256 bits, 2 at 512, 6 at 1024, 48 at 4096, 384 at 16384). The walk is multiply-adds,
/// softmax and sums, whose MPFR time grows slower with p than the general factor
/// q·⌈√q⌉ assumes (that one covers `sin` and `ln` too): measured against 128 bits, the
/// walk costs 6.4× at 1024 bits, 63× at 4096 and 532× at 16384 (bench/charges.md,
/// session 25), so this factor keeps it at most 1× its charge at every precision,
/// where q·⌈√q⌉ charged it 3–4× over and left no room for a collapse run's escalation.
fn layer_factor(prec: u32) -> u128 {
    (precision_factor(prec) / 4).max(1)
}

/// What the walk costs per state at 128 bits, in the table's units (`*` and `+` 1 each,
/// `exp` 18, `/` 4: bench/charges.md). For each state x^k of a run, P(x^k)
/// (`layer_map::attention`): a_i = Mᵀx_i (2nd² for the n multiply-adds of d terms of
/// d), the n² logits ⟨a_i, x_j⟩ (2n²d), and a certified softmax row per token
/// (`softmax_into`: two interval exponentials, two quotients and two sums per entry,
/// 2·18 + 2·4 + 2 = 46 per entry); and for the step to x^{k+1}
/// (`layer_map::residual_step`), Σ_j P_ij (x_j − x_i) (3n²d), Δt V times it (2nd²) and
/// the sums (2nd). Counted as 4nd² + 5n²d + 46n² + 2nd for each of the K + 1 states
/// (the last state takes no step: a little over), times [`layer_factor`]. Session 25's
/// bench measured the old charge, n²d for each of K states at ⌈p/128⌉, at up to 51×
/// under the time (bench/charges.md).
fn layer_state_units(l: &crate::layer_data::LayerData) -> u128 {
    let (n, d) = (l.n() as u128, l.d() as u128);
    (4 * n * d * d)
        .saturating_add(5 * n * n * d)
        .saturating_add(46 * n * n)
        .saturating_add(2 * n * d)
}

pub(super) struct Cost<'a> {
    pub(super) data: &'a Data,
    /// The evaluation precision, in bits.
    pub(super) prec: u32,
    /// The cost of one node's evaluation at this precision ([`precision_factor`]).
    pub(super) unit: u128,
    /// The enclosing `forall`/`sum` variables with their ranges and `let` variables
    /// with the range of their integer term where [`Cost::int_range`] knows it,
    /// innermost last.
    pub(super) scope: Vec<(&'a str, Option<(i128, i128)>)>,
    /// Costs paid once per formula.
    pub(super) once: u128,
    /// The (datum, computation) pairs whose once-only cost is counted.
    pub(super) cached: BTreeSet<(&'a str, &'static str)>,
    /// The (datum, argument text) of the `layer-dual-*` traces counted.
    pub(super) cached_dual: BTreeSet<(&'a str, String)>,
    /// The values r of `(sandwich-centred D F r)` counted in full, by (D, F): disjoint
    /// ranges, sorted. The evaluator's memo (one per statement) computes each value
    /// once; later calls look it up.
    pub(super) sandwich: BTreeMap<(i64, i64), Vec<(i128, i128)>>,
    /// How many values `sandwich` holds (at most the memo's capacity).
    pub(super) sandwich_values: u128,
}

/// The values of `lo..=hi` not in `seen` (disjoint sorted ranges), which it then holds.
pub(super) fn add_new(seen: &mut Vec<(i128, i128)>, lo: i128, hi: i128) -> u128 {
    if hi < lo {
        return 0;
    }
    let covered: u128 = seen
        .iter()
        .map(|&(a, b)| {
            let (a, b) = (a.max(lo), b.min(hi));
            if a <= b {
                (b - a + 1) as u128
            } else {
                0
            }
        })
        .sum();
    // merge lo..=hi with every range it touches
    let (mut a, mut b) = (lo, hi);
    seen.retain(|&(x, y)| {
        let touches = x <= b.saturating_add(1) && a <= y.saturating_add(1);
        if touches {
            a = a.min(x);
            b = b.max(y);
        }
        !touches
    });
    let at = seen.partition_point(|&(x, _)| x < a);
    seen.insert(at, (a, b));
    (hi - lo + 1) as u128 - covered
}

/// The text of a term without offsets (atoms and parentheses), a cost-cache key.
pub(super) fn sexp_text(e: &Sexp) -> String {
    match e {
        Sexp::Atom(a, _) => a.clone(),
        Sexp::List(items, _) => {
            format!(
                "({})",
                items.iter().map(sexp_text).collect::<Vec<_>>().join(" ")
            )
        }
    }
}

impl<'a> Cost<'a> {
    fn new(data: &'a Data, prec: u32, once: u128) -> Cost<'a> {
        Cost {
            data,
            prec,
            unit: precision_factor(prec),
            scope: Vec::new(),
            once,
            cached: BTreeSet::new(),
            cached_dual: BTreeSet::new(),
            sandwich: BTreeMap::new(),
            sandwich_values: 0,
        }
    }

    pub(super) fn node(&mut self, e: &'a Sexp) -> u128 {
        let items = match e {
            Sexp::Atom(a, _) => {
                if let Some(d) = crate::literal_digits(a) {
                    self.once = self.once.saturating_add(1 + d / LITERAL_DIGITS_PER_UNIT);
                }
                return self.unit;
            }
            Sexp::List(items, _) => items,
        };
        let op = match items.first() {
            Some(Sexp::Atom(op, _)) => op.as_str(),
            _ => "",
        };
        let args = items.get(1..).unwrap_or(&[]);
        if let ("sandwich-centred", [dbar, first, r]) = (op, args) {
            // D/2 terms cos(r·ω_i) − 1 per value of r, each a product, a cosine and a
            // difference: the table's charges (measured: 2.5 µs a term at 128 bits; it was
            // charged 0.1 µs, 25× too little). The statement's memo computes each value
            // once: where r's range is known and the memo has room for it, the values not
            // counted yet are paid in full once (for the whole certificate, however often
            // the enclosing ranges repeat the call) and each call pays a lookup; else every
            // call pays in full. (Two obligations decided in parallel may compute one value
            // at the same time, once per thread: wall time, which the budget bounds, stays
            // that of one.)
            let terms = int_atom(dbar).map_or(1, |d| (d.max(0) as u128) / 2);
            let each = charge("*") + charge("cos") + charge("-");
            let full = (1 + terms.saturating_mul(each)).saturating_mul(self.unit);
            let lookup = SANDWICH_LOOKUP.saturating_mul(self.unit);
            let key = int_atom(dbar).ok().zip(int_atom(first).ok());
            if let (Some(key), Some((lo, hi))) = (key, self.int_range(r)) {
                let room = super::sandwich::MEMO_VALUES as u128;
                let size = (hi - lo + 1).max(0) as u128;
                if self.sandwich_values.saturating_add(size) <= room {
                    let new = add_new(self.sandwich.entry(key).or_default(), lo, hi);
                    self.sandwich_values += new;
                    self.once = self.once.saturating_add(new.saturating_mul(full));
                    return lookup.saturating_add(self.node(r));
                }
            }
            return full.saturating_add(self.node(r));
        }
        if let ("forall" | "sum", [v, lo, hi, body]) = (op, args) {
            if let (Ok(lo), Ok(hi)) = (int_atom(lo), int_atom(hi)) {
                let n = (i128::from(hi) - i128::from(lo) + 1).max(0) as u128;
                let name = match v {
                    Sexp::Atom(v, _) => v.as_str(),
                    Sexp::List(..) => "",
                };
                self.scope.push((name, Some((lo.into(), hi.into()))));
                // the body, and the step that binds the variable and accumulates
                let b = self.node(body).saturating_add(self.unit);
                self.scope.pop();
                return self.unit.saturating_add(n.saturating_mul(b));
            }
        }
        if let ("let", [v, t, body]) = (op, args) {
            // t once per evaluation of the let, then the body; each use of the
            // variable is a node of the body
            let t_cost = self.node(t);
            let range = self.int_range(t);
            let name = match v {
                Sexp::Atom(v, _) => v.as_str(),
                Sexp::List(..) => "",
            };
            self.scope.push((name, range));
            let b = self.node(body);
            self.scope.pop();
            return (2 * self.unit).saturating_add(t_cost).saturating_add(b);
        }
        // the operator's own charge from the table (an unknown one is refused by the
        // grammar; it is charged as 1 here), plus what its data's sizes give
        let charge = charge(op);
        let own = self.data_cost(op, args);
        items.iter().fold(
            self.unit.saturating_mul(charge).saturating_add(own),
            |acc, x| acc.saturating_add(self.node(x)),
        )
    }

    pub(super) fn datum(&self, e: &Sexp) -> Option<&'a Datum> {
        match e {
            Sexp::Atom(a, _) => self.data.get(a),
            Sexp::List(..) => None,
        }
    }

    /// Adds `cost` to the once-per-formula costs the first time (datum, what) is met.
    pub(super) fn once_for(&mut self, datum: &'a Sexp, what: &'static str, cost: u128) {
        if let Sexp::Atom(name, _) = datum {
            if self.cached.insert((name.as_str(), what)) {
                self.once = self.once.saturating_add(cost);
            }
        }
    }

    /// The cost of one evaluation of data operation `op` (0 for other operators),
    /// besides its arguments' own nodes.
    pub(super) fn data_cost(&mut self, op: &str, args: &'a [Sexp]) -> u128 {
        let signs = |c: &Self, k: usize| match args.get(k).and_then(|a| c.datum(a)) {
            Some(Datum::Signs(s)) => Some(s),
            _ => None,
        };
        let sparse = |c: &Self, k: usize| match args.get(k).and_then(|a| c.datum(a)) {
            Some(Datum::Sparse(b)) => Some(b),
            _ => None,
        };
        match op {
            "rows" | "cols" => 1,
            "gram-max-abs" => signs(self, 0).map_or(1, |s| {
                let n = s.n() as u128;
                let pairs = n * n.saturating_sub(1) / 2;
                let words = s.d().div_ceil(64) as u128;
                1 + pairs / PAIRS_PER_UNIT + units(pairs.saturating_mul(words))
            }),
            "row-nnz-max" => sparse(self, 0).map_or(1, |b| 1 + b.n as u128),
            "entry-min" | "entry-max" | "row-sum-max" | "entry-sum" => {
                sparse(self, 0).map_or(1, |b| {
                    let z = SparseSizes::of(b);
                    // comparisons cross-multiply two entries; a sum's running value
                    // has at most the size of the terms summed so far
                    let words = match op {
                        "entry-min" | "entry-max" => z.total.saturating_mul(z.largest),
                        "row-sum-max" => z.row_sq.saturating_mul(2),
                        _ => z.total.saturating_mul(z.total),
                    };
                    (1 + z.nnz + b.n as u128).saturating_add(units(words))
                })
            }
            "err-max" | "lemma-a" | "lemma-b" | "lemma-a-row" | "lemma-b-row" => {
                match (signs(self, 0), sparse(self, 1)) {
                    (Some(s), Some(b)) => {
                        let n = b.n as u128;
                        let w = s.d().div_ceil(64) as u128;
                        // per row i (support s_i, size r_i in limbs): Λ_ij for every j,
                        // each s_i inner products of w words and big-integer
                        // multiply-adds of r_i limbs; the common denominator (s_i
                        // lcm's of r_i limbs); with t, the slack 2t·Σ_l B_il (t has at
                        // most MAX_EXACT_BITS bits)
                        let t_limbs = u128::from(MAX_EXACT_BITS) / 64;
                        let words = b.rows.iter().fold(0u128, |acc, r| {
                            let (si, ri) = (
                                r.len() as u128,
                                r.iter().map(|(_, v)| limbs(v)).sum::<u128>(),
                            );
                            let row = n
                                .saturating_mul(
                                    si.saturating_mul(INNER_PRODUCT_WORDS + w + ri)
                                        .saturating_add(ri),
                                )
                                .saturating_add(si.saturating_mul(ri).saturating_mul(ri))
                                .saturating_add((1 + t_limbs).saturating_mul(ri + 1));
                            acc.saturating_add(row)
                        });
                        (1 + n).saturating_add(units(words))
                    }
                    _ => 1,
                }
            }
            "band-reach" | "band-reach-count" => {
                // l·L·min(d + 1, L) bits set and l·L scanned (bounded by the
                // operation's own limits); the arguments' ranges where they are known
                let top = |c: &Self, k: usize, cap: u128| {
                    args.get(k)
                        .and_then(|a| c.int_range(a))
                        .map_or(cap, |(lo, hi)| {
                            lo.unsigned_abs().max(hi.unsigned_abs()).min(cap)
                        })
                };
                let len = top(self, 0, 65_536);
                let d = top(self, 1, 65_536);
                let layers = top(self, 2, 256);
                let bits = (layers * len * (d + 1).min(len)).min(1 << 32);
                1 + (bits + layers * len) / WORDS_PER_UNIT
            }
            "layer-partition" => {
                if let (Some(x), Some(Datum::Layer(l))) =
                    (args.first(), args.first().and_then(|a| self.datum(a)))
                {
                    // its own walk, once per precision, and at every state of every run
                    // the sum itself: Mᵀx_i (2nd²), the n² logits (2n²d) and their
                    // exponentials (`exp`'s charge, 18, each)
                    let (n, d) = (l.n() as u128, l.d() as u128);
                    let per_state = layer_state_units(l)
                        .saturating_add((2 * n * d * d + 2 * n * n * d).saturating_add(18 * n * n));
                    let cost = layer_states(l)
                        .saturating_mul(per_state)
                        .saturating_mul(layer_factor(self.prec));
                    self.once_for(x, "partition", cost);
                }
                1
            }
            "layer-coord" => {
                if let (Some(x), Some(Datum::Layer(l))) =
                    (args.first(), args.first().and_then(|a| self.datum(a)))
                {
                    // its own walk, once per precision, keeping the n·d coordinates of
                    // every state of every run
                    let (n, d) = (l.n() as u128, l.d() as u128);
                    let cost = layer_states(l)
                        .saturating_mul(layer_state_units(l).saturating_add(n * d))
                        .saturating_mul(layer_factor(self.prec));
                    self.once_for(x, "tokens", cost);
                }
                1
            }
            "layer-dual-sup" | "layer-dual-inf" => {
                if let (Some(x), Some(Datum::Layer(l))) =
                    (args.first(), args.first().and_then(|a| self.datum(a)))
                {
                    // its own walk per distinct (lo, hi, i) and precision (sup and inf
                    // share it), at every state of every run two maxima of |a·x_j| over
                    // the n tokens (2·(2nd + n)), and two adjugate rows (2d⁴). Keyed by
                    // the text of lo, hi, i; when they mention a forall/sum variable their
                    // values may differ per evaluation, and the cache's MAX_TRACES bounds
                    // the walks.
                    let (n, d) = (l.n() as u128, l.d() as u128);
                    let per_state = layer_state_units(l).saturating_add(2 * (2 * n * d + n));
                    let cost = layer_states(l)
                        .saturating_mul(per_state)
                        .saturating_add(2 * d * d * d * d)
                        .saturating_mul(layer_factor(self.prec));
                    let key = args.get(3..6).unwrap_or(&[]);
                    let open = key.iter().any(|a| self.mentions_scope(a));
                    let text = if open {
                        String::from("(open)")
                    } else {
                        key.iter().map(sexp_text).collect::<Vec<_>>().join(" ")
                    };
                    if let Sexp::Atom(name, _) = x {
                        if self.cached_dual.insert((name.as_str(), text)) {
                            let times = if open {
                                crate::layer_data::MAX_TRACES as u128
                            } else {
                                1
                            };
                            self.once = self.once.saturating_add(cost.saturating_mul(times));
                        }
                    }
                }
                1
            }
            "layer-max-sqnorm" | "layer-max-sqdist" => {
                if let (Some(x), Some(Datum::Layer(l))) =
                    (args.first(), args.first().and_then(|a| self.datum(a)))
                {
                    // one walk per precision, cached with both maxima: at every state,
                    // ‖x_i‖² of every run's tokens (2nd) and ‖x_i − y_i‖² of every pair
                    // of runs (3nd)
                    let (n, d) = (l.n() as u128, l.d() as u128);
                    let runs = l.runs().len() as u128;
                    let pairs = runs * runs.saturating_sub(1) / 2;
                    let maxima = (l.steps() as u128 + 1)
                        .saturating_mul(runs * 2 * n * d + pairs * 3 * n * d);
                    let cost = layer_states(l)
                        .saturating_mul(layer_state_units(l))
                        .saturating_add(maxima)
                        .saturating_mul(layer_factor(self.prec));
                    self.once_for(x, "iterate", cost);
                }
                1
            }
            "layer-v-frob2" | "layer-qk-frob2" | "layer-dt" => {
                if let (Some(x), Some(Datum::Layer(l))) =
                    (args.first(), args.first().and_then(|a| self.datum(a)))
                {
                    if op == "layer-dt" {
                        return 1 + units(limbs(l.dt()));
                    }
                    // computed once and cached in the datum; a sum of products whose
                    // running value has at most the size of the terms so far
                    let col = |m: &crate::Mat| -> Vec<u128> {
                        (0..m.cols)
                            .map(|c| (0..m.rows).map(|r| limbs(m.at(r, c))).sum())
                            .collect()
                    };
                    let d = l.d() as u128;
                    let cost = if op == "layer-v-frob2" {
                        let v: u128 = l.v().data.iter().map(limbs).sum();
                        (d * d).saturating_add(units(v.saturating_mul(v).saturating_mul(4)))
                    } else {
                        // (QᵀK)_ab = Σ_c Q_ca K_cb, then Σ_ab (QᵀK)_ab²
                        let (qa, kb) = (col(l.q()), col(l.k()));
                        let m = l.q().rows as u128;
                        let words: u128 = qa
                            .iter()
                            .flat_map(|a| {
                                kb.iter().map(move |b| (a + b).saturating_mul(3 * (a + b)))
                            })
                            .fold(0u128, u128::saturating_add);
                        (d * d * m).saturating_add(units(words))
                    };
                    self.once_for(
                        x,
                        if op == "layer-v-frob2" {
                            "v-frob2"
                        } else {
                            "qk-frob2"
                        },
                        cost,
                    );
                }
                1
            }
            // bound 5 (crate::weights) computed once per datum on first use, then per
            // evaluation its exact quantities rounded to the precision; bound 4 likewise,
            // once, then read at the precision (its table charge)
            "attn-row-logit-range" | "attn-byte-logit-range" => {
                if let (Some(x), Some(Datum::Attn(a))) =
                    (args.first(), args.first().and_then(|a| self.datum(a)))
                {
                    if op == "attn-row-logit-range" {
                        self.once_for(x, "row-sums", units(a.row_words()));
                        return 1 + units(a.row_eval_words().saturating_mul(16));
                    }
                    self.once_for(x, "byte-pairs", units(a.pair_words()));
                }
                1
            }
            // attn-ln-bound and attn-logit-range: a few interval operations on sums read
            // with the datum (crate::weights), their table charge
            _ => 0,
        }
    }

    /// Whether `e` mentions a variable of an enclosing `forall`/`sum`.
    pub(super) fn mentions_scope(&self, e: &Sexp) -> bool {
        match e {
            Sexp::Atom(a, _) => self.scope.iter().any(|(v, _)| v == a),
            Sexp::List(items, _) => items.iter().any(|x| self.mentions_scope(x)),
        }
    }

    /// Bounds of an integer-valued term built from integer literals, the variables
    /// in scope, + − × neg abs min max (`None` for anything else).
    pub(super) fn int_range(&self, e: &Sexp) -> Option<(i128, i128)> {
        let items = match e {
            Sexp::Atom(a, _) => {
                if let Ok(v) = a.parse::<i64>() {
                    return Some((v.into(), v.into()));
                }
                return self
                    .scope
                    .iter()
                    .rev()
                    .find(|(n, _)| n == a)
                    .and_then(|&(_, r)| r);
            }
            Sexp::List(items, _) => items,
        };
        let Some(Sexp::Atom(op, _)) = items.first() else {
            return None;
        };
        let rs = items[1..]
            .iter()
            .map(|a| self.int_range(a))
            .collect::<Option<Vec<_>>>()?;
        let mul = |a: (i128, i128), b: (i128, i128)| -> Option<(i128, i128)> {
            let c = [
                a.0.checked_mul(b.0)?,
                a.0.checked_mul(b.1)?,
                a.1.checked_mul(b.0)?,
                a.1.checked_mul(b.1)?,
            ];
            Some((*c.iter().min()?, *c.iter().max()?))
        };
        match (op.as_str(), rs.as_slice()) {
            ("+", [first, rest @ ..]) => rest.iter().try_fold(*first, |a, b| {
                Some((a.0.checked_add(b.0)?, a.1.checked_add(b.1)?))
            }),
            ("*", [first, rest @ ..]) => rest.iter().try_fold(*first, |a, b| mul(a, *b)),
            ("-" | "neg", [a]) => Some((a.1.checked_neg()?, a.0.checked_neg()?)),
            ("-", [a, b]) => Some((a.0.checked_sub(b.1)?, a.1.checked_sub(b.0)?)),
            ("min", [a, b]) => Some((a.0.min(b.0), a.1.min(b.1))),
            ("max", [a, b]) => Some((a.0.max(b.0), a.1.max(b.1))),
            ("abs", [a]) => {
                let m = a.0.unsigned_abs().max(a.1.unsigned_abs());
                let lo = if a.0 <= 0 && 0 <= a.1 {
                    0
                } else {
                    a.0.unsigned_abs().min(a.1.unsigned_abs())
                };
                Some((i128::try_from(lo).ok()?, i128::try_from(m).ok()?))
            }
            _ => None,
        }
    }
}

/// The sizes of a row-sparse matrix that its operations' costs depend on.
pub(super) struct SparseSizes {
    /// Stored entries.
    pub(super) nnz: u128,
    /// Σ limbs of the entries.
    pub(super) total: u128,
    /// The largest entry, in limbs.
    pub(super) largest: u128,
    /// Σ_i (limbs of row i)².
    pub(super) row_sq: u128,
}

impl SparseSizes {
    pub(super) fn of(b: &SparseRows) -> SparseSizes {
        let mut z = SparseSizes {
            nnz: 0,
            total: 0,
            largest: 0,
            row_sq: 0,
        };
        for r in &b.rows {
            let mut row = 0u128;
            for (_, v) in r {
                let l = limbs(v);
                z.nnz += 1;
                row += l;
                z.largest = z.largest.max(l);
            }
            z.total += row;
            z.row_sq = z.row_sq.saturating_add(row.saturating_mul(row));
        }
        z
    }
}
