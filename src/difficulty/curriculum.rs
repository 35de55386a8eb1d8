//! The levels of `kumo-gen curriculum`: `K` equal-count bands over the
//! percentile of expected steps in the setting's reference sample
//! ([`super::reference`]). Level `k` (1-based) holds the instances with
//! percentile `p` in `[100 (k-1) / K, 100 k / K)` (the last level up to
//! and including 100), so every instance belongs to exactly one level and
//! the levels are disjoint and ordered: every instance of level `k` has
//! expected steps at most those of every instance of level `k + 1`.
//! Ties in the sample share one percentile, so a level holds about `1/K`
//! of the draws, not exactly.

use super::band::Band;

/// Most levels a curriculum may have (the sample has 256 draws).
pub const MAX_LEVELS: usize = 64;

/// The band of level `level` (1-based) of `levels`.
pub fn level_band(level: usize, levels: usize) -> Band {
    let edge = |k: usize| 100.0 * k as f64 / levels as f64;
    Band {
        min_percentile: Some(edge(level - 1)),
        max_percentile: Some(edge(level)),
        ..Band::default()
    }
}

/// The directory name of level `level` (`level-1`, ...).
pub fn level_name(level: usize) -> String {
    format!("level-{level}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_partition_the_percentiles() {
        for levels in [1, 2, 3, 5] {
            for p in [0.0, 0.1953125, 33.3, 50.0, 66.7, 99.8046875, 100.0] {
                let holding = (1..=levels)
                    .filter(|&k| level_band(k, levels).admits(1.0, 1, p))
                    .count();
                assert_eq!(holding, 1, "{levels} levels, percentile {p}");
            }
        }
    }
}
