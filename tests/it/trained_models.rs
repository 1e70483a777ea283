//! positional/trained-model-claims: the candle models and the measurements behind its
//! verdicts. Each test pins something that would make a measurement wrong.

use crate::util::{bin, edited_err, run_edited, run_quick, verdict};
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
    let spec = attncheck::claims::load_spec(&crate::util::spec_path(ID)).unwrap();
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
            Position::Bias(
                tmc::bias_fn(Scheme::Alibi(SlopeRule::Paper), &p2)
                    .unwrap()
                    .to_fn(),
            ),
        ),
        (
            "sandwich",
            Position::Bias(tmc::bias_fn(Scheme::Sandwich, &p2).unwrap().to_fn()),
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
    let parts: Vec<String> = Verdict::by_part(&run.report.checks, run.report.rigour, None)
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

// ---------------------------------------------------------------------------------------
// The L_tr scan (the full profile): jobs, shards, stored weights
// ---------------------------------------------------------------------------------------

/// The committed spec with its full profile (the scan) replaced by a tiny one: two training
/// lengths, one layer of hidden 16, one seed, a few steps, so that its 10 jobs (5 schemes ×
/// 2 lengths) train in seconds. `extra` is appended to `[profiles.full]`.
fn tiny_scan_spec(extra: &str) -> String {
    let t = crate::util::spec_text(ID);
    let a = t.find("[profiles.full]").expect("a full profile");
    let b = t.find("[[params.fixture]]").expect("fixtures");
    let tiny = format!(
        r#"[profiles.full]
layers = 1
hidden = 16
seeds = [1]
lr = 3e-3
rf_sequences = 4
bootstrap = 20
{extra}
[profiles.full.criteria]
truncation_length = 4

[profiles.full.scan]
validation_points = 2
validation_bytes = 32
loss_fall_tail = 0.25

[profiles.full.scan.criteria]
checkpoints = [50, 75]
alibi_rf_from = 2
trend_multiple = 8
prediction_epsilon = "1/100"

[[profiles.full.scan.lengths]]
train_length = 8
windows = [3]
steps = 4
batch = 2
warmup = 1
eval_multiples = [1, 2, 4, 8]
eval_stride = 4
eval_targets = 16
eval_batch_tokens = 256

[[profiles.full.scan.lengths]]
train_length = 16
windows = [5]
steps = 4
batch = 2
warmup = 1
eval_multiples = [1, 2, 4, 8]
eval_stride = 8
eval_targets = 16
eval_batch_tokens = 256

"#
    );
    format!("{}{tiny}{}", &t[..a], &t[b..])
}

/// A scratch project holding `spec` as the claim's spec.
fn scan_project(spec: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let th = d.path().join("theorems/positional");
    std::fs::create_dir_all(&th).unwrap();
    std::fs::write(th.join("trained-model-claims.toml"), spec).unwrap();
    d
}

fn run_ok(dir: &std::path::Path, args: &[&str]) {
    let o = crate::util::run_in(dir, args);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        crate::util::output_text(&o)
    );
}

/// `run ID --profile full --shard i/n --out OUT` in `dir`, for every i.
fn run_shards(dir: &std::path::Path, n: usize, out: &str) {
    for i in 1..=n {
        let shard = format!("{i}/{n}");
        run_ok(
            dir,
            &[
                "run",
                ID,
                "--profile",
                "full",
                "--shard",
                &shard,
                "--out",
                out,
            ],
        );
    }
}

/// Asserts that every report file in `whole` is in `merged`, byte for byte; how many.
fn same_reports(whole: &std::path::Path, merged: &std::path::Path) -> usize {
    let mut compared = 0;
    for f in std::fs::read_dir(whole).unwrap() {
        let f = f.unwrap().path();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            std::fs::read(&f).unwrap() == std::fs::read(merged.join(&name)).unwrap_or_default(),
            "{name} differs between the unsharded and the merged run"
        );
        compared += 1;
    }
    compared
}

fn shard_file(dir: &std::path::Path, i: usize, n: usize) -> std::path::PathBuf {
    dir.join(format!(
        "positional/trained-model-claims.shard-{i}-of-{n}.json"
    ))
}

#[test]
fn the_scan_has_one_shard_per_scheme_length_and_seed_and_merges_to_the_unsharded_report() {
    let spec = tiny_scan_spec("");
    let p: tmc::Params = Spec::parse(&crate::util::spec_path(ID), &spec)
        .unwrap()
        .params(Profile::Full)
        .unwrap();
    let jobs = tmc::jobs(&p);
    assert_eq!(jobs.len(), 10, "{jobs:?}");
    let n = jobs.len();
    let d = scan_project(&spec);
    run_ok(
        d.path(),
        &["run", ID, "--profile", "full", "--out", "whole"],
    );
    for i in 1..=n {
        run_ok(
            d.path(),
            &[
                "run",
                ID,
                "--profile",
                "full",
                "--shard",
                &format!("{i}/{n}"),
                "--threads",
                "1",
                "--out",
                "shards",
            ],
        );
        // shard i holds exactly job i − 1, and it succeeded
        let f: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(shard_file(&d.path().join("shards"), i, n)).unwrap(),
        )
        .unwrap();
        let res = f["record"]["results"].as_object().unwrap();
        assert_eq!(
            res.len(),
            1,
            "shard {i}: {:?}",
            res.keys().collect::<Vec<_>>()
        );
        let (key, unit) = res.iter().next().unwrap();
        assert!(
            key.starts_with(&format!("{} #", jobs[i - 1].long_name())),
            "shard {i} holds {key}, expected {}",
            jobs[i - 1].long_name()
        );
        assert!(unit["error"].is_null(), "{key}: {}", unit["error"]);
        // the ALiBi jobs store their weights, exactly, and the logit ranges they reach; every
        // job is measured at 50% and 75% of its 4 steps too
        let r: attncheck_lm::job::JobResult =
            serde_json::from_value(unit["result"].clone()).unwrap();
        let alibi = matches!(jobs[i - 1].scheme, Scheme::Alibi(_));
        assert_eq!(r.weights.is_some(), alibi, "{key}");
        assert_eq!(r.logit_ranges.len(), if alibi { 1 } else { 0 }, "{key}");
        if let Some(w) = r.attention_weights() {
            let w = w.unwrap();
            assert!(w.is_consistent() && w.embedding.is_some(), "{key}");
        }
        assert_eq!(r.val_curve.len(), 2, "{key}");
        assert_eq!(
            r.checkpoints.iter().map(|c| c.step).collect::<Vec<_>>(),
            vec![2, 3],
            "{key}"
        );
        assert!(
            r.checkpoints.iter().all(|c| c.measured.rf.len() == 4),
            "{key}"
        );
    }
    run_ok(d.path(), &["merge", "shards", "--out", "merged"]);
    let whole = d.path().join("whole/positional");
    let compared = same_reports(&whole, &d.path().join("merged/positional"));
    // the report: JSON, Markdown, the certificate of the ALiBi models' windows, and per L_tr
    // the RF99, perplexity, validation-loss and cumulative-gradient plots
    assert_eq!(compared, 3 + 4 * 2, "{compared} files");
    let md = std::fs::read_to_string(whole.join("trained-model-claims.md")).unwrap();
    // the certified implicit windows: listed beside RF99, and `verify` rebuilds them from the
    // spec and the weights the (merged) certificate carries
    assert!(
        md.contains("Certified implicit window w_h(ε)"),
        "no window table"
    );
    let cert = d
        .path()
        .join("merged/positional/trained-model-claims.cert.json");
    let o = crate::util::run_in(d.path(), &["verify", cert.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", crate::util::output_text(&o));
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cert).unwrap()).unwrap();
    // one ALiBi model per L_tr (one seed): two obligations and one weights datum each
    assert_eq!(c["obligations"].as_array().unwrap().len(), 4);
    assert_eq!(c["data"].as_object().unwrap().len(), 2);
    for part in [
        "ALiBi uses no tokens beyond L_tr (L_tr = 8)",
        "ALiBi uses no tokens beyond L_tr (L_tr = 16)",
        "windowed attention extrapolates iff layers·(w − 1) ≤ L_tr (L_tr = 16)",
        "ALiBi's window against L_tr: the paper's explanation",
        "setup: biases, controls and stability",
    ] {
        assert!(md.contains(part), "missing part {part}");
    }
    assert!(
        md.contains("stride-1 protocol"),
        "the evaluation protocol is named"
    );
}

/// The quick profile and the scan are one presentation over a scan of any size (issue #40):
/// a scan of one length names its parts as the quick profile does (no " (L_tr = l)", no
/// explanation across lengths, plot slugs without `-L<l>`), and with one seed it has no
/// spread across seeds to hold RF99's movement against, while the conclusion's stability
/// over the checkpoints is still checked.
#[test]
fn a_scan_of_one_length_and_one_seed_shows_what_its_data_hold() {
    let spec = tiny_scan_spec("");
    let a = spec
        .find("[[profiles.full.scan.lengths]]\ntrain_length = 16")
        .expect("the tiny scan's second length");
    let b = a + spec[a..].find("\n\n").expect("its end") + 2;
    let spec = format!("{}{}", &spec[..a], &spec[b..]);
    let d = scan_project(&spec);
    run_ok(d.path(), &["run", ID, "--profile", "full", "--out", "out"]);
    let out = d.path().join("out/positional");
    let md = std::fs::read_to_string(out.join("trained-model-claims.md")).unwrap();
    let parts = md
        .lines()
        .find(|l| l.starts_with("By part:"))
        .expect("parts");
    assert_eq!(
        parts
            .trim_start_matches("By part: ")
            .split(" · ")
            .map(|p| p.split(": **").next().unwrap())
            .collect::<Vec<_>>(),
        [
            "setup: biases, controls and stability",
            "ALiBi extrapolates",
            "ALiBi uses no tokens beyond L_tr",
            "windowed attention extrapolates iff layers·(w − 1) ≤ L_tr",
            "Sandwich uses tokens beyond L_tr and extrapolates",
            "efficient windowed inference",
        ],
        "{parts}"
    );
    assert!(md.contains("the conclusion is stable: every part"), "{md}");
    assert!(!md.contains("training is long enough"), "{md}");
    assert!(!md.contains("[seed spread]"), "{md}");
    for plot in [
        "rf99",
        "perplexity",
        "validation-loss",
        "cumulative-gradient",
    ] {
        assert!(
            out.join(format!("trained-model-claims-{plot}.svg"))
                .exists(),
            "{plot}"
        );
    }
}

#[test]
fn a_scan_unit_is_the_same_bytes_when_run_twice() {
    // one job (L_tr = 8, ALiBi, seed 1: shard 1 of 10), on one thread and on two
    let d = scan_project(&tiny_scan_spec(""));
    for (out, threads) in [("a", "1"), ("b", "2")] {
        run_ok(
            d.path(),
            &[
                "run",
                ID,
                "--profile",
                "full",
                "--shard",
                "1/10",
                "--threads",
                threads,
                "--out",
                out,
            ],
        );
    }
    let a = std::fs::read(shard_file(&d.path().join("a"), 1, 10)).unwrap();
    let b = std::fs::read(shard_file(&d.path().join("b"), 1, 10)).unwrap();
    assert!(a.len() > 1000);
    assert!(a == b, "the same job gave different bytes");
}

#[test]
fn a_scan_shard_from_an_older_spec_is_refused_by_merge() {
    let d = scan_project(&tiny_scan_spec(""));
    run_shards(d.path(), 10, "shards");
    // the spec moves on (a criterion, then a size) after the shards ran
    for (from, to) in [
        ("checkpoints = [50, 75]", "checkpoints = [25, 75]"),
        (
            "eval_targets = 16\neval_batch_tokens = 256\n\n[[",
            "eval_targets = 32\neval_batch_tokens = 256\n\n[[",
        ),
    ] {
        let newer = tiny_scan_spec("").replacen(from, to, 1);
        assert_ne!(newer, tiny_scan_spec(""), "{from}");
        std::fs::write(
            d.path()
                .join("theorems/positional/trained-model-claims.toml"),
            &newer,
        )
        .unwrap();
        let o = crate::util::run_in(d.path(), &["merge", "shards", "--out", "merged"]);
        let t = crate::util::output_text(&o);
        assert_eq!(o.status.code(), Some(2), "{t}");
        assert!(t.contains("was run with other parameters"), "{t}");
        assert!(!d.path().join("merged").exists(), "wrote reports");
    }
}

/// The scan's windows are certified from the weights the shards store. When a model's
/// weights are missing (a shard edited, or written before they were kept), the window
/// search fails: the run is inconclusive with the reason and certifies nothing (no
/// certified check, no certificate), and still reports every observed check and table, as
/// before the claim was split into witness, observations and presentation.
#[test]
fn a_merged_scan_without_a_models_weights_is_inconclusive_and_certifies_nothing() {
    let d = scan_project(&tiny_scan_spec(""));
    run_shards(d.path(), 10, "shards");
    // shard 1 holds job 0: L_tr = 8, ALiBi, seed 1
    let f = shard_file(&d.path().join("shards"), 1, 10);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    let (key, unit) = v["record"]["results"]
        .as_object_mut()
        .unwrap()
        .iter_mut()
        .next()
        .unwrap();
    assert!(key.starts_with("L8 alibi-paper-s1 #"), "{key}");
    assert!(!unit["result"]["weights"].is_null(), "{key}");
    unit["result"].as_object_mut().unwrap().remove("weights");
    std::fs::write(&f, serde_json::to_string(&v).unwrap()).unwrap();
    run_ok(d.path(), &["merge", "shards", "--out", "merged"]);
    let out = d.path().join("merged/positional");
    assert!(
        !out.join("trained-model-claims.cert.json").exists(),
        "a certificate without the weights"
    );
    let j: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("trained-model-claims.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(j["verdict"], "inconclusive");
    assert_eq!(
        j["reason"], "L8 alibi-paper-s1: no stored weights",
        "the window search's reason, not the statement's"
    );
    let checks = j["checks"].as_array().unwrap();
    assert!(checks.len() > 10, "{} checks", checks.len());
    assert!(
        checks.iter().all(|c| c["kind"] == "observed"),
        "a certified check without the weights"
    );
    let md = std::fs::read_to_string(out.join("trained-model-claims.md")).unwrap();
    assert!(
        md.contains("Certified implicit window w_h(ε)"),
        "no window table"
    );
    assert!(md.contains("ALiBi uses no tokens beyond L_tr (L_tr = 16)"));
}

/// Pins are written once the scan's weights exist, so they cannot be part of a shard's
/// identity: a `pins` table added to the spec after the shards ran leaves them mergeable.
/// The merged run then binds the certified weights to the pins: the right pins give the
/// same report and a certificate that verifies against the pinned spec; one wrong pin
/// leaves the run inconclusive with the reason, with no certified check and no certificate.
#[test]
fn pins_written_after_the_scan_bind_its_weights_without_orphaning_its_shards() {
    let d = scan_project(&tiny_scan_spec(""));
    run_shards(d.path(), 10, "shards");
    run_ok(d.path(), &["merge", "shards", "--out", "unpinned"]);
    let out = |dir: &str, f: &str| d.path().join(dir).join("positional").join(f);
    let cert: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out("unpinned", "trained-model-claims.cert.json")).unwrap(),
    )
    .unwrap();
    let pins: Vec<(String, String)> = cert["data"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, e)| (k.clone(), e["sha256"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(pins.len(), 2, "one ALiBi model per L_tr");
    let write_pins = |pins: &[(String, String)]| {
        let mut t = tiny_scan_spec("");
        t.push_str("\n[profiles.full.scan.pins]\n");
        for (k, v) in pins {
            t.push_str(&format!("\"{k}\" = \"{v}\"\n"));
        }
        std::fs::write(
            d.path()
                .join("theorems/positional/trained-model-claims.toml"),
            t,
        )
        .unwrap();
    };
    write_pins(&pins);
    run_ok(d.path(), &["merge", "shards", "--out", "pinned"]);
    // the same certificate (the report differs only in the parameters it lists)
    let f = "trained-model-claims.cert.json";
    let a = std::fs::read_to_string(out("unpinned", f)).unwrap();
    let b = std::fs::read_to_string(out("pinned", f)).unwrap();
    assert!(a == b, "the pins changed the certificate");
    let c = out("pinned", "trained-model-claims.cert.json");
    let o = crate::util::run_in(d.path(), &["verify", c.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", crate::util::output_text(&o));
    // one pin wrong: the run certifies nothing and says why
    let mut wrong = pins.clone();
    wrong[1].1 = "f".repeat(64);
    write_pins(&wrong);
    run_ok(d.path(), &["merge", "shards", "--out", "wrong"]);
    assert!(!out("wrong", "trained-model-claims.cert.json").exists());
    let j: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out("wrong", "trained-model-claims.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(j["verdict"], "inconclusive");
    let why = j["reason"].as_str().unwrap();
    assert!(
        why.contains("the spec pins") && why.contains(&wrong[1].0),
        "{why}"
    );
    assert!(j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["kind"] == "observed"));
}

/// The scan spans sessions, so its shards land a few at a time. A partial set is never
/// merged into a report that guesses the missing jobs: `merge` names the first missing
/// shard, exits 2 and writes nothing, and `bench/sweeps/merge-stored.sh` (like
/// `shards::the_committed_full_report_is_what_the_stored_shards_merge_to`) leaves an
/// incomplete sweep out, so no scan report is committed under `reports/full/` before all
/// 72 shards are stored.
#[test]
fn a_partial_scan_is_refused_by_merge_naming_the_missing_shard() {
    let d = scan_project(&tiny_scan_spec(""));
    for i in (1..=10).filter(|&i| i != 4) {
        run_ok(
            d.path(),
            &[
                "run",
                ID,
                "--profile",
                "full",
                "--shard",
                &format!("{i}/10"),
                "--out",
                "shards",
            ],
        );
    }
    let o = crate::util::run_in(d.path(), &["merge", "shards", "--out", "merged"]);
    let t = crate::util::output_text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("shard 4 of 10 is missing"), "{t}");
    assert!(!t.contains("panicked"), "{t}");
    assert!(!d.path().join("merged").exists(), "wrote reports");
}

/// The convergence table states the scored validation bytes, so they must be a whole number
/// of windows at every L_tr (validation_bytes / L_tr windows of L_tr + 1 bytes).
#[test]
fn validation_bytes_that_are_not_a_multiple_of_every_training_length_are_refused() {
    let t = crate::util::spec_text(ID);
    assert_eq!(t.matches("validation_bytes = 16384").count(), 1);
    let bad = t.replacen("validation_bytes = 16384", "validation_bytes = 16400", 1);
    let e = attncheck::claims::shape::resolve::<tmc::Claim>(
        &Spec::parse(&crate::util::spec_path(ID), &bad).unwrap(),
        Profile::Full,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("trained-model-claims.toml:"), "{e}");
    assert!(e.contains("scan.validation_bytes"), "{e}");
    assert!(e.contains("multiple of every training length"), "{e}");
}

#[test]
fn stored_attention_weights_are_the_models_exact_f32_values() {
    let mut p = quick_params();
    p.hidden = 16;
    let model = Model::new(
        tmc::model_config(Scheme::Alibi(SlopeRule::Paper), &p, DType::F32),
        5,
    )
    .unwrap();
    let w = attncheck_lm::job::AttentionWeights::of(&model).unwrap();
    assert!(w.is_consistent());
    assert_eq!((w.hidden, w.heads, w.layers.len()), (16, 8, p.layers));
    // the embedding and the layer norms' ε, exactly
    let emb = model.weights()["emb"].to_vec2::<f32>().unwrap().concat();
    assert_eq!(
        w.embedding.as_deref(),
        Some(attncheck_lm::job::to_hex(&emb).as_str())
    );
    assert_eq!(
        w.ln_eps.as_deref(),
        Some(attncheck_lm::job::to_hex(&[1e-5f32]).as_str())
    );
    // the stored weights hold every tensor exactly, and give the same attention weights
    let stored = attncheck_lm::job::StoredWeights::of(&model).unwrap();
    assert_eq!(stored.tensors.len(), model.weights().len());
    assert_eq!(
        attncheck_lm::job::AttentionWeights::from_stored(&stored).unwrap(),
        w
    );
    // the kernel reads them, and layer 0's certified byte-pair range contains every
    // content-logit range the model's own f32 forward pass reaches (up to its rounding)
    let d = tmc::weights_datum(&w).unwrap();
    let data: attncheck::kernel::expr::Data = [("W".to_string(), d)].into_iter().collect();
    let xs: Vec<u8> = text(4 * 64, 9);
    let rows: Vec<&[u8]> = xs.chunks(64).collect();
    let seen = model
        .content_logit_ranges(&attncheck_lm::model::tokens(&rows).unwrap())
        .unwrap();
    for (h, &seen) in seen[0].iter().enumerate() {
        let b = attncheck::kernel::expr::eval_with(
            &format!("(attn-byte-logit-range W {h})"),
            64,
            &data,
        )
        .unwrap();
        let deep =
            attncheck::kernel::expr::eval_with(&format!("(attn-logit-range W 0 {h})"), 64, &data)
                .unwrap();
        assert!(
            seen <= b.hi_f64() * (1.0 + 1e-4) + 1e-6,
            "head {h}: {} > {}",
            seen,
            b.hi_f64()
        );
        assert!(
            b.hi_f64() <= deep.hi_f64(),
            "head {h}: the exact range exceeds the norm bound"
        );
    }
    let qkv = model.weights()["l1.qkv.w"].to_vec2::<f32>().unwrap();
    let [gain, _, wq, bq, wk, _] = w.layers[1].parts().unwrap();
    assert_eq!(gain, vec![1.0f32; 16]);
    assert_eq!(bq, vec![0.0f32; 16]);
    // W_Q is the first hidden columns of the qkv projection, W_K the next, row-major
    for i in 0..16 {
        for j in 0..16 {
            assert_eq!(wq[i * 16 + j].to_bits(), qkv[i][j].to_bits());
            assert_eq!(wk[i * 16 + j].to_bits(), qkv[i][16 + j].to_bits());
        }
    }
    // hex round trip of awkward values; a changed digit breaks the hash
    let v = [0.0f32, -0.0, 1.5, f32::MIN_POSITIVE, 1e-45, -3.25e7];
    assert_eq!(
        attncheck_lm::job::from_hex(&attncheck_lm::job::to_hex(&v))
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect::<Vec<_>>(),
        v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!(attncheck_lm::job::from_hex("3f80000"), None);
    assert_eq!(attncheck_lm::job::from_hex("3F800000"), None);
    let mut bad = w.clone();
    let s = &mut bad.layers[0].w_k;
    let c = if s.as_bytes()[5] == b'0' { "1" } else { "0" };
    s.replace_range(5..6, c);
    assert!(!bad.is_consistent());
}

#[test]
fn scan_unit_keys_fall_one_to_a_shard() {
    let spec = attncheck::claims::load_spec(&crate::util::spec_path(ID)).unwrap();
    let p: tmc::Params = spec.params(Profile::Full).unwrap();
    let jobs = tmc::jobs(&p);
    // 8 schemes (ALiBi once at H = 8, Sandwich, sinusoidal, RoPE, four windows) × 3 L_tr × 3 seeds
    assert_eq!(jobs.len(), 72);
    let keys = tmc::unit_keys(&p, &jobs, spec.precision);
    for (k, key) in keys.iter().enumerate() {
        assert_eq!(
            attncheck::claims::shard_of(&format!("{key} @{}", spec.precision), 72),
            k as u64,
            "{key}"
        );
    }
    // by L_tr, then seed, then scheme: the first 8 shards are one seed of every scheme at 32
    assert_eq!(jobs[0].long_name(), "L32 alibi-paper-s1");
    assert_eq!(jobs[7].long_name(), "L32 window-32-s1");
    assert_eq!(jobs[71].long_name(), "L512 window-512-s3");
}

/// Regression: on a fresh machine without the corpus (`cargo fetch` not run), a shard
/// of the scan said only "has no independent units of work to shard", which sent the
/// scan's operator astray; it now says why the run stopped (exit 2, nothing written).
#[test]
fn a_shard_without_the_corpus_says_the_corpus_is_missing() {
    let home = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = bin()
        .args([
            "run",
            "positional/trained-model-claims",
            "--shard",
            "1/8",
            "--out",
        ])
        .arg(out.path())
        .env("CARGO_HOME", home.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("stopped before its units of work"), "{err}");
    assert!(err.contains("the corpus is not available"), "{err}");
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
}

/// The tiny scan with a sweep of arms trained longer (`sweeps.longer`): Sandwich at L_tr = 8
/// and ALiBi at 16, twice the scan's 4 steps (so two jobs: `--shard i/2 --sweep longer`).
fn tiny_scan_with_longer(steps: usize) -> String {
    tiny_scan_spec("").replacen(
        "[[profiles.full.scan.lengths]]",
        &format!(
            "[profiles.full.scan.sweeps.longer]\narms = [\n  {{ train_length = 8, scheme = \"sandwich\", steps = {steps} }},\n  {{ train_length = 16, scheme = \"alibi-paper\", steps = {steps} }},\n]\n\n[[profiles.full.scan.lengths]]"
        ),
        1,
    )
}

fn run_longer_shard(dir: &std::path::Path, i: usize, out: &str) {
    run_ok(
        dir,
        &[
            "run",
            ID,
            "--profile",
            "full",
            "--shard",
            &format!("{i}/2"),
            "--sweep",
            "longer",
            "--threads",
            "1",
            "--out",
            out,
        ],
    );
}

fn set_spec(dir: &std::path::Path, spec: &str) {
    std::fs::write(
        dir.join("theorems/positional/trained-model-claims.toml"),
        spec,
    )
    .unwrap();
}

fn merge_code(dir: &std::path::Path, from: &str, out: &str) -> (Option<i32>, String) {
    let o = crate::util::run_in(dir, &["merge", from, "--out", out]);
    (o.status.code(), crate::util::output_text(&o))
}

/// Issue #40's remedy for a conclusion that moves is to train the arms that moved longer,
/// after the scan's 72 shards are stored. The longer runs are a further sweep of the claim
/// (`run --shard i/N --sweep longer`, their own N): the scan's shards, run before the spec
/// had the sweep, still merge (a sweep's table is no part of the other shards' parameters),
/// the merge of both is byte for byte the unsharded run of the spec with the sweep, and
/// without the sweep's shards the report says its checks are not run (they fail, so the
/// setup part cannot hold on runs that are not there).
#[test]
fn arms_trained_longer_are_a_sweep_that_merges_with_the_scan_shards_stored_before_it() {
    let d = scan_project(&tiny_scan_spec(""));
    run_shards(d.path(), 10, "shards");
    let spec = tiny_scan_with_longer(8);
    let p: tmc::Params = Spec::parse(&crate::util::spec_path(ID), &spec)
        .unwrap()
        .params(Profile::Full)
        .unwrap();
    let more = tmc::longer_jobs(&p);
    assert_eq!(
        more.iter().map(|j| j.long_name()).collect::<Vec<_>>(),
        ["L8 sandwich-s1 (8 steps)", "L16 alibi-paper-s1 (8 steps)"]
    );
    set_spec(d.path(), &spec);
    run_ok(
        d.path(),
        &["run", ID, "--profile", "full", "--out", "whole"],
    );
    // the scan's shards alone: the sweep is absent, and said to be
    let (code, t) = merge_code(d.path(), "shards", "without");
    assert!(matches!(code, Some(0 | 1)), "{t}");
    let md = std::fs::read_to_string(d.path().join("without/positional/trained-model-claims.md"))
        .unwrap();
    assert!(
        md.contains("| **fails** | not run: the sweep's shards are not merged"),
        "{md}"
    );
    // one of the sweep's two shards: refused, naming the missing one
    run_longer_shard(d.path(), 1, "shards");
    let one = shard_file(&d.path().join("shards"), 1, 2)
        .to_string_lossy()
        .replace(".shard-", ".longer.shard-");
    let f: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&one).unwrap()).unwrap();
    assert_eq!(f["sweep"], "longer");
    let res = f["record"]["results"].as_object().unwrap();
    assert_eq!(res.len(), 1, "{res:?}");
    assert!(
        res.keys()
            .all(|k| k.starts_with("longer: L8 sandwich-s1 (8 steps) #")),
        "{res:?}"
    );
    let r: attncheck_lm::job::JobResult =
        serde_json::from_value(res.values().next().unwrap()["result"].clone()).unwrap();
    assert_eq!(
        r.checkpoints.iter().map(|c| c.step).collect::<Vec<_>>(),
        [4, 6]
    );
    let (code, t) = merge_code(d.path(), "shards", "partial");
    assert_eq!(code, Some(2), "{t}");
    assert!(t.contains("shard 2 of 2 of sweep longer is missing"), "{t}");
    assert!(!d.path().join("partial").exists());
    // both: the unsharded run's report, byte for byte
    run_longer_shard(d.path(), 2, "shards");
    let (code, t) = merge_code(d.path(), "shards", "merged");
    assert!(matches!(code, Some(0 | 1)), "{t}");
    let whole = d.path().join("whole/positional");
    assert!(same_reports(&whole, &d.path().join("merged/positional")) >= 3);
    let md = std::fs::read_to_string(whole.join("trained-model-claims.md")).unwrap();
    assert!(md.contains("L_tr = 8, sandwich: trained longer"), "{md}");
    assert!(
        md.contains("L_tr = 16, alibi-paper: trained longer"),
        "{md}"
    );
    assert!(!md.contains("not run: the sweep's shards"), "{md}");
    // the sweep's table changes: its shards are refused, the scan's are not the reason
    set_spec(d.path(), &tiny_scan_with_longer(12));
    let (code, t) = merge_code(d.path(), "shards", "changed");
    assert_eq!(code, Some(2), "{t}");
    assert!(
        t.contains(".longer.shard-") && t.contains("was run with other parameters"),
        "{t}"
    );
    assert!(!d.path().join("changed").exists());
    // a sweep's shard that no longer says which sweep it is: refused
    set_spec(d.path(), &spec);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&one).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("sweep");
    std::fs::write(&one, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let (code, t) = merge_code(d.path(), "shards", "unnamed");
    assert_eq!(code, Some(2), "{t}");
    assert!(!t.contains("panicked"), "{t}");
    assert!(!d.path().join("unnamed").exists());
}

/// `--sweep` is a shard option: without `--shard`, with a name no sweep could have, or
/// naming a sweep the spec does not set, the run is refused with exit 2 and writes nothing.
#[test]
fn a_sweep_option_without_a_shard_or_sweep_is_refused() {
    let d = scan_project(&tiny_scan_with_longer(8));
    for (args, want) in [
        (vec!["--sweep", "longer"], "--shard"),
        (vec!["--shard", "1/2", "--sweep", "Longer!"], "sweep's name"),
        (
            vec!["--shard", "1/2", "--sweep", "shorter"],
            "has no sweep `shorter`",
        ),
    ] {
        let mut a = vec!["run", ID, "--profile", "full", "--out", "out"];
        a.extend(args.iter().copied());
        let o = crate::util::run_in(d.path(), &a);
        let t = crate::util::output_text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
        assert!(t.contains(want), "{args:?}: {t}");
        assert!(!d.path().join("out").exists(), "{args:?}: wrote files");
    }
}

/// A sweep's arm must be a scheme of its training length, trained longer than the scan, and
/// listed once.
#[test]
fn a_longer_arm_outside_the_scan_is_refused_naming_the_field() {
    let alibi = "{ train_length = 16, scheme = \"alibi-paper\", steps = 8 }";
    for (from, to, field) in [
        (
            "train_length = 8, scheme",
            "train_length = 9, scheme",
            "arms[0].train_length",
        ),
        (
            "scheme = \"sandwich\"",
            "scheme = \"window-4\"",
            "arms[0].scheme",
        ),
        (
            alibi,
            "{ train_length = 16, scheme = \"alibi-paper\", steps = 4 }",
            "arms[1].steps",
        ),
        (
            alibi,
            "{ train_length = 8, scheme = \"sandwich\", steps = 12 }",
            "arms[1].scheme",
        ),
    ] {
        let spec = tiny_scan_with_longer(8).replacen(from, to, 1);
        assert_ne!(spec, tiny_scan_with_longer(8), "{field}");
        let d = scan_project(&spec);
        let o = crate::util::run_in(d.path(), &["run", ID, "--profile", "full", "--out", "out"]);
        let t = crate::util::output_text(&o);
        assert_eq!(o.status.code(), Some(2), "{field}: {t}");
        assert!(
            t.contains(&format!("scan.sweeps.longer.{field}")),
            "{field}: {t}"
        );
    }
}

/// `scan.probes` (inputs an untrusted search found, re-evaluated by the report, issue #40)
/// must name a certified model and list one input per head of every layer ≥ 1, each in
/// lower-case hex: anything else is refused with exit 2 naming the field.
#[test]
fn a_malformed_probe_is_refused_naming_the_field() {
    for (table, field) in [
        (
            "\"W_L9_alibi-paper-s1\" = []",
            "scan.probes.W_L9_alibi-paper-s1",
        ),
        // the tiny scan has one layer: no head to probe
        (
            "\"W_L8_alibi-paper-s1\" = [\"0a\"]",
            "scan.probes.W_L8_alibi-paper-s1",
        ),
    ] {
        let spec = format!(
            "{}\n[profiles.full.scan.probes]\n{table}\n",
            tiny_scan_spec("")
        );
        let d = scan_project(&spec);
        let o = crate::util::run_in(d.path(), &["run", ID, "--profile", "full", "--out", "out"]);
        let t = crate::util::output_text(&o);
        assert_eq!(o.status.code(), Some(2), "{field}: {t}");
        assert!(t.contains(field), "{field}: {t}");
    }
}

/// The certified layer-1 bound is above the range of every input the search found (issue
/// #40): a Δ̄_h below an attained range would be a wrong theorem. Read from the committed
/// full report (the table of certified windows: Δ̄_h, then the found range A and Δ̄_h/A;
/// Δ̄_h is printed rounded up, A — a certified lower bound on the range attained in exact
/// arithmetic — rounded down, Δ̄_h/A rounded up: so no slack).
#[test]
fn every_layer_one_bound_is_above_the_range_the_search_found() {
    let md = std::fs::read_to_string(
        crate::util::root().join("reports/full/positional/trained-model-claims.md"),
    )
    .unwrap();
    let mut seen = 0;
    for line in md.lines() {
        let c: Vec<&str> = line.split('|').map(str::trim).collect();
        if c.len() > 12 && c[7] == "row bound (all inputs)" {
            let bound: f64 = c[6].parse().unwrap();
            let found: f64 = c[10].parse().unwrap();
            assert!(bound >= found, "{line}");
            assert!(
                c[11].trim_end_matches('×').parse::<f64>().unwrap() >= 1.0,
                "{line}"
            );
            seen += 1;
        }
    }
    assert_eq!(seen, 72, "the 72 layer-1 heads of the 9 ALiBi models");
}
