//! Statements: what a claim asserts, as a list of obligations over named exact
//! data, and [`check`], the one function that decides them.
//!
//! This is the LRAT / Lean `add_theorem` shape (docs/design.md, "The trust boundary"): the statement
//! is rebuilt from the spec by the claim's statement builder, the certificate must
//! carry exactly that statement, and the kernel evaluates it. The only values
//! that can be recorded as *certified* checks are the [`Decision`]s made here: a
//! [`Checked`] has private fields, so claim code cannot turn a bool, an f64
//! comparison or a count into a proof.
//!
//! Meaning: an obligation with [`Expect::Holds`] asserts its formula; one with
//! [`Expect::Fails`] asserts that the formula is false (a refutation: the claim's
//! spec names it in `refutes`). The statement is *as expected* when every
//! obligation comes out as its expectation says.

use super::expr::{self, Data, Datum, ExprError, Tiers};
use super::Certainty;
use serde::{Deserialize, Serialize};

/// What an obligation asserts about its formula.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Expect {
    /// The formula is true.
    #[default]
    Holds,
    /// The formula is false (a certified counterexample is expected).
    Fails,
}

impl Expect {
    /// `"holds"` or `"fails"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Expect::Holds => "holds",
            Expect::Fails => "fails",
        }
    }
}

/// One obligation: a named formula of the certificate language ([`expr`]). Two are
/// equal when they state the same (name, text, expectation), built or parsed.
#[derive(Clone, Debug)]
pub struct Obligation {
    /// What it states, in words (the check's name in the report).
    pub name: String,
    /// The formula, an S-expression.
    pub formula: String,
    /// Whether it is asserted true or false.
    pub expect: Expect,
    /// The tree a statement builder built (`formula` is its text): decided as built,
    /// not parsed again ([`expr::prepare_built`]).
    built: Option<expr::Sexp>,
}

impl Obligation {
    /// Whether a statement builder built it ([`Statement::state`]): the kernel decides
    /// the tree it was built as, and never parses its text. An obligation read from a
    /// certificate, or asserted as text ([`Statement::assert`]: a formula the user
    /// wrote), is parsed.
    pub fn is_built(&self) -> bool {
        self.built.is_some()
    }
}

impl PartialEq for Obligation {
    fn eq(&self, other: &Self) -> bool {
        (&self.name, &self.formula, self.expect) == (&other.name, &other.formula, other.expect)
    }
}

impl Eq for Obligation {}

/// What a claim asserts for one spec: obligations over named data.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Statement {
    /// The claim ID.
    pub claim: String,
    /// The obligations, in order.
    pub obligations: Vec<Obligation>,
    /// Named data the formulas refer to.
    pub data: Data,
}

impl Statement {
    /// An empty statement of `claim`.
    pub fn new(claim: &str) -> Statement {
        Statement {
            claim: claim.into(),
            ..Statement::default()
        }
    }
    /// Asserts `formula` under `name` (expected to hold until
    /// [`Statement::expect_fails`] says otherwise).
    pub fn assert(&mut self, name: impl Into<String>, formula: impl Into<String>) {
        self.obligations.push(Obligation {
            name: name.into(),
            formula: formula.into(),
            expect: Expect::Holds,
            built: None,
        });
    }
    /// Asserts a formula a statement builder built ([`expr::build`]): its text is the
    /// canonical one a certificate carries, and the kernel decides the tree it was built
    /// as, without parsing the text again.
    pub fn state(&mut self, name: impl Into<String>, formula: &expr::build::Formula) {
        let (text, tree) = formula.finish();
        self.obligations.push(Obligation {
            name: name.into(),
            formula: text,
            expect: Expect::Holds,
            built: Some(tree),
        });
    }
    /// Adds a named datum.
    pub fn datum(&mut self, name: &str, d: Datum) {
        self.data.insert(name.into(), d);
    }
    /// Marks the named obligations as expected to fail (the spec's `refutes`).
    /// Every name must be an obligation of the statement.
    pub fn expect_fails(&mut self, names: &[String]) -> Result<(), NotAnObligation> {
        for n in names {
            let Some(o) = self.obligations.iter_mut().find(|o| &o.name == n) else {
                return Err(NotAnObligation {
                    name: n.clone(),
                    claim: self.claim.clone(),
                });
            };
            o.expect = Expect::Fails;
        }
        Ok(())
    }
    /// Whether two obligation names coincide (names identify checks in reports and `--check`).
    pub fn duplicate_name(&self) -> Option<&str> {
        let mut seen = std::collections::BTreeSet::new();
        self.obligations
            .iter()
            .find(|o| !seen.insert(o.name.as_str()))
            .map(|o| o.name.as_str())
    }
}

/// The kernel's decision on one obligation. Only [`check`] creates one.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    name: String,
    result: Certainty,
    expect: Expect,
}

impl Decision {
    /// The obligation's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The three-valued truth of the formula.
    pub fn result(&self) -> Certainty {
        self.result
    }
    /// What the statement asserts about it.
    pub fn expect(&self) -> Expect {
        self.expect
    }
    /// True iff the formula came out as asserted (True for `holds`, False for `fails`).
    pub fn as_expected(&self) -> bool {
        match self.expect {
            Expect::Holds => self.result == Certainty::True,
            Expect::Fails => self.result == Certainty::False,
        }
    }
    /// Certifiably contrary to what is asserted: decided (not `Unknown`), the other way.
    pub fn contrary(&self) -> bool {
        self.result != Certainty::Unknown && !self.as_expected()
    }
}

/// Every decision of one evaluation, at one precision. Only [`check`] creates one:
/// this is the border of `certified` (issue #24). The application records a certified
/// check only from a `Checked`, so code outside this crate cannot forge one, nor a
/// [`Decision`] inside it (their fields are private, and nothing else builds them):
///
/// ```compile_fail
/// use attncheck_kernel::{Certainty, Checked, Decision, Expect};
/// let forged = Decision {
///     name: "anything".to_string(),
///     result: Certainty::True,
///     expect: Expect::Holds,
/// };
/// let _ = Checked { decisions: vec![forged], prec: 64 };
/// ```
///
/// The one road is the kernel's evaluation of a statement:
///
/// ```
/// use attncheck_kernel::{check, Certainty, Statement};
/// let mut st = Statement::new("example/one-road");
/// st.assert("one is less than two", "(< 1 2)");
/// let checked = check(&st, 64).unwrap();
/// assert_eq!(checked.decisions()[0].result(), Certainty::True);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    decisions: Vec<Decision>,
    prec: u32,
}

impl Checked {
    /// The decisions, in the statement's order.
    pub fn decisions(&self) -> &[Decision] {
        &self.decisions
    }
    /// The precision in bits.
    pub fn prec(&self) -> u32 {
        self.prec
    }
    /// Whether every obligation came out as asserted.
    pub fn as_expected(&self) -> bool {
        self.decisions.iter().all(Decision::as_expected)
    }
    /// The names of the obligations not decided as expected, in order (empty when
    /// [`Self::as_expected`]).
    pub fn failures(&self) -> Vec<&str> {
        self.decisions
            .iter()
            .filter(|d| !d.as_expected())
            .map(Decision::name)
            .collect()
    }
}

/// A name given to [`Statement::expect_fails`] that no obligation of the statement has.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{name}` is not an obligation of {claim}'s statement")]
pub struct NotAnObligation {
    /// The name.
    pub name: String,
    /// The statement's claim.
    pub claim: String,
}

/// An obligation that could not be evaluated (malformed, over budget, unbound name).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("obligations[{index}] ({name}): {error}")]
pub struct CheckError {
    /// Its index.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// What went wrong.
    pub error: ExprError,
}

/// Decides every obligation of `st` at `prec` bits (in parallel; the result does
/// not depend on the thread count). This is the function `attncheck verify` calls
/// and the only place that creates [`Decision`]s. Every formula is parsed, and the
/// whole statement (every obligation and datum together, [`expr::work_of_all`]) is
/// held to the work budget [`expr::MAX_WORK`] before any is evaluated, so an
/// over-budget certificate is refused before anything runs; the error names the
/// first obligation by index at which the running total passes the budget (issue
/// #38: the budget bounded each formula alone until then).
///
/// Each obligation is decided first in the f64 tier and, where that tier leaves a
/// comparison undecided or lacks an operation, at `prec` bits in MPFR (issue #41:
/// [`check_with`], whose [`Tiers::MpfrOnly`] gives the same decisions, charges and
/// errors).
pub fn check(st: &Statement, prec: u32) -> Result<Checked, CheckError> {
    check_with(st, prec, Tiers::F64ThenMpfr)
}

/// [`check`] in the given tiers: [`Tiers::MpfrOnly`] decides every obligation in MPFR
/// at `prec` bits alone (the reference the f64 tier is tested against); the decisions,
/// the work charged and every refusal are the same as with [`Tiers::F64ThenMpfr`]
/// (`expr::tier`'s argument).
pub fn check_with(st: &Statement, prec: u32, tiers: Tiers) -> Result<Checked, CheckError> {
    use rayon::prelude::*;
    let at = |index: usize| {
        move |error| CheckError {
            index,
            name: st.obligations[index].name.clone(),
            error,
        }
    };
    let (prepared, all) = within_budget(st, prec)?;
    let budget = expr::Budget::new(expr::MAX_WORK - all);
    let decisions = prepared
        .par_iter()
        .zip(&st.obligations)
        .enumerate()
        .map(|(index, (f, o))| {
            let result = f.check_tiers(&budget, tiers).map_err(at(index))?;
            Ok(Decision {
                name: o.name.clone(),
                result,
                expect: o.expect,
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Checked { decisions, prec })
}

/// The work [`check`] charges `st` at `prec` (every obligation and datum together,
/// [`expr::work_of_all`]), or the error with which `check` refuses it over the budget,
/// without deciding anything: a caller that searches before it states (`attncheck
/// window`) asks first whether the statement it will build can be checked at all.
pub fn work(st: &Statement, prec: u32) -> Result<u128, CheckError> {
    within_budget(st, prec).map(|(_, all)| all)
}

/// Every obligation parsed (or taken as built) and the whole statement held to the
/// budget: the prepared formulas and the total work.
fn within_budget(st: &Statement, prec: u32) -> Result<(Vec<expr::Prepared<'_>>, u128), CheckError> {
    use rayon::prelude::*;
    let at = |index: usize| {
        move |error| CheckError {
            index,
            name: st.obligations[index].name.clone(),
            error,
        }
    };
    let prepared = st
        .obligations
        .par_iter()
        .enumerate()
        .map(|(index, o)| {
            match &o.built {
                Some(tree) => expr::prepare_built(tree, prec, &st.data),
                None => expr::prepare(&o.formula, prec, &st.data),
            }
            .map_err(at(index))
        })
        .collect::<Vec<_>>()
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let totals = expr::work_of_all(prepared.iter().map(|f| f.sexp()), &st.data, prec);
    let all = totals.last().copied().unwrap_or(0);
    if let Some(index) = totals.iter().position(|&t| t > expr::MAX_WORK) {
        return Err(at(index)(expr::ExprError {
            offset: 0,
            reason: format!(
                "the certificate would cost {all} units of work in all (its {} obligations and {} data \
                 together; the obligations up to this one, {}), over the budget of one certificate: the \
                 limit is {}",
                st.obligations.len(),
                st.data.len(),
                totals[index],
                expr::MAX_WORK
            ),
        }));
    }
    Ok((prepared, all))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::build::{int, lt};

    /// [`Statement::state`] keeps the built tree ([`Obligation::is_built`]);
    /// [`Statement::assert`] and a certificate's obligations are text, parsed when
    /// checked. Both decide the same, and compare equal by their text.
    #[test]
    fn a_stated_obligation_is_built_and_an_asserted_one_is_not() {
        let mut built = Statement::new("example/built");
        built.state("one is less than two", &lt(int(1), int(2)));
        let mut text = Statement::new("example/built");
        text.assert("one is less than two", "(< 1 2)");
        assert!(built.obligations[0].is_built());
        assert!(!text.obligations[0].is_built());
        assert_eq!(built, text);
        for st in [&built, &text] {
            let c = check(st, 64).unwrap();
            assert_eq!(c.decisions()[0].result(), Certainty::True);
        }
    }
}
