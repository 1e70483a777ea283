//! A statement's bookkeeping around the decisions: what a [`Decision`] reports (its
//! name, result, expectation, and whether it came out as asserted or contrary), the
//! names `expect_fails` may mark, duplicate names, and obligation equality. The
//! application reads `certified` and `refuted` from these alone, so each is checked
//! against every (expectation, result) pair.

use attncheck_kernel::statement::NotAnObligation;
use attncheck_kernel::{check, Certainty, Expect, Statement};

/// True, false and undecided formulas (√2 < √2 is not decided by intervals: the two
/// enclosures are equal and not points).
const FORMULAS: [(&str, Certainty); 3] = [
    ("(< 1 2)", Certainty::True),
    ("(< 2 1)", Certainty::False),
    ("(< (sqrt 2) (sqrt 2))", Certainty::Unknown),
];

/// Every (expectation, result) pair: the decision's accessors, `as_expected` (true
/// exactly for holds/True and fails/False), `contrary` (decided the other way: never
/// for Unknown), and the statement's `as_expected` and `failures`.
#[test]
fn decisions_report_each_expectation_and_result() {
    let mut st = Statement::new("conformance/decisions");
    let mut want = Vec::new();
    for expect in [Expect::Holds, Expect::Fails] {
        for (f, result) in FORMULAS {
            let name = format!("{expect:?} {f}");
            st.assert(name.clone(), f);
            if expect == Expect::Fails {
                st.expect_fails(std::slice::from_ref(&name)).unwrap();
            }
            let as_expected = matches!(
                (expect, result),
                (Expect::Holds, Certainty::True) | (Expect::Fails, Certainty::False)
            );
            let contrary = matches!(
                (expect, result),
                (Expect::Holds, Certainty::False) | (Expect::Fails, Certainty::True)
            );
            want.push((name, expect, result, as_expected, contrary));
        }
    }
    let checked = check(&st, 128).unwrap();
    assert_eq!(checked.prec(), 128);
    assert_eq!(checked.decisions().len(), want.len());
    for (d, (name, expect, result, as_expected, contrary)) in checked.decisions().iter().zip(&want)
    {
        assert_eq!(d.name(), name);
        assert_eq!(d.expect(), *expect, "{name}");
        assert_eq!(d.result(), *result, "{name}");
        assert_eq!(d.as_expected(), *as_expected, "{name}");
        assert_eq!(d.contrary(), *contrary, "{name}");
    }
    assert!(!checked.as_expected());
    let failures: Vec<&str> = want.iter().filter(|w| !w.3).map(|w| w.0.as_str()).collect();
    assert_eq!(checked.failures(), failures);
    assert_eq!(failures.len(), 4);
}

/// A statement whose every obligation comes out as asserted, holds and fails alike.
#[test]
fn a_statement_decided_as_asserted_has_no_failures() {
    let mut st = Statement::new("conformance/as-asserted");
    st.assert("true", "(< 1 2)");
    st.assert("false", "(< 2 1)");
    st.expect_fails(&["false".to_string()]).unwrap();
    let checked = check(&st, 64).unwrap();
    assert!(checked.as_expected());
    assert!(checked.failures().is_empty());
    assert!(checked.decisions().iter().all(|d| !d.contrary()));
    // the empty statement: nothing to fail
    let empty = check(&Statement::new("conformance/empty"), 64).unwrap();
    assert!(empty.as_expected() && empty.decisions().is_empty());
}

/// `expect_fails` names obligations of the statement, or is refused naming the name
/// and the claim; the names before a refused one stay marked.
#[test]
fn expect_fails_takes_only_the_statements_names() {
    let mut st = Statement::new("conformance/marks");
    st.assert("a", "(< 1 2)");
    st.assert("b", "(< 2 1)");
    let err = st
        .expect_fails(&["b".to_string(), "c".to_string()])
        .unwrap_err();
    assert_eq!(
        err,
        NotAnObligation {
            name: "c".into(),
            claim: "conformance/marks".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "`c` is not an obligation of conformance/marks's statement"
    );
    let expects: Vec<Expect> = st.obligations.iter().map(|o| o.expect).collect();
    assert_eq!(expects, [Expect::Holds, Expect::Fails]);
}

/// `duplicate_name` finds the first name met a second time, or none.
#[test]
fn duplicate_names_are_found() {
    let with = |names: &[&str]| {
        let mut st = Statement::new("conformance/names");
        for n in names {
            st.assert(*n, "(< 1 2)");
        }
        st.duplicate_name().map(str::to_string)
    };
    assert_eq!(with(&[]), None);
    assert_eq!(with(&["a"]), None);
    assert_eq!(with(&["a", "b", "c"]), None);
    assert_eq!(with(&["a", "b", "a"]), Some("a".into()));
    assert_eq!(with(&["a", "b", "b", "a"]), Some("b".into()));
    assert_eq!(with(&["x", "x"]), Some("x".into()));
}

/// Two obligations are equal exactly when their name, text and expectation are.
#[test]
fn obligations_are_equal_by_name_text_and_expectation() {
    let mut st = Statement::new("conformance/eq");
    st.assert("a", "(< 1 2)");
    st.assert("a", "(< 1 2)");
    st.assert("b", "(< 1 2)");
    st.assert("a", "(< 1 3)");
    st.assert("c", "(< 1 2)");
    st.expect_fails(&["c".to_string()]).unwrap();
    let mut c_holds = Statement::new("conformance/eq");
    c_holds.assert("c", "(< 1 2)");
    let o = &st.obligations;
    assert_eq!(o[0], o[1]);
    assert_ne!(o[0], o[2], "names differ");
    assert_ne!(o[0], o[3], "texts differ");
    assert_ne!(o[4], c_holds.obligations[0], "expectations differ");
    assert_eq!(c_holds.obligations[0], c_holds.obligations[0].clone());
}
