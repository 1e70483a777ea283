//! The layer road's precision check on a prefix of the walk (issue #41, session 36):
//! `coq::translate`'s `layer::precision` asks whether the kernel decides an obligation
//! over the layer map at a precision; a prefix X_s of the datum (its exact data with s
//! steps) refutes it without the whole walk when it can (`layer::refuted_on_prefix`).
//! The answer must be the whole check's, always: on clusters/collapse's committed
//! certificate (where the prefixes refute all four obligations at 37 bits), on edited
//! formulas (index offsets, a conjunct that cannot be cut, indices past any prefix, a
//! bound that holds), and on random ones.

use super::util::root;
use attncheck::certificate::Certificate;
use attncheck::coq;
use proptest::prelude::*;
use serde_json::Value;

fn committed_json(id: &str) -> Value {
    let p = root().join("reports").join(format!("{id}.cert.json"));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// clusters/collapse's certificate with X0 iterated `steps` steps and these formulas
/// (X1 and the other obligations dropped).
fn collapse_with(steps: usize, formulas: &[String]) -> Certificate {
    let mut v = committed_json("clusters/collapse");
    v["data"]["X0"]["steps"] = Value::from(steps);
    v["data"].as_object_mut().unwrap().remove("X1");
    let o = v["obligations"][0].clone();
    v["obligations"] = Value::Array(
        formulas
            .iter()
            .map(|f| {
                let mut o = o.clone();
                o["formula"] = Value::String(f.clone());
                o
            })
            .collect(),
    );
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("edited.cert.json");
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    coq::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

/// Every layer obligation's `[prefix-first answer, whole check's answer, refuted]`.
fn decisions(cert: &Certificate, bits: u32) -> Vec<[bool; 3]> {
    coq::layer_road_decisions(cert, bits)
        .into_iter()
        .map(|d| d.expect("an obligation over the layer map"))
        .collect()
}

/// The committed certificate: at 37 bits (the precision the layer road tries first)
/// the prefixes refute all four obligations, as the whole check does; the report's
/// kernel-only reasons ("does not decide it at 37 bits") follow from that answer.
#[test]
fn collapse_precision_check_refuted_on_a_prefix_is_the_whole_check() {
    let p = root().join("reports/clusters/collapse.cert.json");
    let cert = coq::load(&p).unwrap();
    let d = decisions(&cert, 37);
    assert_eq!(d.len(), 4);
    for (i, [fast, whole, refuted]) in d.into_iter().enumerate() {
        assert_eq!(fast, whole, "obligation {i}");
        assert!(
            !whole,
            "obligation {i}: the kernel does not decide it at 37 bits"
        );
        assert!(refuted, "obligation {i}: a prefix refutes it");
    }
}

/// Edited formulas over X0 with K = 300 (prefixes of 64 and 128 steps): the same
/// answer as the whole check whether a prefix refutes, cannot cut, or errs.
#[test]
fn edited_layer_formulas_get_the_whole_checks_answer() {
    let k = 300;
    let part = |i: &str| format!("(layer-partition X0 0 {i})");
    let sq = |i: &str| format!("(layer-max-sqnorm X0 0 {i})");
    let formulas = vec![
        // the claim's two facts, over K = 300
        format!(
            "(forall k 0 {} (<= {} {}))",
            k - 1,
            part("(+ k 1)"),
            part("k")
        ),
        format!("(forall k 1 {k} (<= {} (max {} 20)))", sq("k"), sq("0")),
        // an offset of 2, a loose bound that holds at every step
        format!(
            "(forall k 0 {} (<= {} {}))",
            k - 2,
            part("(+ k 2)"),
            part("k")
        ),
        format!("(forall k 0 {k} (<= {} 1000))", sq("k")),
        // a conjunct that cannot be cut beside one that can
        format!(
            "(and (<= {} 1000) (forall k 0 {} (<= {} {})))",
            part("0"),
            k - 1,
            part("(+ k 1)"),
            part("k")
        ),
        // indices counted from the end: every prefix errs, the whole check decides
        format!(
            "(forall k 0 10 (<= {} {}))",
            part(&format!("(- {k} k)")),
            part("0")
        ),
        // a bound false at step 0 already
        format!("(forall k 0 {k} (<= {} 1/2))", sq("k")),
    ];
    let cert = collapse_with(k, &formulas);
    let mut seen = [false; 2];
    for bits in [24, 37, 53] {
        for (i, [fast, whole, refuted]) in decisions(&cert, bits).into_iter().enumerate() {
            assert_eq!(fast, whole, "formula {i} at {bits} bits: {}", formulas[i]);
            assert!(!(refuted && whole), "formula {i} at {bits} bits");
            seen[usize::from(whole)] = true;
        }
    }
    assert_eq!(seen, [true, true], "both answers occur");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    /// Random per-step comparisons over X0 (K from 130 to 400): the layer road's
    /// answer is the whole check's.
    #[test]
    fn random_layer_formulas_get_the_whole_checks_answer(
        k in 130usize..400,
        off in 0i64..3,
        lo in 0i64..40,
        op in 0usize..3,
        bound in prop::sample::select(vec!["1/2", "20", "1000", "(layer-partition X0 0 0)"]),
        bits in prop::sample::select(vec![20u32, 30, 37, 45]),
    ) {
        let k = k as i64;
        let q = ["layer-partition", "layer-max-sqnorm", "layer-partition"][op];
        let rhs = if op == 2 { format!("({q} X0 0 k)") } else { bound.to_string() };
        let f = format!("(forall k {lo} {} (<= ({q} X0 0 (+ k {off})) {rhs}))", k - off);
        let cert = collapse_with(k as usize, std::slice::from_ref(&f));
        let [fast, whole, refuted] = decisions(&cert, bits)[0];
        prop_assert_eq!(fast, whole, "{} at {} bits", f, bits);
        prop_assert!(!(refuted && whole));
    }
}
