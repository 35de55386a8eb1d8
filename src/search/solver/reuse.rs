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
//! it is built only for instances of at most [`MAX_TRUTHS`] truths, and
//! only once a search has proved deep enough to pay for it (see the
//! parent module).

use crate::search::mask::Mask;

/// Widest instance the table is built for, in truths.
pub(super) const MAX_TRUTHS: usize = 14;

/// Cover levels kept; a higher cover is capped here.
pub(super) const LEVELS: u32 = 8;

/// The bound `R(T, c)` of every subset `T` of the instance's truths.
pub(super) struct ReuseBound {
    /// `levels[c - 1][T]` is `R(T, c)`.
    levels: Vec<Vec<f64>>,
}

impl ReuseBound {
    /// The table of an instance of `truths` truths whose action `a` has the
    /// rule-out masks `states[a]` (state order) and relates to `related[a]`.
    pub(super) fn new<M: Mask>(truths: usize, states: &[Vec<M>], related: &[M]) -> Self {
        debug_assert!(truths <= MAX_TRUTHS);
        let size = 1usize << truths;
        let rows: Vec<(u32, Vec<u32>)> = states
            .iter()
            .zip(related)
            .map(|(row, r)| {
                let mask = |m: M| m.to_u128() as u32;
                (mask(*r), row.iter().map(|&x| !mask(x)).collect())
            })
            .collect();
        let mut levels: Vec<Vec<f64>> = Vec::with_capacity(LEVELS as usize);
        let zeros = vec![0.0f64; size];
        for _ in 0..LEVELS {
            let below = levels.last().unwrap_or(&zeros);
            let mut level = vec![0.0f64; size];
            for (t, slot) in level.iter_mut().enumerate() {
                let t = t as u32;
                if t.count_ones() <= 1 {
                    continue;
                }
                let mut best = f64::INFINITY;
                for (related, keeps) in &rows {
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
                        sum += below[child as usize] * (f64::from(w) / denom);
                        if sum >= best {
                            break;
                        }
                    }
                    best = best.min(sum);
                }
                *slot = best + 1.0;
            }
            levels.push(level);
        }
        ReuseBound { levels }
    }

    /// `R(truths, cover)`, a lower bound of `E(truths, A)` for any `A`
    /// whose cover of `truths` is at least `cover`.
    #[inline]
    pub(super) fn get<M: Mask>(&self, truths: M, cover: u32) -> f64 {
        match cover.min(LEVELS) {
            0 => 0.0,
            c => self.levels[c as usize - 1][truths.to_u128() as usize],
        }
    }
}
