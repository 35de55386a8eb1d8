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
//! the value. The reductions, each exact:
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
//!   tried in. Actions are tried most promising first so pruning bites
//!   early. Only at the nodes the golden trajectory visits does the argmin
//!   matter; there the tie rule of instance order is applied explicitly
//!   (an action later in instance order is cut at `>= best`, an earlier
//!   one only at `> best`).
//! * **Lower bounds.** `E(T', A') >= 1` for every child that is not a
//!   base case, so an action's sum is at least the float sum, in state
//!   order, of its accumulated exact terms and `P(s)` for each remaining
//!   non-base child. Round-to-nearest addition and multiplication are
//!   monotone, so that float sum is a true lower bound of the float value
//!   the reference computes, and cutting an action when it reaches the
//!   best sum is exact (the reference itself cuts at `>=`).
//! * **Thresholded children.** A child is searched with a threshold `θ`:
//!   it may stop as soon as it proves `E >= θ` and return that lower
//!   bound instead of its value (memoised as a bound). The caller only
//!   uses a bound to cut an action after re-checking the cut with the
//!   bound in float arithmetic; if rounding makes the check fail it asks
//!   for the exact value. A bound is never used as a value.

use std::time::Instant;

use super::mask::Mask;
use super::memo::{Key, Known, Memo};
use super::problem::Problem;
use super::{SearchBudget, SearchError};

/// How often (in node expansions) the clock is read for the time budget.
const CLOCK_EVERY: u64 = 1 << 10;

/// Relative slack added to child thresholds so that rounding in the
/// caller's re-check almost never forces a second, exact search.
const THRESHOLD_SLACK: f64 = 1e-12;

/// One state of one candidate action at a node.
#[derive(Clone, Copy)]
struct Kid<M> {
    truths: M,
    p: f64,
    /// The child is a base case (value 0).
    base: bool,
}

/// One candidate action at a node.
#[derive(Clone, Copy)]
struct Cand {
    action: usize,
    /// Float lower bound of the action's sum (children: 0 or 1).
    lb: f64,
    /// Expected number of truths left; orders equal bounds.
    spread: f64,
    kids: usize,
    states: usize,
    /// Digest of the children's truth sets, to spot duplicates.
    signature: u64,
}

/// Scratch space of one recursion depth.
#[derive(Default)]
struct Frame<M> {
    cands: Vec<Cand>,
    kids: Vec<Kid<M>>,
}

/// The result of one node's action loop.
struct NodeResult {
    value: f64,
    exact: bool,
    best_action: Option<usize>,
}

pub struct Solver<'m, M: Mask, K: Key> {
    states: Vec<Vec<M>>,
    related: Vec<M>,
    /// Where the action bits start in a packed key.
    key_shift: u32,
    memo: &'m mut Memo<K>,
    frames: Vec<Frame<M>>,
    budget: SearchBudget,
    started: Instant,
    expansions: u64,
}

impl<'m, M: Mask, K: Key> Solver<'m, M, K> {
    pub fn new(problem: &Problem, memo: &'m mut Memo<K>, budget: SearchBudget) -> Self {
        let states: Vec<Vec<M>> = (0..problem.action_count())
            .map(|a| problem.states(a).iter().map(|&x| M::from_u128(x)).collect())
            .collect();
        let related = states
            .iter()
            .map(|row| row.iter().fold(M::ZERO, |acc, &x| acc | x))
            .collect();
        memo.clear();
        Solver {
            states,
            related,
            key_shift: problem.truth_count() as u32,
            memo,
            frames: Vec::new(),
            budget,
            started: Instant::now(),
            expansions: 0,
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

    pub fn memo_entries(&self) -> usize {
        self.memo.len()
    }

    /// `E(truths, actions)` exactly.
    pub fn value(&mut self, truths: M, actions: M) -> Result<f64, SearchError> {
        let (v, exact) = self.bounded(truths, actions, f64::INFINITY)?;
        debug_assert!(exact);
        Ok(v)
    }

    /// The value of the node and its first optimal action in instance
    /// order, or `None` when the node is a base case.
    pub fn decide(&mut self, truths: M, actions: M) -> Result<(f64, Option<usize>), SearchError> {
        let Some(actions) = self.reduce(truths, actions) else {
            return Ok((0.0, None));
        };
        let r = self.node(truths, actions, f64::INFINITY, 0, true)?;
        debug_assert!(r.exact);
        self.store(truths, actions, Known::Exact(r.value))?;
        Ok((r.value, r.best_action))
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

    /// `(v, true)` with `v = E(T, A)`, or `(v, false)` with
    /// `theta <= v <= E(T, A)`.
    fn bounded(&mut self, truths: M, actions: M, theta: f64) -> Result<(f64, bool), SearchError> {
        self.bounded_at(truths, actions, theta, 0)
    }

    fn bounded_at(
        &mut self,
        truths: M,
        actions: M,
        theta: f64,
        depth: usize,
    ) -> Result<(f64, bool), SearchError> {
        let Some(actions) = self.reduce(truths, actions) else {
            return Ok((0.0, true));
        };
        match self.memo.get(self.key(truths, actions)) {
            Some(Known::Exact(v)) => return Ok((v, true)),
            Some(Known::AtLeast(v)) if v >= theta => return Ok((v, false)),
            _ => {}
        }
        let r = self.node(truths, actions, theta, depth, false)?;
        let known = if r.exact {
            Known::Exact(r.value)
        } else {
            Known::AtLeast(r.value)
        };
        self.store(truths, actions, known)?;
        Ok((r.value, r.exact))
    }

    #[inline]
    fn key(&self, truths: M, actions: M) -> K {
        K::pack(truths.to_u128(), actions.to_u128(), self.key_shift)
    }

    fn store(&mut self, truths: M, actions: M, known: Known) -> Result<(), SearchError> {
        let key = self.key(truths, actions);
        if self.memo.len() >= self.budget.max_memo_entries && self.memo.get(key).is_none() {
            return Err(self.exceeded());
        }
        self.memo.put(key, known);
        Ok(())
    }

    fn exceeded(&self) -> SearchError {
        SearchError::BudgetExceeded {
            memo_entries: self.memo.len(),
            elapsed: self.started.elapsed(),
        }
    }

    /// The action loop of a non-base node whose `actions` are all related
    /// to `truths`. With `ordered`, the first optimal action in instance
    /// order is returned and `theta` must be infinite.
    fn node(
        &mut self,
        truths: M,
        actions: M,
        theta: f64,
        depth: usize,
        ordered: bool,
    ) -> Result<NodeResult, SearchError> {
        self.expansions += 1;
        if self.expansions.is_multiple_of(CLOCK_EVERY)
            && let Some(limit) = self.budget.max_time
            && self.started.elapsed() > limit
        {
            return Err(self.exceeded());
        }
        if self.frames.len() <= depth {
            self.frames.resize_with(depth + 1, Frame::default);
        }
        let mut frame = std::mem::take(&mut self.frames[depth]);
        let result = self.node_in(truths, actions, theta, depth, ordered, &mut frame);
        self.frames[depth] = frame;
        result
    }

    fn node_in(
        &mut self,
        truths: M,
        actions: M,
        theta: f64,
        depth: usize,
        ordered: bool,
        frame: &mut Frame<M>,
    ) -> Result<NodeResult, SearchError> {
        self.expand(truths, actions, frame);
        // Most promising first; the tie rule below keeps instance order
        // where it matters.
        frame.cands.sort_by(|x, y| {
            x.lb.total_cmp(&y.lb)
                .then(x.spread.total_cmp(&y.spread))
                .then(x.action.cmp(&y.action))
        });

        let mut best = f64::INFINITY;
        let mut best_action: Option<usize> = None;
        // Smallest bound of an action cut by the threshold (not by `best`).
        let mut cut_min = f64::INFINITY;

        for ci in 0..frame.cands.len() {
            let cand = frame.cands[ci];
            let kids = &frame.kids[cand.kids..cand.kids + cand.states];
            // An action later in instance order than the best loses ties.
            let loses_ties = !ordered || best_action.is_some_and(|b| cand.action > b);
            let beaten = |lb: f64, best: f64| lb > best || (loses_ties && lb >= best);

            if beaten(cand.lb, best) {
                continue;
            }
            if cand.lb + 1.0 >= theta {
                cut_min = cut_min.min(cand.lb);
                continue;
            }

            let rest = M::bit(cand.action);
            let child_actions = actions & !rest;
            let mut acc = 0.0f64;
            let mut complete = true;
            for s in 0..kids.len() {
                let kid = kids[s];
                if kid.base {
                    continue;
                }
                let later = &kids[s + 1..];
                let target = best.min(theta - 1.0);
                let child_theta = if target.is_finite() {
                    let rest_lb: f64 = later.iter().filter(|k| !k.base).map(|k| k.p).sum();
                    let need = (target - acc - rest_lb) / kid.p;
                    need + need.abs() * THRESHOLD_SLACK
                } else {
                    f64::INFINITY
                };
                let (mut e, exact) =
                    self.bounded_at(kid.truths, child_actions, child_theta, depth + 1)?;
                if !exact {
                    let lb = lower_bound(acc + e * kid.p, later);
                    if beaten(lb, best) {
                        complete = false;
                        break;
                    }
                    if lb + 1.0 >= theta {
                        cut_min = cut_min.min(lb);
                        complete = false;
                        break;
                    }
                    e = self
                        .bounded_at(kid.truths, child_actions, f64::INFINITY, depth + 1)?
                        .0;
                }
                acc += e * kid.p;
                let lb = lower_bound(acc, later);
                if beaten(lb, best) {
                    complete = false;
                    break;
                }
                if lb + 1.0 >= theta {
                    cut_min = cut_min.min(lb);
                    complete = false;
                    break;
                }
            }
            if complete && (acc < best || (!loses_ties && acc <= best)) {
                best = acc;
                best_action = Some(cand.action);
            }
        }

        if cut_min < best {
            debug_assert!(!ordered);
            return Ok(NodeResult {
                value: cut_min + 1.0,
                exact: false,
                best_action: None,
            });
        }
        debug_assert!(best.is_finite());
        Ok(NodeResult {
            value: best + 1.0,
            exact: true,
            best_action,
        })
    }

    /// Fills `frame` with the node's candidate actions (instance order)
    /// and their children.
    fn expand(&self, truths: M, actions: M, frame: &mut Frame<M>) {
        frame.cands.clear();
        frame.kids.clear();
        // Truths covered by at least one / at least two actions.
        let mut once = M::ZERO;
        let mut twice = M::ZERO;
        for b in actions.ones() {
            let r = self.related[b];
            twice |= once & r;
            once |= r;
        }
        let n = truths.count();
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
                    p: 0.0,
                    base: false,
                });
            }
            let states = self.states[b].len();
            // An earlier action (in instance order) with the same children
            // in the same state order is the same action on every subset of
            // `truths`: its sum is identical bit for bit, so this one can
            // neither beat it nor win a tie against it.
            let duplicate = frame.cands.iter().any(|c| {
                c.signature == signature
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
            let mut lb = 0.0f64;
            let mut spread = 0.0f64;
            for kid in &mut frame.kids[start..] {
                let w = kid.truths.count();
                kid.p = f64::from(w) / denom;
                kid.base = w <= 1 || !(kid.truths & !covered_without).is_zero();
                if !kid.base {
                    lb += kid.p;
                }
                spread += kid.p * f64::from(w);
            }
            debug_assert!(sum_w < n * self.states[b].len() as u32);
            frame.cands.push(Cand {
                action: b,
                lb,
                spread,
                kids: start,
                states,
                signature,
            });
        }
    }
}

/// The float sum, continued in state order from `acc`, with every later
/// non-base child taken at its lower bound 1.
#[inline]
fn lower_bound<M>(mut acc: f64, later: &[Kid<M>]) -> f64 {
    for kid in later {
        if !kid.base {
            acc += kid.p;
        }
    }
    acc
}
