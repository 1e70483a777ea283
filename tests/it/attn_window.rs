//! The windows of the trained-model claim over the `attn-weights` datum: certificate and
//! `verify`. The datum and its operations (`attn-ln-bound`, `attn-logit-range`: a
//! hand-built model, hostile data, containment of the f64 forward computation) are
//! tested in the kernel crate (crates/attncheck-kernel/tests/conformance/weights.rs),
//! whose model helpers (`weights_model`) these tests share.

use crate::weights_model::{datum, Layer};
use attncheck::certificate::DataEntry;
use attncheck::kernel::expr::{Data, Datum};
use attncheck::kernel::weights::{digest, AttnWeights};

// ----- the windows of the trained-model claim: certificate and verify -----

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

    /// A certificate of the full profile's windows for synthetic weights, as the run makes
    /// it: the search's hints, the statement built with the weights carried, serialised.
    fn certificate() -> serde_json::Value {
        let spec = attncheck::claims::load_spec(&crate::util::spec_path(ID)).unwrap();
        let r = attncheck::claims::shape::resolve::<Claim>(&spec, Profile::Full).unwrap();
        let (p, eps) = (&r.params, r.scan().unwrap().1);
        let mut data = Data::new();
        let mut hints = Hints::new();
        for (k, j) in window::window_jobs(p).iter().enumerate() {
            let layers: Vec<Layer> = (0..p.layers)
                .map(|l| synthetic(p.hidden, (k * 10 + l) as u64))
                .collect();
            data.insert(
                window::datum_name(j),
                Datum::Attn(datum(p.hidden, p.heads, &layers)),
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
        app::verify_file(&p, Some(&crate::util::root().join("theorems")))
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
        let at = f.find("(attn-logit-range ").unwrap() + "(attn-logit-range ".len();
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
        assert_eq!(ok.checked.decisions().len(), 18);
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

    #[test]
    fn windows_verify_and_every_tampering_is_rejected() {
        let cert = certificate();
        let ok = verify(&cert).unwrap_or_else(|e| panic!("{e}"));
        assert!(ok.checked.as_expected());
        // two obligations per ALiBi model: 3 lengths × 3 seeds
        assert_eq!(ok.checked.decisions().len(), 18);
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
            let entry: DataEntry = serde_json::from_value(v["data"][&name].clone()).unwrap();
            let Datum::Attn(w) = entry.to_datum().unwrap() else {
                unreachable!()
            };
            let mut hx = w.hex().to_vec();
            hx[0][2] = format!("{:08x}{}", 4.0f32.to_bits(), &hx[0][2][8..]);
            let bits: Vec<Vec<u32>> = hx
                .iter()
                .flat_map(|l| {
                    l.iter().map(|s| {
                        (0..s.len() / 8)
                            .map(|i| u32::from_str_radix(&s[8 * i..8 * i + 8], 16).unwrap())
                            .collect()
                    })
                })
                .collect();
            let w2 = AttnWeights::new(w.hidden(), w.heads(), &digest(&bits), hx).unwrap();
            v["data"][&name] =
                serde_json::to_value(DataEntry::from_datum(&Datum::Attn(w2))).unwrap();
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
