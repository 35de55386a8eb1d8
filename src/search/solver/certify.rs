//! Certified steps: what the solver can still prove about a node once the
//! exact search of its game has run out of budget (DESIGN.md "Certified
//! labels").
//!
//! In: a non-base node, the memo and the greedy table as the interrupted
//! search left them (every entry a proven fact). Out: a
//! [`CertifiedStep`]: a lower bound of `E`, an upper bound of `E`, and
//! the action of a strategy whose value is at most that upper bound.
//!
//! **The lower bound** is the node's listing with its children's proven
//! lower bounds: `1 + min_a Σ_s P(s) lo(child)` in the reference's float
//! operations (each monotone, see the parent module), met with the
//! memo's and the static bound of the node.
//!
//! **The upper bound and its strategy.** A child's cached upper bound
//! `U(c)` is the least of its memo `hi`, its greedy rollout (when the
//! greedy table holds one), its action count, and its exact value where
//! it is small (the plain recursion). The step picks the action whose
//! sum of cached upper bounds is least (first in instance order among
//! equal sums) and reports `1 + Σ_s P(s) U(child)`. Before listing, the
//! node's own greedy rollout is taken (cached), which puts the greedy
//! action's children in the greedy table: the chosen sum is then at most
//! the rollout, at most the memo's `hi` (itself such a sum over upper
//! bounds that only tighten), and at most the action count. Following
//! the chosen action and taking the same step at each child defines a
//! strategy; by induction on the actions left, its value at each node is
//! at most the bound the step reported there, because a child's step
//! reports at most the `U(c)` its parent summed. So the root's upper
//! bound is at least `E` (it is a sum over upper bounds) and the
//! strategy the golden trajectory follows is worth at most it.
//!
//! Nothing here changes a proven fact: the memo only gains entries the
//! interrupted search could have stored itself.

use super::bounds::sum_bounds;
use super::{Frame, Solver, plain};
use crate::search::SearchError;
use crate::search::mask::Mask;
use crate::search::memo::{Bounds, Key};

/// What a certified step proves about a non-base node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CertifiedStep {
    /// A proven lower bound of `E`.
    pub lower: f64,
    /// A proven upper bound of `E`, at least the value of the strategy
    /// that takes `action` here and certified steps below.
    pub upper: f64,
    /// The action taken (an instance action index).
    pub action: usize,
}

/// Levels of full-width lookahead for the root's upper bound (the last
/// one greedy rollouts).
const UPPER_LEVELS: u32 = 2;

/// Levels of full-width lookahead for the root's lower bound.
const LOWER_LEVELS: u32 = 3;

/// Least allowance with which [`Solver::tighten`] narrows at all.
const LOOKAHEAD_FROM: u64 = 100_000;

/// Which end of a node's interval a lookahead lifts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Lower,
    Upper,
}

/// The relative gap `(upper - lower) / lower` at which [`Solver::tighten`]
/// stops narrowing a root.
pub const TARGET_GAP: f64 = 0.01;

impl<M: Mask, K: Key> Solver<'_, M, K> {
    /// Narrows the proven interval of a non-base root (canonical
    /// `actions`) by null-window tests at its midpoint (each proves
    /// `E >= θ` or `E < θ`, and stores what it proved), until its relative
    /// gap is at most [`TARGET_GAP`] or the budget runs out. A test cut
    /// short by the budget still leaves its children's proven bounds in
    /// the memo, which the next certified step reads.
    pub fn tighten(&mut self, truths: M, actions: M) {
        // A small allowance (a reference sample's) goes to the steps alone.
        if self.budget.max_nodes - self.expansions < LOOKAHEAD_FROM {
            return;
        }
        // Full-width lookahead first: cheap at these depths, and it lifts
        // every candidate at once where a test lifts one side.
        if self
            .bound_ahead(truths, actions, UPPER_LEVELS, Side::Upper, 0)
            .is_err()
            || self
                .bound_ahead(truths, actions, LOWER_LEVELS, Side::Lower, 0)
                .is_err()
        {
            return;
        }
        let mut step_frac = 0.125;
        loop {
            let Ok(step) = self.certified_step(truths, actions) else {
                return;
            };
            let gap = step.upper - step.lower;
            if gap <= TARGET_GAP * step.lower {
                return;
            }
            // Alternate small steps from each end: a test near the lower
            // end mostly passes (raising it), one near the upper end mostly
            // fails (lowering it); each is far cheaper than a midpoint test.
            for theta in [step.lower + gap * step_frac, step.upper - gap * step_frac] {
                let prior = self.static_bounds(truths, actions);
                if self.test(truths, actions, prior, theta, 0).is_err() {
                    return;
                }
            }
            step_frac = (step_frac * 1.5).min(0.5);
        }
    }

    /// The bound of one side of a non-base node (canonical `actions`) by
    /// `levels` levels of full-width lookahead over its children's proven
    /// bounds (greedy rollouts at the last level of the upper side),
    /// stored in the memo (a proven fact: the reference's float
    /// operations over proven bounds).
    fn bound_ahead(
        &mut self,
        truths: M,
        actions: M,
        levels: u32,
        side: Side,
        depth: usize,
    ) -> Result<f64, SearchError> {
        let key = self.memo_key(truths, actions);
        let known = self.known_at(key, self.static_bounds(truths, actions));
        if known.exact() {
            return Ok(known.lo);
        }
        if plain::is_small(truths, actions)
            && let Some((value, _)) = self.plain_small(truths, actions)?
        {
            return Ok(value);
        }
        if levels == 0 {
            return match side {
                Side::Lower => Ok(known.lo),
                Side::Upper => Ok(known.hi.min(self.greedy_hi(truths, actions)?)),
            };
        }
        self.count_expansion()?;
        let found = self.with_frame(depth, |s, frame| {
            s.expand(truths, actions, frame);
            let mut best = f64::INFINITY;
            for ci in 0..frame.cands.len() {
                s.look_up(frame, ci, actions);
                let cand = frame.cands[ci];
                if side == Side::Upper && cand.sum.lo >= best {
                    continue;
                }
                for j in cand.kids..cand.kids + cand.states {
                    let kid = frame.kids[j];
                    if kid.base || kid.b.exact() {
                        continue;
                    }
                    let v = s.bound_ahead(kid.truths, kid.actions, levels - 1, side, depth + 1)?;
                    let b = &mut frame.kids[j].b;
                    match side {
                        Side::Lower => b.lo = b.lo.max(v),
                        Side::Upper => b.hi = b.hi.min(v),
                    }
                }
                let sum = sum_bounds(&frame.kids[cand.kids..cand.kids + cand.states]);
                best = best.min(match side {
                    Side::Lower => sum.lo,
                    Side::Upper => sum.hi,
                });
            }
            Ok(best + 1.0)
        })?;
        let bounds = match side {
            Side::Lower => Bounds {
                lo: known.lo.max(found),
                hi: known.hi,
            },
            Side::Upper => Bounds {
                lo: known.lo,
                hi: known.hi.min(found),
            },
        };
        self.store_at(key, bounds)?;
        Ok(match side {
            Side::Lower => bounds.lo,
            Side::Upper => bounds.hi,
        })
    }

    /// The certified step of a non-base node (canonical `actions`).
    pub fn certified_step(&mut self, truths: M, actions: M) -> Result<CertifiedStep, SearchError> {
        if plain::is_small(truths, actions)
            && let Some((value, Some(action))) = self.plain_small(truths, actions)?
        {
            return Ok(CertifiedStep {
                lower: value,
                upper: value,
                action,
            });
        }
        let prior = self.static_bounds(truths, actions);
        let known = self.known(truths, actions, prior);
        if !known.exact() {
            self.greedy_hi(truths, actions)?;
        }
        // Called between searches, never inside one: frame 0 is free.
        let step = self.with_frame(0, |s, frame| s.certified_in(truths, actions, frame))?;
        Ok(CertifiedStep {
            lower: step.lower.max(known.lo),
            upper: step.upper.min(f64::from(actions.count())),
            action: step.action,
        })
    }

    fn certified_in(
        &mut self,
        truths: M,
        actions: M,
        frame: &mut Frame<M>,
    ) -> Result<CertifiedStep, SearchError> {
        self.expand(truths, actions, frame);
        let mut lower = f64::INFINITY;
        let mut best: Option<(f64, usize)> = None;
        for ci in 0..frame.cands.len() {
            self.look_up(frame, ci, actions);
            let cand = frame.cands[ci];
            for j in cand.kids..cand.kids + cand.states {
                let kid = frame.kids[j];
                if kid.base || kid.b.exact() {
                    continue;
                }
                let mut b = kid.b;
                if plain::is_small(kid.truths, kid.actions) {
                    if let Some((value, _)) = self.plain_small(kid.truths, kid.actions)? {
                        b.lo = value;
                        b.hi = value;
                    }
                } else if let Some(rollout) =
                    self.greedy.get(self.memo_key(kid.truths, kid.actions))
                {
                    b.hi = b.hi.min(rollout.hi);
                }
                frame.kids[j].b = b;
            }
            let sum = sum_bounds(&frame.kids[cand.kids..cand.kids + cand.states]);
            lower = lower.min(sum.lo);
            let better = match best {
                None => true,
                Some((hi, action)) => sum.hi < hi || (sum.hi == hi && cand.action < action),
            };
            if better {
                best = Some((sum.hi, cand.action));
            }
        }
        // A non-base node has a related action, so `best` is set; the
        // fallback (the first action, worth at most the action count)
        // only keeps this total.
        let Some((hi, action)) = best else {
            return Ok(CertifiedStep {
                lower: 1.0,
                upper: f64::from(actions.count()),
                action: actions.lowest(),
            });
        };
        Ok(CertifiedStep {
            lower: lower + 1.0,
            upper: hi + 1.0,
            action,
        })
    }
}
