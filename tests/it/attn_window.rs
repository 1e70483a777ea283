//! The windows of the trained-model claim over the `attn-weights` datum: certificate,
//! `verify` (pins, tampering) and the certificate format's version. The datum and its
//! operations (`attn-ln-bound`, `attn-logit-range`, `attn-row-logit-range`,
//! `attn-byte-logit-range`: a hand-built model, hostile data, containment of the f64
//! forward computation) are
//! tested in the kernel crate (crates/attncheck-kernel/tests/conformance/weights.rs),
//! whose model helpers (`weights_model`) these tests share.

use crate::weights_model::{datum_with_input, entry_of, hand_model, hex, Layer};
use attncheck::certificate::DataEntry;
use attncheck::kernel::expr::{Data, Datum};
use attncheck::kernel::weights::digest;

/// Format 6 added `attn-byte-logit-range`, `attn-row-logit-range` and the datum's
/// `ln_eps` and `embedding` (issue #40): a file that claims version 5 and uses them is
/// refused for its version (exit 2, both versions named), before its operators are read,
/// by `verify`, `verify --no-spec` and `verify --coq`; the same file as version 6 verifies.
#[test]
fn a_version_5_certificate_using_the_new_operators_is_refused_for_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = entry_of(4, 1, &[hand_model()]);
    let emb: Vec<f32> = (0..256 * 4)
        .map(|i| (i % 7) as f32 * 0.125 - 0.25)
        .collect();
    w["ln_eps"] = hex(&[1e-5]).into();
    w["embedding"] = hex(&emb).into();
    let mut bits: Vec<Vec<u32>> = hand_model()
        .parts()
        .map(|p| p.iter().map(|x| x.to_bits()).collect())
        .to_vec();
    bits.push(vec![1e-5f32.to_bits()]);
    bits.push(emb.iter().map(|x| x.to_bits()).collect());
    w["sha256"] = digest(&bits).into();
    for f in [
        "(<= (attn-row-logit-range W 0 0) 80)",
        "(<= (attn-byte-logit-range W 0) 80)",
    ] {
        let cert = |format: &str| {
            serde_json::json!({"format": format, "claim": "test/v5", "profile": "quick",
                "precision": 64, "obligations": [{"name": "o", "formula": f, "expect": "holds"}],
                "data": {"W": w}})
        };
        let p = dir.path().join("v5.cert.json");
        std::fs::write(&p, cert("attncheck-certificate/5").to_string()).unwrap();
        for args in [
            &["verify"][..],
            &["verify", "--no-spec"],
            &["verify", "--coq"],
        ] {
            let mut a = args.to_vec();
            a.push(p.to_str().unwrap());
            let o = crate::util::run_in(dir.path(), &a);
            let text = crate::util::output_text(&o);
            assert_eq!(o.status.code(), Some(2), "{f} {args:?}: {text}");
            assert!(
                text.contains(
                    "expected `attncheck-certificate/6`, found `attncheck-certificate/5`"
                ) && text.contains("v5.cert.json"),
                "{f} {args:?}: {text}"
            );
        }
        let p6 = dir.path().join("v6.cert.json");
        std::fs::write(&p6, cert(attncheck::certificate::FORMAT).to_string()).unwrap();
        let o = crate::util::run_in(dir.path(), &["verify", "--no-spec", p6.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{f}: {}",
            crate::util::output_text(&o)
        );
    }
}

mod scan_certificate {
    use super::*;
    use attncheck::app;
    use attncheck::certificate::{Certificate, Hints, Profile};
    use attncheck::claims::positional::trained_model_claims::{window, Claim};

    const ID: &str = "positional/trained-model-claims";

    /// Weights of the spec's model shape: small dyadics, γ near 1 (a trained model's scale).
    fn synthetic(d: usize, seed: u64) -> Layer {
        let mut rng = attncheck::rng::SplitMix64::new(seed);
        let mut v = |n: usize, centre: f32, scale: i32| -> Vec<f32> {
            (0..n)
                .map(|_| centre + ((rng.next_u64() % 17) as f32 - 8.0) * 2f32.powi(scale))
                .collect()
        };
        Layer {
            gamma: v(d, 1.0, -6),
            beta: v(d, 0.0, -7),
            wq: v(d * d, 0.0, -8),
            bq: v(d, 0.0, -7),
            wk: v(d * d, 0.0, -8),
            bk: v(d, 0.0, -7),
        }
    }

    /// A synthetic embedding (256 × d) and ε_LN: layer 0's input.
    fn synthetic_input(d: usize, seed: u64) -> (Vec<f32>, f32) {
        let mut rng = attncheck::rng::SplitMix64::new(seed ^ 0xE3B);
        let e = (0..256 * d)
            .map(|_| ((rng.next_u64() % 33) as f32 - 16.0) * 2f32.powi(-6))
            .collect();
        (e, 1e-5)
    }

    /// The entry's SHA-256 recomputed from its values (a consistent datum after an edit).
    fn rehash(entry: &mut serde_json::Value) {
        let words = |s: &str| -> Vec<u32> {
            (0..s.len() / 8)
                .map(|i| u32::from_str_radix(&s[8 * i..8 * i + 8], 16).unwrap())
                .collect()
        };
        let mut bits = Vec::new();
        for l in entry["layers"].as_array().unwrap() {
            for part in attncheck::kernel::weights::PARTS {
                bits.push(words(l[part].as_str().unwrap()));
            }
        }
        for f in ["ln_eps", "embedding"] {
            if let Some(s) = entry[f].as_str() {
                bits.push(words(s));
            }
        }
        entry["sha256"] = digest(&bits).into();
    }

    /// The committed spec with its scan cut to one training length (32) and two seeds: two
    /// certified models (each datum is read with its 256 × 256 byte pairs per head, about a
    /// second in a debug build), enough for every tampering below.
    fn small_spec_text() -> String {
        let t = crate::util::spec_text(ID);
        assert_eq!(t.matches("\nseeds = [1, 2, 3]\n").count(), 1);
        let t = t.replacen("\nseeds = [1, 2, 3]\n", "\nseeds = [1, 2]\n", 1);
        // without the scan's pins (they name its 9 models) and its sweep of the arms trained
        // longer (at L_tr = 128 and 512): the tests below write their own pins
        let (a, b) = (
            t.find("# ---- the SHA-256 of every certified model's weights")
                .unwrap(),
            t.find("# ---- sizes per training length").unwrap(),
        );
        let t = format!("{}{}", &t[..a], &t[b..]);
        let key = "[[profiles.full.scan.lengths]]";
        let first = t.find(key).unwrap();
        let second = first + key.len() + t[first + key.len()..].find(key).unwrap();
        let fixtures = t.find("[[params.fixture]]").unwrap();
        format!("{}{}", &t[..second], &t[fixtures..])
    }

    /// A theorems directory holding `text` as the claim's spec.
    fn theorems_with(text: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let th = dir.path().join("theorems/positional");
        std::fs::create_dir_all(&th).unwrap();
        std::fs::write(th.join("trained-model-claims.toml"), text).unwrap();
        dir
    }

    thread_local! {
        static SMALL: tempfile::TempDir = theorems_with(&small_spec_text());
    }

    fn small_theorems() -> std::path::PathBuf {
        SMALL.with(|d| d.path().join("theorems"))
    }

    /// A certificate of the (small) scan's windows for synthetic weights, as the run makes
    /// it: the search's hints, the statement built with the weights carried, serialised.
    fn certificate() -> serde_json::Value {
        let spec = attncheck::claims::load_spec(
            &small_theorems().join("positional/trained-model-claims.toml"),
        )
        .unwrap();
        let r = attncheck::claims::shape::resolve::<Claim>(&spec, Profile::Full).unwrap();
        let (p, eps) = (&r.params, r.scan().unwrap().1);
        let mut data = Data::new();
        let mut hints = Hints::new();
        for (k, j) in window::window_jobs(p).iter().enumerate() {
            let layers: Vec<Layer> = (0..p.layers)
                .map(|l| synthetic(p.hidden, (k * 10 + l) as u64))
                .collect();
            let (emb, ln_eps) = synthetic_input(p.hidden, k as u64);
            data.insert(
                window::datum_name(j),
                Datum::Attn(datum_with_input(p.hidden, p.heads, &layers, &emb, ln_eps)),
            );
            let ws = window::search(p, j, eps, &data, spec.precision).unwrap();
            hints.insert(window::hint_key(j), window::hint_of(&ws));
        }
        let st = attncheck::claims::statement_of_carrying(&spec, Profile::Full, &hints, &data)
            .unwrap()
            .expect("the scan has a statement");
        serde_json::to_value(Certificate::of(&st, Profile::Full, spec.precision, &hints)).unwrap()
    }

    fn verify(v: &serde_json::Value) -> Result<app::Verification, app::Error> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.cert.json");
        std::fs::write(&p, serde_json::to_string(v).unwrap()).unwrap();
        app::verify_file(&p, Some(&small_theorems()))
    }

    fn rejected(v: &serde_json::Value, what: &str) -> String {
        match verify(v) {
            Err(e @ app::Error::Rejected { .. }) => {
                assert_eq!(e.exit_code(), 4, "{what}");
                e.to_string()
            }
            Err(e) => panic!("{what}: expected a rejection, got {e}"),
            Ok(v) => panic!("{what}: accepted ({:?})", v.checked.as_expected()),
        }
    }

    /// The datum the first obligation (the first model's) is about.
    fn first_datum(v: &serde_json::Value) -> String {
        let f = v["obligations"][0]["formula"].as_str().unwrap();
        let at = f.find("(attn-byte-logit-range ").unwrap() + "(attn-byte-logit-range ".len();
        f[at..].split(' ').next().unwrap().to_string()
    }

    /// The `--no-spec` road into the weights: it decides the certificate's own formulas
    /// over the weights it carries (and says the statement was not checked), and a weight
    /// whose hash no longer matches is refused there too (exit 2), never decided.
    #[test]
    fn no_spec_decides_the_carried_weights_and_refuses_a_tampered_one() {
        let cert = certificate();
        let dir = tempfile::tempdir().unwrap();
        let at = |v: &serde_json::Value, name: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, serde_json::to_string(v).unwrap()).unwrap();
            app::verify_file(&p, None)
        };
        let ok = at(&cert, "ok.cert.json").unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(ok.source, app::StatementSource::Unchecked));
        assert!(ok.checked.as_expected());
        assert_eq!(ok.checked.decisions().len(), 4);
        let name = first_datum(&cert);
        let mut bad = cert.clone();
        let s = bad["data"][&name]["layers"][0]["w_k"]
            .as_str()
            .unwrap()
            .to_string();
        bad["data"][&name]["layers"][0]["w_k"] =
            format!("{:08x}{}", (-2.0f32).to_bits(), &s[8..]).into();
        let e = at(&bad, "bad.cert.json").err().expect("refused");
        assert_eq!(e.exit_code(), 2, "{e}");
        assert!(e.to_string().contains("sha256"), "{e}");
    }

    /// The spec pins every certified model's weights (`scan.pins`, the datum's SHA-256):
    /// verify rebuilds the statement with the pins, so a certificate carrying other weights
    /// is rejected (exit 4) even when its datum is consistent (re-hashed): one weight bit
    /// flipped, two heads swapped, a LayerNorm gain changed, an embedding bit flipped, or
    /// the spec's pin itself changed.
    #[test]
    fn pinned_weights_reject_any_other_weights_with_exit_4() {
        let cert = certificate();
        let dir = tempfile::tempdir().unwrap();
        let th = dir.path().join("theorems/positional");
        std::fs::create_dir_all(&th).unwrap();
        let pins: Vec<(String, String)> = cert["data"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, e)| (k.clone(), e["sha256"].as_str().unwrap().to_string()))
            .collect();
        let spec_with = |pins: &[(String, String)]| {
            let mut t = small_spec_text();
            t.push_str("\n[profiles.full.scan.pins]\n");
            for (k, v) in pins {
                t.push_str(&format!("\"{k}\" = \"{v}\"\n"));
            }
            std::fs::write(th.join("trained-model-claims.toml"), t).unwrap();
        };
        let check = |v: &serde_json::Value| {
            let p = dir.path().join("c.cert.json");
            std::fs::write(&p, serde_json::to_string(v).unwrap()).unwrap();
            app::verify_file(&p, Some(&dir.path().join("theorems")))
        };
        spec_with(&pins);
        let ok = check(&cert).unwrap_or_else(|e| panic!("{e}"));
        assert!(ok.checked.as_expected());
        let name = first_datum(&cert);
        const D: usize = 64;
        const DH: usize = D / 8;
        let flip = |s: &str, i: usize| -> String {
            let x = u32::from_str_radix(&s[8 * i..8 * i + 8], 16).unwrap() ^ 1;
            format!("{}{:08x}{}", &s[..8 * i], x, &s[8 * i + 8..])
        };
        let swap_heads = |s: &str| -> String {
            let mut v: Vec<&str> = (0..s.len() / 8).map(|i| &s[8 * i..8 * i + 8]).collect();
            for row in 0..D {
                for k in 0..DH {
                    v.swap(row * D + k, row * D + DH + k);
                }
            }
            v.concat()
        };
        type Edit = Box<dyn Fn(&mut serde_json::Value)>;
        let cases: Vec<(&str, Edit)> = vec![
            (
                "one bit of W_K",
                Box::new(move |e| {
                    let s = e["layers"][0]["w_k"].as_str().unwrap().to_string();
                    e["layers"][0]["w_k"] = flip(&s, 77).into();
                }),
            ),
            (
                "two heads swapped",
                Box::new(move |e| {
                    for f in ["w_q", "w_k"] {
                        let s = e["layers"][0][f].as_str().unwrap().to_string();
                        e["layers"][0][f] = swap_heads(&s).into();
                    }
                }),
            ),
            (
                "a LayerNorm gain",
                Box::new(|e| {
                    let s = e["layers"][1]["ln_gain"].as_str().unwrap().to_string();
                    e["layers"][1]["ln_gain"] =
                        format!("{:08x}{}", 1.25f32.to_bits(), &s[8..]).into();
                }),
            ),
            (
                "one bit of the embedding",
                Box::new(move |e| {
                    let s = e["embedding"].as_str().unwrap().to_string();
                    e["embedding"] = flip(&s, 1000).into();
                }),
            ),
        ];
        for (what, f) in &cases {
            let mut v = cert.clone();
            f(&mut v["data"][&name]);
            assert_ne!(v["data"][&name], cert["data"][&name], "{what}");
            rehash(&mut v["data"][&name]);
            let r = match check(&v) {
                Err(e @ app::Error::Rejected { .. }) => {
                    assert_eq!(e.exit_code(), 4, "{what}");
                    e.to_string()
                }
                other => panic!(
                    "{what}: expected exit 4, got {:?}",
                    other.map(|x| x.checked.as_expected())
                ),
            };
            assert!(r.contains("pins") && r.contains(&name), "{what}: {r}");
        }
        // the spec's pin changed: the certificate's (true) weights are not the pinned ones
        let mut other = pins.clone();
        let i = other.iter().position(|(k, _)| *k == name).unwrap();
        other[i].1 = "0".repeat(64);
        spec_with(&other);
        let r = match check(&cert) {
            Err(e) => {
                assert_eq!(e.exit_code(), 4, "{e}");
                e.to_string()
            }
            Ok(_) => panic!("a certificate against another pin verified"),
        };
        assert!(r.contains("pins"), "{r}");
        // a pin missing for one model while the others are pinned
        other.remove(i);
        spec_with(&other);
        let e = check(&cert).err().expect("refused");
        assert_eq!(e.exit_code(), 4, "{e}");
        assert!(e.to_string().contains("pins no SHA-256"), "{e}");
    }

    /// One road for the windows: `attncheck window` on a scan model's weights, written as
    /// a safetensors file with the scan's names (q and k apart, in-out), certifies exactly
    /// the windows the claim's certificate states for that model, about the same weights
    /// (the same SHA-256).
    #[test]
    fn window_on_a_scan_models_weights_states_the_claims_windows() {
        use safetensors::{tensor::TensorView, Dtype};
        let cert = certificate();
        let name = first_datum(&cert);
        let e = &cert["data"][&name];
        let (d, heads) = (
            e["hidden"].as_u64().unwrap() as usize,
            e["heads"].as_u64().unwrap() as usize,
        );
        let bytes_of = |hex: &serde_json::Value| -> Vec<u8> {
            let s = hex.as_str().unwrap();
            (0..s.len() / 8)
                .flat_map(|i| {
                    u32::from_str_radix(&s[8 * i..8 * i + 8], 16)
                        .unwrap()
                        .to_le_bytes()
                })
                .collect()
        };
        let mut tensors: Vec<(String, Vec<usize>, Vec<u8>)> =
            vec![("emb".into(), vec![256, d], bytes_of(&e["embedding"]))];
        let layers = e["layers"].as_array().unwrap();
        for (l, lw) in layers.iter().enumerate() {
            for (part, file, shape) in [
                ("ln_gain", "ln1.w", vec![d]),
                ("ln_shift", "ln1.b", vec![d]),
                ("w_q", "q.w", vec![d, d]),
                ("b_q", "q.b", vec![d]),
                ("w_k", "k.w", vec![d, d]),
                ("b_k", "k.b", vec![d]),
            ] {
                tensors.push((format!("l{l}.{file}"), shape, bytes_of(&lw[part])));
            }
        }
        let views: Vec<(String, TensorView)> = tensors
            .iter()
            .map(|(k, s, b)| {
                (
                    k.clone(),
                    TensorView::new(Dtype::F32, s.clone(), b).unwrap(),
                )
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("m.safetensors"),
            safetensors::serialize(views, None).unwrap(),
        )
        .unwrap();
        let ln_eps =
            f32::from_bits(u32::from_str_radix(e["ln_eps"].as_str().unwrap(), 16).unwrap());
        let spec = attncheck::claims::load_spec(
            &small_theorems().join("positional/trained-model-claims.toml"),
        )
        .unwrap();
        let r = attncheck::claims::shape::resolve::<Claim>(&spec, Profile::Full).unwrap();
        let eps = r.scan().unwrap().1.clone();
        // 8 heads, a power of two: ALiBi's paper and code rules agree
        std::fs::write(
            dir.path().join("m.toml"),
            format!(
                "heads = {heads}\nlayers = {}\nln_eps = {:e}\nslopes = \"paper\"\n[tensors]\n\
                 embedding = \"emb\"\nln_gain = \"l{{l}}.ln1.w\"\nln_shift = \"l{{l}}.ln1.b\"\n\
                 q_weight = \"l{{l}}.q.w\"\nq_bias = \"l{{l}}.q.b\"\nk_weight = \"l{{l}}.k.w\"\n\
                 k_bias = \"l{{l}}.k.b\"\nlayout = \"in-out\"\n",
                layers.len(),
                f64::from(ln_eps)
            ),
        )
        .unwrap();
        let o = crate::util::bin()
            .current_dir(dir.path())
            .args([
                "window",
                "m.safetensors",
                "--config",
                "m.toml",
                "--json",
                "--out",
                "o",
            ])
            .args([
                "--epsilon",
                &eps.to_string(),
                "--precision",
                &spec.precision.to_string(),
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", crate::util::output_text(&o));
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(doc["sha256"], e["sha256"], "the same weights");
        let ws: Vec<String> = doc["windows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["window"].to_string())
            .collect();
        assert_eq!(
            ws.join(","),
            cert["hints"][format!("window.{name}")].as_str().unwrap(),
            "the windows of the claim's certificate"
        );
    }

    #[test]
    fn windows_verify_and_every_tampering_is_rejected() {
        let cert = certificate();
        let ok = verify(&cert).unwrap_or_else(|e| panic!("{e}"));
        assert!(ok.checked.as_expected());
        // two obligations per ALiBi model: 1 length × 2 seeds
        assert_eq!(ok.checked.decisions().len(), 4);
        assert!(matches!(ok.source, app::StatementSource::Spec(_)));
        let name = first_datum(&cert);
        let edit = |f: &dyn Fn(&mut serde_json::Value)| {
            let mut v = cert.clone();
            f(&mut v);
            v
        };

        // a weight changed, its hash kept: the kernel refuses the datum (bad input, exit 2)
        let tampered = edit(&|v| {
            let s = v["data"][&name]["layers"][0]["w_q"]
                .as_str()
                .unwrap()
                .to_string();
            let t = format!("{:08x}{}", 3.0f32.to_bits(), &s[8..]);
            v["data"][&name]["layers"][0]["w_q"] = t.into();
        });
        let e = verify(&tampered).err().expect("refused");
        assert_eq!(e.exit_code(), 2, "{e}");
        assert!(
            e.to_string().contains(&format!("data.{name}.sha256")),
            "{e}"
        );

        // a weight changed and re-hashed: the same statement about other weights, which
        // the kernel no longer proves (their Δ̄ is larger than the window allows)
        let rehashed = edit(&|v| {
            let e = &mut v["data"][&name];
            let s = e["layers"][1]["w_q"].as_str().unwrap().to_string();
            e["layers"][1]["w_q"] = format!("{:08x}{}", 4.0f32.to_bits(), &s[8..]).into();
            rehash(e);
            let entry: DataEntry = serde_json::from_value(e.clone()).unwrap();
            entry.to_datum().expect("a consistent datum");
        });
        let v = verify(&rehashed).expect("a well-formed certificate");
        assert!(
            !v.checked.as_expected(),
            "larger weights, same windows: not proven"
        );

        // an obligation's window or ε changed: not the rebuilt statement
        let f0 = cert["obligations"][0]["formula"]
            .as_str()
            .unwrap()
            .to_string();
        let w0 = cert["hints"][format!("window.{name}")]
            .as_str()
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .to_string();
        let needle = format!(" {w0}))");
        assert!(f0.contains(&needle), "{f0}");
        let bigger = (w0.parse::<u64>().unwrap() + 1000).to_string();
        for (what, g) in [
            ("window", f0.replacen(&needle, &format!(" {bigger}))"), 1)),
            ("epsilon", f0.replacen(" 1/100)", " 1/2)", 1)),
            ("vacuous", "(and)".to_string()),
        ] {
            assert_ne!(g, f0, "{what}");
            let t = edit(&|v| v["obligations"][0]["formula"] = g.clone().into());
            let r = rejected(&t, what);
            assert!(r.contains("obligations[0]"), "{what}: {r}");
        }
        // an obligation dropped
        let t = edit(&|v| {
            v["obligations"].as_array_mut().unwrap().pop();
        });
        rejected(&t, "dropped obligation");
        // the hint changed with the formula: the rebuilt statement is the tampered one, and
        // the kernel refutes its minimality
        let t = edit(&|v| {
            let key = format!("window.{name}");
            let h = v["hints"][&key].as_str().unwrap().to_string();
            let rest = h.split_once(',').unwrap().1.to_string();
            v["hints"][&key] = format!("{bigger},{rest}").into();
            v["obligations"][1]["formula"] = v["obligations"][1]["formula"]
                .as_str()
                .unwrap()
                .replacen(
                    &format!(" {}))", w0.parse::<u64>().unwrap() - 1),
                    &format!(" {}))", bigger.parse::<u64>().unwrap() - 1),
                    1,
                )
                .into();
            v["obligations"][0]["formula"] =
                f0.replacen(&needle, &format!(" {bigger}))"), 1).into();
        });
        let v = verify(&t).expect("the rebuilt statement of the tampered hint");
        assert!(
            !v.checked.as_expected(),
            "a window larger than the smallest is refuted"
        );
        // a hint missing: no statement to compare with
        let t = edit(&|v| {
            v["hints"]
                .as_object_mut()
                .unwrap()
                .remove(&format!("window.{name}"));
        });
        let r = rejected(&t, "hint missing");
        assert!(r.contains("missing"), "{r}");
        // the weights renamed: the statement has no weights for that model
        let t = edit(&|v| {
            let d = v["data"].as_object_mut().unwrap();
            let x = d.remove(&name).unwrap();
            d.insert("W_renamed".into(), x);
        });
        let r = rejected(&t, "renamed");
        assert!(r.contains("carries no attention weights"), "{r}");
        // the weights duplicated under another name: not part of the statement
        let t = edit(&|v| {
            let x = v["data"][&name].clone();
            v["data"]["W_copy"] = x;
        });
        let r = rejected(&t, "duplicated");
        assert!(r.contains("W_copy"), "{r}");
        // one model's weights swapped for another's: the data differ from the rebuilt ones
        // only in content, so the obligations about the first model now bound the second
        let names: Vec<String> = cert["data"].as_object().unwrap().keys().cloned().collect();
        let t = edit(&|v| {
            let a = v["data"][&names[0]].clone();
            let b = v["data"][&names[1]].clone();
            v["data"][&names[0]] = b;
            v["data"][&names[1]] = a;
        });
        let v = verify(&t).expect("well-formed");
        assert!(
            !v.checked.as_expected(),
            "swapped weights: their windows do not match"
        );
    }
}

/// The scan's certificate carries the weights of every ALiBi model (9 in the committed
/// spec) and states layer 0's windows at `attn-byte-logit-range` and the deeper layers'
/// at `attn-row-logit-range`; the budget bounds the whole certificate (issue #38). For
/// every trained ALiBi model stored so far (bench/sweeps/trained-scan/shards), the cost
/// of reading its datum and computing both bounds for every head, times the number of
/// models, stays within a fifth of the budget (measured: the charge is 3–5× the CPU time,
/// bench/charges; the windows' own formulas cost little beside it).
#[cfg(feature = "lm")]
#[test]
fn the_stored_scan_models_cost_a_fraction_of_the_budget() {
    use attncheck::claims::positional::trained_model_claims as tmc;
    use attncheck::kernel::expr::{parse, work_of_all, MAX_WORK};
    let dir = crate::util::root().join("bench/sweeps/trained-scan/shards");
    let r = crate::util::trained_model_claims_full();
    let models = tmc::window::window_jobs(&r.params).len();
    assert_eq!(models, 9, "three ALiBi seeds at three training lengths");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let v: serde_json::Value = serde_json::from_slice(&crate::util::gunzip(&path)).unwrap();
        for (key, unit) in v["record"]["results"].as_object().unwrap() {
            if !key.contains("alibi") {
                continue;
            }
            let r: attncheck_lm::job::JobResult =
                serde_json::from_value(unit["result"].clone()).unwrap();
            let w = r.attention_weights().expect("kept").unwrap();
            let datum = tmc::weights_datum(&w).unwrap();
            let Datum::Attn(a) = &datum else {
                panic!("{key}: not attention weights")
            };
            let mut data = Data::new();
            data.insert("W".to_string(), datum.clone());
            let fs: Vec<_> = (0..a.heads())
                .flat_map(|h| {
                    [
                        format!("(> (attn-byte-logit-range W {h}) 0)"),
                        format!("(> (attn-row-logit-range W 1 {h}) 0)"),
                    ]
                })
                .map(|f| parse(&f).unwrap())
                .collect();
            let all = *work_of_all(fs.iter(), &data, 128).last().unwrap();
            assert!(
                all.saturating_mul(models as u128) <= MAX_WORK / 5,
                "{key}: {all} units, × {models} models"
            );
            seen += 1;
        }
    }
    assert!(seen >= 1, "no stored ALiBi model in {}", dir.display());
}
