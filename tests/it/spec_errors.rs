//! Bad specs are errors that name the file, the line and the field.

use crate::util::{line_of, prepare_err, spec_path, spec_text};
use attncheck::claims;
use attncheck::spec::{Profile, Spec, SpecError};

const ID: &str = "positional/alibi-slopes";

#[test]
fn unknown_top_level_key_names_line_and_field() {
    let text = spec_text(ID).replacen("precision = 128", "precision = 128\nprecsion = 64", 1);
    let e = prepare_err(ID, &text);
    let line = line_of(&text, "precsion = 64");
    assert!(e.contains(&format!("alibi-slopes.toml:{line}")), "{e}");
    assert!(e.contains("precsion"), "{e}");
}

#[test]
fn unknown_param_key_names_line_and_field() {
    let text = spec_text(ID).replacen(
        "f64_rel_tol = \"1e-14\"",
        "f64_rel_tol = \"1e-14\"\nbogus = 3",
        1,
    );
    let e = prepare_err(ID, &text);
    assert!(
        e.contains(&format!(":{}: params.bogus", line_of(&text, "bogus = 3"))),
        "{e}"
    );
}

#[test]
fn wrong_type_names_field() {
    let text = spec_text(ID).replacen(
        "heads = [1, 2, 4, 8, 16, 32, 3, 6, 12, 24]",
        "heads = \"eight\"",
        1,
    );
    let e = prepare_err(ID, &text);
    assert!(
        e.contains(&format!(
            ":{}: params.heads",
            line_of(&text, "heads = \"eight\"")
        )),
        "{e}"
    );
}

#[test]
fn out_of_range_element_names_index() {
    let text = spec_text(ID).replacen(
        "heads = [1, 2, 4, 8, 16, 32, 3, 6, 12, 24]",
        "heads = [1, 0]",
        1,
    );
    let e = prepare_err(ID, &text);
    assert!(e.contains("params.heads[1]"), "{e}");
    assert!(
        e.contains(&format!(":{}:", line_of(&text, "heads = [1, 0]"))),
        "{e}"
    );
}

#[test]
fn empty_sweep_is_an_error() {
    let text = spec_text(ID).replacen(
        "heads = [1, 2, 4, 8, 16, 32, 3, 6, 12, 24]",
        "heads = []",
        1,
    );
    let e = prepare_err(ID, &text);
    assert!(e.contains("params.heads") && e.contains("empty"), "{e}");
}

#[test]
fn precision_below_24_bits_is_an_error() {
    let text = spec_text(ID).replacen("precision = 128", "precision = 16", 1);
    let e = prepare_err(ID, &text);
    assert!(
        e.contains(&format!(":{}: precision", line_of(&text, "precision = 16"))),
        "{e}"
    );
}

#[test]
fn malformed_literal_in_nested_table_names_path() {
    let text = spec_text(ID).replacen("\"16/3\", \"6\"", "\"16/3\", \"six\"", 1);
    let e = prepare_err(ID, &text);
    assert!(e.contains("params.reference[3].exponents[8]"), "{e}");
}

#[test]
fn wrong_verdict_word_is_an_error() {
    let text = spec_text(ID).replacen("expected = \"certified\"", "expected = \"proven\"", 1);
    let e = prepare_err(ID, &text);
    assert!(
        e.contains(&format!(":{}", line_of(&text, "expected = \"proven\""))),
        "{e}"
    );
    assert!(e.contains("expected"), "{e}");
}

#[test]
fn missing_field_is_named() {
    let text = spec_text(ID).replacen("rigour = \"certified\"\n", "", 1);
    let e = prepare_err(ID, &text);
    assert!(e.contains("rigour"), "{e}");
}

#[test]
fn profile_override_errors_point_at_the_profile() {
    let text = format!("{}\n[profiles.quick]\nheads = [2, -1]\n", spec_text(ID));
    let e = prepare_err(ID, &text);
    assert!(e.contains("profiles.quick.heads"), "{e}");
}

#[test]
fn not_toml_at_all() {
    let e = Spec::parse(&spec_path(ID), "id = \n").unwrap_err();
    assert!(matches!(
        e,
        SpecError::Field { .. } | SpecError::File { .. }
    ));
    assert!(e.to_string().contains("alibi-slopes.toml:1"), "{e}");
}

#[test]
fn every_committed_spec_loads_and_validates_in_both_profiles() {
    let specs = attncheck::app::load_specs(&crate::util::root().join("theorems")).unwrap();
    assert!(
        specs.len() >= 11,
        "expected every positional claim to have a spec"
    );
    for s in &specs {
        for p in [Profile::Quick, Profile::Full] {
            if let Err(e) = (claims::find(&s.id).unwrap().prepare)(s, p) {
                panic!("{}: {e}", s.id);
            }
        }
    }
    for def in claims::REGISTRY {
        assert!(
            specs.iter().any(|s| s.id == def.id),
            "{} has no spec",
            def.id
        );
    }
}

/// A spec written to `<tmp>/theorems/<id>.toml` (so [`attncheck::claims::load_spec`] treats it as a
/// registered claim at its place).
fn scratch_spec(id: &str, bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("theorems").join(format!("{id}.toml"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

#[test]
fn profiles_quick_unknown_key_is_located_at_its_own_line() {
    let text = format!("{}\n[profiles.quick]\nbogus = 3\n", spec_text(ID));
    let e = prepare_err(ID, &text);
    let line = line_of(&text, "bogus = 3");
    assert!(
        e.contains(&format!("alibi-slopes.toml:{line}: profiles.quick.bogus:")),
        "{e}"
    );
}

#[test]
fn unknown_param_key_is_named_once_not_doubled() {
    let text = spec_text(ID).replacen(
        "f64_rel_tol = \"1e-14\"",
        "f64_rel_tol = \"1e-14\"\nslopez = 3",
        1,
    );
    let e = prepare_err(ID, &text);
    let line = line_of(&text, "slopez = 3");
    assert!(e.contains(&format!(":{line}: params.slopez: ")), "{e}");
    assert!(!e.contains("slopez.slopez"), "{e}");
}

#[test]
fn unknown_key_in_an_array_of_tables_is_named_once_at_its_line() {
    let id = "positional/alibi-window";
    let text = spec_text(id).replacen("slope = \"2^-4\"", "slope = \"2^-4\"\nfoo = 1", 1);
    let e = prepare_err(id, &text);
    let line = line_of(&text, "foo = 1");
    assert!(e.contains(&format!(":{line}: params.rows[1].foo: ")), "{e}");
    assert!(!e.contains("foo.foo"), "{e}");
}

#[test]
fn line_of_key_matches_whole_keys_not_prefixes() {
    use attncheck::spec::line_of_key;
    let text = "idx = 1\nid = \"a/b\"\n[params]\nrows_n = 2\nrows = 3\n";
    assert_eq!(line_of_key(text, "id"), Some(2));
    assert_eq!(line_of_key(text, "params.rows"), Some(5));
    assert_eq!(line_of_key(text, "missing"), None);
    // not TOML: a whole-key line scan
    assert_eq!(line_of_key("idx = 1\nid = \n", "id"), Some(2));
}

#[test]
fn non_utf8_spec_names_the_line_of_the_first_bad_byte() {
    let mut bytes = spec_text(ID).into_bytes();
    let at = line_of(&spec_text(ID), "title =");
    let offset = spec_text(ID)
        .lines()
        .take(at - 1)
        .map(|l| l.len() + 1)
        .sum::<usize>()
        + 3;
    bytes.insert(offset, 0xff);
    let (_d, path) = scratch_spec(ID, &bytes);
    let e = attncheck::claims::load_spec(&path).unwrap_err().to_string();
    assert!(
        e.contains(&format!("alibi-slopes.toml:{at}: byte 0xff at column 4")),
        "{e}"
    );
}

#[test]
fn profiles_full_errors_are_reported_on_every_load() {
    let text = format!("{}\n[profiles.full]\nheads = [2, 0]\n", spec_text(ID));
    let (_d, path) = scratch_spec(ID, text.as_bytes());
    let e = attncheck::claims::load_spec(&path).unwrap_err().to_string();
    let line = line_of(&text, "heads = [2, 0]");
    assert!(
        e.contains(&format!(":{line}: profiles.full.heads[1]")),
        "{e}"
    );
}

#[test]
fn expected_certified_with_rigour_supported_is_an_error() {
    let text = spec_text(ID).replacen("rigour = \"certified\"", "rigour = \"supported\"", 1);
    let e = prepare_err(ID, &text);
    let line = line_of(&text, "expected = \"certified\"");
    assert!(e.contains(&format!(":{line}: expected: ")), "{e}");
    assert!(e.contains("rigour"), "{e}");
}

#[test]
fn epsilon_with_a_huge_exponent_names_the_exponent_limit() {
    let e = crate::util::edited_err(
        "positional/alibi-window",
        "epsilon = \"1/100\"",
        "epsilon = \"1e-100000000\"",
    );
    assert!(e.contains("params.epsilon"), "{e}");
    assert!(e.contains("−100000..=100000"), "{e}");
    // the limit stated is the one the kernel applies
    use attncheck::spec::{exact, MAX_DECIMAL_EXPONENT, MAX_POWER_EXPONENT};
    let m = MAX_DECIMAL_EXPONENT;
    assert!(exact("x", &format!("1e-{m}")).is_ok());
    assert!(exact("x", &format!("1e-{}", m + 1)).is_err());
    let p = MAX_POWER_EXPONENT;
    assert!(exact("x", &format!("1^-{p}")).is_ok());
    let e = exact("x", &format!("2^{}", p + 1)).unwrap_err().reason;
    assert!(e.contains(&format!("−{p}..={p}")), "{e}");
    // other malformed literals keep the kernel's explanation
    let e = exact("x", "1e-3x").unwrap_err().reason;
    assert!(e.contains("not an exact number"), "{e}");
}

#[test]
fn precision_above_the_maximum_is_an_error_naming_the_maximum() {
    let text = spec_text(ID).replacen("precision = 128", "precision = 1048576", 1);
    let e = prepare_err(ID, &text);
    let line = line_of(&text, "precision = 1048576");
    assert!(e.contains(&format!(":{line}: precision: ")), "{e}");
    assert!(
        e.contains(&attncheck::spec::MAX_PRECISION.to_string()),
        "{e}"
    );
    let at_max = spec_text(ID).replacen(
        "precision = 128",
        &format!("precision = {}", attncheck::spec::MAX_PRECISION),
        1,
    );
    assert!(Spec::parse(&spec_path(ID), &at_max).is_ok());
}

/// Issue #24 ("typed errors throughout"): `FieldError` implements `Display` and
/// `Error`, naming the field before the reason.
#[test]
fn field_error_displays_its_field_and_reason() {
    let e = attncheck::spec::FieldError::new("windows[1]", "must be positive");
    assert_eq!(e.to_string(), "windows[1]: must be positive");
    assert_eq!(
        attncheck::spec::FieldError::new("", "no field").to_string(),
        "no field"
    );
    let _: &dyn std::error::Error = &e;
}

/// Regression (the clusters claims' d had no upper bound: `d = 200000` in growth-bound
/// asked for Q = I with 4·10¹⁰ exact rationals and aborted on the allocation; found by
/// the spec fuzzer, `fuzz_the_spec_loader` with `ATTNCHECK_FUZZ_SEED=4202`, and by a scan
/// of every integer field of every committed spec): a system's d above 512, the bound of
/// n, is refused with the field and its line, before anything is allocated.
#[test]
fn a_clusters_dimension_above_512_is_refused_before_any_allocation() {
    for id in [
        "clusters/collapse",
        "clusters/growth-bound",
        "clusters/hyperplanes",
        "clusters/paranormal",
        "clusters/polytope",
        "clusters/rescaling",
        "clusters/stability",
    ] {
        let text = spec_text(id);
        let at = text.find("\nd = ").unwrap_or_else(|| panic!("{id}: no d")) + 1;
        let end = at + text[at..].find('\n').unwrap();
        for d in ["513", "1000000000", "4611686018427387904"] {
            let hostile = format!("{}d = {d}{}", &text[..at], &text[end..]);
            let e = prepare_err(id, &hostile);
            let line = hostile[..at].lines().count() + 1;
            assert!(
                e.contains(&format!(":{line}: params."))
                    && e.contains("].d: must be between 1 and 512"),
                "{id}, d = {d}: {e}"
            );
        }
    }
}

/// Regression (trained-model-claims bounded no job's work: `batch`, `hidden` or
/// `bootstrap` at 10⁹ aborted on an allocation of gigabytes to terabytes, and `steps` at
/// 10⁹ was accepted for years of training; found by a scan of every integer field of
/// every committed spec): a job above [`attncheck_lm::job::MAX_JOB_WORK`] is refused,
/// naming the steps of its training length, in either profile; every committed job, the
/// arms trained longer included, is within the bound. The bound is computed from the
/// model's sizes, not its built configuration (a first version built it, and at hidden =
/// 10⁹ allocated 4 GB of sinusoidal frequencies inside the check: 9.6 s for this test).
#[test]
fn a_trained_model_job_beyond_the_work_bound_is_refused() {
    use attncheck::claims::positional::trained_model_claims::{largest_job, Claim};
    const ID: &str = "positional/trained-model-claims";
    let text = spec_text(ID);
    let spec = Spec::parse(&spec_path(ID), &text).unwrap();
    let mut most = 0u128;
    for profile in [Profile::Quick, Profile::Full] {
        let p = attncheck::claims::shape::resolve::<Claim>(&spec, profile).unwrap();
        most = most.max(largest_job(&p.params).unwrap().0);
    }
    assert!(most <= attncheck_lm::job::MAX_JOB_WORK, "{most}");
    eprintln!(
        "the committed spec's largest job: {most:.3e} = 2^{:.2}",
        (most as f64).log2()
    );
    for (from, to) in [
        ("steps = 300", "steps = 1000000000"),
        ("batch = 16", "batch = 1000000000"),
        ("hidden = 64", "hidden = 1000000000"),
        ("bootstrap = 1000", "bootstrap = 1000000000"),
        ("rf_sequences = 64", "rf_sequences = 1000000000"),
        ("eval_targets = 1024", "eval_targets = 1073741824"),
    ] {
        assert_refused(
            ID,
            &text,
            from,
            to,
            &["steps: job ", "above the bound 2^45"],
        );
    }
}

/// Regression (a clusters instance's sizes and steps were bounded only one by one: n = d
/// = 512 with growth-bound's 100000 steps was accepted, about a month of one core at 0.5
/// CPU-s a step for n = d = 128, found by the same scan): an instance whose
/// n·d·(2n + d)·steps is above 2^34 is refused, naming its steps.
#[test]
fn a_clusters_instance_beyond_the_work_bound_is_refused() {
    use attncheck::claims::clusters::common::{instance_work, MAX_INSTANCE_WORK};
    assert_eq!(instance_work(5, 3, 50), 5 * 3 * 13 * 50);
    assert!(instance_work(512, 512, 100_000) > MAX_INSTANCE_WORK);
    assert!(instance_work(512, 512, 43) > MAX_INSTANCE_WORK);
    assert!(instance_work(512, 512, 42) <= MAX_INSTANCE_WORK);
    const ID: &str = "clusters/growth-bound";
    let text = spec_text(ID);
    for (n, d, steps) in [(512, 512, 100_000), (512, 512, 43), (100, 100, 100_000)] {
        let hostile = text.replacen("n = 5\nd = 3", &format!("n = {n}\nd = {d}"), 1);
        let hostile = hostile.replacen("steps = 50\n", &format!("steps = {steps}\n"), 1);
        let e = prepare_err(ID, &hostile);
        assert!(
            e.contains("params.instances[0].steps: n·d·(2n + d)·steps is")
                && e.contains("above the bound 2^34"),
            "n {n}, d {d}, steps {steps}: {e}"
        );
    }
}

/// Regression (boolean-limit's walks were bounded field by field: n = 64 tokens and
/// hypotheses_max_steps = 100000 were each accepted, and the statement builder, which
/// `verify` runs too, walks every witness up to that step; found by the spec fuzzer timing
/// out on boolean-limit's statement): (seeds·systems + 1)·n²·(steps +
/// hypotheses_max_steps) above 2^28 is refused, naming hypotheses_max_steps.
#[test]
fn a_boolean_limit_walk_beyond_the_work_bound_is_refused() {
    const ID: &str = "clusters/boolean-limit";
    let text = spec_text(ID);
    // each change alone stays within the bound (at most 33·64·100700 ≈ 2^27.6, the full
    // profile's 16 seeds); with n = 64 tokens each passes it (n = 64 alone: 33·64²·700 ≈ 2^26.5)
    let wide = text.replacen("n = 8\n", "n = 64\n", 1);
    assert_ne!(wide, text);
    for (from, to) in [
        (
            "hypotheses_max_steps = 560",
            "hypotheses_max_steps = 100000",
        ),
        ("steps = 140", "steps = 100000"),
    ] {
        assert_refused(
            ID,
            &wide,
            from,
            to,
            &[
                "params.hypotheses_max_steps: (seeds·systems + 1)·n²·(steps + hypotheses_max_steps) is",
                "above the bound 2^28",
            ],
        );
    }
}

/// `base` (a spec of `id`) with its first `from` replaced by `to` is refused with an error
/// that contains every one of `parts`.
fn assert_refused(id: &str, base: &str, from: &str, to: &str, parts: &[&str]) {
    let hostile = base.replacen(from, to, 1);
    assert_ne!(hostile, base, "{from}");
    let e = prepare_err(id, &hostile);
    assert!(parts.iter().all(|p| e.contains(p)), "{to}: {e}");
}

/// Regression (positional/sandwich-identity with the quick profile's `pairs = 100000`,
/// within the field's own limit, aborted on an allocation under a 6 GiB address-space limit:
/// (100000 + 4)·2·3 = 600024 pair checks of three formulas each; found by session 42's
/// near-limit scan): the pair checks, their trigonometry, the minimum's sweep and the tables'
/// lengths are bounded, and d̄ or a convention listed twice is refused by its field before
/// anything is computed (it used to fail only when the statement was built, 32 s and 2.5 GB
/// later).
#[test]
fn sandwich_identity_pairs_100000_is_refused_before_any_allocation() {
    use attncheck::claims::positional::sandwich_identity::{
        MAX_PAIR_CHECKS, MAX_PAIR_WORK, MAX_SWEEP_WORK,
    };
    const ID: &str = "positional/sandwich-identity";
    let text = spec_text(ID);
    // both profiles of the committed spec are within the bounds (the full one has 400 pairs)
    let spec = Spec::parse(&spec_path(ID), &text).unwrap();
    for profile in [Profile::Quick, Profile::Full] {
        let _run = (claims::find(ID).unwrap().prepare)(&spec, profile).unwrap();
    }
    // the headroom the constants' docs state
    let full = [
        (404u128 * 2 * 3, u128::from(MAX_PAIR_CHECKS)),
        (404 * 2 * 448, MAX_PAIR_WORK),
        (20000 * 64, MAX_SWEEP_WORK),
    ];
    assert!(
        full.iter().all(|(used, bound)| used * 4 <= *bound),
        "{full:?}"
    );
    let with = |text: &str, n: u32| text.replace("pairs = 24\n", &format!("pairs = {n}\n"));
    let accepted = |text: &str| {
        let spec = Spec::parse(&spec_path(ID), text).unwrap();
        let _run = (claims::find(ID).unwrap().prepare)(&spec, Profile::Quick).unwrap();
    };
    let e = prepare_err(ID, &with(&text, 100_000));
    assert!(
        e.contains("profiles.quick.pairs: (pairs + 4)·|conventions|·|dbars| is 600024 pair checks")
            && e.contains("above the bound 2^14"),
        "{e}"
    );
    // eight small d̄: (1020 + 4)·2·8 = 16384 checks is the bound
    let small = text.replacen(
        "dbars = [64, 128, 256]",
        "dbars = [2, 4, 6, 8, 10, 12, 14, 16]",
        1,
    );
    assert_ne!(small, text);
    accepted(&with(&small, 1020));
    let e = prepare_err(ID, &with(&small, 1021));
    assert!(
        e.contains("is 16400 pair checks, above the bound 2^14"),
        "{e}"
    );
    // the committed d̄ (Σ = 448): (2336 + 4)·2·448 ≤ 2^21 < (2337 + 4)·2·448
    accepted(&with(&text, 2336));
    let e = prepare_err(ID, &with(&text, 2337));
    assert!(
        e.contains("(pairs + 4)·|conventions|·Σ d̄ is 2097536, above the bound 2^21"),
        "{e}"
    );
    for (from, to, parts) in [
        (
            "below = 20000",
            "below = 1000000",
            &["minimum.below: below·d̄/2 is 64000000 cosines", "2^24"][..],
        ),
        (
            "dbars = [64, 128, 256]",
            "dbars = [64, 128, 64]",
            &["dbars[2]: d̄ = 64 is listed twice"],
        ),
        (
            "conventions = [\"zero\", \"one\"]",
            "conventions = [\"zero\", \"one\", \"zero\"]",
            &["conventions[2]: I from 0 is listed twice"],
        ),
    ] {
        assert_refused(ID, &text, from, to, parts);
    }
    // the §3 table with 1001 distances (and as many values in each column): refused by the
    // length of a list (`spec::MAX_LIST`)
    let list = |v: &str| format!("[{}]", vec![v; 1001].join(", "));
    let long: Vec<String> = text
        .lines()
        .map(|l| match l.split_once(" = ") {
            Some(("r", _)) if l.starts_with("r = [0, 1, 2,") => format!("r = {}", list("3")),
            Some((k @ ("zero" | "one"), _)) => format!("{k} = {}", list("\"-1\"")),
            _ => l.to_string(),
        })
        .collect();
    let e = prepare_err(ID, &long.join("\n"));
    assert!(
        e.contains("params.table.") && e.contains(": 1001 entries, above the bound 256"),
        "{e}"
    );
}

/// Regression (positional/sandwich-log-decay enclosed B̃(r) up to the largest r any field
/// named before its statement's budget was known: `steps_to`, `gap.r` or a fit range at
/// 100000 each took 83 CPU-s to end inconclusive, and at the fields' own limit, 10^6, ten
/// times that for every d̄ listed; found by session 43's near-limit scan): the work
/// horizon·(Σ d̄/2 + |increases| + |fit_dbars|·|fit_ranges|) above 2^24 is refused, naming
/// the field that sets the horizon, and the lists are at most 64 long.
#[test]
fn sandwich_log_decay_horizon_100000_is_refused_before_any_enclosure() {
    use attncheck::claims::positional::sandwich_log_decay::{MAX_LIST, MAX_WORK};
    const ID: &str = "positional/sandwich-log-decay";
    let text = spec_text(ID);
    // the committed spec: horizon 2048, Σ d̄/2 = 32 + 64 + 128 + 64, 4 increases, 3·2 fits
    const { assert!(2048 * 298 * 16 <= MAX_WORK) };
    for (from, to, field) in [
        ("steps_to = 2000", "steps_to = 100000", "steps_to"),
        ("r = 12\n", "r = 100000\n", "gap.r"),
        ("[32, 2048]]", "[32, 100000]]", "fit_ranges[1]"),
        ("range = [0, 512]", "range = [0, 1000000]", "kerple.range"),
    ] {
        assert_refused(
            ID,
            &text,
            from,
            to,
            &[
                &format!("params.{field}: the run encloses B̃(r) up to r = "),
                "above the bound 2^24",
            ],
        );
    }
    // 2^24 / 298 = 56299.5
    let edge = |n: u32| text.replacen("steps_to = 2000", &format!("steps_to = {n}"), 1);
    let spec = Spec::parse(&spec_path(ID), &edge(56299)).unwrap();
    let _run = (claims::find(ID).unwrap().prepare)(&spec, Profile::Quick).unwrap();
    let e = prepare_err(ID, &edge(56300));
    assert!(e.contains("is 16777400, above the bound 2^24"), "{e}");
    let many = format!("fit_dbars = [{}]", vec!["64"; MAX_LIST + 1].join(", "));
    assert_refused(
        ID,
        &text,
        "fit_dbars = [64, 128, 256]",
        &many,
        &["params.fit_dbars: 65 entries, above the bound 64"],
    );
}

/// Regression (positional/shift-invariance computed every query row both ways for every
/// ALiBi slope and Sandwich head with each field bounded alone: 256 rows at L = 4096 took
/// 195 CPU-s, and the fields' limits allowed 65536 rows of length 65536 for each of up to 64
/// heads' slopes, weeks; found by session 43's near-limit scan at 4096 rows): the run's work
/// above 2^24 is refused, naming rows.
#[test]
fn shift_invariance_4096_rows_at_length_4096_is_refused() {
    use attncheck::claims::positional::shift_invariance::MAX_WORK;
    const ID: &str = "positional/shift-invariance";
    let text = spec_text(ID);
    // quick: (8 + 12)·2 + 12 = 52 row sets of 16·16 + 2·512 + 1·4096 entries
    const { assert!(52 * 5376 + 4096 * 64 <= MAX_WORK / 16) };
    let spec = Spec::parse(&spec_path(ID), &text).unwrap();
    for profile in [Profile::Quick, Profile::Full] {
        let _run = (claims::find(ID).unwrap().prepare)(&spec, profile).unwrap();
    }
    let rows =
        |last: u32| text.replacen("rows = [16, 2, 1]", &format!("rows = [16, 2, {last}]"), 1);
    // 52·(1280 + 4096·r) + 262144 ≤ 2^24 ⟺ r ≤ 77
    let spec = Spec::parse(&spec_path(ID), &rows(77)).unwrap();
    let _run = (claims::find(ID).unwrap().prepare)(&spec, Profile::Quick).unwrap();
    for last in [78, 4096] {
        let e = prepare_err(ID, &rows(last));
        assert!(
            e.contains("profiles.quick.rows: (Σ heads·|rules| + sandwich_heads)·Σ rows·L")
                && e.contains("above the bound 2^24"),
            "{last}: {e}"
        );
    }
}

/// Regression (sparse/row-mass bounded each instance's n and d alone and not their number:
/// [4096, 128, 1] took 83 CPU-s, and any number of them was accepted; found by session 43's
/// near-limit scan): Σ n·(n + d/64) above 2^25 is refused, naming instances.
#[test]
fn row_mass_instances_beyond_the_work_bound_are_refused() {
    use attncheck::claims::sparse::row_mass::MAX_WORK;
    const ID: &str = "sparse/row-mass";
    let text = spec_text(ID);
    let spec = Spec::parse(&spec_path(ID), &text).unwrap();
    for profile in [Profile::Quick, Profile::Full] {
        let _run = (claims::find(ID).unwrap().prepare)(&spec, profile).unwrap();
    }
    let committed = "instances = [[64, 128, 1], [64, 512, 2], [256, 512, 1], [256, 56930, 1]]";
    let with = |list: &str| text.replacen(committed, &format!("instances = {list}"), 1);
    assert_ne!(with("[]"), text);
    // one instance at the fields' limits, 4096·(4096 + 2048), is within the bound
    let spec = Spec::parse(&spec_path(ID), &with("[[4096, 131072, 1]]")).unwrap();
    let _run = (claims::find(ID).unwrap().prepare)(&spec, Profile::Quick).unwrap();
    const { assert!(4096 * (4096 + 2048) <= MAX_WORK && 2 * 4096 * (4096 + 2) > MAX_WORK) };
    let e = prepare_err(ID, &with("[[4096, 128, 1], [4096, 128, 1]]"));
    assert!(
        e.contains("params.instances: Σ n·(n + d/64) is 33570816, above the bound 2^25"),
        "{e}"
    );
}

/// Regression (the work bounds were calibrated at 128 bits and ignored the spec's
/// precision: growth-bound's quick profile took 27.5 times as long at 4096 bits, and
/// sandwich-identity's 40 times, so a clusters instance at its bound, about 20 minutes at
/// 128 bits, would run for about 9 hours at 4096): every work bound is weighed by
/// `Resolving::cost_factor` of the spec's precision.
#[test]
fn work_bounds_are_weighed_by_the_precision() {
    use attncheck::claims::shape::Resolving;
    let f = |precision| Resolving { precision }.cost_factor();
    // the kernel's cost model, q·⌈√q⌉ with q = ⌈p/128⌉
    let table = [
        (24, 1),
        (128, 1),
        (129, 4),
        (256, 4),
        (1024, 24),
        (2048, 64),
        (4096, 192),
    ];
    for (p, want) in table {
        assert_eq!(f(p), want, "{p} bits");
    }
    assert_eq!(
        Resolving { precision: 4096 }.weigh(u128::MAX / 2),
        u128::MAX
    );
    // n = d = 128 for 2000 steps, 128·128·384·2000 ≈ 2^33.6: within 2^34 at 128 bits, not
    // at 256 (4×) nor 4096 (192×)
    const ID: &str = "clusters/growth-bound";
    let text = spec_text(ID);
    let big = text
        .replacen("n = 5\nd = 3", "n = 128\nd = 128", 1)
        .replacen("steps = 50\n", "steps = 2000\n", 1);
    let at = |p: u32| big.replacen("precision = 128", &format!("precision = {p}"), 1);
    assert_ne!(at(256), big);
    let spec = Spec::parse(&spec_path(ID), &at(128)).unwrap();
    let _run = (claims::find(ID).unwrap().prepare)(&spec, Profile::Quick).unwrap();
    for (p, weighed) in [(256, 4), (4096, 192)] {
        let e = prepare_err(ID, &at(p));
        let work = 128u128 * 128 * 384 * 2000;
        assert!(
            e.contains(&format!(
                "params.instances[0].steps: n·d·(2n + d)·steps is {work} at 128 bits, weighed \
                 {weighed}× at {p} bits: {}, above the bound 2^34",
                work * weighed
            )),
            "{p}: {e}"
        );
    }
    // a positional bound: shift-invariance's quick profile (541696 ≈ 2^19) is within 2^24
    // at 1024 bits (24×) and above it at 2048 (64×)
    const SHIFT: &str = "positional/shift-invariance";
    let text = spec_text(SHIFT);
    let at = |p: u32| text.replacen("precision = 128", &format!("precision = {p}"), 1);
    let spec = Spec::parse(&spec_path(SHIFT), &at(1024)).unwrap();
    let _run = (claims::find(SHIFT).unwrap().prepare)(&spec, Profile::Quick).unwrap();
    let e = prepare_err(SHIFT, &at(2048));
    assert!(e.contains("at 128 bits, weighed 64× at 2048 bits"), "{e}");
    // codim-conjecture's full profile runs the authors' n = d = 256 flow (1.0·10¹⁰ ≈ 2^33.2
    // with one doubling): within 2^34 at 128 bits, not at 1024 (24×)
    const CODIM: &str = "clusters/codim-conjecture";
    let text = spec_text(CODIM);
    let full = |p: u32| {
        let t = text.replacen("precision = 128", &format!("precision = {p}"), 1);
        let spec = Spec::parse(&spec_path(CODIM), &t).unwrap();
        (claims::find(CODIM).unwrap().prepare)(&spec, Profile::Full).map(|_| ())
    };
    full(128).unwrap();
    let e = full(1024).unwrap_err().to_string();
    assert!(
        e.contains("largest[0].n: n²·d·(t_end/h)·2^(doublings + 1) is 10066329600 at 128 bits, weighed 24× at 1024 bits"),
        "{e}"
    );
}

/// Regression (a matrix's size as written was checked only after it was built: hyperplanes'
/// `v = { diag = [...] }` lengthened to 100000 entries aborted on a 320 GB allocation for
/// the dense diagonal matrix, and a random matrix's `rows` was any integer; found by session
/// 43's scan lengthening every array, `--lists`): the list is refused by its length (at most
/// 256 entries), and a matrix of more than 512 rows by its field, before anything is parsed
/// or allocated.
#[test]
fn a_diagonal_of_100000_entries_is_refused_before_any_allocation() {
    const ID: &str = "clusters/hyperplanes";
    let text = spec_text(ID);
    let long = format!("v = {{ diag = [{}] }}", vec!["\"1\""; 100_000].join(", "));
    assert_refused(
        ID,
        &text,
        "v = { diag = [\"1\", \"1\", \"1/2\"] }",
        &long,
        &["ablations[1].v.diag: 100000 entries, above the bound 256"],
    );
    assert_refused(
        ID,
        &text,
        "tokens = { uniform = [\"-5\", \"5\"], seed = 6102 }",
        "tokens = { uniform = [\"-5\", \"5\"], seed = 6102, rows = 1000000000 }",
        &["instances[1].tokens: 1000000000 rows, above the bound 512"],
    );
}

/// Regression (a list in a claim's parameters was bounded only by the 128 MB spec:
/// length-usage's `increasing_heads` lengthened to 100000 entries aborted on an allocation,
/// and lists of heads, rules or τ thousands long ran for minutes before any product was
/// checked; a provenance of 100000 tags took 20 s; found by session 43's scan lengthening
/// every array, `--lists`): a list longer than 256 entries is refused by its field and
/// line, and a provenance tag named twice by `provenance`.
#[test]
fn increasing_heads_100000_long_is_refused_by_its_field() {
    use attncheck::spec::MAX_LIST;
    const ID: &str = "positional/length-usage";
    let text = spec_text(ID);
    let long = |n: usize| {
        format!(
            "increasing_heads = [{}]",
            ["6", "9", "12"]
                .iter()
                .cycle()
                .take(n)
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    assert_refused(
        ID,
        &text,
        "increasing_heads = [6, 9, 12]",
        &long(100_000),
        &[":31: params.increasing_heads: 100000 entries, above the bound 256"],
    );
    assert_refused(
        ID,
        &text,
        "increasing_heads = [6, 9, 12]",
        &long(MAX_LIST + 1),
        &["params.increasing_heads: 257 entries"],
    );
    // a nested list is found too, named with its path and line
    assert_refused(
        "positional/alibi-slopes",
        &spec_text("positional/alibi-slopes"),
        "exponents = [\"1\", \"2\", \"3\", \"4\", \"5\", \"6\", \"7\", \"8\"]",
        &format!("exponents = [{}]", vec!["\"1\""; 300].join(", ")),
        &[":22: params.reference[0].exponents: 300 entries"],
    );
    let e = prepare_err(
        ID,
        &text.replacen(
            "provenance = [\"paper\", \"derived\"]",
            "provenance = [\"paper\", \"derived\", \"paper\"]",
            1,
        ),
    );
    assert!(e.contains("provenance: names `paper` twice"), "{e}");
}

/// Regression (corollary-dimension's grid bounded n ≤ 1024 and each list alone, but a cell's
/// sign matrix is n × d_formula and d_formula grows with k, γ and ρ: γ = 100000 at n = 16
/// aborted on a 6.6 PB allocation, n = 1024 at k = 8, ε = 1/8 took 126 CPU-s and 7.8 GB, and
/// lists of 256 n ran for minutes; found by session 43's scan, `--lists`): the cells, each
/// cell's n·d_formula and the scan's Σ n²·d_formula/64 are bounded, before anything is drawn.
#[test]
fn corollary_dimension_gamma_100000_is_refused_before_any_allocation() {
    const ID: &str = "sparse/corollary-dimension";
    let text = spec_text(ID);
    let spec = Spec::parse(&spec_path(ID), &text).unwrap();
    for profile in [Profile::Quick, Profile::Full] {
        let _run = (claims::find(ID).unwrap().prepare)(&spec, profile).unwrap();
    }
    let grid = "gammas = [\"(ln 10)\", \"(ln 100)\"]";
    assert_refused(
        ID,
        &text,
        grid,
        "gammas = [\"(ln 10)\", \"100000\"]",
        &[
            "params.grid.ns[0]: n·d_formula is",
            "above the bound 2^31 of one cell",
        ],
    );
    assert_refused(
        ID,
        &text,
        "ns = [16, 32]",
        "ns = [16, 1024]",
        &["params.grid.ns[1]: n·d_formula is", "above the bound 2^31"],
    );
    let many = format!("ns = [{}]", vec!["16"; 129].join(", "));
    assert_refused(
        ID,
        &text,
        "ns = [16, 32]",
        &many,
        &["params.grid: |ks|·|eps|·|gammas|·|rhos|·|ns| is 4128 cells, above the bound 4096"],
    );
}

/// Regression (ratio-lemma bounded each n ≤ 16384, d ≤ 65536 and k alone, and every
/// combination is scanned: n = 16384 at d = 4096 took 98 CPU-s for one k, and lists of 256
/// of them ran for hours; found by session 43's scan, `--lists`): Σ over (n, d, k) of
/// n²·(160 + d/64) above 2^36 is refused, naming ns.
#[test]
fn ratio_lemma_n_16384_at_d_65536_is_refused() {
    use attncheck::claims::sparse::ratio_lemma::MAX_WORK;
    const ID: &str = "sparse/ratio-lemma";
    let text = spec_text(ID);
    let spec = Spec::parse(&spec_path(ID), &text).unwrap();
    for profile in [Profile::Quick, Profile::Full] {
        let _run = (claims::find(ID).unwrap().prepare)(&spec, profile).unwrap();
    }
    let one = |n: u32, d: u32| {
        text.replacen("ns = [64, 256, 1024]", &format!("ns = [{n}]"), 1)
            .replacen("ds = [128, 512]", &format!("ds = [{d}]"), 1)
            .replacen("ks = [1, 2, 4]", "ks = [1]", 1)
    };
    // 16384²·(160 + 64) ≈ 2^35.8 is within the bound
    const { assert!(16384 * 16384 * (160 + 4096 / 64) <= MAX_WORK) };
    let spec = Spec::parse(&spec_path(ID), &one(16384, 4096)).unwrap();
    let _run = (claims::find(ID).unwrap().prepare)(&spec, Profile::Quick).unwrap();
    let e = prepare_err(ID, &one(16384, 65536));
    assert!(
        e.contains(
            "params.ns: Σ over n, d and k of n²·(160 + d/64) is 317827579904, above the bound 2^36"
        ),
        "{e}"
    );
    let many = format!("ns = [{}]", vec!["64, 256, 1024"; 85].join(", "));
    assert_refused(
        ID,
        &text,
        "ns = [64, 256, 1024]",
        &many,
        &["above the bound 2^36"],
    );
}

/// Regression (a clusters claim bounded each instance at 2^34, about 20 minutes, and not
/// their number: 256 instances at that bound, the longest list a spec may hold, were
/// accepted, days; and the work counted no step's overhead: rescaling's instance repeated 256
/// times took 585 CPU-s for 50 steps each, 33 hours at its 10000; found by session 43's
/// `--tables` scan): the sum over every instance a run follows, a step's overhead included,
/// is at most 2^35, checked before any is built, naming the first list.
#[test]
fn clusters_instances_whose_sum_is_beyond_the_run_bound_are_refused() {
    use attncheck::claims::clusters::common::{
        instance_work, MAX_INSTANCE_WORK, MAX_RUN_WORK, STEP_OVERHEAD,
    };
    const ID: &str = "clusters/growth-bound";
    let text = spec_text(ID);
    // each instance n = d = 128 for 2000 steps, ≈ 2^33.55: within the instance bound; in the
    // run's sum with a step's overhead, ≈ 2^33.8, and the third small one adds 50 steps
    assert!(instance_work(128, 128, 2000) <= MAX_INSTANCE_WORK);
    let one = instance_work(128, 128, 2000) + STEP_OVERHEAD * 2000;
    let small = instance_work(20, 2, 50) + STEP_OVERHEAD * 50;
    assert!(2 * one + small <= MAX_RUN_WORK && 3 * one > MAX_RUN_WORK);
    let big = |text: &str, from: &str, steps: &str| {
        text.replacen(from, "n = 128\nd = 128", 1)
            .replacen(steps, "steps = 2000\n", 1)
    };
    let two = big(
        &big(&text, "n = 5\nd = 3", "steps = 50\n"),
        "n = 10\nd = 4",
        "steps = 100\n",
    );
    let spec = Spec::parse(&spec_path(ID), &two).unwrap();
    let _run = (claims::find(ID).unwrap().prepare)(&spec, Profile::Quick).unwrap();
    let three = big(&two, "n = 20\nd = 2", "steps = 50\n");
    let e = prepare_err(ID, &three);
    assert!(
        e.contains(&format!(
            "params.instances: Σ (n·d·(2n + d) + 2^20)·steps over instances is {}",
            3 * one
        )) && e.contains("above the bound 2^35 of a run"),
        "{e}"
    );
}

/// Regression (collapse's instances carry `steps = 1` and run 4·t_first/Δt steps, so the
/// instance bound never saw its real horizon: n = d = 512 for 4000 steps was accepted, about
/// 1.6·10¹² units, weeks; found reading collapse for the run's sum, session 43): the real
/// steps are bounded as every instance's, naming the instance's dt.
#[test]
fn collapse_n_512_for_4000_steps_is_refused() {
    const ID: &str = "clusters/collapse";
    let text = spec_text(ID);
    let spec = Spec::parse(&spec_path(ID), &text).unwrap();
    for profile in [Profile::Quick, Profile::Full] {
        let _run = (claims::find(ID).unwrap().prepare)(&spec, profile).unwrap();
    }
    let e = prepare_err(ID, &text.replacen("n = 10\nd = 3", "n = 512\nd = 512", 1));
    assert!(
        e.contains("params.instances[0].dt: 4·t_first/Δt = 4000 steps: n·d·(2n + d)·steps is")
            && e.contains("above the bound 2^34 of an instance or 2^35 of a run"),
        "{e}"
    );
}
