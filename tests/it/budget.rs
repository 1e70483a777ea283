//! The work budget bounds a whole certificate, not one formula (issue #38): for every
//! operator the charges bench measures (crates/attncheck-bench/edge.rs, one source for
//! both), a certificate grown to the edge of the budget is accepted (its cost, computed
//! before anything runs, is within it) and one step past it is refused by `verify` with
//! exit 2, naming the cost it would have, before anything is evaluated. How long the
//! certificates at the edge take to verify is a benchmark, not a test
//! (`cargo bench -p attncheck-bench --bench budget_edge`, recorded in bench/charges.md).

use crate::util::output_text;
use attncheck::kernel::expr;
use std::time::{Duration, Instant};

#[path = "../../crates/attncheck-bench/edge.rs"]
mod edge;

#[test]
fn every_operator_at_the_edge_of_the_budget_is_accepted_and_one_step_past_it_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut past = 0;
    let precision = 128;
    // `verify --no-spec` of the case's certificate at size n: its exit code and output
    let verify = |case: &edge::Case, n: u64| {
        let (formulas, data) = (case.build)(n);
        let c = edge::certificate(&formulas, &data, precision);
        let p = dir.path().join("edge.cert.json");
        std::fs::write(&p, c.to_string()).unwrap();
        let out = crate::util::bin()
            .args(["verify", p.to_str().unwrap(), "--no-spec"])
            .output()
            .unwrap();
        (out.status.code(), output_text(&out))
    };
    for case in edge::cases() {
        let n = edge::edge_of(&case, precision)
            .unwrap_or_else(|| panic!("{}: even n = 1 is over the budget", case.op));
        let at = edge::cost(&case, n, precision);
        assert!(at <= expr::MAX_WORK, "{}: {at}", case.op);
        if n == case.max_n {
            // the operator's own limit stops it first: only the layer operations, whose
            // datum allows runs·steps·n²·d ≤ layer_data::MAX_COST; one step more is refused
            // by the datum's reader (exit 2, naming the limit) before anything runs
            assert!(
                case.op.starts_with("layer-"),
                "{} stops at its own limit with cost {at}: grow its case to reach the budget",
                case.op
            );
            let (code, text) = verify(&case, n + 1);
            assert_eq!(code, Some(2), "{}: {text}", case.op);
            assert!(
                text.contains(&format!(
                    "exceeds the budget {}",
                    attncheck::kernel::layer_data::MAX_COST
                )),
                "{}: one step past the datum's limit names it: {text}",
                case.op
            );
            continue;
        }
        let over = edge::cost(&case, n + 1, precision);
        assert!(
            over > expr::MAX_WORK,
            "{} at n + 1 = {}: {over}",
            case.op,
            n + 1
        );
        // verify refuses it with exit 2 and the cost, before evaluating anything
        let t = Instant::now();
        let (code, text) = verify(&case, n + 1);
        assert_eq!(code, Some(2), "{}: {text}", case.op);
        // the cost named is the formula's own when it alone is over the budget (refused as
        // it is read), else the certificate's total: over the limit, and never above `over`
        let named: u128 = text
            .split("would cost ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{}: names no cost: {text}", case.op));
        assert!(
            named > expr::MAX_WORK && named <= over && text.contains("the limit is 1000000000"),
            "{}: names a cost over the limit, at most {over}, and the limit: {text}",
            case.op
        );
        assert!(
            text.contains("edge.cert.json"),
            "{}: names the file: {text}",
            case.op
        );
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "{}: refused in {:?}",
            case.op,
            t.elapsed()
        );
        past += 1;
    }
    assert!(past >= 40, "only {past} operators reach the budget");
}

/// Issue #38's hostile case: 2,000 obligations each under the budget of one formula
/// were still running after two minutes. Together they are over the budget of one
/// certificate, and refused before anything runs, naming the obligation where the
/// running total passes it.
#[test]
fn many_obligations_each_within_the_budget_are_refused_together() {
    let f = "(forall i 1 1000000 (> (exp (/ (sqrt 2) i)) -1))";
    let one = expr::work(&expr::parse(f).unwrap());
    assert!(one <= expr::MAX_WORK, "one alone is within it: {one}");
    let k = (expr::MAX_WORK / one + 1) as usize;
    let formulas: Vec<String> = (0..2000.max(k + 1)).map(|_| f.to_string()).collect();
    let c = edge::certificate(&formulas, &serde_json::json!({}), 128);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("many.cert.json");
    std::fs::write(&p, c.to_string()).unwrap();
    let t = Instant::now();
    let out = crate::util::bin()
        .args(["verify", p.to_str().unwrap(), "--no-spec"])
        .output()
        .unwrap();
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("over the budget of one certificate"),
        "{text}"
    );
    assert!(
        text.contains("obligations["),
        "names the obligation: {text}"
    );
    assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
    // through `prove --cert`'s road too: one formula over the budget is refused (exit 2)
    let big = "(forall r 1 480000 (< (sandwich-centred 4096 0 r) 1))";
    let out = crate::util::bin().args(["prove", big]).output().unwrap();
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("limit"), "{text}");
}

/// The exact arithmetic charged as it runs is one allowance for the whole statement,
/// shared by its obligations (it was one per formula: n obligations had n allowances).
#[test]
fn exact_arithmetic_shares_one_allowance_across_the_obligations() {
    use attncheck::kernel::{check, Statement};
    // per iteration: 3^20000·3^20000 (496-limb operands: 19,220 units), times i (15,391)
    // and compared with 0 (15,391): about 5·10⁴ units, 7.5·10⁸ for 15,000 iterations —
    // within the budget alone, and 64 of them share one allowance
    let costly = "(forall i 1 15000 (> (* 3^20000 3^20000 i) 0))";
    let mut alone = Statement::new("x/alone");
    alone.assert("o", costly);
    let checked = check(&alone, 128).expect("one alone is within the budget");
    assert_eq!(
        checked.decisions()[0].result(),
        attncheck::kernel::Certainty::True
    );
    let mut many = Statement::new("x/many");
    for k in 0..64 {
        many.assert(format!("o{k}"), costly);
    }
    let t = Instant::now();
    let e = check(&many, 128).expect_err("64 of them run out of the one allowance");
    assert!(e.error.reason.contains("exceed the work budget"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
}
