//! The cost model and the Coq budgets: the bits of the numbers a formula writes or
//! builds ([`Sizes`], [`MAX_COQ_NUMBER_BITS`]), the terms and goals it gives `interval`
//! ([`size`], [`interval_load`]), the sums put in closed form ([`geometric`]) or summed
//! by blocks of logarithms ([`ln_sum`]) and the work of band scans ([`bands_f`]) (the
//! layer map's cost is [`super::layer`]'s). An obligation over a budget stays
//! kernel-only ([`super::file::translate`]).

use super::ast::{closed, exact_f, heavy, linear_coefficient, mentions, uniform, Elem, F, T};
use super::TranslateError;
use rug::{Integer, Rational};

/// Unrolled instances of non-exact `forall`s (interval goals) above which an
/// obligation stays kernel-only.
pub const MAX_INTERVAL_GOALS: u64 = 2_000;
/// Terms given to `interval` (after unrolling sums), in total, above which an
/// obligation stays kernel-only.
pub const MAX_INTERVAL_TERMS: u64 = 50_000;
/// Bits of the largest exact number a formula writes or builds (a literal, or a
/// power of one) above which an obligation stays kernel-only: Coq's integers are
/// binary lists. Measured (coqc 8.16): ⌈log₂ 1024!⌉ (8770 bits, literals in
/// hexadecimal) takes about 3 s; ⌈log₂ 65536!⌉ (954037 bits, the literal named
/// once by `hoist_big`) about 66 s and 4.5 GB, with the 1 GB stack that
/// `coq::coqc` asks for.
pub const MAX_COQ_NUMBER_BITS: u64 = 1 << 20;
/// Exact work (instances × term size) above which an exact obligation stays
/// kernel-only.
pub const MAX_EXACT_WORK: u64 = 50_000_000;

/// The number of comparisons of a [`uniform`] body, and their terms.
fn uniform_load(f: &F) -> (u64, u64) {
    match f {
        F::And(fs) => fs.iter().map(uniform_load).fold((0, 0), |x, y| {
            (x.0.saturating_add(y.0), x.1.saturating_add(y.1))
        }),
        F::Dom(b) => uniform_load(b),
        F::Cmp(_, a, b) => (1, size(a) + size(b)),
        _ => (0, 0),
    }
}

/// ⌈log₂ k⌉ for k ≥ 1 (0 for k ≤ 1): the least e with k ≤ 2^e.
fn log2_ceil(k: &Integer) -> u64 {
    if *k <= 1 {
        0
    } else {
        u64::from(Integer::from(k - 1u32).significant_bits())
    }
}

fn log2_ceil_u(k: u64) -> u64 {
    log2_ceil(&Integer::from(k))
}

/// Sizes of an exact value: |numerator| ≤ 2^p and denominator ≤ 2^c.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Mag {
    p: u64,
    c: u64,
}

impl Mag {
    pub(super) fn of(q: &Rational) -> Mag {
        Mag {
            p: log2_ceil(&Integer::from(q.numer().abs_ref())),
            c: log2_ceil(q.denom()),
        }
    }
    /// Bits of the larger of numerator and denominator.
    fn bits(self) -> u64 {
        self.p.max(self.c).saturating_add(1)
    }
}

/// The cost model of numbers ([`MAX_COQ_NUMBER_BITS`]): an upper bound on the bits
/// of every exact number the formula writes or Coq builds from it, counting every
/// operand: a literal, a bound variable (by its range), a data operation (by its
/// value), and what +, −, ×, ÷, powers, ceilings and sums make of them
/// (|Σ pᵢ/qᵢ| has numerator at most Σᵢ |pᵢ| Π_{j≠i} qⱼ and denominator Π qⱼ). A
/// power also costs its exponent, whatever its base: Coq writes `x ^ n` with n
/// in unary (a `nat`).
struct Sizes<'a> {
    /// Sizes of the values of the data operations ([`Ops`]), `None` when the
    /// kernel does not evaluate one.
    data: &'a [Option<Mag>],
    /// The binders in scope: (name, size of the largest |value| of its range).
    vars: Vec<(String, Mag)>,
    /// The largest size met so far.
    worst: u64,
}

impl Sizes<'_> {
    fn see(&mut self, bits: u64) {
        self.worst = self.worst.max(bits);
    }

    fn bind(&mut self, v: &str, lo: i64, hi: i64) {
        let m = Integer::from(lo.unsigned_abs().max(hi.unsigned_abs()));
        self.vars.push((
            v.to_string(),
            Mag {
                p: log2_ceil(&m),
                c: 0,
            },
        ));
    }

    /// The size of `t`'s value when `t` is exact (`None` for a transcendental term,
    /// which `interval` evaluates in floating point), noting every size on the way.
    fn term(&mut self, t: &T) -> Option<Mag> {
        let m = match t {
            T::Lit(q) => Some(Mag::of(q)),
            T::Var(v) => Some(
                self.vars
                    .iter()
                    .rev()
                    .find(|(n, _)| n == v)
                    .map(|(_, m)| *m)
                    // not reached: every variable is bound
                    .unwrap_or(Mag { p: 64, c: 0 }),
            ),
            T::Data(i) => match self.data.get(*i).copied().flatten() {
                Some(m) => Some(m),
                None => {
                    // a data operation the kernel does not evaluate: no bound
                    self.see(u64::MAX);
                    None
                }
            },
            T::Pi => None,
            T::Fun(_, a) => {
                self.term(a);
                None
            }
            T::Band(_, ts) => {
                ts.iter().for_each(|u| {
                    self.term(u);
                });
                // a reach or a count of at most L ≤ 65536 tokens (the kernel's range)
                Some(Mag { p: 17, c: 0 })
            }
            T::Layer(_, ts) => {
                ts.iter().for_each(|u| {
                    self.term(u);
                });
                None
            }
            T::Add(ts) => {
                let ms: Vec<Option<Mag>> = ts.iter().map(|u| self.term(u)).collect();
                let ms: Option<Vec<Mag>> = ms.into_iter().collect();
                ms.map(|ms| {
                    let c = ms.iter().fold(0u64, |a, m| a.saturating_add(m.c));
                    let p = ms
                        .iter()
                        .map(|m| m.p.saturating_add(c - m.c))
                        .max()
                        .unwrap_or(0)
                        .saturating_add(log2_ceil_u(ms.len() as u64));
                    Mag { p, c }
                })
            }
            T::Sub(a, b) => {
                let (a, b) = (self.term(a), self.term(b));
                a.zip(b).map(|(a, b)| Mag {
                    p: a.p
                        .saturating_add(b.c)
                        .max(b.p.saturating_add(a.c))
                        .saturating_add(1),
                    c: a.c.saturating_add(b.c),
                })
            }
            T::Mul(ts) => {
                let ms: Vec<Option<Mag>> = ts.iter().map(|u| self.term(u)).collect();
                let ms: Option<Vec<Mag>> = ms.into_iter().collect();
                ms.map(|ms| Mag {
                    p: ms.iter().fold(0u64, |a, m| a.saturating_add(m.p)),
                    c: ms.iter().fold(0u64, |a, m| a.saturating_add(m.c)),
                })
            }
            T::Div(a, b) => {
                let (a, b) = (self.term(a), self.term(b));
                a.zip(b).map(|(a, b)| Mag {
                    p: a.p.saturating_add(b.c),
                    c: a.c.saturating_add(b.p),
                })
            }
            T::Min(a, b) | T::Max(a, b) => {
                let (a, b) = (self.term(a), self.term(b));
                a.zip(b).map(|(a, b)| Mag {
                    p: a.p.max(b.p),
                    c: a.c.max(b.c),
                })
            }
            T::Neg(a) | T::Abs(a) => self.term(a),
            // |⌈x⌉|, |⌊x⌋| ≤ |x| + 1
            T::Ceil(a) | T::Floor(a) => self.term(a).map(|a| Mag {
                p: a.p.saturating_add(1),
                c: 0,
            }),
            T::Pow(a, n) => {
                let k = n.unsigned_abs();
                self.see(k);
                self.term(a).map(|a| {
                    let (p, c) = (a.p.saturating_mul(k), a.c.saturating_mul(k));
                    if *n >= 0 {
                        Mag { p, c }
                    } else {
                        Mag { p: c, c: p }
                    }
                })
            }
            T::Sum(v, lo, hi, b) => {
                self.bind(v, *lo, *hi);
                let body = self.term(b);
                self.vars.pop();
                let k = (i128::from(*hi) - i128::from(*lo) + 1).max(1) as u64;
                body.map(|m| Mag {
                    p: m.p
                        .saturating_add((k - 1).saturating_mul(m.c))
                        .saturating_add(log2_ceil_u(k)),
                    c: k.saturating_mul(m.c),
                })
            }
        };
        if let Some(m) = m {
            self.see(m.bits());
        }
        m
    }

    fn formula(&mut self, f: &F) {
        match f {
            F::Cmp(_, a, b) => {
                self.term(a);
                self.term(b);
            }
            F::And(fs) | F::Or(fs) => fs.iter().for_each(|g| self.formula(g)),
            F::All(v, lo, hi, b) | F::Ex(v, lo, hi, b) => {
                self.bind(v, *lo, *hi);
                self.formula(b);
                self.vars.pop();
            }
            F::Dom(b) => self.formula(b),
        }
    }
}

/// [`Sizes`] of a formula: the bits of the largest exact number it writes or
/// builds (saturating).
pub(super) fn number_bits_f(f: &F, data: &[Option<Mag>]) -> u64 {
    let mut s = Sizes {
        data,
        vars: Vec::new(),
        worst: 0,
    };
    s.formula(f);
    s.worst
}

/// Number of terms after unrolling sums (a sum put in closed form by
/// [`geometric`] counts as its closed form).
pub(super) fn size(t: &T) -> u64 {
    size_in(t, &mut Vec::new())
}

/// [`size`], with `open` the binders of the enclosing sums.
fn size_in(t: &T, open: &mut Vec<String>) -> u64 {
    match t {
        T::Lit(_) | T::Var(_) | T::Data(_) | T::Pi => 1,
        T::Add(ts) | T::Mul(ts) => 1 + ts.iter().map(|u| size_in(u, open)).sum::<u64>(),
        // the work of the scan itself is counted by [`bands_f`], which knows the ranges
        T::Band(_, ts) | T::Layer(_, ts) => 1 + ts.iter().map(|u| size_in(u, open)).sum::<u64>(),
        T::Sub(a, b) | T::Div(a, b) | T::Min(a, b) | T::Max(a, b) => {
            1 + size_in(a, open) + size_in(b, open)
        }
        T::Neg(a) | T::Abs(a) | T::Pow(a, _) | T::Fun(_, a) | T::Ceil(a) | T::Floor(a) => {
            1 + size_in(a, open)
        }
        T::Sum(..) if ln_sum(t).is_some() => {
            let (lo, hi, k) = ln_sum(t).unwrap_or_default();
            16 + 2 * ((hi - lo) / k + 1) as u64
        }
        // the statement's interval sees one variable per chunk
        T::Sum(..) if ln_sum_chunked(t).is_some() => {
            let (lo, hi, k) = ln_sum_chunked(t).unwrap_or_default();
            16 + 2 * ln_chunks(lo, hi, k).len() as u64
        }
        T::Sum(v, lo, hi, b) => match geometric(t) {
            Some(g) if closed(t, &mut open.clone()) => 16 + 4 * size(&g.c),
            _ => {
                open.push(v.clone());
                let n = size_in(b, open);
                open.pop();
                1 + (hi - lo + 1).max(0) as u64 * n
            }
        },
    }
}

/// A sum that `sumZ_exp_lin` or `sumZ_lin_exp_lin` (coq/Attncheck.v) puts in
/// closed form: Σ_{k=lo}^{hi} e^{c·k} or Σ_{k=lo}^{hi} k·e^{c·k} (k·e or e·k),
/// with c free of k and of sums, ceilings and extrema, and lo ≤ hi + 1. The
/// exponent may be any product, quotient, sum or negation that is c·k by the
/// laws of a field (Coq proves that it is, with `ring` or `field`).
pub(super) struct Geometric {
    /// Σ k·e^{c·k} rather than Σ e^{c·k}.
    pub weighted: bool,
    /// The body is e^{c·k}·k (rather than k·e^{c·k}).
    pub exp_first: bool,
    /// The ratio's exponent c.
    pub c: T,
}

pub(super) fn geometric(t: &T) -> Option<Geometric> {
    let T::Sum(v, lo, hi, body) = t else {
        return None;
    };
    if *lo > hi.saturating_add(1) {
        return None;
    }
    let is_v = |u: &T| matches!(u, T::Var(x) if x == v);
    let exp_arg = |u: &T| match u {
        T::Fun(Elem::Exp, a) => Some((**a).clone()),
        _ => None,
    };
    let (weighted, exp_first, arg) = match &**body {
        T::Mul(ts) if ts.len() == 2 && is_v(&ts[0]) => (true, false, exp_arg(&ts[1])?),
        T::Mul(ts) if ts.len() == 2 && is_v(&ts[1]) => (true, true, exp_arg(&ts[0])?),
        u => (false, false, exp_arg(u)?),
    };
    let c = linear_coefficient(&arg, v)?;
    if heavy(&c) || mentions(&c, v) {
        return None;
    }
    Some(Geometric {
        weighted,
        exp_first,
        c,
    })
}

/// Terms above which a sum Σ ln i is summed by blocks ([`ln_sum`]); shorter
/// ones are unrolled as before.
const LN_BLOCKS_ABOVE: i64 = 4_096;
/// Bits of each block's product in [`ln_sum`].
const LN_BLOCK_BITS: u32 = 256;
/// Blocks above which a sum of logarithms stays kernel-only: `interval`'s time
/// grows faster than the number of terms (measured, coqc 8.16 with
/// CoqInterval 4.6: 264 blocks for ln 5000! take seconds; the 4369 of
/// ln 65536! took more than 5 minutes at 53 bits without finishing).
const MAX_LN_BLOCKS: i64 = 1_024;
/// Blocks per chunk when a sum of logarithms has more than [`MAX_LN_BLOCKS`]:
/// each chunk is enclosed by its own `interval_intro` (about 5 s for 100 blocks)
/// and the statement is then proven from the chunks' enclosures, so the time
/// grows linearly (measured: ln 20000!, 1176 blocks in 12 chunks, 106 s).
const LN_CHUNK_BLOCKS: i64 = 100;
/// Blocks above which a sum of logarithms stays kernel-only even in chunks.
pub(super) const MAX_LN_CHUNKED_BLOCKS: i64 = 8_192;

/// The largest number of blocks of a long sum of logarithms in `f` that is
/// over [`MAX_LN_CHUNKED_BLOCKS`], as (lo, hi, blocks).
pub(super) fn ln_sum_over_budget(f: &F) -> Option<(i64, i64, i64)> {
    fn term(t: &T, worst: &mut Option<(i64, i64, i64)>) {
        if let Some((lo, hi, k)) = ln_sum_blocks(t) {
            let b = (hi - lo) / k + 1;
            if b > MAX_LN_CHUNKED_BLOCKS && worst.is_none_or(|w| w.2 < b) {
                *worst = Some((lo, hi, b));
            }
        }
        match t {
            T::Lit(_) | T::Var(_) | T::Data(_) | T::Pi => {}
            T::Add(ts) | T::Mul(ts) | T::Band(_, ts) | T::Layer(_, ts) => {
                ts.iter().for_each(|u| term(u, worst))
            }
            T::Sub(a, b) | T::Div(a, b) | T::Min(a, b) | T::Max(a, b) => {
                term(a, worst);
                term(b, worst);
            }
            T::Neg(a) | T::Abs(a) | T::Ceil(a) | T::Floor(a) | T::Pow(a, _) | T::Fun(_, a) => {
                term(a, worst)
            }
            T::Sum(_, _, _, b) => term(b, worst),
        }
    }
    fn form(f: &F, worst: &mut Option<(i64, i64, i64)>) {
        match f {
            F::Cmp(_, a, b) => {
                term(a, worst);
                term(b, worst);
            }
            F::And(fs) | F::Or(fs) => fs.iter().for_each(|g| form(g, worst)),
            F::All(_, _, _, b) | F::Ex(_, _, _, b) | F::Dom(b) => form(b, worst),
        }
    }
    let mut worst = None;
    form(f, &mut worst);
    worst
}

/// A long sum Σ_{i=lo}^{hi} ln i (1 ≤ lo ≤ hi, more than [`LN_BLOCKS_ABOVE`]
/// terms), as (lo, hi, k): `sumZ_ln_blocks` (coq/Attncheck.v) rewrites it as
/// the sum of ln of the products of k consecutive integers (each below
/// 2^LN_BLOCK_BITS), which Coq computes itself (`unroll_sums` evaluates
/// `ln_blocks` with `vm_compute`), so that `interval` sees
/// (hi − lo)/k + 1 logarithms instead of hi − lo + 1 (ln 65536!: 65535 terms
/// overflow Coq's stack).
pub(super) fn ln_sum(t: &T) -> Option<(i64, i64, i64)> {
    ln_sum_blocks(t).filter(|&(lo, hi, k)| (hi - lo) / k < MAX_LN_BLOCKS)
}

/// A sum of logarithms of more than [`MAX_LN_BLOCKS`] blocks (and at most
/// [`MAX_LN_CHUNKED_BLOCKS`]), summed by chunks of [`LN_CHUNK_BLOCKS`] blocks:
/// (lo, hi, k).
pub(super) fn ln_sum_chunked(t: &T) -> Option<(i64, i64, i64)> {
    ln_sum_blocks(t).filter(|&(lo, hi, k)| {
        let b = (hi - lo) / k + 1;
        b > MAX_LN_BLOCKS && b <= MAX_LN_CHUNKED_BLOCKS
    })
}

/// The chunks (a, b) of [`ln_sum_chunked`]'s range lo..hi.
pub(super) fn ln_chunks(lo: i64, hi: i64, k: i64) -> Vec<(i64, i64)> {
    let step = k * LN_CHUNK_BLOCKS;
    let mut out = Vec::new();
    let mut a = lo;
    while a <= hi {
        let b = hi.min(a + step - 1);
        out.push((a, b));
        a = b + 1;
    }
    out
}

/// [`ln_sum`] whatever its number of blocks, (hi − lo)/k + 1.
fn ln_sum_blocks(t: &T) -> Option<(i64, i64, i64)> {
    let T::Sum(v, lo, hi, body) = t else {
        return None;
    };
    let T::Fun(Elem::Ln, a) = &**body else {
        return None;
    };
    if !matches!(&**a, T::Var(x) if x == v) || *lo < 1 || hi.checked_sub(*lo)? < LN_BLOCKS_ABOVE {
        return None;
    }
    let bits = 64 - hi.unsigned_abs().leading_zeros();
    Some((*lo, *hi, i64::from((LN_BLOCK_BITS / bits).max(1))))
}

/// What the band terms of `f` ask of Coq: whether there is one, and the work of its
/// band scans, added to [`size_f`] for the exact budget.
pub(super) struct Bands {
    /// A band term occurs in `f`.
    pub present: bool,
    /// `band_op` (coq/Attncheck.v) takes L steps per layer for l layers, and each value
    /// of an enclosing `forall` or `sum` evaluates it again: Σ over band terms of
    /// (evaluations) · L_max · (l_max + 1), with L and l bounded over the binders'
    /// ranges by [`int_range`].
    pub work: u64,
}

/// The band terms of `f` ([`Bands`]), after checking that every one stays inside the
/// kernel's range at every value of the binders around it (1 ≤ L ≤ 65536, d ≥ 0,
/// 1 ≤ l ≤ 256, l·L·min(d + 1, L) ≤ 2³²; `expr`'s `band-reach`), from integer ranges of
/// its arguments ([`int_range`]). The kernel checks this only when it evaluates the
/// term, so a formula it would reject at some value is kept from Coq (`Err`, with the
/// reason); one whose arguments have no integer range (a quotient, a power) is kept too.
/// One walk does both, so the work is always counted over the ranges that were checked.
pub(super) fn bands_f(f: &F) -> Result<Bands, TranslateError> {
    type Vars = Vec<(String, (i128, i128))>;
    fn term(t: &T, vars: &mut Vars, times: u64, b: &mut Bands) -> Result<(), TranslateError> {
        match t {
            T::Lit(_) | T::Var(_) | T::Data(_) | T::Pi => Ok(()),
            T::Band(_, ts) => {
                ts.iter().try_for_each(|u| term(u, vars, times, b))?;
                let r: Vec<Option<(i128, i128)>> = ts.iter().map(|u| int_range(u, vars)).collect();
                let (Some(len), Some(d), Some(l)) = (r[0], r[1], r[2]) else {
                    return Err(TranslateError::BandUnbounded);
                };
                let inside = 1 <= len.0 && len.1 <= 65_536 && 0 <= d.0 && 1 <= l.0 && l.1 <= 256;
                if !inside || l.1 * len.1 * (d.1 + 1).min(len.1) > 1 << 32 {
                    return Err(TranslateError::BandOutside { len, d, l });
                }
                // inside the range: 1 ≤ L ≤ 65536 and 1 ≤ l ≤ 256, so these fit
                let one = (len.1 as u64).saturating_mul(l.1 as u64 + 1);
                b.present = true;
                b.work = b.work.saturating_add(times.saturating_mul(one));
                Ok(())
            }
            T::Add(ts) | T::Mul(ts) | T::Layer(_, ts) => {
                ts.iter().try_for_each(|u| term(u, vars, times, b))
            }
            T::Sub(x, y) | T::Div(x, y) | T::Min(x, y) | T::Max(x, y) => {
                term(x, vars, times, b)?;
                term(y, vars, times, b)
            }
            T::Neg(x) | T::Abs(x) | T::Ceil(x) | T::Floor(x) | T::Pow(x, _) | T::Fun(_, x) => {
                term(x, vars, times, b)
            }
            T::Sum(v, lo, hi, body) => {
                vars.push((v.clone(), (i128::from(*lo), i128::from(*hi))));
                let r = term(body, vars, times.saturating_mul(range_len(*lo, *hi)), b);
                vars.pop();
                r
            }
        }
    }
    fn form(f: &F, vars: &mut Vars, times: u64, b: &mut Bands) -> Result<(), TranslateError> {
        match f {
            F::Cmp(_, x, y) => {
                term(x, vars, times, b)?;
                term(y, vars, times, b)
            }
            F::And(fs) | F::Or(fs) => fs.iter().try_for_each(|g| form(g, vars, times, b)),
            F::All(v, lo, hi, body) | F::Ex(v, lo, hi, body) => {
                vars.push((v.clone(), (i128::from(*lo), i128::from(*hi))));
                let r = form(body, vars, times.saturating_mul(range_len(*lo, *hi)), b);
                vars.pop();
                r
            }
            F::Dom(body) => form(body, vars, times, b),
        }
    }
    fn range_len(lo: i64, hi: i64) -> u64 {
        (i128::from(hi) - i128::from(lo) + 1).clamp(0, i128::from(u64::MAX)) as u64
    }
    let mut b = Bands {
        present: false,
        work: 0,
    };
    form(f, &mut Vec::new(), 1, &mut b)?;
    Ok(b)
}

/// The range [lo, hi] of an integer-valued term built from integer literals,
/// bound variables (`vars`: their ranges), +, −, × and negation; `None` for
/// anything else, or when a bound leaves ±2⁶³.
fn int_range(t: &T, vars: &[(String, (i128, i128))]) -> Option<(i128, i128)> {
    const CAP: i128 = 1 << 63;
    let r = match t {
        T::Lit(q) if *q.denom() == 1 => {
            let z = q.numer().to_i64()?;
            (i128::from(z), i128::from(z))
        }
        T::Var(v) => vars.iter().rev().find(|(n, _)| n == v)?.1,
        T::Add(ts) => ts.iter().try_fold((0i128, 0i128), |a, u| {
            let b = int_range(u, vars)?;
            Some((a.0 + b.0, a.1 + b.1))
        })?,
        T::Sub(a, b) => {
            let (a, b) = (int_range(a, vars)?, int_range(b, vars)?);
            (a.0 - b.1, a.1 - b.0)
        }
        T::Neg(a) => {
            let a = int_range(a, vars)?;
            (-a.1, -a.0)
        }
        T::Mul(ts) => ts.iter().try_fold((1i128, 1i128), |a, u| {
            let b = int_range(u, vars)?;
            let p = [a.0 * b.0, a.0 * b.1, a.1 * b.0, a.1 * b.1];
            Some((*p.iter().min()?, *p.iter().max()?))
        })?,
        _ => return None,
    };
    (r.0 >= -CAP && r.1 <= CAP).then_some(r)
}

pub(super) fn size_f(f: &F) -> u64 {
    match f {
        F::Cmp(_, a, b) => size(a) + size(b),
        F::And(fs) | F::Or(fs) => fs.iter().map(size_f).sum(),
        F::All(_, lo, hi, b) | F::Ex(_, lo, hi, b) => (hi - lo + 1).max(0) as u64 * size_f(b),
        F::Dom(b) => size_f(b),
    }
}

/// (interval goals, terms given to interval) of the tactic tree, or `None` if
/// exact (decided by computation).
pub(super) fn interval_load(f: &F) -> (u64, u64) {
    if exact_f(f) {
        return (0, 0);
    }
    match f {
        F::Cmp(_, a, b) => (1, size(a) + size(b)),
        F::And(fs) => fs.iter().map(interval_load).fold((0, 0), |x, y| {
            (x.0.saturating_add(y.0), x.1.saturating_add(y.1))
        }),
        F::Or(fs) => fs.iter().map(interval_load).min().unwrap_or((0, 0)),
        F::All(_, lo, hi, b) => {
            let n = (hi - lo + 1).max(0) as u64;
            let (g, t) = interval_load(b);
            (n.saturating_mul(g), n.saturating_mul(t))
        }
        F::Ex(_, _, _, b) => interval_load(b),
        // counted as the uniform proof: its fallback, one goal per value, is for a
        // condition that `interval` does not bound over the whole range
        F::Dom(b) => match uniform(b) {
            Some((_, _, _, body)) => uniform_load(body),
            None => interval_load(b),
        },
    }
}

/// Checks `f` (with its domain conditions) against the Coq budgets, in this order: the
/// band terms' ranges ([`bands_f`]), the bits of its numbers ([`MAX_COQ_NUMBER_BITS`]),
/// then for an exact formula its work ([`MAX_EXACT_WORK`]), else no band term, the
/// blocks of its sums of logarithms ([`MAX_LN_CHUNKED_BLOCKS`]) and its `interval` load
/// ([`MAX_INTERVAL_GOALS`], [`MAX_INTERVAL_TERMS`]).
/// The bound on the bits of the numbers `f` writes or builds ([`MAX_COQ_NUMBER_BITS`]).
pub(super) fn number_budget(f: &F, data_sizes: &[Option<Mag>]) -> Result<(), TranslateError> {
    let bits = number_bits_f(f, data_sizes);
    if bits == u64::MAX {
        return Err(TranslateError::DataUnsized);
    }
    if bits > MAX_COQ_NUMBER_BITS {
        return Err(TranslateError::NumberBits(bits));
    }
    Ok(())
}

pub(super) fn within_budget(f: &F, data_sizes: &[Option<Mag>]) -> Result<(), TranslateError> {
    let bands = bands_f(f)?;
    number_budget(f, data_sizes)?;
    if exact_f(f) {
        let w = size_f(f).saturating_add(bands.work);
        if w > MAX_EXACT_WORK {
            return Err(TranslateError::ExactWork(w));
        }
        return Ok(());
    }
    if bands.present {
        return Err(TranslateError::BandBesideTranscendental);
    }
    if let Some((lo, hi, blocks)) = ln_sum_over_budget(f) {
        return Err(TranslateError::LnBlocks { lo, hi, blocks });
    }
    let (g, t) = interval_load(f);
    if g > MAX_INTERVAL_GOALS {
        return Err(TranslateError::IntervalGoals(g));
    }
    if t > MAX_INTERVAL_TERMS {
        return Err(TranslateError::IntervalTerms(t));
    }
    Ok(())
}
