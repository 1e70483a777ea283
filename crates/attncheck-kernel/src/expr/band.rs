//! The positional group's data operations: band reachability (windowed attention).
//!
//! `(band-reach L d l)` and `(band-reach-count L d l)`, for exact integers
//! 1 ≤ L ≤ 65536, 0 ≤ d, 1 ≤ l ≤ 256 with l·L·min(d + 1, L) ≤ 2^32: let A be the L × L
//! boolean matrix A[i][j] = 1 iff 0 ≤ i − j ≤ d (causal attention with a window
//! of d + 1 tokens, −∞ bias outside) and v = e_{L−1} Aˡ (boolean products). Then
//! `band-reach` is the largest r with v[L − 1 − r] = 1 (the last query's receptive
//! field after l layers), and `band-reach-count` the number of j with v[j] = 1.
//! Computed exactly on bitsets; no property of the band (such as the closed form
//! min(l·d, L − 1)) is assumed.

/// Why (L, d, l) of `band-reach` is out of range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(super) enum ReachError {
    /// L, d or l is outside its domain.
    #[error("needs 1 ≤ L ≤ 65536, d ≥ 0 and 1 ≤ l ≤ 256 (got L = {len}, d = {d}, l = {layers})")]
    Domain { len: i64, d: i64, layers: i64 },
    /// The work l·L·min(d + 1, L) is over its bound.
    #[error("l·L·min(d + 1, L) exceeds 2^32")]
    Work,
}

/// (support, count) of e_{L−1} Aˡ; `Err` with the reason when out of range.
pub(super) fn reach(len: i64, d: i64, layers: i64) -> Result<(u64, u64), ReachError> {
    if !(1..=65_536).contains(&len) || d < 0 || !(1..=256).contains(&layers) {
        return Err(ReachError::Domain { len, d, layers });
    }
    let n = len as usize;
    let words = n.div_ceil(64);
    let width = (d as u128 + 1).min(n as u128);
    if (layers as u128) * (n as u128) * width > 1 << 32 {
        return Err(ReachError::Work);
    }
    let get = |v: &[u64], j: usize| v[j / 64] >> (j % 64) & 1 == 1;
    let mut v = vec![0u64; words];
    v[(n - 1) / 64] |= 1 << ((n - 1) % 64);
    for _ in 0..layers {
        // (v A)[j] = OR over i with v[i] of A[i][j]
        let mut next = vec![0u64; words];
        for i in (0..n).filter(|&i| get(&v, i)) {
            let lo = i.saturating_sub(d.min(len) as usize);
            for j in lo..=i {
                next[j / 64] |= 1 << (j % 64);
            }
        }
        v = next;
    }
    let first = (0..n).find(|&j| get(&v, j)).unwrap_or(n - 1);
    let count = v.iter().map(|w| u64::from(w.count_ones())).sum();
    Ok(((n - 1 - first) as u64, count))
}

#[cfg(test)]
mod tests {
    #[test]
    fn band_reach_by_hand() {
        // L = 5, d = 1: the last row of A is {3, 4}, of A² {2, 3, 4}
        assert_eq!(super::reach(5, 1, 1), Ok((1, 2)));
        assert_eq!(super::reach(5, 1, 2), Ok((2, 3)));
        assert_eq!(super::reach(5, 3, 2), Ok((4, 5)));
        assert_eq!(super::reach(5, 0, 7), Ok((0, 1)));
        assert!(super::reach(0, 1, 1).is_err());
    }
}
