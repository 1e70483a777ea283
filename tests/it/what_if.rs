//! `run --set PATH=VALUE` (a claim's parameters changed for one run) and `run
//! --explain` (the certified values behind its checks): the user's question "what is
//! the value, certified?" (issue #26).

use crate::util::{output_text, project, run_in};

#[test]
fn set_changes_a_parameter_for_one_run_and_explain_shows_the_true_window() {
    let dir = project(&["positional/alibi-window"]);
    let d = dir.path();
    let o = run_in(
        d,
        &[
            "run",
            "positional/alibi-window",
            "--set",
            "rows[0].slope=2^-5",
            "--explain",
        ],
    );
    let t = output_text(&o);
    // the printed windows of row 0 belong to m = 1/2: wrong for m = 1/32, refuted
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("BAD positional/alibi-window"), "{t}");
    // the true w_ε for m = 2^-5, Δ = 0, ε = 1/100 is ⌈32·ln 100⌉ = ⌈147.36…⌉ = 148
    assert!(
        t.contains("(/ (ln (/ (+ (* (exp 0) (- 1 1/100)) 1/100) 1/100)) 1/32) = 147.36"),
        "{t}"
    );
    // and beside a printed reference value, the computed one
    assert!(
        t.contains("where (exp (neg (* 512 1/32))) = 0.00000011253517471925"),
        "{t}"
    );
    // the reports went to reports/what-if/, and their command says how they were made
    let md = std::fs::read_to_string(d.join("reports/what-if/positional/alibi-window.md")).unwrap();
    assert!(
        md.contains("attncheck run positional/alibi-window --set 'rows[0].slope=2^-5'"),
        "{md}"
    );
    assert!(!d.join("reports/positional").exists());
}

#[test]
fn set_errors_name_the_command_line_and_exit_2() {
    let dir = project(&["positional/alibi-window", "positional/alibi-slopes"]);
    let d = dir.path();
    for (args, needle) in [
        (
            &["run", "positional/alibi-window", "--set", "rows[9].slope=1"][..],
            "`rows[9].slope` is not a parameter",
        ),
        (
            &[
                "run",
                "positional/alibi-window",
                "--set",
                "rows[0].slope=-1",
            ][..],
            "--set rows[0].slope=-1: slope must lie in",
        ),
        (
            &["run", "positional/alibi-window", "--set", "mean_cutoff=x"][..],
            "--set mean_cutoff=x",
        ),
        (
            &["run", "positional/alibi-window", "--set", "epsilon"][..],
            "PATH=VALUE",
        ),
        (
            &["run", "positional", "--set", "epsilon=1/10"][..],
            "one claim",
        ),
        (
            &["run", "--all", "--set", "epsilon=1/10"][..],
            "cannot be combined",
        ),
        (
            &[
                "run",
                "positional/alibi-window",
                "--check",
                "--set",
                "epsilon=1/10",
            ][..],
            "cannot be combined",
        ),
    ] {
        let o = run_in(d, args);
        let t = output_text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
        assert!(t.contains(needle), "{args:?}: `{needle}` not in {t}");
        assert!(!d.join("reports").exists(), "{args:?} wrote reports");
    }
}

#[test]
fn explain_of_a_formulas_claim_shows_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert_eq!(run_in(d, &["new", "mine/b"]).status.code(), Some(0));
    let o = run_in(d, &["run", "mine/b.toml", "--explain"]);
    let t = output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("mine/b: the values behind its checks"), "{t}");
    assert!(t.contains("   <=   1/1000 = 0.001"), "{t}");
}
