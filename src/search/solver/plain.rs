//! Small games first by the plain recursion: KUMO's recursion as DESIGN.md
//! states it (every related action in instance order, a sum stopped once
//! it reaches the best so far), on the search's memo and canonical keys,
//! capped at `PLAIN_NODES` nodes per search.
//!
//! On a small game the plain recursion visits few nodes and each costs a
//! pass over the actions' children; the interval search visits a similar
//! number, each node expanded with cover layers, bounds, duplicate checks,
//! sorting, rollouts and repeated tests (historical-battle 6x8: 2 628
//! expansions against the plain recursion's 1 950 nodes, 1.3x its time).
//! So a search of an instance of at most `PLAIN_MAX_ACTIONS` actions
//! starts here; a game that needs more than `PLAIN_NODES` nodes falls back
//! to the interval search, which keeps every exact value computed so far
//! in the memo (they are values bit for bit, so `lo == hi` there), so
//! little of the attempt is lost. With more actions the interval search's
//! pruning wins even on small games: with every instance starting here,
//! 100 instances each of cryptography 12x14, herb 12x12 and medical 12x16
//! took 185 k, 164 k and 222 k plain nodes where the interval search
//! alone takes 4 k, 7 k and 26 k expansions, 3-7x its time; at 12x8 to
//! 12x11 the plain start won overall (virus-classification 12x10 0.36 s
//! against 2.66 s, mineral 12x8 1.13 s against 2.69 s, transport 12x11
//! 0.44 s against 0.73 s; a few tiny domains lost tens of milliseconds).
//!
//! Small nodes go plain too, in any search: a node of two truths and at
//! most [`SMALL_ACTIONS`] actions is computed exactly by this recursion
//! (`plain_small`) when the interval search first needs it, instead of
//! being tested. Its subtree is tiny (a child keeps both truths or is a
//! base case, so at most `2^SMALL_ACTIONS` nodes, each a short pass), and
//! once exact in the memo it is never tested again, where the interval
//! search tested such nodes about 2.3 times each (car-identification
//! 12 x 16, first 200 instances: 448 k expansions of 193 k distinct
//! two-truth nodes, 15 % of all expansions). Measured on the first 200
//! instances of car-identification, martial-arts and music 12 x 16
//! (`domain_sweep`, three alternating runs at load 4): 5.20 M -> 5.13 M
//! expansions and about 9 % less CPU; a cut-off of 3 actions saved less
//! (5.19 M), 6 actions cost more (more plain nodes than the tests it
//! saved), and three truths with up to 4 actions saved less (5.15 M).
//! Once the memo keyed nodes up to twin actions (parent module), two-truth
//! nodes of many actions share their entries, and 8 actions paid
//! (cachegrind, `domain_sweep`, one thread, against 4 and 6):
//! car-identification 60 instances 7.46 / 7.26 / 7.07 G instructions,
//! fantasy 60 3.10 / 3.06 / 3.01 G, os-kernel 150 3.06 / 3.00 / 3.00 G,
//! chemical-compounds 60 2.87 / 2.85 / 2.83 G, art-style 300 4.64 / 4.55
//! / 4.65 G, music 60 1.83 / 1.81 / 1.84 G, martial-arts 60 1.77 / 1.74
//! / 1.75 G; 16 actions: car-identification 7.56 G, art-style 4.88 G.
//!
//! Exactness: this *is* the reference's recursion, float operation for
//! float operation: `P(s) = W(s) / (ΣW + 1e-9)`, `sum += E(child) * P(s)`
//! in state order (a base child adds `0.0`, which leaves the sum
//! unchanged), the sum abandoned once `sum >= best` (the remaining terms
//! are non-negative and rounding is monotone, so it can only end `>=
//! best`), `best` replaced only by a strictly lower sum, so the argmin is
//! the first optimal action in instance order; once `best` is `0.0` the
//! later actions are not tried (no sum is below `0.0`, and a tie would not
//! replace it). Dropping actions related to no truth from the key is exact
//! (parent module). That stop, `domain_sweep`, cachegrind: theatrical 300
//! 1.402 G -> 1.390 G instructions, language 300 2.889 G -> 2.864 G, music
//! 200 6.548 G -> 6.507 G, car-identification 60 6.887 G -> 6.879 G.
//! (Looking first for an action whose children are all base cases, to
//! skip the earlier actions' subtrees, cost more on the deep domains:
//! music 6.611 G, car-identification 6.915 G.)

use super::Solver;
use crate::search::SearchError;
use crate::search::mask::Mask;
use crate::search::memo::{Bounds, Key};
use crate::search::shares::Shares;

/// Most nodes the plain recursion computes in one search before it gives
/// way to the interval search.
pub(super) const PLAIN_NODES: u64 = 2_000;

/// Most instance actions for which a search starts with the plain
/// recursion.
pub(super) const PLAIN_MAX_ACTIONS: usize = 11;

/// Most actions of a node of two truths that the plain recursion
/// computes in any search (see the module comment).
pub(super) const SMALL_ACTIONS: u32 = 8;

/// A non-base node (canonical `actions`) small enough for `plain_small`.
#[inline]
pub(super) fn is_small<M: Mask>(truths: M, actions: M) -> bool {
    truths.count() == 2 && actions.count() <= SMALL_ACTIONS
}

/// The plain recursion's node allowance for an instance of `actions`
/// actions: [`PLAIN_NODES`] up to [`PLAIN_MAX_ACTIONS`], else none.
pub(super) fn plain_nodes(actions: usize) -> u64 {
    if actions <= PLAIN_MAX_ACTIONS {
        PLAIN_NODES
    } else {
        0
    }
}

impl<M: Mask, K: Key> Solver<'_, M, K> {
    /// The value and first optimal action (instance order) of a non-base
    /// node (canonical `actions`) by the plain recursion, or `None` once
    /// the search has spent its `plain_left` nodes.
    pub(super) fn plain_decide(
        &mut self,
        truths: M,
        actions: M,
    ) -> Result<Option<(f64, Option<usize>)>, SearchError> {
        if self.plain_left == 0 {
            return Ok(None);
        }
        self.plain_left -= 1;
        self.count_expansion()?;
        let Some((best, action)) = self.plain_min(truths, actions)? else {
            return Ok(None);
        };
        let value = best + 1.0;
        self.store(truths, actions, Bounds::point(value))?;
        Ok(Some((value, action)))
    }

    /// The value and first optimal action (instance order) of a small
    /// non-base node (see [`is_small`]) by the plain recursion, outside
    /// the `plain_left` allowance: its subtree is small nodes only (`None`
    /// only if that allowance of `u64::MAX` nodes were spent).
    pub(super) fn plain_small(
        &mut self,
        truths: M,
        actions: M,
    ) -> Result<Option<(f64, Option<usize>)>, SearchError> {
        let left = std::mem::replace(&mut self.plain_left, u64::MAX);
        let decided = self.plain_decide(truths, actions);
        self.plain_left = left;
        decided
    }

    /// `E` of a non-base node (canonical `actions`): the memo's exact value,
    /// or the plain recursion's; `None` once `plain_left` is spent.
    fn plain_value(&mut self, truths: M, actions: M) -> Result<Option<f64>, SearchError> {
        if let Some(b) = self.memo.get(self.memo_key(truths, actions))
            && b.exact()
        {
            return Ok(Some(b.lo));
        }
        Ok(self.plain_decide(truths, actions)?.map(|(value, _)| value))
    }

    /// The least action sum of a non-base node and the first action in
    /// instance order that attains it.
    fn plain_min(
        &mut self,
        truths: M,
        actions: M,
    ) -> Result<Option<(f64, Option<usize>)>, SearchError> {
        let mut best = f64::INFINITY;
        let mut best_action = None;
        for b in actions.ones() {
            let child_actions = actions & !M::bit(b);
            let states = self.states[b].len();
            let total: u32 = self.states[b].iter().map(|&x| (truths & !x).count()).sum();
            let shares = Shares::of(total);
            let mut sum = 0.0f64;
            for s in 0..states {
                let t = truths & !self.states[b][s];
                let w = t.count();
                if w <= 1 {
                    continue;
                }
                let Some(a) = self.reduce(t, child_actions) else {
                    continue;
                };
                let Some(v) = self.plain_value(t, a)? else {
                    return Ok(None);
                };
                sum += v * shares.share(w);
                if sum >= best {
                    break;
                }
            }
            if sum < best {
                best = sum;
                best_action = Some(b);
                if best == 0.0 {
                    break;
                }
            }
        }
        Ok(Some((best, best_action)))
    }
}
