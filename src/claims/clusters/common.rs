//! Shared pieces of the clusters claims: a witness instance as written in a spec
//! (system, tokens, step, horizon), its validation with field-naming errors, and
//! small report helpers.

use crate::claims::shape::Resolving;
use crate::dynamics::model::{tokens, Mat, MatrixSpec, System};
use crate::kernel::Interval;
use crate::spec::{exact, FieldError};
use rug::Rational;
use serde::{Deserialize, Serialize};

fn identity() -> MatrixSpec {
    MatrixSpec::Named("I".into())
}

/// One witness of a discrete-map claim.
///
/// ```toml
/// [[params.instances]]
/// name = "random n = 10, d = 4"
/// n = 10
/// d = 4
/// q = { uniform = ["-1", "1"], seed = 11 }
/// k = { uniform = ["-1", "1"], seed = 12 }
/// v = { uniform = ["-1", "1"], seed = 13 }
/// tokens = { uniform = ["-1", "1"], seed = 14 }
/// dt = "1/10"
/// steps = 50
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceSpec {
    /// A short label for tables.
    pub name: String,
    /// Number of tokens.
    pub n: usize,
    /// Dimension.
    pub d: usize,
    /// Q (m × d; default I).
    #[serde(default = "identity")]
    pub q: MatrixSpec,
    /// K (m × d; default I).
    #[serde(default = "identity")]
    pub k: MatrixSpec,
    /// V (d × d; default I).
    #[serde(default = "identity")]
    pub v: MatrixSpec,
    /// Initial tokens (n × d).
    pub tokens: MatrixSpec,
    /// The step Δt (exact literal, > 0).
    pub dt: String,
    /// Number of steps of the discrete map.
    pub steps: usize,
}

/// A resolved instance: exact data.
#[derive(Clone, Debug)]
pub struct Instance {
    /// Label.
    pub name: String,
    /// Number of tokens.
    pub n: usize,
    /// The system.
    pub sys: System,
    /// Initial tokens.
    pub tokens: Mat,
    /// Δt.
    pub dt: Rational,
    /// Steps.
    pub steps: usize,
}

/// The work of one instance's trajectory, n·d·(2n + d)·steps: each step of the layer map
/// forms the n × n attention logits (n²d multiply-adds), applies P (n²d) and V (nd²).
pub fn instance_work(n: usize, d: usize, steps: usize) -> u128 {
    let (n, d) = (n as u128, d as u128);
    n * d * (2 * n + d) * steps as u128
}

/// The largest [`instance_work`] an instance may ask for, weighed at the spec's precision
/// ([`Resolving::weigh`]): 2^34. growth-bound's map at
/// n = d = 128 and 128 bits took about 0.5 CPU-s a step here (6.3·10⁶ units, ≈ 80 ns a
/// unit in outward-rounded intervals), so an instance at the bound takes about 20
/// minutes of one core for one trajectory (claims that follow two, or escalate the
/// precision, a few times that), where n, d ≤ 512 and the claims' step limits alone
/// admitted a month (n = d = 512 and 100000 steps).
pub const MAX_INSTANCE_WORK: u128 = 1 << 34;

/// The most work one run may ask for, Σ (n·d·(2n + d) + [`STEP_OVERHEAD`])·steps over every
/// instance it follows (its instances, ablations, gap cases, extra instances), weighed at the
/// spec's precision: 2^35, about 40 minutes of one core at 128 bits. Each instance alone is
/// bounded by [`MAX_INSTANCE_WORK`]; without a sum, 256 instances at that bound (the longest
/// list a spec may hold) were accepted, days, and without the overhead 256 of rescaling's
/// small instances at its 10000 steps (33 hours). The committed specs' sums are below 2^31.
pub const MAX_RUN_WORK: u128 = 1 << 35;

/// What a step costs besides the layer map's arithmetic, in the same units (about 80 ns):
/// 2^20. Measured on rescaling, whose steps carry the most (two precisions, the checks of
/// every step): 256 instances of n = 5, d = 3 for 50 steps took 585 CPU-s, 45.7 ms a step,
/// about 2^19.1 units, where the map itself is 195.
pub const STEP_OVERHEAD: u128 = 1 << 20;

/// Checks every instance's sizes ([`InstanceSpec::check_sizes`]), then [`MAX_RUN_WORK`] on
/// their sum, before any instance is built; the sum's error names the first list.
pub fn check_run_work(
    lists: &[(&str, &[InstanceSpec])],
    max_steps: usize,
    at: Resolving,
) -> Result<(), FieldError> {
    for (field, list) in lists {
        for (i, s) in list.iter().enumerate() {
            s.check_sizes(&format!("{field}[{i}]"), max_steps, at)?;
        }
    }
    let work = lists
        .iter()
        .flat_map(|(_, l)| l.iter())
        .map(|s| {
            let (n, d) = (s.n as u128, s.d as u128);
            n.saturating_mul(d)
                .saturating_mul(n.saturating_mul(2).saturating_add(d))
                .saturating_add(STEP_OVERHEAD)
                .saturating_mul(s.steps as u128)
        })
        .fold(0u128, u128::saturating_add);
    if at.weigh(work) > MAX_RUN_WORK {
        let names: Vec<&str> = lists.iter().map(|(f, _)| *f).collect();
        return Err(FieldError::new(
            lists.first().map_or("instances", |l| l.0),
            format!(
                "Σ (n·d·(2n + d) + 2^20)·steps over {} is {}, above the bound 2^35 of a run \
                 (about 40 minutes of one core; 2^20 is a step's overhead): use fewer or \
                 smaller instances, or fewer steps",
                names.join(", "),
                at.show(work)
            ),
        ));
    }
    Ok(())
}

/// Prefixes a field error with the instance's path (`instances[2].`).
pub fn prefixed(prefix: &str, e: FieldError) -> FieldError {
    FieldError::new(format!("{prefix}.{}", e.field), e.reason)
}

impl InstanceSpec {
    /// Every size of the instance — d, n, steps and their work ([`MAX_INSTANCE_WORK`]) —
    /// checked before anything is parsed, drawn or multiplied; errors name `prefix.field`.
    pub fn check_sizes(
        &self,
        prefix: &str,
        max_steps: usize,
        at: Resolving,
    ) -> Result<(), FieldError> {
        System::check_d(self.d).map_err(|e| prefixed(prefix, e))?;
        if self.n < 1 || self.n > 512 {
            return Err(FieldError::new(
                format!("{prefix}.n"),
                "must be between 1 and 512",
            ));
        }
        if self.steps == 0 || self.steps > max_steps {
            return Err(FieldError::new(
                format!("{prefix}.steps"),
                format!("must be between 1 and {max_steps}"),
            ));
        }
        let work = instance_work(self.n, self.d, self.steps);
        if at.weigh(work) > MAX_INSTANCE_WORK {
            return Err(FieldError::new(
                format!("{prefix}.steps"),
                format!(
                    "n·d·(2n + d)·steps is {}, above the bound 2^34 (about 20 minutes of one \
                     core for one trajectory): use fewer steps, a smaller n or d, or a lower \
                     precision",
                    at.show(work)
                ),
            ));
        }
        Ok(())
    }

    /// Resolves and validates the instance; errors name `prefix.field`.
    /// `max_steps` bounds the horizon (a budget, stated in the error).
    pub fn build(
        &self,
        prefix: &str,
        max_steps: usize,
        at: Resolving,
    ) -> Result<Instance, FieldError> {
        self.check_sizes(prefix, max_steps, at)?;
        let toks = tokens("tokens", &self.tokens, self.n, self.d, false)
            .map_err(|e| prefixed(prefix, e))?;
        let dt = exact(&format!("{prefix}.dt"), &self.dt)?;
        if dt <= 0 {
            return Err(FieldError::new(format!("{prefix}.dt"), "must be positive"));
        }
        let sys = System::from_specs(self.d, &self.q, &self.k, &self.v)
            .map_err(|e| prefixed(prefix, e))?;
        Ok(Instance {
            name: self.name.clone(),
            n: self.n,
            sys,
            tokens: toks,
            dt,
            steps: self.steps,
        })
    }
}

/// Builds every instance of a list, naming `field[i]` on error; the list must
/// not be empty.
pub fn build_all(
    list: &[InstanceSpec],
    field: &str,
    max_steps: usize,
    at: Resolving,
) -> Result<Vec<Instance>, FieldError> {
    if list.is_empty() {
        return Err(FieldError::new(field, "must not be empty"));
    }
    list.iter()
        .enumerate()
        .map(|(i, s)| s.build(&format!("{field}[{i}]"), max_steps, at))
        .collect()
}

/// A non-empty list of positive exact rationals (e.g. cluster radii τ); an error names
/// `field` or the offending `field[i]`.
pub fn positive_rationals(field: &str, list: &[String]) -> Result<Vec<Rational>, FieldError> {
    if list.is_empty() {
        return Err(FieldError::new(field, "must not be empty"));
    }
    list.iter()
        .enumerate()
        .map(|(i, s)| {
            let f = format!("{field}[{i}]");
            let q = exact(&f, s)?;
            if q <= 0 {
                return Err(FieldError::new(f, "must be positive"));
            }
            Ok(q)
        })
        .collect()
}

/// An exact rational printed compactly (`p/q`, or the integer).
pub fn fmt_q(q: &Rational) -> String {
    if *q.denom() == 1 {
        q.numer().to_string()
    } else {
        format!("{}/{}", q.numer(), q.denom())
    }
}

/// log10 of the midpoint of an enclosure of a positive quantity (for drawing
/// attention weights far below f64's range; −∞ for 0).
pub fn log10_mid(x: &Interval) -> f64 {
    let m = x.mid();
    if m.is_zero() || m.is_sign_negative() {
        return f64::NEG_INFINITY;
    }
    m.log10().to_f64()
}

/// Adds the two standard pictures of a run to `into`: the token trajectories (sampled
/// states, midpoints of the enclosures) and the final attention matrix as a
/// log-scale heat map.
#[allow(clippy::too_many_arguments)]
pub fn add_visuals(
    into: &mut Vec<crate::outcome::Plot>,
    slug: &str,
    name: &str,
    times: &[f64],
    states: &[Vec<f64>],
    n: usize,
    d: usize,
    p_final: &[Interval],
) {
    use crate::dynamics::plots;
    into.push(plots::trajectories(
        &format!("{slug}-tokens"),
        &format!("{name}: token trajectories"),
        times,
        states,
        n,
        d,
    ));
    let logp: Vec<f64> = p_final.iter().map(log10_mid).collect();
    into.push(plots::attention_heatmap_log10(
        &format!("{slug}-attention"),
        &format!("{name}: attention matrix P at the final step (log10)"),
        &logp,
        n,
    ));
}

/// The `layer` datum of an instance: its exact Q, K, V, Δt and steps, iterated from
/// each of `runs` (initial tokens; the instance's own when `runs` is empty). The
/// builders of growth-bound and stability state their obligations over it.
pub fn layer_datum(
    inst: &Instance,
    runs: Vec<Mat>,
) -> Result<crate::kernel::expr::Datum, crate::claims::shape::StatementError> {
    let runs = if runs.is_empty() {
        vec![inst.tokens.clone()]
    } else {
        runs
    };
    crate::dynamics::layer_data::LayerData::new(
        inst.sys.q.clone(),
        inst.sys.k.clone(),
        inst.sys.v.clone(),
        inst.dt.clone(),
        inst.steps,
        runs,
    )
    .map(crate::kernel::expr::Datum::Layer)
    .map_err(|(f, r)| {
        crate::claims::shape::StatementError::Build(format!("{}: layer datum: {f}: {r}", inst.name))
    })
}

/// How the kernel decided the obligation `name` ("true", "false", "undecided"), or
/// "not evaluated" when the statement was not (for tables).
pub fn decided(checked: Option<&crate::kernel::Checked>, name: &str) -> String {
    use crate::kernel::Certainty;
    checked
        .and_then(|c| c.decisions().iter().find(|d| d.name() == name))
        .map_or("not evaluated", |d| match d.result() {
            Certainty::True => "true",
            Certainty::False => "false",
            Certainty::Unknown => "undecided",
        })
        .to_string()
}
