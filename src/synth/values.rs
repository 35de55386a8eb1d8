//! Numeric observations: which range states can be observed at all, and
//! a value for one.
//!
//! In: the domain's [`Tables`], a flat state index, the instance RNG. Out:
//! a value that reads as that state and as no other range of its action
//! (so KUMO's answer check, which tests every range, agrees with the
//! first-match reading), rounded to the configured decimals (integral for
//! `int`); ranges too large for the decimal grid are rounded to
//! significant digits instead. [`mark_observable`] decides, once per
//! domain, which states some such value exists for.

use super::sample::Tables;
use crate::domain::ActionKind;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Tries per numeric value before the deterministic scan.
const VALUE_TRIES: usize = 64;
/// Grid points the deterministic scan looks at.
const SCAN_LIMIT: i64 = 100_000;

/// Sets `tables.observable`: named states always, range states when some
/// value reads as them ([`first_value`]).
pub fn mark_observable(tables: &mut Tables) {
    tables.observable = (0..tables.state_action.len())
        .map(|s| tables.ranges[s].is_none() || first_value(tables, s).is_some())
        .collect();
}

/// Whether `value` reads as flat state `s`: inside its range and inside no
/// other range of its action.
fn reads_as(tables: &Tables, s: usize, value: f64) -> bool {
    let Some(range) = tables.ranges[s] else {
        return false;
    };
    if !(range.lo <= value && value <= range.hi) {
        return false;
    }
    let a = tables.state_action[s] as usize;
    tables
        .states_of(a)
        .filter(|&o| o != s)
        .all(|o| match tables.ranges[o] {
            Some(other) => !(other.lo <= value && value <= other.hi),
            None => true,
        })
}

fn is_int(tables: &Tables, s: usize) -> bool {
    tables.kinds[tables.state_action[s] as usize] == ActionKind::Int
}

/// Largest grid index: beyond it `f64` no longer holds every integer.
const GRID_LIMIT: f64 = 9_007_199_254_740_992.0; // 2^53

/// The grid of representable values of state `s`: integers for `int`,
/// multiples of `1 / scale` for `float`, as `(first, last, step)`; `None`
/// for an empty range or one too large for the grid (see [`wide_value`]).
fn grid(tables: &Tables, s: usize) -> Option<(i64, i64, f64)> {
    let range = tables.ranges[s]?;
    let step = if is_int(tables, s) { 1.0 } else { tables.scale };
    let first = (range.lo * step).ceil();
    let last = (range.hi * step).floor();
    if !(first.is_finite() && last.is_finite())
        || first > last
        || first.abs() > GRID_LIMIT
        || last.abs() > GRID_LIMIT
    {
        return None;
    }
    Some((first as i64, last as i64, step))
}

/// Whether state `s` is a float range too large for the decimal grid
/// (KUMO's astronomy has `(1e38, 1e45)`): its values are rounded to
/// `decimals + 1` significant digits instead.
fn is_wide(tables: &Tables, s: usize) -> bool {
    let Some(range) = tables.ranges[s] else {
        return false;
    };
    !is_int(tables, s)
        && range.lo <= range.hi
        && (range.hi - range.lo).is_finite()
        && (range.lo * tables.scale)
            .abs()
            .max((range.hi * tables.scale).abs())
            > GRID_LIMIT
}

/// The value at fraction `u` of a wide range, rounded to `decimals + 1`
/// significant digits (e.g. `1.23e40`).
fn wide_value(tables: &Tables, s: usize, u: f64) -> f64 {
    let range = tables.ranges[s].expect("wide implies a range");
    let x = range.lo + (range.hi - range.lo) * u;
    let digits = tables.scale.log10().round() as usize;
    format!("{x:.digits$e}").parse().unwrap_or(x)
}

/// Fractions of a wide range tried, in order, by the deterministic scan.
const WIDE_STEPS: u32 = 1024;

/// A value of state `s`: uniform over the range, rounded to the grid,
/// redrawn while it falls outside or on another range; after
/// `VALUE_TRIES` draws a scan of the grid from a random point.
pub fn sample_value(tables: &Tables, s: usize, rng: &mut ChaCha8Rng) -> f64 {
    if is_wide(tables, s) {
        for _ in 0..VALUE_TRIES {
            let value = wide_value(tables, s, rng.random::<f64>());
            if reads_as(tables, s, value) {
                return value;
            }
        }
        let start = rng.random_range(0..=WIDE_STEPS);
        for k in 0..=WIDE_STEPS {
            let u = f64::from((start + k) % (WIDE_STEPS + 1)) / f64::from(WIDE_STEPS);
            let value = wide_value(tables, s, u);
            if reads_as(tables, s, value) {
                return value;
            }
        }
    }
    if let Some((first, last, step)) = grid(tables, s) {
        for _ in 0..VALUE_TRIES {
            let m = if is_int(tables, s) {
                rng.random_range(first..=last)
            } else {
                let range = tables.ranges[s].expect("grid implies a range");
                let x = range.lo + (range.hi - range.lo) * rng.random::<f64>();
                ((x * step).round() as i64).clamp(first, last)
            };
            let value = m as f64 / step;
            if reads_as(tables, s, value) {
                return value;
            }
        }
        let span = (last - first).min(SCAN_LIMIT);
        let start = rng.random_range(0..=span);
        for k in 0..=span {
            let value = (first + (start + k) % (span + 1)) as f64 / step;
            if reads_as(tables, s, value) {
                return value;
            }
        }
    }
    // Unreachable for observable states, which `Tables` checked with
    // `first_value`; the range's midpoint keeps the result defined.
    let range = tables.ranges[s].expect("numeric state");
    (range.lo + range.hi) / 2.0
}

/// The first grid value that reads as state `s`, if any: decides whether a
/// numeric state can be observed at all.
pub fn first_value(tables: &Tables, s: usize) -> Option<f64> {
    if is_wide(tables, s) {
        return (0..=WIDE_STEPS)
            .map(|k| wide_value(tables, s, f64::from(k) / f64::from(WIDE_STEPS)))
            .find(|&value| reads_as(tables, s, value));
    }
    let (first, last, step) = grid(tables, s)?;
    let span = (last - first).min(SCAN_LIMIT);
    (0..=span)
        .map(|k| (first + k) as f64 / step)
        .find(|&value| reads_as(tables, s, value))
}
