//! Per-move analytics of any trajectory against the exact optimum.
//!
//! In: an instance (its [`InstanceLine`] and [`Domain`]) and what a player
//! said, in order (action and truth names, as a trial's `actions` records
//! them). Out: a [`GameAnalysis`]: per move ([`MoveAnalysis`]) the value
//! `V` of the state before it, the move's `Q`, its regret `Q - V` (the
//! expected actions it wastes), whether it was optimal, the candidates
//! before and after, whether it was redundant; for the answer whether it
//! was proven and correct; per game the total regret, the optimal-move
//! rate and the efficiency. docs/analytics.md states every definition for
//! users; in short:
//!
//! - the state is the candidates (instance truths no observation seen so
//!   far rules out; an observation rules out what its state does, the
//!   search's reading: the first range holding a number) and the actions
//!   not taken yet; `V` and `Q` are [`crate::search::Values`]'s, exact;
//!   an action is *optimal* when its `Q` ties with `V` within 1e-9
//!   ([`crate::search::is_tie`]: float noise between equal sums is a tie);
//! - an action taken again shows nothing new: `Q = 1 + V`, regret 1;
//! - *redundant*: the action cannot rule out a candidate whatever it
//!   shows (taken before, or related to none of them);
//! - an answer costs no action: `Q = V`, regret 0. It is *proven* when
//!   the named truth is a candidate and it is the only one left or no
//!   action left can rule it out (then it is valid for sure: every invalid
//!   truth is ruled out by some observation of the instance); *correct* is
//!   KUMO's `evaluate_answer` ([`Judge`]); an answer is *optimal* when
//!   proven, which is when the optimal player answers;
//! - optimal-move rate of a game: optimal moves over moves, 0 for a game
//!   without a move (every reply unusable: it made no optimal move);
//! - efficiency: `min(1, g / n)^2` with `g` the golden trajectory's
//!   actions and `n` the player's, `1` when both are 0, and `0` when the
//!   game did not end in a proven answer;
//! - the dense reward of a reply ([`dense_reward`], the one definition
//!   the Python `Env`, the framework adapters and `kumo-gen serve` use):
//!   `-regret` for an action, `1` for a proven answer, `0` for an
//!   unproven one (a lucky guess earns nothing) and for a reply that
//!   names nothing; a game's rewards sum to `1[proven answer] - total
//!   regret`. [`LiveGame`] scores a game reply by reply.
//!
//! What an analysis is (the per-move row and the game, line and file
//! totals) lives in [`crate::results::moves`]. No I/O: [`files`] analyses
//! result files read by [`crate::results`].

mod bounded;
pub mod files;
mod live;
pub mod pairs;

pub use bounded::{Analysed, BoundedMove, Bounds};
pub use live::{Analysts, LiveGame, Scored};

use serde_json::{Map, Value, json};

use crate::domain::Domain;
use crate::game::{InstanceLine, Judge};
use crate::render::LineMismatch;
use crate::results::{GameAnalysis, MoveAnalysis, Said};
use crate::search::{Problem, SearchBudget, SearchError, State, StateValues, Values};

/// Why an instance cannot be analysed.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error(transparent)]
    Line(#[from] LineMismatch),
    #[error(transparent)]
    Search(#[from] SearchError),
}

/// The efficiency of a game of `actions` actions whose golden trajectory
/// takes `golden`: `min(1, golden / actions)^2`, 1 when `actions` is 0.
pub fn efficiency(golden: usize, actions: usize, proven: bool) -> f64 {
    if !proven {
        return 0.0;
    }
    if actions == 0 {
        return 1.0;
    }
    let ratio = (golden as f64 / actions as f64).min(1.0);
    ratio * ratio
}

/// The dense reward of one reply: `-regret` for an action (0 for an
/// optimal one, 1 for a repeat), `1` for a proven answer and `0` for an
/// unproven one, right or not (a lucky guess earns nothing: the reward
/// never teaches guessing); `None`, a reply naming neither an action nor
/// a truth of the instance (a parse error), earns `0`.
pub fn dense_reward(reply: Option<&MoveAnalysis>) -> f64 {
    match reply {
        None => 0.0,
        Some(m) => match m.proven {
            Some(proven) => f64::from(u8::from(proven)),
            None => -m.regret,
        },
    }
}

/// One instance, ready to analyse any number of games on it (they share
/// one memo).
pub struct Analyst {
    values: Values,
    observed: Vec<Option<usize>>,
    truths: Vec<String>,
    actions: Vec<String>,
    judge: Judge,
    golden_length: Option<usize>,
    /// What the line's label proves of `V` at the start (`(lower,
    /// upper)`, a point when exact), and its first action: the bounds of a
    /// start over the search budget ([`bounded`]).
    label_interval: Option<(f64, f64)>,
    label_first: Option<usize>,
}

impl Analyst {
    /// The analyst of `line`, an instance of `domain`; `budget` limits
    /// each value's search (the default node budget scaled to the game as
    /// the labels' is, [`SearchBudget::nodes_for`]: beyond 16 actions a
    /// value over it is reported as over budget in seconds, not searched
    /// for minutes).
    pub fn new(
        domain: &Domain,
        line: &InstanceLine,
        budget: SearchBudget,
    ) -> Result<Analyst, AnalysisError> {
        let resolved = line.resolve(domain)?;
        let problem = Problem::new(domain, &resolved.truths, &resolved.actions)?;
        let budget = SearchBudget {
            max_nodes: budget.nodes_for(problem.action_count()),
            ..budget
        };
        let label_first = line
            .optimal
            .as_ref()
            .and_then(|o| o.first_action.as_deref())
            .and_then(|name| line.actions.iter().position(|a| a == name));
        Ok(Analyst {
            values: Values::new(problem, budget),
            observed: resolved.observed,
            truths: line.truths.clone(),
            actions: line.actions.clone(),
            judge: Judge::new(domain, line)?,
            golden_length: None,
            label_interval: line.steps().map(crate::game::Steps::interval),
            label_first,
        })
    }

    /// The instance's truth names, in instance order.
    pub fn truth_names(&self) -> &[String] {
        &self.truths
    }

    /// The instance's action names, in instance order.
    pub fn action_names(&self) -> &[String] {
        &self.actions
    }

    /// The values of the game (for states of one's own).
    pub fn values(&mut self) -> &mut Values {
        &mut self.values
    }

    /// The start of the game.
    pub fn root(&self) -> State {
        State::root(self.values.problem())
    }

    /// What `name` is in this instance: a truth first (as a trial reads a
    /// reply), then an action; `None` for neither.
    pub fn said(&self, name: &str) -> Option<Said> {
        if let Some(t) = self.truths.iter().position(|t| t == name) {
            return Some(Said::Answer(t));
        }
        self.actions
            .iter()
            .position(|a| a == name)
            .map(Said::Action)
    }

    /// Actions the golden trajectory takes on this instance (the optimal
    /// policy against its observations, ties in instance order).
    pub fn golden_length(&mut self) -> Result<usize, SearchError> {
        if let Some(g) = self.golden_length {
            return Ok(g);
        }
        let mut state = self.root();
        let mut taken = 0;
        while let (_, Some(action)) = self.values.decide(state)? {
            state = state.after(self.values.problem(), action, self.observed[action]);
            taken += 1;
        }
        self.golden_length = Some(taken);
        Ok(taken)
    }

    /// The golden player's answer at `state`: the first candidate no
    /// action left can rule out, else the first candidate (the only one
    /// at a state where it answers); `None` without a candidate.
    pub fn golden_answer(&self, state: State) -> Option<usize> {
        let certified = self.values.certified(state);
        let pick = if certified != 0 {
            certified
        } else {
            state.truths
        };
        (pick != 0).then(|| pick.trailing_zeros() as usize)
    }

    /// The full values of `state` (every action's `Q`, the optimal set).
    pub fn state_values(&mut self, state: State) -> Result<StateValues, SearchError> {
        self.values.state(state)
    }

    /// Analyses one move at `state` (the `step`-th), returning it and the
    /// state after it; an error when its values are over the search
    /// budget ([`Analyst::analyse`] says what is still proven then).
    pub fn step(
        &mut self,
        state: State,
        step: usize,
        said: Said,
    ) -> Result<(MoveAnalysis, State), SearchError> {
        match self.analyse(state, step, said) {
            (Analysed::Exact(m), next) => Ok((m, next)),
            (Analysed::Bounded(m), _) => Err(m.why),
        }
    }

    /// Analyses a whole game: the moves in order (names neither a truth
    /// nor an action of the instance are left out; play goes on after an
    /// answer only when more moves follow, as in the budgeted protocol).
    pub fn game(&mut self, moves: &[Said]) -> Result<GameAnalysis, SearchError> {
        let analysed = self.moves(moves);
        self.game_of(&analysed)
    }

    /// Every move of a game analysed as far as the budget allows, in
    /// order ([`Analyst::analyse`]).
    pub fn moves(&mut self, moves: &[Said]) -> Vec<Analysed> {
        let mut state = self.root();
        let mut out = Vec::with_capacity(moves.len());
        for (step, &said) in moves.iter().enumerate() {
            let (analysed, next) = self.analyse(state, step, said);
            out.push(analysed);
            state = next;
        }
        out
    }

    /// The game of analysed `moves` ([`Analyst::moves`]): its totals when
    /// every move is exact and the golden length is proven, else the
    /// search's error (a game is never totalled from bounds).
    pub fn game_of(&mut self, moves: &[Analysed]) -> Result<GameAnalysis, SearchError> {
        let out = moves
            .iter()
            .map(|m| match m {
                Analysed::Exact(m) => Ok(m.clone()),
                Analysed::Bounded(m) => Err(m.why.clone()),
            })
            .collect::<Result<Vec<MoveAnalysis>, SearchError>>()?;
        let golden_length = self.golden_length()?;
        let total_regret = out.iter().map(|m| m.regret).sum();
        let optimal_moves = out.iter().filter(|m| m.optimal).count();
        let actions_taken = out
            .iter()
            .filter(|m| matches!(m.said, Said::Action(_)))
            .count();
        let last_answer = out.iter().rev().find(|m| m.proven.is_some());
        let proven = last_answer.and_then(|m| m.proven).unwrap_or(false);
        let correct = last_answer.and_then(|m| m.correct).unwrap_or(false);
        Ok(GameAnalysis {
            total_regret,
            optimal_moves,
            actions_taken,
            golden_length,
            proven,
            correct,
            efficiency: efficiency(golden_length, actions_taken, proven),
            moves: out,
        })
    }

    /// The names of the truths in `mask`, in instance order.
    pub fn truths_in(&self, mask: u128) -> Vec<&str> {
        names_in(&self.truths, mask)
    }

    /// The names of the actions in `mask`, in instance order.
    pub fn actions_in(&self, mask: u128) -> Vec<&str> {
        names_in(&self.actions, mask)
    }

    /// One move as a row of `kumo-gen moves` (without the game's keys).
    pub fn move_json(&self, m: &MoveAnalysis) -> Value {
        let mut row = self.row_opening(
            m.step,
            m.said,
            (json!(m.proven), json!(m.correct)),
            m.before,
            m.candidates_after,
        );
        row_extend(
            &mut row,
            [
                ("value", json!(m.value)),
                ("q", json!(m.q)),
                ("regret", json!(m.regret)),
                ("reward", json!(dense_reward(Some(m)))),
                ("optimal", json!(m.optimal)),
                ("redundant", json!(m.redundant)),
                ("repeated", json!(m.repeated)),
            ],
        );
        Value::Object(row)
    }

    /// The fields every `kumo-gen moves` row opens with, exact or bounded
    /// (docs/analytics.md): the step, what was said, whether it was proven
    /// and correct, and the state the move was made in and left.
    fn row_opening(
        &self,
        step: usize,
        said: Said,
        (proven, correct): (Value, Value),
        before: State,
        candidates_after: u128,
    ) -> Map<String, Value> {
        let (action, answer) = match said {
            Said::Action(a) => (json!(self.actions[a]), Value::Null),
            Said::Answer(t) => (Value::Null, json!(self.truths[t])),
        };
        let mut row = Map::new();
        row_extend(
            &mut row,
            [
                ("step", json!(step)),
                ("action", action),
                ("answer", answer),
                ("proven", proven),
                ("correct", correct),
                ("candidates", json!(self.truths_in(before.truths))),
                ("candidates_after", json!(self.truths_in(candidates_after))),
                ("actions_left", json!(self.actions_in(before.actions))),
            ],
        );
        row
    }
}

/// Appends `fields` to a row, in order (rows keep their keys' order).
fn row_extend<const N: usize>(row: &mut Map<String, Value>, fields: [(&str, Value); N]) {
    row.extend(fields.map(|(key, value)| (key.to_string(), value)));
}

fn names_in(names: &[String], mask: u128) -> Vec<&str> {
    names
        .iter()
        .enumerate()
        .filter(|(i, _)| *i < 128 && mask >> i & 1 == 1)
        .map(|(_, n)| n.as_str())
        .collect()
}
