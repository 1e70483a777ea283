//! positional/trained-model-claims: the candle models and the measurements behind its
//! verdicts. Each test pins something that would make a measurement wrong.

use crate::util::{edited_err, run_edited, run_quick, verdict};
use attncheck::claims::positional::common::{self, SlopeRule};
use attncheck::claims::positional::trained_model_claims::{self as tmc, Scheme};
use attncheck::spec::{Profile, Spec};
use attncheck::verdict::Verdict;
use attncheck_lm::eval::{normalised_gradients, receptive_field, sliding_nll, Sliding};
use attncheck_lm::model::{mean_nll, tokens, Config, Inference, Model, Position};
use attncheck_lm::train::{train, TrainConfig};
use attncheck_lm::{DType, SplitMix64, Tensor, Var};

const ID: &str = "positional/trained-model-claims";

fn quick_params() -> tmc::Params {
    let spec = Spec::load(&crate::util::spec_path(ID)).unwrap();
    spec.params(Profile::Quick).unwrap()
}

fn text(n: usize, seed: u64) -> Vec<u8> {
    // bytes with some structure: a seeded walk over a small alphabet
    let mut rng = SplitMix64(seed);
    let mut v = Vec::with_capacity(n);
    let mut c = 0u64;
    for _ in 0..n {
        c = (c + 1 + rng.below(3)) % 11;
        v.push(b'a' + c as u8);
    }
    v
}

fn tiny(position: Position, dtype: DType) -> Config {
    Config {
        hidden: 8,
        layers: 2,
        heads: 2,
        position,
        dtype,
    }
}

fn loss_of(model: &Model, x: &Tensor, y: &Tensor) -> f64 {
    mean_nll(&model.forward(x, Inference::default()).unwrap(), y)
        .unwrap()
        .to_scalar::<f64>()
        .unwrap()
}

fn set_entry(var: &Var, k: usize, value: f64) {
    let shape = var.shape().clone();
    let mut v = var
        .as_tensor()
        .flatten_all()
        .unwrap()
        .to_vec1::<f64>()
        .unwrap();
    v[k] = value;
    var.set(&Tensor::from_vec(v, shape, var.device()).unwrap())
        .unwrap();
}

fn schemes_tiny() -> Vec<(&'static str, Position)> {
    let mut p2 = quick_params();
    p2.heads = 2;
    vec![
        (
            "alibi",
            Position::Bias(tmc::bias_fn(Scheme::Alibi(SlopeRule::Paper), &p2).unwrap()),
        ),
        (
            "sandwich",
            Position::Bias(tmc::bias_fn(Scheme::Sandwich, &p2).unwrap()),
        ),
        (
            "sinusoidal",
            Position::Sinusoidal(vec![1.0, 0.1, 0.01, 0.001]),
        ),
        ("rope", Position::Rope(10000.0)),
        ("window", Position::Window(2)),
    ]
}

#[test]
fn gradients_match_central_finite_differences_for_every_scheme() {
    let data = text(200, 3);
    for (name, pos) in schemes_tiny() {
        let model = Model::new(tiny(pos, DType::F64), 11).unwrap();
        let rows: Vec<&[u8]> = vec![&data[0..12], &data[40..52]];
        let ys: Vec<&[u8]> = vec![&data[1..13], &data[41..53]];
        let (x, y) = (tokens(&rows).unwrap(), tokens(&ys).unwrap());
        let loss = mean_nll(&model.forward(&x, Inference::default()).unwrap(), &y).unwrap();
        let grads = loss.backward().unwrap();
        let mut rng = SplitMix64(5);
        let (mut checked, mut kinks) = (0, 0);
        for var in model.vars() {
            let g = grads
                .get(var.as_tensor())
                .unwrap_or_else(|| panic!("{name}: a weight got no gradient"))
                .flatten_all()
                .unwrap()
                .to_vec1::<f64>()
                .unwrap();
            let orig = var
                .as_tensor()
                .flatten_all()
                .unwrap()
                .to_vec1::<f64>()
                .unwrap();
            for _ in 0..2 {
                let k = rng.below(orig.len() as u64) as usize;
                // the MLP is ReLU: a difference across a kink is not a derivative. A small h
                // makes crossing one unlikely, and one-sided differences that disagree (a
                // jump in slope, far above the smooth h·f'') mark the rare case, skipped
                let h = 1e-7;
                let base = loss_of(&model, &x, &y);
                set_entry(var, k, orig[k] + h);
                let up = loss_of(&model, &x, &y);
                set_entry(var, k, orig[k] - h);
                let down = loss_of(&model, &x, &y);
                set_entry(var, k, orig[k]);
                let (fwd, bwd) = ((up - base) / h, (base - down) / h);
                if (fwd - bwd).abs() > 1e-4 {
                    kinks += 1;
                    continue;
                }
                let fd = (up - down) / (2.0 * h);
                assert!(
                    (fd - g[k]).abs() <= 1e-6 + 1e-4 * fd.abs(),
                    "{name}: d loss / d w[{k}] = {} by backprop, {fd} by finite differences",
                    g[k]
                );
                checked += 1;
            }
        }
        assert!(
            kinks <= 2,
            "{name}: {kinks} differences crossed a ReLU kink"
        );
        assert!(checked >= 20, "{name}");
    }
}

#[test]
fn input_embedding_gradient_matches_finite_differences() {
    // the receptive-field tool differentiates the last position's loss by the inputs
    let data = text(100, 4);
    for (name, pos) in schemes_tiny() {
        let model = Model::new(tiny(pos, DType::F64), 12).unwrap();
        let x = model.embed(&tokens(&[&data[0..10]]).unwrap()).unwrap();
        let y = tokens(&[&data[10..11]]).unwrap();
        let lossf = |x: &Tensor| -> Tensor {
            let lg = model
                .forward_embedded(x, Inference::default())
                .unwrap()
                .narrow(1, 9, 1)
                .unwrap();
            attncheck_lm::model::token_nll(&lg, &y)
                .unwrap()
                .sum_all()
                .unwrap()
        };
        let v = Var::from_tensor(&x).unwrap();
        let g = lossf(v.as_tensor()).backward().unwrap();
        let g = g
            .get(v.as_tensor())
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f64>()
            .unwrap();
        let base = x.flatten_all().unwrap().to_vec1::<f64>().unwrap();
        for k in [0usize, 13, 40, 79] {
            let h = 1e-5;
            let mut a = base.clone();
            a[k] += h;
            let up = lossf(&Tensor::from_vec(a.clone(), x.shape().clone(), x.device()).unwrap())
                .to_scalar::<f64>()
                .unwrap();
            a[k] -= 2.0 * h;
            let down = lossf(&Tensor::from_vec(a, x.shape().clone(), x.device()).unwrap())
                .to_scalar::<f64>()
                .unwrap();
            let fd = (up - down) / (2.0 * h);
            assert!(
                (fd - g[k]).abs() <= 1e-7 + 1e-4 * fd.abs(),
                "{name}: input {k}: {} vs {fd}",
                g[k]
            );
        }
    }
}

#[test]
fn receptive_field_tool_finds_exactly_layers_times_window_minus_one() {
    // windowed attention (W1) with ℓ layers and window w: the last token depends on exactly
    // the ℓ(w − 1) previous tokens (positional/windowed-receptive-field), so the input
    // gradient is nonzero there and exactly zero beyond
    let data = text(400, 6);
    for (layers, w) in [(1usize, 4usize), (3, 5), (2, 9)] {
        let mut cfg = tiny(Position::Window(w - 1), DType::F64);
        cfg.layers = layers;
        let model = Model::new(cfg, 21).unwrap();
        let l = 40;
        let g = normalised_gradients(&model, &data, l, 4, 4096).unwrap();
        let reach = layers * (w - 1);
        for row in &g {
            for (r, &x) in row.iter().enumerate() {
                if r <= reach {
                    assert!(
                        x > 0.0,
                        "ℓ = {layers}, w = {w}: zero gradient at distance {r}"
                    );
                } else {
                    assert_eq!(
                        x, 0.0,
                        "ℓ = {layers}, w = {w}: gradient at distance {r} beyond {reach}"
                    );
                }
            }
            assert!(receptive_field(row, 0.99) <= reach);
            assert_eq!(receptive_field(row, 1.0 - 1e-12), reach);
        }
    }
}

#[test]
fn model_biases_equal_the_certified_formulas() {
    // the model's attention bias is, number for number, the f64 formula of
    // claims/positional/common.rs, and that lies in the kernel's enclosure of the same formula
    let p = quick_params();
    let freqs = common::sandwich_freqs_f64(p.dbar, p.from);
    let freqs_i = common::sandwich_freqs(p.dbar, p.from, 128);
    for scheme in [
        Scheme::Alibi(SlopeRule::Paper),
        Scheme::Alibi(SlopeRule::Code),
        Scheme::Sandwich,
    ] {
        let model = Model::new(tmc::model_config(scheme, &p, DType::F64), 1).unwrap();
        let l = 600;
        let table = model.bias_table(l);
        assert_eq!(table.len(), p.heads);
        for (h, row) in table.iter().enumerate() {
            for r in [0usize, 1, 7, 31, 255, 599] {
                let (formula, enclosure) = match scheme {
                    Scheme::Alibi(rule) => (
                        common::alibi_bias_f64(common::slopes_f64(p.heads, rule)[h], r),
                        common::alibi_bias(
                            &common::slope_exponents(p.heads, rule)[h],
                            r as i64,
                            128,
                        ),
                    ),
                    _ => {
                        let c = common::compression_ratio(h + 1, p.heads);
                        (
                            common::sandwich_bias_f64(r, &freqs, c.to_f64()),
                            common::sandwich_bias(r as i64, &freqs_i, &c, 128),
                        )
                    }
                };
                assert_eq!(row[r], formula, "{scheme:?} h = {h} r = {r}");
                let x = row[r];
                assert!(
                    enclosure.lo_f64() - 1e-12 <= x && x <= enclosure.hi_f64() + 1e-12,
                    "{scheme:?} h = {h} r = {r}: {x} outside [{}, {}]",
                    enclosure.lo_f64(),
                    enclosure.hi_f64()
                );
            }
        }
        if let Scheme::Alibi(_) = scheme {
            // H = 8: slopes 2^−1 … 2^−8 exactly, so −m·r is exact in f64
            assert_eq!(table[0][3], -1.5);
            assert_eq!(table[7][512], -2.0);
        }
    }
}

#[test]
fn fused_attention_equals_the_composed_candle_operations() {
    // softmax(QKᵀ/√d + bias, causal and window mask)·V written with candle's own operations,
    // against the one-operation kernel on the fused projection [B, L, 3·H·d], for bias by
    // head, windows and the last rows only
    use attncheck_lm::candle_core::D;
    let (b, h, l, d) = (2usize, 3usize, 9usize, 4usize);
    let mut rng = SplitMix64(17);
    let v: Vec<f64> = (0..b * l * 3 * h * d).map(|_| rng.normal()).collect();
    let qkv = Tensor::from_vec(v, (b, l, 3 * h * d), &attncheck_lm::Device::Cpu).unwrap();
    let part = |k: usize| -> Tensor {
        qkv.narrow(2, k * h * d, h * d)
            .unwrap()
            .reshape((b, l, h, d))
            .unwrap()
            .transpose(1, 2)
            .unwrap()
            .contiguous()
            .unwrap()
    };
    let (q, k, v) = (part(0), part(1), part(2));
    let bias: Vec<Vec<f64>> = (0..h)
        .map(|hh| (0..l).map(|r| -0.3 * (hh + 1) as f64 * r as f64).collect())
        .collect();
    for limit in [usize::MAX, 2, 0] {
        let scale = 0.5;
        let mut mask = vec![f64::NEG_INFINITY; h * l * l];
        for hh in 0..h {
            for i in 0..l {
                for j in 0..=i {
                    if i - j <= limit {
                        mask[(hh * l + i) * l + j] = bias[hh][i - j];
                    }
                }
            }
        }
        let mask = Tensor::from_vec(mask, (h, l, l), &attncheck_lm::Device::Cpu).unwrap();
        let s = (q.matmul(&k.t().unwrap()).unwrap() * scale)
            .unwrap()
            .broadcast_add(&mask)
            .unwrap();
        let want = attncheck_lm::candle_nn::ops::softmax(&s, D::Minus1)
            .unwrap()
            .matmul(&v)
            .unwrap();
        let op = attncheck_lm::attn::Attention {
            heads: h,
            bias: std::sync::Arc::new(bias.clone()),
            limit,
            scale,
            last: l,
            rope: None,
        };
        let heads = |t: Tensor, n: usize| -> Tensor {
            t.reshape((b, n, h, d)).unwrap().transpose(1, 2).unwrap()
        };
        let got = heads(attncheck_lm::attn::attention(&qkv, op.clone()).unwrap(), l);
        let diff = (want.clone() - got)
            .unwrap()
            .abs()
            .unwrap()
            .max_all()
            .unwrap()
            .to_scalar::<f64>()
            .unwrap();
        assert!(diff < 1e-12, "limit {limit}: {diff}");
        // queries for the last 3 positions only: the last 3 rows of the full result
        let op3 = attncheck_lm::attn::Attention { last: 3, ..op };
        let got3 = heads(attncheck_lm::attn::attention(&qkv, op3).unwrap(), 3);
        let diff = (want.narrow(2, l - 3, 3).unwrap() - got3)
            .unwrap()
            .abs()
            .unwrap()
            .max_all()
            .unwrap()
            .to_scalar::<f64>()
            .unwrap();
        assert!(diff < 1e-12, "limit {limit}, last rows: {diff}");
    }
}

#[test]
fn last_positions_only_give_the_full_pass_logits() {
    let data = text(200, 13);
    for (name, pos) in schemes_tiny() {
        let model = Model::new(tiny(pos, DType::F64), 14).unwrap();
        let x = tokens(&[&data[0..20], &data[50..70]]).unwrap();
        let full = model.forward(&x, Inference::default()).unwrap();
        let last = model
            .forward(
                &x,
                Inference {
                    last: Some(5),
                    ..Inference::default()
                },
            )
            .unwrap();
        let diff = (full.narrow(1, 15, 5).unwrap() - last)
            .unwrap()
            .abs()
            .unwrap()
            .max_all()
            .unwrap()
            .to_scalar::<f64>()
            .unwrap();
        assert!(diff < 1e-12, "{name}: {diff}");
    }
}

#[test]
fn checkpoint_save_and_load_give_the_same_perplexity() {
    let data = text(5000, 8);
    let cfg = tiny(Position::Rope(10000.0), DType::F32);
    let model = Model::new(cfg.clone(), 3).unwrap();
    let tc = TrainConfig {
        steps: 20,
        batch: 4,
        length: 16,
        lr: 3e-3,
        warmup: 2,
        clip: 1.0,
        weight_decay: 0.0,
        seed: 9,
    };
    train(&model, &data, &tc, &mut |_| {}).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    model.save(&path).unwrap();
    let back = Model::load(cfg, &path).unwrap();
    let s = Sliding {
        stride: 8,
        max_length: 32,
        targets: 256,
    };
    for l in [16, 32] {
        let a = sliding_nll(&model.frozen(), &data, l, s, Inference::default(), 1024).unwrap();
        let b = sliding_nll(&back.frozen(), &data, l, s, Inference::default(), 1024).unwrap();
        assert_eq!(a.to_bits(), b.to_bits(), "L = {l}: {a} vs {b}");
    }
}

#[test]
fn training_is_bit_identical_in_one_and_two_thread_pools() {
    let data = text(5000, 9);
    let run = |threads: usize| -> Vec<f32> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let model = Model::new(tiny(Position::Window(3), DType::F32), 4).unwrap();
            let tc = TrainConfig {
                steps: 10,
                batch: 4,
                length: 16,
                lr: 3e-3,
                warmup: 2,
                clip: 1.0,
                weight_decay: 0.0,
                seed: 2,
            };
            train(&model, &data, &tc, &mut |_| {}).unwrap();
            model
                .weights()
                .values()
                .flat_map(|t| t.flatten_all().unwrap().to_vec1::<f32>().unwrap())
                .collect()
        })
    };
    let (a, b) = (run(1), run(2));
    assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
}

#[test]
fn truncation_to_the_whole_context_changes_nothing() {
    let data = text(3000, 10);
    let model = Model::new(tiny(Position::Rope(10000.0), DType::F64), 5).unwrap();
    let s = Sliding {
        stride: 8,
        max_length: 32,
        targets: 64,
    };
    let a = sliding_nll(&model, &data, 32, s, Inference::default(), 512).unwrap();
    let trunc = |w: usize| Inference {
        truncate: Some(w),
        ..Inference::default()
    };
    let b = sliding_nll(&model, &data, 32, s, trunc(32), 512).unwrap();
    let c = sliding_nll(&model, &data, 32, s, trunc(4), 512).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn a_missing_corpus_package_is_inconclusive_with_the_reason() {
    let run = run_edited(
        ID,
        r#"{ name = "anyhow", version = "1.0.105" }"#,
        r#"{ name = "anyhow", version = "0.0.0-missing" }"#,
    );
    assert_eq!(verdict(&run), Verdict::Inconclusive);
    let reason = run.report.reason.clone().unwrap_or_default();
    assert!(
        reason.contains("anyhow-0.0.0-missing not found"),
        "{reason}"
    );
}

#[test]
fn a_malformed_criterion_names_file_line_and_field() {
    let e = edited_err(
        ID,
        "extrapolation_ratio = 1.05",
        "extrapolation_ratio = 0.9",
    );
    assert!(e.contains("trained-model-claims.toml:"), "{e}");
    assert!(e.contains("criteria.extrapolation_ratio"), "{e}");
    let e = edited_err(ID, "truncation_length = 16", "truncation_length = 3");
    assert!(
        e.contains("criteria.truncation_length: must be one of eval_multiples"),
        "{e}"
    );
}

#[test]
fn quick_profile_gives_one_verdict_per_finding() {
    let run = run_quick(ID);
    let parts: Vec<String> = Verdict::by_part(&run.report.checks)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    for part in [
        "setup: biases and controls",
        "ALiBi extrapolates",
        "ALiBi uses no tokens beyond L_tr",
        "windowed attention extrapolates iff layers·(w − 1) ≤ L_tr",
        "Sandwich uses tokens beyond L_tr and extrapolates",
        "efficient windowed inference",
    ] {
        assert!(
            parts.iter().any(|p| p == part),
            "missing part {part}: {parts:?}"
        );
    }
    assert!(run
        .report
        .checks
        .iter()
        .all(|c| c.kind == attncheck::verdict::CheckKind::Observed));
    assert!(run.svgs.len() >= 3);
}

/// The bias check listed r = 511 twice: the last position L_ex − 1 was appended even
/// when the fixed list already held it. Each distance is now listed once, the last
/// one included.
#[test]
fn bias_check_lists_each_distance_once() {
    let run = run_quick(ID);
    let names: Vec<&str> = run
        .report
        .checks
        .iter()
        .map(|c| c.name.as_str())
        .filter(|n| n.contains("the model's f64 bias"))
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    for n in names {
        let list = n.split("r ∈ {").nth(1).and_then(|s| s.split('}').next());
        let rs: Vec<&str> = list.expect("r list").split(", ").collect();
        let mut once = rs.clone();
        once.dedup();
        assert_eq!(rs, once, "{n}");
        assert_eq!(rs.last(), Some(&"511"), "{n}");
    }
}
