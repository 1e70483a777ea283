//! The grammar (expr/grammar.rs): [`expr::read`]'s typed tree, which the Coq
//! translation reads instead of the text, says what the formula says (printed back
//! node by node it is the formula); [`expr::validate`] and [`expr::validate_term`]
//! refuse what the evaluator refuses, in every branch, whatever the values.

use attncheck_kernel::certificate::DataEntry;
use attncheck_kernel::expr::tree::{Cmp, DataOp, Elem, Formula, Term};
use attncheck_kernel::expr::{self, Data, Sexp};

fn binder(b: &expr::tree::Binder) -> String {
    format!("{} {} {}", b.var, b.lo, b.hi)
}

fn list(head: &str, rest: &[String]) -> String {
    let mut s = format!("({head}");
    for x in rest {
        s.push(' ');
        s.push_str(x);
    }
    s.push(')');
    s
}

/// The formula the tree says, as text.
fn formula(f: &Formula) -> String {
    match f {
        Formula::Cmp(c, a, b) => {
            let op = match c {
                Cmp::Lt => "<",
                Cmp::Le => "<=",
                Cmp::Gt => ">",
                Cmp::Ge => ">=",
                Cmp::Eq => "=",
            };
            list(op, &[term(a), term(b)])
        }
        Formula::And(fs) => list("and", &fs.iter().map(formula).collect::<Vec<_>>()),
        Formula::Not(f) => list("not", &[formula(f)]),
        Formula::Forall(b, f) => list("forall", &[binder(b), formula(f)]),
        Formula::Let(v, t, f) => list("let", &[v.to_string(), term(t), formula(f)]),
    }
}

/// The term the tree says, as text.
fn term(t: &Term) -> String {
    let terms = |ts: &[Term]| ts.iter().map(term).collect::<Vec<_>>();
    match t {
        Term::Lit(a) | Term::Var(a) => a.to_string(),
        Term::Pi => "pi".into(),
        Term::Add(ts) => list("+", &terms(ts)),
        Term::Mul(ts) => list("*", &terms(ts)),
        Term::Sub(a, b) => list("-", &[term(a), term(b)]),
        Term::Neg(a) => list("neg", &[term(a)]),
        Term::Div(a, b) => list("/", &[term(a), term(b)]),
        Term::Min(a, b) => list("min", &[term(a), term(b)]),
        Term::Max(a, b) => list("max", &[term(a), term(b)]),
        Term::Fun(e, a) => {
            let op = match e {
                Elem::Exp => "exp",
                Elem::Ln => "ln",
                Elem::Sqrt => "sqrt",
                Elem::Sin => "sin",
                Elem::Cos => "cos",
            };
            list(op, &[term(a)])
        }
        Term::Abs(a) => list("abs", &[term(a)]),
        Term::Ceil(a) => list("ceil", &[term(a)]),
        Term::Floor(a) => list("floor", &[term(a)]),
        Term::Pow(a, n) => list("pow", &[term(a), n.to_string()]),
        Term::Sum(b, t) => list("sum", &[binder(b), term(t)]),
        Term::Let(v, t, u) => list("let", &[v.to_string(), term(t), term(u)]),
        Term::Data(d) => match d {
            DataOp::Rows(x) => list("rows", &[x.name.into()]),
            DataOp::Cols(x) => list("cols", &[x.name.into()]),
            DataOp::GramMaxAbs(x) => list("gram-max-abs", &[x.name.into()]),
            DataOp::Sparse(op, x) => list(op.name(), &[x.name.into()]),
            DataOp::Lemma { op, s, b, t } => {
                let mut rest = vec![s.name.to_string(), b.name.to_string()];
                rest.extend(t.iter().map(|t| term(t)));
                list(op.name(), &rest)
            }
            DataOp::SandwichCentred { dbar, first, r } => list(
                "sandwich-centred",
                &[dbar.to_string(), first.to_string(), term(r)],
            ),
            DataOp::BandReach { count, args } => list(
                if *count {
                    "band-reach-count"
                } else {
                    "band-reach"
                },
                &terms(args),
            ),
            DataOp::Layer(op, x, idx) => {
                let mut rest = vec![x.name.to_string()];
                rest.extend(terms(idx));
                list(op.name(), &rest)
            }
            DataOp::Attn(op, x, idx) => {
                let mut rest = vec![x.name.to_string()];
                rest.extend(terms(idx));
                list(op.name(), &rest)
            }
        },
    }
}

/// The S-expression as text (`(- a)` written `(neg a)`, as the tree has one negation).
fn text(e: &Sexp) -> String {
    match e {
        Sexp::Atom(a, _) => a.clone(),
        Sexp::List(items, _) => {
            let mut parts: Vec<String> = items.iter().map(text).collect();
            if parts.len() == 2 && parts[0] == "-" {
                parts[0] = "neg".into();
            }
            list(&parts[0], &parts[1..])
        }
    }
}

/// Signs S (2 × 3), sparse B (n = 2) and a layer datum X (3 tokens in d = 2, 2 runs).
fn data() -> Data {
    let mut data = Data::new();
    let entries = [
        (
            "S",
            DataEntry::Signs {
                n: 2,
                d: 3,
                rows: vec!["0000000000000005".into(), "0000000000000002".into()],
            },
        ),
        (
            "B",
            DataEntry::Sparse {
                n: 2,
                rows: vec![
                    vec![(0, "1/3".into()), (1, "-2".into())],
                    vec![(1, "5".into())],
                ],
            },
        ),
        (
            "X",
            DataEntry::Layer {
                form: "layer".into(),
                n: 3,
                d: 2,
                dt: "1/10".into(),
                steps: 2,
                q: vec![vec!["1".into(), "0".into()]],
                k: vec![vec!["0".into(), "1".into()]],
                v: vec![vec!["1".into(), "0".into()], vec!["0".into(), "-1".into()]],
                tokens: vec![vec![vec!["1".into(), "2".into()]; 3]; 2],
            },
        ),
    ];
    for (name, e) in entries {
        data.insert(name.into(), e.to_datum().unwrap());
    }
    data
}

/// Formulas using every operator of the grammar (and the building blocks, read in
/// their expansion).
const FORMULAS: [&str; 16] = [
    "(< 1 2)",
    "(and (<= 1/3 (+ 1 2 3)) (> (* 2 pi 3) 1) (>= (- 5 2) (neg 4)) (= (/ 1 3) 2^-8))",
    "(not (and (< (min 1 2) (max 3 4)) (not (< (abs -2) (pow 3 -2)))))",
    "(forall k -3 7 (let y (exp k) (< (ln y) (sqrt (+ (sin k) (cos y) 2)))))",
    "(< (sum j 1 4 (let z (* j j) (floor (/ z (ceil 1.5))))) 10)",
    "(< (- (- 1) (neg 2)) (let a 3 (- a)))",
    "(forall n 1 3 (> (band-reach 64 n 2) (band-reach-count 65 n 3)))",
    "(< (sandwich-centred 16 0 (+ 1 2)) (sandwich-centred 16 1 3))",
    "(and (< (rows S) (cols S)) (<= (gram-max-abs S) (rows B)))",
    "(< (row-sum-max B) (+ (row-nnz-max B) (entry-min B) (entry-max B) (entry-sum B)))",
    "(< (err-max S B) (+ (lemma-a S B) (lemma-b S B) (lemma-a-row S B 1/2) (lemma-b-row S B 2)))",
    "(< (layer-max-sqnorm X 0 1) (layer-max-sqdist X 0 1 2))",
    "(< (layer-partition X 1 0) (+ (layer-v-frob2 X) (layer-qk-frob2 X) (layer-dt X)))",
    "(forall r 0 1 (> (layer-dual-sup X r 0 -1/2 1/2 1) (layer-dual-inf X r 0 -1/2 1/2 0)))",
    "(< (alibi-tail (alibi-slope 1 8) 0 (union-bound-dim 4 1 1/2)) (alibi-window 1/2 0 1/100))",
    "(let w 5 (and (< w 6) (let w (+ w 1) (= w 6)) (forall w 1 2 (< w 3))))",
];

#[test]
fn the_tree_read_from_a_formula_is_the_formula() {
    let data = data();
    for f in FORMULAS {
        let e = expr::parse(f).unwrap_or_else(|e| panic!("{f}: {e}"));
        let tree = expr::read(&e, &data).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert_eq!(formula(&tree), text(&e), "{f}");
        expr::validate(&e, &data).unwrap();
        expr::check_with(f, 64, &data).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
}

/// What the evaluator refuses, [`expr::validate`] refuses, at the same offset, even
/// where the evaluator never goes (after a false part of an `and`, inside a `forall`
/// whose earlier instance is false): the grammar does not depend on values.
#[test]
fn validate_refuses_what_the_evaluator_refuses_in_every_branch() {
    let data = data();
    for f in [
        "(and (< 2 1) (< (foo 1) 2))",
        "(and (< 2 1) (< x 2))",
        "(and (< 2 1) (< (exp 1 2) 2))",
        "(and (< 2 1) (< (rows Y) 2))",
        "(and (< 2 1) (< (cols B) 2))",
        "(and (< 2 1) (< (layer-dt S) 2))",
        "(and (< 2 1) (< (sandwich-centred 15 0 1) 2))",
        "(and (< 2 1) (< (pow 2 x) 2))",
        "(and (< 2 1) (not (< 1 2) (< 1 2)))",
        "(and (< 2 1) (+ 1 2))",
        "(and (< 2 1) (< (< 1 2) 3))",
        "(and (< 2 1) (forall k 3 1 (< k 1)))",
        "(forall k 1 3 (and (< k 1) (< (sum j 1 k j) 9)))",
        "(and (< 2 1) (let 3 1 (< 1 2)))",
        "(and (< 2 1) (< (1 2) 3))",
    ] {
        let e = expr::parse(f).unwrap_or_else(|e| panic!("{f}: {e}"));
        let v = expr::validate(&e, &data).expect_err(f);
        let c = expr::check_with(f, 64, &data).expect_err(f);
        assert_eq!(v, c, "{f}");
    }
    for t in [
        "(+ 1 (foo))",
        "(exp 1 2)",
        "(* 1 y)",
        "(< 1 2)",
        "(min 1)",
        "(rows S S)",
    ] {
        let e = expr::parse(t).unwrap();
        let v = expr::validate_term(&e, &data).expect_err(t);
        let c = expr::eval_with(t, 64, &data).expect_err(t);
        assert_eq!(v, c, "{t}");
    }
    for t in ["(+ 1 2)", "(rows S)", "(let a 2 (* a pi))"] {
        expr::validate_term(&expr::parse(t).unwrap(), &data).unwrap();
    }
}

/// An operator of the wrong kind is refused as such, whatever its arity: a term where
/// a formula belongs, a formula where a term does.
#[test]
fn an_operator_of_the_wrong_kind_is_named_as_such() {
    let data = data();
    for (f, want) in [
        ("(exp 1 2)", "unknown operator `exp` in a formula"),
        ("(+ 1 2)", "unknown operator `+` in a formula"),
        ("(sum k 1 2)", "unknown operator `sum` in a formula"),
        ("(rows S S)", "unknown operator `rows` in a formula"),
        (
            "(< (not (< 1 2) (< 2 1)) 1)",
            "unknown operator `not` in a term",
        ),
        ("(< (< 1 2 3) 1)", "unknown operator `<` in a term"),
        (
            "(< (forall k 1 2) 1)",
            "unknown operator `forall` in a term",
        ),
    ] {
        let e = expr::validate(&expr::parse(f).unwrap(), &data).expect_err(f);
        assert_eq!(e.reason, want, "{f}");
    }
}

/// A maximum or minimum over no entry has no value: `entry-min`/`entry-max` of a
/// matrix whose rows are all empty and `row-sum-max`/`row-nnz-max` of a matrix with no
/// row are refused before evaluation; the sums over nothing are 0 and accepted.
#[test]
fn sparse_extrema_over_no_entry_are_refused_and_sums_over_none_are_zero() {
    let mut data = Data::new();
    for (name, n) in [("E", 2usize), ("Z", 0)] {
        let e = DataEntry::Sparse {
            n,
            rows: vec![vec![]; n],
        };
        data.insert(name.into(), e.to_datum().unwrap());
    }
    let value = |t: &str| {
        expr::validate_term(&expr::parse(t).unwrap(), &data).unwrap();
        expr::eval_exact(t, 64, &data).unwrap().unwrap()
    };
    let refused = |t: &str| {
        let e = expr::validate_term(&expr::parse(t).unwrap(), &data).expect_err(t);
        assert!(e.reason.contains("of a matrix with no entry"), "{t}: {e}");
        assert_eq!(expr::eval_with(t, 64, &data).unwrap_err(), e, "{t}");
    };
    assert_eq!(value("(entry-sum E)"), 0);
    assert_eq!(value("(entry-sum Z)"), 0);
    assert_eq!(value("(row-sum-max E)"), 0);
    assert_eq!(value("(row-nnz-max E)"), 0);
    for t in [
        "(entry-min E)",
        "(entry-max E)",
        "(entry-min Z)",
        "(entry-max Z)",
    ] {
        refused(t);
    }
    for t in ["(row-sum-max Z)", "(row-nnz-max Z)"] {
        refused(t);
    }
}

/// `k` negations around 1: its atom lies at level k (the top is level 0).
fn nested(k: usize) -> String {
    format!("{}1{}", "(neg ".repeat(k), ")".repeat(k))
}

/// The reader's depth limit at its edge: an atom at level MAX_DEPTH is read, one
/// level deeper is refused by the reader itself, at the offset of the level too deep;
/// a text of a million open parentheses is refused, not a stack overflow.
#[test]
fn the_readers_depth_limit_admits_its_edge_and_refuses_beyond() {
    let m = expr::MAX_DEPTH;
    assert!(expr::parse_written(&nested(m)).is_ok());
    assert!(expr::parse(&nested(m)).is_ok());
    let t = nested(m + 1);
    let e = expr::parse_written(&t).unwrap_err();
    assert_eq!(e.reason, format!("nested deeper than {m} levels"));
    assert_eq!(e.offset, t.rfind("neg").unwrap());
    assert_eq!(expr::parse(&t).unwrap_err(), e);
    // as a formula: (< t 0) puts t's atom one level lower
    assert!(expr::check(&format!("(< {} 0)", nested(m - 1)), 64).is_ok());
    assert_eq!(
        expr::check(&format!("(< {} 0)", nested(m)), 64)
            .unwrap_err()
            .reason,
        format!("nested deeper than {m} levels")
    );
    let deep = "(".repeat(1_000_000);
    let e = expr::parse_written(&deep).unwrap_err();
    assert_eq!(
        (e.offset, e.reason.as_str()),
        (m + 1, "nested deeper than 200 levels")
    );
}

/// The reader's refusals name what is wrong and where.
#[test]
fn the_readers_refusals_name_the_fault_and_its_offset() {
    for (t, offset, reason) in [
        (") 1", 0, "unexpected ')'"),
        ("  )", 2, "unexpected ')'"),
        ("(< 1 2))", 7, "trailing text after the expression"),
        ("(< 1 2", 0, "unclosed parenthesis"),
        ("(< (+ 1 2) 3", 0, "unclosed parenthesis"),
        ("", 0, "unexpected end of expression"),
        ("   ", 3, "unexpected end of expression"),
    ] {
        let e = expr::parse_written(t).unwrap_err();
        assert_eq!((e.offset, e.reason.as_str()), (offset, reason), "{t:?}");
    }
}

/// A built tree whose atom holds a parenthesis or a space is refused, even where the
/// validator takes it: `x)` is a variable name to it (it starts with a letter), but its
/// text would read back as another tree (expr/mod.rs's `read_back`: its `||` → `&&`
/// lived, the other checks refusing every atom the tests built).
#[test]
fn a_built_name_holding_a_parenthesis_or_a_space_is_refused() {
    use attncheck_kernel::expr::build::{forall, int, lt, var};
    let d = Data::new();
    for name in ["x)", "x(", "x y", "x\ty"] {
        let f = forall(name, 0, 1, lt(var(name), int(5)));
        assert!(expr::check_built(&f, 64, &d).is_err(), "{name:?}");
    }
    let plain = forall("x", 0, 1, lt(var("x"), int(5)));
    assert_eq!(
        expr::check_built(&plain, 64, &d).unwrap(),
        attncheck_kernel::Certainty::True
    );
}

/// A `forall` whose hi − lo is the largest allowed (5·10⁷) is accepted, one more refused,
/// naming the range (expr/ops.rs `range`'s `>` → `>=`, `==` lived: no test at the edge).
#[test]
fn a_range_at_the_largest_span_is_accepted_and_one_more_refused() {
    let d = Data::new();
    assert!(expr::prepare("(forall i 0 50000000 (> i -1))", 128, &d).is_ok());
    let e = expr::prepare("(forall i 0 50000001 (> i -1))", 128, &d)
        .err()
        .expect("one past the span");
    assert!(e.to_string().contains("is longer than 50000000"), "{e}");
    assert!(expr::prepare("(forall i 7 50000007 (> i -1))", 128, &d).is_ok());
}

/// Each binder's wrong arity is refused with its own message: `forall`'s and `let`'s
/// name their parts, `sum`'s counts its arguments (ops.rs's `check_arity` guards on the
/// binder's name could be dropped or widened, and no test read the messages of
/// `forall` and `sum`).
#[test]
fn binders_of_the_wrong_arity_are_refused_with_their_own_message() {
    use attncheck_kernel::expr;
    for (f, needle, not) in [
        (
            "(forall i 1 2)",
            "`forall` takes a variable, two integer bounds and a formula",
            "argument(s)",
        ),
        (
            "(forall i 1 2 (> i 0) 5)",
            "`forall` takes a variable, two integer bounds and a formula",
            "argument(s)",
        ),
        (
            "(< (sum i 1 2) 3)",
            "`sum` takes 4 argument(s), got 3",
            "`let`",
        ),
        (
            "(< (sum i 1 2 i 5) 3)",
            "`sum` takes 4 argument(s), got 5",
            "`let`",
        ),
        (
            "(let x 1)",
            "`let` takes a variable, a term and a formula",
            "argument(s)",
        ),
    ] {
        let e = expr::check(f, 128).unwrap_err().to_string();
        assert!(e.contains(needle) && !e.contains(not), "{f}: {e}");
    }
}
