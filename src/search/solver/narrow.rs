//! Narrowing an action's sum: `action_test` raises its lower bound or
//! lowers its upper bound past a goal by asking its children null-window
//! tests (each undecided child first for its share of the deficit, the
//! same fraction of every child's interval);
//! `action_exact` bisects until the sum is exact; `narrow_to_best`
//! narrows the candidates of a node computed exactly together until the
//! one with the lowest lower bound is exact (the minimum).
//!
//! Cost: `action_test` starts from the candidate's sum as it stands
//! (kept equal to the float sum of its children's bounds wherever they
//! change) and, while undecided, makes one pass over the children per
//! child test (`scan`: the last answer met in, the sum, the next child)
//! where it made three. The same children are asked the same tests in
//! the same order, so node expansions and every float are unchanged
//! (car-identification 12 x 16, 30 instances, cachegrind: 685 M -> 605 M
//! instructions in `action_test`).

use super::bounds::sum_bounds;
use super::{Cand, Frame, Goal, Kid, NEAR, Solver};
use crate::search::SearchError;
use crate::search::mask::Mask;
use crate::search::memo::{Bounds, Key};

impl<M: Mask, K: Key> Solver<'_, M, K> {
    /// Narrows the candidates of a node computed exactly until one with
    /// the lowest lower bound is exact, and returns its index: its sum is
    /// then at most every other candidate's, so it is the minimum (up to
    /// ties, which the caller's tie rule settles). Each step bisects the
    /// candidate with the lowest lower bound (the lowest upper bound on
    /// ties), in the part of its interval below the lowest upper bound of
    /// the others (above it the candidate is behind one of them whatever
    /// its sum): a candidate that is not optimal is only narrowed until it
    /// falls behind, never computed exactly. (Until session 20 the step
    /// tested at the middle of the whole interval, or at the others'
    /// upper bound when that was lower; bisecting the part below it:
    /// node expansions of the first 100 instances, `domain_sweep`,
    /// car-identification 12 x 16 -2.2 %, os-kernel -5.3 %, all shipped
    /// domains -0.7 %; BENCHMARKS.md, "Session 20".) Computing the
    /// candidate with the best upper bound exactly first cost 7.09 M of
    /// the 7.10 M nodes of motif-analysis 28 x 36 seed 0, and it was not
    /// optimal: the optimal action, whose upper bound was 0.04 % higher,
    /// took 3 k nodes. With one candidate this is `action_exact`.
    pub(super) fn narrow_to_best(
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
            let top = if others_hi > sum.lo {
                sum.hi.min(others_hi)
            } else {
                sum.hi
            };
            let goal = Goal {
                at: split(sum.lo, top),
                plus_one: false,
            };
            self.action_test(frame, pick, actions, goal, depth)?;
        }
    }

    /// Narrows candidate `ci`'s sum until `goal` is decided: returns its
    /// bounds with `goal.met(lo)` or `!goal.met(hi)`.
    pub(super) fn action_test(
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
        // Most calls are decided by the children's bounds as they are: the
        // candidate's sum is theirs (`look_up`, every pass below, `expand`
        // and `order_by_upper_bounds` set it whenever they change a child).
        let sum = frame.cands[ci].sum;
        debug_assert_eq!(sum, sum_bounds(&frame.kids[kids.clone()]));
        if goal.met(sum.lo) || !goal.met(sum.hi) {
            return Ok(sum);
        }
        // Children (by offset) already asked in this call.
        let mut asked = 0u64;
        // The truths of the child asked last and its answer.
        let mut answer: Option<(M, Bounds)> = None;
        loop {
            let (sum, choice) = scan(&mut frame.kids[kids.clone()], asked, answer);
            debug_assert_eq!(sum, sum_bounds(&frame.kids[kids.clone()]));
            frame.cands[ci].sum = sum;
            if goal.met(sum.lo) || !goal.met(sum.hi) {
                return Ok(sum);
            }
            let t = goal.target();
            let deficit = (t - sum.lo).max(0.0);
            let excess = (sum.hi - t).max(0.0);
            let Choice {
                pick,
                widest,
                fresh,
            } = choice;
            let Some(i) = pick else {
                debug_assert!(false, "an undecided sum has an inexact child");
                return Ok(sum);
            };
            if i < 64 {
                asked |= 1u64 << i;
            }
            let j = kids.start + i;
            let kid = frame.kids[j];
            // `deficit + excess` is the sum's interval: a child raised by
            // this fraction of its own interval carries its share, and
            // every undecided child raised so closes the deficit.
            let mut theta = if !fresh && widest >= deficit {
                kid.b.lo + deficit / kid.p
            } else {
                kid.b.lo + (kid.b.hi - kid.b.lo) * (deficit / (deficit + excess))
            };
            theta = theta.min(kid.b.hi);
            let near = NEAR * kid.b.lo;
            let b = if theta - kid.b.lo <= near || kid.b.hi - theta <= near {
                Bounds::point(
                    self.exact(kid.truths, kid.actions, kid.b, depth + 1, false)?
                        .0,
                )
            } else {
                self.test(kid.truths, kid.actions, kid.b, theta, depth + 1)?
            };
            answer = Some((kid.truths, b));
        }
    }

    /// The exact sum of candidate `ci`: its bounds narrowed by tests until
    /// they meet. Children are only narrowed as far as the sum needs.
    pub(super) fn action_exact(
        &mut self,
        frame: &mut Frame<M>,
        ci: usize,
        actions: M,
        depth: usize,
    ) -> Result<f64, SearchError> {
        self.look_up(frame, ci, actions);
        let Cand { kids, states, .. } = frame.cands[ci];
        loop {
            // The sum of the children's bounds (see `action_test`).
            let sum = frame.cands[ci].sum;
            debug_assert_eq!(sum, sum_bounds(&frame.kids[kids..kids + states]));
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
}

/// The child an undecided `action_test` asks next, and what aims its test.
struct Choice {
    /// Offset of the child, `None` if every child is exact.
    pick: Option<usize>,
    /// Its weighted interval `P * (hi - lo)`.
    widest: f64,
    /// The child has not been asked in this call yet.
    fresh: bool,
}

/// One pass over an action's children (`kids`) for `action_test`: meets
/// the last `answer` (a child's truths and its new bounds) into every
/// child of those truths (an action's states can leave one child twice),
/// sums the bounds (the float sum of [`sum_bounds`], in state order) and
/// chooses the child to ask next. Each undecided child is asked once for
/// its share of the deficit, widest weighted interval first (`asked`: the
/// offsets asked already); after that the widest is asked for the whole
/// deficit, or for its share of it when it cannot close it alone. A
/// child's share is the fraction `deficit / (hi - lo)` of the sum's
/// interval applied to its own interval, so all of them passing closes
/// the deficit and none is asked past its upper bound. (Until session 20
/// every child was first asked for the same amount, `deficit / ΣP` of
/// the undecided children, so a child of a narrow interval could be
/// asked past its upper bound, which computes it exactly. The fraction:
/// node expansions of the first 100 instances, `domain_sweep`,
/// car-identification 12 x 16 -12.7 %, all shipped domains -2.5 %;
/// BENCHMARKS.md, "Session 20".) The choice does not depend on the
/// deficit, so it is made in the pass that sums: one pass per child test
/// where there were three (sum, choice, answer).
#[inline]
fn scan<M: Mask>(kids: &mut [Kid<M>], asked: u64, answer: Option<(M, Bounds)>) -> (Bounds, Choice) {
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    let mut choice = Choice {
        pick: None,
        widest: -1.0,
        fresh: false,
    };
    for (i, kid) in kids.iter_mut().enumerate() {
        if kid.base {
            continue;
        }
        if let Some((truths, b)) = answer
            && kid.truths == truths
        {
            kid.b = kid.b.meet(b);
        }
        lo += kid.b.lo * kid.p;
        hi += kid.b.hi * kid.p;
        if kid.b.lo >= kid.b.hi {
            continue;
        }
        let new = i < 64 && asked & (1u64 << i) == 0;
        let w = kid.p * (kid.b.hi - kid.b.lo);
        if (new && !choice.fresh) || (new == choice.fresh && w > choice.widest) {
            choice.widest = w;
            choice.pick = Some(i);
            choice.fresh = new;
        }
    }
    (Bounds { lo, hi }, choice)
}

/// A float in `(lo, hi]` near the middle (in value while the interval is
/// wide, in representation once it is a few floats wide).
pub(super) fn split(lo: f64, hi: f64) -> f64 {
    debug_assert!(0.0 <= lo && lo < hi);
    let mid = lo + (hi - lo) * 0.5;
    if mid > lo && mid <= hi && (hi - lo) > 1e-9 * hi {
        return mid;
    }
    let (l, h) = (lo.to_bits(), hi.to_bits());
    f64::from_bits(l + (h - l).div_ceil(2))
}
