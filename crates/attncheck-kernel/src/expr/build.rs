//! Typed statement builders (issue #38): claims build their obligations as terms and
//! formulas of the certificate language through these functions, not by pasting
//! S-expression text. A [`Formula`] prints its canonical text (tokens separated by one
//! space, the form every certificate carries) and gives the kernel the tree that text
//! parses to, offsets included ([`Formula::finish`]), so the kernel does not re-parse
//! what a claim built.
//!
//! The types keep terms and formulas apart: a comparison takes two [`Term`]s and gives a
//! [`Formula`]; `and`, `not` and `forall` take formulas; `sum` and the arithmetic take
//! terms. Literals are exact rationals ([`int`], [`q`]) or a literal's text as the
//! grammar reads it ([`lit`]: `2^-8`, `1.5e-3`), kept as written so that a certificate's
//! text does not change. What the grammar checks beyond these types (a variable bound
//! where it is used, a datum of the right kind, a non-empty range) is checked by the
//! kernel when it prepares the formula, as for any text.

use super::syntax::Sexp;
use rug::Rational;
use std::fmt;

/// A node of a term or formula under construction (offsets are assigned when it is
/// finished).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Atom(String),
    List(Vec<Node>),
}

impl Node {
    fn call(op: &str, args: impl IntoIterator<Item = Node>) -> Node {
        let mut items = vec![Node::Atom(op.to_string())];
        items.extend(args);
        Node::List(items)
    }

    fn write(&self, out: &mut String) {
        match self {
            Node::Atom(a) => out.push_str(a),
            Node::List(items) => {
                out.push('(');
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    x.write(out);
                }
                out.push(')');
            }
        }
    }

    /// The S-expression of the text [`Node::write`] prints, with the offsets the reader
    /// gives it: an atom's its first byte, a list's its `(`.
    fn sexp(&self, at: &mut usize) -> Sexp {
        match self {
            Node::Atom(a) => {
                let o = *at;
                *at += a.len();
                Sexp::Atom(a.clone(), o)
            }
            Node::List(items) => {
                let o = *at;
                *at += 1;
                let mut out = Vec::with_capacity(items.len());
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        *at += 1;
                    }
                    out.push(x.sexp(at));
                }
                *at += 1;
                Sexp::List(out, o)
            }
        }
    }
}

/// A term of the certificate language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term(Node);

/// A formula of the certificate language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Formula(Node);

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.0.write(&mut s);
        f.write_str(&s)
    }
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.0.write(&mut s);
        f.write_str(&s)
    }
}

impl Formula {
    /// Its canonical text and the tree that text parses to (before the building
    /// blocks' expansion, as [`super::parse_written`] gives it).
    pub fn finish(&self) -> (String, Sexp) {
        let mut s = String::new();
        self.0.write(&mut s);
        let e = self.0.sexp(&mut 0);
        (s, e)
    }
}

impl Term {
    /// The same term as a formula's text would hold it (for a term's own checks).
    pub fn finish(&self) -> (String, Sexp) {
        let mut s = String::new();
        self.0.write(&mut s);
        let e = self.0.sexp(&mut 0);
        (s, e)
    }
}

// ───── atoms ─────

/// An integer literal.
pub fn int(k: impl Into<i128>) -> Term {
    Term(Node::Atom(k.into().to_string()))
}

/// An exact rational literal, printed `p/q` (or `p` for an integer).
pub fn q(x: &Rational) -> Term {
    Term(Node::Atom(x.to_string()))
}

/// A literal as written (`2^-8`, `1.5e-3`, `-3/4`): the grammar reads it exactly
/// ([`crate::parse_rational`]); a text that is not one is refused when the formula is
/// prepared, as in any certificate.
pub fn lit(text: impl Into<String>) -> Term {
    Term(Node::Atom(text.into()))
}

/// A variable bound by an enclosing `forall`, `sum` or `let`, or a datum's name.
pub fn var(name: &str) -> Term {
    Term(Node::Atom(name.to_string()))
}

/// π.
pub fn pi() -> Term {
    Term(Node::Atom("pi".into()))
}

/// A term the user wrote as text (a spec's parameter such as `(ln 10)`), read once
/// here: the statement carries its canonical text (one space between tokens), and
/// the kernel the tree it was read as. What the grammar checks beyond the syntax
/// (operators, arities, bound names) is checked when the formula is prepared.
pub fn parse_term(text: &str) -> Result<Term, super::ExprError> {
    fn node(e: &Sexp) -> Node {
        match e {
            Sexp::Atom(a, _) => Node::Atom(a.clone()),
            Sexp::List(items, _) => Node::List(items.iter().map(node).collect()),
        }
    }
    Ok(Term(node(&super::parse_written(text)?)))
}

/// An integer or an exact rational as its literal ([`int`], [`q`]), so that claim code
/// can pass its own numbers where a term is wanted: `add([x.into(), int(1)])`.
impl From<i64> for Term {
    fn from(k: i64) -> Term {
        int(k)
    }
}

impl From<i32> for Term {
    fn from(k: i32) -> Term {
        int(k)
    }
}

impl From<u32> for Term {
    fn from(k: u32) -> Term {
        int(k)
    }
}

impl From<u64> for Term {
    fn from(k: u64) -> Term {
        int(k)
    }
}

impl From<usize> for Term {
    fn from(k: usize) -> Term {
        // a usize has at most 64 bits on every target Rust supports, so it fits an i128
        Term(Node::Atom(k.to_string()))
    }
}

impl From<&Rational> for Term {
    fn from(x: &Rational) -> Term {
        q(x)
    }
}

// ───── terms ─────

fn terms(ts: impl IntoIterator<Item = Term>) -> impl Iterator<Item = Node> {
    ts.into_iter().map(|t| t.0)
}

/// `(+ a …)`.
pub fn add(ts: impl IntoIterator<Item = Term>) -> Term {
    Term(Node::call("+", terms(ts)))
}

/// `(* a …)`.
pub fn mul(ts: impl IntoIterator<Item = Term>) -> Term {
    Term(Node::call("*", terms(ts)))
}

/// `(- a b)`.
pub fn sub(a: Term, b: Term) -> Term {
    Term(Node::call("-", [a.0, b.0]))
}

/// `(neg a)`.
pub fn neg(a: Term) -> Term {
    Term(Node::call("neg", [a.0]))
}

/// `(- a)`: negation as the short form writes it.
pub fn minus(a: Term) -> Term {
    Term(Node::call("-", [a.0]))
}

/// `(/ a b)`.
pub fn div(a: Term, b: Term) -> Term {
    Term(Node::call("/", [a.0, b.0]))
}

/// `(pow a n)`, n an integer literal (any width: the kernel refuses one it cannot
/// take, as for any text).
pub fn pow(a: Term, n: impl Into<i128>) -> Term {
    Term(Node::call("pow", [a.0, int(n).0]))
}

/// A function of one term: `exp`, `ln`, `sqrt`, `sin`, `cos`, `abs`, `ceil`, `floor`.
pub fn apply(f: Fun, a: Term) -> Term {
    Term(Node::call(f.name(), [a.0]))
}

/// `(exp a)`.
pub fn exp(a: Term) -> Term {
    apply(Fun::Exp, a)
}

/// `(ln a)`.
pub fn ln(a: Term) -> Term {
    apply(Fun::Ln, a)
}

/// `(sqrt a)`.
pub fn sqrt(a: Term) -> Term {
    apply(Fun::Sqrt, a)
}

/// `(sin a)`.
pub fn sin(a: Term) -> Term {
    apply(Fun::Sin, a)
}

/// `(cos a)`.
pub fn cos(a: Term) -> Term {
    apply(Fun::Cos, a)
}

/// `(abs a)`.
pub fn abs(a: Term) -> Term {
    apply(Fun::Abs, a)
}

/// `(ceil a)`.
pub fn ceil(a: Term) -> Term {
    apply(Fun::Ceil, a)
}

/// `(floor a)`.
pub fn floor(a: Term) -> Term {
    apply(Fun::Floor, a)
}

/// `(min a b)`.
pub fn min(a: Term, b: Term) -> Term {
    Term(Node::call("min", [a.0, b.0]))
}

/// `(max a b)`.
pub fn max(a: Term, b: Term) -> Term {
    Term(Node::call("max", [a.0, b.0]))
}

/// `(sum v lo hi body)`. The bounds are any integers (`u64` included), printed as
/// they are; the kernel refuses a range it cannot run, as for any text.
pub fn sum(v: &str, lo: impl Into<i128>, hi: impl Into<i128>, body: Term) -> Term {
    Term(Node::call("sum", [var(v).0, int(lo).0, int(hi).0, body.0]))
}

/// `(let v t body)`, a term.
pub fn let_term(v: &str, t: Term, body: Term) -> Term {
    Term(Node::call("let", [var(v).0, t.0, body.0]))
}

/// A data operation or building block `(op a …)`: a datum's name is a [`var`].
pub fn call(op: &str, args: impl IntoIterator<Item = Term>) -> Term {
    Term(Node::call(op, terms(args)))
}

/// The functions of one term.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fun {
    /// `exp`
    Exp,
    /// `ln`
    Ln,
    /// `sqrt`
    Sqrt,
    /// `sin`
    Sin,
    /// `cos`
    Cos,
    /// `abs`
    Abs,
    /// `ceil`
    Ceil,
    /// `floor`
    Floor,
}

impl Fun {
    /// The operator as written.
    pub fn name(self) -> &'static str {
        match self {
            Fun::Exp => "exp",
            Fun::Ln => "ln",
            Fun::Sqrt => "sqrt",
            Fun::Sin => "sin",
            Fun::Cos => "cos",
            Fun::Abs => "abs",
            Fun::Ceil => "ceil",
            Fun::Floor => "floor",
        }
    }
}

// ───── formulas ─────

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rel {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `=` (exact equality)
    Eq,
}

impl Rel {
    /// The operator as written.
    pub fn name(self) -> &'static str {
        match self {
            Rel::Lt => "<",
            Rel::Le => "<=",
            Rel::Gt => ">",
            Rel::Ge => ">=",
            Rel::Eq => "=",
        }
    }
}

/// `(rel a b)`.
pub fn cmp(rel: Rel, a: Term, b: Term) -> Formula {
    Formula(Node::call(rel.name(), [a.0, b.0]))
}

/// `(< a b)`.
pub fn lt(a: Term, b: Term) -> Formula {
    cmp(Rel::Lt, a, b)
}

/// `(<= a b)`.
pub fn le(a: Term, b: Term) -> Formula {
    cmp(Rel::Le, a, b)
}

/// `(> a b)`.
pub fn gt(a: Term, b: Term) -> Formula {
    cmp(Rel::Gt, a, b)
}

/// `(>= a b)`.
pub fn ge(a: Term, b: Term) -> Formula {
    cmp(Rel::Ge, a, b)
}

/// `(= a b)`.
pub fn eq(a: Term, b: Term) -> Formula {
    cmp(Rel::Eq, a, b)
}

/// `(and f …)`.
pub fn and(fs: impl IntoIterator<Item = Formula>) -> Formula {
    Formula(Node::call("and", fs.into_iter().map(|f| f.0)))
}

/// `(not f)`.
pub fn not(f: Formula) -> Formula {
    Formula(Node::call("not", [f.0]))
}

/// `(forall v lo hi body)`. The bounds are any integers, as for [`sum`].
pub fn forall(v: &str, lo: impl Into<i128>, hi: impl Into<i128>, body: Formula) -> Formula {
    Formula(Node::call(
        "forall",
        [var(v).0, int(lo).0, int(hi).0, body.0],
    ))
}

/// `(let v t body)`, a formula.
pub fn let_formula(v: &str, t: Term, body: Formula) -> Formula {
    Formula(Node::call("let", [var(v).0, t.0, body.0]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The built tree is the one the reader gives its text: offsets included.
    #[test]
    fn the_built_tree_is_what_its_text_parses_to() {
        let f = forall(
            "i",
            0,
            9,
            and([
                le(exp(mul([lit("-1/256"), var("i")])), lit("1/100")),
                not(lt(add([var("i"), int(1)]), minus(pi()))),
                ge(
                    call("gram-max-abs", [var("S")]),
                    sum("k", 1, 3, pow(var("k"), -2)),
                ),
            ]),
        );
        let (text, tree) = f.finish();
        assert_eq!(
            text,
            "(forall i 0 9 (and (<= (exp (* -1/256 i)) 1/100) (not (< (+ i 1) (- pi))) \
             (>= (gram-max-abs S) (sum k 1 3 (pow k -2)))))"
        );
        assert_eq!(tree, super::super::parse_written(&text).unwrap());
        assert_eq!(f.to_string(), text);
    }

    #[test]
    fn conversions_print_the_literal() {
        assert_eq!(Term::from(-7i64).to_string(), "-7");
        assert_eq!(Term::from(u64::MAX).to_string(), "18446744073709551615");
        assert_eq!(Term::from(12usize).to_string(), "12");
        assert_eq!(Term::from(-3i32).to_string(), "-3");
        assert_eq!(Term::from(u32::MAX).to_string(), "4294967295");
        assert_eq!(
            forall("w", 1, u64::MAX, lt(var("w"), int(2))).to_string(),
            "(forall w 1 18446744073709551615 (< w 2))"
        );
        assert_eq!(Term::from(&Rational::from((6, -4))).to_string(), "-3/2");
        assert_eq!(
            add([sin(var("x")), cos(pi())]).to_string(),
            "(+ (sin x) (cos pi))"
        );
    }

    /// An empty conjunction prints `(and)` (true), and a one-argument `-` is the
    /// short form of negation.
    #[test]
    fn edge_forms_print_canonically() {
        assert_eq!(and([]).to_string(), "(and)");
        assert_eq!(minus(int(2)).to_string(), "(- 2)");
        assert_eq!(neg(int(2)).to_string(), "(neg 2)");
        let (text, tree) = and([]).finish();
        assert_eq!(tree, super::super::parse_written(&text).unwrap());
    }

    /// A written term is read as the reader reads it and printed canonically;
    /// a text that does not read is refused with the reader's error.
    #[test]
    fn a_written_term_reads_once_and_prints_canonically() {
        let t = parse_term(" (ln   10)").unwrap();
        assert_eq!(t.to_string(), "(ln 10)");
        let (text, tree) = lt(t, int(3)).finish();
        assert_eq!(text, "(< (ln 10) 3)");
        assert_eq!(tree, super::super::parse_written(&text).unwrap());
        assert!(parse_term("(ln 10").is_err());
        assert!(parse_term("1 2").is_err());
    }

    /// A built term evaluates from its tree as its text does, block and all; an
    /// ill-formed one is refused as its text is.
    #[test]
    fn a_built_term_evaluates_as_its_text() {
        use super::super::{eval_built, eval_built_exact, eval_exact, eval_with, Data};
        let data = Data::new();
        let t = add([
            call("alibi-slope", [int(1), int(8)]),
            mul([lit("2^-3"), exp(minus(int(1)))]),
        ]);
        let text = t.to_string();
        assert_eq!(
            eval_built(&t, 96, &data).unwrap(),
            eval_with(&text, 96, &data).unwrap()
        );
        let e = div(int(3), add([int(1), q(&Rational::from((1, 2)))]));
        assert_eq!(
            eval_built_exact(&e, 64, &data).unwrap(),
            Some(Rational::from(2))
        );
        assert_eq!(
            eval_built_exact(&e, 64, &data).unwrap(),
            eval_exact(&e.to_string(), 64, &data).unwrap()
        );
        assert_eq!(eval_built_exact(&t, 64, &data).unwrap(), None);
        assert!(eval_built(&ln(var("x")), 64, &data).is_err());
        assert!(eval_built(&call("no-such-op", [int(1)]), 64, &data).is_err());
    }

    /// An atom that is not one token of the reader is refused: its text would read back
    /// as another tree than the one decided (`(< (+ 1 1) 3)` written as one atom, a
    /// bound name with a space in it), and what the kernel decides must be what the
    /// certificate's text says.
    #[test]
    fn an_atom_that_is_not_one_token_is_refused() {
        use super::super::{check_built, eval_built, Data};
        let d = Data::new();
        for bad in ["(+ 1 1)", "1 2", "", "x)", "(x"] {
            assert!(
                check_built(&lt(lit(bad), int(3)), 64, &d).is_err(),
                "{bad:?}"
            );
            assert!(
                eval_built(&add([lit(bad), int(1)]), 64, &d).is_err(),
                "{bad:?}"
            );
        }
        let spaced = forall("a b", 0, 1, lt(var("a b"), int(5)));
        assert!(check_built(&spaced, 64, &d).is_err());
        let huge = lit("1".repeat(1_000_001));
        assert!(check_built(&lt(huge, int(3)), 64, &d).is_err());
        let ok = lt(add([int(1), int(1)]), int(3));
        assert_eq!(check_built(&ok, 64, &d).unwrap(), crate::Certainty::True);
    }

    #[test]
    fn rationals_print_exactly() {
        assert_eq!(q(&Rational::from((-3, 4))).to_string(), "-3/4");
        assert_eq!(q(&Rational::from(7)).to_string(), "7");
        assert_eq!(int(-5i64).to_string(), "-5");
    }
}
