//! One job of positional/trained-model-claims: one (scheme, seed), trained and measured,
//! its result stored in `target/attncheck-lm/<profile>/<job>.json`. A cluster runs every
//! job of the full profile this way (one array task each); `attncheck run
//! positional/trained-model-claims --profile full` then writes the report from the stored
//! results, training only what is missing.
//!
//! ```sh
//! cargo run --release --example trained_job -- --profile full --list
//! cargo run --release --example trained_job -- --profile full alibi-paper-s1
//! cargo run --release --example trained_job -- --profile full --report   # = attncheck run … --profile full
//! ```

use attncheck::claims::positional::trained_model_claims as tmc;
use attncheck::spec::{Profile, Spec};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut profile = Profile::Quick;
    let mut list = false;
    let mut report = false;
    let mut names = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--profile" => match it.next().map(String::as_str) {
                Some("quick") => profile = Profile::Quick,
                Some("full") => profile = Profile::Full,
                other => {
                    eprintln!("--profile takes quick or full, not {other:?}");
                    return ExitCode::from(2);
                }
            },
            "--list" => list = true,
            "--report" => report = true,
            _ => names.push(a.clone()),
        }
    }
    let path = std::path::Path::new("theorems/positional/trained-model-claims.toml");
    let spec = match Spec::load(path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if report {
        let progress = attncheck::progress::Progress::stderr(1);
        let runs = match attncheck::app::run_claims(&[&spec], profile, &progress) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        };
        progress.finish();
        if let Err(e) = attncheck::app::write_reports(&profile.default_out(), &runs) {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
        let r = &runs[0].report;
        println!("{}: {} ({:?})", r.id, r.verdict, r.reason);
        return if r.as_expected {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        };
    }
    let mut p: tmc::Params = match spec.params(profile) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    p.cache = true;
    let jobs = tmc::jobs(&p);
    if list || names.is_empty() {
        for j in &jobs {
            println!("{}", j.name());
        }
        return ExitCode::SUCCESS;
    }
    let corpus = match tmc::corpus(&p) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("corpus: {e}");
            return ExitCode::from(1);
        }
    };
    for n in &names {
        let Some(job) = jobs.iter().find(|j| &j.name() == n) else {
            eprintln!("no job {n}; `--list` shows them");
            return ExitCode::from(2);
        };
        match tmc::job_result(*job, &p, profile, &corpus) {
            Ok(_) => println!("{n}: {}", tmc::cache_path(*job, profile).display()),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(1);
            }
        }
    }
    ExitCode::SUCCESS
}
