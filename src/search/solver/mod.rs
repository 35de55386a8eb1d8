//! The exact search E(T, A) of DESIGN.md "Optimal search", fast.
//!
//! In: a [`Problem`] as masks of width `M`, a [`SearchBudget`]. Out: node
//! values (bit-identical to KUMO's reference recursion) and, at the nodes
//! the golden trajectory visits, the first-in-order optimal action.
//!
//! The reference's float operations are reproduced exactly: for an action
//! with states `s` (domain order), `W(s) = |T \ X_s|` (an integer),
//! `P(s) = W(s) as f64 / (ΣW as f64 + 1e-9)`, the action's sum starts at
//! `0.0` and adds `E(child) * P(s)` state by state, and a node's value is
//! `min + 1.0`. Everything else here changes how much is computed, never
//! the value.
//!
//! **Bounds, not values.** Every float operation of the recursion (`*P`,
//! `+` in state order, `min`, `+ 1.0`) is monotone under round-to-nearest,
//! so feeding it lower (upper) bounds of the children yields a lower
//! (upper) bound of the float the reference computes. The memo keeps a
//! proven interval `[lo, hi]` per node ([`Bounds`]); `lo == hi` is the
//! value bit for bit. Most nodes are never needed exactly: to show that an
//! action is not optimal it is enough to prove its sum at least the best
//! one, and to show that a node is cheap enough it is enough to bound one
//! of its actions from above. The workhorse is a null-window *test*: does
//! `E >= θ` hold? A test proves one side (`lo >= θ`, or `hi < θ`) and
//! never computes a value it does not need. Exact values are computed
//! only along the optimal policy (`exact`), where each non-optimal action
//! is dismissed by a test against the best sum. Static bounds of a node
//! never searched: `E >= 1` (it is not a base case) and `E <= |A|` (each
//! sum is below `(|A| - 1) * ΣP` with `ΣP < 1 - 1e-13`, far more than the
//! float error, and `|A|` is a float). Once a search has made
//! `DEEP_AFTER` expansions (a deep game), the lower bound of a node is
//! also the value of the game with reusable actions ([`reuse`]), which on
//! deep games is within 10-20 % of the value where the path bound is off by
//! 3x.
//!
//! The reductions, each exact:
//!
//! * **Canonical keys.** Actions related to no truth of `T` are dropped
//!   from the key. Such an action `a` never rules anything out below
//!   `(T, A)`, so by induction every child value is the same with or
//!   without it, and its own sum is `c * E(T, A \ {a})` with
//!   `c = ΣW / (ΣW + 1e-9)`, which exceeds the best sum `m` whenever
//!   `m < 1e8` (values here are below the action count): it never attains
//!   the minimum, so dropping it changes neither the value nor the
//!   argmin. The base case "a truth of `T` related to no action of `A`"
//!   is unaffected because only related actions cover truths.
//! * **Duplicate actions.** Two actions whose states, in order, leave the
//!   same children at `(T, A)` agree on every subset of `T`; swapping them
//!   maps the subtrees onto each other, so their sums are bit-identical.
//!   Only the first in instance order is tried (it would win the tie).
//! * **Order-free minimum.** A node's value is a minimum over the sums of
//!   its actions, which does not depend on the order the actions are
//!   tried in. Actions are tried most promising first: in a test, lowest
//!   static bound first. At a node computed exactly, the candidates are
//!   narrowed together (`narrow_to_best`): the one with the lowest lower
//!   bound is bisected, never above the others' best upper bound (from
//!   greedy rollouts, `greedy_hi`, upper bounds by the monotonicity
//!   above), until it is exact; so of the node's sums only the optimal
//!   one is computed exactly, and the others are dismissed against it.
//!   Only at the nodes the golden trajectory visits does the argmin
//!   matter; there the tie rule of instance order is applied explicitly
//!   (an action later in instance order is dismissed at `>= best`, an
//!   earlier one only at `> best`).

use std::time::Instant;

mod reuse;

use reuse::ReuseBound;

use super::mask::Mask;
use super::memo::{Bounds, Key, Memo, Memos};
use super::problem::Problem;
use super::{SearchBudget, SearchError};

/// How often (in node expansions) the clock is read for the time budget.
const CLOCK_EVERY: u64 = 1 << 10;

/// A child threshold this close (relative) to one of the child's bounds
/// means the caller needs the child to rounding precision: it is then
/// computed exactly instead of being narrowed one test at a time.
const NEAR: f64 = 1e-12;

/// One state of one candidate action at a node.
#[derive(Clone, Copy)]
struct Kid<M> {
    truths: M,
    /// The child's canonical actions (meaningful once `looked_up`).
    actions: M,
    p: f64,
    /// The child is a base case (value 0).
    base: bool,
    /// Bounds of the child's value.
    b: Bounds,
}

/// One candidate action at a node.
#[derive(Clone, Copy)]
struct Cand {
    action: usize,
    /// Float bounds of the action's sum.
    sum: Bounds,
    /// Expected number of truths left; orders equal bounds.
    spread: f64,
    kids: usize,
    states: usize,
    /// Digest of the children's truth sets, to spot duplicates.
    signature: u64,
    /// For a private action (see `expand`), its shape; else 0.
    shape: u64,
    /// The children's canonical keys and memo bounds have been fetched.
    looked_up: bool,
}

/// Scratch space of one recursion depth.
#[derive(Default)]
struct Frame<M> {
    cands: Vec<Cand>,
    kids: Vec<Kid<M>>,
}

/// What an action's sum is tested against: `sum >= at`, or, for a node
/// test, `sum + 1.0 >= at` (the node's value).
#[derive(Clone, Copy)]
struct Goal {
    at: f64,
    plus_one: bool,
}

impl Goal {
    #[inline]
    fn met(self, sum: f64) -> bool {
        if self.plus_one {
            sum + 1.0 >= self.at
        } else {
            sum >= self.at
        }
    }

    /// The sum the goal asks for, in real arithmetic (to aim child tests).
    fn target(self) -> f64 {
        if self.plus_one {
            self.at - 1.0
        } else {
            self.at
        }
    }
}

pub struct Solver<'m, M: Mask, K: Key> {
    states: Vec<Vec<M>>,
    related: Vec<M>,
    /// Where the action bits start in a packed key.
    key_shift: u32,
    /// Most truths one state rules out.
    widest_rule_out: u32,
    memo: &'m mut Memo<K>,
    /// Greedy rollout values (see `greedy_hi`), a cache.
    greedy: &'m mut Memo<K>,
    frames: Vec<Frame<M>>,
    budget: SearchBudget,
    started: Instant,
    expansions: u64,
    /// The reuse bound of deep games, once the search has proved deep.
    reuse: Option<ReuseBound>,
    /// Expansions after which the reuse bound is built.
    reuse_after: u64,
}

/// Expansions after which a search builds the reuse bound (instances of
/// at most `reuse::MAX_TRUTHS` truths).
const DEEP_AFTER: u64 = 2_000;

impl<'m, M: Mask, K: Key> Solver<'m, M, K> {
    pub fn new(problem: &Problem, memos: &'m mut Memos<K>, budget: SearchBudget) -> Self {
        let Memos {
            proven: memo,
            greedy,
        } = memos;
        let states: Vec<Vec<M>> = (0..problem.action_count())
            .map(|a| problem.states(a).iter().map(|&x| M::from_u128(x)).collect())
            .collect();
        let related = states
            .iter()
            .map(|row| row.iter().fold(M::ZERO, |acc, &x| acc | x))
            .collect();
        memo.clear();
        greedy.clear();
        let widest_rule_out = states
            .iter()
            .flatten()
            .map(|x: &M| x.count())
            .max()
            .unwrap_or(0);
        Solver {
            widest_rule_out,
            states,
            related,
            key_shift: problem.truth_count() as u32,
            memo,
            greedy,
            frames: Vec::new(),
            budget,
            started: Instant::now(),
            expansions: 0,
            reuse: None,
            reuse_after: DEEP_AFTER,
        }
    }

    /// The exclusion masks of action `a`'s states.
    pub fn action_states(&self, a: usize) -> &[M] {
        &self.states[a]
    }

    /// Truths of `truths` that no action of `actions` is related to.
    pub fn uncovered(&self, truths: M, actions: M) -> M {
        let covered = actions.ones().fold(M::ZERO, |acc, b| acc | self.related[b]);
        truths & !covered
    }

    /// Entries stored in both tables (the unit of the memo budget).
    pub fn memo_entries(&self) -> usize {
        self.memo.len() + self.greedy.len()
    }

    /// Nodes expanded so far (the unit of the node budget).
    pub fn expansions(&self) -> u64 {
        self.expansions
    }

    /// `E(truths, actions)` exactly.
    pub fn value(&mut self, truths: M, actions: M) -> Result<f64, SearchError> {
        Ok(self.decide(truths, actions)?.0)
    }

    /// The value of the node and its first optimal action in instance
    /// order, or `None` when the node is a base case.
    pub fn decide(&mut self, truths: M, actions: M) -> Result<(f64, Option<usize>), SearchError> {
        let Some(actions) = self.reduce(truths, actions) else {
            return Ok((0.0, None));
        };
        let prior = self.static_bounds(truths, actions);
        let (value, best) = self.exact(truths, actions, prior, 0, true)?;
        Ok((value, best))
    }

    /// The related actions of a non-base node, or `None` for a base case
    /// (`|T| <= 1`, or a truth related to no action, which covers `A`
    /// empty).
    #[inline]
    fn reduce(&self, truths: M, actions: M) -> Option<M> {
        if truths.count() <= 1 {
            return None;
        }
        let mut kept = M::ZERO;
        let mut covered = M::ZERO;
        for b in actions.ones() {
            let r = self.related[b] & truths;
            if !r.is_zero() {
                kept |= M::bit(b);
                covered |= r;
            }
        }
        if covered != truths {
            return None;
        }
        Some(kept)
    }

    #[inline]
    fn key(&self, truths: M, actions: M) -> K {
        K::pack(truths.to_u128(), actions.to_u128(), self.key_shift)
    }

    /// What is known of a non-base node (canonical `actions`): the memo's
    /// bounds, or the static ones.
    #[inline]
    fn known(&self, truths: M, actions: M, prior: Bounds) -> Bounds {
        match self.memo.get(self.key(truths, actions)) {
            Some(b) => b.meet(prior),
            None => prior,
        }
    }

    /// Static bounds of a non-base node: its path bound and its action
    /// count.
    fn static_bounds(&self, truths: M, actions: M) -> Bounds {
        Bounds {
            lo: self.static_lo(truths, actions),
            hi: f64::from(actions.count()),
        }
    }

    /// A lower bound of a non-base node from the length of its shortest
    /// path to a base case (see `path_bound`).
    fn static_lo(&self, truths: M, actions: M) -> f64 {
        let ge = cover_layers(actions.ones().map(|b| self.related[b]));
        let cover = (1..LAYERS as u32)
            .find(|&k| !(truths & !ge[k as usize]).is_zero())
            .unwrap_or(LAYERS as u32);
        self.floor(truths, cover, self.widest_rule_out)
    }

    /// The best lower bound of a non-base node whose cover is `cover`: its
    /// path bound (see `path_bound`) or the reuse bound.
    #[inline]
    fn floor(&self, truths: M, cover: u32, widest: u32) -> f64 {
        let path = path_bound(cover, truths.count(), widest);
        match &self.reuse {
            Some(reuse) => path.max(reuse.get(truths, cover)),
            None => path,
        }
    }

    fn store(&mut self, truths: M, actions: M, bounds: Bounds) -> Result<(), SearchError> {
        let key = self.key(truths, actions);
        if self.memo_entries() >= self.budget.max_memo_entries && self.memo.get(key).is_none() {
            return Err(self.exceeded());
        }
        self.memo.put(key, bounds);
        Ok(())
    }

    fn exceeded(&self) -> SearchError {
        SearchError::BudgetExceeded {
            memo_entries: self.memo.len(),
            nodes: self.expansions,
            elapsed: self.started.elapsed(),
        }
    }

    /// Counts one node expansion against the budgets.
    fn count_expansion(&mut self) -> Result<(), SearchError> {
        self.expansions += 1;
        if self.expansions == self.reuse_after && self.key_shift as usize <= reuse::MAX_TRUTHS {
            self.reuse = Some(ReuseBound::new(
                self.key_shift as usize,
                &self.states,
                &self.related,
            ));
        }
        if self.expansions > self.budget.max_nodes {
            return Err(self.exceeded());
        }
        if self.expansions.is_multiple_of(CLOCK_EVERY)
            && let Some(limit) = self.budget.max_time
            && self.started.elapsed() > limit
        {
            return Err(self.exceeded());
        }
        Ok(())
    }

    /// Runs `body` with the scratch frame of `depth`.
    fn with_frame<R>(
        &mut self,
        depth: usize,
        body: impl FnOnce(&mut Self, &mut Frame<M>) -> Result<R, SearchError>,
    ) -> Result<R, SearchError> {
        if self.frames.len() <= depth {
            self.frames.resize_with(depth + 1, Frame::default);
        }
        let mut frame = std::mem::take(&mut self.frames[depth]);
        let result = body(self, &mut frame);
        self.frames[depth] = frame;
        result
    }

    /// The null-window test of a non-base node (canonical `actions`):
    /// afterwards its bounds satisfy `lo >= theta` or `hi < theta`.
    fn test(
        &mut self,
        truths: M,
        actions: M,
        prior: Bounds,
        theta: f64,
        depth: usize,
    ) -> Result<Bounds, SearchError> {
        let known = self.known(truths, actions, prior);
        if known.lo >= theta || known.hi < theta {
            return Ok(known);
        }
        self.count_expansion()?;
        let found = self.with_frame(depth, |s, frame| {
            s.test_in(truths, actions, theta, depth, frame)
        })?;
        let bounds = known.meet(found);
        debug_assert!(bounds.lo <= bounds.hi);
        self.store(truths, actions, bounds)?;
        Ok(bounds)
    }

    fn test_in(
        &mut self,
        truths: M,
        actions: M,
        theta: f64,
        depth: usize,
        frame: &mut Frame<M>,
    ) -> Result<Bounds, SearchError> {
        self.expand(truths, actions, frame);
        let goal = Goal {
            at: theta,
            plus_one: true,
        };
        // `E >= theta` needs every action to pass; `E < theta` needs one
        // to fail. Most promising (lowest bound) first: it is the likeliest
        // to fail, and when the lowest bound passes, all do.
        for ci in 0..frame.cands.len() {
            let cand = frame.cands[ci];
            if goal.met(cand.sum.lo) {
                break;
            }
            let sum = self.action_test(frame, ci, actions, goal, depth)?;
            if !goal.met(sum.hi) {
                break;
            }
        }
        Ok(node_bounds(&frame.cands))
    }

    /// The exact value of a non-base node (canonical `actions`) and, with
    /// `ordered`, its first optimal action in instance order.
    fn exact(
        &mut self,
        truths: M,
        actions: M,
        prior: Bounds,
        depth: usize,
        ordered: bool,
    ) -> Result<(f64, Option<usize>), SearchError> {
        let known = self.known(truths, actions, prior);
        if known.exact() && !ordered {
            return Ok((known.lo, None));
        }
        self.count_expansion()?;
        let (value, best) = self.with_frame(depth, |s, frame| {
            s.exact_in(truths, actions, depth, ordered, frame)
        })?;
        debug_assert!(known.lo <= value && value <= known.hi);
        self.store(
            truths,
            actions,
            Bounds {
                lo: value,
                hi: value,
            },
        )?;
        Ok((value, best))
    }

    fn exact_in(
        &mut self,
        truths: M,
        actions: M,
        depth: usize,
        ordered: bool,
        frame: &mut Frame<M>,
    ) -> Result<(f64, Option<usize>), SearchError> {
        self.expand(truths, actions, frame);
        self.order_by_upper_bounds(frame, actions)?;
        let first = self.narrow_to_best(frame, actions, depth)?;
        frame.cands[..=first].rotate_right(1);
        let mut best = f64::INFINITY;
        let mut best_action: Option<usize> = None;
        for ci in 0..frame.cands.len() {
            let cand = frame.cands[ci];
            if let Some(b) = best_action {
                // Dismiss the action if its sum cannot beat the best: `>=`
                // for a later action in instance order (it loses ties),
                // `>` for an earlier one (it would win a tie).
                let at = if !ordered || cand.action > b {
                    best
                } else {
                    best.next_up()
                };
                let goal = Goal {
                    at,
                    plus_one: false,
                };
                if goal.met(cand.sum.lo) {
                    continue;
                }
                let sum = self.action_test(frame, ci, actions, goal, depth)?;
                if goal.met(sum.lo) {
                    continue;
                }
            }
            let sum = self.action_exact(frame, ci, actions, depth)?;
            if sum < best || (sum == best && best_action.is_some_and(|b| cand.action < b)) {
                best = sum;
                best_action = Some(cand.action);
            }
        }
        debug_assert!(best.is_finite());
        Ok((best + 1.0, best_action))
    }

    /// Narrows the candidates of a node computed exactly until one with
    /// the lowest lower bound is exact, and returns its index: its sum is
    /// then at most every other candidate's, so it is the minimum (up to
    /// ties, which the caller's tie rule settles). Each step bisects the
    /// candidate with the lowest lower bound (the lowest upper bound on
    /// ties), testing no higher than the lowest upper bound of the others:
    /// a candidate that is not optimal is only narrowed until it falls
    /// behind, never computed exactly. (Computing the candidate with the
    /// best upper bound exactly first cost 7.09 M of the 7.10 M nodes of
    /// motif-analysis 28 x 36 seed 0, and it was not optimal: the optimal
    /// action, whose upper bound was 0.04 % higher, took 3 k nodes.) With
    /// one candidate this is `action_exact`.
    fn narrow_to_best(
        &mut self,
        frame: &mut Frame<M>,
        actions: M,
        depth: usize,
    ) -> Result<usize, SearchError> {
        loop {
            let mut pick = 0;
            for ci in 1..frame.cands.len() {
                let (c, p) = (frame.cands[ci].sum, frame.cands[pick].sum);
                if c.lo < p.lo || (c.lo == p.lo && c.hi < p.hi) {
                    pick = ci;
                }
            }
            let sum = frame.cands[pick].sum;
            if sum.exact() {
                return Ok(pick);
            }
            // Every other candidate's upper bound is above `sum.lo` (an
            // equal one would be exact at `sum.lo` and picked first), so
            // the goal lies in `(lo, hi]` and the test narrows the sum.
            let others_hi = frame
                .cands
                .iter()
                .enumerate()
                .filter(|&(ci, _)| ci != pick)
                .map(|(_, c)| c.sum.hi)
                .fold(f64::INFINITY, f64::min);
            let mid = split(sum.lo, sum.hi);
            let at = if others_hi > sum.lo {
                mid.min(others_hi)
            } else {
                mid
            };
            let goal = Goal {
                at,
                plus_one: false,
            };
            self.action_test(frame, pick, actions, goal, depth)?;
        }
    }

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
    fn order_by_upper_bounds(
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

    /// An upper bound of a non-base node's value (canonical `actions`):
    /// the value of the greedy policy that takes, at every node, the
    /// action with the lowest sum of its children's path bounds (base
    /// children counting 0; the order of `expand`, with the instance's
    /// widest rule-out instead of the node's), then the fewest truths left
    /// expected, computed in the reference's float operations with the
    /// memo's upper bound of a child where tighter. By the monotonicity
    /// argument of the module comment it is at least the reference's value.
    /// Each node's rollout is computed once (the `greedy` table) and counts
    /// as one expansion.
    fn greedy_hi(&mut self, truths: M, actions: M) -> Result<f64, SearchError> {
        let key = self.key(truths, actions);
        if let Some(b) = self.greedy.get(key) {
            return Ok(b.hi);
        }
        self.count_expansion()?;
        let ge = cover_layers(actions.ones().map(|b| self.related[b]));
        let (once, twice) = (ge[0], ge[1]);
        // (action, ΣW, bound of its sum, spread) of the greedy choice.
        let mut best = (usize::MAX, 0u32, f64::INFINITY, f64::INFINITY);
        for b in actions.ones() {
            let r = self.related[b];
            let covered_without = twice | (once & !r);
            let sum_w: u32 = self.states[b].iter().map(|&x| (truths & !x).count()).sum();
            let denom = f64::from(sum_w) + 1e-9;
            let (mut lo, mut spread) = (0.0f64, 0.0f64);
            for &x in &self.states[b] {
                let t = truths & !x;
                let w = t.count();
                let p = f64::from(w) / denom;
                spread += p * f64::from(w);
                if w <= 1 || !(t & !covered_without).is_zero() {
                    continue;
                }
                lo += p * self.floor(t, cover_after(&ge, r, t), self.widest_rule_out);
            }
            if lo < best.2 || (lo == best.2 && spread < best.3) {
                best = (b, sum_w, lo, spread);
            }
        }
        let (b, sum_w, _, _) = best;
        let child_actions = actions & !M::bit(b);
        let denom = f64::from(sum_w) + 1e-9;
        let mut sum = 0.0f64;
        for s in 0..self.states[b].len() {
            let t = truths & !self.states[b][s];
            let Some(a) = self.reduce(t, child_actions) else {
                continue;
            };
            let known = self.known(
                t,
                a,
                Bounds {
                    lo: 1.0,
                    hi: f64::from(a.count()),
                },
            );
            let v = if known.exact() {
                known.hi
            } else {
                known.hi.min(self.greedy_hi(t, a)?)
            };
            sum += v * (f64::from(t.count()) / denom);
        }
        let rollout = (sum + 1.0).min(f64::from(actions.count()));
        if self.memo_entries() >= self.budget.max_memo_entries {
            return Err(self.exceeded());
        }
        self.greedy.put(
            key,
            Bounds {
                lo: rollout,
                hi: rollout,
            },
        );
        Ok(rollout)
    }

    /// Fetches the canonical keys and memo bounds of candidate `ci`'s
    /// children (once per expansion).
    fn look_up(&self, frame: &mut Frame<M>, ci: usize, actions: M) {
        let cand = &mut frame.cands[ci];
        if cand.looked_up {
            return;
        }
        cand.looked_up = true;
        let child_actions = actions & !M::bit(cand.action);
        let kids = &mut frame.kids[cand.kids..cand.kids + cand.states];
        // Keys first, probes after: the probes (cache misses, mostly) are
        // then independent loads the processor can overlap.
        for kid in kids.iter_mut() {
            if kid.base {
                continue;
            }
            match self.reduce(kid.truths, child_actions) {
                Some(a) => {
                    kid.actions = a;
                    kid.b.hi = kid.b.hi.min(f64::from(a.count()));
                }
                None => {
                    debug_assert!(false, "expand and reduce agree on base cases");
                    kid.base = true;
                    kid.b = Bounds::ZERO;
                }
            }
        }
        for kid in kids.iter_mut() {
            if !kid.base {
                kid.b = self.known(kid.truths, kid.actions, kid.b);
            }
        }
        cand.sum = sum_bounds(&frame.kids[cand.kids..cand.kids + cand.states]);
    }

    /// Narrows candidate `ci`'s sum until `goal` is decided: returns its
    /// bounds with `goal.met(lo)` or `!goal.met(hi)`.
    fn action_test(
        &mut self,
        frame: &mut Frame<M>,
        ci: usize,
        actions: M,
        goal: Goal,
        depth: usize,
    ) -> Result<Bounds, SearchError> {
        self.look_up(frame, ci, actions);
        let Cand { kids, states, .. } = frame.cands[ci];
        let kids = kids..kids + states;
        // Children (by offset) already asked in this call.
        let mut asked = 0u64;
        loop {
            let sum = sum_bounds(&frame.kids[kids.clone()]);
            frame.cands[ci].sum = sum;
            if goal.met(sum.lo) || !goal.met(sum.hi) {
                return Ok(sum);
            }
            // Each undecided child is asked once for its share of the
            // deficit (all of them passing closes it), widest weighted
            // interval first; after that the widest is asked for the whole
            // deficit, or for its share of it when it cannot close it alone.
            let t = goal.target();
            let deficit = (t - sum.lo).max(0.0);
            let excess = (sum.hi - t).max(0.0);
            let mut pick = None;
            let mut widest = -1.0f64;
            let mut open = 0.0f64;
            let mut fresh = false;
            for (i, kid) in frame.kids[kids.clone()].iter().enumerate() {
                if kid.base || kid.b.lo >= kid.b.hi {
                    continue;
                }
                open += kid.p;
                let new = i < 64 && asked & (1u64 << i) == 0;
                let w = kid.p * (kid.b.hi - kid.b.lo);
                if (new && !fresh) || (new == fresh && w > widest) {
                    widest = w;
                    pick = Some(i);
                    fresh = new;
                }
            }
            let Some(i) = pick else {
                debug_assert!(false, "an undecided sum has an inexact child");
                return Ok(sum);
            };
            if i < 64 {
                asked |= 1u64 << i;
            }
            let j = kids.start + i;
            let kid = frame.kids[j];
            let mut theta = if fresh {
                kid.b.lo + deficit / open
            } else if widest >= deficit {
                kid.b.lo + deficit / kid.p
            } else {
                kid.b.lo + (kid.b.hi - kid.b.lo) * (deficit / (deficit + excess))
            };
            theta = theta.min(kid.b.hi);
            let near = NEAR * kid.b.lo;
            let b = if theta - kid.b.lo <= near || kid.b.hi - theta <= near {
                let v = self
                    .exact(kid.truths, kid.actions, kid.b, depth + 1, false)?
                    .0;
                Bounds { lo: v, hi: v }
            } else {
                self.test(kid.truths, kid.actions, kid.b, theta, depth + 1)?
            };
            for other in &mut frame.kids[kids.clone()] {
                if !other.base && other.truths == kid.truths {
                    other.b = other.b.meet(b);
                }
            }
        }
    }

    /// The exact sum of candidate `ci`: its bounds narrowed by tests until
    /// they meet. Children are only narrowed as far as the sum needs.
    fn action_exact(
        &mut self,
        frame: &mut Frame<M>,
        ci: usize,
        actions: M,
        depth: usize,
    ) -> Result<f64, SearchError> {
        self.look_up(frame, ci, actions);
        let Cand { kids, states, .. } = frame.cands[ci];
        loop {
            let sum = sum_bounds(&frame.kids[kids..kids + states]);
            frame.cands[ci].sum = sum;
            if sum.exact() {
                return Ok(sum.lo);
            }
            let goal = Goal {
                at: split(sum.lo, sum.hi),
                plus_one: false,
            };
            self.action_test(frame, ci, actions, goal, depth)?;
        }
    }

    /// Fills `frame` with the node's candidate actions and their children,
    /// most promising first.
    fn expand(&self, truths: M, actions: M, frame: &mut Frame<M>) {
        frame.cands.clear();
        frame.kids.clear();
        // `ge[k]`: truths covered by more than `k` actions.
        let ge = cover_layers(actions.ones().map(|b| self.related[b]));
        let (once, twice) = (ge[0], ge[1]);
        let n = truths.count();
        let mut widest = 0;
        // Static bound of a child: at most one action fewer.
        let child_hi = f64::from(actions.count() - 1);
        for b in actions.ones() {
            let covered_without = twice | (once & !self.related[b]);
            let start = frame.kids.len();
            let mut sum_w: u32 = 0;
            let mut signature: u64 = 0;
            for &x in &self.states[b] {
                let t = truths & !x;
                sum_w += t.count();
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
            let states = self.states[b].len();
            // Every action counts towards the widest rule-out, duplicates
            // too: a private action of the same shape as an earlier one
            // can rule out more truths in one state (`shape` counts only
            // the sum over states), and it stays available below.
            for &x in &self.states[b] {
                widest = widest.max((truths & x).count());
            }
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
            let denom = f64::from(sum_w) + 1e-9;
            let mut spread = 0.0f64;
            for kid in &mut frame.kids[start..] {
                let w = kid.truths.count();
                kid.p = f64::from(w) / denom;
                kid.base = w <= 1 || !(kid.truths & !covered_without).is_zero();
                if !kid.base {
                    kid.b = Bounds {
                        lo: 1.0,
                        hi: child_hi,
                    };
                }
                spread += kid.p * f64::from(w);
            }
            debug_assert!(sum_w < n * self.states[b].len() as u32);
            frame.cands.push(Cand {
                action: b,
                sum: sum_bounds(&frame.kids[start..]),
                spread,
                kids: start,
                states,
                signature,
                shape,
                looked_up: false,
            });
        }
        // Path bounds of the children (see `path_bound`), with the cover
        // counts after the action is used.
        for cand in &mut frame.cands {
            let r = self.related[cand.action];
            for kid in &mut frame.kids[cand.kids..cand.kids + cand.states] {
                if kid.base {
                    continue;
                }
                kid.b.lo = self.floor(kid.truths, cover_after(&ge, r, kid.truths), widest);
            }
            cand.sum = sum_bounds(&frame.kids[cand.kids..cand.kids + cand.states]);
        }
        frame.cands.sort_by(|x, y| {
            x.sum
                .lo
                .total_cmp(&y.sum.lo)
                .then(x.spread.total_cmp(&y.spread))
                .then(x.action.cmp(&y.action))
        });
    }
}

impl<M: Mask, K: Key> Solver<'_, M, K> {
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
    fn shape(&self, b: usize, truths: M, twice: M) -> u64 {
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

/// Bounds of an action's sum from its children's bounds: the reference's
/// float sum, in state order, of lower and of upper bounds. Base children
/// add `0.0 * P`, which leaves a non-negative sum unchanged.
#[inline]
fn sum_bounds<M>(kids: &[Kid<M>]) -> Bounds {
    let mut lo = 0.0f64;
    let mut hi = 0.0f64;
    for kid in kids {
        if !kid.base {
            lo += kid.b.lo * kid.p;
            hi += kid.b.hi * kid.p;
        }
    }
    Bounds { lo, hi }
}

/// Cover-count layers kept by [`cover_layers`].
const LAYERS: usize = 8;

/// `ge[k]`: the truths related to more than `k` of the given actions
/// (`related` masks), for `k <= LAYERS`.
fn cover_layers<M: Mask>(related: impl Iterator<Item = M>) -> [M; LAYERS + 1] {
    let mut ge = [M::ZERO; LAYERS + 1];
    for r in related {
        for k in (1..=LAYERS).rev() {
            let below = ge[k - 1] & r;
            ge[k] |= below;
        }
        ge[0] |= r;
    }
    ge
}

/// The fewest actions relating to one truth of `truths` once the action
/// related to `r` is used, from the cover layers `ge` of a node's actions
/// (capped at [`LAYERS`]).
fn cover_after<M: Mask>(ge: &[M; LAYERS + 1], r: M, truths: M) -> u32 {
    (1..LAYERS)
        .find(|&k| {
            let more = (ge[k] & !r) | (ge[k + 1] & r);
            !(truths & !more).is_zero()
        })
        .unwrap_or(LAYERS) as u32
}

/// A lower bound of the value of a non-base node from the shortest path
/// from it to a base case: `steps = min(cover, ceil((|T| - 1) / widest))`
/// where `cover` is the fewest actions relating to one of its truths (a
/// truth is left uncovered only once all of them are used) and `widest`
/// bounds the truths one state rules out (`|T| <= 1` needs `|T| - 1`
/// ruled out). Every child of such a node is non-base with a path bound
/// one less, and the sum of its `P(s)` is at least `1 - 1e-9` (up to
/// rounding), so by induction `E >= 1 + (steps - 1) * (1 - 1e-6)`, with
/// ample margin for up to a few hundred steps.
fn path_bound(cover: u32, truths: u32, widest: u32) -> f64 {
    let size = (truths - 1).div_ceil(widest.max(1));
    let steps = cover.min(size).max(1);
    1.0 + f64::from(steps - 1) * (1.0 - 1e-6)
}

/// A float in `(lo, hi]` near the middle (in value while the interval is
/// wide, in representation once it is a few floats wide).
fn split(lo: f64, hi: f64) -> f64 {
    debug_assert!(0.0 <= lo && lo < hi);
    let mid = lo + (hi - lo) * 0.5;
    if mid > lo && mid <= hi && (hi - lo) > 1e-9 * hi {
        return mid;
    }
    let (l, h) = (lo.to_bits(), hi.to_bits());
    f64::from_bits(l + (h - l).div_ceil(2))
}

/// Bounds of a node's value from its candidates' sum bounds.
fn node_bounds(cands: &[Cand]) -> Bounds {
    let lo = cands.iter().map(|c| c.sum.lo).fold(f64::INFINITY, f64::min);
    let hi = cands.iter().map(|c| c.sum.hi).fold(f64::INFINITY, f64::min);
    Bounds {
        lo: lo + 1.0,
        hi: hi + 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Small pseudo-random problems: `truths` truths, `actions` actions of
    /// 2-3 states, each state ruling out a random subset.
    fn problems(count: usize, truths: usize, actions: usize) -> Vec<Problem> {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..count)
            .map(|_| {
                let rules: Vec<Vec<Vec<usize>>> = (0..actions)
                    .map(|_| {
                        let states = 2 + (next() % 2) as usize;
                        (0..states)
                            .map(|_| (0..truths).filter(|_| next() % 3 == 0).collect())
                            .collect()
                    })
                    .collect();
                Problem::from_rule_outs(truths, &rules).unwrap()
            })
            .collect()
    }

    /// The reference recursion, plainly (memoized), for small problems.
    fn plain(
        problem: &Problem,
        truths: u64,
        actions: u64,
        memo: &mut std::collections::HashMap<(u64, u64), f64>,
    ) -> f64 {
        let related = |a: usize| problem.states(a).iter().fold(0u64, |m, &x| m | x as u64);
        let covered = actions.ones().fold(0u64, |m, a| m | related(a));
        if truths.count() <= 1 || truths & !covered != 0 {
            return 0.0;
        }
        if let Some(&v) = memo.get(&(truths, actions)) {
            return v;
        }
        let mut best = f64::INFINITY;
        for a in actions.ones() {
            let children: Vec<u64> = problem
                .states(a)
                .iter()
                .map(|&x| truths & !(x as u64))
                .collect();
            let denom = f64::from(children.iter().map(|t| t.count()).sum::<u32>()) + 1e-9;
            let mut sum = 0.0;
            for &t in &children {
                sum +=
                    plain(problem, t, actions & !(1 << a), memo) * (f64::from(t.count()) / denom);
            }
            best = best.min(sum);
        }
        let value = best + 1.0;
        memo.insert((truths, actions), value);
        value
    }

    /// The reuse bound is at most the value bit for bit at every node of
    /// every subset of truths, with all actions or all but one (the
    /// induction of `reuse`, with the node's cover as level).
    #[test]
    fn reuse_bound_is_below_every_value() {
        let mut memos = Memos::<u64>::default();
        let (mut checked, mut above_path) = (0, 0);
        for problem in problems(30, 9, 7) {
            let solver = Solver::<u64, u64>::new(&problem, &mut memos, SearchBudget::UNLIMITED);
            let reuse = ReuseBound::new(problem.truth_count(), &solver.states, &solver.related);
            let all_t: u64 = (1 << problem.truth_count()) - 1;
            let all_a: u64 = (1 << problem.action_count()) - 1;
            let mut exact = std::collections::HashMap::new();
            for truths in 0..=all_t {
                for drop in 0..=problem.action_count() {
                    let actions = all_a & !(1 << drop);
                    let Some(canonical) = solver.reduce(truths, actions) else {
                        continue;
                    };
                    let cover = truths
                        .ones()
                        .map(|t| {
                            canonical
                                .ones()
                                .filter(|&b| solver.related[b].contains(t))
                                .count()
                        })
                        .min()
                        .unwrap() as u32;
                    let bound = reuse.get(truths, cover);
                    let value = plain(&problem, truths, actions, &mut exact);
                    assert!(bound <= value, "reuse bound {bound} > value {value}");
                    checked += 1;
                    above_path += usize::from(bound > solver.static_lo(truths, canonical));
                }
            }
        }
        assert!(checked > 10_000, "only {checked} non-base nodes checked");
        assert!(
            above_path > 1_000,
            "the bound beat the path bound {above_path} times"
        );
    }

    /// A search that uses the reuse bound from its first expansion gets
    /// the plain recursion's values bit for bit.
    #[test]
    fn search_with_the_reuse_bound_equals_the_plain_recursion() {
        let mut memos = Memos::<u64>::default();
        for problem in problems(60, 11, 9) {
            let all_t: u64 = (1 << problem.truth_count()) - 1;
            let all_a: u64 = (1 << problem.action_count()) - 1;
            let want = plain(
                &problem,
                all_t,
                all_a,
                &mut std::collections::HashMap::new(),
            );
            let mut solver = Solver::<u64, u64>::new(&problem, &mut memos, SearchBudget::UNLIMITED);
            solver.reuse_after = 1;
            let got = solver.value(all_t, all_a).unwrap();
            assert!(solver.reuse.is_some());
            assert_eq!(got.to_bits(), want.to_bits(), "{got} vs {want}");
        }
    }

    /// The greedy rollout bounds the exact value from above, at the root
    /// and at every child of every root action.
    #[test]
    fn greedy_rollouts_are_upper_bounds() {
        let mut memos = Memos::<u64>::default();
        let mut checked = 0;
        for problem in problems(60, 9, 7) {
            let all_t: u64 = (1 << problem.truth_count()) - 1;
            let all_a: u64 = (1 << problem.action_count()) - 1;
            let mut nodes = vec![(all_t, all_a)];
            for a in 0..problem.action_count() {
                for &x in problem.states(a) {
                    nodes.push((all_t & !(x as u64), all_a & !(1 << a)));
                }
            }
            let mut exact = std::collections::HashMap::new();
            for (truths, actions) in nodes {
                // A fresh solver each time, with nothing proven to lean on.
                let mut solver =
                    Solver::<u64, u64>::new(&problem, &mut memos, SearchBudget::UNLIMITED);
                let Some(canonical) = solver.reduce(truths, actions) else {
                    continue;
                };
                let rollout = solver.greedy_hi(truths, canonical).unwrap();
                let value = plain(&problem, truths, actions, &mut exact);
                assert!(rollout >= value, "rollout {rollout} < value {value}");
                checked += 1;
            }
        }
        assert!(checked > 300, "only {checked} non-base nodes checked");
    }
}
