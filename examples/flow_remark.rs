//! Two-particle example of clusters.md §4 (ε = 0.1, V = Q = K = I), integrated in z:
//! prints b(t) (second coordinate of x_1), e^{−t}b(t) and P_12(t) at t = 10, 20, 40, 48..52, 55.
//! Usage: `flow_remark [prec] [h as p/q]`.
use attncheck::dynamics::flow::{rk4, FlowOptions, Vars};
use attncheck::dynamics::model::{Mat, System};
use rug::Rational;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let prec: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(256);
    let h: Rational = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(Rational::from((1, 100)));
    let sys = System::new(Mat::identity(2), Mat::identity(2), Mat::identity(2));
    let eps = Rational::from((1, 10));
    let x0 = Mat::from_rows(vec![
        vec![Rational::from(1), eps.clone()],
        vec![Rational::from(1), -eps],
    ]);
    let marks = [10, 20, 40, 48, 49, 50, 51, 52, 55];
    let t0 = std::time::Instant::now();
    let res = rk4(
        &sys,
        &x0,
        &Rational::from(55),
        &h,
        &FlowOptions::new(prec, Vars::Z),
        |f| {
            if f.t_exact.denom() == &1u32 {
                let t = f.t_exact.numer().to_i32().unwrap_or(0);
                if marks.contains(&t) {
                    let e = f.etv.expect("z run");
                    // x_1 = e^{tV} z_1; second coordinate
                    let b = rug::Float::with_val(prec, &e[2] * &f.state[0])
                        + rug::Float::with_val(prec, &e[3] * &f.state[1]);
                    println!(
                        "t = {t:>3}  b = {}  e^-t b = {}  P12 = {}",
                        b.to_string_radix(10, Some(10)),
                        f.state[1].to_string_radix(10, Some(10)),
                        f.p[1].to_string_radix(10, Some(10))
                    );
                }
            }
        },
    )
    .expect("flow");
    eprintln!("{} steps, {:?}", res.steps, t0.elapsed());
}
