//! The choice of tactic: the proof script of each obligation ([`Prover`]), by the
//! shape of its formula: `decide_exact` for an exact formula, else conjunctions split,
//! `forall`s unrolled, witnesses and values the kernel hints (Coq re-proves them),
//! closed forms of sums, and `interval` on what remains; a domain condition over a
//! range by one `interval` over the whole range first ([`uniform`]). A translated
//! obligation is a [`Block`].

use super::ast::{
    closed, exact, exact_f, extremum, heavy, kernel_formula, kernel_term, uniform, Cmp, Op, F, T,
};
use super::cost::{geometric, ln_chunks, ln_sum, ln_sum_chunked, Geometric};
use super::numeral::{q_coq, zi};
use super::print::{addr, ast_form, ast_lit, ast_term, Ctx, Mode, Render};
use super::TranslateError;
use crate::kernel::expr::{self, Data};
use crate::kernel::Certainty;
use rug::Rational;
use std::collections::HashMap;
use std::fmt::Write;

/// The proof of a [`uniform`] body with its variable free and bounded (a
/// hypothesis IZR lo <= IZR v <= IZR hi in the context): `interval` for each
/// comparison, a disequality from either strict inequality.
pub(super) fn uniform_tac(f: &F) -> String {
    match f {
        F::And(fs) => match fs.len() {
            0 => "exact I".into(),
            1 => uniform_tac(&fs[0]),
            _ => format!(
                "split; [ {} | {} ]",
                uniform_tac(&fs[0]),
                uniform_tac(&F::And(fs[1..].to_vec()))
            ),
        },
        F::Dom(b) => uniform_tac(b),
        F::Cmp(Cmp::Ne, _, _) => "first [ apply Rlt_not_eq; attn_prep; attn_interval | apply Rgt_not_eq; attn_prep; attn_interval ]".into(),
        _ => "attn_prep; attn_interval".into(),
    }
}

pub(super) struct Prover<'a> {
    pub ops: &'a [Op],
    pub data: &'a Data,
    pub prec: u32,
}

impl Prover<'_> {
    fn kernel_true(&self, f: &F, ctx: &Ctx) -> bool {
        expr::check_with(&kernel_formula(f, ctx, self.ops), self.prec, self.data)
            == Ok(Certainty::True)
    }

    fn kernel_value(&self, t: &T, ctx: &Ctx) -> Option<Rational> {
        expr::eval_exact(&kernel_term(t, ctx, self.ops), self.prec, self.data)
            .ok()
            .flatten()
    }

    /// The tactic proving `f` (a goal already in proof form: data operations
    /// rewritten to their values).
    pub(super) fn tac(&self, f: &F, ctx: &mut Ctx) -> Result<String, TranslateError> {
        if exact_f(f) {
            return Ok(format!(
                "decide_exact {}",
                ast_form(f, ctx, &HashMap::new(), self.ops)
            ));
        }
        match f {
            F::And(fs) => match fs.len() {
                0 => Ok("exact I".into()),
                1 => self.tac(&fs[0], ctx),
                _ => {
                    let first = self.tac(&fs[0], ctx)?;
                    let rest = self.tac(&F::And(fs[1..].to_vec()), ctx)?;
                    Ok(format!("split; [ {first} | {rest} ]"))
                }
            },
            F::Or(fs) => {
                let i = (0..fs.len())
                    .find(|&i| self.kernel_true(&fs[i], ctx))
                    .ok_or(TranslateError::NoDisjunct)?;
                let t = self.tac(&fs[i], ctx)?;
                let mut s = String::new();
                for _ in 0..i {
                    s.push_str("right; ");
                }
                if i + 1 < fs.len() {
                    s.push_str("left; ");
                }
                Ok(format!("{s}({t})"))
            }
            F::All(v, lo, hi, b) => {
                if hi < lo {
                    // not reached: the reader takes only non-empty ranges
                    return Err(TranslateError::EmptyRange(*lo, *hi));
                }
                let mut ts = Vec::new();
                for k in *lo..=*hi {
                    ctx.push((v.clone(), Some(k)));
                    let t = self.tac(b, ctx);
                    ctx.pop();
                    ts.push(t?);
                }
                if ts.iter().all(|t| *t == ts[0]) {
                    Ok(format!("unroll_forall; ({})", ts[0]))
                } else {
                    Ok(format!("unroll_forall; [ {} ]", ts.join(" | ")))
                }
            }
            F::Ex(v, lo, hi, b) => {
                let mut found = None;
                for k in *lo..=*hi {
                    ctx.push((v.clone(), Some(k)));
                    let ok = self.kernel_true(b, ctx);
                    ctx.pop();
                    if ok {
                        found = Some(k);
                        break;
                    }
                }
                let k = found.ok_or(TranslateError::NoWitness)?;
                ctx.push((v.clone(), Some(k)));
                let t = self.tac(b, ctx);
                ctx.pop();
                Ok(format!("exists {}%Z; split; [ lia | {} ]", zi(k), t?))
            }
            F::Cmp(c, a, b) => self.leaf(*c, a, b, ctx),
            F::Dom(b) => {
                let each = self.tac(b, ctx)?;
                Ok(match uniform(b) {
                    Some((v, lo, hi, body)) => format!(
                        "first [ (intros {v} H{v}; pose proof (conj (IZR_le _ _ (proj1 H{v})) (IZR_le _ _ (proj2 H{v}))) as R{v}; \
                         change (IZR {} <= IZR {v} <= IZR {}) in R{v}; {}) | ({each}) ]",
                        zi(lo),
                        zi(hi),
                        uniform_tac(body)
                    ),
                    None => each,
                })
            }
        }
    }

    /// Collects replacements in `t`, innermost first.
    fn collect(
        &self,
        t: &T,
        ctx: &mut Ctx,
        open: &mut Vec<String>,
        r: &mut Render,
        lits: &mut HashMap<usize, Rational>,
        steps: &mut Vec<String>,
    ) -> Result<(), TranslateError> {
        let is_closed = closed(t, &mut open.clone());
        if exact(t) && heavy(t) && is_closed {
            let q = self
                .kernel_value(t, ctx)
                .ok_or(TranslateError::ExactSubterm)?;
            let text = r.term(t, ctx, Mode::Proof);
            let proof = format!(
                "decide_exact (FEq {} {})",
                ast_lit(&q),
                ast_term(t, ctx, lits, self.ops)
            );
            steps.push(format!("replace {text} with {} by ({proof})", q_coq(&q)));
            r.repl.insert(addr(t), q_coq(&q));
            lits.insert(addr(t), q);
            return Ok(());
        }
        match t {
            T::Lit(_) | T::Var(_) | T::Pi | T::Data(_) => Ok(()),
            T::Add(ts) | T::Mul(ts) => {
                for u in ts {
                    self.collect(u, ctx, open, r, lits, steps)?;
                }
                Ok(())
            }
            T::Sub(a, b) | T::Div(a, b) => {
                self.collect(a, ctx, open, r, lits, steps)?;
                self.collect(b, ctx, open, r, lits, steps)
            }
            // `interval` does not take Rmin/Rmax: the leaf's last step rewrites them
            // (`attn_extrema`, once the sums are unrolled and a forall's value is in the
            // goal, so no binder hides them)
            T::Min(a, b) | T::Max(a, b) => {
                self.collect(a, ctx, open, r, lits, steps)?;
                self.collect(b, ctx, open, r, lits, steps)
            }
            // not reached: `translate` keeps a band term beside a transcendental one kernel-only
            T::Band(..) => Err(TranslateError::BandInInterval),
            // not reached: an obligation with a layer quantity takes the layer road
            T::Layer(..) => Err(TranslateError::LayerRoad(
                "a layer quantity outside the layer road".into(),
            )),
            T::Neg(a) | T::Abs(a) | T::Pow(a, _) | T::Fun(_, a) => {
                self.collect(a, ctx, open, r, lits, steps)
            }
            T::Ceil(a) | T::Floor(a) => {
                if !is_closed {
                    return Err(TranslateError::RoundingUnderSum);
                }
                self.collect(a, ctx, open, r, lits, steps)?;
                let z = self
                    .kernel_value(t, ctx)
                    .filter(|q| *q.denom() == 1)
                    .ok_or(TranslateError::RoundingUndecided)?;
                let text = r.term(t, ctx, Mode::Proof);
                let lemma = if matches!(t, T::Ceil(_)) {
                    "Rceil_eq"
                } else {
                    "Rfloor_eq"
                };
                let unroll = unroll_tac(extremum(a));
                steps.push(format!(
                    "replace {text} with {} by (apply {lemma}; split; {unroll}; attn_prep; attn_interval)",
                    q_coq(&z)
                ));
                r.repl.insert(addr(t), q_coq(&z));
                lits.insert(addr(t), z);
                Ok(())
            }
            T::Sum(..) if ln_sum(t).is_some() => {
                let (lo, hi, k) = ln_sum(t).unwrap_or_default();
                let text = r.term(t, ctx, Mode::Proof);
                let blocks = format!(
                    "(fold_right Rplus 0 (map (fun p => ln (IZR p)) (ln_blocks {} {} {})))",
                    zi(lo),
                    zi(hi),
                    zi(k)
                );
                steps.push(format!(
                    "replace {text} with {blocks} by (symmetry; apply (sumZ_ln_blocks {} {} {}); lia)",
                    zi(lo),
                    zi(hi),
                    zi(k)
                ));
                r.repl.insert(addr(t), blocks);
                Ok(())
            }
            T::Sum(..) if ln_sum_chunked(t).is_some() => {
                // split the sum into chunks (sumZ_split2), enclose each chunk by
                // interval_intro on its blocks and name it (ln_chunk, in the
                // file's header): the statement's interval sees the names and
                // their enclosures
                let (lo, hi, k) = ln_sum_chunked(t).unwrap_or_default();
                let chunks = ln_chunks(lo, hi, k);
                let tag = steps.len();
                for &(a, b) in &chunks[..chunks.len() - 1] {
                    steps.push(format!(
                        "rewrite (sumZ_split2 {} {} {} {}) by first [ reflexivity | lia ]",
                        zi(a),
                        zi(b),
                        zi(b + 1),
                        zi(hi)
                    ));
                }
                let mut names = Vec::new();
                for (j, &(a, b)) in chunks.iter().enumerate() {
                    let x = format!("lnc_{tag}_{}", j + 1);
                    steps.push(format!("ln_chunk {}%Z {}%Z {}%Z {x}", zi(a), zi(b), zi(k)));
                    names.push(x);
                }
                let mut sum = names.pop().unwrap_or_default();
                while let Some(x) = names.pop() {
                    sum = format!("({x} + {sum})");
                }
                r.repl.insert(addr(t), sum);
                Ok(())
            }
            T::Sum(v, lo, hi, b) => {
                if let Some(g) = geometric(t).filter(|_| is_closed) {
                    if self.geometric_step(t, &g, (*lo, *hi), ctx, r, steps) {
                        return Ok(());
                    }
                }
                open.push(v.clone());
                let res = self.collect(b, ctx, open, r, lits, steps);
                open.pop();
                res
            }
        }
    }

    /// Replaces a [`geometric`] sum by its closed form (false, replacing
    /// nothing, when the kernel does not decide the sign of c), proven in Coq by
    /// applying `sumZ_exp_lin` or `sumZ_lin_exp_lin` to the sum as stated (the
    /// body is shown to be e^{c·k}, resp. k·e^{c·k}, by `ring` or `field`; c ≠ 0 by
    /// `interval`).
    fn geometric_step(
        &self,
        t: &T,
        g: &Geometric,
        (lo, hi): (i64, i64),
        ctx: &mut Ctx,
        r: &mut Render,
        steps: &mut Vec<String>,
    ) -> bool {
        let zero = || T::Lit(Rational::new());
        let sign = if self.kernel_true(&F::Cmp(Cmp::Lt, g.c.clone(), zero()), ctx) {
            "Rlt_not_eq"
        } else if self.kernel_true(&F::Cmp(Cmp::Gt, g.c.clone(), zero()), ctx) {
            "Rgt_not_eq"
        } else {
            // c = 0 (or undecided): no closed form, the sum is unrolled
            return false;
        };
        let c = r.term(&g.c, ctx, Mode::Proof);
        let text = r.term(t, ctx, Mode::Proof);
        let hi1 = hi + 1;
        let e = |k: i64| format!("(exp ({c} * (IZR {})))", zi(k));
        let (elo, ehi1, q) = (e(lo), e(hi1), format!("(exp {c})"));
        let (lemma, closed_form, body) = if g.weighted {
            (
                "sumZ_lin_exp_lin",
                format!(
                    "((((IZR {}) * {elo}) - ((IZR {}) * {ehi1})) / (1 - {q}) + ({q} * ({elo} - {ehi1})) / ((1 - {q}) * (1 - {q})))",
                    zi(lo),
                    zi(hi1)
                ),
                if g.exp_first {
                    "rewrite Rmult_comm; f_equal; f_equal; first [ ring | field ]"
                } else {
                    "f_equal; f_equal; first [ ring | field ]"
                },
            )
        } else {
            (
                "sumZ_exp_lin",
                format!("(({elo} - {ehi1}) / (1 - {q}))"),
                "f_equal; first [ ring | field ]",
            )
        };
        steps.push(format!(
            "replace {text} with {closed_form} by (symmetry; apply ({lemma} {} {} {} {c}); \
             [ reflexivity | lia | apply {sign}; attn_prep; attn_interval | intros k; cbv beta; {body} ])",
            zi(lo),
            zi(hi),
            zi(hi1)
        ));
        r.repl.insert(addr(t), closed_form);
        true
    }

    fn leaf(&self, c: Cmp, a: &T, b: &T, ctx: &mut Ctx) -> Result<String, TranslateError> {
        let mut r = Render {
            ops: self.ops,
            repl: HashMap::new(),
        };
        let mut lits = HashMap::new();
        let mut steps = Vec::new();
        self.collect(a, ctx, &mut Vec::new(), &mut r, &mut lits, &mut steps)?;
        self.collect(b, ctx, &mut Vec::new(), &mut r, &mut lits, &mut steps)?;
        let now_exact = |t: &T| exact_after(t, &lits);
        let unroll = unroll_tac(extremum(a) || extremum(b));
        let last = if now_exact(a) && now_exact(b) {
            format!(
                "decide_exact ({} {} {})",
                c.ast(),
                ast_term(a, ctx, &lits, self.ops),
                ast_term(b, ctx, &lits, self.ops)
            )
        } else if c == Cmp::Ne {
            // a ≠ b from a < b or a > b, the side the kernel decides (Coq re-proves it
            // with `interval`): a divisor's or a negative power's domain condition
            let side = if self.kernel_true(&F::Cmp(Cmp::Lt, a.clone(), b.clone()), ctx) {
                "Rlt_not_eq"
            } else if self.kernel_true(&F::Cmp(Cmp::Gt, a.clone(), b.clone()), ctx) {
                "Rgt_not_eq"
            } else {
                return Err(TranslateError::DisequalityUndecided);
            };
            format!("apply {side}; {unroll}; attn_prep; attn_interval")
        } else if c == Cmp::Eq {
            // the kernel decides such an equality only when both sides are the same
            // point (e.g. an empty sum, or B̃(0) = Σ (cos(0·ω_i) − 1)): try computation,
            // linear arithmetic, and 0·x = 0, cos 0 = 1, sin 0 = 0 first
            format!("{unroll}; attn_prep; first [ reflexivity | lra | (repeat rewrite ?Rmult_0_l, ?Rmult_0_r, ?cos_0, ?sin_0; lra) ]")
        } else {
            format!("{unroll}; attn_prep; attn_interval")
        };
        steps.push(last);
        Ok(steps
            .into_iter()
            .map(|s| format!("({s})"))
            .collect::<Vec<_>>()
            .join("; "))
    }
}

/// The first steps of an `interval` proof: the sums unrolled, then (when the goal has
/// a `min` or `max`, which `interval` does not take) `attn_extrema` (the generated
/// file's header: each extremum by the side the enclosures decide, else by its
/// absolute-value form; every rewrite an equality Coq proves).
fn unroll_tac(extrema: bool) -> &'static str {
    if extrema {
        "unroll_sums; attn_extrema"
    } else {
        "unroll_sums"
    }
}

fn exact_after(t: &T, lits: &HashMap<usize, Rational>) -> bool {
    if lits.contains_key(&addr(t)) {
        return true;
    }
    match t {
        T::Lit(_) | T::Var(_) | T::Data(_) => true,
        T::Pi | T::Fun(..) | T::Layer(..) => false,
        T::Add(ts) | T::Mul(ts) | T::Band(_, ts) => ts.iter().all(|u| exact_after(u, lits)),
        T::Sub(a, b) | T::Div(a, b) | T::Min(a, b) | T::Max(a, b) => {
            exact_after(a, lits) && exact_after(b, lits)
        }
        T::Neg(a) | T::Abs(a) | T::Ceil(a) | T::Floor(a) | T::Pow(a, _) => exact_after(a, lits),
        T::Sum(_, _, _, b) => exact_after(b, lits),
    }
}

/// One translated obligation.
#[derive(Clone, Debug)]
pub(crate) struct Block {
    /// Index in the certificate.
    pub index: usize,
    /// The comments above the lemma: the obligation's name, its kernel formula,
    /// the certificate's names of the binders.
    pub head: String,
    /// `Definition big_k_j : Z := …` lines the statement and proof use.
    pub defs: String,
    /// The statement, in Coq's real-number syntax.
    pub stmt: String,
    /// The proof: tactic sentences, each without its final period.
    pub script: Vec<String>,
}

impl Block {
    /// The lemma `o_k` with its proof.
    pub(crate) fn text(&self) -> String {
        let mut t = format!(
            "{}{}Lemma o_{} :\n  {}.\nProof.\n",
            self.head,
            self.defs,
            self.index + 1,
            self.stmt
        );
        for s in &self.script {
            let _ = writeln!(t, "  {s}.");
        }
        t.push_str("Qed.\n\n");
        t
    }

    /// The statement as a definition `s_k : Prop` (which must be well formed),
    /// then the lemma's proof under `Fail`: the file compiles past it only if Coq
    /// does not prove the statement ([`crate::coq::proves_none`]).
    pub(crate) fn refutation_text(&self) -> String {
        let k = self.index + 1;
        let tac: Vec<String> = self.script.iter().map(|s| format!("({s})")).collect();
        format!(
            "{}{}Definition s_{k} : Prop :=\n  {}.\nFail Definition o_{k} : s_{k} := ltac:(unfold s_{k}; {}).\n\n",
            self.head,
            self.defs,
            self.stmt,
            tac.join("; ")
        )
    }
}
