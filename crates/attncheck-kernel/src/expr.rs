//! A tiny expression language for certificates, evaluated in intervals.
//!
//! A certificate states its obligations as S-expressions over exact rational
//! literals, so that `attncheck verify` can re-check them with the kernel alone,
//! without the code that built them:
//!
//! ```text
//! (<= (exp (* -1/256 1179)) 1/100)
//! (forall r 1 100000 (< (sum i 0 63 (- (cos (* r (exp (* (/ (* -2 i) 128) (ln 10000))))) 1)) 0))
//! ```
//!
//! Terms: rational literals (`7`, `-3/4`, `1.5e-3`, `2^-8`), `pi`, bound
//! integer variables, `(+ a b …)`, `(- a b)`, `(neg a)`, `(* a b …)`, `(/ a b)`,
//! `(exp a)`, `(ln a)`, `(sqrt a)`, `(sin a)`, `(cos a)`, `(pow a n)`, `(abs a)`,
//! `(min a b)`, `(max a b)`, `(sum v lo hi body)` (integers lo..=hi), `(let v t body)`
//! (body, a term or a formula, with v bound to t's value, computed once per evaluation
//! of the `let`), and the papers' building blocks (`alibi-slope`, `alibi-tail`,
//! `alibi-window`, `union-bound-dim`), which [`parse`] rewrites into their expansions
//! ([`blocks`]).
//! Exact mode: a term is kept as an exact rational while every operation is
//! rational-closed (+ − × ÷, `pow`, `abs`, `min`, `max`, `ceil`, `floor`, `sum`,
//! literals, data operations); only `exp`, `ln`, `sqrt`, `sin`, `cos` and `pi`
//! (or a rational grown past [`MAX_EXACT_BITS`]) fall back to the outward
//! interval. A comparison between two exact values is decided exactly (never
//! `Unknown`). `(ceil x)`/`(floor x)` of an interval is exact when the interval
//! decides it, else the hull of the endpoint values (±∞ kept).
//!
//! Domains: `(ln a)` needs a > 0, `(sqrt a)` a ≥ 0, `(/ a b)` b ≠ 0 and `(pow a n)`
//! with n < 0 a ≠ 0. An exact argument outside the domain, or an enclosure that is
//! not inside it (for ln, ÷ and negative powers, one that touches 0 counts), makes
//! the term *undefined*: every term built on it is undefined and every comparison
//! on it is `Unknown` (docs/certificate-format.md, "Meaning").
//!
//! Data: a certificate may carry named matrices ([`Datum`]): a ±1 sign matrix S
//! and a row-sparse rational matrix B, whose stored entries define the supports
//! supp_i. With G = S Sᵀ (exact integers by popcount), Λ = B G / d and
//! E_ij = Σ_{l ∈ supp_i, l ≠ j} B_il G_lj / d, the exact data operations are
//! `(rows X)`, `(cols S)`, `(gram-max-abs S)` = max_{l≠j} |G_lj|,
//! `(err-max S B)` = max_{i, j} |E_ij|, `(lemma-a S B)` = max over i and
//! j, j' ∈ supp_i of |E_ij − E_ij'|, `(lemma-b S B)` = max over i, j ∉ supp_i,
//! j' ∈ supp_i of Λ_ij − Λ_ij', `(lemma-a-row S B t)` and `(lemma-b-row S B t)`
//! (the same row maxima minus 2t·Σ_l B_il, maximised over rows),
//! `(row-sum-max B)`, `(row-nnz-max B)`, `(entry-min B)`, `(entry-max B)`,
//! `(entry-sum B)`. Rows are streamed: no n × n matrix is stored.
//! Formulas: `(< a b)`, `(<= a b)`, `(> a b)`, `(>= a b)`, `(= a b)` (exact
//! equality: both sides must evaluate to the same point), `(and f …)`,
//! `(not f)`, `(forall v lo hi f)`.
//! Every operation is the kernel's outward-rounded one, so a `True` answer is a
//! proof; `Unknown` means the precision did not decide it.

use super::{parse_rational, Certainty, Interval, SignMatrix};
use rug::{Integer, Rational};
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub mod blocks;
pub mod tree;

/// A parse or evaluation error, with the byte offset in the source text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at offset {offset}: {reason}")]
pub struct ExprError {
    /// Byte offset in the expression text.
    pub offset: usize,
    /// What is wrong.
    pub reason: String,
}

/// A parsed S-expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Sexp {
    /// An atom (number, symbol, operator).
    Atom(String, usize),
    /// A list.
    List(Vec<Sexp>, usize),
}

impl Sexp {
    fn offset(&self) -> usize {
        match self {
            Sexp::Atom(_, o) | Sexp::List(_, o) => *o,
        }
    }
}

fn err<T>(offset: usize, reason: impl Into<String>) -> Result<T, ExprError> {
    Err(ExprError {
        offset,
        reason: reason.into(),
    })
}

/// The deepest nesting of parentheses a formula may have. Evaluation recurses
/// once per level, so this bounds the stack whatever the input.
pub const MAX_DEPTH: usize = 200;

/// The most term evaluations one formula may cost, counting each `forall`/`sum`
/// body once per value of its range (nested ranges multiply). Checked before
/// anything is evaluated, so no formula runs without bound.
pub const MAX_WORK: u128 = 1_000_000_000;

/// Parses one S-expression (the whole text) and rewrites its building blocks into
/// their expansions ([`blocks::expand`]): what every other reader of a formula sees.
/// The nesting depth is checked as written and again after the expansion.
pub fn parse(text: &str) -> Result<Sexp, ExprError> {
    let bytes = text.as_bytes();
    let mut pos = 0;
    let e = parse_at(text, bytes, &mut pos, 0)?;
    skip_ws(bytes, &mut pos);
    if pos != bytes.len() {
        return err(pos, "trailing text after the expression");
    }
    let o = e.offset();
    let e = blocks::expand(e, &mut 0)?;
    if blocks::depth(&e) > MAX_DEPTH {
        return err(
            o,
            format!("nested deeper than {MAX_DEPTH} levels once its building blocks are expanded"),
        );
    }
    Ok(e)
}

/// The evaluation cost of a parsed formula with no data, at 128 bits ([`work_with`]).
pub fn work(e: &Sexp) -> u128 {
    work_with(e, &Data::new(), 128)
}

// ----- the work budget -----
//
// `work_with` bounds what evaluating a formula costs, before anything is evaluated, in
// units of about one term evaluation: each node costs 1 per evaluation, a `forall`/
// `sum` body once per value of its range, each data operation its own cost per
// evaluation (below, from the sizes of its data), and, once per formula, reading each
// literal and the cached computations of a layer datum. The sizes are counted in
// machine words (64-bit words of a sign row, limbs of a rational), WORDS_PER_UNIT
// words to a unit; a bound of a big-integer product is the product of the sizes
// (schoolbook multiplication, which GMP only beats). Calibrated on this machine: a
// unit is about 0.1 µs, the cost of one interval operation at 128 bits.

/// 64-bit words handled (popcounts, limb operations) per unit of work.
pub const WORDS_PER_UNIT: u128 = 64;
/// Pairs of sign rows compared per unit of work (the per-pair overhead of
/// `gram-max-abs`, besides its words).
pub const PAIRS_PER_UNIT: u128 = 8;
/// The overhead of one inner product ⟨s_l, s_j⟩ of the lemma operations, in words.
const INNER_PRODUCT_WORDS: u128 = 64;
/// Digits of a literal read per unit of work (GMP reads a million-digit power in
/// about 15 ms).
pub const LITERAL_DIGITS_PER_UNIT: u128 = 8;

/// The evaluation cost of a parsed formula over `data` at `prec` bits, checked
/// against [`MAX_WORK`] before anything is evaluated: one per node, a `forall`/`sum`
/// body counted once per value of its range (nested ranges multiply), each data
/// operation at the cost its data's sizes give, and, once per formula, each literal's
/// reading and each layer datum's iteration. Saturating.
pub fn work_with(e: &Sexp, data: &Data, prec: u32) -> u128 {
    let mut c = Cost {
        data,
        prec,
        unit: precision_factor(prec),
        scope: Vec::new(),
        once: 0,
        cached: BTreeSet::new(),
        cached_dual: BTreeSet::new(),
    };
    let per = c.node(e);
    per.saturating_add(c.once)
}

/// What one term evaluation at `prec` bits costs relative to one at 128 bits:
/// q·⌈√q⌉ with q = ⌈p/128⌉ (1 at 128 bits, 24 at 1024, 1536 at 16384), an upper bound
/// of what `verify` measures (MPFR's exp and cos grow like p^1.5; 6× at 1024 bits and
/// 50× at 4096 on the committed certificates).
pub fn precision_factor(prec: u32) -> u128 {
    let q = u128::from(prec.div_ceil(128).max(1));
    let mut r = 1u128;
    while r * r < q {
        r += 1;
    }
    q * r
}

struct Cost<'a> {
    data: &'a Data,
    prec: u32,
    /// The cost of one node's evaluation at this precision ([`precision_factor`]).
    unit: u128,
    /// The enclosing `forall`/`sum` variables with their ranges and `let` variables
    /// with the range of their integer term where [`Cost::int_range`] knows it,
    /// innermost last.
    scope: Vec<(&'a str, Option<(i128, i128)>)>,
    /// Costs paid once per formula.
    once: u128,
    /// The (datum, computation) pairs whose once-only cost is counted.
    cached: BTreeSet<(&'a str, &'static str)>,
    /// The (datum, argument text) of the `layer-dual-*` traces counted.
    cached_dual: BTreeSet<(&'a str, String)>,
}

/// The size of a rational in limbs: 1 + (bits of numerator and denominator)/64.
fn limbs(q: &Rational) -> u128 {
    1 + u128::from(q.numer().significant_bits() + q.denom().significant_bits()) / 64
}

/// The text of a term without offsets (atoms and parentheses), a cost-cache key.
fn sexp_text(e: &Sexp) -> String {
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

fn units(words: u128) -> u128 {
    words.div_ceil(WORDS_PER_UNIT)
}

impl<'a> Cost<'a> {
    fn node(&mut self, e: &'a Sexp) -> u128 {
        let items = match e {
            Sexp::Atom(a, _) => {
                if let Some(d) = super::literal_digits(a) {
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
        if let ("sandwich-centred", [dbar, _, r]) = (op, args) {
            // D/2 cosines per evaluation (a memo may spare some; counted anyway)
            let terms = int_atom(dbar).map_or(1, |d| (d.max(0) as u128) / 2);
            return (1 + terms)
                .saturating_mul(self.unit)
                .saturating_add(self.node(r));
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
        let own = self.data_cost(op, args);
        items.iter().fold(self.unit.saturating_add(own), |acc, x| {
            acc.saturating_add(self.node(x))
        })
    }

    fn datum(&self, e: &Sexp) -> Option<&'a Datum> {
        match e {
            Sexp::Atom(a, _) => self.data.get(a),
            Sexp::List(..) => None,
        }
    }

    /// Adds `cost` to the once-per-formula costs the first time (datum, what) is met.
    fn once_for(&mut self, datum: &'a Sexp, what: &'static str, cost: u128) {
        if let Sexp::Atom(name, _) = datum {
            if self.cached.insert((name.as_str(), what)) {
                self.once = self.once.saturating_add(cost);
            }
        }
    }

    /// The cost of one evaluation of data operation `op` (0 for other operators),
    /// besides its arguments' own nodes.
    fn data_cost(&mut self, op: &str, args: &'a [Sexp]) -> u128 {
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
                    // its own iteration, once per precision: the map's
                    // runs·steps·n²·d plus n² logits and exponentials per step and run
                    // (an `exp` counted as 32 multiply-adds)
                    let (n, d) = (l.n() as u128, l.d() as u128);
                    let cost = (l.runs().len() as u128)
                        * (l.steps() as u128 + 1)
                        * n
                        * n
                        * (2 * d + 32)
                        * u128::from(self.prec.div_ceil(128));
                    self.once_for(x, "partition", cost);
                }
                1
            }
            "layer-dual-sup" | "layer-dual-inf" => {
                if let (Some(x), Some(Datum::Layer(l))) =
                    (args.first(), args.first().and_then(|a| self.datum(a)))
                {
                    // its own iteration per distinct (lo, hi, i) and precision (sup and
                    // inf share it): the map's runs·(steps + 1)·n²·2d plus 2n·d per step
                    // and run, and two adjugate rows (2d⁴). Keyed by the text of lo, hi,
                    // i; when they mention a forall/sum variable their values may differ
                    // per evaluation, and the cache's MAX_TRACES bounds the iterations.
                    let (n, d) = (l.n() as u128, l.d() as u128);
                    let cost = (l.runs().len() as u128)
                        .saturating_mul(l.steps() as u128 + 1)
                        .saturating_mul(n * n * 2 * d + 2 * n * d)
                        .saturating_add(2 * d * d * d * d)
                        .saturating_mul(u128::from(self.prec.div_ceil(128)));
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
                    // iterated once per precision and cached: runs·steps·n²·d·⌈p/128⌉
                    // interval multiply-adds
                    let (n, d) = (l.n() as u128, l.d() as u128);
                    let cost = (l.runs().len() as u128)
                        * (l.steps() as u128)
                        * n
                        * n
                        * d
                        * u128::from(self.prec.div_ceil(128));
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
            // a few interval operations on sums read with the datum (crate::weights)
            "attn-ln-bound" | "attn-logit-range" => 16,
            _ => 0,
        }
    }

    /// Whether `e` mentions a variable of an enclosing `forall`/`sum`.
    fn mentions_scope(&self, e: &Sexp) -> bool {
        match e {
            Sexp::Atom(a, _) => self.scope.iter().any(|(v, _)| v == a),
            Sexp::List(items, _) => items.iter().any(|x| self.mentions_scope(x)),
        }
    }

    /// Bounds of an integer-valued term built from integer literals, the variables
    /// in scope, + − × neg abs min max (`None` for anything else).
    fn int_range(&self, e: &Sexp) -> Option<(i128, i128)> {
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
struct SparseSizes {
    /// Stored entries.
    nnz: u128,
    /// Σ limbs of the entries.
    total: u128,
    /// The largest entry, in limbs.
    largest: u128,
    /// Σ_i (limbs of row i)².
    row_sq: u128,
}

impl SparseSizes {
    fn of(b: &SparseRows) -> SparseSizes {
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

fn budget_error(w: u128) -> ExprError {
    ExprError {
        offset: 0,
        reason: format!(
            "the formula would cost {w} evaluations (nested ranges multiply; data operations count \
             at their size); the limit is {MAX_WORK}"
        ),
    }
}

fn skip_ws(b: &[u8], pos: &mut usize) {
    while *pos < b.len() && b[*pos].is_ascii_whitespace() {
        *pos += 1;
    }
}

fn parse_at(text: &str, b: &[u8], pos: &mut usize, depth: usize) -> Result<Sexp, ExprError> {
    skip_ws(b, pos);
    if depth > MAX_DEPTH {
        return err(*pos, format!("nested deeper than {MAX_DEPTH} levels"));
    }
    if *pos >= b.len() {
        return err(*pos, "unexpected end of expression");
    }
    let start = *pos;
    match b[*pos] {
        b'(' => {
            *pos += 1;
            let mut items = Vec::new();
            loop {
                skip_ws(b, pos);
                if *pos >= b.len() {
                    return err(start, "unclosed parenthesis");
                }
                if b[*pos] == b')' {
                    *pos += 1;
                    return Ok(Sexp::List(items, start));
                }
                items.push(parse_at(text, b, pos, depth + 1)?);
            }
        }
        b')' => err(start, "unexpected ')'"),
        _ => {
            while *pos < b.len()
                && !b[*pos].is_ascii_whitespace()
                && b[*pos] != b'('
                && b[*pos] != b')'
            {
                *pos += 1;
            }
            let atom = &text[start..*pos];
            if let Err(e) = super::check_literal_size(atom) {
                return err(start, e.to_string());
            }
            Ok(Sexp::Atom(atom.to_string(), start))
        }
    }
}

const MAX_RANGE: i64 = 50_000_000;

/// An exact rational whose numerator and denominator together exceed this many
/// bits is demoted to its outward interval (keeps exact mode from blowing up).
pub const MAX_EXACT_BITS: u32 = 1 << 16;

/// A row-sparse rational matrix: `rows[i]` lists (column, value) with strictly
/// increasing columns < n; the stored columns are row i's support.
#[derive(Clone, Debug, PartialEq)]
pub struct SparseRows {
    /// Number of columns (and rows).
    pub n: usize,
    /// The rows.
    pub rows: Vec<Vec<(usize, Rational)>>,
}

/// Why a [`SparseRows`] is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SparseRowsError {
    /// The number of rows is not n.
    #[error("has {rows} rows for n = {n}")]
    RowCount {
        /// The number of rows.
        rows: usize,
        /// The declared size.
        n: usize,
    },
    /// A stored column is not below n.
    #[error("row {row}: column {column} is not below n = {n}")]
    Column {
        /// The row.
        row: usize,
        /// The column.
        column: usize,
        /// The declared size.
        n: usize,
    },
    /// A row's columns are not strictly increasing.
    #[error("row {row}: columns must be strictly increasing")]
    Order {
        /// The row.
        row: usize,
    },
}

impl SparseRows {
    /// Checks the shape: n rows, columns < n, strictly increasing in each row.
    pub fn validate(&self) -> Result<(), SparseRowsError> {
        let n = self.n;
        if self.rows.len() != n {
            return Err(SparseRowsError::RowCount {
                rows: self.rows.len(),
                n,
            });
        }
        for (row, r) in self.rows.iter().enumerate() {
            for (q, &(column, _)) in r.iter().enumerate() {
                if column >= n {
                    return Err(SparseRowsError::Column { row, column, n });
                }
                if q > 0 && r[q - 1].0 >= column {
                    return Err(SparseRowsError::Order { row });
                }
            }
        }
        Ok(())
    }
}

/// A named datum of a certificate.
#[derive(Clone, Debug, PartialEq)]
pub enum Datum {
    /// A ±1 sign matrix.
    Signs(SignMatrix),
    /// A row-sparse rational matrix.
    Sparse(SparseRows),
    /// The exact initial data of the discrete map (D) in layer form, iterated by the
    /// kernel in outward-rounded intervals (see the `layer` section below).
    Layer(crate::layer_data::LayerData),
    /// The attention weights of a trained model, exact ([`crate::weights`]).
    Attn(crate::weights::AttnWeights),
}

/// Named data.
pub type Data = BTreeMap<String, Datum>;

/// A value: exact while possible, else an outward interval, or undefined.
#[derive(Clone, Debug)]
enum Val {
    Q(Rational),
    I(Interval),
    /// The term may have no value: a partial operation (`ln`, `sqrt`, `/`, `pow` with
    /// a negative exponent) met an argument that is exactly outside its domain or
    /// whose enclosure touches or crosses the domain's edge. Every operation on it
    /// gives it again and every comparison on it is `Unknown`: a whole-line interval
    /// would not do, since `(abs t)`, `(min t 3)`, `(* 0 t)` or `(exp t)` of the whole
    /// line would still decide comparisons about a value that does not exist.
    Undef,
}

impl Val {
    /// The enclosure of a defined value; `Undef` gives the whole line (no
    /// information). Every operation checks for `Undef` before calling this, so
    /// the whole line only reaches [`eval_with`]'s output.
    fn iv(&self, p: u32) -> Interval {
        match self {
            Val::Q(q) => Interval::from_rational(p, q),
            Val::I(i) => i.clone(),
            Val::Undef => Interval::entire(p),
        }
    }
    fn is_undef(&self) -> bool {
        matches!(self, Val::Undef)
    }
    /// `Undef` from a partial operation's `None` (argument not inside its domain).
    fn checked(i: Option<Interval>) -> Val {
        i.map_or(Val::Undef, Val::I)
    }
    fn q(q: Rational, p: u32) -> Val {
        if q.numer().significant_bits() + q.denom().significant_bits() > MAX_EXACT_BITS {
            Val::I(Interval::from_rational(p, &q))
        } else {
            Val::Q(q)
        }
    }
}

struct Env<'a> {
    prec: u32,
    /// The bound variables, innermost last: a `forall`/`sum` variable's integer, a
    /// `let` variable's value (computed once per evaluation of its `let`).
    vars: Vec<(&'a str, Val)>,
    data: &'a Data,
    /// Memo of `sandwich-centred` (frequencies and values).
    sandwich: &'a sandwich::Memo,
    /// The literals, read once ([`Prepared`]).
    literals: &'a HashMap<usize, Val>,
    /// What exact arithmetic on big rationals has cost so far, and may cost
    /// ([`Env::charge`]).
    spent: u128,
    allowance: u128,
}

impl<'a> Env<'a> {
    /// Charges an exact operation on `x` and `y` to the work budget: their sizes are
    /// known only now, so a formula whose exact rationals grow (up to MAX_EXACT_BITS
    /// each, where they become intervals) stops with an error at the budget instead
    /// of running for hours. (a·b + (a + b)²)/64 units for operands of a and b limbs
    /// (products and the gcd of the result); nothing for small operands.
    fn charge(&mut self, offset: usize, x: &Rational, y: &Rational) -> Result<(), ExprError> {
        let (a, b) = (limbs(x), limbs(y));
        let cost = (a * b + (a + b) * (a + b)) / WORDS_PER_UNIT;
        if cost == 0 {
            return Ok(());
        }
        self.spent = self.spent.saturating_add(cost);
        if self.spent > self.allowance {
            return err(
                offset,
                format!(
                    "exact arithmetic on rationals of up to {} limbs would exceed the work budget: \
                     the limit is {MAX_WORK}",
                    a.max(b)
                ),
            );
        }
        Ok(())
    }

    fn lookup(&self, name: &str) -> Option<&Val> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }
}

fn int_atom(e: &Sexp) -> Result<i64, ExprError> {
    match e {
        Sexp::Atom(a, o) => a
            .parse::<i64>()
            .or_else(|_| err(*o, format!("`{a}` is not an integer"))),
        Sexp::List(_, o) => err(*o, "expected an integer literal"),
    }
}

fn var_name(e: &Sexp) -> Result<&str, ExprError> {
    match e {
        Sexp::Atom(a, o)
            if a.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && a != "pi" =>
        {
            let _ = o;
            Ok(a)
        }
        _ => err(e.offset(), "expected a variable name"),
    }
}

/// Every operator of the grammar (formulas, terms, data operations, building blocks):
/// a `let` may not bind one of these names.
const OPERATORS: &[&str] = &[
    "<",
    "<=",
    ">",
    ">=",
    "=",
    "and",
    "not",
    "forall",
    "let",
    "+",
    "*",
    "-",
    "neg",
    "/",
    "exp",
    "ln",
    "sqrt",
    "sin",
    "cos",
    "abs",
    "pow",
    "min",
    "max",
    "ceil",
    "floor",
    "sum",
    "rows",
    "cols",
    "gram-max-abs",
    "err-max",
    "lemma-a",
    "lemma-b",
    "lemma-a-row",
    "lemma-b-row",
    "row-sum-max",
    "row-nnz-max",
    "entry-min",
    "entry-max",
    "entry-sum",
    "sandwich-centred",
    "band-reach",
    "band-reach-count",
    "layer-max-sqnorm",
    "layer-max-sqdist",
    "layer-partition",
    "layer-dual-sup",
    "layer-dual-inf",
    "layer-v-frob2",
    "layer-qk-frob2",
    "layer-dt",
    "attn-ln-bound",
    "attn-logit-range",
    "alibi-slope",
    "alibi-tail",
    "alibi-window",
    "union-bound-dim",
];

/// The variable of `(let VAR t body)`: a variable name ([`var_name`]) that is not an
/// operator's, or a fresh `#…` name of a building block's expansion (the reader
/// refuses `#` in what a user writes, [`blocks::expand`]).
fn let_var(e: &Sexp) -> Result<&str, ExprError> {
    if let Sexp::Atom(a, _) = e {
        if a.starts_with('#') {
            return Ok(a);
        }
        if OPERATORS.contains(&a.as_str()) {
            return err(
                e.offset(),
                format!("`let` cannot bind `{a}`: it is an operator's name"),
            );
        }
    }
    var_name(e).or_else(|_| {
        err(
            e.offset(),
            "`let` binds a variable name (a letter first, not `pi`)",
        )
    })
}

fn range(items: &[Sexp], o: usize) -> Result<(i64, i64), ExprError> {
    let lo = int_atom(&items[2])?;
    let hi = int_atom(&items[3])?;
    if hi < lo {
        return err(
            o,
            format!("range {lo}..{hi} is empty (a reversed range would make the formula vacuous)"),
        );
    }
    if hi.saturating_sub(lo) > MAX_RANGE {
        return err(o, format!("range {lo}..{hi} is longer than {MAX_RANGE}"));
    }
    Ok((lo, hi))
}

/// The datum named by `e`, with its name (evaluation and [`validate`] read data
/// through these).
fn named<'s, 'a>(e: &'s Sexp, data: &'a Data) -> Result<(&'s str, &'a Datum), ExprError> {
    match e {
        Sexp::Atom(a, o) => match data.get(a) {
            Some(d) => Ok((a, d)),
            None => err(*o, format!("no datum named `{a}` in the certificate")),
        },
        Sexp::List(_, o) => err(*o, "expected the name of a datum"),
    }
}

fn datum<'a>(e: &Sexp, data: &'a Data) -> Result<&'a Datum, ExprError> {
    named(e, data).map(|(_, d)| d)
}

fn signs_named<'s, 'a>(
    e: &'s Sexp,
    data: &'a Data,
) -> Result<(&'s str, &'a SignMatrix), ExprError> {
    match named(e, data)? {
        (a, Datum::Signs(s)) => Ok((a, s)),
        _ => err(e.offset(), "expected a sign matrix"),
    }
}

fn signs<'a>(e: &Sexp, data: &'a Data) -> Result<&'a SignMatrix, ExprError> {
    signs_named(e, data).map(|(_, s)| s)
}

fn sparse_named<'s, 'a>(
    e: &'s Sexp,
    data: &'a Data,
) -> Result<(&'s str, &'a SparseRows), ExprError> {
    match named(e, data)? {
        (a, Datum::Sparse(b)) => Ok((a, b)),
        _ => err(e.offset(), "expected a row-sparse rational matrix"),
    }
}

fn sparse<'a>(e: &Sexp, data: &'a Data) -> Result<&'a SparseRows, ExprError> {
    sparse_named(e, data).map(|(_, b)| b)
}

fn max_opt(acc: &mut Option<Rational>, v: Rational) {
    if acc.as_ref().is_none_or(|a| v > *a) {
        *acc = Some(v);
    }
}

/// Per-row exact quantities of the lemma for row i of B against S: (max over
/// j, j' ∈ supp_i of |E_ij − E_ij'|, max over j ∉ supp_i, j' ∈ supp_i of
/// Λ_ij − Λ_ij' (None when supp_i is empty or everything), max_j |E_ij|).
fn lemma_row(s: &SignMatrix, row: &[(usize, Rational)]) -> (Rational, Option<Rational>, Rational) {
    let n = s.n();
    let d = s.d() as i64;
    if row.is_empty() {
        return (Rational::new(), None, Rational::new());
    }
    // common denominator: integer numerators a_l = B_il · D
    let mut den = Integer::from(1);
    for (_, v) in row {
        den.lcm_mut(v.denom());
    }
    let nums: Vec<Integer> = row
        .iter()
        .map(|(_, v)| v.numer() * Integer::from(&den / v.denom()))
        .collect();
    let small: Option<Vec<i64>> = nums.iter().map(|a| a.to_i64()).collect();
    // d·D·E_ij = Σ_{l ∈ supp, l ≠ j} a_l G_lj ; d·D·Λ_ij = Σ_l a_l G_lj
    let lam = |j: usize| -> Integer {
        match &small {
            Some(a) => {
                let mut acc: i128 = 0;
                for (q, (l, _)) in row.iter().enumerate() {
                    acc += a[q] as i128 * s.inner(*l, j) as i128;
                }
                Integer::from(acc)
            }
            None => {
                let mut acc = Integer::new();
                for (q, (l, _)) in row.iter().enumerate() {
                    acc += Integer::from(&nums[q] * s.inner(*l, j));
                }
                acc
            }
        }
    };
    let scale = Integer::from(&den * d);
    let in_supp = |j: usize| row.binary_search_by_key(&j, |(c, _)| *c);
    // on the support: E numerators and Λ numerators
    let mut e_supp = Vec::with_capacity(row.len());
    let mut lam_min: Option<Integer> = None;
    for (q, (j, _)) in row.iter().enumerate() {
        let lj = lam(*j);
        let ej = &lj - Integer::from(&nums[q] * d);
        if lam_min.as_ref().is_none_or(|m| lj < *m) {
            lam_min = Some(lj.clone());
        }
        e_supp.push(ej);
    }
    let emax = e_supp.iter().max().expect("nonempty").clone();
    let emin = e_supp.iter().min().expect("nonempty").clone();
    let a = Rational::from((Integer::from(&emax - &emin), scale.clone()));
    let mut abs_e = e_supp
        .iter()
        .map(|e| e.clone().abs())
        .max()
        .expect("nonempty");
    let mut lam_out: Option<Integer> = None;
    for j in 0..n {
        if in_supp(j).is_ok() {
            continue;
        }
        let lj = lam(j);
        let aj = lj.clone().abs();
        if aj > abs_e {
            abs_e = aj;
        }
        if lam_out.as_ref().is_none_or(|m| lj > *m) {
            lam_out = Some(lj);
        }
    }
    let b = lam_out.map(|lo| Rational::from((lo - lam_min.expect("nonempty"), scale.clone())));
    (a, b, Rational::from((abs_e, scale)))
}

fn row_sum(row: &[(usize, Rational)]) -> Rational {
    row.iter().fold(Rational::new(), |acc, (_, v)| acc + v)
}

fn data_op<'a>(
    op: &str,
    args: &'a [Sexp],
    o: usize,
    env: &mut Env<'a>,
) -> Result<Option<Val>, ExprError> {
    let arity = |n: usize| -> Result<(), ExprError> {
        if args.len() == n {
            Ok(())
        } else {
            err(
                o,
                format!("`{op}` takes {n} argument(s), got {}", args.len()),
            )
        }
    };
    if let Some(v) = layer_op(op, args, o, env)? {
        return Ok(Some(v));
    }
    if let Some(v) = attn_op(op, args, o, env)? {
        return Ok(Some(v));
    }
    let v = match op {
        "rows" => {
            arity(1)?;
            Rational::from(match datum(&args[0], env.data)? {
                Datum::Signs(s) => s.n(),
                Datum::Sparse(b) => b.n,
                Datum::Layer(_) => return err(o, "`rows` of a layer datum: use its operations"),
                Datum::Attn(_) => {
                    return err(o, "`rows` of attention weights: use their operations")
                }
            })
        }
        "cols" => {
            arity(1)?;
            Rational::from(signs(&args[0], env.data)?.d())
        }
        "gram-max-abs" => {
            arity(1)?;
            let s = signs(&args[0], env.data)?;
            Rational::from(s.max_abs_offdiag().map_or(0, |(m, _)| m))
        }
        "row-sum-max" | "row-nnz-max" | "entry-min" | "entry-max" | "entry-sum" => {
            arity(1)?;
            let b = sparse(&args[0], env.data)?;
            let mut acc: Option<Rational> = None;
            match op {
                "row-sum-max" => b.rows.iter().for_each(|r| max_opt(&mut acc, row_sum(r))),
                "row-nnz-max" => b
                    .rows
                    .iter()
                    .for_each(|r| max_opt(&mut acc, Rational::from(r.len()))),
                "entry-sum" => acc = Some(b.rows.iter().map(|r| row_sum(r)).sum()),
                _ => {
                    for (_, v) in b.rows.iter().flatten() {
                        let better = match &acc {
                            None => true,
                            Some(a) if op == "entry-min" => v < a,
                            Some(a) => v > a,
                        };
                        if better {
                            acc = Some(v.clone());
                        }
                    }
                }
            }
            match acc {
                Some(v) => v,
                None => return err(o, format!("`{op}` of a matrix with no entry")),
            }
        }
        "err-max" | "lemma-a" | "lemma-b" | "lemma-a-row" | "lemma-b-row" => {
            let with_t = op.ends_with("-row");
            arity(if with_t { 3 } else { 2 })?;
            let s = signs(&args[0], env.data)?;
            let b = sparse(&args[1], env.data)?;
            if s.d() == 0 {
                // Λ and E divide by d (a certificate's sign matrix has d ≥ 1)
                return err(o, format!("`{op}`: S has no columns"));
            }
            if s.n() != b.n {
                return err(
                    o,
                    format!("`{op}`: S has {} rows but B has n = {}", s.n(), b.n),
                );
            }
            let t = if with_t {
                match term(&args[2], env)? {
                    Val::Q(q) => Some(q),
                    _ => return err(args[2].offset(), "t must be an exact rational"),
                }
            } else {
                None
            };
            use rayon::prelude::*;
            let per_row: Vec<(Rational, Option<Rational>, Rational, Rational)> = b
                .rows
                .par_iter()
                .map(|r| {
                    let (a, bb, e) = lemma_row(s, r);
                    (a, bb, e, row_sum(r))
                })
                .collect();
            let mut acc: Option<Rational> = None;
            for (a, bb, e, rs) in per_row {
                let slack = t.as_ref().map(|t| Rational::from(2 * t) * &rs);
                match op {
                    "err-max" => max_opt(&mut acc, e),
                    "lemma-a" => max_opt(&mut acc, a),
                    "lemma-a-row" => max_opt(&mut acc, a - slack.expect("t")),
                    "lemma-b" => {
                        if let Some(bb) = bb {
                            max_opt(&mut acc, bb)
                        }
                    }
                    _ => {
                        if let Some(bb) = bb {
                            max_opt(&mut acc, bb - slack.expect("t"))
                        }
                    }
                }
            }
            match acc {
                Some(v) => v,
                None => return err(o, format!("`{op}`: no (i, j, j') triple to maximise over")),
            }
        }
        "sandwich-centred" => {
            arity(3)?;
            let dbar = int_atom(&args[0])?;
            let first = int_atom(&args[1])?;
            let r = match term(&args[2], env)? {
                Val::Q(q) if q.denom() == &1 => q.numer().to_i64().ok_or_else(|| ExprError {
                    offset: args[2].offset(),
                    reason: "r out of range".into(),
                })?,
                _ => {
                    return err(
                        args[2].offset(),
                        "`sandwich-centred` takes an exact integer r",
                    )
                }
            };
            let (dbar, first) = sandwich::check_args(dbar, first).map_err(|reason| ExprError {
                offset: o,
                reason: format!("`sandwich-centred`: {reason}"),
            })?;
            if r == 0 {
                // every term is cos(0) − 1 = 0 exactly
                Rational::new()
            } else {
                let p = env.prec;
                return Ok(Some(Val::I(env.sandwich.centred(dbar, first, r, p))));
            }
        }
        "band-reach" | "band-reach-count" => {
            arity(3)?;
            let mut int = |k: usize| -> Result<i64, ExprError> {
                match term(&args[k], env)? {
                    Val::Q(q) if q.denom() == &1 => q.numer().to_i64().ok_or_else(|| ExprError {
                        offset: args[k].offset(),
                        reason: "integer out of range".into(),
                    }),
                    _ => err(args[k].offset(), format!("`{op}` takes exact integers")),
                }
            };
            let (len, d, layers) = (int(0)?, int(1)?, int(2)?);
            let (support, count) =
                positional_band::reach(len, d, layers).map_err(|reason| ExprError {
                    offset: o,
                    reason: format!("`{op}`: {reason}"),
                })?;
            Rational::from(if op == "band-reach" { support } else { count })
        }
        _ => return Ok(None),
    };
    Ok(Some(Val::Q(v)))
}

// ----- positional group: the centred Sandwich bias -----
//
// `(sandwich-centred D F r)`, for integer literals D (even, 2 ≤ D ≤ 4096) and F ∈ {0, 1}
// and a term r that evaluates to an exact integer:
//
//     B̃(r) = Σ_{i=F}^{F + D/2 − 1} (cos(r·ω_i) − 1),   ω_i = 10000^{−2i/D} = exp(−(2i/D)·ln 10⁴),
//
// the centred Sandwich bias with index set I from F (positional.md §1). Proof sketch:
// each ω_i is the outward enclosure exp(−(2i/D)·ln 10000) of the kernel's interval
// functions; r·ω_i, its cosine and the sum are outward-rounded interval operations, so
// the result encloses B̃(r). r = 0 gives exactly 0 (cos 0 = 1). The enclosures of ω_i
// and of B̃(r) are kept for the rest of one formula's evaluation (same precision, same
// values: a memo, not an approximation). Cost: D/2 cosines per new r (counted in
// [`work`]).
/// The centred Sandwich bias, shared by the kernel's data operation and the claims
/// that present it (one formula).
pub mod sandwich {
    use super::Interval;
    use rug::Rational;
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    /// Why (D, F) of `(sandwich-centred D F r)` is out of range.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
    pub enum ArgsError {
        /// D is odd or outside 2..=4096.
        #[error("d̄ must be even with 2 ≤ d̄ ≤ 4096 (got {0})")]
        Dbar(i64),
        /// F is neither 0 nor 1.
        #[error("the index set starts at 0 or 1 (got {0})")]
        First(i64),
    }

    /// Validates (D, F) of `(sandwich-centred D F r)`.
    pub fn check_args(dbar: i64, first: i64) -> Result<(u32, u32), ArgsError> {
        if !(2..=4096).contains(&dbar) || dbar % 2 != 0 {
            return Err(ArgsError::Dbar(dbar));
        }
        if !(0..=1).contains(&first) {
            return Err(ArgsError::First(first));
        }
        Ok((dbar as u32, first as u32))
    }

    /// Enclosures of ω_i = exp(−(2i/D)·ln 10⁴) for i = F, …, F + D/2 − 1.
    pub fn freqs(dbar: u32, first: u32, prec: u32) -> Vec<Interval> {
        let ln1e4 = Interval::from_i64(prec, 10_000).ln();
        (first..first + dbar / 2)
            .map(|i| {
                let e = Rational::from((2 * i64::from(i), i64::from(dbar)));
                -&(&Interval::from_rational(prec, &e) * &ln1e4)
            })
            .map(|x| x.exp())
            .collect()
    }

    /// An enclosure of Σ_i (cos(r·ω_i) − 1) from the frequency enclosures.
    pub fn centred(r: i64, freqs: &[Interval]) -> Interval {
        let prec = freqs.first().map(Interval::prec).unwrap_or(128);
        let rr = Interval::from_i64(prec, r);
        let one = Interval::one(prec);
        let mut acc = Interval::zero(prec);
        for w in freqs {
            acc.add_assign(&(&(&rr * w).cos() - &one));
        }
        acc
    }

    /// The most B̃ values kept in one memo (bounds its memory).
    const MEMO_VALUES: usize = 1 << 18;

    #[derive(Default)]
    struct Inner {
        freqs: HashMap<(u32, u32, u32), Arc<Vec<Interval>>>,
        values: HashMap<(u32, u32, u32, i64), Interval>,
    }

    /// Frequencies and values computed so far, keyed by (d̄, F, precision[, r]); shared
    /// by the obligations of one statement (the values are the same whoever computes
    /// them, so sharing changes no result).
    #[derive(Default)]
    pub struct Memo {
        inner: Mutex<Inner>,
    }

    impl Memo {
        fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
            self.inner.lock().unwrap_or_else(|e| e.into_inner())
        }

        pub(super) fn centred(&self, dbar: u32, first: u32, r: i64, prec: u32) -> Interval {
            let f = {
                let mut g = self.lock();
                if let Some(v) = g.values.get(&(dbar, first, prec, r)) {
                    return v.clone();
                }
                g.freqs
                    .entry((dbar, first, prec))
                    .or_insert_with(|| Arc::new(freqs(dbar, first, prec)))
                    .clone()
            };
            let v = centred(r, &f);
            let mut g = self.lock();
            if g.values.len() < MEMO_VALUES {
                g.values.insert((dbar, first, prec, r), v.clone());
            }
            v
        }
    }
}

// ----- positional group: band reachability (windowed attention) -----
//
// `(band-reach L d l)` and `(band-reach-count L d l)`, for exact integers
// 1 ≤ L ≤ 65536, 0 ≤ d, 1 ≤ l ≤ 256 with l·L·min(d + 1, L) ≤ 2^32: let A be the L × L
// boolean matrix A[i][j] = 1 iff 0 ≤ i − j ≤ d (causal attention with a window
// of d + 1 tokens, −∞ bias outside) and v = e_{L−1} Aˡ (boolean products). Then
// `band-reach` is the largest r with v[L − 1 − r] = 1 (the last query's receptive
// field after l layers), and `band-reach-count` the number of j with v[j] = 1.
// Computed exactly on bitsets; no property of the band (such as the closed form
// min(l·d, L − 1)) is assumed.
mod positional_band {
    /// Why (L, d, l) of `band-reach` is out of range.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
    pub(super) enum ReachError {
        /// L, d or l is outside its domain.
        #[error(
            "needs 1 ≤ L ≤ 65536, d ≥ 0 and 1 ≤ l ≤ 256 (got L = {len}, d = {d}, l = {layers})"
        )]
        Domain { len: i64, d: i64, layers: i64 },
        /// The work l·L·min(d + 1, L) is over its bound.
        #[error("l·L·min(d + 1, L) exceeds 2^32")]
        Work,
    }

    /// (support, count) of e_{L−1} Aˡ; `Err` with the reason when out of range.
    pub(super) fn reach(len: i64, d: i64, layers: i64) -> Result<(u64, u64), ReachError> {
        if !(1..=65_536).contains(&len) || d < 0 || !(1..=256).contains(&layers) {
            return Err(ReachError::Domain { len, d, layers });
        }
        let n = len as usize;
        let words = n.div_ceil(64);
        let width = (d as u128 + 1).min(n as u128);
        if (layers as u128) * (n as u128) * width > 1 << 32 {
            return Err(ReachError::Work);
        }
        let get = |v: &[u64], j: usize| v[j / 64] >> (j % 64) & 1 == 1;
        let mut v = vec![0u64; words];
        v[(n - 1) / 64] |= 1 << ((n - 1) % 64);
        for _ in 0..layers {
            // (v A)[j] = OR over i with v[i] of A[i][j]
            let mut next = vec![0u64; words];
            for i in (0..n).filter(|&i| get(&v, i)) {
                let lo = i.saturating_sub(d.min(len) as usize);
                for j in lo..=i {
                    next[j / 64] |= 1 << (j % 64);
                }
            }
            v = next;
        }
        let first = (0..n).find(|&j| get(&v, j)).unwrap_or(n - 1);
        let count = v.iter().map(|w| u64::from(w.count_ones())).sum();
        Ok(((n - 1 - first) as u64, count))
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn band_reach_by_hand() {
            // L = 5, d = 1: the last row of A is {3, 4}, of A² {2, 3, 4}
            assert_eq!(super::reach(5, 1, 1), Ok((1, 2)));
            assert_eq!(super::reach(5, 1, 2), Ok((2, 3)));
            assert_eq!(super::reach(5, 3, 2), Ok((4, 5)));
            assert_eq!(super::reach(5, 0, 7), Ok((0, 1)));
            assert!(super::reach(0, 1, 1).is_err());
        }
    }
}

// ───── BEGIN `layer` data operations (clusters group; docs/design.md "Dynamics claims bring their own data
// operations") ─────

/// The operations on a `layer` datum X ([`crate::layer_data::LayerData`]:
/// exact Q, K ∈ ℚ^{m×d}, V ∈ ℚ^{d×d}, Δt > 0, K steps and runs r = 0..R−1 of initial
/// tokens x^{(r),0} ∈ ℚ^{n×d}, all iterated by x_i^{k+1} = x_i^k + Δt V Σ_j P_ij(x^k) x_j^k,
/// P_ij(x) = softmax_j x_iᵀ(QᵀK)x_j). Arguments r, s, k are terms that must evaluate to
/// exact integers (0 ≤ r, s < R, 0 ≤ k ≤ K), else an evaluation error.
///
/// - `(layer-max-sqnorm X r k)`: an outward enclosure of max_i ‖x_i^{(r),k}‖² (the
///   kernel's interval iteration at the evaluation precision);
/// - `(layer-max-sqdist X r s k)`: an outward enclosure of
///   max_i ‖x_i^{(r),k} − x_i^{(s),k}‖² (r ≠ s: two initial configurations, one map);
/// - `(layer-partition X r k)`: an outward enclosure of Σ_i Σ_j e^{⟨Q x_i^{(r),k}, K x_j^{(r),k}⟩}
///   (the sum of the softmax denominators; clusters/collapse's Lyapunov function 𝓛 when
///   Q = K = I), traced by its own iteration of the map ([`crate::layer_data::Traced`]);
/// - `(layer-dual-sup X r k lo hi i)`, `(layer-dual-inf X r k lo hi i)`: outward
///   enclosures of sup (inf) over λ ∈ [lo, hi] of max_j |a_i(λ)·x_j^{(r),k}|, where
///   a_i(λ) is row i of adj(V − λI) (a left eigenvector of V, or 0, when λ is an
///   eigenvalue). lo, hi must evaluate to exact rationals with lo ≤ hi and i to an
///   exact integer in 0..d (d ≤ 16); traced by their own iteration per (lo, hi, i)
///   ([`crate::layer_dual`] has the enclosure argument);
/// - `(layer-v-frob2 X)`: ‖V‖_F² = Σ_ab V_ab², exact;
/// - `(layer-qk-frob2 X)`: ‖QᵀK‖_F² = Σ_ab (QᵀK)_ab², exact;
/// - `(layer-dt X)`: Δt, exact.
///
/// `None` when `op` is not one of these.
fn layer_op<'a>(
    op: &str,
    args: &'a [Sexp],
    o: usize,
    env: &mut Env<'a>,
) -> Result<Option<Val>, ExprError> {
    let arity = match op {
        "layer-max-sqnorm" | "layer-partition" => 3,
        "layer-max-sqdist" => 4,
        "layer-dual-sup" | "layer-dual-inf" => 6,
        "layer-v-frob2" | "layer-qk-frob2" | "layer-dt" => 1,
        _ => return Ok(None),
    };
    if args.len() != arity {
        return err(
            o,
            format!("`{op}` takes {arity} argument(s), got {}", args.len()),
        );
    }
    let Datum::Layer(x) = datum(&args[0], env.data)? else {
        return err(args[0].offset(), "expected a layer datum");
    };
    let index = |e: &'a Sexp, env: &mut Env<'a>| -> Result<Rational, ExprError> {
        match term(e, env)? {
            Val::Q(q) => Ok(q),
            _ => err(e.offset(), "a run or step index must be an exact integer"),
        }
    };
    let p = env.prec;
    let at = |r: Result<Interval, crate::layer_data::QueryError>| {
        r.or_else(|reason| err(o, format!("`{op}`: {reason}")))
    };
    Ok(Some(match op {
        "layer-max-sqnorm" => {
            let (r, k) = (index(&args[1], env)?, index(&args[2], env)?);
            Val::I(at(x.max_sqnorm(p, &r, &k))?)
        }
        "layer-partition" => {
            let (r, k) = (index(&args[1], env)?, index(&args[2], env)?);
            Val::I(at(x.partition(p, &r, &k))?)
        }
        "layer-dual-sup" | "layer-dual-inf" => {
            let (r, k) = (index(&args[1], env)?, index(&args[2], env)?);
            let mut exact = |e: &'a Sexp, what: &str| -> Result<Rational, ExprError> {
                match term(e, env)? {
                    Val::Q(q) => Ok(q),
                    _ => err(e.offset(), format!("`{op}`: {what} must be exact")),
                }
            };
            let lo = exact(&args[3], "lo (an exact rational)")?;
            let hi = exact(&args[4], "hi (an exact rational)")?;
            let i = exact(&args[5], "the row i (an exact integer)")?;
            Val::I(at(x.dual(p, &r, &k, &lo, &hi, &i, op == "layer-dual-sup"))?)
        }
        "layer-max-sqdist" => {
            let r = index(&args[1], env)?;
            let s = index(&args[2], env)?;
            let k = index(&args[3], env)?;
            Val::I(at(x.max_sqdist(p, &r, &s, &k))?)
        }
        "layer-v-frob2" => Val::q(x.v_frob2(), p),
        "layer-qk-frob2" => Val::q(x.qk_frob2(), p),
        _ => Val::q(x.dt().clone(), p),
    }))
}

// ───── END `layer` data operations ─────

// ───── BEGIN `attn-weights` data operations (trained-model claims; crate::weights) ─────

/// The operations on an `attn-weights` datum W ([`crate::weights::AttnWeights`]); the
/// arguments l (layer) and h (head) are terms that must evaluate to exact integers in
/// range, else an evaluation error:
/// - `(attn-ln-bound W l)`: an outward enclosure of B_l = √d·max|γ| + ‖β‖₂;
/// - `(attn-logit-range W l h)`: an outward enclosure of
///   Δ̄_lh = 2·(N(W_Q^h)B_l + ‖b_Q^h‖)(N(W_K^h)B_l + ‖b_K^h‖)/√d_h, an upper bound on the
///   range of head h's content logits in layer l over all inputs.
///
/// `None` when `op` is not one of these.
fn attn_op<'a>(
    op: &str,
    args: &'a [Sexp],
    o: usize,
    env: &mut Env<'a>,
) -> Result<Option<Val>, ExprError> {
    let Some(aop) = tree::AttnOp::of(op) else {
        return Ok(None);
    };
    if args.len() != aop.arity() {
        return err(
            o,
            format!(
                "`{op}` takes {} argument(s), got {}",
                aop.arity(),
                args.len()
            ),
        );
    }
    let Datum::Attn(x) = datum(&args[0], env.data)? else {
        return err(args[0].offset(), "expected an attention-weights datum");
    };
    let mut idx = Vec::new();
    for e in &args[1..] {
        match term(e, env)? {
            Val::Q(q) => idx.push(q),
            _ => return err(e.offset(), "a layer or head index must be an exact integer"),
        }
    }
    let p = env.prec;
    let v = match aop {
        tree::AttnOp::LnBound => x.ln_bound(p, &idx[0]),
        tree::AttnOp::LogitRange => x.logit_range(p, &idx[0], &idx[1]),
    };
    v.map(|i| Some(Val::I(i)))
        .or_else(|reason| err(o, format!("`{op}`: {reason}")))
}

// ───── END `attn-weights` data operations ─────

/// `⌈x⌉` (or `⌊x⌋`) of an enclosure. Both are monotone, so the images of the two
/// endpoints enclose the image. Rounding a p-bit float to an integer is exact in p
/// bits (it is the float itself, or an integer of magnitude ≤ 2^p), and ±∞ stay ±∞,
/// so an unbounded enclosure keeps its finite end. Exact (a rational) when both
/// ends land on one integer of at most [`MAX_EXACT_BITS`] bits; a huge one stays a
/// point interval rather than being expanded into an integer of 2^30 bits.
fn round_iv(x: &Interval, ceil: bool) -> Val {
    let f = |v: &rug::Float| {
        if ceil {
            v.clone().ceil()
        } else {
            v.clone().floor()
        }
    };
    let (lo, hi) = (f(x.lo()), f(x.hi()));
    if lo == hi && lo.get_exp().is_none_or(|e| e <= MAX_EXACT_BITS as i32) {
        if let Some(i) = lo.to_integer() {
            return Val::Q(Rational::from(i));
        }
    }
    Val::I(Interval::from_endpoints(lo, hi))
}

fn term<'a>(e: &'a Sexp, env: &mut Env<'a>) -> Result<Val, ExprError> {
    let p = env.prec;
    match e {
        Sexp::Atom(a, o) => {
            if a == "pi" {
                return Ok(Val::I(Interval::pi(p)));
            }
            if let Some(v) = env.lookup(a) {
                return Ok(v.clone());
            }
            match env.literals.get(o) {
                Some(v) => Ok(v.clone()),
                None => err(
                    *o,
                    format!("`{a}` is neither a number nor a bound variable"),
                ),
            }
        }
        Sexp::List(items, o) => {
            let Some(Sexp::Atom(op, _)) = items.first() else {
                return err(*o, "expected an operator");
            };
            let args = &items[1..];
            if let Some(v) = data_op(op, args, *o, env)? {
                return Ok(v);
            }
            let arity = |n: usize| -> Result<(), ExprError> {
                if args.len() == n {
                    Ok(())
                } else {
                    err(
                        *o,
                        format!("`{op}` takes {n} argument(s), got {}", args.len()),
                    )
                }
            };
            match op.as_str() {
                "+" | "*" => {
                    if args.is_empty() {
                        return err(*o, format!("`{op}` needs arguments"));
                    }
                    let mut acc = term(&args[0], env)?;
                    for a in &args[1..] {
                        let x = term(a, env)?;
                        acc = match (acc, x) {
                            (Val::Undef, _) | (_, Val::Undef) => Val::Undef,
                            (Val::Q(a), Val::Q(b)) => {
                                env.charge(*o, &a, &b)?;
                                Val::q(if op == "+" { a + b } else { a * b }, p)
                            }
                            (a, b) => {
                                let (a, b) = (a.iv(p), b.iv(p));
                                Val::I(if op == "+" { &a + &b } else { &a * &b })
                            }
                        };
                    }
                    Ok(acc)
                }
                "-" | "neg" => {
                    if args.len() == 1 {
                        return Ok(match term(&args[0], env)? {
                            Val::Q(q) => Val::Q(-q),
                            Val::I(i) => Val::I(-i),
                            Val::Undef => Val::Undef,
                        });
                    }
                    if op == "neg" {
                        arity(1)?;
                    }
                    arity(2)?;
                    Ok(match (term(&args[0], env)?, term(&args[1], env)?) {
                        (Val::Undef, _) | (_, Val::Undef) => Val::Undef,
                        (Val::Q(a), Val::Q(b)) => {
                            env.charge(*o, &a, &b)?;
                            Val::q(a - b, p)
                        }
                        (a, b) => Val::I(&a.iv(p) - &b.iv(p)),
                    })
                }
                "/" => {
                    arity(2)?;
                    Ok(match (term(&args[0], env)?, term(&args[1], env)?) {
                        (Val::Undef, _) | (_, Val::Undef) => Val::Undef,
                        // a/0 is undefined; checked_div refuses a divisor enclosure ∋ 0
                        (_, Val::Q(b)) if b == 0 => Val::Undef,
                        (Val::Q(a), Val::Q(b)) => {
                            env.charge(*o, &a, &b)?;
                            Val::q(a / b, p)
                        }
                        (a, b) => Val::checked(a.iv(p).checked_div(&b.iv(p))),
                    })
                }
                "exp" | "ln" | "sqrt" | "sin" | "cos" => {
                    arity(1)?;
                    let x = term(&args[0], env)?;
                    // exact arguments outside the domain (ln q for q ≤ 0, √q for q < 0)
                    let outside = match &x {
                        Val::Undef => true,
                        Val::Q(q) => (op == "ln" && *q <= 0) || (op == "sqrt" && *q < 0),
                        Val::I(_) => false,
                    };
                    if outside {
                        return Ok(Val::Undef);
                    }
                    let x = x.iv(p);
                    Ok(match op.as_str() {
                        "exp" => Val::I(x.exp()),
                        "ln" => Val::checked(x.checked_ln()),
                        "sqrt" => Val::checked(x.checked_sqrt()),
                        "sin" => Val::I(x.sin()),
                        _ => Val::I(x.cos()),
                    })
                }
                "abs" => {
                    arity(1)?;
                    Ok(match term(&args[0], env)? {
                        Val::Q(q) => Val::Q(q.abs()),
                        Val::I(i) => Val::I(i.abs()),
                        Val::Undef => Val::Undef,
                    })
                }
                "ceil" | "floor" => {
                    arity(1)?;
                    Ok(match term(&args[0], env)? {
                        Val::Q(q) => {
                            env.charge(*o, &q, &q)?;
                            Val::Q(if op == "ceil" { q.ceil() } else { q.floor() })
                        }
                        Val::I(i) => round_iv(&i, op == "ceil"),
                        Val::Undef => Val::Undef,
                    })
                }
                "min" | "max" => {
                    arity(2)?;
                    let a = term(&args[0], env)?;
                    let b = term(&args[1], env)?;
                    Ok(match (a, b) {
                        (Val::Undef, _) | (_, Val::Undef) => Val::Undef,
                        (Val::Q(a), Val::Q(b)) => {
                            env.charge(*o, &a, &b)?;
                            Val::Q(if (op == "min") == (a < b) { a } else { b })
                        }
                        (a, b) => {
                            let (a, b) = (a.iv(p), b.iv(p));
                            Val::I(if op == "min" { a.min(&b) } else { a.max(&b) })
                        }
                    })
                }
                "pow" => {
                    arity(2)?;
                    let n = int_atom(&args[1])?;
                    let n = i32::try_from(n)
                        .or_else(|_| err(args[1].offset(), "exponent too large"))?;
                    Ok(match term(&args[0], env)? {
                        Val::Undef => Val::Undef,
                        // 0ⁿ for n < 0 is 1/0: undefined
                        Val::Q(q) if q == 0 && n < 0 => Val::Undef,
                        Val::Q(q)
                            if u64::from(n.unsigned_abs())
                                * u64::from(
                                    q.numer().significant_bits() + q.denom().significant_bits(),
                                )
                                <= u64::from(MAX_EXACT_BITS) =>
                        {
                            let r = if n >= 0 {
                                Rational::from(rug::ops::Pow::pow(&q, n.unsigned_abs()))
                            } else {
                                Rational::from(rug::ops::Pow::pow(&q.recip(), n.unsigned_abs()))
                            };
                            env.charge(*o, &r, &r)?;
                            Val::Q(r)
                        }
                        x => Val::checked(x.iv(p).checked_powi(n)),
                    })
                }
                "let" => {
                    // (let v t body): t evaluated once, body with v bound to its value
                    arity(3)?;
                    let v = let_var(&args[0])?;
                    let x = term(&args[1], env)?;
                    env.vars.push((v, x));
                    let r = term(&args[2], env);
                    env.vars.pop();
                    r
                }
                "sum" => {
                    arity(4)?;
                    let v = var_name(&args[0])?;
                    let (lo, hi) = range(items, *o)?;
                    let mut acc = Val::Q(Rational::new());
                    for k in lo..=hi {
                        env.vars.push((v, Val::Q(Rational::from(k))));
                        let x = term(&args[3], env);
                        env.vars.pop();
                        acc = match (acc, x?) {
                            (Val::Undef, _) | (_, Val::Undef) => Val::Undef,
                            (Val::Q(a), Val::Q(b)) => {
                                env.charge(*o, &a, &b)?;
                                Val::q(a + b, p)
                            }
                            (a, b) => {
                                let mut a = a.iv(p);
                                a.add_assign(&b.iv(p));
                                Val::I(a)
                            }
                        };
                    }
                    Ok(acc)
                }
                _ => err(*o, format!("unknown operator `{op}` in a term")),
            }
        }
    }
}

fn compare(op: &str, a: Val, b: Val, p: u32) -> Certainty {
    if a.is_undef() || b.is_undef() {
        // a comparison on a value that may not exist decides nothing
        return Certainty::Unknown;
    }
    if let (Val::Q(a), Val::Q(b)) = (&a, &b) {
        return Certainty::exact(match op {
            "<" => a < b,
            "<=" => a <= b,
            ">" => a > b,
            ">=" => a >= b,
            _ => a == b,
        });
    }
    let (a, b) = (a.iv(p), b.iv(p));
    match op {
        "<" => a.lt(&b),
        "<=" => a.le(&b),
        ">" => a.gt(&b),
        ">=" => a.ge(&b),
        _ => a.eq_exact(&b),
    }
}

fn formula<'a>(e: &'a Sexp, env: &mut Env<'a>) -> Result<Certainty, ExprError> {
    let Sexp::List(items, o) = e else {
        return err(e.offset(), "expected a formula such as (<= a b)");
    };
    let Some(Sexp::Atom(op, _)) = items.first() else {
        return err(*o, "expected an operator");
    };
    let args = &items[1..];
    match op.as_str() {
        "<" | "<=" | ">" | ">=" | "=" => {
            if args.len() != 2 {
                return err(*o, format!("`{op}` takes 2 arguments"));
            }
            let a = term(&args[0], env)?;
            let b = term(&args[1], env)?;
            if let (Val::Q(x), Val::Q(y)) = (&a, &b) {
                env.charge(*o, x, y)?;
            }
            Ok(compare(op, a, b, env.prec))
        }
        "and" => {
            let mut acc = Certainty::True;
            for a in args {
                acc = acc.and(formula(a, env)?);
                if acc == Certainty::False {
                    break;
                }
            }
            Ok(acc)
        }
        "not" => {
            if args.len() != 1 {
                return err(*o, "`not` takes 1 argument");
            }
            Ok(!formula(&args[0], env)?)
        }
        "let" => {
            if args.len() != 3 {
                return err(*o, "`let` takes a variable, a term and a formula");
            }
            let v = let_var(&args[0])?;
            let x = term(&args[1], env)?;
            env.vars.push((v, x));
            let r = formula(&args[2], env);
            env.vars.pop();
            r
        }
        "forall" => {
            if args.len() != 4 {
                return err(
                    *o,
                    "`forall` takes a variable, two integer bounds and a formula",
                );
            }
            let v = var_name(&args[0])?;
            let (lo, hi) = range(items, *o)?;
            let mut acc = Certainty::True;
            for k in lo..=hi {
                env.vars.push((v, Val::Q(Rational::from(k))));
                let c = formula(&args[3], env);
                env.vars.pop();
                acc = acc.and(c?);
                if acc == Certainty::False {
                    break;
                }
            }
            Ok(acc)
        }
        _ => err(*o, format!("unknown operator `{op}` in a formula")),
    }
}

// ───── BEGIN validation without evaluation (the one grammar; used by the Coq translation) ─────

/// Checks a parsed formula against the grammar without evaluating anything: every
/// operator known and at its arity, binders named as variables, every range non-empty
/// and at most `MAX_RANGE` long, every atom `pi`, a bound variable or a literal the
/// kernel reads, every datum present and of the kind its operation takes (and, where
/// the data alone decide it, not empty). Both branches of an `and` and every body are
/// checked, so a formula the evaluator would reject is rejected whatever the values
/// (the evaluator stops a conjunction at its first false part). The kernel's entry
/// points run it before evaluating, and the Coq translation reads the tree it builds
/// ([`read`]), so the two read one grammar. What depends on values (an exact integer
/// argument, a non-empty maximum of the lemma quantities) is left to evaluation.
pub fn validate(e: &Sexp, data: &Data) -> Result<(), ExprError> {
    read(e, data).map(|_| ())
}

/// [`validate`], returning what it accepted as a typed tree ([`tree::Formula`]):
/// the formula as the grammar reads it, for the Coq translation. Read-only: the tree
/// decides nothing.
pub fn read<'a>(e: &'a Sexp, data: &'a Data) -> Result<tree::Formula<'a>, ExprError> {
    Validator {
        data,
        scope: Vec::new(),
        literals: None,
    }
    .formula(e)
}

/// [`validate`] for a term (the argument of [`eval`], [`eval_exact`]).
pub fn validate_term(e: &Sexp, data: &Data) -> Result<(), ExprError> {
    Validator {
        data,
        scope: Vec::new(),
        literals: None,
    }
    .term(e)
    .map(|_| ())
}

/// Parses `text` (depth, literal size and the work budget over `data` at 128 bits, as
/// [`check_with`]) and [`validate`]s it.
pub fn parse_valid(text: &str, data: &Data) -> Result<Sexp, ExprError> {
    let e = parse(text)?;
    let w = work_with(&e, data, 128);
    if w > MAX_WORK {
        return Err(budget_error(w));
    }
    validate(&e, data)?;
    Ok(e)
}

struct Validator<'a> {
    data: &'a Data,
    scope: Vec<&'a str>,
    /// The literals [`prepare`] has read, by offset: an atom is a literal when it is
    /// there (read by [`parse_rational`], once). `None`: ask [`parse_rational`].
    literals: Option<&'a HashMap<usize, Val>>,
}

impl<'a> Validator<'a> {
    fn bound(&mut self, items: &'a [Sexp], o: usize) -> Result<tree::Binder<'a>, ExprError> {
        let var = var_name(&items[1])?;
        let (lo, hi) = range(items, o)?;
        Ok(tree::Binder { var, lo, hi })
    }

    fn formula(&mut self, e: &'a Sexp) -> Result<tree::Formula<'a>, ExprError> {
        use tree::{Cmp, Formula};
        let Sexp::List(items, o) = e else {
            return err(e.offset(), "expected a formula such as (<= a b)");
        };
        let Some(Sexp::Atom(op, _)) = items.first() else {
            return err(*o, "expected an operator");
        };
        let args = &items[1..];
        match op.as_str() {
            "<" | "<=" | ">" | ">=" | "=" => {
                if args.len() != 2 {
                    return err(*o, format!("`{op}` takes 2 arguments"));
                }
                let c = match op.as_str() {
                    "<" => Cmp::Lt,
                    "<=" => Cmp::Le,
                    ">" => Cmp::Gt,
                    ">=" => Cmp::Ge,
                    _ => Cmp::Eq,
                };
                let a = self.term(&args[0])?;
                let b = self.term(&args[1])?;
                Ok(Formula::Cmp(c, a, b))
            }
            "and" => args
                .iter()
                .map(|a| self.formula(a))
                .collect::<Result<_, _>>()
                .map(Formula::And),
            "not" => {
                if args.len() != 1 {
                    return err(*o, "`not` takes 1 argument");
                }
                Ok(Formula::Not(Box::new(self.formula(&args[0])?)))
            }
            "forall" => {
                if args.len() != 4 {
                    return err(
                        *o,
                        "`forall` takes a variable, two integer bounds and a formula",
                    );
                }
                let b = self.bound(items, *o)?;
                self.scope.push(b.var);
                let r = self.formula(&args[3]);
                self.scope.pop();
                Ok(Formula::Forall(b, Box::new(r?)))
            }
            "let" => {
                if args.len() != 3 {
                    return err(*o, "`let` takes a variable, a term and a formula");
                }
                let v = let_var(&args[0])?;
                let t = self.term(&args[1])?;
                self.scope.push(v);
                let r = self.formula(&args[2]);
                self.scope.pop();
                Ok(Formula::Let(v, Box::new(t), Box::new(r?)))
            }
            _ => err(*o, format!("unknown operator `{op}` in a formula")),
        }
    }

    fn terms(&mut self, es: &'a [Sexp]) -> Result<Vec<tree::Term<'a>>, ExprError> {
        es.iter().map(|a| self.term(a)).collect()
    }

    fn boxed(&mut self, e: &'a Sexp) -> Result<Box<tree::Term<'a>>, ExprError> {
        self.term(e).map(Box::new)
    }

    fn term(&mut self, e: &'a Sexp) -> Result<tree::Term<'a>, ExprError> {
        use tree::{DataOp, Elem, Named, Term};
        let (items, o) = match e {
            Sexp::Atom(a, o) => {
                let literal = match self.literals {
                    Some(read) => read.contains_key(o),
                    None => parse_rational(a).is_ok(),
                };
                // read as the evaluator reads an atom: `pi`, then a bound variable, then
                // a literal
                if a == "pi" {
                    return Ok(Term::Pi);
                }
                if self.scope.iter().any(|v| v == a) {
                    return Ok(Term::Var(a));
                }
                if literal {
                    return Ok(Term::Lit(a));
                }
                return err(
                    *o,
                    format!("`{a}` is neither a number nor a bound variable"),
                );
            }
            Sexp::List(items, o) => (items, *o),
        };
        let Some(Sexp::Atom(op, _)) = items.first() else {
            return err(o, "expected an operator");
        };
        let args = &items[1..];
        let arity = |n: usize| -> Result<(), ExprError> {
            if args.len() == n {
                Ok(())
            } else {
                err(
                    o,
                    format!("`{op}` takes {n} argument(s), got {}", args.len()),
                )
            }
        };
        let data = |d: DataOp<'a>| -> Result<Term<'a>, ExprError> { Ok(Term::Data(d)) };
        if let Some(lop) = tree::LayerOp::of(op) {
            // data operations (data_op, layer_op)
            arity(lop.arity())?;
            let (name, d) = named(&args[0], self.data)?;
            let Datum::Layer(x) = d else {
                return err(args[0].offset(), "expected a layer datum");
            };
            let index = self.terms(&args[1..])?;
            return data(DataOp::Layer(lop, Named { name, datum: x }, index));
        }
        if let Some(aop) = tree::AttnOp::of(op) {
            arity(aop.arity())?;
            let (name, d) = named(&args[0], self.data)?;
            let Datum::Attn(x) = d else {
                return err(args[0].offset(), "expected an attention-weights datum");
            };
            let index = self.terms(&args[1..])?;
            return data(DataOp::Attn(aop, Named { name, datum: x }, index));
        }
        if let Some(sop) = tree::SparseOp::of(op) {
            arity(1)?;
            let (name, b) = sparse_named(&args[0], self.data)?;
            let empty = match sop {
                tree::SparseOp::EntrySum => false,
                tree::SparseOp::RowSumMax | tree::SparseOp::RowNnzMax => b.rows.is_empty(),
                _ => b.rows.iter().all(|r| r.is_empty()),
            };
            if empty {
                return err(o, format!("`{op}` of a matrix with no entry"));
            }
            return data(DataOp::Sparse(sop, Named { name, datum: b }));
        }
        if let Some(lop) = tree::LemmaOp::of(op) {
            let with_t = op.ends_with("-row");
            arity(if with_t { 3 } else { 2 })?;
            let (sn, s) = signs_named(&args[0], self.data)?;
            let (bn, b) = sparse_named(&args[1], self.data)?;
            if s.n() != b.n {
                return err(
                    o,
                    format!("`{op}`: S has {} rows but B has n = {}", s.n(), b.n),
                );
            }
            let t = if with_t {
                Some(self.boxed(&args[2])?)
            } else {
                None
            };
            return data(DataOp::Lemma {
                op: lop,
                s: Named { name: sn, datum: s },
                b: Named { name: bn, datum: b },
                t,
            });
        }
        match op.as_str() {
            "rows" => {
                arity(1)?;
                match named(&args[0], self.data)? {
                    (_, Datum::Layer(_)) => err(o, "`rows` of a layer datum: use its operations"),
                    (_, Datum::Attn(_)) => {
                        err(o, "`rows` of attention weights: use their operations")
                    }
                    (name, datum) => data(DataOp::Rows(Named { name, datum })),
                }
            }
            "cols" | "gram-max-abs" => {
                arity(1)?;
                let (name, datum) = signs_named(&args[0], self.data)?;
                let s = Named { name, datum };
                data(if op == "cols" {
                    DataOp::Cols(s)
                } else {
                    DataOp::GramMaxAbs(s)
                })
            }
            "sandwich-centred" => {
                arity(3)?;
                let dbar = int_atom(&args[0])?;
                let first = int_atom(&args[1])?;
                let r = self.boxed(&args[2])?;
                let (dbar, first) =
                    sandwich::check_args(dbar, first).map_err(|reason| ExprError {
                        offset: o,
                        reason: format!("`sandwich-centred`: {reason}"),
                    })?;
                data(DataOp::SandwichCentred { dbar, first, r })
            }
            "band-reach" | "band-reach-count" => {
                arity(3)?;
                let args = self.terms(args)?;
                data(DataOp::BandReach {
                    count: op == "band-reach-count",
                    args,
                })
            }
            // arithmetic (term)
            "+" | "*" => {
                if args.is_empty() {
                    return err(o, format!("`{op}` needs arguments"));
                }
                let ts = self.terms(args)?;
                Ok(if op == "+" {
                    Term::Add(ts)
                } else {
                    Term::Mul(ts)
                })
            }
            "-" | "neg" => {
                if args.len() != 1 {
                    if op == "neg" {
                        arity(1)?;
                    }
                    arity(2)?;
                }
                let a = self.boxed(&args[0])?;
                if args.len() == 1 {
                    return Ok(Term::Neg(a));
                }
                Ok(Term::Sub(a, self.boxed(&args[1])?))
            }
            "/" | "min" | "max" => {
                arity(2)?;
                let a = self.boxed(&args[0])?;
                let b = self.boxed(&args[1])?;
                Ok(match op.as_str() {
                    "/" => Term::Div(a, b),
                    "min" => Term::Min(a, b),
                    _ => Term::Max(a, b),
                })
            }
            "exp" | "ln" | "sqrt" | "sin" | "cos" | "abs" | "ceil" | "floor" => {
                arity(1)?;
                let a = self.boxed(&args[0])?;
                Ok(match op.as_str() {
                    "exp" => Term::Fun(Elem::Exp, a),
                    "ln" => Term::Fun(Elem::Ln, a),
                    "sqrt" => Term::Fun(Elem::Sqrt, a),
                    "sin" => Term::Fun(Elem::Sin, a),
                    "cos" => Term::Fun(Elem::Cos, a),
                    "abs" => Term::Abs(a),
                    "ceil" => Term::Ceil(a),
                    _ => Term::Floor(a),
                })
            }
            "pow" => {
                arity(2)?;
                let n = int_atom(&args[1])?;
                let n =
                    i32::try_from(n).or_else(|_| err(args[1].offset(), "exponent too large"))?;
                Ok(Term::Pow(self.boxed(&args[0])?, n))
            }
            "sum" => {
                arity(4)?;
                let b = self.bound(items, o)?;
                self.scope.push(b.var);
                let r = self.term(&args[3]);
                self.scope.pop();
                Ok(Term::Sum(b, Box::new(r?)))
            }
            "let" => {
                arity(3)?;
                let v = let_var(&args[0])?;
                let t = self.term(&args[1])?;
                self.scope.push(v);
                let r = self.term(&args[2]);
                self.scope.pop();
                Ok(Term::Let(v, Box::new(t), Box::new(r?)))
            }
            _ => err(o, format!("unknown operator `{op}` in a term")),
        }
    }
}

// ───── END validation ─────

/// Evaluates a formula at precision `prec` (no data).
pub fn check(text: &str, prec: u32) -> Result<Certainty, ExprError> {
    check_with(text, prec, &Data::new())
}

/// Evaluates a formula at precision `prec` over named data.
pub fn check_with(text: &str, prec: u32, data: &Data) -> Result<Certainty, ExprError> {
    check_memo(text, prec, data, &sandwich::Memo::default())
}

/// [`check_with`] with a memo of computed values shared between formulas (see
/// [`sandwich::Memo`]; the results are those of [`check_with`]).
pub fn check_memo(
    text: &str,
    prec: u32,
    data: &Data,
    memo: &sandwich::Memo,
) -> Result<Certainty, ExprError> {
    prepare(text, prec, data)?.check(memo)
}

/// Evaluates a term at precision `prec` (for reports and tests), as an interval
/// (a point when the term is exact and representable).
pub fn eval(text: &str, prec: u32) -> Result<Interval, ExprError> {
    eval_with(text, prec, &Data::new())
}

/// Evaluates a term over named data, as an interval.
pub fn eval_with(text: &str, prec: u32, data: &Data) -> Result<Interval, ExprError> {
    Ok(prepare_as(text, prec, data, Grammar::Term)?
        .term()?
        .iv(prec))
}

/// Evaluates a term over named data exactly: `Some` when it stays rational.
pub fn eval_exact(text: &str, prec: u32, data: &Data) -> Result<Option<Rational>, ExprError> {
    Ok(match prepare_as(text, prec, data, Grammar::Term)?.term()? {
        Val::Q(q) => Some(q),
        _ => None,
    })
}

/// What a term evaluates to at one precision ([`evaluate`]): the three outcomes the
/// evaluator distinguishes, which [`eval_with`] merges (an undefined term comes out
/// there as the whole line, like an enclosure that overflowed on both sides).
#[derive(Clone, Debug, PartialEq)]
pub enum TermValue {
    /// The term stayed rational: its exact value.
    Exact(Rational),
    /// An outward-rounded enclosure of its value.
    Enclosure(Interval),
    /// A partial operation met an argument exactly outside its domain, or one whose
    /// enclosure touches or crosses the domain's edge (module docs, "Domains"): the
    /// term may have no value, and none is given.
    Undefined,
}

/// Evaluates a term over named data at `prec` bits, keeping apart an exact value, an
/// enclosure and an undefined term (for `attncheck eval`, which must never print a
/// value for an undefined term).
pub fn evaluate(text: &str, prec: u32, data: &Data) -> Result<TermValue, ExprError> {
    Ok(match prepare_as(text, prec, data, Grammar::Term)?.term()? {
        Val::Q(q) => TermValue::Exact(q),
        Val::I(i) => TermValue::Enclosure(i),
        Val::Undef => TermValue::Undefined,
    })
}

/// A formula ready to be evaluated at one precision over one set of data: parsed,
/// within the work budget ([`work_with`]), and with every literal read once, so
/// that a literal inside a `forall` is not read again on each iteration. The
/// parsed tree keeps each literal's text ([`Prepared::sexp`]).
pub struct Prepared<'a> {
    sexp: Sexp,
    prec: u32,
    /// Its cost ([`work_with`]).
    work: u128,
    data: &'a Data,
    /// The value of every literal atom, by its offset in the text.
    literals: HashMap<usize, Val>,
}

/// Parses `text`, checks its cost over `data` at `prec` bits against [`MAX_WORK`],
/// reads its literals and [`validate`]s it: everything that can be refused without
/// evaluating is refused here.
pub fn prepare<'a>(text: &str, prec: u32, data: &'a Data) -> Result<Prepared<'a>, ExprError> {
    prepare_as(text, prec, data, Grammar::Formula)
}

/// What a text is read as: a formula ([`check_with`]) or a term ([`eval_with`]).
#[derive(Clone, Copy)]
enum Grammar {
    Formula,
    Term,
}

fn prepare_as<'a>(
    text: &str,
    prec: u32,
    data: &'a Data,
    grammar: Grammar,
) -> Result<Prepared<'a>, ExprError> {
    let sexp = parse(text)?;
    let w = work_with(&sexp, data, prec);
    if w > MAX_WORK {
        return Err(budget_error(w));
    }
    let mut literals = HashMap::new();
    read_literals(&sexp, prec, &mut literals);
    let mut v = Validator {
        data,
        scope: Vec::new(),
        literals: Some(&literals),
    };
    match grammar {
        Grammar::Formula => drop(v.formula(&sexp)?),
        Grammar::Term => drop(v.term(&sexp)?),
    }
    Ok(Prepared {
        sexp,
        prec,
        work: w,
        data,
        literals,
    })
}

/// The values of the literal atoms of `e` (operands only, not operators), by
/// offset. An atom that is not a valid literal is left out: evaluation reports it
/// where it is used.
fn read_literals(e: &Sexp, prec: u32, out: &mut HashMap<usize, Val>) {
    match e {
        Sexp::Atom(a, o) => {
            if super::literal_digits(a).is_some() {
                if let Ok(q) = parse_rational(a) {
                    out.insert(*o, Val::q(q, prec));
                }
            }
        }
        Sexp::List(items, _) => {
            let args = match items.first() {
                Some(Sexp::Atom(..)) => &items[1..],
                _ => &items[..],
            };
            for x in args {
                read_literals(x, prec, out);
            }
        }
    }
}

impl Prepared<'_> {
    /// The parsed formula (literals keep their text).
    pub fn sexp(&self) -> &Sexp {
        &self.sexp
    }

    fn env<'b>(&'b self, memo: &'b sandwich::Memo) -> Env<'b> {
        Env {
            prec: self.prec,
            vars: Vec::new(),
            data: self.data,
            sandwich: memo,
            literals: &self.literals,
            spent: 0,
            allowance: MAX_WORK.saturating_sub(self.work),
        }
    }

    /// Decides the formula, sharing `memo` with other formulas.
    pub fn check(&self, memo: &sandwich::Memo) -> Result<Certainty, ExprError> {
        formula(&self.sexp, &mut self.env(memo))
    }

    fn term(&self) -> Result<Val, ExprError> {
        let memo = sandwich::Memo::default();
        term(&self.sexp, &mut self.env(&memo))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn decides() {
        assert_eq!(
            check("(<= (exp (* -1/256 1179)) 1/100)", 128),
            Ok(Certainty::True)
        );
        assert_eq!(
            check("(> (exp (* -1/256 1179)) 1/100)", 128),
            Ok(Certainty::False)
        );
        assert_eq!(
            check("(< (exp -2) 0.13533528323661269190)", 128),
            Ok(Certainty::True)
        );
        assert_eq!(check("(= (sum i 1 4 i) 10)", 64), Ok(Certainty::True));
        assert_eq!(
            check("(forall r 1 50 (< (- (cos r) 1) 0))", 64),
            Ok(Certainty::True)
        );
        assert_eq!(check("(< (sin pi) 0)", 64), Ok(Certainty::Unknown));
        assert!(check("(< 1", 64).is_err());
        assert!(check("(foo 1 2)", 64).is_err());
        assert!(check("(< x 2)", 64).is_err());
    }

    /// The data operations against a naive exact computation (G by ±1 sums,
    /// Λ = B G / d, E by its definition) on small random instances.
    #[test]
    #[allow(clippy::needless_range_loop)] // naive index loops are the point
    fn data_operations_match_naive_definitions() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for trial in 0..6 {
            let (n, d) = (5 + trial, 50 + 17 * trial);
            let signs: Vec<bool> = (0..n * d).map(|_| next() % 2 == 1).collect();
            let s = SignMatrix::from_fn(n, d, |l, c| signs[l * d + c]);
            let g =
                |l: usize, j: usize| -> i64 { (0..d).map(|c| s.sign(l, c) * s.sign(j, c)).sum() };
            let rows: Vec<Vec<(usize, Rational)>> = (0..n)
                .map(|i| {
                    let k = 1 + (next() % 3) as usize;
                    let mut cols: Vec<usize> = (0..n).filter(|_| next() % 2 == 0).take(k).collect();
                    if cols.is_empty() {
                        cols.push(i % n);
                    }
                    cols.into_iter()
                        .map(|c| {
                            (
                                c,
                                Rational::from((
                                    (next() % 40) as i64 - 10,
                                    1 + (next() % 7) as i64,
                                )),
                            )
                        })
                        .collect()
                })
                .collect();
            let b = SparseRows {
                n,
                rows: rows.clone(),
            };
            b.validate().unwrap();
            let lam = |i: usize, j: usize| -> Rational {
                rows[i]
                    .iter()
                    .map(|(l, v)| Rational::from(v * g(*l, j)))
                    .sum::<Rational>()
                    / d as i64
            };
            let e = |i: usize, j: usize| -> Rational {
                rows[i]
                    .iter()
                    .filter(|(l, _)| *l != j)
                    .map(|(l, v)| Rational::from(v * g(*l, j)))
                    .sum::<Rational>()
                    / d as i64
            };
            let supp = |i: usize| rows[i].iter().map(|(c, _)| *c).collect::<Vec<_>>();
            let t = Rational::from((1, 7));
            let mut gm = 0;
            let (mut em, mut am, mut bm) = (Rational::new(), None::<Rational>, None::<Rational>);
            let (mut ar, mut br) = (None::<Rational>, None::<Rational>);
            for l in 0..n {
                for j in 0..n {
                    if l != j {
                        gm = gm.max(g(l, j).abs());
                    }
                }
            }
            for i in 0..n {
                let sp = supp(i);
                let rs: Rational = rows[i].iter().map(|(_, v)| v.clone()).sum();
                let slack = Rational::from(2 * &t) * &rs;
                for j in 0..n {
                    em = em.max(e(i, j).abs());
                }
                let mut a_i = Rational::new();
                for &j in &sp {
                    for &jj in &sp {
                        a_i = a_i.max((e(i, j) - e(i, jj)).abs());
                    }
                }
                am = Some(am.map_or(a_i.clone(), |m: Rational| m.max(a_i.clone())));
                ar = Some(ar.map_or(Rational::from(&a_i - &slack), |m: Rational| {
                    m.max(Rational::from(&a_i - &slack))
                }));
                for j in (0..n).filter(|j| !sp.contains(j)) {
                    for &jj in &sp {
                        let v = lam(i, j) - lam(i, jj);
                        let vr = Rational::from(&v - &slack);
                        bm = Some(bm.map_or(v.clone(), |m: Rational| m.max(v.clone())));
                        br = Some(br.map_or(vr.clone(), |m: Rational| m.max(vr.clone())));
                    }
                }
            }
            let mut data = Data::new();
            data.insert("S".into(), Datum::Signs(s.clone()));
            data.insert("B".into(), Datum::Sparse(b));
            let ev = |f: &str| eval_exact(f, 64, &data).unwrap().unwrap();
            assert_eq!(ev("(gram-max-abs S)"), gm);
            assert_eq!(ev("(err-max S B)"), em);
            assert_eq!(ev("(lemma-a S B)"), am.unwrap());
            assert_eq!(ev("(lemma-a-row S B 1/7)"), ar.unwrap());
            if let Some(bm) = bm {
                assert_eq!(ev("(lemma-b S B)"), bm);
                assert_eq!(ev("(lemma-b-row S B 1/7)"), br.unwrap());
            }
            let all: Vec<Rational> = rows.iter().flatten().map(|(_, v)| v.clone()).collect();
            assert_eq!(ev("(entry-sum B)"), all.iter().cloned().sum::<Rational>());
            assert_eq!(ev("(entry-min B)"), all.iter().min().unwrap().clone());
            assert_eq!(ev("(entry-max B)"), all.iter().max().unwrap().clone());
            assert_eq!(ev("(cols S)"), d as i64);
            assert_eq!(ev("(rows B)"), n as i64);
            assert_eq!(
                check_with("(= (lemma-a S B) (lemma-a S B))", 64, &data),
                Ok(Certainty::True)
            );
            assert!(check_with("(< (gram-max-abs B) 1)", 64, &data).is_err());
            assert!(check_with("(< (gram-max-abs Q) 1)", 64, &data).is_err());
        }
    }

    #[test]
    fn sandwich_centred_is_the_plain_sum() {
        for (d, f) in [(2u32, 0u32), (64, 0), (128, 1)] {
            for r in [-7i64, 1, 12, 17156] {
                let plain = format!(
                    "(sum i {f} {} (- (cos (* {r} (exp (* (/ (* -2 i) {d}) (ln 10000))))) 1))",
                    f + d / 2 - 1
                );
                let a = eval(&format!("(sandwich-centred {d} {f} {r})"), 128).unwrap();
                let b = eval(&plain, 128).unwrap();
                assert!(a.overlaps(&b), "d̄ = {d}, F = {f}, r = {r}");
                assert!(a.width_up() < 1e-25 && b.width_up() < 1e-25);
            }
        }
        // exactly 0 at r = 0, so `=` decides it
        assert_eq!(
            check("(= (sandwich-centred 128 0 0) 0)", 64),
            Ok(Certainty::True)
        );
        assert_eq!(
            check("(< (sandwich-centred 128 1 1) 0)", 64),
            Ok(Certainty::True)
        );
        // a bound variable as r, and the memo shared across a forall
        assert_eq!(
            check("(forall r 1 300 (and (<= -128 (sandwich-centred 256 0 r)) (< (sandwich-centred 256 0 r) 0)))", 64),
            Ok(Certainty::True)
        );
    }

    #[test]
    fn sandwich_centred_rejects_bad_arguments() {
        for bad in [
            "(< (sandwich-centred 127 0 1) 0)",
            "(< (sandwich-centred 0 0 1) 0)",
            "(< (sandwich-centred 8192 0 1) 0)",
            "(< (sandwich-centred 128 2 1) 0)",
            "(< (sandwich-centred 128 0 1/2) 0)",
            "(< (sandwich-centred 128 0 pi) 0)",
            "(< (sandwich-centred (+ 64 64) 0 1) 0)",
            "(< (sandwich-centred 128 0) 0)",
        ] {
            assert!(check(bad, 64).is_err(), "{bad}");
        }
        // its cost counts against the work budget: d̄/2 per evaluation
        let e = parse("(forall r 1 1000 (< (sandwich-centred 4096 0 r) 0))").unwrap();
        assert!(work(&e) > 1000 * 2048);
        assert!(check(
            "(forall a 1 1000 (forall r 1 1000 (< (sandwich-centred 4096 0 r) 0)))",
            64
        )
        .is_err());
    }
}
