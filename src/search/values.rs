//! The exact value of any state of one game, and of every action there.
//!
//! In: a [`Problem`] (one instance) and states of it ([`State`]: the
//! candidate truths left and the actions left, as instance-index bitmasks).
//! Out: `V(T, A)`, the optimal expected steps from the state (DESIGN.md
//! "Optimal search", bit for bit the search's and so the reference's), and
//! for an action `a` its `Q`: the expected steps if `a` is taken now and
//! play is optimal after,
//!
//! `Q(a) = 1 + sum over s in S_a (state order) of V(T \ X_s, A \ {a}) * P(s)`,
//!
//! with the reference's float operations in the reference's order
//! (`P(s) = W(s) / (ΣW + 1e-9)`, the sum starting at `0.0`), so for every
//! action the minimum of `Q` is `V` exactly (rounding is monotone and
//! `V = min sum + 1.0`). At a base case (`V = 0`: one truth or none left,
//! or a truth no action left can rule out) every action has `Q = 1`: it
//! cannot change the answer and costs a step.
//!
//! *Optimal* actions are those with `Q - V <= TIE` (1e-9, the tolerance
//! the labels are held to: DESIGN.md "Optimal search"), listed in instance
//! order. Two actions of equal value can differ in their last bits (each
//! sum adds its children's values in its own order), so a `Q` within float
//! noise of `V` (2.6e-12 to 9.8e-10 in practice) is a tie, never a
//! mistake; [`is_tie`] is the one test every reader uses (moves, score,
//! report, pairs). [`StateValues::best`] is the golden player's choice
//! (the first action in instance order whose sum attains the minimum,
//! which is also optimal).
//!
//! One [`Values`] holds one memo for one game: every state asked of it
//! reuses the bounds proven for the earlier ones (they are facts about the
//! problem, not about a state), so analysing all moves of a trajectory, or
//! all trials of one instance, costs little more than labelling it. No
//! result depends on what was asked before.

use super::mask::Mask;
use super::memo::{Key, Memos};
use super::shares::Shares;
use super::solver::{Carry, Solver};
use super::{Problem, SearchBudget, SearchError};

/// How far apart two values may be and still tie: 1e-9, the tolerance the
/// labels equal the reference to (DESIGN.md "Optimal search").
pub const TIE: f64 = 1e-9;

/// Whether an action of value `q` ties with the state's value `value`
/// (`q - value <= TIE`): it is optimal.
pub fn is_tie(q: f64, value: f64) -> bool {
    q - value <= TIE
}

/// A state of a game: the candidate truths left and the actions left, as
/// bitmasks of instance indices (bit `i` is instance truth / action `i`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct State {
    pub truths: u128,
    pub actions: u128,
}

impl State {
    /// The start of the game: every truth a candidate, every action left.
    pub fn root(problem: &Problem) -> State {
        State {
            truths: low_bits(problem.truth_count()),
            actions: low_bits(problem.action_count()),
        }
    }

    /// The state after taking `action` and observing its state `observed`
    /// (`None`: an observation that matches no state, which rules nothing
    /// out). Taking an action not left only leaves its observation.
    pub fn after(self, problem: &Problem, action: usize, observed: Option<usize>) -> State {
        let ruled_out = observed
            .and_then(|s| problem.states(action).get(s).copied())
            .unwrap_or(0);
        State {
            truths: self.truths & !ruled_out,
            actions: self.actions & !(1u128 << action),
        }
    }

    /// Whether `action` is still left.
    pub fn has_action(self, action: usize) -> bool {
        action < 128 && self.actions >> action & 1 == 1
    }

    /// Number of candidate truths left.
    pub fn candidates(self) -> usize {
        self.truths.count_ones() as usize
    }
}

fn low_bits(n: usize) -> u128 {
    u128::MAX.checked_shr(128 - n as u32).unwrap_or(0)
}

/// What is known of one state: its value and every action's.
#[derive(Clone, Debug, PartialEq)]
pub struct StateValues {
    /// `V`: optimal expected steps from here (0 at a base case).
    pub value: f64,
    /// `(action, Q)` for every action left, in instance order.
    pub q: Vec<(usize, f64)>,
    /// The actions left whose `Q` ties with `V` ([`is_tie`]), in instance
    /// order (none at a base case: there the optimal move is to answer).
    pub optimal: Vec<usize>,
    /// The golden player's action: the first in instance order attaining
    /// the least sum (`None` at a base case).
    pub best: Option<usize>,
}

impl StateValues {
    /// `Q` of `action`, if it is left.
    pub fn q_of(&self, action: usize) -> Option<f64> {
        self.q.iter().find(|(a, _)| *a == action).map(|&(_, q)| q)
    }

    /// Whether the state is a base case: the optimal player answers.
    pub fn is_base(&self) -> bool {
        self.best.is_none()
    }
}

/// Exact values of the states of one game, on one memo.
pub struct Values {
    problem: Problem,
    budget: SearchBudget,
    /// The memo of the problem's width (made on first use).
    narrow: Option<Memos<u64>>,
    wide: Option<Memos<u128>>,
    widest: Option<Memos<[u128; 2]>>,
    /// Truths no remaining action can rule out, per state, are found with
    /// these: per action, the truths any of its states rules out.
    related: Vec<u128>,
    /// What the last solver on the memo handed on (its reuse bound).
    carry: Carry,
}

/// Runs `$body` with a solver of the narrowest width for `$values`'s
/// problem on its kept memo.
macro_rules! with_kept_solver {
    ($values:expr, |$solver:ident| $body:expr) => {{
        let v = $values;
        let (t, a) = (v.problem.truth_count(), v.problem.action_count());
        let carry = std::mem::take(&mut v.carry);
        if t + a <= 64 {
            let memos = v.narrow.get_or_insert_with(Memos::default);
            let mut $solver = Solver::<u64, u64>::resume(&v.problem, memos, v.budget, carry);
            let out = $body;
            v.carry = $solver.carry();
            out
        } else if t <= 64 && a <= 64 {
            let memos = v.wide.get_or_insert_with(Memos::default);
            let mut $solver = Solver::<u64, u128>::resume(&v.problem, memos, v.budget, carry);
            let out = $body;
            v.carry = $solver.carry();
            out
        } else if t + a <= 128 {
            let memos = v.wide.get_or_insert_with(Memos::default);
            let mut $solver = Solver::<u128, u128>::resume(&v.problem, memos, v.budget, carry);
            let out = $body;
            v.carry = $solver.carry();
            out
        } else {
            let memos = v.widest.get_or_insert_with(Memos::default);
            let mut $solver = Solver::<u128, [u128; 2]>::resume(&v.problem, memos, v.budget, carry);
            let out = $body;
            v.carry = $solver.carry();
            out
        }
    }};
}

impl Values {
    /// Values of `problem`'s states; `budget` limits each call's search.
    pub fn new(problem: Problem, budget: SearchBudget) -> Values {
        let related = (0..problem.action_count())
            .map(|a| problem.states(a).iter().fold(0, |m, &x| m | x))
            .collect();
        Values {
            problem,
            budget,
            narrow: None,
            wide: None,
            widest: None,
            related,
            carry: Carry::default(),
        }
    }

    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// `V(state)`.
    pub fn value(&mut self, state: State) -> Result<f64, SearchError> {
        self.check(state)?;
        with_kept_solver!(self, |solver| Ok(decide_with(&mut solver, state)?.0))
    }

    /// `V(state)` and the golden player's action there.
    pub fn decide(&mut self, state: State) -> Result<(f64, Option<usize>), SearchError> {
        self.check(state)?;
        with_kept_solver!(self, |solver| decide_with(&mut solver, state))
    }

    /// `Q` of `action` at `state` (see the module doc). `action` must be
    /// one of the problem's; taking an action no longer left is a move
    /// that shows nothing new: `1 + V(state)`.
    pub fn q(&mut self, state: State, action: usize) -> Result<f64, SearchError> {
        self.check(state)?;
        if action >= self.problem.action_count() {
            return Err(SearchError::UnknownIndex {
                what: "action",
                index: action,
            });
        }
        if !state.has_action(action) {
            return Ok(self.value(state)? + 1.0);
        }
        with_kept_solver!(self, |solver| q_with(&mut solver, state, action))
    }

    /// `V`, every action's `Q`, the optimal set and the golden choice.
    pub fn state(&mut self, state: State) -> Result<StateValues, SearchError> {
        let (value, best) = self.decide(state)?;
        let mut q = Vec::new();
        let mut optimal = Vec::new();
        let mut actions = state.actions;
        while actions != 0 {
            let a = actions.trailing_zeros() as usize;
            actions &= actions - 1;
            let qa = self.q(state, a)?;
            if best.is_some() && is_tie(qa, value) {
                optimal.push(a);
            }
            q.push((a, qa));
        }
        Ok(StateValues {
            value,
            q,
            optimal,
            best,
        })
    }

    /// The candidates of `state` that no action left can rule out: each
    /// is certainly valid (every invalid truth is ruled out by some
    /// observation, and none taken so far did).
    pub fn certified(&self, state: State) -> u128 {
        let mut covered = 0u128;
        let mut actions = state.actions;
        while actions != 0 {
            let a = actions.trailing_zeros() as usize;
            actions &= actions - 1;
            covered |= self.related[a];
        }
        state.truths & !covered
    }

    /// Whether some state of `action` could rule out a candidate of
    /// `state` (an action that cannot learns nothing).
    pub fn can_learn(&self, state: State, action: usize) -> bool {
        state.has_action(action)
            && self
                .related
                .get(action)
                .is_some_and(|r| r & state.truths != 0)
    }

    fn check(&self, state: State) -> Result<(), SearchError> {
        let (truths, actions) = (
            low_bits(self.problem.truth_count()),
            low_bits(self.problem.action_count()),
        );
        if state.truths & !truths != 0 {
            return Err(SearchError::UnknownIndex {
                what: "truth",
                index: (state.truths & !truths).trailing_zeros() as usize,
            });
        }
        if state.actions & !actions != 0 {
            return Err(SearchError::UnknownIndex {
                what: "action",
                index: (state.actions & !actions).trailing_zeros() as usize,
            });
        }
        Ok(())
    }
}

fn decide_with<Mk: Mask, K: Key>(
    solver: &mut Solver<'_, Mk, K>,
    state: State,
) -> Result<(f64, Option<usize>), SearchError> {
    solver.decide(Mk::from_u128(state.truths), Mk::from_u128(state.actions))
}

/// `Q` of an action left, by the reference's sum over its states.
fn q_with<Mk: Mask, K: Key>(
    solver: &mut Solver<'_, Mk, K>,
    state: State,
    action: usize,
) -> Result<f64, SearchError> {
    let truths = Mk::from_u128(state.truths);
    let rest = Mk::from_u128(state.actions) & !Mk::bit(action);
    let states: Vec<Mk> = solver.action_states(action).to_vec();
    let total: u32 = states.iter().map(|&x| (truths & !x).count()).sum();
    let shares = Shares::of(total);
    let mut sum = 0.0f64;
    for x in states {
        let left = truths & !x;
        let p = shares.share(left.count());
        sum += solver.value(left, rest)? * p;
    }
    Ok(sum + 1.0)
}
