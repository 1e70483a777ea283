//! `attncheck window MODEL.safetensors --config MODEL.toml` (issue #40, "Beyond"): the
//! certified windows of a model the user brings. Every model here is written by the test
//! (a small pre-LN ALiBi decoder, hidden 8, 2 heads, 2 layers, byte-level) with the
//! `safetensors` crate; then the command's output, its certificate under `verify` (with and
//! without the model), the tampering that `verify --model` must reject, and hostile files
//! and configs, each exit 2 naming the tensor or field, with nothing written.

use crate::util::{bin, output_text};
use safetensors::{tensor::TensorView, Dtype};
use std::collections::BTreeMap;
use std::path::Path;

const D: usize = 8;
const LAYERS: usize = 2;

/// The model's tensors by name: shape and f32 values (the scan's names and layout:
/// `emb` [256, d], `l{l}.ln1.w`/`.b` [d], `l{l}.qkv.w` [d, 3d] in-out, `l{l}.qkv.b` [3d]).
type Tensors = BTreeMap<String, (Vec<usize>, Vec<f32>)>;

/// Deterministic small values (a multiplicative hash, so that no two tensors agree).
fn values(seed: u64, n: usize, scale: f32) -> Vec<f32> {
    (0..n as u64)
        .map(|i| {
            let h = (seed * 1_000_003 + i).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
            ((h % 2001) as f32 - 1000.0) / 1000.0 * scale
        })
        .collect()
}

fn model() -> Tensors {
    let mut t = Tensors::new();
    t.insert("emb".into(), (vec![256, D], values(1, 256 * D, 1.0)));
    for l in 0..LAYERS {
        let s = 10 * (l as u64 + 1);
        let gain: Vec<f32> = values(s, D, 0.25).iter().map(|x| 1.0 + x).collect();
        t.insert(format!("l{l}.ln1.w"), (vec![D], gain));
        t.insert(format!("l{l}.ln1.b"), (vec![D], values(s + 1, D, 0.1)));
        t.insert(
            format!("l{l}.qkv.w"),
            (vec![D, 3 * D], values(s + 2, 3 * D * D, 0.5)),
        );
        t.insert(
            format!("l{l}.qkv.b"),
            (vec![3 * D], values(s + 3, 3 * D, 0.1)),
        );
        // a tensor `window` does not read
        t.insert(
            format!("l{l}.mlp.w"),
            (vec![D, 4 * D], values(s + 4, 4 * D * D, 0.5)),
        );
    }
    t
}

const CONFIG: &str = r#"heads = 2
layers = 2
ln_eps = 1e-5
slopes = "paper"

[tensors]
embedding = "emb"
ln_gain = "l{l}.ln1.w"
ln_shift = "l{l}.ln1.b"
qkv_weight = "l{l}.qkv.w"
qkv_bias = "l{l}.qkv.b"
layout = "in-out"
"#;

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn serialize(t: &Tensors) -> Vec<u8> {
    let bytes: BTreeMap<&String, Vec<u8>> = t.iter().map(|(k, (_, v))| (k, f32_bytes(v))).collect();
    let views: Vec<(String, TensorView)> = t
        .iter()
        .map(|(k, (s, _))| {
            (
                k.clone(),
                TensorView::new(Dtype::F32, s.clone(), &bytes[k]).unwrap(),
            )
        })
        .collect();
    safetensors::serialize(views, None).unwrap()
}

/// A directory holding `model.safetensors` (the bytes given) and `model.toml`.
fn project(model: &[u8], config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("model.safetensors"), model).unwrap();
    std::fs::write(dir.path().join("model.toml"), config).unwrap();
    dir
}

fn window_in(dir: &Path, extra: &[&str]) -> std::process::Output {
    bin()
        .current_dir(dir)
        .args([
            "window",
            "model.safetensors",
            "--config",
            "model.toml",
            "--out",
            "out",
        ])
        .args(extra)
        .output()
        .unwrap()
}

fn verify_in(dir: &Path, extra: &[&str]) -> std::process::Output {
    bin()
        .current_dir(dir)
        .args(["verify", "out/model.cert.json"])
        .args(extra)
        .output()
        .unwrap()
}

fn doc(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("out/model.windows.json")).unwrap())
        .unwrap()
}

fn windows(dir: &Path) -> Vec<u64> {
    doc(dir)["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["window"].as_u64().unwrap())
        .collect()
}

/// A certified project: the model written, `window` run (exit 0).
fn certified(t: &Tensors, config: &str) -> tempfile::TempDir {
    let dir = project(&serialize(t), config);
    let o = window_in(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    dir
}

#[test]
fn window_certifies_every_head_and_verify_rechecks_it_with_and_without_the_model() {
    let dir = certified(&model(), CONFIG);
    let o = window_in(dir.path(), &["--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let printed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let d = doc(dir.path());
    assert_eq!(printed, d, "--json prints the file it writes");
    assert_eq!(d["heads"], 2);
    assert_eq!(d["layers"], 2);
    assert_eq!(d["hidden"], D);
    assert_eq!(d["epsilon"], "1/1000");
    let ws = d["windows"].as_array().unwrap();
    assert_eq!(ws.len(), 4);
    for w in ws {
        assert!(w["window"].as_u64().unwrap() >= 1);
        // layer 0 names the bytes attaining its range; deeper layers are bounds
        assert_eq!(w["bytes"].is_array(), w["layer"] == 0, "{w}");
    }
    // ALiBi's paper slopes for 2 heads: 2^-4, 2^-8
    assert_eq!(ws[0]["slope"], "2^-4");
    assert_eq!(ws[1]["slope"], "2^-8");
    // the table: a header and one line per (layer, head)
    let o = window_in(dir.path(), &[]);
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.lines().count(), 5, "{out}");
    // 2 obligations per head, every one proven
    for extra in [
        &[][..],
        &["--model", "model.safetensors", "--config", "model.toml"][..],
    ] {
        let o = verify_in(dir.path(), extra);
        let text = output_text(&o);
        assert_eq!(o.status.code(), Some(0), "{text}");
        assert_eq!(
            text.matches("\nproven").count() + usize::from(text.starts_with("proven")),
            8,
            "{text}"
        );
    }
}

/// `verify --model` rebuilds the statement from the user's file: a certificate about
/// other weights is rejected with exit 4, whatever was changed in the model.
#[test]
fn verify_with_the_model_rejects_a_certificate_about_other_weights() {
    let dir = certified(&model(), CONFIG);
    type Change = Box<dyn Fn(&mut Tensors)>;
    let cases: Vec<(&str, Change)> = vec![
        (
            "one weight bit flipped",
            Box::new(|t| {
                let v = &mut t.get_mut("l1.qkv.w").unwrap().1;
                v[9] = f32::from_bits(v[9].to_bits() ^ 1);
            }),
        ),
        (
            "two heads swapped",
            Box::new(|t| {
                // head h owns the output columns h·d_h..(h+1)·d_h of q and of k
                let v = &mut t.get_mut("l0.qkv.w").unwrap().1;
                let dh = D / 2;
                for row in v.chunks_exact_mut(3 * D) {
                    for base in [0, D] {
                        for c in 0..dh {
                            row.swap(base + c, base + dh + c);
                        }
                    }
                }
            }),
        ),
        (
            "a LayerNorm gain changed",
            Box::new(|t| t.get_mut("l0.ln1.w").unwrap().1[3] = 1.5),
        ),
        (
            "an embedding bit flipped",
            Box::new(|t| {
                let v = &mut t.get_mut("emb").unwrap().1;
                v[100] = f32::from_bits(v[100].to_bits() ^ 1 << 12);
            }),
        ),
    ];
    for (what, change) in cases {
        let mut t = model();
        change(&mut t);
        std::fs::write(dir.path().join("other.safetensors"), serialize(&t)).unwrap();
        let o = verify_in(
            dir.path(),
            &["--model", "other.safetensors", "--config", "model.toml"],
        );
        assert_eq!(o.status.code(), Some(4), "{what}: {}", output_text(&o));
        assert!(output_text(&o).contains("rejected"), "{what}");
    }
    // other slopes in the config: another statement
    std::fs::write(
        dir.path().join("other.toml"),
        CONFIG.replace("\"paper\"", "[\"1/2\", \"1/4\"]"),
    )
    .unwrap();
    let o = verify_in(
        dir.path(),
        &["--model", "model.safetensors", "--config", "other.toml"],
    );
    assert_eq!(o.status.code(), Some(4), "{}", output_text(&o));
}

/// The certificate itself tampered: a window, ε or a slope in its hints no longer
/// matches its obligations (exit 4); a weight changed without its hash is refused when
/// read (exit 2); re-hashed, it is a consistent certificate about other weights, which
/// `verify` without the model decides (and `--model` rejects).
#[test]
fn a_tampered_window_certificate_is_rejected() {
    let dir = certified(&model(), CONFIG);
    let path = dir.path().join("out/model.cert.json");
    let cert: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let with = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut c = cert.clone();
        edit(&mut c);
        std::fs::write(&path, serde_json::to_string(&c).unwrap()).unwrap();
        let o = verify_in(dir.path(), &[]);
        std::fs::write(&path, serde_json::to_string(&cert).unwrap()).unwrap();
        o
    };
    for (what, edit) in [
        (
            "a window",
            &(|c: &mut serde_json::Value| {
                let w = c["hints"]["windows"].as_str().unwrap().to_string();
                let (first, rest) = w.split_once(',').unwrap();
                let n: u64 = first.parse().unwrap();
                c["hints"]["windows"] = format!("{},{rest}", n + 1).into();
            }) as &dyn Fn(&mut serde_json::Value),
        ),
        ("ε", &|c: &mut serde_json::Value| {
            c["hints"]["epsilon"] = "1/100".into()
        }),
        ("a slope", &|c: &mut serde_json::Value| {
            c["hints"]["slopes"] = "1/2,1/4".into()
        }),
        ("an obligation's formula", &|c: &mut serde_json::Value| {
            let f = c["obligations"][0]["formula"].as_str().unwrap().to_string();
            c["obligations"][0]["formula"] = f.replacen("1/1000", "1/999", 1).into();
        }),
    ] {
        let o = with(edit);
        assert_eq!(o.status.code(), Some(4), "{what}: {}", output_text(&o));
    }
    let o = with(&|c| {
        let s = c["data"]["W"]["layers"][0]["w_q"]
            .as_str()
            .unwrap()
            .to_string();
        c["data"]["W"]["layers"][0]["w_q"] = format!("{:08x}{}", 0.5f32.to_bits(), &s[8..]).into();
    });
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert!(output_text(&o).contains("sha256"), "{}", output_text(&o));
}

/// Hostile model files: exit 2, the message naming the tensor (or the file's fault), and
/// nothing written.
#[test]
fn hostile_model_files_exit_2_naming_the_tensor_and_write_nothing() {
    let good = serialize(&model());
    let mut cases: Vec<(&str, Vec<u8>, &str)> = Vec::new();
    let mut t = model();
    t.insert("l1.ln1.w".into(), (vec![D + 1], values(5, D + 1, 1.0)));
    cases.push(("a wrong shape", serialize(&t), "l1.ln1.w"));
    let mut t = model();
    t.get_mut("l1.qkv.w").unwrap().1[17] = f32::NAN;
    cases.push(("a NaN", serialize(&t), "l1.qkv.w"));
    let mut t = model();
    t.get_mut("emb").unwrap().1[5] = f32::INFINITY;
    cases.push(("an infinity", serialize(&t), "emb"));
    let mut t = model();
    t.remove("l1.qkv.b");
    cases.push(("a missing tensor", serialize(&t), "l1.qkv.b"));
    cases.push((
        "a truncated file",
        good[..good.len() - 3].to_vec(),
        "safetensors",
    ));
    cases.push(("an empty file", Vec::new(), "safetensors"));
    // a header that lies: the first tensor's end offset moved beyond the data
    let n = u64::from_le_bytes(good[..8].try_into().unwrap()) as usize;
    let header = String::from_utf8(good[8..8 + n].to_vec()).unwrap();
    let lied = header.replacen("\"data_offsets\":[0,", "\"data_offsets\":[4,", 1);
    assert_ne!(lied, header);
    let mut b = (lied.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(lied.as_bytes());
    b.extend_from_slice(&good[8 + n..]);
    cases.push(("a header that lies about its offsets", b, "safetensors"));
    // a dtype the kernel cannot take exactly
    let mut t = model();
    let v = t.remove("l0.ln1.b").unwrap();
    let mut bytes = serialize(&t);
    {
        let ints: Vec<u8> = v.1.iter().flat_map(|x| (*x as i32).to_le_bytes()).collect();
        let mut views: Vec<(String, TensorView)> = Vec::new();
        let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
        for (k, tv) in st.tensors() {
            views.push((k, tv));
        }
        views.push((
            "l0.ln1.b".into(),
            TensorView::new(Dtype::I32, vec![D], &ints).unwrap(),
        ));
        bytes = safetensors::serialize(views, None).unwrap();
    }
    cases.push(("an integer tensor", bytes, "l0.ln1.b"));
    for (what, bytes, named) in cases {
        let dir = project(&bytes, CONFIG);
        let o = window_in(dir.path(), &[]);
        let text = output_text(&o);
        assert_eq!(o.status.code(), Some(2), "{what}: {text}");
        assert!(text.contains("model.safetensors"), "{what}: {text}");
        assert!(text.contains(named), "{what}: {text}");
        assert!(!text.contains("panicked"), "{what}: {text}");
        assert!(
            !dir.path().join("out").exists(),
            "{what}: nothing is written"
        );
    }
}

/// Hostile configs and options: exit 2 naming the file, line and field.
#[test]
fn hostile_configs_exit_2_naming_file_line_and_field() {
    let bytes = serialize(&model());
    for (what, config, field, line) in [
        (
            "an unknown field",
            CONFIG.replace("layers = 2", "layers = 2\nlayer = 2"),
            "layer",
            Some(3),
        ),
        (
            "heads not dividing hidden",
            CONFIG.replace("heads = 2", "heads = 3"),
            "heads",
            Some(1),
        ),
        (
            "no heads",
            CONFIG.replace("heads = 2", "heads = 0"),
            "heads",
            Some(1),
        ),
        (
            "a negative ε",
            CONFIG.replace("1e-5", "-1e-5"),
            "ln_eps",
            Some(3),
        ),
        (
            "a slope rule",
            CONFIG.replace("\"paper\"", "\"geometric\""),
            "slopes",
            Some(4),
        ),
        (
            "too few slopes",
            CONFIG.replace("\"paper\"", "[\"1/2\"]"),
            "slopes",
            Some(4),
        ),
        (
            "a slope ≤ 0",
            CONFIG.replace("\"paper\"", "[\"1/2\", \"0\"]"),
            "slopes",
            Some(4),
        ),
        (
            "a template without {l}",
            CONFIG.replace("l{l}.ln1.w", "ln1.w"),
            "tensors.ln_gain",
            Some(8),
        ),
        (
            "both projections",
            CONFIG.replace("layout", "q_weight = \"l{l}.q\"\nlayout"),
            "tensors.qkv_weight",
            None,
        ),
        (
            "a layout",
            CONFIG.replace("\"in-out\"", "\"columns\""),
            "layout",
            None,
        ),
    ] {
        let dir = project(&bytes, &config);
        let o = window_in(dir.path(), &[]);
        let text = output_text(&o);
        assert_eq!(o.status.code(), Some(2), "{what}: {text}");
        assert!(text.contains("model.toml"), "{what}: {text}");
        assert!(text.contains(field), "{what}: {text}");
        if let Some(l) = line {
            assert!(text.contains(&format!("model.toml:{l}")), "{what}: {text}");
        }
        assert!(!dir.path().join("out").exists(), "{what}");
    }
    let dir = project(&bytes, CONFIG);
    for (what, args) in [
        ("ε = 1", &["--epsilon", "1"][..]),
        ("ε not a literal", &["--epsilon", "x"][..]),
        ("a tiny precision", &["--precision", "8"][..]),
    ] {
        let o = window_in(dir.path(), args);
        assert_eq!(o.status.code(), Some(2), "{what}: {}", output_text(&o));
        assert!(!dir.path().join("out").exists(), "{what}");
    }
}

/// The same weights stored other ways read to the same datum (the same SHA-256, the same
/// windows): PyTorch's [out, in] layout with q and k apart, and BF16 values widened
/// exactly (the values here are BF16 values).
#[test]
fn layouts_and_half_precision_read_to_the_same_weights() {
    // round every value to BF16 (its upper 16 bits), so that BF16 stores it exactly
    let bf = |v: &[f32]| -> Vec<f32> {
        v.iter()
            .map(|x| f32::from_bits(x.to_bits() & 0xffff_0000))
            .collect()
    };
    let mut t = model();
    for (_, v) in t.values_mut() {
        *v = bf(v);
    }
    let base = certified(&t, CONFIG);
    let sha = doc(base.path())["sha256"].clone();
    // out-in, split
    let mut s = Tensors::new();
    s.insert("emb".into(), t["emb"].clone());
    for l in 0..LAYERS {
        s.insert(format!("l{l}.ln1.w"), t[&format!("l{l}.ln1.w")].clone());
        s.insert(format!("l{l}.ln1.b"), t[&format!("l{l}.ln1.b")].clone());
        let w = &t[&format!("l{l}.qkv.w")].1;
        let b = &t[&format!("l{l}.qkv.b")].1;
        for (k, from) in [("q", 0), ("k", D)] {
            // [out, in]: row o is column from + o of the in-out matrix
            let m: Vec<f32> = (0..D)
                .flat_map(|o| (0..D).map(move |i| (o, i)))
                .map(|(o, i)| w[i * 3 * D + from + o])
                .collect();
            s.insert(format!("l{l}.attn.{k}.weight"), (vec![D, D], m));
            s.insert(
                format!("l{l}.attn.{k}.bias"),
                (vec![D], b[from..from + D].to_vec()),
            );
        }
    }
    let split = r#"heads = 2
layers = 2
ln_eps = 1e-5
slopes = "paper"

[tensors]
embedding = "emb"
ln_gain = "l{l}.ln1.w"
ln_shift = "l{l}.ln1.b"
q_weight = "l{l}.attn.q.weight"
q_bias = "l{l}.attn.q.bias"
k_weight = "l{l}.attn.k.weight"
k_bias = "l{l}.attn.k.bias"
layout = "out-in"
"#;
    let other = certified(&s, split);
    assert_eq!(doc(other.path())["sha256"], sha);
    assert_eq!(windows(other.path()), windows(base.path()));
    // BF16
    let halves: BTreeMap<&String, Vec<u8>> = t
        .iter()
        .map(|(k, (_, v))| {
            (
                k,
                v.iter()
                    .flat_map(|x| ((x.to_bits() >> 16) as u16).to_le_bytes())
                    .collect(),
            )
        })
        .collect();
    let views: Vec<(String, TensorView)> = t
        .iter()
        .map(|(k, (sh, _))| {
            (
                k.clone(),
                TensorView::new(Dtype::BF16, sh.clone(), &halves[k]).unwrap(),
            )
        })
        .collect();
    let dir = project(&safetensors::serialize(views, None).unwrap(), CONFIG);
    let o = window_in(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    assert_eq!(doc(dir.path())["sha256"], sha);
}

/// Without the embedding, layer 0 is bounded over every input of the layer (bound 5),
/// a superset of the byte inputs: its windows are never smaller than the exact ones.
#[test]
fn without_the_embedding_layer_0_is_bounded_over_every_input_and_never_tighter() {
    let exact = certified(&model(), CONFIG);
    let bound = certified(&model(), &CONFIG.replace("embedding = \"emb\"\n", ""));
    let (we, wb) = (windows(exact.path()), windows(bound.path()));
    assert_eq!(doc(bound.path())["layer0"], "bound over every input");
    for h in 0..2 {
        assert!(we[h] <= wb[h], "head {h}: {we:?} {wb:?}");
    }
    // deeper layers use the same bound either way
    assert_eq!(we[2..], wb[2..]);
    let o = verify_in(bound.path(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
}

/// verify's input options belong to one certificate kind each.
#[test]
fn model_applies_only_to_window_certificates() {
    let dir = certified(&model(), CONFIG);
    let o = verify_in(dir.path(), &["--target", "x.mtx"]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert!(output_text(&o).contains("--target does not apply"));
    let o = bin()
        .current_dir(dir.path())
        .args([
            "verify",
            "out/model.cert.json",
            "--model",
            "model.safetensors",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "--model needs --config");
    let o = bin()
        .current_dir(dir.path())
        .args([
            "verify",
            "out/model.cert.json",
            "--model",
            "nothing.safetensors",
            "--config",
            "model.toml",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert!(output_text(&o).contains("nothing.safetensors"));
}

/// F16 widens to f32 exactly: every one of the 2^16 patterns against its value computed
/// from the definition (sign, 5-bit exponent, 10-bit fraction; subnormals m·2^-24), with
/// NaN and ±∞ kept as non-finite.
#[test]
fn every_f16_pattern_widens_to_its_exact_value() {
    use attncheck::model_window::read::f16_bits;
    for h in 0..=u16::MAX {
        let (s, e, m) = ((h >> 15) & 1, (h >> 10) & 0x1f, h & 0x3ff);
        let got = f32::from_bits(f16_bits(h));
        if e == 0x1f {
            assert!(!got.is_finite(), "{h:#06x}");
            assert_eq!(got.is_nan(), m != 0, "{h:#06x}");
            continue;
        }
        let mag = if e == 0 {
            f64::from(m) * 2f64.powi(-24)
        } else {
            (1.0 + f64::from(m) / 1024.0) * 2f64.powi(i32::from(e) - 15)
        };
        let want = if s == 1 { -mag } else { mag };
        assert_eq!(f64::from(got), want, "{h:#06x}");
        assert_eq!(got.is_sign_negative(), s == 1, "{h:#06x}");
    }
}

/// A model whose certificate the kernel's budget refuses is refused before the search
/// runs anything (exit 2, the cost and the limit named, nothing written): one head as
/// wide as the model (hidden = d_h = 256), whose folded-row bound costs hours of
/// big-integer products.
#[test]
fn a_model_over_the_certificate_budget_is_refused_before_any_search() {
    const W: usize = 256;
    let mut t = Tensors::new();
    t.insert("l0.ln1.w".into(), (vec![W], values(7, W, 0.25)));
    t.insert(
        "l0.qkv.w".into(),
        (vec![W, 3 * W], values(8, 3 * W * W, 0.5)),
    );
    let config = r#"heads = 1
layers = 1
ln_eps = 1e-5
slopes = ["1/2"]
[tensors]
ln_gain = "l{l}.ln1.w"
qkv_weight = "l{l}.qkv.w"
layout = "in-out"
"#;
    let dir = project(&serialize(&t), config);
    let o = window_in(dir.path(), &[]);
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(text.contains("model.safetensors"), "{text}");
    // the cost it would have and the limit (here one obligation alone is over it)
    assert!(text.contains("would cost"), "{text}");
    assert!(text.contains("the limit is 1000000000"), "{text}");
    assert!(!dir.path().join("out").exists());
}
