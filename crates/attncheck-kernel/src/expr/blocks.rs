//! The papers' building blocks, as named terms of the certificate language, and the
//! reader's rewriting of them into the core grammar (docs/certificate-format.md,
//! "Building blocks").
//!
//! Each block is defined by one fixed expansion into core operators (its template
//! below): its arguments are bound once each by `let` to fresh names `#<name>.<k>`
//! (k counts the expansions of one formula), so that an argument is evaluated once
//! and no argument can capture or be captured (a user's formula may not contain an
//! atom that starts with `#`, `expand` refuses it). The reader ([`super::parse`])
//! rewrites every block before anything else reads the formula: the cost model, the
//! validation, the evaluator and the Coq translation all see exactly the expansion,
//! so a block adds no trusted evaluation code and cannot mean two things.
//!
//! Argument checks are part of the expansion: a term `(* 0 g₁ … gₖ)` is added whose
//! factors are partial operations, defined exactly when the arguments are in the
//! block's domain: `(ln a)` when a > 0, `(sqrt a)` when a ≥ 0, and
//! `(sqrt (- (floor a) a))` when a is an integer (⌊a⌋ − a ≤ 0, and = 0 exactly for an
//! integer). Inside the domain the guard is 0 (the kernel's 0·x is 0 for every finite
//! x, and these factors are finite), so the block's value is the formula's; outside
//! it, or when an argument's enclosure is not inside it, the guard — hence the block
//! — is undefined, and every comparison on it is undecided (never a value).
//!
//! Proof sketch of each formula, from the papers (../shared/papers/positional.md §2–3,
//! sparse.md §3, §5):
//! - `(alibi-slope h H)` = m_h = 2^{−8h/H} = exp(−(8h/H)·ln 2), for integers 1 ≤ h ≤ H
//!   (the ALiBi paper's slope rule).
//! - `(alibi-tail m Δ w)` = T^∞(m, Δ, w) = e^Δ·x / (1 − x + e^Δ·x) with x = e^{−mw}, for
//!   m > 0, Δ ≥ 0 and an integer w ≥ 0: the supremum over content within Δ and over
//!   the query position of the attention mass at distance ≥ w (proved for all
//!   parameters in coq/AlibiTailBound.v). The denominator is 1 + (e^Δ − 1)·x > 0.
//! - `(alibi-window m Δ ε)` = w_ε = ⌈(1/m)·ln((e^Δ(1 − ε) + ε)/ε)⌉, for m > 0, Δ ≥ 0,
//!   0 < ε < 1: the least integer w ≥ 0 with T^∞(m, Δ, w) ≤ ε (T^∞ decreases in w, and
//!   T^∞ ≤ ε ⇔ e^{−mw} ≤ ε/(e^Δ(1 − ε) + ε)). A ceiling: decided only when the
//!   enclosure does not straddle an integer, as `ceil` is.
//! - `(union-bound-dim n t δ)` = d_ub = ⌈(2/t²)·ln(n²/δ)⌉, for an integer n ≥ 1, t > 0
//!   and 0 < δ < 1: the dimension from which Hoeffding's inequality and a union bound
//!   over the n(n − 1)/2 pairs give P(max_{l≠j} |⟨s_l, s_j⟩| > t·d) ≤ δ.

use super::syntax::{err, ExprError, Sexp};

/// A building block: its operator, its parameters (the template's `$0`, `$1`, …, each
/// used exactly once) and its expansion.
pub struct Block {
    /// The operator as written.
    pub name: &'static str,
    /// The parameters' names, as the documentation writes them.
    pub params: &'static [&'static str],
    /// The expansion: `$i` is argument i, `#x` a fresh name.
    pub template: &'static str,
}

/// The building blocks (docs/certificate-format.md, "Building blocks").
pub const BLOCKS: [Block; 4] = [
    Block {
        name: "alibi-slope",
        params: &["h", "H"],
        template: "(let #h $0 (let #H $1 \
            (+ (exp (neg (* (/ (* 8 #h) #H) (ln 2)))) \
               (* 0 (sqrt (- #h 1)) (sqrt (- #H #h)) (sqrt (- (floor #h) #h)) (sqrt (- (floor #H) #H))))))",
    },
    Block {
        name: "alibi-tail",
        params: &["m", "delta", "w"],
        template: "(let #m $0 (let #d $1 (let #w $2 (let #x (exp (neg (* #m #w))) (let #e (exp #d) \
            (+ (/ (* #e #x) (+ (- 1 #x) (* #e #x))) \
               (* 0 (ln #m) (sqrt #d) (sqrt #w) (sqrt (- (floor #w) #w)))))))))",
    },
    Block {
        name: "alibi-window",
        params: &["m", "delta", "eps"],
        template: "(let #m $0 (let #d $1 (let #e $2 \
            (ceil (+ (/ (ln (/ (+ (* (exp #d) (- 1 #e)) #e) #e)) #m) \
                     (* 0 (ln #m) (sqrt #d) (ln #e) (ln (- 1 #e))))))))",
    },
    Block {
        name: "union-bound-dim",
        params: &["n", "t", "delta"],
        template: "(let #n $0 (let #t $1 (let #p $2 \
            (ceil (+ (* (/ 2 (* #t #t)) (ln (/ (* #n #n) #p))) \
                     (* 0 (sqrt (- #n 1)) (sqrt (- (floor #n) #n)) (ln #t) (ln #p) (ln (- 1 #p))))))))",
    },
];

/// The block named `op`.
pub fn block(op: &str) -> Option<&'static Block> {
    BLOCKS.iter().find(|b| b.name == op)
}

/// `e` with every building block replaced by its expansion (innermost first), and
/// every atom checked not to start with `#` (reserved for the expansions' names).
/// `next` numbers the expansions of one formula. Each argument is moved into its
/// `let` once, so the result is larger than `e` by a constant per block.
///
/// Offsets: the expansion's nodes carry the block's offset, except its literals,
/// which carry offset + 1 + (the index of the literal's text among the template's
/// distinct literals) — inside the block's operator name, where no other atom
/// starts — so that the evaluator's table of literals (by offset) never holds two
/// different texts at one offset.
pub(super) fn expand(e: Sexp, next: &mut usize) -> Result<Sexp, ExprError> {
    match e {
        Sexp::Atom(a, o) => {
            if a.starts_with('#') {
                return err(
                    o,
                    format!("`{a}`: names starting with `#` are reserved for the expansion of building blocks"),
                );
            }
            Ok(Sexp::Atom(a, o))
        }
        Sexp::List(items, o) => {
            let items = items
                .into_iter()
                .map(|x| expand(x, next))
                .collect::<Result<Vec<_>, _>>()?;
            let op = match items.first() {
                Some(Sexp::Atom(op, _)) => block(op),
                _ => None,
            };
            let Some(b) = op else {
                return Ok(Sexp::List(items, o));
            };
            let args: Vec<Sexp> = items.into_iter().skip(1).collect();
            if args.len() != b.params.len() {
                return err(
                    o,
                    format!(
                        "`{}` takes {} argument(s) ({}), got {}",
                        b.name,
                        b.params.len(),
                        b.params.join(", "),
                        args.len()
                    ),
                );
            }
            let k = *next;
            *next += 1;
            let template = super::parse::parse_at(b.template, b.template.as_bytes(), &mut 0, 0)
                .expect("a block's template parses");
            let mut args: Vec<Option<Sexp>> = args.into_iter().map(Some).collect();
            let mut lits: Vec<String> = Vec::new();
            Ok(instantiate(template, &mut args, k, o, &mut lits))
        }
    }
}

fn instantiate(
    t: Sexp,
    args: &mut [Option<Sexp>],
    k: usize,
    o: usize,
    lits: &mut Vec<String>,
) -> Sexp {
    match t {
        Sexp::Atom(a, _) => {
            if let Some(i) = a.strip_prefix('$') {
                let i: usize = i.parse().expect("a template's parameter");
                return args[i].take().expect("each parameter is used once");
            }
            if a.starts_with('#') {
                return Sexp::Atom(format!("{a}.{k}"), o);
            }
            if crate::literal_digits(&a).is_some() {
                let i = match lits.iter().position(|l| *l == a) {
                    Some(i) => i,
                    None => {
                        lits.push(a.clone());
                        lits.len() - 1
                    }
                };
                return Sexp::Atom(a, o + 1 + i);
            }
            Sexp::Atom(a, o)
        }
        Sexp::List(items, _) => Sexp::List(
            items
                .into_iter()
                .map(|x| instantiate(x, args, k, o, lits))
                .collect(),
            o,
        ),
    }
}

/// The deepest level of an atom in `e` as the reader counts levels (the top is level
/// 0, a list's items are one level below it): what [`super::MAX_DEPTH`] bounds.
pub(super) fn depth(e: &Sexp) -> usize {
    match e {
        Sexp::Atom(..) => 0,
        Sexp::List(items, _) => items.iter().map(|x| 1 + depth(x)).max().unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_use_each_parameter_once_and_distinct_literals_fit_in_the_name() {
        for b in &BLOCKS {
            let t = super::super::parse::parse_at(b.template, b.template.as_bytes(), &mut 0, 0)
                .unwrap();
            let mut atoms = Vec::new();
            fn walk(e: &Sexp, out: &mut Vec<String>) {
                match e {
                    Sexp::Atom(a, _) => out.push(a.clone()),
                    Sexp::List(items, _) => items.iter().for_each(|x| walk(x, out)),
                }
            }
            walk(&t, &mut atoms);
            for i in 0..b.params.len() {
                let p = format!("${i}");
                assert_eq!(atoms.iter().filter(|a| **a == p).count(), 1, "{}", b.name);
            }
            let mut lits: Vec<&String> = atoms
                .iter()
                .filter(|a| crate::literal_digits(a).is_some())
                .collect();
            lits.sort();
            lits.dedup();
            assert!(lits.len() < b.name.len(), "{}", b.name);
        }
    }
}
