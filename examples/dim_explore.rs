use attncheck::kernel::SignMatrix;
use attncheck::sparse::dimension::{min_dimension_of, min_dimension_of_build, union_bound_dimension, Build};
use attncheck::sparse::sample::draw_signs;

fn rows(s: &SignMatrix, m: usize) -> SignMatrix {
    let w = s.words_per_row();
    SignMatrix::from_words(m, s.d(), s.words()[..m * w].to_vec()).unwrap()
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("one") {
        let a: Vec<u64> = std::env::args()
            .skip(2)
            .map(|s| s.parse().unwrap())
            .collect();
        let (n, d_max, seed) = (a[0] as usize, a[1] as usize, a[2]);
        let t = rug::Rational::from((a[3], a[4]));
        let reps = *a.get(5).unwrap_or(&1);
        let build = Build::ALL[*a.get(6).unwrap_or(&0) as usize];
        let s = draw_signs(n, d_max, seed);
        for _ in 0..reps {
            let st = std::time::Instant::now();
            let d = min_dimension_of_build(&s, &t, build).unwrap();
            let secs = st.elapsed().as_secs_f64();
            let words = (n * (n - 1) / 2) as f64 * d_max.div_ceil(64) as f64;
            println!(
                "n={n} d_max={d_max} seed={seed} t={t} d={d:?} secs={secs:.3} words/s={:.3e}",
                words / secs
            );
        }
        return;
    }
    let a: Vec<u64> = std::env::args()
        .skip(1)
        .map(|s| s.parse().unwrap())
        .collect();
    let e = a[0] as u32;
    let seeds = a[1];
    let (tn, td) = (a[2], a[3]);
    let n = 1usize << e;
    let t = rug::Rational::from((tn, td));
    let delta = rug::Rational::from((1, 100));
    let d_max = union_bound_dimension(n as u64, &t, &delta).unwrap() as usize;
    for seed in 0..seeds {
        let s = draw_signs(n, d_max, seed);
        let d = min_dimension_of(&s, &t);
        let sub: Vec<Option<usize>> = [2, 4, 8, 16]
            .iter()
            .map(|f| min_dimension_of(&rows(&s, n / f), &t))
            .collect();
        println!("n={n} d_max={d_max} seed={seed} d={d:?} sub={sub:?}");
    }
}
