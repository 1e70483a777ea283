// scratch (not committed): the least kernel precision deciding each obligation of a certificate
use attncheck::kernel::expr::check_with;
use attncheck::kernel::Certainty;
fn main() {
    for p in std::env::args().skip(1) {
        let c = attncheck::coq::load(std::path::Path::new(&p)).unwrap();
        let st = c.statement(std::path::Path::new(&p)).unwrap();
        for o in &st.obligations {
            let b = (std::env::var("LO").map_or(20, |v| v.parse::<u32>().unwrap())..=256).step_by(std::env::var("STEP").map_or(2, |v| v.parse().unwrap())).find(|b| check_with(&o.formula, *b, &st.data) == Ok(Certainty::True));
            println!("{p} | {} | {:?}", o.name.chars().take(60).collect::<String>(), b);
        }
    }
}
