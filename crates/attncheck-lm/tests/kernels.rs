//! The fused kernels against candle's composed operations and against their f64 versions,
//! and the determinism of training (same bytes twice, and under any thread count).

use attncheck_lm::attn::{attention, Attention};
use attncheck_lm::candle_core::D;
use attncheck_lm::model::{mean_nll, Config, Model, Position};
use attncheck_lm::train::{train, TrainConfig};
use attncheck_lm::{DType, Device, SplitMix64, Tensor};
use std::sync::Arc;

fn rand(n: usize, seed: u64, shape: &[usize]) -> Tensor {
    // values exactly representable in f32, so the f32 and f64 operations see the same inputs
    let mut rng = SplitMix64(seed);
    let v: Vec<f64> = (0..n).map(|_| rng.normal() as f32 as f64).collect();
    Tensor::from_vec(v, shape, &Device::Cpu).unwrap()
}

fn max_diff(a: &Tensor, b: &Tensor) -> f64 {
    (a.to_dtype(DType::F64).unwrap() - b.to_dtype(DType::F64).unwrap())
        .unwrap()
        .abs()
        .unwrap()
        .max_all()
        .unwrap()
        .to_scalar::<f64>()
        .unwrap()
}

/// γ_n = n·u/(1 − n·u), the classic bound on the relative error of a sum of n products.
fn gamma(n: usize, u: f64) -> f64 {
    n as f64 * u / (1.0 - n as f64 * u)
}

#[test]
fn f32_attention_is_within_the_derived_bound_of_the_f64_reference() {
    // The bound, per output entry o = Σ_j p_j v_j of query a, from the standard model
    // fl(x ∘ y) = (x ∘ y)(1 + δ), |δ| ≤ u (u = 2⁻²⁴ in f32), inputs exact in f32 (so both
    // operations read the same numbers), scale = 1/2 (exact):
    // - each logit s_j = scale·q·k_j + b(a − j): the d-term dot product (any order, with or
    //   without FMA) errs by ≤ γ_d·Σ_t |q_t k_tj|, the bias rounded to f32 by ≤ u|b|, and the
    //   addition by ≤ u·|ŝ_j|; E is the largest of these over the row;
    // - t_j = ŝ_j − max ŝ errs by ≤ 2E plus its own rounding u|t_j|, and e^t is computed with
    //   relative error ≤ 32u (exp_nonpos_f32's stated bound), so each ê_j = e^{t_j}(1 + η_j),
    //   |η_j| ≤ η = e^{2E + u·max|t|}(1 + 32u) − 1;
    // - Ẑ = Σ ê_j in any order carries γ_w (w visible keys), and p̂_j = ê_j/Ẑ one more u:
    //   p̂_j = p_j(1 + ρ_j), |ρ_j| ≤ ρ = (1 + η)(1 + u)/((1 − η)(1 − γ_w)) − 1;
    // - ô = Σ p̂_j v_j by gemm errs by γ_w·Σ p̂_j|v_j|.
    // So |ô − o| ≤ (ρ + γ_w(1 + ρ))·Σ_j p_j|v_j|. The f64 reference has the same bound with
    // u = 2⁻⁵³ and e^x within 2 ulp; the test allows the sum of the two.
    let (b, h, l, d) = (2usize, 3usize, 70usize, 8usize);
    let qkv64 = rand(b * l * 3 * h * d, 29, &[b, l, 3 * h * d]);
    let qkv32 = qkv64.to_dtype(DType::F32).unwrap();
    let bias: Vec<Vec<f64>> = (0..h)
        .map(|hh| {
            (0..l)
                .map(|r| -0.37 * (hh + 1) as f64 * r as f64 / 8.0)
                .collect()
        })
        .collect();
    let x = qkv64.to_vec3::<f64>().unwrap();
    for limit in [usize::MAX, 5] {
        let op = Attention {
            heads: h,
            bias: Arc::new(bias.clone()),
            limit,
            scale: 0.5,
            last: l,
            rope: None,
        };
        let o64 = attention(&qkv64, op.clone())
            .unwrap()
            .to_vec3::<f64>()
            .unwrap();
        let o32 = attention(&qkv32, op).unwrap().to_vec3::<f32>().unwrap();
        let bound_for = |u: f64, exp_rel: f64, bb: usize, hh: usize, a: usize| -> f64 {
            let lo = a.saturating_sub(limit);
            let w = a + 1 - lo;
            let (mut e, mut s) = (0.0f64, Vec::new());
            for j in lo..=a {
                let (mut dot, mut abs) = (0.0, 0.0);
                for t in 0..d {
                    let (qv, kv) = (x[bb][a][hh * d + t], x[bb][j][h * d + hh * d + t]);
                    dot += qv * kv;
                    abs += (qv * kv).abs();
                }
                let sj = 0.5 * dot + bias[hh][a - j];
                let ej = 0.5 * gamma(d, u) * abs + u * bias[hh][a - j].abs() + u * sj.abs();
                e = e.max(ej * (1.0 + 4.0 * u));
                s.push(sj);
            }
            let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let tmax = s.iter().map(|x| (m - x).abs()).fold(0.0, f64::max) + 2.0 * e;
            let eta = (2.0 * e + u * tmax).exp() * (1.0 + exp_rel) - 1.0;
            let rho = (1.0 + eta) * (1.0 + u) / ((1.0 - eta) * (1.0 - gamma(w, u))) - 1.0;
            let z: f64 = s.iter().map(|x| (x - m).exp()).sum();
            let mut pv = vec![0.0; d];
            for (jj, sj) in s.iter().enumerate() {
                let p = (sj - m).exp() / z;
                for (t, acc) in pv.iter_mut().enumerate() {
                    *acc += p * x[bb][lo + jj][2 * h * d + hh * d + t].abs();
                }
            }
            let k = rho + gamma(w, u) * (1.0 + rho);
            pv.iter().cloned().fold(0.0, f64::max) * k
        };
        let (u32_, u64_) = (f64::powi(2.0, -24), f64::powi(2.0, -53));
        let mut worst = 0.0f64;
        for bb in 0..b {
            for a in 0..l {
                for hh in 0..h {
                    let bound = bound_for(u32_, 32.0 * u32_, bb, hh, a)
                        + bound_for(u64_, 2.0 * u64_, bb, hh, a);
                    for t in 0..d {
                        let c = hh * d + t;
                        let err = (o32[bb][a][c] as f64 - o64[bb][a][c]).abs();
                        assert!(
                            err <= bound,
                            "limit {limit}, b {bb}, a {a}, h {hh}, t {t}: |{} − {}| = {err} > {bound}",
                            o32[bb][a][c],
                            o64[bb][a][c]
                        );
                        worst = worst.max(err / bound);
                    }
                }
            }
        }
        // the bound is not vacuous: errors are a visible fraction of it
        assert!(worst > 1e-3, "limit {limit}: largest error/bound {worst}");
    }
}

#[test]
fn f32_attention_gradients_follow_the_f64_ones() {
    // the backward pass in f32 against f64 on the same inputs: a relative agreement at the
    // level of f32 rounding amplified by the softmax (a loose check; the f64 gradients are
    // checked against finite differences in tests/it/trained_models.rs)
    let (b, h, l, d) = (1usize, 2usize, 150usize, 4usize);
    let qkv64 = rand(b * l * 3 * h * d, 31, &[b, l, 3 * h * d]);
    let g64 = rand(b * l * h * d, 32, &[b, l, h * d]);
    let op = Attention {
        heads: h,
        bias: Arc::new(vec![(0..l).map(|r| -0.1 * r as f64).collect()]),
        limit: usize::MAX,
        scale: 0.5,
        last: l,
        rope: None,
    };
    let grad = |dt: DType| -> Tensor {
        let v = attncheck_lm::Var::from_tensor(&qkv64.to_dtype(dt).unwrap()).unwrap();
        let o = attention(v.as_tensor(), op.clone()).unwrap();
        let loss = (o * g64.to_dtype(dt).unwrap()).unwrap().sum_all().unwrap();
        loss.backward().unwrap().get(v.as_tensor()).unwrap().clone()
    };
    let (a, c) = (grad(DType::F64), grad(DType::F32));
    let scale = a
        .abs()
        .unwrap()
        .max_all()
        .unwrap()
        .to_scalar::<f64>()
        .unwrap();
    let diff = max_diff(&a, &c);
    assert!(diff <= 1e-4 * scale, "{diff} against max {scale}");
}

#[test]
fn fused_layer_norm_linear_and_loss_equal_candle_operations() {
    use attncheck_lm::mm::linear;
    use attncheck_lm::ops::LayerNorm;
    let (n, d, m) = (13usize, 24usize, 10usize);
    let x = rand(n * d, 3, &[n, d]);
    let w = rand(d, 4, &[d]);
    let bb = rand(d, 5, &[d]);
    let got = x.apply_op3(&w, &bb, LayerNorm { eps: 1e-5 }).unwrap();
    let mean = x.mean_keepdim(D::Minus1).unwrap();
    let xc = x.broadcast_sub(&mean).unwrap();
    let var = xc.sqr().unwrap().mean_keepdim(D::Minus1).unwrap();
    let want = xc
        .broadcast_div(&(var + 1e-5).unwrap().sqrt().unwrap())
        .unwrap()
        .broadcast_mul(&w)
        .unwrap()
        .broadcast_add(&bb)
        .unwrap();
    assert!(max_diff(&got, &want) < 1e-12);

    let wl = rand(d * m, 6, &[d, m]);
    let bl = rand(m, 7, &[m]);
    for relu in [false, true] {
        let got = linear(&x, &wl, &bl, relu).unwrap();
        let mut want = x.matmul(&wl).unwrap().broadcast_add(&bl).unwrap();
        if relu {
            want = want.relu().unwrap();
        }
        assert!(max_diff(&got, &want) < 1e-12, "relu {relu}");
    }

    let logits = rand(2 * 7 * 256, 8, &[2, 7, 256]);
    let mut rng = SplitMix64(9);
    let t: Vec<u32> = (0..14).map(|_| rng.below(256) as u32).collect();
    let t = Tensor::from_vec(t, (2, 7), &Device::Cpu).unwrap();
    let got = mean_nll(&logits, &t).unwrap();
    let want = attncheck_lm::candle_nn::loss::cross_entropy(
        &logits.reshape((14, 256)).unwrap(),
        &t.reshape(14).unwrap(),
    )
    .unwrap();
    assert!(max_diff(&got, &want) < 1e-12);
}

fn tiny_run(seed: u64) -> (Vec<u32>, Vec<u64>) {
    let mut rng = SplitMix64(seed);
    let data: Vec<u8> = (0..4000).map(|_| b'a' + rng.below(7) as u8).collect();
    let mut out = Vec::new();
    let mut losses = Vec::new();
    for position in [
        Position::Bias(Arc::new(|h, r| -((h + 1) as f64) * r as f64 / 16.0)),
        Position::Rope(10000.0),
        Position::Window(5),
        Position::Sinusoidal(vec![1.0, 0.1, 0.01, 0.001, 0.0001, 0.00001, 1e-6, 1e-7]),
    ] {
        let cfg = Config {
            hidden: 16,
            layers: 2,
            heads: 2,
            position,
            dtype: DType::F32,
        };
        let model = Model::new(cfg, 4).unwrap();
        let tc = TrainConfig {
            steps: 8,
            batch: 3,
            length: 70,
            lr: 3e-3,
            warmup: 2,
            clip: 1.0,
            weight_decay: 0.01,
            seed: 2,
        };
        let log = train(&model, &data, &tc, &mut |_| {}).unwrap();
        losses.extend(log.loss_curve.iter().map(|x| x.to_bits()));
        for t in model.weights().values() {
            out.extend(
                t.flatten_all()
                    .unwrap()
                    .to_vec1::<f32>()
                    .unwrap()
                    .iter()
                    .map(|x| x.to_bits()),
            );
        }
    }
    (out, losses)
}

#[test]
fn training_twice_gives_the_same_bytes() {
    assert_eq!(tiny_run(1), tiny_run(1));
}

#[test]
fn training_gives_the_same_bytes_under_any_thread_count() {
    // CANDLE_NUM_THREADS and RAYON_NUM_THREADS are read by candle when it runs an
    // operation, so each setting runs in a child process (this test binary, re-entered)
    const CHILD: &str = "ATTNCHECK_LM_TRAIN_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let (w, l) = tiny_run(1);
        let h = w
            .iter()
            .map(|&x| x as u64)
            .chain(l)
            .fold(0xCBF2_9CE4_8422_2325u64, |h, x| {
                (h ^ x).wrapping_mul(0x0000_0100_0000_01B3)
            });
        println!("weights-hash {h:016x}");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let run = |threads: &str| -> String {
        let out = std::process::Command::new(&exe)
            .args([
                "--exact",
                "training_gives_the_same_bytes_under_any_thread_count",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .env("CANDLE_NUM_THREADS", threads)
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .unwrap();
        let s = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.status.success(), "{s}");
        // the harness may print "test … ... " before the line
        let at = s
            .find("weights-hash ")
            .unwrap_or_else(|| panic!("no hash in {s}"));
        s[at..]
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    assert_eq!(one, run("3"));
}
