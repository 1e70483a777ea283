//! The untrusted logit-range search (`attncheck_lm::probe`, issue #40): its evaluation is
//! the model's (the forward pass in f64 gives the same ranges), the range it reports is
//! attained by the input it returns, it is a function of its seed, and the committed search
//! on the scan's first ALiBi model re-evaluates to what it recorded.

use attncheck_lm::job::StoredWeights;
use attncheck_lm::model::{tokens, Config, Model, Position};
use attncheck_lm::probe::{search, Net, Search};
use attncheck_lm::{DType, SplitMix64};
use std::path::Path;
use std::sync::Arc;

fn alibi(heads: usize) -> Position {
    Position::Bias(Arc::new(move |h, r| {
        -(2f64).powf(-8.0 * (h + 1) as f64 / heads as f64) * r as f64
    }))
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0)
}

/// A random model with weights large enough that attention is far from uniform.
fn model() -> Model {
    let cfg = Config {
        hidden: 16,
        layers: 2,
        heads: 2,
        position: alibi(2),
        dtype: DType::F64,
    };
    let m = Model::new(cfg.clone(), 3).unwrap();
    let w = StoredWeights::of(&m).unwrap();
    // scale the projections up (the initialisation's 0.02 makes every logit tiny)
    let mut map = std::collections::BTreeMap::new();
    for (name, t) in &w.tensors {
        let mut v = w.get(name, &t.shape).unwrap();
        if !name.contains("ln") {
            v.iter_mut().for_each(|x| *x *= 40.0);
        }
        map.insert(
            name.clone(),
            attncheck_lm::Tensor::from_vec(v, t.shape.clone(), &attncheck_lm::Device::Cpu).unwrap(),
        );
    }
    Model::from_tensors(cfg, map, "test").unwrap()
}

#[test]
fn the_search_evaluates_as_the_forward_pass_does() {
    let m = model();
    let net = Net::of(&m, 12).unwrap();
    let mut rng = SplitMix64(5);
    for n in [1, 3, 12] {
        let bytes: Vec<u8> = (0..n).map(|_| rng.below(256) as u8).collect();
        let want = m.content_logit_ranges(&tokens(&[&bytes]).unwrap()).unwrap();
        for (l, row) in want.iter().enumerate() {
            for (h, &w) in row.iter().enumerate() {
                let (got, _) = net.range(&bytes, l, h);
                assert!(
                    close(got, w, 1e-10),
                    "n {n}, layer {l}, head {h}: {got} vs {w}"
                );
            }
        }
    }
}

#[test]
fn the_found_range_is_attained_and_a_function_of_the_seed() {
    let m = model();
    let net = Net::of(&m, 8).unwrap();
    let s = Search {
        lengths: vec![3, 8],
        restarts: 2,
        sweeps: 2,
        seed: 7,
    };
    for h in 0..2 {
        let a = search(&net, 1, h, &s).unwrap();
        assert_eq!(
            a,
            search(&net, 1, h, &s).unwrap(),
            "head {h}: not repeatable"
        );
        let again = m
            .content_logit_ranges(&tokens(&[&a.bytes]).unwrap())
            .unwrap()[1][h];
        assert!(
            close(a.range, again, 1e-10),
            "head {h}: {} vs {again}",
            a.range
        );
        assert_eq!(net.range(&a.bytes, 1, h), (a.range, a.query));
        // at least as large as random inputs of its lengths
        let mut rng = SplitMix64(9);
        for n in [3, 8] {
            let b: Vec<u8> = (0..n).map(|_| rng.below(256) as u8).collect();
            assert!(
                net.range(&b, 1, h).0 <= a.range,
                "head {h}: a random input beats it"
            );
        }
    }
    let other = Search {
        seed: 8,
        ..s.clone()
    };
    assert!(search(&net, 1, 0, &other).is_ok());
    assert!(search(&net, 2, 0, &s).is_err(), "no layer 2");
    assert!(
        search(
            &net,
            1,
            0,
            &Search {
                lengths: vec![9],
                ..s
            }
        )
        .is_err(),
        "longer than the bias table"
    );
}

/// found.tsv's first entry (the scan's first ALiBi model, L_tr = 32, seed 1; layer 1, head 0):
/// its bytes give the recorded range under the model's forward pass in f64, and the spec's
/// probes list them.
#[test]
fn the_committed_search_entry_is_attained() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tsv =
        std::fs::read_to_string(root.join("bench/sweeps/trained-scan/logit-search/found.tsv"))
            .unwrap();
    let line = tsv
        .lines()
        .find(|l| l.starts_with("W_L32_alibi-paper-s1\t1\t0\t"))
        .expect("the entry of W_L32_alibi-paper-s1, layer 1, head 0");
    let f: Vec<&str> = line.split('\t').collect();
    let (searched, forward): (f64, f64) = (f[3].parse().unwrap(), f[4].parse().unwrap());
    let bytes: Vec<u8> = (0..f[6].len() / 2)
        .map(|i| u8::from_str_radix(&f[6][2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let spec = std::fs::read_to_string(root.join("theorems/positional/trained-model-claims.toml"))
        .unwrap();
    assert!(
        spec.contains(&format!("\"{}\"", f[6])),
        "the spec's probes lack {}",
        f[6]
    );
    let o =
        std::process::Command::new("gunzip")
            .arg("-c")
            .arg(root.join(
                "bench/sweeps/trained-scan/shards/trained-model-claims.shard-1-of-72.json.gz",
            ))
            .output()
            .expect("gunzip (gzip) is installed");
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = v["record"]["results"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(k, _)| k.starts_with("L32 alibi-paper-s1 "))
        .expect("shard 1 holds L32 alibi-paper-s1")
        .1;
    let w: StoredWeights = serde_json::from_value(r["result"]["weights"].clone()).unwrap();
    let cfg = Config {
        hidden: 64,
        layers: 2,
        heads: 8,
        position: alibi(8),
        dtype: DType::F64,
    };
    let m = w.model(cfg).unwrap();
    let got = m.content_logit_ranges(&tokens(&[&bytes]).unwrap()).unwrap()[1][0];
    assert!(close(got, forward, 1e-6), "{got} vs the recorded {forward}");
    assert!(
        close(got, searched, 1e-6),
        "{got} vs the search's {searched}"
    );
    assert_eq!(
        f[5].parse::<usize>().unwrap(),
        Net::of(&m, bytes.len()).unwrap().range(&bytes, 1, 0).1
    );
}
