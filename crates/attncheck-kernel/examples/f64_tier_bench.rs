//! A micro-benchmark note for bench/f64-tier.md (not a test, nothing asserted on time):
//! the f64 tier ([`F64Iv`]) against the MPFR [`Interval`] at 128 bits on a dot product
//! and a softmax-style sum of exponentials, m = 65,536 entries each, the same exact
//! rational inputs. Run: `cargo run -p attncheck-kernel --example f64_tier_bench`.
use attncheck_kernel::{F64Iv, Interval};
use rug::Rational;
use std::time::Instant;

fn main() {
    let m = 65_536usize;
    // deterministic inputs in [−4, 4] with 20-bit denominators: not all binary64 numbers
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        Rational::from(((s % 8_000_001) as i64 - 4_000_000, 1_000_003))
    };
    let x: Vec<Rational> = (0..m).map(|_| next()).collect();
    let y: Vec<Rational> = (0..m).map(|_| next()).collect();
    let (xf, yf): (Vec<F64Iv>, Vec<F64Iv>) = (
        x.iter().map(F64Iv::from_rational).collect(),
        y.iter().map(F64Iv::from_rational).collect(),
    );
    let (xm, ym): (Vec<Interval>, Vec<Interval>) = (
        x.iter().map(|v| Interval::from_rational(128, v)).collect(),
        y.iter().map(|v| Interval::from_rational(128, v)).collect(),
    );
    let reps = 20;
    let t = Instant::now();
    let mut dot_f = F64Iv::from_f64(0.0);
    for _ in 0..reps {
        dot_f = F64Iv::from_f64(0.0);
        for (a, b) in xf.iter().zip(&yf) {
            dot_f = dot_f.add(a.mul(*b));
        }
    }
    let f_dot = t.elapsed().as_secs_f64() / (reps * m) as f64;
    let t = Instant::now();
    let mut dot_m = Interval::zero(128);
    for _ in 0..reps {
        dot_m = Interval::zero(128);
        for (a, b) in xm.iter().zip(&ym) {
            dot_m.add_assign(&(a * b));
        }
    }
    let m_dot = t.elapsed().as_secs_f64() / (reps * m) as f64;
    let t = Instant::now();
    let mut se_f = F64Iv::from_f64(0.0);
    for _ in 0..reps {
        se_f = F64Iv::from_f64(0.0);
        for a in &xf {
            se_f = se_f.add(a.exp());
        }
    }
    let f_exp = t.elapsed().as_secs_f64() / (reps * m) as f64;
    let t = Instant::now();
    let mut se_m = Interval::zero(128);
    for _ in 0..reps {
        se_m = Interval::zero(128);
        for a in &xm {
            se_m.add_assign(&a.exp());
        }
    }
    let m_exp = t.elapsed().as_secs_f64() / (reps * m) as f64;
    // uncertified baselines: the same sums in plain f64 (round to nearest, no enclosure)
    let (xp, yp): (Vec<f64>, Vec<f64>) = (
        x.iter().map(|v| v.to_f64()).collect(),
        y.iter().map(|v| v.to_f64()).collect(),
    );
    let t = Instant::now();
    for _ in 0..reps {
        let mut acc = 0.0f64;
        for (a, b) in xp.iter().zip(&yp) {
            acc += a * b;
        }
        std::hint::black_box(acc);
    }
    let p_dot = t.elapsed().as_secs_f64() / (reps * m) as f64;
    let t = Instant::now();
    for _ in 0..reps {
        let mut acc = 0.0f64;
        for a in &xp {
            acc += core_math::exp(*a);
        }
        std::hint::black_box(acc);
    }
    let p_exp = t.elapsed().as_secs_f64() / (reps * m) as f64;
    println!(
        "plain f64, uncertified: dot {:.2} ns/term, exp sum (CORE-MATH exp) {:.2} ns/term",
        p_dot * 1e9,
        p_exp * 1e9
    );
    let rel = |f: F64Iv, m: &Interval| {
        let (lo, hi) = f.bounds().unwrap();
        (
            (hi - lo) / m.mid_f64().abs(),
            m.width_up().to_f64() / m.mid_f64().abs(),
        )
    };
    let contains = |f: F64Iv, m: &Interval| f.to_interval(128).unwrap().contains(m);
    println!("m = {m}, {reps} repetitions");
    println!(
        "dot:     f64 tier {:.2} ns/term, MPFR 128 bits {:.2} ns/term ({:.1}x); relative widths {:.1e} vs {:.1e}; f64 ⊇ MPFR: {}",
        f_dot * 1e9, m_dot * 1e9, m_dot / f_dot, rel(dot_f, &dot_m).0, rel(dot_f, &dot_m).1, contains(dot_f, &dot_m)
    );
    println!(
        "exp sum: f64 tier {:.2} ns/term, MPFR 128 bits {:.2} ns/term ({:.1}x); relative widths {:.1e} vs {:.1e}; f64 ⊇ MPFR: {}",
        f_exp * 1e9, m_exp * 1e9, m_exp / f_exp, rel(se_f, &se_m).0, rel(se_f, &se_m).1, contains(se_f, &se_m)
    );
}
