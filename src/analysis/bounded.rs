//! Moves whose exact values the search cannot prove within its budget
//! (docs/analytics.md, "Over the search budget"): what is still proven of
//! them, never a certified upper bound taken for `V` or `Q`.
//!
//! In: a state of the game, the move made there and what the search did
//! prove (`V`, `Q`, either, or neither). Out: an [`Analysed`] move: the
//! exact [`MoveAnalysis`] when both are proven, else a [`BoundedMove`]
//! with a proven interval of each number, from:
//!
//! - the line's own label at the start of the game: `lower <= V <=
//!   upper` (the certified interval, or the exact value), and `Q` of the
//!   label's first action at most `upper` (its strategy starts with it);
//! - at any state that is not a base case, `V >= 1` (every strategy takes
//!   an action) and `V` at most the number of actions left that can rule
//!   out a candidate (taking them all decides); `V <= Q` of any action,
//!   so `V` is at most the move's `Q` when that is proven;
//! - `Q = 1 + V` for an action taken before, and `Q = V` for an answer;
//!   otherwise `Q >= V` and `Q` at most one more than the actions left
//!   after it that can rule out a candidate;
//! - the regret `Q - V`, then between `max(0, Q_lo - V_hi)` and
//!   `Q_hi - V_lo` (exactly 1 for a repeat, 0 for an answer).
//!
//! The dense reward of such a move is defined when its regret is proven
//! (an answer, a repeat), else it is `None`: the move is left out, never
//! scored by a bound.

use serde_json::{Value, json};

use super::Analyst;
use crate::results::{MoveAnalysis, Said};
use crate::search::{SearchError, State, is_tie};

/// A proven interval `[lo, hi]`; a point when exact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub lo: f64,
    pub hi: f64,
}

impl Bounds {
    fn exact(v: f64) -> Bounds {
        Bounds { lo: v, hi: v }
    }

    /// The value, when the interval is a point.
    pub fn value(self) -> Option<f64> {
        (self.lo == self.hi).then_some(self.lo)
    }

    fn json(self) -> Value {
        json!([self.lo, self.hi])
    }
}

/// Why a bounded move's values are not exact, in words that do not
/// depend on the machine (a row is the same on every run: no time).
fn unproven(why: &SearchError) -> String {
    match why {
        SearchError::BudgetExceeded { .. } => "not every value of this move is proven exactly: \
             its search went over the node budget; the bounds are proven"
            .to_string(),
        other => format!("not every value of this move is proven exactly: {other}"),
    }
}

/// A move whose exact values are over the search budget: what is proven.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundedMove {
    pub step: usize,
    pub said: Said,
    pub before: State,
    pub candidates_after: u128,
    pub value: Bounds,
    pub q: Bounds,
    pub regret: Bounds,
    /// Proven optimal (`Some(true)`), proven not (`Some(false)`), or
    /// not known (`None`).
    pub optimal: Option<bool>,
    pub redundant: bool,
    pub repeated: bool,
    pub proven: Option<bool>,
    pub correct: Option<bool>,
    /// Why the values are not exact (the search's error).
    pub why: SearchError,
}

impl BoundedMove {
    /// The dense reward when the regret is proven exactly (an answer: 1
    /// proven, 0 not; an action: `-regret`), else `None`.
    pub fn reward(&self) -> Option<f64> {
        match self.proven {
            Some(proven) => Some(f64::from(u8::from(proven))),
            None => self.regret.value().map(|r| -r),
        }
    }
}

/// One move analysed as far as the search's budget allows.
#[derive(Clone, Debug, PartialEq)]
pub enum Analysed {
    Exact(MoveAnalysis),
    Bounded(BoundedMove),
}

impl Analyst {
    /// Analyses one move at `state` (the `step`-th) as far as the budget
    /// allows: exact when `V` and `Q` are proven, else bounded (see the
    /// module doc). Returns it and the state after it.
    pub fn analyse(&mut self, state: State, step: usize, said: Said) -> (Analysed, State) {
        let value = self.values.value(state);
        let (q, after, repeated, redundant) = match said {
            Said::Action(a) => {
                let repeated = !state.has_action(a);
                // A repeat's `Q` is `1 + V`: asked again only if `V` is known.
                let q = match (&value, repeated) {
                    (Ok(v), true) => Ok(v + 1.0),
                    (Err(e), true) => Err(e.clone()),
                    (_, false) => self.values.q(state, a),
                };
                let after = state.after(self.values.problem(), a, self.observed[a]);
                (q, after, repeated, !self.values.can_learn(state, a))
            }
            Said::Answer(_) => (value.clone(), state, false, false),
        };
        if let (Ok(v), Ok(q)) = (&value, &q) {
            let (analysed, next) = self.exact_move(state, step, said, *v, *q, after);
            return (Analysed::Exact(analysed), next);
        }
        let why = match (&value, &q) {
            (Err(e), _) | (_, Err(e)) => e.clone(),
            _ => unreachable!("one of them failed"),
        };
        let v = match value {
            Ok(v) => Bounds::exact(v),
            Err(_) => self.value_bounds(state, said, q.as_ref().ok().copied()),
        };
        let (q, regret) = match (said, q) {
            (Said::Answer(_), _) => (v, Bounds::exact(0.0)),
            (Said::Action(_), _) if repeated => (
                Bounds {
                    lo: v.lo + 1.0,
                    hi: v.hi + 1.0,
                },
                Bounds::exact(1.0),
            ),
            (Said::Action(a), q) => {
                let q = match q {
                    Ok(q) => Bounds::exact(q),
                    Err(_) => self.q_bounds(state, a, v),
                };
                let regret = Bounds {
                    lo: (q.lo - v.hi).max(0.0),
                    hi: (q.hi - v.lo).max(0.0),
                };
                (q, regret)
            }
        };
        let (proven, correct) = self.answer_facts(state, said);
        let optimal = match said {
            Said::Answer(_) => proven,
            // Ties within 1e-9 count as optimal, as for an exact move.
            Said::Action(_) if repeated || !is_tie(q.lo, v.hi) => Some(false),
            Said::Action(_) if is_tie(q.hi, v.lo) && v.lo > 0.0 => Some(true),
            Said::Action(_) => None,
        };
        let bounded = BoundedMove {
            step,
            said,
            before: state,
            candidates_after: after.truths,
            value: v,
            q,
            regret,
            optimal,
            redundant,
            repeated,
            proven,
            correct,
            why,
        };
        (Analysed::Bounded(bounded), after)
    }

    /// `V` of a state whose search ran over budget: the line's label at
    /// the start, else `[1, actions left that can rule out a candidate]`,
    /// at most the move's proven `Q`.
    fn value_bounds(&self, state: State, said: Said, q: Option<f64>) -> Bounds {
        let learnable = self.learnable(state) as f64;
        let (mut lo, mut hi) = (1.0f64, learnable);
        if state == self.root()
            && let Some((lower, upper)) = self.label_interval
        {
            lo = lo.max(lower);
            hi = hi.min(upper);
        }
        if let (Said::Action(a), Some(q)) = (said, q)
            && state.has_action(a)
        {
            hi = hi.min(q);
        }
        Bounds { lo: lo.min(hi), hi }
    }

    /// `Q` of action `a` (left) when its search ran over budget: at least
    /// `V`, at most one more than the actions left after it that can rule
    /// out a candidate, and at the start at most the label's upper bound
    /// when `a` is the label's first action.
    fn q_bounds(&self, state: State, a: usize, v: Bounds) -> Bounds {
        let rest = self.learnable(state) - usize::from(self.values.can_learn(state, a));
        let mut hi = 1.0 + rest as f64;
        if state == self.root()
            && self.label_first == Some(a)
            && let Some((_, upper)) = self.label_interval
        {
            hi = hi.min(upper);
        }
        Bounds {
            lo: v.lo.min(hi),
            hi: hi.max(v.lo),
        }
    }

    /// Actions left that can rule out a candidate of `state`.
    fn learnable(&self, state: State) -> usize {
        let mut actions = state.actions;
        let mut n = 0;
        while actions != 0 {
            let a = actions.trailing_zeros() as usize;
            actions &= actions - 1;
            n += usize::from(self.values.can_learn(state, a));
        }
        n
    }

    /// One move with `V` and `Q` proven: the exact [`MoveAnalysis`].
    fn exact_move(
        &mut self,
        state: State,
        step: usize,
        said: Said,
        value: f64,
        q: f64,
        after: State,
    ) -> (MoveAnalysis, State) {
        let (proven, correct) = self.answer_facts(state, said);
        let analysed = match said {
            Said::Action(a) => {
                let repeated = !state.has_action(a);
                MoveAnalysis {
                    step,
                    said,
                    before: state,
                    candidates_after: after.truths,
                    value,
                    q,
                    regret: q - value,
                    optimal: !repeated && value > 0.0 && is_tie(q, value),
                    redundant: !self.values.can_learn(state, a),
                    repeated,
                    proven: None,
                    correct: None,
                }
            }
            Said::Answer(_) => MoveAnalysis {
                step,
                said,
                before: state,
                candidates_after: state.truths,
                value,
                q: value,
                regret: 0.0,
                optimal: proven == Some(true),
                redundant: false,
                repeated: false,
                proven,
                correct,
            },
        };
        (analysed, after)
    }

    /// An answer's `proven` and `correct` (see the parent module's doc);
    /// `None` for an action.
    fn answer_facts(&self, state: State, said: Said) -> (Option<bool>, Option<bool>) {
        match said {
            Said::Action(_) => (None, None),
            Said::Answer(t) => {
                let candidate = state.truths >> t & 1 == 1;
                let proven = candidate
                    && (state.candidates() == 1 || self.values.certified(state) >> t & 1 == 1);
                (Some(proven), Some(self.judge.evaluate(&self.truths[t])))
            }
        }
    }

    /// One analysed move as a row of `kumo-gen moves` (without the game's
    /// keys): an exact move as [`Analyst::move_json`]; a bounded one with
    /// `value`, `q`, `regret` and `reward` each a number where proven
    /// exactly and null elsewhere, `optimal` null when not known, and
    /// `value_bounds`, `q_bounds`, `regret_bounds` (`[lo, hi]`) and
    /// `unproven` (why) added.
    pub fn analysed_json(&self, analysed: &Analysed) -> Value {
        let m = match analysed {
            Analysed::Exact(m) => return self.move_json(m),
            Analysed::Bounded(m) => m,
        };
        let mut row = self.row_opening(
            m.step,
            m.said,
            (json!(m.proven), json!(m.correct)),
            m.before,
            m.candidates_after,
        );
        super::row_extend(
            &mut row,
            [
                ("value", json!(m.value.value())),
                ("q", json!(m.q.value())),
                ("regret", json!(m.regret.value())),
                ("reward", json!(m.reward())),
                ("optimal", json!(m.optimal)),
                ("redundant", json!(m.redundant)),
                ("repeated", json!(m.repeated)),
                ("value_bounds", m.value.json()),
                ("q_bounds", m.q.json()),
                ("regret_bounds", m.regret.json()),
                ("unproven", json!(unproven(&m.why))),
            ],
        );
        Value::Object(row)
    }
}
