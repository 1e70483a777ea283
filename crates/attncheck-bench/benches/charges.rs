//! What each operator of the certificate language costs per unit of work that the
//! budget charges it (issue #38: "every operator's charge comes from a measured
//! cost"). For every operator, a formula dominated by it is decided by the kernel
//! (`kernel::check`, the function `verify` calls) at the precisions a spec can ask
//! for; its charge is `expr::work_of_all` of the same statement. The ratio
//! (measured ns) / (charged units · 100 ns) must stay ≤ 2 for every operator:
//! a unit is documented as about 0.1 µs, and no operator may cost more than twice
//! its charge, so a certificate at the budget verifies in bounded time.
//!
//! `cargo bench -p attncheck-bench --bench charges` (one thread: `RAYON_NUM_THREADS=1`
//! is set by the bench itself) prints a Markdown table; bench/charges.md records it.
//! `-- --quick` measures at 128 and 4096 bits only, `-- --bits=256,512` at those; `-- OP…`
//! only the operators named.

use attncheck::kernel::{check, Statement};
use serde_json::Value;
use std::path::Path;

#[path = "../edge.rs"]
mod edge;

/// Nanoseconds of one unit of work, as documented beside `expr::MAX_WORK`.
const NS_PER_UNIT: f64 = 100.0;

fn statement((formulas, data): (Vec<String>, Value), precision: u32) -> Statement {
    let c = edge::certificate(&formulas, &data, precision);
    let cert = attncheck::certificate::parse(Path::new("bench"), &c.to_string())
        .unwrap_or_else(|e| panic!("{:?}: {e}", formulas.first()));
    cert.statement(Path::new("bench")).expect("statement")
}

/// CPU time of every thread of this process so far, in seconds (the sum of
/// /proc/self/task/*/schedstat's first field, nanoseconds on a CPU): what a unit
/// costs does not depend on what else the machine runs, as wall time does.
fn cpu_seconds() -> f64 {
    let mut ns: u128 = 0;
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for t in tasks.flatten() {
            if let Ok(s) = std::fs::read_to_string(t.path().join("schedstat")) {
                ns += s
                    .split_whitespace()
                    .next()
                    .and_then(|x| x.parse::<u128>().ok())
                    .unwrap_or(0);
            }
        }
    }
    ns as f64 * 1e-9
}

fn main() {
    std::env::set_var("RAYON_NUM_THREADS", "1");
    let quick = std::env::args().any(|a| a == "--quick");
    // `-- --bits=256,512`: these precisions instead
    let bits: Option<Vec<u32>> = std::env::args()
        .find_map(|a| a.strip_prefix("--bits=").map(str::to_string))
        .map(|b| b.split(',').filter_map(|x| x.parse().ok()).collect());
    let precisions: &[u32] = match &bits {
        Some(b) => b,
        None if quick => &[128, 4096],
        None => &[128, 1024, 4096, 16384],
    };
    println!("| operator | bits | N | charged units | CPU seconds | ns per unit | × charge |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut worst: (f64, String) = (0.0, String::new());
    // operators whose name contains one of the arguments (all without one)
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    for case in edge::cases() {
        if !only.is_empty() && !only.iter().any(|o| case.op.contains(o.as_str())) {
            continue;
        }
        for &p in precisions {
            // N such that the charge is about 3·10⁶ units (0.3 s at the documented rate)
            let per = |n: u64| edge::cost(&case, n, p);
            let (c1, c2) = (per(1), per(2));
            let step = c2.saturating_sub(c1).max(1);
            let n = ((3_000_000u128.saturating_sub(c1)) / step).clamp(1, case.max_n as u128) as u64;
            let charged = edge::cost(&case, n, p);
            let mut best = f64::INFINITY;
            for _ in 0..3 {
                // a fresh statement each time, as `verify` reads one: the layer trace,
                // the attention bounds and the sandwich values are cached in the data
                // once computed, and a second check of the same statement timed only
                // the lookups (session 24: `layer-*` measured 0.000 s at N = 1024)
                let st = statement((case.build)(n), p);
                let t = cpu_seconds();
                let checked = check(&st, p).expect("within the budget");
                // a false one would stop its `forall` early and time less than is charged
                assert!(
                    checked
                        .decisions()
                        .iter()
                        .all(|d| d.result() != attncheck::kernel::Certainty::False),
                    "{}: every formula of the bench holds",
                    case.op
                );
                best = best.min(cpu_seconds() - t);
            }
            let ns = best * 1e9 / charged as f64;
            let ratio = ns / NS_PER_UNIT;
            if ratio > worst.0 {
                worst = (ratio, format!("{} at {p} bits", case.op));
            }
            println!(
                "| `{}` | {p} | {n} | {charged} | {best:.3} | {ns:.1} | {ratio:.2}{} |",
                case.op,
                if ratio > 2.0 { " **over 2×**" } else { "" }
            );
        }
    }
    println!("\nWorst: {:.2}× its charge ({}).", worst.0, worst.1);
}
