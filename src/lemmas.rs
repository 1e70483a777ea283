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
