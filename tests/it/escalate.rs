//! The one precision-escalation helper (`attncheck::escalate`): its ladder is bounded
//! and known in advance, it stops at the first settled rung, and it says when it ran out.

use attncheck::escalate::{escalate, Escalated, Ladder, TOP_BITS};
use proptest::prelude::*;
use std::cell::Cell;

#[test]
fn the_ladder_doubles_from_its_start() {
    assert_eq!(Ladder::new(128, 3).precisions(), vec![128, 256, 512, 1024]);
    assert_eq!(Ladder::new(128, 0).precisions(), vec![128]);
    assert_eq!(Ladder::new(128, 3).top(), 1024);
}

/// Regression (issue #24: "one of which loops without bound, one of which panics at
/// 2²⁰ bits"): a ladder never climbs above MPFR's largest precision and never wraps.
#[test]
fn a_ladder_near_the_top_stops_instead_of_wrapping() {
    let l = Ladder::new(1 << 30, 10);
    assert_eq!(l.precisions(), vec![1 << 30]);
    assert!(l.top() <= TOP_BITS);
    assert_eq!(Ladder::new(u32::MAX, 3).precisions(), vec![TOP_BITS]);
}

#[test]
fn an_unsettled_computation_is_exhausted_at_the_top_rung() {
    let calls = Cell::new(0);
    let r = escalate(
        Ladder::new(64, 4),
        |bits| {
            calls.set(calls.get() + 1);
            bits
        },
        |_| false,
    );
    assert_eq!(calls.get(), 5);
    assert!(r.is_exhausted());
    assert_eq!(r.clone().settled(), None);
    assert_eq!(r.into_parts(), (1024, 1024));
}

proptest! {
    /// Monotone, bounded, and `compute` runs exactly up to the first settled rung.
    #[test]
    fn escalate_stops_at_the_lowest_settled_rung(start in 1u32..100_000, doublings in 0u32..12, need in 0u32..2_000_000) {
        let ladder = Ladder::new(start, doublings);
        let rungs = ladder.precisions();
        prop_assert!(!rungs.is_empty() && rungs.len() <= doublings as usize + 1);
        prop_assert!(rungs.windows(2).all(|w| w[1] == 2 * w[0]));
        prop_assert!(rungs.iter().all(|&b| b <= TOP_BITS));
        let calls = Cell::new(0u32);
        let r = escalate(ladder, |bits| { calls.set(calls.get() + 1); bits }, |&b| b >= need);
        match rungs.iter().position(|&b| b >= need) {
            Some(i) => {
                prop_assert_eq!(r, Escalated::Settled { value: rungs[i], bits: rungs[i] });
                prop_assert_eq!(calls.get() as usize, i + 1);
            }
            None => {
                let top = *rungs.last().unwrap();
                prop_assert_eq!(r, Escalated::Exhausted { value: top, bits: top });
                prop_assert_eq!(calls.get() as usize, rungs.len());
            }
        }
    }
}

/// Whether `line` doubles a precision in place: `<name with prec or bits> *= 2` or
/// `<<= 1` (`prec *= 2`, `spec.precision <<= 1`, …).
fn doubles_a_precision(line: &str) -> bool {
    ["*= 2", "<<= 1"].iter().any(|op| {
        line.find(op).is_some_and(|at| {
            let lhs = line[..at].trim_end();
            let name = lhs
                .rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                .next()
                .unwrap_or("");
            name.contains("prec") || name.contains("bits")
        })
    })
}

/// The lines of `text`, comments left out, that escalate a precision by hand.
fn hand_escalations(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .filter(|l| doubles_a_precision(l))
        .map(str::to_string)
        .collect()
}

/// Issue #24: "one precision-escalation helper with an explicit trigger and an explicit
/// bound". No code but `escalate` doubles a precision by hand.
#[test]
fn no_module_escalates_precision_by_hand() {
    let root = crate::util::root();
    let mut found = Vec::new();
    for dir in [
        "src",
        "crates/attncheck-kernel/src",
        "crates/attncheck-lm/src",
    ] {
        for f in crate::util::files_under(&root.join(dir), ".rs") {
            let text = std::fs::read_to_string(&f).unwrap();
            for l in hand_escalations(&text) {
                found.push(format!("{}: {l}", f.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "escalate through attncheck::escalate:\n{}",
        found.join("\n")
    );
}

/// The scan above is not vacuous: it finds a planted hand-written escalation.
#[test]
fn the_escalation_scan_finds_a_planted_one() {
    let planted = "fn f() {\n    let mut prec = 64;\n    loop {\n        prec *= 2;\n    }\n}\n";
    assert_eq!(hand_escalations(planted).len(), 1);
    assert!(hand_escalations("    // prec *= 2 in a comment\n    x *= 2;\n").is_empty());
    assert_eq!(hand_escalations("        spec.precision <<= 1;\n").len(), 1);
}
