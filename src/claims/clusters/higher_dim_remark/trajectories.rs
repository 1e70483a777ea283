//! (c) The trajectories: the two-particle flow by the flow engine's RK4, and the
//! reduced scalar ODE.

use super::*;

/// What one flow run records.
#[derive(Debug, Clone)]
pub struct Trajectory {
    /// Step.
    pub h: Rational,
    /// Precision.
    pub prec: u32,
    /// Centered logits (the engine's default) or textbook ones.
    pub centered: bool,
    /// At each reference time: (b, c, P₁₂).
    pub at_ref: Vec<[Float; 3]>,
    /// Sampled (t, c, P₁₂).
    pub samples: Vec<(Rational, Float, Float)>,
    /// The last time at which P₁₂ ≠ 1/2 exactly (for the demonstration), if P₁₂
    /// was exactly 1/2 at the end.
    pub tie_from: Option<Rational>,
    /// The first time at which P₁₂ = 1/2 exactly.
    pub first_tie: Option<Rational>,
    /// Final c = e^{−T}b(T).
    pub c_end: Float,
}

/// The two-particle system of the remark: V = Q = K = I₂, x₁(0) = (1, ε), x₂(0) = (1, −ε).
pub fn system_and_tokens(eps: &Rational) -> (System, Mat) {
    let i = Mat::identity(2);
    let sys = System::new(i.clone(), i.clone(), i);
    let x0 = Mat::from_rows(vec![
        vec![Rational::from(1), eps.clone()],
        vec![Rational::from(1), Rational::from(-eps)],
    ]);
    (sys, x0)
}

/// Integrates the z-flow with the flow engine's RK4 and records the reference times
/// and the samples. b = e^t·c with c = z₁'s second coordinate; P₁₂ is the engine's
/// attention entry (1, 2) at that time.
pub fn trajectory(
    p: &Params,
    h: &Rational,
    prec: u32,
    centered: bool,
) -> Result<Trajectory, flow::FlowError> {
    let (sys, x0) = system_and_tokens(&p.eps);
    let mut opts = FlowOptions::new(prec, Vars::Z);
    opts.centered = centered;
    let mut at_ref: Vec<[Float; 3]> = Vec::new();
    let mut samples = Vec::new();
    let mut tie_from: Option<Rational> = None;
    let mut first_tie: Option<Rational> = None;
    let half = Float::with_val(prec, 0.5);
    let res = flow::rk4(&sys, &x0, &p.t_end, h, &opts, |fr: &Frame| {
        let c = fr.state[1].clone();
        let p12 = fr.p[1].clone();
        if p12 == half {
            if tie_from.is_none() {
                tie_from = Some(fr.t_exact.clone());
            }
            if first_tie.is_none() {
                first_tie = Some(fr.t_exact.clone());
            }
        } else {
            tie_from = None;
        }
        if p.reference.iter().any(|r| r[0] == *fr.t_exact) {
            let b = Float::with_val(prec, fr.t.exp_ref()) * &c;
            at_ref.push([b, c.clone(), p12.clone()]);
        }
        if divides(&p.sample, fr.t_exact) {
            samples.push((fr.t_exact.clone(), c, p12));
        }
    })?;
    Ok(Trajectory {
        h: h.clone(),
        prec,
        centered,
        at_ref,
        samples,
        tie_from,
        first_tie,
        c_end: res.state_at(0, 1).clone(),
    })
}

/// The reduced ODE ċ = −2c·e^{−2b²}/(1 + e^{−2b²}), b = e^t c, c(0) = ε, by a scalar RK4
/// in MPFR with step h; returns c at each time of `times` (multiples of h) and at T.
pub fn reduced(
    eps: &Rational,
    t_end: &Rational,
    h: &Rational,
    times: &[Rational],
    prec: u32,
) -> (Vec<Float>, Float) {
    let rhs = |t: &Float, c: &Float| -> Float {
        let b = Float::with_val(prec, t.exp_ref()) * c;
        let e = Float::with_val(prec, -2 * Float::with_val(prec, b.square_ref())).exp();
        let mut r = Float::with_val(prec, c * &e);
        r *= -2;
        r / Float::with_val(prec, 1 + &e)
    };
    let steps = Rational::from(t_end / h).numer().to_usize().unwrap_or(0);
    let hf = Float::with_val(prec, h);
    let h2 = Float::with_val(prec, Rational::from(h / 2));
    let mut c = Float::with_val(prec, eps);
    let mut t = Rational::new();
    let mut out = Vec::new();
    for _ in 0..steps {
        if times.contains(&t) {
            out.push(c.clone());
        }
        let t0 = Float::with_val(prec, &t);
        let tm = Float::with_val(prec, &t + Rational::from(h / 2));
        let t1 = Float::with_val(prec, Rational::from(&t + h));
        let k1 = rhs(&t0, &c);
        let k2 = rhs(&tm, &Float::with_val(prec, &c + &h2 * &k1));
        let k3 = rhs(&tm, &Float::with_val(prec, &c + &h2 * &k2));
        let k4 = rhs(&t1, &Float::with_val(prec, &c + &hf * &k3));
        let mut s = Float::with_val(prec, &k2 + &k3);
        s *= 2;
        s += &k1;
        s += &k4;
        s *= &hf;
        s /= 6;
        c += s;
        t += h;
    }
    if times.contains(&t) {
        out.push(c.clone());
    }
    (out, c)
}
