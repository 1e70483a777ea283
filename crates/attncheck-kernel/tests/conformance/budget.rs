//! The work budget's units (expr/units.rs) as the kernel applies them: the precision
//! factor as documented, and exact arithmetic charged by the size of its operands,
//! one allowance for a whole statement.

use attncheck_kernel::expr::precision_factor;
use attncheck_kernel::{check, Certainty, Statement};

/// q·⌈√q⌉ with q = ⌈p/128⌉: 1 at 128 bits, 24 at 1024, 1536 at 16384.
#[test]
fn the_precision_factor_is_q_times_the_ceiling_of_its_root() {
    assert_eq!(precision_factor(1), 1);
    assert_eq!(precision_factor(128), 1);
    assert_eq!(precision_factor(1024), 24);
    assert_eq!(precision_factor(16384), 1536);
    for p in 1..=20_000u32 {
        let q = u128::from(p.div_ceil(128));
        let root = (1..).find(|r: &u128| r * r >= q).unwrap();
        assert_eq!(precision_factor(p), q * root, "p = {p}");
    }
}

/// Exact arithmetic is charged as it runs, by the limbs of its operands, from one
/// allowance for the whole statement: a formula within it alone, 64 copies of it
/// together run out (with the reason), rather than running 64 times as long.
#[test]
fn exact_arithmetic_shares_one_allowance_across_the_obligations() {
    // per iteration: 3^20000·3^20000 (496-limb operands: 19,220 units), times i (15,391)
    // and compared with 0 (15,391): about 5·10⁴ units, 7.5·10⁸ for 15,000 iterations
    let costly = "(forall i 1 15000 (> (* 3^20000 3^20000 i) 0))";
    let mut alone = Statement::new("x/alone");
    alone.assert("o", costly);
    let checked = check(&alone, 128).expect("one alone is within the budget");
    assert_eq!(checked.decisions()[0].result(), Certainty::True);
    let mut many = Statement::new("x/many");
    for k in 0..64 {
        many.assert(format!("o{k}"), costly);
    }
    let e = check(&many, 128).expect_err("64 of them run out of the one allowance");
    assert!(e.error.reason.contains("exceed the work budget"), "{e}");
}

/// A data operation is charged at least the words it reads: `gram-max-abs` compares
/// every pair of rows, n(n − 1)/2 pairs of w words each, WORDS_PER_UNIT words to a
/// unit; and the sign datum's own charge counts its n·w words.
#[test]
fn a_scan_of_sign_rows_is_charged_at_least_the_words_it_reads() {
    use attncheck_kernel::expr::{self, datum_cost, Data, Datum, WORDS_PER_UNIT};
    use attncheck_kernel::SignMatrix;
    for (n, d) in [
        (1000usize, 4096usize),
        (300, 64 * 50),
        (100, 64 * 100),
        (2000, 64),
    ] {
        let w = d.div_ceil(64);
        let s = SignMatrix::from_words(n, d, vec![0x5555_5555_5555_5555; n * w]).unwrap();
        let words = (n * w) as u128;
        assert!(datum_cost(&Datum::Signs(s.clone())) >= words / WORDS_PER_UNIT);
        let mut data = Data::new();
        data.insert("S".into(), Datum::Signs(s));
        let e = expr::parse("(< (gram-max-abs S) 0)").unwrap();
        let read = (n * (n - 1) / 2 * w) as u128 / WORDS_PER_UNIT;
        let charged = expr::work_with(&e, &data, 128);
        assert!(charged >= read, "n = {n}, d = {d}: {charged} < {read}");
    }
}

/// The size of a rational in limbs, as the charge documents it: 1 + (bits of its
/// numerator and denominator)/64.
fn limbs(q: &rug::Rational) -> u128 {
    1 + u128::from(q.numer().significant_bits() + q.denom().significant_bits()) / 64
}

/// An exact operation on operands of a and b limbs costs (a·b + (a + b)²)/64 units of
/// the statement's allowance for exact arithmetic: a formula whose exact operations
/// cost exactly the allowance is decided, one unit less is refused with the reason.
#[test]
fn exact_operations_are_charged_as_documented_at_the_edge_of_the_allowance() {
    use attncheck_kernel::expr::{self, Budget, Data, WORDS_PER_UNIT};
    use rug::ops::Pow;
    use rug::{Integer, Rational};
    let charge = |x: &Rational, y: &Rational| {
        let (a, b) = (limbs(x), limbs(y));
        (a * b + (a + b) * (a + b)) / WORDS_PER_UNIT
    };
    let data = Data::new();
    for (e1, e2) in [(20_000u32, 20_001u32), (5_000, 30_000), (100, 200)] {
        let (x, y) = (
            Rational::from(Integer::from(3).pow(e1)),
            Rational::from(Integer::from(3).pow(e2)),
        );
        let product = Rational::from(&x * &y);
        // the product, then its comparison with 0
        let total = charge(&x, &y) + charge(&product, &Rational::new());
        let f = expr::prepare(&format!("(> (* 3^{e1} 3^{e2}) 0)"), 128, &data).unwrap();
        assert_eq!(
            f.check(&Budget::new(total)),
            Ok(Certainty::True),
            "3^{e1}·3^{e2}"
        );
        if total > 0 {
            let e = f.check(&Budget::new(total - 1)).unwrap_err();
            assert!(e.reason.contains("exceed the work budget"), "{e}");
        }
    }
    // fractions: the limbs count the numerator's and the denominator's bits together
    let pow = |b: u32, e: u32| Rational::from(Integer::from(b).pow(e));
    let (n1, d1, n2, d2) = (pow(3, 5000), pow(5, 4000), pow(7, 3000), pow(2, 7001));
    let (a, b) = (Rational::from(&n1 / &d1), Rational::from(&n2 / &d2));
    let c = Rational::from(&a * &b);
    let total = charge(&n1, &d1) + charge(&n2, &d2) + charge(&a, &b) + charge(&c, &Rational::new());
    let f = expr::prepare("(> (* (/ 3^5000 5^4000) (/ 7^3000 2^7001)) 0)", 128, &data).unwrap();
    assert_eq!(f.check(&Budget::new(total)), Ok(Certainty::True));
    assert!(f.check(&Budget::new(total - 1)).is_err());
}

/// A formula whose cost is exactly `MAX_WORK` is accepted by `prepare` and `parse_valid`
/// (and `prepare` reports that cost), one step more is refused by both, before anything
/// is evaluated (expr/mod.rs's mutants of the two comparisons with the budget and of
/// `Prepared::work` lived: no kernel test stood at the edge).
#[test]
fn a_formula_at_exactly_the_budget_is_accepted_and_one_step_more_refused() {
    use attncheck_kernel::expr::{parse, parse_valid, prepare, work_with, Data, MAX_WORK};
    let d = Data::new();
    // a range holds at most 5·10⁷ values: a third range, fixed, makes up the rest
    let text = |n: u64, m: u64| {
        format!(
            "(and (forall i 1 {n} (> i 0)) (forall j 1 {m} (> (+ j 0) 0)) \
             (forall k 1 50000000 (> (+ k 0) 0)))"
        )
    };
    let cost = |n: u64, m: u64| work_with(&parse(&text(n, m)).unwrap(), &d, 128);
    // the cost is base + c1·n + c2·m for 8-digit n and m (the literals' reading is in base)
    let (lo, hi) = (10_000_000u64, 50_000_000u64);
    let c1 = cost(lo + 1, lo) - cost(lo, lo);
    let c2 = cost(lo, lo + 1) - cost(lo, lo);
    let base = cost(lo, lo) - c1 * u128::from(lo) - c2 * u128::from(lo);
    // the least m that leaves n ≤ hi, then the next c1 values of m: one solves it when
    // gcd(c1, c2) = 1
    let m_min = (MAX_WORK - base - c1 * u128::from(hi)).div_ceil(c2) as u64;
    let (n, m) = (m_min..m_min + c1 as u64)
        .find_map(|m| {
            let rest = MAX_WORK - base - c2 * u128::from(m);
            rest.is_multiple_of(c1).then(|| ((rest / c1) as u64, m))
        })
        .expect("c1 and c2 coprime");
    assert!((lo..=hi).contains(&n) && (lo..=hi).contains(&m), "{n} {m}");
    let at = text(n, m);
    assert_eq!(cost(n, m), MAX_WORK, "{at}");
    let p = prepare(&at, 128, &d).unwrap_or_else(|e| panic!("{at}: {e}"));
    assert_eq!(p.work(), MAX_WORK);
    assert!(parse_valid(&at, &d).is_ok());
    let past = text(n + 1, m);
    assert_eq!(cost(n + 1, m), MAX_WORK + c1);
    let e = prepare(&past, 128, &d).err().expect("past the budget");
    assert!(e.to_string().contains("would cost"), "{e}");
    assert!(parse_valid(&past, &d).is_err());
    // a small formula is accepted by both
    assert!(parse_valid("(< 1 2)", &d).is_ok());
    let small = work_with(&parse("(< 1 2)").unwrap(), &d, 128);
    assert!(small > 1);
    assert_eq!(prepare("(< 1 2)", 128, &d).unwrap().work(), small);
}

/// `check` holds the whole statement's cost to `MAX_WORK` before anything runs, and
/// gives the exact arithmetic what is left: a statement whose cost is exactly
/// `MAX_WORK` is decided (its costly conjuncts never run: `and` stops at `(< 2 1)`), one
/// step more is refused naming the budget of one certificate; and a statement near the
/// budget leaves too little allowance for an obligation that alone is decided
/// (statement.rs's comparison with `MAX_WORK` and the allowance `MAX_WORK − all` lived).
#[test]
fn a_statement_at_exactly_the_budget_is_decided_and_leaves_only_the_rest_to_run() {
    use attncheck_kernel::expr::{parse, work_of_all, Data, MAX_WORK};
    let d = Data::new();
    let text = |n: u64, m: u64| {
        format!(
            "(and (< 2 1) (forall i 1 {n} (> i 0)) (forall j 1 {m} (> (+ j 0) 0)) \
             (forall k 1 50000000 (> (+ k 0) 0)))"
        )
    };
    let statement = |texts: &[String]| {
        let mut st = Statement::new("conformance/budget");
        for (k, t) in texts.iter().enumerate() {
            st.assert(format!("o{k}"), t.clone());
        }
        st
    };
    let cost = |texts: &[String]| {
        let trees: Vec<_> = texts.iter().map(|t| parse(t).unwrap()).collect();
        *work_of_all(&trees, &d, 128).last().unwrap()
    };
    // with a second obligation, so that one step past the budget is the statement's,
    // not a formula's alone (`prepare` refuses a formula over the budget by itself)
    let second = "(forall i 1 1000 (> i 0))".to_string();
    let (lo, hi) = (10_000_000u64, 50_000_000u64);
    let one = |n, m| cost(&[text(n, m), second.clone()]);
    let c1 = one(lo + 1, lo) - one(lo, lo);
    let c2 = one(lo, lo + 1) - one(lo, lo);
    let base = one(lo, lo) - c1 * u128::from(lo) - c2 * u128::from(lo);
    let m_min = (MAX_WORK - base - c1 * u128::from(hi)).div_ceil(c2) as u64;
    let (n, m) = (m_min..m_min + c1 as u64)
        .find_map(|m| {
            let rest = MAX_WORK - base - c2 * u128::from(m);
            rest.is_multiple_of(c1).then(|| ((rest / c1) as u64, m))
        })
        .expect("c1 and c2 coprime");
    assert_eq!(one(n, m), MAX_WORK);
    // `statement::work` charges what `check` charges, and refuses what it refuses,
    // without deciding anything
    assert_eq!(
        attncheck_kernel::statement::work(&statement(&[text(n, m), second.clone()]), 128),
        Ok(MAX_WORK)
    );
    let w = attncheck_kernel::statement::work(&statement(&[text(n + 1, m), second.clone()]), 128)
        .expect_err("one step past it");
    assert_eq!(w.index, 1);
    assert!(
        w.error
            .reason
            .contains("over the budget of one certificate"),
        "{w}"
    );
    let checked =
        check(&statement(&[text(n, m), second.clone()]), 128).expect("exactly the budget");
    let results: Vec<_> = checked.decisions().iter().map(|d| d.result()).collect();
    assert_eq!(results, [Certainty::False, Certainty::True]);
    assert_eq!(one(n + 1, m), MAX_WORK + c1);
    assert!(
        cost(&[text(n + 1, m)]) < MAX_WORK,
        "the first alone is within it"
    );
    let e = check(&statement(&[text(n + 1, m), second]), 128).expect_err("one step past it");
    assert!(
        e.error
            .reason
            .contains("over the budget of one certificate"),
        "{e}"
    );
    assert_eq!(e.index, 1);
    // about 2·10⁶ units of exact arithmetic at run time (40 products of 496-limb
    // operands, each about 5·10⁴ with the comparison), statically cheap
    let costly = "(forall i 1 40 (> (* 3^20000 3^20000 i) 0))".to_string();
    let alone = check(&statement(std::slice::from_ref(&costly)), 128).unwrap();
    assert_eq!(alone.decisions()[0].result(), Certainty::True);
    // beside a statement that leaves about 5·10⁵ units: the run-time allowance runs out
    let near = text(n - (500_000 / c1) as u64, m);
    let both = [near, costly];
    let all = cost(&both);
    assert!(all <= MAX_WORK && MAX_WORK - all < 1_500_000, "{all}");
    let e = check(&statement(&both), 128).expect_err("the rest of the allowance is too small");
    assert!(e.error.reason.contains("exceed the work budget"), "{e}");
    assert_eq!(e.index, 1);
}

/// The cost model's formulas as docs/certificate-format.md states them, computed here
/// from the datum's sizes: a layer datum's reading (1 + its limbs/64 + N·D·(runs + 3)),
/// a sign matrix's (n + n·⌈d/64⌉/64), a sparse one's (n + Σ_i (s_i + Σ limbs/64)); and the
/// walk of the layer map, counted once per statement: runs·(K + 1) states of
/// 4ND² + 5N²D + 46N² + 2ND units, plus each operation's own terms, times
/// max(1, q·⌈√q⌉/4) (expr/cost.rs: 245 mutants, and the budget tests saw few of them).
#[test]
fn the_cost_formulas_are_the_documented_ones() {
    use attncheck_kernel::expr::{
        datum_cost, parse, precision_factor, work_of_all, Data, Datum, SparseRows,
    };
    use attncheck_kernel::layer_data::LayerData;
    use attncheck_kernel::{Mat, SignMatrix};
    use rug::ops::Pow;
    use rug::{Integer, Rational};
    let big = Rational::from(Integer::from(3).pow(200)); // 318 bits: 5 limbs
    let m = |rows: usize, cols: usize, k: usize| {
        Mat::from_rows(
            (0..rows)
                .map(|i| {
                    (0..cols)
                        .map(|j| {
                            if (i + j + k).is_multiple_of(3) {
                                big.clone()
                            } else {
                                Rational::from((i as i64 - j as i64, 7))
                            }
                        })
                        .collect()
                })
                .collect(),
        )
    };
    let entries = |x: &Mat| x.data.iter().map(limbs).sum::<u128>();
    for (n, d, runs, steps) in [(3usize, 2usize, 1usize, 5usize), (4, 3, 2, 7), (2, 1, 3, 1)] {
        let (q, k, v) = (m(d, d, 0), m(d, d, 1), m(d, d, 2));
        let xs: Vec<Mat> = (0..runs).map(|r| m(n, d, r)).collect();
        let dt = Rational::from((1, 10));
        let words = limbs(&dt)
            + entries(&q)
            + entries(&k)
            + entries(&v)
            + xs.iter().map(entries).sum::<u128>();
        let l = LayerData::new(q, k, v, dt, steps, xs).unwrap();
        let (n, d, r, kk) = (n as u128, d as u128, runs as u128, steps as u128);
        let read = 1 + words.div_ceil(64) + n * d * (r + 3);
        assert_eq!(
            datum_cost(&Datum::Layer(l.clone())),
            read,
            "n {n} d {d} runs {r}"
        );
        let mut data = Data::new();
        data.insert("X".into(), Datum::Layer(l));
        let state = 4 * n * d * d + 5 * n * n * d + 46 * n * n + 2 * n * d;
        let states = r * (kk + 1);
        let pairs = r * (r - 1) / 2;
        for prec in [128u32, 256, 1024, 4096] {
            let factor = (precision_factor(prec) / 4).max(1);
            let walk = |extra: u128| (states * state + extra) * factor;
            for (f, once) in [
                (
                    "(> (layer-max-sqnorm X 0 0) 0)",
                    walk((kk + 1) * (r * 2 * n * d + pairs * 3 * n * d)),
                ),
                (
                    "(> (layer-partition X 0 0) 0)",
                    walk(states * (2 * n * d * d + 2 * n * n * d + 18 * n * n)),
                ),
            ] {
                // the totals of [F] and [F, F]: the second adds F's own nodes only
                let t = parse(f).unwrap();
                let totals = work_of_all([&t, &t], &data, prec);
                let own = totals[1] - totals[0];
                assert_eq!(
                    2 * totals[0] - totals[1],
                    read + once,
                    "{f} at {prec} bits, n {n} d {d} runs {r} K {kk}"
                );
                assert!(own > 0 && own < 100 * precision_factor(prec), "{f}: {own}");
            }
        }
    }
    // a sign matrix: n rows of ⌈d/64⌉ words, plus a unit per row
    for (n, d) in [(1usize, 1usize), (3, 64), (5, 65), (100, 1000), (64, 4096)] {
        let s = SignMatrix::from_fn(n, d, |l, c| (l + c) % 2 == 0);
        let w = d.div_ceil(64) as u128;
        let n = n as u128;
        assert_eq!(
            datum_cost(&Datum::Signs(s)),
            n + (n * w).div_ceil(64),
            "n {n} d {d}"
        );
    }
    // a sparse matrix: n, plus per row its entries and their limbs/64
    let rows: Vec<Vec<(usize, Rational)>> = vec![
        vec![(0, big.clone()), (2, Rational::from((1, 3)))],
        vec![],
        vec![(1, Rational::from(-5)); 1],
    ];
    // rows of 2, 0 and 1 entries (the empty row adds nothing)
    let want = 3 + (2 + (limbs(&big) + 1).div_ceil(64)) + (1 + 1u128.div_ceil(64));
    let b = SparseRows { n: 3, rows };
    assert_eq!(datum_cost(&Datum::Sparse(b)), want);
    // attention weights: 1 + layers·(2d² + 4d)/16 (the tensors hashed and summed once)
    use crate::weights_model::{datum, Layer};
    for (hidden, heads, count) in [(4usize, 2usize, 1usize), (8, 2, 3), (16, 4, 2)] {
        let layer = |s: f32| Layer {
            gamma: vec![1.0; hidden],
            beta: vec![s; hidden],
            wq: vec![s; hidden * hidden],
            bq: vec![0.0; hidden],
            wk: vec![-s; hidden * hidden],
            bk: vec![0.5; hidden],
        };
        let layers: Vec<Layer> = (0..count).map(|i| layer(0.25 * i as f32)).collect();
        let w = datum(hidden, heads, &layers);
        let (l, d) = (count as u128, hidden as u128);
        assert_eq!(
            datum_cost(&Datum::Attn(w)),
            1 + l * (2 * d * d + 4 * d) / 16,
            "hidden {hidden}, {count} layers"
        );
    }
}

/// The work of the formulas `fs` split from the totals of [F…] and [F…, F…]: what the
/// second pass adds is paid per formula, the rest (2·first − second) once for the
/// certificate (its data's reading and what they cache, sandwich values).
fn once_and_per_pass(fs: &[&str], data: &attncheck_kernel::expr::Data, prec: u32) -> (u128, u128) {
    use attncheck_kernel::expr::{parse, work_of_all};
    let ts: Vec<_> = fs.iter().map(|f| parse(f).unwrap()).collect();
    let twice: Vec<_> = ts.iter().chain(ts.iter()).collect();
    let all = work_of_all(twice, data, prec);
    let (one, two) = (all[ts.len() - 1], all[2 * ts.len() - 1]);
    (2 * one - two, two - one)
}

/// What `(> CALL 0)` costs per formula besides CALL's own data charge: unit·(charge(>) +
/// charge(op) + 3 + arguments) for the nodes, and a unit to read each short literal (the 0
/// and CALL's literal arguments).
fn call_fixed_cost(call: &str, prec: u32) -> u128 {
    use attncheck_kernel::expr::operator;
    let op = call.trim_start_matches('(').split(' ').next().unwrap();
    let args: Vec<&str> = call.trim_end_matches(')').split(' ').skip(1).collect();
    let literals = args.iter().filter(|a| a.parse::<i64>().is_ok()).count() as u128;
    let nodes = operator(">").unwrap().charge + operator(op).unwrap().charge + 3;
    precision_factor(prec) * (nodes + args.len() as u128) + 1 + literals
}

/// The charges [`the_cost_formulas_are_the_documented_ones`] leaves out, each pinned to its
/// documented formula (docs/certificate-format.md), since mutants of expr/cost.rs lived
/// without them: a literal's digits (1 + digits/LITERAL_DIGITS_PER_UNIT per literal read),
/// `sandwich-centred`'s values (1 + (D/2)·28 units each, paid once for the whole
/// certificate while the memo of 2^18 values has room, else at every call) and the
/// `layer-dual-*` traces (once per datum and bracket lo, hi, i).
#[test]
fn literal_sandwich_and_dual_trace_charges_are_the_documented_ones() {
    use attncheck_kernel::expr::{parse, work_of_all, Data, Datum, LITERAL_DIGITS_PER_UNIT};
    use attncheck_kernel::layer_data::LayerData;
    use attncheck_kernel::Mat;
    use rug::Rational;
    let empty = Data::new();
    let split = once_and_per_pass;
    for prec in [128u32, 1024] {
        let unit = precision_factor(prec);
        // a literal: `7` against a variable in the same place
        let per = |f: &str| split(&[f], &empty, prec).1;
        assert_eq!(
            per("(forall k 1 1 (< k 7))") - per("(forall k 1 1 (< k k))"),
            1,
            "one digit at {prec} bits"
        );
        let long = "9".repeat(10 * LITERAL_DIGITS_PER_UNIT as usize + 3);
        assert_eq!(
            per(&format!("(forall k 1 1 (< k {long}))")) - per("(forall k 1 1 (< k k))"),
            11,
            "{} digits at {prec} bits",
            long.len()
        );
        // sandwich-centred: a value of r costs 1 + (D/2)·28, paid once
        let full = |dbar: u128| (1 + dbar / 2 * 28) * unit;
        for dbar in [0u128, 1, 2, 64, 4096] {
            let (once, _) = split(
                &[&format!("(< (sandwich-centred {dbar} 0 5) 1)")],
                &empty,
                prec,
            );
            assert_eq!(once, full(dbar), "D = {dbar} at {prec} bits");
        }
        assert_eq!(split(&["(< (+ 64 0 5) 1)"], &empty, prec).0, 0);
        // a range pays its values once; an overlapping range only its new values
        let range =
            |lo: i64, hi: i64| format!("(forall r {lo} {hi} (< (sandwich-centred 64 0 r) 1))");
        assert_eq!(split(&[&range(0, 9)], &empty, prec).0, 10 * full(64));
        assert_eq!(
            split(&[&range(0, 9), &range(5, 14)], &empty, prec).0,
            15 * full(64)
        );
        assert_eq!(
            split(&[&range(20, 29), &range(0, 9), &range(5, 14)], &empty, prec).0,
            25 * full(64)
        );
        // the memo holds 2^18 values: a range of exactly that many pays each value once
        // and a lookup of 2 units per call; one more value, and every call pays in full.
        // The per-call rest (bl) and the formula's base, from two short ranges whose
        // bounds have as many digits (100000…): P(n) = base + n·bl.
        let memo = 1u128 << 18;
        let lo = 100_000i64;
        let p10 = split(&[&range(lo, lo + 9)], &empty, prec).1;
        let p20 = split(&[&range(lo, lo + 19)], &empty, prec).1;
        let bl = (p20 - p10) / 10;
        let base = p10 - 10 * bl;
        let fresh = |n: u128| {
            let t = parse(&range(lo, lo + n as i64 - 1)).unwrap();
            work_of_all([&t], &empty, prec)[0]
        };
        assert_eq!(fresh(memo), memo * full(64) + base + memo * bl);
        // the memo's room counts what earlier ranges filled: 10 values after memo − 5
        // are more than it holds, so the second range pays every call in full
        let first = parse(&range(lo, lo + memo as i64 - 6)).unwrap();
        let second = parse(&range(lo + memo as i64, lo + memo as i64 + 9)).unwrap();
        let both = work_of_all([&first, &second], &empty, prec);
        let in_full = split(
            &[&range(lo + memo as i64, lo + memo as i64 + 9)],
            &empty,
            prec,
        );
        assert_eq!(
            both[1] - both[0],
            in_full.1 + 10 * (full(64) - 2 * unit),
            "the second range, past the memo's room"
        );
        // a range of n values pays its body n times, wherever it starts
        assert_eq!(
            per("(forall k 5 9 (< k k))"),
            per("(forall k 0 4 (< k k))"),
            "five values either way"
        );
        // `let`: 2 units, then its term once (here a node: the literal 3, read in either
        // formula) and its body
        assert_eq!(per("(let a 3 (< a 1))") - per("(< 3 1)"), 3 * unit);
        assert_eq!(
            fresh(memo + 1),
            base + (memo + 1) * (bl - 2 * unit + full(64))
        );
    }
    // layer-dual-*: one trace per datum and bracket, whatever the formula around it
    let r = |v: i64| Rational::from(v);
    let mat = |rows: &[&[i64]]| {
        Mat::from_rows(
            rows.iter()
                .map(|row| row.iter().map(|&v| r(v)).collect())
                .collect(),
        )
    };
    let l = LayerData::new(
        mat(&[&[1, 0], &[0, 1]]),
        mat(&[&[1, 0], &[0, 1]]),
        mat(&[&[2, 1], &[0, 1]]),
        Rational::from((1, 10)),
        3,
        vec![mat(&[&[1, 2], &[3, -1], &[0, 1]])],
    )
    .unwrap();
    let mut data = Data::new();
    data.insert("X".into(), Datum::Layer(l));
    let f = |lo: &str, k: u32| format!("(> (layer-dual-sup X 0 {k} {lo} 3 0) 0)");
    let (a, b) = (f("3/2", 1), f("7/4", 1));
    let (one, _) = split(&[&a], &data, 128);
    let (read, _) = split(&["(> 1 0)"], &data, 128);
    assert!(one > read, "a trace costs something: {one} vs {read}");
    assert_eq!(split(&[&a, &b], &data, 128).0 - read, 2 * (one - read));
    assert_eq!(
        split(&[&a, &f("3/2", 2)], &data, 128).0,
        one,
        "same bracket, another step"
    );
    // one trace: at every state two maxima of |a·x_j| over the n tokens (2·(2nd + n)) on
    // top of the walk, and two adjugate rows (2d⁴), at the layer factor
    let (n, d) = (3u128, 2u128);
    let state = 4 * n * d * d + 5 * n * n * d + 46 * n * n + 2 * n * d;
    let states = 4u128; // one run, K = 3
    let trace = states * (state + 2 * (2 * n * d + n)) + 2 * d * d * d * d;
    assert_eq!(one - read, trace, "one trace at 128 bits");
    // a bracket that mentions a range's variable may differ at every value: MAX_TRACES
    // walks, once
    let open = "(forall k 1 2 (> (layer-dual-sup X 0 0 k 3 0) 0))";
    let max = attncheck_kernel::layer_data::MAX_TRACES as u128;
    assert_eq!(split(&[open], &data, 128).0 - read, max * trace);
    // inside a range, a bracket that does not mention its variable is one trace
    let closed = "(forall k 0 1 (> (layer-dual-sup X 0 k 3/2 3 0) 0))";
    assert_eq!(split(&[closed], &data, 128).0 - read, trace);
}

/// The integer ranges the cost model reads off a term (`int_range`: literals, range
/// variables, + − × neg abs min max): a `sandwich-centred` argument whose range is known
/// pays each value of that range once; without it every call pays in full. Each rule
/// gives its own range here, over r = 0 … 9.
#[test]
fn integer_ranges_the_cost_model_knows_pay_their_values_once() {
    use attncheck_kernel::expr::Data;
    let empty = Data::new();
    let unit = precision_factor(128);
    let full = (1 + 32 * 28) * unit;
    for (arg, values) in [
        ("r", 10u128),
        ("(+ r 1)", 10),
        ("(+ r r 1)", 19),
        ("(* r 2)", 19),
        ("(* r r)", 82),
        ("(neg r)", 10),
        ("(- r)", 10),
        ("(- r 3)", 10),
        ("(- 3 r)", 10),
        ("(min r 5)", 6),
        ("(max r 5)", 5),
        ("(abs (- r 5))", 6),
        ("(abs (+ r 1))", 10),
        ("(abs (neg (+ r 1)))", 10),
    ] {
        let f = format!("(forall r 0 9 (< (sandwich-centred 64 0 {arg}) 1))");
        assert_eq!(
            once_and_per_pass(&[&f], &empty, 128).0,
            values * full,
            "{arg}"
        );
    }
    // a term outside the rules: every call in full, nothing once
    let (once, per) = once_and_per_pass(
        &["(forall r 0 9 (< (sandwich-centred 64 0 (floor r)) 1))"],
        &empty,
        128,
    );
    assert_eq!(once, 0);
    assert!(per >= 10 * full);
}

/// Every data operation's own charge per evaluation, and the once-only computations of
/// a layer datum that the cost-formula test leaves out, against their formulas from the
/// data's sizes (expr/cost.rs's `data_cost`): mutants that deleted an operation's arm
/// of the cost model, charging it nothing, lived until this test.
#[test]
fn every_data_operation_pays_its_documented_charge() {
    use attncheck_kernel::expr::{
        datum_cost, operator, parse, work_of_all, Data, Datum, SparseRows, MAX_EXACT_BITS,
        PAIRS_PER_UNIT, WORDS_PER_UNIT,
    };
    use attncheck_kernel::layer_data::LayerData;
    use attncheck_kernel::{Mat, SignMatrix};
    use rug::ops::Pow;
    use rug::{Integer, Rational};
    let prec = 128;
    let unit = precision_factor(prec);
    let units = |w: u128| w.div_ceil(WORDS_PER_UNIT);
    let big = Rational::from((Integer::from(3).pow(200), Integer::from(7))); // 6 limbs
    let (n, d) = (5usize, 130usize);
    let s = SignMatrix::from_fn(n, d, |l, c| (l * 7 + c) % 3 == 0);
    let rows: Vec<Vec<(usize, Rational)>> = vec![
        vec![(0, big.clone()), (2, Rational::from((1, 3)))],
        vec![],
        vec![(1, Rational::from(-5))],
        vec![(0, big.clone()), (1, big.clone()), (4, Rational::from(2))],
        vec![(3, Rational::from((-7, 9)))],
    ];
    let b = SparseRows {
        n,
        rows: rows.clone(),
    };
    let r = |v: i64| Rational::from(v);
    let mat = |m: &[&[Rational]]| Mat::from_rows(m.iter().map(|row| row.to_vec()).collect());
    let x = LayerData::new(
        mat(&[&[r(1), big.clone()], &[r(0), r(1)]]),
        mat(&[&[r(1), r(0)], &[Rational::from((3, 4)), r(1)]]),
        mat(&[&[r(2), r(1)], &[big.clone(), r(1)]]),
        Rational::from((1, 10)),
        3,
        vec![mat(&[&[r(1), r(2)], &[r(3), r(-1)], &[r(0), r(1)]])],
    )
    .unwrap();
    let mut data = Data::new();
    data.insert("S".into(), Datum::Signs(s));
    data.insert("B".into(), Datum::Sparse(b));
    data.insert("X".into(), Datum::Layer(x.clone()));
    let read: u128 = data.values().map(datum_cost).sum();
    // per formula, `(> CALL 0)` costs unit·(charge(>) + charge(op) + 3 + arguments), a
    // unit to read each short literal (the 0 and the literal arguments) and the
    // operation's own charge; once for the certificate, the data's reading and what the
    // datum caches
    let split = |call: &str| -> (u128, u128) {
        let (once, per) = once_and_per_pass(&[&format!("(> {call} 0)")], &data, prec);
        (once - read, per - call_fixed_cost(call, prec))
    };
    let own = |call: &str| split(call).1;
    assert_eq!(own("(rows S)"), 1);
    assert_eq!(own("(cols S)"), 1);
    assert_eq!(own("(rows B)"), 1);
    let pairs = (n * (n - 1) / 2) as u128;
    let words = d.div_ceil(64) as u128;
    assert_eq!(
        own("(gram-max-abs S)"),
        1 + pairs / PAIRS_PER_UNIT + units(pairs * words)
    );
    let n128 = n as u128;
    assert_eq!(own("(row-nnz-max B)"), 1 + n128);
    let lim: Vec<Vec<u128>> = rows
        .iter()
        .map(|row| row.iter().map(|(_, v)| limbs(v)).collect())
        .collect();
    let nnz = lim.iter().map(|r| r.len() as u128).sum::<u128>();
    let total = lim.iter().flatten().sum::<u128>();
    let largest = *lim.iter().flatten().max().unwrap();
    let row_sq = lim
        .iter()
        .map(|r| r.iter().sum::<u128>().pow(2))
        .sum::<u128>();
    let base = 1 + nnz + n128;
    assert_eq!(own("(entry-min B)"), base + units(total * largest));
    assert_eq!(own("(entry-max B)"), base + units(total * largest));
    assert_eq!(own("(row-sum-max B)"), base + units(2 * row_sq));
    assert_eq!(own("(entry-sum B)"), base + units(total * total));
    // the lemma operations: per row i (support s_i, r_i limbs), n·(s_i·(64 + w + r_i) +
    // r_i) + s_i·r_i² + (1 + MAX_EXACT_BITS/64)·(r_i + 1) words
    let t_limbs = u128::from(MAX_EXACT_BITS) / 64;
    let lemma_words: u128 = lim
        .iter()
        .map(|row| {
            let (si, ri) = (row.len() as u128, row.iter().sum::<u128>());
            n128 * (si * (64 + words + ri) + ri) + si * ri * ri + (1 + t_limbs) * (ri + 1)
        })
        .sum();
    for call in [
        "(err-max S B)",
        "(lemma-a S B)",
        "(lemma-b S B)",
        "(lemma-a-row S B 1)",
        "(lemma-b-row S B 1)",
    ] {
        assert_eq!(own(call), 1 + n128 + units(lemma_words), "{call}");
    }
    // and with many short rows, where the per-row terms add up to units of their own
    let short: Vec<Vec<(usize, Rational)>> = (0..200).map(|i| vec![(i % 3, r(1))]).collect();
    let mut many = data.clone();
    many.insert(
        "B".into(),
        Datum::Sparse(SparseRows {
            n: 200,
            rows: short,
        }),
    );
    let t = parse("(> (err-max S B) 0)").unwrap();
    let all = work_of_all([&t, &t], &many, prec);
    let row = 200 * (64 + words + 1 + 1) + 1 + (1 + t_limbs) * 2;
    let want = 1 + 200 + units(200 * row);
    let nodes = operator(">").unwrap().charge + operator("err-max").unwrap().charge + 3 + 2;
    assert_eq!(
        all[1] - all[0] - unit * nodes - 1,
        want,
        "200 rows of one entry"
    );
    // band reachability: l·L·min(d + 1, L) bits and l·L scanned, from literal arguments
    for (call, (len, dd, l)) in [
        ("(band-reach 100 3 2)", (100u128, 3u128, 2u128)),
        ("(band-reach-count 50 70 3)", (50, 70, 3)),
    ] {
        let bits = l * len * (dd + 1).min(len);
        assert_eq!(own(call), 1 + (bits + l * len) / WORDS_PER_UNIT, "{call}");
    }
    // the layer datum: its time step read per call; the Frobenius sums and the tokens'
    // walk once
    let limbs_dt = limbs(x.dt());
    assert_eq!(own("(layer-dt X)"), 1 + units(limbs_dt));
    let (ln, ld) = (x.n() as u128, x.d() as u128);
    let v: u128 = x.v().data.iter().map(limbs).sum();
    assert_eq!(split("(layer-v-frob2 X)"), (ld * ld + units(4 * v * v), 1));
    let col = |m: &Mat| -> Vec<u128> {
        (0..m.cols)
            .map(|c| (0..m.rows).map(|r| limbs(m.at(r, c))).sum())
            .collect()
    };
    let (qa, kb) = (col(x.q()), col(x.k()));
    let qk: u128 = qa
        .iter()
        .flat_map(|a| kb.iter().map(move |b| (a + b) * 3 * (a + b)))
        .sum();
    assert_eq!(
        split("(layer-qk-frob2 X)"),
        (ld * ld * x.q().rows as u128 + units(qk), 1)
    );
    // and at d = 3, where d·d and d + d differ
    let three = LayerData::new(
        mat(&[
            &[r(1), r(0), r(2)],
            &[r(0), r(1), r(0)],
            &[r(3), r(0), r(1)],
        ]),
        mat(&[
            &[r(1), r(0), r(0)],
            &[r(0), r(1), r(0)],
            &[r(0), r(0), r(1)],
        ]),
        mat(&[
            &[r(2), r(1), r(0)],
            &[r(0), r(1), r(0)],
            &[big.clone(), r(0), r(1)],
        ]),
        Rational::from((1, 10)),
        1,
        vec![mat(&[&[r(1), r(2), r(0)], &[r(3), r(-1), r(1)]])],
    )
    .unwrap();
    let v3: u128 = three.v().data.iter().map(limbs).sum();
    let mut d3 = Data::new();
    d3.insert("X".into(), Datum::Layer(three.clone()));
    let t = parse("(> (layer-v-frob2 X) 0)").unwrap();
    let all = work_of_all([&t, &t], &d3, prec);
    let read3 = datum_cost(&Datum::Layer(three));
    assert_eq!(2 * all[0] - all[1] - read3, 9 + units(4 * v3 * v3));
    let state = 4 * ln * ld * ld + 5 * ln * ln * ld + 46 * ln * ln + 2 * ln * ld;
    let states = x.runs().len() as u128 * (x.steps() as u128 + 1);
    let factor = (precision_factor(prec) / 4).max(1);
    assert_eq!(
        split("(layer-coord X 0 1 2 1)"),
        (states * (state + ln * ld) * factor, 1)
    );
}

/// The attention-weights operations' charges (docs/certificate-format.md, "Cost"), which
/// no test pinned: reading a datum with layer 0's input costs 1 + (layers·(2d² + 4d) +
/// 256·d + 1)/16 units; `attn-row-logit-range` pays bound 5's rows once per datum
/// (`row_words`) and 1 + 16·w/64 units per evaluation (w = `row_eval_words`);
/// `attn-byte-logit-range` pays the byte pairs once per datum (`pair_words`) and nothing
/// per evaluation besides its table charge; `attn-ln-bound` and `attn-logit-range` only
/// their table charges. What is paid once is paid once per datum name, however many
/// heads or layers the statement asks about.
#[test]
fn attention_weight_operations_pay_their_documented_charges() {
    use crate::weights_model::{datum, datum_with_input, Layer};
    use attncheck_kernel::expr::WORDS_PER_UNIT;
    use attncheck_kernel::expr::{datum_cost, Data, Datum};
    let prec = 128;
    let units = |w: u128| w.div_ceil(WORDS_PER_UNIT);
    let (hidden, heads) = (8usize, 2usize);
    let layer = |k: usize| Layer {
        gamma: (0..hidden).map(|i| 1.0 + 0.125 * (i + k) as f32).collect(),
        beta: (0..hidden).map(|i| 0.25 * i as f32 - 0.5).collect(),
        wq: (0..hidden * hidden)
            .map(|i| ((i * 5 + k) % 11) as f32 * 0.0625 - 0.3)
            .collect(),
        bq: (0..hidden).map(|i| 0.5 - 0.1 * i as f32).collect(),
        wk: (0..hidden * hidden)
            .map(|i| ((i * 3 + 2 * k) % 7) as f32 * 0.2 - 0.6)
            .collect(),
        bk: (0..hidden).map(|i| 0.01 * (i * i) as f32).collect(),
    };
    let layers = [layer(0), layer(1)];
    let emb: Vec<f32> = (0..256 * hidden)
        .map(|i| ((i * 13) % 17) as f32 * 0.03 - 0.25)
        .collect();
    let w = datum_with_input(hidden, heads, &layers, &emb, 1e-5);
    let plain = datum(hidden, heads, &layers);
    let (l, d) = (layers.len() as u128, hidden as u128);
    assert_eq!(
        datum_cost(&Datum::Attn(w.clone())),
        1 + (l * (2 * d * d + 4 * d) + 256 * d + 1) / 16
    );
    assert_eq!(
        datum_cost(&Datum::Attn(plain.clone())),
        1 + l * (2 * d * d + 4 * d) / 16
    );
    // the bounds' own words are not trivially small, so a charge dropped or taken for
    // another shows
    let (rows, pairs, eval) = (w.row_words(), w.pair_words(), w.row_eval_words());
    assert!(units(rows) > 1 && units(pairs) > 1 && units(eval * 16) > 1);
    assert_ne!(units(rows), units(pairs));
    assert_eq!(plain.pair_words(), 0, "no embedding, no byte pairs");
    let mut data = Data::new();
    data.insert("W".into(), Datum::Attn(w.clone()));
    data.insert("P".into(), Datum::Attn(plain.clone()));
    let read: u128 = data.values().map(datum_cost).sum();
    // (once for the certificate beyond the data's reading, per formula beyond its nodes
    // and literals), as `every_data_operation_pays_its_documented_charge` splits them
    let split = |calls: &[&str]| -> (u128, u128) {
        let fs: Vec<String> = calls.iter().map(|c| format!("(> {c} 0)")).collect();
        let fs: Vec<&str> = fs.iter().map(String::as_str).collect();
        let (once, per) = once_and_per_pass(&fs, &data, prec);
        let fixed: u128 = calls.iter().map(|c| call_fixed_cost(c, prec)).sum();
        (once - read, per - fixed)
    };
    let per_row = 1 + units(eval * 16);
    assert_eq!(
        split(&["(attn-row-logit-range W 1 0)"]),
        (units(rows), per_row)
    );
    assert_eq!(split(&["(attn-byte-logit-range W 1)"]), (units(pairs), 1));
    assert_eq!(split(&["(attn-ln-bound W 1)"]), (0, 0));
    assert_eq!(split(&["(attn-logit-range W 1 0)"]), (0, 0));
    // once per datum: other heads and layers, and the other bound, add only their own
    assert_eq!(
        split(&[
            "(attn-row-logit-range W 0 0)",
            "(attn-row-logit-range W 1 1)",
            "(attn-byte-logit-range W 0)",
            "(attn-byte-logit-range W 1)",
            "(attn-logit-range W 0 1)",
        ]),
        (units(rows) + units(pairs), 2 * per_row + 2)
    );
    // and again for another datum, by its own sizes
    let plain_eval = 1 + units(plain.row_eval_words() * 16);
    assert_eq!(
        split(&[
            "(attn-row-logit-range W 0 0)",
            "(attn-row-logit-range P 0 0)"
        ]),
        (units(rows) + units(plain.row_words()), per_row + plain_eval)
    );
}
