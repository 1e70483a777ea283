//! The lemmas proven once and for all in Coq that ship in `coq/` (issue #39): their
//! texts, for `coq::check_lemmas` to compile and for a spec's `[lemma]` to name
//! (`spec::LemmaRef`). Below `spec` and `coq` in the layers (docs/design.md), so that
//! both can read the list.

/// (module name, text) of each file, beside the library `coq/Attncheck.v`, which they
/// import. Each ends with `Print Assumptions`.
pub const LEMMAS: &[(&str, &str)] = &[
    ("AlibiTailBound", include_str!("../coq/AlibiTailBound.v")),
    ("BooleanLimit", include_str!("../coq/BooleanLimit.v")),
    ("BooleanInstance", include_str!("../coq/BooleanInstance.v")),
    ("HullMonotone", include_str!("../coq/HullMonotone.v")),
];

/// The lemma files that turn certified hypotheses at a finite step into a limit, each
/// with the claims whose statement builders state exactly those hypotheses: a spec's
/// `[lemma]` may lift the cap on an asymptotic claim only with a file listed here for
/// its claim. A lemma that gives no limit (HullMonotone: a per-step monotonicity;
/// AlibiTailBound: a bound at every length) lifts no cap, and a claim of one's own
/// cannot borrow a lemma whose hypotheses its obligations were never checked against.
pub const LIMIT_LEMMAS: &[(&str, &[&str])] = &[("BooleanLimit", &["clusters/boolean-limit"])];
