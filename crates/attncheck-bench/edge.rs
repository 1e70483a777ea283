//! Certificates that stress one operator each, sized by a parameter N: what the
//! charges bench (`benches/charges.rs`) times per unit of work, and what the edge
//! tests (tests/it/budget.rs, through `#[path]`) grow to the edge of the budget of
//! one certificate (`expr::MAX_WORK`) and one step past it. One source for both, so
//! that the operators the bench measured are the ones the tests hold to the budget.

#![allow(dead_code)]

use attncheck::kernel::expr;
use serde_json::{json, Value};
use std::path::Path;

/// One stressed operator: its certificate (formulas and data) for a size N.
pub struct Case {
    /// The operator (or group) it stresses.
    pub op: &'static str,
    /// The certificate's obligations (name, formula) and data for N.
    pub build: Box<dyn Fn(u64) -> (Vec<String>, Value) + Sync>,
    /// The largest N the case's data or ranges allow.
    pub max_n: u64,
}

/// How many times a case's formula is repeated (an outer `forall` over it): a range is
/// at most 5·10⁷ long, and an operator charged a few units per step would not reach
/// the budget in one range.
const REPEAT: u64 = 64;

fn repeated(f: String) -> String {
    format!("(forall rep 1 {REPEAT} {f})")
}

fn one(op: &'static str, max_n: u64, f: impl Fn(u64) -> String + Sync + 'static) -> Case {
    Case {
        op,
        build: Box::new(move |n| (vec![repeated(f(n))], json!({}))),
        max_n,
    }
}

fn with_data(
    op: &'static str,
    max_n: u64,
    data: Value,
    f: impl Fn(u64) -> String + Sync + 'static,
) -> Case {
    Case {
        op,
        build: Box::new(move |n| (vec![repeated(f(n))], data.clone())),
        max_n,
    }
}

/// A ±1 sign matrix datum of n rows and d columns (a fixed pseudo-random pattern).
pub fn signs(n: usize, d: usize) -> Value {
    let w = d.div_ceil(64);
    let rows: Vec<String> = (0..n)
        .map(|l| {
            (0..w)
                .map(|k| {
                    let bits = (d - 64 * k).min(64);
                    let mut v = (l as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (k as u64);
                    if bits < 64 {
                        v &= (1u64 << bits) - 1;
                    }
                    format!("{v:016x}")
                })
                .collect()
        })
        .collect();
    json!({"kind": "signs", "n": n, "d": d, "rows": rows})
}

/// A row-sparse datum with `per` entries per row (columns i, i + 1, …, mod n).
pub fn sparse(n: usize, per: usize) -> Value {
    let rows: Vec<Value> = (0..n)
        .map(|i| {
            let mut cols: Vec<usize> = (0..per).map(|k| (i + k) % n).collect();
            cols.sort_unstable();
            cols.dedup();
            Value::Array(
                cols.iter()
                    .map(|&c| json!([c, format!("{}/{}", c % 7 + 1, c % 5 + 2)]))
                    .collect(),
            )
        })
        .collect();
    json!({"kind": "sparse", "n": n, "rows": rows})
}

/// A layer datum: `runs` configurations of n tokens in d dimensions, `steps` steps.
pub fn layer(runs: usize, n: usize, d: usize, steps: u64) -> Value {
    let entry = |tag: usize, k: usize| format!("{}/{}", (k + tag) % 7 + 1, (k + 3 * tag) % 5 + 4);
    let m = |rows: usize, tag: usize| -> Vec<Vec<String>> {
        (0..rows)
            .map(|i| (0..d).map(|j| entry(tag, i * d + j)).collect())
            .collect()
    };
    let tokens: Vec<_> = (0..runs).map(|r| m(n, 3 + r)).collect();
    json!({"kind": "layer", "form": "layer", "n": n, "d": d, "dt": "1/64", "steps": steps,
        "q": m(d, 0), "k": m(d, 1), "v": m(d, 2), "tokens": tokens})
}

/// An `attn-weights` datum of `layers` layers, hidden size d and `heads` heads, with
/// small dyadic weights (the SHA-256 the kernel checks computed by its own digest).
pub fn attn(layers: usize, d: usize, heads: usize) -> Value {
    let value = |l: usize, part: usize, k: usize| -> f32 {
        ((l * 31 + part * 7 + k * 13) % 17) as f32 / 64.0 - 0.125
    };
    let sizes = [d, d, d * d, d, d * d, d];
    let bits: Vec<Vec<u32>> = (0..layers)
        .flat_map(|l| {
            sizes
                .iter()
                .enumerate()
                .map(move |(part, &n)| (0..n).map(|k| value(l, part, k).to_bits()).collect())
        })
        .collect();
    let sha = attncheck::kernel::weights::digest(&bits);
    let names = attncheck::kernel::weights::PARTS;
    let layers: Vec<Value> = bits
        .chunks(6)
        .map(|parts| {
            names
                .iter()
                .zip(parts)
                .map(|(n, p)| {
                    let hex: String = p.iter().map(|b| format!("{b:08x}")).collect();
                    (n.to_string(), Value::from(hex))
                })
                .collect::<serde_json::Map<_, _>>()
                .into()
        })
        .collect();
    json!({"kind": "attn-weights", "hidden": d, "heads": heads, "sha256": sha, "layers": layers})
}

/// An `attn-weights` datum with the embedding and ε_LN, and values as a trained model's:
/// full 24-bit mantissas (pseudo-random), γ near 1, the rest of magnitude 2^top down to
/// 2^(top − spread + 1) (a trained model: top = −3, spread = 10), the embedding 8 times
/// that, ε_LN = 10⁻⁵ — the widths the cost of bounds 4 and 5 grows with.
pub fn attn_input(layers: usize, d: usize, heads: usize, top: i32, spread: u64) -> Value {
    let mut seed = 0x5eed_u64 + (layers * 131 + d * 7 + heads) as u64;
    let mut value = |centre: f32| -> u32 {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let m = 1.0 + ((seed >> 40) & 0xff_ffff) as f32 / 16_777_216.0;
        let e = ((seed >> 20) % spread) as i32;
        let sign = if (seed >> 11) & 1 == 1 { -1.0 } else { 1.0 };
        (centre + sign * m * 2f32.powi(top - e)).to_bits()
    };
    let sizes = [d, d, d * d, d, d * d, d];
    let mut bits: Vec<Vec<u32>> = Vec::new();
    for _ in 0..layers {
        for (part, &n) in sizes.iter().enumerate() {
            let centre = if part == 0 { 1.0 } else { 0.0 };
            bits.push((0..n).map(|_| value(centre)).collect());
        }
    }
    bits.push(vec![1e-5f32.to_bits()]);
    bits.push(
        (0..256 * d)
            .map(|_| (f32::from_bits(value(0.0)) * 8.0).to_bits())
            .collect(),
    );
    let sha = attncheck::kernel::weights::digest(&bits);
    let hex = |p: &[u32]| -> String { p.iter().map(|b| format!("{b:08x}")).collect() };
    let names = attncheck::kernel::weights::PARTS;
    let layer_entries: Vec<Value> = bits[..6 * layers]
        .chunks(6)
        .map(|parts| {
            names
                .iter()
                .zip(parts)
                .map(|(n, p)| (n.to_string(), Value::from(hex(p))))
                .collect::<serde_json::Map<_, _>>()
                .into()
        })
        .collect();
    json!({"kind": "attn-weights", "hidden": d, "heads": heads, "sha256": sha,
        "layers": layer_entries, "ln_eps": hex(&bits[6 * layers]), "embedding": hex(&bits[6 * layers + 1])})
}

/// The body of a stressed interval operation: x = √2 is an enclosure, so every
/// operation on it runs in MPFR (an exact argument would stay rational). Every
/// formula here holds at every value of its range, so that `forall` runs it whole
/// (it stops at the first false one).
fn iv(body: &str) -> impl Fn(u64) -> String + Sync + 'static {
    let body = body.to_string();
    move |n| format!("(let x (sqrt 2) (forall i 1 {n} (< -1000000000000 {body})))")
}

/// Every operator, with a certificate that its cost dominates.
pub fn cases() -> Vec<Case> {
    let mut v = vec![
        one("+ (exact)", 50_000_000, |n| {
            format!("(forall i 1 {n} (> (+ i 1/3) 0))")
        }),
        one("* (exact)", 50_000_000, |n| {
            format!("(forall i 1 {n} (> (* i 2/3) 0))")
        }),
        one("/ (exact)", 50_000_000, |n| {
            format!("(forall i 1 {n} (> (/ 2/3 i) 0))")
        }),
        one("pow (exact)", 50_000_000, |n| {
            format!("(forall i 1 {n} (> (pow i 9) 0))")
        }),
        one("+", 50_000_000, iv("(+ x i)")),
        one("-", 50_000_000, iv("(- x i)")),
        one("*", 50_000_000, iv("(* x i)")),
        one("/", 50_000_000, iv("(/ x i)")),
        one("neg abs", 50_000_000, iv("(abs (neg (* x i)))")),
        one("min max", 50_000_000, iv("(min (max x i) i)")),
        one("ceil floor", 50_000_000, iv("(ceil (floor (* x i)))")),
        one("pow", 50_000_000, iv("(pow (* x i) 9)")),
        one("exp", 50_000_000, iv("(exp (/ x i))")),
        one("ln", 50_000_000, iv("(ln (* x i))")),
        one("sqrt", 50_000_000, iv("(sqrt (* x i))")),
        one("sin", 50_000_000, iv("(sin (* x i))")),
        one("cos", 50_000_000, iv("(cos (* x i))")),
        one("pi", 50_000_000, iv("(* pi i)")),
        one("let", 50_000_000, |n| {
            format!("(let x (sqrt 2) (forall i 1 {n} (let y (* x i) (> y -1))))")
        }),
        one("sum", 50_000_000, |n| {
            format!("(let x (sqrt 2) (> (sum i 1 {n} (* x i)) -1))")
        }),
        one("and not", 50_000_000, |n| {
            format!("(let x (sqrt 2) (forall i 1 {n} (not (and (< i x) (< x i)))))")
        }),
        one("sandwich-centred D = 4096", 50_000_000, |n| {
            format!("(forall r 1 {n} (< (sandwich-centred 4096 0 r) 1))")
        }),
        one("sandwich-centred D = 64", 50_000_000, |n| {
            format!("(forall r 1 {n} (< (sandwich-centred 64 0 r) 1))")
        }),
        one("band-reach", 50_000_000, |n| {
            format!("(forall i 1 {n} (>= (band-reach 1024 63 4) 0))")
        }),
        one("band-reach-count", 50_000_000, |n| {
            format!("(forall i 1 {n} (>= (band-reach-count 1024 63 4) 0))")
        }),
        with_data(
            "gram-max-abs",
            50_000_000,
            json!({"S": signs(1024, 256)}),
            |n| format!("(forall i 1 {n} (> (gram-max-abs S) 0))"),
        ),
        with_data("rows cols", 50_000_000, json!({"S": signs(4, 64)}), |n| {
            format!("(forall i 1 {n} (> (+ (rows S) (cols S)) 0))")
        }),
    ];
    let sb = json!({"S": signs(256, 128), "B": sparse(256, 4)});
    for op in [
        "err-max S B",
        "lemma-a S B",
        "lemma-b S B",
        "lemma-a-row S B 1/7",
        "lemma-b-row S B 1/7",
    ] {
        let name: &'static str = op.split(' ').next().unwrap_or(op);
        let f = format!("({op})");
        v.push(with_data(name, 50_000_000, sb.clone(), move |n| {
            format!("(forall i 1 {n} (> {f} -1))")
        }));
    }
    let b = json!({"B": sparse(1024, 8)});
    for op in [
        "row-sum-max",
        "row-nnz-max",
        "entry-min",
        "entry-max",
        "entry-sum",
    ] {
        v.push(with_data(op, 50_000_000, b.clone(), move |n| {
            format!("(forall i 1 {n} (> ({op} B) -1))")
        }));
    }
    // the layer operations: their iteration is cached in the datum, so N grows the
    // datum's steps (and the formula asks at every step), up to the datum's own limit
    // (runs·steps·n²·d ≤ layer_data::MAX_COST = 2^24), which stops them within the
    // budget at 128 bits: the largest layer certificate of one datum there
    const TOKENS: usize = 16;
    let steps_max = |runs: usize| {
        (attncheck::kernel::layer_data::MAX_COST / (runs * TOKENS * TOKENS * 4) as u128) as u64
    };
    for (op, runs, args) in [
        ("layer-max-sqnorm", 1, "0 k"),
        ("layer-max-sqdist", 2, "0 1 k"),
        ("layer-partition", 1, "0 k"),
        ("layer-coord", 1, "0 k 0 0"),
    ] {
        v.push(Case {
            op,
            build: Box::new(move |n| {
                (
                    vec![format!("(forall k 0 {n} (> ({op} X {args}) 0))")],
                    json!({"X": layer(runs, TOKENS, 4, n)}),
                )
            }),
            max_n: steps_max(runs),
        });
    }
    for op in ["layer-dual-sup", "layer-dual-inf"] {
        v.push(Case {
            op,
            build: Box::new(move |n| {
                (
                    vec![format!("(forall k 0 {n} (> ({op} X 0 k 1 2 0) -1000000))")],
                    json!({"X": layer(1, TOKENS, 4, n)}),
                )
            }),
            max_n: steps_max(1),
        });
    }
    for op in ["layer-v-frob2", "layer-qk-frob2", "layer-dt"] {
        v.push(with_data(
            op,
            50_000_000,
            json!({"X": layer(1, 4, 8, 1)}),
            move |n| format!("(forall i 1 {n} (> ({op} X) 0))"),
        ));
    }
    let w = json!({"W": attn(2, 64, 8)});
    v.push(with_data("attn-ln-bound", 50_000_000, w.clone(), |n| {
        format!("(forall i 1 {n} (> (attn-ln-bound W 1) 0))")
    }));
    v.push(with_data("attn-logit-range", 50_000_000, w, |n| {
        format!("(forall i 1 {n} (> (attn-logit-range W 1 (- i (* 8 (floor (/ i 8))))) 0))")
    }));
    // bounds 4 and 5: computed once per datum (the scan's model size, d = 64, 8 heads,
    // 2 layers: the once-only cost dominates; values of a trained model's widths, and
    // values from 2^60 down to 2^-59), then per evaluation (a small model, d = 8)
    let cases: [(&'static str, &'static str, Value, usize, usize); 3] = [
        (
            "attn-byte-logit-range (d = 64)",
            "attn-row-logit-range (d = 64)",
            json!({"W": attn_input(2, 64, 8, -3, 10)}),
            8,
            1,
        ),
        (
            "attn-byte-logit-range (d = 64, wide values)",
            "attn-row-logit-range (d = 64, wide values)",
            json!({"W": attn_input(2, 64, 8, 60, 120)}),
            8,
            1,
        ),
        (
            "attn-byte-logit-range (d = 8)",
            "attn-row-logit-range (d = 8)",
            json!({"W": attn_input(1, 8, 2, -3, 10)}),
            2,
            0,
        ),
    ];
    for (name, row_name, w, heads, layer) in cases {
        v.push(with_data(name, 50_000_000, w.clone(), move |n| {
            format!("(forall i 1 {n} (> (attn-byte-logit-range W (- i (* {heads} (floor (/ i {heads}))))) 0))")
        }));
        v.push(with_data(row_name, 50_000_000, w, move |n| {
            format!("(forall i 1 {n} (> (attn-row-logit-range W {layer} (- i (* {heads} (floor (/ i {heads}))))) 0))")
        }));
    }
    // many small obligations: the budget of one certificate, not of one formula
    v.push(Case {
        op: "many obligations",
        build: Box::new(|n| {
            (
                (0..n)
                    .map(|k| {
                        format!("(let x (sqrt 2) (forall i 1 1000 (> (exp (/ x (+ i {k}))) -1)))")
                    })
                    .collect(),
                json!({}),
            )
        }),
        max_n: 200_000,
    });
    v
}

/// The certificate JSON of `obligations` over `data` (`--no-spec`: any claim ID).
pub fn certificate(obligations: &[String], data: &Value, precision: u32) -> Value {
    let obligations: Vec<Value> = obligations
        .iter()
        .enumerate()
        .map(|(k, f)| json!({"name": format!("o{k}"), "formula": f, "expect": "holds"}))
        .collect();
    json!({"format": attncheck::certificate::FORMAT, "claim": "bench/edge", "profile": "quick",
        "precision": precision, "obligations": obligations, "data": data})
}

/// The cost of the certificate of `case` at size n at `precision` bits, as `check`
/// computes it before evaluating.
pub fn cost(case: &Case, n: u64, precision: u32) -> u128 {
    let (formulas, data) = (case.build)(n);
    let c = certificate(&formulas, &data, precision);
    let cert = attncheck::certificate::parse(Path::new("edge"), &c.to_string())
        .unwrap_or_else(|e| panic!("{}: {e}", case.op));
    let st = cert.statement(Path::new("edge")).expect("statement");
    let sexps: Vec<_> = st
        .obligations
        .iter()
        .map(|o| expr::parse(&o.formula).expect("parses"))
        .collect();
    *expr::work_of_all(sexps.iter(), &st.data, precision)
        .last()
        .expect("an obligation")
}

/// The largest n ≤ max_n whose certificate is within the budget (`None` when even n = 1
/// is not), by bisection: the cost grows with n.
pub fn edge_of(case: &Case, precision: u32) -> Option<u64> {
    if cost(case, 1, precision) > expr::MAX_WORK {
        return None;
    }
    let (mut lo, mut hi) = (1u64, case.max_n);
    if cost(case, hi, precision) <= expr::MAX_WORK {
        return Some(hi);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if cost(case, mid, precision) <= expr::MAX_WORK {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}
