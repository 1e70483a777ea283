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
