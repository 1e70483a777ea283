//! The untrusted logit-range search of `attncheck_lm::probe` on the ALiBi models of the
//! trained scan's shard files (issue #40; bench/sweeps/trained-scan/logit-search/run.sh):
//!
//!     cargo run --release -p attncheck-lm --example logit_search -- LENGTHS RESTARTS SWEEPS SEED SHARD.json…
//!
//! LENGTHS comma-separated. For every model with stored weights, every head of every layer
//! ≥ 1 (layer 0's exact range is the kernel's), it searches, re-evaluates the found input
//! with the model's own forward pass in f64 (`content_logit_ranges`), and prints one
//! tab-separated line: datum name, layer, head, the search's range, the forward pass's
//! range, the query, the bytes in hex. The model's bias is ALiBi's geometric slopes
//! m_h = 2^(−8(h+1)/H) (the scan's `alibi-paper` rule).
use attncheck_lm::job::StoredWeights;
use attncheck_lm::model::{tokens, Config, Position};
use attncheck_lm::probe::{search, Net, Search};
use attncheck_lm::DType;
use std::sync::Arc;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 5 {
        eprintln!("usage: logit_search LENGTHS RESTARTS SWEEPS SEED SHARD.json…");
        std::process::exit(2);
    }
    let lengths: Vec<usize> = a[0]
        .split(',')
        .map(|x| x.parse().expect("length"))
        .collect();
    let s = Search {
        lengths: lengths.clone(),
        restarts: a[1].parse().expect("restarts"),
        sweeps: a[2].parse().expect("sweeps"),
        seed: a[3].parse().expect("seed"),
    };
    let max_len = *lengths.iter().max().expect("a length");
    for path in &a[4..] {
        let text = std::fs::read_to_string(path).expect("shard file");
        let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let results = v["record"]["results"].as_object().expect("results");
        for (key, r) in results {
            let Some(w) = r["result"].get("weights").filter(|w| !w.is_null()) else {
                continue;
            };
            let w: StoredWeights = serde_json::from_value(w.clone()).expect("weights");
            // key: "L32 alibi-paper-s1 #18 @128"
            let mut parts = key.split(' ');
            let name = format!(
                "W_{}_{}",
                parts.next().unwrap_or("?"),
                parts.next().unwrap_or("?")
            );
            let heads = w.heads;
            let hidden = w.tensors["emb"].shape[1];
            let cfg = Config {
                hidden,
                layers: w.layers,
                heads,
                position: Position::Bias(Arc::new(move |h, r| {
                    -(2f64).powf(-8.0 * (h + 1) as f64 / heads as f64) * r as f64
                })),
                dtype: DType::F64,
            };
            let model = w.model(cfg).expect("model");
            let net = Net::of(&model, max_len).expect("net");
            for l in 1..w.layers {
                for h in 0..heads {
                    let f = search(&net, l, h, &s).expect("search");
                    let t = tokens(&[&f.bytes]).expect("tokens");
                    let again = model.content_logit_ranges(&t).expect("forward")[l][h];
                    let hex: String = f.bytes.iter().map(|b| format!("{b:02x}")).collect();
                    println!(
                        "{name}\t{l}\t{h}\t{:.6}\t{:.6}\t{}\t{hex}",
                        f.range, again, f.query
                    );
                }
            }
        }
    }
}
