//! Which actions a node tries, and in what order: `expand` lists the
//! candidate actions with their children (duplicate and private actions
//! of one shape kept once, the first in instance order), most promising
//! first by lower bound; `look_up` fetches the children's canonical keys
//! and memo bounds; at a node computed exactly, `order_by_upper_bounds`
//! re-orders the candidates by upper bounds (memo and greedy rollouts).
//! Only the order changes here, never a value or the tie rule. A node
//! expanded again (a re-test at another threshold) takes its listing
//! from the expansion cache ([`super::recall`]) when still kept.
//!
//! Cost (an expansion is about half of a deep game's CPU): `expand`
//! makes one pass over the actions' states (children, signatures, widest
//! rule-out) and computes the cover layers after an action once per
//! action; `look_up` takes a child's actions from its truths' action
//! masks (a table by groups of four truths, `UnionTable`). Node
//! expansions and every float are unchanged
//! (car-identification 12 x 16, 100 instances: 1 757 771 expansions
//! before and after), and the search takes 5-9 % less CPU
//! (BENCHMARKS.md, "Optimal search"). Tried and dropped: 32-byte memo
//! slots (no gain), an index sort of the candidates (2.5 % more
//! instructions, no faster), touching each child's memo slot before the
//! probes (a plain load, as the crate forbids `unsafe` prefetches: 1-2 %
//! slower).

use super::bounds::{KUMO_LAYERS, LAYERS, cover_layers, layers_after, sum_bounds};
use super::recall::RECALL_AFTER;
use super::{Cand, Frame, Kid, Solver};
use crate::search::SearchError;
use crate::search::mask::Mask;
use crate::search::memo::{Bounds, Key};
use crate::search::shares::Shares;

impl<M: Mask, K: Key> Solver<'_, M, K> {
    /// Orders the candidates of a node computed exactly by upper bounds of
    /// their sums (the memo's, and greedy rollouts of the children), lowest
    /// first. The upper bounds cap the tests of `narrow_to_best`, and the
    /// candidates it does not pick are dismissed in this order against
    /// the one it picks. (The static order of `expand` is good for tests
    /// but often poor here: on motif-analysis 32 x 40 seed 0 the optimal
    /// root action came second and a trajectory node's came 34th of 34.)
    /// Candidates are taken in static order (lower bounds ascending), and
    /// one whose lower bound is already at least the best upper bound so
    /// far cannot be better than that candidate: it gets no rollouts and
    /// sorts after it. Only the order changes, so the value and the tie
    /// rule do not.
    pub(super) fn order_by_upper_bounds(
        &mut self,
        frame: &mut Frame<M>,
        actions: M,
    ) -> Result<(), SearchError> {
        let mut best_hi = f64::INFINITY;
        for ci in 0..frame.cands.len() {
            self.look_up(frame, ci, actions);
            let Cand { kids, states, .. } = frame.cands[ci];
            if frame.cands[ci].sum.lo >= best_hi {
                continue;
            }
            for j in kids..kids + states {
                let kid = frame.kids[j];
                if !kid.base && !kid.b.exact() {
                    let rollout = self.greedy_hi(kid.truths, kid.actions)?;
                    frame.kids[j].b.hi = kid.b.hi.min(rollout);
                }
            }
            frame.cands[ci].sum = sum_bounds(&frame.kids[kids..kids + states]);
            best_hi = best_hi.min(frame.cands[ci].sum.hi);
        }
        frame.cands.sort_by(|x, y| {
            x.sum
                .hi
                .total_cmp(&y.sum.hi)
                .then(x.sum.lo.total_cmp(&y.sum.lo))
                .then(x.spread.total_cmp(&y.spread))
                .then(x.action.cmp(&y.action))
        });
        Ok(())
    }

    /// Fetches the canonical keys and memo bounds of candidate `ci`'s
    /// children (once per expansion).
    pub(super) fn look_up(&self, frame: &mut Frame<M>, ci: usize, actions: M) {
        let cand = &mut frame.cands[ci];
        if cand.looked_up {
            return;
        }
        cand.looked_up = true;
        let child_actions = actions & !M::bit(cand.action);
        let kids = &mut frame.kids[cand.kids..cand.kids + cand.states];
        // Keys first, probes after: the probes (cache misses, mostly) are
        // then independent loads the processor can overlap. A non-base
        // child (see `expand`) has at least two truths, each related to
        // an action other than the one used, so `reduce` keeps it.
        for kid in kids.iter_mut() {
            if kid.base {
                continue;
            }
            let a = self.reduce_non_base(kid.truths, child_actions);
            kid.actions = a;
            kid.b.hi = kid.b.hi.min(f64::from(a.count()));
        }
        for kid in kids.iter_mut() {
            if !kid.base {
                kid.b = self.known(kid.truths, kid.actions, kid.b);
            }
        }
        cand.sum = sum_bounds(&frame.kids[cand.kids..cand.kids + cand.states]);
    }

    /// Fills `frame` with the node's candidate actions and their children,
    /// most promising first: from the expansion cache when it keeps the
    /// node, else listed afresh (`list`) and kept.
    pub(super) fn expand(&mut self, truths: M, actions: M, frame: &mut Frame<M>) {
        if self.expansions < RECALL_AFTER {
            self.list(truths, actions, frame);
            return;
        }
        let key = self.key(truths, actions);
        let child_hi = f64::from(actions.count() - 1);
        if self.recall.fetch(key, self.floors_epoch, child_hi, frame) {
            return;
        }
        self.list(truths, actions, frame);
        self.recall.store(key, self.floors_epoch, frame);
    }

    /// `expand` without the cache.
    ///
    /// One pass over the actions' states builds the children, their
    /// signatures and the widest rule-out (`|T| - ` the fewest truths a
    /// state keeps: a state's kept and ruled-out truths partition `T`);
    /// a second pass gives each non-base child its floor (see
    /// `floor_after`) from the cover layers after the action, computed
    /// once per action rather than once per child.
    fn list(&self, truths: M, actions: M, frame: &mut Frame<M>) {
        frame.cands.clear();
        frame.kids.clear();
        // `ge[k]`: truths covered by more than `k` actions.
        let ge = cover_layers(self.layers, actions.ones().map(|b| self.related[b]));
        let (once, twice) = (ge[0], ge[1]);
        let n = truths.count();
        // The fewest truths a state of any action keeps. Every action
        // counts, duplicates too: a private action of the same shape as an
        // earlier one can rule out more truths in one state (`shape` counts
        // only the sum over states), and it stays available below.
        let mut fewest_kept = n;
        // Static bound of a child: at most one action fewer.
        let child_hi = f64::from(actions.count() - 1);
        for b in actions.ones() {
            let row = &self.states[b];
            let start = frame.kids.len();
            let mut sum_w: u32 = 0;
            let mut signature: u64 = 0;
            for &x in row {
                let t = truths & !x;
                let w = t.count();
                sum_w += w;
                fewest_kept = fewest_kept.min(w);
                signature =
                    (signature.rotate_left(7) ^ t.digest()).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                frame.kids.push(Kid {
                    truths: t,
                    actions: M::ZERO,
                    p: 0.0,
                    base: false,
                    b: Bounds::ZERO,
                });
            }
            let states = row.len();
            let shape = self.shape(b, truths, twice);
            // An earlier action (in instance order) with the same children
            // in the same state order is the same action on every subset of
            // `truths`: its sum is identical bit for bit, so this one can
            // neither beat it nor win a tie against it.
            let duplicate = frame.cands.iter().any(|c| {
                (shape != 0 && c.shape == shape)
                    || c.signature == signature
                        && c.states == states
                        && frame.kids[c.kids..c.kids + states]
                            .iter()
                            .zip(&frame.kids[start..])
                            .all(|(x, y)| x.truths == y.truths)
            });
            if duplicate {
                frame.kids.truncate(start);
                continue;
            }
            let covered_without = twice | (once & !self.related[b]);
            let shares = Shares::of(sum_w);
            let mut spread = 0.0f64;
            for kid in &mut frame.kids[start..] {
                let w = kid.truths.count();
                kid.p = shares.share(w);
                kid.base = w <= 1 || !(kid.truths & !covered_without).is_zero();
                if !kid.base {
                    kid.b = Bounds {
                        lo: 1.0,
                        hi: child_hi,
                    };
                }
                spread += kid.p * f64::from(w);
            }
            debug_assert!(sum_w < n * states as u32);
            frame.cands.push(Cand {
                action: b,
                sum: Bounds::ZERO,
                spread,
                kids: start,
                states,
                signature,
                shape,
                looked_up: false,
            });
        }
        let widest = n - fewest_kept;
        if self.layers == KUMO_LAYERS {
            self.floors::<KUMO_LAYERS>(&ge, actions, widest, frame);
        } else {
            self.floors::<LAYERS>(&ge, actions, widest, frame);
        }
        frame.cands.sort_by(|x, y| {
            x.sum
                .lo
                .total_cmp(&y.sum.lo)
                .then(x.spread.total_cmp(&y.spread))
                .then(x.action.cmp(&y.action))
        });
    }

    /// The floors of the listed candidates' non-base children (see
    /// `path_bound` and `floor_after`), with the cover counts after each
    /// action is used, and their sums' bounds; `L` is the solver's cover
    /// layers (`self.layers`).
    #[inline(always)]
    fn floors<const L: usize>(
        &self,
        ge: &[M; LAYERS + 1],
        actions: M,
        widest: u32,
        frame: &mut Frame<M>,
    ) {
        let high = self.reuse.as_ref().map_or(M::ZERO, |reuse| reuse.high());
        for cand in &mut frame.cands {
            let after = layers_after(ge, self.related[cand.action], L);
            let left = actions & !M::bit(cand.action);
            let unused = self.reuse.as_ref().map_or(0, |reuse| reuse.unused(left));
            let kids = &mut frame.kids[cand.kids..cand.kids + cand.states];
            for kid in kids.iter_mut() {
                if !kid.base {
                    kid.b.lo = self.floor_after::<L>(&after, high, unused, kid.truths, widest);
                }
            }
            cand.sum = sum_bounds(kids);
        }
    }

    /// The shape of action `b` at a node whose truths covered by two or
    /// more of its actions are `twice`, if `b` is *private*: every truth it
    /// relates to (its set `R`) is related to no other action of the
    /// node; else 0.
    ///
    /// A private action's truths can only ever be ruled out by itself. Its
    /// states rule out parts of `R`; a child that keeps a truth of `R` is a
    /// base case (that truth is left without an action), so its only
    /// non-base children are the `m` states that rule out all of `R`, each
    /// leaving `T \ R` with the action used, at weight `|T| - |R|` out of
    /// `ΣW = S·|T| - Σ_s |X_s ∩ R|`. Adding the base children's `0.0`
    /// changes no float, so the action's sum depends only on `(S, m,
    /// Σ_s |X_s ∩ R|, |R|)` and the value of `(T \ R, A \ {b})`. That
    /// value is the same for two private actions of one shape: a node's
    /// value depends only on its truths related to non-private actions,
    /// those actions, and the multiset of its private actions' shapes
    /// (induction: a non-private action's children keep every private
    /// action private with the same shape, a private action's child drops
    /// exactly it). So two private actions of one shape have bit-identical
    /// sums, and only the first in instance order is tried.
    pub(super) fn shape(&self, b: usize, truths: M, twice: M) -> u64 {
        let r = self.related[b] & truths;
        if !(r & twice).is_zero() {
            return 0;
        }
        let states = self.states[b].len() as u64;
        let (mut m, mut sx) = (0u64, 0u64);
        for &x in &self.states[b] {
            let cut = x & r;
            m += u64::from(cut == r);
            sx += u64::from(cut.count());
        }
        // Never 0: `states >= 1`.
        (states << 48) | (m << 32) | (sx << 8) | u64::from(r.count())
    }
}
