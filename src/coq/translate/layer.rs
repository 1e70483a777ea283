//! The layer road: an obligation over the layer map's quantities (`layer-max-sqnorm`,
//! `layer-max-sqdist`, `layer-partition`, `layer-coord`) is proven by one computation,
//! coq/Attncheck.v's `xcheck`: Coq iterates each datum's map in interval arithmetic
//! (the functor `LayerEval`, proven to enclose the map over the reals, `build_ok`) and
//! decides the whole formula, binders included, on the enclosures (`xcheck_sound`).
//!
//! The statement is the one [`super::print::Render`] writes; the proof is
//! `enough (H : xfden Ls [] f)` with the reflected formula `f` ([`xform`]), whose meaning,
//! once `cbn` has unfolded the denotation (and nothing else: not the layer map), is that
//! statement syntactically (a `change` left Coq's conversion free to unfold the map
//! itself on both sides: minutes at K = 17, n = 8), then `xcheck_sound` and the
//! computation, which Coq's kernel runs once, at `Qed` (`vm_cast_no_check`).
//!
//! The precision ([`precision`]): primitive floats (53 bits, `LP`) when the attncheck
//! kernel decides the formula at 37 bits, else big-integer floats (`LB`) at the first
//! rung of [`RUNGS`] whose precision less [`MARGIN_BITS`] the kernel decides it at:
//! the evaluation is the kernel's (layer_map.rs) step for step, and the margin covers
//! CoqInterval's looser `exp`. A wrong choice costs a rejection, never a pass: Coq
//! checks the computation itself (and a formula the kernel does not prove is sent at
//! the certificate's precision, for Coq to reject). The cost ([`cost_seconds`], from
//! [`LAYER_OP_SECONDS`]) is bounded before anything is sent ([`MAX_LAYER_SECONDS`]).

use super::ast::{has_layer_f, kernel_formula, Cmp, LayerKind, Op, F, T};
use super::numeral::{num, z, zi};
use super::print::Ctx;
use super::TranslateError;
use crate::kernel::expr::{self, Data, Datum};
use crate::kernel::layer_data::LayerData;
use crate::kernel::Certainty;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// Bits the attncheck kernel is given fewer than Coq when it predicts that Coq's
/// evaluation decides a formula: CoqInterval's `exp` on primitive floats is about 2⁻⁴³
/// wide (measured on the first softmax of clusters/collapse), 10 bits looser than MPFR's.
pub const MARGIN_BITS: u32 = 16;

/// Coq's precisions above 53 bits (big-integer floats), tried in order.
pub const RUNGS: &[u32] = &[80, 128, 192, 256, 384, 512];

/// The Coq CPU seconds (estimated by `cost_seconds`) above which an obligation over
/// the layer map stays kernel-only.
pub const MAX_LAYER_SECONDS: f64 = 300.0;

/// One layer datum an obligation uses: its Coq name and whether its partition sums
/// are traced.
struct Used {
    coq: String,
    name: String,
    part: bool,
}

fn used_t(t: &T, out: &mut Vec<Used>) {
    match t {
        T::Layer(a, ts) => {
            let part = a.kind == LayerKind::Partition;
            match out.iter_mut().find(|u| u.coq == a.coq) {
                Some(u) => u.part |= part,
                None => out.push(Used {
                    coq: a.coq.clone(),
                    name: a.name.clone(),
                    part,
                }),
            }
            ts.iter().for_each(|u| used_t(u, out));
        }
        T::Lit(_) | T::Var(_) | T::Data(_) | T::Pi => {}
        T::Add(ts) | T::Mul(ts) | T::Band(_, ts) => ts.iter().for_each(|u| used_t(u, out)),
        T::Sub(a, b) | T::Div(a, b) | T::Min(a, b) | T::Max(a, b) => {
            used_t(a, out);
            used_t(b, out);
        }
        T::Neg(a) | T::Abs(a) | T::Ceil(a) | T::Floor(a) | T::Pow(a, _) | T::Fun(_, a) => {
            used_t(a, out)
        }
        T::Sum(_, _, _, b) => used_t(b, out),
    }
}

fn used_f(f: &F, out: &mut Vec<Used>) {
    match f {
        F::Cmp(_, a, b) => {
            used_t(a, out);
            used_t(b, out);
        }
        F::And(fs) | F::Or(fs) => fs.iter().for_each(|g| used_f(g, out)),
        F::All(_, _, _, b) | F::Ex(_, _, _, b) | F::Dom(b) => used_f(b, out),
    }
}

/// What the reflected evaluation does not take, if anything: a ceiling, a floor, a
/// band operation (exact by nature), or an equality (intervals decide none).
fn unsupported(f: &F) -> Option<&'static str> {
    fn term(t: &T) -> Option<&'static str> {
        match t {
            T::Ceil(_) | T::Floor(_) => Some("a ceiling or floor"),
            T::Band(..) => Some("a band operation"),
            T::Lit(_) | T::Var(_) | T::Data(_) | T::Pi => None,
            T::Add(ts) | T::Mul(ts) | T::Layer(_, ts) => ts.iter().find_map(term),
            T::Sub(a, b) | T::Div(a, b) | T::Min(a, b) | T::Max(a, b) => term(a).or(term(b)),
            T::Neg(a) | T::Abs(a) | T::Pow(a, _) | T::Fun(_, a) | T::Sum(_, _, _, a) => term(a),
        }
    }
    match f {
        F::Cmp(Cmp::Eq, ..) => Some("an equality"),
        F::Cmp(_, a, b) => term(a).or(term(b)),
        F::And(fs) | F::Or(fs) => fs.iter().find_map(unsupported),
        F::All(_, _, _, b) | F::Ex(_, _, _, b) | F::Dom(b) => unsupported(b),
    }
}

/// The Coq precision for `f`: 53 (primitive floats) or a rung of [`RUNGS`], the first
/// at which the kernel, given [`MARGIN_BITS`] fewer bits, decides the formula true;
/// when none up to the certificate's precision does (the kernel does not prove it), the
/// first rung at or above the certificate's precision, where Coq is left to reject it.
/// Rungs are tried while Coq's estimated time at them ([`cost_seconds`]) is within
/// [`MAX_LAYER_SECONDS`] (so the kernel runs only at affordable precisions); past that,
/// the obligation stays kernel-only, with the precisions tried and the estimate.
fn precision(
    f: &F,
    ops: &[Op],
    data: &Data,
    cert_prec: u32,
    used: &[Used],
    prefixes: &Prefixes,
) -> Result<u32, TranslateError> {
    let decides = |bits: u32| decides(f, ops, data, used, prefixes, bits);
    let mut tried = Vec::new();
    for coq_bits in std::iter::once(53).chain(RUNGS.iter().copied()) {
        let secs = cost_seconds(used, data, coq_bits);
        if secs > MAX_LAYER_SECONDS {
            let why = if tried.is_empty() {
                String::new()
            } else {
                format!(
                    "the attncheck kernel does not decide it at {} bits, and ",
                    tried
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(" or ")
                )
            };
            return Err(TranslateError::LayerRoad(format!(
                "{why}iterating the layer map in Coq at {coq_bits} bits would take about {secs:.0} \
                 CPU-s (estimated from the measured cost of an interval exp and multiply-add at that \
                 precision, coq::LAYER_OP_SECONDS), beyond the budget of {MAX_LAYER_SECONDS:.0} CPU-s \
                 per obligation"
            )));
        }
        let kernel_bits = coq_bits - MARGIN_BITS;
        if decides(kernel_bits) || kernel_bits >= cert_prec {
            return Ok(coq_bits);
        }
        tried.push(kernel_bits);
    }
    Ok(RUNGS[RUNGS.len() - 1])
}

/// Whether the attncheck kernel decides `f` true at `bits` over `data`, i.e.
/// `check_with(f, bits, data) == Ok(True)`: false at once when a prefix of the walk
/// refutes it ([`refuted_on_prefix`]), else that check.
fn decides(f: &F, ops: &[Op], data: &Data, used: &[Used], prefixes: &Prefixes, bits: u32) -> bool {
    if refuted_on_prefix(f, ops, data, used, prefixes, bits) {
        return false;
    }
    expr::check_with(&kernel_formula(f, &[], ops), bits, data) == Ok(Certainty::True)
}

/// For tests (`file::layer_road_decisions`): [`decides`] of `f` at `bits`, the whole
/// check's answer to the same question, and whether [`refuted_on_prefix`] answered.
pub(super) fn decisions(
    f: &F,
    ops: &[Op],
    data: &Data,
    prefixes: &Prefixes,
    bits: u32,
) -> [bool; 3] {
    let mut used = Vec::new();
    used_f(f, &mut used);
    [
        decides(f, ops, data, &used, prefixes, bits),
        expr::check_with(&kernel_formula(f, &[], ops), bits, data) == Ok(Certainty::True),
        refuted_on_prefix(f, ops, data, &used, prefixes, bits),
    ]
}

/// The first prefix of the walk [`refuted_on_prefix`] tries (steps); each next one is
/// [`PREFIX_GROWTH`] times longer, while at most half the datum's K (so the prefixes
/// of a formula they do not refute walk fewer than K steps in all: at most one more
/// walk than without them; a datum of fewer than 128 steps is not tried).
pub const PREFIX_FIRST: usize = 64;
/// The growth of the prefixes [`refuted_on_prefix`] tries: doubling, so the prefixes
/// that refute a formula at step f walk fewer than 4f steps in all.
pub const PREFIX_GROWTH: usize = 2;

/// Whether a prefix of the walk shows that the kernel does not decide `f` true at
/// `bits`, so that [`decides`] need not walk all K steps (the kernel's per-step traces
/// are computed whole on first use): at 37 bits clusters/collapse's per-step facts
/// are undecided after 256 to 1024 of their 4000 steps (prefixes of 64 to 1024 steps,
/// shared by the obligations of a certificate: [`Prefixes`]).
///
/// Only for a formula over one `layer` datum X with K steps; for s = [`PREFIX_FIRST`],
/// s·[`PREFIX_GROWTH`], … up to K/2, the kernel checks, over the data with X replaced by
/// X_s (X's exact data with s steps), the formula `f` with every top-level
/// `forall k lo hi b` cut to `forall k lo (hi − (K − s)) b` ([`cut`]). An answer other
/// than `Ok(True)` at some s refutes `f` at `bits`; an error says nothing (an index
/// past s, a budget), and the next s is tried.
///
/// **Why a refutation is the full check's answer.** (1) X_s's walk is X's first s
/// steps: the walk is deterministic and its step k depends on the exact data and
/// x^{k−1} only, not on K, so every layer quantity of X_s at a step k ≤ s is X's, bit
/// for bit (`layer_data`'s "one walk per precision"), and a query past s is an error.
/// The other data are the same, and no operation's value depends on K. So an
/// evaluation over X_s that ends `Ok` made only queries that X answers alike, and every
/// node it evaluated has the value it has over X (the budgets differ, but a budget
/// only ever turns an evaluation into an error). (2) The cut keeps the top-level
/// conjunctions (`and` of kept conjuncts, dropping those [`cut`] cannot cut) and
/// shortens each top-level `forall`'s range to a prefix of it. `and` and `forall`
/// fold their parts' answers in order with the three-valued ∧ (stopping at `False`),
/// so they are `True` only when every part is, and an `Ok` answer other than `True`
/// of the cut formula names a part (an instance k ≤ hi − (K − s) of a `forall`, or a
/// conjunct) that is `Ok` and not `True` over X_s, hence by (1) not `True` over X. In
/// the full check that part is either evaluated (not `True`, or an error) or not
/// reached (an earlier `False` stopped the fold): either way the answer is not
/// `Ok(True)`. A wrong answer here would only cost a rung ([`precision`]); this is
/// why it is the same answer, so the same precision and the same Coq file.
fn refuted_on_prefix(
    f: &F,
    ops: &[Op],
    data: &Data,
    used: &[Used],
    prefixes: &Prefixes,
    bits: u32,
) -> bool {
    let [u] = used else {
        return false;
    };
    let Some(Datum::Layer(x)) = data.get(&u.name) else {
        return false;
    };
    let k = x.steps();
    let mut s = PREFIX_FIRST;
    while s.saturating_mul(2) <= k {
        let (Some(prefix), Some(g)) = (prefixes.get(&u.name, x, s), cut(f, (k - s) as i64)) else {
            return false;
        };
        let mut short = data.clone();
        short.insert(u.name.clone(), Datum::Layer(prefix));
        if matches!(
            expr::check_with(&kernel_formula(&g, &[], ops), bits, &short),
            Ok(c) if c != Certainty::True
        ) {
            return true;
        }
        s = s.saturating_mul(PREFIX_GROWTH);
    }
    false
}

/// The prefixes X_s [`refuted_on_prefix`] has built, by datum name and s, shared by the
/// obligations of one certificate: a clone of a `layer` datum shares its walks and
/// traces, so each prefix walks once per precision, as the full datum does.
#[derive(Default)]
pub(super) struct Prefixes(RefCell<BTreeMap<(String, usize), LayerData>>);

impl Prefixes {
    /// X_s for the datum `name` = `x`: x's exact data with s steps (`None` when
    /// `LayerData::new` refuses it).
    fn get(&self, name: &str, x: &LayerData, s: usize) -> Option<LayerData> {
        let mut built = self.0.borrow_mut();
        let key = (name.to_string(), s);
        if let Some(p) = built.get(&key) {
            return Some(p.clone());
        }
        let p = LayerData::new(
            x.q().clone(),
            x.k().clone(),
            x.v().clone(),
            x.dt().clone(),
            s,
            x.runs().to_vec(),
        )
        .ok()?;
        built.insert(key, p.clone());
        Some(p)
    }
}

/// `f` with its top-level `forall` ranges shortened by `by` ([`refuted_on_prefix`]):
/// through domain wrappers and conjunctions (a conjunct that cannot be cut is
/// dropped); `None` when nothing is left (no top-level `forall`, or an empty range).
fn cut(f: &F, by: i64) -> Option<F> {
    match f {
        F::Dom(b) => cut(b, by),
        F::And(fs) => {
            let kept: Vec<F> = fs.iter().filter_map(|g| cut(g, by)).collect();
            (!kept.is_empty()).then_some(F::And(kept))
        }
        F::All(v, lo, hi, b) => {
            let hi = hi.checked_sub(by)?;
            (hi >= *lo).then(|| F::All(v.clone(), *lo, hi, b.clone()))
        }
        F::Cmp(..) | F::Or(_) | F::Ex(..) => None,
    }
}

/// Measured Coq CPU seconds of one interval `exp` and of one multiply-add at each
/// precision (coqc 8.16, CoqInterval 4.6, `vm_compute`, the 2-core machine of
/// docs/performance.md; exp of −5.3, the range of the softmax's shifted logits).
/// Above 53 bits CoqInterval's big-integer floats are 40 to 800 times slower than
/// primitive floats, and `exp` dominates.
pub const LAYER_OP_SECONDS: &[(u32, f64, f64)] = &[
    (53, 3.0e-5, 2.7e-6),
    (80, 1.3e-3, 5.7e-5),
    (128, 2.2e-3, 5.7e-5),
    (192, 3.0e-3, 9.9e-5),
    (256, 5.8e-3, 1.5e-4),
    (384, 1.2e-2, 2.0e-4),
    (512, 2.0e-2, 2.6e-4),
];

/// The estimated Coq CPU seconds of `xcheck` at `bits`: every used datum iterated over
/// all its runs and steps, each step n² exponentials and about n²·(m + 3d + 6) +
/// 2n·d·(m + d) multiply-adds (the logits from Q x_i and K x_j, the softmax from prefix
/// and suffix sums, the centred sum, V), and its partition sums n² exponentials and
/// n²·m multiply-adds more; calibrated on clusters/growth-bound (within 30 %).
fn cost_seconds(used: &[Used], data: &Data, bits: u32) -> f64 {
    let (_, exp, op) = LAYER_OP_SECONDS
        .iter()
        .copied()
        .find(|r| r.0 >= bits)
        .unwrap_or(LAYER_OP_SECONDS[LAYER_OP_SECONDS.len() - 1]);
    used.iter()
        .map(|u| match data.get(&u.name) {
            Some(Datum::Layer(l)) => {
                let (n, d, m, k, r) = (
                    l.n() as f64,
                    l.d() as f64,
                    l.q().rows as f64,
                    l.steps() as f64,
                    l.runs().len() as f64,
                );
                let mut step =
                    n * n * exp + (n * n * (m + 3.0 * d + 6.0) + 2.0 * n * d * (m + d)) * op;
                if u.part {
                    step += n * n * exp + n * n * m * op;
                }
                r * (k + 1.0) * step
            }
            _ => 0.0,
        })
        .sum()
}

/// The proof script of an obligation with layer quantities (`f`, domains stated).
pub(super) fn proof(
    f: &F,
    ops: &[Op],
    data: &Data,
    cert_prec: u32,
    prefixes: &Prefixes,
) -> Result<String, TranslateError> {
    debug_assert!(has_layer_f(f));
    if let Some(what) = unsupported(f) {
        return Err(TranslateError::LayerRoad(format!(
            "{what} beside a layer quantity: coq/Attncheck.v's reflected interval evaluation \
             of the layer map does not take it"
        )));
    }
    let mut used = Vec::new();
    used_f(f, &mut used);
    let bits = precision(f, ops, data, cert_prec, &used, prefixes)?;
    let m = if bits == 53 { "LP" } else { "LB" };
    let ls = used
        .iter()
        .map(|u| u.coq.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    let parts = used
        .iter()
        .map(|u| if u.part { "true" } else { "false" })
        .collect::<Vec<_>>()
        .join("; ");
    let x = xform(f, &mut Vec::new(), &used, ops);
    Ok(format!(
        "enough (H : xfden [{ls}] [] {x}) by (cbn [xfden xden aden zden nth] in H; exact H); \
         apply ({m}.xcheck_sound ({m}.I.F.PtoP {bits}) [{ls}] [{parts}] _ eq_refl); \
         vm_cast_no_check (eq_refl true)"
    ))
}

/// De Bruijn index of `v` among the binders in `ctx` (innermost 0).
fn debruijn(ctx: &Ctx, v: &str) -> usize {
    let mut idx = 0;
    for (n, k) in ctx.iter().rev() {
        if n == v {
            return idx;
        }
        if k.is_none() {
            idx += 1;
        }
    }
    idx
}

/// An index term as `Attncheck.zexp`.
fn zexp(t: &T, ctx: &Ctx) -> String {
    let fold = |name: &str, ts: &[T]| {
        let mut acc = zexp(&ts[0], ctx);
        for u in &ts[1..] {
            acc = format!("({name} {acc} {})", zexp(u, ctx));
        }
        acc
    };
    match t {
        T::Lit(q) => format!("(ZC {}%Z)", z(q.numer())),
        T::Var(v) => match ctx.iter().rev().find(|(n, _)| n == v) {
            Some((_, Some(k))) => format!("(ZC {}%Z)", zi(*k)),
            _ => format!("(ZV {})", debruijn(ctx, v)),
        },
        T::Add(ts) => fold("ZAdd", ts),
        T::Mul(ts) => fold("ZMul", ts),
        T::Sub(a, b) => format!("(ZSub {} {})", zexp(a, ctx), zexp(b, ctx)),
        T::Neg(a) => format!("(ZOpp {})", zexp(a, ctx)),
        // not reached: the reader takes integer expressions only (ast::integral)
        _ => "(ZC 0%Z)".into(),
    }
}

/// A term as `Attncheck.xterm` (`used`: the data's order in the list `Ls`).
fn xterm(t: &T, ctx: &mut Ctx, used: &[Used], ops: &[Op]) -> String {
    let fold = |name: &str, ts: &[T], ctx: &mut Ctx| {
        let mut acc = xterm(&ts[0], ctx, used, ops);
        for u in &ts[1..] {
            acc = format!("({name} {acc} {})", xterm(u, ctx, used, ops));
        }
        acc
    };
    let two = |name: &str, a: &T, b: &T, ctx: &mut Ctx| {
        format!(
            "({name} {} {})",
            xterm(a, ctx, used, ops),
            xterm(b, ctx, used, ops)
        )
    };
    let one = |name: &str, a: &T, ctx: &mut Ctx| format!("({name} {})", xterm(a, ctx, used, ops));
    match t {
        T::Lit(q) => {
            if *q.denom() == 1 {
                format!("(XInt {}%Z)", z(q.numer()))
            } else {
                format!("(XFrac {}%Z {}%positive)", z(q.numer()), num(q.denom()))
            }
        }
        T::Var(v) => match ctx.iter().rev().find(|(n, _)| n == v) {
            Some((_, Some(k))) => format!("(XInt {}%Z)", zi(*k)),
            _ => format!("(XVar {})", debruijn(ctx, v)),
        },
        T::Pi => "XPi".into(),
        T::Add(ts) => fold("XAdd", ts, ctx),
        T::Mul(ts) => fold("XMul", ts, ctx),
        T::Sub(a, b) => two("XSub", a, b, ctx),
        T::Div(a, b) => two("XDiv", a, b, ctx),
        T::Min(a, b) => two("XMin", a, b, ctx),
        T::Max(a, b) => two("XMax", a, b, ctx),
        T::Neg(a) => one("XNeg", a, ctx),
        T::Abs(a) => one("XAbs", a, ctx),
        T::Fun(e, a) => {
            use super::ast::Elem;
            let name = match e {
                Elem::Exp => "XExp",
                Elem::Ln => "XLn",
                Elem::Sqrt => "XSqrt",
                Elem::Sin => "XSin",
                Elem::Cos => "XCos",
            };
            one(name, a, ctx)
        }
        T::Pow(a, n) => format!("(XPow {} {}%Z)", xterm(a, ctx, used, ops), zi(*n)),
        T::Sum(v, lo, hi, b) => {
            ctx.push((v.clone(), None));
            let body = xterm(b, ctx, used, ops);
            ctx.pop();
            format!("(XSum {}%Z {}%Z {body})", zi(*lo), zi(*hi))
        }
        T::Data(i) => {
            let o = &ops[*i];
            format!("({} ({}))", if o.int { "XZ" } else { "XQ" }, o.coq)
        }
        T::Layer(a, ts) => {
            let d = used.iter().position(|u| u.coq == a.coq).unwrap_or(0);
            let idx: Vec<String> = ts.iter().map(|u| zexp(u, ctx)).collect();
            let k = match a.kind {
                LayerKind::Sqnorm => "ASq",
                LayerKind::Sqdist => "ADist",
                LayerKind::Partition => "APart",
                LayerKind::Coord => "ACoord",
            };
            format!("(XAtom ({k} {d} {}))", idx.join(" "))
        }
        // not reached: [`unsupported`] keeps these from the layer road
        T::Ceil(_) | T::Floor(_) | T::Band(..) => "XPi".into(),
    }
}

/// A formula as `Attncheck.xform`.
fn xform(f: &F, ctx: &mut Ctx, used: &[Used], ops: &[Op]) -> String {
    match f {
        F::Cmp(c, a, b) => {
            let name = match c {
                Cmp::Le => "XLe",
                Cmp::Lt => "XLt",
                Cmp::Ge => "XGe",
                Cmp::Gt => "XGt",
                Cmp::Ne => "XNe",
                // not reached: [`unsupported`]
                Cmp::Eq => "XNe",
            };
            format!(
                "({name} {} {})",
                xterm(a, ctx, used, ops),
                xterm(b, ctx, used, ops)
            )
        }
        F::And(fs) | F::Or(fs) => {
            let (name, unit) = if matches!(f, F::And(_)) {
                ("XAnd", "XTrue")
            } else {
                ("XOr", "(XNe (XInt 0) (XInt 0))")
            };
            match fs.len() {
                0 => unit.into(),
                _ => {
                    let mut acc = xform(&fs[fs.len() - 1], ctx, used, ops);
                    for g in fs[..fs.len() - 1].iter().rev() {
                        acc = format!("({name} {} {acc})", xform(g, ctx, used, ops));
                    }
                    acc
                }
            }
        }
        F::Dom(b) => xform(b, ctx, used, ops),
        F::All(v, lo, hi, b) | F::Ex(v, lo, hi, b) => {
            ctx.push((v.clone(), None));
            let body = xform(b, ctx, used, ops);
            ctx.pop();
            let name = if matches!(f, F::All(..)) {
                "XAll"
            } else {
                "XEx"
            };
            format!("({name} {}%Z {}%Z {body})", zi(*lo), zi(*hi))
        }
    }
}
