//! The `attn-weights` datum (crates/attncheck-kernel/src/weights.rs) and its operations
//! `attn-ln-bound` and `attn-logit-range`: a hand-built model whose bound and window are
//! computed by hand, hostile data, and containment of the f64 forward computation.

use crate::common::SplitMix64;
use crate::weights_model::{data_of, datum, entry_of, hand_model, stored, Layer};
use attncheck_kernel::certificate::DataEntry;
use attncheck_kernel::expr::{check_with, eval_with, Datum};
use attncheck_kernel::weights::digest;
use attncheck_kernel::{Certainty, Interval};
use proptest::prelude::*;
use rug::Rational;

/// T^∞(w) = 1/(1 + (e^{mw} − 1)/e^Δ) with Δ the certified bound (as alibi-window writes it).
fn tail(m: &str, w: u64, delta: &str) -> String {
    format!("(/ 1 (+ 1 (/ (- (exp (* {m} {w})) 1) (exp {delta}))))")
}

#[test]
fn hand_built_one_layer_model_has_the_hand_computed_bound_and_window() {
    let data = data_of(&[("W", datum(4, 1, &[hand_model()]))]);
    let b = eval_with("(attn-ln-bound W 0)", 128, &data).unwrap();
    assert!(b.contains_rational(&Rational::from((13, 4))), "{b:?}");
    assert!(b.width_up() < 1e-30, "{b:?}");
    let d = eval_with("(attn-logit-range W 0 0)", 128, &data).unwrap();
    assert!(d.contains_rational(&Rational::from((1271, 16))), "{d:?}");
    assert!(d.width_up() < 1e-30, "{d:?}");
    // by hand (ε = 1/100): y = ln((e^Δ(1 − ε) + ε)/ε)/m = 168.065… at m = 1/2, so
    // w = 169: T^∞(169) = 0.00629 ≤ ε < T^∞(168) = 0.01033; at m = 2^-8, y = 21512.35…
    let delta = "(attn-logit-range W 0 0)";
    for (m, w) in [("1/2", 169u64), ("2^-8", 21513)] {
        let at = format!("(<= {} 1/100)", tail(m, w, delta));
        let before = format!("(<= {} 1/100)", tail(m, w - 1, delta));
        assert_eq!(check_with(&at, 128, &data).unwrap(), Certainty::True, "{m}");
        assert_eq!(
            check_with(&before, 128, &data).unwrap(),
            Certainty::False,
            "{m}"
        );
    }
}

fn refused(v: &serde_json::Value) -> (String, String) {
    let e: DataEntry = serde_json::from_value(v.clone()).expect("the entry's shape");
    match e.to_datum() {
        Err(fr) => fr,
        Ok(_) => panic!("accepted: {v}"),
    }
}

#[test]
fn malformed_weights_are_refused_naming_the_field() {
    let good = entry_of(4, 1, &[hand_model()]);
    let e: DataEntry = serde_json::from_value(good.clone()).unwrap();
    let back = DataEntry::from_datum(&e.to_datum().unwrap());
    assert_eq!(back, e, "the datum round-trips to the same entry");
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = good.clone();
        f(&mut v);
        v
    };
    let set = |field: &'static str, s: String| {
        edit(&move |v: &mut serde_json::Value| v["layers"][0][field] = s.clone().into())
    };
    let wq = good["layers"][0]["w_q"].as_str().unwrap().to_string();
    // wrong sizes
    let (f, r) = refused(&set("w_q", wq[8..].to_string()));
    assert_eq!(f, "layers[0].w_q", "{r}");
    assert!(r.contains("16 values need 128"), "{r}");
    let (f, _) = refused(&set("b_k", "00000000".into()));
    assert_eq!(f, "layers[0].b_k");
    // non-finite patterns: NaN, +∞, −∞ (the hash recomputed, so only finiteness refuses)
    for bad in ["7fc00000", "7f800000", "ff800000", "7f800001"] {
        let mut l = hand_model();
        l.wk[5] = f32::from_bits(u32::from_str_radix(bad, 16).unwrap());
        let (f, r) = refused(&entry_of(4, 1, &[l]));
        assert_eq!(f, "layers[0].w_k", "{bad}: {r}");
        assert!(r.contains("not a finite f32"), "{bad}: {r}");
    }
    // upper-case or non-hex digits
    let (f, r) = refused(&set("w_q", wq.to_uppercase().replace('0', "A")));
    assert_eq!(f, "layers[0].w_q", "{r}");
    // a value changed, the hash kept: hash mismatch
    let mut w2 = wq.clone();
    w2.replace_range(0..8, &format!("{:08x}", 2.5f32.to_bits()));
    let (f, r) = refused(&set("w_q", w2));
    assert_eq!(f, "sha256", "{r}");
    assert!(r.contains("hash to"), "{r}");
    let (f, _) = refused(&edit(&|v| v["sha256"] = "xyz".into()));
    assert_eq!(f, "sha256");
    // shapes: heads not dividing hidden, no head, hidden 0, an empty model
    let (f, _) = refused(&edit(&|v| v["heads"] = 3.into()));
    assert_eq!(f, "heads");
    let (f, _) = refused(&edit(&|v| v["heads"] = 0.into()));
    assert_eq!(f, "heads");
    let (f, _) = refused(&edit(&|v| v["hidden"] = 0.into()));
    assert_eq!(f, "hidden");
    let (f, r) = refused(&entry_of(4, 1, &[]));
    assert_eq!(f, "layers", "{r}");
    // unknown fields are refused by the format
    let mut extra = good.clone();
    extra["layers"][0]["w_v"] = "00000000".into();
    assert!(serde_json::from_value::<DataEntry>(extra).is_err());
    // layer 0's input: the embedding needs ε_LN and both need their sizes; ε must be a
    // positive finite f32; both are hashed
    let emb: String = (0..256 * 4)
        .map(|i| format!("{:08x}", ((i % 7) as f32 * 0.125 - 0.25).to_bits()))
        .collect();
    let with_input = |eps: &str, emb: &str| {
        let mut v = good.clone();
        v["ln_eps"] = eps.into();
        v["embedding"] = emb.into();
        v
    };
    let rehashed = |mut v: serde_json::Value| {
        let words = |s: &str| -> Vec<u32> {
            (0..s.len() / 8)
                .map(|i| u32::from_str_radix(&s[8 * i..8 * i + 8], 16).unwrap_or(0))
                .collect()
        };
        let mut bits: Vec<Vec<u32>> = attncheck_kernel::weights::PARTS
            .iter()
            .map(|p| words(v["layers"][0][*p].as_str().unwrap()))
            .collect();
        bits.push(words(v["ln_eps"].as_str().unwrap()));
        bits.push(words(v["embedding"].as_str().unwrap()));
        v["sha256"] = digest(&bits).into();
        v
    };
    let eps = format!("{:08x}", 1e-5f32.to_bits());
    let ok = rehashed(with_input(&eps, &emb));
    let e: DataEntry = serde_json::from_value(ok.clone()).unwrap();
    let Datum::Attn(w) = e.to_datum().unwrap() else {
        unreachable!()
    };
    assert!(w.input().is_some());
    assert_eq!(DataEntry::from_datum(&Datum::Attn(w)), e, "round trip");
    let (f, r) = refused(&with_input(&eps, &emb));
    assert_eq!(f, "sha256", "the input is hashed: {r}");
    for (bad, why) in [
        ("00000000", "positive"),
        ("80000001", "positive"),
        ("7fc00000", "finite"),
        ("7f800000", "finite"),
    ] {
        let (f, r) = refused(&rehashed(with_input(bad, &emb)));
        assert_eq!(f, "ln_eps", "{bad}: {r}");
        assert!(r.contains(why), "{bad}: {r}");
    }
    let (f, r) = refused(&rehashed(with_input(&eps, &emb[8..])));
    assert_eq!(f, "embedding", "{r}");
    let mut no_eps = ok.clone();
    no_eps.as_object_mut().unwrap().remove("ln_eps");
    assert_eq!(refused(&no_eps).0, "ln_eps");
    let mut no_emb = ok.clone();
    no_emb.as_object_mut().unwrap().remove("embedding");
    assert_eq!(refused(&no_emb).0, "embedding");
}

#[test]
fn weight_operations_reject_bad_indices_and_data_without_panicking() {
    let data = data_of(&[("W", datum(4, 1, &[hand_model()]))]);
    let mut with_signs = data.clone();
    with_signs.insert(
        "S".into(),
        Datum::Signs(attncheck_kernel::SignMatrix::from_words(1, 1, vec![0]).unwrap()),
    );
    for (f, needle) in [
        ("(<= (attn-logit-range W 1 0) 1)", "layer 1"),
        ("(<= (attn-logit-range W 0 1) 1)", "head 1"),
        ("(<= (attn-logit-range W -1 0) 1)", "layer -1"),
        ("(<= (attn-logit-range W 0 1/2) 1)", "head 1/2"),
        ("(<= (attn-ln-bound W (sqrt 2)) 1)", "exact integer"),
        ("(<= (attn-ln-bound W 0 0) 1)", "takes 2 argument"),
        ("(<= (attn-logit-range W 0) 1)", "takes 3 argument"),
        ("(<= (attn-logit-range V 0 0) 1)", "no datum named `V`"),
        (
            "(<= (attn-logit-range S 0 0) 1)",
            "expected an attention-weights datum",
        ),
        ("(<= (attn-row-logit-range W 1 0) 1)", "layer 1"),
        ("(<= (attn-row-logit-range W 0 2) 1)", "head 2"),
        ("(<= (attn-row-logit-range W 0) 1)", "takes 3 argument"),
        ("(<= (attn-byte-logit-range W 1) 1)", "head 1"),
        ("(<= (attn-byte-logit-range W 0) 1)", "no embedding"),
        ("(<= (attn-byte-logit-range W 0 0) 1)", "takes 2 argument"),
        (
            "(<= (attn-byte-logit-range S 0) 1)",
            "expected an attention-weights datum",
        ),
        ("(<= (rows W) 1)", "use their operations"),
        ("(<= (gram-max-abs W) 1)", "expected a sign matrix"),
    ] {
        let e = check_with(f, 64, &with_signs).unwrap_err();
        assert!(e.reason.contains(needle), "{f}: {}", e.reason);
    }
}

/// Regression (issue #40's bounds 4 and 5 were computed when the datum was read, before
/// the budget was checked): a datum of one wide head (d = d_h = 256) whose folded-row bound
/// would take d_h³ products of integers of thousands of bits, five times over, is read at
/// once; the formula that asks for that bound is refused by the budget before anything
/// runs, naming the limit, and the norm bound of the same datum is still decided.
#[test]
fn a_row_bound_that_would_run_for_hours_is_refused_before_it_runs() {
    let d = 256;
    let mut k = 0u32;
    let mut v = |n: usize, centre: f32| -> Vec<f32> {
        (0..n)
            .map(|_| {
                k = k.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                centre + (1.0 + (k >> 9) as f32 / 8_388_608.0) * 2f32.powi(-4 - (k % 6) as i32)
            })
            .collect()
    };
    let wide = Layer {
        gamma: v(d, 1.0),
        beta: v(d, 0.0),
        wq: v(d * d, 0.0),
        bq: v(d, 0.0),
        wk: v(d * d, 0.0),
        bk: v(d, 0.0),
    };
    let t = std::time::Instant::now();
    let data = data_of(&[("W", datum(d, 1, &[wide]))]);
    let e = check_with("(> (attn-row-logit-range W 0 0) 0)", 64, &data).unwrap_err();
    assert!(e.reason.contains("the limit is 1000000000"), "{}", e.reason);
    assert!(check_with("(> (attn-logit-range W 0 0) 0)", 64, &data).unwrap() == Certainty::True);
    assert!(
        t.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        t.elapsed()
    );
}

/// The datum argument always names data, never a variable: a bound variable named like a
/// datum does not capture it, and each operation reads the datum it names.
#[test]
fn data_names_are_not_captured_by_variables_or_each_other() {
    let mut other = hand_model();
    other.bk = vec![0.0; 4]; // K̄ = 39/4: Δ̄ = 2·(31/4)(39/4)/2 = 1209/16
    let data = data_of(&[
        ("W", datum(4, 1, &[hand_model()])),
        ("V", datum(4, 1, &[other])),
    ]);
    let w = Rational::from((1271, 16));
    let v = Rational::from((1209, 16));
    for (f, holds) in [
        (
            format!("(forall V 0 0 (>= (attn-logit-range V V 0) {v}))"),
            true,
        ),
        (
            format!("(forall V 0 0 (< (attn-logit-range V V 0) {w}))"),
            true,
        ),
        (
            format!("(forall W 0 0 (>= (attn-logit-range W W W) {w}))"),
            true,
        ),
        (format!("(< (attn-logit-range W 0 0) {v})"), false),
    ] {
        let want = if holds {
            Certainty::True
        } else {
            Certainty::False
        };
        assert_eq!(check_with(&f, 128, &data).unwrap(), want, "{f}");
    }
}

// ----- containment: the f64 forward computation of the content logits -----

/// s_ij = q_i·k_j/√d_h for head h of one layer, q = LN(x)·W_Q^h + b_Q^h (ε_LN = 1e-5), in f64.
fn logits(l: &Layer, d: usize, heads: usize, h: usize, xs: &[Vec<f64>]) -> Vec<f64> {
    let dh = d / heads;
    let ln = |x: &[f64]| -> Vec<f64> {
        let mu = x.iter().sum::<f64>() / d as f64;
        let var = x.iter().map(|v| (v - mu) * (v - mu)).sum::<f64>() / d as f64;
        let inv = 1.0 / (var + 1e-5).sqrt();
        (0..d)
            .map(|k| (x[k] - mu) * inv * f64::from(l.gamma[k]) + f64::from(l.beta[k]))
            .collect()
    };
    let proj = |y: &[f64], w: &[f32], b: &[f32]| -> Vec<f64> {
        (0..dh)
            .map(|c| {
                let col = h * dh + c;
                (0..d)
                    .map(|a| y[a] * f64::from(w[a * d + col]))
                    .sum::<f64>()
                    + f64::from(b[col])
            })
            .collect()
    };
    let ys: Vec<Vec<f64>> = xs.iter().map(|x| ln(x)).collect();
    let qs: Vec<Vec<f64>> = ys.iter().map(|y| proj(y, &l.wq, &l.bq)).collect();
    let ks: Vec<Vec<f64>> = ys.iter().map(|y| proj(y, &l.wk, &l.bk)).collect();
    let mut out = Vec::new();
    for q in &qs {
        for k in &ks {
            out.push(q.iter().zip(k).map(|(a, b)| a * b).sum::<f64>() / (dh as f64).sqrt());
        }
    }
    out
}

fn small_f32() -> impl Strategy<Value = f32> {
    // dyadic values of mixed scales, zeros included
    (-64i32..=64, -8i32..=2).prop_map(|(m, e)| m as f32 * 2f32.powi(e))
}

fn layer_strategy(d: usize) -> impl Strategy<Value = Layer> {
    (
        prop::collection::vec(small_f32(), d),
        prop::collection::vec(small_f32(), d),
        prop::collection::vec(small_f32(), d * d),
        prop::collection::vec(small_f32(), d),
        prop::collection::vec(small_f32(), d * d),
        prop::collection::vec(small_f32(), d),
    )
        .prop_map(|(gamma, beta, wq, bq, wk, bk)| Layer {
            gamma,
            beta,
            wq,
            bq,
            wk,
            bk,
        })
}

fn model_strategy() -> impl Strategy<Value = (usize, usize, Vec<Layer>)> {
    prop::sample::select(vec![(4usize, 1usize), (4, 2), (8, 2), (8, 4)]).prop_flat_map(
        |(d, heads)| {
            (
                Just(d),
                Just(heads),
                prop::collection::vec(layer_strategy(d), 1..=2),
            )
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// The certified Δ̄ of every (layer, head) is at least the range of the content logits
    /// of random inputs (spread over many scales, a constant row included) run through the
    /// f64 forward computation.
    #[test]
    fn certified_logit_range_contains_the_f64_forward_range(
        (d, heads, layers) in model_strategy(),
        seed in any::<u64>(),
        scale in -6i32..=6,
    ) {
        let mut rng = SplitMix64::new(seed);
        let data = data_of(&[("W", datum(d, heads, &layers))]);
        let n = 6;
        let xs: Vec<Vec<f64>> = (0..n).map(|i| {
            if i == 0 {
                vec![1.5; d] // σ = 0: LN gives β
            } else {
                (0..d).map(|_| ((rng.next_u64() % 2001) as f64 / 1000.0 - 1.0) * 2f64.powi(scale)).collect()
            }
        }).collect();
        for (li, l) in layers.iter().enumerate() {
            for h in 0..heads {
                let s = logits(l, d, heads, h, &xs);
                let range = s.iter().cloned().fold(f64::MIN, f64::max) - s.iter().cloned().fold(f64::MAX, f64::min);
                let bound = eval_with(&format!("(attn-logit-range W {li} {h})"), 64, &data).unwrap();
                // the f64 range has rounding errors of relative size ~1e-15
                prop_assert!(range <= bound.hi_f64() * (1.0 + 1e-12) + 1e-300,
                    "layer {li} head {h}: range {range} > bound {}", bound.hi_f64());
                // the row bound (γ and β folded): every query's row, and never above the former
                let row = eval_with(&format!("(attn-row-logit-range W {li} {h})"), 64, &data).unwrap();
                prop_assert!(row.hi_f64() <= bound.hi_f64() * (1.0 + 1e-12));
                for r in s.chunks(n) {
                    let rr = r.iter().cloned().fold(f64::MIN, f64::max) - r.iter().cloned().fold(f64::MAX, f64::min);
                    prop_assert!(rr <= row.hi_f64() * (1.0 + 1e-12) + 1e-300,
                        "layer {li} head {h}: a row's range {rr} > row bound {}", row.hi_f64());
                }
            }
        }
    }
}

// ----- the bounds against their formulas, computed independently -------------------------

/// B_ℓ and Δ̄_ℓh written out from the module's formulas over the exact f32 values, with
/// the sums taken in exact rationals and the roots, products and quotient at 400 bits:
/// B = √d·max|γ| + ‖β‖, N(W) = min(‖W‖_F, √(‖W‖₁‖W‖_∞)) over head h's column block,
/// Q̄ = N(W_Q^h)·B + ‖b_Q^h‖, K̄ likewise, Δ̄ = 2·Q̄·K̄/√d_h.
fn reference(l: &Layer, d: usize, heads: usize, h: usize) -> (Interval, Interval) {
    let p = 400;
    let x = |v: f32| Rational::from_f32(v).expect("finite");
    let iv = |r: &Rational| Interval::from_rational(p, r);
    let root = |r: &Rational| iv(r).sqrt();
    let sq = |v: &[f32]| v.iter().map(|&a| x(a) * x(a)).sum::<Rational>();
    let gmax = l.gamma.iter().map(|&g| x(g).abs()).max().unwrap();
    let b = &(&Interval::from_i64(p, d as i64).sqrt() * &iv(&gmax)) + &root(&sq(&l.beta));
    let dh = d / heads;
    let cols = h * dh..(h + 1) * dh;
    let norm = |w: &[f32]| {
        let at = |a: usize, c: usize| x(w[a * d + c]);
        let frob2: Rational = (0..d)
            .flat_map(|a| cols.clone().map(move |c| (a, c)))
            .map(|(a, c)| at(a, c) * at(a, c))
            .sum();
        let one = cols
            .clone()
            .map(|c| (0..d).map(|a| at(a, c).abs()).sum::<Rational>())
            .max()
            .unwrap();
        let inf = (0..d)
            .map(|a| cols.clone().map(|c| at(a, c).abs()).sum::<Rational>())
            .max()
            .unwrap();
        root(&frob2).min(&root(&(one * inf)))
    };
    let qbar = &(&norm(&l.wq) * &b) + &root(&sq(&l.bq[cols.clone()]));
    let kbar = &(&norm(&l.wk) * &b) + &root(&sq(&l.bk[cols.clone()]));
    let delta = (&(&qbar * &kbar) / &Interval::from_i64(p, dh as i64).sqrt()).mul_2exp(1);
    (b, delta)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// The kernel's B_ℓ and Δ̄_ℓh at 128 bits contain the reference (and are tight: the
    /// reference at 400 bits is 2^-100 of their width, so a different formula, head block
    /// or norm would miss it), for every layer and head of random models.
    #[test]
    fn bounds_equal_their_formulas_for_every_layer_and_head(
        (d, heads, layers) in model_strategy(),
    ) {
        let data = data_of(&[("W", datum(d, heads, &layers))]);
        for (li, l) in layers.iter().enumerate() {
            let b = eval_with(&format!("(attn-ln-bound W {li})"), 128, &data).unwrap();
            for h in 0..heads {
                let (rb, rd) = reference(l, d, heads, h);
                prop_assert!(b.contains(&rb), "B_{}: {:?} ⊉ {:?}", li, b, rb);
                let got = eval_with(&format!("(attn-logit-range W {li} {h})"), 128, &data).unwrap();
                prop_assert!(got.contains(&rd), "Δ̄_{}{}: {:?} ⊉ {:?}", li, h, got, rd);
                let w = got.width_up();
                prop_assert!(w <= rd.hi().clone().abs() >> 100u32 || *rd.hi() == 0, "{:?}", got);
            }
        }
    }
}

/// The model's accessors, and each size limit at its edge (`hidden`, `heads`, `layers`,
/// layers·d² ≤ 2^22, `sha256`'s form).
#[test]
fn weights_accessors_and_size_limits() {
    use attncheck_kernel::weights::{AttnWeights, MAX_HEADS, MAX_HIDDEN, MAX_LAYERS, MAX_VALUES};
    assert_eq!(
        (MAX_HIDDEN, MAX_HEADS, MAX_LAYERS, MAX_VALUES),
        (1024, 64, 64, 1 << 22)
    );
    let w = datum(4, 2, &[hand_model(), hand_model()]);
    assert_eq!((w.hidden(), w.heads(), w.layers()), (4, 2, 2));
    let (hx, sha) = stored(&[hand_model(), hand_model()]);
    assert_eq!((w.sha256(), w.hex()), (sha.as_str(), &hx[..]));
    let new = |hidden: usize,
               heads: usize,
               sha: &str,
               layers: Vec<attncheck_kernel::weights::LayerHex>| {
        AttnWeights::new(hidden, heads, sha, layers, None)
            .map(|_| ())
            .map_err(|e| e.0)
    };
    let zero = |d: usize| -> Layer {
        Layer {
            gamma: vec![0.0; d],
            beta: vec![0.0; d],
            wq: vec![0.0; d * d],
            bq: vec![0.0; d],
            wk: vec![0.0; d * d],
            bk: vec![0.0; d],
        }
    };
    let (hx, sha) = stored(&[zero(4)]);
    assert_eq!(new(4, 4, &sha, hx.clone()), Ok(()));
    assert_eq!(new(0, 1, &sha, hx.clone()), Err("hidden".into()));
    assert_eq!(new(1025, 1, &sha, hx.clone()), Err("hidden".into()));
    assert_eq!(new(4, 0, &sha, hx.clone()), Err("heads".into()));
    assert_eq!(new(4, 3, &sha, hx.clone()), Err("heads".into()));
    assert_eq!(
        new(128, 128, &sha, hx.clone()),
        Err("heads".into()),
        "more than 64 heads"
    );
    assert_eq!(new(4, 4, &sha, vec![]), Err("layers".into()));
    assert_eq!(
        new(4, 4, &sha, vec![hx[0].clone(); 65]),
        Err("layers".into())
    );
    assert_eq!(
        new(4, 4, &sha.to_uppercase(), hx.clone()),
        Err("sha256".into())
    );
    assert_eq!(new(4, 4, &sha[1..], hx.clone()), Err("sha256".into()));
    assert_eq!(
        new(4, 4, &format!("{}g", &sha[1..]), hx.clone()),
        Err("sha256".into())
    );
    // 64 heads of d = 64 (d_h = 1) are fine; layers·d² = 2^22 is the edge: 4 layers of
    // d = 1024 pass the size check (and then fail only on their short tensors), 5 do not
    let (hx, sha) = stored(&[zero(64)]);
    assert_eq!(new(64, 64, &sha, hx), Ok(()));
    let short = hx_of(4);
    assert_eq!(
        new(1024, 1, &sha, vec![short.clone(); 4]).unwrap_err(),
        "layers[0].ln_gain"
    );
    assert_eq!(new(1024, 1, &sha, vec![short; 5]), Err("layers".into()));
}

fn hx_of(d: usize) -> attncheck_kernel::weights::LayerHex {
    let z = "00000000".repeat(d);
    [z.clone(), z.clone(), z.clone(), z.clone(), z.clone(), z]
}

/// Layer and head indices: exact integers in range, named in the error.
#[test]
fn weight_indices_are_exact_integers_in_range() {
    use attncheck_kernel::weights::IndexError;
    let w = datum(4, 2, &[hand_model()]);
    let e = |what, index: &str, bound| IndexError {
        what,
        index: crate::common::q(index),
        bound,
    };
    let q = crate::common::q;
    assert!(w.logit_range(64, &q("0"), &q("1")).is_ok());
    assert_eq!(w.logit_range(64, &q("1"), &q("0")), Err(e("layer", "1", 1)));
    assert_eq!(w.logit_range(64, &q("0"), &q("2")), Err(e("head", "2", 2)));
    assert_eq!(
        w.logit_range(64, &q("0"), &q("-1")),
        Err(e("head", "-1", 2))
    );
    assert_eq!(
        w.logit_range(64, &q("0"), &q("1/2")),
        Err(e("head", "1/2", 2))
    );
    assert_eq!(w.ln_bound(64, &q("1")), Err(e("layer", "1", 1)));
    assert_eq!(w.ln_bound(64, &q("-1/3")), Err(e("layer", "-1/3", 1)));
    assert_eq!(
        e("head", "2", 2).to_string(),
        "head 2 is not an integer in 0..2"
    );
}

/// f32 patterns as exact values: `scaled` is the value times 2^149, for normal, subnormal,
/// signed and extreme patterns; NaN and ±∞ have none. The digest is SHA-256 over the
/// patterns' little-endian bytes.
#[test]
fn f32_patterns_and_the_digest() {
    use attncheck_kernel::weights::{digest, scaled};
    for x in [
        0.0f32,
        -0.0,
        1.0,
        -1.5,
        0.1,
        3.0e-39,
        -1e-45,
        f32::MIN_POSITIVE,
        f32::MAX,
        -f32::MAX,
    ] {
        let v = Rational::from((scaled(x.to_bits()).unwrap(), rug::Integer::from(1) << 149));
        assert_eq!(v, Rational::from_f32(x).unwrap(), "{x}");
    }
    for bits in [
        0x7f80_0000u32,
        0xff80_0000,
        0x7fc0_0000,
        0x7f80_0001,
        0xffff_ffff,
    ] {
        assert!(scaled(bits).is_none(), "{bits:08x}");
    }
    // SHA-256 of the empty input, and of the bytes 01 00 00 00 02 00 00 00
    assert_eq!(
        digest(&[]),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(digest(&[vec![1], vec![2]]), digest(&[vec![1, 2]]));
    assert_eq!(
        digest(&[vec![1, 2]]),
        "34fb5c825de7ca4aea6e712f19d439c1da0c92c37b423936c5f618545ca4fa1f"
    );
}
