//! Issue 23, "Bounded input, everywhere input enters": a literal's size is limited
//! wherever numbers are read, literals are read once, every data operation counts at
//! its real cost in the work budget, a closed stdout or stderr never panics, and a
//! certificate's precision is part of the statement. Each test is named after what
//! it broke.

use crate::util::{output_text as text, root, run_in};
use attncheck::app;
use attncheck::kernel::{self, expr, Certainty};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `<200000 nines>^1000000`: SIGFPE (exit 136) wherever it was read.
fn nines_power(nines: usize) -> String {
    format!("{}^1000000", "9".repeat(nines))
}

fn committed(id: &str) -> Value {
    let p = root().join("reports").join(format!("{id}.cert.json"));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn write_json(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
    p
}

/// The 1-based line of the first line of the file containing `needle`.
fn line_in(path: &Path, needle: &str) -> usize {
    crate::util::line_of(&std::fs::read_to_string(path).unwrap(), needle)
}

fn verify(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let o = run_in(dir, args);
    (o.status.code(), text(&o))
}

#[test]
fn huge_literal_in_a_ratio_lemma_b_value_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = committed("sparse/ratio-lemma");
    c["data"]["B"]["rows"][3][0][1] = json!(nines_power(200_000));
    let p = write_json(dir.path(), "rl.cert.json", &c);
    let line = line_in(&p, "99999999^1000000");
    for args in [vec!["verify"], vec!["verify", "--no-spec"]] {
        let mut a = args.clone();
        a.push(p.to_str().unwrap());
        let (code, out) = verify(dir.path(), &a);
        assert_eq!(code, Some(2), "{out}");
        assert!(
            out.contains(&format!("rl.cert.json:{line}: data.B.rows[3][0][1]: ")),
            "{out}"
        );
        assert!(
            out.contains("too large") && out.contains("1000000"),
            "{out}"
        );
        // the message shows the literal abbreviated, not its 200000 digits
        assert!(out.len() < 2000, "{} bytes", out.len());
    }
}

#[test]
fn huge_literal_in_a_growth_bound_dt_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = committed("clusters/growth-bound");
    c["data"]["X1"]["dt"] = json!(nines_power(200_000));
    let p = write_json(dir.path(), "gb.cert.json", &c);
    let line = line_in(&p, "99999999^1000000");
    let (code, out) = verify(dir.path(), &["verify", p.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains(&format!("gb.cert.json:{line}: data.X1.dt: ")),
        "{out}"
    );
    assert!(out.contains("too large"), "{out}");
}

#[test]
fn twenty_thousand_nines_to_the_millionth_no_longer_aborts_gmp() {
    // "GNU MP: Cannot reallocate memory", exit 134
    let dir = tempfile::tempdir().unwrap();
    let mut c = committed("sparse/ratio-lemma");
    c["data"]["B"]["rows"][0][0][1] = json!(nines_power(20_000));
    let p = write_json(dir.path(), "rl.cert.json", &c);
    let (code, out) = verify(dir.path(), &["verify", "--no-spec", p.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("data.B.rows[0][0][1]") && out.contains("too large"),
        "{out}"
    );
}

#[test]
fn huge_literal_in_a_formula_is_refused_with_exit_2_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = committed("positional/alibi-window");
    c["obligations"][1]["formula"] = json!(format!("(< 1 {})", nines_power(200_000)));
    let p = write_json(dir.path(), "aw.cert.json", &c);
    let line = line_in(&p, "99999999^1000000");
    for no_spec in [false, true] {
        let mut a = vec!["verify"];
        if no_spec {
            a.push("--no-spec");
        }
        a.push(p.to_str().unwrap());
        let (code, out) = verify(dir.path(), &a);
        assert_eq!(code, Some(2), "{out}");
        assert!(
            out.contains(&format!("aw.cert.json:{line}: obligations[1].formula: ")),
            "{out}"
        );
        assert!(out.contains("too large"), "{out}");
    }
}

#[test]
fn huge_literal_in_a_spec_field_is_refused_with_exit_2() {
    let d = crate::util::project(&["positional/alibi-window", "clusters/growth-bound"]);
    let spec = d.path().join("theorems/clusters/growth-bound.toml");
    let t = std::fs::read_to_string(&spec).unwrap();
    assert!(t.contains("dt = \"1/10\""));
    std::fs::write(
        &spec,
        t.replacen(
            "dt = \"1/10\"",
            &format!("dt = \"{}\"", nines_power(200_000)),
            1,
        ),
    )
    .unwrap();
    let line = line_in(&spec, "99999999^1000000");
    let (code, out) = verify(d.path(), &["run", "clusters/growth-bound"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains(&format!(
            "growth-bound.toml:{line}: params.instances[0].dt: "
        )),
        "{out}"
    );
    assert!(out.contains("too large"), "{out}");
    assert!(!d.path().join("reports").exists(), "nothing is written");
    // a plain string field of another claim
    let spec = d.path().join("theorems/positional/alibi-window.toml");
    let t = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(
        &spec,
        t.replacen(
            "epsilon = \"1/100\"",
            &format!("epsilon = \"{}\"", nines_power(200_000)),
            1,
        ),
    )
    .unwrap();
    let e = crate::util::prepare_err(
        "positional/alibi-window",
        &std::fs::read_to_string(&spec).unwrap(),
    );
    assert!(
        e.contains("params.epsilon") && e.contains("too large"),
        "{e}"
    );
}

#[test]
fn huge_literal_in_an_mtx_value_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.mtx");
    std::fs::write(
        &t,
        format!(
            "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 {}\n2 2 1\n",
            nines_power(200_000)
        ),
    )
    .unwrap();
    let out_dir = dir.path().join("construct");
    let (code, out) = verify(
        dir.path(),
        &[
            "sparse",
            "construct",
            "--target",
            t.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("t.mtx:3: malformed entry value"), "{out}");
    assert!(out.contains("too large"), "{out}");
    assert!(!out_dir.exists(), "nothing is written");
}

#[test]
fn the_literal_limit_admits_every_committed_literal_and_refuses_beyond() {
    use kernel::{literal_digits, parse_rational, MAX_LITERAL_DIGITS};
    // the largest committed literal: counting-lower-bound's 65536! (287194 digits)
    let c = committed("sparse/counting-lower-bound");
    let longest = c["obligations"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|o| {
            o["formula"]
                .as_str()
                .unwrap()
                .split([' ', '(', ')'])
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .max_by_key(String::len)
        .unwrap();
    assert_eq!(literal_digits(&longest), Some(287_194));
    assert!(parse_rational(&longest).is_ok());
    // at and beyond the limit
    assert_eq!(MAX_LITERAL_DIGITS, 1_000_000);
    assert!(parse_rational("9^1000000").is_ok());
    assert!(parse_rational("2^-1000000").is_ok());
    assert!(parse_rational("1e-100000").is_ok());
    for bad in [
        "10^1000000".to_string(),
        "99^-600000".to_string(),
        format!("{}/3", "7".repeat(1_000_000)),
        format!("1.{}e5", "3".repeat(999_996)),
        "1^99999999999999999999999999999999999999".to_string(),
    ] {
        let e = parse_rational(&bad).unwrap_err();
        assert!(e.digits.is_some(), "{e}");
        assert!(e.to_string().len() < 400, "{e}");
    }
    assert_eq!(literal_digits("-12/345"), Some(5));
    assert_eq!(literal_digits("1.5e-3"), Some(5));
    assert_eq!(literal_digits("x1"), None);
    // the formula parser applies the same limit, at the literal's offset
    let e = expr::parse("(< 1 10^1000000)").unwrap_err();
    assert_eq!(e.offset, 5);
    assert!(e.reason.contains("too large"), "{e}");
}

#[test]
fn a_literal_inside_a_forall_is_read_once_not_on_every_iteration() {
    // (forall x 1 50000000 (> 7^1000000 0)) read its literal on every iteration,
    // 12.8 ms each: about 7 days. 20000 iterations took 4 minutes.
    let t = Instant::now();
    assert_eq!(
        expr::check("(forall x 1 20000 (> 7^1000000 0))", 128),
        Ok(Certainty::True)
    );
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    // the parsed tree keeps the literal's text (the Coq translation prints it)
    let data = expr::Data::new();
    let f = expr::prepare("(forall x 1 3 (> 7^100 x))", 128, &data).unwrap();
    let expr::Sexp::List(items, _) = f.sexp() else {
        panic!()
    };
    let expr::Sexp::List(body, _) = &items[4] else {
        panic!()
    };
    assert_eq!(body[1], expr::Sexp::Atom("7^100".into(), 17));
    assert_eq!(
        f.check(&expr::Budget::new(expr::MAX_WORK)),
        Ok(Certainty::True)
    );
    // reading literals is counted once per formula in the work budget, not per
    // iteration: 1 + digits/8 units
    let once = expr::work(&expr::parse("(> 7^1000000 0)").unwrap());
    let many = expr::work(&expr::parse("(forall x 1 1000 (> 7^1000000 0))").unwrap());
    assert!(once > 1_000_000 / 8, "{once}");
    assert!(many < once + 1000 * 5 + 10, "{many} vs {once}");
    // a formula of many big literals is refused before anything is read
    let f = format!("(< 0 (+ {}))", vec!["9^1000000"; 10_000].join(" "));
    let e = expr::check(&f, 128).unwrap_err();
    assert!(e.reason.contains("limit"), "{e}");
}

#[test]
fn exact_arithmetic_on_big_rationals_stops_at_the_budget_instead_of_running_for_hours() {
    // (forall x 1 50000000 (> (+ 3^-20000 5^-13000 x) 0)) costs 9 units per iteration
    // statically, but each iteration adds rationals of 500 limbs (about 1 ms): 14 hours.
    // Exact operations are charged by their operands' sizes as they happen; here the
    // budget is left nearly spent by a conjunct that is never reached, so the charge
    // stops the evaluation after a few iterations.
    // (The pad is valid, ranges at most 5·10⁷ long: every conjunct is validated
    // before anything is evaluated.)
    let test = "(forall x 1 100000 (> (+ 3^-20000 5^-13000 x) 0))";
    let pad = |n: u128| format!("(and {test} (forall y 1 {n} (forall z 1 10 (< y z))))");
    let w1 = expr::work(&expr::parse(&pad(1)).unwrap());
    let step = expr::work(&expr::parse(&pad(2)).unwrap()) - w1;
    let n = (expr::MAX_WORK - 1_000_000 - w1) / step + 1;
    let f = pad(n);
    let w = expr::work(&expr::parse(&f).unwrap());
    assert!(w <= expr::MAX_WORK && w > expr::MAX_WORK - 2_000_000, "{w}");
    let t = Instant::now();
    let e = expr::check(&f, 128).unwrap_err();
    assert!(
        e.reason.contains("exact arithmetic") && e.reason.contains("limit"),
        "{e}"
    );
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    // small exact operands cost nothing extra: a long exact forall still runs
    assert_eq!(
        expr::check("(forall x 1 100000 (> (+ 1/3 2/7 x) 0))", 128),
        Ok(Certainty::True)
    );
}

#[test]
fn the_precision_multiplies_what_a_node_costs() {
    use expr::precision_factor;
    assert_eq!(precision_factor(128), 1);
    assert_eq!(precision_factor(24), 1);
    assert_eq!(precision_factor(160), 4);
    assert_eq!(precision_factor(1024), 24);
    assert_eq!(precision_factor(16384), 1536);
    // (no literal operand: reading literals does not depend on the precision)
    let e = expr::parse("(forall x 1 1000 (< (exp x) x))").unwrap();
    let data = expr::Data::new();
    assert_eq!(
        expr::work_with(&e, &data, 1024),
        24 * expr::work_with(&e, &data, 128)
    );
}

// ----- every data operation at its real cost -----

/// A ±1 sign matrix datum of n rows and d columns (a fixed pattern).
fn signs(n: usize, d: usize) -> Value {
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

/// A row-sparse datum with one entry per row, `value(i)` in row i (column i).
fn sparse(n: usize, value: impl Fn(usize) -> String) -> Value {
    let rows: Vec<Value> = (0..n).map(|i| json!([[i, value(i)]])).collect();
    json!({"kind": "sparse", "n": n, "rows": rows})
}

/// A layer datum: `runs` configurations of n tokens in d dimensions, `steps`
/// steps, entries `entry(matrix, index)`.
fn layer(
    runs: usize,
    n: usize,
    d: usize,
    steps: usize,
    dt: &str,
    entry: &dyn Fn(usize, usize) -> String,
) -> Value {
    let m = |rows: usize, tag: usize| -> Vec<Vec<String>> {
        (0..rows)
            .map(|i| (0..d).map(|j| entry(tag, i * d + j)).collect())
            .collect()
    };
    let tokens: Vec<_> = (0..runs).map(|r| m(n, 3 + r)).collect();
    json!({"kind": "layer", "form": "layer", "n": n, "d": d, "dt": dt, "steps": steps,
        "q": m(d, 0), "k": m(d, 1), "v": m(d, 2), "tokens": tokens})
}

fn small(_: usize, k: usize) -> String {
    format!("{}/{}", k % 7 + 1, k % 5 + 2)
}

/// A `--no-spec` certificate of one obligation over `data`, verified through the
/// library road the CLI takes: the exit code and the message.
fn verify_formula(formula: &str, data: Value, precision: u32) -> (u8, String) {
    let dir = tempfile::tempdir().unwrap();
    let c = json!({"format": attncheck::certificate::FORMAT, "claim": "positional/alibi-window",
        "profile": "quick", "precision": precision,
        "obligations": [{"name": "x", "formula": formula, "expect": "holds"}], "data": data});
    let p = write_json(dir.path(), "c.cert.json", &c);
    match app::verify_with(&p, None, None) {
        Ok(v) => (0, format!("{:?}", v.checked.decisions()[0].result())),
        Err(e) => (e.exit_code(), e.to_string()),
    }
}

/// The hostile input is refused with exit 2 and the budget's message, quickly (it
/// used to run for minutes or days).
fn assert_over_budget(op: &str, formula: &str, data: Value, precision: u32) {
    let t = Instant::now();
    let (code, msg) = verify_formula(formula, data, precision);
    assert_eq!(code, 2, "{op}: {msg}");
    assert!(msg.contains("the limit is 1000000000"), "{op}: {msg}");
    assert!(
        msg.contains("c.cert.json:"),
        "{op}: names the file and line: {msg}"
    );
    assert!(
        t.elapsed() < Duration::from_secs(60),
        "{op}: {:?}",
        t.elapsed()
    );
}

#[test]
fn gram_max_abs_counts_its_quadratic_cost() {
    // a 1.2 MB sign matrix took 16 s and counted 1; inside a forall, hours
    let s = signs(75_000, 64);
    let c = json!({"format": attncheck::certificate::FORMAT, "claim": "x/y", "profile": "quick",
        "precision": 128, "obligations": [{"name": "x", "formula": "(< 0 1)", "expect": "holds"}],
        "data": {"S": s.clone()}});
    let cert = attncheck::certificate::parse(Path::new("c"), &c.to_string()).unwrap();
    let data = cert.statement(Path::new("c")).unwrap().data;
    let w = expr::work_with(&expr::parse("(gram-max-abs S)").unwrap(), &data, 128);
    let pairs = 75_000u128 * 74_999 / 2;
    assert!(w >= pairs / expr::PAIRS_PER_UNIT, "{w}");
    assert!(w < expr::MAX_WORK, "alone it is within the budget: {w}");
    assert_over_budget(
        "gram-max-abs",
        "(forall i 1 3 (> (gram-max-abs S) 0))",
        json!({ "S": s }),
        128,
    );
}

#[test]
fn rows_and_cols_over_the_budget_are_refused_before_they_run() {
    // O(1), counted at every evaluation
    for op in ["rows", "cols"] {
        assert_over_budget(
            op,
            &format!("(forall a 1 50000000 (forall b 1 10 (< ({op} S) 0)))"),
            json!({ "S": signs(2, 64) }),
            128,
        );
    }
}

#[test]
fn lemma_operations_over_the_budget_are_refused_before_they_run() {
    // N·nnz inner products of ⌈d/64⌉ words: about a second each here, so 100 in a
    // forall were minutes
    let (s, b) = (signs(4096, 64), sparse(4096, |i| format!("{}", i % 9 + 1)));
    for op in [
        "err-max S B",
        "lemma-a S B",
        "lemma-b S B",
        "lemma-a-row S B 1/7",
        "lemma-b-row S B 1/7",
    ] {
        assert_over_budget(
            op,
            &format!("(forall i 1 100 (> ({op}) -1))"),
            json!({"S": s.clone(), "B": b.clone()}),
            128,
        );
    }
}

#[test]
fn row_nnz_max_over_the_budget_is_refused_before_it_runs() {
    let rows: Vec<Value> = (0..1 << 20).map(|_| json!([])).collect();
    assert_over_budget(
        "row-nnz-max",
        "(forall i 1 2000 (> (row-nnz-max B) 0))",
        json!({ "B": {"kind": "sparse", "n": 1 << 20, "rows": rows} }),
        128,
    );
}

#[test]
fn entry_sums_and_extrema_over_the_budget_are_refused_before_they_run() {
    // 64 entries of 31 000 limbs with distinct denominators: every addition and
    // comparison multiplies big integers, and a sum's denominator grows
    let big = sparse(64, |i| format!("{}^-200000", 1009 + 2 * i));
    for op in ["entry-sum", "entry-min", "entry-max", "row-sum-max"] {
        assert_over_budget(
            op,
            &format!("(forall i 1 100 (> ({op} B) -1))"),
            json!({ "B": big.clone() }),
            128,
        );
    }
}

#[test]
fn band_reach_over_the_budget_is_refused_before_it_runs() {
    // 2^32 bits per evaluation, about 5 s each here
    for op in ["band-reach", "band-reach-count"] {
        assert_over_budget(
            op,
            &format!("(forall i 1 20 (> ({op} 16384 16383 16) 0))"),
            json!({}),
            128,
        );
        // with a variable argument, its range bounds the cost: accepted and run
        let (code, msg) = verify_formula(
            &format!("(forall w 1 40 (>= ({op} 1214 (- w 1) 12) 0))"),
            json!({}),
            128,
        );
        assert_eq!((code, msg.as_str()), (0, "True"), "{op}");
    }
}

#[test]
fn sandwich_centred_over_the_budget_is_refused_before_it_runs() {
    // D/2 cosines per evaluation
    assert_over_budget(
        "sandwich-centred",
        "(forall r 1 1000000 (< (sandwich-centred 4096 0 r) 0))",
        json!({}),
        128,
    );
}

#[test]
fn layer_iterations_over_the_budget_are_refused_before_they_run() {
    // 16 layer data, each iterated at its own limit at 512 bits (about 10 s each)
    for (op, runs, steps) in [("layer-max-sqnorm", 1, 1024), ("layer-max-sqdist", 2, 512)] {
        let mut data = serde_json::Map::new();
        let mut parts = Vec::new();
        for x in 0..16 {
            data.insert(format!("X{x}"), layer(runs, 64, 4, steps, "1/100", &small));
            parts.push(if runs == 1 {
                format!("(> ({op} X{x} 0 1) 0)")
            } else {
                format!("(> ({op} X{x} 0 1 1) 0)")
            });
        }
        assert_over_budget(
            op,
            &format!("(and {})", parts.join(" ")),
            Value::Object(data),
            512,
        );
    }
}

#[test]
fn layer_exact_quantities_over_the_budget_are_refused_before_they_run() {
    // Δt of 49 500 limbs, cloned at every evaluation
    assert_over_budget(
        "layer-dt",
        "(forall k 1 5000000 (> (layer-dt X) 0))",
        json!({ "X": layer(1, 2, 2, 1, "9^-1000000", &small) }),
        128,
    );
    // ‖V‖_F², ‖QᵀK‖_F² of entries of 39 000 limbs with distinct denominators
    let huge = |_: usize, k: usize| format!("{}^-250000", 1009 + 2 * k);
    for op in ["layer-v-frob2", "layer-qk-frob2"] {
        assert_over_budget(
            op,
            &format!("(> ({op} X) 0)"),
            json!({ "X": layer(1, 2, 4, 1, "1/10", &huge) }),
            128,
        );
    }
}

#[test]
fn data_operation_costs_stay_within_the_budget_for_every_committed_certificate() {
    let mut certs = Vec::new();
    for dir in ["clusters", "positional", "sparse", "full/sparse"] {
        for f in std::fs::read_dir(root().join("reports").join(dir)).unwrap() {
            let p = f.unwrap().path();
            if p.to_string_lossy().ends_with(".cert.json") {
                certs.push(p);
            }
        }
    }
    assert!(certs.len() >= 20);
    for p in certs {
        let f = p.display();
        let text = std::fs::read_to_string(&p).unwrap();
        let c = attncheck::certificate::parse(&p, &text).unwrap();
        let st = c.statement(&p).unwrap();
        let sexps: Vec<_> = st
            .obligations
            .iter()
            .map(|o| expr::parse(&o.formula).unwrap())
            .collect();
        // the whole certificate at every precision its run may climb to (issue #38:
        // the budget bounds a certificate, not one formula)
        for prec in app::run_precisions(c.precision) {
            let total = *expr::work_of_all(sexps.iter(), &st.data, prec)
                .last()
                .unwrap();
            assert!(
                total <= expr::MAX_WORK,
                "{f} at {prec} bits costs {total} in all"
            );
        }
    }
}

// ----- a closed stdout or stderr -----

/// Runs the binary in `dir` with stdout and stderr on one pipe whose reading end
/// is closed after `keep` lines have been read (0: before the command writes
/// anything), as `attncheck … 2>&1 | head -<keep>` does; returns the exit code.
fn run_into_closed_pipe(dir: &Path, args: &[&str], keep: usize) -> Option<i32> {
    use std::io::BufRead;
    let (reader, writer) = std::io::pipe().unwrap();
    let mut child = crate::util::bin()
        .current_dir(dir)
        .args(args)
        .stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(reader);
    for _ in 0..keep {
        let mut l = String::new();
        if lines.read_line(&mut l).unwrap() == 0 {
            break;
        }
    }
    drop(lines);
    child.wait().unwrap().code()
}

#[test]
fn a_closed_pipe_on_stdout_and_stderr_never_panics_and_keeps_the_exit_code() {
    // `attncheck run A B 2>&1 | head -1` exited 101 (a panic in the closing
    // eprintln!) in 5 of 6 tries
    let d = crate::util::project(&["positional/alibi-slopes", "sparse/np-hardness"]);
    let run = ["run", "positional/alibi-slopes", "sparse/np-hardness"];
    for keep in [0, 1] {
        assert_eq!(
            run_into_closed_pipe(d.path(), &run, keep),
            Some(0),
            "keep {keep}"
        );
    }
    // the reports were still written, as without the pipe
    assert!(d
        .path()
        .join("reports/positional/alibi-slopes.json")
        .exists());
    // an exit code other than 0 stays what it was
    let cert = d.path().join("reports/positional/alibi-slopes.cert.json");
    let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&cert).unwrap()).unwrap();
    c["obligations"][0]["formula"] = json!("(< 1 0)");
    let bad = write_json(d.path(), "bad.cert.json", &c);
    let bad = bad.to_str().unwrap();
    for keep in [0, 1] {
        assert_eq!(
            run_into_closed_pipe(d.path(), &["verify", "--no-spec", bad], keep),
            Some(1)
        );
        assert_eq!(
            run_into_closed_pipe(d.path(), &["verify", bad], keep),
            Some(4)
        );
        assert_eq!(
            run_into_closed_pipe(d.path(), &["verify", "missing.cert.json"], keep),
            Some(2)
        );
        assert_eq!(run_into_closed_pipe(d.path(), &["list"], keep), Some(0));
        assert_eq!(
            run_into_closed_pipe(
                d.path(),
                &["run", "positional/alibi-slopes", "--json"],
                keep
            ),
            Some(0)
        );
    }
}

// ----- the precision is part of the statement -----

#[test]
fn certificate_precision_65536_no_longer_makes_verify_run_for_minutes() {
    // it took 7.5 minutes instead of 0.24 s, and exited 0
    let dir = tempfile::tempdir().unwrap();
    let th = root().join("theorems");
    let th = th.to_str().unwrap();
    let mut c = committed("positional/alibi-window");
    let at = |c: &mut Value, p: u32| {
        c["precision"] = json!(p);
        write_json(dir.path(), &format!("p{p}.cert.json"), c)
    };
    // above the hard bound: bad input on both roads
    let p = at(&mut c, 65536);
    let line = line_in(&p, "\"precision\"");
    for no_spec in [false, true] {
        let mut a = vec!["verify", "--theorems", th];
        if no_spec {
            a.push("--no-spec");
        }
        a.push(p.to_str().unwrap());
        let t = Instant::now();
        let (code, out) = verify(dir.path(), &a);
        assert_eq!(code, Some(2), "{out}");
        assert!(
            out.contains(&format!("p65536.cert.json:{line}: precision: ")),
            "{out}"
        );
        assert!(out.contains("16384"), "{out}");
        assert!(t.elapsed() < Duration::from_secs(30));
    }
    // with the spec, a precision the spec's run never uses is a different statement
    for prec in [64, 1024, 16384] {
        let p = at(&mut c, prec);
        let (code, out) = verify(
            dir.path(),
            &["verify", "--theorems", th, p.to_str().unwrap()],
        );
        assert_eq!(code, Some(4), "{prec}: {out}");
        assert!(
            out.contains("rejected") && out.contains(&format!("{prec} bits")),
            "{out}"
        );
        assert!(out.contains("128, 256 or 512 bits"), "{out}");
    }
    // the precisions an escalating run uses are the statement's
    for prec in app::run_precisions(128) {
        let p = at(&mut c, prec);
        let (code, out) = verify(
            dir.path(),
            &["verify", "--theorems", th, p.to_str().unwrap()],
        );
        assert_eq!(code, Some(0), "{prec}: {out}");
    }
    // without the spec the hard bound holds, and the work budget grows with the
    // precision: length-usage (13 s at 128 bits) is refused at 16384 before it runs
    let p = at(&mut c, 1024);
    let (code, out) = verify(dir.path(), &["verify", "--no-spec", p.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}");
    let mut lu = committed("positional/length-usage");
    lu["precision"] = json!(16384);
    let p = write_json(dir.path(), "lu.cert.json", &lu);
    let t = Instant::now();
    let (code, out) = verify(dir.path(), &["verify", "--no-spec", p.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("the limit is 1000000000"), "{out}");
    assert!(t.elapsed() < Duration::from_secs(30));
}

// ----- every road has its hostile input (exit codes as the README's table) -----

#[test]
fn sign_matrix_with_n_zero_is_refused_naming_the_field() {
    // n = 0 passed the reader's check although its message said 1..=2^24; d = 0 was
    // refused, but as "n and d". Exit 2 (bad input), naming data.S.n or data.S.d
    // and its line, with and without the spec.
    let dir = tempfile::tempdir().unwrap();
    let c = committed("sparse/ratio-lemma");
    assert_eq!(c["data"]["S"]["kind"], "signs");
    for (field, n, d, rows) in [
        ("n", 0, 64, json!([])),
        ("d", 1, 0, json!([""])),
        ("n", (1 << 24) + 1, 64, json!([])),
    ] {
        let mut c = c.clone();
        c["data"]["S"]["n"] = json!(n);
        c["data"]["S"]["d"] = json!(d);
        c["data"]["S"]["rows"] = rows;
        let p = write_json(dir.path(), "s.cert.json", &c);
        for no_spec in [false, true] {
            let mut a = vec!["verify"];
            if no_spec {
                a.push("--no-spec");
            }
            a.push(p.to_str().unwrap());
            let (code, out) = verify(dir.path(), &a);
            assert_eq!(code, Some(2), "{field} = 0: {out}");
            assert!(out.contains(&format!("data.S.{field}: ")), "{out}");
            assert!(out.contains("1..=2^24"), "{out}");
            assert!(
                out.contains("s.cert.json:"),
                "names the file and line: {out}"
            );
        }
    }
}

#[test]
fn huge_literal_in_a_formula_inside_a_forall_is_refused_with_exit_2() {
    // the literal is refused where the formula is read (exit 2, file, line and
    // field), not once per iteration; the same through the Coq road's reader
    let dir = tempfile::tempdir().unwrap();
    let mut c = committed("positional/alibi-window");
    let f = format!("(forall x 1 50000000 (< x {}))", nines_power(200_000));
    c["obligations"][0]["formula"] = json!(f);
    let p = write_json(dir.path(), "fa.cert.json", &c);
    let line = line_in(&p, "99999999^1000000");
    for args in [
        vec!["verify", "--no-spec"],
        vec!["verify"],
        vec!["verify", "--coq"],
    ] {
        let mut a = args.clone();
        a.push(p.to_str().unwrap());
        let t = Instant::now();
        let (code, out) = verify(dir.path(), &a);
        // against the spec (and with --coq) the formula also differs from the spec's,
        // but it is read, and refused, first: before any comparison, kernel or coqc
        assert_eq!(code, Some(2), "{args:?}: {out}");
        assert!(
            out.contains(&format!("fa.cert.json:{line}: obligations[0].formula: ")),
            "{args:?}: {out}"
        );
        assert!(out.contains("too large"), "{args:?}: {out}");
        assert!(out.len() < 2000, "{} bytes", out.len());
        assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    }
    // the validator the Coq translation uses reads literals through the one function
    // with the limit, even on a tree that did not come from the parser
    let data = expr::Data::new();
    let e = expr::parse_valid(&f, &data).unwrap_err();
    assert!(e.reason.contains("too large"), "{e}");
    let tree = expr::Sexp::List(
        vec![
            expr::Sexp::Atom("<".into(), 1),
            expr::Sexp::Atom("1".into(), 3),
            expr::Sexp::Atom(nines_power(200_000), 5),
        ],
        0,
    );
    assert!(expr::validate(&tree, &data).is_err());
}

/// Runs the binary in `dir` with stdout on a pipe that is closed before it writes
/// anything (`attncheck … | head -0`) and stderr captured; returns the exit code
/// and stderr.
fn run_into_closed_stdout(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = crate::util::bin()
        .current_dir(dir)
        .args(args)
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_closed_stdout_alone_never_panics_and_keeps_the_exit_code() {
    // `attncheck run X | head -0`: stdout closed, stderr still open. Exit codes as
    // without the pipe: 0 (run; list; verify of a good certificate), 1 (contrary),
    // 2 (bad input), 4 (rejected); stderr shows no panic
    let d = crate::util::project(&["positional/alibi-slopes"]);
    let (code, err) = run_into_closed_stdout(d.path(), &["run", "positional/alibi-slopes"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(d
        .path()
        .join("reports/positional/alibi-slopes.json")
        .exists());
    let cert = d.path().join("reports/positional/alibi-slopes.cert.json");
    let good = cert.to_str().unwrap();
    let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&cert).unwrap()).unwrap();
    c["obligations"][0]["formula"] = json!("(< 1 0)");
    let bad = write_json(d.path(), "bad.cert.json", &c);
    let bad = bad.to_str().unwrap();
    for (args, want) in [
        (vec!["list"], 0),
        (vec!["verify", good], 0),
        (vec!["verify", "--json", good], 0),
        (vec!["verify", "--no-spec", bad], 1),
        (vec!["verify", "missing.cert.json"], 2),
        (vec!["verify", bad], 4),
    ] {
        let (code, err) = run_into_closed_stdout(d.path(), &args);
        assert_eq!(code, Some(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// Regression: `t = "1/10^30"` in sparse/log-dimension made the run panic in
/// `union_bound_dimension` ("d_ub fits in u64", exit 101); a t that is merely small
/// would have drawn sign matrices of terabytes. Both are refused when the spec is
/// read: exit 2, naming the file, the line and `t`, and nothing is written.
#[test]
fn a_tiny_t_in_log_dimension_is_refused_with_exit_2_not_a_panic() {
    let d = crate::util::project(&["sparse/log-dimension"]);
    let spec = d.path().join("theorems/sparse/log-dimension.toml");
    let text = std::fs::read_to_string(&spec).unwrap();
    let from = "t = [\"1/4\", \"1/8\"]";
    assert_eq!(text.matches(from).count(), 1);
    for (t, says) in [
        (
            "1/1000000000000000000000000000000",
            "does not fit in 64 bits",
        ),
        ("1/100000", "more than the 4294967296 allowed"),
    ] {
        std::fs::write(
            &spec,
            text.replacen(from, &format!("t = [\"1/4\", \"{t}\"]"), 1),
        )
        .unwrap();
        let line = line_in(&spec, t);
        let (code, out) = verify(d.path(), &["run", "sparse/log-dimension"]);
        assert_eq!(code, Some(2), "{t}: {out}");
        assert!(
            out.contains(&format!("log-dimension.toml:{line}: params.t: ")),
            "{t}: {out}"
        );
        assert!(out.contains(says), "{t}: {out}");
        assert!(!out.contains("panicked"), "{t}: {out}");
        assert!(!d.path().join("reports").exists(), "nothing is written");
    }
}

/// `attncheck verify /dev/zero` read until the memory was gone (the process was killed):
/// every input file is read up to `spec::MAX_INPUT_BYTES`, and one larger, or without
/// end, is exit 2 naming the file.
#[test]
fn verify_of_dev_zero_is_refused_instead_of_filling_the_memory() {
    if !Path::new("/dev/zero").exists() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (code, out) = verify(dir.path(), &["verify", "/dev/zero"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("/dev/zero") && out.contains("larger than 128 MiB"),
        "{out}"
    );
}

/// The same limit for a file on disk, one byte over it (a sparse file: no disk is used),
/// and a file of exactly the limit is read (here: refused for its content, not its size).
#[test]
fn an_input_file_over_the_size_limit_is_refused_and_one_at_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let limit = attncheck::spec::MAX_INPUT_BYTES;
    for (len, too_big) in [(limit + 1, true), (limit, false)] {
        let p = dir.path().join("big.cert.json");
        std::fs::File::create(&p).unwrap().set_len(len).unwrap();
        let e = attncheck::spec::read_utf8(&p).map(|s| s.len() as u64);
        match e {
            Err(e) => {
                assert!(too_big, "{e}");
                assert!(e.to_string().contains("larger than 128 MiB"), "{e}");
            }
            Ok(n) => assert!(!too_big && n == limit),
        }
    }
}

/// `export coq` read its certificates with `read_to_string`, without the limit that
/// `verify` has (`coq::load`): `/dev/zero` filled the memory there too. It is read by
/// the one input reader now: exit 2 naming the file, nothing written.
#[test]
fn export_coq_of_dev_zero_is_refused_instead_of_filling_the_memory() {
    if !Path::new("/dev/zero").exists() {
        return;
    }
    let e = attncheck::coq::load(Path::new("/dev/zero"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/dev/zero") && e.contains("larger than 128 MiB"),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let (code, out) = verify(
        dir.path(),
        &[
            "export",
            "coq",
            "/dev/zero",
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("/dev/zero") && out.contains("larger than 128 MiB"),
        "{out}"
    );
    assert!(!out_dir.exists(), "nothing is written");
}
