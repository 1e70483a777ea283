//! The data operations (the sparse-lemma group, the layer and attention-weights
//! groups; the positional group's are in [`super::sandwich`] and [`super::band`]), on
//! the data of [`super::datum`]. Their arguments other than data are terms, which the
//! evaluator ([`super::eval`]) passes in as [`Term`], so that this file does not name
//! it.

use super::band;
use super::datum::{datum, signs, sparse, Datum};
use super::ops::int_atom;
use super::sandwich;
use super::syntax::{err, ExprError, Sexp};
use super::tree;
use super::value::{Env, Mpfr, Tier, Val};
use crate::{Interval, SignMatrix};
use rug::{Integer, Rational};

/// The evaluator of a term argument (the evaluator's own `term`, in tier `T`).
pub(super) type Term<'a, T = Mpfr> =
    fn(&'a Sexp, &mut Env<'a, T>) -> Result<Val<<T as Tier>::Iv>, ExprError>;

pub(super) fn max_opt(acc: &mut Option<Rational>, v: Rational) {
    if acc.as_ref().is_none_or(|a| v > *a) {
        *acc = Some(v);
    }
}

/// Per-row exact quantities of the lemma for row i of B against S: (max over
/// j, j' ∈ supp_i of |E_ij − E_ij'|, max over j ∉ supp_i, j' ∈ supp_i of
/// Λ_ij − Λ_ij' (None when supp_i is empty or everything), max_j |E_ij|).
pub(super) fn lemma_row(
    s: &SignMatrix,
    row: &[(usize, Rational)],
) -> (Rational, Option<Rational>, Rational) {
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
    let scale = Integer::from(&den * d);
    let small: Option<Vec<i64>> = nums.iter().map(|a| a.to_i64()).collect();
    if let Some(r) = small.and_then(|a| lemma_row_small(s, row, &a, d, &scale)) {
        return r;
    }
    lemma_row_big(s, row, &nums, d, scale)
}

/// [`lemma_row`] from the integer numerators a_l = `nums` (B_il·D) and `scale` = D·d, in
/// `Integer`s.
pub(super) fn lemma_row_big(
    s: &SignMatrix,
    row: &[(usize, Rational)],
    nums: &[Integer],
    d: i64,
    scale: Integer,
) -> (Rational, Option<Rational>, Rational) {
    let n = s.n();
    let in_supp = |j: usize| row.binary_search_by_key(&j, |(c, _)| *c);
    // d·D·E_ij = Σ_{l ∈ supp, l ≠ j} a_l G_lj ; d·D·Λ_ij = Σ_l a_l G_lj
    let lam = |j: usize| -> Integer {
        let mut acc = Integer::new();
        for (q, (l, _)) in row.iter().enumerate() {
            acc += Integer::from(&nums[q] * s.inner(*l, j));
        }
        acc
    };
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

/// [`lemma_row`] when every numerator a_l fits an i64: the same integers (Λ and E
/// numerators, their extremes and differences) in checked i128 arithmetic instead of
/// allocated `Integer`s, so the same three rationals; `None` when any step would
/// overflow (then [`lemma_row`] computes them with `Integer`s). The maxima and minima
/// are taken over the same sets (the support in row order, then j ∉ supp_i in
/// increasing order).
pub(super) fn lemma_row_small(
    s: &SignMatrix,
    row: &[(usize, Rational)],
    a: &[i64],
    d: i64,
    scale: &Integer,
) -> Option<(Rational, Option<Rational>, Rational)> {
    let lam = |j: usize| -> Option<i128> {
        let mut acc: i128 = 0;
        for (q, (l, _)) in row.iter().enumerate() {
            acc = acc.checked_add(i128::from(a[q]).checked_mul(i128::from(s.inner(*l, j)))?)?;
        }
        Some(acc)
    };
    let (mut emax, mut emin, mut abs_e) = (i128::MIN, i128::MAX, 0u128);
    let mut lam_min = i128::MAX;
    for (q, (j, _)) in row.iter().enumerate() {
        let lj = lam(*j)?;
        let ej = lj.checked_sub(i128::from(a[q]).checked_mul(i128::from(d))?)?;
        lam_min = lam_min.min(lj);
        (emax, emin) = (emax.max(ej), emin.min(ej));
        abs_e = abs_e.max(ej.unsigned_abs());
    }
    let mut lam_out: Option<i128> = None;
    for j in 0..s.n() {
        if row.binary_search_by_key(&j, |(c, _)| *c).is_ok() {
            continue;
        }
        let lj = lam(j)?;
        abs_e = abs_e.max(lj.unsigned_abs());
        lam_out = Some(lam_out.map_or(lj, |m| m.max(lj)));
    }
    let q = |num: Integer| Rational::from((num, scale.clone()));
    let spread = Integer::from(emax) - Integer::from(emin);
    let b = lam_out.map(|lo| q(Integer::from(lo) - Integer::from(lam_min)));
    Some((q(spread), b, q(Integer::from(abs_e))))
}

pub(super) fn row_sum(row: &[(usize, Rational)]) -> Rational {
    row.iter().fold(Rational::new(), |acc, (_, v)| acc + v)
}

/// The arguments (D, F, r) of `(sandwich-centred D F r)`, checked, with r evaluated
/// by the tier's own evaluator `term` (so both tiers do the same exact arithmetic, in
/// the same order, and charge the same: [`super::tier`], 4.).
pub(super) fn sandwich_args<'a, T: Tier>(
    args: &'a [Sexp],
    o: usize,
    env: &mut Env<'a, T>,
    term: Term<'a, T>,
) -> Result<(u32, u32, i64), ExprError> {
    if args.len() != 3 {
        return err(
            o,
            format!("`sandwich-centred` takes 3 argument(s), got {}", args.len()),
        );
    }
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
    Ok((dbar, first, r))
}

pub(super) fn data_op<'a>(
    op: &str,
    args: &'a [Sexp],
    o: usize,
    env: &mut Env<'a>,
    term: Term<'a>,
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
    if let Some(v) = layer_op(op, args, o, env, term)? {
        return Ok(Some(v));
    }
    if let Some(v) = attn_op(op, args, o, env, term)? {
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
            let (dbar, first, r) = sandwich_args(args, o, env, term)?;
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
            let (support, count) = band::reach(len, d, layers).map_err(|reason| ExprError {
                offset: o,
                reason: format!("`{op}`: {reason}"),
            })?;
            Rational::from(if op == "band-reach" { support } else { count })
        }
        _ => return Ok(None),
    };
    Ok(Some(Val::Q(v)))
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
///   kernel's interval iteration at the evaluation precision: one walk per precision
///   answers every layer quantity of the datum, [`crate::layer_data`]);
/// - `(layer-max-sqdist X r s k)`: an outward enclosure of
///   max_i ‖x_i^{(r),k} − x_i^{(s),k}‖² (r ≠ s: two initial configurations, one map);
/// - `(layer-partition X r k)`: an outward enclosure of Σ_i Σ_j e^{⟨Q x_i^{(r),k}, K x_j^{(r),k}⟩}
///   (the sum of the softmax denominators; clusters/collapse's Lyapunov function 𝓛 when
///   Q = K = I), traced from the iterates of the map ([`crate::layer_data::Traced`]);
/// - `(layer-dual-sup X r k lo hi i)`, `(layer-dual-inf X r k lo hi i)`: outward
///   enclosures of sup (inf) over λ ∈ [lo, hi] of max_j |a_i(λ)·x_j^{(r),k}|, where
///   a_i(λ) is row i of adj(V − λI) (a left eigenvector of V, or 0, when λ is an
///   eigenvalue). lo, hi must evaluate to exact rationals with lo ≤ hi and i to an
///   exact integer in 0..d (d ≤ 16); traced from the iterates per (lo, hi, i)
///   ([`crate::layer_dual`] has the enclosure argument);
/// - `(layer-coord X r k i c)`: an outward enclosure of the coordinate x_ic^{(r),k}
///   (token i < n, coordinate c < d), traced from the iterates of the map
///   ([`crate::layer_data::Traced::Tokens`]);
/// - `(layer-v-frob2 X)`: ‖V‖_F² = Σ_ab V_ab², exact;
/// - `(layer-qk-frob2 X)`: ‖QᵀK‖_F² = Σ_ab (QᵀK)_ab², exact;
/// - `(layer-dt X)`: Δt, exact.
///
/// `None` when `op` is not one of these.
pub(super) fn layer_op<'a>(
    op: &str,
    args: &'a [Sexp],
    o: usize,
    env: &mut Env<'a>,
    term: Term<'a>,
) -> Result<Option<Val>, ExprError> {
    let arity = match op {
        "layer-max-sqnorm" | "layer-partition" => 3,
        "layer-max-sqdist" => 4,
        "layer-coord" => 5,
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
            _ => err(
                e.offset(),
                "a run, step, token or coordinate index must be an exact integer",
            ),
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
        "layer-coord" => {
            let r = index(&args[1], env)?;
            let k = index(&args[2], env)?;
            let i = index(&args[3], env)?;
            let c = index(&args[4], env)?;
            Val::I(at(x.coord(p, &r, &k, &i, &c))?)
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
///   range of head h's content logits in layer l over all inputs;
/// - `(attn-byte-logit-range W h)`: an outward enclosure of layer 0's exact range
///   Δ⁰_h = max_a (max_b s(a, b) − min_b s(a, b)) over the bytes of a query's row (the
///   datum's embedding and ε_LN; an error without them);
/// - `(attn-row-logit-range W l h)`: an outward enclosure of min(Δ̄_lh, Δ̃_lh), Δ̃_lh the
///   bound over a query's row with γ and β folded into the projections (crate::weights,
///   bound 5).
///
/// `None` when `op` is not one of these.
pub(super) fn attn_op<'a>(
    op: &str,
    args: &'a [Sexp],
    o: usize,
    env: &mut Env<'a>,
    term: Term<'a>,
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
        tree::AttnOp::LnBound => x.ln_bound(p, &idx[0]).map_err(Into::into),
        tree::AttnOp::LogitRange => x.logit_range(p, &idx[0], &idx[1]).map_err(Into::into),
        tree::AttnOp::ByteLogitRange => x.byte_logit_range(p, &idx[0]),
        tree::AttnOp::RowLogitRange => x.row_logit_range(p, &idx[0], &idx[1]).map_err(Into::into),
    };
    v.map(|i| Some(Val::I(i)))
        .or_else(|reason| err(o, format!("`{op}`: {reason}")))
}

// ───── END `attn-weights` data operations ─────
