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
//! So every search starts here; a game that needs more than `PLAIN_NODES`
//! nodes falls back to the interval search, which keeps every exact value
//! computed so far in the memo (they are values bit for bit, so `lo == hi`
//! there), so little of the attempt is lost.
//!
//! Exactness: this *is* the reference's recursion, float operation for
//! float operation: `P(s) = W(s) / (ΣW + 1e-9)`, `sum += E(child) * P(s)`
//! in state order (a base child adds `0.0`, which leaves the sum
//! unchanged), the sum abandoned once `sum >= best` (the remaining terms
//! are non-negative and rounding is monotone, so it can only end `>=
//! best`), `best` replaced only by a strictly lower sum, so the argmin is
//! the first optimal action in instance order. Dropping actions related to
//! no truth from the key is exact (parent module).

use super::Solver;
use crate::search::SearchError;
use crate::search::mask::Mask;
use crate::search::memo::{Bounds, Key};

/// Most nodes the plain recursion computes in one search before it gives
/// way to the interval search.
pub(super) const PLAIN_NODES: u64 = 2_000;

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
        self.store(
            truths,
            actions,
            Bounds {
                lo: value,
                hi: value,
            },
        )?;
        Ok(Some((value, action)))
    }

    /// `E` of a non-base node (canonical `actions`): the memo's exact value,
    /// or the plain recursion's; `None` once `plain_left` is spent.
    fn plain_value(&mut self, truths: M, actions: M) -> Result<Option<f64>, SearchError> {
        if let Some(b) = self.memo.get(self.key(truths, actions))
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
            let denom = f64::from(total) + 1e-9;
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
                sum += v * (f64::from(w) / denom);
                if sum >= best {
                    break;
                }
            }
            if sum < best {
                best = sum;
                best_action = Some(b);
            }
        }
        Ok(Some((best, best_action)))
    }
}
