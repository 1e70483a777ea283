//! Every operator's certificate at the edge of the budget of one certificate
//! (`expr::MAX_WORK`), decided by the kernel as `verify` decides it, timed (issue #38: an
//! accepted certificate verifies in minutes, whatever it holds; the target is at most
//! 2 minutes on 2 cores). The certificates are crates/attncheck-bench/edge.rs's, grown to
//! the largest size whose cost is within the budget (the test budget.rs checks that one
//! more step is refused). `cargo bench -p attncheck-bench --bench budget_edge` prints a
//! Markdown table (wall and CPU seconds, all threads); bench/charges.md records it.
//! `-- OP…` times only the operators named.

use attncheck::kernel::check;
use std::path::Path;
use std::time::Instant;

#[path = "../edge.rs"]
mod edge;

/// CPU seconds of every thread of this process so far (/proc/self/task/*/schedstat).
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
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let precision = 128;
    println!("| operator | N at the edge | charged units | wall s | CPU s | within 2 min |");
    println!("| --- | ---: | ---: | ---: | ---: | --- |");
    let mut worst = (0.0f64, String::new());
    for case in edge::cases() {
        if !only.is_empty() && !only.iter().any(|o| case.op.contains(o.as_str())) {
            continue;
        }
        let Some(n) = edge::edge_of(&case, precision) else {
            println!("| `{}` | over at 1 | | | | |", case.op);
            continue;
        };
        let charged = edge::cost(&case, n, precision);
        let (formulas, data) = (case.build)(n);
        let c = edge::certificate(&formulas, &data, precision);
        let cert =
            attncheck::certificate::parse(Path::new("edge"), &c.to_string()).expect("parses");
        let st = cert.statement(Path::new("edge")).expect("statement");
        let (t, cpu) = (Instant::now(), cpu_seconds());
        let checked = check(&st, precision).expect("within the budget");
        std::hint::black_box(&checked);
        let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - cpu);
        if wall > worst.0 {
            worst = (wall, case.op.to_string());
        }
        println!(
            "| `{}` | {n} | {charged} | {wall:.1} | {cpu:.1} | {} |",
            case.op,
            if wall <= 120.0 { "yes" } else { "**no**" }
        );
    }
    println!("\nSlowest: {:.1} s ({}).", worst.0, worst.1);
}
