//! Outward-rounded decimal printing: the printed lower endpoint is ≤ the true
//! lower endpoint and the printed upper endpoint ≥ the upper one, so a printed
//! enclosure is still an enclosure.

use super::Interval;
use rug::float::Round;
use rug::Float;

/// `x` rounded in direction `r` to `digits` significant decimal digits, in a
/// deterministic plain or scientific notation.
pub fn fmt_directed(x: &Float, digits: usize, r: Round) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x.is_sign_negative() {
            "-inf".into()
        } else {
            "inf".into()
        };
    }
    if x.is_zero() {
        return "0".into();
    }
    let digits = digits.max(1);
    let (neg, ds, exp) = x.to_sign_string_exp_round(10, Some(digits), r);
    let e = exp.unwrap_or(0); // value = 0.ds × 10^e
    let sign = if neg { "-" } else { "" };
    let ds = ds.trim_end_matches('0');
    let ds = if ds.is_empty() { "0" } else { ds };
    if (-3..=7).contains(&e) {
        let n = ds.len() as i32;
        if e <= 0 {
            format!("{sign}0.{}{ds}", "0".repeat((-e) as usize))
        } else if e >= n {
            format!("{sign}{ds}{}", "0".repeat((e - n) as usize))
        } else {
            format!("{sign}{}.{}", &ds[..e as usize], &ds[e as usize..])
        }
    } else {
        let (h, t) = ds.split_at(1);
        if t.is_empty() {
            format!("{sign}{h}e{}", e - 1)
        } else {
            format!("{sign}{h}.{t}e{}", e - 1)
        }
    }
}

impl Interval {
    /// `"[lo, hi]"` with `digits` significant digits, `lo` rounded down and `hi`
    /// rounded up; a point that prints identically both ways prints once.
    pub fn fmt_outward(&self, digits: usize) -> String {
        let lo = fmt_directed(self.lo(), digits, Round::Down);
        let hi = fmt_directed(self.hi(), digits, Round::Up);
        if lo == hi {
            lo
        } else {
            format!("[{lo}, {hi}]")
        }
    }

    /// The lower endpoint printed rounded down.
    pub fn fmt_lo(&self, digits: usize) -> String {
        fmt_directed(self.lo(), digits, Round::Down)
    }

    /// The upper endpoint printed rounded up.
    pub fn fmt_hi(&self, digits: usize) -> String {
        fmt_directed(self.hi(), digits, Round::Up)
    }

    /// The midpoint to `digits` digits, rounded to nearest (display only).
    pub fn fmt_mid(&self, digits: usize) -> String {
        fmt_directed(&self.mid(), digits, Round::Nearest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn outward_printing() {
        let x = Interval::parse_decimal(128, "-1.90631619423238").unwrap();
        assert_eq!(x.fmt_outward(6), "[-1.90632, -1.90631]");
        let third = Interval::parse_decimal(128, "1/3").unwrap();
        assert_eq!(third.fmt_outward(4), "[0.3333, 0.3334]");
        assert_eq!(Interval::from_i64(64, 255).fmt_outward(6), "255");
        assert_eq!(
            Interval::parse_decimal(64, "6.616e-112").unwrap().fmt_lo(4),
            "6.615e-112"
        );
        assert_eq!(Interval::entire(64).fmt_outward(3), "[-inf, inf]");
        assert_eq!(Interval::from_i64(64, 12_000_000).fmt_outward(3), "1.2e7");
    }
}
