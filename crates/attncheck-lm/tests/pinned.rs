//! The exact bytes of training and evaluation, pinned: SHA-256 of the weights and loss curve
//! after a few seeded steps, of evaluation logits (last positions, truncated attention) and
//! of a gradient with respect to the input embeddings, for each position scheme and for the
//! scan's head size (d_h = 12, three query blocks per head). The expected hashes were computed
//! by the code that trained the committed scan (before the speed work of issue #25); any
//! change to an operation's numerics (a sum's order, a product kernel, a fused multiply-add)
//! changes them. Speed-only changes must leave them alone.
//!
//! `gemm` picks its f32 micro-kernel by CPU features (0.19 without its `x86-v4` feature:
//! FMA, else scalar, on x86-64) and its blocking (where a long product's sum is split) by the
//! CPU's cache sizes, so the same code gives other bytes on another CPU: the hashes are those
//! of the machine they were computed on (x86-64 with FMA; caches L1d 48K, L2 2048K, L3
//! 266240K, as /sys reports them), and elsewhere the test prints its hashes and checks nothing.

use attncheck_lm::model::{mean_nll, Config, Inference, Model, Position};
use attncheck_lm::train::{train, TrainConfig};
use attncheck_lm::{DType, SplitMix64, Var};
use sha2::{Digest, Sha256};
use std::sync::Arc;

fn add_f32(h: &mut Sha256, t: &attncheck_lm::Tensor) {
    for x in t.flatten_all().unwrap().to_vec1::<f32>().unwrap() {
        h.update(x.to_bits().to_le_bytes());
    }
}

fn hex(h: Sha256) -> String {
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// (weights + loss curve, evaluation logits, input gradient) hashes of one seeded run.
fn run(hidden: usize, layers: usize, position: Position, length: usize) -> [String; 3] {
    let mut rng = SplitMix64(11);
    let data: Vec<u8> = (0..20_000).map(|_| b' ' + rng.below(90) as u8).collect();
    let cfg = Config {
        hidden,
        layers,
        heads: 8,
        position,
        dtype: DType::F32,
    };
    let model = Model::new(cfg, 5).unwrap();
    let tc = TrainConfig {
        steps: 4,
        batch: 2,
        length,
        lr: 3e-3,
        warmup: 2,
        clip: 1.0,
        weight_decay: 0.01,
        seed: 9,
    };
    let log = train(&model, &data, &tc, &mut |_| {}).unwrap();
    let mut hw = Sha256::new();
    for t in model.weights().values() {
        add_f32(&mut hw, t);
    }
    for x in &log.loss_curve {
        hw.update(x.to_bits().to_le_bytes());
    }
    // evaluation: the last 40 positions, attention truncated to 50 keys
    let frozen = model.frozen();
    let xs: Vec<&[u8]> = vec![&data[100..100 + length], &data[7000..7000 + length]];
    let toks = attncheck_lm::model::tokens(&xs).unwrap();
    let inf = Inference {
        truncate: Some(50),
        last: Some(40),
    };
    let mut he = Sha256::new();
    add_f32(&mut he, &frozen.forward(&toks, inf).unwrap());
    // the gradient of the mean loss of the full pass with respect to the input embeddings
    let ev = Var::from_tensor(&frozen.embed(&toks).unwrap()).unwrap();
    let logits = frozen
        .forward_embedded(ev.as_tensor(), Inference::default())
        .unwrap();
    let ys: Vec<&[u8]> = vec![&data[101..101 + length], &data[7001..7001 + length]];
    let loss = mean_nll(&logits, &attncheck_lm::model::tokens(&ys).unwrap()).unwrap();
    let grads = loss.backward().unwrap();
    let mut hg = Sha256::new();
    add_f32(&mut hg, grads.get(ev.as_tensor()).unwrap());
    [hex(hw), hex(he), hex(hg)]
}

/// The pinned machine: FMA, and the cache sizes gemm's blocking follows.
fn pinned_machine() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let size = |i: usize| {
            std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu0/cache/index{i}/size"))
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        std::arch::is_x86_feature_detected!("fma")
            && [size(0), size(2), size(3)] == ["48K", "2048K", "266240K"]
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

fn check(name: &str, got: [String; 3], want: [&str; 3]) {
    if !pinned_machine() {
        eprintln!("{name}: not the pinned machine (FMA and its caches), nothing checked: {got:?}");
        return;
    }
    for (what, (g, w)) in ["weights", "eval logits", "input gradient"]
        .iter()
        .zip(got.iter().zip(want))
    {
        assert_eq!(g, w, "{name}: {what} changed");
    }
}

#[test]
fn bias_scheme_d12_bytes_are_pinned() {
    let got = run(
        96,
        3,
        Position::Bias(Arc::new(|h, r| -((h + 1) as f64) * r as f64 / 32.0)),
        130,
    );
    eprintln!("bias d12: {got:?}");
    check(
        "bias d12",
        got,
        [
            "d54efc7857081b762f6a32c7f67399cde06be3a8106b721ae5c0c0eb9559506d",
            "1976c305ae56a3b06dd6b84f1df4612ca8994e9a16aa2625687e34633f8357f2",
            "438f36005e17ad4616cbd20a373368f78d7410b4e5d69450de85cbafd01a124c",
        ],
    );
}

#[test]
fn rope_window_sinusoidal_bytes_are_pinned() {
    let freqs: Vec<f64> = (0..16).map(|i| 10000f64.powf(-(i as f64) / 16.0)).collect();
    let want = [
        [
            "e3fc5ff1de976e2c482d959d4afde075bb3b7bc9b14eee88c888797295c5bf93",
            "f0bd79707d9d4fda83f7564040b01b478100fe10cbcfe07a699b5dc887385de0",
            "c320eeec9f3921230d8b9fc722bb423e34b5e980bc77ae9a0f509aec6d91c242",
        ],
        [
            "17a5d40802f5a5aeb40775bc89eed36e775e971bbd69f2ff71e12496c705d049",
            "ef17a786c3644a519578c9eee6e78a942dba3037d0269c49a28aacc0e04f4f44",
            "34f75700f59f75fd4a1ad08156c6a19f8ba87ad3a406fd800d7c8742921f7475",
        ],
        [
            "12082c05650e3be356164d4dae1bf0309bce5e462de1afe4ab33df5360fc70f8",
            "f83d6abb377c4ff61e84bb44a23b52bd75ea6e09eb1ca806d25f3226a98d96f7",
            "52efe7004b29145f76a7d97220d9df7943736a55494b37ba1a3c0d2b7acbeaf7",
        ],
    ];
    let mut got = Vec::new();
    for (name, hidden, position) in [
        ("rope d12", 96, Position::Rope(10000.0)),
        ("window d8", 64, Position::Window(45)),
        ("sinusoidal d4", 32, Position::Sinusoidal(freqs)),
    ] {
        got.push((name, run(hidden, 2, position, 75)));
    }
    for (name, g) in &got {
        eprintln!("{name}: {g:?}");
    }
    for ((name, g), want) in got.into_iter().zip(want) {
        check(name, g, want);
    }
}
