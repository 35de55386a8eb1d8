//! A lower bound for deep games: the game in which actions can be reused.
//!
//! The static bounds of the search (a node's shortest path to a base case)
//! are far below the value on deep games, where every action most likely
//! rules out one truth or two and an optimal player needs most of them
//! (car-identification 12 x 16: `E` up to 9.2 against path bounds of 2-3),
//! so a threshold test there proves little without searching nearly every
//! node. This bound keeps the part of the game that makes it deep, the
//! probabilities of the outcomes, and forgets which actions were used:
//!
//! `R(T, c)` is `0` if `|T| <= 1` or `c = 0`, else `1 + min` over every
//! instance action related to a truth of `T` of the sum, in state order,
//! of `R(T \ X_s, c - 1) * P(s)`, with `P(s)` as the reference computes it.
//!
//! **`R(T, c) <= E(T, A)` bit for bit** whenever `c` is at most the fewest
//! actions of `A` relating to one truth of `T` (the node's *cover*), by
//! induction over the nodes below: the reference's minimum runs over the
//! actions of `A` related to `T`, a subset of those here; its children's
//! covers are at least `c - 1` (using an action lowers a truth's cover by
//! one at most), so a child that is a base case because a truth lost its
//! last action has `c - 1 = 0` and `R = 0` too, and any other child has
//! `E >= R(child, its cover) >= R(child, c - 1)` (`R` grows with `c`, by
//! the same induction); and every float operation (`* P`, `+` in state order,
//! `min`, `+ 1.0`) is monotone under round-to-nearest, applied to the same
//! `P` in the same order. Children with `|T| <= 1` add `0.0`, which leaves
//! a sum unchanged, in both.
//!
//! The table is dense: `2^|T|` floats per cover level, levels `1..=`
//! [`LEVELS`] (a cover above is capped, which only lowers the bound), so
//! it is kept only for instances of at most [`MAX_TRUTHS`] truths, and
//! only once a search has proved deep enough to pay for it (see the
//! parent module). It is filled lazily: `R(T, c)` is computed (by the
//! recursion above, memoised in the table) the first time the search asks
//! for it. Every entry of a non-trivial node is at least `1.0`, so `0.0`
//! marks an entry not computed yet and the table starts as zeroed memory.
//! Filling the whole table up front cost two thirds of the search's time
//! on virus-classification 12x10 (4 096 subsets x 8 levels x 10 actions,
//! for searches of 1-4 k expansions), while a search asks for a fraction
//! of the entries.

use std::cell::Cell;

use crate::search::mask::Mask;

/// Widest instance the table is built for, in truths.
pub(super) const MAX_TRUTHS: usize = 14;

/// Cover levels kept; a higher cover is capped here.
pub(super) const LEVELS: u32 = 8;

/// The bound `R(T, c)` of the subsets `T` of the instance's truths,
/// computed on demand.
pub(super) struct ReuseBound {
    /// `levels[(c - 1) << truths | T]` is `R(T, c)`, or `0.0` if not
    /// computed yet.
    levels: Vec<Cell<f64>>,
    /// Number of instance truths.
    truths: u32,
    /// Per instance action: the truths it relates to, and the truths each
    /// state keeps (the complement of its rule-out), in state order.
    rows: Vec<(u32, Vec<u32>)>,
}

impl ReuseBound {
    /// The (empty) table of an instance of `truths` truths whose action `a`
    /// has the rule-out masks `states[a]` (state order) and relates to
    /// `related[a]`.
    pub(super) fn new<M: Mask>(truths: usize, states: &[Vec<M>], related: &[M]) -> Self {
        debug_assert!(truths <= MAX_TRUTHS);
        let mask = |m: M| m.to_u128() as u32;
        let rows = states
            .iter()
            .zip(related)
            .map(|(row, r)| (mask(*r), row.iter().map(|&x| !mask(x)).collect()))
            .collect();
        let mut levels = Vec::new();
        levels.resize_with((LEVELS as usize) << truths, || Cell::new(0.0));
        ReuseBound {
            levels,
            truths: truths as u32,
            rows,
        }
    }

    /// `R(truths, cover)`, a lower bound of `E(truths, A)` for any `A`
    /// whose cover of `truths` is at least `cover`.
    #[inline]
    pub(super) fn get<M: Mask>(&self, truths: M, cover: u32) -> f64 {
        self.level(truths.to_u128() as u32, cover.min(LEVELS))
    }

    /// `R(t, c)` for `c <= LEVELS`, from the table or computed into it.
    fn level(&self, t: u32, c: u32) -> f64 {
        if c == 0 || t.count_ones() <= 1 {
            return 0.0;
        }
        let slot = &self.levels[((c as usize - 1) << self.truths) | t as usize];
        let known = slot.get();
        if known != 0.0 {
            return known;
        }
        let mut best = f64::INFINITY;
        for (related, keeps) in &self.rows {
            if related & t == 0 {
                continue;
            }
            let total: u32 = keeps.iter().map(|k| (t & k).count_ones()).sum();
            let denom = f64::from(total) + 1e-9;
            let mut sum = 0.0f64;
            for k in keeps {
                let child = t & k;
                let w = child.count_ones();
                if w <= 1 {
                    continue;
                }
                sum += self.level(child, c - 1) * (f64::from(w) / denom);
                if sum >= best {
                    break;
                }
            }
            best = best.min(sum);
        }
        let value = best + 1.0;
        slot.set(value);
        value
    }
}
