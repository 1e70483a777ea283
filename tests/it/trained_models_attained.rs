//! positional/trained-model-claims: the interval forward pass that turns a probe input into a
//! certified lower bound on the content-logit range it attains in the model computed in exact
//! arithmetic (src/claims/positional/trained_model_claims/attained.rs, issue #40).

use attncheck::claims::positional::common::{slope_exponents, slope_interval};
use attncheck::claims::positional::trained_model_claims::attained::{
    parse_probe, range_bounds, sig_down, sig_up, ExactModel,
};
use attncheck::claims::positional::trained_model_claims::{self as tmc};
use attncheck::kernel::F64Iv;
use attncheck_lm::job::StoredWeights;
use attncheck_lm::model::{tokens, Config, Model, Position, LN_EPS, VOCAB};
use attncheck_lm::{DType, SplitMix64, Tensor};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A random model of `layers` layers, hidden `d`, 2 heads, every weight a random f32 (the
/// LayerNorms' gains and shifts too), as the f64 candle model (which holds them exactly).
fn random_model(layers: usize, d: usize, slopes: [f64; 2], seed: u64) -> Model {
    let mut rng = SplitMix64(seed);
    let mut t = |shape: Vec<usize>, mean: f64, std: f64| {
        let n: usize = shape.iter().product();
        let v: Vec<f64> = (0..n)
            .map(|_| f64::from((mean + std * rng.normal()) as f32))
            .collect();
        Tensor::from_vec(v, shape, &attncheck_lm::Device::Cpu).unwrap()
    };
    let mut m = BTreeMap::new();
    m.insert("emb".to_string(), t(vec![VOCAB, d], 0.0, 1.0));
    m.insert("head.w".to_string(), t(vec![d, VOCAB], 0.0, 0.1));
    m.insert("lnf.w".to_string(), t(vec![d], 1.0, 0.3));
    m.insert("lnf.b".to_string(), t(vec![d], 0.0, 0.3));
    for l in 0..layers {
        for (name, shape, mean, std) in [
            ("qkv.w", vec![d, 3 * d], 0.0, 0.5),
            ("qkv.b", vec![3 * d], 0.0, 0.3),
            ("o.w", vec![d, d], 0.0, 0.5),
            ("o.b", vec![d], 0.0, 0.3),
            ("fc1.w", vec![d, 4 * d], 0.0, 0.5),
            ("fc1.b", vec![4 * d], 0.0, 0.3),
            ("fc2.w", vec![4 * d, d], 0.0, 0.3),
            ("fc2.b", vec![d], 0.0, 0.3),
            ("ln1.w", vec![d], 1.0, 0.5),
            ("ln1.b", vec![d], 0.0, 0.5),
            ("ln2.w", vec![d], 1.0, 0.5),
            ("ln2.b", vec![d], 0.0, 0.5),
        ] {
            m.insert(format!("l{l}.{name}"), t(shape, mean, std));
        }
    }
    let cfg = Config {
        hidden: d,
        layers,
        heads: 2,
        position: Position::Bias(Arc::new(move |h, r| -slopes[h] * r as f64)),
        dtype: DType::F64,
    };
    Model::from_tensors(cfg, m, "random").unwrap()
}

/// The model's f64 weights by name.
fn weights(model: &Model) -> BTreeMap<String, Vec<f64>> {
    model
        .weights()
        .iter()
        .map(|(k, t)| {
            (
                k.clone(),
                t.flatten_all().unwrap().to_vec1::<f64>().unwrap(),
            )
        })
        .collect()
}

/// An f64 forward pass written out operation by operation, in the order of the interval pass
/// (so every value is a member of the interval pass's enclosure: each f64 operation is
/// monotone in its operands), giving every layer's content logits [layer][head][i][j].
fn reference_logits(
    model: &Model,
    bytes: &[u8],
    slopes: [f64; 2],
    eps: f64,
) -> Vec<Vec<Vec<Vec<f64>>>> {
    let w = weights(model);
    let (d, heads, layers) = (model.cfg.hidden, 2, model.cfg.layers);
    let dh = d / heads;
    let lin = |x: &[f64], name: &str, n_out: usize| -> Vec<f64> {
        let (wm, b) = (&w[&format!("{name}.w")], &w[&format!("{name}.b")]);
        (0..n_out)
            .map(|o| {
                x.iter()
                    .enumerate()
                    .fold(b[o], |acc, (k, xk)| acc + xk * wm[k * n_out + o])
            })
            .collect()
    };
    let norm = |x: &[f64], name: &str| -> Vec<f64> {
        let (g, b) = (&w[&format!("{name}.w")], &w[&format!("{name}.b")]);
        let mean = x.iter().fold(0.0, |a, v| a + v) / d as f64;
        let c: Vec<f64> = x.iter().map(|v| v - mean).collect();
        let var = c.iter().fold(0.0, |a, v| a + v.abs() * v.abs()) / d as f64;
        let inv = 1.0 / (var + eps).sqrt();
        c.iter()
            .zip(g.iter().zip(b))
            .map(|(v, (g, b))| v * inv * g + b)
            .collect()
    };
    let emb = &w["emb"];
    let mut x: Vec<Vec<f64>> = bytes
        .iter()
        .map(|&b| emb[b as usize * d..(b as usize + 1) * d].to_vec())
        .collect();
    let scale = 1.0 / (dh as f64).sqrt();
    let mut out = Vec::new();
    for l in 0..layers {
        let qkv: Vec<Vec<f64>> = x
            .iter()
            .map(|xi| lin(&norm(xi, &format!("l{l}.ln1")), &format!("l{l}.qkv"), 3 * d))
            .collect();
        let s: Vec<Vec<Vec<f64>>> = (0..heads)
            .map(|h| {
                (0..qkv.len())
                    .map(|i| {
                        (0..=i)
                            .map(|j| {
                                let q = &qkv[i][h * dh..(h + 1) * dh];
                                let k = &qkv[j][d + h * dh..d + (h + 1) * dh];
                                q.iter().zip(k).fold(0.0, |a, (x, y)| a + x * y) * scale
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let mut att = vec![vec![0.0; d]; qkv.len()];
        for (h, rows) in s.iter().enumerate() {
            for (i, row) in rows.iter().enumerate() {
                let biased: Vec<f64> = row
                    .iter()
                    .enumerate()
                    .map(|(j, v)| v - slopes[h] * (i - j) as f64)
                    .collect();
                let c = biased.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = biased.iter().map(|v| (v - c).exp()).collect();
                let z = e.iter().fold(0.0, |a, v| a + v);
                for t in 0..dh {
                    let num = e
                        .iter()
                        .zip(&qkv)
                        .fold(0.0, |a, (ej, vj)| a + ej * vj[2 * d + h * dh + t]);
                    att[i][h * dh + t] = num / z;
                }
            }
        }
        out.push(s);
        if l + 1 == layers {
            break;
        }
        for (xi, oi) in x.iter_mut().zip(&att) {
            for (a, b) in xi.iter_mut().zip(lin(oi, &format!("l{l}.o"), d)) {
                *a += b;
            }
            let h: Vec<f64> = lin(&norm(xi, &format!("l{l}.ln2")), &format!("l{l}.fc1"), 4 * d)
                .into_iter()
                .map(|v| v.max(0.0))
                .collect();
            for (a, b) in xi.iter_mut().zip(lin(&h, &format!("l{l}.fc2"), d)) {
                *a += b;
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// On small random models (every weight a random f32, LayerNorm gains included; 1–2
    /// layers, hidden 8–16, 2 heads, 1–20 random bytes): every content logit's enclosure
    /// contains the value of an f64 pass in the same operation order; the certified bounds
    /// hold the f64 range between them, and the range of the model's own f64 forward pass
    /// (candle, another order) within 10⁻⁹; and the enclosure is narrow enough to be useful.
    #[test]
    fn the_interval_pass_encloses_the_f64_logits_tightly(
        layers in 1usize..=2,
        half in 4usize..=8,
        seed in any::<u64>(),
        bytes in proptest::collection::vec(any::<u8>(), 1..=20),
        steep in 0u32..4,
    ) {
        let d = 2 * half;
        let slopes = [0.5f64.powi(1 + steep as i32), 0.5f64.powi(5 + steep as i32)];
        let model = random_model(layers, d, slopes, seed);
        let stored = StoredWeights::of(&model).unwrap();
        let exact = ExactModel::new(
            &stored,
            d,
            slopes.iter().map(|&m| F64Iv::from_f64(m)).collect(),
            LN_EPS,
        )
        .unwrap();
        let enc = exact.logits(&bytes);
        let reference = reference_logits(&model, &bytes, slopes, LN_EPS);
        let candle = model.content_logit_ranges(&tokens(&[&bytes]).unwrap()).unwrap();
        prop_assert_eq!(enc.len(), layers);
        for l in 0..layers {
            for h in 0..2 {
                let mut range = 0f64;
                for (i, row) in enc[l][h].iter().enumerate() {
                    prop_assert_eq!(row.len(), i + 1);
                    let r = &reference[l][h][i];
                    for (t, &v) in row.iter().zip(r) {
                        prop_assert!(t.contains_f64(v), "layer {} head {} row {}: {} ∉ {:?}", l, h, i, v, t);
                    }
                    let mx = r.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let mn = r.iter().copied().fold(f64::INFINITY, f64::min);
                    range = range.max(mx - mn);
                }
                let b = range_bounds(&enc[l][h]);
                prop_assert_eq!(exact.range_at(&bytes, l, h), Some(b), "row by row, the same bounds");
                let (lo, hi) = (b.lower.unwrap(), b.upper.unwrap());
                prop_assert!(lo <= range && range <= hi, "{} ≤ {} ≤ {}", lo, range, hi);
                let c = candle[l][h];
                let tol = 1e-9 * (1.0 + c.abs());
                prop_assert!(lo <= c + tol && c <= hi + tol, "candle {} against [{}, {}]", c, lo, hi);
                let scale = enc[l][h].iter().flatten().filter_map(|t| t.bounds()).map(|(a, b)| a.abs().max(b.abs())).fold(1.0, f64::max);
                // interval arithmetic's wrapping: each linear map widens by its |W| (about
                // 10⁻¹³ of the logits at layer 0, up to 2·10⁻⁸ at layer 1 over 400 cases)
                prop_assert!(hi - lo <= 1e-7 * scale, "width {} at logits up to {}", hi - lo, scale);
                if range > 1e-6 {
                    prop_assert!(lo > 0.0, "no useful lower bound for range {}", range);
                }
            }
        }
    }
}

/// The certified lower bound of a stored scan model's probes (L_tr = 32, seed 1: the first
/// shard) agrees with the model's own f64 forward pass (`content_logit_ranges`, what the report
/// printed before) within 3·10⁻⁸ relative, for every head of layer 1, and is below the upper
/// bound by at most that. Measured: 2.5–4.9·10⁻⁹ from the f64 range, widths 5–9.9·10⁻⁹; not
/// 10⁻⁹, because interval arithmetic widens by each linear map's |W| and each LayerNorm's γ/σ
/// (about 30× at layer 0's LN₂, 7× at fc1, 8× at fc2, from 7·10⁻¹³ after layer 0's attention).
#[test]
fn a_stored_scan_models_probes_are_certified_close_to_their_f64_ranges() {
    let r = crate::util::trained_model_claims_full();
    let p = &r.params;
    let (scan, _) = r.scan().expect("the full profile is the scan");
    let name = "W_L32_alibi-paper-s1";
    let job = tmc::window::window_jobs(p)
        .into_iter()
        .find(|j| tmc::window::datum_name(j) == name)
        .unwrap();
    let tmc::Scheme::Alibi(rule) = job.scheme else {
        panic!("{name}: not ALiBi")
    };
    let path = crate::util::root()
        .join("bench/sweeps/trained-scan/shards/trained-model-claims.shard-1-of-72.json.gz");
    let v: serde_json::Value = serde_json::from_slice(&crate::util::gunzip(&path)).unwrap();
    let unit = v["record"]["results"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(k, _)| k.starts_with(&job.long_name()))
        .map(|(_, u)| u["result"].clone())
        .unwrap();
    let res: attncheck_lm::job::JobResult = serde_json::from_value(unit).unwrap();
    let w = res.weights.as_ref().expect("kept");
    let slopes = slope_exponents(p.heads, rule)
        .iter()
        .map(|q| F64Iv::from_interval(&slope_interval(q, 128)))
        .collect();
    let eps = ExactModel::stored_eps(w).unwrap();
    assert_eq!(
        eps,
        f64::from(1e-5f32),
        "the certificate's ε_LN: 10⁻⁵ rounded to f32"
    );
    let exact = ExactModel::new(w, p.hidden, slopes, eps).unwrap();
    let f64_model = w
        .model(tmc::model_config(job.scheme, p, DType::F64))
        .unwrap();
    let probes = &scan.probes[name];
    assert_eq!(probes.len(), p.heads);
    for (h, hex) in probes.iter().enumerate() {
        let bytes = parse_probe(hex).unwrap();
        let b = exact.range_at(&bytes, 1, h).unwrap();
        let f = f64_model
            .content_logit_ranges(&tokens(&[&bytes]).unwrap())
            .unwrap()[1][h];
        let (lo, hi) = (b.lower.unwrap(), b.upper.unwrap());
        assert!(lo > 0.0, "head {h}");
        assert!((lo - f).abs() <= 3e-8 * f, "head {h}: {lo} against f64 {f}");
        assert!(hi - lo <= 3e-8 * lo, "head {h}: [{lo}, {hi}]");
    }
}

/// A probe that is not whole hex bytes reads as no input (the report prints "—"), never a
/// panic: odd length, a non-hex digit, a sign (`u8::from_str_radix` reads "+f" as 15, which
/// the former reader let through), a multi-byte character cut in half, nothing at all. The spec
/// refuses all of these before (`a_malformed_probe_is_refused_naming_the_field`); this is the
/// reader's own guard. And a bound that says nothing prints "—" too.
#[test]
fn a_malformed_probe_reads_as_no_input_and_prints_a_dash() {
    for bad in ["abc", "zz", "+f", "0g", "é0", "", "0", " 0a"] {
        assert_eq!(parse_probe(bad), None, "{bad:?}");
    }
    assert_eq!(parse_probe("00ffA0"), Some(vec![0, 255, 160]));
    for x in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(sig_down(x), "—");
    }
    // a one-byte input: its only row has range 0, no positive lower bound
    let model = random_model(2, 8, [0.5, 0.25], 7);
    let stored = StoredWeights::of(&model).unwrap();
    let exact = ExactModel::new(
        &stored,
        8,
        vec![F64Iv::from_f64(0.5), F64Iv::from_f64(0.25)],
        LN_EPS,
    )
    .unwrap();
    let b = range_bounds(&exact.logits(&[65])[1][0]);
    assert!(b.lower.is_some_and(|x| x <= 0.0), "{b:?}");
    assert_eq!(sig_down(b.lower.unwrap()), "—");
    // and no input at all: no row, no bound; no such layer or head: none either
    assert_eq!(range_bounds(&exact.logits(&[])[1][0]).lower, None);
    let none = exact.range_at(&[], 1, 0).unwrap();
    assert_eq!((none.lower, none.upper), (None, None));
    assert_eq!(exact.range_at(&[1, 2], 2, 0), None);
    assert_eq!(exact.range_at(&[1, 2], 1, 2), None);
}

/// Rounded down to 4 significant digits, exactly: the printed decimal is never above the
/// value (22.51 as an f64 is a little above 22.51; the number just below it prints 22.50).
#[test]
fn sig_down_prints_a_lower_bound() {
    assert_eq!(sig_down(22.51), "22.51");
    assert_eq!(sig_down(22.51f64.next_down()), "22.50");
    assert_eq!(sig_down(2.0), "2.000");
    assert_eq!(sig_down(0.1), "0.1000");
    assert_eq!(sig_down(0.012_345_6), "0.01234");
    assert_eq!(sig_down(12_345.6), "12340");
    assert_eq!(sig_down(9.99999), "9.999");
    for x in [1e-7, 3.3e-3, 0.7, 1.0, 7.77777, 123.456, 1e6 + 0.5] {
        let s = sig_down(x);
        let v: f64 = s.parse().unwrap();
        assert!(v <= x && v > x * (1.0 - 1.001e-3), "{x}: {s}");
    }
}

/// The exact value of a printed decimal ("12.34", "12340").
fn decimal(s: &str) -> rug::Rational {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let num: rug::Integer = format!("{int}{frac}").parse().unwrap();
    let den = rug::Integer::from(rug::Integer::u_pow_u(10, frac.len() as u32));
    rug::Rational::from((num, den))
}

/// Regression (sig_up_printed_below_its_value): the report's `sig_up` rounded up in f64, so
/// 2.986 — whose f64 is 2.98600000000000012…, above the decimal — printed "2.986", a
/// decimal below the upper bound it stood for. Now exact, as `sig_down`; both directions
/// checked against the value as a rational.
#[test]
fn sig_up_never_prints_below_its_value() {
    assert_eq!(sig_up(2.986).as_deref(), Some("2.987"));
    assert_eq!(sig_up(2.5).as_deref(), Some("2.500"));
    assert_eq!(sig_up(12_345.6).as_deref(), Some("12350"));
    assert_eq!(sig_up(0.0), None);
    assert_eq!(sig_up(f64::NAN), None);
    for x in [
        1e-7,
        3.3e-3,
        0.7,
        1.0,
        2.985,
        2.986,
        7.77777,
        58.3,
        123.456,
        1e6 + 0.5,
    ] {
        let q = rug::Rational::from_f64(x).unwrap();
        let up = sig_up(x).unwrap();
        assert!(decimal(&up) >= q, "{x}: {up}");
        let down = sig_down(x);
        assert!(decimal(&down) <= q, "{x}: {down}");
    }
}
