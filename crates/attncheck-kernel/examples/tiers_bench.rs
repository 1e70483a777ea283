//! A measurement note for bench/f64-tier.md (not a test, nothing asserted on time):
//! every committed certificate (`reports/**/*.cert.json`) checked at its precision with
//! the f64 tier ([`Tiers::F64ThenMpfr`], what `check` does) and without
//! ([`Tiers::MpfrOnly`]), best of three runs each, one certificate at a time (rayon's
//! threads as the machine gives them); and how many obligations the f64 tier decides.
//! Run: `cargo run --release -p attncheck-kernel --example tiers_bench`.
use attncheck_kernel::expr::{self, Budget, Decided, MAX_WORK};
use attncheck_kernel::{certificate, check_with, Tiers};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn cert_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            cert_files(&p, out);
        } else if p.to_string_lossy().ends_with(".cert.json") {
            out.push(p);
        }
    }
}

fn main() {
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    let mut files = Vec::new();
    cert_files(&reports, &mut files);
    let (mut total_one, mut total_two) = (0.0, 0.0);
    println!("| certificate | obligations | decided in f64 | MPFR only, ms | f64 then MPFR, ms |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let cert = certificate::parse(path, &text).unwrap();
        let st = cert.statement(path).unwrap();
        let best = |tiers: Tiers| {
            (0..3)
                .map(|_| {
                    let t = Instant::now();
                    let c = check_with(&st, cert.precision, tiers).unwrap();
                    std::hint::black_box(c);
                    t.elapsed().as_secs_f64() * 1e3
                })
                .fold(f64::INFINITY, f64::min)
        };
        let (one, two) = (best(Tiers::MpfrOnly), best(Tiers::F64ThenMpfr));
        let by_f64 = st
            .obligations
            .iter()
            .filter(|o| {
                let p = expr::prepare(&o.formula, cert.precision, &st.data).unwrap();
                p.f64_tried()
                    && p.decide(&Budget::new(MAX_WORK - p.work()), Tiers::F64ThenMpfr)
                        .unwrap()
                        .1
                        == Decided::F64
            })
            .count();
        total_one += one;
        total_two += two;
        let name = path.strip_prefix(&reports).unwrap_or(path).display();
        println!(
            "| {name} | {} | {by_f64} | {one:.1} | {two:.1} |",
            st.obligations.len()
        );
    }
    println!("| all | | | {total_one:.1} | {total_two:.1} |");
}
