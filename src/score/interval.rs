//! 95% intervals for a score row, from the line scores the row averages
//! (so an interval always belongs to the number beside it).
//!
//! - Rates (success, budget accuracy, parse errors): the Wilson score
//!   interval of the row's rate with n = the row's trials, z = the normal
//!   0.975 quantile (statrs). Trials of one instance count as independent,
//!   as KUMO's averages do; with the same number of trials per instance
//!   (what `eval` writes) the rate is successes / trials exactly, and a
//!   pooled row of unequal trial counts keeps its rate (the mean of the
//!   instances' rates) at the interval's heart.
//! - Means over instances (actions, tokens): Student's t interval on the
//!   per-instance means, n - 1 degrees of freedom (statrs' quantile).
//!   `None` with fewer than two instances.
//! - The relative action count, a ratio of means: a percentile bootstrap
//!   over the labelled instances, [`BOOTSTRAP_RESAMPLES`] resamples drawn
//!   by ChaCha8 from [`BOOTSTRAP_SEED`], so the same inputs give the same
//!   interval byte for byte. `None` with fewer than two labelled instances.
//! - Means of skewed, bounded numbers (the report's per-move regret and
//!   efficiency): [`bootstrap_mean`], the same resamples and seed.

use rand::{RngExt as _, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

use super::LineScore;

/// Resamples of the relative action count's bootstrap.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;
/// The fixed seed of that bootstrap.
pub const BOOTSTRAP_SEED: u64 = 41;

/// A two-sided 95% interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// The intervals of one row (each `None` where the row's number is `None`
/// or too few observations make one).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RowIntervals {
    pub success_rate: Option<Interval>,
    pub mean_actions: Option<Interval>,
    pub relative_action_count: Option<Interval>,
    pub parse_error_rate: Option<Interval>,
    pub mean_tokens: Option<Interval>,
    pub budget_accuracy: Option<Interval>,
}

/// The Wilson score interval of a rate `p` observed over `n` trials.
pub fn wilson(p: f64, n: usize) -> Option<Interval> {
    if n == 0 {
        return None;
    }
    let z = Normal::standard().inverse_cdf(0.975);
    let n = n as f64;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At p = 0 or 1 one end is exactly 0 or 1 (rounding would miss it).
    Some(Interval {
        low: if p <= 0.0 {
            0.0
        } else {
            (centre - half).max(0.0)
        },
        high: if p >= 1.0 {
            1.0
        } else {
            (centre + half).min(1.0)
        },
    })
}

/// Student's t interval of the mean of `values`.
pub fn t_mean(values: &[f64]) -> Option<Interval> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
        .ok()?
        .inverse_cdf(0.975);
    let half = t * (var / n as f64).sqrt();
    Some(Interval {
        low: mean - half,
        high: mean + half,
    })
}

/// The relative action count of labelled lines: (mean actions - (mean E +
/// 2)) / (mean E + 2), as [`super::Row::relative_action_count`], with
/// `E` the upper (`upper`) or the lower end of each line's label (the
/// same for an exact label).
fn relative(lines: &[&LineScore], upper: bool) -> f64 {
    let n = lines.len() as f64;
    let model = lines.iter().map(|l| l.actions).sum::<f64>() / n;
    let optimal = lines.iter().map(|l| super::end(l, upper)).sum::<f64>() / n + 2.0;
    (model - optimal) / optimal
}

/// The relative action count of labelled lines against the upper ends of
/// their labels (the least the labels allow) and against the lower ends
/// (the most): equal when every label is exact.
pub(crate) fn relative_ends(lines: &[&LineScore]) -> (f64, f64) {
    (relative(lines, true), relative(lines, false))
}

/// Percentile bootstrap of the relative action count over labelled lines.
/// With certified lines the relative count is itself an interval per
/// resample; the 2.5% point is taken of its low end (against the upper
/// bounds) and the 97.5% point of its high end (against the lower
/// bounds), so the interval holds both the sampling and the labels'
/// uncertainty. With exact labels both ends are one number.
pub fn bootstrap_relative(lines: &[LineScore]) -> Option<Interval> {
    let labelled: Vec<&LineScore> = lines.iter().filter(|l| l.optimal.is_some()).collect();
    let n = labelled.len();
    if n < 2 {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(BOOTSTRAP_SEED);
    let mut sample: Vec<&LineScore> = Vec::with_capacity(n);
    let (mut lows, mut highs): (Vec<f64>, Vec<f64>) = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| {
            sample.clear();
            sample.extend((0..n).map(|_| labelled[rng.random_range(0..n)]));
            relative_ends(&sample)
        })
        .unzip();
    lows.sort_by(f64::total_cmp);
    highs.sort_by(f64::total_cmp);
    let at =
        |stats: &[f64], q: f64| stats[((q * (BOOTSTRAP_RESAMPLES - 1) as f64).round()) as usize];
    Some(Interval {
        low: at(&lows, 0.025),
        high: at(&highs, 0.975),
    })
}

/// Percentile bootstrap of the mean of `values` ([`BOOTSTRAP_RESAMPLES`]
/// resamples drawn by ChaCha8 from [`BOOTSTRAP_SEED`]): for means of
/// skewed, bounded numbers (a regret is never below 0) where a t interval
/// would cross the bound. `None` with fewer than two values.
pub fn bootstrap_mean(values: &[f64]) -> Option<Interval> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(BOOTSTRAP_SEED);
    let mut means: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| (0..n).map(|_| values[rng.random_range(0..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((q * (BOOTSTRAP_RESAMPLES - 1) as f64).round()) as usize];
    Some(Interval {
        low: at(0.025),
        high: at(0.975),
    })
}

/// The intervals of a row from the line scores it averages.
pub fn row_intervals(lines: &[LineScore]) -> RowIntervals {
    let trials: usize = lines.iter().map(|l| l.trials).sum();
    let mean =
        |f: fn(&LineScore) -> f64| lines.iter().map(f).sum::<f64>() / lines.len().max(1) as f64;
    let means = |f: fn(&LineScore) -> f64| t_mean(&lines.iter().map(f).collect::<Vec<_>>());
    let budgeted = !lines.is_empty() && lines.iter().all(|l| l.budgeted);
    // The row's rates, as `Row` computes them (the mean of line means).
    let success = mean(|l| l.success);
    RowIntervals {
        success_rate: wilson(success, trials),
        mean_actions: means(|l| l.actions),
        relative_action_count: bootstrap_relative(lines),
        parse_error_rate: wilson(mean(|l| l.parse_errors), trials),
        mean_tokens: means(|l| l.tokens),
        budget_accuracy: if budgeted {
            wilson(success, trials)
        } else {
            None
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_the_textbook_values() {
        // 8 of 10: Wilson 95% = [0.4902, 0.9433] (Newcombe 1998, table I style).
        let i = wilson(0.8, 10).unwrap();
        assert!((i.low - 0.490_162).abs() < 1e-5, "{i:?}");
        assert!((i.high - 0.943_318).abs() < 1e-5, "{i:?}");
        // All successes: the upper end is 1, the lower end n / (n + z^2).
        let i = wilson(1.0, 5).unwrap();
        assert_eq!(i.high, 1.0);
        assert!((i.low - 5.0 / (5.0 + 1.959_964f64.powi(2))).abs() < 1e-6);
        assert!(wilson(0.0, 0).is_none());
    }

    #[test]
    fn t_interval_of_a_small_sample() {
        // mean 2, sd 1, n 3: t(2, 0.975) = 4.302653; half = 4.302653 / sqrt(3).
        let i = t_mean(&[1.0, 2.0, 3.0]).unwrap();
        let half = 4.302_652_729_9 / 3f64.sqrt();
        assert!((i.low - (2.0 - half)).abs() < 1e-6);
        assert!((i.high - (2.0 + half)).abs() < 1e-6);
        assert!(t_mean(&[1.0]).is_none());
    }

    #[test]
    fn bootstrap_mean_is_fixed_and_stays_in_the_data_range() {
        let values: Vec<f64> = (0..30)
            .map(|i| if i % 4 == 0 { 2.5 } else { 0.0 })
            .collect();
        let a = bootstrap_mean(&values).unwrap();
        assert_eq!(Some(a), bootstrap_mean(&values));
        let mean = values.iter().sum::<f64>() / 30.0;
        assert!(
            0.0 <= a.low && a.low < mean && mean < a.high && a.high <= 2.5,
            "{a:?}"
        );
        let zeros = bootstrap_mean(&[0.0; 5]).unwrap();
        assert_eq!((zeros.low, zeros.high), (0.0, 0.0));
        assert!(bootstrap_mean(&[1.0]).is_none());
    }

    fn line(actions: f64, optimal: f64) -> LineScore {
        LineScore {
            trials: 1,
            success: 1.0,
            actions,
            queries: 0.0,
            repeats: 0.0,
            budgeted: false,
            solved_turns: 0,
            solved: 1,
            parse_errors: 0.0,
            tokens: 0.0,
            optimal: Some(crate::game::Steps::Exact(optimal)),
            golden: None,
            checked: true,
            moves: None,
            prediction: None,
        }
    }

    #[test]
    fn bootstrap_is_fixed_and_brackets_the_estimate() {
        let lines: Vec<LineScore> = (0..20)
            .map(|i| line(3.0 + (i % 5) as f64, 1.0 + (i % 3) as f64))
            .collect();
        let a = bootstrap_relative(&lines).unwrap();
        assert_eq!(Some(a), bootstrap_relative(&lines));
        let refs: Vec<&LineScore> = lines.iter().collect();
        let point = relative(&refs, true);
        assert!(a.low < point && point < a.high, "{a:?} {point}");
        // Identical lines: no spread at all.
        let same: Vec<LineScore> = (0..5).map(|_| line(4.0, 1.0)).collect();
        let i = bootstrap_relative(&same).unwrap();
        assert_eq!(i.low, i.high);
    }
}
