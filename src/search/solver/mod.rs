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
//! also the value of a game in which most actions can be reused
//! ([`reuse`]; a few are tracked exactly), which on car-identification
//! 12 x 16 is 80-85 % of the value near the root where the path bound is
//! 1.
//!
//! A search of an instance of few actions starts with the plain
//! recursion ([`plain`]), which there costs less than all of the above; a
//! game that needs more than `plain::PLAIN_NODES` nodes continues here,
//! with the exact values found so far in the memo.
//! Small nodes (two truths, at most `plain::SMALL_ACTIONS` actions) are
//! computed exactly by the plain recursion wherever the search meets
//! them, once, instead of being tested again and again.
//! A node tested again (at another threshold) takes its candidates and
//! children from the expansion cache ([`recall`]) when it is kept: the
//! same listing, float for float, without recomputing it.
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
//! * **Twin actions in memo keys.** The same holds across nodes: the
//!   value of `(T, A)` depends only on how many actions of `A` leave each
//!   sequence of children on `T`, so the memo keys a node by its truths
//!   and, of each kind of such twins, the first ones in instance order
//!   ([`twins`]): nodes of one value share one entry. Only the memo's
//!   keys change; listings, argmins and the tie rule stay the node's own.
//!   First 60 car-identification 12 x 16 instances (`domain_sweep`, one
//!   thread, cachegrind): 9.06 G -> 7.46 G instructions, 20 % fewer
//!   expansions.
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

mod bounds;
mod certify;
mod narrow;
mod ordering;
mod plain;
mod recall;
mod reuse;
pub(super) mod reuse_table;
#[cfg(test)]
mod tests;
mod twins;

use bounds::{PathSizes, node_bounds};
pub use certify::CertifiedStep;
use recall::Recall;
use reuse::ReuseBound;
pub use reuse_table::ReuseTables;
use twins::Twins;

use super::mask::{Mask, UnionTable};
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
    /// The union of the actions related to any of a set of truths
    /// (`related` transposed, as a [`UnionTable`]).
    actions_of: UnionTable<M>,
    /// Twin actions of the truth sets asked, to key the memo ([`twins`]).
    twins: Twins<M>,
    /// Where the action bits start in a packed key.
    key_shift: u32,
    /// Most truths one state rules out.
    widest_rule_out: u32,
    /// Cover layers kept (`bounds::cover_layers`): the reuse bound's
    /// count cap of the instance (`reuse::levels_for`).
    layers: usize,
    /// The path bound's sizes (see `path_bound`), a table.
    path_sizes: PathSizes,
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
    /// Expansions after which the reuse bound tracks actions.
    track_after: u64,
    /// Nodes the plain recursion may still compute (see [`plain`]).
    plain_left: u64,
    /// The thread's buffers for the reuse bound's tables: taken when the
    /// bound is built, given back when the solver is dropped
    /// ([`reuse_table`]).
    reuse_tables: &'m mut ReuseTables,
    /// Recent expansions, to skip listing a node tested again ([`recall`]);
    /// kept in the memos, so reused by the thread's next search.
    recall: &'m mut Recall<M, K>,
    /// The expansion cache's epoch of this solver's floors: a fresh one
    /// for every solver and whenever the floors change source (the reuse
    /// bound built, or tracking started), so expansions of another search
    /// or of older floors are not reused.
    floors_epoch: u64,
}

/// What one solver hands to the next on the same problem and memos
/// ([`Solver::carry`], [`Solver::resume`]); the default resumes nothing.
#[derive(Default)]
pub struct Carry {
    started: bool,
    reuse: Option<ReuseBound>,
    expansions: u64,
    plain_left: u64,
}

/// Expansions after which a search that has not started tracking
/// actions in its reuse bound does (see [`reuse`]: tracking pays on large
/// searches only). Session 14 lowered it to 5 000; once re-tests became
/// cheap (the expansion cache, [`recall`]) the tracked table's fills were
/// half of fantasy 12x16's CPU, and 20 000 again measured, whole process
/// `-n 1000`, three paired runs each against 5 000 (load 2-3): fantasy
/// 0.73, car-identification 0.96, chemical-compounds 0.93, music 1.03,
/// martial-arts 1.03, os-kernel 1.05 (the last three within the noise of
/// paired runs here); 80 000 against 20 000: fantasy 1.03,
/// car-identification 0.92 (spread 0.77-1.27).
const TRACK_AFTER: u64 = 20_000;

/// Least expansions the certified steps of one label may make.
pub const CERTIFY_MIN_NODES: u64 = 2_000;

/// Most expansions the certified steps of one label may make.
pub const CERTIFY_MAX_NODES: u64 = 1_000_000;

/// Memo entries the certified steps of one label may add.
pub const CERTIFY_MEMO: usize = 1_000_000;

/// Expansions after which a search builds the reuse bound (instances of
/// at most `reuse::MAX_TRUTHS` truths).
const DEEP_AFTER: u64 = 500;

/// When a search of an instance of `actions` actions builds the reuse
/// bound and starts tracking: after [`DEEP_AFTER`] and [`TRACK_AFTER`]
/// expansions, or, for a search that starts with the plain recursion,
/// after its `plain::PLAIN_NODES` nodes (they never ask the bound, and a
/// game the plain recursion finishes would build it for nothing) and
/// 20 000 expansions (with 11 actions or fewer, six tracked actions are
/// most of the game: tracking after 5 000 made mineral 12x8 2.3x slower;
/// the same 20 000 as `TRACK_AFTER` now).
fn reuse_schedule(actions: usize) -> (u64, u64) {
    if plain::plain_nodes(actions) > 0 {
        (plain::PLAIN_NODES, 20_000)
    } else {
        (DEEP_AFTER, TRACK_AFTER)
    }
}

/// A solver's reuse bound, unless carried on ([`Solver::carry`]), hands
/// its tables' buffers back to the memos for the thread's next search.
impl<M: Mask, K: Key> Drop for Solver<'_, M, K> {
    fn drop(&mut self) {
        if let Some(reuse) = self.reuse.take() {
            reuse.give_back(self.reuse_tables);
        }
    }
}

impl<'m, M: Mask, K: Key> Solver<'m, M, K> {
    pub fn new(problem: &Problem, memos: &'m mut Memos<K>, budget: SearchBudget) -> Self {
        memos.proven.clear();
        memos.greedy.clear();
        Self::keeping(problem, memos, budget)
    }

    /// A solver on memos that already hold bounds proven for this same
    /// `problem` (an earlier solver's on it): they are kept, so the
    /// states of one game share their work. Memos of another problem
    /// must be cleared first ([`Solver::new`] does).
    pub fn keeping(problem: &Problem, memos: &'m mut Memos<K>, budget: SearchBudget) -> Self {
        let Memos {
            proven: memo,
            greedy,
            recall,
            reuse_tables,
        } = memos;
        let recall = Recall::kept_in(recall);
        let states: Vec<Vec<M>> = (0..problem.action_count())
            .map(|a| problem.states(a).iter().map(|&x| M::from_u128(x)).collect())
            .collect();
        let related: Vec<M> = states
            .iter()
            .map(|row| row.iter().fold(M::ZERO, |acc, &x| acc | x))
            .collect();
        let actions_of: Vec<M> = (0..problem.truth_count())
            .map(|t| {
                (0..related.len())
                    .filter(|&a| related[a].contains(t))
                    .fold(M::ZERO, |acc, a| acc | M::bit(a))
            })
            .collect();
        let actions_of = UnionTable::new(&actions_of);
        let (reuse_after, track_after) = reuse_schedule(problem.action_count());
        let widest_rule_out = states
            .iter()
            .flatten()
            .map(|x: &M| x.count())
            .max()
            .unwrap_or(0);
        Solver {
            widest_rule_out,
            layers: reuse::levels_for(problem.action_count()) as usize,
            path_sizes: PathSizes::new(problem.truth_count()),
            twins: Twins::new(),
            states,
            related,
            actions_of,
            key_shift: problem.truth_count() as u32,
            memo,
            greedy,
            frames: Vec::new(),
            budget,
            started: Instant::now(),
            expansions: 0,
            reuse: None,
            reuse_after,
            track_after,
            plain_left: plain::plain_nodes(problem.action_count()),
            floors_epoch: recall.next_epoch(),
            recall,
            reuse_tables,
        }
    }

    /// [`Solver::keeping`] that also resumes where an earlier solver on
    /// the same problem and memos stopped ([`Solver::carry`]): its reuse
    /// bound (a function of the problem alone), its expansion count (the
    /// node budget then counts from there) and its plain-recursion
    /// allowance. Values are the same either way; only work is saved.
    pub fn resume(
        problem: &Problem,
        memos: &'m mut Memos<K>,
        budget: SearchBudget,
        carry: Carry,
    ) -> Self {
        let mut solver = Self::keeping(problem, memos, budget);
        if carry.started {
            solver.expansions = carry.expansions;
            solver.reuse = carry.reuse;
            solver.plain_left = carry.plain_left;
            solver.budget.max_nodes = budget.max_nodes.saturating_add(carry.expansions);
            if solver.expansions >= solver.reuse_after {
                solver.twins.start(solver.key_shift as usize);
            }
        }
        solver
    }

    /// What the next solver on these memos may resume from.
    pub fn carry(mut self) -> Carry {
        Carry {
            started: true,
            reuse: self.reuse.take(),
            expansions: self.expansions,
            plain_left: self.plain_left,
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

    /// The related actions of a non-base node, `None` for a base case
    /// (see `reduce`).
    pub fn reduce_to_related(&self, truths: M, actions: M) -> Option<M> {
        self.reduce(truths, actions)
    }

    /// The static lower bound of a non-base node (canonical `actions`).
    pub fn static_lower_bound(&self, truths: M, actions: M) -> f64 {
        self.static_lo(truths, actions)
    }

    /// After an exact search of `nodes` allowed expansions ran over
    /// budget, grants the certified steps their own allowance: `part` of
    /// [`Self::certify_allowance`] more expansions and [`CERTIFY_MEMO`]
    /// more memo entries, counted like the search's, so a certified label
    /// is the same on every machine.
    pub fn extend_budget_to_certify(&mut self, nodes: u64, part: u64) {
        self.budget.max_nodes = self
            .expansions
            .saturating_add(Self::certify_allowance(nodes) / part.max(1));
        self.budget.max_memo_entries = self
            .memo_entries()
            .max(self.budget.max_memo_entries)
            .saturating_add(CERTIFY_MEMO);
        self.budget.max_time = None;
    }

    /// Expansions the certified steps of one label may make after an
    /// exact search of `nodes` allowed expansions: half as many again,
    /// between [`CERTIFY_MIN_NODES`] and [`CERTIFY_MAX_NODES`].
    pub fn certify_allowance(nodes: u64) -> u64 {
        (nodes / 2).clamp(CERTIFY_MIN_NODES, CERTIFY_MAX_NODES)
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
        if let Some(decided) = self.plain_decide(truths, actions)? {
            return Ok(decided);
        }
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

    /// [`Self::reduce`] of a node known not to be a base case: `|T| >= 2`
    /// and every truth of `T` related to an action of `actions`. Then
    /// `reduce` keeps exactly the actions related to a truth of `T`, the
    /// union of the truths' related actions within `actions`, read from
    /// the `actions_of` table in one load per four instance truths
    /// instead of a loop over the truths ([`UnionTable`]). Cachegrind,
    /// `look_up`: car-identification 12 x 16 (30 instances) 693 M -> 658 M
    /// instructions; os-kernel (60) 203 M -> 225 M instructions but
    /// 4.30 M -> 3.60 M mispredicted branches (the loop's exit).
    #[inline]
    fn reduce_non_base(&self, truths: M, actions: M) -> M {
        let kept = actions & self.actions_of.union(truths);
        debug_assert_eq!(Some(kept), self.reduce(truths, actions));
        kept
    }

    #[inline]
    fn key(&self, truths: M, actions: M) -> K {
        K::pack(truths.to_u128(), actions.to_u128(), self.key_shift)
    }

    /// The memo's key of a non-base node (canonical `actions`): its key
    /// up to twin actions ([`twins`]), shared by every node of the same
    /// value that way.
    #[inline(always)]
    fn memo_key(&self, truths: M, actions: M) -> K {
        let actions = self
            .twins
            .canonical(truths, actions, &self.states, &self.related);
        self.key(truths, actions)
    }

    /// What is known of a non-base node (canonical `actions`): the memo's
    /// bounds, or the static ones.
    #[inline(always)]
    fn known(&self, truths: M, actions: M, prior: Bounds) -> Bounds {
        self.known_at(self.memo_key(truths, actions), prior)
    }

    /// [`Self::known`] of the node whose memo key is `key`.
    #[inline(always)]
    fn known_at(&self, key: K, prior: Bounds) -> Bounds {
        match self.memo.get(key) {
            Some(b) => b.meet(prior),
            None => prior,
        }
    }

    fn store(&mut self, truths: M, actions: M, bounds: Bounds) -> Result<(), SearchError> {
        self.store_at(self.memo_key(truths, actions), bounds)
    }

    /// [`Self::store`] at the node's memo key `key`, taken by the caller
    /// when it asked [`Self::known_at`] (a key taken before the search
    /// starts looking for twins is the node's plain key, under which its
    /// bounds are facts about it too: see [`twins`]).
    fn store_at(&mut self, key: K, bounds: Bounds) -> Result<(), SearchError> {
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
        if self.expansions == self.reuse_after {
            self.twins.start(self.key_shift as usize);
            if self.key_shift as usize <= reuse::MAX_TRUTHS {
                let reuse = ReuseBound::new(
                    self.key_shift as usize,
                    &self.states,
                    &self.related,
                    std::mem::take(self.reuse_tables),
                );
                if reuse.low_cover {
                    reuse.start_tracking();
                }
                self.reuse = Some(reuse);
                self.floors_epoch = self.recall.next_epoch();
            }
        }
        if self.expansions == self.track_after
            && let Some(reuse) = &self.reuse
        {
            reuse.start_tracking();
            self.floors_epoch = self.recall.next_epoch();
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
        let key = self.memo_key(truths, actions);
        let known = self.known_at(key, prior);
        if known.lo >= theta || known.hi < theta {
            return Ok(known);
        }
        if plain::is_small(truths, actions)
            && let Some((value, _)) = self.plain_small(truths, actions)?
        {
            return Ok(Bounds::point(value));
        }
        self.count_expansion()?;
        let found = self.with_frame(depth, |s, frame| {
            s.test_in(truths, actions, theta, depth, frame)
        })?;
        let bounds = known.meet(found);
        debug_assert!(bounds.lo <= bounds.hi);
        self.store_at(key, bounds)?;
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
        let key = self.memo_key(truths, actions);
        let known = self.known_at(key, prior);
        if known.exact() && !ordered {
            return Ok((known.lo, None));
        }
        if plain::is_small(truths, actions)
            && let Some(decided) = self.plain_small(truths, actions)?
        {
            return Ok(decided);
        }
        self.count_expansion()?;
        let (value, best) = self.with_frame(depth, |s, frame| {
            s.exact_in(truths, actions, depth, ordered, frame)
        })?;
        debug_assert!(known.lo <= value && value <= known.hi);
        self.store_at(key, Bounds::point(value))?;
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
}
