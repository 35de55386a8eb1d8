//! The reference's state probability `P(s) = W(s) as f64 / (ΣW as f64 +
//! 1e-9)` read from a table instead of divided out.
//!
//! The search needs the quotient for every child of every listed action
//! (`solver::ordering`), in the greedy rollouts (`solver::bounds`), the
//! plain recursion (`solver::plain`), the `Q` of `values`, and twice per
//! row in the reuse bound's fill (the row floor `D / (ΣW + 1e-9)` and
//! each `P(s)`): a division, 13-20 cycles of latency, on a hot path.
//!
//! **Why the same float.** Each entry is computed once, by exactly the
//! expression the callers evaluated (`f64::from(w) / (f64::from(total) +
//! 1e-9)`: an exact conversion, a correctly rounded addition and a
//! correctly rounded division, IEEE 754 with no contraction in Rust), so
//! it is that float bit for bit: the table only memoises a pure function.
//! A total above [`MAX_TOTAL`] is divided as before.
//!
//! **Layout.** Triangular, by total: the row of `ΣW` holds the quotients
//! `w / (ΣW + 1e-9)` for `0 <= w <= ΣW` (every use has `w <= ΣW`: a
//! child's weight, or a sum of children's weights, is part of `ΣW`) and
//! starts at `ΣW (ΣW + 1) / 2`. Small totals come first, so the rows a
//! 12 x 16 game reads (`ΣW <= 12` truths times its states) are the first
//! few kilobytes of the table (`ΣW <= 255`, 263 KB of read-only data).
//! It is a `static` computed at compile time: a table built on first use
//! behind a `OnceLock` cost more instructions than the divisions it
//! saved (its check and the row's bounds on every call).
//!
//! **Measured** (27 Nov 2026, outputs byte-identical, node counts
//! unchanged). Cachegrind, whole process `-n 100` on one thread:
//! car-identification 15.974 G -> 15.760 G instructions (-1.3 %),
//! os-kernel 4.706 G -> 4.666 G (-0.9 %); the `OnceLock` table had
//! 16.574 G and 4.864 G (+3.8 %, +3.4 %). Whole process `-n 400`,
//! three alternating pairs against the base at load 6.7-7.3, CPU ratios
//! car-identification 0.96 / 0.74 / 0.96, os-kernel 0.98 / 0.89 / 0.81,
//! art-style 1.11 / 0.92 / 0.94 (the `OnceLock` table: car-identification
//! 1.00 / 0.93 / 1.03, os-kernel 1.03 / 1.08 / 0.98).

/// The largest `ΣW` whose row is in the table.
const MAX_TOTAL: u32 = 255;

/// Entries of the table: rows `0..=MAX_TOTAL` of `ΣW + 1` each.
const ENTRIES: usize = ((MAX_TOTAL + 1) * (MAX_TOTAL + 2) / 2) as usize;

/// The table, computed at compile time (Rust's constant evaluation
/// rounds `+` and `/` as IEEE 754 does at run time; the unit test below
/// checks every entry against the run-time division anyway).
static TABLE: [f64; ENTRIES] = build();

/// The reference's `P(s)` of a state of weight `w` out of `total`,
/// divided.
#[cfg(test)]
fn divided(w: u32, total: u32) -> f64 {
    f64::from(w) / (f64::from(total) + 1e-9)
}

const fn build() -> [f64; ENTRIES] {
    let mut table = [0.0; ENTRIES];
    let (mut total, mut i) = (0u32, 0usize);
    while total <= MAX_TOTAL {
        let mut w = 0u32;
        while w <= total {
            // `as f64` of a `u32` is exact, as `f64::from` is.
            table[i] = w as f64 / (total as f64 + 1e-9);
            i += 1;
            w += 1;
        }
        total += 1;
    }
    table
}

/// The quotients `w / (ΣW + 1e-9)` of one `ΣW`.
#[derive(Clone, Copy)]
pub(crate) enum Shares {
    /// Row `ΣW` of the table (`ΣW + 1` entries).
    Table(&'static [f64]),
    /// `ΣW + 1e-9`, for a total above [`MAX_TOTAL`].
    Divide(f64),
}

impl Shares {
    /// The quotients of total `total`.
    #[inline]
    pub(crate) fn of(total: u32) -> Self {
        if total > MAX_TOTAL {
            return Shares::Divide(f64::from(total) + 1e-9);
        }
        let start = (total * (total + 1) / 2) as usize;
        Shares::Table(&TABLE[start..=start + total as usize])
    }

    /// `w / (ΣW + 1e-9)` for `w <= ΣW`: the same float as [`divided`].
    #[inline]
    pub(crate) fn share(self, w: u32) -> f64 {
        match self {
            Shares::Table(row) => row[w as usize],
            Shares::Divide(denom) => f64::from(w) / denom,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every quotient, from the table and past it, is the division's float
    /// bit for bit.
    #[test]
    fn every_share_is_the_divided_float() {
        for total in 0..=MAX_TOTAL + 40 {
            let shares = Shares::of(total);
            assert_eq!(
                matches!(shares, Shares::Table(_)),
                total <= MAX_TOTAL,
                "total {total}"
            );
            for w in 0..=total {
                let reference = divided(w, total);
                assert_eq!(
                    shares.share(w).to_bits(),
                    reference.to_bits(),
                    "{w} / {total}"
                );
            }
        }
    }
}
